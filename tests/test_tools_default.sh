#!/usr/bin/env bash
# Every command-line tool's default run (no flags but an output folder) exits 0 and prints its
# summary. In the sanitizer build this is the tools' leak check: LeakSanitizer (on with ASan) makes a
# tool that leaks exit non-zero, and UBSan/ASan reports abort it (issue 8: "the CLI tools clean under
# valgrind or LeakSanitizer on their default runs").
# Arguments: dpstream-replay dpstream-pca dpstream-recommend dpstream-privacy-demo dpstream-embed-example
set -u
replay="$1"; pca="$2"; recommend="$3"; demo="$4"; embed="$5"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
export ASAN_OPTIONS="${ASAN_OPTIONS:-}${ASAN_OPTIONS:+:}detect_leaks=1"
failures=0

# run NAME EXPECTED_TEXT COMMAND...: exit 0, and EXPECTED_TEXT in its output.
run() {
  local name="$1" expected="$2"; shift 2
  "$@" > "$work/$name.out" 2> "$work/$name.err"
  local status=$?
  if [ "$status" -ne 0 ]; then
    echo "FAIL: $name exited $status"; tail -20 "$work/$name.err"; failures=$((failures + 1)); return
  fi
  if ! grep -q -- "$expected" "$work/$name.out" "$work/$name.err"; then
    echo "FAIL: $name printed no '$expected'"; tail -5 "$work/$name.out"; failures=$((failures + 1)); return
  fi
  echo "ok: $name"
}

run replay '"regret_over_opt"' "$replay" --out "$work/replay"
run pca '"captured_ratio"' "$pca"
run recommend '"rmse"' "$recommend"
run privacy-demo 'privacy budget exhausted' "$demo"
run embed-example 'regret/OPT' "$embed"

[ "$failures" -eq 0 ] || { echo "$failures default run(s) failed"; exit 1; }
