"""xarray on GpuArrays: ``xr.DataArray(g)`` keeps GpuArray data on its device through reductions
(NaN-skipping ones included), ``where``, arithmetic, ``groupby`` over a coordinate and ``rolling``,
and matches xarray on NumPy data."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import gpuarray as xp

from .conftest import close, on_device

xr = pytest.importorskip("xarray")

RNG = np.random.default_rng(3)
DATA = RNG.standard_normal((12, 5))
DATA[2, 1] = DATA[7, 3] = np.nan               # xarray skips NaN by default (skipna)


def _da(values: Any) -> Any:
    return xr.DataArray(values, dims=("time", "x"), name="v", attrs={"units": "K"},
                        coords={"time": np.arange(12), "x": list("abcde"), "season": ("time", np.arange(12) % 4)})


CASES: dict[str, Callable[[Any], Any]] = {
    "mean": lambda d: d.mean(),
    "mean-time": lambda d: d.mean("time"),
    "mean-skipna-false": lambda d: d.mean("x", skipna=False),
    "sum-x": lambda d: d.sum("x"),
    "sum-min_count": lambda d: d.sum("time", min_count=11),
    "std-time": lambda d: d.std("time"),
    "var-ddof": lambda d: d.var("x", ddof=1),
    "max": lambda d: d.max("time"),
    "min": lambda d: d.min(),
    "prod": lambda d: (d * 0.1 + 1).prod("x"),
    "cumsum": lambda d: d.cumsum("time"),
    "where": lambda d: d.where(d > 0),
    "where-other": lambda d: d.where(d > 0, 0.0),
    "xr.where": lambda d: xr.where(d > 0, d, -d),
    "fillna": lambda d: d.fillna(0.5),
    "isnull": lambda d: d.isnull(),
    "arithmetic": lambda d: (d * 2 + 1) / (abs(d) + 1) - d ** 2,
    "arithmetic-broadcast": lambda d: d - d.mean("time"),
    "ufunc": lambda d: np.exp(d) + np.sin(d),
    "isel-sel": lambda d: d.isel(time=slice(2, 9)).sel(x=["a", "c", "d"]),
    "transpose": lambda d: d.T * 1,
    "groupby-mean": lambda d: d.groupby("season").mean(),
    "groupby-sum": lambda d: d.groupby("season").sum("time"),
    "groupby-std": lambda d: d.groupby("season").std(),
    "groupby-anomaly": lambda d: d.groupby("season") - d.groupby("season").mean(),
    "rolling-mean": lambda d: d.rolling(time=3).mean(),
    "rolling-sum-center": lambda d: d.rolling(time=4, center=True).sum(),
    "rolling-max-min_periods": lambda d: d.rolling(time=3, min_periods=1).max(),
    "rolling-2d": lambda d: d.rolling(time=2, x=2).mean(),
    "coarsen": lambda d: d.coarsen(time=3).mean(),
    "shift": lambda d: d.shift(time=2),
    "diff": lambda d: d.diff("time"),
    "concat": lambda d: xr.concat([d, d * 2], dim="time"),
    "dataset": lambda d: xr.Dataset({"a": d, "b": d * 2}).mean("time")["b"],
    "argmax": lambda d: d.fillna(0).argmax("time"),
    "transpose-dims": lambda d: d.transpose("x", "time") + 0,
    "dot": lambda d: xr.dot(d.fillna(0), (d.fillna(0) * 0.5 + 1).rename(x="y"), dim="time"),   # xp.einsum
    "dot-all": lambda d: xr.dot(d.fillna(0), d.fillna(0) - 1),
    "quantile": lambda d: d.quantile(0.3, dim="time"),                    # NaN skipped: xp.nanquantile
    "quantile-list": lambda d: d.quantile([0.1, 0.5, 0.95], dim="x"),
    "quantile-skipna-false": lambda d: d.fillna(0).quantile([0.25, 0.75], dim="time", skipna=False,
                                                            method="nearest"),   # xp.quantile
}


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("name", list(CASES))
def test_xarray(name: str, dtype: Any, device: xp.Device) -> None:
    fn = CASES[name]
    host = DATA.astype(dtype)
    want = fn(_da(host))
    got = fn(_da(xp.asarray(host, device=device)))
    assert isinstance(got, xr.DataArray)
    on_device(got.data, device)
    assert got.dims == want.dims
    assert got.data.dtype == want.data.dtype, f"dtype {got.data.dtype} != {want.data.dtype}"
    rtol, atol = (1e-10, 1e-12) if dtype == np.float64 else (1e-5, 1e-6)
    close(got.data, want.data, rtol=rtol, atol=atol)
    for c in want.coords:
        np.testing.assert_array_equal(np.asarray(got[c].values), np.asarray(want[c].values))


def test_xarray_keeps_metadata_and_converts(device: xp.Device) -> None:
    d = _da(xp.asarray(DATA, device=device))
    assert d.attrs == {"units": "K"} and d.name == "v"
    assert isinstance(d.to_numpy(), np.ndarray)
    np.testing.assert_array_equal(d.to_numpy(), DATA)
    np.testing.assert_array_equal(d.values, DATA)
    assert "GpuArray" in repr(d) or "array" in repr(d)


def test_xarray_reductions_stay_on_the_device(wgpu_device: xp.Device) -> None:
    """NaN-skipping reductions, where and rolling windows run on the device: no host fallbacks."""
    d = _da(xp.asarray(DATA.astype(np.float32), device=wgpu_device))
    xp.reset_metrics()
    out = [d.mean("time"), d.std(), d.where(d > 0, 0.0), d.rolling(time=3).mean(), d.groupby("season").mean(),
           xr.dot(d.fillna(0), d.fillna(1), dim="time"), d.quantile([0.1, 0.9], dim="time")]
    xp.evaluate(*(o.data for o in out))
    assert xp.metrics()["host_fallbacks"] == 0, xp.metrics()
