"""What the wgpu provider runs on the device: the kernel kinds with WGSL implementations, the
float64 and complex128 ops that stay on the host, and why a kernel cannot run on an adapter.

>>> "asin" in F64_HOST_OPS, "asin" in C128_HOST_OPS
(False, False)
"""

from __future__ import annotations

from typing import Any

from ..compiler.kernel import Kernel
from ..core.dtypes import CATEGORIES, complex128, float64
from ..core.ops import OPS, SCIPY_DEVICE, SCIPY_DEVICE_N, folded
from ..render.wgsl_c128 import C128_DEVICE_OPS
from ..render.wgsl_f64 import F64_DEVICE_OPS
from .wgpu_argreduce import enqueue_argreduce
from .wgpu_compact import enqueue_compact
from .wgpu_eigh import gesvj_cannot_run, syevj_cannot_run
from .wgpu_extremes import enqueue_extremes, extremes_cannot_run
from .wgpu_fft import enqueue_fft, fft_cannot_run
from .wgpu_hqr import hqr_cannot_run
from .wgpu_laed4 import laed4_cannot_run
from .wgpu_linalg import (
    enqueue_geqrf,
    enqueue_gesvj,
    enqueue_hqr,
    enqueue_laed4,
    enqueue_lu,
    enqueue_potrf,
    enqueue_syevb,
    enqueue_syevj,
    linalg_cannot_run,
)
from .wgpu_matmul import enqueue_matmul, row_blocks
from .wgpu_qr import geqrf_cannot_run
from .wgpu_random import enqueue_random, random_cannot_run
from .wgpu_reduce import enqueue_reduce
from .wgpu_regions import enqueue_regions, max_part_inputs
from .wgpu_rowfuse import enqueue_rowfuse
from .wgpu_scan import enqueue_scan
from .wgpu_scatter import enqueue_scatter
from .wgpu_scatter_add import enqueue_scatter_add, scatter_add_cannot_run
from .wgpu_select import enqueue_select, select_cannot_run
from .wgpu_sort import enqueue_searchsorted, enqueue_sort, searchsorted_cannot_run, sort_cannot_run
from .wgpu_split import WINDOW_KINDS, _nbytes, elementwise_row_blocks, row_concat, split_kernel, window_kernel
from .wgpu_sytrd import syevb_cannot_run

# Kernel kinds other than elementwise that have WGSL implementations here.
WGPU_KINDS: dict[str, Any] = {"reduce": enqueue_reduce, "matmul": enqueue_matmul}
WGPU_KINDS["scan"] = enqueue_scan              # cumulative_sum / cumulative_prod, maximum.accumulate ...
WGPU_KINDS["compact"] = enqueue_compact        # nonzero, x[mask]: stream compaction
WGPU_KINDS["argreduce"] = enqueue_argreduce    # argmax / argmin
WGPU_KINDS["scatter"] = enqueue_scatter        # x[int_array] = value
WGPU_KINDS["regions"] = enqueue_regions        # chains of writes into regions (compiler/regions.py)
WGPU_KINDS.update(sort=enqueue_sort, argsort=enqueue_sort, searchsorted=enqueue_searchsorted)
# Per-kind limits beyond the generic ones: fn(provider, kernel) -> reason | None.
WGPU_KIND_CHECKS: dict[str, Any] = {"sort": sort_cannot_run, "argsort": sort_cannot_run,
                                    "searchsorted": searchsorted_cannot_run}
