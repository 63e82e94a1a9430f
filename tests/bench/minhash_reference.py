#!/usr/bin/python3
"""Independent reference of bloomshard's --unit minhash sketch (scheme v1),
written from docs/near-duplicates.md alone: normalization minhash-text/v1,
shingles, the MinHash permutation family, band keys and the b-bit Jaccard
estimator. Run with /usr/bin/python3 (python3-numpy, python3-xxhash).

  minhash_reference.py kat            known answers of the docs' texts (JSON)
  minhash_reference.py bbit-table     estimator error vs b on synthetic pairs
  minhash_reference.py s-curve        band-hit probabilities of 14x8, 20x13
  minhash_reference.py check-docs DOC  exit 1 unless DOC's known-answer table
                                      holds this implementation's values

Python's unicodedata is Unicode 14.0 (Debian 12), utf8proc 15.0: the
known-answer texts use no code point whose properties differ.
"""
import json
import struct
import sys
import unicodedata

try:
    import numpy as np
    import xxhash
except ImportError as e:  # ctest: skipped (SKIP_RETURN_CODE 77), not failed
    print("minhash_reference.py needs python3-numpy and python3-xxhash:", e)
    sys.exit(77)

SHINGLE_SEED = 0x7368696E676C6531  # "shingle1"
FAMILY_SEED = 0x6D696E6861736831  # "minhash1"
SCHEME_VERSION = 1
EMPTY_TEXT_BAND = 0xFFFFFFFF
MASK64 = (1 << 64) - 1
WHITE_SPACE = set([*range(0x09, 0x0E), 0x20, 0x85, 0xA0, 0x1680, *range(0x2000, 0x200B),
                   0x2028, 0x2029, 0x202F, 0x205F, 0x3000])


def normalize(text: str) -> str:
    """minhash-text/v1: NFC(casefold(NFD(text))), P* removed, White_Space runs -> ' ', trimmed."""
    folded = unicodedata.normalize("NFC", unicodedata.normalize("NFD", text).casefold())
    out, owed, wrote = [], False, False
    for ch in folded:
        if ord(ch) in WHITE_SPACE:
            owed = wrote
        elif not unicodedata.category(ch).startswith("P"):
            if owed:
                out.append(" ")
            owed, wrote = False, True
            out.append(ch)
    return "".join(out)


def shingles(normalized: str, kind: str, n: int) -> list:
    units = normalized.split(" ") if kind == "word" else list(normalized)
    if normalized == "":
        return []
    sep = " " if kind == "word" else ""
    if len(units) < n:
        return [sep.join(units)]
    return [sep.join(units[i:i + n]) for i in range(len(units) - n + 1)]


def shingle_hashes(normalized: str, kind: str = "word", n: int = 5) -> np.ndarray:
    return np.array([xxhash.xxh3_64_intdigest(s.encode(), SHINGLE_SEED)
                     for s in shingles(normalized, kind, n)], dtype=np.uint64)


def splitmix64_stream(seed: int, count: int) -> list:
    state, out = seed, []
    for _ in range(count):
        state = (state + 0x9E3779B97F4A7C15) & MASK64
        z = state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK64
        out.append(z ^ (z >> 31))
    return out


def family(count: int):
    draws = splitmix64_stream(FAMILY_SEED, 2 * count)
    a = np.array([draws[2 * i] | 1 for i in range(count)], dtype=np.uint64)
    b = np.array([draws[2 * i + 1] for i in range(count)], dtype=np.uint64)
    return a, b


