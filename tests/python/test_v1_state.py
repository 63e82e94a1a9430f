"""Format-1 states (tests/data/v1_state, written by the format-1 build)
open and answer: every key of the finished state's inputs is present, every
key its incremental run kept as new is absent; the unfinished state holds a
prefix of its run's kept keys; the pure reader agrees."""
import os
import subprocess
import sys
import tarfile

import pytest

import bloomshard
from conftest import BIN, SOURCE_DIR, run

sys.path.insert(0, os.path.join(SOURCE_DIR, "python", "examples"))
import pure_reader  # noqa: E402

FIXTURE = os.path.join(SOURCE_DIR, "tests", "data", "v1_state")


def ids_of_zst_tree(root):
    import json
    out = []
    for d, _, files in sorted(os.walk(root)):
        for f in sorted(files):
            path = os.path.join(d, f)
            data = subprocess.run(["zstd", "-dcq", path], capture_output=True, check=True).stdout \
                if f.endswith(".zst") else open(path, "rb").read()
            out.extend(json.loads(l)["id"] for l in data.decode().splitlines() if l.strip())
    return out


@pytest.fixture(scope="module")
def v1(tmp_path_factory):
    root = tmp_path_factory.mktemp("v1")
    with tarfile.open(os.path.join(FIXTURE, "v1_state.tar.gz")) as t:
        t.extractall(root)
    run(["bash", os.path.join(FIXTURE, "make_v1_inputs.sh"), BIN, root])
    return root


def lines(path):
    with open(path) as f:
        return [l.rstrip("\n") for l in f if l.strip()]


def test_finished_v1_state(v1):
    s = bloomshard.open_state(v1 / "state-fin", verify=True)
    info = s.info()
    assert info["format_version"] == 1 and info["run_count"] == 1
    hist = set(ids_of_zst_tree(v1 / "in" / "hist"))
    assert info["exact_keys"] == len(hist)
    assert all(s.contains(sorted(hist)))
    new_today = lines(v1 / "expected-today.txt")
    assert new_today and not any(s.contains(new_today))
    p = pure_reader.PureState(str(v1 / "state-fin"))
    sample = sorted(hist)[:500] + new_today[:500]
    assert p.contains(sample) == s.contains(sample)


def test_unfinished_v1_state(v1):
    s = bloomshard.open_state(v1 / "state-unf")
    kept = lines(v1 / "expected-res.txt")
    has = s.contains(kept)
    assert 0 < sum(has) == s.info()["exact_keys"] < len(kept)
    assert s.info()["state"] == "unfinished"
