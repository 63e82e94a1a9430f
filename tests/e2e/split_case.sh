#!/usr/bin/env bash
# Big single files: uncompressed inputs split into line-aligned
# byte ranges read by several ranks, checked by oracle.py.
#
# usage: split_case.sh --case NAME --ranks N --bin BLOOMSHARD --oracle-dir DIR
#                      [--mpiexec M] [--np-flag -n] [--python P]
# cases: split  one plain JSONL file of ~7 MB (unique keys, bad lines in
#               later ranges, a CRLF tail without final newline), a small
#               .gz and a small plain file (not split) with duplicates: at N ranks with a small
#               --split-min-bytes the mirrored outputs are byte-identical to
#               a 1-rank --split-inputs off run, the rejects name the same
#               files and absolute lines, per-rank read bytes are within
#               1.25x; a file with duplicates across its ranges is exactly
#               once and byte-identical to 1 rank (retracted > 0); --unit paragraph
#               output byte-identical to 1 rank too; a hot key (half of a
#               split file) combined before routing, in sub-rounds, output
#               identical to 1 rank; no part is left
#        kill   a split run checkpointing every round, SIGKILLed (all ranks or
#               one) 4 times after progress and resumed on 1..3 ranks (the
#               ranges were cut at 3): exactly once and byte-identical to a
#               1-rank run, rejects with absolute lines, the state marks its
#               split inputs; then a rank killed
#               inside the join (BLOOMSHARD_FAULT_KILL_IN_JOIN, duplicates
#               across ranges, retractions saved) and a resume on 2 ranks:
#               byte-identical to a 1-rank run
# Set KEEP_TMP=1 to keep the temp dir.
source "$(dirname "${BASH_SOURCE[0]}")/../harness.sh"
harness_parse split_case.sh "--case=CASE* --ranks=RANKS:1 --bin=BIN* --oracle-dir=ODIR*" "$@"
ORACLE=$ODIR/oracle.py
[[ -f $ORACLE ]] || harness_usage "no oracle.py in --oracle-dir $ODIR"
harness_tmp "split-$CASE-$RANKS" "split $CASE, $RANKS ranks"
harness_marker # kill case: each attempt runs BIN through its own symlink
start=$SECONDS

# big_file OUT RECORDS DUP_RATE SEED: one plain JSONL file from synth, with 3
# blocks of 3 bad lines inserted at 40 %, 70 % and 95 % of its lines (later
# ranges) and a CRLF tail whose last line has no newline.
big_file() {
  local out=$1 records=$2 dup=$3 seed=$4
  "$BIN" synth --out "$TMP/gen-$seed" --manifest "$TMP/gen-$seed.json" --records "$records" \
    --dup-rate "$dup" --files 1 --seed "$seed" >/dev/null
  "$PY" - "$TMP/gen-$seed/part-00000.jsonl" "$out" <<'PYEOF'
import sys
src, dst = sys.argv[1:]
lines = open(src, "rb").read().splitlines(keepends=True)
bad = [b"not json at all\n", b'{"text": "no id field"}\n', b'{"id": true}\n']
for frac in (0.95, 0.70, 0.40):  # from the back: earlier positions stay put
    at = int(len(lines) * frac)
    lines[at:at] = bad
lines += [b'{"id": "crlf-1"}\r\n', b'{"id": "crlf-2"}\r\n', b'{"id": "no-newline"}']
open(dst, "wb").write(b"".join(lines))
PYEOF
}

json_field() { "$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$1" "$2"; }

# balanced METRICS: read_bytes_by_rank has one entry per rank, within 1.25x.
balanced() {
  "$PY" - "$1" "$RANKS" <<'PYEOF' || fail "read bytes by rank not balanced"
import json, sys
by_rank = json.load(open(sys.argv[1]))["read_bytes_by_rank"]
ranks = int(sys.argv[2])
print(f"read_bytes_by_rank {by_rank} (max/min {max(by_rank) / max(1, min(by_rank)):.3f})")
if len(by_rank) != ranks or min(by_rank) == 0 or max(by_rank) > 1.25 * min(by_rank):
    sys.exit(1)
PYEOF
}

