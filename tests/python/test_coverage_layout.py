"""A generation whose Bloom words or per-slice checksums were rewritten as a
chunked dataset (h5py, as a repair tool might): the values are all there,
but not in one contiguous range the module can map. It refuses the state
with a StateError naming the dataset, instead of mapping bytes that are not
the words (docs/coverage.md, src/python/dataset_address.hpp). State from a
real job (synth + dedup under mpiexec on one rank)."""
import shutil

import h5py
import pytest

import bloomshard
from conftest import dedup, synth


@pytest.fixture(scope="module")
def state(tmp_path_factory):
    root = tmp_path_factory.mktemp("layout")
    synth(root / "in", 500, 8, dup_rate=0.2, files=1)
    dedup(root / "in", root / "out", root / "state", 1)
    return root / "state"


def rewritten_chunked(state, tmp_path, dataset):
    """A copy of the state whose newest generation holds `dataset` chunked,
    with the same values and attributes."""
    copy = tmp_path / "state"
    shutil.copytree(state, copy)
    generation = bloomshard.open_state(copy).info()["file"]
    with h5py.File(copy / generation.rsplit("/", 1)[-1], "r+") as f:
        attrs = dict(f[dataset].attrs)
        values = f[dataset][...]
        del f[dataset]
        d = f.create_dataset(dataset, data=values, chunks=True)
        for k, v in attrs.items():
            d.attrs[k] = v
    return copy


@pytest.mark.parametrize("dataset", ["/bloom/layer_0", "/bloom/checksums"])
def test_a_chunked_dataset_is_refused_by_name(state, tmp_path, dataset):
    assert bloomshard.open_state(state).contains_one(b"no such key") is False
    copy = rewritten_chunked(state, tmp_path, dataset)
    with pytest.raises(bloomshard.StateError, match="dataset %s is not contiguous$" % dataset):
        bloomshard.open_state(copy)
