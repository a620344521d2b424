"""What makes the first kernel of a new process fast: primed cffi types, an on-disk WGSL
cache, and pipelines precompiled in the background.

Where the first evaluation of a fused kernel spent its time in a new process (lavapipe,
this machine; docs/architecture.md has the table): not in shader compilation, but in
cffi. wgpu-py builds each C struct with ``ffi.new("WGPUFoo *")``, and cffi parses every
new type string with pycparser, prepending a typedef for each of the ~500 names of
wgpu.h: 10-20 ms per type, about 45 types between device creation and the first
read-back. ``prime_ffi_types`` enters those types into cffi's cache directly from the
declarations cffi already parsed (microseconds each), so only wgpu's import still parses.

The kernel cache keeps the rendered WGSL of every kernel signature under
``<cache>/kernels/<adapter>-<versions>-<code hash>/`` (``<cache>`` as for calibration:
``GPUARRAY_CACHE_DIR``, else ``$XDG_CACHE_HOME/gpuarray``, else ``~/.cache/gpuarray``).
The code hash covers every source file of the package, so a changed renderer never reads
old WGSL. When a provider starts, a background thread loads the most recently used
entries and compiles their pipelines (``GPUARRAY_WARM_KERNELS``, default 32; 0: none).
wgpu-py 0.32 has no API for wgpu's pipeline cache (wgpu-native exposes the
``pipeline-cache`` feature but no function to create one), so compiled pipelines
themselves are not stored; drivers keep their own shader caches.
``GPUARRAY_KERNEL_CACHE=0`` turns the disk cache and the warm-up off. Unreadable,
corrupt or foreign files are ignored.
"""

from __future__ import annotations

import atexit
import contextlib
import hashlib
import json
import os
import re
import shutil
import tempfile
import threading
from pathlib import Path
from typing import Any

from ..core import __version__
from ..core import metrics as _metrics
from ..core.cache import cache_dir, file_safe
from ..render.wgsl import Rendered

FORMAT = 1
KEEP_VERSIONS = 4           # version directories kept per adapter
WARM_DEFAULT = 32
# Type strings wgpu-py asks cffi for from device creation to the first read-back; more
# are recorded per wgpu version in ``<cache>/ffi-types-<version>.json`` at exit.
FFI_TYPES = (
    "WGPURequestAdapterOptions *", "WGPUInstanceEnumerateAdapterOptions *", "WGPUAdapter[]",
    "WGPUAdapterInfo *", "WGPULimits *", "WGPUNativeLimits *", "WGPUSupportedFeatures *",
    "WGPUDeviceDescriptor *", "WGPUDeviceExtras *", "WGPUFeatureName[]", "WGPUQueueDescriptor *",
    "WGPUDeviceLostCallbackInfo *", "WGPUUncapturedErrorCallbackInfo *", "WGPURequestDeviceCallbackInfo *",
    "WGPUInstanceDescriptor *", "WGPUInstanceExtras *", "WGPUChainedStruct *", "char []",
    "WGPUBufferDescriptor *", "uint8_t []", "uintptr_t", "intptr_t", "uint8_t *", "uint32_t []",
    "WGPUShaderSourceWGSL *", "WGPUShaderModuleDescriptor *", "WGPUComputeState *",
    "WGPUComputePipelineDescriptor *", "WGPUCommandEncoderDescriptor *", "WGPUComputePassDescriptor *",
    "WGPUPassTimestampWrites *", "WGPUQuerySetDescriptor *",
    "WGPUBindGroupEntry *", "WGPUBindGroupEntry[]", "WGPUBindGroupDescriptor *",
    "WGPUCommandBufferDescriptor *", "WGPUCommandBuffer[]", "WGPUBufferMapCallbackInfo *",
    "WGPUQueueWorkDoneCallbackInfo *",
    "void(WGPUMapAsyncStatus, WGPUStringView, void *, void *)",
    "void(WGPUDevice const *, WGPUDeviceLostReason, WGPUStringView, void *, void *)",
    "void(WGPUDevice const *, WGPUErrorType, WGPUStringView, void *, void *)",
    "void(WGPURequestDeviceStatus, WGPUDevice, WGPUStringView, void *, void *)",
    "void(WGPURequestAdapterStatus, WGPUAdapter, WGPUStringView, void *, void *)",
    "void(WGPUQueueWorkDoneStatus, void *, void *)",
)

_NAME = r"[A-Za-z_]\w*"
_SIMPLE = re.compile(rf"\s*({_NAME})\s*(const\s*)?(\*|\[\s*\])?\s*")
_FUNC = re.compile(r"\s*void\s*\((.*)\)\s*")


def enabled() -> bool:
    return os.environ.get("GPUARRAY_KERNEL_CACHE", "1").strip().lower() not in ("0", "false", "no", "off")


def warm_count() -> int:
    try:
        return max(0, int(os.environ.get("GPUARRAY_WARM_KERNELS", WARM_DEFAULT)))
    except ValueError:
        return WARM_DEFAULT


