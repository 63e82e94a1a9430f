#!/usr/bin/env python3
"""Checks `dedup --unit paragraph --mode annotate` against filter mode.

usage: paragraph_annotate_check.py INPUT.jsonl FILTER_OUT.jsonl BLOOMSHARD_ATTR.jsonl DOLMA_ATTR.jsonl

The three outputs come from runs of one input file with the same options
and rank count (one reader: the same decisions). Independent of the job's
code: it only parses JSON and applies spans. For every input line, in order:
  - both attribute files have one line, rejects flagged in both;
  - Dolma spans are [start, end, 1.0] in characters, in order, disjoint;
    cutting them out of the text gives the filter output's text, and the
    record with only that field replaced is the filter output's record
    (compared as parsed JSON);
  - the bloomshard line's "duplicate" is true exactly when filter mode
    dropped the record; its spans are bytes of the UTF-8 text, each the
    start of the Dolma cut at the same position (a cut is the paragraph
    plus the separator after it);
  - every filter output record is accounted for.
"""
import json
import sys


def lines(path):
    data = open(path, "rb").read()
    return [l.decode("utf-8") for l in data.split(b"\n")[:-1 if data.endswith(b"\n") else None]]


def main():
    # Lines end at b"\n" only (str.splitlines would also split at U+2028,
    # which texts hold raw).
    inp, filt, bs, dl = (lines(p) for p in sys.argv[1:5])
    if not (len(inp) == len(bs) == len(dl)):
        sys.exit(f"{len(inp)} input lines, {len(bs)} bloomshard and {len(dl)} dolma lines")
    out = iter(filt)
    spans_seen = changed = dropped = 0
    for n, (line, b_line, d_line) in enumerate(zip(inp, bs, dl), 1):
        b, d = json.loads(b_line), json.loads(d_line)
        if "reject" in b or "reject" in d:
            if b.get("reject") != d.get("reject") or not b.get("reject"):
                sys.exit(f"line {n}: reject flags differ: {b_line} / {d_line}")
            continue
        rec = json.loads(line)
        text = rec["text"]
        if d.get("id") != (None if rec.get("id") is None else str(rec["id"])):
            sys.exit(f"line {n}: dolma id {d.get('id')!r}, record id {rec.get('id')!r}")
        cuts = d["attributes"]["bloomshard_duplicate"]
        at, kept = 0, []
        for c in cuts:
            s, e, score = c
            if not (at <= s < e <= len(text)) or score != 1.0:
                sys.exit(f"line {n}: bad dolma span {c} (text of {len(text)} chars, after {at})")
            kept.append(text[at:s])
            at = e
        kept.append(text[at:])
        new_text = "".join(kept)
        bspans = b["duplicate_spans"]
        if len(bspans) != len(cuts):
            sys.exit(f"line {n}: {len(bspans)} byte spans, {len(cuts)} dolma spans")
        raw = text.encode("utf-8")
        for (s, e), (cs, ce, _) in zip(bspans, cuts):
            para = raw[s:e].decode("utf-8")
            if len(raw[:s].decode("utf-8")) != cs or not text[cs:ce].startswith(para):
                sys.exit(f"line {n}: byte span {[s, e]} is not the dolma cut {[cs, ce]}")
        spans_seen += len(cuts)
        if b["duplicate"]:
            dropped += 1
            continue  # filter mode dropped it: nothing in its output
        try:
            got = json.loads(next(out))
        except StopIteration:
            sys.exit(f"line {n}: filter output ended early")
        rec["text"] = new_text
        if got != rec:
            sys.exit(f"line {n}: spans applied give {rec!r}, filter mode wrote {got!r}")
        changed += bool(cuts)
    if next(out, None) is not None:
        sys.exit("filter output has more records than the attribute files keep")
    if spans_seen == 0 or changed == 0:
        sys.exit("no duplicate paragraph at all: the corpus does not test anything")
    print(f"{len(inp)} lines: {spans_seen} duplicate paragraphs, {changed} records changed,"
          f" {dropped} dropped; spans reproduce filter mode")


if __name__ == "__main__":
    main()
