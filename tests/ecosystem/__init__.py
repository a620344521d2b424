"""pytest plugins that run SciPy's and scikit-learn's own array-API test suites with gpuarray
as a backend (docs/ecosystem.md, "Their own test suites"). Not collected by the project's
test run: nothing here is named ``test_*.py``."""
