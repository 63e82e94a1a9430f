#!/usr/bin/env python3
"""Oracle for `bloomshard dedup --mode annotate` (stdlib only, independent of
the job's code: its own line splitting, JSON parsing and first-occurrence
bookkeeping).

For an input tree IN and the job's output tree OUT it checks:
  (a) every input file has an attribute file at the mirrored path, with the
      input's compression (gzip magic for .gz), and no other data file;
  (b) the attribute file has exactly one JSON line per input line, in order
      (rejects included);
  (c) each line names its record: bloomshard format "key" = the key field's
      value (a string, an integer's decimal text, the line for plain-line
      files; null for a line the oracle rejects); dolma format "id" = the
      record's id (null when it has none) and "bloomshard_duplicate" = []
      for a kept record, [[0, len(text) in characters, 1.0]] for a duplicate;
  (d) a line is flagged as a reject ("reject": non-empty reason, duplicate
      false / span []) exactly when the oracle rejects it, and the reject
      files under OUT/_rejects list that same (file, line) with that reason;
  (e) for every key exactly one record is not a duplicate, and it is the
      first occurrence of the key in its file; with --ranks 1 it is the
      first occurrence in the whole input (files in sorted path order);
  (f) with --filter-output DIR (a filter-mode run of the same corpus, rank
      count and batch size): the records annotated as kept, in order, are
      byte for byte that run's outputs; for dolma this applies `dolma mix`'s
      exclude filter "$.attributes[?(@.bloomshard_duplicate &&
      @.bloomshard_duplicate[0] && @.bloomshard_duplicate[0][2] >= 1.0)]".
Exit 0 when all hold, 1 naming the first violation, 2 for bad usage.
"""

import argparse
import collections
import gzip
import json
import os
import sys

ATTRIBUTE = "bloomshard_duplicate"


def data_files(root):
    found = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith(("_", ".")))
        for name in filenames:
            if name.startswith(("_", ".")) or (dirpath == root and name == "metrics.json"):
                continue
            found.append(os.path.relpath(os.path.join(dirpath, name), root))
    return sorted(found)


