#!/usr/bin/env python3
"""Exactly-once oracle for the outputs of `bloomshard dedup` (stdlib only).

Checks, for an input tree IN and an output tree OUT:
  (a) every output data file mirrors an input file's relative path and its
      compression (gzip/zstd magic, and the stream decompresses);
  (b) every output line is byte-identical to a line of the matching input
      file, and the output lines are a subsequence of the input lines in
      order (line terminators LF and CRLF are equivalent; a final line
      without newline may get one);
  (c) every valid input key (after the normalization policy) is in exactly
      one output line over all outputs: none lost, none twice; rejected
      lines are never output;
  (d) with --compare-keys OTHER: the kept key set equals OTHER's;
  (e) the rejected lines the oracle finds equal the lines of the reject
      files (count, and file/line of each), and --rejects-expected if given;
  (f) with --skipped-inputs METRICS_JSON (--on-input-error skip): each input
      the job's metrics list as skipped is read only up to the records the
      job read from it, which must be exactly the complete lines that can be
      decompressed before the damage (not one more, not one less); the
      other inputs must read to their end.
Exit 0 when all hold; 1 with a message naming the first violation
(file, line); 2 for bad usage. `--stats` only describes the input.
"""

import argparse
import collections
import gzip
import hashlib
import json
import os
import re
import subprocess
import sys
import unicodedata

# Where the dedup job writes its reject lines ({"file","line","reason","raw"}).
REJECTS_DIR = "_rejects"
REJECTS_SUFFIX = ".jsonl"
# Output entries at the top level that are not data: job state, metrics.
IGNORED_OUTPUT_NAMES = {"metrics.json"}
# The job skips entries named _* or .* anywhere in an input walk (bookkeeping
# such as _SUCCESS, _SYNTH.json, _rejects/), and writes its own such entries
# at the top of the output dir.
HIDDEN_PREFIXES = ("_", ".")
# As io::classify_path: every file of the input tree is read; a trailing .gz
# / .zst gives the compression, then .jsonl/.ndjson/.json means JSONL and
# anything else plain lines (ASCII case-insensitive).
JSONL_SUFFIXES = (".jsonl", ".ndjson", ".json")
COMPRESSION_BY_SUFFIX = {".gz": "gz", ".zst": "zst"}
INT64_MIN, UINT64_MAX = -(1 << 63), (1 << 64) - 1
GZIP_MAGIC = b"\x1f\x8b"
ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
# The job's defaults for --max-key-bytes / --max-line-bytes.
DEFAULT_MAX_KEY_BYTES = 64 << 10
DEFAULT_MAX_LINE_BYTES = 16 << 20
MAX_REPORTED = 10


class OracleError(Exception):
    """A corpus the oracle cannot read at all (not a violation of the job)."""


def split_suffixes(name):
    """'part-1.jsonl.gz' -> ('jsonl', 'gz'); 'x.txt' -> ('lines', 'none')."""
    base, ext = os.path.splitext(name.lower())
    compression = COMPRESSION_BY_SUFFIX.get(ext)
    if compression is None:
        compression, base = "none", name.lower()
    return ("jsonl" if base.endswith(JSONL_SUFFIXES) else "lines"), compression


def list_data_files(root, output):
    """Sorted relative paths of the files under root (or [basename] for a
    file), skipping _* and .* entries at any depth as the job's walk does;
    for an output tree also metrics.json at the top, so stray files show up.
    Symlinked directories are not descended (as the job)."""
    if os.path.isfile(root):
        return [os.path.basename(root)]
    found = []
    for dirpath, dirnames, filenames in os.walk(root):
        rel_dir = os.path.relpath(dirpath, root)
        top = rel_dir == "."
        dirnames[:] = sorted(d for d in dirnames if not d.startswith(HIDDEN_PREFIXES))
        for name in filenames:
            if name.startswith(HIDDEN_PREFIXES):
                continue
            if output and top and name in IGNORED_OUTPUT_NAMES:
                continue
            if not os.path.isfile(os.path.join(dirpath, name)):
                continue  # FIFOs, sockets, dangling links: the job skips them too
            found.append(os.path.normpath(os.path.join(rel_dir, name)))
    return sorted(found)


def file_path(root, rel):
    return root if os.path.isfile(root) else os.path.join(root, rel)


