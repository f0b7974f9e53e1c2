#!/usr/bin/env bash
# dpstream-replay --checkpoint / --resume (crash safety): a seeded run killed with SIGKILL
# mid-run and resumed from its last checkpoint prints exactly what the uninterrupted run prints —
# the final JSON (minus its wall-time field) and every line of regret.csv, i.e. every release's loss,
# so no released node's noise was drawn again. Also: the checkpoint is only ever a complete file
# (mode 0600, a damaged or truncated copy is refused), a resume with another setting is refused
# naming it, a changed input is refused, and a seeded --shuffle resumes as exactly.
#   usage: test_replay_resume.sh PATH/TO/dpstream-replay
set -uo pipefail
replay="$1"
work="$(mktemp -d)"
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill -9 "$pid" 2> /dev/null; done
  rm -rf "$work"
}
trap cleanup EXIT
failures=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }

# The default run without Fashion-MNIST: the generated spiked-covariance stream (20000 rows × 256),
# the same on every machine, its first 8192 rows (64 releases of 128): ~0.4 s a run in a release
# build, several seconds under ASan + UBSan, where the whole stream made this the longest test.
export DPSTREAM_FASHION_MNIST="$work/no-such-file"
common=(--seed 7 --limit 8192)

# run NAME ARGS...: runs the tool, keeps stdout/stderr in $work/NAME.{out,err}, sets $status.
run() {
  local name="$1"; shift
  ("$replay" "$@" > "$work/$name.out" 2> "$work/$name.err"; exit $?) 2> /dev/null  # bash's "Killed" notice
  status=$?
}
# The final JSON line without its wall-time field and the output paths (--out differs between runs).
summary() { tail -n 1 "$work/$1.out" | sed -E 's/,"seconds":[^,}]*//; s/,"(csv|svg)":[^,}]*//g'; }
# same NAME DIR REF REFDIR: NAME's JSON and DIR/regret.csv equal REF's and REFDIR/regret.csv, byte for byte.
same() {
  [ "$(summary "$1")" = "$(summary "$3")" ] ||
    fail "$1: the JSON differs from the uninterrupted run's:
  $(summary "$1")
  $(summary "$3")"
  cmp -s "$work/$2/regret.csv" "$work/$4/regret.csv" ||
    fail "$1: regret.csv differs from the uninterrupted run's: $(diff "$work/$2/regret.csv" "$work/$4/regret.csv" | head -n 4)"
}
checkpoints() {
  local n
  n=$(grep -c 'checkpoint at release' "$work/$1.err" 2> /dev/null)
  echo "${n:-0}"
}

# ---- the uninterrupted run ----
run ref "${common[@]}" --out "$work/ref"
[ "$status" -eq 0 ] || fail "uninterrupted run exited $status: $(cat "$work/ref.err")"
summary ref | grep -q '"rows":8192' || fail "uninterrupted run: $(summary ref)"

# ---- killed by its own SIGKILL (deterministic: just before block 47, 7 releases past the last
# checkpoint at release 40), then resumed ----
ck="$work/run.ckpt"
run killed "${common[@]}" --checkpoint "$ck" --checkpoint-every 10 --test-kill-at-block 47 --out "$work/killed"
[ "$status" -eq 137 ] || fail "--test-kill-at-block: exit status $status, want 137 (SIGKILL): $(cat "$work/killed.err")"
[ "$(checkpoints killed)" = 4 ] || fail "killed run: $(checkpoints killed) checkpoints written, want 4: $(cat "$work/killed.err")"
grep -q '^{' "$work/killed.out" && fail "killed run printed a JSON line"
[ -s "$ck" ] || fail "no checkpoint after the kill"
[ "$(stat -c %a "$ck")" = 600 ] || fail "checkpoint mode $(stat -c %a "$ck"), want 600 (it holds raw data)"
compgen -G "$ck.tmp*" > /dev/null && fail "a temporary file was left behind although no write was interrupted"
size=$(stat -c %s "$ck")
cp "$ck" "$work/saved.ckpt"

# A run without --resume does not overwrite the unfinished run's checkpoint.
run fresh "${common[@]}" --checkpoint "$ck" --checkpoint-every 10 --out "$work/fresh"
[ "$status" -eq 2 ] && grep -q 'exists.*--resume' "$work/fresh.err" ||
  fail "a fresh run over an existing checkpoint: status $status, $(cat "$work/fresh.err")"

# Damaged copies are refused (exit 2) with a clear error, before anything runs.
head -c $((size / 2)) "$ck" > "$work/truncated.ckpt"
run truncated "${common[@]}" --checkpoint "$work/truncated.ckpt" --resume --out "$work/truncated"
[ "$status" -eq 2 ] && grep -q 'truncated' "$work/truncated.err" ||
  fail "a truncated checkpoint: status $status, $(cat "$work/truncated.err")"
