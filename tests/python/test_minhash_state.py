"""A --unit minhash state: the module answers for band keys (the 16-byte
digests of docs/near-duplicates.md, given as bytes) exactly as the job
stored them, every record's keys included, names the scheme, and refuses a
text or a key of another size (ValueError) instead of answering False. Oracle:
tests/bench/minhash_reference.py (the Python reference of the sketch) over
the job's inputs, not the module."""
import json
import os
import sys

import pytest

import bloomshard
from conftest import run, BIN, MPIEXEC, NP_FLAG, SOURCE_DIR

sys.path.insert(0, os.path.join(SOURCE_DIR, "tests", "bench"))
ref = pytest.importorskip("minhash_reference")


def test_band_keys_of_every_record_are_in_the_state(tmp_path):
    inp = tmp_path / "in"
    inp.mkdir()
    words = "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu".split()
    texts = []
    for i in range(300):
        base = [words[(i * 7 + j) % len(words)] + str((i + j) % 50) for j in range(40)]
        texts.append(" ".join(base))
        if i % 3 == 0:  # a near copy: one word changed
            base[20] = "changed"
            texts.append(" ".join(base))
    texts += ["", "  ...  ", "short text"]
    with open(inp / "a.jsonl", "w") as f:
        for i, t in enumerate(texts):
            f.write(json.dumps({"id": i, "text": t}) + "\n")
    run([MPIEXEC, NP_FLAG, 2, "--oversubscribe", BIN, "dedup", "--input", inp, "--output",
         tmp_path / "out", "--state", tmp_path / "state", "--key-field", "text", "--unit",
         "minhash", "--bands", "9", "--rows", "5"])
    s = bloomshard.open_state(str(tmp_path / "state"))
    assert "unit=minhash/v1; shingle=word:5; bands=9; rows=5" in s.info()["key_scheme"]
    keys = set()
    for t in texts:
        keys.update(ref.sketch(t, "word", 5, 9, 5)[3])
    assert ref.empty_text_band_key() in keys
    keys = sorted(keys)
    assert all(s.contains(keys))
    assert s.info()["exact_keys"] == len(keys)
    # Keys of other parameters (14 x 8) or of texts never seen are not there.
    other = ref.sketch(texts[0], "word", 5, 14, 8)[3]
    unseen = ref.sketch("a text that no record of the corpus holds at all", "word", 5, 9, 5)[3]
    assert not any(s.contains(other + unseen))
    # A text is not a band key: refused, not answered False.
    with pytest.raises(ValueError, match="16-byte band keys"):
        s.contains([keys[0], texts[0]])
    with pytest.raises(ValueError, match="has 15 bytes"):
        s.contains_one(keys[0][:15])
    assert s.contains_one(keys[0])
