#!/usr/bin/python3
"""Checks the confirmation forms of a windowed confirming minhash state
(`dedup --unit minhash --confirm-jaccard T --window W`, per-run slots) after
its runs over IN0, IN1, ... (one slot each): the state's band keys (over the
runs of its LATEST generation) are exactly the keys that occurred in the
last W + 1 slots, and each key's stored form is that of its first record
since it last entered the window: a key refreshed into a newer slot while
still live keeps its form; a key whose last slot expired is forgotten, so
the next record that inserts it is its first. Within one run no two
records share a band key here (minhash_window_corpus.py), so the first
record of a key does not depend on the rank count.

usage: minhash_window_forms.py STATE --window W --inputs IN...
"""
import argparse
import json
import os
import sys

import h5py  # Debian's python3-h5py: run with /usr/bin/python3

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "bench"))
import minhash_reference as ref  # noqa: E402  (exits 77 without numpy/xxhash)

CONFIRM_BITS = 4  # core::kDefaultConfirmBits


def fail(msg):
    print("minhash_window_forms: " + msg, file=sys.stderr)
    sys.exit(1)


def packed_form(sig):
    """The 4-bit form as stored: value i in bits [4i, 4i + 4), bit k of the
    string being bit k mod 8 of byte k / 8 (docs/near-duplicates.md section 6)."""
    low = [int(v) for v in ref.pack_low_bits(sig, CONFIRM_BITS)]
    low += [0] * (len(low) % 2)
    return bytes(low[i] | (low[i + 1] << 4) for i in range(0, len(low), 2))


def texts(directory):
    out = []
    for name in sorted(os.listdir(directory)):
        if name.endswith(".jsonl"):
            with open(os.path.join(directory, name)) as f:
                out += [json.loads(line)["text"] for line in f]
    return out


def expected(window, inputs):
    """{band key: (form bytes, last slot)} of the live keys after the runs."""
    live = {}
    for slot, inp in enumerate(inputs):
        live = {k: v for k, v in live.items() if v[1] >= slot - window}
        for text in texts(inp):
            _, _, sig, keys = ref.sketch(text)
            form = packed_form(sig)
            for k in keys:
                live[k] = (live[k][0] if k in live else form, slot)
    return live


def stored(state):
    """{band key: set of stored forms} over the runs of the LATEST generation."""
    with open(os.path.join(state, "LATEST")) as f:
        latest = f.read().strip()
    gen = latest if latest.endswith(".h5") else "ckpt-%s.h5" % latest
    with h5py.File(os.path.join(state, os.path.basename(gen)), "r") as f:
        ids = [int(i) for i in f["/runs/id"][:]]
    out = {}
    for run_id in ids:
        path = os.path.join(state, "run-%d-%08x.h5" % (run_id >> 32, run_id & 0xFFFFFFFF))
        with h5py.File(path, "r") as f:
            t = f["/tier2"]
            counts = t["slice_keys"][:]
            offsets = t["offsets"][:]
            data = t["bytes"][:].tobytes()
            forms = t["forms"][:].tobytes()
        n = int(counts.sum())
        size = len(forms) // n if n else 0
        key = off_at = byte_at = 0
        for count in counts:
            count = int(count)
            offs = offsets[off_at:off_at + count + 1]
            for i in range(count):
                k = data[byte_at + int(offs[i]):byte_at + int(offs[i + 1])]
                out.setdefault(k, set()).add(forms[key * size:(key + 1) * size])
                key += 1
            byte_at += int(offs[count])
            off_at += count + 1
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("state")
    ap.add_argument("--window", type=int, required=True)
    ap.add_argument("--inputs", nargs="+", required=True)
    a = ap.parse_args()
    want = expected(a.window, a.inputs)
    got = stored(a.state)
    if set(got) != set(want):
        fail("the state holds %d band keys, the window %d (%d extra, %d missing)"
             % (len(got), len(want), len(set(got) - set(want)), len(set(want) - set(got))))
    for k, (form, _) in want.items():
        if got[k] != {form}:
            fail("band key %s: stored form(s) are not its first record's since it entered "
                 "the window" % k.hex())
    print("minhash_window_forms: %d live band keys, each with its first record's form" % len(want))


if __name__ == "__main__":
    main()
