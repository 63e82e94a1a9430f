#!/usr/bin/env python3
"""Peer for the dedup benchmark: the same job as `bloomshard dedup`, done
with an in-memory Python set (stdlib only, one process).

For every JSONL file under INPUT (walked recursively in sorted order; names
starting with '_' or '.' are skipped, like dedup's directory walk), every line
is parsed with json.loads, the key is obj[KEY_FIELD] (dotted path), the first
record of a key is kept and written to OUTPUT/<same relative path>.

With --extract-keys FILE it instead writes every record's key, one per line
(no dedup, no outputs), which is the untimed preparation for the sort/awk/redis
peers. Prints a one-line JSON summary on stdout.
"""
import argparse
import json
import os
import sys


def walk(root):
    """Relative paths of the input files, sorted, skipping '_'/'.' names."""
    if os.path.isfile(root):
        return [os.path.basename(root)], os.path.dirname(root) or "."
    found = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith(("_", ".")))
        for name in sorted(filenames):
            if not name.startswith(("_", ".")):
                found.append(os.path.relpath(os.path.join(dirpath, name), root))
    return sorted(found), root


def key_getter(field):
    parts = field.split(".")
    if len(parts) == 1:
        return lambda obj: obj[field]

    def get(obj):
        for p in parts:
            obj = obj[p]
        return obj

    return get


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--input", required=True, help="input file or directory")
    ap.add_argument("--output", help="output directory (mirrors the inputs)")
    ap.add_argument("--key-field", default="id", help="JSONL key field (dotted path)")
    ap.add_argument("--extract-keys", metavar="FILE", help="write all keys here instead")
    args = ap.parse_args()
    if not args.output and not args.extract_keys:
        ap.error("give --output or --extract-keys")

    files, root = walk(args.input)
    get_key = key_getter(args.key_field)
    loads = json.loads
    records = kept = rejected = 0

    if args.extract_keys:
        with open(args.extract_keys, "w", encoding="utf-8", newline="\n") as out:
            write = out.write
            for rel in files:
                with open(os.path.join(root, rel), "rb") as f:
                    for line in f:
                        records += 1
                        key = get_key(loads(line))
                        if not isinstance(key, str) or "\n" in key or "\r" in key:
                            sys.exit(f"key not usable as a text line in {rel}: {key!r}")
                        write(key)
                        write("\n")
        print(json.dumps({"records": records, "files": len(files)}))
        return

    seen = set()
    add = seen.add
    for rel in files:
        dst = os.path.join(args.output, rel)
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        with open(os.path.join(root, rel), "rb") as f, open(dst, "wb") as out:
            write = out.write
            for line in f:
                if not line.strip():
                    continue
                records += 1
                try:
                    key = get_key(loads(line))
                except (ValueError, KeyError, TypeError):
                    rejected += 1
                    continue
                if key in seen:
                    continue
                add(key)
                kept += 1
                write(line if line.endswith(b"\n") else line + b"\n")
    print(json.dumps({"records": records, "kept": kept,
                      "duplicates": records - kept - rejected,
                      "rejected": rejected, "files": len(files)}))


if __name__ == "__main__":
    main()
