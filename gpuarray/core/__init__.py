"""The tables every layer reads: dtypes as data (``dtypes``), the op table (``ops``), the errors
(``errors``), the settings (``config``) and the counters (``metrics``). Imports nothing else of
gpuarray."""
