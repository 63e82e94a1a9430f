#!/usr/bin/env bash
# The one order (docs/inputs.md "Which copy of a duplicate is kept"): the
# kept copy of a key is its first copy with the inputs in their walked,
# sorted order and the records by position, whatever the rank count.
#
# usage: input_order_case.sh --case NAME --ranks N --bin BLOOMSHARD --dir E2E_DIR
#                            [--mpiexec M] [--np-flag -n] [--python P]
# cases: records  6 inputs (plain, .gz, .zst in turn; compressed at
#                 --gzip-level 9 --zstd-level 19) and a bigger plain one
#                 first in the order, split into ranges at N > 1 ranks; 30 %
#                 duplicates spread over all of them, every copy different
#                 in its other fields; small batches so that later inputs'
#                 copies reach their owners first. Every output equals the
#                 oracle (input_order_corpus.py: awk '!seen[$key]++' over the
#                 inputs in order) and is byte for byte the 1-rank run's;
#                 at N > 1 copies were retracted and left out (metrics).
#                 Without --kept-copy the same bytes (the default); with
#                 --kept-copy arrival other bytes at N > 1. At N > 1 the
#                 .gz/.zst outputs were written stored and compressed by
#                 the end pass (end_pass_compressed_outputs), at the run's
#                 level.
#         state   the same corpus with --state (a checkpoint every 3 rounds): every
#                 output byte for byte the 1-rank stateless run's; the state
#                 carries the input-order/v3 mark, its kept copies and its
#                 retractions as rows (/input_order/rows, retracted_rows),
#                 none in the manifest; a resume with --kept-copy
#                 arrival, and --kept-copy first on an arrival state, exit 2;
#                 each resumed without --kept-copy goes on with its state's rule.
#         state_kill  with --state, a checkpoint every round: SIGKILLs at random
#                 moments (after a commit, 0-190 ms on), each attempt on 1-4
#                 ranks (the first on N); then a kill in the end pass (cut
#                 outputs recorded in a generation, renames pending; half of
#                 them then renamed by hand as a kill among the renames would
#                 leave them), resumed on another rank count; every output
#                 byte for byte the 1-rank stateless run's. A saved table
#                 damaged in every generation (a row's tag, its slice's
#                 checksum fixed) is refused naming the dataset, the slice
#                 and the tag.
#         annotate  --mode annotate, both --annotate-formats, on the records
#                 corpus with texts and rejects (input_order_corpus.py
#                 --annotate 1): every attribute file equals the oracle
#                 (check-annotate: line n flags line n of the input a
#                 duplicate unless it is its key's first copy in input
#                 order) and is byte for byte the 1-rank run's (compressed
#                 ones too); the same kept, dropped and output_bytes; at
#                 N > 1 copies were retracted and flagged by the end pass.
#         annotate_state, annotate_state_kill  the state and state_kill
#                 cases in --mode annotate (--annotate-format dolma at even
#                 rank counts, bloomshard at odd ones) on the annotate
#                 corpus: every attribute file equals check-annotate's
#                 oracle and the 1-rank stateless annotate run's bytes
#                 (decompressed for .gz/.zst), after SIGKILLs and kills in
#                 the end pass too.
#         paragraph_state, paragraph_state_kill  the state and state_kill
#                 cases under --unit paragraph (paragraph_corpus.py --mix --pool 1000,
#                 --drop-if-removed-fraction 0.3): every output equals
#                 paragraph_oracle.py --exact's and the 1-rank stateless
#                 run's bytes (decompressed for .gz/.zst), after SIGKILLs
#                 resumed on 1-4 ranks and kills in the end pass too.
#         paragraph_annotate_state_kill  paragraph_state_kill in --mode
#                 annotate (dolma at even rank counts, bloomshard at odd
#                 ones): every attribute file the 1-rank stateless annotate
#                 run's (decompressed for .gz/.zst) after the kills.
#         end_pass_refusals  with --state, the end pass met by files changed
#                 behind it: a cut output's temporary file longer than the
#                 generation that recorded the cut says (kill before the
#                 renames), and a to-be-cut output whose first line is no
#                 longer its input's (kill before the end pass's generation):
#                 a .zst output to be cut replaced by a valid one of the
#                 same length without its retracted copies, or with a
#                 line over the run's limit: each resume on
#                 1 rank exits non-zero naming the file and the step (the
#                 first two rename nothing over the output).
#         end_pass_map  the records corpus at N > 1: the end pass placed the
#                 retracted lines of the plain whole inputs' outputs by the
#                 offset maps their writers kept (end_pass_outputs_by_map
#                 > 0, end_pass_seconds > 0 in the metrics), every output
#                 byte for byte the 1-rank run's; with --state (a checkpoint
#                 every round), killed before the end pass's generation, the
#                 resume (which wrote no output) places them by the walk
#                 (end_pass_outputs_by_map 0) with the same bytes.
#         join_refusal  with --state, killed before the join of the split
#                 input; its range 1 part then lost its first line's first
#                 byte (same length): the resume on N ranks exits non-zero
#                 naming the input and the part (the join plans the part
#                 without its retracted lines, walking the input beside it);
#                 the same damage after two checkpoints of a run
#                 without --kept-copy first (the split input's own file
#                 order): the resume, rebuilding the owners' memory of the
#                 part's kept copies from it, refuses it too.
#         paragraphs  --unit paragraph (paragraph_corpus.py --mix --pool 1000: plain, .gz
#                 and .zst inputs, duplicate paragraphs in records that
#                 differ otherwise; small batches), at --drop-if-removed-fraction
#                 1 and 0.3: every output byte for byte the 1-rank run's and
#                 paragraph_oracle.py --exact's (first copy in input order),
#                 the paragraph counters its; at N > 1 records were re-cut
#                 and the .gz/.zst outputs compressed by the end pass.
#                 Plain-line inputs (input_order_corpus.py make-lines; a
#                 line is one paragraph) at fraction 1 and 0.5, against
#                 check-lines and the 1-rank run's bytes.
#         paragraph_annotate  --unit paragraph --mode annotate, both formats:
#                 attribute files byte for byte the 1-rank run's (kept,
#                 dropped, output_bytes its too) and, decompressed, matching
#                 the 1-rank filter run's first copies
#                 (paragraph_annotate_check.py applies the spans; that run
#                 checked by paragraph_oracle.py --exact); with --state the
#                 same decompressed bytes.
#         refusals  --kept-copy first with --slot-records, with paragraphs on
#                 split inputs (--split-inputs auto given; also in annotate
#                 mode), and an unknown value: exit 2 naming the option,
#                 nothing written.
# Set KEEP_TMP=1 to keep the temp dir.
source "$(dirname "${BASH_SOURCE[0]}")/../harness.sh"
harness_parse input_order_case.sh "--case=CASE* --ranks=RANKS:1 --bin=BIN* --dir=EDIR*" "$@"
CORPUS=$EDIR/input_order_corpus.py
[[ -f $CORPUS ]] || harness_usage "no input_order_corpus.py in --dir $EDIR"
command -v zstd >/dev/null || harness_usage "needs the zstd command"
harness_tmp "input-order-$CASE-$RANKS" "input order $CASE, $RANKS ranks"
harness_marker # state_kill: each attempt runs BIN through its own symlink

