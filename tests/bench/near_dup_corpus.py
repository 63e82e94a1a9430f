#!/usr/bin/python3
"""Generates a corpus of near-duplicate documents with known word edit rates,
for the near-duplicate quality study (near_dup_quality.py) and the speed
comparison (near_dup_numpy_bench.py). Deterministic for a given seed.

Each cluster starts from one base document of 2-5 KB: words drawn from a
Zipf-like synthetic vocabulary, with capitals and punctuation so the
minhash-text/v1 normalization has work to do. Copies are made by editing
words independently at a chosen rate e (each word, with probability e, is
substituted, deleted, or gets a random word inserted after it, in the ratio
2:1:1); a copy's parent is the base, or with probability 0.3 an earlier copy
of the same cluster (chains: A~B~C where A and C may be far apart). Records
are then shuffled, so a copy may come before its parent.

  near_dup_corpus.py --clusters 1000 --out corpus.jsonl --text-out corpus.txt

corpus.jsonl: one record per line, {"id", "cluster", "parent", "edit_rate",
"text"} (parent: the id it was copied from, null for a base). corpus.txt:
the texts alone, one per line, in the same order (texts hold no newline).
"""
import argparse
import json
import random

EDIT_RATES = (0.0, 0.005, 0.01, 0.02, 0.03, 0.05, 0.08, 0.12, 0.2)
PUNCTUATION = (",", ".", ";", ":", "!", "?", " -", "'s")


def make_vocabulary(rng, size):
    letters = "etaoinshrdlcumwfgypbvkjxqz"
    weights = [12, 9, 8, 8, 7, 7, 6, 6, 6, 4, 4, 3, 3, 2, 2, 2, 2, 2, 2, 1, 1, 1, 1, 1, 1, 1]
    words = set()
    while len(words) < size:
        words.add("".join(rng.choices(letters, weights, k=rng.randint(2, 10))))
    words = sorted(words)
    rng.shuffle(words)  # frequency rank unrelated to spelling
    return words


class WordSource:
    """Words with a Zipf-like frequency (rank r drawn with weight 1/(r+10))."""

    def __init__(self, rng, size):
        self.rng = rng
        self.words = make_vocabulary(rng, size)
        self.cum = []
        total = 0.0
        for r in range(size):
            total += 1.0 / (r + 10)
            self.cum.append(total)

    def word(self):
        return self.rng.choices(self.words, cum_weights=self.cum, k=1)[0]


def render(words, rng):
    """Words -> text with sentence capitals and punctuation."""
    out, start = [], True
    for w in words:
        out.append(w.capitalize() if start else w)
        start = False
        if rng.random() < 0.08:
            p = rng.choice(PUNCTUATION)
            out[-1] += p
            start = p in (".", "!", "?")
    return " ".join(out)


def edit(words, rate, rng, source):
    out = []
    for w in words:
        if rng.random() >= rate:
            out.append(w)
            continue
        kind = rng.random()
        if kind < 0.5:
            out.append(source.word())  # substitution
        elif kind < 0.75:
            continue  # deletion
        else:
            out.extend((w, source.word()))  # insertion
    return out


def generate(clusters, seed, copies_max=5, vocabulary=20000):
    rng = random.Random(seed)
    source = WordSource(rng, vocabulary)
    records = []
    for c in range(clusters):
        n_words = rng.randint(350, 850)  # about 2-5 KB of text
        members = [([source.word() for _ in range(n_words)], None, 0.0)]
        for _ in range(rng.randint(0, copies_max)):
            parent = 0 if len(members) == 1 or rng.random() >= 0.3 else rng.randrange(1, len(members))
            rate = rng.choice(EDIT_RATES)
            members.append((edit(members[parent][0], rate, rng, source), parent, rate))
        first = len(records)
        for words, parent, rate in members:
            records.append({"cluster": c, "parent": None if parent is None else first + parent,
                            "edit_rate": rate, "text": render(words, rng)})
    order = list(range(len(records)))
    rng.shuffle(order)
    new_id = {old: new for new, old in enumerate(order)}
    out = []
    for new, old in enumerate(order):
        r = dict(records[old])
        r["id"] = new
        r["parent"] = None if r["parent"] is None else new_id[r["parent"]]
        out.append(r)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--clusters", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=33)
    ap.add_argument("--out", help="JSONL of the records")
    ap.add_argument("--text-out", help="the texts alone, one per line")
    args = ap.parse_args()
    records = generate(args.clusters, args.seed)
    if args.out:
        with open(args.out, "w", encoding="utf-8") as f:
            for r in records:
                f.write(json.dumps({k: r[k] for k in ("id", "cluster", "parent", "edit_rate", "text")},
                                   ensure_ascii=False) + "\n")
    if args.text_out:
        with open(args.text_out, "w", encoding="utf-8") as f:
            for r in records:
                f.write(r["text"] + "\n")
    print("%d records in %d clusters, %.1f MB of text" %
          (len(records), args.clusters, sum(len(r["text"]) + 1 for r in records) / 1e6))


if __name__ == "__main__":
    main()
