#!/usr/bin/env bash
# dpstream-pca end to end on a small generated CSV: every method prints the JSON line with the keys
# it documents, in order, with sane values (captured ratio in (0, 1], projector distance in
# [0, 1], ε spent ≤ ε); seeded runs repeat; bad flags exit 2 with one line.
#   usage: test_pca_cli.sh PATH/TO/dpstream-pca
set -uo pipefail
pca="$1"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
failures=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }

# 3000 rows × 12: two strong directions plus small noise (awk's generator: data, not privacy noise).
awk 'BEGIN { srand(5); for (i = 0; i < 3000; i++) { a = rand() - 0.5; b = rand() - 0.5; line = "";
       for (j = 0; j < 12; j++) { v = (j < 6 ? 2 * a : 0) + (j >= 6 && j < 9 ? b : 0) + 0.05 * (rand() - 0.5);
                                  line = line (j ? "," : "") sprintf("%.6f", v) }
       print line } }' > "$work/rows.csv"

run() {
  local name="$1"; shift
  "$pca" "$@" > "$work/$name.out" 2> "$work/$name.err"
  status=$?
}
json() { tail -n 1 "$work/$1.out"; }
field() { json "$1" | grep -o "\"$2\":[^,}]*" | head -n 1 | cut -d: -f2-; }

required="method k epsilon delta captured_ratio proj_dist epsilon_spent seconds"
for method in ${METHODS:-gauss power}; do
  k=2
  run "$method" --input "$work/rows.csv" --method "$method" --k "$k" --epsilon 2 --seed 3
  [ "$status" -eq 0 ] || { fail "$method exited $status: $(cat "$work/$method.err")"; continue; }
  keys="$(json "$method" | grep -o '"[a-z_]*":' | tr -d '":' | head -n 8 | tr '\n' ' ' | sed 's/ $//')"
  [ "$keys" = "$required" ] || fail "$method JSON keys: got '$keys', want '$required'"
  [ "$(field "$method" method)" = "\"$method\"" ] || fail "$method: method = $(field "$method" method)"
  awk -v c="$(field "$method" captured_ratio)" -v p="$(field "$method" proj_dist)" -v e="$(field "$method" epsilon_spent)" '
    BEGIN { exit !(c > 0 && c <= 1 + 1e-9 && p >= 0 && p <= 1 + 1e-9 && e > 0 && e <= 2 * (1 + 1e-6)) }' ||
    fail "$method values not sane: $(json "$method")"
  run "${method}_again" --input "$work/rows.csv" --method "$method" --k "$k" --epsilon 2 --seed 3
  [ "$(field "${method}_again" captured_ratio)" = "$(field "$method" captured_ratio)" ] || fail "$method: seeded runs differ"
done

# ---- the labels: the relation in words (set-based methods add/remove, streaming-oja zero-out) and
# the exact figures, in the summary and the JSON ----
for method in gauss streaming-oja; do
  run "label-$method" --input "$work/rows.csv" --method "$method" --k 2 --epsilon 2 --seed 3
  [ "$status" -eq 0 ] || { fail "$method exited $status: $(cat "$work/label-$method.err")"; continue; }
  want="one row added or removed"
  [ "$method" = streaming-oja ] && want="one row zeroed, its slot kept (a removal that shifts later rows is not covered)"
  json "label-$method" | WANT="$want" /usr/bin/python3 -c 'import json, os, sys
j = json.load(sys.stdin)
assert j["neighbours"] == os.environ["WANT"], j["neighbours"]
assert j["not_private"] == ["captured_ratio", "proj_dist", "seconds", "rows"], j["not_private"]
assert j["budget"] == "accounted against (epsilon=2, delta=1e-06)", j["budget"]' ||
    fail "$method: labels in the JSON line: $(json "label-$method")"
  grep -q "^neighbours: $want; privacy unit: one row" "$work/label-$method.out" &&
    grep -q '^NOT private (exact, from the data' "$work/label-$method.out" &&
    grep -q '^budget: accounted against (epsilon=2, delta=1e-06)$' "$work/label-$method.out" || fail "$method: summary labels: $(cat "$work/label-$method.out")"
done

# ---- streaming-oja says its reach before the pass (from n, d, ε only): 3000 rows of d = 12 at ε = 2 are
# well within one pass's reach (no warning); --limit 100 at ε = 0.5 is not (a warning naming gauss) ----
run reach --input "$work/rows.csv" --method streaming-oja --k 2 --epsilon 2 --seed 3
grep -q '^streaming-oja reach: one pass over 3000 rows (d = 12, k = 2) resolves eigengaps' "$work/reach.out" &&
  ! grep -q '^warning: at this n' "$work/reach.out" || fail "streaming-oja reach line: $(head -n 5 "$work/reach.out")"
run reach-small --input "$work/rows.csv" --method streaming-oja --k 2 --epsilon 0.5 --seed 3 --limit 100
grep -q '^warning: at this n, d and epsilon one pass reaches only .*use --method gauss' "$work/reach-small.out" &&
  [ "$(grep -n '^warning: at this n' "$work/reach-small.out" | cut -d: -f1)" -lt "$(grep -n '^method: streaming-oja' "$work/reach-small.out" | cut -d: -f1)" ] ||
  fail "streaming-oja: no warning before the run at 100 rows: $(head -n 6 "$work/reach-small.out")"

bad_flag() {
  run flag "$@"
  if [ "$status" -ne 2 ]; then fail "'$*' exited $status, want 2"; return; fi
  [ "$(wc -l < "$work/flag.err")" -eq 1 ] || fail "'$*': error is not one line: $(cat "$work/flag.err")"
}
bad_flag --input "$work/rows.csv" --k 0
bad_flag --input "$work/rows.csv" --k 13
bad_flag --input "$work/rows.csv" --epsilon 0
bad_flag --input "$work/rows.csv" --delta 1
bad_flag --input "$work/rows.csv" --method svd
bad_flag --input "$work/rows.csv" --method oja --k 2 --calibration paper --epsilon 0.5  # paper: one vector only
bad_flag --input "$work/rows.csv" --calibration paper --epsilon 2
bad_flag --input "$work/missing.csv"
bad_flag --input "$work/rows.csv" --clip-norm 2                # --normalize unit ignores it: refused
bad_flag --input "$work/rows.csv" --seed -1
bad_flag --input "$work/rows.csv" --max-memory 1k               # even its d x d matrices do not fit
bad_flag --format csv                                           # --format without --input
bad_flag --input "$work/rows.csv" --method power --iterations 100000000   # hours of passes: refused
grep -q -- "--iterations" "$work/flag.err" || fail "--iterations 1e8: the error does not name the flag: $(cat "$work/flag.err")"
bad_flag --input "$work/rows.csv" --method oja --iterations 0

if [ "$failures" -eq 0 ]; then echo "pca CLI: all checks passed"; fi
exit $((failures != 0))
