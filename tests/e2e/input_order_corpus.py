#!/usr/bin/env python3
"""A corpus where every duplicate's copies differ in other fields, and the
oracle of the one order (docs/inputs.md "Which copy of a duplicate is kept"):
the kept copy of a key is its first copy with the inputs in their walked,
sorted order and the records by position, i.e. awk '!seen[$key]++' over the
inputs in that order.

usage: input_order_corpus.py make DIR [--files N] [--records N] [--seed S]
                                      [--big-records N] [--annotate 1]
       input_order_corpus.py check INPUT_DIR OUTPUT_DIR
       input_order_corpus.py check-after EARLIER_INPUT_DIR INPUT_DIR OUTPUT_DIR
       input_order_corpus.py make-lines DIR [--files N] [--records N] [--seed S]
       input_order_corpus.py check-lines INPUT_DIR OUTPUT_DIR DROP_FRACTION
       input_order_corpus.py check-annotate INPUT_DIR OUTPUT_DIR bloomshard|dolma

make: N files (plain .jsonl, .jsonl.gz, .jsonl.zst in turn) of about
--records records each, 30 % of them copies of a key seen in any file
(earlier or later in the order); each copy carries its own "copy" field
(file and line), so a kept copy is known by its bytes. With --big-records,
one more plain file of that many records (for split runs), first in the
order so that its later ranges' copies race the other files'. With
--annotate 1 every record also has a "text" of random length and code
points of 1 to 4 UTF-8 bytes (so each copy's Dolma span differs), and each
file a malformed line and a record without "id" (rejects).

check: every input's mirrored output holds exactly the oracle's lines
(decompressed), in order; exit 1 naming the first difference.

check-after: the same for an incremental run on the finished state of a run
over EARLIER_INPUT_DIR: every key of those inputs counts as seen before.

make-lines: plain-line files (.txt, .txt.gz, .txt.zst in turn), 40 % of the
lines drawn from a pool shared by all files, the rest fresh.

check-lines: the outputs of `--unit paragraph` (the default newline split:
a plain line is one paragraph) with --kept-copy first: a line's first copy
in input order is written as it is; a later copy is written empty, or left
out when DROP_FRACTION < 1. Exit 1 naming the first difference.

check-annotate: every input's attribute file (`--mode annotate`, docs/commands.md)
holds one line per input line: a record's line exactly as the oracle writes
it, `"duplicate":true` (dolma: `[[0,N,1.0]]`, N = len(text)) for every copy
but the first in input order; a reject's line parses, carries "reject" and
is not flagged. Exit 1 naming the first difference.
"""
import gzip
import json
import os
import random
import subprocess
import sys


def compress(path, data):
    if path.endswith(".gz"):
        return gzip.compress(data, compresslevel=1)
    if path.endswith(".zst"):
        return subprocess.run(["zstd", "-q", "-1", "-c"], input=data, check=True,
                              stdout=subprocess.PIPE).stdout
    return data


def decompress(path, data):
    if path.endswith(".gz"):
        return gzip.decompress(data)
    if path.endswith(".zst"):
        return subprocess.run(["zstd", "-q", "-d", "-c"], input=data, check=True,
                              stdout=subprocess.PIPE).stdout
    return data


def walk(root):
    """Input files in the order the program walks them: relative paths sorted
    bytewise."""
    found = []
    for d, _, names in os.walk(root):
        for n in names:
            found.append(os.path.relpath(os.path.join(d, n), root))
    return sorted(found, key=lambda p: p.encode())


