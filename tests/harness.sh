# The one shell library of the test scripts (e2e, faults, cli, slurm,
# multihost; sourced, never run): arguments, the temp dir and its cleanup,
# fail/log, and how a script launches the real binary under mpiexec.
#
# A script reads, in this order:
#   source "$(dirname "${BASH_SOURCE[0]}")/../harness.sh"
#   harness_parse my_script.sh "BIN --case=CASE* --ranks=RANKS:1" "$@"
#   harness_tmp "my-$CASE" "my case, $RANKS ranks" # TMP, removed on any exit
#
# Contract of the pieces:
# - harness_parse reads the script's spec: a bare NAME takes the next
#   positional word into NAME (NAME? where it may be missing), "--opt=VAR"
#   takes a value ("--opt=VAR*": a required one, "--opt=VAR:D": D unless
#   given), "--opt=VAR!" is a flag that sets VAR=1 (else 0). Positional words come before the first option. Every
#   script also takes the launch options --mpiexec M, --np-flag F and
#   --python P (or --mpiexec=M ...; defaults mpiexec, -n, python3) into
#   MPIEXEC, NP_FLAG and PY. BIN, when given, must be an executable and is
#   made absolute. Anything else, a missing word or a missing required
#   option ends the script with exit 2, naming it.
# - harness_tmp makes TMP and traps EXIT (and INT/TERM as exit 130/143):
#   processes under the marker dir are killed, the exit hooks run in the
#   order they were added, then TMP is removed (KEEP_TMP=1 keeps it and says
#   where). The script's exit status is kept.
# - fail prints "FAIL [label]: message" on stderr, runs the fail hooks (a
#   log dump, say) and exits 1.
# - The checks several scripts make live here once: launching (mpi,
#   dedup_1rank), killing (kill_job, killed_at_fault_pause, after_a_commit)
#   and comparing outputs with a reference run's (same_output_bytes).
set -euo pipefail

HARNESS_SCRIPT=${HARNESS_SCRIPT:-$(basename "$0")}
HARNESS_LABEL=${HARNESS_LABEL:-$HARNESS_SCRIPT}
MPIEXEC=mpiexec NP_FLAG=-n PY=python3
POSITIONAL=()
HARNESS_EXIT_HOOKS=()
HARNESS_FAIL_HOOKS=()
TMP=""
MARK=""