class LineReader:
    """Iterates (line_number, body) of a file; body has no LF/CRLF."""

    def __init__(self, path, compression):
        self.path = path
        self.compression = compression
        self.proc = None

    def __iter__(self):
        if self.compression in ("gz", "zst") and os.path.getsize(self.path) == 0:
            # No member/frame at all: `gzip -t` / `zstd -t` call it truncated, as the job does.
            raise OracleError(f"{self.path}: truncated: a zero-byte {self.compression} file")
        if self.compression == "gz":
            stream = gzip.open(self.path, "rb")
        elif self.compression == "zst":
            self.proc = subprocess.Popen(["zstd", "-dcq", "--", self.path], stdout=subprocess.PIPE,
                                         stderr=subprocess.PIPE)
            stream = self.proc.stdout
        else:
            stream = open(self.path, "rb")
        try:
            for number, raw in enumerate(stream, start=1):
                if raw.endswith(b"\n"):  # a lone '\r' at the very end stays in the line
                    raw = raw[:-2] if raw.endswith(b"\r\n") else raw[:-1]
                yield number, raw
        except (OSError, EOFError, gzip.BadGzipFile) as e:
            raise OracleError(f"{self.path}: cannot decompress: {e}") from e
        finally:
            stream.close()
            if self.proc is not None:
                err = self.proc.stderr.read().decode(errors="replace").strip()
                if self.proc.wait() != 0:
                    raise OracleError(f"{self.path}: zstd -dc failed: {err}")


def _no_constants(name):
    raise ValueError(f"JSON constant {name} is not JSON")


def _first_member_wins(pairs):
    return dict(reversed(pairs))  # a repeated name: its first member is the one kept


# One decoder for every line: json.loads(..., hooks) builds a new one per call.
_DECODER = json.JSONDecoder(parse_constant=_no_constants, object_pairs_hook=_first_member_wins)


# Unicode White_Space (PropList.txt, Unicode 15.0): what --text-normalize ws
# collapses. Python's str.isspace() is another set (it has U+001C..U+001F,
# and lacks nothing of these), so the set is spelled out.
WHITE_SPACE = ("\u0009\u000a\u000b\u000c\u000d\u0020\u0085\u00a0\u1680"
               "\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
               "\u2028\u2029\u202f\u205f\u3000")
WHITE_SPACE_RUN = re.compile("[" + WHITE_SPACE + "]+")


def fold_nfc_casefold(text, version="v2"):
    if version == "v1":
        return unicodedata.normalize("NFC", text.casefold())  # v1: folded as given, then NFC
    # Canonical caseless matching (Unicode D145), emitted in NFC.
    return unicodedata.normalize("NFC", unicodedata.normalize("NFD", text).casefold())


def text_normalize(policy, text):
    """--text-normalize: none, ws (trim + collapse White_Space runs to one
    U+0020), ws-lower (ws, then nfc-casefold v2)."""
    if policy == "none":
        return text
    text = " ".join(w for w in WHITE_SPACE_RUN.split(text) if w)
    return fold_nfc_casefold(text) if policy == "ws-lower" else text


def leb128(n):
    out = bytearray()
    while True:
        low, n = n & 0x7F, n >> 7
        out.append(low | (0x80 if n else 0))
        if not n:
            return bytes(out)


