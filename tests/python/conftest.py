"""Shared helpers of the Python module's tests: real bloomshard jobs (synth,
dedup under mpiexec) make the states; the oracles are the jobs' own outputs
and independent Python code, never the module itself.

Environment (set by tests/python/CMakeLists.txt): BLOOMSHARD_BIN,
BLOOMSHARD_MPIEXEC, BLOOMSHARD_NP_FLAG, BLOOMSHARD_RANKS, BLOOMSHARD_SOURCE_DIR,
PYTHONPATH (the build tree's python/ dir).
"""
import json
import os
import subprocess

import pytest

BIN = os.environ.get("BLOOMSHARD_BIN", "bloomshard")
MPIEXEC = os.environ.get("BLOOMSHARD_MPIEXEC", "mpiexec")
NP_FLAG = os.environ.get("BLOOMSHARD_NP_FLAG", "-n")
RANKS = int(os.environ.get("BLOOMSHARD_RANKS", "2"))
SOURCE_DIR = os.environ.get("BLOOMSHARD_SOURCE_DIR",
                            os.path.join(os.path.dirname(__file__), "..", ".."))


def run(cmd, **kw):
    """Runs a command; fails the test with its output when it fails."""
    r = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, **kw)
    if r.returncode != 0:
        raise AssertionError("%s exited %d\nstdout:\n%s\nstderr:\n%s"
                             % (" ".join(map(str, cmd)), r.returncode, r.stdout, r.stderr))
    return r.stdout


def synth(out, records, seed, dup_rate=0.0, files=3):
    run([BIN, "synth", "--records", records, "--dup-rate", dup_rate, "--files", files,
         "--seed", seed, "--out", out])


def dedup(inp, out, state, ranks=None, *extra):
    run([MPIEXEC, NP_FLAG, ranks or RANKS, "--oversubscribe", BIN, "dedup", "--input", inp,
         "--output", out, "--state", state, "--key-field", "id", *extra])


def jsonl_files(root):
    for d, _, files in sorted(os.walk(root)):
        if "_rejects" in d.split(os.sep):
            continue
        for f in sorted(files):
            if f.endswith(".jsonl"):
                yield os.path.join(d, f)


def json_ids(root):
    """The "id" of every record of the .jsonl files under root, in order."""
    out = []
    for path in jsonl_files(root):
        with open(path, encoding="utf-8") as f:
            out.extend(json.loads(line)["id"] for line in f if line.strip())
    return out


def info_json(state):
    return json.loads(run([BIN, "info", "--json", "--state", state]))


@pytest.fixture(scope="session")
def job(tmp_path_factory):
    """A real job: 200k records (30% duplicates) deduplicated on RANKS ranks
    into a state with a small announced capacity (so the filter grows to
    several Bloom layers) a high FPR target and few slices (61: not a power of
    two; with the default 4096 a small filter rounds up to one block per
    slice and has almost no false positives, and tier 1 alone then has
    false positives to compare) and a checkpoint every round (several tier-2 runs,
    kept generations), plus 120k fresh keys from another seed. In the
    arrival order, so that every kept generation is a round's cut (the
    first-copy order ends with the end pass's generation, which holds every
    key: test_state.py's kept-copy test reads such a state)."""
    root = tmp_path_factory.mktemp("job")
    synth(root / "in", 200000, 7, dup_rate=0.3)
    dedup(root / "in", root / "out", root / "state", None, "--capacity", "30000", "--fpr", "0.02", "--slices", "61",
          "--checkpoint-rounds", "1", "--batch-bytes", "1048576", "--keep-generations", "3",
          "--kept-copy", "arrival")
    synth(root / "fresh", 120000, 99)
    kept = json_ids(root / "out")
    assert len(kept) == len(set(kept)) == 140000, "the job kept a wrong number of keys"
    return {
        "root": root,
        "state": root / "state",
        "kept": kept,
        "fresh": json_ids(root / "fresh"),
    }