case "$CASE" in
  split)
    # A: byte identity. The big file's keys are unique (duplicates only in
    # the small .gz files, read whole), so every run keeps the same records.
    mkdir -p "$TMP/a/gz" "$TMP/a/plain"
    big_file "$TMP/a/big.jsonl" 40000 0 61
    "$BIN" synth --out "$TMP/a/gz" --manifest "$TMP/gz.json" --records 800 \
      --dup-rate 0.3 --files 1 --compress gz --seed 62 >/dev/null
    "$BIN" synth --out "$TMP/a/plain" --manifest "$TMP/plain.json" --records 400 \
      --dup-rate 0.3 --files 1 --seed 64 >/dev/null
    unique=$(($(json_field "$TMP/gz.json" unique_keys) + $(json_field "$TMP/plain.json" unique_keys) + 40000 + 3))
    mpi 1 dedup --input "$TMP/a" --output "$TMP/out1" --key-field id --split-inputs off \
      --max-reject-fraction 1 >"$TMP/out1.log" 2>&1 || { cat "$TMP/out1.log" >&2; fail "1-rank run"; }
    mpi "$RANKS" dedup --input "$TMP/a" --output "$TMP/outN" --key-field id \
      --split-min-bytes 65536 --batch-bytes 65536 --max-reject-fraction 1 \
      --metrics "$TMP/outN/metrics.json" >"$TMP/outN.log" 2>&1 ||
      { cat "$TMP/outN.log" >&2; fail "$RANKS-rank split run"; }
    said=$(cat "$TMP/outN.log")
    [[ $said == *"split 1 input(s) into"* ]] || { echo "$said" >&2; fail "the big file was not split"; }
    log "$(grep -o 'split 1 input(s) into [0-9]* line-aligned ranges' "$TMP/outN.log")"
    "$PY" "$ORACLE" --input "$TMP/a" --output "$TMP/outN" --key-field id --expect-unique "$unique" \
      --rejects-expected 9 || fail "oracle rejected the split run"
    diff -r -x _bloomshard.lock -x metrics.json -x _rejects "$TMP/out1" "$TMP/outN" ||
      fail "outputs differ from the 1-rank run"
    [[ "$(reject_set "$TMP/out1")" == "$(reject_set "$TMP/outN")" ]] ||
      fail "rejects (file, line, reason) differ from the 1-rank run"
    [[ ! -e $TMP/outN/_ranges ]] || fail "range parts were left in the output"
    balanced "$TMP/outN/metrics.json"

    # B: duplicates across the ranges of one file: exactly once, and the
    # same copy of each key kept as at 1 rank (the first in the file): the
    # owners retract later copies decided first, the join leaves them out.
    mkdir -p "$TMP/b"
    big_file "$TMP/b/dups.jsonl" 30000 0.4 63
    unique=$(($(json_field "$TMP/gen-63.json" unique_keys) + 3))
    mpi 1 dedup --input "$TMP/b" --output "$TMP/dup1" --key-field id --split-inputs off \
      --max-reject-fraction 1 >"$TMP/dup1.log" 2>&1 || { cat "$TMP/dup1.log" >&2; fail "1-rank run (b)"; }
    mpi "$RANKS" dedup --input "$TMP/b" --output "$TMP/dupN" --key-field id \
      --split-min-bytes 65536 --batch-bytes 32768 --max-reject-fraction 1 \
      --metrics "$TMP/dupN/metrics.json" >"$TMP/dupN.log" 2>&1 ||
      { cat "$TMP/dupN.log" >&2; fail "$RANKS-rank split run (b)"; }
    "$PY" "$ORACLE" --input "$TMP/b" --output "$TMP/dupN" --key-field id --expect-unique "$unique" \
      --rejects-expected 9 --compare-keys "$TMP/dup1" || fail "oracle rejected the split run (b)"
    cmp "$TMP/dup1/dups.jsonl" "$TMP/dupN/dups.jsonl" ||
      fail "outputs (b) differ from the 1-rank run: not the first copy in the file"
    [[ "$(reject_set "$TMP/dup1")" == "$(reject_set "$TMP/dupN")" ]] ||
      fail "rejects (b) differ from the 1-rank run"
    balanced "$TMP/dupN/metrics.json"
    # The case must exercise retraction: later copies decided first.
    "$PY" - "$TMP/dupN/metrics.json" "$TMP/dup1/dups.jsonl" <<'PYEOF' || fail "metrics (b)"
