#!/usr/bin/python3
"""Oracle of `bloomshard dedup --unit minhash` (filter mode), from the
documented algorithm (docs/near-duplicates.md): each record's band keys come
from tests/bench/minhash_reference.py (the Python reference of the sketch),
a record is a near-duplicate when one of its band keys was seen before, and
every record's keys are inserted.

usage: minhash_oracle.py --input IN --output OUT [--exact] [--metrics M]
                         [--shingle word:5] [--bands 14] [--rows 8]

Always (any rank count, after kills and resumes), the documented guarantees:
  - every output is the input's valid records in input order minus some
    (exactly once: none twice, none invented); the rejects are the records
    without a string text field or with invalid UTF-8, no others;
  - no two kept records share a band key;
  - every removed record shares a band key with another record;
  - every group of records linked by shared band keys (a union-find
    component) keeps at least one record: the removed set is within what
    union-find over the same bands removes (all but one per component);
  - the metrics count the records, the near-duplicates removed and the
    distinct band keys (tier 2 holds every record's keys).
--exact (one reader, so the job's order is the input order: 1 rank, or one
input file): the outputs are byte for byte the streaming rule's in input
order.
--query --state-input DIR ...: OUT is `query --emit hits` of IN against a
state built from the DIRs: byte for byte the records of IN with a band key
that a record of the DIRs has, in input order.
"""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "bench"))
import minhash_reference as ref  # noqa: E402  (exits 77 without numpy/xxhash)


def fail(msg):
    print("minhash_oracle: " + msg, file=sys.stderr)
    sys.exit(1)


def records_of(path, kind, n, bands, rows):
    """(line bytes with terminator, band keys or None for a reject) per line;
    a JSONL file's text field, or a plain-line file's whole line."""
    out = []
    with open(path, "rb") as f:
        for line in f:
            body = line.rstrip(b"\n")
            if not path.endswith(".jsonl"):
                try:
                    out.append((line, ref.sketch(body.decode("utf-8"), kind, n, bands, rows)[3]))
                except UnicodeDecodeError:
                    out.append((line, None))
                continue
            try:
                doc = json.loads(body.decode("utf-8"))
            except (UnicodeDecodeError, ValueError):
                out.append((line, None))
                continue
            text = doc.get("text") if isinstance(doc, dict) else None
            if not isinstance(text, str):
                out.append((line, None))
                continue
            out.append((line, ref.sketch(text, kind, n, bands, rows)[3]))
    return out


def inputs(root):
    files = []
    for d, _, names in os.walk(root):
        for name in names:
            files.append(os.path.relpath(os.path.join(d, name), root))
    return sorted(files)


def kept_lines(path, records, rel):
    """Which records of `records` the output at `path` holds, in order."""
    if not os.path.exists(path):
        fail("no output for input " + rel)
    with open(path, "rb") as f:
        lines = f.readlines()
    kept, j = set(), 0
    for line in lines:
        while j < len(records) and (records[j][1] is None or records[j][0] != line):
            j += 1
        if j == len(records):
            fail("%s: a line is not a valid input record in input order (twice, moved or "
                 "invented): %r" % (rel, line[:80]))
        kept.add(j)
        j += 1
    return kept


class Components:
    def __init__(self, n):
        self.parent = list(range(n))

    def find(self, i):
        while self.parent[i] != i:
            self.parent[i] = self.parent[self.parent[i]]
            i = self.parent[i]
        return i

    def union(self, a, b):
        self.parent[self.find(a)] = self.find(b)


def check_guarantees(keys, kept):
    """keys: band keys per valid record (job-independent order); kept: flags."""
    owners = {}
    comp = Components(len(keys))
    for i, ks in enumerate(keys):
        for k in ks:
            if k in owners:
                comp.union(i, owners[k])
            else:
                owners[k] = i
    holders = {}
    for i, ks in enumerate(keys):
        for k in ks:
            holders[k] = holders.get(k, 0) + 1
    seen_kept = {}
    for i, ks in enumerate(keys):
        if kept[i]:
            for k in ks:
                if k in seen_kept:
                    fail("kept records %d and %d share a band key" % (seen_kept[k], i))
                seen_kept[k] = i
        elif all(holders[k] == 1 for k in ks):
            fail("record %d was removed but shares no band key with any record" % i)
    kept_in = set(comp.find(i) for i in range(len(keys)) if kept[i])
    roots = set(comp.find(i) for i in range(len(keys)))
    lost = roots - kept_in
    if lost:
        fail("%d group(s) of records linked by band keys lost every record (both of a pair "
             "removed for each other: decisions across keys are inconsistent)" % len(lost))
    return len(roots), len(owners)


