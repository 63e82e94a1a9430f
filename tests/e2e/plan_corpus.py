#!/usr/bin/env python3
"""Writes a JSONL corpus whose duplicates repeat a uniformly drawn earlier
key (no locality: the router's in-batch combining is rare with small
batches), and prints its facts as JSON: records, distinct keys, mean key
bytes and mean record bytes (line + newline). For e2e.plan.

usage: plan_corpus.py OUT_DIR RECORDS DUP_RATE FILES SEED
"""
import json
import os
import random
import sys


def main(argv):
    out, records, dup_rate, files, seed = argv[0], int(argv[1]), float(argv[2]), int(argv[3]), int(argv[4])
    rng = random.Random(seed)
    os.makedirs(out, exist_ok=True)
    keys = []
    key_bytes = line_bytes = 0
    per_file = (records + files - 1) // files
    written = 0
    for f in range(files):
        with open(os.path.join(out, f"part-{f:05d}.jsonl"), "w") as fh:
            for _ in range(min(per_file, records - written)):
                if keys and rng.random() < dup_rate:
                    key = keys[rng.randrange(len(keys))]
                else:
                    key = f"doc-{rng.getrandbits(64):016x}-{len(keys)}"
                    keys.append(key)
                text = "".join(rng.choice("abcdefghij klmnop") for _ in range(rng.randint(40, 160)))
                line = json.dumps({"id": key, "text": text})
                fh.write(line + "\n")
                key_bytes += len(key)
                line_bytes += len(line) + 1
                written += 1
    print(json.dumps({"records": written, "unique": len(keys), "key_bytes": key_bytes / written,
                      "record_bytes": line_bytes / written}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
