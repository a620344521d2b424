"""The tables every layer reads: dtypes as data (``dtypes``), the op table (``ops``), the errors
(``errors``), the settings (``config``) and the counters (``metrics``). Imports nothing else of
gpuarray."""

__version__ = "0.1.0"   # the distribution's version (pyproject.toml); kernel caches are keyed by it