class KeyPolicy:
    """Extracts and normalizes keys the way the job is specified to. With
    several key fields the key is the tuple: per field LEB128(length) then
    the bytes. A digest (--key-digest) changes the key's bytes but not which
    records share a key (barring a collision), so the oracle keys on the
    undigested bytes, an independent answer to the same question."""

    def __init__(self, fmt, key_field, normalize, max_key_bytes, max_line_bytes,
                 missing_field="reject", text="none", digest="none"):
        self.fmt = fmt
        fields = key_field if isinstance(key_field, list) else [key_field]
        self.paths = [f.split(".") for f in fields]
        self.normalize = normalize
        self.max_key_bytes = max_key_bytes
        self.max_line_bytes = max_line_bytes
        self.missing_empty = missing_field == "empty"
        self.text = text
        self.digest = digest

    def format_of(self, rel):
        if self.fmt != "auto":
            return self.fmt
        return split_suffixes(os.path.basename(rel))[0]

    def field(self, obj, path):
        """Returns (text, None) or (None, reason) for one key path."""
        node = obj
        for part in path:
            if not isinstance(node, dict) or part not in node:
                return ("", None) if self.missing_empty else (None, "key field missing")
            node = node[part]
        if isinstance(node, int) and not isinstance(node, bool):
            if not INT64_MIN <= node <= UINT64_MAX:
                return None, "key integer out of 64-bit range"
            node = str(node)  # an integer key is its decimal text
        if not isinstance(node, str):
            return None, "key field is not a string or integer"
        try:
            raw = node.encode("utf-8")
        except UnicodeEncodeError:  # a lone surrogate escape
            return None, "malformed JSON"
        if self.digest == "none" and len(raw) > self.max_key_bytes:
            return None, "key too long"
        return node, None

    def normalized(self, raw, text):
        """One value's bytes after --text-normalize and --normalize."""
        if self.text == "none" and self.normalize == "none":
            return raw, None
        if text is None:
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError:
                return None, "invalid utf-8 key"
        text = text_normalize(self.text, text)
        if self.normalize in ("nfc-casefold", "nfc-casefold/v2"):
            text = fold_nfc_casefold(text)
        elif self.normalize == "nfc-casefold/v1":
            text = fold_nfc_casefold(text, "v1")
        elif self.normalize == "nfc":
            text = unicodedata.normalize("NFC", text)
        return text.encode("utf-8"), None

    def key(self, fmt, body):
        """Returns (key_bytes, None) or (None, reason)."""
        if len(body) > self.max_line_bytes:
            return None, "line too long"
        if fmt == "lines":
            if self.digest == "none" and len(body) > self.max_key_bytes:
                return None, "key too long"
            return self.normalized(body, None)
        if not body.strip(b" \t\r\n"):
            return None, "empty line"
        try:
            obj = _DECODER.decode(body.decode("utf-8"))
        except (UnicodeDecodeError, ValueError, RecursionError):
            return None, "malformed JSON"
        if not isinstance(obj, dict):
            return None, "JSON line is not an object"
        texts = []
        for path in self.paths:  # the first field without a value decides
            text, reason = self.field(obj, path)
            if reason:
                return None, reason
            texts.append(text)
        values = []
        for text in texts:
            value, reason = self.normalized(text.encode("utf-8"), text)
            if reason:
                return None, reason
            values.append(value)
        if len(values) == 1:
            return values[0], None
        key = b"".join(leb128(len(v)) + v for v in values)
        if self.digest == "none" and len(key) > self.max_key_bytes:
            return None, "key too long"
        return key, None


def magic_compression(path):
    with open(path, "rb") as f:
        head = f.read(4)
    if head.startswith(GZIP_MAGIC):
        return "gz", len(head)
    if head.startswith(ZSTD_MAGIC):
        return "zst", len(head)
    return "none", len(head)


def show(key):
    return repr(key.decode("utf-8", errors="backslashreplace"))


