#!/usr/bin/env bash
# The paths of one run (tools/common/output_paths.hpp): two that name the same file (a checkpoint
# that is also an output, an input that is also an output, by another name or through a link) are
# refused with exit 2 naming both flags, before any work, and the file is untouched; an output path
# holding a FIFO or a symlink (a device or socket alike) is refused with exit 2 naming it, never
# replaced nor followed, even with --force. Also: a user's file that looks like a temporary of the
# checkpoint survives a completed run (only the run's own temporaries are removed, and those a killed
# run noted in the checkpoint's lock file); SIGTERM and SIGINT remove the temporaries; a second run on
# a locked checkpoint is refused by name; regret.csv and regret.svg are replaced together or not at all.
#   usage: test_run_paths.sh dpstream-replay dpstream-convert dpstream-recommend
set -uo pipefail
replay="$1" convert="$2" recommend="$3"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
failures=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }
export DPSTREAM_FASHION_MNIST="$work/no-such-file"  # replay's generated stream, the same everywhere

run() {
  local name="$1" tool="$2"; shift 2
  "$tool" "$@" > "$work/$name.out" 2> "$work/$name.err"
  status=$?
}
# refused NAME WHAT...: exit 2, stderr names each WHAT, nothing on stdout.
refused() {
  local name="$1"; shift
  [ "$status" -eq 2 ] || { fail "$name: exit $status, want 2: $(cat "$work/$name.err")"; return; }
  for what in "$@"; do grep -qF -- "$what" "$work/$name.err" || fail "$name: the message does not name $what: $(cat "$work/$name.err")"; done
  [ -s "$work/$name.out" ] && fail "$name: printed on stdout: $(cat "$work/$name.out")"
}

# ---- replay: the checkpoint is one of the outputs, directly, through a link, or as its journal ----
mkdir -p "$work/o"
echo "earlier report" > "$work/o/regret.csv"
replay_args=(--seed 7 --limit 1024 --checkpoint-every 2)
run ck_out "$replay" "${replay_args[@]}" --checkpoint "$work/o/regret.csv" --out "$work/o"
refused ck_out --checkpoint "--out's regret.csv"
[ "$(cat "$work/o/regret.csv")" = "earlier report" ] || fail "ck_out: regret.csv was changed or removed"
run ck_dotted "$replay" "${replay_args[@]}" --checkpoint "$work/o/../o/./regret.svg" --out "$work/o"
refused ck_dotted --checkpoint "--out's regret.svg"
ln -s "$work/o/regret.csv" "$work/link.ckpt"
run ck_link "$replay" "${replay_args[@]}" --checkpoint "$work/link.ckpt" --out "$work/o"
refused ck_link --checkpoint "--out's regret.csv"
[ "$(cat "$work/o/regret.csv")" = "earlier report" ] || fail "ck_link: regret.csv was changed or removed"
run journal_out "$replay" "${replay_args[@]}" --checkpoint "$work/o/regret" --out "$work/o2" \
  --input "$work/o/regret.journal" --format csv
refused journal_out "--input" "--checkpoint's journal"

# ---- replay: an output path that is not a regular file ----
mkfifo "$work/fifo.ckpt"
run ck_fifo "$replay" "${replay_args[@]}" --checkpoint "$work/fifo.ckpt" --out "$work/o3"
refused ck_fifo --checkpoint "$work/fifo.ckpt" "FIFO"
[ -p "$work/fifo.ckpt" ] || fail "ck_fifo: the FIFO was replaced"
mkdir -p "$work/o4" && echo "not yours" > "$work/victim" && ln -s "$work/victim" "$work/o4/regret.svg"
run svg_link "$replay" --seed 7 --limit 1024 --out "$work/o4"
refused svg_link "regret.svg" "symbolic link"
[ -L "$work/o4/regret.svg" ] && [ "$(cat "$work/victim")" = "not yours" ] || fail "svg_link: the link or its target changed"

