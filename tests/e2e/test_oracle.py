#!/usr/bin/env python3
"""Self-test of oracle.py: a hand-made corpus, a correct output tree (made by
a tiny reference dedup here), and broken copies of it. The correct tree must
pass; every broken one must fail naming the right violation."""

import gzip
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unicodedata

HERE = os.path.dirname(os.path.abspath(__file__))
ORACLE = os.path.join(HERE, "oracle.py")

NFC = unicodedata.normalize("NFC", "Caf\u00e9")
NFD = unicodedata.normalize("NFD", "Caf\u00e9")


def rec(key, text="t"):
    return json.dumps({"id": key, "text": text}, ensure_ascii=False).encode() + b"\n"


# relative path -> list of raw lines (with their terminators)
CORPUS = {
    "a.jsonl": [rec("k1"), rec("k2"), rec("k1", "recrawl"), b'{"id": broken\n',
                b'{"url": "no id"}\n', rec("k3"), rec(""), rec("\u65e5\u672c"), rec(NFC), rec(42),
                rec(True), rec(1.5), rec({"x": 1}), b"  \n"],
    "sub/b.jsonl.gz": [rec("k2", "other"), rec("k4"), rec("\U0001f642"), rec("k4"), rec(NFD),
                       rec("k5")],
    "c.jsonl.zst": [rec("k6"), rec("k7"), rec("k1"), rec("k8"), rec("42"), rec("k9")],
    "d.txt": [b"line-1\r\n", b"line-2\r\n", b"line-1\r\n", b"line-3"],
}
WRONG_TYPE = "key field is not a string or integer"
REJECTS = [("a.jsonl", 4, "malformed JSON"), ("a.jsonl", 5, "key field missing"),
           ("a.jsonl", 11, WRONG_TYPE), ("a.jsonl", 12, WRONG_TYPE), ("a.jsonl", 13, WRONG_TYPE),
           ("a.jsonl", 14, "empty line")]
UNIQUE_NONE = 18  # k1..k9, "", 2 CJK/emoji, NFC, NFD, 42 (int and string), line-1..3


def write_file(path, lines):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    data = b"".join(lines)
    if path.endswith(".gz"):
        with gzip.open(path, "wb") as f:
            f.write(data)
    elif path.endswith(".zst"):
        subprocess.run(["zstd", "-qf", "-o", path], input=data, check=True)
    else:
        with open(path, "wb") as f:
            f.write(data)


def key_of(rel, line, normalize):
    body = line.rstrip(b"\n").rstrip(b"\r")
    if rel.endswith(".txt"):
        return body
    try:
        obj = json.loads(body)
    except ValueError:  # blank lines too
        return None
    if not isinstance(obj, dict) or "id" not in obj:
        return None
    k = obj["id"]
    if isinstance(k, int) and not isinstance(k, bool):
        k = str(k)
    if not isinstance(k, str):
        return None
    if normalize == "nfc":
        k = unicodedata.normalize("NFC", k)
    return k.encode()


def reference_dedup(normalize):
    """First occurrence wins in (file order, line order)."""
    seen, out = set(), {}
    for rel in sorted(CORPUS):
        kept = []
        for line in CORPUS[rel]:
            k = key_of(rel, line, normalize)
            if k is not None and k not in seen:
                seen.add(k)
                kept.append(line)
        out[rel] = kept
    return out


def write_tree(root, files, rejects=REJECTS):
    for rel, lines in files.items():
        write_file(os.path.join(root, rel), lines)
    os.makedirs(os.path.join(root, "_rejects"), exist_ok=True)
    with open(os.path.join(root, "_rejects", "rank-0.jsonl"), "w") as f:
        for rel, line, reason in rejects:
            raw = CORPUS[rel][line - 1].decode().rstrip("\n")
            f.write(json.dumps({"file": rel, "line": line, "reason": reason, "raw": raw}) + "\n")
    with open(os.path.join(root, "metrics.json"), "w") as f:
        f.write("{}\n")


