#!/usr/bin/env python3
"""Decontaminate a JSONL file against a saved bloomshard state: write the
lines whose key is NOT in the state (e.g. drop every benchmark/test document
a training corpus shares with an evaluation set that was deduplicated into
STATE), byte for byte, in input order.

    PYTHONPATH=build/release/python /usr/bin/python3 python/examples/decontaminate_jsonl.py \\
        --state eval-state/ --key-field id --input train.jsonl --output train.clean.jsonl

Keys are taken as the dedup job takes them (docs/keys.md): the member named
by --key-field (a dotted path; the first of duplicate names wins), a string
as its UTF-8 bytes, an integer as its decimal text; the state's
normalization is applied by the module. Lines that are not a JSON object, or
have no string/integer key, are kept (they cannot be in the state) and
listed in --rejects (file, line, reason) when given. .gz inputs and outputs
are read and written with gzip.
"""
import argparse
import gzip
import json
import sys

import bloomshard

BATCH = 4096


def first_wins(pairs):
    out = {}
    for k, v in pairs:
        out.setdefault(k, v)
    return out


def open_maybe_gz(path, mode):
    return gzip.open(path, mode) if path.endswith(".gz") else open(path, mode)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--state", required=True, help="the --state dir of a bloomshard dedup job")
    ap.add_argument("--key-field", default="id", help="dotted path of the key member (default id)")
    ap.add_argument("--input", required=True)
    ap.add_argument("--output", required=True)
    ap.add_argument("--rejects", help="write one JSON line per unusable input line here")
    ap.add_argument("--keep", choices=("absent", "present"), default="absent",
                    help="absent (default): drop lines found in the state; present: keep only those")
    a = ap.parse_args(argv)

    state = bloomshard.open_state(a.state)
    flt = bloomshard.StateFilter(state, key=a.key_field, keep=a.keep)
    rejects = open(a.rejects, "w") if a.rejects else None
    counts = {"lines": 0, "kept": 0, "dropped": 0, "unusable": 0}

    def flush(lines, docs, out):
        for line, keep in zip(lines, flt.filter_batch(docs)):
            if keep:
                out.write(line)
                counts["kept"] += 1
            else:
                counts["dropped"] += 1

    with open_maybe_gz(a.input, "rb") as inp, open_maybe_gz(a.output, "wb") as out:
        lines, docs = [], []
        for number, line in enumerate(inp, 1):
            counts["lines"] += 1
            body = line[:-1] if line.endswith(b"\n") else line
            if body.endswith(b"\r") and line.endswith(b"\n"):
                body = body[:-1]  # CR LF ends a line; the CR is not part of it
            reason = None
            try:
                doc = json.loads(body, object_pairs_hook=first_wins)
                if not isinstance(doc, dict):
                    reason = "not a JSON object"
            except (ValueError, UnicodeDecodeError) as e:
                reason = "malformed JSON: %s" % e
            if reason is None and flt._key(doc) is None:
                reason = "key field '%s' missing or not a string or integer" % a.key_field
            if reason is not None:
                counts["unusable"] += 1
                if rejects:
                    rejects.write(json.dumps({"file": a.input, "line": number, "reason": reason}) + "\n")
                doc = {}
            lines.append(line)
            docs.append(doc)
            if len(lines) >= BATCH:
                flush(lines, docs, out)
                lines, docs = [], []
        flush(lines, docs, out)
    if rejects:
        rejects.close()
    print("decontaminate: %(lines)d lines, %(kept)d kept, %(dropped)d dropped, "
          "%(unusable)d without a usable key (kept)" % counts, file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
