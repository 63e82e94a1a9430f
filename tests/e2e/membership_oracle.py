#!/usr/bin/env python3
"""Independent oracle of `bloomshard query`: which records' keys a state holds.

The state's key set is computed from the inputs the state was built from
(every valid key of them: dedup keeps each key once, so the set is the set
of all keys), with oracle.py's readers and key rules (Python's json,
gzip, zstd CLI; no bloomshard code). For every file of the query input the
expected output is its records, in order, whose key is (--emit hits) or is
not (--emit misses) in that set; bad lines go to neither. The actual
outputs must be byte-for-byte those lines (after decompression), and the
metrics JSON's hits/misses/rejected must match.

usage: membership_oracle.py --history DIR [--history DIR ...] --query-input DIR
                            --output DIR --emit hits|misses [--metrics FILE]
                            [--key-field id] [--normalize none]
"""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import oracle  # noqa: E402  (LineReader, KeyPolicy, list_data_files, split_suffixes)


def data_files(root):
    """(relative path, absolute path, compression) of every input under root."""
    out = []
    for dirpath, dirnames, names in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith(("_", ".")))
        for n in sorted(names):
            if n.startswith(("_", ".")):
                continue
            p = os.path.join(dirpath, n)
            rel = os.path.relpath(p, root)
            fmt, comp = oracle.split_suffixes(n)
            out.append((rel, p, fmt, comp))
    return out


def records(policy, path, fmt, comp):
    """(raw line bytes, key or None) of a file."""
    for _, body in oracle.LineReader(path, comp if comp != "none" else None):
        key, _reason = policy.key(fmt, body)
        yield body, key


def main(argv):
    p = argparse.ArgumentParser()
    p.add_argument("--history", action="append", required=True)
    p.add_argument("--query-input", required=True)
    p.add_argument("--output", required=True)
    p.add_argument("--emit", choices=("hits", "misses"), required=True)
    p.add_argument("--metrics")
    p.add_argument("--key-field", default="id")
    p.add_argument("--normalize", default="none")
    a = p.parse_args(argv)
    policy = oracle.KeyPolicy("auto", a.key_field, a.normalize, oracle.DEFAULT_MAX_KEY_BYTES,
                              oracle.DEFAULT_MAX_LINE_BYTES)
    held = set()
    for root in a.history:
        for _, path, fmt, comp in data_files(root):
            held.update(k for _, k in records(policy, path, fmt, comp) if k is not None)
    problems = []
    hits = misses = rejected = 0
    for rel, path, fmt, comp in data_files(a.query_input):
        want = []
        for body, key in records(policy, path, fmt, comp):
            if key is None:
                rejected += 1
                continue
            inside = key in held
            hits += inside
            misses += not inside
            if inside == (a.emit == "hits"):
                want.append(body)
        out_path = os.path.join(a.output, rel)
        if not os.path.exists(out_path):
            problems.append(f"{rel}: no output")
            continue
        got = [body for _, body in oracle.LineReader(out_path, comp if comp != "none" else None)]
        if got != want:
            problems.append(f"{rel}: {len(got)} output records, the oracle expects {len(want)}"
                            + ("" if len(got) != len(want) else " (other records or order)"))
    if a.metrics:
        with open(a.metrics) as f:
            m = json.load(f)
        for name, value in (("hits", hits), ("misses", misses), ("rejected", rejected)):
            if m.get(name) != value:
                problems.append(f"metrics {name} = {m.get(name)}, the oracle counts {value}")
        if m["tier1_maybe"] != m["tier2_lookups"] or \
                m["tier2_lookups"] != m["key_hits"] + m["false_positives"]:
            problems.append("metrics: tier2_lookups != key_hits + false_positives")
    if problems:
        print("membership oracle: " + "\n  ".join(problems), file=sys.stderr)
        return 1
    print(f"membership oracle ok: {len(held)} keys held; {hits} hits, {misses} misses, "
          f"{rejected} rejected ({a.emit} written)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
