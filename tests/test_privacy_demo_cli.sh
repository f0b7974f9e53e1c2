#!/usr/bin/env bash
# dpstream-privacy-demo: the secure noise source by default (two runs draw different noise, the
# summary and the JSON line say so); --seed N reproducible and marked NOT secure; --secure with
# --seed keeps the seeded data and draws secure noise; the paper calibration refused at ε ≥ 1; the
# second release refused by the accountant; bad flags exit 2 with one line.
#   usage: test_privacy_demo_cli.sh PATH/TO/dpstream-privacy-demo
set -uo pipefail
demo="$1"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
failures=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }

run() {
  local name="$1"; shift
  "$demo" --rows 3000 "$@" > "$work/$name.out" 2> "$work/$name.err"
  status=$?
  [ "$status" -eq 0 ] || fail "$name exited $status: $(cat "$work/$name.err")"
}
json() { tail -n 1 "$work/$1.out"; }
table() { grep -E '^(paper|tight) ' "$work/$1.out"; }
stream() { grep -E '^(stream|non-private):' "$work/$1.out"; }

run secure1
run secure2
grep -q '^noise: secure' "$work/secure1.out" || fail "default run: no 'noise: secure' line: $(cat "$work/secure1.out")"
json secure1 | grep -q '"secure_noise":true' || fail "default run JSON: $(json secure1)"
json secure1 | grep -q '"neighbours":"one row added or removed"' &&
  json secure1 | grep -q '"not_private":\["rows_clipped","opt","releases.\*.e_norm",' ||
  fail "default run JSON: labels: $(json secure1)"
grep -q '^neighbours: one row added or removed; privacy unit: one row' "$work/secure1.out" &&
  grep -q '^NOT private (exact' "$work/secure1.out" || fail "default run: summary labels: $(cat "$work/secure1.out")"
[ "$(stream secure1)" = "$(stream secure2)" ] || fail "default runs: the (seeded) data differ"
[ "$(table secure1)" != "$(table secure2)" ] || fail "default runs drew the same noise: not the secure source"

run seeded1 --seed 42
run seeded2 --seed 42
grep -q '^noise: seeded (seed 42): reproducible, NOT secure' "$work/seeded1.out" || fail "--seed: no NOT secure line"
json seeded1 | grep -q '"secure_noise":false' || fail "--seed JSON: $(json seeded1)"
cmp -s "$work/seeded1.out" "$work/seeded2.out" || fail "--seed 42 twice: outputs differ"
[ "$(stream seeded1)" = "$(stream secure1)" ] || fail "--seed 42 and the default differ in their data"

run data_only --seed 42 --secure
grep -q '^noise: secure' "$work/data_only.out" || fail "--seed --secure: not secure noise"
[ "$(stream data_only)" = "$(stream seeded1)" ] || fail "--seed 42 --secure: other data than --seed 42"
[ "$(table data_only)" != "$(table seeded1)" ] || fail "--seed 42 --secure drew the seeded noise"

run eps2 --seed 3 --epsilon 2
[ "$(grep -c 'refused: the classical calibration needs epsilon < 1' "$work/eps2.out")" -eq 2 ] ||
  fail "--epsilon 2: the paper rows are not refused: $(cat "$work/eps2.out")"
json eps2 | grep -q '"refused":true' || fail "--epsilon 2 JSON: $(json eps2)"
for name in secure1 seeded1 eps2; do
  grep -q '^second release refused: privacy budget exhausted' "$work/$name.out" || fail "$name: second release not refused"
  json "$name" | grep -q '"second_release_refused":true' || fail "$name JSON: $(json "$name")"
done

bad_flag() {
  "$demo" "$@" > "$work/flag.out" 2> "$work/flag.err"
  local status=$?
  if [ "$status" -ne 2 ]; then fail "'$*' exited $status, want 2"; return; fi
  [ "$(wc -l < "$work/flag.err")" -eq 1 ] || fail "'$*': error is not one line: $(cat "$work/flag.err")"
  [ ! -s "$work/flag.out" ] || fail "'$*': printed to stdout"
}
bad_flag --epsilon 0
bad_flag --epsilon nan
bad_flag --delta 1
bad_flag --delta 0
bad_flag --dim 4 -k 5
bad_flag --dim 4 --rank 5
bad_flag --rows 0
bad_flag --seed -1
bad_flag --seed abc
bad_flag --secure=yes-please

if [ "$failures" -eq 0 ]; then echo "privacy-demo CLI: all checks passed"; fi
exit $((failures != 0))
