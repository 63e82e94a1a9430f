#!/usr/bin/python3
"""The --unit minhash sketch of every line of a text file in Python/numpy, in
one process: the yardstick for bloomshard's core (bloomshard_near_dup_sketch,
same file, same summary line). The algorithm is minhash_reference.py's
(written from docs/near-duplicates.md): minhash-text/v1 normalization,
word:5 shingles hashed with xxhash's XXH3_64, the signature as one numpy
broadcast (K x shingles multiply-add-shift, min over the shingles), the band
keys with xxhash's XXH3_128. Its keys-xor equals the C++ tool's on the same
file: the two compute the same keys.

  near_dup_numpy_bench.py [--bands 14] [--rows 8] FILE

Prints "lines .. bytes .. shingles .. seconds .. MB/s .. keys-xor .." and the
split of the time between normalize + shingle hashes and signature + band
keys (the step a vectorized implementation can speed up).
"""
import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import minhash_reference as ref  # noqa: E402  (exits 77 without numpy/xxhash)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bands", type=int, default=14)
    ap.add_argument("--rows", type=int, default=8)
    ap.add_argument("path")
    args = ap.parse_args()
    with open(args.path, "rb") as f:
        lines = [line.rstrip(b"\n") for line in f]
    a, b = ref.family(args.bands * args.rows)
    total_bytes = shingles = checksum = 0
    t_text = t_signature = 0.0
    for raw in lines:
        total_bytes += len(raw) + 1
        t0 = time.perf_counter()
        hashes = ref.shingle_hashes(ref.normalize(raw.decode("utf-8")), "word", 5)
        t1 = time.perf_counter()
        if len(hashes) == 0:
            keys = [ref.empty_text_band_key()]
        else:
            keys = ref.band_keys(ref.signature(hashes, a, b), args.bands, args.rows)
        t2 = time.perf_counter()
        t_text += t1 - t0
        t_signature += t2 - t1
        shingles += len(hashes)
        for k in keys:
            checksum ^= int.from_bytes(k[:8], "little")
    seconds = t_text + t_signature
    print("lines %d bytes %d shingles %d seconds %.3f MB/s %.2f isa numpy keys-xor %016x" %
          (len(lines), total_bytes, shingles, seconds, total_bytes / seconds / 1e6, checksum))
    print("normalize+shingle %.3f s, signature+bands %.3f s (%.0f ns per shingle)" %
          (t_text, t_signature, 1e9 * t_signature / max(shingles, 1)))


if __name__ == "__main__":
    main()