cp "$ck" "$work/flipped.ckpt"
printf '\x5a' | dd of="$work/flipped.ckpt" bs=1 seek=$((size - 4096)) conv=notrunc status=none
run flipped "${common[@]}" --checkpoint "$work/flipped.ckpt" --resume --out "$work/flipped"
[ "$status" -eq 2 ] && grep -qE 'CRC-32 mismatch|not a dpstream-replay checkpoint' "$work/flipped.err" ||
  fail "a damaged checkpoint: status $status, $(cat "$work/flipped.err")"
run missing "${common[@]}" --checkpoint "$work/none.ckpt" --resume --out "$work/missing"
[ "$status" -eq 2 ] && grep -q 'cannot open' "$work/missing.err" ||
  fail "a missing checkpoint: status $status, $(cat "$work/missing.err")"

# Other settings are refused, naming the setting.
run eps --seed 7 --limit 8192 --epsilon 0.5 --checkpoint "$ck" --resume --out "$work/eps"
[ "$status" -eq 2 ] && grep -q -- '--epsilon: the checkpoint was made with 1, this run has 0.5' "$work/eps.err" ||
  fail "resume with another --epsilon: status $status, $(cat "$work/eps.err")"
run seed --seed 8 --limit 8192 --checkpoint "$ck" --resume --out "$work/seed"
[ "$status" -eq 2 ] && grep -q -- '--seed: the checkpoint was made with 7' "$work/seed.err" ||
  fail "resume with another --seed: status $status, $(cat "$work/seed.err")"
run block "${common[@]}" --block 64 --checkpoint "$ck" --resume --out "$work/block"
[ "$status" -eq 2 ] && grep -q -- '--block' "$work/block.err" ||
  fail "resume with another --block: status $status, $(cat "$work/block.err")"
cmp -s "$ck" "$work/saved.ckpt" || fail "a refused run or resume changed the checkpoint"

# A crash in the middle of a write leaves a torn temporary file beside the checkpoint (PATH.tmp-XXXXXX,
# an unpredictable name: dpstream/base/atomic_file.hpp): it is never taken for one (refused if named),
# the checkpoint itself is intact, and the completed run leaves it alone: a run removes only what it
# created itself, never a file found by its name (this one is the test's, as a user's backup would be).
head -c $((size / 3)) "$ck" > "$ck.tmp-torn01"
run torn "${common[@]}" --checkpoint "$ck.tmp-torn01" --resume --out "$work/torn"
[ "$status" -eq 2 ] && grep -q 'truncated' "$work/torn.err" || fail "a torn temporary file: status $status, $(cat "$work/torn.err")"

run resumed "${common[@]}" --checkpoint "$ck" --checkpoint-every 10 --resume --out "$work/killed"
[ "$status" -eq 0 ] || fail "resume exited $status: $(cat "$work/resumed.err")"
grep -q 'resumed at release 40' "$work/resumed.out" || fail "resume did not start at release 40: $(grep checkpoints "$work/resumed.out")"
same resumed killed ref ref
[ -e "$ck" ] && fail "the checkpoint is still there after the run completed"
[ -e "$ck.tmp-torn01" ] || fail "the completed run removed a file it had not created ($ck.tmp-torn01)"

# ---- a link planted where the old writer put its temporary (PATH.tmp) is not followed: the file it
# points at is untouched, and the checkpoints are written beside it ----
echo "not yours" > "$work/victim"
ln -s "$work/victim" "$work/planted.ckpt.tmp"
run planted --seed 7 --checkpoint "$work/planted.ckpt" --checkpoint-every 20 --limit 5120 --out "$work/planted"
[ "$status" -eq 0 ] && [ "$(cat "$work/victim")" = "not yours" ] && [ -L "$work/planted.ckpt.tmp" ] &&
  [ "$(checkpoints planted)" -ge 1 ] || fail "planted link: status $status, victim '$(cat "$work/victim")', $(cat "$work/planted.err")"

# ---- killed from outside with kill -9, at whatever point it has reached after its second
# checkpoint (possibly in the middle of writing the third), then resumed ----
ck2="$work/outside.ckpt"
"$replay" "${common[@]}" --checkpoint "$ck2" --checkpoint-every 5 --out "$work/outside" \
  > "$work/outside.out" 2> "$work/outside.err" &
