#!/usr/bin/env bash
# bloomshard(1) renders without a groff warning and documents every option
# that the commands' --help texts name (it is generated from them; this
# proves the generation ran over all of them and the roff is well formed).
# Usage: check_manpage.sh BINARY MANPAGE
set -euo pipefail
bin=$1
page=$2
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
tmp=$(mktemp -d /tmp/bloomshard-man.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
head -n1 "$page" | grep -q '^\.TH BLOOMSHARD 1 ' || { echo "no .TH header in $page" >&2; exit 1; }
groff -man -Tutf8 -ww "$page" 2>"$tmp/warnings" | sed 's/.\x08//g' >"$tmp/rendered"
if [[ -s $tmp/warnings ]]; then
  echo "groff warnings:" >&2
  cat "$tmp/warnings" >&2
  exit 1
fi
missing=0
for cmd in dedup synth info verify "bench filter"; do
  # shellcheck disable=SC2086
  for opt in $("$bin" $cmd --help 2>&1 | grep -oE -- '--[a-z][a-z0-9-]+' | sort -u); do
    grep -qF -- "$opt" "$tmp/rendered" || { echo "man page lacks $cmd $opt" >&2; missing=1; }
  done
done
grep -q "hash scheme: " "$tmp/rendered" || { echo "man page lacks the VERSION section" >&2; missing=1; }
((missing == 0))
echo "man page: ok ($(wc -l <"$tmp/rendered") rendered lines)"