# ---- cffi types
def _ffi() -> Any:
    from wgpu.backends.wgpu_native._ffi import ffi
    return ffi


def _simple_model(parser: Any, cdecl: str) -> Any:
    """cffi's model type for ``Name``, ``Name *``, ``Name const *`` or ``Name[]``, built the
    way cffi's parser builds it (``Parser._get_type_and_quals``), or None for anything else."""
    from cffi import model
    from cffi.commontypes import resolve_common_type

    m = _SIMPLE.fullmatch(cdecl)
    if m is None:
        return None
    name, const, suffix = m.groups()
    if name == "void":
        tp, quals = model.void_type, 0
    elif "typedef " + name in parser._declarations:
        tp, quals = parser._declarations["typedef " + name]
    else:
        tp, quals = resolve_common_type(parser, name)
    if const:
        quals |= model.Q_CONST
    if suffix == "*":
        return model.PointerType(tp, quals)
    if suffix:
        return model.ArrayType(tp, None)
    return None if const else tp


def _model(parser: Any, cdecl: str) -> Any:
    """The model type of a simple type or of ``void(args)``, or None."""
    from cffi import model

    m = _FUNC.fullmatch(cdecl)
    if m is None:
        return _simple_model(parser, cdecl)
    args = []
    for a in m.group(1).split(","):
        tp = _simple_model(parser, a)
        if tp is None or isinstance(tp, model.ArrayType) or tp.is_raw_function:
            return None
        args.append(tp)
    if args == [model.void_type]:
        args = []
    return model.RawFunctionType(tuple(args), model.void_type, False, None)


def prime_ffi_types(extra: tuple[str, ...] | list[str] = ()) -> int:
    """Enter wgpu-py's common C type strings into cffi's type cache without pycparser.

    Returns how many were added. Any string whose form is not one of the simple ones is
    left for cffi to parse when it is used; on any surprise in cffi's internals this
    adds nothing."""
    if os.environ.get("GPUARRAY_PRIME_FFI", "1") == "0":
        return 0
    try:
        ffi = _ffi()
        parser, cache = ffi._parser, ffi._parsed_types
        added = 0
        with ffi._lock:
            for cdecl in (*FFI_TYPES, *_recorded_types(), *extra):
                if cdecl in cache:
                    continue
                try:
                    tp = _model(parser, cdecl)
                    if tp is None:
                        continue
                    raw = tp.is_raw_function
                    cache[cdecl] = (ffi._get_cached_btype(tp.as_function_pointer() if raw else tp), raw)
                except Exception:  # noqa: BLE001, S112 - a name this wgpu does not declare
                    continue
                added += 1
        _state.setdefault("seen", set(cache))
        return added
    except Exception:  # noqa: BLE001 - priming is an optimization; cffi parses on demand otherwise
        return 0


_state: dict[str, Any] = {}


def _types_file() -> Path:
    import wgpu

    return cache_dir() / f"ffi-types-{wgpu.__version__}.json"


def _recorded_types() -> list[str]:
    if not enabled():
        return []
    try:
        data = json.loads(_types_file().read_text())
        return [t for t in data if isinstance(t, str)] if isinstance(data, list) else []
    except (OSError, ValueError):
        return []


def record_types() -> None:
    """At exit: add the simple type strings this process parsed to the recorded list."""
    seen = _state.get("seen")
    if seen is None or not enabled():
        return
    try:
        ffi = _ffi()
        new = [k for k in list(ffi._parsed_types) if isinstance(k, str) and k not in seen
               and _model(ffi._parser, k) is not None]
        if new:
            old = _recorded_types()
            _write_atomic(_types_file(), json.dumps(sorted(set(old) | set(new))[:2000]))
    except Exception:  # noqa: BLE001 - never fail at exit
        pass


atexit.register(record_types)


