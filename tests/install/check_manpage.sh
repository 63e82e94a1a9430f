#!/usr/bin/env bash
# bloomshard(1) renders without a groff warning and documents every option
# that the --help texts of every command (listed by the top-level --help)
# name; its EXIT STATUS lists every code of the program's exit-code table
# (`bloomshard help exit-codes`), and README.md and docs/ list the same
# codes; every example (`bloomshard help examples`) is in the page and uses
# only options its command has. A command whose --help fails (or a missing
# binary) fails the check: nothing is read from a pipeline that can hide it.
# Every command of the program's table (top-level --help) must have its
# section "<COMMAND> OPTIONS" in the page, holding its usage line.
# Usage: check_manpage.sh BINARY MANPAGE [SOURCE_DIR]
source "$(dirname "${BASH_SOURCE[0]}")/../harness.sh"
harness_parse check_manpage.sh "bin page src?" "$@"
src=${src:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
harness_label manpage
[[ -x $bin ]] || fail "no executable binary at '$bin'"
[[ -f $page ]] || fail "no man page at '$page'"
harness_tmp man
tmp=$TMP
head -n1 "$page" | grep -q '^\.TH BLOOMSHARD 1 ' || fail "no .TH header in $page"
groff -man -Tutf8 -ww "$page" 2>"$tmp/warnings" | sed 's/.\x08//g' >"$tmp/rendered"
if [[ -s $tmp/warnings ]]; then
  cat "$tmp/warnings" >&2
  fail "groff warnings"
fi
# Every output is captured into a file first, so that an exit status is seen.
"$bin" --help >"$tmp/top" || fail "bloomshard --help exited $?"
awk '/^commands:/ { f = 1; next } f && /^$/ { exit } f { print substr($0, 3, 13) }' "$tmp/top" |
  sed 's/ *$//' >"$tmp/commands"
(($(wc -l <"$tmp/commands") >= 8)) || fail "the top-level --help lists $(wc -l <"$tmp/commands") commands"
missing=0
while IFS= read -r cmd; do
  # shellcheck disable=SC2086
  "$bin" $cmd --help >"$tmp/help" 2>&1 </dev/null || fail "bloomshard $cmd --help exited $?"
  [[ -s $tmp/help ]] || fail "bloomshard $cmd --help printed nothing"
  grep -qF "bloomshard $cmd" "$tmp/help" || fail "bloomshard $cmd --help does not name the command"
  while IFS= read -r opt; do
    grep -qF -- "$opt" "$tmp/rendered" || { echo "man page lacks $cmd $opt" >&2; missing=1; }
  done < <(grep -oE -- '--[a-z][a-z0-9-]+' "$tmp/help" | sort -u)
  # Each command has its section, holding its --help text's usage line.
  grep -qxF "${cmd^^} OPTIONS" "$tmp/rendered" ||
    { echo "man page lacks the section ${cmd^^} OPTIONS" >&2; missing=1; }
  grep -qF -- "$(head -n1 "$tmp/help")" "$tmp/rendered" ||
    { echo "man page lacks '$(head -n1 "$tmp/help")'" >&2; missing=1; }
  cp "$tmp/help" "$tmp/help.${cmd// /_}"
done <"$tmp/commands"
# The table --help prints is the program's whole table: an unknown command
# is answered with the same list.
"$bin" no-such-command >"$tmp/unknown" 2>&1 && fail "bloomshard no-such-command exited 0"
awk '/^commands:/ { f = 1; next } f && /^$/ { exit } f { print substr($0, 3, 13) }' "$tmp/unknown" |
  sed 's/ *$//' | diff -u "$tmp/commands" - >&2 ||
  fail "the commands of --help and of an unknown command's message differ"
grep -q "hash scheme: " "$tmp/rendered" || { echo "man page lacks the VERSION section" >&2; missing=1; }

# Exit codes: one table in the program; the man page, README and docs agree.
"$bin" help exit-codes >"$tmp/codes" || fail "bloomshard help exit-codes exited $?"
awk '{ print $1 }' "$tmp/codes" >"$tmp/code_list"
(($(wc -l <"$tmp/code_list") >= 8)) || fail "help exit-codes lists $(wc -l <"$tmp/code_list") codes"
sed -n '/^EXIT STATUS/,/^[A-Z]/p' "$tmp/rendered" >"$tmp/exit_section"
grep -q . "$tmp/exit_section" || { echo "man page lacks EXIT STATUS" >&2; missing=1; }
while read -r code meaning; do
  grep -qE "^ +$code( |$)" "$tmp/exit_section" || { echo "EXIT STATUS lacks $code" >&2; missing=1; }
  grep -qF "  $code" "$tmp/top" || { echo "--help lacks exit code $code" >&2; missing=1; }
  for doc in README.md docs/commands.md docs/design.md; do
    # The table row as the program words it (backticks are markdown only).
    # Through a file, not a pipe: grep -q stops at the first match, and tr's
    # next write then dies of SIGPIPE, which pipefail reports as a miss.
    tr -d '`' <"$src/$doc" >"$tmp/doc_text"
    grep -qF "| $code | $meaning |" "$tmp/doc_text" ||
      { echo "$doc lacks the row '| $code | $meaning |'" >&2; missing=1; }
  done
done <"$tmp/codes"
for doc in README.md docs/commands.md docs/design.md docs/slurm.md docs/reliability.md; do
  # The codes of the doc's "Exit codes" table, first column.
  sed -n '/^[#* ]*Exit codes/,/^#/p' "$src/$doc" | grep -oE '^\| *[0-9]+ *\|' | tr -dc '0-9\n' |
    sort -n >"$tmp/doc_codes"
  sort -n "$tmp/code_list" | diff -u - "$tmp/doc_codes" >"$tmp/code_diff" ||
    { echo "$doc's exit codes differ from the program's (- program, + doc):" >&2;
      cat "$tmp/code_diff" >&2; missing=1; }
done

# Examples: in the man page, and each uses only options of its command.
"$bin" help examples >"$tmp/examples" || fail "bloomshard help examples exited $?"
grep -q '^EXAMPLES' "$tmp/rendered" || { echo "man page lacks EXAMPLES" >&2; missing=1; }
examples=0
while IFS= read -r line; do
  line=${line#"${line%%[![:space:]]*}"}
  [[ -z $line || $line == \#* ]] && continue
  grep -qF -- "$line" "$tmp/rendered" || { echo "EXAMPLES lacks: $line" >&2; missing=1; }
  # "a && b": each part is one command.
  while IFS= read -r part; do
    cmd=$(grep -oE 'bloomshard [a-z-]+' <<<"$part" | head -n1 | cut -d' ' -f2)
    [[ -f $tmp/help.$cmd ]] || { echo "example uses unknown command '$cmd': $part" >&2; missing=1; continue; }
    while IFS= read -r opt; do
      grep -qE -- "$opt( |$|,|=)" "$tmp/help.$cmd" ||
        { echo "example uses $cmd $opt, which $cmd --help lacks" >&2; missing=1; }
    done < <(grep -oE -- '--[a-z][a-z0-9-]+' <<<"$part" || true)
    examples=$((examples + 1))
  done < <(sed 's/ && /\n/g' <<<"$line")
done <"$tmp/examples"
((examples >= 5)) || fail "only $examples example commands"
((missing == 0)) || fail "see above"
echo "man page: ok ($(wc -l <"$tmp/rendered") rendered lines, $(wc -l <"$tmp/commands") commands, $(wc -l <"$tmp/code_list") exit codes, $examples examples)"
