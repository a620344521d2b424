"""``gpuarray.random``: random numbers drawn on the device (``generator.py``).

>>> import gpuarray as xp
>>> xp.random.default_rng(0, device="cpu").integers(0, 5, size=3).shape
(3,)
"""

from .generator import Generator, default_rng

__all__ = ["Generator", "default_rng"]
