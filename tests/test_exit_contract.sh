#!/usr/bin/env bash
# The exit contract of every command-line tool (tools/common/cli.hpp): 0 success; 2 a bad command line
# or an input that cannot be opened (nothing read, no noise drawn: nothing on stdout); 1 the run
# started and then stopped (a file found malformed after its first rows, stdout that cannot be
# written). A failure is one line on stderr, "TOOL: error: what". After a good run the last line of
# stdout is one JSON object that a strict parser reads (Python's json.loads refusing NaN/Infinity).
#   usage: test_exit_contract.sh PCA RECOMMEND CONVERT PRIVACY_DEMO REPLAY
set -uo pipefail
pca="$1"; recommend="$2"; convert="$3"; demo="$4"; replay="$5"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
failures=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }
python=/usr/bin/python3
[ -x "$python" ] || python="$(command -v python3)"
strict_json='
import json, sys
def refuse(constant): raise ValueError("not JSON: " + constant)
value = json.loads(sys.stdin.read(), parse_constant=refuse)
assert isinstance(value, dict), "not an object"'

# 200 rows × 6 (rows.csv), and the same with line 50 broken (bad.csv); ratings alike (u.data, bad.data).
awk 'BEGIN { srand(3); for (i = 0; i < 200; i++) { line = "";
       for (j = 0; j < 6; j++) line = line (j ? "," : "") sprintf("%.5f", rand() - 0.5); print line } }' > "$work/rows.csv"
awk 'NR == 50 { print "0.1,0.2,abc,0.4,0.5,0.6"; next } { print }' "$work/rows.csv" > "$work/bad.csv"
awk 'BEGIN { srand(7); for (i = 1; i <= 60; i++) for (k = 0; k < 12; k++)
       printf "%d\t%d\t%d\t%d\n", i, 100 + (i * 7 + k * 3) % 40, 1 + int(rand() * 5), 880000000 + k }' > "$work/u.data"
awk 'NR == 50 { print "7\t101\tabc\t880000000"; next } { print }' "$work/u.data" > "$work/bad.data"

n=0
# expect NAME STATUS TOOL ARGS...: runs the tool, checks its status and, per status, its output.
expect() {
  local name="$1" want="$2"; shift 2
  n=$((n + 1))
  local out="$work/$n.out" err="$work/$n.err"
  "$@" > "$out" 2> "$err"
  local status=$?
  if [ "$status" -ne "$want" ]; then
    fail "$name: exit $status, want $want: $(head -c 400 "$err")"; return
  fi
  if [ "$want" -eq 0 ]; then
    tail -n 1 "$out" | "$python" -c "$strict_json" 2> "$work/json.err" ||
      fail "$name: the last stdout line is not strict JSON: $(tail -n 1 "$out" | head -c 300) ($(tail -n 1 "$work/json.err"))"
    return
  fi
  [ "$(wc -l < "$err")" -eq 1 ] || fail "$name: stderr is not one line: $(head -c 400 "$err")"
  grep -q "^dpstream-[a-z-]*: error: " "$err" || fail "$name: stderr is not 'TOOL: error: what': $(cat "$err")"
  if [ "$want" -eq 2 ] && [ -s "$out" ]; then fail "$name: exit 2 but stdout has output: $(head -c 300 "$out")"; fi
  return 0
}
# full NAME TOOL ARGS...: the run writes to a full device (stdout cannot be written): exit 1.
full() {
  local name="$1"; shift
  [ -w /dev/full ] || return 0
  "$@" > /dev/full 2> "$work/full.err"
  local status=$?
  [ "$status" -eq 1 ] || fail "$name > /dev/full: exit $status, want 1: $(head -c 300 "$work/full.err")"
}

# ---- dpstream-pca ----
expect "pca good" 0 "$pca" --input "$work/rows.csv" --k 2 --seed 1
expect "pca bad flag" 2 "$pca" --input "$work/rows.csv" --no-such-flag
expect "pca bad value" 2 "$pca" --input "$work/rows.csv" --epsilon -1
expect "pca missing input" 2 "$pca" --input "$work/missing.csv"
expect "pca malformed line 50" 1 "$pca" --input "$work/bad.csv" --k 2 --seed 1
grep -q "line 50" "$work/$n.err" || fail "pca malformed: the error does not name line 50: $(cat "$work/$n.err")"
full "pca" "$pca" --input "$work/rows.csv" --k 2 --seed 1
# All-zero rows: no variance to capture, the ratio is 0/0; JSON null, never a bare NaN.
yes "0,0,0,0" | head -n 100 > "$work/zero.csv"
expect "pca all-zero rows" 0 "$pca" --input "$work/zero.csv" --k 1 --seed 1

