#!/usr/bin/env bash
# The lockstep layout (docs/inputs.md "The lockstep layout"): a run without
# --state whose inputs are all uncompressed reads them as blocks of the
# batch bytes, one a rank a round, and writes each block's kept lines at
# their offset in the input's output.
#
# usage: lockstep_case.sh --case NAME --ranks N --bin BLOOMSHARD --dir E2E_DIR
#                         [--mpiexec M] [--np-flag -n] [--python P]
# cases: records  input_order_corpus.py's corpus made plain (the .gz/.zst
#                 files decompressed), plus an empty input, one of one line
#                 (smaller than a block) and one whose lines are up to 5x
#                 the block (lines longer than a block; its keys repeat the
#                 others'); every duplicate's copies differ in other
#                 fields; two rejects at random lines of most inputs. --batch-bytes 4096 (hundreds of blocks): every
#                 output equals the oracle (the first copies in input
#                 order) and the 1-rank run's bytes, the metrics say
#                 "lockstep" with more blocks than ranks, every round
#                 decided without the owners' table, nothing retracted. Then
#                 --batch-bytes 65536 --max-exchange-bytes 4096 (sub-rounds
#                 a round): the same bytes, rounds with the table,
#                 and at N > 1 copies were retracted (the end pass cut them). The rejects (file,
#                 line, reason) are the 1-rank run's.
#         tasks   the same corpus with one input gzipped: the tasks layout
#                 (metrics "tasks", 0 blocks), the oracle's bytes and the
#                 same rejects as the lockstep run (line numbers count from
#                 the input's start in both layouts); a state cut in the
#                 tasks layout (--split-inputs off by name, killed after a
#                 commit: two inputs started) resumes without the option
#                 in the tasks layout, the same bytes and rejects; a
#                 lockstep cut resumed in the tasks layout (--split-inputs
#                 named) too.
#         state_kill  --state with a checkpoint every round: SIGKILLs at
#                 random moments after a commit, each resume on another
#                 rank count (N, then N % 4 + 1, ...), then --batch-bytes
#                 65536 --max-exchange-bytes 4096 (sub-rounds, retractions
#                 and the end pass across cuts) the same; every output byte
#                 for byte the 1-rank run's without --state and the
#                 oracle's, the rejects as a set the same, the metrics of
#                 the last segment "lockstep"; a kill before the end pass's
#                 generation and one before its renames, resumed on
#                 another rank count: the same bytes.
#         state_stop  SIGTERM to the ranks after a commit: exit 75 with a
#                 generation; the resume on another rank count finishes in
#                 lockstep with the 1-rank run's bytes; then an incremental
#                 run with new inputs, in lockstep, the fresh run's bytes;
#                 a finished input grown: --revalidate-inputs refuses (no
#                 prefix digest in a lockstep cut), saying so.
#         overwrite  an output made longer and another shorter by hand,
#                 then --overwrite: every output byte for byte the 1-rank
#                 run's (the stale tail is gone); the same in a dir no run
#                 wrote that holds a longer file at an output's path.
#         skip    an input removed while the job runs (paused before a
#                 round's agreement): under --on-input-error skip every
#                 block of it is skipped (named in skipped_inputs, the first
#                 from record 1 at byte 0), its output stays empty, and the
#                 other outputs are the oracle's for the inputs without it;
#                 the same with --state and a checkpoint due every round,
#                 byte for byte, with no checkpoint while the broken input
#                 had blocks left; with --state and --on-input-error fail:
#                 exit 1, the last generation stands, and with the input
#                 put back the resume on another rank count gives the
#                 1-rank run's bytes.
# Set KEEP_TMP=1 to keep the temp dir.
source "$(dirname "${BASH_SOURCE[0]}")/../harness.sh"
harness_parse lockstep_case.sh "--case=CASE* --ranks=RANKS:1 --bin=BIN* --dir=EDIR*" "$@"
CORPUS=$EDIR/input_order_corpus.py
[[ -f $CORPUS ]] || harness_usage "no input_order_corpus.py in --dir $EDIR"
command -v zstd >/dev/null || harness_usage "needs the zstd command"
harness_tmp "lockstep-$CASE-$RANKS" "lockstep $CASE, $RANKS ranks"

