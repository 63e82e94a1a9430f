#!/usr/bin/env bash
# `bloomshard dedup --mode annotate` end to end, checked by
# annotate_oracle.py (attribute files aligned line by line with the inputs,
# flags = the oracle's first occurrences, rejects flagged with the reject
# files' reason).
#
# usage: annotate_case.sh --case NAME --ranks N --bin BLOOMSHARD --oracle-dir DIR
#                         [--mpiexec M] [--np-flag -n] [--python P]
# cases: basic   JSONL (plain and .gz, bad lines, integer ids) and a plain-line
#                file; the kept records equal a filter-mode run's outputs
#        dolma   --annotate-format dolma on id/text documents with non-ASCII
#                text, content key (--key-field text): spans in characters,
#                `dolma mix`'s exclude filter gives the filter-mode outputs
#        kill    SIGKILL (all ranks, or one) and SIGUSR1 mid-run a few times,
#                resumed on changing rank counts (1..3), then finished:
#                still exactly once and aligned
#        refuse  an unfinished annotate run (SIGUSR1, exit 75) refuses a resume
#                with --mode filter or another --annotate-format (exit 2,
#                naming the options), then finishes with its own; a filter run
#                killed before its first checkpoint refuses an annotate restart
# Set KEEP_TMP=1 to keep the temp dir.
source "$(dirname "${BASH_SOURCE[0]}")/../harness.sh"
harness_parse annotate_case.sh "--case=CASE* --ranks=RANKS:1 --bin=BIN* --oracle-dir=ODIR*" "$@"
ORACLE=$ODIR/annotate_oracle.py
[[ -f $ORACLE ]] || harness_usage "no annotate_oracle.py in --oracle-dir $ODIR"
harness_tmp "annotate-$CASE-$RANKS" "annotate $CASE, $RANKS ranks"
harness_marker # kill case: each attempt runs BIN through its own symlink
IN=$TMP/in
mkdir -p "$IN"