def read_lines(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        data = f.read()
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()  # the final newline ends the last line, it starts none
    return [l[:-1] if l.endswith(b"\r") else l for l in lines], data


def is_jsonl(rel):
    base = rel[:-3] if rel.endswith(".gz") else rel
    return base.endswith((".jsonl", ".ndjson", ".json"))


def field_value(obj, name):
    """The key text of obj[name] as the job defines it, or None (reject)."""
    if not isinstance(obj, dict) or name not in obj:
        return None
    v = obj[name]
    if isinstance(v, bool):
        return None
    if isinstance(v, int):
        return str(v)
    if isinstance(v, str):
        return v
    return None


def parse(body):
    try:
        return json.loads(body.decode("utf-8"))
    except (ValueError, UnicodeDecodeError):
        return None


class Oracle:
    def __init__(self, args):
        self.a = args
        self.problems = []

    def fail(self, msg):
        print("annotate_oracle: " + msg, file=sys.stderr)
        sys.exit(1)

    def record_key(self, rel, body):
        if not is_jsonl(rel):
            return body.decode("utf-8", "replace")
        return field_value(parse(body), self.a.key_field)

    def rejects_listed(self):
        listed = {}
        d = os.path.join(self.a.output, "_rejects")
        for name in sorted(os.listdir(d)) if os.path.isdir(d) else []:
            for body in read_lines(os.path.join(d, name))[0]:
                r = json.loads(body)
                rel = os.path.relpath(os.path.realpath(r["file"]), os.path.realpath(self.a.input))
                key = (rel, r["line"])
                if key in listed:
                    self.fail(f"(d) reject {key} listed twice in the reject files")
                listed[key] = r["reason"]
        return listed

    def run(self):
        inputs = data_files(self.a.input)
        outputs = data_files(self.a.output)
        if inputs != outputs:
            self.fail(f"(a) output files {outputs} differ from input files {inputs}")
        listed = self.rejects_listed()
        seen_rejects = 0
        kept_of_key = collections.defaultdict(list)  # key -> [(rel, line, first_in_file)]
        global_first = {}
        kept_lines = {}
        for rel in inputs:
            lines, _ = read_lines(os.path.join(self.a.input, rel))
            out_path = os.path.join(self.a.output, rel)
            with open(out_path, "rb") as f:
                magic = f.read(2)
            if rel.endswith(".gz") != (magic == b"\x1f\x8b"):
                self.fail(f"(a) {rel}: attribute file compression differs from the input's")
            attrs, raw = read_lines(out_path)
            if raw and not raw.endswith(b"\n"):
                self.fail(f"(b) {rel}: attribute file does not end with a newline")
            if len(attrs) != len(lines):
                self.fail(f"(b) {rel}: {len(attrs)} attribute lines for {len(lines)} input lines")
            seen_in_file = set()
            kept_lines[rel] = []
            for n, (body, attr) in enumerate(zip(lines, attrs), start=1):
                try:
                    a = json.loads(attr)
                except ValueError:
                    self.fail(f"(b) {rel}:{n}: attribute line is not JSON: {attr[:80]!r}")
                key = self.record_key(rel, body)
                where = f"{rel}:{n}"
                reason = a.get("reject")
                if key is None:
                    seen_rejects += 1
                    if not isinstance(reason, str) or not reason:
                        self.fail(f"(d) {where}: a rejected line without a reject reason: {a}")
                    if listed.get((rel, n)) != reason:
                        self.fail(f"(d) {where}: reject '{reason}' not in the reject files "
                                  f"(they say {listed.get((rel, n))!r})")
                elif reason is not None:
                    self.fail(f"(d) {where}: flagged as reject '{reason}', the oracle keys it")
                duplicate = self.check_line(where, rel, body, a, key)
                if key is None:
                    continue
                first_in_file = key not in seen_in_file
                seen_in_file.add(key)
                global_first.setdefault(key, where)
                if not duplicate:
                    kept_of_key[key].append((where, first_in_file))
                    kept_lines[rel].append(body)
                elif key not in kept_of_key and self.a.ranks == 1:
                    self.fail(f"(e) {where}: first occurrence of {key!r} flagged as duplicate")
        if seen_rejects != len(listed):
            self.fail(f"(d) reject files list {len(listed)} lines, the oracle rejects {seen_rejects}")
        for key, where in global_first.items():
            kept = kept_of_key.get(key, [])
            if len(kept) != 1:
                self.fail(f"(e) key {key!r}: {len(kept)} records not flagged duplicate "
                          f"({[w for w, _ in kept][:3]}), want exactly 1")
            if not kept[0][1]:
                self.fail(f"(e) key {key!r}: kept at {kept[0][0]}, not its file's first occurrence")
            if self.a.ranks == 1 and kept[0][0] != where:
                self.fail(f"(e) key {key!r}: kept at {kept[0][0]}, first occurrence is {where}")
        if self.a.filter_output:
            for rel in inputs:
                got, _ = read_lines(os.path.join(self.a.filter_output, rel))
                if got != kept_lines[rel]:
                    self.fail(f"(f) {rel}: the records annotated kept ({len(kept_lines[rel])}) "
                              f"differ from the filter run's output ({len(got)} lines)")
        print(json.dumps({"files": len(inputs), "keys": len(global_first), "rejects": seen_rejects,
                          "records": sum(len(v) for v in kept_lines.values())}))

    def check_line(self, where, rel, body, a, key):
        """Checks one attribute line's shape and content; returns its duplicate flag."""
        if self.a.format == "bloomshard":
            if set(a) - {"key", "duplicate", "reject", "key_digest"} or "duplicate" not in a:
                self.fail(f"(c) {where}: unexpected members {sorted(a)}")
            if not isinstance(a["duplicate"], bool):
                self.fail(f"(c) {where}: duplicate is not a boolean")
            if key is not None and a.get("key") != key:
                self.fail(f"(c) {where}: key {a.get('key')!r}, the record's is {key!r}")
            if key is None and a["duplicate"]:
                self.fail(f"(d) {where}: a reject flagged duplicate")
            return a["duplicate"]
        obj = parse(body) if is_jsonl(rel) else None
        want_id = field_value(obj, "id")
        if a.get("id") != want_id:
            self.fail(f"(c) {where}: id {a.get('id')!r}, the record's is {want_id!r}")
        attrs = a.get("attributes")
        if not isinstance(attrs, dict) or set(attrs) != {ATTRIBUTE}:
            self.fail(f"(c) {where}: attributes {attrs!r} are not {{{ATTRIBUTE!r}: spans}}")
        spans = attrs[ATTRIBUTE]
        # dolma mix's exclude filter, as in Dolma's docs/examples
        duplicate = bool(spans) and bool(spans[0]) and spans[0][2] >= 1.0
        if duplicate:
            text = obj.get("text", "") if isinstance(obj, dict) else body.decode("utf-8", "replace")
            want = [[0, len(text) if isinstance(text, str) else 0, 1.0]]
            if spans != want or not isinstance(spans[0][2], float):
                self.fail(f"(c) {where}: duplicate span {spans!r}, want {want!r} "
                          "(characters of text, score 1.0)")
        elif spans != []:
            self.fail(f"(c) {where}: a kept record's span list is {spans!r}, want []")
        if key is None and duplicate:
            self.fail(f"(d) {where}: a reject flagged duplicate")
        return duplicate


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--input", required=True)
    p.add_argument("--output", required=True)
    p.add_argument("--key-field", default="id")
    p.add_argument("--format", choices=("bloomshard", "dolma"), default="bloomshard")
    p.add_argument("--ranks", type=int, default=0, help="1: also check global first occurrence")
    p.add_argument("--filter-output")
    Oracle(p.parse_args(argv)).run()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
