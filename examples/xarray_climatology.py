"""xarray on GpuArrays: a monthly climatology, anomalies, a rolling mean and a masked mean, with
the data staying a GpuArray on its device.

    python examples/xarray_climatology.py [--device wgpu:0]
"""

from __future__ import annotations

import argparse

import numpy as np
import xarray as xr

import gpuarray as xp


def main(device: str | None = None) -> dict[str, float]:
    dev = xp.Device(device) if device else xp.default_device()
    rng = np.random.default_rng(0)
    months = np.arange(120) % 12                                # ten years of monthly data
    host = (10 * np.sin(2 * np.pi * months / 12)[:, None] + rng.standard_normal((120, 32))).astype(np.float32)
    host[5, 3] = np.nan                                         # a missing value: skipped by default

    temp = xr.DataArray(xp.asarray(host, device=dev), dims=("time", "station"),
                        coords={"time": np.arange(120), "month": ("time", months)}, name="temperature")
    climatology = temp.groupby("month").mean()                  # (12, 32)
    anomaly = temp.groupby("month") - climatology               # (120, 32)
    smooth = anomaly.rolling(time=12, center=True).mean()       # 12-month running mean
    warm = temp.where(temp > 0).mean("station")                 # mean of the positive values

    for a in (climatology, anomaly, smooth, warm):
        assert isinstance(a.data, xp.GpuArray) and a.data.device == dev, type(a.data)

    ref = xr.DataArray(host, dims=("time", "station"), coords={"time": np.arange(120), "month": ("time", months)})
    ref_anomaly = ref.groupby("month") - ref.groupby("month").mean()
    err = float(np.nanmax(np.abs(anomaly.to_numpy() - ref_anomaly.to_numpy())))
    assert err < 1e-4, err
    return {"max_error_anomaly": err, "mean_abs_smoothed_anomaly": float(abs(smooth).mean())}


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default=None, help="cpu or wgpu:N (default: gpuarray's default device)")
    for k, v in main(parser.parse_args().device).items():
        print(f"{k}: {v:.3e}")
