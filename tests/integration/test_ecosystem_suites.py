"""A quick subset of SciPy's own array-API tests, run with gpuarray as the backend through the
plugin ``tests/ecosystem/xp_backends.py`` (the full runs and their counts: docs/ecosystem.md).
Each selection passed in full on the cpu device when this was written; a failure here is a
regression in what SciPy's array-API paths need from gpuarray."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

pytest.importorskip("scipy")

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# (module, -k expression): SciPy's xp-parametrized tests that broke on gpuarray before
# (generic special functions out of domain, bool arithmetic, asarray of 0-d arrays, moveaxis errors,
# complex views, error wording; ndimage's output= arrays, which the plugin marks as SciPy marks JAX)
SUBSETS = [
    ("scipy.special.tests.test_support_alternative_backends", "chdtrc or stdtr or betaincc"),
    ("scipy.stats.tests.test_variation", ""),
    ("scipy.stats.tests.test_correlation", "input_validation"),
    ("scipy.differentiate.tests.test_differentiate", "step_direction or attrs"),
    ("scipy.interpolate.tests.test_rbfinterp", "complex_data"),
    ("scipy.ndimage.tests.test_filters scipy.ndimage.tests.test_interpolation",
     "TestVectorizedFilter and input_validation or correlate01 or TestZoom"),
]


@pytest.mark.parametrize("module, select", SUBSETS, ids=[m.split()[0].rsplit(".", 1)[1] for m, _ in SUBSETS])
def test_scipy_suite_subset_passes(module: str, select: str, tmp_path: object) -> None:
    env = dict(os.environ, SCIPY_ARRAY_API="1", PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    cmd = [sys.executable, "-m", "pytest", "-p", "tests.ecosystem.xp_backends", "-p", "no:cacheprovider", "-q",
           "--xp-backend=gpuarray", "--gpuarray-device=cpu", "-m", "array_api_backends",
           "-W", "ignore::pytest.PytestUnknownMarkWarning", "--pyargs", *module.split()]
    if select:
        cmd[-1 - len(module.split()):-1 - len(module.split())] = ["-k", select]
    out = subprocess.run(cmd, cwd=str(tmp_path), env=env, capture_output=True, text=True, timeout=300)
    summary = out.stdout.strip().splitlines()[-1] if out.stdout.strip() else out.stderr[-2000:]
    assert out.returncode == 0, f"{module} -k {select!r}: {summary}\n{out.stdout[-4000:]}"
    assert " passed" in summary and not re.search(r"\d+ failed", summary), summary
