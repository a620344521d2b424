"""NumPy's ``lib`` namespace, for the parts libraries reach through ``xp.lib`` (xarray's rolling
windows use ``xp.lib.stride_tricks.sliding_window_view``)."""

from . import stride_tricks

__all__ = ["stride_tricks"]
