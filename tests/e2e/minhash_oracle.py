#!/usr/bin/python3
"""Oracle of `bloomshard dedup --unit minhash` (filter mode), from the
documented algorithm (docs/near-duplicates.md): each record's band keys come
from tests/bench/minhash_reference.py (the Python reference of the sketch),
a record is a near-duplicate when one of its band keys was seen before, and
every record's keys are inserted.

usage: minhash_oracle.py --input IN --output OUT [--exact] [--metrics M]
                         [--shingle word:5] [--bands 14] [--rows 8]
                         [--confirm-jaccard T]

Always (any rank count, after kills and resumes), the documented guarantees:
  - every output is the input's valid records in input order minus some
    (exactly once: none twice, none invented); the rejects are the records
    without a string text field or with invalid UTF-8, no others;
  - no two kept records share a band key (with --confirm-jaccard, below);
  - every removed record shares a band key with another record;
  - every group of records linked by shared band keys (a union-find
    component) keeps at least one record: the removed set is within what
    union-find over the same bands removes (all but one per component);
  - the metrics count the records, the near-duplicates removed and the
    distinct band keys (tier 2 holds every record's keys).
--exact (one reader, so the job's order is the input order: 1 rank, or one
input file): the outputs are byte for byte the streaming rule's in input
order.
--confirm-jaccard T (docs/near-duplicates.md section 6): a band hit counts
only when the 4-bit estimate between the record and the key's first record
(P = equal low 4 bits / K, J = (P - 1/16) / (1 - 1/16)) reaches T; the
streaming rule keeps a record with no counted hit and inserts its keys. The
guarantees become: every removed record shares a band key with a record of
estimate >= T (none removed below T); two kept records sharing a band key
have an estimate below T; every group linked by band keys keeps a record;
the metrics' band hits split into confirmed and unconfirmed (exact counts
with --exact).
--annotate bloomshard|dolma (with --confirm-jaccard T): OUT holds the
attribute files of `--mode annotate`, one line per input line; a record's
line flags it as a near-duplicate when a counted band hit exists, with the
best estimate over its counted hits (the first in band order on a tie) and
the position of the record that first inserted that band key (the ordinal
of the state's run that read it, its input index in that run's sorted
inputs, the byte offset of its line). --history DIR (repeatable, in run
order): the state's earlier runs read these inputs (runs 0, 1, ...; the
annotated run is the next): their records' band keys come first in the
streaming rule. --exact: flags, estimates and positions are the streaming
rule's in input order. Always: the guarantees
above on the flags, every flagged record's estimate reaches T, and its match
is a record sharing a band key with it, at exactly that estimate.
--query --state-input DIR ... [--emit hits|misses]: OUT is `query --emit
hits` (or misses) of IN against a state built from the DIRs: byte for byte
the records of IN with a band key that a record of the DIRs has (or the
others), in input order; with --confirm-jaccard T (a confirming state
built with one reader) a band key counts only when the estimate against
the form of its first record in the DIRs reaches T. --metrics: the query's
record counts, its candidates (records with any band key in the state)
and the state's T.
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


CONFIRM_BITS = 4  # core::kDefaultConfirmBits


def sketch_of(text, kind, n, bands, rows):
    """Band keys, each carrying the record's 4-bit form (keys.form)."""
    _, _, sig, keys = ref.sketch(text, kind, n, bands, rows)
    return Keys(keys, ref.pack_low_bits(sig, CONFIRM_BITS))


class Keys(list):
    """A record's band keys, and its confirmation form (low bits per value)."""

    def __init__(self, keys, form):
        super().__init__(keys)
        self.form = form


def estimate(a, b):
    """The b-bit estimate, in the C++ code's order of operations."""
    p = int((a.form == b.form).sum()) / len(a.form)
    c = 2.0 ** -CONFIRM_BITS
    return (p - c) / (1.0 - c)


