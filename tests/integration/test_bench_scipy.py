"""``bench/scipy_functions.py`` at a tiny size: every case gives a time or an error, on the in-process
device and on wgpu:0, and gpuarray's special functions and ``zscore`` agree with SciPy on NumPy.

The special functions may run on the device or on a host copy (``gpuarray.special``'s host
fallback): the tests do not look at where, only at the values."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import gpuarray as xp

pytest.importorskip("scipy")

from bench import scipy_functions as sf  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore::gpuarray.HostFallbackWarning")

N = 4096
SPECIAL = [c for c, family in sf.CASES.items() if family == "special"]


def test_every_case_is_timed_or_fails_with_a_message(device: xp.Device) -> None:
    rows = sf.run([N], ["float32"], ["numpy", "gpuarray"], list(sf.CASES), runs=1, device=device.name,
                  warm_s=0.01)
    got = {(r["case"], r["lib"]) for r in rows}
    assert got == {(c, lib) for c in sf.CASES for lib in ("numpy", "gpuarray")}
    for r in rows:
        assert r["s_per_call"] > 0 if "error" not in r else isinstance(r["error"], str) and r["error"], r
        if r["lib"] == "numpy":
            assert "error" not in r, r                      # SciPy on NumPy runs every case
        elif "error" not in r:
            assert r["host_fallbacks_per_call"] >= 0 and r["first_s"] > 0
    # the special functions and zscore run on gpuarray and match SciPy (the bench's own check)
    for r in rows:
        if r["lib"] == "gpuarray" and (r["case"] in SPECIAL or r["case"] == "zscore"):
            assert "error" not in r, r
            assert r["max_err"] < 1e-4, r
    text = sf.table(rows)
    for c in sf.CASES:
        assert c in text


@pytest.mark.parametrize("case", [*SPECIAL, "zscore"])
def test_values_match_scipy(device: xp.Device, case: str) -> None:
    """One call outside the timing: gpuarray's float32 result against SciPy's in float64 on the same
    float32 inputs."""
    arrays = sf.inputs(case, N, "float32", np.random.default_rng(3))
    lib = sf.library("gpuarray", device.name)
    got = [lib.to_numpy(v) for v in sf.leaves(sf.work(case, "gpuarray")(*(lib.to(a) for a in arrays)))]
    with np.errstate(all="ignore"):
        want = [np.asarray(v) for v in sf.leaves(sf.work(case, "numpy")(*(a.astype(np.float64) for a in arrays)))]
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.dtype == np.float32, g.dtype
        atol = 1e-5 if case == "zscore" else 1e-6
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=atol, equal_nan=True, err_msg=case)


def test_command_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "rows.json"
    rows = sf.main(["--sizes", "1024", "--dtypes", "float32", "--libs", "numpy,gpuarray,nosuchlib",
                    "--cases", "expit,zscore", "--runs", "1", "--warm", "0.01", "--device", "cpu",
                    "--out", str(out)])
    assert len(rows) == 4 and all(r["s_per_call"] > 0 for r in rows)
    doc = json.loads(out.read_text())
    assert doc["rows"] == json.loads(json.dumps(rows))
    assert "nosuchlib" in doc["skipped"] and doc["versions"]["scipy"]
    text = capsys.readouterr().out
    assert "note: nosuchlib skipped" in text and "np/ga" in text
    with pytest.raises(ValueError, match="unknown case"):
        sf.run([16], ["float32"], ["numpy"], ["nosuchcase"])
