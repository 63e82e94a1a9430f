#!/usr/bin/python3
"""The whole `dedup --unit minhash` job in Python/numpy, in one process: the
yardstick of the job-level speed figure (docs/performance.md,
"Near-duplicates"). Same signatures and bands as bloomshard (the sketch is
minhash_reference.py's, written from docs/near-duplicates.md, with the
signature as one numpy broadcast per record), the streaming rule of
docs/near-duplicates.md section 11 with a Python set of band keys: a record
is removed when any of its band keys is in the set, and every record's keys
are added. Reads the JSONL files of INPUT (sorted by name) and writes the
kept lines to OUTPUT, one file.

  python_minhash_dedup.py [--bands 14] [--rows 8] [--field text] INPUT OUTPUT

Prints "records .. kept .. text-bytes .. band-keys ..": with one bloomshard
rank and one input file the kept lines are the same (the order is the input
order; with several ranks which copy is kept may differ, the counts stay
close).
"""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import minhash_reference as ref  # noqa: E402  (exits 77 without numpy/xxhash)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bands", type=int, default=14)
    ap.add_argument("--rows", type=int, default=8)
    ap.add_argument("--field", default="text")
    ap.add_argument("input")
    ap.add_argument("output")
    args = ap.parse_args()
    a, b = ref.family(args.bands * args.rows)
    seen = set()
    records = kept = text_bytes = 0
    names = sorted(n for n in os.listdir(args.input) if n.endswith(".jsonl"))
    with open(args.output, "wb") as out:
        for name in names:
            with open(os.path.join(args.input, name), "rb") as f:
                for line in f:
                    text = json.loads(line)[args.field]
                    records += 1
                    text_bytes += len(text.encode("utf-8"))
                    hashes = ref.shingle_hashes(ref.normalize(text), "word", 5)
                    if len(hashes) == 0:
                        keys = [ref.empty_text_band_key()]
                    else:
                        keys = ref.band_keys(ref.signature(hashes, a, b), args.bands, args.rows)
                    new = all(k not in seen for k in keys)
                    seen.update(keys)
                    if new:
                        kept += 1
                        out.write(line)
    print("records %d kept %d text-bytes %d band-keys %d" % (records, kept, text_bytes, len(seen)))


if __name__ == "__main__":
    main()
