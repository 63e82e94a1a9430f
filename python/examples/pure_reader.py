#!/usr/bin/env python3
"""A no-build reader of a saved bloomshard state: h5py + numpy + xxhash only
(Debian: python3-h5py python3-numpy python3-xxhash), written from
docs/python.md and docs/checkpoint-format.md alone. It answers the same
question as bloomshard.State.contains, about 10-50x slower; the test
tests/python/test_pure_reader.py holds it to the module's answers, which is
what proves the documentation complete.

    python3 pure_reader.py STATE_DIR KEY...     # prints "present"/"absent" per key

Limits: Python's unicodedata may be an older Unicode version than the
state's (Python 3.11: 14.0; bloomshard 15.0): keys with characters new in
15.0 can normalize differently. Everything else is exact.
"""
import os
import sys
import unicodedata

import h5py
import numpy as np
import xxhash

M64 = (1 << 64) - 1
M32 = (1 << 32) - 1
# block512-k/v1: one odd 32-bit salt per probe (include/bloomshard/core/bloom_kernel.hpp).
PROBE_SALTS = (0x453daa45, 0xa01649af, 0xcad7d321, 0x9bffc3f3, 0x47934bcb, 0xa37990f5,
               0x1aa5dc15, 0xd261a485, 0x18d6e89b, 0x95138ce3, 0x6b66a1db, 0x5223865b,
               0x5dccd6d9, 0xf396d327, 0x95855c2d, 0x0caa3f5d)


def generation_file(state_dir, generation=None):
    """LATEST's generation if its file exists, else the newest ckpt-<g>.h5."""
    if generation is not None:
        return os.path.join(state_dir, "ckpt-%d.h5" % generation)
    gens = sorted((int(n[5:-3]) for n in os.listdir(state_dir)
                   if n.startswith("ckpt-") and n.endswith(".h5") and n[5:-3].isdigit()),
                  reverse=True)
    try:
        with open(os.path.join(state_dir, "LATEST")) as f:
            latest = int(f.read().strip())
        if latest in gens:
            return os.path.join(state_dir, "ckpt-%d.h5" % latest)
    except (OSError, ValueError):
        pass
    if not gens:
        raise FileNotFoundError("no checkpoint in " + state_dir)
    return os.path.join(state_dir, "ckpt-%d.h5" % gens[0])


def normalizer(label):
    """Key bytes -> normalized key bytes (or None: the job rejects the key)."""
    name = label.split(" ")[0]
    if name in ("none", "none/v1"):
        return lambda b: b

    def text_of(b):
        try:
            return b.decode("utf-8")  # strict: no surrogates, overlongs or > U+10FFFF
        except UnicodeDecodeError:
            return None

    if name in ("nfc", "nfc/v1"):
        fn = lambda s: unicodedata.normalize("NFC", s)
    elif name in ("nfc-casefold", "nfc-casefold/v2"):
        # Canonical caseless matching (Unicode 3.13 D145), written out in NFC.
        fn = lambda s: unicodedata.normalize("NFC", unicodedata.normalize("NFD", s).casefold())
    elif name == "nfc-casefold/v1":
        fn = lambda s: unicodedata.normalize("NFC", s.casefold())
    else:
        raise ValueError("unknown normalization " + label)

    def norm(b):
        if all(c < 0x80 for c in b):  # ASCII: only casefold changes it (A-Z -> a-z)
            return b.lower() if "casefold" in name else b
        s = text_of(b)
        return None if s is None else fn(s).encode("utf-8")
    return norm


def text(v):
    """A fixed-length string attribute (h5py gives bytes or str)."""
    return v.decode("utf-8") if isinstance(v, bytes) else str(v)


def mapped(f, path, dtype, filename):
    """A contiguous dataset as a read-only numpy memmap of the file."""
    d = f[path]
    n = d.shape[0] if d.shape else 0
    if n == 0:
        return np.zeros(0, dtype=dtype)
    return np.memmap(filename, dtype=dtype, mode="r", offset=d.id.get_offset(), shape=(n,))


