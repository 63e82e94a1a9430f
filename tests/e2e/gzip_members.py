#!/usr/bin/env python3
"""Checks that the .gz files under a folder hold compressed members.

usage: gzip_members.py DIR

The input order's end pass compresses, at the run's level, every .gz output
the rounds wrote as stored (uncompressed) deflate blocks (docs/inputs.md
"Where retracted lines leave the output"). A finished run's .gz outputs
must therefore hold no stored member of more than 4 KiB: a small member
(a checkpoint commits one after a round that wrote a few lines) may be
stored by deflate itself, a large one of JSON text only by a rewrite that
did not happen. Exits 1 naming the file, the member and its size.
"""
import pathlib
import sys
import zlib

FLAG_HCRC, FLAG_EXTRA, FLAG_NAME, FLAG_COMMENT = 0x02, 0x04, 0x08, 0x10
LARGE = 4096


def first_block_stored(member: bytes) -> bool:
    flags = member[3]
    at = 10
    if flags & FLAG_EXTRA:
        at += 2 + (member[at] | member[at + 1] << 8)
    for flag in (FLAG_NAME, FLAG_COMMENT):
        if flags & flag:
            at = member.index(0, at) + 1
    if flags & FLAG_HCRC:
        at += 2
    return (member[at] >> 1) & 3 == 0


def members(data: bytes):
    while data:
        d = zlib.decompressobj(31)
        d.decompress(data)
        if not d.eof:
            raise ValueError("a truncated member")
        rest = d.unused_data
        yield data[: len(data) - len(rest)]
        data = rest


def main() -> int:
    bad = 0
    checked = 0
    for path in sorted(pathlib.Path(sys.argv[1]).rglob("*.gz")):
        for n, member in enumerate(members(path.read_bytes())):
            checked += 1
            if len(member) > LARGE and first_block_stored(member):
                print(f"{path}: member {n} ({len(member)} bytes) is stored, not compressed")
                bad += 1
    if checked == 0:
        print(f"{sys.argv[1]}: no gzip member to check")
        return 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