# ---- the on-disk WGSL cache
def _write_atomic(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
    try:
        with os.fdopen(fd, "w") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


_code_hash: str | None = None


def code_hash() -> str:
    """SHA-1 of every source file of the package (a changed renderer gets a new cache)."""
    global _code_hash
    if _code_hash is None:
        root = Path(__file__).resolve().parent.parent
        h = hashlib.sha1()
        for p in sorted(root.rglob("*.py")):
            h.update(str(p.relative_to(root)).encode())
            with contextlib.suppress(OSError):
                h.update(p.read_bytes())
        _code_hash = h.hexdigest()
    return _code_hash


def entry_key(render_fn: Any, variant: Any, signature: tuple) -> str | None:
    """A stable text key for a rendered shader, or None when it has no stable text form."""
    fn = f"{getattr(render_fn, '__module__', '?')}.{getattr(render_fn, '__qualname__', render_fn)}"
    key = f"{fn}|{variant!r}|{signature!r}"
    return None if " at 0x" in key else key


def _to_json(r: Rendered) -> dict[str, Any]:
    return {"source": r.source, "slots": [list(s) for s in r.slots],
            "wide": {t: [list(i) if isinstance(i, tuple) else i for i in v] for t, v in r.wide.items()},
            "n_inputs": r.n_inputs, "n_outputs": r.n_outputs, "vec": r.vec, "per_thread": r.per_thread,
            "tile": r.tile}


def _tuples(x: Any) -> Any:
    return tuple(_tuples(i) for i in x) if isinstance(x, list) else x


def _from_json(d: dict[str, Any]) -> Rendered:
    return Rendered(str(d["source"]), [_tuples(s) for s in d["slots"]],
                    {str(t): [_tuples(i) for i in v] for t, v in d["wide"].items()},
                    int(d["n_inputs"]), int(d["n_outputs"]), int(d.get("vec", 1)), int(d.get("per_thread", 1)),
                    int(d.get("tile", 0)))


class KernelCache:
    """Rendered WGSL by key, in one directory per adapter, wgpu, gpuarray and code version."""

    def __init__(self, adapter_info: dict[str, Any], features: list[str]) -> None:
        import wgpu

        ident = f"{adapter_info.get('device')}-{adapter_info.get('backend_type')}-{adapter_info.get('description')}"
        feats = hashlib.sha1(",".join(sorted(features)).encode()).hexdigest()[:8]
        self.name = f"{file_safe(ident)[:80]}-f{feats}-wgpu{wgpu.__version__}-ga{__version__}"
        self.base = cache_dir() / "kernels"
        self._dir: Path | None = None
        self.loaded: dict[str, Rendered] = {}      # filled by the warm-up thread
        self.lock = threading.Lock()

    @property
    def dir(self) -> Path:
        if self._dir is None:
            self._dir = self.base / f"{self.name}-{code_hash()[:12]}"
        return self._dir

    def _path(self, key: str) -> Path:
        return self.dir / (hashlib.sha256(key.encode()).hexdigest()[:40] + ".json")

    def _read(self, path: Path, key: str | None) -> tuple[str, Rendered] | None:
        try:
            d = json.loads(path.read_text())
            if not isinstance(d, dict) or d.get("format") != FORMAT or not isinstance(d.get("key"), str):
                return None
            if key is not None and d["key"] != key:
                return None
            return d["key"], _from_json(d["rendered"])
        except Exception:  # noqa: BLE001 - corrupt, foreign or unreadable: ignore it
            return None

    def get(self, key: str) -> Rendered | None:
        with self.lock:
            r = self.loaded.get(key)
        if r is not None:                   # the warm-up thread read it
            _metrics.add("kernel_disk_cache_hits")
            return r
        p = self._path(key)
        got = self._read(p, key)
        if got is None:
            return None
        with contextlib.suppress(OSError):
            os.utime(p)                 # most recently used first at the next warm-up
        _metrics.add("kernel_disk_cache_hits")
        return got[1]

    def put(self, key: str, r: Rendered) -> None:
        if type(r) is not Rendered:
            return
        try:
            if not self.dir.exists():
                self._prune()
            doc = _to_json(r)
            text = json.dumps({"format": FORMAT, "key": key, "rendered": doc})
            if _from_json(json.loads(text)["rendered"]) != r:
                return                  # something that does not survive JSON: keep it in memory only
            _write_atomic(self._path(key), text)
        except (OSError, TypeError, ValueError):
            pass

    def _prune(self) -> None:
        """Before starting a new version directory: remove this adapter's older ones
        (other code or library versions), keeping the ``KEEP_VERSIONS - 1`` newest."""
        try:
            old = sorted((p for p in self.base.glob(f"{self.name}-*") if p.is_dir()),
                         key=lambda p: p.stat().st_mtime, reverse=True)
        except OSError:
            return
        for d in old[KEEP_VERSIONS - 1:]:
            shutil.rmtree(d, ignore_errors=True)

    def recent(self, n: int) -> list[tuple[str, Rendered]]:
        """The ``n`` most recently used entries, newest first."""
        try:
            files = [(p.stat().st_mtime, p) for p in self.dir.glob("*.json")]
        except OSError:
            return []
        out = []
        for _t, p in sorted(files, key=lambda tp: tp[0], reverse=True)[:n]:
            got = self._read(p, None)
            if got is not None:
                out.append(got)
        return out


def start_warm(provider: Any) -> threading.Thread | None:
    """Load recently used shaders and compile their pipelines in a background thread."""
    cache = provider.kcache
    n = warm_count()
    if cache is None or n == 0:
        return None

    def work() -> None:
        try:
            for key, r in cache.recent(n):
                if provider.lost is not None or _stopping.is_set():
                    return
                with cache.lock:
                    cache.loaded.setdefault(key, r)
                provider.pipeline_for(r.source, background=True)
        except Exception:  # noqa: BLE001 - warming is best effort; the main thread compiles on demand
            pass

    t = threading.Thread(target=work, name="gpuarray-warm", daemon=True)
    _threads.append(t)
    t.start()
    return t


_stopping = threading.Event()
_threads: list[threading.Thread] = []


@atexit.register
def _stop_warm() -> None:
    _stopping.set()
    for t in _threads:
        t.join(timeout=5)
