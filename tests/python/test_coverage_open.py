"""Opening states the other Python tests never opened (docs/coverage.md,
src/python/read_only_state.cpp): a key_scheme attribute this build cannot
parse, a verifying open of a state with more damaged slices than the
message lists, and a windowed state (--window: the Bloom layers of each
slot). Each refused with a StateError naming what is wrong, or answered as
the C++ query command answers from the same state. States from real jobs
(synth + dedup under mpiexec on one rank); damage made with h5py."""
import shutil

import h5py
import numpy as np
import pytest

import bloomshard
from conftest import BIN, MPIEXEC, NP_FLAG, dedup, json_ids, run, synth


def newest_generation(state):
    return state / bloomshard.open_state(state).info()["file"].rsplit("/", 1)[-1]


def test_a_key_scheme_this_build_cannot_read_is_refused(tmp_path):
    synth(tmp_path / "in", 300, 4, dup_rate=0.2, files=1)
    dedup(tmp_path / "in", tmp_path / "out", tmp_path / "state", 1, "--key-digest", "xxh3-128")
    with h5py.File(newest_generation(tmp_path / "state"), "r+") as f:
        scheme = f.attrs["key_scheme"]
        scheme = scheme.decode() if isinstance(scheme, bytes) else scheme
        assert "digest=xxh3-128/v1" in scheme, scheme
        f.attrs["key_scheme"] = np.bytes_(scheme.replace("digest=xxh3-128/v1", "digest=md5/v9"))
    with pytest.raises(bloomshard.StateError, match=r"ckpt-\d+\.h5: key scheme: .*md5/v9"):
        bloomshard.open_state(tmp_path / "state")


def test_a_verifying_open_lists_eight_damaged_slices_then_a_count(tmp_path):
    """13 slices whose Bloom checksums no longer match: the first 8 are
    named one per line, then '... and 5 more problems'."""
    synth(tmp_path / "in", 300, 5, dup_rate=0.2, files=1)
    dedup(tmp_path / "in", tmp_path / "out", tmp_path / "state", 1, "--slices", "64")
    bloomshard.open_state(tmp_path / "state", verify=True)  # whole before the damage
    with h5py.File(newest_generation(tmp_path / "state"), "r+") as f:
        sums = f["/bloom/checksums"]
        values = sums[...]
        assert values.shape == (1, 64), values.shape  # (layers, slices)
        values[0, :13] ^= np.array(1, dtype=values.dtype)
        sums[...] = values
    with pytest.raises(bloomshard.StateError) as e:
        bloomshard.open_state(tmp_path / "state", verify=True)
    lines = str(e.value).split("\n")
    assert len(lines) == 9, lines
    assert all("slice" in line for line in lines[:8]), lines
    assert lines[8] == "... and 5 more problems", lines


def test_a_windowed_state_answers_as_the_query_command(tmp_path):
    """Three runs into one --window 1 state (each run a slot; the oldest
    expires): for the keys of every run and of a corpus never seen, the
    module answers what `bloomshard query --emit hits` answers, and holds
    every key the last run kept."""
    state = tmp_path / "state"
    for r, seed in enumerate((21, 22, 23)):
        synth(tmp_path / ("in%d" % r), 300, seed, dup_rate=0.2, files=1)
        dedup(tmp_path / ("in%d" % r), tmp_path / ("out%d" % r), state, 1, "--window", "1")
    synth(tmp_path / "fresh", 300, 99, files=1)
    s = bloomshard.open_state(state)
    assert len(s.info()["layers"]) == 2, "want one Bloom layer per live slot: %s" % s.info()
    assert all(s.contains(json_ids(tmp_path / "out2"))), "a key the last run kept is missing"
    answers = {}
    for probe in ("in0", "in1", "in2", "fresh"):
        ids = json_ids(tmp_path / probe)
        run([MPIEXEC, NP_FLAG, 1, "--oversubscribe", BIN, "query", "--state", state,
             "--input", tmp_path / probe, "--output", tmp_path / ("q-" + probe),
             "--key-field", "id", "--emit", "hits"])
        hits = set(json_ids(tmp_path / ("q-" + probe)))
        got = s.contains(ids)
        assert got == [i in hits for i in ids], "the module and query disagree on " + probe
        answers[probe] = sum(got)
    assert answers["in0"] < len(set(json_ids(tmp_path / "in0"))), \
        "no key of the first run expired: the case does not exercise the window (%s)" % answers
    assert answers["fresh"] == 0, answers
