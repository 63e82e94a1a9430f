#!/usr/bin/env bash
# No test that cannot fail: runs the suite of a build tree against (a) no
# bloomshard binary and (b) a stub that exits 0 and prints nothing, and
# lists every test that still passes. Each listed test must be one that
# needs no binary (docs/testing.md "Tests that need no binary" says why);
# every other test fails against both.
#
# The real build is never touched: the suite's CTestTestfile.cmake files
# are copied into BUILD/../no_binary/<variant>/ with the binary's folder
# (BUILD/bin) replaced by the variant's own bin/, which holds links to
# everything else in BUILD/bin; GoogleTest binaries, the man page and the
# Python module are still BUILD's.
#
# Not in CI: it runs the whole suite (minus the slurm and multihost labels)
# twice, mostly fast failures: about 10-20 minutes on 2 shared cores.
# Usage: tests/no_binary/run.sh [BUILD_DIR] [-- extra ctest args, e.g. -L e2e]
# Output: the lists in BUILD/../no_binary/{missing,stub}.passed; exit 1 if a
# test passes that is not in tests/no_binary/expected_passes.txt.
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
build=$(cd "${1:-$root/build/release}" && pwd) || exit 2
shift || true
[[ ${1:-} == -- ]] && shift
[[ -x $build/bin/bloomshard && -f $build/CTestTestfile.cmake ]] ||
  { echo "run.sh: $build is not a built tree (no bin/bloomshard or CTestTestfile.cmake)" >&2; exit 2; }
out=$(dirname "$build")/no_binary
mkdir -p "$out"
expected=$here/expected_passes.txt
grep -vE '^(#|$)' "$expected" >"$out/patterns"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
unexpected=0

# A copy of the test tree whose binary is the variant's.
make_variant() {
  local variant=$1 dir=$out/$1 f rel
  rm -rf "$dir"
  mkdir -p "$dir/bin"
  for f in "$build"/bin/*; do
    [[ $(basename "$f") == bloomshard ]] || ln -s "$f" "$dir/bin/"
  done
  if [[ $variant == stub ]]; then
    printf '#!/bin/sh\nexit 0\n' >"$dir/bin/bloomshard"
    chmod +x "$dir/bin/bloomshard"
  fi
  while IFS= read -r f; do
    rel=${f#"$build"/}
    mkdir -p "$dir/$(dirname "$rel")"
    sed "s#$build/bin\\([/\"]\\)#$dir/bin\\1#g" "$f" >"$dir/$rel"
  done < <(find "$build" -name CTestTestfile.cmake -not -path "$out/*")
  # Nothing of the copy may still name the real binary.
  if grep -rqF "$build/bin/bloomshard" "$dir" --include=CTestTestfile.cmake; then
    echo "run.sh: the $variant copy still names $build/bin/bloomshard" >&2
    exit 2
  fi
}

for variant in missing stub; do
  make_variant "$variant"
  echo "== $variant binary: ctest in $out/$variant" >&2
  ctest --test-dir "$out/$variant" -LE 'slurm|multihost' -j2 --timeout "${NO_BINARY_TIMEOUT:-120}" "$@" \
    >"$out/$variant.log" 2>&1
  # "  12/456 Test  #12: name ....   Passed    0.01 sec"
  sed -nE 's/^ *[0-9]+\/[0-9]+ Test +#[0-9]+: ([^ ]+) \.+ +Passed.*/\1/p' "$out/$variant.log" |
    sort >"$out/$variant.passed"
  total=$(grep -cE '^ *[0-9]+/[0-9]+ Test' "$out/$variant.log")
  echo "$variant: $(wc -l <"$out/$variant.passed") of $total tests passed" >&2
  # Every pass must be expected: a test that needs no binary, by pattern.
  if grep -vxE -f "$out/patterns" "$out/$variant.passed" >"$out/$variant.unexpected"; then
    sed "s/^/$variant: passed without a working binary: /" "$out/$variant.unexpected" >&2
    unexpected=1
  fi
done
((unexpected == 0)) || { echo "FAIL: tests above pass without the binary" >&2; exit 1; }
echo "ok: every test that passed needs no binary (tests/no_binary/expected_passes.txt)"
