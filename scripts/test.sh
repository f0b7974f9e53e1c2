#!/usr/bin/env bash
# Installs what the build needs, builds, and runs the default Catch2 suite through `meson test`:
# once in a release build and once under AddressSanitizer + UndefinedBehaviorSanitizer.
# Prints how long each phase took, then ends with one line "N passed, N failed" (meson's test
# counts, both builds together); exits non-zero on any failure.
#   scripts/test.sh            release + sanitizers, suite `unit`
#   scripts/test.sh --quick    release only
#   scripts/test.sh --slow     also the long statistical suite `slow`
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"

quick=0; suites=(--suite unit)
for arg in "$@"; do
  case "$arg" in
    --quick) quick=1 ;;
    --slow) suites=(--suite unit --suite slow) ;;
    *) echo "usage: scripts/test.sh [--quick] [--slow]" >&2; exit 2 ;;
  esac
done

# phase NAME COMMAND...: runs the command and records its wall time for the table at the end.
phases=()
phase() {
  local name="$1"; shift
  local start=$SECONDS
  "$@"
  phases+=("$(printf '%-34s %6d s' "$name" $((SECONDS - start)))")
}

passed=0; failed=0
run_suite() {
  local dir="$1"; local log="$DPSTREAM_ROOT/$dir/test-summary.txt"
  echo "== meson test in $dir"
  set +e
  meson test -C "$DPSTREAM_ROOT/$dir" "${suites[@]}" --print-errorlogs --num-processes 2 | tee "$log"
  set -e
  # meson's own summary lines: "Ok: N", "Fail: N", "Unexpected Pass: N", "Timeout: N".
  local ok fail
  ok=$(awk '/^Ok:/ {print $2}' "$log"); ok=${ok:-0}
  fail=$(awk '/^(Fail|Unexpected Pass|Timeout):/ {s += $NF} END {print s+0}' "$log")
  if [ "$ok" -eq 0 ] && [ "$fail" -eq 0 ]; then fail=1; echo "no test ran in $dir"; fi
  passed=$((passed + ok)); failed=$((failed + fail))
}

total_start=$SECONDS
phase "packages" dpstream_install_packages
# Without the benchmarks (-Dbench=false): they cost ~100 job-seconds of CI's budget;
# scripts/demo.sh's build compiles them.
phase "configure + build (release)" dpstream_build build -Dbuildtype=release -Dbench=false "${DPSTREAM_UNITY[@]}"
phase "suite (release)" run_suite build
if [ "$quick" -eq 0 ]; then
  # halt_on_error makes every UBSan report a test failure, not a warning in a log;
  # -fno-sanitize-recover=all (below) compiles that behaviour in (no code to carry on after a report),
  # 11% less compile time at -O1 (the library's pca sources, 108 s against 121 s).
  export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
  # Every ASan and UBSan check is on except ASan's use-after-scope poisoning: with UBSan's null and
  # alignment checks it keeps Eigen's GEMM micro-kernel out of registers, 12x slower (0.5 against
  # 5.9 GFLOP/s, d = 784 rank-128 update) and a third of the compile time; heap, global and stack
  # buffer overflows, use-after-free and leaks are still caught. The tests' own code (assertions,
  # fixtures) is under ASan only, not UBSan (tests/meson.build: a third of its compile). -g1 (line
  # tables: stack traces keep file:line) compiles ~30% faster than -g. -O1 (the level ASan's authors
  # recommend) compiles in half the time of -O2 under UBSan's checks (test_bad_input 93 s against
  # 182 s alone); the suite runs ~25% longer (library at -O1: ALS and Frank–Wolfe). The tests' own
  # code is at -O0, as in the release build (tests/meson.build says which keep the build's level, and
  # why).
  # The benchmarks are no tests (scripts/demo.sh builds them). Nor is the Python package built here:
  # an ASan runtime cannot be loaded into Debian's uninstrumented python3 (and CI time is short).
  phase "configure + build (ASan+UBSan)" dpstream_build build-sanitize -Doptimization=1 -Ddebug=true \
    -Db_sanitize=address,undefined -Db_ndebug=false \
    -Dcpp_args="-g1 -fno-sanitize-address-use-after-scope -fno-sanitize-recover=all" \
    -Dbench=false -Dpython=disabled "${DPSTREAM_UNITY[@]}"
  phase "suite (ASan+UBSan)" run_suite build-sanitize
fi

echo "== wall time by phase"
printf '%s\n' "${phases[@]}"
printf '%-34s %6d s\n' "total" $((SECONDS - total_start))
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
