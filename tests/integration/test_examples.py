"""The scripts in examples/ (shown in docs/ecosystem.md) run and check themselves, on both devices."""

from __future__ import annotations

import runpy
import sys
from pathlib import Path

import pytest

import gpuarray as xp

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
PER_DEVICE = {
    "sklearn_pipeline.py": "sklearn",
    "scipy_functions.py": "scipy",
    "dask_chunks.py": "dask",
    "xarray_climatology.py": "xarray",
}


def _run(script: str, *argv: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "argv", [script, *argv])
    runpy.run_path(str(EXAMPLES / script), run_name="__main__")


def test_every_example_is_tested() -> None:
    assert sorted(p.name for p in EXAMPLES.glob("*.py")) == sorted([*PER_DEVICE, "multi_gpu_dask.py"])


@pytest.mark.filterwarnings("ignore::gpuarray.HostFallbackWarning")  # scipy_functions shows some on purpose
@pytest.mark.parametrize("script", list(PER_DEVICE))
def test_example(script: str, device: xp.Device, monkeypatch: pytest.MonkeyPatch,
                 capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip(PER_DEVICE[script])
    _run(script, "--device", device.name, monkeypatch=monkeypatch)
    assert capsys.readouterr().out.strip()


def test_multi_gpu_example(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """On this machine: one worker on cpu, one on wgpu:0 (on a GPU host the default is one per GPU)."""
    pytest.importorskip("distributed")
    _run("multi_gpu_dask.py", "--devices", "cpu", "wgpu:0", "--rows", "4096", monkeypatch=monkeypatch)
    out = capsys.readouterr().out
    assert "2 device(s):" in out and "1 device:" in out, out
