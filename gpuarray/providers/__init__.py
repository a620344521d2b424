"""Providers run kernel plans: ``inprocess`` (NumPy, host) and ``webgpu`` (wgpu)."""

from .base import Provider

__all__ = ["Provider"]
