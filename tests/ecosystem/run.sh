#!/usr/bin/env bash
# Run SciPy's and scikit-learn's array-API tests with one backend, one suite at a time:
#   tests/ecosystem/run.sh gpuarray cpu OUTDIR [suite ...]
#   tests/ecosystem/run.sh array_api_strict - OUTDIR [suite ...]
# PYTEST_EXTRA adds pytest arguments (for example "-n 8" with pytest-xdist).
# PYTHON (default .venv/bin/python) must have SciPy, scikit-learn, pytest, pytest-timeout and
# array-api-strict. Each suite's log goes to OUTDIR/<suite>.log; the last line is pytest's summary.
set -uo pipefail
BACKEND="$1"; DEVICE="$2"; OUT="$3"; shift 3
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
PY="${PYTHON:-$ROOT/.venv/bin/python}"
SUITES=("$@")
[ ${#SUITES[@]} -eq 0 ] && SUITES=(special stats signal ndimage integrate interpolate optimize differentiate fft
                                   cluster linalg spatial sklearn)
mkdir -p "$OUT"
export SCIPY_ARRAY_API=1 XDG_RUNTIME_DIR="${XDG_RUNTIME_DIR:-/tmp}" PYTHONPATH="$ROOT${PYTHONPATH:+:$PYTHONPATH}"
[ "$DEVICE" = "-" ] && DEVICE=cpu
for s in "${SUITES[@]}"; do
  case "$s" in
    sklearn) sel=(-k "$BACKEND" --pyargs sklearn) ;;
    # signal and stats are big (12k and 2.4k xp tests; hours on a 2-core machine): deterministic
    # samples of modules (docs/ecosystem.md says which); "signal-all" / "stats-all" run everything
    signal) sel=(-m array_api_backends --pyargs scipy.signal.tests.test_windows scipy.signal.tests.test_splines
                 scipy.signal.tests.test_bsplines scipy.signal.tests.test_savitzky_golay
                 scipy.signal.tests.test_cont2discrete scipy.signal.tests.test_fir_filter_design
                 scipy.signal.tests.test_ltisys) ;;
    signaltools) sel=(-m array_api_backends -k "oaconvolve" --pyargs scipy.signal.tests.test_signaltools) ;;
    stats) sel=(-m array_api_backends --pyargs scipy.stats.tests.test_morestats scipy.stats.tests.test_variation
                scipy.stats.tests.test_entropy scipy.stats.tests.test_correlation scipy.stats.tests.test_rank
                scipy.stats.tests.test_continued_fraction) ;;
    signal-all|stats-all) sel=(-m array_api_backends --pyargs "scipy.${s%-all}") ;;
    *) sel=(-m array_api_backends --pyargs "scipy.$s") ;;
  esac
  (cd /tmp && timeout "${SUITE_TIMEOUT:-1500}" "$PY" -m pytest -p tests.ecosystem.xp_backends -p no:cacheprovider \
     --xp-backend="$BACKEND" --gpuarray-device="$DEVICE" -q -rfE --timeout="${TEST_TIMEOUT:-300}" \
     -W ignore::pytest.PytestUnknownMarkWarning ${PYTEST_EXTRA:-} "${sel[@]}") > "$OUT/$s.log" 2>&1
  echo "$s $BACKEND $DEVICE: $(tail -1 "$OUT/$s.log")"
done
