#!/usr/bin/env bash
# End-to-end cases of the commands around a saved state (docs/commands.md):
# `bloomshard query` and `bloomshard merge`, on the real binary under
# mpiexec, checked by membership_oracle.py (keys computed from the inputs
# in Python, no bloomshard code) and by byte comparisons.
#
# usage: commands_case.sh --case NAME --ranks N --bin BLOOMSHARD --oracle-dir DIR
#                         [--mpiexec MPIEXEC] [--np-flag -n] [--python PYTHON3]
# cases: query   a state from a 3-file history (2 ranks); a probe corpus (new
#                records, a re-crawled history file, hand-made lines with bad
#                lines and repeated keys) queried on N ranks: --emit hits and
#                --emit misses equal the oracle's sets; three queries at once
#                while another process holds the state's LOCK (as a live dedup
#                attempt does) give the same outputs; a conflicting --key-field
#                is refused naming it; the state dir is byte for byte unchanged
#        merge   states A and B from two crawls (2 and 1 ranks), merged on N
#                ranks into C: C answers every probe like a state AB built from
#                both crawls together (query outputs identical and equal to the
#                oracle), holds as many exact keys, an incremental dedup on C
#                keeps exactly what one on AB keeps; A and B unchanged; a
#                state with another key field or slice count is refused naming
#                the difference; an existing --into is refused
#        merge_crash  merges SIGKILLed (all ranks) at random moments: after each
#                kill there is no C or a complete C that verifies; a merge run
#                to its end then gives the answers of AB
#        v1      the format-1 fixture (tests/data/v1_state) queried, and merged
#                with a state of this build into a format-2 state
#        plan    `bloomshard plan` against a measured dedup run (peak RSS, state
#                bytes, tier-2 lookups within 25%); dedup prints the plan line.
#                --plan-corpus DIR reads the corpus plan_corpus.py made into DIR
#                (facts in DIR.json; ctest's e2e.plan_corpus fixture, made once
#                for every rank count) instead of making it (~8 s of Python)
# Set KEEP_TMP=1 to keep the temp dir for a post-mortem.
source "$(dirname "${BASH_SOURCE[0]}")/../harness.sh"
harness_parse commands_case.sh \
  "--case=CASE* --ranks=RANKS:1 --bin=BIN* --oracle-dir=ORACLE_DIR* --plan-corpus=PLAN_CORPUS" \
  "$@"
MEMBERSHIP="$ORACLE_DIR/membership_oracle.py"
[[ -f $MEMBERSHIP ]] || harness_usage "no membership_oracle.py in --oracle-dir $ORACLE_DIR"
harness_tmp "cmd-$CASE-$RANKS" "$CASE, $RANKS ranks"
HOLDER_PID=""
harness_on_exit '[[ -z $HOLDER_PID ]] || kill "$HOLDER_PID" 2>/dev/null'

run_ok() { # LOG RANKS args...: must exit 0
  local logf=$1 n=$2
  shift 2
  local rc=0
  mpi "$n" "$@" >"$logf" 2>&1 || rc=$?
  [[ $rc == 0 ]] || { cat "$logf" >&2; fail "'$*' on $n ranks exited $rc (want 0)"; }
}

run_refused() { # LOG RC WORDS RANKS args...: must exit RC and the log must name WORDS
  local logf=$1 want=$2 words=$3 n=$4
  shift 4
  local rc=0
  mpi "$n" "$@" >"$logf" 2>&1 || rc=$?
  [[ $rc == "$want" ]] || { cat "$logf" >&2; fail "'$*' exited $rc (want $want)"; }
  local text
  text=$(cat "$logf")
  [[ $text == *"$words"* ]] || { cat "$logf" >&2; fail "the refusal does not say '$words'"; }
}

# digest DIR: one line per file (name and SHA-256), sorted: byte-for-byte identity.
digest() { (cd "$1" && find . -type f -print0 | sort -z | xargs -0 sha256sum); }

