"""The Python module's checks of a run file's confirmation datasets
(mapped_run.cpp open_forms) that the damage and MinHash tests leave out,
each on a real state rewritten with h5py: forms or origins held by a run
whose key scheme has no item for them, a checksum table of another shape
than one value per slice, and a forms dataset the store refuses. Each is a
StateError naming the run file and the dataset, never an answer."""
import json
import shutil

import h5py
import numpy as np
import pytest

import bloomshard
from conftest import run, BIN, MPIEXEC, NP_FLAG

SLICES = 16


def _state(tmp_path, name, *extra):
    """A --unit minhash state of 1 rank and SLICES slices: with `extra`
    ("--confirm-jaccard", "0.8") its run files hold forms and origins."""
    inp = tmp_path / ("in-" + name)
    inp.mkdir()
    words = "alpha beta gamma delta epsilon zeta eta theta iota kappa".split()
    with open(inp / "a.jsonl", "w") as f:
        for i in range(120):
            text = " ".join(words[(i * 3 + j) % len(words)] + str((i + j) % 30) for j in range(30))
            f.write(json.dumps({"id": i, "text": text}) + "\n")
    state = tmp_path / name
    run([MPIEXEC, NP_FLAG, 1, "--oversubscribe", BIN, "dedup", "--input", inp, "--output",
         tmp_path / ("out-" + name), "--state", state, "--key-field", "text", "--unit",
         "minhash", "--slices", SLICES, *extra])
    return state


@pytest.fixture(scope="module")
def states(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("forms")
    return {"plain": _state(tmp, "plain"),
            "confirming": _state(tmp, "confirming", "--confirm-jaccard", "0.8")}


def _rewritten(states, tmp_path, which, change):
    """A copy of a state with `change(h5py.File)` applied to each run file."""
    copy = tmp_path / which
    shutil.copytree(states[which], copy)
    runs = sorted(copy.glob("run-*.h5"))
    assert runs, "the state has no run file"
    for path in runs:
        with h5py.File(path, "r+") as f:
            change(f)
    return copy


def _refused(state, pattern):
    with pytest.raises(bloomshard.StateError, match=pattern):
        bloomshard.open_state(str(state))


@pytest.mark.parametrize("dataset,item", [("/tier2/form_origins", "confirm-origins"),
                                          ("/tier2/forms", "confirm-jaccard")])
def test_a_confirmation_dataset_without_its_key_scheme_item_is_refused(states, tmp_path,
                                                                       dataset, item):
    state = _rewritten(states, tmp_path, "plain",
                       lambda f: f.create_dataset(dataset, data=np.zeros(8, dtype=np.uint8)))
    _refused(state, r"run-.*\.h5: holds dataset %s, but the key scheme has no %s item"
             % (dataset, item))


@pytest.mark.parametrize("dataset", ["/tier2/form_checksums", "/tier2/form_origin_checksums"])
def test_a_checksum_table_of_another_shape_than_one_value_per_slice_is_refused(states, tmp_path,
                                                                               dataset):
    def longer(f):
        del f[dataset]
        f.create_dataset(dataset, data=np.zeros(SLICES + 1, dtype=np.uint64))
    state = _rewritten(states, tmp_path, "confirming", longer)
    _refused(state, r"run-.*\.h5: dataset %s is not 1-D of %d values \(one per slice\)"
             % (dataset, SLICES))


def test_forms_the_store_cannot_map_are_refused_naming_the_run_file(states, tmp_path):
    def shorter(f):
        n = f["/tier2/forms"].shape[0]
        del f["/tier2/forms"]
        f.create_dataset("/tier2/forms", data=np.zeros(max(n - 56, 1), dtype=np.uint8))
    state = _rewritten(states, tmp_path, "confirming", shorter)
    # The store's refusal with the run file before it, and nothing after it.
    _refused(state, r"run-.*\.h5: dataset /tier2/forms is not 1-D of \d+ bytes \(\d+ keys x 56 "
             r"bytes of forms\)$")