def records_of(path, kind, n, bands, rows):
    """(line bytes with terminator, band keys or None for a reject) per line;
    a JSONL file's text field, or a plain-line file's whole line."""
    out = []
    with open(path, "rb") as f:
        for line in f:
            body = line.rstrip(b"\n")
            if not path.endswith(".jsonl"):
                try:
                    out.append((line, sketch_of(body.decode("utf-8"), kind, n, bands, rows)))
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
            out.append((line, sketch_of(text, kind, n, bands, rows)))
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


def check_guarantees(keys, kept, confirm=0.0):
    """keys: band keys per valid record (job-independent order); kept: flags;
    confirm: --confirm-jaccard (0: off)."""
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
    holders_of = {}
    for i, ks in enumerate(keys):
        for k in ks:
            holders_of.setdefault(k, []).append(i)
    for k, h in holders_of.items():
        kept_h = [x for x in h if kept[x]]
        if not confirm:
            if len(kept_h) > 1:
                fail("kept records %d and %d share a band key" % (kept_h[0], kept_h[1]))
            continue
        # Some holder inserted k first; every other kept holder's hit on k
        # was below T against it.
        if len(kept_h) > 1 and not any(
                all(estimate(keys[f], keys[x]) < confirm for x in kept_h if x != f) for f in h):
            fail("kept records %s share a band key, and for every record holding it some other "
                 "kept one has estimate >= %g against it" % (kept_h, confirm))
    for i, ks in enumerate(keys):
        if kept[i]:
            continue
        if all(holders[k] == 1 for k in ks):
            fail("record %d was removed but shares no band key with any record" % i)
        elif confirm and not any(estimate(keys[j], keys[i]) >= confirm
                                 for k in ks for j in holders_of[k] if j != i):
            fail("record %d was removed but no record sharing a band key with it has "
                 "estimate >= %g" % (i, confirm))
    kept_in = set(comp.find(i) for i in range(len(keys)) if kept[i])
    roots = set(comp.find(i) for i in range(len(keys)))
    lost = roots - kept_in
    if lost:
        fail("%d group(s) of records linked by band keys lost every record (both of a pair "
             "removed for each other: decisions across keys are inconsistent)" % len(lost))
    return len(roots), len(owners)


def check_query(a, kind, n):
    """query --emit hits|misses: a record is a hit when one of its band keys
    is a key of some record of the state's inputs; with --confirm-jaccard T
    (a confirming state, built with one reader) only when the estimate
    against the form of the key's first record in the state's inputs reaches
    T. The output holds the hits (or the misses) in input order."""
    state = {}  # band key -> the keys (and form) of its first record
    for root in a.state_input:
        for rel in inputs(root):
            for _, ks in records_of(os.path.join(root, rel), kind, n, a.bands, a.rows):
                for k in ks or []:
                    state.setdefault(k, ks)
    hits = candidates = records = rejects = 0
    for rel in inputs(a.input):
        want = b""
        for line, ks in records_of(os.path.join(a.input, rel), kind, n, a.bands, a.rows):
            records += 1
            if ks is None:
                rejects += 1
                continue
            found = [k for k in ks if k in state]
            counted = [k for k in found
                       if not a.confirm_jaccard or estimate(state[k], ks) >= a.confirm_jaccard]
            candidates += bool(found)
            hits += bool(counted)
            if bool(counted) == (a.emit == "hits"):
                want += line
        with open(os.path.join(a.output, rel), "rb") as f:
            if f.read() != want:
                fail("%s: query --emit %s output differs from the records %s a (confirmed) "
                     "band key in the state" % (rel, a.emit,
                                                "with" if a.emit == "hits" else "without"))
    if a.metrics:
        with open(a.metrics) as f:
            m = json.load(f)
        want = {"records": records, "rejected": rejects, "hits": hits,
                "misses": records - rejects - hits, "candidates": candidates,
                "confirm_jaccard": a.confirm_jaccard}
        for name, v in want.items():
            if m[name] != v:
                fail("query metrics %s = %s, want %s" % (name, m[name], v))
    print("minhash_oracle: query: %d hits, %d candidates (a band key in the state)"
          % (hits, candidates))


