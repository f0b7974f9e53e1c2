#!/usr/bin/env bash
# Hostile input and flags, as classes across the tools (docs/bad-input.md, docs/reliability.md):
#  - file names that are not UTF-8 (bytes on Linux): the outputs stay readable (a row log's
#    provenance, a replay checkpoint resumes), messages and JSON lines stay valid UTF-8, escaped;
#  - bytes that drive a terminal (8-bit C1 controls, gzip) are never echoed raw;
#  - memory: a file without line breaks stops at the line bound --max-memory sets; allocations that
#    grow with a flag or the input are refused up front (exit 2) naming the size;
#  - refusals that are right: a fixed-horizon mechanism's memory is of the counted file;
#  - time: iteration flags no one can mean are capped, a long run is announced on stderr first;
#  - output that misleads: --scale out of range refused or counted, a BOM before ratings dropped.
#  - checks after noise: what the flags alone decide (a refresh's composed charge, a draw the sampler
#    cannot make) is refused before any noise (exit 2, named); a finite noise scale runs to the end.
#   usage: test_hostile_input.sh PCA RECOMMEND CONVERT PRIVACY_DEMO REPLAY
set -uo pipefail
pca="$1"; recommend="$2"; convert="$3"; demo="$4"; replay="$5"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
failures=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }
python=/usr/bin/python3
[ -x "$python" ] || python="$(command -v python3)"
# Valid UTF-8 without C0 (but \n, \t) or C1 controls; the last line (if asked) a strict JSON object.
clean_text='
import json, sys, unicodedata
data = open(sys.argv[1], "rb").read()
text = data.decode("utf-8")  # raises on bytes that are not UTF-8
bad = [c for c in text if (unicodedata.category(c) == "Cc" and c not in "\n\t")]
assert not bad, "control characters: %r" % bad[:5]
if len(sys.argv) > 2:
    def refuse(constant): raise ValueError("not JSON: " + constant)
    value = json.loads(text.strip().splitlines()[-1], parse_constant=refuse)
    assert isinstance(value, dict)'
clean() {  # clean NAME FILE [json]: FILE is printable UTF-8 (and ends in a JSON line)
  "$python" -c "$clean_text" "$2" ${3:+json} 2> "$work/clean.err" ||
    fail "$1: $(tail -n 1 "$work/clean.err"): $(head -c 300 "$2" | od -c | head -n 3)"
}

awk 'BEGIN { srand(3); for (i = 0; i < 1000; i++) { line = "";
       for (j = 0; j < 6; j++) line = line (j ? "," : "") sprintf("%.5f", rand() - 0.5); print line } }' > "$work/rows.csv"
awk 'BEGIN { srand(7); for (i = 1; i <= 60; i++) for (k = 0; k < 12; k++)
       printf "%d\t%d\t%d\t%d\n", i, 100 + (i * 7 + k * 3) % 40, 1 + int(rand() * 5), 880000000 + k }' > "$work/u.data"

n=0
# run NAME STATUS TOOL ARGS...: runs the tool (at most 60 s), checks its status; every stream printable
# UTF-8, the last stdout line JSON after a success, nothing on stdout after an exit 2.
run() {
  local name="$1" want="$2"; shift 2
  n=$((n + 1))
  out="$work/$n.out" err="$work/$n.err"
  timeout 60 "$@" > "$out" 2> "$err"
  status=$?
  [ "$status" -eq "$want" ] || fail "$name: exit $status, want $want: $(head -c 400 "$err")"
  clean "$name (stderr)" "$err"
  if [ "$want" -eq 0 ]; then clean "$name (stdout)" "$out" json
  elif [ -s "$out" ]; then clean "$name (stdout)" "$out"; fi
  if [ "$want" -eq 2 ] && [ -s "$out" ]; then fail "$name: exit 2 but stdout has output: $(head -c 300 "$out")"; fi
  return 0
}
says() {  # says TEXT: the last run's stderr contains TEXT
  grep -qF -- "$1" "$err" || fail "run $n: stderr does not say '$1': $(head -c 400 "$err")"
}

