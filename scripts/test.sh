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
exec .venv/bin/python -m pytest -q -p no:cacheprovider "$@"
