"""Lavapipe's compile time for inlined copies of a helper that calls ga_fmod in two branches, and for
the same helper with one ga_fmod call in a loop (docs/reliability.md, "Compile time on lavapipe").

Valid WGSL, no gpuarray kernel: each shader adds N calls of the helper; the first dispatch of a
pipeline is where lavapipe compiles it (creating the pipeline takes a fraction of a second).
Usage: ``MESA_SHADER_CACHE_DISABLE=true python scripts/lavapipe_compile_time.py 1 2 3``.
"""

from __future__ import annotations

import sys
import time

import numpy as np
import wgpu

from gpuarray.render.wgsl_lib import helpers_for

# ga_fmod (musl's long division: loops with returns inside them) in two branches, as ga_remainder had it
TWO = """fn two(a: f64, b: f64) -> f64 {
  if (abs(b) < f64(1e-30)) { return ga_fmod_f64(ga_fmod_f64(a, b * f64(4.0)), b); }
  return ga_fmod_f64(a, b);
}"""
# the same function with one call site, in a loop of at most two passes, as ga_remainder has it now
ONE = """fn one(a: f64, b: f64) -> f64 {
  var again = abs(b) < f64(1e-30);
  var x = a;
  var y = select(b, b * f64(4.0), again);
  var m = a;
  loop {
    m = ga_fmod_f64(x, y);
    if (!again) { break; }
    again = false;
    x = m;
    y = b;
  }
  return m;
}"""


def shader(fn: str, n: int) -> str:
    calls = "\n".join(f"  acc = acc + {fn}(in0[(gi + {k}u) % 4u], in0[4u]);" for k in range(n))
    return f"""@group(0) @binding(0) var<storage, read> in0: array<f64>;
@group(0) @binding(1) var<storage, read_write> out0: array<f64>;
{helpers_for("ga_fmod_f64(a, b)")}
{TWO}
{ONE}
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {{
  let gi = id.x;
  if (gi >= 4u) {{ return; }}
  var acc = f64(0);
{calls}
  out0[gi] = acc;
}}
"""


def first_dispatch(dev: wgpu.GPUDevice, src: str) -> tuple[float, np.ndarray]:
    """Seconds from pipeline creation to the result of its first dispatch, and that result."""
    t = time.perf_counter()
    pipe = dev.create_compute_pipeline(layout="auto", compute={"module": dev.create_shader_module(code=src),
                                                               "entry_point": "main"})
    a = dev.create_buffer_with_data(data=np.array([190, -190, 350, -350, 360], np.float64).tobytes(),
                                    usage=wgpu.BufferUsage.STORAGE)
    o = dev.create_buffer(size=32, usage=wgpu.BufferUsage.STORAGE | wgpu.BufferUsage.COPY_SRC)
    bg = dev.create_bind_group(layout=pipe.get_bind_group_layout(0), entries=[
        {"binding": 0, "resource": {"buffer": a}}, {"binding": 1, "resource": {"buffer": o}}])
    enc = dev.create_command_encoder()
    cp = enc.begin_compute_pass()
    cp.set_pipeline(pipe)
    cp.set_bind_group(0, bg)
    cp.dispatch_workgroups(1)
    cp.end()
    dev.queue.submit([enc.finish()])
    r = np.frombuffer(dev.queue.read_buffer(o), np.float64)
    return time.perf_counter() - t, r


def main() -> None:
    adapter = wgpu.gpu.request_adapter_sync(power_preference="high-performance")
    print(adapter.info["device"])
    dev = adapter.request_device_sync(required_features=["shader-f64", "shader-int64"])
    for n in map(int, sys.argv[1:] or ["1", "2", "3"]):
        for fn in ("one", "two"):
            s, r = first_dispatch(dev, shader(fn, n))
            print(f"{fn} x {n}: {s:.2f} s  {r}", flush=True)


if __name__ == "__main__":
    main()
