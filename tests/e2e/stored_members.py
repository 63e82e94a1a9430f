#!/usr/bin/env python3
"""Checks that the .gz and .zst files under a folder hold compressed data.

usage: stored_members.py DIR

The input order's end pass compresses, at the run's level, every .gz/.zst
output the rounds wrote stored: gzip members of stored deflate blocks, zstd
frames of raw blocks (docs/inputs.md "Where retracted lines leave the
output"). A finished run's outputs must therefore hold no gzip member and
no zstd frame of more than 4 KiB whose first block is stored: a small one
(a checkpoint commits one after a round that wrote a few lines) may be
stored by the codec itself, a large one of JSON text only by a rewrite that
did not happen. zstd frames are walked by their headers (RFC 8878), gzip
members by zlib. Exits 1 naming the file, the member or frame and its size.
"""
import pathlib
import sys
import zlib

FLAG_HCRC, FLAG_EXTRA, FLAG_NAME, FLAG_COMMENT = 0x02, 0x04, 0x08, 0x10
ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
LARGE = 4096


def gzip_first_block_stored(member: bytes) -> bool:
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


def gzip_members(data: bytes):
    while data:
        d = zlib.decompressobj(31)
        d.decompress(data)
        if not d.eof:
            raise ValueError("a truncated gzip member")
        rest = d.unused_data
        yield data[: len(data) - len(rest)], gzip_first_block_stored(data)
        data = rest


def zstd_frames(data: bytes):
    """(frame bytes, first block raw) of each frame; skippable frames skipped."""
    at = 0
    while at < len(data):
        magic = data[at : at + 4]
        if magic[1:] == b"\x2a\x4d\x18" and magic[0] & 0xF0 == 0x50:
            at += 8 + int.from_bytes(data[at + 4 : at + 8], "little")
            continue
        if magic != ZSTD_MAGIC:
            raise ValueError(f"no zstd frame at byte {at}")
        start = at
        fhd = data[at + 4]
        fcs_flag, single, checksum, dict_flag = fhd >> 6, fhd >> 5 & 1, fhd >> 2 & 1, fhd & 3
        at += 5 + (0 if single else 1) + (0, 1, 2, 4)[dict_flag]
        at += 1 if fcs_flag == 0 and single else (0, 2, 4, 8)[fcs_flag]
        first_raw = None
        while True:
            header = int.from_bytes(data[at : at + 3], "little")
            last, kind, size = header & 1, header >> 1 & 3, header >> 3
            if first_raw is None:
                first_raw = kind == 0
            at += 3 + (1 if kind == 1 else size)  # an RLE block holds one byte
            if last:
                break
        at += 4 if checksum else 0
        yield data[start:at], first_raw


def main() -> int:
    bad = checked = 0
    root = pathlib.Path(sys.argv[1])
    for path in sorted(p for p in root.rglob("*") if p.suffix in (".gz", ".zst")):
        walk = gzip_members if path.suffix == ".gz" else zstd_frames
        for n, (unit, stored) in enumerate(walk(path.read_bytes())):
            checked += 1
            if len(unit) > LARGE and stored:
                what = "member" if path.suffix == ".gz" else "frame"
                print(f"{path}: {what} {n} ({len(unit)} bytes) is stored, not compressed")
                bad += 1
    if checked == 0:
        print(f"{root}: no gzip member or zstd frame to check")
        return 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