# same_outputs A B: the mirrored outputs are identical (the run marker, the
# metrics and the lock file differ between runs by design).
# Reject files are compared by their lines: a file's name carries the
# generation its run started from (a --kept-copy first state's end pass adds
# one, so two states of the same keys may stand at other generations).
same_outputs() {
  diff -r -x _bloomshard_run.json -x metrics.json -x _bloomshard.lock -x _rejects "$1" "$2" \
    >/dev/null || fail "outputs $1 and $2 differ"
  cmp -s <(cat "$1"/_rejects/* 2>/dev/null | sort) <(cat "$2"/_rejects/* 2>/dev/null | sort) ||
    fail "the reject lines of $1 and $2 differ"
}

synth() { # DIR synth-options...
  local dir=$1
  shift
  "$BIN" synth --out "$dir" "$@" >/dev/null
}

# probe_corpus DIR HISTORY_FILE...: new records, re-crawled history files,
# and hand-made lines: bad lines, keys repeated inside one file, a key of
# the history with other payload.
probe_corpus() {
  local dir=$1
  shift
  synth "$dir/new" --records 6000 --dup-rate 0.3 --files 2 --compress gz --seed 77
  local i=0
  local f base
  for f in "$@"; do
    base=$(basename "$f")
    cp "$f" "$dir/recrawl-$i.${base#*.}"
    i=$((i + 1))
  done
  local first_key
  first_key=$("$PY" -c 'import gzip,json,subprocess,sys
p=sys.argv[1]
data=subprocess.run(["zstd","-dcq",p],check=True,capture_output=True).stdout if p.endswith(".zst") else (gzip.open(p).read() if p.endswith(".gz") else open(p,"rb").read())
print(json.loads(data.splitlines()[0])["id"])' "$1")
  {
    echo "{\"id\":\"$first_key\",\"text\":\"same key, other payload\"}"
    echo '{"id":"never-seen-1","text":"a"}'
    echo 'this is not json'
    echo '{"text":"no id field"}'
    echo '{"id":"never-seen-1","text":"repeat of a miss"}'
    echo "{\"id\":\"$first_key\",\"text\":\"repeat of a hit\"}"
    echo '{"id":""}'
  } >"$dir/hand.jsonl"
}

# query_check STATE OUT EMIT RANKS HISTORY...: a query and its oracle.
query_check() {
  local state=$1 out=$2 emit=$3 n=$4
  shift 4
  local hist=()
  for h in "$@"; do hist+=(--history "$h"); done
  run_ok "$out.log" "$n" query --state "$state" --input "$TMP/probe" --output "$out" \
    --emit "$emit" --metrics "$out/metrics.json"
  "$PY" "$MEMBERSHIP" "${hist[@]}" --query-input "$TMP/probe" --output "$out" --emit "$emit" \
    --metrics "$out/metrics.json" || fail "query --emit $emit disagrees with the oracle"
}

case_query() {
  synth "$TMP/hist" --records 20000 --dup-rate 0.25 --files 3 --compress zst --seed 5
  run_ok "$TMP/dedup.log" 2 dedup --input "$TMP/hist" --output "$TMP/out-hist" \
    --state "$TMP/state" --capacity 5000 --fpr 0.3 --slices 16
  probe_corpus "$TMP/probe" "$TMP/hist/part-00001.jsonl.zst"
  local before
  before=$(digest "$TMP/state")

  query_check "$TMP/state" "$TMP/q-hits" hits "$RANKS" "$TMP/hist"
  query_check "$TMP/state" "$TMP/q-misses" misses "$RANKS" "$TMP/hist"
  # The oracle can say no: the hits are not the misses.
  if "$PY" "$MEMBERSHIP" --history "$TMP/hist" --query-input "$TMP/probe" --output "$TMP/q-hits" \
    --emit misses >/dev/null 2>&1; then
    fail "the oracle accepts the hits as misses"
  fi
  # A loose filter (--fpr 0.3, 16 slices, capacity below the keys: layers):
  # false positives happen and cost no answer.
  local fp
  fp=$("$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))["false_positives"])' \
    "$TMP/q-hits/metrics.json")
  [[ $fp -gt 0 ]] || fail "no false positive in the probe: the test does not reach tier 2's 'no'"
  log "hits and misses agree with the oracle ($fp false positives confirmed absent)"

  # Three queries at once while another process holds the state's lock the
  # way a live dedup attempt does (a write lock, the strongest).
  "$PY" -c 'import fcntl,os,sys,time
fd=os.open(sys.argv[1], os.O_RDWR|os.O_CREAT)
fcntl.lockf(fd, fcntl.LOCK_EX)
open(sys.argv[2],"w").close()
time.sleep(600)' "$TMP/state/LOCK" "$TMP/locked" &
  HOLDER_PID=$!
  for _ in $(seq 100); do [[ -e $TMP/locked ]] && break; sleep 0.1; done
  [[ -e $TMP/locked ]] || fail "the lock holder did not start"
  before=$(digest "$TMP/state") # LOCK was created by the holder
  local pids=() k
  for k in 1 2 3; do
    mpi "$RANKS" query --state "$TMP/state" --input "$TMP/probe" --output "$TMP/c$k" \
      >"$TMP/c$k.log" 2>&1 &
    pids+=($!)
  done
  for k in 1 2 3; do
    wait "${pids[$((k - 1))]}" || { cat "$TMP/c$k.log" >&2; fail "concurrent query $k failed"; }
    same_outputs "$TMP/q-hits" "$TMP/c$k"
  done
  kill "$HOLDER_PID" && wait "$HOLDER_PID" 2>/dev/null || true
  HOLDER_PID=""
  log "three concurrent queries under a held LOCK gave the same hits"

  run_refused "$TMP/conflict.log" 2 "key field" "$RANKS" query --state "$TMP/state" \
    --input "$TMP/probe" --output "$TMP/q-conflict" --key-field url
  run_refused "$TMP/nostate.log" 1 "no checkpoint" "$RANKS" query --state "$TMP/out-hist" \
    --input "$TMP/probe" --output "$TMP/q-nostate"
  [[ $(digest "$TMP/state") == "$before" ]] || fail "the state dir changed during the queries"
  log "the state dir is byte for byte unchanged"
}

info_field() { # STATE FIELD: one field of `info --json`
  "$BIN" info --state "$1" --json | "$PY" -c 'import json,sys; print(json.load(sys.stdin)[sys.argv[1]])' "$2"
}

# Two crawls under one parent (so that one dedup can read both), the second
# with a re-crawled file of the first: keys in both states.
two_crawls() { # RECORDS
  synth "$TMP/crawls/a" --records "$1" --dup-rate 0.25 --files 2 --compress zst --seed 21
  synth "$TMP/crawls/b" --records "$1" --dup-rate 0.35 --files 2 --compress gz --seed 22
  cp "$TMP/crawls/a/part-00000.jsonl.zst" "$TMP/crawls/b/recrawl.jsonl.zst"
  # A and B with other Bloom geometries (capacity, FPR): tier 1 is rebuilt.
  run_ok "$TMP/dedup-a.log" 2 dedup --input "$TMP/crawls/a" --output "$TMP/out-a" \
    --state "$TMP/A" --slices 16 --capacity 3000 --fpr 0.3
  run_ok "$TMP/dedup-b.log" 1 dedup --input "$TMP/crawls/b" --output "$TMP/out-b" \
    --state "$TMP/B" --slices 16 --capacity 8000 --fpr 0.1
  run_ok "$TMP/dedup-ab.log" 2 dedup --input "$TMP/crawls" --output "$TMP/out-ab" \
    --state "$TMP/AB" --slices 16 --capacity 3000 --fpr 0.3
}

case_merge() {
  two_crawls 12000
  local digest_a digest_b
  digest_a=$(digest "$TMP/A")
  digest_b=$(digest "$TMP/B")
  run_ok "$TMP/merge.log" "$RANKS" merge --from "$TMP/A" --from "$TMP/B" --into "$TMP/C"
  cat "$TMP/merge.log"
  [[ $(info_field "$TMP/C" state) == finished ]] || fail "C is not a finished state"
  [[ $(info_field "$TMP/C" format_version) == 2 ]] || fail "C is not format 2"
  # docs/commands.md: C is generation 1 (a new state, not a continuation).
  [[ $(info_field "$TMP/C" generation) == 1 ]] || fail "C is generation $(info_field "$TMP/C" generation), not 1"
  local keys_c keys_ab
  keys_c=$(info_field "$TMP/C" exact_keys)
  keys_ab=$(info_field "$TMP/AB" exact_keys)
  [[ $keys_c == "$keys_ab" ]] || fail "C holds $keys_c exact keys, AB $keys_ab"
  run_ok "$TMP/verify.log" "$RANKS" verify --state "$TMP/C"
  log "C: $keys_c exact keys like AB, finished, format 2, generation 1, verifies"

  probe_corpus "$TMP/probe" "$TMP/crawls/a/part-00001.jsonl.zst" "$TMP/crawls/b/part-00000.jsonl.gz"
  query_check "$TMP/C" "$TMP/q-c" hits "$RANKS" "$TMP/crawls/a" "$TMP/crawls/b"
  query_check "$TMP/AB" "$TMP/q-ab" hits "$RANKS" "$TMP/crawls/a" "$TMP/crawls/b"
  same_outputs "$TMP/q-c" "$TMP/q-ab"
  query_check "$TMP/C" "$TMP/q-cm" misses "$RANKS" "$TMP/crawls/a" "$TMP/crawls/b"
  log "C answers every probe like AB (and like the oracle)"

  # Today's crawl, incrementally on C and on AB: the same records kept.
  synth "$TMP/today/new" --records 5000 --dup-rate 0.2 --files 2 --compress none --seed 23
  cp "$TMP/crawls/b/part-00001.jsonl.gz" "$TMP/today/recrawl.jsonl.gz"
  run_ok "$TMP/inc-c.log" "$RANKS" dedup --input "$TMP/today" --output "$TMP/inc-c" --state "$TMP/C"
  run_ok "$TMP/inc-ab.log" "$RANKS" dedup --input "$TMP/today" --output "$TMP/inc-ab" --state "$TMP/AB"
  local text
  text=$(cat "$TMP/inc-c.log")
  [[ $text == *"incremental run"* ]] || { cat "$TMP/inc-c.log"; fail "dedup did not run incrementally on C"; }
  same_outputs "$TMP/inc-c" "$TMP/inc-ab"
  log "an incremental dedup on C keeps exactly what one on AB keeps"
  [[ $(digest "$TMP/A") == "$digest_a" && $(digest "$TMP/B") == "$digest_b" ]] ||
    fail "a source state changed during the merge"

  # Refusals, each naming what differs.
  run_ok "$TMP/dedup-d.log" 1 dedup --input "$TMP/crawls/a" --output "$TMP/out-d" \
    --state "$TMP/D" --slices 16 --key-field url
  run_refused "$TMP/r1.log" 2 "key field differs" "$RANKS" merge --from "$TMP/A" --from "$TMP/D" \
    --into "$TMP/E"
  run_ok "$TMP/dedup-f.log" 1 dedup --input "$TMP/crawls/a" --output "$TMP/out-f" \
    --state "$TMP/F" --slices 32
  run_refused "$TMP/r2.log" 2 "slice count differs" "$RANKS" merge --from "$TMP/A" \
    --from "$TMP/F" --into "$TMP/E"
  run_refused "$TMP/r3.log" 2 "exists" "$RANKS" merge --from "$TMP/A" --from "$TMP/B" \
    --into "$TMP/C"
  [[ ! -e $TMP/E ]] || fail "a refused merge left --into behind"
  log "refusals name the key field, the slice count, an existing --into"
}

case_merge_crash() {
  two_crawls 60000
  local expect
  expect=$(info_field "$TMP/AB" exact_keys)
  mkdir -p "$TMP/bin"
  ln -s "$(realpath "$BIN")" "$TMP/bin/bs-merge"
  # Kill moments spread over a whole merge's time (mpiexec start included).
  local t0 full_ms
  t0=$(date +%s%N)
  run_ok "$TMP/full.log" "$RANKS" merge --from "$TMP/A" --from "$TMP/B" --into "$TMP/C-timing"
  full_ms=$(( ($(date +%s%N) - t0) / 1000000 + 100 ))
  local kills=0 complete=0 none=0 i
  for i in $(seq 1 8); do
    rm -rf "$TMP/C"
    "$MPIEXEC" "$NP_FLAG" "$RANKS" --oversubscribe "$TMP/bin/bs-merge" merge --from "$TMP/A" \
      --from "$TMP/B" --into "$TMP/C" >"$TMP/kill-$i.log" 2>&1 &
    local launcher=$!
    local delay_ms=$(( RANDOM % full_ms + 50 ))
    sleep "$(printf '0.%03d' $((delay_ms % 1000)))"
    sleep $((delay_ms / 1000))
    # Every process of this attempt: mpiexec and its ranks (own process groups).
    local pids=()
    mapfile -t pids < <(pgrep -f -- "$TMP/bin/bs-merge" || true)
    ((${#pids[@]} == 0)) || kill -KILL "${pids[@]}" 2>/dev/null || true
    wait "$launcher" 2>/dev/null || true
    for _ in $(seq 50); do
      mapfile -t pids < <(pgrep -f -- "$TMP/bin/bs-merge" || true)
      ((${#pids[@]} == 0)) && break
      sleep 0.1
    done
    kills=$((kills + 1))
    if [[ -e $TMP/C ]]; then
      run_ok "$TMP/kv-$i.log" 1 verify --state "$TMP/C"
      [[ $(info_field "$TMP/C" state) == finished ]] || fail "kill $i left an unfinished C"
      [[ $(info_field "$TMP/C" exact_keys) == "$expect" ]] || fail "kill $i left a C with other keys"
      complete=$((complete + 1))
    else
      none=$((none + 1))
    fi
  done
  log "$kills kills within $full_ms ms: $none left no C, $complete a complete one"
  rm -rf "$TMP/C"
  run_ok "$TMP/final.log" "$RANKS" merge --from "$TMP/A" --from "$TMP/B" --into "$TMP/C"
  [[ $(info_field "$TMP/C" exact_keys) == "$expect" ]] || fail "the final merge holds other keys"
  [[ ! -e $TMP/.C.merge-tmp ]] || fail "the staging dir of killed merges is left behind"
  probe_corpus "$TMP/probe" "$TMP/crawls/a/part-00001.jsonl.zst"
  query_check "$TMP/C" "$TMP/q-c" hits "$RANKS" "$TMP/crawls/a" "$TMP/crawls/b"
  log "the merge after the kills answers like the oracle"
}

# Format-1 states keep working: the checked-in fixture's finished state
# (tests/data/v1_state) is queried, and merged with a state of this build.
case_v1() {
  local fix=$ORACLE_DIR/../data/v1_state
  tar -C "$TMP" -xzf "$fix/v1_state.tar.gz"
  bash "$fix/make_v1_inputs.sh" "$BIN" "$TMP"
  local before
  before=$(digest "$TMP/state-fin")
  probe_corpus "$TMP/probe" "$TMP/in/hist/part-00001.jsonl.zst" "$TMP/in/today/part-00000.jsonl.gz"
  query_check "$TMP/state-fin" "$TMP/q-v1" hits "$RANKS" "$TMP/in/hist"
  run_ok "$TMP/dedup-t.log" 1 dedup --input "$TMP/in/today" --output "$TMP/out-t" \
    --state "$TMP/T" --slices "$(info_field "$TMP/state-fin" slices)"
  run_ok "$TMP/merge.log" "$RANKS" merge --from "$TMP/state-fin" --from "$TMP/T" --into "$TMP/C"
  [[ $(info_field "$TMP/C" format_version) == 2 ]] || fail "the merge did not write format 2"
  query_check "$TMP/C" "$TMP/q-c" hits "$RANKS" "$TMP/in/hist" "$TMP/in/today"
  query_check "$TMP/C" "$TMP/q-cm" misses "$RANKS" "$TMP/in/hist" "$TMP/in/today"
  [[ $(digest "$TMP/state-fin") == "$before" ]] || fail "the format-1 state changed"
  log "a format-1 state answers queries and merges into a format-2 state"
}

# The sizing plan against a measured run: a corpus whose duplicates repeat
# uniformly drawn earlier keys (plan_corpus.py), the plan for its facts, then
# dedup with the plan's recommended --capacity and --slices: peak RSS, state
# bytes and tier-2 lookups within 25% of the plan; dedup printed the plan's
# one-line summary once (rank 0).
case_plan() {
  local facts corpus=$TMP/corpus
  if [[ -n $PLAN_CORPUS ]]; then
    corpus=$PLAN_CORPUS
    facts=$(cat "$PLAN_CORPUS.json") || fail "no facts of the plan corpus at $PLAN_CORPUS.json"
  else
    facts=$("$PY" "$ORACLE_DIR/plan_corpus.py" "$corpus" 300000 0.35 4 7)
  fi
  local records unique key_bytes record_bytes
  read -r records unique key_bytes record_bytes < <("$PY" -c 'import json,sys
f=json.loads(sys.argv[1]); print(f["records"], f["unique"], f["key_bytes"], f["record_bytes"])' "$facts")
  local plan_args=(--records "$records" --unique-fraction "$("$PY" -c "print($unique / $records)")"
    --key-bytes "$key_bytes" --record-bytes "$record_bytes" --ranks "$RANKS" --batch-bytes 65536
    --layout lockstep) # plain inputs: dedup reads them in lockstep, --state or not
  "$BIN" plan "${plan_args[@]}" >"$TMP/plan.txt" || fail "plan failed"
  "$BIN" plan "${plan_args[@]}" --json >"$TMP/plan.json" || fail "plan --json failed"
  cat "$TMP/plan.txt"
  local capacity slices
  read -r capacity slices < <("$PY" -c 'import json,sys
p=json.load(open(sys.argv[1])); print(p["recommended"]["capacity"], p["recommended"]["slices"])' "$TMP/plan.json")
  run_ok "$TMP/dedup.log" "$RANKS" dedup --input "$corpus" --output "$TMP/out" \
    --state "$TMP/state" --capacity "$capacity" --slices "$slices" --batch-bytes 65536 \
    --metrics "$TMP/metrics.json"
  local lines
  lines=$(grep -c "bloomshard dedup: plan: $RANKS ranks" "$TMP/dedup.log" || true)
  [[ $lines == 1 ]] || { cat "$TMP/dedup.log"; fail "dedup printed the plan line $lines times (want 1)"; }
  "$PY" - "$TMP/plan.json" "$TMP/metrics.json" "$TMP/state" <<'PYEOF' || fail "the plan is more than 25% off"
import glob, json, os, sys
plan = json.load(open(sys.argv[1]))
top = json.load(open(sys.argv[2]))
flat = {}
def walk(d):
    for k, v in d.items():
        walk(v) if isinstance(v, dict) else flat.setdefault(k, v)
walk(top)
state = sum(os.path.getsize(p) for p in glob.glob(os.path.join(sys.argv[3], "*.h5")))
pairs = [("peak RSS per rank", plan["per_rank"]["peak_rss_bytes"], flat["max_rss_bytes"]),
         ("state bytes", plan["state_bytes"], state),
         ("tier-2 lookups", plan["tier2_lookups"], flat["tier2_lookups"])]
bad = False
for name, want, got in pairs:
    ratio = want / got
    print(f"{name}: plan {want:.0f}, measured {got:.0f}, plan/measured {ratio:.3f}")
    bad |= not 0.75 <= ratio <= 1.25
sys.exit(1 if bad else 0)
PYEOF
  log "plan and measured run agree within 25%"
}

case "$CASE" in
  query) case_query ;;
  merge) case_merge ;;
  merge_crash) case_merge_crash ;;
  v1) case_v1 ;;
  plan) case_plan ;;
  *) fail "unknown case '$CASE'" ;;
esac
log "ok"
