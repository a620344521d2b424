#!/usr/bin/env bash
# The main job: set up, then run the showcase on the best device found.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
exec .venv/bin/python -m gpuarray demo "$@"