class Oracle:
    def __init__(self, args):
        self.args = args
        self.policy = KeyPolicy(args.format, args.key_field or ["id"], args.normalize,
                                args.max_key_bytes, args.max_line_bytes, args.missing_field,
                                args.text_normalize, args.key_digest)
        self.violations = []
        self.input_files = list_data_files(args.input, output=False)
        self.input_keys = {}  # key -> (rel, line) of its first input occurrence
        self.input_records = 0
        self.rejects = []  # (rel, line, reason)
        self.out_keys = {}  # key -> (rel, line) of its first output occurrence
        self.out_lines = 0
        self.out_files = 0
        self.skipped = {}  # rel -> records the job read before the damage
        if getattr(args, "skipped_inputs", None):
            with open(args.skipped_inputs) as f:
                for entry in json.load(f).get("skipped_inputs", []):
                    self.skipped[entry["file"]] = entry["records_read"]
        self.skipped_seen = set()

    def violate(self, message):
        self.violations.append(message)

    # ---- (a) + (b) + key collection
    def scan(self):
        if not self.input_files:
            raise OracleError(f"no data files under {self.args.input}")
        inputs = set(self.input_files)
        if self.args.output is not None:
            for rel in list_data_files(self.args.output, output=True):
                if rel not in inputs:
                    self.violate(f"(a) output file {rel} mirrors no input file")
        for rel in self.input_files:
            self.scan_file(rel)

    def scan_file(self, rel):
        kinds = split_suffixes(os.path.basename(rel))
        compression = kinds[1] if kinds else "none"
        fmt = self.policy.format_of(rel)
        in_path = file_path(self.args.input, rel)
        outputs = iter(())
        out_path = None
        if self.args.output is not None:
            out_path = os.path.join(self.args.output, rel)
            if os.path.exists(out_path):
                self.out_files += 1
                found, size = magic_compression(out_path)
                if found != compression:
                    self.violate(f"(a) output {rel} is {found if size else 'empty (0 bytes)'}, "
                                 f"its input is {compression}")
                    return
                outputs = iter(LineReader(out_path, compression))
        pending = next(outputs, None)
        seen_bodies = set()
        for number, body in self.input_lines(rel, in_path, compression):
            self.input_records += 1
            key, reason = self.policy.key(fmt, body)
            if key is None:
                self.rejects.append((rel, number, reason))
            else:
                self.input_keys.setdefault(key, (rel, number))
            seen_bodies.add(hashlib.blake2b(body, digest_size=16).digest())
            if pending is not None and pending[1] == body:
                if key is None:
                    self.violate(f"(c) output {rel}:{pending[0]} is input line {number}, "
                                 f"a rejected line ({reason})")
                else:
                    self.count_output(key, rel, pending[0])
                pending = next(outputs, None)
        if pending is not None:
            digest = hashlib.blake2b(pending[1], digest_size=16).digest()
            what = ("is out of order or repeated (its input line was already passed)"
                    if digest in seen_bodies else "is not a line of input " + rel)
            self.violate(f"(b) output {rel}:{pending[0]} {what}: {pending[1][:120]!r}")
            for _ in outputs:  # drain: lets zstd exit cleanly
                pass

    def input_lines(self, rel, path, compression):
        """The input's lines; for a skipped input only those the job read, after
        checking that they are exactly the lines readable before the damage."""
        if rel not in self.skipped:
            yield from LineReader(path, compression)
            return
        self.skipped_seen.add(rel)
        want = self.skipped[rel]
        readable = 0
        lines = []
        try:
            for number, body in LineReader(path, compression):
                readable = number
                if number <= want:
                    lines.append((number, body))
        except OracleError:
            pass  # the damage
        else:
            self.violate(f"(f) {rel} is listed as skipped but reads to its end "
                         f"({readable} lines)")
        if readable != want:
            self.violate(f"(f) {rel}: the job read {want} records before the damage, "
                         f"{readable} complete lines are readable")
        yield from lines

    def count_output(self, key, rel, line):
        self.out_lines += 1
        first = self.out_keys.get(key)
        if first is None:
            self.out_keys[key] = (rel, line)
        else:
            self.violate(f"(c) key {show(key)} kept twice: output {first[0]}:{first[1]} "
                         f"and {rel}:{line}")

    # ---- (c) lost keys
    def check_lost(self):
        lost = [k for k in self.input_keys if k not in self.out_keys]
        for key in lost[:MAX_REPORTED]:
            rel, line = self.input_keys[key]
            self.violate(f"(c) key {show(key)} (input {rel}:{line}) is in no output")
        if len(lost) > MAX_REPORTED:
            self.violate(f"(c) ... {len(lost)} keys lost in all")
        if self.args.expect_unique is not None and len(self.input_keys) != self.args.expect_unique:
            self.violate(f"input has {len(self.input_keys)} distinct valid keys, "
                         f"expected {self.args.expect_unique}")

    # ---- (d)
    def compare_keys(self, other):
        keys = set()
        for rel in list_data_files(other, output=True):
            kinds = split_suffixes(os.path.basename(rel))
            if kinds is None:
                continue
            fmt = self.policy.format_of(rel)
            for _, body in LineReader(os.path.join(other, rel), kinds[1]):
                key, _ = self.policy.key(fmt, body)
                if key is not None:
                    keys.add(key)
        mine = set(self.out_keys)
        only_mine, only_other = mine - keys, keys - mine
        if only_mine or only_other:
            example = next(iter(only_mine or only_other))
            self.violate(f"(d) kept key sets differ: {len(only_mine)} only in {self.args.output}, "
                         f"{len(only_other)} only in {other} (e.g. {show(example)})")

    # ---- (e)
    def check_rejects(self):
        expected = self.args.rejects_expected
        if expected is not None and len(self.rejects) != expected:
            first = self.rejects[0] if self.rejects else None
            self.violate(f"(e) oracle finds {len(self.rejects)} rejected input lines, expected "
                         f"{expected}" + (f" (first: {first[0]}:{first[1]} {first[2]})" if first else ""))
        reported = collections.Counter()
        reject_dir = os.path.join(self.args.output, REJECTS_DIR)
        names = sorted(n for n in os.listdir(reject_dir) if n.endswith(REJECTS_SUFFIX)) \
            if os.path.isdir(reject_dir) else []
        count = 0
        for name in names:
            for number, body in LineReader(os.path.join(reject_dir, name), "none"):
                count += 1
                try:
                    rec = json.loads(body)
                    fields_ok = isinstance(rec, dict) and all(
                        f in rec for f in ("file", "line", "reason", "raw"))
                except ValueError:
                    fields_ok = False
                if not fields_ok:
                    self.violate(f"(e) {REJECTS_DIR}/{name}:{number} is not a "
                                 "{file,line,reason,raw} JSON object")
                    continue
                reported[(self.input_relpath(str(rec["file"])), rec["line"])] += 1
        if count != len(self.rejects):
            self.violate(f"(e) reject files hold {count} lines, oracle finds {len(self.rejects)} "
                         "rejected input lines")
            return
        found = collections.Counter((rel, line) for rel, line, _ in self.rejects)
        if reported != found:
            missing = sorted(found - reported)
            extra = sorted(reported - found)
            self.violate(f"(e) reject files name other lines than the oracle: "
                         f"missing {missing[:3]}, unexpected {extra[:3]}")

    def input_relpath(self, name):
        """Maps a reject record's file name to the oracle's relative path."""
        root = os.path.abspath(self.args.input)
        cand = os.path.abspath(name)
        if os.path.isfile(root):
            return os.path.basename(cand)
        if cand.startswith(root + os.sep):
            return os.path.relpath(cand, root)
        for rel in self.input_files:  # a path relative to some other cwd
            if name.endswith(os.sep + rel) or name == rel:
                return rel
        return name

    def stats(self):
        return {"files": len(self.input_files), "records": self.input_records,
                "rejected": len(self.rejects), "unique_keys": len(self.input_keys)}


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--input", required=True, help="input directory (or one file)")
    p.add_argument("--output", help="output directory of the dedup job")
    p.add_argument("--key-field", action="append",
                   help="JSONL key field (dotted path for nesting; default id); repeatable: "
                        "the key is the tuple of the fields")
    p.add_argument("--missing-field", choices=("reject", "empty"), default="reject")
    p.add_argument("--text-normalize", choices=("none", "ws", "ws-lower"), default="none")
    p.add_argument("--key-digest", choices=("none", "xxh3-128", "sha256"), default="none")
    p.add_argument("--format", choices=("auto", "jsonl", "lines"), default="auto",
                   help="auto: .jsonl/.ndjson are JSONL, .txt are plain lines")
    p.add_argument("--normalize", choices=("none", "nfc", "nfc-casefold", "nfc-casefold/v2", "nfc-casefold/v1"), default="none")
    p.add_argument("--expect-unique", type=int, help="expected number of distinct valid keys")
    p.add_argument("--compare-keys", metavar="OTHER_OUTPUT_DIR",
                   help="the kept key set must equal that of this other output dir")
    p.add_argument("--rejects-expected", type=int, help="expected number of rejected input lines")
    p.add_argument("--max-key-bytes", type=int, default=DEFAULT_MAX_KEY_BYTES)
    p.add_argument("--max-line-bytes", type=int, default=DEFAULT_MAX_LINE_BYTES)
    p.add_argument("--skipped-inputs", metavar="METRICS_JSON",
                   help="the job's metrics: inputs in its skipped_inputs are checked up to the "
                        "damage only")
    p.add_argument("--stats", action="store_true",
                   help="only print the input's {files, records, rejected, unique_keys} as JSON")
    args = p.parse_args(argv)
    if not args.stats and args.output is None:
        p.error("--output is required (unless --stats)")
    if args.output is not None and not os.path.isdir(args.output):
        p.error(f"output directory {args.output} does not exist")
    if not os.path.exists(args.input):
        p.error(f"input {args.input} does not exist")
    return args


