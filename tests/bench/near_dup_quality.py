#!/usr/bin/python3
"""Quality of --unit minhash on a generated corpus of copies with known word
edit rates (near_dup_corpus.py): precision and recall of

  streaming      bloomshard's rule: a record is a near-duplicate when any of
                 its band keys was seen before; every record's keys inserted;
  confirmed      the same, but a band hit counts only when the b-bit estimate
                 against the key's first inserter reaches T;
  union-find     datatrove's clustering over the same bands: per band, the
                 records sorted by band value and each neighbour pair with
                 equal values joined; one record kept per connected
                 component (here the first in input order, as bloomshard).

The sketches come from the C++ core (bloomshard_near_dup_sketch --print); the
first --check records are recomputed with minhash_reference.py and must be
identical. Ground truth is the exact word:5 Jaccard of the normalized texts'
shingle sets, computed for every pair inside a cluster and every pair that
shares a band key (any pair a method can flag); a record is truly a
near-duplicate at level T when some earlier record has Jaccard >= T with it.

  near_dup_quality.py --sketch-tool build/release/tests/bench/bloomshard_near_dup_sketch

Prints markdown tables (docs/near-duplicates.md, section "Quality").
"""
import argparse
import os
import subprocess
import sys
import tempfile
from collections import defaultdict

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import minhash_reference as ref  # noqa: E402  (exits 77 without numpy/xxhash)
import near_dup_corpus  # noqa: E402
import numpy as np  # noqa: E402

LEVELS = (0.7, 0.8, 0.9)
BITS = (1, 2, 4, 8, 32)


def sketch_with_core(tool, texts, bands, rows):
    with tempfile.NamedTemporaryFile("w", encoding="utf-8", suffix=".txt", delete=False) as f:
        f.write("".join(t + "\n" for t in texts))
        path = f.name
    try:
        out = subprocess.run([tool, "--print", "--bands", str(bands), "--rows", str(rows), path],
                             check=True, capture_output=True, text=True).stdout.splitlines()
    finally:
        os.unlink(path)
    if len(out) != len(texts):
        sys.exit("sketch tool printed %d lines for %d texts" % (len(out), len(texts)))
    sigs, keys = [], []
    for line in out:
        count, sig_hex, keys_hex = line.split(" ")
        sigs.append(np.array([int(sig_hex[i:i + 8], 16) for i in range(0, len(sig_hex), 8)],
                             dtype=np.uint32))
        keys.append([keys_hex[i:i + 32] for i in range(0, len(keys_hex), 32)])
    return sigs, keys


def check_against_reference(texts, sigs, keys, count, bands, rows):
    for i in range(min(count, len(texts))):
        _, _, sig, ref_keys = ref.sketch(texts[i], "word", 5, bands, rows)
        if not np.array_equal(sig, sigs[i]) or [k.hex() for k in ref_keys] != keys[i]:
            sys.exit("record %d: the core's sketch differs from minhash_reference.py" % i)


def exact_pairs(records, shingle_sets, keys):
    """Exact Jaccard of every pair inside a cluster or sharing a band key."""
    pairs = set()
    by_cluster = defaultdict(list)
    for r in records:
        by_cluster[r["cluster"]].append(r["id"])
    for ids in by_cluster.values():
        pairs.update((a, b) for a in ids for b in ids if a < b)
    by_key = defaultdict(list)
    for i, ks in enumerate(keys):
        for k in ks:
            by_key[k].append(i)
    for ids in by_key.values():
        pairs.update((a, b) for a in ids for b in ids if a < b)
    jac = {}
    for a, b in pairs:
        sa, sb = shingle_sets[a], shingle_sets[b]
        jac[(a, b)] = len(sa & sb) / len(sa | sb) if sa or sb else 1.0
    return jac


def estimate(sa, sb, bits, skip_band=None, rows=8):
    """b-bit estimate; skip_band: leave out the values of the band that hit
    (equal by the hit itself, so counting them biases the estimate up)."""
    mask = np.uint32(0xFFFFFFFF if bits == 32 else (1 << bits) - 1)
    eq = (sa & mask) == (sb & mask)
    if skip_band is not None:
        eq = np.delete(eq, np.s_[skip_band * rows:(skip_band + 1) * rows])
    chance = 2.0 ** -bits
    return (eq.mean() - chance) / (1 - chance)


def streaming(keys, sigs=None, threshold=None, bits=4, conditional=False, rows=8):
    """Removed records of the streaming rule, optionally with confirmation."""
    first = {}
    removed = set()
    for i, ks in enumerate(keys):
        for band, k in enumerate(ks):
            j = first.get(k)
            if j is None:
                continue
            if threshold is None or estimate(sigs[i], sigs[j], bits,
                                             band if conditional else None, rows) >= threshold:
                removed.add(i)
                break
        for k in ks:
            first.setdefault(k, i)
    return removed


def union_find(keys, bands):
    """datatrove's cluster step over the same bands; keeps each component's
    first record."""
    parent = list(range(len(keys)))

    def find(x):
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for band in range(bands):
        entries = sorted((ks[band], i) for i, ks in enumerate(keys) if len(ks) == bands)
        for (ka, a), (kb, b) in zip(entries, entries[1:]):
            if ka == kb:
                ra, rb = find(a), find(b)
                if ra != rb:
                    parent[max(ra, rb)] = min(ra, rb)
    return {i for i in range(len(keys)) if find(i) != i}