class Tier2Run:
    def __init__(self, filename, f):
        self.keys = f["/tier2/slice_keys"][:].astype(np.uint64)
        sbytes = f["/tier2/slice_bytes"][:].astype(np.uint64)
        self.key_start = np.concatenate(([0], np.cumsum(self.keys))).astype(np.uint64)
        self.byte_start = np.concatenate(([0], np.cumsum(sbytes))).astype(np.uint64)
        self.fps = mapped(f, "/tier2/fingerprints", "<u8", filename)
        self.offsets = mapped(f, "/tier2/offsets", "<u8", filename)
        self.bytes = mapped(f, "/tier2/bytes", "u1", filename)

    def contains(self, s, fp, key):
        n = int(self.keys[s])
        if n == 0:
            return False
        k0 = int(self.key_start[s])
        fps = self.fps[k0:k0 + n]
        offs = self.offsets[k0 + s:k0 + s + n + 1]     # slice-local, n + 1 values
        b0 = int(self.byte_start[s])
        i = int(np.searchsorted(fps, np.uint64(fp), side="left"))
        while i < n and int(fps[i]) == fp:              # ties sorted by bytes (unsigned)
            cand = self.bytes[b0 + int(offs[i]):b0 + int(offs[i + 1])].tobytes()
            if cand == key:
                return True
            if key < cand:
                return False
            i += 1
        return False


class PureState:
    def __init__(self, state_dir, generation=None):
        self.file = generation_file(state_dir, generation)
        with h5py.File(self.file, "r") as f:
            a = f.attrs
            if (text(a["hash_scheme"]), text(a["bloom_layout"])) != ("xxh3-128/v1", "block512-k/v1"):
                raise ValueError("%s: hash scheme %s, Bloom layout %s: not what this reader knows"
                                 % (self.file, text(a["hash_scheme"]), text(a["bloom_layout"])))
            self.seed = int(a["hash_seed"])
            self.p = int(a["num_slices"])
            self.normalize = normalizer(text(a["normalization"]))
            self.layers = []
            for i in range(int(a["num_layers"])):
                d = f["/bloom/layer_%d" % i]
                words = mapped(f, "/bloom/layer_%d" % i, "<u8", self.file)
                self.layers.append((i, int(d.attrs["k"]), int(d.attrs["blocks_per_slice"]), words))
            if int(a["format_version"]) == 1:
                self.runs = [Tier2Run(self.file, f)]     # tier 2 inside the generation file
            else:
                self.runs = []
                for rid in f["/runs/id"][:]:             # oldest first
                    rid = int(rid)
                    name = os.path.join(os.path.dirname(self.file),
                                        "run-%d-%08x.h5" % (rid >> 32, rid & M32))
                    with h5py.File(name, "r") as rf:
                        self.runs.append(Tier2Run(name, rf))

    @staticmethod
    def layer_block_hash(lo, layer):
        if layer == 0:
            return lo                                    # layer 0 uses lo directly
        x = lo ^ ((layer * 0x9E3779B97F4A7C15) & M64)
        x ^= x >> 32
        return (x * 0xD6E8FEB86659FD93) & M64

    def maybe_hash(self, hi, lo):
        s = (hi * self.p) >> 64                           # slice: fastrange64(hi, P)
        bits = hi & M32                                   # probe bits: low 32 of hi
        for layer, k, bps, words in self.layers:
            block = s * bps + ((self.layer_block_hash(lo, layer) * bps) >> 64)
            w = words[block * 8:block * 8 + 8]
            for j in range(k):
                b = ((bits * PROBE_SALTS[j]) & M32) >> 23  # top 9 of the LOW 32 bits
                if not (int(w[b >> 6]) >> (b & 63)) & 1:
                    break
            else:
                return True
        return False

    def contains_one(self, key, exact=True):
        if isinstance(key, str):
            key = key.encode("utf-8")
        key = self.normalize(key)
        if key is None:
            return False
        d = xxhash.xxh3_128_intdigest(key, seed=self.seed)
        hi, lo = d >> 64, d & M64
        if not self.maybe_hash(hi, lo):
            return False
        if not exact:
            return True
        s = (hi * self.p) >> 64
        return any(run.contains(s, lo, key) for run in reversed(self.runs))  # newest first

    def contains(self, keys):
        return [self.contains_one(k) for k in keys]


if __name__ == "__main__":
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    st = PureState(sys.argv[1])
    for k in sys.argv[2:]:
        print(k, "present" if st.contains_one(k) else "absent")