# ---- dpstream-recommend ----
model=(--method als --rank 2 --iters 2 --max-per-user 20 --epsilon 5 --seed 1 --items-public)
rec=(--input "$work/u.data" "${model[@]}")
expect "recommend good" 0 "$recommend" "${rec[@]}"
expect "recommend bad flag" 2 "$recommend" "${rec[@]}" --no-such-flag
expect "recommend bad value" 2 "$recommend" "${rec[@]}" --rank 0
expect "recommend missing input" 2 "$recommend" --input "$work/missing.data" --items-public
# A private run on a file needs a public item catalogue (--catalogue FILE or --items-public).
expect "recommend without a catalogue" 2 "$recommend" --input "$work/u.data" --epsilon 5
expect "recommend missing catalogue" 2 "$recommend" "${rec[@]/--items-public/--catalogue=$work/missing.txt}"
# Refused before training (nothing printed, no noise drawn), not after it.
expect "recommend --recommend abc" 2 "$recommend" "${rec[@]}" --recommend abc
expect "recommend --recommend unknown user" 2 "$recommend" "${rec[@]}" --recommend 7,9999
expect "recommend --top 0" 2 "$recommend" "${rec[@]}" --recommend 7 --top 0
expect "recommend too few planned refreshes" 2 "$recommend" "${rec[@]}" --refresh-every 10 --planned-refreshes 2
expect "recommend malformed line 50" 1 "$recommend" --input "$work/bad.data" "${model[@]}"
grep -q "bad.data:50" "$work/$n.err" || fail "recommend malformed: the error does not name line 50: $(cat "$work/$n.err")"
full "recommend" "$recommend" "${rec[@]}"

# ---- dpstream-convert ----
expect "convert good" 0 "$convert" --input "$work/rows.csv" --output "$work/rows.pb"
expect "convert bad flag" 2 "$convert" --input "$work/rows.csv" --output "$work/x.pb" --no-such-flag
expect "convert bad value" 2 "$convert" --input "$work/rows.csv" --output "$work/x.pb" --scale 0
expect "convert missing input" 2 "$convert" --input "$work/missing.csv" --output "$work/x.pb"
expect "convert malformed line 50" 1 "$convert" --input "$work/bad.csv" --output "$work/bad.pb"
grep -q "line 50" "$work/$n.err" || fail "convert malformed: the error does not name line 50: $(cat "$work/$n.err")"
[ ! -e "$work/bad.pb" ] || fail "convert malformed: a partial output was left"
full "convert" "$convert" --input "$work/rows.csv" --output "$work/full.pb"

# ---- dpstream-privacy-demo (no input file: its data are generated) ----
expect "privacy-demo good" 0 "$demo" --seed 1 --rows 2000
expect "privacy-demo bad flag" 2 "$demo" --no-such-flag
expect "privacy-demo bad value" 2 "$demo" --delta 1
expect "privacy-demo bad value (-k > --dim)" 2 "$demo" --dim 5 -k 6
full "privacy-demo" "$demo" --seed 1 --rows 2000

# ---- dpstream-replay ----
expect "replay good" 0 "$replay" --input "$work/rows.csv" --k 2 --block 16 --seed 1 --out "$work/replay"
expect "replay bad flag" 2 "$replay" --input "$work/rows.csv" --out "$work/replay" --no-such-flag
expect "replay missing input" 2 "$replay" --input "$work/missing.csv" --out "$work/replay"
expect "replay malformed line 50" 1 "$replay" --input "$work/bad.csv" --k 2 --block 16 --seed 1 --out "$work/replay"
grep -q "line 50" "$work/$n.err" || fail "replay malformed: the error does not name line 50: $(cat "$work/$n.err")"

# ---- checks made before any noise is drawn: exit 2, naming the flag, nothing on stdout ----
# Flag values whose calibration (σ, μ) is not finite, or that overflow what the noise is added to,
# are refused by the tool's settings check or its probe of the mechanism, never at the release.
named() {  # named FLAG: the last run's error names FLAG
  grep -q -- "$1" "$work/$n.err" || fail "run $n: the error does not name $1: $(cat "$work/$n.err")"
}
expect "pca --epsilon 1e300" 2 "$pca" --input "$work/rows.csv" --k 2 --seed 1 --epsilon 1e300; named --epsilon
# The accountant in floating point: the spent ε of a release at ε = 1e200 overflows; the paper
# calibration's ρ at ε = 1e-300 underflows to 0 (both found at the charge, after the rows, until now).
expect "pca --epsilon 1e200" 2 "$pca" --input "$work/rows.csv" --k 2 --seed 1 --epsilon 1e200; named --epsilon
expect "pca paper --epsilon 1e-300" 2 "$pca" --input "$work/rows.csv" --k 2 --seed 1 --method rr \
  --calibration paper --epsilon 1e-300; named --calibration
expect "pca --clip-norm 1e300" 2 "$pca" --input "$work/rows.csv" --k 2 --seed 1 --method power --normalize clip \
  --clip-norm 1e300; named --clip-norm
expect "pca --learning-rate 1e300" 2 "$pca" --input "$work/rows.csv" --k 2 --seed 1 --method streaming-oja \
  --learning-rate 1e300; named --learning-rate