def truth_at(jac, level):
    return {b for (a, b), j in jac.items() if j >= level}  # a < b: b has an earlier match


def precision_recall(removed, truth):
    hit = len(removed & truth)
    return (hit / len(removed) if removed else 1.0), (hit / len(truth) if truth else 1.0)


def table_methods(keys, sigs, jac, bands, rows):
    print("| method | removed | " + " | ".join("P / R at J >= %.1f" % t for t in LEVELS) + " |")
    print("|---|---:|" + "---:|" * len(LEVELS))
    uf = union_find(keys, bands)
    stream = streaming(keys)
    assert stream <= uf, "streaming removed a record union-find keeps"
    methods = [("streaming (any band key seen)", stream)]
    for t in LEVELS:
        methods.append(("streaming, confirmed b = 4, T = %.1f" % t,
                        streaming(keys, sigs, t, 4, False, rows)))
    methods.append(("union-find over the same bands (datatrove)", uf))
    for name, removed in methods:
        cells = ["%.3f / %.3f" % precision_recall(removed, truth_at(jac, t)) for t in LEVELS]
        print("| %s | %d | %s |" % (name, len(removed), " | ".join(cells)))
    print("\nstreaming removed %d, union-find %d; streaming's set is a subset of union-find's" %
          (len(stream), len(uf)))


def table_s_curve(keys, jac, bands, rows):
    print("\n| true J | pairs | share a band key (measured) | 1-(1-s^%d)^%d over the pairs | "
          "measured - expected, in sd |" % (rows, bands))
    print("|---|---:|---:|---:|---:|")
    edges = [0.0, 0.3, 0.4, 0.5, 0.55, 0.6, 0.65, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95, 1.0001]
    for lo, hi in zip(edges, edges[1:]):
        sel = [(p, j) for p, j in jac.items() if lo <= j < hi]
        if not sel:
            continue
        shared = sum(1 for (a, b), _ in sel if set(keys[a]) & set(keys[b]))
        # Expected count: the formula at each pair's own Jaccard (a bin's
        # mean would misplace a steep curve); sd of a sum of Bernoullis.
        probs = [ref_curve(j, bands, rows) for _, j in sel]
        expected = sum(probs)
        sd = sum(p * (1 - p) for p in probs) ** 0.5
        z = (shared - expected) / sd if sd > 0 else 0.0
        print("| %.2f-%.2f | %d | %.3f | %.3f | %+.1f |" % (lo, min(hi, 1.0), len(sel),
                                                          shared / len(sel),
                                                          expected / len(sel), z))


def ref_curve(s, bands, rows):
    return 1 - (1 - s ** rows) ** bands


def table_confirmation(keys, sigs, jac, bands, rows):
    """Estimator error on pairs that share a band key, near each level."""
    cand = []
    for (a, b), j in jac.items():
        shared = [band for band in range(min(len(keys[a]), len(keys[b])))
                  if keys[a][band] == keys[b][band]]
        if shared and len(keys[a]) == bands:
            cand.append((a, b, j, shared[0]))
    print("\n| true J (pairs) | b | bytes per key | bias | RMSE | bias, hit band left out |")
    print("|---|---:|---:|---:|---:|---:|")
    for level in LEVELS:
        near = [c for c in cand if abs(c[2] - level) <= 0.05]
        for bits in BITS:
            err_all = [estimate(sigs[a], sigs[b], bits, None, rows) - j for a, b, j, _ in near]
            err_cond = [estimate(sigs[a], sigs[b], bits, band, rows) - j for a, b, j, band in near]
            print("| %.2f +- 0.05 (%d) | %d | %d | %+.4f | %.4f | %+.4f |" %
                  (level, len(near), bits, bands * rows * bits // 8, np.mean(err_all),
                   np.sqrt(np.mean(np.square(err_all))), np.mean(err_cond)))
    print("\n| T | " + " | ".join("b = %d P / R" % b for b in BITS) + " |")
    print("|---|" + "---:|" * len(BITS))
    for t in LEVELS:
        truth = truth_at(jac, t)
        cells = ["%.3f / %.3f" % precision_recall(streaming(keys, sigs, t, b, False, rows), truth)
                 for b in BITS]
        print("| %.1f | %s |" % (t, " | ".join(cells)))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sketch-tool", required=True, help="bloomshard_near_dup_sketch")
    ap.add_argument("--clusters", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=33)
    ap.add_argument("--bands", type=int, default=14)
    ap.add_argument("--rows", type=int, default=8)
    ap.add_argument("--check", type=int, default=100, help="records recomputed in Python")
    args = ap.parse_args()
    records = near_dup_corpus.generate(args.clusters, args.seed)
    texts = [r["text"] for r in records]
    sigs, keys = sketch_with_core(args.sketch_tool, texts, args.bands, args.rows)
    check_against_reference(texts, sigs, keys, args.check, args.bands, args.rows)
    shingle_sets = [set(ref.shingles(ref.normalize(t), "word", 5)) for t in texts]
    jac = exact_pairs(records, shingle_sets, keys)
    print("%d records, %d clusters, %d pairs with exact Jaccard; %d records checked against the "
          "Python reference\n" % (len(records), args.clusters, len(jac), min(args.check, len(texts))))
    table_methods(keys, sigs, jac, args.bands, args.rows)
    table_s_curve(keys, jac, args.bands, args.rows)
    table_confirmation(keys, sigs, jac, args.bands, args.rows)


if __name__ == "__main__":
    main()
