#!/usr/bin/env python3
"""Deterministic small corpus for the --unit paragraph tests.

usage: paragraph_corpus.py OUT_DIR --files N --records M --seed S [--gz | --mix]

Each record is a JSONL document of 3-20 paragraphs, about 30% of them drawn
from a shared pool (so they repeat across and inside records), the rest
fresh. Texts mix '\\n' and blank-line separators, CRLF, tabs, NBSP and
U+3000 spellings of one text (equal under --text-normalize ws), short
paragraphs, quotes, backslashes, control characters and non-ASCII; some
lines are compact, some ASCII-escaped, some hold the text field after a
nested one. Three lines per file are rejects (text 42, text null, no text).
--gz: every second file gzipped; --mix: plain, .gz and .zst files in turn
(the zstd command). --pool: paragraphs in the shared pool (a bigger pool
meets its first copies later in the corpus).
"""
import argparse
import gzip
import json
import os
import random
import subprocess

WORDS = ("the of and to in is was for on that with as by at from his her an "
         "city river data model paris tokyo über naïve café 東京 данные λόγος "
         "quote\"d back\\slash tab\there").split(" ")


def sentence(rng, n):
    return " ".join(rng.choice(WORDS) for _ in range(n))


def pool(rng, size):
    out = []
    for i in range(size):
        kind = i % 10
        if kind == 0:
            out.append(rng.choice(["ok", "-", "", "  ", "a"]))  # short: not keyed at min 8
        elif kind == 1:
            base = sentence(rng, 6)
            out.append(base.replace(" ", rng.choice(["  ", "\t", "\u00a0", "\u3000"]), 2))
        elif kind == 2:
            out.append("ctrl\u0001char " + sentence(rng, 4) + " \u2028 end")
        else:
            out.append(sentence(rng, rng.randint(3, 25)))
    return out


def document(rng, shared, serial):
    parts = []
    for j in range(rng.randint(3, 20)):
        if rng.random() < 0.3:
            parts.append(rng.choice(shared))
        else:
            parts.append(f"fresh {serial}-{j} " + sentence(rng, rng.randint(2, 15)))
    text = parts[0]
    for p in parts[1:]:
        text += rng.choice(["\n", "\n", "\n", "\n\n", "\r\n", "\n \n"]) + p
    if rng.random() < 0.2:
        text = rng.choice(["\n", "  \n"]) + text
    if rng.random() < 0.2:
        text += "\n"
    return text


def line(rng, rec):
    style = rng.randrange(6)
    if style == 0:
        return json.dumps(rec, ensure_ascii=True)
    if style == 1:
        return json.dumps(rec, ensure_ascii=False, separators=(",", ":"))
    if style == 2:
        r = {"meta": {"text": "not this one", "n": rng.randint(0, 9)}}
        r.update(rec)
        return json.dumps(r, ensure_ascii=False)
    return json.dumps(rec, ensure_ascii=False)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("out")
    p.add_argument("--files", type=int, default=1)
    p.add_argument("--records", type=int, default=1000)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--gz", action="store_true")
    p.add_argument("--mix", action="store_true")
    p.add_argument("--pool", type=int, default=120)
    a = p.parse_args()
    rng = random.Random(a.seed)
    shared = pool(rng, a.pool)
    os.makedirs(a.out, exist_ok=True)
    serial = 0
    for f in range(a.files):
        rows = []
        for _ in range(a.records // a.files):
            serial += 1
            rows.append(line(rng, {"id": f"d{serial}", "text": document(rng, shared, serial)}))
        for bad in ({"id": "r1", "text": 42}, {"id": "r2", "text": None}, {"id": "r3"}):
            rows.insert(rng.randrange(len(rows)), json.dumps(bad))
        data = ("\n".join(rows) + "\n").encode()
        name = os.path.join(a.out, f"part-{f:03d}.jsonl")
        if a.mix and f % 3 == 2:
            with open(name + ".zst", "wb") as g:
                g.write(subprocess.run(["zstd", "-q", "-c"], input=data, check=True,
                                       stdout=subprocess.PIPE).stdout)
        elif (a.gz and f % 2 == 1) or (a.mix and f % 3 == 1):
            with gzip.open(name + ".gz", "wb") as g:
                g.write(data)
        else:
            with open(name, "wb") as g:
                g.write(data)


if __name__ == "__main__":
    main()