import json, sys
m = json.load(open(sys.argv[1]))
lines = sum(1 for _ in open(sys.argv[2], "rb"))
print(f"retracted {m['retracted']} of kept {m['kept']}")
if m["retracted"] == 0:
    sys.exit("no kept copy was retracted: the case does not test file order")
if m["kept"] != lines or m["kept"] + m["dropped"] + m["rejected"] != m["records"]:
    sys.exit(f"kept {m['kept']} / dropped {m['dropped']} do not match the {lines} output lines")
PYEOF

    # C: --unit paragraph writes through the same parts: records whose
    # repeated paragraph (within the record) is cut, bad lines in later
    # ranges; byte-identical to a 1-rank run (the arrival order: paragraphs
    # in the first-copy order read their inputs whole).
    mkdir -p "$TMP/c"
    "$PY" - "$TMP/c/para.jsonl" <<'PYEOF'
import json, sys
with open(sys.argv[1], "w") as f:
    for i in range(12000):
        text = f"para one of {i} with words\n\npara two of {i}\n\npara one of {i} with words"
        f.write(json.dumps({"id": f"r{i}", "text": text}) + "\n")
        if i % 4000 == 3999:
            f.write("broken line\n")
PYEOF
    P=(--input "$TMP/c" --unit paragraph --key-field text --max-reject-fraction 1 --kept-copy arrival)
    mpi 1 dedup "${P[@]}" --output "$TMP/para1" --split-inputs off >"$TMP/para1.log" 2>&1 ||
      { cat "$TMP/para1.log" >&2; fail "1-rank paragraph run"; }
    mpi "$RANKS" dedup "${P[@]}" --output "$TMP/paraN" --split-min-bytes 65536 --batch-bytes 65536 \
      >"$TMP/paraN.log" 2>&1 || { cat "$TMP/paraN.log" >&2; fail "$RANKS-rank paragraph run"; }
    grep -q "line-aligned ranges" "$TMP/paraN.log" || fail "the paragraph input was not split"
    cmp "$TMP/para1/para.jsonl" "$TMP/paraN/para.jsonl" ||
      fail "--unit paragraph output differs from the 1-rank run"
    [[ "$(reject_set "$TMP/para1")" == "$(reject_set "$TMP/paraN")" ]] ||
      fail "--unit paragraph rejects differ from the 1-rank run"
    log "--unit paragraph: split output and rejects identical to 1 rank"

    # D: a hot key (half of the records) in a split file, with a small
    # --max-exchange-bytes: later copies in a batch stay home (tagged keys
    # are combined by the job), rounds split into sub-rounds, and the output
    # is still byte-identical to a 1-rank run.
    mkdir -p "$TMP/d"
    "$PY" - "$TMP/d/hot.jsonl" <<'PYEOF'
import json, sys
with open(sys.argv[1], "w") as f:
    for i in range(24000):
        key = "" if i % 2 == 0 else f"u{i % 9000}"
        f.write(json.dumps({"id": key, "n": i, "pad": "p" * (i % 40)}) + "\n")
PYEOF
    H=(--input "$TMP/d" --key-field id --max-reject-fraction 1)
    mpi 1 dedup "${H[@]}" --output "$TMP/hot1" --split-inputs off >"$TMP/hot1.log" 2>&1 ||
      { cat "$TMP/hot1.log" >&2; fail "1-rank hot-key run"; }
    mpi "$RANKS" dedup "${H[@]}" --output "$TMP/hotN" --split-min-bytes 65536 --batch-bytes 65536 \
      --max-exchange-bytes 4096 --metrics "$TMP/hotN/metrics.json" >"$TMP/hotN.log" 2>&1 ||
      { cat "$TMP/hotN.log" >&2; fail "$RANKS-rank hot-key run"; }
    grep -q "line-aligned ranges" "$TMP/hotN.log" || fail "the hot-key input was not split"
    cmp "$TMP/hot1/hot.jsonl" "$TMP/hotN/hot.jsonl" || fail "hot-key output differs from 1 rank"
    "$PY" - "$TMP/hotN/metrics.json" <<'PYEOF' || fail "hot-key metrics"