def make(root, files, records, seed, big_records, annotate):
    rng = random.Random(seed)
    os.makedirs(root, exist_ok=True)
    names = []
    if big_records:
        names.append("a-big.jsonl")
    suffixes = [".jsonl", ".jsonl.gz", ".jsonl.zst"]
    names += [f"b-{i:02d}{suffixes[i % 3]}" for i in range(files)]
    counts = [big_records] + [records] * files if big_records else [records] * files
    total = sum(counts)
    # Keys: 70 % fresh; each duplicate names a key drawn from all keys, so a
    # later file often holds the first arrival of a key an earlier file has.
    keys = [f"k{n}" for n in range(int(total * 0.7))]
    for name, count in zip(names, counts):
        lines = []
        for line in range(count):
            key = rng.choice(keys)
            pad = "x" * rng.randrange(0, 60)
            rec = {"id": key, "copy": f"{name}:{line + 1}", "pad": pad}
            if annotate:
                rec["text"] = "".join(rng.choice("a e\u00e9\u20ac\U0001f600")
                                      for _ in range(rng.randrange(0, 40)))
            ascii_only = rng.random() < 0.5 if annotate else True  # \u escapes or UTF-8
            lines.append(json.dumps(rec, ensure_ascii=ascii_only) + "\n")
        if annotate:
            lines.insert(rng.randrange(len(lines) + 1), '{"id": "broken\n')
            lines.insert(rng.randrange(len(lines) + 1), json.dumps({"copy": name}) + "\n")
        data = "".join(lines).encode()
        with open(os.path.join(root, name), "wb") as f:
            f.write(compress(name, data))


def expected(root, seen=None):
    seen = set() if seen is None else seen
    out = {}
    for rel in walk(root):
        with open(os.path.join(root, rel), "rb") as f:
            data = decompress(rel, f.read())
        kept = []
        for line in data.splitlines(keepends=True):
            key = key_of(line)
            if key is None:  # a reject: no output line
                continue
            if key in seen:
                continue
            seen.add(key)
            kept.append(line)
        out[rel] = b"".join(kept)
    return out


def key_of(line):
    """The record's key, or None for a line the program rejects."""
    try:
        rec = json.loads(line)
    except ValueError:
        return None
    return rec.get("id") if isinstance(rec, dict) and isinstance(rec.get("id"), str) else None


def annotation(line, duplicate, form):
    """The attribute line the oracle expects for a record."""
    rec = json.loads(line)
    if form == "dolma":
        span = f"[[0,{len(rec.get('text', ''))},1.0]]" if duplicate else "[]"
        return (f'{{"id":{json.dumps(rec["id"], ensure_ascii=False)},'
                f'"attributes":{{"bloomshard_duplicate":{span}}}}}\n').encode()
    return (f'{{"key":{json.dumps(rec["id"], ensure_ascii=False)},'
            f'"duplicate":{"true" if duplicate else "false"}}}\n').encode()


def check_annotate(inputs, outputs, form):
    seen = set()
    bad = 0
    flagged = 0
    for rel in walk(inputs):
        shown = False  # the first difference of a file is shown; the keys go on into `seen`
        with open(os.path.join(inputs, rel), "rb") as f:
            lines = decompress(rel, f.read()).splitlines(keepends=True)
        path = os.path.join(outputs, rel)
        if not os.path.exists(path):
            print(f"{rel}: no attribute file", file=sys.stderr)
            bad += 1
            continue
        with open(path, "rb") as f:
            got = decompress(rel, f.read()).splitlines(keepends=True)
        if len(got) != len(lines):
            print(f"{rel}: {len(got)} attribute lines for {len(lines)} input lines", file=sys.stderr)
            bad += 1
            continue
        for n, (line, out) in enumerate(zip(lines, got), 1):
            key = key_of(line)
            if key is None:
                obj = json.loads(out)
                flag = obj["attributes"]["bloomshard_duplicate"] if form == "dolma" else obj["duplicate"]
                ok = "reject" in obj and flag in ([], False)
                want = b"a reject's line"
            else:
                want = annotation(line, key in seen, form)
                flagged += key in seen
                seen.add(key)
                ok = out == want
            if not ok and not shown:
                print(f"{rel} line {n}: got {out!r}, want {want!r}", file=sys.stderr)
                bad += 1
                shown = True
    if bad:
        print(f"{bad} attribute file(s) differ from the first copies in input order",
              file=sys.stderr)
        sys.exit(1)
    print(f"every attribute file flags the copies after the first in input order ({flagged})")


def keys_of(root):
    """Every key of the records under `root` (an earlier run's inputs)."""
    keys = set()
    for rel in walk(root):
        with open(os.path.join(root, rel), "rb") as f:
            for line in decompress(rel, f.read()).splitlines(keepends=True):
                if key_of(line) is not None:
                    keys.add(key_of(line))
    return keys


