#!/usr/bin/env bash
# The whole test suite: set up, lint (ruff), type-check (mypy), then pytest on both
# providers (the wgpu provider on lavapipe when there is no GPU; it must start).
set -euo pipefail
# the interop extra (scikit-learn, SciPy, dask, xarray) is what tests/integration tests against
export EXTRAS="${EXTRAS:-interop}"
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
.venv/bin/python -m ruff check gpuarray tests bench examples
.venv/bin/python -m mypy
.venv/bin/python -m gpuarray info
# Test files run in parallel, one pytest worker per core (at most 4, and at most one per 10 GiB of
# memory: a worker peaks near 12 GiB), each file whole on one worker in its own order (--dist
# loadfile); most of the time is lavapipe compiling shaders on one core. GPUARRAY_TEST_WORKERS=0
# runs everything in this process.
if [ -z "${GPUARRAY_TEST_WORKERS:-}" ]; then
  mem_gib=$(awk '/MemTotal/ {print int($2 / 1048576)}' /proc/meminfo 2>/dev/null || echo 0)
  GPUARRAY_TEST_WORKERS=$(( $(nproc 2>/dev/null || echo 1) ))
  (( GPUARRAY_TEST_WORKERS > 4 )) && GPUARRAY_TEST_WORKERS=4
  (( GPUARRAY_TEST_WORKERS > mem_gib / 10 )) && GPUARRAY_TEST_WORKERS=$(( mem_gib / 10 ))
  (( GPUARRAY_TEST_WORKERS < 2 )) && GPUARRAY_TEST_WORKERS=0
fi
parallel=()
(( GPUARRAY_TEST_WORKERS > 0 )) && parallel=(-n "$GPUARRAY_TEST_WORKERS" --dist loadfile)
exec .venv/bin/python -m pytest -q -p no:cacheprovider "${parallel[@]}" "$@"