import json, sys
m = json.load(open(sys.argv[1]))
print(f"batch_duplicates {m['batch_duplicates']}, subrounds {m['subrounds']} in {m['rounds']} rounds")
if m["batch_duplicates"] < 10000:
    sys.exit("the hot key's later copies were not combined before routing")
if m["subrounds"] <= m["rounds"]:
    sys.exit("no round was split into sub-rounds")
PYEOF
    log "hot key in a split file: combined, sub-rounds, identical to 1 rank"
    ;;

  kill)
    mkdir -p "$TMP/in"
    big_file "$TMP/in/big.jsonl" 20000 0.3 71
    unique=$(($(json_field "$TMP/gen-71.json" unique_keys) + 3))
    # Attempts checkpoint every round; the final resume only at its end.
    ARGS=(--input "$TMP/in" --output "$TMP/out" --state "$TMP/state" --key-field id
      --batch-bytes 65536 --max-reject-fraction 1 --slices 64 --split-min-bytes 65536)
    RANDOM=$((RANKS * 11 + 3))
    kills=0 att=0 finished=0 seen_ranks=""
    while ((kills < 4)); do
      att=$((att + 1))
      n=$((att == 1 ? 3 : RANDOM % 3 + 1)) # the ranges are cut at 3 ranks
      seen_ranks+=" $n"
      marker=$MARK/bs-$att
      ln -s "$BIN" "$marker"
      "$MPIEXEC" "$NP_FLAG" "$n" --oversubscribe "$marker" dedup "${ARGS[@]}" \
        --checkpoint-rounds 1 >"$TMP/att-$att.log" 2>&1 &
      job=$!
      # Once this attempt committed a checkpoint, a random 0-190 ms later.
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
      mapfile -t ranks < <(pgrep -P "$job" -f -- "$marker" || true)
      if ((att % 2 == 0 && ${#ranks[@]} > 1)); then
        kill -KILL "${ranks[0]}" 2>/dev/null || true # one rank: the job must go down
      else
        kill -KILL "${ranks[@]}" "$job" 2>/dev/null || true
      fi
      wait "$job" 2>/dev/null || true
      kills=$((kills + 1))
      for ((i = 0; i < 300; i++)); do # no rank of this attempt may outlive it
        pgrep -f -- "$marker" >/dev/null || break
        sleep 0.02
      done
      kill_marker "$marker"
    done
    ((kills >= 2)) || fail "only $kills kills before the job finished"
    grep -q "line-aligned ranges" "$TMP/att-1.log" || { cat "$TMP/att-1.log" >&2; fail "not split"; }
    # The state marks its split inputs (builds before them refuse it).
    h5dump -a /normalization "$TMP/state/ckpt-$(cat "$TMP/state/LATEST").h5" >"$TMP/norm.txt"
    grep -Eq "split-inputs/v[12]" "$TMP/norm.txt" || { cat "$TMP/norm.txt" >&2; fail "no split mark"; }
    if ((finished == 0)); then
      n=$((RANDOM % 2 + 1))
      seen_ranks+=" $n"
      mpi "$n" dedup "${ARGS[@]}" >"$TMP/final.log" 2>&1 ||
        { cat "$TMP/final.log" >&2; fail "the final resume failed"; }
      # The last kill may land after the finishing generation: then the run
      # is already finished (and this start deletes any parts left).
      grep -q "resuming\|already finished" "$TMP/final.log" ||
        { cat "$TMP/final.log" >&2; fail "the final run neither resumed nor found the run finished"; }
    fi
    "$PY" "$ORACLE" --input "$TMP/in" --output "$TMP/out" --key-field id --expect-unique "$unique" \
      --rejects-expected 9 || fail "oracle rejected the outputs after $kills kills"
    [[ ! -e $TMP/out/_ranges ]] || fail "range parts were left in the output"
    # The first copy in the file, as one reader keeps it: each resume
    # remembered the kept copies of the later ranges from their parts.
    mpi 1 dedup --input "$TMP/in" --output "$TMP/ref" --key-field id --split-inputs off \
      --max-reject-fraction 1 >"$TMP/ref.log" 2>&1 || { cat "$TMP/ref.log" >&2; fail "1-rank run"; }
    cmp "$TMP/ref/big.jsonl" "$TMP/out/big.jsonl" ||
      fail "the output after $kills kills differs from a 1-rank run"
    log "$kills SIGKILL over $att attempts on ranks:$seen_ranks: exactly once, identical to 1 rank"

    # A kill inside the join (rank 1 dies with its parts written, before the
    # agreement): the resume on 2 ranks joins again, leaving out the same
    # retracted records (saved in the manifest, mark split-inputs/v2); the
    # outputs and rejects equal a 1-rank run's.
    mkdir -p "$TMP/j"
    big_file "$TMP/j/big.jsonl" 8000 0.3 72
    J=(--input "$TMP/j" --key-field id --max-reject-fraction 1 --batch-bytes 65536)
    mpi 1 dedup "${J[@]}" --output "$TMP/j1" --split-inputs off >"$TMP/j1.log" 2>&1 ||
      { cat "$TMP/j1.log" >&2; fail "1-rank run (join)"; }
    rc=0
    BLOOMSHARD_FAULT_KILL_IN_JOIN=1 mpi 3 dedup "${J[@]}" --output "$TMP/jN" --state "$TMP/jstate" \
      --split-min-bytes 65536 --checkpoint-rounds 1 >"$TMP/jN.log" 2>&1 || rc=$?
    ((rc != 0)) || fail "the run with a rank killed in the join succeeded"
    [[ -e $TMP/jN/_ranges ]] || fail "no parts left after a kill in the join"
    h5dump -a /normalization "$TMP/jstate/ckpt-$(cat "$TMP/jstate/LATEST").h5" >"$TMP/jnorm.txt"
    grep -q "split-inputs/v2" "$TMP/jnorm.txt" ||
      { cat "$TMP/jnorm.txt" >&2; fail "no retracted records saved before the join"; }
    mpi 2 dedup "${J[@]}" --output "$TMP/jN" --state "$TMP/jstate" --split-min-bytes 65536 \
      >"$TMP/jN2.log" 2>&1 || { cat "$TMP/jN2.log" >&2; fail "the resume after a kill in the join"; }
    grep -q "resuming" "$TMP/jN2.log" || fail "the run after the kill in the join did not resume"
    cmp "$TMP/j1/big.jsonl" "$TMP/jN/big.jsonl" || fail "the joined output differs from the 1-rank run"
    [[ "$(reject_set "$TMP/j1")" == "$(reject_set "$TMP/jN")" ]] ||
      fail "rejects after the join differ from the 1-rank run"
    [[ ! -e $TMP/jN/_ranges ]] || fail "range parts were left after the second join"
    log "a kill inside the join: the resume joined again, identical to 1 rank"
    # Parts left by a kill after the finishing generation: a start that
    # finds the run finished deletes them and changes no output.
    mkdir -p "$TMP/jN/_ranges" && echo leftover >"$TMP/jN/_ranges/big.jsonl.range-1"
    mpi 1 dedup "${J[@]}" --output "$TMP/jN" --state "$TMP/jstate" >"$TMP/jN3.log" 2>&1 ||
      { cat "$TMP/jN3.log" >&2; fail "a start of the finished run"; }
    grep -q "already finished" "$TMP/jN3.log" || fail "the finished run was not recognized"
    [[ ! -e $TMP/jN/_ranges ]] || fail "a start of the finished run left the parts"
    cmp "$TMP/j1/big.jsonl" "$TMP/jN/big.jsonl" || fail "a start of the finished run changed the output"
    ;;
  *) echo "split_case.sh: unknown case '$CASE'" >&2; exit 2 ;;
esac
log "PASS in $((SECONDS - start)) s"