def run_oracle(inp, out, *extra):
    cmd = [sys.executable, ORACLE, "--input", inp, "--output", out, *extra]
    p = subprocess.run(cmd, capture_output=True, text=True)
    return p.returncode, p.stdout + p.stderr


class SelfTest:
    def __init__(self, tmp):
        self.tmp = tmp
        self.inp = os.path.join(tmp, "in")
        for rel, lines in CORPUS.items():
            write_file(os.path.join(self.inp, rel), lines)
        self.good = os.path.join(tmp, "good")
        write_tree(self.good, reference_dedup("none"))
        self.failures = 0
        self.count = 0

    def expect(self, name, out, want_rc, want_text, *extra):
        self.count += 1
        rc, text = run_oracle(self.inp, out, *extra)
        ok = rc == want_rc and all(w in text for w in want_text)
        print(f"{'PASS' if ok else 'FAIL'}: {name}: rc={rc}")
        if not ok:
            self.failures += 1
            print(f"  wanted rc={want_rc} and {want_text!r} in:\n  {text.strip()}")

    def mutant(self, name, files=None, rejects=REJECTS, tweak=None):
        root = os.path.join(self.tmp, name)
        write_tree(root, files if files is not None else reference_dedup("none"), rejects)
        if tweak:
            tweak(root)
        return root

    def run(self):
        ref = reference_dedup("none")
        self.expect("correct output", self.good, 0, ["oracle: OK"], "--expect-unique",
                    str(UNIQUE_NONE), "--rejects-expected", "6", "--compare-keys", self.good)
        self.expect("expect-unique wrong", self.good, 1, ["distinct valid keys"],
                    "--expect-unique", str(UNIQUE_NONE + 1))
        self.expect("rejects-expected wrong", self.good, 1, ["(e)", "expected 3"],
                    "--rejects-expected", "3")

        lf = [line.rstrip(b"\r\n") + b"\n" for line in ref["d.txt"]]
        self.expect("CRLF written as LF, last line given a newline",
                    self.mutant("lf", dict(ref, **{"d.txt": lf})), 0, ["oracle: OK"])

        self.count += 1
        stats = subprocess.run([sys.executable, ORACLE, "--input", self.inp, "--stats"],
                               capture_output=True, text=True)
        want = {"files": 4, "records": 30, "rejected": 6, "unique_keys": UNIQUE_NONE}
        got = json.loads(stats.stdout) if stats.returncode == 0 else stats.stderr
        print(f"{'PASS' if got == want else 'FAIL'}: --stats: {got}")
        self.failures += got != want

        files = dict(ref, **{"a.jsonl": [l for l in ref["a.jsonl"] if b'"k3"' not in l]})
        self.expect("missing key", self.mutant("missing", files), 1,
                    ["(c) key 'k3' (input a.jsonl:6) is in no output"])

        files = dict(ref, **{"a.jsonl": CORPUS["a.jsonl"][:3] + ref["a.jsonl"][2:]})
        self.expect("doubled key in one file", self.mutant("doubled_in", files), 1,
                    ["(c) key 'k1' kept twice: output a.jsonl:1 and a.jsonl:3"])

        files = dict(ref, **{"c.jsonl.zst": CORPUS["c.jsonl.zst"]})
        self.expect("doubled key across files", self.mutant("doubled_x", files), 1,
                    ["(c) key 'k1' kept twice: output a.jsonl:1 and c.jsonl.zst:3"])

        b = list(ref["sub/b.jsonl.gz"])
        b[0] = b[0].replace(b'"t"', b'"u"', 1)
        files = dict(ref, **{"sub/b.jsonl.gz": b})
        self.expect("altered byte", self.mutant("altered", files), 1,
                    ["(b) output sub/b.jsonl.gz:", "is not a line of input sub/b.jsonl.gz"])

        c = list(ref["c.jsonl.zst"])
        c[0], c[1] = c[1], c[0]
        files = dict(ref, **{"c.jsonl.zst": c})
        self.expect("reordered lines", self.mutant("reordered", files), 1,
                    ["(b) output c.jsonl.zst:2 is out of order"])

        d = list(ref["d.txt"])
        d[1], d[2] = d[2] + b"\n", d[1]  # "line-3" had no newline at the end of its file
        self.expect("reordered plain lines", self.mutant("reordered_txt", dict(ref, **{"d.txt": d})),
                    1, ["(b) output d.txt:3 is out of order"])

        files = dict(ref, **{"a.jsonl": CORPUS["a.jsonl"][:2] + [CORPUS["a.jsonl"][3]]
                             + ref["a.jsonl"][2:]})
        self.expect("rejected line in output", self.mutant("reject_out", files), 1,
                    ["a rejected line (malformed JSON)"])

        def plain_gz(root):
            path = os.path.join(root, "sub", "b.jsonl.gz")
            with open(path, "wb") as f:
                f.write(b"".join(ref["sub/b.jsonl.gz"]))
        self.expect("wrong compression", self.mutant("wrong_gz", tweak=plain_gz), 1,
                    ["(a) output sub/b.jsonl.gz is none, its input is gz"])

        def truncate_gz(root):
            path = os.path.join(root, "sub", "b.jsonl.gz")
            data = open(path, "rb").read()
            with open(path, "wb") as f:
                f.write(data[:-12])
        self.expect("truncated gzip", self.mutant("trunc_gz", tweak=truncate_gz), 1,
                    ["cannot decompress"])

        def truncate_zst(root):
            path = os.path.join(root, "c.jsonl.zst")
            data = open(path, "rb").read()
            with open(path, "wb") as f:
                f.write(data[:-6])
        self.expect("truncated zstd", self.mutant("trunc_zst", tweak=truncate_zst), 1,
                    ["c.jsonl.zst: zstd -dc failed"])

        def stray(root):
            with open(os.path.join(root, "sub", "part-99.jsonl"), "wb") as f:
                f.write(rec("zz"))
        self.expect("stray output file", self.mutant("stray", tweak=stray), 1,
                    ["(a) output file sub/part-99.jsonl mirrors no input file"])

        self.expect("reject file short", self.mutant("rej_short", rejects=REJECTS[:1]), 1,
                    ["(e) reject files hold 1 lines, oracle finds 6"])
        wrong = REJECTS[:-1] + [("a.jsonl", 6, "key field missing")]
        self.expect("reject file names wrong line", self.mutant("rej_wrong", rejects=wrong), 1,
                    ["(e) reject files name other lines", "missing [('a.jsonl', 14)]"])

        missing = os.path.join(self.tmp, "missing")
        self.expect("compare-keys differs", self.good, 1, ["(d) kept key sets differ: 1 only in"],
                    "--compare-keys", missing)

        # NFC vs NFD: two keys under none, one under nfc.
        self.expect("nfd kept twice under nfc", self.good, 1, ["(c) key 'Café' kept twice"],
                    "--normalize", "nfc")
        nfc_root = os.path.join(self.tmp, "nfc")
        write_tree(nfc_root, reference_dedup("nfc"))
        self.expect("nfc output under nfc", nfc_root, 0, ["oracle: OK"], "--normalize", "nfc",
                    "--expect-unique", str(UNIQUE_NONE - 1))
        self.expect("nfc output under none", nfc_root, 1, ["is in no output"])

        print(f"oracle self-test: {self.count - self.failures}/{self.count} passed")
        return 1 if self.failures else 0


def main():
    if shutil.which("zstd") is None:
        print("oracle self-test: needs the zstd command (package zstd)")
        return 1
    with tempfile.TemporaryDirectory(prefix="oracle-selftest-") as tmp:
        return SelfTest(tmp).run()


if __name__ == "__main__":
    sys.exit(main())
