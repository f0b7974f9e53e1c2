#!/usr/bin/env bash
# libFuzzer targets for every parser (fuzz/fuzz_*.cpp; fuzz/README.md says what each covers).
#
#   scripts/fuzz.sh [SECONDS] [TARGET...]     default 600 s each, all targets
#   scripts/fuzz.sh 60 row_log accountant     targets by name, with or without the fuzz_ prefix
#
# Builds the library with clang, ASan + UBSan and fuzzer coverage (no libFuzzer main) in build-fuzz
# (configured once; only the library target is built), links each fuzz/fuzz_*.cpp against it, then
# runs each target for SECONDS on a scratch copy of its seed corpus fuzz/corpus/<target>/ (the
# committed seeds are never written). Prints one line per target, "TARGET: N runs, X s, E exec/s, no
# finding" or the reproducer file(s); exits non-zero on any finding. Logs and reproducers are in
# build-fuzz/fuzz-work/<target>/.
#
# Environment: FUZZ_KEEP_GOING=1 runs libFuzzer in fork mode and goes on after a crash, OOM or
# timeout (to see more than the first finding of a target); FUZZ_JOBS (default 1) forks in that
# mode. Run it under `nice -n 19` on a shared machine: every child inherits the niceness.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"

seconds="${1:-600}"
[ $# -gt 0 ] && shift
case "$seconds" in ''|*[!0-9]*) echo "usage: scripts/fuzz.sh [SECONDS] [TARGET...]" >&2; exit 2 ;; esac

root="$DPSTREAM_ROOT"
build="$root/build-fuzz"
work="$build/fuzz-work"

# clang, its libFuzzer / sanitizer runtimes (libclang-rt-dev) and llvm-symbolizer (llvm, for
# symbolized reports), through setup.sh's Debian installer together with the build's own packages.
DPSTREAM_PACKAGES+=(clang libclang-rt-dev llvm)
dpstream_install_packages
for tool in clang clang++ meson ninja pkg-config; do
  command -v "$tool" >/dev/null || { echo "fuzz.sh: $tool not found (apt-get install clang libclang-rt-dev)" >&2; exit 1; }
done

# ---- the library: clang, ASan + UBSan, coverage instrumentation --------------------------------------
# native=false: the targets are compiled without -march=native, and Eigen's alignment must agree.
# b_lundef=false: the sanitizer and coverage runtimes come with the fuzzer executables.
# FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION (the libFuzzer convention): checkpoints and ledgers keep
# their CRC-32 trailer but its value is not compared (dpstream/base/message_seal.hpp), so mutated
# inputs reach the parsers behind it instead of all stopping at the checksum.
fuzz_cpp_args="-fsanitize=fuzzer-no-link -DFUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION"
if [ ! -f "$build/build.ninja" ]; then
  CXX=clang++ CC=clang meson setup "$build" "$root" -Dbuildtype=debugoptimized \
    -Db_sanitize=address,undefined -Db_lundef=false -Dcpp_args="$fuzz_cpp_args" \
    -Dtests=false -Dnative=false -Dbench=false -Dpython=disabled
elif [ "$(cat "$build/.fuzz-cpp-args" 2>/dev/null)" != "$fuzz_cpp_args" ]; then
  meson configure "$build" -Dcpp_args="$fuzz_cpp_args"
fi
echo "$fuzz_cpp_args" > "$build/.fuzz-cpp-args"
ninja -C "$build" lib/libdpstream.so
lib="$build/lib/libdpstream.so"

# ---- the targets ---------------------------------------------------------------------------------------
all_targets=()
for src in "$root"/fuzz/fuzz_*.cpp; do all_targets+=("$(basename "$src" .cpp)"); done
targets=()
if [ $# -eq 0 ]; then
  targets=("${all_targets[@]}")
else
  for t in "$@"; do
    t="fuzz_${t#fuzz_}"
    [ -f "$root/fuzz/$t.cpp" ] || { echo "fuzz.sh: no target $t (have: ${all_targets[*]})" >&2; exit 2; }
    targets+=("$t")
  done
fi

max_len() {
  case "$1" in
    fuzz_idx_rows) echo 8192 ;;      # room for a gzipped file and its header
    fuzz_accountant) echo 2048 ;;
    *) echo 4096 ;;
  esac
}

