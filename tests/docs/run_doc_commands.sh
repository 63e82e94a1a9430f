#!/usr/bin/env bash
# Runs the commands of a doc page (README.md's "Use", docs/quickstart.md) as
# a reader would on a fresh clone of a small machine, so the page cannot
# drift from the program: every ```sh block, in order, in ONE bash (so
# exports and cd carry over), with `set -euo pipefail` and each command
# echoed. A block right after `<!-- test: skip ... -->` is not run (the
# install: the suite runs after the build); one after `<!-- test: slurm -->`
# first gets a throw-away one-node Slurm cluster (tests/slurm/harness.sh).
#
# The fresh clone: a copy of the tracked files (`git ls-files`, as they are
# in the work tree; every file but build*/ and .git when SOURCE_DIR is no
# git checkout) in a temp dir, with the build linked in at build/release/bin
# and build/release/man, where `bash setup.sh` puts them. The blocks start
# in its top directory with nothing of ours on PATH and no Open MPI
# variable set (the page must say what a reader has to set), and Open MPI
# is given --slots slots (default 2, a 2-core machine, whatever this one
# has) until the first Slurm block: a page that starts more ranks without
# saying --oversubscribe (or setting it) fails here as on such a machine.
#
# --dead-cluster: a Slurm block meets an `sbatch` that takes every job and
# a cluster that never runs it (fake sbatch, squeue, scancel, sinfo first
# on PATH). The block must end by itself, non-zero, saying that the cluster
# "did not answer"; a wait without a bound fails as a hang (past --limit).
#
# usage: run_doc_commands.sh DOC SOURCE_DIR BIN_DIR [--python P] [--slots N]
#                            [--limit SECONDS] [--dead-cluster]
source "$(dirname "${BASH_SOURCE[0]}")/../harness.sh"
harness_parse run_doc_commands.sh \
  "DOC SRC BIN_DIR --slots=SLOTS:2 --limit=LIMIT:280 --dead-cluster=DEAD!" "$@"
harness_tmp doc "doc commands"

# --- the fresh clone
CLONE=$TMP/clone
mkdir -p "$CLONE/build/release"
"$PY" - "$SRC" "$CLONE" <<'PY'
import os, shutil, subprocess, sys
src, dst = sys.argv[1], sys.argv[2]
try:
    out = subprocess.run(["git", "-C", src, "ls-files", "-z"], check=True,
                         capture_output=True).stdout.decode()
    files = [f for f in out.split("\0") if f]
except (OSError, subprocess.CalledProcessError):
    files = []
    for root, dirs, names in os.walk(src):
        rel = os.path.relpath(root, src)
        if rel == ".":
            dirs[:] = [d for d in dirs if d != ".git" and not d.startswith("build")]
        files += [os.path.normpath(os.path.join(rel, n)) for n in names]
copied = 0
for f in files:
    s = os.path.join(src, f)
    if not os.path.lexists(s):  # deleted in the work tree
        continue
    os.makedirs(os.path.dirname(os.path.join(dst, f)) or dst, exist_ok=True)
    shutil.copy2(s, os.path.join(dst, f), follow_symlinks=False)
    copied += 1
print(f"[doc commands] fresh clone: {copied} files", file=sys.stderr)
PY
ln -s "$(cd "$BIN_DIR" && pwd)" "$CLONE/build/release/bin"
[[ -d $BIN_DIR/../man ]] && ln -s "$(cd "$BIN_DIR/../man" && pwd)" "$CLONE/build/release/man"
echo "localhost slots=$SLOTS" >"$TMP/hostfile"

# --- a Slurm that takes jobs and never runs them (--dead-cluster)
FAKE=$TMP/fake-slurm
mkdir -p "$FAKE"
printf '#!/bin/sh\necho 4242\n' >"$FAKE/sbatch"
printf '#!/bin/sh\necho "4242 debug job root PD 0:00 1 (Resources)"\n' >"$FAKE/squeue"
printf '#!/bin/sh\nexit 0\n' >"$FAKE/scancel"
printf '#!/bin/sh\nexit 0\n' >"$FAKE/sinfo"
# The page's waits poll with `sleep`: here each one is written down instead of
# slept, so the test checks the bound the page promises (a minute) without
# spending that minute.
printf '#!/bin/sh\necho "$1" >>"%s/slept"\n' "$FAKE" >"$FAKE/sleep"
chmod +x "$FAKE"/*

# --- the page's blocks as one script
"$PY" - "$DOC" "$SRC" "$DEAD" "$FAKE" >"$TMP/script.sh" <<'PY'
import re, shlex, sys
doc, src, dead, fake = sys.argv[1], sys.argv[2], sys.argv[3] == "1", sys.argv[4]
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
                # Slurm's own allocation gives the slots from here on.
                out.append("unset OMPI_MCA_orte_default_hostfile")
                if dead:
                    out.append("export PATH=%s:$PATH" % shlex.quote(fake))
                else:
                    out.append("set +x; source %s; slurm_start; set -x"
                               % shlex.quote(src + "/tests/slurm/harness.sh"))
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
((runnable > 0)) || fail "no runnable sh block in $DOC"
if ((DEAD)) && ! grep -q '^unset OMPI_MCA_orte_default_hostfile$' "$TMP/script.sh"; then
  fail "--dead-cluster but $DOC has no <!-- test: slurm --> block"
fi
echo "[doc commands] $DOC: $runnable blocks to run in a fresh clone ($SLOTS MPI slots)"
cd "$CLONE"
# What a fresh login has: none of our PATH or Open MPI settings.
for v in $(compgen -e | grep -E '^(OMPI_|PMIX_|SLURM_)' || true); do unset "$v"; done
export OMPI_MCA_orte_default_hostfile=$TMP/hostfile
set +e
TMPDIR=$TMP timeout -k 10 "$LIMIT" bash "$TMP/script.sh" 2>&1 | tee "$TMP/run.log"
rc=${PIPESTATUS[0]}
set -e
if ((rc == 124 || rc == 137)); then
  fail "$DOC: still running after $LIMIT s (a wait without a bound?)"
fi
if ((DEAD)); then
  ((rc != 0)) || fail "$DOC: a job that never ran counted as a success"
  grep -q 'did not answer' "$TMP/run.log" ||
    fail "$DOC: no 'did not answer' message for a cluster that never ran the job"
  slept=$(awk '{s += $1} END {printf "%g", s}' "$FAKE/slept" 2>/dev/null || echo 0)
  awk -v s="$slept" 'BEGIN {exit !(s > 0 && s <= 60)}' ||
    fail "$DOC: the page waited ${slept} s for a cluster that never answers (its bound is 60 s)"
  echo "[doc commands] $DOC: with a cluster that never answers, the page stopped after ${slept} s of waits and said so"
  exit 0
fi
((rc == 0)) || fail "$DOC: a block failed (exit $rc)"
echo "[doc commands] $DOC: every block ran"
