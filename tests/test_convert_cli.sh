#!/usr/bin/env bash
# dpstream-convert end to end: CSV → row log → CSV keeps every value; the output is created with mode
# 0600 and only once complete (written beside it under a temporary name, renamed into place): a failed
# run leaves no output and no temporary; an existing --output is refused (exit 2) unless --force, and
# with --force a failed run leaves it as it was; bad flags exit 2 with one line.
#   usage: test_convert_cli.sh PATH/TO/dpstream-convert
set -uo pipefail
convert="$1"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
failures=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }

awk 'BEGIN { srand(9); for (i = 0; i < 300; i++) { line = "";
       for (j = 0; j < 5; j++) line = line (j ? "," : "") sprintf("%.6g", (rand() - 0.5) * 10 ^ int(rand() * 6 - 3)); print line } }' \
  > "$work/rows.csv"
awk 'NR == 50 { print "1,2,x3,4,5"; next } { print }' "$work/rows.csv" > "$work/bad.csv"

run() {
  local name="$1"; shift
  "$convert" "$@" > "$work/$name.out" 2> "$work/$name.err"
  status=$?
}
no_temporaries() { ! ls "$work" | grep -q '\.tmp-' || fail "$1: a temporary was left: $(ls "$work")"; }
field() { tail -n 1 "$work/$1.out" | grep -o "\"$2\":[^,}]*" | head -n 1 | cut -d: -f2-; }

# ---- round trip: CSV → pb → CSV equals CSV → CSV (both written from the same values) ----
run to_pb --input "$work/rows.csv" --output "$work/rows.pb"
[ "$status" -eq 0 ] || fail "csv -> pb exited $status: $(cat "$work/to_pb.err")"
[ "$(field to_pb rows)" = 300 ] && [ "$(field to_pb dimension)" = 5 ] || fail "csv -> pb JSON: $(tail -n 1 "$work/to_pb.out")"
[ "$(stat -c %a "$work/rows.pb")" = 600 ] || fail "the row log has mode $(stat -c %a "$work/rows.pb"), want 600"
run back --input "$work/rows.pb" --output "$work/back.csv"
[ "$status" -eq 0 ] || fail "pb -> csv exited $status: $(cat "$work/back.err")"
run direct --input "$work/rows.csv" --output "$work/direct.csv"
cmp -s "$work/back.csv" "$work/direct.csv" || fail "csv -> pb -> csv differs from csv -> csv"
run limited --input "$work/rows.csv" --output "$work/first.pb" --limit 10 --sparse --scale 0.5
[ "$status" -eq 0 ] && [ "$(field limited rows)" = 10 ] || fail "--limit 10 --sparse --scale 0.5: status $status, $(tail -n 1 "$work/limited.out")"
no_temporaries "good runs"

# ---- an existing output: refused without --force, untouched ----
echo "precious" > "$work/existing.pb"
run exists --input "$work/rows.csv" --output "$work/existing.pb"
[ "$status" -eq 2 ] && grep -q -- "--force" "$work/exists.err" || fail "existing output: status $status, $(cat "$work/exists.err")"
[ "$(cat "$work/existing.pb")" = precious ] || fail "existing output changed without --force"
# --force with a run that fails: the file is as it was.
run force_bad --input "$work/bad.csv" --output "$work/existing.pb" --force
[ "$status" -eq 1 ] && grep -q "line 50" "$work/force_bad.err" || fail "--force, malformed input: status $status, $(cat "$work/force_bad.err")"
[ "$(cat "$work/existing.pb")" = precious ] || fail "a failed --force run damaged the existing output"
# --force with a good run: replaced by the complete conversion.
run force_good --input "$work/rows.csv" --output "$work/existing.pb" --force
[ "$status" -eq 0 ] && cmp -s "$work/existing.pb" "$work/rows.pb" || fail "--force, good input: status $status, output differs"
no_temporaries "--force runs"

# ---- a failed run leaves nothing ----
run bad --input "$work/bad.csv" --output "$work/bad.pb"
[ "$status" -eq 1 ] || fail "malformed input: status $status, want 1"
[ ! -e "$work/bad.pb" ] || fail "malformed input: a partial output was left"
run skip --input "$work/bad.csv" --output "$work/skip.pb" --skip-malformed
[ "$status" -eq 0 ] && [ "$(field skip skipped)" = 1 ] && [ "$(field skip rows)" = 299 ] ||
  fail "--skip-malformed: status $status, $(tail -n 1 "$work/skip.out")"
no_temporaries "failed runs"

bad_flag() {
  run flag "$@"
  if [ "$status" -ne 2 ]; then fail "'$*' exited $status, want 2"; return; fi
  [ "$(wc -l < "$work/flag.err")" -eq 1 ] || fail "'$*': error is not one line: $(cat "$work/flag.err")"
  [ ! -s "$work/flag.out" ] || fail "'$*': printed to stdout"
}
bad_flag --input "$work/rows.csv"
bad_flag --input "$work/rows.csv" --output "$work/x.pb" --scale 0
bad_flag --input "$work/rows.csv" --output "$work/x.csv" --sparse
bad_flag --input "$work/rows.csv" --output "$work/x.idx"
bad_flag --input "$work/rows.csv" --output "$work/x.pb" --to idx
bad_flag --input "$work/rows.csv" --output "$work/rows.csv" --force
bad_flag --input "$work/rows.csv" --output "$work/no/such/dir/x.pb"
bad_flag --input "$work/rows.csv" --output "$work"
bad_flag --input "$work/missing.csv" --output "$work/x.pb"
[ ! -e "$work/x.pb" ] && [ ! -e "$work/x.csv" ] || fail "a refused run created its output"
no_temporaries "refused runs"

if [ "$failures" -eq 0 ]; then echo "convert CLI: all checks passed"; fi
exit $((failures != 0))
