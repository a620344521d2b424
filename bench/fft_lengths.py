"""FFTs of issue 18's lengths on the device against PyTorch and CuPy (cuFFT) in one process, by wall clock.

    python -m bench.fft_lengths [--dtypes complex64,complex128] [--runs 5] [--libs torch,cupy] [--shift 0]
                                [--out FILE]

Cases (``xp.fft.fft`` along the last axis): 2^20 and 2^22 points (mixed-radix passes from registers,
radix 16/8: 2 and 3 passes with 48 KiB of workgroup memory), 10^6 and 3 x 10^6 (smooth: mixed-radix, 2
and 3 passes), 10^6 + 3 (prime: Bluestein over two transforms of 2000376 = 2^3 3^6 7^3 points) and a
batch of 4096 rows of 1000 (one pass). ``GPUARRAY_FFT_REG=0`` (the workgroup-memory passes, radix 8/4,
3 passes at 2^20), ``GPUARRAY_FFT_MIXED=0`` (Bluestein for every length that is not a power of two)
and ``GPUARRAY_FFT_MIXED_POW2=0`` (the radix-2 block kernel for powers of two) give the previous kernels
for comparison; ``GPUARRAY_FFT_REG_TILE_BYTES`` (32768: the register kernel's largest tile, taken
where it saves a pass), ``GPUARRAY_FFT_TILE_BYTES`` (8192: the other tiles), ``GPUARRAY_FFT_MAX_RADIX``
(16), ``GPUARRAY_FFT_MIN_RUN`` (32 bytes) and ``GPUARRAY_FFT_PAIR`` (0: no radices ``2 p``) tune them;
each process records its settings.
Per case: wall and GPU ms per call (``bench.primitives._measure``),
dispatches, host fallbacks, the relative error against NumPy in float64 and the peers' wall ms.
"""

# mypy: disable-error-code="misc"
from __future__ import annotations

import argparse
import json
import os
import platform
import time
from typing import Any

import numpy as np

from ._timing import time_peers, write_out
from .primitives import _measure, _peer_fft, _show

CASES = (("2^20", (1 << 20,)), ("2^22", (1 << 22,)), ("10^6", (10 ** 6,)), ("3x10^6", (3 * 10 ** 6,)),
         ("10^6+3", (10 ** 6 + 3,)), ("4096x1000", (4096, 1000)))


def run(dtypes: list[str], runs: int, libs: list[str], shift: int = 0) -> list[dict[str, Any]]:
    import gpuarray as xp
    rng = np.random.default_rng(0)
    rows: list[dict[str, Any]] = []
    settings = {k: os.environ.get(k, "") for k in ("GPUARRAY_FFT_MIXED", "GPUARRAY_FFT_MIXED_POW2",
                                                   "GPUARRAY_FFT_TILE_BYTES", "GPUARRAY_FFT_REG",
                                                   "GPUARRAY_FFT_REG_TILE_BYTES", "GPUARRAY_FFT_MAX_RADIX",
                                                   "GPUARRAY_FFT_MIN_RUN", "GPUARRAY_FFT_PAIR")}
    with xp.config(offload="always"):
        for dt in dtypes:
            for name, shape in CASES:
                shape = shape[:-1] + (max(1, shape[-1] >> shift),)
                x = (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dt)
                want = np.fft.fft(x.astype(np.complex128), axis=-1)
                scale = float(np.max(np.abs(want)))
                err: list[float] = []

                def check(got: np.ndarray, want: np.ndarray = want, s: float = scale, err: list = err) -> bool:
                    err.append(float(np.max(np.abs(got - want))) / s)
                    return err[-1] < (2e-6 if got.dtype == np.complex64 else 1e-14)

                rec = _measure(xp, f"fft {name}", xp.fft.fft, x, check, runs)
                rec.update({"shape": list(shape), "rel_error": err[0], **settings})
                rec.update(time_peers(libs, _peer_fft, (x,), runs))
                rows.append(rec)
                _show(rec)
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dtypes", default="complex64,complex128")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--libs", default="torch,cupy")
    ap.add_argument("--shift", type=int, default=0, help="divide the lengths by 2^shift (a quick run)")
    ap.add_argument("--out")
    args = ap.parse_args()
    rows = run(args.dtypes.split(","), max(3, args.runs), [v for v in args.libs.split(",") if v], args.shift)
    write_out(json.dumps({"host": platform.node(), "date": time.strftime("%Y-%m-%d"), "rows": rows}, indent=1),
              args.out)


if __name__ == "__main__":
    main()