pid=$!
pids+=("$pid")
for _ in $(seq 1 600); do  # ≤ 60 s (an ASan build is several times slower)
  [ "$(checkpoints outside)" -ge 2 ] && break
  kill -0 "$pid" 2> /dev/null || break
  sleep 0.1
done
if kill -9 "$pid" 2> /dev/null; then
  wait "$pid" 2> /dev/null
  echo "external kill -9 after $(checkpoints outside) checkpoint(s)"
  [ -s "$ck2" ] || fail "external kill: no checkpoint: $(cat "$work/outside.err")"
  run outside-resumed "${common[@]}" --checkpoint "$ck2" --resume --out "$work/outside"
  [ "$status" -eq 0 ] || fail "resume after kill -9 exited $status: $(cat "$work/outside-resumed.err")"
  same outside-resumed outside ref ref
  compgen -G "$ck2.tmp*" > /dev/null && fail "the resumed run left a temporary file behind: $(ls "$ck2".tmp*)"
else
  wait "$pid"
  echo "note: the run finished before the external kill -9 (nothing to resume)" >&2
fi

# ---- a CSV input: a seeded --shuffle resumes exactly; a changed input is refused ----
awk 'BEGIN { srand(5); for (i = 0; i < 3000; i++) { line = ""; a = rand() - 0.5;
       for (j = 0; j < 12; j++) line = line (j ? "," : "") sprintf("%.6f", (j < 3 ? 3 * a : 0) + rand() - 0.5);
       print line } }' > "$work/rows.csv"
csv=(--input "$work/rows.csv" --k 3 --block 32 --seed 3)
run csv-ref "${csv[@]}" --shuffle 9 --out "$work/csv-ref"
[ "$status" -eq 0 ] || fail "CSV run exited $status: $(cat "$work/csv-ref.err")"
ck3="$work/csv.ckpt"
run csv-killed "${csv[@]}" --shuffle 9 --checkpoint "$ck3" --checkpoint-every 20 --test-kill-at-block 50 --out "$work/csv"
[ "$status" -eq 137 ] || fail "CSV --shuffle kill: status $status: $(cat "$work/csv-killed.err")"
run csv-resumed "${csv[@]}" --shuffle 9 --checkpoint "$ck3" --resume --out "$work/csv"
[ "$status" -eq 0 ] || fail "CSV --shuffle resume exited $status: $(cat "$work/csv-resumed.err")"
same csv-resumed csv csv-ref csv-ref

run csv-killed2 "${csv[@]}" --checkpoint "$ck3" --checkpoint-every 20 --test-kill-at-block 30 --out "$work/csv2"
[ "$status" -eq 137 ] || fail "CSV kill: status $status: $(cat "$work/csv-killed2.err")"
cp "$work/rows.csv" "$work/rows-as-replayed.csv"
sed -i '17s/^./9/' "$work/rows.csv"  # one value of a row the checkpointed run has already replayed
run csv-changed "${csv[@]}" --checkpoint "$ck3" --resume --out "$work/csv2"
[ "$status" -eq 2 ] && grep -q 'the input differs' "$work/csv-changed.err" ||
  fail "resume on a changed input: status $status, $(cat "$work/csv-changed.err")"
[ -s "$work/csv-changed.out" ] && fail "resume on a changed input: exit 2 but stdout has $(head -c 200 "$work/csv-changed.out")"
# A row changed AFTER the checkpoint (release 20), in a block the killed run published (26 of 21..30):
# the fingerprint of the rows before the checkpoint agrees; the release journal beside it refuses
# release 26, made with the same noise on other rows, before it is published (exit 1, no JSON).
cp "$work/rows-as-replayed.csv" "$work/rows.csv"
[ -s "$ck3.journal" ] || fail "no release journal beside the checkpoint"
[ "$(stat -c %s "$ck3.journal")" = $((40 + 30 * 40)) ] || fail "journal of $(stat -c %s "$ck3.journal") bytes, want 30 releases"
sed -i '801s/^./9/' "$work/rows.csv"  # row 800: release 26
run csv-after "${csv[@]}" --checkpoint "$ck3" --resume --out "$work/csv2"
[ "$status" -eq 1 ] && grep -q 'release 26 differs from the one published before the restore' "$work/csv-after.err" &&
  ! grep -q '^{' "$work/csv-after.out" ||
  fail "resume fed other rows after the checkpoint: status $status, $(cat "$work/csv-after.err")"