expect "pca pfp k + 2 > d" 2 "$pca" --input "$work/rows.csv" --k 5 --seed 1 --method pfp; named --k
expect "pca pfp --limit < k + 2" 2 "$pca" --input "$work/rows.csv" --k 2 --seed 1 --method pfp --limit 3; named --limit
rc2=(--input "$work/u.data" --rank 2 --iters 2 --max-per-user 20 --seed 1 --items-public)
# dpam's μ for ε = 1e100 does not meet the target in floating point; als's σ underflows at 1e300.
for method_epsilon in dpam:1e100 als:1e300; do
  method=${method_epsilon%:*} epsilon=${method_epsilon#*:}
  expect "recommend $method --epsilon $epsilon" 2 "$recommend" "${rc2[@]}" --method $method --epsilon $epsilon
  named --epsilon
  expect "recommend $method --factor-bound 1e300" 2 "$recommend" "${rc2[@]}" --method $method --factor-bound 1e300
  named --factor-bound
  expect "recommend $method --center 1e300" 2 "$recommend" "${rc2[@]}" --method $method --center 1e300; named --center
done
# The run's charge (ρ) and a faithful run's composed ε, computed after the run until now.
expect "recommend laplace --epsilon 1e300" 2 "$recommend" "${rc2[@]}" --method als --mechanism laplace --epsilon 1e300
named --epsilon
expect "recommend faithful --noise-variance 1e-320" 2 "$recommend" "${rc2[@]}" --method irls --mode faithful \
  --noise-variance 1e-320; named --noise-variance
# Streaming: the planned refreshes' charges compose past ε = 1e-20 in floating point (found at the
# second refresh, after the first one's noise, until now).
expect "recommend streaming --epsilon 1e-20" 2 "$recommend" "${rc2[@]}" --method als --refresh-every 20 \
  --planned-refreshes 3 --epsilon 1e-20; named --planned-refreshes
expect "recommend --online --epsilon 1e-300" 2 "$recommend" "${rc2[@]}" --method dpam --online --epsilon 1e-300
named --epsilon
expect "privacy-demo --epsilon 1e300" 2 "$demo" --seed 1 --rows 2000 --epsilon 1e300; named --epsilon
rp=(--input "$work/rows.csv" --k 2 --block 16 --seed 1 --out "$work/replay")
expect "replay --epsilon 1e300" 2 "$replay" "${rp[@]}" --epsilon 1e300; named --epsilon
expect "replay oja: its σ vanishes at the smallest clip" 2 "$replay" "${rp[@]}" --learner oja --normalize clip \
  --clip-norm 1e-150 --epsilon 1e150; named --clip-norm
expect "replay gauss --epsilon 1e200" 2 "$replay" "${rp[@]}" --learner gauss --epsilon 1e200; named --epsilon
expect "privacy-demo --epsilon 1e200" 2 "$demo" --seed 1 --rows 2000 --epsilon 1e200; named --epsilon
expect "replay --clip-norm 1e300" 2 "$replay" "${rp[@]}" --normalize clip --clip-norm 1e300; named --clip-norm
# --checkpoint: its folder and the file itself checked before the first row, not at the first checkpoint.
expect "replay --checkpoint in a missing folder" 2 "$replay" "${rp[@]}" --checkpoint "$work/missing/ck" \
  --checkpoint-every 1; named --checkpoint
mkdir -p "$work/ck-folder"
expect "replay --resume on a folder" 2 "$replay" "${rp[@]}" --checkpoint "$work/ck-folder" --resume; named --checkpoint
expect "replay --checkpoint a folder" 2 "$replay" "${rp[@]}" --checkpoint "$work/ck-folder" --checkpoint-every 1
named --checkpoint
if [ "$(id -u)" -ne 0 ]; then  # root writes into a 0555 folder anyway
  mkdir -p "$work/read-only"; chmod 0555 "$work/read-only"
  expect "replay --checkpoint in a read-only folder" 2 "$replay" "${rp[@]}" --checkpoint "$work/read-only/ck" \
    --checkpoint-every 1; named --checkpoint
fi

# ---- memory bombs: 3 rows of 20,000 columns need d x d matrices of 3.2 GB each ----
# Refused (exit 2, nothing drawn) before any of it is allocated, naming the dimension and the limit.
awk 'BEGIN { for (i = 0; i < 3; i++) { line = ""; for (j = 0; j < 20000; j++) line = line (j ? "," : "") (i == j % 3 ? "0.01" : "0"); print line } }' \
  > "$work/wide.csv"
for tool in pca replay; do
  args=("$pca"); [ "$tool" = replay ] && args=("$replay" --out "$work/wide-replay")
  expect "$tool 20000 columns" 2 "${args[@]}" --input "$work/wide.csv" --k 2 --seed 1 --max-memory 2G
  grep -q "20000" "$work/$n.err" && grep -q "memory limit of 2.00 GiB" "$work/$n.err" ||
    fail "$tool 20000 columns: the error does not name the dimension and the limit: $(cat "$work/$n.err")"
done

if [ "$failures" -eq 0 ]; then echo "exit contract: all $n runs as expected"; fi
exit $((failures != 0))