json_field() { "$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$1" "$2"; }

# The plain corpus in $TMP/in.
make_plain_corpus() {
  "$PY" "$CORPUS" make "$TMP/in" --files 6 --records 2000 --big-records 6000 --seed 11 >/dev/null
  local f
  for f in "$TMP"/in/*.gz; do gunzip "$f"; done
  for f in "$TMP"/in/*.zst; do zstd -q -d --rm "$f"; done
  : >"$TMP/in/c-empty.jsonl"
  printf '{"id": "only-one", "copy": "c-one:1"}\n' >"$TMP/in/c-one.jsonl"
  # Lines of 10 B to 20 KB (blocks of 4 KiB), half of their keys those of
  # the other inputs (k0..k19999 in input_order_corpus.py).
  "$PY" - "$TMP/in/c-long.jsonl" <<'PYEOF'
import json, random, sys
r = random.Random(5)
with open(sys.argv[1], "w") as f:
    for i in range(60):
        key = f"k{r.randrange(0, 8000)}" if r.random() < 0.5 else f"long{i}"
        f.write(json.dumps({"id": key, "copy": f"c-long:{i}",
                            "pad": "x" * r.choice([10, 3000, 9000, 20000])}) + "\n")
PYEOF
  # Rejects (a line that is not JSON, a record without "id") at random
  # lines of most inputs: their line numbers count from the input's start.
  "$PY" - "$TMP/in" <<'PYEOF'
import os, random, sys
r = random.Random(9)
for name in sorted(os.listdir(sys.argv[1])):
    path = os.path.join(sys.argv[1], name)
    lines = open(path, "rb").read().splitlines(keepends=True)
    if len(lines) < 2:
        continue
    for bad in (b"not json at all\n", b'{"noid": 1, "copy": "reject"}\n'):
        lines.insert(r.randrange(0, len(lines) + 1), bad)
    open(path, "wb").write(b"".join(lines))
PYEOF
}

# run N OUT METRICS ARGS...: a dedup run that must succeed.
run() {
  local n=$1 out=$2 metrics=$3
  shift 3
  mpi "$n" dedup --input "$TMP/in" --output "$out" --key-field id --progress 0 \
    --metrics "$metrics" "$@" >"$out.log" 2>&1 || fail "$n-rank run into $out failed: $(tail -5 "$out.log")"
}

# removed_while_paused TAG OUT ARGS...: a RANKS-rank dedup run of
# $TMP/in into OUT (16 KiB rounds: b-05.jsonl is ~11 blocks, and the ~55
# rounds keep the checkpoint-every-round runs at ~2 s where 4 KiB rounds
# took ~9 s; log $TMP/job-TAG.log) held before round
# 2's agreement, b-05.jsonl removed while it waits, then let go; its exit
# status in RC.
removed_while_paused() {
  local tag=$1 out=$2 job
  shift 2
  rm -f "$TMP/go"
  "$MPIEXEC" "$NP_FLAG" "$RANKS" --oversubscribe -x BLOOMSHARD_FAULT_PAUSE_IN_FINISH=before-round-agreement:2 \
    -x BLOOMSHARD_FAULT_PAUSE_RELEASE="$TMP/go" "$BIN" dedup --input "$TMP/in" --output "$out" \
    --key-field id --progress 0 --batch-bytes 16384 "$@" >"$TMP/job-$tag.log" 2>&1 &
  job=$!
  for _ in $(seq 1 300); do
    grep -qs "fault pause at before-round-agreement:2" "$TMP/job-$tag.log" && break
    sleep 0.05
  done
  grep -qs "fault pause at" "$TMP/job-$tag.log" || { kill "$job"; fail "$tag: the job never paused"; }
  rm "$TMP/in/b-05.jsonl"
  touch "$TMP/go"
  RC=0
  wait "$job" || RC=$?
}

check_layout() { # METRICS LAYOUT
  local got
  got=$(json_field "$1" input_layout)
  [[ $got == "$2" ]] || fail "$1: input_layout $got, expected $2"
}

case $CASE in
  records)
    make_plain_corpus
    for shape in small subrounds; do
      if [[ $shape == small ]]; then
        ARGS=(--batch-bytes 4096)
      else
        ARGS=(--batch-bytes 65536 --max-exchange-bytes 4096)
      fi
      run 1 "$TMP/out1-$shape" "$TMP/m1-$shape.json" "${ARGS[@]}"
      "$PY" "$CORPUS" check "$TMP/in" "$TMP/out1-$shape" >/dev/null ||
        fail "1 rank ($shape): not the first copies in input order"
      run "$RANKS" "$TMP/outN-$shape" "$TMP/mN-$shape.json" "${ARGS[@]}"
      "$PY" "$CORPUS" check "$TMP/in" "$TMP/outN-$shape" >/dev/null ||
        fail "$RANKS ranks ($shape): not the first copies in input order"
      same_output_bytes "$TMP/out1-$shape" "$TMP/outN-$shape" "$RANKS ranks ($shape)" "the 1-rank run"
      [[ "$(reject_set "$TMP/out1-$shape" --basename)" == "$(reject_set "$TMP/outN-$shape" --basename)" ]] ||
        fail "$RANKS ranks ($shape): rejects (file, line, reason) differ from the 1-rank run's"
      check_layout "$TMP/mN-$shape.json" lockstep
      blocks=$(json_field "$TMP/mN-$shape.json" input_blocks)
      ((blocks > RANKS)) || fail "$RANKS ranks ($shape): $blocks blocks, the case tests nothing"
      [[ $(json_field "$TMP/m1-$shape.json" kept) == $(json_field "$TMP/mN-$shape.json" kept) ]] ||
        fail "$shape: kept counts differ from the 1-rank run's"
      [[ $(json_field "$TMP/mN-$shape.json" output_bytes) == \
        $(du -cb --apparent-size "$TMP/outN-$shape"/*.jsonl | tail -1 | cut -f1) ]] ||
        fail "$shape: output_bytes is not the outputs' size"
      retracted=$(json_field "$TMP/mN-$shape.json" retracted)
      log "$RANKS ranks, $shape: $blocks blocks, $retracted copies retracted"
      without=$(json_field "$TMP/mN-$shape.json" rounds_without_order_table)
      rounds=$(json_field "$TMP/mN-$shape.json" rounds)
      if [[ $shape == subrounds ]]; then
        # Sub-rounds put the owners' table back on in the rounds they cut
        # (the last rounds, with few blocks left, may fit in one).
        ((without < rounds)) || fail "all $rounds rounds with sub-rounds went without the table"
        if ((RANKS > 1)); then
          ((retracted > 0)) || fail "no copy retracted across sub-rounds: the case tests nothing"
        fi
      else
        ((without == rounds)) || fail "$without of $rounds one-sub-round rounds went without the table"
        ((retracted == 0)) || fail "$retracted copies retracted in one-sub-round lockstep rounds"
      fi
    done
    ;;
  tasks)
    make_plain_corpus
    run 1 "$TMP/ref" "$TMP/mref.json" --batch-bytes 4096
    cp -a "$TMP/in" "$TMP/in-plain"
    gzip -1 "$TMP/in/b-01.jsonl"
    run "$RANKS" "$TMP/gz-out" "$TMP/mgz.json" --batch-bytes 4096
    check_layout "$TMP/mgz.json" tasks
    [[ $(json_field "$TMP/mgz.json" input_blocks) == 0 ]] || fail "tasks layout with blocks"
    "$PY" "$CORPUS" check "$TMP/in" "$TMP/gz-out" >/dev/null ||
      fail "$RANKS ranks with a .gz input: not the first copies in input order"
    # Line numbers count from the input's start in both layouts.
    rejects=$(reject_set "$TMP/ref" --basename)
    [[ $(wc -l <<<"$rejects") -ge 10 ]] || fail "too few rejects to compare: [$rejects]"
    [[ "$rejects" == "$(reject_set "$TMP/gz-out" --basename | sed 's/b-01.jsonl.gz/b-01.jsonl/')" ]] ||
      fail "rejects of the lockstep run differ from the tasks layout's: [$rejects] [$(reject_set "$TMP/gz-out" --basename)]"
    # A tasks-layout state of plain inputs (--split-inputs off given by
    # name), SIGKILLed after a commit: its ranks had started an input each
    # (a-big.jsonl and b-00.jsonl, far more than a round's bytes). Resumed
    # without the option on 3 ranks, its cut keeps the tasks layout.
    rm -rf "$TMP/in" && mv "$TMP/in-plain" "$TMP/in"
    harness_marker
    marker=$MARK/bs-tasks
    ln -s "$BIN" "$marker"
    "$MPIEXEC" "$NP_FLAG" "$RANKS" --oversubscribe "$marker" dedup --input "$TMP/in" \
      --output "$TMP/st-out" --key-field id --progress 0 --batch-bytes 4096 --state "$TMP/st" \
      --split-inputs off --checkpoint-rounds 1 >"$TMP/tasks.log" 2>&1 &
    job=$!
    after_a_commit "$TMP/st" none "$job"
    kill_job "$marker" "$job"
    [[ -f $TMP/st/LATEST ]] || fail "no tasks-layout generation to resume from: $(tail -5 "$TMP/tasks.log")"
    run 3 "$TMP/st-out" "$TMP/mst.json" --batch-bytes 4096 --state "$TMP/st"
    grep -q "resuming checkpoint generation" "$TMP/st-out.log" || fail "no resume: $(head -3 "$TMP/st-out.log")"
    check_layout "$TMP/mst.json" tasks
    same_output_bytes "$TMP/ref" "$TMP/st-out" "a tasks-layout state resumed on 3 ranks" "the 1-rank lockstep run"
    [[ "$rejects" == "$(reject_set "$TMP/st-out" --basename)" ]] ||
      fail "rejects of the resumed tasks-layout state differ from the lockstep run's"
    # The other way: a lockstep cut (no prefix digests) resumed in the tasks
    # layout (--split-inputs named) reads on from its cursors, the same bytes.
    marker=$MARK/bs-lockstep-cut
    ln -s "$BIN" "$marker"
    "$MPIEXEC" "$NP_FLAG" "$RANKS" --oversubscribe "$marker" dedup --input "$TMP/in" \
      --output "$TMP/ls-out" --key-field id --progress 0 --batch-bytes 4096 --state "$TMP/ls" \
      --checkpoint-rounds 1 >"$TMP/ls.log" 2>&1 &
    job=$!
    after_a_commit "$TMP/ls" none "$job"
    kill_job "$marker" "$job"
    [[ -f $TMP/ls/LATEST ]] || fail "no lockstep generation to resume from: $(tail -5 "$TMP/ls.log")"
    run 3 "$TMP/ls-out" "$TMP/mls.json" --batch-bytes 4096 --state "$TMP/ls" --split-inputs auto
    grep -q "resuming checkpoint generation" "$TMP/ls-out.log" || fail "no resume: $(head -3 "$TMP/ls-out.log")"
    check_layout "$TMP/mls.json" tasks
    same_output_bytes "$TMP/ref" "$TMP/ls-out" "a lockstep cut resumed in the tasks layout" "the 1-rank lockstep run"
    [[ "$rejects" == "$(reject_set "$TMP/ls-out" --basename)" ]] ||
      fail "rejects of a lockstep cut resumed in the tasks layout differ"
    ;;
  state_kill)
    make_plain_corpus
    run 1 "$TMP/ref" "$TMP/mref.json" --batch-bytes 4096
    "$PY" "$CORPUS" check "$TMP/in" "$TMP/ref" >/dev/null || fail "1 rank: not the first copies in input order"
    harness_marker
    RANDOM=$((RANKS * 17 + 3))
    for shape in small subrounds; do
      if [[ $shape == small ]]; then
        ARGS=(--batch-bytes 4096)
      else
        ARGS=(--batch-bytes 65536 --max-exchange-bytes 4096)
      fi
      ST=(--input "$TMP/in" --output "$TMP/out-$shape" --key-field id --progress 0
        --state "$TMP/st-$shape" --checkpoint-rounds 1 "${ARGS[@]}")
      kills=0 att=0 finished=0 seen="" n=$RANKS
      while ((kills < 4)); do
        att=$((att + 1))
        ((att == 1)) || n=$((n % 4 + 1))
        seen+=" $n"
        marker=$MARK/bs-$shape-$att
        ln -s "$BIN" "$marker"
        "$MPIEXEC" "$NP_FLAG" "$n" --oversubscribe "$marker" dedup "${ST[@]}" \
          --metrics "$TMP/m-$shape-$att.json" >"$TMP/att-$shape-$att.log" 2>&1 &
        job=$!
        after_a_commit "$TMP/st-$shape" "$(latest_generation "$TMP/st-$shape")" "$job"
        if ! kill -0 "$job" 2>/dev/null; then
          rc=0
          wait "$job" || rc=$?
          ((rc == 0)) || fail "$shape: attempt $att failed with exit $rc: $(tail -5 "$TMP/att-$shape-$att.log")"
          finished=1
          break
        fi
        kill_job "$marker" "$job"
        kills=$((kills + 1))
      done
      ((kills >= 2)) || fail "$shape: only $kills kills before the job finished"
      if ((finished == 0)); then
        n=$((n % 4 + 1))
        seen+=" $n"
        att=$((att + 1))
        mpi "$n" dedup "${ST[@]}" --metrics "$TMP/m-$shape-$att.json" >"$TMP/att-$shape-$att.log" 2>&1 ||
          fail "$shape: the final resume failed: $(tail -5 "$TMP/att-$shape-$att.log")"
      fi
      # The layout of the last attempt that read: a kill can land just as
      # a job finishes, and the next attempt then only says "nothing to
      # do" (its metrics come from the state, which names no layout).
      read_att=$att
      while ((read_att > 1)) && grep -qs "nothing to do" "$TMP/att-$shape-$read_att.log"; do
        read_att=$((read_att - 1))
      done
      check_layout "$TMP/m-$shape-$read_att.json" lockstep
      "$PY" "$CORPUS" check "$TMP/in" "$TMP/out-$shape" >/dev/null ||
        fail "$shape: after $kills SIGKILLs (ranks:$seen): not the first copies in input order"
      same_output_bytes "$TMP/ref" "$TMP/out-$shape" "$shape, $kills SIGKILLs (ranks:$seen)" "the 1-rank run"
      [[ "$(reject_set "$TMP/ref" --basename)" == "$(reject_set "$TMP/out-$shape" --basename)" ]] ||
        fail "$shape: rejects (file, line, reason) differ from the 1-rank run's after kills (ranks:$seen)"
      retracted=$(json_field "$TMP/m-$shape-$att.json" retracted)
      log "$shape: $kills SIGKILLs over $att attempts on ranks:$seen: identical ($retracted retracted in the last segment)"
    done
    # Sub-rounds retract copies for the end pass: a kill before the end
    # pass's generation, and one after it before its renames, each resumed
    # on another rank count.
    for pause in before-end-pass-checkpoint before-end-pass-renames; do
      rm -rf "$TMP/out-end" "$TMP/st-end"
      killed_at_fault_pause "$TMP/$pause.log" "$RANKS" "$pause" dedup --input "$TMP/in" \
        --output "$TMP/out-end" --key-field id --progress 0 --state "$TMP/st-end" \
        --batch-bytes 65536 --max-exchange-bytes 4096 --checkpoint-rounds 2
      [[ -n $(find "$TMP/out-end" -name '*.retracted-tmp') ]] || fail "$pause: no cut output pending"
      n=$((RANKS % 4 + 1))
      run "$n" "$TMP/out-end" "$TMP/m-end.json" --state "$TMP/st-end" --batch-bytes 65536 \
        --max-exchange-bytes 4096
      [[ -z $(find "$TMP/out-end" -name '*.retracted-tmp') ]] || fail "$pause: temporary files left"
      same_output_bytes "$TMP/ref" "$TMP/out-end" "killed $pause, resumed on $n ranks" "the 1-rank run"
      log "killed $pause on $RANKS ranks, resumed on $n: identical"
    done
    ;;
  state_stop)
    make_plain_corpus
    run 1 "$TMP/ref" "$TMP/mref.json" --batch-bytes 4096
    harness_marker
    marker=$MARK/bs-stop
    ln -s "$BIN" "$marker"
    ST=(--input "$TMP/in" --output "$TMP/out" --key-field id --progress 0 --state "$TMP/st"
      --batch-bytes 4096 --checkpoint-rounds 3)
    "$MPIEXEC" "$NP_FLAG" "$RANKS" --oversubscribe "$marker" dedup "${ST[@]}" \
      --metrics "$TMP/m1.json" >"$TMP/stop.log" 2>&1 &
    job=$!
    after_a_commit "$TMP/st" none "$job"
    mapfile -t ranks < <(pgrep -f -- "^$marker " || true)
    ((${#ranks[@]} == RANKS)) || fail "found ${#ranks[@]} ranks to stop, want $RANKS"
    kill -TERM "${ranks[@]}"
    rc=0
    wait "$job" || rc=$?
    ((rc == 75)) || fail "SIGTERM gave exit $rc, want 75: $(tail -5 "$TMP/stop.log")"
    [[ -f $TMP/st/LATEST ]] || fail "no generation after the stop"
    n=$((RANKS % 4 + 1))
    run "$n" "$TMP/out" "$TMP/m2.json" "${ST[@]:8}"
    check_layout "$TMP/m2.json" lockstep
    same_output_bytes "$TMP/ref" "$TMP/out" "stopped on $RANKS ranks, resumed on $n" "the 1-rank run"
    [[ "$(reject_set "$TMP/ref" --basename)" == "$(reject_set "$TMP/out" --basename)" ]] ||
      fail "rejects differ from the 1-rank run's after a stop"
    log "SIGTERM on $RANKS ranks, resumed on $n: identical"
    # A finished input grown: a lockstep cut saved no prefix digest, so
    # --revalidate-inputs cannot check the records read; refused, saying why.
    cp -p "$TMP/in/b-00.jsonl" "$TMP/b-00.saved"
    printf '{"id": "grown", "copy": "b-00:grown"}\n' >>"$TMP/in/b-00.jsonl"
    rc=0
    mpi 1 dedup --input "$TMP/in" --output "$TMP/out" --key-field id --progress 0 \
      --state "$TMP/st" --revalidate-inputs >"$TMP/grown.log" 2>&1 || rc=$?
    ((rc == 2)) || fail "a grown input of a lockstep state: exit $rc, want 2: $(tail -3 "$TMP/grown.log")"
    grep -q "cannot be revalidated: .*read in the lockstep layout, which saves none" "$TMP/grown.log" ||
      fail "the refusal does not say why: $(tail -3 "$TMP/grown.log")"
    cp -p "$TMP/b-00.saved" "$TMP/in/b-00.jsonl"
    # An incremental run on the finished state: new inputs (half their keys
    # the others') read in lockstep on another rank count, each output the
    # fresh 1-rank run's over all the inputs (the new ones sorted last).
    mkdir -p "$TMP/new"
    "$PY" - "$TMP/new" <<'PYEOF'
import json, random, sys
r = random.Random(3)
for name, n in (("z-new1.jsonl", 3000), ("z-new2.jsonl", 900)):
    with open(f"{sys.argv[1]}/{name}", "w") as f:
        for i in range(n):
            key = f"k{r.randrange(0, 20000)}" if r.random() < 0.5 else f"new{i % 1700}"
            f.write(json.dumps({"id": key, "copy": f"{name}:{i}"}) + "\n")
PYEOF
    cp -a "$TMP/in" "$TMP/all"
    cp "$TMP/new"/*.jsonl "$TMP/all/"
    mpi 1 dedup --input "$TMP/all" --output "$TMP/ref2" --key-field id --progress 0 \
      --batch-bytes 4096 >"$TMP/ref2.log" 2>&1 || fail "the 1-rank run over all inputs failed"
    n=$(((RANKS + 1) % 4 + 1))
    mpi "$n" dedup --input "$TMP/new" --output "$TMP/out-new" --key-field id --progress 0 \
      --state "$TMP/st" --batch-bytes 4096 --checkpoint-rounds 2 --metrics "$TMP/m3.json" \
      >"$TMP/new.log" 2>&1 || fail "the incremental run failed: $(tail -5 "$TMP/new.log")"
    grep -q "incremental run on checkpoint generation" "$TMP/new.log" ||
      fail "not an incremental run: $(head -3 "$TMP/new.log")"
    check_layout "$TMP/m3.json" lockstep
    for f in z-new1.jsonl z-new2.jsonl; do
      cmp -s "$TMP/ref2/$f" "$TMP/out-new/$f" || fail "incremental run on $n ranks: $f differs from the fresh run's"
    done
    log "an incremental run with new inputs on $n ranks: identical"
    ;;
  overwrite)
    make_plain_corpus
    run 1 "$TMP/ref" "$TMP/mref.json" --batch-bytes 4096
    run "$RANKS" "$TMP/out" "$TMP/m1.json" --batch-bytes 4096
    head -c 100000 /dev/zero | tr '\0' 'z' >>"$TMP/out/b-02.jsonl"
    truncate -s 10 "$TMP/out/a-big.jsonl"
    run "$RANKS" "$TMP/out" "$TMP/m2.json" --batch-bytes 4096 --overwrite
    check_layout "$TMP/m2.json" lockstep
    same_output_bytes "$TMP/ref" "$TMP/out" "$RANKS ranks over stale outputs" "the 1-rank run"
    # A dir no run wrote, holding a longer file at an output's path: the
    # job writes beside it (--overwrite), so only the layout's truncation
    # makes that output exact.
    mkdir -p "$TMP/beside"
    head -c 2000000 /dev/zero | tr '\0' 'z' >"$TMP/beside/b-02.jsonl"
    run "$RANKS" "$TMP/beside" "$TMP/m3.json" --batch-bytes 4096 --overwrite
    same_output_bytes "$TMP/ref" "$TMP/beside" "$RANKS ranks beside a stale file" "the 1-rank run"
    ;;
  skip)
    # An input removed while the job runs (held before round 2's agreement
    # by the fault pause): each of its blocks fails to open, and under
    # --on-input-error skip each is skipped (one skipped input a block);
    # its output stays empty and the other inputs' outputs are the first
    # copies in input order without it.
    make_plain_corpus
    cp -r "$TMP/in" "$TMP/without"
    rm "$TMP/without/b-05.jsonl"
    : >"$TMP/without/b-05.jsonl"
    cp -a "$TMP/in/b-05.jsonl" "$TMP/b-05.saved"
    for mode in stateless state; do
      STATE=()
      [[ $mode == stateless ]] || STATE=(--state "$TMP/st" --checkpoint-rounds 1)
      cp -a "$TMP/b-05.saved" "$TMP/in/b-05.jsonl"
      removed_while_paused "$mode" "$TMP/out-$mode" --max-skipped-inputs 1000 \
        --metrics "$TMP/m-$mode.json" "${STATE[@]}"
      ((RC == 0)) || fail "$mode: exit $RC: $(tail -5 "$TMP/job-$mode.log")"
      check_layout "$TMP/m-$mode.json" lockstep
      [[ ! -s $TMP/out-$mode/b-05.jsonl ]] || fail "$mode: the removed input's output is not empty"
      "$PY" "$CORPUS" check "$TMP/without" "$TMP/out-$mode" >/dev/null ||
        fail "$mode: not the first copies in input order without the removed input"
      "$PY" - "$TMP/m-$mode.json" <<'PYEOF' || fail "$mode: skipped_inputs"
import json, sys
k = json.load(open(sys.argv[1]))["skipped_inputs"]
assert len(k) >= 2, k
assert all(e["file"] == "b-05.jsonl" for e in k), k
k.sort(key=lambda e: e["offset"])  # gathered by input, each rank's in turn
assert k[0]["offset"] == 0 and k[0]["record"] == 1, k[0]
offsets = [e["offset"] for e in k]
assert len(set(offsets)) == len(offsets), offsets
print(f"{len(k)} blocks of b-05.jsonl skipped")
PYEOF
    done
    same_output_bytes "$TMP/out-stateless" "$TMP/out-state" "with --state" "the run without"
    # With a checkpoint due every round, none was written while b-05.jsonl
    # had blocks left (its line count after the break is lost): fewer
    # checkpoints than rounds by at least its blocks less one round.
    "$PY" - "$TMP/m-state.json" "$TMP/in" "$RANKS" <<'PYEOF' || fail "checkpoints during the broken input"
import json, sys
m = json.load(open(sys.argv[1]))
rounds, ckpts = m["rounds"], m["checkpoints"]
assert ckpts + 2 < rounds, (ckpts, rounds)
print(f"{ckpts} checkpoints in {rounds} rounds")
PYEOF
    # --on-input-error fail with --state: exit 1 and no generation of the
    # failed round (the broken block's lines past the break are not known);
    # the input put back, the resume on another rank count reads it whole.
    cp -a "$TMP/b-05.saved" "$TMP/in/b-05.jsonl"
    run 1 "$TMP/ref" "$TMP/mref.json" --batch-bytes 4096
    removed_while_paused fail "$TMP/out-fail" --state "$TMP/st-fail" --checkpoint-rounds 1 \
      --on-input-error fail
    ((RC == 1)) || fail "--on-input-error fail: exit $RC, want 1: $(tail -5 "$TMP/job-fail.log")"
    grep -q "the last checkpoint stands" "$TMP/job-fail.log" || fail "no word of the last checkpoint: $(tail -5 "$TMP/job-fail.log")"
    cp -a "$TMP/b-05.saved" "$TMP/in/b-05.jsonl"
    n=$((RANKS % 4 + 1))
    run "$n" "$TMP/out-fail" "$TMP/m-fail.json" --batch-bytes 4096 --state "$TMP/st-fail"
    check_layout "$TMP/m-fail.json" lockstep
    same_output_bytes "$TMP/ref" "$TMP/out-fail" "failed on $RANKS ranks, resumed on $n" "the 1-rank run"
    ;;
  *) harness_usage "unknown case $CASE" ;;
esac
log "ok"
