# The one shell library of the test scripts (e2e, faults, cli, slurm,
# multihost; sourced, never run): arguments, the temp dir and its cleanup,
# fail/log, and how a script launches the real binary under mpiexec.
#
# A script reads, in this order:
#   source "$(dirname "${BASH_SOURCE[0]}")/../harness.sh"
#   CASE="" RANKS=1 BIN=""                       # its own defaults
#   harness_parse my_script.sh "--case=CASE --ranks=RANKS --bin=BIN" "$@"
#   harness_label "my case, $RANKS ranks"        # in every FAIL and log line
#   harness_tmp "my-$CASE"                       # TMP, removed on any exit
#
# Contract of the pieces:
# - harness_parse takes the launch options every launching script takes
#   (--mpiexec M, --np-flag F, --python P, or --mpiexec=M ...; defaults
#   mpiexec, -n, python3) into MPIEXEC, NP_FLAG and PY, the script's own
#   named options from its spec ("--opt=VAR" takes a value, "--opt=VAR!" is a
#   flag that sets VAR=1), and the words before the first option into
#   POSITIONAL. Anything else ends the script with exit 2, naming it.
# - harness_tmp makes TMP and traps EXIT (and INT/TERM as exit 130/143):
#   processes under the marker dir are killed, the exit hooks run in the
#   order they were added, then TMP is removed (KEEP_TMP=1 keeps it and says
#   where). The script's exit status is kept.
# - fail prints "FAIL [label]: message" on stderr, runs the fail hooks (a
#   log dump, say) and exits 1.
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
  local -A takes=() flags=()
  for word in $spec; do
    opt=${word%%=*} var=${word#*=}
    if [[ $var == *! ]]; then flags[$opt]=${var%!}; else takes[$opt]=$var; fi
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
    else
      harness_usage "unknown argument '$1'"
    fi
  done
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

# The tail of every $TMP/*.log on stderr: a fail hook for scripts whose jobs
# write their logs there.
harness_dump_logs() {
  local f
  for f in "$TMP"/*.log; do
    [[ -f $f ]] || continue
    echo "--- $f" >&2
    tail -n 15 "$f" >&2
  done
}

# harness_tmp TAG: TMP=$TMPDIR/bloomshard-TAG.XXXXXX, torn down on any exit.
harness_tmp() {
  TMP=$(mktemp -d "${TMPDIR:-/tmp}/bloomshard-$1.XXXXXX")
  trap harness_cleanup EXIT
  trap 'exit 130' INT
  trap 'exit 143' TERM
}

# harness_tmp_at DIR: a fixed DIR instead (emptied first), torn down the same
# way: for fixtures that record their own absolute path.
harness_tmp_at() {
  TMP=$1
  rm -rf "$TMP"
  mkdir -p "$TMP"
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
  local rc=$? hook
  [[ -z $MARK ]] || kill_marker "$MARK/"
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