def check_query(a, kind, n):
    """query --emit hits: a record is written when one of its band keys is a
    key of some record of the state's inputs."""
    state_keys = set()
    for root in a.state_input:
        for rel in inputs(root):
            for _, ks in records_of(os.path.join(root, rel), kind, n, a.bands, a.rows):
                state_keys.update(ks or [])
    hits = 0
    for rel in inputs(a.input):
        want = b""
        for line, ks in records_of(os.path.join(a.input, rel), kind, n, a.bands, a.rows):
            if ks is not None and state_keys.intersection(ks):
                want += line
                hits += 1
        with open(os.path.join(a.output, rel), "rb") as f:
            if f.read() != want:
                fail("%s: query output differs from the records with a band key in the state"
                     % rel)
    print("minhash_oracle: query: %d hits" % hits)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--query", action="store_true")
    ap.add_argument("--state-input", action="append", default=[])
    ap.add_argument("--input", required=True)
    ap.add_argument("--output", required=True)
    ap.add_argument("--exact", action="store_true")
    ap.add_argument("--metrics")
    ap.add_argument("--shingle", default="word:5")
    ap.add_argument("--bands", type=int, default=14)
    ap.add_argument("--rows", type=int, default=8)
    a = ap.parse_args()
    kind, n = a.shingle.split(":")
    n = int(n)
    if a.query:
        check_query(a, kind, n)
        return
    all_keys, all_kept, rejects, stream_removed = [], [], 0, 0
    seen = set()
    for rel in inputs(a.input):
        recs = records_of(os.path.join(a.input, rel), kind, n, a.bands, a.rows)
        kept = kept_lines(os.path.join(a.output, rel), recs, rel)
        want = b""
        for j, (line, ks) in enumerate(recs):
            if ks is None:
                rejects += 1
                continue
            near = any(k in seen for k in ks)
            seen.update(ks)
            stream_removed += near
            if not near:
                want += line
            all_keys.append(ks)
            all_kept.append(j in kept)
        if a.exact:
            with open(os.path.join(a.output, rel), "rb") as f:
                got = f.read()
            if got != want:
                fail("%s: output differs from the streaming rule in input order (%d bytes, "
                     "want %d)" % (rel, len(got), len(want)))
    groups, distinct = check_guarantees(all_keys, all_kept)
    removed = all_kept.count(False)
    if a.exact and removed != stream_removed:
        fail("%d removed, the streaming rule removes %d" % (removed, stream_removed))
    if a.metrics:
        with open(a.metrics) as f:
            m = json.load(f)
        mh = m["minhash_dedup"]
        want = {"records": len(all_keys) + rejects, "rejected": rejects, "dropped": removed,
                "kept": len(all_keys) - removed, "tier2_keys": distinct}
        want_mh = {"records": len(all_keys), "near_duplicates": removed,
                   "band_keys": sum(len(k) for k in all_keys), "band_keys_inserted": distinct,
                   "empty_texts": sum(1 for k in all_keys if k == [ref.empty_text_band_key()])}
        for name, v in want.items():
            if m[name] != v:
                fail("metrics %s = %s, want %s" % (name, m[name], v))
        for name, v in want_mh.items():
            if mh[name] != v:
                fail("metrics minhash_dedup.%s = %s, want %s" % (name, mh[name], v))
    print("minhash_oracle: %d records, %d removed (streaming in input order: %d), %d rejects, "
          "%d groups, %d band keys" % (len(all_keys), removed, stream_removed, rejects, groups,
                                      distinct))


if __name__ == "__main__":
    main()
