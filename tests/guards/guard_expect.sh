# shellcheck shell=bash
# What every guard test asserts about a refused command (sourced by the
# scripts of tests/guards after tests/harness.sh, never run): the documented
# exit code, a message naming the field and both values, and nothing
# written: the state, the outputs and the paths the command would create
# are byte for byte what they were.
#
#   WATCH=(dir-or-file ...)       what a refused command must leave untouched
#   expect_refused CASE CODE PATTERN... -- COMMAND...
#   expect_note CASE PATTERN... -- COMMAND...   (exit 0, the note printed)
# A case's log is $TMP/CASE.log; a failure prints it and names the case.

WATCH=()

# snapshot PATH...: one line per entry under each path (its relative path,
# and for a file its size and SHA-256); "absent" for a path that is not
# there. Two equal snapshots: nothing was created, removed or changed.
snapshot() {
  local p f
  for p in "$@"; do
    if [[ -f $p ]]; then
      echo "$p $(stat -c %s "$p") $(sha256sum <"$p" | cut -c1-16)"
    elif [[ -d $p ]]; then
      while IFS= read -r -d '' f; do
        if [[ -f $p/$f ]]; then
          echo "$p/$f $(stat -c %s "$p/$f") $(sha256sum <"$p/$f" | cut -c1-16)"
        else
          echo "$p/$f/"
        fi
      done < <(cd "$p" && find . -mindepth 1 -print0 | sort -z)
    else
      echo "absent $p"
    fi
  done
}

# run_case CASE COMMAND...: the command's output in $TMP/CASE.log, its exit
# status in RC.
run_case() {
  local name=$1
  shift
  set +e
  "$@" >"$TMP/$name.log" 2>&1
  RC=$?
  set -e
}

# split_patterns ARGS...: PATTERNS = the words before "--", COMMAND = those after.
split_patterns() {
  PATTERNS=()
  while [[ $# -gt 0 && $1 != -- ]]; do
    PATTERNS+=("$1")
    shift
  done
  [[ $# -gt 0 ]] || fail "a guard case without '--' before its command"
  shift
  COMMAND=("$@")
}

check_patterns() {
  local name=$1 p
  for p in "${PATTERNS[@]}"; do
    grep -Eq -- "$p" "$TMP/$name.log" ||
      { cat "$TMP/$name.log" >&2; fail "$name: the message does not say /$p/"; }
  done
}

expect_refused() {
  local name=$1 code=$2 before after
  shift 2
  split_patterns "$@"
  before=$(snapshot "${WATCH[@]}")
  run_case "$name" "${COMMAND[@]}"
  [[ $RC == "$code" ]] || { cat "$TMP/$name.log" >&2; fail "$name: exit $RC, want $code"; }
  check_patterns "$name"
  after=$(snapshot "${WATCH[@]}")
  if [[ $before != "$after" ]]; then
    diff <(echo "$before") <(echo "$after") >&2 || true
    fail "$name: the refused command changed the state or the outputs"
  fi
  log "$name: exit $code: $(grep -m1 -E -- "${PATTERNS[0]}" "$TMP/$name.log" | cut -c1-220)"
}

expect_note() {
  local name=$1
  shift
  split_patterns "$@"
  run_case "$name" "${COMMAND[@]}"
  [[ $RC == 0 ]] || { cat "$TMP/$name.log" >&2; fail "$name: exit $RC, want 0"; }
  check_patterns "$name"
  log "$name: exit 0: $(grep -m1 -E -- "${PATTERNS[0]}" "$TMP/$name.log" | cut -c1-220)"
}
