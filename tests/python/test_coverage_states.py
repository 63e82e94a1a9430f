"""States and calls the other Python tests never made (docs/coverage.md,
src/python): a merged confirming state (forms without origins: merge keeps
no origins), a state of an empty input (a Bloom layer with no key: its FPR
estimate is 0, not 0/0), one bytes object passed where an iterable of keys
belongs, and the probe ISA the batch path uses. States from real jobs
(dedup and merge under mpiexec on one rank)."""
import json
import math

import pytest

import bloomshard
from conftest import BIN, MPIEXEC, NP_FLAG, dedup, run, synth


def _confirming_state(root, seed):
    """`dedup --unit minhash --confirm-jaccard 0.8` over 60 texts of `seed`."""
    inp = root / "in"
    inp.mkdir(parents=True)
    words = "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu".split()
    with open(inp / "a.jsonl", "w") as f:
        for i in range(60):
            text = " ".join(words[(i * 5 + j + seed) % len(words)] + str((i * 3 + j) % 40 + seed)
                            for j in range(40))
            f.write(json.dumps({"id": i, "text": text}) + "\n")
    run([MPIEXEC, NP_FLAG, 1, BIN, "dedup", "--input", inp, "--output", root / "out",
         "--state", root / "state", "--key-field", "text", "--unit", "minhash",
         "--confirm-jaccard", "0.8", "--slices", "16", "--progress", "0"])
    return root / "state"


def test_a_merged_confirming_state_has_forms_but_no_origins(tmp_path):
    a = _confirming_state(tmp_path / "a", 0)
    b = _confirming_state(tmp_path / "b", 100)
    assert bloomshard.open_state(a).info()["confirmation_form_origins"] > 0
    run([MPIEXEC, NP_FLAG, 1, BIN, "merge", "--from", a, "--from", b, "--into", tmp_path / "m"])
    m = bloomshard.open_state(tmp_path / "m", verify=True)
    info = m.info()
    assert "confirm-jaccard=0.8/b4" in info["key_scheme"]
    assert "confirm-origins" not in info["key_scheme"]
    assert info["confirmation_forms"] == info["exact_keys"] > 0
    assert info["confirmation_form_origins"] == 0
    # The merge holds the band keys of both (verify=True checked every slice,
    # forms included).
    parts = [bloomshard.open_state(p).info()["exact_keys"] for p in (a, b)]
    assert max(parts) <= info["exact_keys"] <= sum(parts)


def test_a_state_of_an_empty_input_estimates_no_false_positives(tmp_path):
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "a.jsonl").write_text("")
    dedup(tmp_path / "in", tmp_path / "out", tmp_path / "state", 1)
    info = bloomshard.open_state(tmp_path / "state").info()
    assert [layer["inserted"] for layer in info["layers"]] == [0]
    assert info["layers"][0]["fpr_estimate"] == 0.0
    assert info["fpr_estimate"] == 0.0 and not math.isnan(info["fpr_estimate"])


def test_one_bytes_object_as_the_keys_is_a_type_error(tmp_path):
    synth(tmp_path / "in", 50, 3, files=1)
    dedup(tmp_path / "in", tmp_path / "out", tmp_path / "state", 1)
    s = bloomshard.open_state(tmp_path / "state")
    for call in (s.contains, s.maybe):
        with pytest.raises(TypeError, match="not one key"):
            call(b"doc-1")  # not iterated byte by byte


def test_the_probe_isa_is_one_the_kernel_has():
    assert bloomshard.probe_isa() in ("scalar", "avx2", "avx512")
