#!/usr/bin/env python3
"""Oracle for `bloomshard dedup --unit paragraph`, stdlib only.

Its own implementation of every rule (docs/keys.md, "Paragraph-level
dedup"), sharing no code with the job:
  split     newline: every '\\n' ends a paragraph; blankline: a paragraph is
            a maximal run of lines that are not blank (blank: only ' ',
            '\\t', '\\r'); the cut of a paragraph runs to the next one's start
            (the last one's to the end of the text)
  normalize none, or ws (trim, collapse runs of the 25 Unicode White_Space
            code points to one space); a paragraph whose normalized UTF-8 is
            shorter than --min-paragraph-bytes is never keyed or removed
  identity  two paragraphs are the same key when their normalized texts are
            equal (the job compares 16-byte digests of them; a collision
            among a few thousand texts has probability ~2^-100)
  removal   a record's duplicate paragraphs are cut out of its text field;
            the field's JSON string token is replaced by the new text
            written as json.dumps(ensure_ascii=False) writes it; every other
            byte of the line stays; a record without removals is unchanged;
            one that lost more than --drop-if-removed-fraction of its text
            bytes is dropped (its new paragraphs still count as seen)
Modes:
  --exact       the job read the inputs in one order (one rank, or a single
                input file): simulate first occurrence in input order (files
                in sorted path order) and demand byte-identical outputs and
                the metrics' paragraph counters.
  (default)     any rank count: every input record is in its output once, in
                order, with some set of keyed paragraphs cut (found by
                alignment); each key is kept exactly once over all outputs
                (needs --drop-if-removed-fraction 1); inside one record a
                kept copy precedes the removed copies of its key; short
                paragraphs are never cut; counters that do not depend on the
                order match the metrics.
Exit 0 if all hold, 1 naming the first violation, 2 for bad usage.
"""

import argparse
import gzip
import json
import os
import subprocess
import sys

WHITE_SPACE = set(map(chr, list(range(0x09, 0x0E)) + [0x20, 0x85, 0xA0, 0x1680] +
                      list(range(0x2000, 0x200B)) + [0x2028, 0x2029, 0x202F, 0x205F, 0x3000]))
assert len(WHITE_SPACE) == 25


class Violation(Exception):
    pass


def normalize(text, policy):
    if policy == "none":
        return text
    out, pending, started = [], False, False
    for ch in text:
        if ch in WHITE_SPACE:
            pending = started
            continue
        if pending:
            out.append(" ")
            pending = False
        out.append(ch)
        started = True
    return "".join(out)


def split(text_bytes, rule):
    """[(start, end, cut_end)] byte spans of the paragraphs."""
    spans, pos, in_par = [], 0, False
    lines = text_bytes.split(b"\n")
    for n, line in enumerate(lines):
        end = pos + len(line)
        if rule == "newline":
            spans.append([pos, end])
        elif line.strip(b" \t\r") == b"":
            in_par = False
        elif in_par:
            spans[-1][1] = end
        else:
            spans.append([pos, end])
            in_par = True
        pos = end + 1
    return [(s, e, spans[i + 1][0] if i + 1 < len(spans) else len(text_bytes))
            for i, (s, e) in enumerate(spans)]


def cut(text_bytes, spans, dup):
    out, at = [], 0
    for (s, _, c), d in zip(spans, dup):
        if d:
            out.append(text_bytes[at:s])
            at = c
    out.append(text_bytes[at:])
    return b"".join(out)


def string_token(line, field):
    """(begin, end) byte offsets of the top-level member `field`'s value
    token (first member of the name), found with the json scanner."""
    text = line.decode("utf-8")
    dec = json.JSONDecoder()
    i = 0

    def ws(k):
        while k < len(text) and text[k] in " \t\r\n":
            k += 1
        return k
    i = ws(i)
    if text[i] != "{":
        return None
    i = ws(i + 1)
    while i < len(text) and text[i] != "}":
        name, i = dec.raw_decode(text, i)
        i = ws(i)
        assert text[i] == ":"
        i = ws(i + 1)
        value, j = dec.raw_decode(text, i)
        if name == field:
            if not isinstance(value, str):
                return None
            return len(text[:i].encode()), len(text[:j].encode())
        i = ws(j)
        if text[i] == ",":
            i = ws(i + 1)
    return None