def check(inputs, outputs, seen=None):
    bad = 0
    for rel, want in expected(inputs, seen).items():
        path = os.path.join(outputs, rel)
        if not os.path.exists(path):
            print(f"{rel}: no output", file=sys.stderr)
            bad += 1
            continue
        with open(path, "rb") as f:
            got = decompress(rel, f.read())
        if got == want:
            continue
        bad += 1
        g, w = got.splitlines(), want.splitlines()
        first = next((i for i in range(min(len(g), len(w))) if g[i] != w[i]), min(len(g), len(w)))
        print(f"{rel}: {len(g)} lines, oracle {len(w)}; first difference at line {first + 1}: "
              f"got {g[first] if first < len(g) else b'<end>'!r}, "
              f"want {w[first] if first < len(w) else b'<end>'!r}", file=sys.stderr)
    if bad:
        print(f"{bad} output(s) differ from the first copies in input order", file=sys.stderr)
        sys.exit(1)
    print("every output holds the first copies in input order")


def make_lines(root, files, records, seed):
    rng = random.Random(seed)
    os.makedirs(root, exist_ok=True)
    shared = [f"shared line {i} " + "w" * rng.randrange(0, 20) for i in range(records // 8 + 1)]
    suffixes = [".txt", ".txt.gz", ".txt.zst"]
    for i in range(files):
        name = f"p-{i:02d}{suffixes[i % 3]}"
        lines = [rng.choice(shared) if rng.random() < 0.4 else
                 f"fresh {i}-{n} " + "z" * rng.randrange(0, 30) for n in range(records)]
        with open(os.path.join(root, name), "wb") as f:
            f.write(compress(name, ("\n".join(lines) + "\n").encode()))


def check_lines(inputs, outputs, fraction):
    seen = set()
    for rel in walk(inputs):
        with open(os.path.join(inputs, rel), "rb") as f:
            lines = decompress(rel, f.read()).split(b"\n")[:-1]
        want = []
        for line in lines:
            if line not in seen:
                seen.add(line)
                want.append(line)
            elif fraction >= 1:
                want.append(b"")
        with open(os.path.join(outputs, rel), "rb") as f:
            got = decompress(rel, f.read()).split(b"\n")[:-1]
        if got != want:
            n = next((j for j, (a, b) in enumerate(zip(got, want)) if a != b), min(len(got), len(want)))
            sys.exit(f"{rel}: output line {n + 1} differs from the first copies in input order "
                     f"({len(got)} lines, want {len(want)})")
    print("every plain-line output holds the first copies in input order")


def main(argv):
    if len(argv) >= 2 and argv[0] == "make":
        opts = {"--files": 6, "--records": 3000, "--seed": 1, "--big-records": 0, "--annotate": 0}
        rest = argv[2:]
        while rest:
            if rest[0] not in opts or len(rest) < 2:
                sys.exit(f"input_order_corpus.py: unknown or incomplete option {rest[0]}")
            opts[rest[0]] = int(rest[1])
            rest = rest[2:]
        make(argv[1], opts["--files"], opts["--records"], opts["--seed"], opts["--big-records"],
             opts["--annotate"])
    elif len(argv) >= 2 and argv[0] == "make-lines":
        opts = {"--files": 6, "--records": 1500, "--seed": 1}
        rest = argv[2:]
        while rest:
            if rest[0] not in opts or len(rest) < 2:
                sys.exit(f"input_order_corpus.py: unknown or incomplete option {rest[0]}")
            opts[rest[0]] = int(rest[1])
            rest = rest[2:]
        make_lines(argv[1], opts["--files"], opts["--records"], opts["--seed"])
    elif len(argv) == 4 and argv[0] == "check-lines":
        check_lines(argv[1], argv[2], float(argv[3]))
    elif len(argv) == 3 and argv[0] == "check":
        check(argv[1], argv[2])
    elif len(argv) == 4 and argv[0] == "check-after":  # an incremental run after EARLIER's
        check(argv[2], argv[3], keys_of(argv[1]))
    elif len(argv) == 4 and argv[0] == "check-annotate" and argv[3] in ("bloomshard", "dolma"):
        check_annotate(argv[1], argv[2], argv[3])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv[1:])