# ---- 3. file names that are not UTF-8 (Latin-1 é = 0xe9, 0xff) ----
latin="$work/ro"$'\xe9'"s"$'\xff'
mkdir -p "$latin"
cp "$work/rows.csv" "$latin/rows.csv"
run "convert from a Latin-1 path" 0 "$convert" --input "$latin/rows.csv" --output "$latin/rows.pb"
tail -n 1 "$out" | grep -qF '"input":"'"$work"'/ro\\xe9s\\xff/rows.csv"' ||
  fail "convert: the JSON does not name the Latin-1 path escaped: $(tail -n 1 "$out" | head -c 300)"
# The row log's provenance holds the path's bytes: the log reads back (a proto3 string would not parse).
run "replay of that row log" 0 "$replay" --input "$latin/rows.pb" --k 2 --block 16 --seed 1 --out "$latin/out"
run "pca of that row log" 0 "$pca" --input "$latin/rows.pb" --k 2 --seed 1
# A replay checkpoint from such an input (its --input and --out settings are bytes) resumes.
ck="$latin/ck"
n=$((n + 1))
timeout 60 "$replay" --input "$latin/rows.csv" --k 2 --block 16 --seed 1 --out "$latin/killed" --checkpoint "$ck" \
  --checkpoint-every 5 --test-kill-at-block 30 > "$work/$n.out" 2> "$work/$n.err"
[ "$?" -eq 137 ] || fail "replay killed at block 30: $(head -c 300 "$work/$n.err")"
[ -s "$ck" ] || fail "no checkpoint from the Latin-1 input"
run "resume from a Latin-1 input's checkpoint" 0 "$replay" --input "$latin/rows.csv" --k 2 --block 16 --seed 1 \
  --out "$latin/killed" --checkpoint "$ck" --checkpoint-every 5 --resume
[ ! -e "$ck" ] || fail "the finished resume left its checkpoint"
# A name with an 8-bit control byte (0x9b: CSI, a terminal's escape) in a message: escaped.
run "a missing input named with 0x9b" 2 "$pca" --input "$work/x"$'\x9b'"31m.csv"
says 'x\x9b31m.csv'

# ---- 8. bytes in messages: C1 controls and gzip echoed escaped ----
printf '0.1,0.2\n0.3,\x9b31mX\n' > "$work/c1.csv"
run "a field with 0x9b" 1 "$pca" --input "$work/c1.csv" --k 1 --seed 1
says '\x9b31mX'
# gzip bytes read as text: the CSV reader quotes the first field (bytes 0x80-0xff that are not UTF-8);
# a ratings field holding gzip's magic bytes. (A whole gzipped ratings file is refused by its field
# count, quoting nothing: it tested nothing.) -n: no name or time in the header, the same bytes each run.
gzip -n -c "$work/u.data" > "$work/u.gz"
run "gzip bytes as CSV" 1 "$pca" --input "$work/u.gz" --format csv --k 1 --seed 1
says 'field 1 (column 0): "'
{ cat "$work/u.data"; printf '7\t8\t\x1f\x8b\x08\n'; } > "$work/gzip-field.data"
run "gzip bytes in a ratings field" 1 "$recommend" --input "$work/gzip-field.data" --items-public --method als \
  --rank 2 --iters 1 --seed 1
