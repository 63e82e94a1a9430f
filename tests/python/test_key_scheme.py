"""States with a key scheme: digest keys with a text rule are
looked up by the module exactly as the job made them (text rule, policy,
digest), tuple keys are refused with a clear error. Oracle: the job's own
kept records, and hashlib for the digest bytes."""
import hashlib
import json
import re

import pytest

import bloomshard
from conftest import dedup, json_ids, run, BIN, MPIEXEC, NP_FLAG


def ws(text):
    """ws/v1 for the ASCII and NBSP cases used here: trim, collapse runs of
    white space to one space."""
    return re.sub(r"[\s\u00a0]+", " ", text).strip(" ")


def test_digest_state_answers_like_the_job(tmp_path):
    inp = tmp_path / "in"
    inp.mkdir()
    lines = []
    for i in range(3000):
        lines.append({"id": "  Doc\u00a0%d \t text " % (i % 2000)})  # 1000 repeats after ws
    with open(inp / "a.jsonl", "w", encoding="utf-8") as f:
        for rec in lines:
            f.write(json.dumps(rec, ensure_ascii=False) + "\n")
    dedup(inp, tmp_path / "out", tmp_path / "state", 2, "--key-digest", "sha256",
          "--text-normalize", "ws")
    kept = json_ids(tmp_path / "out")
    assert len(kept) == 2000
    s = bloomshard.open_state(str(tmp_path / "state"))
    assert all(s.contains(kept))
    # The same text with other white space is the same key; new texts are not.
    assert all(s.contains(["Doc\u00a0%d text" % i for i in range(2000)]))
    assert not any(s.contains(["Doc %d text" % i for i in range(2000, 4000)]))
    # normalize() gives the stored key bytes: the SHA-256 of the ws text.
    assert s.normalize("  Doc 7 \t text ") == hashlib.sha256(ws("Doc 7 text").encode()).digest()


def test_tuple_state_is_refused_naming_the_fields(tmp_path):
    inp = tmp_path / "in"
    inp.mkdir()
    with open(inp / "a.jsonl", "w") as f:
        for i in range(100):
            f.write(json.dumps({"url": "u%d" % i, "title": "t"}) + "\n")
    run([MPIEXEC, NP_FLAG, 1, "--oversubscribe", BIN, "dedup", "--input", inp, "--output",
         tmp_path / "out", "--state", tmp_path / "state", "--key-field", "url",
         "--key-field", "title"])
    with pytest.raises(bloomshard.StateError, match="url,title"):
        bloomshard.open_state(str(tmp_path / "state"))
