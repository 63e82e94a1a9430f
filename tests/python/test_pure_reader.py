"""The documented no-build reader (python/examples/pure_reader.py: h5py,
numpy, xxhash, written from docs/python.md) gives the module's answers on a
multi-layer, multi-run state, tier 1 included: the same false positives
prove the Bloom facts (salts, the >>23 rule, the layer remix), the same
exact answers the tier-2 layout and search."""
import os
import random
import sys

import bloomshard

sys.path.insert(0, os.path.join(os.environ.get("BLOOMSHARD_SOURCE_DIR", ""), "python", "examples"))
import pure_reader  # noqa: E402


def test_hash_matches_the_cpp_hash():
    import xxhash
    for key in (b"", b"a", "caf\u00e9".encode(), bytes(range(256)) * 3):
        for seed in (0, 1, 0x626C6F6F6D736864):
            d = xxhash.xxh3_128_intdigest(key, seed=seed)
            assert bloomshard.hash_key(key, seed) == (d >> 64, d & ((1 << 64) - 1))


def test_same_answers_as_the_module(job):
    s = bloomshard.open_state(job["state"])
    p = pure_reader.PureState(str(job["state"]))
    rnd = random.Random(5)
    kept = rnd.sample(job["kept"], 3000)
    fresh = rnd.sample(job["fresh"], 20000)
    assert p.contains(kept) == s.contains(kept) == [True] * len(kept)
    assert p.contains(fresh) == s.contains(fresh) == [False] * len(fresh)
    maybe_pure = [p.contains_one(k, exact=False) for k in fresh]
    assert maybe_pure == s.maybe(fresh)
    assert 0 < sum(maybe_pure), "no false positive seen: the tier-1 comparison proved little"


def test_older_generation_and_casefold(job, tmp_path):
    gens = sorted(int(n[5:-3]) for n in os.listdir(job["state"]) if n.startswith("ckpt-"))
    s = bloomshard.open_state(job["state"], generation=gens[0])
    p = pure_reader.PureState(str(job["state"]), generation=gens[0])
    keys = job["kept"][::20]
    assert p.contains(keys) == s.contains(keys)
    # Upper-case spellings: the state is normalized with "none", so they are new.
    upper = [k.upper() for k in keys[:500]]
    assert p.contains(upper) == s.contains(upper) == [False] * len(upper)


def test_all_sixteen_salts(tmp_path):
    # A very low FPR target gives k = 16 probes per layer: every salt of the
    # layout is then used, and a wrong one would lose present keys.
    from conftest import dedup, json_ids, synth
    synth(tmp_path / "in", 5000, 11, dup_rate=0.2, files=2)
    dedup(tmp_path / "in", tmp_path / "out", tmp_path / "state", 2, "--fpr", "1e-6",
          "--slices", "7", "--capacity", "1500")
    s = bloomshard.open_state(tmp_path / "state")
    assert all(layer["k"] == 16 for layer in s.info()["layers"])
    assert len(s.info()["layers"]) >= 2
    kept = json_ids(tmp_path / "out")
    p = pure_reader.PureState(str(tmp_path / "state"))
    assert [p.contains_one(k, exact=False) for k in kept] == s.maybe(kept) == [True] * len(kept)
