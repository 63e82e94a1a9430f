"""A --unit minhash state: the module answers for band keys (the 16-byte
digests of docs/near-duplicates.md, given as bytes) exactly as the job
stored them, every record's keys included, names the scheme, and refuses a
text or a key of another size (ValueError) instead of answering False. A
confirming state (--confirm-jaccard) answers the same band-key membership
and has its forms checked with each slice (StateError naming the dataset
and slice) and counted by info(), as by `bloomshard info --json`. Oracle:
tests/bench/minhash_reference.py (the Python reference of the sketch) over
the job's inputs, not the module."""
import json
import os
import shutil
import sys

import h5py
import pytest

import bloomshard
from conftest import run, info_json, BIN, MPIEXEC, NP_FLAG, SOURCE_DIR

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


def _confirming_state(tmp_path):
    """A state of `dedup --unit minhash --confirm-jaccard 0.8` (14 x 8): its
    run files hold a 56-byte form per band key (/tier2/forms)."""
    inp = tmp_path / "in"
    inp.mkdir()
    words = "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu".split()
    texts = []
    for i in range(200):
        base = [words[(i * 5 + j) % len(words)] + str((i * 3 + j) % 40) for j in range(40)]
        texts.append(" ".join(base))
        if i % 4 == 0:  # a near copy: a few words changed
            for j in (5, 17, 31):
                base[j] = "edit" + str(j)
            texts.append(" ".join(base))
    with open(inp / "a.jsonl", "w") as f:
        for i, t in enumerate(texts):
            f.write(json.dumps({"id": i, "text": t}) + "\n")
    run([MPIEXEC, NP_FLAG, 2, "--oversubscribe", BIN, "dedup", "--input", inp, "--output",
         tmp_path / "out", "--state", tmp_path / "state", "--key-field", "text", "--unit",
         "minhash", "--confirm-jaccard", "0.8", "--slices", "16"])
    keys = set()
    for t in texts:
        keys.update(ref.sketch(t, "word", 5, 14, 8)[3])
    return tmp_path / "state", sorted(keys)


def _run_files(state):
    return sorted(str(p) for p in state.glob("run-*.h5"))


def test_confirming_state_answers_band_keys_and_reports_forms(tmp_path):
    state, keys = _confirming_state(tmp_path)
    s = bloomshard.open_state(str(state), verify=True)  # forms checked with every slice
    info = s.info()
    assert "confirm-jaccard=0.8/b4" in info["key_scheme"]
    # 14 x 8 values of 4 bits: 56 bytes a form, one per band key.
    assert info["confirmation_form_bytes"] == 56
    assert info["confirmation_forms"] == info["exact_keys"] == len(keys)
    cli = info_json(str(state))
    for name in ("confirmation_forms", "confirmation_form_bytes", "exact_keys"):
        assert cli[name] == info[name], name
    # Band-key membership is tier 2's, the same set with or without forms.
    assert all(s.contains(keys))
    assert not any(s.contains(ref.sketch("a text no record holds at all", "word", 5, 14, 8)[3]))


def test_unconfirming_state_reports_no_forms(tmp_path):
    inp = tmp_path / "in"
    inp.mkdir()
    (inp / "a.jsonl").write_text(json.dumps({"text": "one two three four five six"}) + "\n")
    run([MPIEXEC, NP_FLAG, 1, BIN, "dedup", "--input", inp, "--output", tmp_path / "out",
         "--state", tmp_path / "state", "--key-field", "text", "--unit", "minhash"])
    info = bloomshard.open_state(str(tmp_path / "state")).info()
    assert info["confirmation_forms"] == info["confirmation_form_bytes"] == 0
    assert info_json(str(tmp_path / "state"))["confirmation_form_bytes"] == 0


def test_confirming_state_with_damaged_or_missing_forms_raises(tmp_path):
    state, keys = _confirming_state(tmp_path)
    flipped = tmp_path / "flipped"
    shutil.copytree(state, flipped)
    for path in _run_files(flipped):
        with h5py.File(path, "r") as f:
            d = f["/tier2/forms"]
            at = d.id.get_offset() + d.shape[0] // 2
        with open(path, "r+b") as raw:
            raw.seek(at)
            b = raw.read(1)
            raw.seek(at)
            raw.write(bytes([b[0] ^ 0x5A]))
    with pytest.raises(bloomshard.StateError,
                       match=r"run-.*\.h5 forms of tier-2 slice \d+: XXH3 checksum mismatch "
                             r"over /tier2/forms"):
        bloomshard.open_state(str(flipped), verify=True)
    # Without verify a slice is checked when it is first needed: by the open's
    # check of a few stored keys per slice, or by a lookup.
    with pytest.raises(bloomshard.StateError, match=r"forms of tier-2 slice \d+"):
        bloomshard.open_state(str(flipped)).contains(keys)
    missing = tmp_path / "missing"
    shutil.copytree(state, missing)
    for path in _run_files(missing):
        with h5py.File(path, "r+") as f:
            del f["/tier2/form_checksums"]
    with pytest.raises(bloomshard.StateError,
                       match=r"run-.*\.h5: dataset /tier2/form_checksums is missing, but the "
                             r"key scheme says confirm-jaccard"):
        bloomshard.open_state(str(missing))


def test_confirming_state_checks_its_form_origins(tmp_path):
    """A confirming state written with --state keeps each band key's origin
    (/tier2/form_origins, key scheme item confirm-origins=v1): counted by
    info, checked with each slice like the forms."""
    state, keys = _confirming_state(tmp_path)
    info = bloomshard.open_state(str(state), verify=True).info()
    assert "confirm-origins=v1" in info["key_scheme"]
    assert info["confirmation_form_origins"] == info["exact_keys"] == len(keys)
    assert info_json(str(state))["confirmation_form_origins"] == len(keys)
    flipped = tmp_path / "flipped-origins"
    shutil.copytree(state, flipped)
    for path in _run_files(flipped):
        with h5py.File(path, "r") as f:
            d = f["/tier2/form_origins"]
            at = d.id.get_offset() + d.shape[0] * 4  # the middle byte (u64 values)
        with open(path, "r+b") as raw:
            raw.seek(at)
            b = raw.read(1)
            raw.seek(at)
            raw.write(bytes([b[0] ^ 0x5A]))
    with pytest.raises(bloomshard.StateError,
                       match=r"run-.*\.h5 form origins of tier-2 slice \d+: XXH3 checksum "
                             r"mismatch over /tier2/form_origins"):
        bloomshard.open_state(str(flipped), verify=True)
    missing = tmp_path / "missing-origins"
    shutil.copytree(state, missing)
    for path in _run_files(missing):
        with h5py.File(path, "r+") as f:
            del f["/tier2/form_origins"]
    with pytest.raises(bloomshard.StateError,
                       match=r"run-.*\.h5: dataset /tier2/form_origins is missing, but the "
                             r"key scheme says confirm-origins"):
        bloomshard.open_state(str(missing))
