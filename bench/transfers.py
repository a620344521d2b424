"""Host <-> device transfers of a large float32 array: gpuarray next to plain wgpu, NumPy's
memcpy and, where importable, CuPy and PyTorch (pageable host memory everywhere).

    python -m bench.transfers [--device wgpu:0] [--mib 1024] [--trials 5] [--sweep]
                              [--out bench/results/transfers.json]

- ``numpy memcpy``: ``np.copyto`` into a preallocated array, and into a fresh ``np.empty``
  (page faults included, as in a download);
- ``gpuarray``: ``provider.upload`` + ``synchronize`` (H2D) and ``provider.download`` into a
  new array (D2H): the paths ``asarray(..., device=...)`` and ``np.asarray(g)`` take;
- ``wgpu write_buffer`` / ``wgpu read_buffer``: one ``queue.write_buffer`` per 256 MiB, and
  ``queue.read_buffer``, for reference;
- ``cupy`` / ``torch``: ``cp.asarray`` / ``cp.asnumpy`` and ``.cuda()`` / ``.cpu()``.

GB/s = bytes / median seconds of ``--trials`` runs (after one warm-up run). ``--sweep`` also
times gpuarray with staging pieces of 16-256 MiB and 1-16 copy threads.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
from pathlib import Path
from typing import Any

import numpy as np

import gpuarray as xp
from gpuarray.providers import wgpu_pool

from ._timing import median_s


def gpuarray_times(p: Any, host: np.ndarray, trials: int) -> tuple[float, float]:
    def up() -> None:
        h = p.upload(host)
        p.synchronize()
        p.free(h)
    t_up = median_s(up, trials)
    handle = p.upload(host)
    p.synchronize()
    t_down = median_s(lambda: p.download(handle, host.dtype, host.shape), trials)
    back = p.download(handle, host.dtype, host.shape)
    p.free(handle)
    if not np.array_equal(back, host):
        raise AssertionError("the round trip changed the data")
    return t_up, t_down


def wgpu_times(p: Any, host: np.ndarray, trials: int) -> tuple[float, float]:
    bu = p.wgpu.BufferUsage
    piece = 256 << 20
    bufs = [p.device.create_buffer(size=min(piece, host.nbytes - o), usage=bu.COPY_DST | bu.COPY_SRC | bu.STORAGE)
            for o in range(0, host.nbytes, piece)]
    raw = host.view(np.uint8)

    def up() -> None:
        for i, b in enumerate(bufs):
            p.device.queue.write_buffer(b, 0, raw[i * piece:i * piece + b.size])
        p.synchronize()

    def down() -> None:
        out = np.empty(host.nbytes, np.uint8)
        for i, b in enumerate(bufs):
            out[i * piece:i * piece + b.size] = np.frombuffer(p.device.queue.read_buffer(b), np.uint8)
    t = (median_s(up, trials), median_s(down, trials))
    for b in bufs:
        b.destroy()
    return t


def others(host: np.ndarray, trials: int) -> dict[str, float | str]:
    out: dict[str, float | str] = {}
    try:
        import cupy as cp

        def cup() -> None:
            cp.asarray(host)
            cp.cuda.Device().synchronize()
        out["cupy_h2d_s"] = median_s(cup, trials)
        d = cp.asarray(host)
        out["cupy_d2h_s"] = median_s(lambda: cp.asnumpy(d), trials)
        d = None
        cp.get_default_memory_pool().free_all_blocks()
    except Exception as exc:  # noqa: BLE001 - a missing library is reported, not fatal
        out["cupy_error"] = repr(exc)[:200]
    try:
        import torch

        th = torch.from_numpy(host)

        def tup() -> None:
            th.cuda()
            torch.cuda.synchronize()
        out["torch_h2d_s"] = median_s(tup, trials)
        td = th.cuda()
        out["torch_d2h_s"] = median_s(lambda: td.cpu(), trials)
        td = None
        torch.cuda.empty_cache()
    except Exception as exc:  # noqa: BLE001
        out["torch_error"] = repr(exc)[:200]
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--device", default="wgpu:0")
    ap.add_argument("--mib", type=int, default=1024)
    ap.add_argument("--trials", type=int, default=5)
    ap.add_argument("--sweep", action="store_true")
    ap.add_argument("--out", default="")
    a = ap.parse_args(argv)
    dev = xp.Device(a.device)
    p = dev.provider
    host = np.random.default_rng(0).random(a.mib << 18, dtype=np.float32)
    nbytes = host.nbytes
    rows: dict[str, tuple[float | None, float | None]] = {}
    dst = np.empty_like(host)
    rows["numpy memcpy (preallocated)"] = (median_s(lambda: np.copyto(dst, host), a.trials), None)
    rows["numpy memcpy (new array)"] = (median_s(lambda: host.copy(), a.trials), None)
    dst = np.empty(0, np.float32)
    rows["gpuarray"] = gpuarray_times(p, host, a.trials)
    rows["wgpu write_buffer / read_buffer"] = wgpu_times(p, host, a.trials)
    ext = others(host, a.trials)
    for lib in ("cupy", "torch"):
        if f"{lib}_h2d_s" in ext:
            rows[lib] = (float(ext[f"{lib}_h2d_s"]), float(ext[f"{lib}_d2h_s"]))
    sweep: list[dict[str, Any]] = []
    if a.sweep:
        stage0, threads0 = wgpu_pool.STAGE_BYTES, os.environ.get("GPUARRAY_COPY_THREADS")
        try:
            for stage_mib in (16, 32, 64, 128, 256):
                for threads in (1, 2, 4, 8, 16):
                    wgpu_pool.STAGE_BYTES = stage_mib << 20
                    os.environ["GPUARRAY_COPY_THREADS"] = str(threads)
                    up, down = gpuarray_times(p, host, max(1, a.trials // 2))
                    sweep.append({"stage_mib": stage_mib, "threads": threads,
                                  "h2d_gbs": nbytes / up / 1e9, "d2h_gbs": nbytes / down / 1e9})
                    print(f"stage {stage_mib:>4} MiB, {threads:>2} threads: "
                          f"H2D {sweep[-1]['h2d_gbs']:6.2f}  D2H {sweep[-1]['d2h_gbs']:6.2f} GB/s")
        finally:
            wgpu_pool.STAGE_BYTES = stage0
            if threads0 is None:
                os.environ.pop("GPUARRAY_COPY_THREADS", None)
            else:
                os.environ["GPUARRAY_COPY_THREADS"] = threads0

    def gbs(t: float | None) -> float | None:
        return None if t is None else nbytes / t / 1e9

    print(f"{a.mib} MiB float32, median of {a.trials}, {p.device_info().get('name')}; "
          f"{wgpu_pool.copy_threads()} copy threads, staging {wgpu_pool.STAGE_BYTES >> 20} MiB")
    print(f"{'path':<34} {'H2D GB/s':>10} {'D2H GB/s':>10}")
    for name, (t_up, t_down) in rows.items():
        cells = [f"{nbytes / t / 1e9:>10.2f}" if t is not None else f"{'-':>10}" for t in (t_up, t_down)]
        print(f"{name:<34} {cells[0]} {cells[1]}")
    res = {"device": a.device, "adapter": p.device_info().get("name"), "bytes": nbytes, "trials": a.trials,
           "host": platform.node(), "copy_threads": wgpu_pool.copy_threads(),
           "stage_bytes": wgpu_pool.STAGE_BYTES,
           "gbs": {k: {"h2d": gbs(u), "d2h": gbs(d)} for k, (u, d) in rows.items()},
           "errors": {k: v for k, v in ext.items() if k.endswith("_error")}, "sweep": sweep}
    out = a.out or str(Path(__file__).resolve().parent / "results" / f"transfers_{time.strftime('%Y-%m-%d')}.json")
    Path(out).parent.mkdir(parents=True, exist_ok=True)
    Path(out).write_text(json.dumps(res, indent=1))
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