says 'rating "\x1f\x8b\x08"'
# A UTF-8 byte-order mark before a ratings file without a header: dropped, the same ratings read.
{ printf '\xef\xbb\xbf'; cat "$work/u.data"; } > "$work/bom.data"
rec=(--method als --rank 2 --iters 2 --max-per-user 20 --epsilon 5 --seed 1 --items-public)
run "ratings" 0 "$recommend" --input "$work/u.data" "${rec[@]}"; plain="$(tail -n 1 "$out")"
run "ratings after a BOM" 0 "$recommend" --input "$work/bom.data" "${rec[@]}"; bom="$(tail -n 1 "$out")"
same_run='
import json, sys
a, b = (json.loads(x) for x in sys.argv[1:3])
for key in ("input", "seconds", "train_seconds"): a.pop(key, None); b.pop(key, None)
assert a == b, {k: (a.get(k), b.get(k)) for k in set(a) | set(b) if a.get(k) != b.get(k)}'
"$python" -c "$same_run" "$plain" "$bom" 2> "$work/same.err" || fail "a BOM changed the run: $(tail -n 1 "$work/same.err")"
# --scale that takes a value out of double range: refused naming the flag, or skipped and counted.
printf '1,2\n3,4\n0.5,0.25\n' > "$work/big.csv"
run "convert --scale 1e308" 1 "$convert" --input "$work/big.csv" --output "$work/big.pb" --scale 1e308
says "--scale"
[ ! -e "$work/big.pb" ] || fail "convert --scale 1e308 left an output"
run "convert --scale 1e308 --skip-malformed" 0 "$convert" --input "$work/big.csv" --output "$work/big.pb" --scale 1e308 \
  --skip-malformed
tail -n 1 "$out" | grep -q '"rows":1,.*"skipped":2' || fail "--scale 1e308 --skip-malformed: not 1 row and 2 skipped: $(tail -n 1 "$out")"

# ---- 4. memory: no line break, and allocations refused up front naming the size ----
for tool in pca replay convert recommend; do
  case $tool in
    pca) args=("$pca" --input /dev/zero --format csv) ;;
    replay) args=("$replay" --input /dev/zero --format csv --out "$work/zero") ;;
    convert) args=("$convert" --input /dev/zero --format csv --output "$work/zero.pb") ;;
    recommend) args=("$recommend" --input /dev/zero --format csv --items-public) ;;
  esac
  want=2; [ $tool = recommend ] && want=1  # the ratings reader streams: the run has started
  run "$tool /dev/zero" $want "${args[@]}" --max-memory 256M
  says "line 1 is longer than 16.00 MiB"
  says "memory limit of 256.00 MiB"
done
run "recommend --rank 100000" 2 "$recommend" --input "$work/u.data" --method als --iters 2 --epsilon 5 --seed 1 \
  --items-public --rank 100000 --max-memory 4G
says "--rank 100000"; says "over the memory limit of 4.00 GiB"
run "recommend --synthetic-users 1e9" 2 "$recommend" --synthetic seed004 --synthetic-users 1000000000 --method als \
  --mechanism none
says "--synthetic-users"
awk 'BEGIN { for (j = 0; j < 100000; j++) printf "%d\t%d\t4\t880000000\n", 1 + j % 50, j }' > "$work/wide.data"
run "recommend fw on 10^5 items" 2 "$recommend" --input "$work/wide.data" --method fw --nuclear-norm 10 --items-public \
  --seed 1 --max-memory 8G
says "--method fw"; says "100000 items"
run "privacy-demo --dim 100000" 2 "$demo" --seed 1 --rows 10 --dim 100000
says "--dim 100000"

# ---- 5. refusals that are right: sqrt's memory is of the counted file's releases ----
# 63 releases of 6 x 6 draws fit in 64 MiB; 10^6 (a stream of unknown length) need ~137 MiB.
run "replay sqrt on a 1,000-row CSV" 0 "$replay" --input "$work/rows.csv" --mechanism sqrt --k 2 --block 16 --seed 1 \
  --out "$work/sqrt" --max-memory 64M
# 128 rows of dimension 4096 in a row log of unknown length (--skip-malformed: no count): one release.
awk 'BEGIN { for (i = 0; i < 128; i++) { line = ""; for (j = 0; j < 4096; j++) line = line (j ? "," : "") (j == i ? 1 : 0); print line } }' \
  > "$work/wide.csv"
"$convert" --input "$work/wide.csv" --output "$work/wide.pb" --skip-malformed > /dev/null || fail "convert wide.csv"
run "replay sqrt on 128 rows at d = 4096" 2 "$replay" --input "$work/wide.pb" --mechanism sqrt --k 2 --block 128 \
  --seed 1 --out "$work/wide" --max-memory 1G
grep -Eq "needs about [0-9.]+ GiB" "$err" && ! grep -Eq "needs about [0-9]{3,}[0-9.]* GiB" "$err" ||
  fail "sqrt on 128 rows at d = 4096: not a few GiB: $(cat "$err")"

