"""Damaged states: every read path of the module (and the h5py reader of
python/examples) answers exactly or raises StateError naming the file, the
slice and what failed. The states are real jobs' (conftest.job), copied and
damaged with real byte flips at offsets h5py gives (H5Dget_offset), real
truncation, real attribute bytes; the expected answers are the job's own
outputs (kept keys) and keys of another seed (fresh)."""
import os
import random
import re
import shutil
import subprocess

import h5py
import numpy as np
import pytest

import sys

import bloomshard
from conftest import BIN

sys.path.insert(0, os.path.join(os.environ.get("BLOOMSHARD_SOURCE_DIR", ""), "python", "examples"))
import pure_reader  # noqa: E402

TIER2_COVERED = ("/tier2/fingerprints", "/tier2/offsets", "/tier2/bytes", "/tier2/checksums")


@pytest.fixture(scope="module")
def fixture(job, tmp_path_factory):
    """A private copy of the job's state, its files, and the keys by slice."""
    state = tmp_path_factory.mktemp("damage") / "state"
    shutil.copytree(job["state"], state)
    s = bloomshard.open_state(state)
    info = s.info()
    rnd = random.Random(3)
    fresh = rnd.sample(job["fresh"], 20000)
    p, seed = info["slices"], s.hash_seed
    # policy none: a key's bytes are hashed as they are
    slices = [(bloomshard.hash_key(k.encode(), seed)[0] * p) >> 64 for k in job["kept"]]
    return {
        "state": state,
        "generation": state / os.path.basename(info["file"]),
        "runs": [state / r["file"] for r in info["runs"]],  # oldest first
        "p": p,
        "seed": seed,
        "kept": job["kept"],
        "slices": slices,
        "fresh": fresh,
    }


def kept_in(fx, s, inside=True):
    """The kept keys of slice s (or, inside=False, of every other slice)."""
    return [k for k, ks in zip(fx["kept"], fx["slices"]) if (ks == s) == inside]


class Flip:
    """XORs one byte of a file for the duration of a with-block."""

    def __init__(self, path, offset, mask=0x01):
        self.path, self.offset, self.mask = path, offset, mask

    def _xor(self):
        with open(self.path, "r+b") as f:
            f.seek(self.offset)
            b = f.read(1)
            assert len(b) == 1, "offset beyond the file"
            f.seek(self.offset)
            f.write(bytes([b[0] ^ self.mask]))

    def __enter__(self):
        self._xor()
        return self

    def __exit__(self, *exc):
        self._xor()


def dataset_span(path, name):
    """(file offset, byte size) of a contiguous dataset."""
    with h5py.File(path, "r") as f:
        d = f[name]
        return d.id.get_offset(), d.id.get_storage_size()