# ---- convert: --force replaces a regular file only; --input and --output one file ----
printf '0.5,0.25\n-0.125,1\n' > "$work/rows.csv"
run conv_fifo "$convert" --input "$work/rows.csv" --output "$work/fifo.ckpt" --to csv --force
refused conv_fifo --output "$work/fifo.ckpt" "FIFO"
[ -p "$work/fifo.ckpt" ] || fail "conv_fifo: the FIFO was replaced"
ln -s "$work/victim" "$work/linked.csv"
run conv_link "$convert" --input "$work/rows.csv" --output "$work/linked.csv" --force
refused conv_link --output "$work/linked.csv" "symbolic link"
[ -L "$work/linked.csv" ] && [ "$(cat "$work/victim")" = "not yours" ] || fail "conv_link: the link or its target changed"
run conv_same "$convert" --input "$work/rows.csv" --output "$work/./rows.csv" --force
refused conv_same --output input
ln "$work/rows.csv" "$work/hard.csv"  # a second name of the input: the same file
run conv_hard "$convert" --input "$work/rows.csv" --output "$work/hard.csv" --force
refused conv_hard --output input
[ "$(wc -l < "$work/rows.csv")" -eq 2 ] || fail "conv_same: the input was changed"
ls "$work" | grep -q '\.tmp-' && fail "convert left a temporary: $(ls "$work")"

# ---- recommend --online: online.svg a FIFO, even with --force ----
awk 'BEGIN { for (i = 1; i <= 40; i++) for (j = 0; j < 5; j++) printf "%d\t%d\t%d\t%d\n", i, 100 + j, 1 + (i + j) % 5, 880000000 + i }' \
  > "$work/u.data"
seq 100 104 > "$work/items.txt"
mkdir -p "$work/r" && mkfifo "$work/r/online.svg"
run rec_fifo "$recommend" --input "$work/u.data" --catalogue "$work/items.txt" --seed 3 --online --release-every 10 \
  --out "$work/r" --force
refused rec_fifo "online.svg" "FIFO"
[ -p "$work/r/online.svg" ] || fail "rec_fifo: the FIFO was replaced"

# ---- SIGTERM / SIGINT mid-conversion: the run's OUTPUT.tmp-* is removed, the old output kept ----
for sig in TERM INT; do
  mkfifo "$work/slow.$sig"
  echo "old output" > "$work/sig.$sig.csv"
  { printf '0.5,0.25\n-0.125,1\n'; exec sleep 20; } > "$work/slow.$sig" &
  feeder=$!
  # A background job of a script starts with SIGINT ignored (and a tool keeps it so): restore it.
  env --default-signal=INT "$convert" --input "$work/slow.$sig" --format csv --output "$work/sig.$sig.csv" --force > /dev/null 2>&1 &
  pid=$!
  for _ in $(seq 100); do compgen -G "$work/sig.$sig.csv.tmp-*" > /dev/null && break; sleep 0.05; done
  compgen -G "$work/sig.$sig.csv.tmp-*" > /dev/null || fail "SIG$sig: convert never created its temporary"
  kill -"$sig" "$pid"; wait "$pid"; st=$?
  kill "$feeder" 2> /dev/null; wait "$feeder" 2> /dev/null
  [ "$st" -eq $((128 + $(kill -l "$sig"))) ] || fail "SIG$sig: convert exited $st, want death by the signal"
  compgen -G "$work/sig.$sig.csv.tmp-*" > /dev/null && fail "SIG$sig: the temporary was left: $(ls "$work"/sig.*)"
  [ "$(cat "$work/sig.$sig.csv")" = "old output" ] || fail "SIG$sig: the old output was changed"
done

# ---- a user's file named like a checkpoint temporary survives a completed run ----
echo "my backup" > "$work/ck.tmp-backup" && chmod 0644 "$work/ck.tmp-backup"
run own_only "$replay" "${replay_args[@]}" --checkpoint "$work/ck" --out "$work/o5"
[ "$status" -eq 0 ] || fail "own_only: exit $status: $(cat "$work/own_only.err")"
[ "$(cat "$work/ck.tmp-backup" 2> /dev/null)" = "my backup" ] || fail "own_only: the user's ck.tmp-backup was removed"
[ -e "$work/ck" ] && fail "own_only: the checkpoint of a completed run is still there"

