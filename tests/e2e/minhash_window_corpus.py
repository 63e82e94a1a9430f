#!/usr/bin/python3
"""Corpus and oracle of `dedup --unit minhash --window W` (per-run slots):
three incremental runs whose near copies fall inside or outside the window.

usage: minhash_window_corpus.py gen --out DIR [--files 3] [--seed 5]
       minhash_window_corpus.py check --window W --inputs IN... --outputs OUT...

gen writes DIR/run-R/part-F.jsonl for runs 0..2, records {"id", "text"}:
  run 0: A, B and fillers
  run 1: C; B1, a near copy of B (one word changed): inside the window
  run 2: A1, a near copy of A, which only run 0 holds: outside a window of 1;
         C1, a near copy of C (run 1); B2 = B1, whose band keys run 1
         inserted although B1 was removed
The fillers (30 a run) share no band key with any other record; each near
copy shares at least one with its original. gen checks both with the
documented sketch (tests/bench/minhash_reference.py) before writing, so a
corpus that would not test what it claims is refused (exit 1).

check applies the documented rule to the runs: a record is removed when one
of its band keys occurred (in any record, kept or removed) in the W runs
before or earlier in its run, and compares the kept ids of each run's
outputs with it (sets: the kept records do not depend on which rank read
what, since no two records of one run share a band key). It also prints the
ids the rule removed in each run ("removed run-R: ids").
"""
import argparse
import json
import os
import random
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "bench"))
import minhash_reference as ref  # noqa: E402  (exits 77 without numpy/xxhash)


def fail(msg):
    print("minhash_window_corpus: " + msg, file=sys.stderr)
    sys.exit(1)


def band_keys(text):
    return set(ref.sketch(text)[3])


def make_runs(seed):
    rng = random.Random(seed)
    vocabulary = sorted({"".join(rng.choices("abcdefghijklmnoprstuvwy", k=rng.randint(3, 9)))
                         for _ in range(5000)})

    def doc():
        return [rng.choice(vocabulary) for _ in range(80)]

    def near(words):
        out = list(words)
        out[40] = "zzchanged"
        return out

    a, b, c = doc(), doc(), doc()
    b1 = near(b)
    specials = [
        [("A", a), ("B", b)],
        [("C", c), ("B1", b1)],
        [("A1", near(a)), ("C1", near(c)), ("B2", b1)],
    ]
    runs = []
    for r, chosen in enumerate(specials):
        records = [(name, " ".join(words)) for name, words in chosen]
        records += [("f%d-%d" % (r, i), " ".join(doc())) for i in range(30)]
        rng.shuffle(records)
        runs.append(records)
    return runs


def check_corpus(runs):
    """Each near copy shares a band key with its original, no other pair does."""
    keys = {name: band_keys(text) for run in runs for name, text in run}
    related = {("A", "A1"), ("B", "B1"), ("B", "B2"), ("B1", "B2"), ("C", "C1")}
    names = sorted(keys)
    for i, x in enumerate(names):
        for y in names[i + 1:]:
            share = bool(keys[x] & keys[y])
            if share != ((x, y) in related or (y, x) in related):
                fail("seed gives %s and %s %s band key: choose another --seed" %
                     (x, y, "a shared" if share else "no shared"))


def gen(args):
    runs = make_runs(args.seed)
    check_corpus(runs)
    for r, records in enumerate(runs):
        d = os.path.join(args.out, "run-%d" % r)
        os.makedirs(d)
        files = [open(os.path.join(d, "part-%d.jsonl" % f), "w") for f in range(args.files)]
        for i, (name, text) in enumerate(records):
            files[i % args.files].write(json.dumps({"id": name, "text": text}) + "\n")
        for f in files:
            f.close()


def read_ids(directory):
    ids = []
    for name in sorted(os.listdir(directory)):
        if name.endswith(".jsonl"):
            with open(os.path.join(directory, name)) as f:
                ids += [(json.loads(line)["id"], json.loads(line)["text"]) for line in f]
    return ids


def check(args):
    if len(args.inputs) != len(args.outputs):
        fail("as many --outputs as --inputs")
    history = []  # band keys that occurred in each earlier run
    for r, (inp, out) in enumerate(zip(args.inputs, args.outputs)):
        seen = set().union(*history[max(0, r - args.window):]) if history else set()
        occurred, want, removed = set(), set(), []
        for name, text in read_ids(inp):
            keys = band_keys(text)
            if keys & (seen | occurred):
                removed.append(name)
            else:
                want.add(name)
            occurred |= keys
        history.append(occurred)
        got = [name for name, _ in read_ids(out)]
        if len(got) != len(set(got)):
            fail("run %d: a record written twice" % r)
        if set(got) != want:
            fail("run %d: kept %s, the rule keeps %s (missing %s, extra %s)" %
                 (r, len(got), len(want), sorted(want - set(got)), sorted(set(got) - want)))
        print("removed run-%d: %s" % (r, " ".join(sorted(removed))))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="command", required=True)
    g = sub.add_parser("gen")
    g.add_argument("--out", required=True)
    g.add_argument("--files", type=int, default=3)
    g.add_argument("--seed", type=int, default=5)
    c = sub.add_parser("check")
    c.add_argument("--window", type=int, required=True)
    c.add_argument("--inputs", nargs="+", required=True)
    c.add_argument("--outputs", nargs="+", required=True)
    args = ap.parse_args()
    gen(args) if args.command == "gen" else check(args)


if __name__ == "__main__":
    main()