cp "$work/rows-as-replayed.csv" "$work/rows.csv"
run csv-same "${csv[@]}" --checkpoint "$ck3" --resume --out "$work/csv2"
[ "$status" -eq 0 ] || fail "resume on the rows replayed before: status $status, $(cat "$work/csv-same.err")"
[ -e "$ck3.journal" ] && fail "the release journal is still there after the run completed"
run fresh-journal "${csv[@]}" --checkpoint "$ck3" --checkpoint-every 20 --test-kill-at-block 10 --out "$work/csv3"
run fresh-over-journal "${csv[@]}" --checkpoint "$ck3" --checkpoint-every 20 --out "$work/csv3"
[ "$status" -eq 2 ] && grep -q 'journal.*exists' "$work/fresh-over-journal.err" ||
  fail "a fresh run over an unfinished run's journal: status $status, $(cat "$work/fresh-over-journal.err")"
rm -f "$ck3.journal"

# ---- --mechanism separable: the stationary estimate's running sums are in the checkpoint too ----
sep=(--seed 7 --limit 12800 --mechanism separable --noise-shape goe)  # 100 releases
run sep-ref "${sep[@]}" --out "$work/sep-ref"
[ "$status" -eq 0 ] || fail "separable run exited $status: $(cat "$work/sep-ref.err")"
run sep-killed "${sep[@]}" --checkpoint "$work/sep.ckpt" --checkpoint-every 25 --test-kill-at-block 80 --out "$work/sep"
[ "$status" -eq 137 ] || fail "separable kill: status $status: $(cat "$work/sep-killed.err")"
run sep-resumed "${sep[@]}" --checkpoint "$work/sep.ckpt" --resume --out "$work/sep"
[ "$status" -eq 0 ] || fail "separable resume exited $status: $(cat "$work/sep-resumed.err")"
same sep-resumed sep sep-ref sep-ref

# ---- --nonnegative: the reader's schedule and the PSD correction it reuses between full solves are in
# the checkpoint too (pca::DoublyNonnegativeReader). Nonnegative CSV rows (d = 12, 94 releases of 32, the last partial):
# checkpoints every 20 releases, killed at block 50, so the resume starts at release 40 with the
# correction of release 35 (the replay's α = 1/3: full solves at 1, 2, 3, 5, 7, 10, 14, 19, 26, 35, 47,
# 63, 85). ----
awk 'BEGIN { srand(11); for (i = 0; i < 3000; i++) { line = ""; a = rand();
       for (j = 0; j < 12; j++) line = line (j ? "," : "") sprintf("%.6f", (j < 4 ? 2 * a : 0) + rand());
       print line } }' > "$work/nonneg.csv"
nn=(--input "$work/nonneg.csv" --k 3 --block 32 --seed 5 --mechanism separable --noise-shape goe --nonnegative)
run nn-ref "${nn[@]}" --out "$work/nn-ref"
[ "$status" -eq 0 ] || fail "--nonnegative run exited $status: $(cat "$work/nn-ref.err")"
grep -q 'releases projected exactly' "$work/nn-ref.out" || fail "--nonnegative run: no reader line in the report: $(cat "$work/nn-ref.out")"
run nn-killed "${nn[@]}" --checkpoint "$work/nn.ckpt" --checkpoint-every 20 --test-kill-at-block 50 --out "$work/nn"
[ "$status" -eq 137 ] || fail "--nonnegative kill: status $status: $(cat "$work/nn-killed.err")"
run nn-resumed "${nn[@]}" --checkpoint "$work/nn.ckpt" --resume --out "$work/nn"
[ "$status" -eq 0 ] || fail "--nonnegative resume exited $status: $(cat "$work/nn-resumed.err")"
grep -q 'resumed at release 40' "$work/nn-resumed.out" || fail "--nonnegative resume did not start at release 40"
same nn-resumed nn nn-ref nn-ref
grep 'releases projected exactly' "$work/nn-resumed.out" | grep -q -- "$(grep -o '[0-9]* of [0-9]* releases' "$work/nn-ref.out")" ||
  fail "--nonnegative resume: full solves differ: $(grep 'projected exactly' "$work/nn-resumed.out" "$work/nn-ref.out")"

# ---- flags ----
run noflag "${common[@]}" --resume --out "$work/noflag"
[ "$status" -eq 2 ] && grep -q -- '--resume needs --checkpoint' "$work/noflag.err" ||
  fail "--resume without --checkpoint: status $status, $(cat "$work/noflag.err")"
# (The help is read from a file: `grep -q` on a pipe may close it early, and pipefail then fails.)
"$replay" --help > "$work/help.txt"
grep -q -- '--checkpoint-every' "$work/help.txt" || fail "--help does not document --checkpoint-every"
grep -q -- '--test-kill-at-block' "$work/help.txt" && fail "--help shows the hidden test flag"

[ "$failures" -eq 0 ] || { echo "$failures check(s) failed" >&2; exit 1; }
echo "replay resume: all checks passed"