# annotate_*: the state cases in annotate mode.
ANNOTATE=""
MODE_ARGS=()
if [[ $CASE == annotate_state* ]]; then
  ANNOTATE=$( ((RANKS % 2 == 0)) && echo dolma || echo bloomshard)
  MODE_ARGS=(--mode annotate --annotate-format "$ANNOTATE")
  CASE=${CASE#annotate_}
fi

# paragraph_*: the state cases under --unit paragraph (paragraph_annotate_*:
# in annotate mode too).
PARAGRAPHS=""
if [[ $CASE == paragraph_annotate_state* ]]; then
  ANNOTATE=$( ((RANKS % 2 == 0)) && echo dolma || echo bloomshard)
  MODE_ARGS=(--mode annotate --annotate-format "$ANNOTATE")
  CASE=paragraph_${CASE#paragraph_annotate_}
fi
if [[ $CASE == paragraph_state* ]]; then
  PARAGRAPHS=1
  CASE=${CASE#paragraph_}
fi

json_field() { "$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$1" "$2"; }
latest() { echo "$1/ckpt-$(cat "$1/LATEST").h5"; }
# The newest generation's manifest text.
manifest_of() { h5dump -d /manifest_json "$(latest "$1")"; }
# manifest_has STATE PATTERN: whether the newest manifest matches (grep -q on
# a file: in a pipe under pipefail, h5dump's SIGPIPE after an early match
# would read as no match).
manifest_has() {
  manifest_of "$1" >"$TMP/manifest.txt"
  grep -q -- "$2" "$TMP/manifest.txt"
}
# The paragraph rules of the paragraph_* cases (--drop-if-removed-fraction
# below 1: a re-cut record may be dropped).
PARAGRAPH_RULES=(--paragraph-split newline --text-normalize ws --min-paragraph-bytes 8
  --drop-if-removed-fraction 0.3)
# The 1-rank stateless reference of the corpus in $TMP/in: $TMP/out1.
reference() {
  if [[ -n $PARAGRAPHS ]]; then
    "$PY" "$EDIR/paragraph_corpus.py" "$TMP/in" --files 6 --records 1800 --seed 5 --mix --pool 1000
    ARGS=(--input "$TMP/in" --key-field text --unit paragraph --kept-copy first --split-inputs off
      "${PARAGRAPH_RULES[@]}" --batch-bytes 16384 "${MODE_ARGS[@]}")
    mpi 1 dedup "${ARGS[@]}" --output "$TMP/out1" >"$TMP/r1.log" 2>&1 ||
      fail "1-rank run failed: $(cat "$TMP/r1.log")"
    return
  fi
  "$PY" "$CORPUS" make "$TMP/in" --files 6 --records 3000 --big-records 12000 --seed 7 \
    --annotate "$([[ -n $ANNOTATE ]] && echo 1 || echo 0)"
  ARGS=(--input "$TMP/in" --key-field id --kept-copy first --batch-bytes 65536 --split-min-bytes 65536
    "${MODE_ARGS[@]}")
  mpi 1 dedup "${ARGS[@]}" --output "$TMP/out1" >"$TMP/r1.log" 2>&1 ||
    fail "1-rank run failed: $(cat "$TMP/r1.log")"
}
# same_as_reference OUT WHAT: the oracle's output, and the same output files
# as the 1-rank run's, each with its bytes (same_output_bytes).
same_as_reference() {
  if [[ -n $PARAGRAPHS && -n $ANNOTATE ]]; then
    : # the 1-rank stateless attribute files' bytes below (the paragraph_annotate case checks them)
  elif [[ -n $PARAGRAPHS ]]; then
    "$PY" "$EDIR/paragraph_oracle.py" --input "$TMP/in" --output "$1" --exact --split newline \
      --normalize ws --min-paragraph-bytes 8 --drop-if-removed-fraction 0.3 ||
      fail "$2: not the first paragraph copies in input order"
  elif [[ -n $ANNOTATE ]]; then
    "$PY" "$CORPUS" check-annotate "$TMP/in" "$1" "$ANNOTATE" ||
      fail "$2: not the first copies in input order flagged new"
  else
    "$PY" "$CORPUS" check "$TMP/in" "$1" || fail "$2: not the first copies in input order"
    "$PY" "$EDIR/oracle.py" --input "$TMP/in" --output "$1" --key-field id >"$TMP/oracle.txt" 2>&1 ||
      fail "$2: the exactly-once oracle: $(tail -3 "$TMP/oracle.txt")"
  fi
  same_output_bytes "$TMP/out1" "$1" "$2" "the 1-rank run"
  compressed_outputs "$1" "$2"
}

# compressed_outputs OUT WHAT: every .gz/.zst output holds compressed
# members or frames: the end pass compressed those that rounds on 2+ ranks
# wrote stored, whichever attempt wrote them (same_output_bytes compares
# compressed outputs decompressed).
compressed_outputs() {
  [[ -n $(find "$1" \( -name '*.gz' -o -name '*.zst' \) -print -quit) ]] || return 0
  "$PY" "$EDIR/stored_members.py" "$1" >"$TMP/stored_members.txt" 2>&1 ||
    fail "$2: $(cat "$TMP/stored_members.txt")"
}

# At N > 1 ranks the rounds write every .gz/.zst output stored and the end
# pass compresses it once (its bytes then the 1-rank run's, which compressed
# it in the rounds): the metrics count them.
expect_deferred() { # METRICS RANKS
  local compressed want have
  compressed=$(find "$TMP/in" \( -name '*.gz' -o -name '*.zst' \) | wc -l)
  want=0
  [[ $2 -gt 1 && -z $ANNOTATE ]] && want=$compressed # attribute files are not deferred
  have=$(json_field "$1" end_pass_compressed_outputs)
  [[ $have == "$want" ]] || fail "$2 ranks: the end pass compressed $have stored outputs, not $want"
}

case $CASE in
  records)
    "$PY" "$CORPUS" make "$TMP/in" --files 6 --records 3000 --big-records 12000 --seed 7
    # Levels other than the codecs' defaults: an output the end pass writes
    # again must be compressed as the 1-rank run's was.
    ARGS=(--input "$TMP/in" --key-field id --kept-copy first --batch-bytes 65536 --split-min-bytes 65536
      --gzip-level 9 --zstd-level 19)
    mpi 1 dedup "${ARGS[@]}" --output "$TMP/out1" --metrics "$TMP/m1.json" >"$TMP/r1.log" 2>&1 ||
      fail "1-rank run failed: $(cat "$TMP/r1.log")"
    "$PY" "$CORPUS" check "$TMP/in" "$TMP/out1" || fail "1 rank: not the first copies in input order"
    mpi "$RANKS" dedup "${ARGS[@]}" --output "$TMP/outN" --metrics "$TMP/mN.json" \
      >"$TMP/rN.log" 2>&1 || fail "$RANKS-rank run failed: $(cat "$TMP/rN.log")"
    "$PY" "$CORPUS" check "$TMP/in" "$TMP/outN" ||
      fail "$RANKS ranks: not the first copies in input order ($(cat "$TMP/rN.log"))"
    diff -r "$TMP/out1" "$TMP/outN" -x _rejects >/dev/null ||
      fail "$RANKS ranks: outputs differ from the 1-rank run's bytes"
    retracted=$(json_field "$TMP/mN.json" retracted)
    log "$RANKS ranks: $retracted kept copies retracted for an earlier copy"
    [[ $RANKS == 1 || $retracted -gt 0 ]] || fail "no copy was retracted: the case tests nothing"
    [[ $(json_field "$TMP/m1.json" kept) == $(json_field "$TMP/mN.json" kept) ]] ||
      fail "kept counts differ"
    expect_deferred "$TMP/m1.json" 1
    expect_deferred "$TMP/mN.json" "$RANKS"
    # The default (no --kept-copy) is the first copy, and --kept-copy arrival
    # is the other rule: at N > 1 ranks, with these small rounds, other
    # copies kept between inputs (the arrival order is deterministic for a
    # rank count and round size, so this holds for the case's seed).
    local_args=()
    for a in "${ARGS[@]}"; do [[ $a == --kept-copy || $a == first ]] || local_args+=("$a"); done
    mpi "$RANKS" dedup "${local_args[@]}" --output "$TMP/outD" >"$TMP/rD.log" 2>&1 ||
      fail "$RANKS-rank run without --kept-copy failed: $(cat "$TMP/rD.log")"
    diff -r "$TMP/out1" "$TMP/outD" -x _rejects >/dev/null ||
      fail "$RANKS ranks without --kept-copy: outputs differ from the 1-rank first-copy run's"
    mpi "$RANKS" dedup "${local_args[@]}" --kept-copy arrival --output "$TMP/outA" \
      >"$TMP/rA.log" 2>&1 || fail "$RANKS-rank run in arrival order failed: $(cat "$TMP/rA.log")"
    if ((RANKS > 1)); then
      ! diff -r "$TMP/out1" "$TMP/outA" -x _rejects >/dev/null ||
        fail "$RANKS ranks with --kept-copy arrival: the first copies' bytes (the option was not taken)"
    fi
    ;;
  paragraphs)
    # --unit paragraph: which record keeps a paragraph. A paragraph is kept
    # in its first copy with the inputs in order, the records by position,
    # a record's paragraphs in text order; a later-read earlier copy makes
    # the end pass cut it from the record that kept it (and drop that
    # record when the fraction now drops it).
    "$PY" "$EDIR/paragraph_corpus.py" "$TMP/in" --files 6 --records 1800 --seed 5 --mix --pool 1000
    for fraction in 1 0.3; do
      ARGS=(--input "$TMP/in" --key-field text --unit paragraph --kept-copy first --split-inputs off
        --paragraph-split newline --text-normalize ws --min-paragraph-bytes 8
        --drop-if-removed-fraction "$fraction" --batch-bytes 16384 --gzip-level 9 --zstd-level 19)
      rm -rf "$TMP/out1" "$TMP/outN"
      mpi 1 dedup "${ARGS[@]}" --output "$TMP/out1" --metrics "$TMP/m1.json" >"$TMP/r1.log" 2>&1 ||
        fail "1-rank run failed: $(cat "$TMP/r1.log")"
      mpi "$RANKS" dedup "${ARGS[@]}" --output "$TMP/outN" --metrics "$TMP/mN.json" \
        >"$TMP/rN.log" 2>&1 || fail "$RANKS-rank run failed: $(cat "$TMP/rN.log")"
      "$PY" "$EDIR/paragraph_oracle.py" --input "$TMP/in" --output "$TMP/outN" --exact \
        --split newline --normalize ws --min-paragraph-bytes 8 \
        --drop-if-removed-fraction "$fraction" --metrics "$TMP/mN.json" ||
        fail "$RANKS ranks, fraction $fraction: not the first copies in input order"
      diff -r "$TMP/out1" "$TMP/outN" -x _rejects -x metrics.json >/dev/null ||
        fail "$RANKS ranks, fraction $fraction: outputs differ from the 1-rank run's bytes"
      retracted=$(json_field "$TMP/mN.json" retracted)
      log "$RANKS ranks, fraction $fraction: $retracted records re-cut for an earlier copy"
      [[ $RANKS == 1 || $retracted -gt 0 ]] || fail "no paragraph was retracted: the case tests nothing"
      expect_deferred "$TMP/mN.json" "$RANKS"
      for f in kept dropped output_bytes; do
        [[ $(json_field "$TMP/m1.json" $f) == $(json_field "$TMP/mN.json" $f) ]] ||
          fail "fraction $fraction: $f differs from the 1-rank run's"
      done
    done
    # Plain-line inputs: a line is one paragraph.
    "$PY" "$CORPUS" make-lines "$TMP/lines" --files 6 --records 1500 --seed 3
    for fraction in 1 0.5; do
      ARGS=(--input "$TMP/lines" --unit paragraph --kept-copy first --split-inputs off
        --drop-if-removed-fraction "$fraction" --batch-bytes 4096)
      rm -rf "$TMP/out1" "$TMP/outN"
      mpi 1 dedup "${ARGS[@]}" --output "$TMP/out1" >"$TMP/r1.log" 2>&1 ||
        fail "1-rank plain-line run failed: $(cat "$TMP/r1.log")"
      mpi "$RANKS" dedup "${ARGS[@]}" --output "$TMP/outN" --metrics "$TMP/mN.json" \
        >"$TMP/rN.log" 2>&1 || fail "$RANKS-rank plain-line run failed: $(cat "$TMP/rN.log")"
      "$PY" "$CORPUS" check-lines "$TMP/lines" "$TMP/outN" "$fraction" ||
        fail "$RANKS ranks, plain lines, fraction $fraction: not the first copies in input order"
      diff -r "$TMP/out1" "$TMP/outN" -x _rejects >/dev/null ||
        fail "$RANKS ranks, plain lines, fraction $fraction: outputs differ from the 1-rank run's"
      retracted=$(json_field "$TMP/mN.json" retracted)
      log "$RANKS ranks, plain lines, fraction $fraction: $retracted lines re-cut"
      [[ $RANKS == 1 || $retracted -gt 0 ]] || fail "no plain line was retracted: the case tests nothing"
    done
    ;;
  paragraph_annotate)
    # --unit paragraph --mode annotate: the attribute line of the record
    # that keeps a paragraph lists it as no duplicate, every later copy's
    # as one; a retracted paragraph is added to its record's spans by the
    # end pass.
    "$PY" "$EDIR/paragraph_corpus.py" "$TMP/in" --files 6 --records 1800 --seed 5 --mix --pool 1000
    ARGS=(--input "$TMP/in" --key-field text --unit paragraph --kept-copy first --split-inputs off
      "${PARAGRAPH_RULES[@]}" --batch-bytes 16384)
    mpi 1 dedup "${ARGS[@]}" --output "$TMP/f1" >"$TMP/f1.log" 2>&1 ||
      fail "1-rank filter run failed: $(cat "$TMP/f1.log")"
    for fmt in bloomshard dolma; do
      for n in $(printf "%s\n" 1 "$RANKS" | sort -u); do
        mpi "$n" dedup "${ARGS[@]}" --mode annotate --annotate-format "$fmt" \
          --output "$TMP/$fmt-$n" --metrics "$TMP/$fmt-$n.json" >"$TMP/$fmt-$n.log" 2>&1 ||
          fail "$n-rank $fmt run failed: $(cat "$TMP/$fmt-$n.log")"
      done
      diff -r "$TMP/$fmt-1" "$TMP/$fmt-$RANKS" -x _rejects >/dev/null ||
        fail "$RANKS ranks, $fmt: attribute files differ from the 1-rank run's bytes"
      retracted=$(json_field "$TMP/$fmt-$RANKS.json" retracted)
      log "$RANKS ranks, $fmt: $retracted attribute lines re-flagged"
      [[ $RANKS == 1 || $retracted -gt 0 ]] || fail "no paragraph was retracted: the case tests nothing"
      for f in kept dropped output_bytes; do
        [[ $(json_field "$TMP/$fmt-1.json" $f) == $(json_field "$TMP/$fmt-$RANKS.json" $f) ]] ||
          fail "$fmt: $f differs from the 1-rank run's"
      done
    done
    # Against filter mode's first copies (checked by paragraph_oracle.py in
    # the paragraphs case): paragraph_annotate_check.py applies the spans.
    "$PY" "$EDIR/paragraph_oracle.py" --input "$TMP/in" --output "$TMP/f1" --exact --split newline \
      --normalize ws --min-paragraph-bytes 8 --drop-if-removed-fraction 0.3 ||
      fail "the 1-rank filter run is not the first copies in input order"
    mkdir -p "$TMP/plain"
    for path in "$TMP"/in/*; do
      name=$(basename "$path")
      base=${name%.gz}
      base=${base%.zst}
      for d in in f1 bloomshard-$RANKS dolma-$RANKS; do
        case $name in
          *.gz) gzip -dc "$TMP/$d/$name" ;;
          *.zst) zstd -qdc "$TMP/$d/$name" ;;
          *) cat "$TMP/$d/$name" ;;
        esac >"$TMP/plain/$d-$base"
      done
      "$PY" "$EDIR/paragraph_annotate_check.py" "$TMP/plain/in-$base" "$TMP/plain/f1-$base" \
        "$TMP/plain/bloomshard-$RANKS-$base" "$TMP/plain/dolma-$RANKS-$base" ||
        fail "$RANKS ranks, $name: the attribute files do not match filter mode's first copies"
    done
    # With --state (a checkpoint every 3 rounds): the same decompressed bytes.
    mpi "$RANKS" dedup "${ARGS[@]}" --mode annotate --annotate-format dolma --output "$TMP/ds" \
      --state "$TMP/st" --checkpoint-rounds 3 >"$TMP/ds.log" 2>&1 ||
      fail "$RANKS-rank dolma run with --state failed: $(cat "$TMP/ds.log")"
    same_output_bytes "$TMP/dolma-1" "$TMP/ds" "$RANKS ranks with --state" "the 1-rank run"
    log "$RANKS ranks: both formats the 1-rank run's and filter mode's first copies, also with --state"
    ;;
  state)
    reference
    mpi "$RANKS" dedup "${ARGS[@]}" --output "$TMP/outN" --state "$TMP/st" --checkpoint-rounds 3 \
      --metrics "$TMP/mN.json" >"$TMP/rN.log" 2>&1 || fail "$RANKS-rank run failed: $(cat "$TMP/rN.log")"
    same_as_reference "$TMP/outN" "$RANKS ranks with --state"
    retracted=$(json_field "$TMP/mN.json" retracted)
    [[ $RANKS == 1 || $retracted -gt 0 ]] || fail "no copy was retracted: the case tests nothing"
    [[ $(json_field "$TMP/mN.json" checkpoints) -gt 1 ]] || fail "no checkpoint before the end"
    expect_deferred "$TMP/mN.json" "$RANKS"
    h5dump -a /normalization "$(latest "$TMP/st")" | grep -q "input-order/v3" ||
      fail "the state lacks the input-order/v3 mark"
    manifest_has "$TMP/st" '"input_order":{"version":3' || fail "no input_order in the manifest"
    manifest_has "$TMP/st" '"retracted_dataset":"/input_order/retracted_rows","retracted_rows":' ||
      fail "the manifest does not count its retractions as rows"
    ! manifest_has "$TMP/st" '"kept":\[' || fail "the manifest lists kept copies (rows expected)"
    h5dump -H -d /input_order/rows "$(latest "$TMP/st")" >/dev/null 2>&1 ||
      fail "the generation has no /input_order/rows"
    h5dump -H -d /input_order/retracted_rows "$(latest "$TMP/st")" >/dev/null 2>&1 ||
      fail "the generation has no /input_order/retracted_rows"
    log "$RANKS ranks with --state: identical to 1 rank, $retracted retracted"
    [[ -z $PARAGRAPHS ]] || { log "ok in $SECONDS s"; exit 0; } # the rest: any state's rule
    # A stopped run keeps its rule: the other --kept-copy is refused (exit 2).
    "$PY" "$CORPUS" make "$TMP/in2" --files 3 --records 2000 --big-records 2000 --seed 8
    for first in arrival first; do
      other=$([[ $first == first ]] && echo arrival || echo first)
      rm -rf "$TMP/o-$first" "$TMP/s-$first"
      # Stopped (SIGKILL) while paused after its first checkpoint: unfinished.
      killed_at_fault_pause "$TMP/s.log" "$RANKS" after-first-checkpoint dedup \
        --input "$TMP/in2" --key-field id --output "$TMP/o-$first" --state "$TMP/s-$first" \
        --kept-copy "$first" --batch-bytes 65536 --checkpoint-rounds 1 "${MODE_ARGS[@]}"
      rc=0
      mpi "$RANKS" dedup --input "$TMP/in2" --key-field id --output "$TMP/o-$first" \
        --state "$TMP/s-$first" --kept-copy "$other" "${MODE_ARGS[@]}" >"$TMP/s2.log" 2>&1 || rc=$?
      [[ $rc == 2 ]] || fail "a $first state resumed with --kept-copy $other: exit $rc ($(cat "$TMP/s2.log"))"
      grep -q -- "--kept-copy $first" "$TMP/s2.log" || fail "the refusal names no rule: $(cat "$TMP/s2.log")"
      # Without --kept-copy the resume goes on with the state's rule.
      mpi "$RANKS" dedup --input "$TMP/in2" --key-field id --output "$TMP/o-$first" \
        --state "$TMP/s-$first" "${MODE_ARGS[@]}" >"$TMP/s3.log" 2>&1 ||
        fail "a $first state resumed without --kept-copy failed: $(cat "$TMP/s3.log")"
      if [[ $first == first ]]; then
        manifest_has "$TMP/s-$first" '"input_order":{' || fail "the resume dropped the state's rule"
        if [[ -n $ANNOTATE ]]; then
          "$PY" "$CORPUS" check-annotate "$TMP/in2" "$TMP/o-$first" "$ANNOTATE"
        else
          "$PY" "$CORPUS" check "$TMP/in2" "$TMP/o-$first"
        fi || fail "resumed without --kept-copy: not the first copies in input order"
      else
        ! manifest_has "$TMP/s-$first" '"input_order"' || fail "an arrival state resumed in input order"
      fi
    done
    ;;
  state_kill)
    reference
    ST=(--output "$TMP/out" --state "$TMP/st")
    RANDOM=$((RANKS * 13 + 5))
    kills=0 att=0 finished=0 seen=""
    while ((kills < 4)); do
      att=$((att + 1))
      n=$((att == 1 ? RANKS : RANDOM % 4 + 1))
      seen+=" $n"
      marker=$MARK/bs-$att
      ln -s "$BIN" "$marker"
      "$MPIEXEC" "$NP_FLAG" "$n" --oversubscribe "$marker" dedup "${ARGS[@]}" "${ST[@]}" \
        --checkpoint-rounds 1 >"$TMP/att-$att.log" 2>&1 &
      job=$!
      after_a_commit "$TMP/st" "$(latest_generation "$TMP/st")" "$job"
      if ! kill -0 "$job" 2>/dev/null; then
        rc=0
        wait "$job" || rc=$?
        ((rc == 0)) || fail "attempt $att failed with exit $rc: $(cat "$TMP/att-$att.log")"
        finished=1
        break
      fi
      kill_job "$marker" "$job"
      kills=$((kills + 1))
      if ((kills == 1)); then # a copy to damage: its saved table holds kept copies
        cp -a "$TMP/st" "$TMP/dst"
        cp -a "$TMP/out" "$TMP/dout"
      fi
    done
    ((kills >= 2)) || fail "only $kills kills before the job finished"
    if ((finished == 0)); then
      n=$((RANDOM % 4 + 1))
      seen+=" $n"
      mpi "$n" dedup "${ARGS[@]}" "${ST[@]}" >"$TMP/final.log" 2>&1 ||
        fail "the final resume failed: $(cat "$TMP/final.log")"
    fi
    same_as_reference "$TMP/out" "$kills SIGKILLs (ranks:$seen)"
    log "$kills SIGKILLs over $att attempts on ranks:$seen: identical to the 1-rank run"

    # A kill in the end pass before a generation records it: the temporary
    # files are there, the outputs untouched; the resume removes the files
    # and cuts again.
    rm -rf "$TMP/out" "$TMP/st"
    killed_at_fault_pause "$TMP/cut.log" "$RANKS" before-end-pass-checkpoint dedup \
      "${ARGS[@]}" "${ST[@]}" --checkpoint-rounds 2
    [[ -n $(find "$TMP/out" -name '*.retracted-tmp') ]] || fail "no temporary file before the end pass's generation"
    [[ -f $TMP/st/LATEST ]] || fail "no generation to resume from: $(cat "$TMP/cut.log")"
    ! manifest_has "$TMP/st" '"cut_outputs":\[[0-9]' || fail "a generation records an unfinished cut"
    n=$(((RANKS + 1) % 4 + 1))
    mpi "$n" dedup "${ARGS[@]}" "${ST[@]}" >"$TMP/cut2.log" 2>&1 ||
      fail "the resume after a kill before the end pass's generation failed: $(cat "$TMP/cut2.log")"
    [[ -z $(find "$TMP/out" -name '*.retracted-tmp') ]] || fail "temporary files left"
    same_as_reference "$TMP/out" "a kill before the end pass's generation, resumed on $n ranks"
    log "a kill before the end pass's generation resumed on $n ranks: identical"

    # A kill in the end pass: the cut outputs are recorded, no rename done.
    rm -rf "$TMP/out" "$TMP/st"
    rc=0
    killed_at_fault_pause "$TMP/end.log" "$RANKS" before-end-pass-renames dedup \
      "${ARGS[@]}" "${ST[@]}"
    mapfile -t temps < <(find "$TMP/out" -name '*.retracted-tmp' | sort)
    ((${#temps[@]} >= 2)) || fail "fewer than 2 cut outputs pending: ${temps[*]}"
    manifest_has "$TMP/st" '"cut_outputs":\[[0-9]' || fail "the end pass's generation lists no cut output"
    # A cut output changed since the end pass (a byte appended to its
    # temporary file): the resume refuses naming it, on every rank, before
    # renaming any cut output. The byte is taken off again after.
    changed=${temps[0]}
    size=$(stat -c %s "$changed")
    printf 'x' >>"$changed"
    rc=0
    mpi "$RANKS" dedup "${ARGS[@]}" "${ST[@]}" >"$TMP/chg.log" 2>&1 || rc=$?
    ((rc != 0)) || fail "a changed cut output was resumed: $(cat "$TMP/chg.log")"
    grep -q "renaming the outputs cut of their retracted copies.*'$changed' is .* bytes, but the end pass cut the output to .*: it was changed since" \
      "$TMP/chg.log" || fail "the refusal does not name the changed cut output: $(cat "$TMP/chg.log")"
    for t in "${temps[@]}"; do # refused before any rename, on every rank
      [[ -f $t ]] || fail "the refused resume renamed $t over its output"
    done
    truncate -s "$size" "$changed"
    log "a cut output changed since the end pass: exit $rc, named"
    for ((i = 0; i < ${#temps[@]}; i += 2)); do # as a kill among the renames leaves them
      mv "${temps[$i]}" "${temps[$i]%.retracted-tmp}"
    done
    n=$((RANKS % 4 + 1))
    mpi "$n" dedup "${ARGS[@]}" "${ST[@]}" >"$TMP/end2.log" 2>&1 ||
      fail "the resume after the end pass's kill failed: $(cat "$TMP/end2.log")"
    [[ -z $(find "$TMP/out" -name '*.retracted-tmp') ]] || fail "temporary files left"
    same_as_reference "$TMP/out" "a kill in the end pass resumed on $n ranks"
    log "a kill in the end pass (${#temps[@]} cut outputs, half renamed) resumed on $n ranks: identical"

    # The mid-run copy's rows: verify checks them, info counts them.
    mpi "$RANKS" verify --state "$TMP/dst" >"$TMP/vfy.log" 2>&1 ||
      fail "verify of a mid-run state failed: $(cat "$TMP/vfy.log")"
    grep -q "input-order rows checked" "$TMP/vfy.log" ||
      fail "verify checked no input-order row: $(cat "$TMP/vfy.log")"
    "$BIN" info --state "$TMP/dst" | grep -q "kept copies remembered ([0-9]* rows of /input_order/rows" ||
      fail "info shows no rows: $("$BIN" info --state "$TMP/dst")"
    # A saved table damaged in every generation (the first row's tag made 1,
    # which names no record, its slice's checksum fixed): refused by name.
    /usr/bin/python3 - "$TMP/dst" <<'PYEOF' || fail "cannot damage the saved table"
import glob, sys
import h5py, numpy, xxhash
damaged = 0
for path in glob.glob(sys.argv[1] + "/ckpt-*.h5"):
    with h5py.File(path, "r+") as h:
        if "input_order/rows" not in h or h["input_order/rows"].shape[0] == 0:
            continue
        rows = h["input_order/rows"][()]
        offsets = h["input_order/offsets"][()]
        s = int(numpy.searchsorted(offsets, 1, side="left")) - 1  # the slice of row 0
        rows[0] = 1
        h["input_order/rows"][0] = numpy.uint64(1)
        end = 3 * int(offsets[s + 1])
        h["input_order/checksums"][s] = numpy.uint64(
            xxhash.xxh3_64_intdigest(rows[:end].astype("<u8").tobytes()))
        damaged += 1
sys.exit(0 if damaged else 1)
PYEOF
    # The copy's outputs where its run identity names them (the state's
    # generations are read before anything is cut).
    rm -rf "$TMP/out"
    mv "$TMP/dout" "$TMP/out"
    rc=0
    mpi "$RANKS" dedup "${ARGS[@]}" --output "$TMP/out" --state "$TMP/dst" >"$TMP/dmg.log" 2>&1 || rc=$?
    ((rc != 0)) || fail "a damaged saved table was resumed: $(cat "$TMP/dmg.log")"
    grep -q "dataset /input_order/rows, tier-2 slice [0-9]*: the kept copy of tag 1 names no record" "$TMP/dmg.log" ||
      fail "the refusal does not name the damaged row: $(cat "$TMP/dmg.log")"
    log "a damaged saved table: exit $rc, named"
    ;;
  annotate)
    "$PY" "$CORPUS" make "$TMP/in" --files 6 --records 3000 --big-records 12000 --seed 7 --annotate 1
    for form in bloomshard dolma; do
      ARGS=(--input "$TMP/in" --key-field id --kept-copy first --batch-bytes 65536
        --mode annotate --annotate-format "$form" --gzip-level 9 --zstd-level 19)
      mpi 1 dedup "${ARGS[@]}" --output "$TMP/$form-1" --metrics "$TMP/$form-m1.json" \
        >"$TMP/$form-r1.log" 2>&1 || fail "$form, 1-rank run failed: $(cat "$TMP/$form-r1.log")"
      "$PY" "$CORPUS" check-annotate "$TMP/in" "$TMP/$form-1" "$form" ||
        fail "$form, 1 rank: not the first copies in input order"
      mpi "$RANKS" dedup "${ARGS[@]}" --output "$TMP/$form-N" --metrics "$TMP/$form-mN.json" \
        >"$TMP/$form-rN.log" 2>&1 || fail "$form, $RANKS-rank run failed: $(cat "$TMP/$form-rN.log")"
      "$PY" "$CORPUS" check-annotate "$TMP/in" "$TMP/$form-N" "$form" ||
        fail "$form, $RANKS ranks: not the first copies in input order ($(cat "$TMP/$form-rN.log"))"
      diff -r "$TMP/$form-1" "$TMP/$form-N" -x _rejects >/dev/null ||
        fail "$form, $RANKS ranks: attribute files differ from the 1-rank run's bytes"
      [[ -z $(find "$TMP/$form-N" -name '*.retracted-tmp') ]] || fail "$form: temporary files left"
      for field in kept dropped rejected output_bytes; do
        [[ $(json_field "$TMP/$form-m1.json" $field) == $(json_field "$TMP/$form-mN.json" $field) ]] ||
          fail "$form, $RANKS ranks: $field $(json_field "$TMP/$form-mN.json" $field), 1 rank $(json_field "$TMP/$form-m1.json" $field)"
      done
      retracted=$(json_field "$TMP/$form-mN.json" retracted)
      log "$form, $RANKS ranks: $retracted kept copies flagged by the end pass, identical to 1 rank"
      [[ $RANKS == 1 || $retracted -gt 0 ]] || fail "$form: no copy was retracted: the case tests nothing"
    done
    ;;
  end_pass_refusals)
    # The end pass checks what it renames and what it cuts against this
    # run's record: a file changed behind it is a loud error, never a wrong
    # output. Retractions need several ranks; the resumes run on 1.
    "$PY" "$CORPUS" make "$TMP/in" --files 6 --records 3000 --big-records 12000 --seed 7
    ARGS=(--input "$TMP/in" --key-field id --kept-copy first --batch-bytes 65536 --split-min-bytes 65536)
    ST=(--output "$TMP/out" --state "$TMP/st")
    # refused_resume LOG WHAT PATTERN...: a 1-rank resume exits non-zero and
    # its message holds each pattern.
    refused_resume() {
      local log=$1 what=$2 pattern rc=0
      shift 2
      mpi 1 dedup "${ARGS[@]}" "${ST[@]}" >"$log" 2>&1 || rc=$?
      ((rc != 0)) || fail "$what: the resume exited 0: $(cat "$log")"
      for pattern in "$@"; do
        grep -qF -- "$pattern" "$log" || fail "$what: exit $rc without '$pattern': $(cat "$log")"
      done
      log "$what: exit $rc, named"
    }
    # 1. Killed before the renames; one temporary file then grew a byte.
    killed_at_fault_pause "$TMP/end.log" "$RANKS" before-end-pass-renames dedup \
      "${ARGS[@]}" "${ST[@]}"
    mapfile -t temps < <(find "$TMP/out" -name '*.retracted-tmp' | sort)
    ((${#temps[@]} >= 1)) || fail "no cut output pending: $(cat "$TMP/end.log")"
    grown=${temps[0]}
    out=${grown%.retracted-tmp}
    before=$(cksum <"$out")
    printf 'x' >>"$grown"
    refused_resume "$TMP/grown.log" "a grown temporary file" "'$grown' is " \
      "it was changed since" "renaming the outputs cut of their retracted copies failed"
    [[ $(cksum <"$out") == "$before" && -f $grown ]] ||
      fail "the refused resume renamed the changed temporary file over its output"
    # 2. Killed before the end pass's generation; an output to be cut lost
    # its first line's first byte (same length): the cut, walking the input
    # beside it, finds a line the input does not have.
    rm -rf "$TMP/out" "$TMP/st"
    killed_at_fault_pause "$TMP/cut.log" "$RANKS" before-end-pass-checkpoint dedup \
      "${ARGS[@]}" "${ST[@]}" --checkpoint-rounds 2
    mapfile -t temps < <(find "$TMP/out" -name '*.retracted-tmp' ! -name '*.gz.*' ! -name '*.zst.*' | sort)
    ((${#temps[@]} >= 1)) || fail "no plain output to be cut: $(find "$TMP/out" -name '*.retracted-tmp')"
    out=${temps[0]%.retracted-tmp}
    printf '#' | dd of="$out" bs=1 count=1 conv=notrunc status=none
    before=$(cksum <"$out")
    refused_resume "$TMP/damaged.log" "a damaged output to be cut" \
      "leaving retracted copies out of '$out'" "leaving retracted copies out of the outputs failed"
    [[ $(cksum <"$out") == "$before" ]] || fail "the refused resume changed the damaged output"
    # 3. The same kill; a .zst output to be cut replaced by a valid one of
    # the same length that lacks its retracted copies (its first line, then
    # a skippable frame as padding): the line-by-line rewrite counts the
    # retracted copies it found and refuses. The padding covers what the
    # resume writes again after the last checkpoint, the same bytes only
    # if the outputs were compressed in the rounds (a stored output resumes
    # compressed): --defer-compression off.
    rm -rf "$TMP/out" "$TMP/st"
    killed_at_fault_pause "$TMP/zst.log" "$RANKS" before-end-pass-checkpoint dedup \
      "${ARGS[@]}" "${ST[@]}" --checkpoint-rounds 2 --defer-compression off
    # The one to damage is one that lost lines (a retracted copy) in its cut.
    out=""
    while IFS= read -r t; do
      if (($(zstd -qdc "${t%.retracted-tmp}" | wc -l) > $(zstd -qdc "$t" | wc -l))); then
        out=${t%.retracted-tmp}
        break
      fi
    done < <(find "$TMP/out" -name '*.zst.retracted-tmp' | sort)
    [[ -n $out ]] || fail "no .zst output to be cut: $(find "$TMP/out" -name '*.retracted-tmp')"
    zstd -qdc "$out" >"$TMP/all.jsonl" # not piped into head: zstd's SIGPIPE would fail the pipe
    head -n 1 "$TMP/all.jsonl" | zstd -qc >"$TMP/one.zst"
    "$PY" -c 'import os, struct, sys
pad = os.path.getsize(sys.argv[2]) - os.path.getsize(sys.argv[1]) - 8
assert pad >= 0, "the output is too short to pad"
open(sys.argv[1], "ab").write(struct.pack("<II", 0x184D2A50, pad) + bytes(pad))' "$TMP/one.zst" "$out"
    cp "$TMP/one.zst" "$out"
    refused_resume "$TMP/zst2.log" "a .zst output without its retracted copies" \
      "output '$out' holds 0 of its" "retracted copies: it does not match this run"
    # 4. The same output holding one line longer than the run's line limit
    # (16 MiB): refused by line number, not read past.
    "$PY" -c 'import os, struct, subprocess, sys
z = subprocess.run(["zstd", "-qc"], input=b"x" * (17 << 20) + b"\n", capture_output=True, check=True).stdout
pad = os.path.getsize(sys.argv[1]) - len(z) - 8
assert pad >= 0, "the output is too short to pad"
open(sys.argv[1], "wb").write(z + struct.pack("<II", 0x184D2A50, pad) + bytes(pad))' "$out"
    refused_resume "$TMP/long.log" "a .zst output with a line over the limit" \
      "output '$out' line 1 is longer than allowed"
    ;;
  end_pass_map)
    ((RANKS > 1)) || fail "end_pass_map needs retractions: run it on 2 or more ranks"
    reference
    mpi "$RANKS" dedup "${ARGS[@]}" --output "$TMP/outN" --metrics "$TMP/mN.json" \
      >"$TMP/rN.log" 2>&1 || fail "$RANKS-rank run failed: $(cat "$TMP/rN.log")"
    same_as_reference "$TMP/outN" "$RANKS ranks"
    by_map=$(json_field "$TMP/mN.json" end_pass_outputs_by_map)
    "$PY" -c 'import json,sys; sys.exit(0 if json.load(open(sys.argv[1]))["end_pass_seconds"] > 0 else 1)' \
      "$TMP/mN.json" || fail "end_pass_seconds is not above 0: $(cat "$TMP/mN.json")"
    log "$RANKS ranks: $by_map output(s) placed by their offset maps"
    ((by_map > 0)) || fail "no output's retracted lines were placed by its offset map"
    # A resumed end pass holds no map (no output written from its first
    # byte by that process: with a checkpoint every round every input is
    # done in the last generation): the walk places the lines, the same bytes.
    ST=(--output "$TMP/outS" --state "$TMP/st" --checkpoint-rounds 1)
    killed_at_fault_pause "$TMP/kill.log" "$RANKS" before-end-pass-checkpoint dedup \
      "${ARGS[@]}" "${ST[@]}"
    mpi "$RANKS" dedup "${ARGS[@]}" "${ST[@]}" --metrics "$TMP/mS.json" >"$TMP/rS.log" 2>&1 ||
      fail "the resume failed: $(cat "$TMP/rS.log")"
    same_as_reference "$TMP/outS" "resumed before the end pass's generation"
    [[ $(json_field "$TMP/mS.json" end_pass_outputs_by_map) == 0 ]] ||
      fail "the resume placed lines by a map it cannot have: $(cat "$TMP/mS.json")"
    [[ $(json_field "$TMP/mS.json" retracted) -gt 0 ]] ||
      fail "the resume cut nothing: the case tests nothing"
    ;;
  join_refusal)
    "$PY" "$CORPUS" make "$TMP/in" --files 6 --records 3000 --big-records 12000 --seed 7
    ARGS=(--input "$TMP/in" --key-field id --kept-copy first --batch-bytes 65536 --split-min-bytes 65536
      --output "$TMP/out" --state "$TMP/st")
    killed_at_fault_pause "$TMP/join.log" "$RANKS" before-join dedup "${ARGS[@]}" \
      --checkpoint-rounds 1
    part=$TMP/out/_ranges/a-big.jsonl.range-1
    [[ -s $part ]] || fail "no range part to damage: $(cat "$TMP/join.log")"
    manifest_has "$TMP/st" '"retracted":\[[0-9]' || fail "no retracted record in a range: the case tests nothing"
    printf '#' | dd of="$part" bs=1 count=1 conv=notrunc status=none
    rc=0
    mpi "$RANKS" dedup "${ARGS[@]}" >"$TMP/resume.log" 2>&1 || rc=$?
    ((rc != 0)) || fail "a damaged range part was joined: $(cat "$TMP/resume.log")"
    grep -qF "joining split input '$TMP/in/a-big.jsonl': the output part '$part' has a line at byte 0" \
      "$TMP/resume.log" || fail "exit $rc without naming the part: $(cat "$TMP/resume.log")"
    [[ ! -e $TMP/out/_ranges || -f $part ]] || fail "the refused join removed the part"
    log "a damaged range part: exit $rc, named"
    # The same damage while the range is still read, in a run with
    # --kept-copy arrival (a split input still keeps its own file order, and
    # the owners' memory of a part's kept copies is rebuilt from the part at
    # a resume; input order saves its table instead): killed after the
    # checkpoints of rounds 1 and 2 (paused before round 3's agreement),
    # the resume refuses before its first round.
    rm -rf "$TMP/out" "$TMP/st"
    FO=(--input "$TMP/in" --key-field id --kept-copy arrival --batch-bytes 65536
      --split-min-bytes 65536 --output "$TMP/out" --state "$TMP/st")
    killed_at_fault_pause "$TMP/first.log" "$RANKS" before-round-agreement:3 dedup \
      "${FO[@]}" --checkpoint-rounds 1
    committed=$(/usr/bin/python3 -c 'import h5py, json, sys
m = json.loads(h5py.File(sys.argv[1], "r")["manifest_json"][()])
print(next(p["ranges"][1]["output_length"] for p in m["inputs"] if p["relative_path"] == "a-big.jsonl"))' \
      "$(latest "$TMP/st")") || fail "cannot read the committed length of range 1"
    ((committed > 0)) || fail "range 1 has no committed line to rebuild from: the case tests nothing"
    printf '#' | dd of="$part" bs=1 count=1 conv=notrunc status=none
    rc=0
    mpi "$RANKS" dedup "${FO[@]}" >"$TMP/rebuild.log" 2>&1 || rc=$?
    ((rc != 0)) || fail "a damaged range part was resumed from: $(cat "$TMP/rebuild.log")"
    grep -qF "resuming file order: joining split input '$TMP/in/a-big.jsonl': the output part '$part' has a line at byte 0" \
      "$TMP/rebuild.log" || fail "exit $rc without naming the part: $(cat "$TMP/rebuild.log")"
    log "a damaged range part at a resume: exit $rc, named"
    ;;
  refusals)
    # --kept-copy first where it cannot apply yet is refused before any
    # work (exit 2, naming the option), never run quietly in arrival order.
    "$PY" "$CORPUS" make "$TMP/in" --files 2 --records 200 --big-records 200 --seed 7
    for extra in "--state $TMP/st --window 4 --slot-records 100" "--unit paragraph --split-inputs auto" \
      "--mode annotate --unit paragraph --split-inputs auto" "--unit minhash" \
      "BOGUS"; do
      args=(--input "$TMP/in" --key-field id --output "$TMP/out" --kept-copy first)
      # shellcheck disable=SC2206
      [[ $extra == BOGUS ]] && args[-1]=sometimes || args+=($extra)
      rc=0
      mpi "$RANKS" dedup "${args[@]}" >"$TMP/r.log" 2>&1 || rc=$?
      [[ $rc == 2 ]] || fail "--kept-copy with '$extra': exit $rc, want 2 ($(cat "$TMP/r.log"))"
      grep -q -- "--kept-copy" "$TMP/r.log" || fail "'$extra': the refusal names no option: $(cat "$TMP/r.log")"
      [[ ! -e $TMP/out && ! -e $TMP/st ]] || fail "'$extra': the refused run wrote an output or state"
    done
    ;;
  *) harness_usage "unknown case $CASE" ;;
esac
log "ok in $SECONDS s"