read -r -a cflags <<<"$(pkg-config --cflags eigen3 protobuf)"
read -r -a libs <<<"$(pkg-config --libs protobuf zlib)"
mkdir -p "$build/fuzz"
for t in "${targets[@]}"; do
  exe="$build/fuzz/$t"
  stale=0
  [ -x "$exe" ] || stale=1
  for dep in "$root/fuzz/$t.cpp" "$root"/fuzz/*.hpp "$lib"; do [ "$dep" -nt "$exe" ] && stale=1; done
  if [ "$stale" -eq 1 ]; then
    echo "== compiling $t"
    clang++ -std=c++20 -O1 -g -fno-omit-frame-pointer -fsanitize=fuzzer,address,undefined \
      -DFUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION \
      -fno-sanitize-recover=undefined -I"$root/include" -I"$build/lib/proto" -I"$root/fuzz" "${cflags[@]}" \
      "$root/fuzz/$t.cpp" -o "$exe" -L"$build/lib" -ldpstream -Wl,-rpath,"$build/lib" "${libs[@]}"
  fi
done

# ---- runs ------------------------------------------------------------------------------------------------
# Every UBSan report is a finding; leaks are too (libFuzzer's -detect_leaks default).
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1"
export ASAN_OPTIONS="${ASAN_OPTIONS:-}${ASAN_OPTIONS:+:}abort_on_error=1:detect_stack_use_after_return=1"
keep_going=()
if [ "${FUZZ_KEEP_GOING:-0}" = 1 ]; then
  keep_going=(-fork="${FUZZ_JOBS:-1}" -ignore_crashes=1 -ignore_ooms=1 -ignore_timeouts=1)
fi

# The targets write each input to a file in a per-process dir under DPSTREAM_FUZZ_TMP; a process
# that crashes leaves its dir behind, so the whole run gets one dir, removed at the end.
shm=/dev/shm; [ -d "$shm" ] && [ -w "$shm" ] || shm="${TMPDIR:-/tmp}"
DPSTREAM_FUZZ_TMP="$(mktemp -d "$shm/dpstream-fuzz-run.XXXXXX")"
export DPSTREAM_FUZZ_TMP
trap 'rm -rf "$DPSTREAM_FUZZ_TMP"' EXIT

findings=0
summary=()
for t in "${targets[@]}"; do
  dir="$work/$t"
  rm -rf "$dir"
  mkdir -p "$dir/corpus" "$dir/artifacts"
  [ -d "$root/fuzz/corpus/$t" ] && cp "$root/fuzz/corpus/$t"/* "$dir/corpus/" 2>/dev/null || true
  log="$dir/log.txt"
  echo "== running $t for $seconds s (log: ${log#"$root"/})"
  set +e
  "$build/fuzz/$t" "$dir/corpus" -max_total_time="$seconds" -max_len="$(max_len "$t")" -timeout=10 \
    -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$dir/artifacts/" "${keep_going[@]}" >"$log" 2>&1
  status=$?
  set -e
  runs=$(awk -F': *' '/^stat::number_of_executed_units/ {n = $2} END {print n}' "$log")
  if [ -z "$runs" ]; then  # fork mode: the last status line "#N ..."
    runs=$(grep -Eo '^#[0-9]+' "$log" | tail -n 1 | tr -d '#' || true)
  fi
  rate=$(awk -F': *' '/^stat::average_exec_per_sec/ {n = $2} END {print n}' "$log")
  elapsed=$(grep -Eo 'Done [0-9]+ runs in [0-9]+ second' "$log" | grep -Eo 'in [0-9]+' | tr -dc '0-9' || true)
  elapsed=${elapsed:-$seconds}
  [ -z "$rate" ] && [ -n "$runs" ] && [ "$elapsed" -gt 0 ] && rate=$((runs / elapsed))
  mapfile -t artifacts < <(find "$dir/artifacts" -type f | sort)
  if [ ${#artifacts[@]} -eq 0 ] && [ "$status" -eq 0 ]; then
    line="$t: ${runs:-?} runs, $elapsed s, ${rate:-?} exec/s, no finding"
  else
    findings=$((findings + 1))
    if [ ${#artifacts[@]} -eq 0 ]; then
      line="$t: libFuzzer exited with status $status and wrote no reproducer (see ${log#"$root"/})"
    else
      kinds=$(grep -Eo 'ERROR: (AddressSanitizer|UndefinedBehaviorSanitizer|LeakSanitizer|libFuzzer): [a-z-]+|runtime error: .*|FUZZ PROPERTY VIOLATED: .*|terminate called .*' "$log" \
                | sort -u | head -n 5 | paste -sd ';' - || true)
      line="$t: FINDING after ${runs:-?} runs: ${artifacts[*]#"$root"/} [${kinds:-see log}]"
    fi
  fi
  echo "$line"
  summary+=("$line")
done

echo "== fuzz summary ($seconds s per target)"
printf '%s\n' "${summary[@]}"
[ "$findings" -eq 0 ]