WGPU_KINDS["fft"] = enqueue_fft                # lengths with prime factors <= 13 (mixed-radix Stockham)
WGPU_KINDS["rowfuse"] = enqueue_rowfuse        # row reductions and their elementwise readers (compiler/rowfuse.py)
WGPU_KIND_CHECKS["fft"] = fft_cannot_run
WGPU_KINDS["scatter_add"] = enqueue_scatter_add        # bincount / histogram / add.at (wgpu_scatter_add.py)
WGPU_KIND_CHECKS["scatter_add"] = scatter_add_cannot_run
WGPU_KINDS["extremes"] = enqueue_extremes              # (min, max) in one read: bincount / histogram
WGPU_KIND_CHECKS["extremes"] = extremes_cannot_run
WGPU_KINDS["select"] = enqueue_select                  # percentile / quantile: radix selection (wgpu_select.py)
WGPU_KIND_CHECKS["select"] = select_cannot_run
WGPU_KINDS.update(linalg_potrf=enqueue_potrf, linalg_lu=enqueue_lu)     # Cholesky, LU (wgpu_linalg.py)
WGPU_KIND_CHECKS.update(linalg_potrf=linalg_cannot_run, linalg_lu=linalg_cannot_run)
WGPU_KINDS["linalg_geqrf"] = enqueue_geqrf                   # Householder QR (wgpu_qr.py)
WGPU_KIND_CHECKS["linalg_geqrf"] = geqrf_cannot_run
WGPU_KINDS["linalg_syevj"] = enqueue_syevj                   # Jacobi eigh of small matrices (wgpu_eigh.py)
WGPU_KIND_CHECKS["linalg_syevj"] = syevj_cannot_run
WGPU_KINDS["linalg_syevb"] = enqueue_syevb                   # eigvalsh of larger ones (wgpu_sytrd.py)
WGPU_KIND_CHECKS["linalg_syevb"] = syevb_cannot_run
WGPU_KINDS["linalg_gesvj"] = enqueue_gesvj                   # one-sided Jacobi svd of small matrices
WGPU_KIND_CHECKS["linalg_gesvj"] = gesvj_cannot_run
WGPU_KINDS["linalg_hqr"] = enqueue_hqr                       # eigvals of small matrices (wgpu_hqr.py)
WGPU_KIND_CHECKS["linalg_hqr"] = hqr_cannot_run
WGPU_KINDS["linalg_laed4"] = enqueue_laed4                   # divide and conquer merges (wgpu_laed4.py)
WGPU_KIND_CHECKS["linalg_laed4"] = laed4_cannot_run
WGPU_KINDS["random"] = enqueue_random                        # Philox draws (gpuarray.random, wgpu_random.py)
WGPU_KIND_CHECKS["random"] = random_cannot_run
# Kinds whose WGSL handles complex operands and results (the others run complex data on the host).
COMPLEX_KINDS = frozenset({"elementwise", "reduce", "fft", "compact", "regions", "scatter"})
COMPLEX_SCANS = frozenset({"sum", "prod"})      # the scans (kind "scan") that take complex values too

# ops whose generic WGSL uses a transcendental built-in. SPIR-V's GLSL.std.450 transcendentals are
# 32-bit only: naga still emits them for f64, lavapipe then returns garbage and the NVIDIA driver
# fails to compile the shader and loses the device (both seen here). In float64 those with a software
# version (render/wgsl_f64.py F64_DEVICE_OPS: all of them now) run on the device, the rest on the host;
# in complex128 those with a software version (render/wgsl_c128.py C128_DEVICE_OPS: every one that takes
# complex operands) run on the device too.
TRANSCENDENTAL_OPS = frozenset({
    "exp", "expm1", "log", "log1p", "log2", "log10", "sin", "cos", "tan", "asin", "acos", "atan",
    "sinh", "cosh", "tanh", "asinh", "acosh", "atanh", "atan2", "pow", "logaddexp",
    "float_power", "expit", "logit", "entr", "exp2", "exp10", "sinc", "xlog1py", *SCIPY_DEVICE,
    *SCIPY_DEVICE_N,
})
# ops whose float32 WGSL computes in float64 (render/wgsl_incomplete.py): on an adapter without shader-f64
# they run on the host
F32_VIA_F64 = frozenset(SCIPY_DEVICE_N)
F64_HOST_OPS = TRANSCENDENTAL_OPS - F64_DEVICE_OPS      # the rest run in software (render/wgsl_f64.py)
C128_HOST_OPS = frozenset(n for n in TRANSCENDENTAL_OPS - C128_DEVICE_OPS     # complex ones without helpers
                          if complex128 in CATEGORIES[OPS[n].category])


_LAPACK = ("is LAPACK's on the host for complex input, "
           "matrices the device declined (values that are not finite) and min(m, n) of 65 to 511 where the "
           "matrix is not tall and skinny: LAPACK is faster there (the device takes stacks of small matrices "
           "by Jacobi, tall ones through QR, min(m, n) >= 512 through [[0, A], [A^T, 0]]: linalg/gesdd.py)")
# why a linear-algebra node that the namespace gave to LAPACK runs on the host (gpuarray/linalg)
HOST_LINALG_REASONS = {
    "linalg_eigh": ("eigh is LAPACK's on the host for complex input, "
                    "matrices the device declined (values that are not finite) and 65 to 1023 rows (511 "
                    "in stacks of 4 or more), where LAPACK is faster than the device's reduction and divide and "
                    "conquer (linalg/syevd.py; stacks of at most 64 rows take Jacobi)"),
    "linalg_eigvalsh": ("eigvalsh is LAPACK's on the host for complex input, for matrices the device declined "
                        "(values that are not finite) and below n * min(matrices, 8) = 1024, where LAPACK is "
                        "faster than the device's tridiagonal reduction (linalg/tridiag.py)"),
    "linalg_svd": f"svd {_LAPACK}",
    "linalg_svdvals": ("svdvals is LAPACK's on the host for complex input, for matrices the device declined "
                       "(values that are not finite), for tall ones Cholesky-QR declined and below (m + n) * "
                       "min(matrices, 8) = 2048 (linalg/tridiag.py: [[0, A], [A^T, 0]]'s eigenvalues)"),
    "linalg_eigvals": "eigvals of complex matrices is LAPACK's geev on the host (the device takes real ones)",
    "linalg_pinv": f"pinv (an svd) {_LAPACK}",
    "linalg_matrix_rank": ("matrix_rank is LAPACK's on the host where svdvals is (see linalg_svdvals) or rtol is "
                           "an array"),
}