def records_with_offsets(path, kind, n, bands, rows):
    """records_of's list, each with its line's byte offset."""
    recs, at = [], 0
    for line, ks in records_of(path, kind, n, bands, rows):
        recs.append((line, ks, at))
        at += len(line)
    return recs


def annotated(line, fmt):
    """(flag, similarity or None, (run, input, offset) or None, reject) of
    one attribute line."""
    doc = json.loads(line)
    reject = "reject" in doc
    if fmt == "bloomshard":
        sim = doc.get("similarity")
        m = doc.get("match")
        if doc["duplicate"] != ("similarity" in doc) and not reject:
            fail("a line with duplicate=%s has similarity: %r" % (doc["duplicate"], line))
        return doc["duplicate"], sim, (m["run"], m["input"], m["offset"]) if m else None, reject
    at = doc["attributes"]
    flag = bool(at["bloomshard_duplicate"])
    if reject:
        return flag, None, None, True
    spans = [at[k] for k in ("bloomshard_similarity", "bloomshard_match_input",
                             "bloomshard_match_offset", "bloomshard_match_run")]
    if any(bool(x) != flag for x in spans):
        fail("dolma attributes disagree on the flag: %r" % line)
    if not flag:
        return False, None, None, False
    end = at["bloomshard_duplicate"][0][1]
    if any(x[0][:2] != [0, end] for x in spans):
        fail("dolma spans differ: %r" % line)
    return True, spans[0][0][2], (spans[3][0][2], spans[1][0][2], spans[2][0][2]), False