def signature(hashes: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    if len(hashes) == 0:
        return np.full(len(a), 0xFFFFFFFF, dtype=np.uint32)
    with np.errstate(over="ignore"):
        values = (a[:, None] * hashes[None, :] + b[:, None]) >> np.uint64(32)  # mod 2^64
    return values.min(axis=1).astype(np.uint32)


def band_keys(sig: np.ndarray, bands: int, rows: int) -> list:
    return [xxhash.xxh3_128_digest(struct.pack("<II%dI" % rows, SCHEME_VERSION, j,
                                               *sig[j * rows:(j + 1) * rows].tolist()))
            for j in range(bands)]


def empty_text_band_key() -> bytes:
    return xxhash.xxh3_128_digest(struct.pack("<II", SCHEME_VERSION, EMPTY_TEXT_BAND))


def sketch(text: str, kind="word", n=5, bands=14, rows=8):
    norm = normalize(text)
    hashes = shingle_hashes(norm, kind, n)
    a, b = family(bands * rows)
    sig = signature(hashes, a, b)
    keys = [empty_text_band_key()] if len(hashes) == 0 else band_keys(sig, bands, rows)
    return norm, hashes, sig, keys


KAT_TEXTS = [
    "The quick brown fox jumps over the lazy dog.",
    "  Hello,   WORLD!  Hello... world?  ",
    "Straße café — naïve ÉCOLE «déjà vu»",
    "one two",
    "",
    "!!! ... ---",
]


def kat():
    a, b = family(4)
    out = {"family_first": [[hex(int(a[i])), hex(int(b[i]))] for i in range(4)], "texts": []}
    for text in KAT_TEXTS:
        for kind, n in (("word", 5), ("char", 5)):
            norm, hashes, sig, keys = sketch(text, kind, n)
            out["texts"].append({
                "text": text, "shingle": "%s:%d" % (kind, n), "normalized": norm,
                "shingles": len(hashes),
                "first_hashes": [hex(int(h)) for h in hashes[:2]],
                "first_values": [hex(int(v)) for v in sig[:4]],
                "band_keys_0_1": [k.hex() for k in keys[:2]],
            })
    json.dump(out, sys.stdout, indent=1, ensure_ascii=False)
    print()


def pack_low_bits(sig: np.ndarray, bits: int) -> np.ndarray:
    return sig & np.uint32((1 << bits) - 1) if bits < 32 else sig


def bbit_table(values=112, pairs=200, set_size=2000, seed=7):
    """RMSE, bias and worst |error| of the b-bit estimator per b and true J."""
    rng = np.random.default_rng(seed)
    a, b = family(values)
    rows = []
    for j in (0.3, 0.5, 0.7, 0.8, 0.9):
        # |A| = |B| = set_size, |A n B| = c, J = c / (2 set_size - c)
        c = int(round(2 * set_size * j / (1 + j)))
        true_j = c / (2 * set_size - c)
        sigs = []
        for _ in range(pairs):
            u = rng.integers(0, 2**63, size=2 * set_size - c, dtype=np.uint64) * np.uint64(2) + \
                rng.integers(0, 2, size=2 * set_size - c, dtype=np.uint64)
            sa = signature(u[:set_size], a, b)
            sb = signature(u[set_size - c:], a, b)
            sigs.append((sa, sb))
        for bits in (1, 2, 4, 8, 16, 32):
            chance = 2.0 ** -bits
            est = np.array([((pack_low_bits(x, bits) == pack_low_bits(y, bits)).mean() - chance)
                            / (1 - chance) for x, y in sigs])
            err = est - true_j
            rows.append((true_j, bits, values * bits // 8, float(np.sqrt((err ** 2).mean())),
                         float(err.mean()), float(np.abs(err).max())))
    print("| true J | b | bytes per key | RMSE | bias | max abs error |")
    print("|---|---|---|---|---|---|")
    for r in rows:
        print("| %.3f | %d | %d | %.4f | %+.4f | %.3f |" % r)


def s_curve():
    print("| s | 14x8 (bloomshard, datatrove) | 20x13 (NeMo) |")
    print("|---|---|---|")
    for s in (0.5, 0.6, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95):
        p1 = 1 - (1 - s ** 8) ** 14
        p2 = 1 - (1 - s ** 13) ** 20
        print("| %.2f | %.4f | %.4f |" % (s, p1, p2))
    print("threshold (1/B)^(1/R): 14x8 %.3f, 20x13 %.3f" % ((1 / 14) ** (1 / 8), (1 / 20) ** (1 / 13)))


def check_docs(doc_path):
    """Each known-answer row of the doc (section "Known answers") must hold
    the values computed here: shingle count, hashes, values, band keys."""
    rows = [line for line in open(doc_path, encoding="utf-8")
            if line.startswith("| `") or line.startswith("| same")]
    failures, checked, last_text = [], 0, None
    for text in KAT_TEXTS:
        for kind in ("word", "char"):
            norm, hashes, sig, keys = sketch(text, kind, 5)
            wanted = ["%016x" % int(h) for h in hashes[:2]] + ["%08x" % int(v) for v in sig[:4]] + \
                [k.hex() for k in keys[:2]]
            for row in rows:
                cells = [c.strip() for c in row.strip().strip("|").split("|")]
                if cells[0].startswith("`"):
                    last_text = cells[0]
                doc_text = last_text if cells[0] == "same" else cells[0]
                if doc_text != "`%s`" % text or cells[1] != "%s:5" % kind:
                    continue
                checked += 1
                if cells[2] != str(len(hashes)):
                    failures.append("%r %s:5: %s shingles, doc says %s" % (text, kind, len(hashes), cells[2]))
                for w in wanted:
                    if w not in row:
                        failures.append("%r %s:5: %s missing from the doc's row" % (text, kind, w))
    empty_key = empty_text_band_key().hex()
    if empty_key not in open(doc_path, encoding="utf-8").read():
        failures.append("empty-text key %s missing" % empty_key)
    for f in failures:
        print("MISMATCH", f)
    print("checked %d known-answer rows of %s" % (checked, doc_path))
    sys.exit(1 if failures or checked < 6 else 0)


if __name__ == "__main__":
    mode = sys.argv[1] if len(sys.argv) > 1 else "kat"
    if mode == "check-docs":
        check_docs(sys.argv[2])
    else:
        {"kat": kat, "bbit-table": bbit_table, "s-curve": s_curve}[mode]()
