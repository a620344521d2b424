"""The first call in a new process: cold kernel cache, then warm.

    python -m bench.firstcall [--device wgpu:0] [--log2n 20] [--runs 3] [--out bench/results/firstcall.json]

Spawns fresh Python processes with ``GPUARRAY_CACHE_DIR`` set to a new empty directory
(cold: nothing cached), then again with the same directory (warm: the WGSL, the
recorded cffi types and the warm-up thread's pipelines). Each child reports:

- ``import_s``: ``import gpuarray`` (NumPy included);
- ``wgpu_s``: importing wgpu's backend and creating the instance and adapters;
- ``device_s``: creating the device (``Device(...).provider``);
- ``chain8_first_ms`` / ``chain8_second_ms``: evaluating the fused 8-op chain on a
  device array of 2**log2n float32 and reading one element back, first and second time
  (the second call shows what is not first-call cost);
- ``x2p1_first_ms`` / ``x2p1_second_ms``: the same for ``x * 2 + 1``;
- the metrics: kernels compiled / precompiled, disk cache hits.

The table shows the median over ``--runs`` processes of each kind. The drivers' own
shader caches (NVIDIA: ~/.cache/nvidia; Mesa: ~/.cache/mesa_shader_cache) are not
cleared, so "cold" means cold for gpuarray only.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

CHILD = r"""
import json, sys, time
T = time.perf_counter
t0 = T()
import numpy as np
import gpuarray as xp
t1 = T()
from gpuarray import _devices
_devices.wgpu_adapters()
t2 = T()
dev = xp.Device(sys.argv[1])
dev.provider
t3 = T()
n = 1 << int(sys.argv[2])
x = xp.asarray(np.linspace(-2, 2, n, dtype=np.float32), device=dev)
xp.evaluate(x)          # the upload is not part of the first call
xp.synchronize(dev)
out = {"import_s": t1 - t0, "wgpu_s": t2 - t1, "device_s": t3 - t2}

def chain(m, x):
    return m.exp(-x * x * 0.5) * m.sin(x) + m.cos(x) * 0.25 - m.tanh(x)

with xp.config(offload="always"):
    for name, f in (("chain8", lambda: chain(xp, x)), ("x2p1", lambda: x * 2 + 1)):
        for which in ("first", "second"):
            t = T()
            y = f()
            xp.evaluate(y)
            np.asarray(y[:1])      # waits for the queue
            out[f"{name}_{which}_ms"] = (T() - t) * 1e3
m = xp.metrics()
out.update({k: m.get(k, 0) for k in ("kernels_compiled", "kernels_precompiled", "kernel_disk_cache_hits",
                                      "pipeline_cache_hits")})
print(json.dumps(out))
"""

KEYS = ("import_s", "wgpu_s", "device_s", "chain8_first_ms", "chain8_second_ms", "x2p1_first_ms",
        "x2p1_second_ms", "kernels_compiled", "kernels_precompiled", "kernel_disk_cache_hits")


def child(device: str, log2n: int, cache: str, env: dict[str, str] | None = None) -> dict[str, Any]:
    full = {**os.environ, "GPUARRAY_CACHE_DIR": cache, **(env or {})}
    root = Path(__file__).resolve().parent.parent
    full["PYTHONPATH"] = os.pathsep.join(p for p in (str(root), full.get("PYTHONPATH", "")) if p)
    out = subprocess.run([sys.executable, "-c", CHILD, device, str(log2n)], env=full, capture_output=True,
                         text=True, timeout=600)
    if out.returncode != 0:
        raise RuntimeError(out.stderr[-2000:])
    return dict(json.loads(out.stdout.strip().splitlines()[-1]))


def median_of(rows: list[dict[str, Any]]) -> dict[str, float]:
    return {k: statistics.median(float(r.get(k, 0)) for r in rows) for k in KEYS}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--device", default="wgpu:0")
    p.add_argument("--log2n", type=int, default=20)
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--out", default="")
    a = p.parse_args(argv)
    res: dict[str, Any] = {"device": a.device, "log2n": a.log2n}
    cold, warm, nowarm = [], [], []
    for _ in range(a.runs):
        with tempfile.TemporaryDirectory() as d:
            cold.append(child(a.device, a.log2n, d))
            warm.append(child(a.device, a.log2n, d))
            nowarm.append(child(a.device, a.log2n, d, {"GPUARRAY_WARM_KERNELS": "0"}))
    res["cold"], res["warm"], res["warm_no_precompile"] = median_of(cold), median_of(warm), median_of(nowarm)
    res["runs"] = {"cold": cold, "warm": warm, "warm_no_precompile": nowarm}
    print(f"{'':<26}" + "".join(f"{k:>20}" for k in ("cold", "warm", "warm_no_precompile")))
    for k in KEYS:
        unit = 1e3 if k.endswith("_s") else 1.0
        label = k.replace("_s", "_ms") if k.endswith("_s") else k
        print(f"{label:<26}" + "".join(f"{res[c][k] * unit:>20.2f}" for c in ("cold", "warm", "warm_no_precompile")))
    text = json.dumps(res, indent=1)
    if a.out:
        Path(a.out).parent.mkdir(parents=True, exist_ok=True)
        Path(a.out).write_text(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
