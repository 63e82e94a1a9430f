#!/usr/bin/env bash
# Writes bloomshard(1) in roff from the program's own --help texts and its
# exit-code and example tables (`bloomshard help exit-codes|examples`), so
# the man page cannot drift from the program (run at build time by CMake).
# Any command that fails ends the script: no page is half generated.
# Usage: make_manpage.sh BINARY OUT_FILE
set -euo pipefail
bin=$1
out=$2
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
version=$("$bin" --version | head -n1 | cut -d' ' -f2)
top=$("$bin" --help)
commands=$(awk '/^commands:/ { f = 1; next } f && /^$/ { exit } f { print substr($0, 3, 13) }' <<<"$top" |
  sed 's/ *$//')
[[ -n $commands ]] || { echo "make_manpage.sh: $bin --help lists no commands" >&2; exit 1; }

# roff-escape a plain text block: backslashes, and leading dots/quotes.
literal() { sed -e 's/\\/\\e/g' -e "s/^\\([.']\\)/\\\\\\&\\1/"; }
section() { # TITLE COMMAND...
  printf '.SH "%s"\n.nf\n' "$1"
  shift
  "$bin" "$@" --help 2>&1 | literal
  printf '.fi\n'
}

{
  printf '.TH BLOOMSHARD 1 "%s" "bloomshard %s" "User Commands"\n' "$(date -u ${SOURCE_DATE_EPOCH:+-d "@$SOURCE_DATE_EPOCH"} +%Y-%m-%d)" "$version"
  cat <<'ROFF'
.SH NAME
bloomshard \- exact distributed "seen before?" for billions of records (MPI, Bloom + exact tiers, HDF5 checkpoints)
.SH SYNOPSIS
.B mpiexec \-n
.I R
.B bloomshard dedup
.RI [ options ]
.br
.B bloomshard
.I command
.RI [ options ]
.SH DESCRIPTION
Each MPI rank owns a hash-partitioned slice of one large Bloom bit array
(tier 1) and of the exact key store (tier 2, the authority); keys are routed
to their owners in batched all-to-all rounds. A Bloom "absent" is final and
every "maybe" is confirmed in tier 2, so no new record is dropped by a false
positive. With \-\-state the filter, the input cursors and the output lengths
checkpoint collectively to parallel HDF5; the same command resumes a killed or
requeued job from the last checkpoint on any number of ranks, exactly once.
ROFF
  printf '.SH COMMANDS\n.nf\n'
  # The exit codes and examples of the top-level help get sections of their own.
  "$bin" --help | sed '/^exit codes:/,$d' | literal
  printf '.fi\n'
  # One section per command of the program's own command table (the
  # "commands:" block of --help), so a new command cannot miss its section.
  while IFS= read -r cmd; do
    # shellcheck disable=SC2086
    section "${cmd^^} OPTIONS" $cmd
  done < <(printf '%s\n' "$commands")
  printf '.SH "EXIT STATUS"\n'
  "$bin" help exit-codes | literal | awk '{ code = $1; $1 = ""; sub(/^ +/, ""); printf ".TP\n.B %s\n%s\n", code, $0 }'
  printf '.SH EXAMPLES\n.nf\n'
  "$bin" help examples | literal
  printf '.fi\n'
  printf '.SH VERSION\n.nf\n'
  "$bin" --version | literal
  printf '.fi\n'
  cat <<'ROFF'
.SH FILES
.TP
.I STATE/ckpt-<g>.h5, STATE/LATEST, STATE/RUN.json
checkpoint generations, the committed pointer and the run identity
(docs/checkpoint-format.md)
.TP
.I OUTPUT/_rejects/rank-<r>.jsonl
rejected records with file, line and reason
.SH SEE ALSO
.BR mpiexec (1),
.BR sbatch (1),
.BR h5dump (1);
docs/ of the source tree: design.md, commands.md, checkpoint-format.md, slurm.md, performance.md, library.md
ROFF
} >"$out.tmp"
mv "$out.tmp" "$out"