def read_lines(path):
    if path.endswith(".zst"):
        data = subprocess.run(["zstd", "-q", "-d", "-c", path], check=True,
                              stdout=subprocess.PIPE).stdout
    else:
        opener = gzip.open if path.endswith(".gz") else open
        with opener(path, "rb") as f:
            data = f.read()
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    return lines


def data_files(root):
    out = []
    for d, dirs, files in os.walk(root):
        dirs[:] = sorted(x for x in dirs if not x.startswith(("_", ".")))
        for f in files:
            if not f.startswith(("_", ".")):
                out.append(os.path.relpath(os.path.join(d, f), root))
    return sorted(out)


class Record:
    def __init__(self, args, line):
        self.line = line
        self.token = string_token(line, args.field)
        self.valid = self.token is not None
        if not self.valid:
            return
        self.text = json.loads(line.decode())[args.field].encode("utf-8")
        self.spans = split(self.text, args.split)
        self.keys = []
        for s, e, _ in self.spans:
            n = normalize(self.text[s:e].decode("utf-8"), args.normalize)
            self.keys.append(n if len(n.encode()) >= args.min_paragraph_bytes else None)

    def rewritten(self, dup):
        if not any(dup):
            return self.line
        new = cut(self.text, self.spans, dup).decode("utf-8")
        b, e = self.token
        return self.line[:b] + json.dumps(new, ensure_ascii=False).encode() + self.line[e:]

    def removed_bytes(self, dup):
        return sum(c - s for (s, _, c), d in zip(self.spans, dup) if d)


def load(args):
    files = {}
    for rel in data_files(args.input):
        files[rel] = [Record(args, l) for l in read_lines(os.path.join(args.input, rel))]
    return files


def expect_exact(args, files):
    seen, out, m = set(), {}, dict(paragraphs=0, paragraphs_keyed=0, paragraphs_removed=0,
                                   records_changed=0, records_dropped=0, bytes_removed=0)
    for rel, recs in files.items():
        lines = []
        for r in recs:
            if not r.valid:
                continue
            dup = []
            for k in r.keys:
                dup.append(k is not None and k in seen)
                if k is not None:
                    seen.add(k)
            m["paragraphs"] += len(r.spans)
            m["paragraphs_keyed"] += sum(k is not None for k in r.keys)
            if not any(dup):
                lines.append(r.line)
                continue
            removed = r.removed_bytes(dup)
            frac = removed / len(r.text) if r.text else 0.0
            if frac > args.drop_if_removed_fraction:
                m["records_dropped"] += 1
                continue
            m["records_changed"] += 1
            m["paragraphs_removed"] += sum(dup)
            m["bytes_removed"] += removed
            lines.append(r.rewritten(dup))
        out[rel] = lines
    return out, m, len(seen)


def align(r, out_line):
    """A set of cut paragraphs turning r into out_line, or None."""
    if out_line == r.line:
        return [False] * len(r.spans)
    try:
        b, _ = r.token
        j = json.loads(out_line.decode())
        if out_line[:b] != r.line[:b]:
            return None
        target = j[args_field].encode("utf-8")
    except (ValueError, KeyError):
        return None
    n = len(r.spans)
    memo = {}

    def go(i, at, pos):  # paragraphs < i decided; text[:at] consumed; target[:pos] matched
        if (i, at, pos) in memo:
            return memo[(i, at, pos)]
        res = None
        if i == n:
            res = [] if target[pos:] == r.text[at:] else None
        else:
            s, _, c = r.spans[i]
            keep_len = c - at
            if target[pos:pos + keep_len] == r.text[at:c]:
                rest = go(i + 1, c, pos + keep_len)
                if rest is not None:
                    res = [False] + rest
            if res is None and r.keys[i] is not None:
                pre = r.text[at:s]
                if target[pos:pos + len(pre)] == pre:
                    rest = go(i + 1, c, pos + len(pre))
                    if rest is not None:
                        res = [True] + rest
        memo[(i, at, pos)] = res
        return res
    dup = go(0, 0, 0)
    if dup is not None and r.rewritten(dup) != out_line:
        return None
    return dup