# ---- 6. time: caps on what no one can mean, named with the flag; long runs announced ----
run "pca oja --iterations 5000" 2 "$pca" --input "$work/rows.csv" --method oja --k 1 --seed 1 --iterations 5000
says "--iterations must be at most 1000"
run "recommend --iters 1000000" 2 "$recommend" --input "$work/u.data" --items-public --seed 1 --iters 1000000
says "--iters must be at most 1000"
run "recommend --irls-iters 1e8" 2 "$recommend" --input "$work/u.data" --items-public --seed 1 --method irls \
  --irls-iters 100000000
says "--irls-iters must be at most 1000"
# Announced on stderr before the work (the run is stopped after 5 s: its first line must be there).
n=$((n + 1))
timeout 5 "$demo" --seed 1 --rows 1 --dim 3000 > "$work/$n.out" 2> "$work/$n.err"
grep -q "estimated work: .* about " "$work/$n.err" || fail "privacy-demo --dim 3000: no estimate on stderr: $(head -c 300 "$work/$n.err")"
awk 'BEGIN { for (j = 0; j < 10000; j++) printf "%d\t%d\t4\t880000000\n", 1 + j % 50, j }' > "$work/fw.data"
n=$((n + 1))
timeout 5 "$recommend" --input "$work/fw.data" --method fw --nuclear-norm 10 --items-public --seed 1 \
  > "$work/$n.out" 2> "$work/$n.err"
grep -q "estimated work: --method fw on .* 10000 items" "$work/$n.err" ||
  fail "recommend fw on 10^4 items: no estimate on stderr: $(head -c 300 "$work/$n.err")"

# ---- 7. checks after noise: what the flags alone decide is refused before any noise (exit 2, named) ----
# Streaming ALS and Frank-Wolfe at ε = 1e100: the planned refreshes' charges, each as its method makes
# it (its own Δ and σ, ~1e-8 relative off the share's μ), compose past the budget in floating point;
# they stopped at the third refresh (exit 1, two refreshes' noise drawn and printed).
for method in als "fw --nuclear-norm 10"; do
  # shellcheck disable=SC2086
  run "recommend streaming $method --epsilon 1e100" 2 "$recommend" --input "$work/u.data" --items-public --rank 2 \
    --iters 2 --max-per-user 20 --seed 1 --method $method --refresh-every 20 --planned-refreshes 3 --epsilon 1e100
  says "--epsilon 1e+100"; says "--planned-refreshes 3"
  grep -q '^refresh ' "$out" && fail "streaming $method --epsilon 1e100: a refresh ran before the refusal"
done
# Laplace's exact sampler takes at most 2^62 grid steps: 200 coordinates at ε = 1e-17 need more (it
# stopped at the first release, exit 1), streaming or not.
for stream in "" "--refresh-every 20 --planned-refreshes 3"; do
  # shellcheck disable=SC2086
  run "recommend laplace --epsilon 1e-17 $stream" 2 "$recommend" --input "$work/u.data" --items-public --rank 2 \
    --iters 2 --max-per-user 20 --seed 1 --method als --mechanism laplace --epsilon 1e-17 $stream
  says "--mechanism laplace"; says "grid steps"
done
# Streaming Oja at a huge clip: σ ∝ L² ≈ 1e300 is finite, and the retraction of the noisy sum must stay
# finite too (Householder QR's squared norms overflowed: V(0,0) NaN after the noise, exit 1).
run "pca streaming-oja --clip-norm 1e150" 0 "$pca" --input "$work/rows.csv" --method streaming-oja --k 2 --seed 1 \
  --normalize clip --clip-norm 1e150
tail -n 1 "$out" | grep -q '"captured_ratio":[0-9]' ||
  fail "streaming-oja --clip-norm 1e150: no finite captured variance: $(tail -n 1 "$out" | head -c 300)"

if [ "$failures" -eq 0 ]; then echo "hostile input: all $n runs as expected"; fi
exit $((failures != 0))