# ---- one run at a time per checkpoint: a second run while PATH.lock is held is refused by name ----
exec 9> "$work/busy.lock"  # this shell holds the lock, as a running replay would
flock -n 9 || fail "busy: cannot take the lock for the test"
run busy "$replay" "${replay_args[@]}" --checkpoint "$work/busy" --out "$work/o6" 9>&-
refused busy --checkpoint "$work/busy" "in use by another run"
[ -e "$work/busy" ] && fail "busy: the refused run wrote a checkpoint"
[ -e "$work/busy.lock" ] || fail "busy: the refused run removed the holder's lock file"
echo "precious" > "$work/existing"
run existing "$replay" "${replay_args[@]}" --checkpoint "$work/existing" --out "$work/o6"
refused existing --checkpoint "exists"
[ -e "$work/existing.lock" ] && fail "existing: a refused run left the lock file it created"
exec 9>&-
run unlocked "$replay" "${replay_args[@]}" --checkpoint "$work/busy" --out "$work/o6"
[ "$status" -eq 0 ] || fail "unlocked: once released, the checkpoint is usable: exit $status, $(cat "$work/unlocked.err")"

# ---- a temporary a killed run noted in the lock file is removed by the next run, and only that:
# not a noted name outside the checkpoint's temporaries, not a look-alike never noted ----
echo "torn" > "$work/noted.tmp-Ab3xY9"
echo "user" > "$work/noted.tmp-q1w2e3"
printf '%s' "$work/noted.tmp-Ab3xY9" > "$work/noted.lock"
run noted "$replay" "${replay_args[@]}" --checkpoint "$work/noted" --out "$work/o7"
[ "$status" -eq 0 ] || fail "noted: exit $status: $(cat "$work/noted.err")"
[ -e "$work/noted.tmp-Ab3xY9" ] && fail "noted: the noted temporary of a killed run is still there"
[ "$(cat "$work/noted.tmp-q1w2e3" 2> /dev/null)" = user ] || fail "noted: a file never noted was removed"
[ -e "$work/noted.lock" ] && fail "noted: the completed run left its lock file"
printf '%s' "$work/victim" > "$work/noted.lock"
run noted_out "$replay" "${replay_args[@]}" --checkpoint "$work/noted" --out "$work/o8"
refused noted_out --checkpoint "not a checkpoint's lock file"
[ "$(cat "$work/victim")" = "not yours" ] || fail "noted_out: a noted name outside the checkpoint's temporaries was removed"
[ "$(cat "$work/noted.lock")" = "$work/victim" ] || fail "noted_out: a foreign file at the lock's name was changed"

# ---- the report is one set: a write that fails (a file-size limit standing in for a full disk: the
# ~0.8 kB regret.csv fits in 2 kB, the ~4.6 kB regret.svg does not) leaves the old pair whole ----
run set_old "$replay" --seed 7 --limit 1024 --out "$work/set"
[ "$status" -eq 0 ] || fail "set_old: exit $status: $(cat "$work/set_old.err")"
cp "$work/set/regret.csv" "$work/old.csv" && cp "$work/set/regret.svg" "$work/old.svg"
[ "$(stat -c %s "$work/old.csv")" -lt 2048 ] && [ "$(stat -c %s "$work/old.svg")" -gt 2048 ] ||
  fail "set: the sizes no longer straddle the 2 kB limit this case needs"
(trap '' XFSZ; ulimit -f 2; exec "$replay" --seed 8 --limit 1024 --out "$work/set") > /dev/null 2> "$work/set_new.err"
status=$?
[ "$status" -eq 1 ] || fail "set_new: exit $status, want 1: $(cat "$work/set_new.err")"
cmp -s "$work/set/regret.csv" "$work/old.csv" && cmp -s "$work/set/regret.svg" "$work/old.svg" ||
  fail "set_new: a failed report write left a new file beside an old one"
ls "$work/set" | grep -q '\.tmp-' && fail "set_new: a temporary was left: $(ls "$work/set")"

[ "$failures" -eq 0 ] && echo "run paths: ok"
exit $((failures > 0))
