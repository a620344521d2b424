"""``sliding_window_view`` as a strided view of the array (no data is copied)."""

from ..interop.numpy_compat import sliding_window_view

__all__ = ["sliding_window_view"]