# harness_parse SCRIPT SPEC ARGS...: see the contract above.
harness_parse() {
  HARNESS_SCRIPT=$1
  local spec=$2 word opt var value
  shift 2
  local -A takes=() flags=() required=()
  local names=() optional=()
  for word in $spec; do
    if [[ $word != --* ]]; then
      names+=("${word%\?}")
      [[ $word != *\? ]] || optional+=("${word%\?}")
      continue
    fi
    opt=${word%%=*} var=${word#*=}
    case $var in
      *!) flags[$opt]=${var%!} ;;
      *\*) takes[$opt]=${var%\*} required[$opt]=${var%\*} ;;
      *:*) takes[$opt]=${var%%:*} ;;
      *) takes[$opt]=$var ;;
    esac
    # Every option's variable is set: to its default, else kept as the
    # script set it, else empty (a flag: 0).
    if [[ $var == *:* ]]; then
      printf -v "${var%%:*}" '%s' "${var#*:}"
    elif [[ $var == *! && ! -v ${var%!} ]]; then
      printf -v "${var%!}" 0
    elif [[ $var != *! && ! -v ${var%\*} ]]; then
      printf -v "${var%\*}" ''
    fi
  done
  takes[--mpiexec]=MPIEXEC takes[--np-flag]=NP_FLAG takes[--python]=PY
  POSITIONAL=()
  while [[ $# -gt 0 && $1 != --* ]]; do
    POSITIONAL+=("$1")
    shift
  done
  while [[ $# -gt 0 ]]; do
    opt=${1%%=*}
    if [[ -n ${flags[$1]:-} ]]; then
      printf -v "${flags[$1]}" 1
      shift
    elif [[ -n ${takes[$opt]:-} ]]; then
      # The one-word form carries a value that starts with '-' (--np-flag=-n),
      # the form Python's argparse needs too.
      if [[ $1 == *=* ]]; then
        value=${1#*=}
        shift
      else
        [[ $# -ge 2 ]] || harness_usage "$1 needs a value"
        value=$2
        shift 2
      fi
      printf -v "${takes[$opt]}" '%s' "$value"
      unset "required[$opt]"
    else
      harness_usage "unknown argument '$1'"
    fi
  done
  ((${#required[@]} == 0)) || harness_usage "missing ${!required[*]}"
  if ((${#names[@]} > 0)); then
    ((${#POSITIONAL[@]} <= ${#names[@]})) ||
      harness_usage "unexpected argument '${POSITIONAL[${#names[@]}]}' (takes ${names[*]})"
    local i
    for i in "${!names[@]}"; do
      if ((i < ${#POSITIONAL[@]})); then
        printf -v "${names[i]}" '%s' "${POSITIONAL[i]}"
      elif [[ " ${optional[*]} " != *" ${names[i]} "* ]]; then
        harness_usage "missing ${names[i]} (takes ${names[*]})"
      fi
    done
  fi
  if [[ -n ${BIN:-} ]]; then
    [[ -x $BIN && -f $BIN ]] || harness_usage "BIN '$BIN' is not an executable file"
    BIN=$(readlink -f "$BIN")
  fi
}

# harness_usage MESSAGE: a wrong command line (exit 2, naming the script).
harness_usage() {
  echo "$HARNESS_SCRIPT: $*" >&2
  exit 2
}

# harness_label TEXT: what FAIL and log lines name. TEXT is expanded when a
# line is printed, so a single-quoted label may name a variable that changes
# as the script goes ('corruption, $CASE').
harness_label() { HARNESS_LABEL=$1; }

log() { echo "[${HARNESS_LABEL@P}] $*"; }

fail() {
  echo "FAIL [${HARNESS_LABEL@P}]: $*" >&2
  local hook
  for hook in "${HARNESS_FAIL_HOOKS[@]}"; do eval "$hook" || true; done
  exit 1
}

# harness_on_exit COMMAND / harness_on_fail COMMAND: a command (eval'd, its
# failure ignored) for the cleanup at exit / for fail before it exits.
harness_on_exit() { HARNESS_EXIT_HOOKS+=("$1"); }
harness_on_fail() { HARNESS_FAIL_HOOKS+=("$1"); }

# harness_dump_logs [GLOB [LINES]]: the tail of every file GLOB matches
# (default $TMP/*.log, 15 lines) on stderr: a fail hook for scripts whose
# jobs write their logs there.
harness_dump_logs() {
  local pattern=${1:-$TMP/*.log} lines=${2:-15} f
  for f in $pattern; do
    [[ -f $f ]] || continue
    echo "--- $f" >&2
    tail -n "$lines" "$f" >&2
  done
}

# harness_tmp TAG [LABEL]: TMP=$TMPDIR/bloomshard-TAG.XXXXXX, torn down on
# any exit; LABEL, where given, is the harness_label.
harness_tmp() {
  [[ -z ${2:-} ]] || harness_label "$2"
  TMP=$(mktemp -d "${TMPDIR:-/tmp}/bloomshard-$1.XXXXXX")
  harness_traps
}

# harness_tmp_at DIR: a fixed DIR instead (emptied first), torn down the same
# way: for fixtures that record their own absolute path.
harness_tmp_at() {
  TMP=$1
  rm -rf "$TMP"
  mkdir -p "$TMP"
  harness_traps
}

# The cleanup on any exit; a signal ends the script with 128 + its number.
harness_traps() {
  trap harness_cleanup EXIT
  trap 'exit 130' INT
  trap 'exit 143' TERM
}

# harness_marker: MARK=$TMP/bin. A job started as "$MARK/bs-TAG" (a symlink
# to BIN) can be found and killed by that path alone, never by program name,
# so a test kills only its own processes; the cleanup kills all of them.
harness_marker() {
  MARK=$TMP/bin
  mkdir -p "$MARK"
}

# kill_marker PATTERN: SIGKILL to every process whose command line matches
# (a stopped process dies of it too).
kill_marker() {
  local pids=()
  mapfile -t pids < <(pgrep -f -- "$1" || true)
  ((${#pids[@]} == 0)) || kill -KILL "${pids[@]}" 2>/dev/null || true
}

harness_cleanup() {
  local rc=$? hook i
  if [[ -n $MARK ]]; then
    kill_marker "$MARK/"
    # Gone before TMP goes: a dying rank may still create files in it.
    for ((i = 0; i < 40; i++)); do
      pgrep -f -- "$MARK/" >/dev/null || break
      sleep 0.05
    done
  fi
  for hook in "${HARNESS_EXIT_HOOKS[@]}"; do eval "$hook" || true; done
  if [[ -n $TMP ]]; then
    if [[ ${KEEP_TMP:-0} == 1 ]]; then echo "kept $TMP"; else rm -rf "$TMP"; fi
  fi
  exit $rc
}

# mpi RANKS ARGS...: BIN under the launcher on RANKS ranks.
mpi() {
  local n=$1
  shift
  "$MPIEXEC" "$NP_FLAG" "$n" --oversubscribe "$BIN" "$@"
}

# incremental_first_copies ROOT EDIR RANKS SEED: an incremental
# --kept-copy first run on the finished state ROOT/st over new inputs
# ROOT/new (input_order_corpus.py, keys k0.. as ROOT/in's, so about half
# were seen before), written to ROOT/out-new on RANKS ranks; fails unless it
# ran as an incremental run and kept the first copies in input order of
# the keys new to the state (input_order_corpus.py check-after).
incremental_first_copies() {
  local root=$1 edir=$2 ranks=$3 seed=$4
  "$PY" "$edir/input_order_corpus.py" make "$root/new" --files 4 --records 1200 --big-records 0 \
    --seed "$seed"
  mpi "$ranks" dedup --input "$root/new" --key-field id --kept-copy first --batch-bytes 65536 \
    --progress 0 --output "$root/out-new" --state "$root/st" --checkpoint-rounds 2 \
    >"$root/incremental.log" 2>&1 || fail "the incremental run failed: $(cat "$root/incremental.log")"
  grep -q "incremental run on checkpoint generation" "$root/incremental.log" ||
    fail "not an incremental run: $(cat "$root/incremental.log")"
  "$PY" "$edir/input_order_corpus.py" check-after "$root/in" "$root/new" "$root/out-new" ||
    fail "the incremental run: not the first copies in input order of the keys new to the state"
}

# dedup_1rank LOG ARGS...: `BIN dedup --key-field id --progress 0 ARGS` on
# 1 rank under a 120 s timeout, its output in LOG, its exit status in RC
# (for cases that check refusals and exit codes).
dedup_1rank() {
  local log=$1
  shift
  RC=0
  timeout 120 "$MPIEXEC" "$NP_FLAG" 1 "$BIN" dedup --key-field id --progress 0 "$@" >"$log" 2>&1 ||
    RC=$?
}

# reject_set OUT [--basename]: the (file, line, reason) of every reject line
# in OUT's _rejects, sorted, one a row: which rank's file holds a line
# does not matter. --basename names each file by its last component (runs
# that read the same inputs from different folders).
reject_set() {
  "$PY" - "$@" <<'PYEOF'
import glob, json, os, sys
base = "--basename" in sys.argv[2:]
rows = []
for p in glob.glob(os.path.join(sys.argv[1], "_rejects", "*.jsonl")):
    for line in open(p, encoding="utf-8"):
        r = json.loads(line)
        name = os.path.basename(r["file"]) if base else r["file"]
        rows.append(f'{name}\t{r["line"]}\t{r["reason"]}')
print("\n".join(sorted(rows)))
PYEOF
}

# same_output_bytes REF GOT WHAT [REF_NAME]: GOT holds the same output files
# as REF (the _rejects folder and the run lock _bloomshard.lock aside), each
# with REF's bytes: plain files byte for byte, .gz/.zst ones decompressed (a
# checkpoint ends a gzip member or zstd frame, so a checkpointing run's
# frame boundaries follow its cuts). fail says WHAT and the files only one
# side has, or the first file whose bytes differ from REF_NAME's (default:
# REF; "the 1-rank run", say).
same_output_bytes() {
  local ref=$1 got=$2 what=$3 name=${4:-$1} f ref_files got_files
  local files='find . -path ./_rejects -prune -o -type f ! -name _bloomshard.lock -print'
  ref_files=$(cd "$ref" && eval "$files" | sort)
  got_files=$(cd "$got" && eval "$files" | sort)
  if [[ $ref_files != "$got_files" ]]; then
    fail "$what: other output files than $name's: only in $ref: [" \
      "$(comm -23 <(echo "$ref_files") <(echo "$got_files") | tr '\n' ' ')]; only in $got: [" \
      "$(comm -13 <(echo "$ref_files") <(echo "$got_files") | tr '\n' ' ')]"
  fi
  while IFS= read -r f; do
    case $f in
      *.gz) cmp -s <(gzip -dc "$ref/$f") <(gzip -dc "$got/$f") ;;
      *.zst) cmp -s <(zstd -qdc "$ref/$f") <(zstd -qdc "$got/$f") ;;
      *) cmp -s "$ref/$f" "$got/$f" ;;
    esac || fail "$what: $f differs from $name's bytes"
  done < <(cd "$ref" && eval "$files")
}

# kill_job MARKER PID: SIGKILL to the job launched as PID and to every
# process started as MARKER (its ranks, which outlive a killed launcher:
# each is in its own process group), then waits until none is left, so that
# no rank of it writes into the files of the next run. Fails when one is
# still alive after 30 s (a rank in uninterruptible I/O dies when the I/O
# ends; one alive after that was never killed, and a test that went on
# would race it).
kill_job() {
  local marker=$1 job=$2 i
  kill_marker "$marker"
  kill -KILL "$job" 2>/dev/null || true
  wait "$job" 2>/dev/null || true
  for ((i = 0; i < 1500; i++)); do
    pgrep -f -- "$marker" >/dev/null || return 0
    sleep 0.02
  done
  fail "kill_job: still alive 30 s after SIGKILL: $(pgrep -af -- "$marker" | head -5)"
}

# killed_at_fault_pause LOG RANKS PAUSE ARGS...: `BIN ARGS` on RANKS ranks
# (output in LOG) held at the fault pause PAUSE
# (BLOOMSHARD_FAULT_PAUSE_IN_FINISH: it stops every rank there), then
# SIGKILLed there by kill_job under a marker of its own. Fails, with LOG,
# when the run ends or 120 s pass before it reaches the pause.
killed_at_fault_pause() {
  local log=$1 n=$2 pause=$3 i
  shift 3
  [[ -n $MARK ]] || harness_marker
  HARNESS_PAUSES=$((${HARNESS_PAUSES:-0} + 1))
  local marker=$MARK/bs-pause-$HARNESS_PAUSES
  ln -s "$BIN" "$marker"
  : >"$log" # emptied here: the background job's own redirection may come after the first poll
  BLOOMSHARD_FAULT_PAUSE_IN_FINISH=$pause \
    "$MPIEXEC" "$NP_FLAG" "$n" --oversubscribe "$marker" "$@" >"$log" 2>&1 &
  local job=$!
  for ((i = 0; i < 6000; i++)); do
    grep -qs "fault pause at" "$log" && break
    kill -0 "$job" 2>/dev/null || break
    sleep 0.02
  done
  kill_job "$marker" "$job"
  grep -q "fault pause at" "$log" ||
    { cat "$log" >&2; fail "the run never reached the fault pause $pause"; }
}

# latest_generation STATE: the generation STATE's LATEST names ("none"
# before the first commit).
latest_generation() { cat "$1/LATEST" 2>/dev/null || echo none; }

# after_a_commit STATE GEN0 PID: waits (10 s at most) until the job PID has
# committed a generation of STATE of its own (LATEST no longer GEN0) or has
# ended, then a random 0-190 ms more: a SIGKILL sent next lands anywhere
# between two commits.
after_a_commit() {
  local state=$1 gen0=$2 job=$3 i
  for ((i = 0; i < 1000; i++)); do
    kill -0 "$job" 2>/dev/null || break
    [[ $(latest_generation "$state") != "$gen0" ]] && break
    sleep 0.01
  done
  sleep "0.$((RANDOM % 20))"
}
