#!/usr/bin/env bash
# Compressed resume (docs/inputs.md "Resuming compressed inputs"):
# a checkpointing run over a multi-frame .zst (frames cut mid-line, one
# skippable frame), a multi-member .gz (BGZF/WET-like) and single-frame
# .zst/.gz controls is SIGKILLed at random moments and resumed (2, 1, 2
# ranks); then once more killed when the state holds a frame start for an
# unfinished input. Before the last resume every compressed byte in front
# of each saved frame start is overwritten (size and mtime kept) but the
# two 4 KiB windows the replaced-input check compares (docs/inputs.md
# "Replaced inputs"; overwriting those too is refused, exit 2): the
# resume must still complete, so it never read them. The inputs are put
# back and oracle.py checks exactly once; the kept key set is an
# uninterrupted run's; no resume fell back to byte 0.
#
# usage: compressed_resume.sh --ranks N --bin BLOOMSHARD --oracle ORACLE_PY
#                             [--mpiexec MPIEXEC] [--np-flag -n] [--python PYTHON3]
# Set KEEP_TMP=1 to keep the temp dir for a post-mortem.
source "$(dirname "${BASH_SOURCE[0]}")/../harness.sh"
harness_parse compressed_resume.sh "--ranks=RANKS:2 --bin=BIN* --oracle=ORACLE*" "$@"
[[ -f $ORACLE ]] || harness_usage "no oracle at $ORACLE"
command -v zstd >/dev/null || harness_usage "needs the zstd command"
harness_tmp "zresume-$RANKS" "compressed resume, $RANKS ranks"
harness_marker
start=$SECONDS

# The corpus: plain lines (the whole line is the key), ~30% repeated across
# files. Frames/members of 160 KiB, so frame starts noted 1 MiB apart
# (io::kFrameStartSpacing) exist from the second MiB on.
mkdir -p "$TMP/in" "$TMP/chunks"
"$PY" - "$TMP" <<'EOF'
import gzip, os, random, subprocess, sys
tmp = sys.argv[1]
rng = random.Random(12)
pool = [f"shared-{i}-" + "y" * rng.randrange(0, 60) for i in range(4000)]
def lines(n, tag):
    out = []
    for i in range(n):
        out.append(rng.choice(pool) if rng.random() < 0.3 else
                   f"{tag}-{i}-" + "x" * rng.randrange(0, 90))
    return ("\n".join(out) + "\n").encode()
def chunks(data, size=160 * 1024):
    return [data[i:i + size] for i in range(0, len(data), size)]
def zstd(chunk):
    return subprocess.run(["zstd", "-q", "-1", "-c"], input=chunk, check=True,
                          stdout=subprocess.PIPE).stdout
skippable = b"\x50\x2a\x4d\x18" + (64).to_bytes(4, "little") + b"\0" * 64
multi = lines(60000, "mz")
with open(f"{tmp}/in/multi-frame.txt.zst", "wb") as f:
    for i, c in enumerate(chunks(multi)):
        f.write(zstd(c))
        if i == 4:
            f.write(skippable)  # as the seekable format's seek table is
with open(f"{tmp}/in/multi-member.txt.gz", "wb") as f:
    for c in chunks(lines(60000, "mg")):
        f.write(gzip.compress(c, compresslevel=1))
with open(f"{tmp}/in/single-frame.txt.zst", "wb") as f:
    f.write(zstd(lines(10000, "sz")))
with open(f"{tmp}/in/single-member.txt.gz", "wb") as f:
    f.write(gzip.compress(lines(10000, "sg"), compresslevel=1))
EOF

ARGS=(--input "$TMP/in" --batch-bytes 131072 --slices 32 --checkpoint-rounds 1)
latest() { cat "$TMP/state/LATEST" 2>/dev/null || echo none; }
# The unfinished inputs of the state with a saved frame start, as
# "relative_path compressed_offset" lines.
frame_starts() {
  "$BIN" info --json --state "$TMP/state" >"$TMP/info.json" 2>/dev/null || return 0
  "$PY" -c '
import json, sys
for i in json.load(open(sys.argv[1]))["inputs"]:
    if not i["done"] and "resume_compressed_offset" in i:
        print(i["path"], i["resume_compressed_offset"])' "$TMP/info.json"
}