def read_paths(fx, step):
    """Every read path of the module, as (name, call, expected answer), on
    every `step`-th kept key (one-key calls on every 10 * step-th)."""
    kept, fresh = fx["kept"][::step], fx["fresh"][::step]
    few = kept[::10]
    one = kept[len(kept) // 2]
    filt = lambda s: bloomshard.StateFilter(s, key="id")  # noqa: E731
    return [
        ("contains(kept)", lambda s: s.contains(kept), [True] * len(kept)),
        ("contains(fresh)", lambda s: s.contains(fresh), [False] * len(fresh)),
        ("contains(bytes)", lambda s: s.contains([k.encode() for k in kept]), [True] * len(kept)),
        ("maybe(kept)", lambda s: s.maybe(kept), [True] * len(kept)),
        ("contains_one", lambda s: [s.contains_one(k) for k in few], [True] * len(few)),
        ("maybe_one", lambda s: [s.maybe_one(k) for k in few], [True] * len(few)),
        ("in", lambda s: one in s, True),
        ("filter_batch", lambda s: filt(s).filter_batch([{"id": k} for k in kept]),
         [False] * len(kept)),
        ("filter", lambda s: [filt(s).filter({"id": k}) for k in few], [False] * len(few)),
    ]


def exact_or_raises(fx, what, step=1):
    """Opens the (damaged) state with and without verify and runs every read
    path: each must give the exact answer or raise StateError. Returns the
    error texts (empty when everything answered exactly)."""
    errors = []
    try:
        bloomshard.open_state(fx["state"], verify=True)
    except bloomshard.StateError as e:
        errors.append(str(e))
    try:
        s = bloomshard.open_state(fx["state"])
    except bloomshard.StateError as e:
        return errors + [str(e)]
    for name, call, want in read_paths(fx, step):
        try:
            got = call(s)
        except bloomshard.StateError as e:
            errors.append(str(e))
            continue
        assert got == want, "%s: %s answered wrongly without an error" % (what, name)
    try:
        s.info()
    except bloomshard.StateError as e:
        errors.append(str(e))
    return errors


def pure_exact_or_raises(fx, what):
    try:
        p = pure_reader.PureState(str(fx["state"]))
        keys = fx["kept"][::30] + fx["fresh"][::20]
        want = [True] * len(fx["kept"][::30]) + [False] * len(fx["fresh"][::20])
        assert p.contains(keys) == want, "%s: the h5py reader answered wrongly" % what
    except pure_reader.DamagedState as e:
        return [str(e)]
    return []


def test_intact_state_answers_and_checks_each_slice_once(fixture):
    fx = fixture
    assert exact_or_raises(fx, "intact") == []
    assert pure_exact_or_raises(fx, "intact") == []
    s = bloomshard.open_state(fx["state"])
    before = s.check_progress()
    # Open checks the slices of the 16 stored keys per run it re-hashes.
    assert 0 < before["tier2_checked"] <= 16 * len(fx["runs"])
    assert 0 < before["bloom_checked"] < fx["p"]
    s.contains(fx["kept"])
    after = s.check_progress()
    assert after["bloom_checked"] == after["bloom_slices"] == fx["p"]
    assert after["tier2_checked"] == after["tier2_slices"] == fx["p"] * len(fx["runs"])
    assert after["checks_run"] == after["bloom_checked"] + after["tier2_checked"]
    s.contains(fx["kept"])
    s.maybe(fx["fresh"])
    assert s.check_progress() == after, "a verdict was not remembered: a slice was checked again"
    v = bloomshard.open_state(fx["state"], verify=True)
    assert v.check_progress() == after and v.info()["checksums_verified"] is True
    v.contains(fx["kept"])
    assert v.check_progress() == after
    assert s.info()["checksums_verified"] is False


def biggest_slice(run):
    """The run's biggest slice in the upper half (open checks the first 16
    non-empty slices of each run itself), and the key prefix sums."""
    with h5py.File(run, "r") as f:
        keys = f["/tier2/slice_keys"][:]
    half = len(keys) // 2
    return half + int(np.argmax(keys[half:])), np.concatenate(([0], np.cumsum(keys))).astype(np.int64)


@pytest.mark.parametrize("dataset", TIER2_COVERED)
def test_tier2_damage_raises_naming_file_and_slice(fixture, dataset):
    fx = fixture
    for run in fx["runs"]:
        s, key_start = biggest_slice(run)
        with h5py.File(run, "r") as f:
            byte_start = np.concatenate(([0], np.cumsum(f["/tier2/slice_bytes"][:]))).astype(np.int64)
        n = key_start[s + 1] - key_start[s]
        addr, _ = dataset_span(run, dataset)
        element = {
            "/tier2/fingerprints": (key_start[s] + n // 2) * 8,
            "/tier2/offsets": (key_start[s] + s + n // 2) * 8,
            "/tier2/bytes": byte_start[s] + (byte_start[s + 1] - byte_start[s]) // 2,
            "/tier2/checksums": s * 8,
        }[dataset]
        for mask in (0x01, 0x80):
            with Flip(run, addr + int(element), mask):
                errors = exact_or_raises(fx, "%s %s" % (run.name, dataset), step=3)
                want = re.escape(str(run)) + r" tier-2 slice %d: " % s
                assert errors and all(re.match(want, e) for e in errors), (dataset, errors)
                assert any("checksum mismatch" in e or "offsets" in e for e in errors)
                # Keys of other slices still answer, exactly.
                st = bloomshard.open_state(fx["state"])
                others = kept_in(fx, s, inside=False)
                assert st.contains(others) == [True] * len(others)
                # A failed slice stays failed (the verdict is kept).
                mine = kept_in(fx, s)
                for _ in range(2):
                    with pytest.raises(bloomshard.StateError, match=want):
                        st.contains(mine)
                with pytest.raises(pure_reader.DamagedState, match=want):
                    pure_reader.PureState(str(fx["state"])).contains(mine)


@pytest.mark.parametrize("what", ["layer", "checksums"])
def test_bloom_damage_raises_naming_file_and_slice(fixture, what):
    fx = fixture
    gen = fx["generation"]
    s = fx["p"] // 2
    with h5py.File(gen, "r") as f:
        layers = sorted(int(n[6:]) for n in f["/bloom"] if n.startswith("layer_"))
        bps = {i: int(f["/bloom/layer_%d" % i].attrs["blocks_per_slice"]) for i in layers}
    for layer in layers:
        if what == "layer":
            addr, _ = dataset_span(gen, "/bloom/layer_%d" % layer)
            at = addr + (s * bps[layer] * 8 + 3) * 8 + 2  # a byte of a word of slice s
        else:
            addr, _ = dataset_span(gen, "/bloom/checksums")
            at = addr + (layer * fx["p"] + s) * 8
        with Flip(gen, at):
            errors = exact_or_raises(fx, "layer %d %s" % (layer, what), step=3)
            want = re.escape(str(gen)) + r" Bloom slice %d: XXH3 checksum mismatch in /bloom/layer_%d" % (s, layer)
            assert errors and all(re.match(want, e) for e in errors), errors
            st = bloomshard.open_state(fx["state"])
            mine, others = kept_in(fx, s), kept_in(fx, s, inside=False)
            assert st.maybe(others) == [True] * len(others)
            for call in (st.contains, st.maybe, lambda ks: st.contains_one(ks[0]),
                         lambda ks: st.maybe_one(ks[0]), lambda ks: ks[0] in st):
                with pytest.raises(bloomshard.StateError, match=want):
                    call(mine)
            with pytest.raises(pure_reader.DamagedState, match=r"Bloom slice %d: " % s):
                pure_reader.PureState(str(fx["state"])).contains(mine)


def all_datasets(path):
    out = []
    with h5py.File(path, "r") as f:
        f.visititems(lambda n, o: out.append("/" + n) if isinstance(o, h5py.Dataset) else None)
    return out


def test_every_dataset_of_every_file_exact_or_raises(fixture):
    """A flipped byte at the start, the middle and the end of each dataset of
    the generation file and of each run file, two bit positions each."""
    fx = fixture
    raised = set()
    for path in [fx["generation"]] + fx["runs"]:
        for name in all_datasets(path):
            addr, size = dataset_span(path, name)
            if size == 0:
                continue
            for at, mask in sorted({(0, 0x01), (size // 2, 0x40), (size - 1, 0x01)}):
                with Flip(path, addr + at, mask):
                    what = "%s %s byte %d ^ %#x" % (path.name, name, at, mask)
                    errors = exact_or_raises(fx, what, step=5) + pure_exact_or_raises(fx, what)
                    for e in errors:
                        assert path.name in e, (what, e)
                    if errors:
                        raised.add(name)
    # The datasets every lookup relies on can never be damaged silently.
    for name in ("/bloom/layer_0", "/bloom/checksums", "/manifest_json", "/runs/id",
                 "/runs/keys", "/runs/bytes", "/tier2/slice_keys", "/tier2/slice_bytes") + TIER2_COVERED:
        assert name in raised, name


def test_truncated_files_raise_naming_the_file(fixture, tmp_path):
    fx = fixture
    for path in [fx["generation"]] + fx["runs"]:
        size = os.path.getsize(path)
        keep = tmp_path / "whole"
        shutil.copyfile(path, keep)
        try:
            for new_size in (size // 2, size - 1, 2048):
                os.truncate(path, new_size)
                errors = exact_or_raises(fx, "%s cut to %d" % (path.name, new_size), step=5)
                errors += pure_exact_or_raises(fx, "%s cut to %d" % (path.name, new_size))
                assert errors, "%s cut to %d bytes: no error" % (path.name, new_size)
                assert all(str(path) in e for e in errors), errors
        finally:
            shutil.copyfile(keep, path)


def test_hash_seed_bytes_damaged_raise(fixture):
    fx = fixture
    data = fx["generation"].read_bytes()
    seed = fx["seed"].to_bytes(8, "little")
    assert data.count(seed) == 1, "the hash_seed attribute's bytes are not unique in the file"
    for byte in (0, 7):
        with Flip(fx["generation"], data.index(seed) + byte, 0x10):
            with pytest.raises(bloomshard.StateError, match="hash_seed .* does not reproduce"):
                bloomshard.open_state(fx["state"])
            with pytest.raises(pure_reader.DamagedState, match="hash_seed"):
                pure_reader.PureState(str(fx["state"]))


def changed(value):
    """`value` with one bit of its first (or, for text, last) byte changed, same type and size."""
    if isinstance(value, bytes):
        return np.bytes_(value[:-1] + bytes([value[-1] ^ 0x01]))
    a = np.array(value)
    b = bytearray(a.tobytes())
    b[0] ^= 0x01
    return np.frombuffer(bytes(b), dtype=a.dtype).reshape(a.shape)[()]


def test_every_header_attribute_exact_or_raises(fixture):
    """Each attribute of the generation file (root and Bloom layers) and of
    the newest run file, changed in one bit."""
    fx = fixture
    targets = [(fx["generation"], "/"), (fx["runs"][-1], "/")]
    with h5py.File(fx["generation"], "r") as f:
        targets += [(fx["generation"], "/bloom/" + n) for n in f["/bloom"] if n.startswith("layer_")]
    seen = 0
    for path, obj in targets:
        with h5py.File(path, "r") as f:
            names = list(f[obj].attrs)
        for name in names:
            with h5py.File(path, "r+") as f:
                old = f[obj].attrs[name]
                f[obj].attrs.modify(name, changed(old))
            try:
                what = "%s %s attribute %s" % (path.name, obj, name)
                errors = exact_or_raises(fx, what, step=5) + pure_exact_or_raises(fx, what)
                if name in ("hash_seed", "num_slices", "format_version", "num_layers", "tier2_run"):
                    assert errors, what + ": changed without an error"
            finally:
                with h5py.File(path, "r+") as f:
                    f[obj].attrs.modify(name, old)
            seen += 1
    assert seen >= 20
    assert exact_or_raises(fx, "restored") == []


def test_info_and_verify_commands(fixture, tmp_path):
    fx = fixture
    r = subprocess.run([BIN, "info", "--state", fx["state"]], capture_output=True, text=True)
    assert r.returncode == 0
    assert re.search(r"^checksums +not verified: .*run `bloomshard verify --state %s`"
                     % re.escape(str(fx["state"])), r.stdout, re.M), r.stdout
    r = subprocess.run([BIN, "info", "--json", "--state", fx["state"]], capture_output=True, text=True)
    assert '"checksums_verified":false' in r.stdout.replace(" ", "")
    empty = tmp_path / "empty"
    empty.mkdir()
    for missing in (tmp_path / "nope", empty):
        for cmd in ("info", "verify"):
            r = subprocess.run([BIN, cmd, "--state", missing], capture_output=True, text=True)
            assert r.returncode == 2, (cmd, missing, r.returncode, r.stderr)
            assert str(missing) in r.stderr and ("no state dir" in r.stderr or "no checkpoint" in r.stderr)
    # A damaged slice: info still describes the state (and says it checked
    # no slice); verify names the slice and exits 1.
    run = fx["runs"][-1]
    addr, size = dataset_span(run, "/tier2/bytes")
    with Flip(run, addr + size // 2):
        r = subprocess.run([BIN, "info", "--state", fx["state"]], capture_output=True, text=True)
        assert r.returncode == 0 and "not verified" in r.stdout
        r = subprocess.run([BIN, "verify", "--state", fx["state"]], capture_output=True, text=True)
        assert r.returncode == 1 and "checksum" in r.stdout, r.stdout
