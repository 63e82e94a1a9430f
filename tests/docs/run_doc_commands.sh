#!/usr/bin/env bash
# Runs the commands of a doc page (docs/quickstart.md), so the page cannot
# drift from the program: every ```sh block, in order, in ONE bash (so
# exports and cd carry over), with `set -euo pipefail` and each command
# echoed. A block right after `<!-- test: skip ... -->` is not run (the
# install: the suite runs after the build); one after `<!-- test: slurm -->`
# first gets a throw-away one-node Slurm cluster (tests/slurm/harness.sh).
# The script starts in the source tree's top directory with the build's
# bin dir first on PATH (where the page's first block expects to be).
# usage: run_doc_commands.sh DOC SOURCE_DIR BIN_DIR [--python P]
set -euo pipefail
DOC=$1 SRC=$2 BIN_DIR=$3
PY=python3
[[ ${4:-} == --python ]] && PY=$5
TMP=$(mktemp -d "${TMPDIR:-/tmp}/bloomshard-doc.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
"$PY" - "$DOC" "$SRC" >"$TMP/script.sh" <<'PY'
import re, shlex, sys
doc, src = sys.argv[1], sys.argv[2]
lines = open(doc, encoding="utf-8").read().split("\n")
out = ["set -euo pipefail", "set -x"]
mark, block, in_block, n = None, [], False, 0
for line in lines:
    if not in_block:
        m = re.match(r"<!--\s*test:\s*(\w+)", line)
        if m:
            mark = m.group(1)
        elif line.strip() == "```sh":
            in_block, block = True, []
        elif line.strip():
            mark = None if not line.startswith("<!--") else mark
        continue
    if line.strip() == "```":
        in_block = False
        n += 1
        if mark == "skip":
            out.append("# block %d: skipped (%s)" % (n, "test: skip"))
        else:
            if mark == "slurm":
                out.append("set +x; source %s; slurm_start; set -x" % shlex.quote(src + "/tests/slurm/harness.sh"))
            out.append("# block %d" % n)
            out.extend(block)
        mark = None
        continue
    block.append(line)
if in_block:
    sys.exit("unterminated ```sh block in " + doc)
print("\n".join(out))
PY
runnable=$(grep -c '^# block [0-9]*$' "$TMP/script.sh" || true)
((runnable > 0)) || { echo "FAIL: no runnable sh block in $DOC" >&2; exit 1; }
echo "[doc commands] $DOC: $runnable blocks to run"
cd "$SRC"
export PATH=$BIN_DIR:$PATH
TMPDIR=$TMP bash "$TMP/script.sh"
echo "[doc commands] $DOC: every block ran"
