#!/usr/bin/env python3
"""A no-build reader of a saved bloomshard state: h5py + numpy + xxhash only
(Debian: python3-h5py python3-numpy python3-xxhash), written from
docs/python.md and docs/checkpoint-format.md alone. It answers the same
question as bloomshard.State.contains, about 10-50x slower; the test
tests/python/test_pure_reader.py holds it to the module's answers, which is
what proves the documentation complete.

    python3 pure_reader.py STATE_DIR KEY...     # prints "present"/"absent" per key

Like the module, it answers exactly or raises (DamagedState, naming file,
slice and what failed): each slice is checked against its stored XXH3-64
checksum the first time a lookup needs it (Bloom words of every layer;
each run's fingerprints + offsets + bytes), and the verdict is kept; at
open, one stored key must hash back to its slice and fingerprint (a
damaged hash_seed would otherwise make every key absent).

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


class DamagedState(ValueError):
    """A state file that cannot be read as written: names file, slice and cause."""


def open_h5(name):
    try:
        return h5py.File(name, "r")
    except OSError as e:
        raise DamagedState("%s: cannot open as HDF5 (missing, truncated or damaged?): %s"
                           % (name, e)) from None


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
    n = int(np.prod(d.shape)) if d.shape else 0
    if n == 0:
        return np.zeros(0, dtype=dtype)
    try:
        return np.memmap(filename, dtype=dtype, mode="r", offset=d.id.get_offset(), shape=(n,))
    except ValueError as e:  # the file ends before the dataset does
        raise DamagedState("%s: dataset %s lies beyond the end of the file (truncated?): %s"
                           % (filename, path, e)) from None


def xxh3_64(*arrays):
    """XXH3-64 (seed 0) of the arrays' bytes as one stream."""
    h = xxhash.xxh3_64()
    for a in arrays:
        h.update(a.tobytes())
    return h.intdigest()


class Tier2Run:
    def __init__(self, filename, f, keys, nbytes, listed_by):
        self.file = filename
        self.keys = f["/tier2/slice_keys"][:].astype(np.uint64)
        self.sbytes = f["/tier2/slice_bytes"][:].astype(np.uint64)
        self.checksums = f["/tier2/checksums"][:].astype(np.uint64)
        if (int(self.keys.sum()), int(self.sbytes.sum())) != (keys, nbytes):
            raise DamagedState("%s: /tier2/slice_keys and /tier2/slice_bytes add up to %d keys of "
                               "%d bytes, %s lists %d keys of %d bytes (/runs/keys, /runs/bytes)"
                               % (filename, self.keys.sum(), self.sbytes.sum(), listed_by, keys,
                                  nbytes))
        self.key_start = np.concatenate(([0], np.cumsum(self.keys))).astype(np.uint64)
        self.byte_start = np.concatenate(([0], np.cumsum(self.sbytes))).astype(np.uint64)
        self.fps = mapped(f, "/tier2/fingerprints", "<u8", filename)
        self.offsets = mapped(f, "/tier2/offsets", "<u8", filename)
        self.bytes = mapped(f, "/tier2/bytes", "u1", filename)
        if (len(self.fps), len(self.offsets), len(self.bytes)) != (keys, keys + len(self.keys), nbytes):
            raise DamagedState("%s: the /tier2 datasets do not have the lengths the index gives"
                               % filename)
        self.verdicts = {}                               # slice -> None (good) or the problem

    def slice(self, s):
        """(fingerprints, offsets, bytes) of slice s, checked on first use."""
        n, k0, b0 = int(self.keys[s]), int(self.key_start[s]), int(self.byte_start[s])
        fps = self.fps[k0:k0 + n]
        offs = self.offsets[k0 + s:k0 + s + n + 1]     # slice-local, n + 1 values
        kb = self.bytes[b0:b0 + int(self.sbytes[s])]
        if s not in self.verdicts:
            problem = None
            if xxh3_64(fps, offs, kb) != int(self.checksums[s]):
                problem = "XXH3 checksum mismatch over /tier2/fingerprints, /tier2/offsets, /tier2/bytes"
            elif offs[0] != 0 or offs[-1] != len(kb) or np.any(offs[1:] < offs[:-1]):
                problem = "offsets do not span the slice's bytes"
            self.verdicts[s] = problem
        if self.verdicts[s] is not None:
            raise DamagedState("%s tier-2 slice %d: %s" % (self.file, s, self.verdicts[s]))
        return fps, offs, kb

    def contains(self, s, fp, key):
        fps, offs, kb = self.slice(s)                    # empty slices are checked too
        n = len(fps)
        i = int(np.searchsorted(fps, np.uint64(fp), side="left"))
        while i < n and int(fps[i]) == fp:              # ties sorted by bytes (unsigned)
            cand = kb[int(offs[i]):int(offs[i + 1])].tobytes()
            if cand == key:
                return True
            if key < cand:
                return False
            i += 1
        return False