# corpus KIND RECORDS: duplicates inside and across files, bad lines.
corpus() {
  "$PY" - "$IN" "$1" "$2" <<'PY'
import gzip, json, os, random, sys
root, kind, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
rng = random.Random(13)
bad = [b'not json', b'{"id": "unterminated', b'{"no_id": 1}', b'{"id": null}', b'[1, 2]',
       b'{"id": 1.5}', b'']
words = ["caf\u00e9", "\u65e5\u672c\u8a9e", "na\u00efve", "\U0001F600", "plain", "text"]
def docs(seed, count):
    out = []
    for i in range(count):
        k = rng.randrange(n // 2)  # about half the records repeat an earlier key
        if kind == "dolma":
            text = " ".join(words[(k + j) % len(words)] for j in range(1 + k % 7)) + " #%d" % k
            out.append(json.dumps({"id": "%s-%d" % (seed, i), "text": text},
                                  ensure_ascii=rng.random() < 0.5).encode())
        else:
            key = k if k % 5 == 0 else "doc-%d" % k  # integer ids too: 10 and "10" are one key
            out.append(json.dumps({"id": key, "text": "body %d" % i}).encode())
        if i % 97 == 5:
            out.append(bad[(i // 97) % len(bad)])
    return out
os.makedirs(os.path.join(root, "sub"), exist_ok=True)
parts = [("a.jsonl", None), ("sub/b.jsonl.gz", "gz"), ("sub/c.jsonl", None)]
for idx, (name, comp) in enumerate(parts):
    data = b"\n".join(docs(name, n // len(parts))) + b"\n"
    path = os.path.join(root, name)
    if comp == "gz":
        with gzip.open(path, "wb") as f:
            f.write(data)
    else:
        with open(path, "wb") as f:
            f.write(data)
if kind != "dolma":
    with open(os.path.join(root, "lines.txt"), "wb") as f:  # plain lines: the line is the key
        f.write(b"".join(b"line %d\n" % (i % 40) for i in range(120)) + b"last without newline")
PY
}

case $CASE in
  basic | dolma)
    if [[ $CASE == dolma ]]; then
      corpus dolma 3000
      ARGS=(--key-field text --annotate-format dolma)
      FMT=dolma KF=text
    else
      corpus basic 3000
      ARGS=(--key-field id)
      FMT=bloomshard KF=id
    fi
    # Small batches: many rounds, records of one round spread over files.
    mpi "$RANKS" dedup --input "$IN" --output "$TMP/ann" --mode annotate "${ARGS[@]}" \
      --batch-bytes 8192 --max-reject-fraction 1 >"$TMP/ann.log" 2>&1 ||
      { cat "$TMP/ann.log" >&2; fail "annotate run failed"; }
    # Annotate mode keeps the arrival order between inputs; so does a filter
    # run with --state (without it, filter mode keeps the first copy in input
    # order: docs/inputs.md "Which copy of a duplicate is kept").
    mpi "$RANKS" dedup --input "$IN" --output "$TMP/flt" --key-field "$KF" --state "$TMP/flt-state" \
      --batch-bytes 8192 --max-reject-fraction 1 >"$TMP/flt.log" 2>&1 ||
      { cat "$TMP/flt.log" >&2; fail "filter run failed"; }
    "$PY" "$ORACLE" --input "$IN" --output "$TMP/ann" --key-field "$KF" --format "$FMT" \
      --ranks "$RANKS" --filter-output "$TMP/flt" || fail "oracle rejected the attribute files"
    # The summary's counts ("N records, K kept, D duplicates (..), R rejected")
    # are those of filter mode.
    counts() { sed -n 's/^bloomshard dedup: \([0-9]* records, .* rejected\);.*/\1/p' "$1"; }
    a=$(counts "$TMP/ann.log") f=$(counts "$TMP/flt.log")
    [[ -n $a && $a == "$f" ]] || fail "summary counts '$a' differ from filter mode's '$f'"
    # The oracle can fail: a flipped flag, a lost line, a swapped pair.
    for mutation in flip drop swap; do
      rm -rf "$TMP/bad" && cp -r "$TMP/ann" "$TMP/bad"
      "$PY" - "$TMP/bad/a.jsonl" "$mutation" <<'PY'
import sys
path, how = sys.argv[1:]
lines = open(path, "rb").read().splitlines(keepends=True)
i = next(i for i, l in enumerate(lines) if b"reject" not in l and i > 3)
if how == "flip":
    l = lines[i]
    if b'"duplicate":' in l:
        l = l.replace(b"false", b"true") if b"false" in l else l.replace(b"true", b"false")
    else:
        l = l.replace(b"[]", b"[[0,1,1.0]]") if b"[]" in l else l[:l.index(b":[[")] + b":[]}}\n"
    assert l != lines[i]
    lines[i] = l
elif how == "drop":
    del lines[i]
else:
    lines[i], lines[i + 1] = lines[i + 1], lines[i]
open(path, "wb").write(b"".join(lines))
PY
      if "$PY" "$ORACLE" --input "$IN" --output "$TMP/bad" --key-field "$KF" --format "$FMT" \
        --ranks "$RANKS" >/dev/null 2>&1; then
        fail "the oracle accepted attribute files with a '$mutation' mutation"
      fi
    done
    ;;

  kill)
    corpus basic 60000
    ARGS=(--input "$IN" --output "$TMP/out" --state "$TMP/state" --mode annotate --key-field id
      --batch-bytes 16384 --checkpoint-rounds 1 --max-reject-fraction 1 --slices 64)
    RANDOM=$((RANKS * 7 + 1))
    kills=0 usr1=0 att=0 finished=0
    while ((kills + usr1 < 5)); do
      att=$((att + 1))
      n=$((RANDOM % 3 + 1))
      marker=$MARK/bs-$att
      ln -s "$BIN" "$marker"
      "$MPIEXEC" "$NP_FLAG" "$n" --oversubscribe "$marker" dedup "${ARGS[@]}" \
        >"$TMP/att-$att.log" 2>&1 &
      job=$!
      # Once this attempt committed a checkpoint, a random 0-200 ms later
      # (mid-round, mid-write or mid-checkpoint).
      gen0=$(cat "$TMP/state/LATEST" 2>/dev/null || echo none)
      for ((i = 0; i < 1000; i++)); do
        kill -0 "$job" 2>/dev/null || break
        g=$(cat "$TMP/state/LATEST" 2>/dev/null || echo none)
        [[ $g != "$gen0" ]] && break
        sleep 0.01
      done
      sleep "0.$((RANDOM % 20))"
      if ! kill -0 "$job" 2>/dev/null; then # finished before the kill (a fast machine)
        rc=0
        wait "$job" || rc=$?
        ((rc == 0)) || { cat "$TMP/att-$att.log" >&2; fail "attempt $att failed with exit $rc"; }
        finished=1
        break
      fi
      if ((att % 3 == 0)); then
        kill -USR1 "$job" 2>/dev/null || true # mpiexec forwards it to the ranks
        rc=0
        wait "$job" || rc=$?
        ((rc == 75)) || { cat "$TMP/att-$att.log" >&2; fail "SIGUSR1 gave exit $rc, want 75"; }
        usr1=$((usr1 + 1))
      else
        mapfile -t ranks < <(pgrep -P "$job" -f -- "$marker" || true)
        if ((att % 2 == 0 && ${#ranks[@]} > 1)); then
          kill -KILL "${ranks[0]}" 2>/dev/null || true # one rank: the job must go down
        else
          kill -KILL "${ranks[@]}" "$job" 2>/dev/null || true
        fi
        wait "$job" 2>/dev/null || true
        kills=$((kills + 1))
      fi
      for ((i = 0; i < 300; i++)); do # no rank of this attempt may outlive it
        pgrep -f -- "$marker" >/dev/null || break
        sleep 0.02
      done
      kill_marker "$marker"
    done
    ((kills + usr1 >= 2)) || fail "only $kills kills and $usr1 SIGUSR1 before the job finished"
    if ((finished == 0)); then
      mpi "$RANKS" dedup "${ARGS[@]}" >"$TMP/final.log" 2>&1 ||
        { cat "$TMP/final.log" >&2; fail "the final resume failed"; }
      grep -q "resuming" "$TMP/final.log" || fail "the final run did not resume"
    fi
    "$PY" "$ORACLE" --input "$IN" --output "$TMP/out" --key-field id ||
      fail "oracle rejected the attribute files after $kills kills and $usr1 SIGUSR1"
    echo "[annotate kill] $kills SIGKILL + $usr1 SIGUSR1 over $att attempts: exactly once, aligned"
    ;;

  refuse)
    corpus basic 12000
    ARGS=(--input "$IN" --output "$TMP/out" --state "$TMP/state" --key-field id
      --batch-bytes 4096 --max-reject-fraction 1)
    # mpiexec itself in the background ($! is its pid: it forwards SIGUSR1 to the ranks).
    "$MPIEXEC" "$NP_FLAG" "$RANKS" --oversubscribe "$BIN" dedup "${ARGS[@]}" --mode annotate \
      --annotate-format dolma --checkpoint-rounds 1 >"$TMP/a.log" 2>&1 &
    job=$!
    for ((i = 0; i < 1000; i++)); do
      [[ -e $TMP/state/LATEST ]] && break
      kill -0 "$job" 2>/dev/null || break
      sleep 0.01
    done
    kill -USR1 "$job" 2>/dev/null || true
    rc=0
    wait "$job" || rc=$?
    ((rc == 75)) || { cat "$TMP/a.log" >&2; fail "SIGUSR1 gave exit $rc, want 75 (checkpointed)"; }
    for other in "--mode filter" "--mode annotate" "--mode annotate --annotate-format bloomshard"; do
      rc=0
      # shellcheck disable=SC2086
      out=$(mpi "$RANKS" dedup "${ARGS[@]}" $other 2>&1) || rc=$?
      ((rc == 2)) || fail "resume with '$other' gave exit $rc, want 2: $out"
      [[ $out == *"started with --mode annotate --annotate-format dolma"* ]] ||
        fail "the refusal does not name the run's mode: $out"
    done
    mpi "$RANKS" dedup "${ARGS[@]}" --mode annotate --annotate-format dolma >"$TMP/b.log" 2>&1 ||
      { cat "$TMP/b.log" >&2; fail "the resume with the run's own mode failed"; }
    "$PY" "$ORACLE" --input "$IN" --output "$TMP/out" --format dolma --key-field id ||
      fail "oracle rejected the resumed run's attribute files"
    # Killed before its first checkpoint (only RUN.json): the restart in
    # another mode is another run, refused through the run identity.
    ARGS2=(--input "$IN" --output "$TMP/out2" --state "$TMP/s2" --key-field id --batch-bytes 4096
      --max-reject-fraction 1)
    "$MPIEXEC" "$NP_FLAG" "$RANKS" --oversubscribe "$BIN" dedup "${ARGS2[@]}" >"$TMP/c.log" 2>&1 &
    job=$!
    for ((i = 0; i < 2000; i++)); do
      [[ -e $TMP/s2/RUN.json ]] && break
      sleep 0.002
    done
    mapfile -t ranks < <(pgrep -P "$job" || true)
    kill -KILL "${ranks[@]}" "$job" 2>/dev/null || true
    wait "$job" 2>/dev/null || true
    for pid in "${ranks[@]}"; do # no rank may outlive its launcher (platform notes)
      for ((i = 0; i < 250; i++)); do kill -0 "$pid" 2>/dev/null || break; sleep 0.02; done
    done
    [[ -e $TMP/s2/RUN.json && ! -e $TMP/s2/LATEST ]] || fail "no RUN.json-only state to test"
    rc=0
    out=$(mpi "$RANKS" dedup "${ARGS2[@]}" --mode annotate 2>&1) || rc=$?
    ((rc == 2)) && [[ $out == *"belongs to another run"* ]] ||
      fail "an annotate restart of a filter run killed before its first checkpoint: exit $rc: $out"
    echo "[annotate refuse] a resume with another mode or format is refused; its own finishes"
    ;;
  *) fail "unknown case" ;;
esac
echo "[annotate $CASE] $RANKS ranks: ok"