def main(argv):
    args = parse_args(argv)
    oracle = Oracle(args)
    try:
        if args.stats:
            args.output = None
            oracle.scan()
            print(json.dumps(oracle.stats(), sort_keys=True))
            return 0
        oracle.scan()
        for rel in sorted(set(oracle.skipped) - oracle.skipped_seen):
            oracle.violate(f"(f) the job lists {rel} as skipped, but it is not an input")
        oracle.check_lost()
        if args.compare_keys:
            oracle.compare_keys(args.compare_keys)
        oracle.check_rejects()
    except OracleError as e:
        print(f"oracle: FAIL: {e}", file=sys.stderr)
        return 1
    s = oracle.stats()
    if oracle.violations:
        print(f"oracle: FAIL: {oracle.violations[0]}", file=sys.stderr)
        for v in oracle.violations[1:MAX_REPORTED]:
            print(f"oracle:       {v}", file=sys.stderr)
        if len(oracle.violations) > MAX_REPORTED:
            print(f"oracle:       ... {len(oracle.violations)} violations in all", file=sys.stderr)
        return 1
    extra = f"; key set equals {args.compare_keys}" if args.compare_keys else ""
    print(f"oracle: OK: {s['files']} input files, {s['records']} records ({s['rejected']} rejected), "
          f"{s['unique_keys']} distinct keys [{args.normalize}] each kept exactly once in "
          f"{oracle.out_files} output files{extra}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