class PureState:
    def __init__(self, state_dir, generation=None):
        self.file = generation_file(state_dir, generation)
        try:
            self.open()
        except (KeyError, ValueError) as e:
            if isinstance(e, DamagedState):
                raise
            # A missing object or attribute, a value this reader refuses.
            raise DamagedState("%s: %s" % (self.file, e)) from None
        self.check_stored_keys()

    def open(self):
        with open_h5(self.file) as f:
            a = f.attrs
            if (text(a["hash_scheme"]), text(a["bloom_layout"])) != ("xxh3-128/v1", "block512-k/v1"):
                raise DamagedState("%s: hash scheme %s, Bloom layout %s: not what this reader knows"
                                 % (self.file, text(a["hash_scheme"]), text(a["bloom_layout"])))
            self.seed = int(a["hash_seed"])
            self.p = int(a["num_slices"])
            self.normalize = normalizer(text(a["normalization"]))
            self.layers = []
            for i in range(int(a["num_layers"])):
                d = f["/bloom/layer_%d" % i]
                words = mapped(f, "/bloom/layer_%d" % i, "<u8", self.file)
                bps, k = int(d.attrs["blocks_per_slice"]), int(d.attrs["k"])
                if not 1 <= k <= len(PROBE_SALTS):
                    raise DamagedState("%s: /bloom/layer_%d has k %d, not 1..16" % (self.file, i, k))
                if len(words) != self.p * bps * 8:
                    raise DamagedState("%s: /bloom/layer_%d does not have num_slices x "
                                       "blocks_per_slice x 8 words" % (self.file, i))
                self.layers.append((i, k, bps, words))
            self.bloom_checksums = f["/bloom/checksums"][:].astype(np.uint64)  # [L][P]
            if self.bloom_checksums.shape != (len(self.layers), self.p):
                raise DamagedState("%s: /bloom/checksums is not [num_layers][num_slices]" % self.file)
            self.bloom_verdicts = {}                     # slice -> None (good) or the problem
            if int(a["format_version"]) == 1:            # tier 2 inside the generation file
                keys = f["/tier2/slice_keys"][:]
                nbytes = f["/tier2/slice_bytes"][:]
                self.runs = [Tier2Run(self.file, f, int(keys.sum()), int(nbytes.sum()), "its index")]
            else:
                self.runs = []
                runs = zip(f["/runs/id"][:], f["/runs/keys"][:], f["/runs/bytes"][:])
                for rid, keys, nbytes in runs:           # oldest first
                    rid = int(rid)
                    name = os.path.join(os.path.dirname(self.file),
                                        "run-%d-%08x.h5" % (rid >> 32, rid & M32))
                    listed_by = "the generation file " + os.path.basename(self.file)
                    if not os.path.isfile(name):
                        raise DamagedState("%s: missing run file (run %d, named in /runs/id of %s)"
                                           % (name, rid, listed_by))
                    with open_h5(name) as rf:
                        if int(rf.attrs["tier2_run"]) != rid:
                            raise DamagedState("%s: holds run %d, %s names %d (/runs/id)"
                                               % (name, int(rf.attrs["tier2_run"]), listed_by, rid))
                        if int(rf.attrs["num_slices"]) != self.p:
                            raise DamagedState("%s: num_slices differs from the %d of %s"
                                               % (name, self.p, listed_by))
                        self.runs.append(Tier2Run(name, rf, int(keys), int(nbytes), listed_by))

    def check_stored_keys(self, sample=16):
        """The first keys of each run's first `sample` non-empty slices must
        hash, with the header's seed, to the slice and fingerprint they are
        stored under, and be held by the Bloom layers (a damaged hash_seed,
        k or blocks_per_slice would otherwise make lookups miss with every
        checksum intact; older runs' keys live in older layers)."""
        for run in self.runs:
            nonempty = np.nonzero(run.keys)[0][:sample]
            for s in (int(x) for x in nonempty):
                fps, offs, kb = run.slice(s)
                d = xxhash.xxh3_128_intdigest(kb[int(offs[0]):int(offs[1])].tobytes(), seed=self.seed)
                which = "the first key of %s tier-2 slice %d" % (run.file, s)
                if ((d >> 64) * self.p) >> 64 != s or d & M64 != int(fps[0]):
                    raise DamagedState("%s: hash_seed %d does not reproduce the stored keys (%s)"
                                       % (self.file, self.seed, which))
                if not self.maybe_hash(d >> 64, d & M64):
                    raise DamagedState("%s: the Bloom layers do not hold %s (a layer's k or "
                                       "blocks_per_slice, or its words, are damaged)" % (self.file, which))

    def check_bloom_slice(self, s):
        if s not in self.bloom_verdicts:
            bad = [layer for layer, _, bps, words in self.layers
                   if xxh3_64(words[s * bps * 8:(s + 1) * bps * 8]) != int(self.bloom_checksums[layer][s])]
            self.bloom_verdicts[s] = ("XXH3 checksum mismatch in " +
                                      ", ".join("/bloom/layer_%d" % b for b in bad)) if bad else None
        if self.bloom_verdicts[s] is not None:
            raise DamagedState("%s Bloom slice %d: %s" % (self.file, s, self.bloom_verdicts[s]))

    @staticmethod
    def layer_block_hash(lo, layer):
        if layer == 0:
            return lo                                    # layer 0 uses lo directly
        x = lo ^ ((layer * 0x9E3779B97F4A7C15) & M64)
        x ^= x >> 32
        return (x * 0xD6E8FEB86659FD93) & M64

    def maybe_hash(self, hi, lo):
        s = (hi * self.p) >> 64                           # slice: fastrange64(hi, P)
        self.check_bloom_slice(s)
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
