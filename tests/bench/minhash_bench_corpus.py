#!/usr/bin/python3
"""Generates a large JSONL corpus for the job-level speed figure of
`dedup --unit minhash` (docs/performance.md, "Near-duplicates"): records of
2-5 KB of English-like text in clusters of near copies, written as a
stream (memory does not grow with the corpus), deterministic for a seed.

The vocabulary, its Zipf-like frequencies, the punctuation and the copy
edits follow near_dup_corpus.py (the quality study's generator), drawn with
numpy so that a gigabyte takes minutes; what differs is the scale: records
are shuffled inside blocks of --block-clusters clusters (1,000: about 3,500
records, 12 MB) and each goes to one of --files files chosen at random, so
near copies sit in different files (and on different ranks) as often as in
the same one. A --accented fraction of the vocabulary carries one accented
letter, so the normalization's non-ASCII path runs as on real English web
text.

  minhash_bench_corpus.py --bytes 1050000000 --files 8 --out-dir /tmp/mh

Writes OUT_DIR/part-NN.jsonl, records {"id", "url", "text", "cluster"},
and prints the records, clusters and bytes of text written.
"""
import argparse
import json
import os
import random
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import near_dup_corpus as ndc  # noqa: E402

ACCENTS = {"e": "é", "a": "à", "o": "ô", "u": "ü", "i": "ï", "c": "ç", "n": "ñ"}


def accent_some(words, rng, fraction):
    """Gives one accented letter to about `fraction` of the words."""
    out = []
    for w in words:
        if rng.random() < fraction:
            spots = [i for i, ch in enumerate(w) if ch in ACCENTS]
            if spots:
                i = rng.choice(spots)
                w = w[:i] + ACCENTS[w[i]] + w[i + 1:]
        out.append(w)
    return out


class Words:
    """The vocabulary as a numpy array and its Zipf-like draw (rank r with
    weight 1/(r+10), near_dup_corpus.WordSource's law)."""

    def __init__(self, words):
        self.words = np.array(words, dtype=object)
        self.cum = np.cumsum(1.0 / (np.arange(len(words)) + 10.0))
        self.cum /= self.cum[-1]

    def draw(self, gen, n):
        return np.minimum(np.searchsorted(self.cum, gen.random(n)), len(self.cum) - 1)


def edit(ids, rate, gen, words):
    """near_dup_corpus.edit on word ids: each word, with probability rate,
    is substituted, deleted or followed by an inserted word (2:1:1)."""
    hit = gen.random(len(ids)) < rate
    kind = gen.random(len(ids))
    out = ids.copy()
    sub = hit & (kind < 0.5)
    out[sub] = words.draw(gen, int(sub.sum()))
    counts = np.ones(len(ids), dtype=np.int64)
    counts[hit & (kind >= 0.5) & (kind < 0.75)] = 0
    ins = hit & (kind >= 0.75)
    counts[ins] = 2
    out = np.repeat(out, counts)
    after = np.cumsum(counts)[ins] - 1  # the second of each inserted pair
    out[after] = words.draw(gen, len(after))
    return out


def render(ids, gen, words):
    """Word ids -> text with sentence capitals and punctuation."""
    tokens = words.words[ids].tolist()
    marks = np.flatnonzero(gen.random(len(tokens)) < 0.08)
    picks = gen.integers(0, len(ndc.PUNCTUATION), len(marks))
    start = True
    ends = dict(zip(marks.tolist(), picks.tolist()))
    out = []
    for i, w in enumerate(tokens):
        if start:
            w = w.capitalize()
        p = ends.get(i)
        if p is None:
            start = False
        else:
            w += ndc.PUNCTUATION[p]
            start = p in (1, 4, 5)  # ".", "!", "?"
        out.append(w)
    return " ".join(out)


def cluster_texts(gen, words, copies_max):
    """One base document of 290-630 words (2-5 KB of text) and 0..copies_max
    edited copies (a copy's parent: the base, or 3 times in 10 an earlier copy)."""
    members = [words.draw(gen, int(gen.integers(290, 631)))]
    for _ in range(int(gen.integers(0, copies_max + 1))):
        parent = 0 if len(members) == 1 or gen.random() >= 0.3 else int(gen.integers(1, len(members)))
        rate = ndc.EDIT_RATES[int(gen.integers(0, len(ndc.EDIT_RATES)))]
        members.append(edit(members[parent], rate, gen, words))
    return [render(ids, gen, words) for ids in members]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bytes", type=int, required=True, help="stop once this much text is written")
    ap.add_argument("--files", type=int, default=8)
    ap.add_argument("--seed", type=int, default=41)
    ap.add_argument("--copies-max", type=int, default=5)
    ap.add_argument("--accented", type=float, default=0.02)
    ap.add_argument("--block-clusters", type=int, default=1000,
                    help="clusters shuffled together (and the unit of --bytes)")
    ap.add_argument("--out-dir", required=True)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    words = Words(accent_some(ndc.make_vocabulary(rng, 20000), rng, args.accented))
    gen = np.random.default_rng(args.seed)
    os.makedirs(args.out_dir, exist_ok=True)
    outs = [open(os.path.join(args.out_dir, "part-%02d.jsonl" % i), "w", encoding="utf-8")
            for i in range(args.files)]
    text_bytes = records = clusters = 0
    while text_bytes < args.bytes:
        block = []
        for _ in range(args.block_clusters):
            for text in cluster_texts(gen, words, args.copies_max):
                block.append((clusters, text))
            clusters += 1
        order = gen.permutation(len(block))
        files = gen.integers(0, args.files, len(block))
        for j, f in zip(order.tolist(), files.tolist()):
            cluster, text = block[j]
            line = json.dumps({"id": "doc-%d" % records,
                               "url": "https://example.org/%d/%d" % (cluster, records),
                               "text": text, "cluster": cluster}, ensure_ascii=False)
            outs[f].write(line + "\n")
            text_bytes += len(text.encode("utf-8"))
            records += 1
    for f in outs:
        f.close()
    print("%d records in %d clusters, %d bytes of text in %d files" %
          (records, clusters, text_bytes, args.files))


if __name__ == "__main__":
    main()