# attempt N RANKS MODE: one run in the background under a marker; MODE
# "random" kills it 0-300 ms after it committed a generation of its own,
# "frame" once the state holds a frame start. Sets KILLED=1 if it was.
attempt() {
  local n=$1 ranks=$2 mode=$3 marker=$MARK/bs-a$1 before waited=0
  before=$(latest)
  ln -s "$BIN" "$marker"
  timeout -s KILL 60 "$MPIEXEC" "$NP_FLAG" "$ranks" --oversubscribe "$marker" dedup "${ARGS[@]}" \
    --output "$TMP/out" --state "$TMP/state" --metrics "$TMP/out/metrics.json" \
    >"$TMP/att-$n.log" 2>&1 &
  local job=$!
  while kill -0 $job 2>/dev/null && [[ $(latest) == "$before" ]] && ((waited < 10000)); do
    sleep 0.01
    waited=$((waited + 10))
  done
  if [[ $mode == random ]]; then
    sleep "0.$(printf '%03d' $((RANDOM % 300)))"
  else
    local starts=""
    while kill -0 $job 2>/dev/null && [[ -z $starts ]]; do
      starts=$(frame_starts)
      [[ -n $starts ]] || sleep 0.05
    done
  fi
  KILLED=0
  if kill -0 $job 2>/dev/null; then
    kill_marker "$marker"
    KILLED=1
  fi
  wait $job 2>/dev/null || true
}

RANDOM=5
kills=0 att=0
for ranks in "$RANKS" 1; do
  att=$((att + 1))
  attempt $att "$ranks" random
  kills=$((kills + KILLED))
done
# A kill while a frame start is saved for an unfinished input (a few tries:
# an attempt may finish an input first).
starts=""
while [[ -z $starts ]] && ((att < 10)); do
  att=$((att + 1))
  attempt $att "$RANKS" frame
  kills=$((kills + KILLED))
  starts=$(frame_starts)
done
[[ -n $starts ]] || fail "no checkpoint held a frame start for an unfinished input after $att attempts"
log "$kills kills in $att attempts; saved frame starts: $(echo $starts)"

# Overwrite what precedes each saved frame start; keep size and mtime.
# overwrite FROM TO: bytes [FROM, TO) of each input with a saved start at TO.
overwrite() {
  while read -r rel off; do
    cp -p "$TMP/orig/$rel" "$TMP/in/$rel"
    "$PY" -c '
import sys
path, begin, end = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
assert end - begin > 4096, "a frame start too early for this check: %d" % end
with open(path, "r+b") as f:
    f.seek(begin)
    f.write(b"\xa5" * (end - begin))' "$TMP/in/$rel" "$1" "$((off - $2))"
    touch -r "$TMP/orig/$rel" "$TMP/in/$rel"
  done <<<"$starts"
}
mkdir -p "$TMP/orig"
while read -r rel off; do cp -p "$TMP/in/$rel" "$TMP/orig/$rel"; done <<<"$starts"
# All of it: the window digests see a replaced input and refuse it.
overwrite 0 0
rc=0
"$MPIEXEC" "$NP_FLAG" "$RANKS" --oversubscribe "$BIN" dedup "${ARGS[@]}" --output "$TMP/out" \
  --state "$TMP/state" --metrics "$TMP/out/metrics.json" >"$TMP/refused.log" 2>&1 || rc=$?
((rc == 2)) && grep -q "was replaced after some of its records were read" "$TMP/refused.log" ||
  { cat "$TMP/refused.log" >&2; fail "overwritten leading frames: exit $rc, want 2 (replaced)"; }
# All but the two windows: the frame-seeked resume never reads them.
overwrite 4096 4096
"$MPIEXEC" "$NP_FLAG" "$RANKS" --oversubscribe "$BIN" dedup "${ARGS[@]}" --output "$TMP/out" \
  --state "$TMP/state" --metrics "$TMP/out/metrics.json" >"$TMP/final.log" 2>&1 ||
  { cat "$TMP/final.log" >&2; fail "the final resume failed (did it read the overwritten frames?)"; }
while read -r rel off; do cp -p "$TMP/orig/$rel" "$TMP/in/$rel"; done <<<"$starts"
! grep -l "read from the start instead" "$TMP"/att-*.log "$TMP/final.log" ||
  fail "a resume could not use its saved frame start (see the log above)"
log "final resume over overwritten leading frames: done"

"$PY" "$ORACLE" --input "$TMP/in" --output "$TMP/out" --rejects-expected 0 ||
  fail "the oracle rejected the outputs"
"$MPIEXEC" "$NP_FLAG" "$RANKS" --oversubscribe "$BIN" dedup --input "$TMP/in" --output "$TMP/ref" \
  --batch-bytes 131072 --slices 32 >"$TMP/ref.log" 2>&1 || { cat "$TMP/ref.log" >&2; fail "reference run"; }
"$PY" "$ORACLE" --input "$TMP/in" --output "$TMP/out" --compare-keys "$TMP/ref" ||
  fail "the killed run kept another key set than an uninterrupted one"
log "exactly once, the key set of an uninterrupted run"
log "PASS in $((SECONDS - start)) s"