def check_invariants(args, files, outputs):
    kept = {}
    m = dict(paragraphs=0, paragraphs_keyed=0, records_dropped=0)
    all_keys = set()
    for rel, recs in files.items():
        got = outputs.get(rel, [])
        valid = [r for r in recs if r.valid]
        if len(got) != len(valid):
            raise Violation(f"{rel}: {len(got)} output records for {len(valid)} valid inputs")
        for n, (r, line) in enumerate(zip(valid, got), 1):
            dup = align(r, line)
            if dup is None:
                raise Violation(f"{rel}: output record {n} is not its input with paragraphs cut")
            m["paragraphs"] += len(r.spans)
            m["paragraphs_keyed"] += sum(k is not None for k in r.keys)
            removed_here = set()
            for k, d in zip(r.keys, dup):
                if k is None:
                    continue
                all_keys.add(k)
                if d:
                    removed_here.add(k)
                else:
                    if k in removed_here:
                        raise Violation(f"{rel}: record {n} keeps a later copy of a paragraph "
                                        f"it removed earlier: {k[:40]!r}")
                    kept[k] = kept.get(k, 0) + 1
    twice = [k for k, c in kept.items() if c != 1]
    if twice:
        raise Violation(f"{len(twice)} paragraphs kept more than once, e.g. {twice[0][:60]!r}")
    lost = all_keys - set(kept)
    if lost:
        raise Violation(f"{len(lost)} paragraphs kept nowhere, e.g. {next(iter(lost))[:60]!r}")
    return m, len(all_keys)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--input", required=True)
    p.add_argument("--output", required=True)
    p.add_argument("--field", default="text")
    p.add_argument("--split", choices=["newline", "blankline"], default="newline")
    p.add_argument("--normalize", choices=["none", "ws"], default="none")
    p.add_argument("--min-paragraph-bytes", type=int, default=1)
    p.add_argument("--drop-if-removed-fraction", type=float, default=1.0)
    p.add_argument("--metrics")
    p.add_argument("--exact", action="store_true")
    args = p.parse_args()
    global args_field
    args_field = args.field
    files = load(args)
    outputs = {rel: read_lines(os.path.join(args.output, rel)) for rel in files
               if os.path.exists(os.path.join(args.output, rel))}
    try:
        if args.exact:
            want, m, keys = expect_exact(args, files)
            for rel, lines in want.items():
                got = outputs.get(rel)
                if got != lines:
                    for n, (a, b) in enumerate(zip(got or [], lines), 1):
                        if a != b:
                            raise Violation(f"{rel}: output line {n} is\n  {a[:200]!r}\nwant\n"
                                            f"  {b[:200]!r}")
                    raise Violation(f"{rel}: {len(got or [])} output lines, want {len(lines)}")
        else:
            if args.drop_if_removed_fraction < 1:
                raise Violation("the invariant mode needs --drop-if-removed-fraction 1")
            m, keys = check_invariants(args, files, outputs)
        if args.metrics:
            with open(args.metrics) as f:
                top = json.load(f)
            got = top["paragraph_dedup"]
            for k, v in m.items():
                if got.get(k) != v:
                    raise Violation(f"metrics paragraph_dedup.{k} = {got.get(k)}, want {v}")
            if top["tier2_keys"] != keys:
                raise Violation(f"metrics tier2_keys = {top['tier2_keys']}, want {keys} distinct")
    except Violation as e:
        print(f"paragraph oracle: {e}", file=sys.stderr)
        return 1
    print(f"paragraph oracle: ok ({'exact' if args.exact else 'invariants'}): "
          f"{sum(len(v) for v in files.values())} records, {keys} distinct paragraphs, "
          + ", ".join(f"{k}={v}" for k, v in m.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
