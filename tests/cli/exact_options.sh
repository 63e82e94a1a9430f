#!/usr/bin/env bash
# Every command the top-level --help lists, through the real binary: a stray
# word and an abbreviated option end it with exit 2 before any work, naming
# the token and (for the abbreviation) the option meant; a dedup job file
# with an unknown key names the file and the line; an unknown command or
# benchmark names the nearest one; `bench --help` exits 0.
#
# usage: exact_options.sh BIN [--mpiexec M] [--np-flag F] [--python P]
source "$(dirname "${BASH_SOURCE[0]}")/../harness.sh"
harness_parse exact_options.sh "BIN" "$@"
harness_tmp exact "exact_options"

# expect CODE NEEDLE CMD...: CMD exits CODE and its output holds NEEDLE.
expect() {
  local code=$1 needle=$2 rc=0
  shift 2
  "$@" >"$TMP/out" 2>&1 </dev/null || rc=$?
  ((rc == code)) || { cat "$TMP/out" >&2; fail "'$*' exited $rc, expected $code"; }
  grep -qF -- "$needle" "$TMP/out" || { cat "$TMP/out" >&2; fail "'$*' does not say: $needle"; }
}

"$BIN" --help >"$TMP/top" || fail "bloomshard --help exited $?"
mapfile -t commands < <(awk '/^commands:/ { f = 1; next } f && /^$/ { exit } f { print substr($0, 3, 13) }' \
  "$TMP/top" | sed 's/ *$//')
((${#commands[@]} >= 8)) || fail "the top-level --help lists ${#commands[@]} commands"
mkdir -p "$TMP/in" "$TMP/noinput"
for cmd in "${commands[@]}"; do
  # shellcheck disable=SC2206
  words=($cmd)
  # launch's words are the command it runs (`launch -- mpiexec ...`), so a
  # "stray" word is its command; signal_exit.sh tests its own refusals.
  if [[ $cmd != launch ]]; then
    expect 2 "unexpected argument 'stray'" "$BIN" "${words[@]}" stray
  fi
  "$BIN" "${words[@]}" --help >"$TMP/help" 2>&1 || fail "$cmd --help exited $?"
  # The command's first option (an option line, not a description) other
  # than --help, cut by two letters.
  opt=$(grep -oE -- '^ +--[a-z][a-z0-9-]{4,}' "$TMP/help" | tr -d ' ' | grep -vx -- '--help' |
    head -n1 || true)
  if [[ -n $opt ]]; then
    expect 2 "unrecognised option '${opt:0:${#opt}-2}' (did you mean $opt" \
      "$BIN" "${words[@]}" "${opt:0:${#opt}-2}" x
  fi
  log "$cmd: stray word and ${opt:-no option} abbreviation refused (exit 2)"
done
# The cases the option rules were written for, word for word, with a real input.
printf '{"id":1}\n' >"$TMP/in/a.jsonl"
expect 2 "unexpected argument 'extra'" "$BIN" dedup --input "$TMP/in" --output "$TMP/o" extra
expect 2 "unrecognised option '--out' (did you mean --output?)" \
  "$BIN" dedup --input "$TMP/in" --out "$TMP/o"
expect 2 "unrecognised option '--key-f' (did you mean --key-field?)" \
  "$BIN" dedup --input "$TMP/in" --output "$TMP/o" --key-f id
[[ ! -e $TMP/o ]] || fail "a refused dedup created its output dir"
# Under mpiexec: every rank refuses, one line.
rc=0
"$MPIEXEC" "$NP_FLAG" 2 "$BIN" dedup --input "$TMP/in" --output "$TMP/o" --fpp 0.1 >"$TMP/mpi" 2>&1 || rc=$?
((rc == 2)) || { cat "$TMP/mpi" >&2; fail "dedup --fpp under mpiexec exited $rc"; }
n=$(grep -c "did you mean --fpr?" "$TMP/mpi" || true)
((n == 1)) || { cat "$TMP/mpi" >&2; fail "the refusal was printed $n times on 2 ranks"; }

# Job files: an unknown key names the file, the line and the key meant.
printf '# job\ninput = %s\noutput = %s\n\nfpp = 0.01\n' "$TMP/in" "$TMP/o" >"$TMP/job.ini"
expect 2 "job file '$TMP/job.ini' line 5: unknown option 'fpp' (did you mean --fpr?)" \
  "$BIN" dedup --config "$TMP/job.ini"
printf 'input = %s\noutput = %s\nkey-f = id\n' "$TMP/in" "$TMP/o" >"$TMP/job.ini"
expect 2 "line 3: unknown option 'key-f' (did you mean --key-field?)" \
  "$BIN" dedup --config "$TMP/job.ini"
# Every shipped job file still parses (only its paths are wrong here).
for job in "$(dirname "${BASH_SOURCE[0]}")"/../../jobs/*.ini; do
  rc=0
  "$BIN" dedup --config "$job" >"$TMP/job.out" 2>&1 || rc=$?
  if grep -qE "job file|unrecognised|unexpected argument|bad option" "$TMP/job.out"; then
    cat "$TMP/job.out" >&2
    fail "shipped job file $job is refused by the option checks"
  fi
done
log "job files: unknown keys refused with file and line; jobs/*.ini accepted"

# Commands and benchmarks.
expect 2 "unknown command 'dedpu' (did you mean dedup?)" "$BIN" dedpu
expect 2 "unknown benchmark 'filtr' (did you mean filter?)" "$BIN" bench filtr
expect 0 "filter" "$BIN" bench --help
expect 2 "takes no options" "$BIN" version --json
expect 0 "exit codes:" "$BIN" --help
log PASS
