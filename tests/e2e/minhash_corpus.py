#!/usr/bin/python3
"""Deterministic corpus for the --unit minhash tests.

usage: minhash_corpus.py OUT_DIR --files N --clusters C --seed S

Clusters of 2-5 KB documents with copies at known word edit rates (exact
copies, 0.5% .. 20% of the words edited; tests/bench/near_dup_corpus.py),
plus unrelated short records, texts under 5 words (one shingle), empty and
punctuation-only texts (the empty-text rule), and rejects: a record without
the text field, a number as text, and a string holding invalid UTF-8 (raw
bytes 0xff 0xfe; simdjson refuses the line as JSON). Records are dealt
round-robin into N files part-NNN.jsonl, so every rank reads copies of
documents other ranks hold. With --plain, a plain-line file notes.txt (each line is a
text) holds copies of some documents' texts and a line of invalid UTF-8,
which only the sketch refuses.
"""
import argparse
import json
import os
import random
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "bench"))
import near_dup_corpus  # noqa: E402  (tests/bench: the quality study's generator)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--files", type=int, default=1)
    ap.add_argument("--clusters", type=int, default=60)
    ap.add_argument("--seed", type=int, default=41)
    ap.add_argument("--plain", action="store_true", help="add notes.txt")
    args = ap.parse_args()
    rng = random.Random(args.seed)
    docs = near_dup_corpus.generate(args.clusters, args.seed)
    lines = [json.dumps({"id": r["id"], "text": r["text"]}).encode() for r in docs]
    extra = [
        {"id": "short-1", "text": "Tiny note."},
        {"id": "short-2", "text": "tiny NOTE!"},  # same normalized text: one shingle, same keys
        {"id": "short-3", "text": "another tiny note here"},
        {"id": "empty-1", "text": ""},
        {"id": "empty-2", "text": "  !!! ... --- "},  # empty after normalization
        {"id": "empty-3", "text": "\u3000"},
        {"id": "unicode", "text": "Straße café — naïve ÉCOLE «déjà vu» and more words here"},
        {"id": "unicode-copy", "text": "STRASSE Café naïve école déjà vu, and more words here."},
    ]
    lines += [json.dumps(e).encode() for e in extra]
    lines.append(b'{"id": "no-text", "title": "missing field"}')
    lines.append(b'{"id": "number", "text": 42}')
    lines.append(b'{"id": "bad-utf8", "text": "caf\xff\xfe bytes"}')
    rng.shuffle(lines)
    os.makedirs(args.out, exist_ok=True)
    outs = [open(os.path.join(args.out, "part-%03d.jsonl" % f), "wb") for f in range(args.files)]
    for i, line in enumerate(lines):
        outs[i % args.files].write(line + b"\n")
    for f in outs:
        f.close()
    if not args.plain:
        return
    with open(os.path.join(args.out, "notes.txt"), "wb") as f:
        for r in docs[:8]:
            f.write(r["text"].encode() + b"\n")
        f.write(b"a line with \xc3\x28 an invalid sequence\n")
        f.write(b"\n")


if __name__ == "__main__":
    main()
