#!/usr/bin/env bash
# One command-line tool's default run (no flags but an output folder) exits 0 and prints its
# summary. In the sanitizer build this is the tool's leak check: LeakSanitizer (on with ASan) makes a
# tool that leaks exit non-zero, and UBSan/ASan reports abort it ("the CLI tools clean under
# valgrind or LeakSanitizer on their default runs"). One meson test per tool, so that the long ones
# (replay and pca on Fashion-MNIST, minutes under ASan) run beside the others.
# Arguments: NAME TOOL, NAME one of replay, pca, recommend, privacy-demo, embed-example,
# two-estimators-example.
set -u
name="$1"; tool="$2"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
export ASAN_OPTIONS="${ASAN_OPTIONS:-}${ASAN_OPTIONS:+:}detect_leaks=1"

case "$name" in
  replay) expected='"regret_over_opt"'; args=(--out "$work/replay") ;;
  pca) expected='"captured_ratio"'; args=() ;;
  recommend) expected='"rmse"'; args=() ;;
  privacy-demo) expected='privacy budget exhausted'; args=() ;;
  embed-example) expected='regret/OPT'; args=() ;;
  two-estimators-example) expected='(within)'; args=() ;;
  *) echo "unknown tool name: $name" >&2; exit 2 ;;
esac
# Under ASan + UBSan the replay and pca defaults read the first 7,680 of Fashion-MNIST's 60,000 rows
# (every code path of the full run, 60 releases, the leak check unchanged): the full replay took
# 106 s there, 15,360 rows 36 s, still the longest test of the suite (clean clone, CI's 2 cores). The
# release build runs the real default.
if [ -n "${DPSTREAM_SANITIZED_BUILD:-}" ] && { [ "$name" = replay ] || [ "$name" = pca ]; }; then
  args+=(--limit 7680)
fi

# Exit 0, and the expected text in its output.
"$tool" "${args[@]}" > "$work/out" 2> "$work/err"
status=$?
if [ "$status" -ne 0 ]; then
  echo "FAIL: $name exited $status"; tail -20 "$work/err"; exit 1
fi
if ! grep -q -- "$expected" "$work/out" "$work/err"; then
  echo "FAIL: $name printed no '$expected'"; tail -5 "$work/out"; exit 1
fi
echo "ok: $name"
