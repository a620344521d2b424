#!/usr/bin/env bash
# Run the Array API test suite (data-apis/array-api-tests) against gpuarray.
#
# usage: array_api_tests_config/run.sh SUITE_DIR PROVIDER [MAX_EXAMPLES] [pytest args...]
#   SUITE_DIR     a checkout of data-apis/array-api-tests with the spec at SUITE_DIR/array-api
#   PROVIDER      inprocess | wgpu   (sets GPUARRAY_PROVIDER, so arrays made without
#                 device= land on cpu or on wgpu:0)
#   MAX_EXAMPLES  hypothesis examples per test (default 20)
#   pytest args   passed on, e.g. a subset: array_api_tests/test_creation_functions.py
#                 (default: the whole array_api_tests/ folder)
#
# environment: PYTHON (default /tmp/venv/bin/python, else python3), OUT_DIR (default
#   ./array-api-tests-results), GPUARRAY_ROOT (the gpuarray checkout to test; default
#   the one holding this script), ARRAY_API_TESTS_SKIP_DTYPES (default: none), GPUARRAY_OFFLOAD (default
#   always on wgpu, so kernels run on the device however small the arrays),
#   ARRAY_API_TESTS_DEADLINE=1 (keep hypothesis' 800 ms deadline; off by default).
#
# Writes into OUT_DIR: junit-PROVIDER.xml, report-PROVIDER.json (pytest-json-report),
# log-PROVIDER.txt and summary-PROVIDER.txt (counts and the failing test ids).
# Exit status is pytest's.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
if [[ $# -lt 2 ]]; then
    sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d' | sed 's/^# \{0,1\}//'
    exit 2
fi
suite="$(cd "$1" && pwd)"
provider="$2"
max_examples="${3:-20}"
shift $(( $# >= 3 ? 3 : 2 ))

case "$provider" in
    inprocess|wgpu) ;;
    *) echo "run.sh: PROVIDER must be 'inprocess' or 'wgpu'; got '$provider'" >&2; exit 2 ;;
esac
if [[ ! -d "$suite/array_api_tests" ]]; then
    echo "run.sh: $suite is not an array-api-tests checkout (no array_api_tests/ folder)" >&2; exit 2
fi
if [[ ! -d "$suite/array-api/src/array_api_stubs" ]]; then
    echo "run.sh: the spec is missing: put a data-apis/array-api checkout at $suite/array-api" >&2; exit 2
fi

root="${GPUARRAY_ROOT:-$(dirname "$here")}"
python="${PYTHON:-/tmp/venv/bin/python}"
[[ -x "$python" ]] || python=python3
out="${OUT_DIR:-$PWD/array-api-tests-results}"
mkdir -p "$out"
out="$(cd "$out" && pwd)"
xfails="$here/xfails-$provider.txt"

export ARRAY_API_TESTS_MODULE=gpuarray
export ARRAY_API_TESTS_VERSION=2024.12
# Every dtype is tested (complex64/complex128 included); set ARRAY_API_TESTS_SKIP_DTYPES
# to a comma-separated list to leave some out.
export ARRAY_API_TESTS_SKIP_DTYPES="${ARRAY_API_TESTS_SKIP_DTYPES-}"
export GPUARRAY_PROVIDER="$provider"
export PYTHONPATH="$root${PYTHONPATH:+:$PYTHONPATH}"
export XDG_RUNTIME_DIR="${XDG_RUNTIME_DIR:-/tmp}"

# Hypothesis' 800 ms deadline measures speed, not conformance, and flakes here: on wgpu
# every new kernel signature compiles a shader on first use (seconds on lavapipe), and
# on both providers the suite's element-by-element checks index a GpuArray once per
# element (~0.7 ms each on cpu), so large drawn arrays pass 800 ms. Set
# ARRAY_API_TESTS_DEADLINE=1 to keep the deadline.
deadline=()
[[ "${ARRAY_API_TESTS_DEADLINE:-0}" == 1 ]] || deadline=(--disable-deadline)
# The planner would keep the suite's small arrays on the host (offload="auto" runs work
# below its threshold with NumPy when the inputs have host copies): on wgpu, force every
# kernel onto wgpu:0 so the wgpu provider is what gets tested, as tests/conftest.py does.
[[ "$provider" == wgpu ]] && export GPUARRAY_OFFLOAD="${GPUARRAY_OFFLOAD:-always}"

targets=("$@")
[[ ${#targets[@]} -eq 0 ]] && targets=(array_api_tests/)

cd "$suite"
echo "suite $(git -C "$suite" rev-parse HEAD 2>/dev/null || echo '?')," \
     "spec $(git -C "$suite/array-api" rev-parse HEAD 2>/dev/null || echo '?')"
echo "gpuarray at $root, provider $provider, --max-examples $max_examples ${deadline[*]}, xfails $xfails," \
     "skipped dtypes: ${ARRAY_API_TESTS_SKIP_DTYPES:-none}, offload: ${GPUARRAY_OFFLOAD:-auto}"
rm -f "$out/report-$provider.json"    # a stale report must not pass for this run's
set +e
# (--json-report-omit takes several values: keep an option after it, not the targets)
"$python" -m pytest -c "$suite/pytest.ini" --rootdir="$suite" -p no:cacheprovider \
    --json-report --json-report-omit collectors log --json-report-file="$out/report-$provider.json" \
    --junitxml="$out/junit-$provider.xml" \
    --max-examples="$max_examples" "${deadline[@]}" \
    --xfails-file="$xfails" \
    -q -rfE --tb=line \
    "${targets[@]}" 2>&1 | tee "$out/log-$provider.txt"
rc=${PIPESTATUS[0]}
set -e

"$python" - "$out/report-$provider.json" "$out/summary-$provider.txt" "$provider" "$max_examples" "$rc" <<'PY'
import collections
import json
import sys

report, summary, provider, max_examples, rc = sys.argv[1:]
try:
    with open(report) as f:
        tests = json.load(f).get("tests", [])
except (OSError, ValueError):
    # pytest died before writing its report (e.g. the process aborted in native code).
    msg = (f"provider {provider}, --max-examples {max_examples}\n"
           f"NO REPORT: pytest exited with status {rc} before writing {report}; see the log\n")
    with open(summary, "w") as f:
        f.write(msg)
    print(msg, end="")
    sys.exit(0)
counts = collections.Counter(t["outcome"] for t in tests)
failing = [t["nodeid"] for t in tests if t["outcome"] in ("failed", "error")]
kinds = ("passed", "failed", "error", "skipped", "xfailed", "xpassed")
line = " ".join(f"{k}={counts.get(k, 0)}" for k in kinds) + f" total={len(tests)}"
with open(summary, "w") as f:
    f.write(f"provider {provider}, --max-examples {max_examples}\n{line}\n")
    f.writelines(f"FAILED {n}\n" for n in failing)
print(f"summary: {line} ({summary})")
PY
exit "$rc"
