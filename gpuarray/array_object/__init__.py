"""The array object: ``GpuArray`` with its operators, indexing, views and writes through them,
and the ndarray-style methods NumPy code reaches for."""
