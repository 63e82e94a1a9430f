"""Behaviour of the Python module that the other tests left unchecked
(docs/testing.md "Mutation check"): each test fails on a surviving mutant of
src/python and asserts what a user sees (an error's type and words, what
stderr shows, the figures of info()). The state is a real job's: synth +
dedup under mpiexec on one rank, small (2000 records)."""
import os
import shutil

import pytest

import bloomshard
from conftest import dedup, info_json, synth


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    root = tmp_path_factory.mktemp("small")
    synth(root / "in", 2000, 4, dup_rate=0.3, files=1)
    dedup(root / "in", root / "out", root / "state", 1)
    return root


def fresh_copy(small, tmp_path):
    state = tmp_path / "state"
    shutil.copytree(small / "state", state)
    return state


def test_a_damaged_state_raises_state_error_and_prints_no_hdf5_diagnostics(small, tmp_path, capfd):
    """The HDF5 library's own error stack stays off stderr: the StateError
    says what failed, once."""
    state = fresh_copy(small, tmp_path)
    generation = state / os.path.basename(bloomshard.open_state(state).info()["file"])
    capfd.readouterr()
    os.truncate(generation, 3000)
    with pytest.raises(bloomshard.StateError, match="truncated file"):
        bloomshard.open_state(state)
    err = capfd.readouterr().err
    assert "HDF5-DIAG" not in err and err == "", err


@pytest.mark.parametrize("call", ["normalize", "contains_one", "maybe_one"])
def test_one_key_of_another_type_is_a_type_error_naming_key_0(small, call):
    s = bloomshard.open_state(small / "state")
    with pytest.raises(TypeError, match=r"^key 0 is int, not str or bytes$"):
        getattr(s, call)(42)


def test_info_of_an_open_state_matches_the_command_and_counts_a_removed_run_file_as_0_bytes(
        small, tmp_path):
    """info() gives the run files' sizes as `bloomshard info --json` does; a
    run file removed while the state is open (its mapping stays readable)
    counts 0 bytes, never a guess."""
    state = fresh_copy(small, tmp_path)
    s = bloomshard.open_state(state)
    want = info_json(state)
    got = s.info()
    assert [(r["file"], r["file_bytes"]) for r in got["runs"]] == \
        [(r["file"], r["file_bytes"]) for r in want["runs"]]
    assert got["run_file_bytes"] == want["run_file_bytes"] > 0
    assert got["cardinality_estimate"] == pytest.approx(want["cardinality_estimate"])
    first = got["runs"][0]
    os.remove(state / first["file"])
    after = s.info()
    assert after["runs"][0]["file_bytes"] == 0, after["runs"][0]
    assert after["run_file_bytes"] == got["run_file_bytes"] - first["file_bytes"]


def test_an_nfc_state_with_a_key_scheme_suffix_opens_and_answers(tmp_path):
    """The unicode version is the token after "unicode", before the
    " key-scheme/v1" suffix: an nfc digest state of this build opens and
    answers its keys in either composition."""
    inp = tmp_path / "in"
    inp.mkdir()
    (inp / "a.jsonl").write_text('{"id": "Caf\\u00e9 one"}\n{"id": "Cafe\\u0301 one"}\n'
                                 '{"id": "two"}\n', encoding="utf-8")
    dedup(inp, tmp_path / "out", tmp_path / "state", 1, "--normalize", "nfc",
          "--key-digest", "sha256")
    s = bloomshard.open_state(tmp_path / "state")
    assert s.normalization.endswith(" key-scheme/v1"), s.normalization
    assert s.contains(["Caf\u00e9 one", "Cafe\u0301 one", "two", "three"]) == \
        [True, True, True, False]


def test_the_hash_seed_property_is_the_seed_the_state_was_made_with(tmp_path):
    """State.hash_seed reports the job's --hash-seed (not a default, not
    None), and the keys answer under it."""
    inp = tmp_path / "in"
    inp.mkdir()
    (inp / "a.jsonl").write_text('{"id": "a"}\n{"id": "b"}\n', encoding="utf-8")
    dedup(inp, tmp_path / "out", tmp_path / "state", 1, "--hash-seed", "987654321")
    s = bloomshard.open_state(tmp_path / "state")
    assert s.hash_seed == 987654321
    assert s.contains(["a", "b", "c"]) == [True, True, False]
