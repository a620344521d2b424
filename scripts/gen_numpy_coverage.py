"""Generate docs/numpy-coverage.md: what NumPy's functions and ufuncs do when handed GpuArrays.

    python scripts/gen_numpy_coverage.py [--check]

Everything is read from the code: the public names of ``numpy``, ``numpy.linalg``
and ``numpy.fft`` (their ``__all__``), how NumPy dispatches each one, and
gpuarray's registries (``_interop.registry.FUNCTIONS`` / ``LIKE`` for ``__array_function__``,
the op table, ``COMPOSED``, ``ALIASES``, ``gufunc_impl`` and ``METHODS`` for
``__array_ufunc__``). ``--check`` exits 1 when the page is out of date.
The page depends on the NumPy version it was generated with, which it names.
"""

from __future__ import annotations

import inspect
import os
import sys
import types
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _docgen import page_main  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "docs", "numpy-coverage.md")
MODULES = ("numpy", "numpy.linalg", "numpy.fft")
UFUNC_METHODS = ("reduce", "accumulate", "reduceat", "outer", "at")

# What a device adapter leaves to the host fallback (everything else it covers on the device).
NOTES: dict[str, str] = {
    "numpy.unique": "`axis=None`: all on the device on a GPU (the count of unique values read back); "
                    "`axis=k`: all on the device (one count read back)",
    "numpy.nonzero": "stream compaction on a GPU device (the count, 4 bytes, read back)",
    "numpy.argwhere": "as `nonzero`; 0-d input falls back",
    "numpy.trim_zeros": "bounds read back in one transfer; returns a view",
    "numpy.einsum": "a letter repeated within one operand takes its diagonal (a strided view: traces, `\"ii->i\"`); "
                    "`dtype=`, `casting=` and a GpuArray `out=` (NumPy arrays as `out=` fall back); bool falls back",
    "numpy.median": "non-empty input, no `out=`",
    "numpy.linspace": "GpuArray endpoints; `device=` falls back",
    "numpy.logspace": "GpuArray endpoints and a scalar `base`",
    "numpy.partition": "sorts the axis fully (a valid partition)",
    "numpy.argpartition": "sorts the axis fully (a valid partition)",
    "numpy.pad": "modes constant, empty, edge, wrap, reflect, symmetric",
    "numpy.cross": "3-vectors along the last axis",
    "numpy.gradient": "uniform (scalar) spacing",
    "numpy.put": "`mode='raise'`, values of size 1 or `len(ind)`",
    "numpy.fill_diagonal": "no `wrap` of tall matrices",
    "numpy.intersect1d": "no `return_indices`",
    "numpy.digitize": "host `bins` check (bins are read back when on a device)",
    "numpy.average": "`weights` sums are checked for zero (one value read back)",
    "numpy.allclose": "computed on the device, the answer (a Python bool) read back",
    "numpy.array_equal": "computed on the device, the answer read back",
    "numpy.array_equiv": "computed on the device, the answer read back",
    "numpy.unravel_index": "bounds checked (one value read back)",
    "numpy.linalg.det": "real float32/float64 on a GPU device: blocked LU there; complex: LAPACK on the host "
                        "(see architecture.md)",
    "numpy.linalg.svd": "`compute_uv=True`, `hermitian=False`",
    "numpy.linalg.qr": "modes reduced, complete, r",
    "numpy.linalg.lstsq": "real 2-D `a`, 1-D or 2-D `b`: from an svd on the device for tall and skinny `a` and "
                          "small ones (Jacobi; their vectors' signs do not matter here)",
    "numpy.linalg.matrix_rank": "`tol=None`, `hermitian=False`, 2-D or more",
    "numpy.linalg.pinv": "`hermitian=False`",
    "numpy.linalg.eigh": "`UPLO='L'`",
    "numpy.linalg.eigvalsh": "`UPLO='L'`",
    "numpy.round": "any `decimals`, NumPy's algorithm",
    "numpy.sum": "`out=`, `where=`, `initial=` too (also `prod`, `max`, `min`, `all`, `any`, `mean`, `std`, `var`)",
    "numpy.std": "not the `mean=` keyword",
    "numpy.var": "not the `mean=` keyword",
}


def _public(modname: str) -> list[tuple[str, Any]]:
    import importlib
    mod = importlib.import_module(modname)
    names = getattr(mod, "__all__", None) or [n for n in dir(mod) if not n.startswith("_")]
    out = []
    for n in sorted(set(names)):
        obj = getattr(mod, n, None)
        if obj is None or isinstance(obj, (types.ModuleType, type)) or not callable(obj):
            continue
        out.append((n, obj))
    return out


def _dispatches(obj: Any) -> bool:
    return type(obj).__name__ == "_ArrayFunctionDispatcher"


def _takes_like(obj: Any) -> bool:
    try:
        return "like" in inspect.signature(obj).parameters
    except (TypeError, ValueError):
        return False