def bindings(kernel: Kernel) -> int:
    """The storage buffers ``kernel`` binds: prm, inputs, outputs, up to 3 arrays of 64-bit scalars (other
    kinds: a few scratch buffers and at least one output, more with a fused epilogue; ``regions``: those of
    its widest pass)."""
    if kernel.kind == "regions":
        return max_part_inputs(kernel) + 5
    return len(kernel.inputs) + (len(kernel.outputs) + 4 if kernel.kind == "elementwise"
                                 else 5 + max(1, len(kernel.outputs)))


def cannot_run_reason(provider: Any, kernel: Kernel) -> str | None:
    """Why ``kernel`` cannot run on ``provider`` (a ``WgpuProvider``; it then runs on the host), or None."""
    if kernel.kind != "elementwise" and kernel.kind not in WGPU_KINDS:
        if kernel.kind in HOST_LINALG_REASONS:
            return HOST_LINALG_REASONS[kernel.kind]
        if kernel.kind.startswith("linalg_"):
            return (f"{kernel.kind[7:]} of complex matrices (or of a dtype the adapter lacks) is LAPACK's "
                    "on the host")
        return f"no WGSL kernel for {kernel.kind} yet; it runs on the host"
    for ins in kernel.instrs:
        if not provider.supports(ins.dtype):
            return f"{ins.dtype} is not supported by this adapter"
        if ins.op in F32_VIA_F64 and not provider.f64:
            return f"{ins.dtype} {ins.op} computes in float64, which this adapter lacks; it runs on the host"
        if ins.dtype == float64 and ins.op in provider.host_only_f64 or \
                ins.dtype == complex128 and ins.op in provider.host_only_c128:
            return (f"{ins.dtype} {ins.op} has no WGSL implementation that is exact on every device yet; "
                    "it runs on the host")
    name = folded(str(kernel.attrs[0])) if kernel.kind == "scan" else None     # ufunc.accumulate of op ``name``
    if name is not None:
        dt = kernel.out_nodes[0].dtype
        if name in F32_VIA_F64 and not provider.f64 or dt == float64 and name in provider.host_only_f64:
            return (f"{dt} {name} has no WGSL implementation that is exact on this device; its accumulate "
                    "runs on the host")
    if kernel.kind not in COMPLEX_KINDS and not (kernel.kind == "scan" and kernel.attrs[0] in COMPLEX_SCANS) and any(
            n.dtype.kind == "c" for n in [*kernel.out_nodes, *(kernel.instrs[i] for i in kernel.operands)]):
        return f"no WGSL {kernel.kind} kernel for complex dtypes yet; it runs on the host"
    n_bind = bindings(kernel)
    copies = kernel.kind == "elementwise" and provider.needs_split(kernel) and row_concat(kernel)
    if n_bind > provider.max_storage_buffers and not copies:        # a join by copies binds nothing
        return f"kernel needs {n_bind} storage buffers; the adapter allows {provider.max_storage_buffers}"
    if kernel.kind == "elementwise" and provider.needs_split(kernel):
        if split_kernel(kernel, 1) is None and not copies and window_kernel(provider, kernel) is None and \
                elementwise_row_blocks(provider, kernel) is None:
            return ("an array exceeds the adapter's storage binding limit "
                    f"{provider.max_binding} (or 2**32 elements), and only elementwise kernels over "
                    "contiguous arrays of one size (and scalars) are split into chunks, or read such an "
                    "array through views within a window that fits one binding")
        return None
    blocks = row_blocks(provider, kernel) is not None       # a product's output written by blocks of rows
    # a reduction that reads its inputs past one binding through windows binds those (wgpu_split)
    windowed = kernel.kind in WINDOW_KINDS and any(_nbytes(n) > provider.max_binding for n in kernel.inputs) \
        and window_kernel(provider, kernel) is not None
    for node in ([] if windowed else list(kernel.inputs)) + ([] if blocks else list(kernel.out_nodes)):
        nbytes = _nbytes(node)
        if nbytes > provider.max_binding:
            return f"an array of {nbytes} bytes exceeds the adapter's storage binding limit {provider.max_binding}"
    if kernel.size >= 2**32:
        return "more than 2**32 - 1 elements"
    check = WGPU_KIND_CHECKS.get(kernel.kind)
    return check(provider, kernel) if check is not None else None
