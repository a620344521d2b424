"""Fusion compiler: graph -> kernel plans. Knows nothing of WGSL or wgpu."""

from .kernel import Instr, Kernel
from .schedule import schedule

__all__ = ["Instr", "Kernel", "schedule"]