def classify() -> dict[str, Any]:
    import numpy as np

    import gpuarray  # noqa: F401 - registers every adapter
    from gpuarray.interop.registry import FUNCTIONS, HOST_BY_DESIGN, LIKE
    from gpuarray.interop.ufuncs import METHODS, _device_ufunc, gufunc_impl

    functions: list[tuple[str, str, str]] = []        # (qualified name, status, note)
    ufuncs: list[tuple[str, Any]] = []
    seen: set[int] = set()
    for modname in MODULES:
        for name, obj in _public(modname):
            qual = f"{modname}.{name}"
            if isinstance(obj, np.ufunc):
                if modname == "numpy":
                    ufuncs.append((name, obj))
                continue
            seen.add(id(obj))
            if _dispatches(obj):
                if obj in HOST_BY_DESIGN:
                    status = "host (by design)"
                elif obj in FUNCTIONS:
                    status = "device"
                else:
                    status = "host fallback"
            elif _takes_like(obj):
                status = "device (like=)" if obj in LIKE else "host fallback (like=)"
            else:
                status = "unsupported (not dispatched)"
            functions.append((qual, status, NOTES.get(qual, "")))
    extra = sorted(f"{getattr(f, '__module__', '?')}.{getattr(f, '__name__', f)}"
                   for f in FUNCTIONS if id(f) not in seen)
    rows = []
    for name, uf in ufuncs:
        device = _device_ufunc(uf.__name__) is not None or (
            gufunc_impl(uf.__name__) is not None)
        call = "device" if device else "host fallback"
        cells = []
        for m in UFUNC_METHODS:
            binary = uf.nin == 2 and uf.nout == 1 and uf.signature is None
            if m == "at":
                ok = uf.signature is None and uf.nout == 1
            else:
                ok = binary
            if not ok:
                cells.append("—")
            elif m == "outer":
                cells.append(call)
            else:
                cells.append("device" if (uf.__name__, m) in METHODS else "host fallback")
        alias = f" (= `{uf.__name__}`)" if uf.__name__ != name else ""
        rows.append((name, alias, call, cells))
    return {"numpy": np.__version__, "functions": functions, "ufuncs": rows, "extra": extra}


def render() -> str:
    c = classify()
    fns: list[tuple[str, str, str]] = c["functions"]
    count = {s: sum(1 for _, st, _ in fns if st == s) for s in
             ("device", "host fallback", "host (by design)", "device (like=)", "host fallback (like=)",
              "unsupported (not dispatched)")}
    dispatched = count["device"] + count["host fallback"] + count["host (by design)"]
    uf = c["ufuncs"]
    uf_device = sum(1 for r in uf if r[2] == "device")
    methods_device = sum(cell == "device" for r in uf for cell in r[3])
    methods_total = sum(cell != "—" for r in uf for cell in r[3])
    lines = [
        "# NumPy coverage",
        "",
        f"Generated by `scripts/gen_numpy_coverage.py` from the code, with NumPy {c['numpy']}: every public",
        "function and ufunc of `numpy`, `numpy.linalg` and `numpy.fft` (their `__all__`), and what it does",
        "when handed a `GpuArray`.",
        "",
        "- **device**: gpuarray has an adapter (`__array_function__`) or a table ufunc (`__array_ufunc__`);",
        "  the call is recorded lazily on the array's device and fuses with its neighbours. Arguments an",
        "  adapter does not cover (noted below) run as a host fallback.",
        "- **host fallback**: NumPy runs on host copies and array results come back as GpuArrays on the",
        "  caller's device; counted in `metrics()[\"host_fallbacks\"]` and governed by",
        "  `gpuarray.config(fallback=\"warn\" | \"silent\" | \"raise\")`.",
        "- **host (by design)**: printing and saving, which are host output; not counted as fallbacks.",
        "- **like=**: creation functions that dispatch only through `like=` (`np.zeros(3, like=g)`).",
        "- **unsupported (not dispatched)**: NumPy does not offer these to `__array_function__` (they take no",
        "  arrays, or convert their arguments with `np.asarray`, which copies a GpuArray to the host and",
        "  returns NumPy results). gpuarray cannot intercept them.",
        "",
        "## Counts",
        "",
        f"- **{dispatched}** functions dispatch through `__array_function__` and are handled: "
        f"**{count['device']}** on the device, **{count['host fallback']}** as host fallbacks, "
        f"**{count['host (by design)']}** host output by design.",
        f"- **{count['device (like=)'] + count['host fallback (like=)']}** creation functions take `like=`: "
        f"**{count['device (like=)']}** on the device, {count['host fallback (like=)']} as host fallbacks.",
        f"- **{count['unsupported (not dispatched)']}** functions are not dispatched by NumPy (unsupported).",
        f"- **{len(uf)}** ufunc names: **{uf_device}** run `__call__` on the device, {len(uf) - uf_device} fall "
        f"back; of their {methods_total} ufunc methods (`reduce`, `accumulate`, `reduceat`, `outer`, `at`), "
        f"**{methods_device}** run on the device.",
        "",
    ]
    for modname in MODULES:
        rows = [(n, s, note) for n, s, note in fns if n.rsplit(".", 1)[0] == modname]
        lines += [f"## `{modname}` functions", "", "| function | with GpuArrays | notes |", "| --- | --- | --- |"]
        lines += [f"| `{n}` | {s} | {note} |" for n, s, note in rows]
        lines.append("")
    lines += ["## ufuncs", "",
              "`__call__` on the device means the op table (or a composition of its ops) has the ufunc; loops",
              "gpuarray has no dtype for (complex on a device without it, object, strings ...) fall back, and",
              "float16 loops give float16 (computed in float32, each result rounded). `—`: NumPy does not",
              "define that method for the ufunc.", "",
              "| ufunc | `__call__` | " + " | ".join(f"`{m}`" for m in UFUNC_METHODS) + " |",
              "| --- | --- | " + " | ".join("---" for _ in UFUNC_METHODS) + " |"]
    lines += [f"| `{name}`{alias} | {call} | " + " | ".join(cells) + " |" for name, alias, call, cells in uf]
    lines.append("")
    if c["extra"]:
        lines += ["## Other NumPy functions with device adapters", "",
                  ", ".join(f"`{n}`" for n in c["extra"]), ""]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    return page_main(OUT, render, "gen_numpy_coverage.py", argv)


if __name__ == "__main__":
    raise SystemExit(main())
