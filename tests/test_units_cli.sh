#!/usr/bin/env bash
# dpstream-replay and dpstream-pca with a privacy unit (--user-column, --max-rows-per-user,
# --min-separation) on a small generated CSV: the bound's counts, the unit-level relation in the
# summary and the JSON line, the noise k times the row level's, and every bad combination refused
# with a message naming the flag or the row (exit 2 before anything is read, 1 at a bad row, 2 at the memory limit).
#   usage: test_units_cli.sh PATH/TO/dpstream-replay PATH/TO/dpstream-pca
set -uo pipefail
replay="$1"
pca="$2"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
failures=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }

# 2000 rows × 6 from 100 users (u0..u99, ~20 rows each), two directions plus noise (awk: data).
awk 'BEGIN { srand(3); print "x0,x1,x2,user,x3,x4,x5";
       for (i = 0; i < 2000; i++) { a = rand() - 0.5; line = "";
         for (j = 0; j < 6; j++) { v = (j < 3 ? a : 0.1) + 0.05 * (rand() - 0.5); line = line (j ? "," : "") sprintf("%.5f", v);
                                   if (j == 2) line = line ",u" int(rand() * 100) }
         print line } }' > "$work/events.csv"

run() {
  local name="$1" tool="$2"; shift 2
  "$tool" "$@" > "$work/$name.out" 2> "$work/$name.err"
  status=$?
}
json() { tail -n 1 "$work/$1.out"; }
field() { json "$1" | grep -o "\"$2\":[^,}]*" | head -n 1 | cut -d: -f2-; }
common=(--input "$work/events.csv" --k 2 --seed 1)

run unit "$replay" "${common[@]}" --out "$work/o1" --block 8 --user-column user --max-rows-per-user 3
[ "$status" -eq 0 ] || fail "unit replay exited $status: $(cat "$work/unit.err")"
[ "$(field unit rows)" = 300 ] || fail "100 users x 3 rows should be kept, got rows = $(field unit rows)"
[ "$(field unit users)" = 100 ] || fail "users = $(field unit users)"
[ "$(field unit rows_dropped_by_bound)" = 1700 ] || fail "rows_dropped_by_bound = $(field unit rows_dropped_by_bound)"
[ "$(field unit privacy_unit)" = '"user"' ] || fail "privacy_unit = $(field unit privacy_unit)"
json unit | grep -q '"neighbours":"all rows of one user (at most 3 rows kept per user), each: ' || fail "JSON neighbours: $(json unit)"
json unit | grep -q '"not_private":\[[^]]*"users","rows_dropped_by_bound"' || fail "bound counts not labelled: $(json unit)"
grep -q "these counts are not private" "$work/unit.out" || fail "summary does not label the bound's counts"
# Calibrated for 3 rows: the draws' σ is 3 times that of the same stream at row level (same rows:
# the first 3 of each user, as a CSV of their own is not needed: μ and σ depend on the horizon only).
run row "$replay" "${common[@]}" --out "$work/o2" --block 8 --user-column user --max-rows-per-user 1
awk -v a="$(field unit node_sigma)" -v b="$(field row node_sigma)" 'BEGIN { exit !(a > 2.5 * b) }' ||
  fail "unit-level sigma $(field unit node_sigma) is not above 2.5 x the k = 1 sigma $(field row node_sigma) (horizons 38 vs 13)"

run sep "$replay" "${common[@]}" --out "$work/o3" --block 8 --user-column 3 --max-rows-per-user 3 --min-separation 4
[ "$status" -eq 0 ] || fail "separation run exited $status: $(cat "$work/sep.err")"
grep -q "dropped as too close" "$work/sep.out" || fail "no too-close count: $(cat "$work/sep.out")"

run gauss "$pca" "${common[@]}" --method gauss --user-column user --max-rows-per-user 3
[ "$status" -eq 0 ] || fail "unit pca exited $status: $(cat "$work/gauss.err")"
[ "$(field gauss rows)" = 300 ] || fail "pca rows = $(field gauss rows)"
json gauss | grep -q '"neighbours":"all rows of one user (at most 3 rows kept per user), each: ' || fail "pca JSON: $(json gauss)"

refused() {  # name, expected status, message pattern, tool, flags...
  local name="$1" want="$2" pattern="$3"; shift 3
  run "$name" "$@"
  [ "$status" -eq "$want" ] || fail "$name: exit $status, want $want: $(cat "$work/$name.err")"
  grep -q -- "$pattern" "$work/$name.err" || fail "$name: message lacks '$pattern': $(cat "$work/$name.err")"
}
refused no_column 2 "needs --user-column" "$replay" "${common[@]}" --out "$work/o4" --max-rows-per-user 3
refused no_bound 2 "needs --max-rows-per-user" "$replay" "${common[@]}" --out "$work/o4" --user-column user
refused sep_alone 2 "needs --max-rows-per-user" "$replay" "${common[@]}" --out "$work/o4" --min-separation 2
refused default_input 2 "default input has none" "$pca" --max-rows-per-user 3
refused streaming_oja 2 "implemented for --method gauss and power" "$pca" "${common[@]}" --method streaming-oja --user-column user --max-rows-per-user 3
run power "$pca" "${common[@]}" --method power --user-column user --max-rows-per-user 3
[ "$status" -eq 0 ] || fail "unit power exited $status: $(cat "$work/power.err")"
json power | grep -q '"neighbours":"all rows of one user (at most 3 rows kept per user), each: ' || fail "power JSON: $(json power)"
refused oja 2 "implemented for --learner fpl" "$replay" "${common[@]}" --out "$work/o4" --learner oja --user-column user --max-rows-per-user 3
refused no_such 2 "no column has that name" "$replay" "${common[@]}" --out "$work/o4" --user-column uid --max-rows-per-user 3
refused checkpoint 2 "not checkpointed" "$replay" "${common[@]}" --out "$work/o4" --user-column user --max-rows-per-user 3 --checkpoint "$work/ck" --checkpoint-every 2
# A row without a key: named with its line.
sed '40s/,u[0-9]*,/,,/' "$work/events.csv" > "$work/hole.csv"
refused empty_key 1 "line 40 (row 38).*empty unit key" "$replay" --input "$work/hole.csv" --k 2 --out "$work/o4" --user-column user --max-rows-per-user 3
# More users than the state budget (a quarter of --max-memory): a ResourceLimit naming the row (exit 2, --max-memory).
refused too_many 2 "row [0-9]* (line [0-9]*): its unit is distinct unit number.*(--max-memory)$" "$pca" "${common[@]}" --method gauss --user-column user --max-rows-per-user 3 --max-memory 2k

if [ "$failures" -ne 0 ]; then echo "$failures failure(s)" >&2; exit 1; fi
echo "units cli: all checks passed"