def check_annotate(a, kind, n):
    confirm = a.confirm_jaccard
    run = len(a.history)  # the annotated run's ordinal in its state
    files = inputs(a.input)
    recs = {}
    by_pos = {}
    seen = {}  # band key -> (keys, (run, input, offset)) of the record that inserted it
    all_keys, all_kept, flagged, stream_flagged = [], [], 0, 0
    # The state's history: every record's keys inserted, in run order.
    for r, root in enumerate(a.history):
        for idx, rel in enumerate(inputs(root)):
            for line, ks, at in records_with_offsets(os.path.join(root, rel), kind, n, a.bands,
                                                     a.rows):
                if ks is None:
                    continue
                by_pos[(r, idx, at)] = ks
                near = any(k in seen and estimate(seen[k][0], ks) >= confirm for k in ks)
                for k in ks:
                    seen.setdefault(k, (ks, (r, idx, at)))
                all_keys.append(ks)
                all_kept.append(not near)
    for idx, rel in enumerate(files):
        recs[rel] = records_with_offsets(os.path.join(a.input, rel), kind, n, a.bands, a.rows)
        for line, ks, at in recs[rel]:
            if ks is not None:
                by_pos[(run, idx, at)] = ks
    for idx, rel in enumerate(files):
        with open(os.path.join(a.output, rel), "rb") as f:
            lines = f.read().splitlines()
        if len(lines) != len(recs[rel]):
            fail("%s: %d attribute lines for %d input lines" % (rel, len(lines), len(recs[rel])))
        for (line, ks, at), got_line in zip(recs[rel], lines):
            flag, sim, match, reject = annotated(got_line, a.annotate)
            if ks is None:
                if not reject or flag:
                    fail("%s at %d: a reject's line %r" % (rel, at, got_line))
                continue
            if reject:
                fail("%s at %d: a valid record annotated as a reject" % (rel, at))
            best = None
            for k in ks:
                if k in seen:
                    e = estimate(seen[k][0], ks)
                    if e >= confirm and (best is None or e > best[0]):
                        best = (e, seen[k][1])
            for k in ks:
                seen.setdefault(k, (ks, (run, idx, at)))
            stream_flagged += best is not None
            if a.exact and (flag != (best is not None) or
                            (best and (sim != best[0] or match != best[1]))):
                fail("%s at %d: annotated %s %r %r, the streaming rule %r" %
                     (rel, at, flag, sim, match, best))
            if flag:
                flagged += 1
                if sim < confirm:
                    fail("%s at %d: flagged with estimate %r below T" % (rel, at, sim))
                other = by_pos.get(tuple(match) if match else None)
                if other is None or not set(other).intersection(ks):
                    fail("%s at %d: its match %r is no record sharing a band key" %
                         (rel, at, match))
                if estimate(other, ks) != sim:
                    fail("%s at %d: estimate %r against its match, the line says %r" %
                         (rel, at, estimate(other, ks), sim))
            all_keys.append(ks)
            all_kept.append(not flag)
    groups, distinct = check_guarantees(all_keys, all_kept, confirm)
    print("minhash_oracle: annotate %s: %d records, %d flagged (streaming in input order: %d), "
          "%d groups, %d band keys" % (a.annotate, len(all_keys), flagged, stream_flagged,
                                       groups, distinct))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--query", action="store_true")
    ap.add_argument("--annotate", choices=["bloomshard", "dolma"])
    ap.add_argument("--state-input", action="append", default=[])
    ap.add_argument("--history", action="append", default=[])
    ap.add_argument("--emit", choices=["hits", "misses"], default="hits")
    ap.add_argument("--input", required=True)
    ap.add_argument("--output", required=True)
    ap.add_argument("--exact", action="store_true")
    ap.add_argument("--metrics")
    ap.add_argument("--shingle", default="word:5")
    ap.add_argument("--bands", type=int, default=14)
    ap.add_argument("--rows", type=int, default=8)
    ap.add_argument("--confirm-jaccard", type=float, default=0.0)
    a = ap.parse_args()
    confirm = a.confirm_jaccard
    kind, n = a.shingle.split(":")
    n = int(n)
    if a.query:
        check_query(a, kind, n)
        return
    if a.annotate:
        if not confirm:
            fail("--annotate checks the matches of --confirm-jaccard")
        check_annotate(a, kind, n)
        return
    all_keys, all_kept, rejects, stream_removed = [], [], 0, 0
    seen = {}  # band key -> the keys (and form) of the record that inserted it
    hits = {"candidates": 0, "confirmed_hits": 0, "unconfirmed_hits": 0}
    for rel in inputs(a.input):
        recs = records_of(os.path.join(a.input, rel), kind, n, a.bands, a.rows)
        kept = kept_lines(os.path.join(a.output, rel), recs, rel)
        want = b""
        for j, (line, ks) in enumerate(recs):
            if ks is None:
                rejects += 1
                continue
            hit = [k for k in ks if k in seen]
            counted = [k for k in hit if not confirm or estimate(seen[k], ks) >= confirm]
            near = bool(counted)
            hits["candidates"] += bool(hit)
            hits["confirmed_hits"] += len(counted)
            hits["unconfirmed_hits"] += len(hit) - len(counted)
            for k in ks:
                seen.setdefault(k, ks)
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
    groups, distinct = check_guarantees(all_keys, all_kept, confirm)
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
        if a.exact:
            want_mh.update(hits)
        got_hits = mh["confirmed_hits"] + mh["unconfirmed_hits"]
        if got_hits + mh["band_keys_inserted"] != mh["band_keys"]:
            fail("metrics: %d band hits and %d inserted, of %d band keys" %
                 (got_hits, mh["band_keys_inserted"], mh["band_keys"]))
        if not confirm and mh["unconfirmed_hits"] != 0:
            fail("metrics: unconfirmed hits without --confirm-jaccard")
        if mh["candidates"] < removed:
            fail("metrics: %d candidates, fewer than the %d removed" % (mh["candidates"], removed))
        for name, v in want_mh.items():
            if mh[name] != v:
                fail("metrics minhash_dedup.%s = %s, want %s" % (name, mh[name], v))
    print("minhash_oracle: %d records, %d removed (streaming in input order: %d), %d rejects, "
          "%d groups, %d band keys; streaming: %d candidates, %d hits confirmed, %d unconfirmed"
          % (len(all_keys), removed, stream_removed, rejects, groups, distinct,
             hits["candidates"], hits["confirmed_hits"], hits["unconfirmed_hits"]))


if __name__ == "__main__":
    main()
