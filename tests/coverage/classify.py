#!/usr/bin/env python3
"""Every uncovered line and branch of the goal folders, with its class.

usage: classify.py COVERAGE.json [--reasons DIR] [--folder F]... [--list]
                   [--source-root DIR]

Issue 31's rule: each uncovered branch of src/core, src/store, src/app/run,
src/app/feed and src/python either gets a test or a one-line reason why it
cannot be reached. The reasons live in tests/coverage/reasons/*.txt (one
file a folder), one entry a line:

    FILE_GLOB | SNIPPET | WHAT | CLASS | one-line reason

  FILE_GLOB  a path under src/ (fnmatch: `src/core/*` takes every file below)
  SNIPPET    text the uncovered source line contains (`*`: any line); the
             entry is keyed by the code, not by a line number, so that it
             follows the line when code above it moves
  WHAT       `branch` (only partly taken lines), `line` (lines never run) or
             `any`
  CLASS      `reason` (cannot be reached by a test: the text says why),
             `test:NAME` (a test reaches it, but not in these counters: the
             text says why), or `gcov` (a branch gcov counts that no source
             operand makes: landing pads, string temporaries)

The first entry that matches an uncovered entry classifies it. Prints each
folder's counts per class and every entry no reason matches; exits 1 if any
is left, or if an entry matches nothing (a stale reason), so that the list
stays exact. --list prints every uncovered entry with its class.
--source-root: the checkout the counters were made from (default: this
one); the line numbers of the report are that tree's.
"""
import collections
import fnmatch
import json
import os
import sys

GOAL_FOLDERS = ["src/core", "src/store", "src/app/run", "src/app/feed", "src/python"]
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def parse_reasons(folder):
    reasons = []
    for name in sorted(os.listdir(folder)):
        if not name.endswith(".txt"):
            continue
        path = os.path.join(folder, name)
        with open(path, encoding="utf-8") as f:
            for number, raw in enumerate(f, 1):
                text = raw.strip()
                if not text or text.startswith("#"):
                    continue
                fields = [p.strip() for p in text.split(" | ")]
                where = f"{path}:{number}"
                if len(fields) != 5:
                    sys.exit(f"classify.py: {where}: want 5 fields separated by ' | ', got {len(fields)}")
                glob, snippet, what, klass, why = fields
                if what not in ("branch", "line", "any"):
                    sys.exit(f"classify.py: {where}: WHAT is '{what}', want branch, line or any")
                if not (klass in ("reason", "gcov") or klass.startswith("test:")):
                    sys.exit(f"classify.py: {where}: CLASS is '{klass}', want reason, gcov or test:NAME")
                if not why:
                    sys.exit(f"classify.py: {where}: no reason text")
                reasons.append({"where": where, "glob": glob, "snippet": snippet, "what": what,
                                "class": klass.split(":")[0], "why": why, "used": 0})
    return reasons


def uncovered_entries(report, folders):
    """(folder, file, line number, 'line' or 'branch', text) for each entry."""
    for entry in sorted(report["files"], key=lambda e: e["file"]):
        folder = next((f for f in folders if entry["file"].startswith(f + "/")), None)
        if folder is None:
            continue
        for line in entry["lines"]:
            if line.get("gcovr/noncode", False):
                continue
            if line["count"] == 0:
                yield folder, entry["file"], line["line_number"], "line", "line never run"
                continue
            branches = line.get("branches", [])
            missed = [i for i, b in enumerate(branches) if b["count"] == 0]
            if missed:
                text = f"branches {','.join(map(str, missed))} of {len(branches)} never taken"
                yield folder, entry["file"], line["line_number"], "branch", text


def source_line(cache, root, path, number):
    if path not in cache:
        try:
            with open(os.path.join(root, path), encoding="utf-8", errors="replace") as f:
                cache[path] = f.read().split("\n")
        except OSError:
            cache[path] = []
    lines = cache[path]
    return lines[number - 1] if 0 < number <= len(lines) else ""


def classify(reasons, path, kind, code):
    for r in reasons:
        if r["what"] not in ("any", kind) or not fnmatch.fnmatchcase(path, r["glob"]):
            continue
        if r["snippet"] != "*" and r["snippet"] not in code:
            continue
        r["used"] += 1
        return r
    return None


def main(argv):
    args = argv[1:]
    if not args or args[0].startswith("-"):
        sys.exit(__doc__)
    report_path, args = args[0], args[1:]
    reasons_dir = os.path.join(HERE, "reasons")
    folders, listing, root = [], False, ROOT
    while args:
        if args[0] == "--reasons" and len(args) > 1:
            reasons_dir, args = args[1], args[2:]
        elif args[0] == "--folder" and len(args) > 1:
            folders.append(args[1].rstrip("/"))
            args = args[2:]
        elif args[0] == "--source-root" and len(args) > 1:
            root, args = args[1], args[2:]
        elif args[0] == "--list":
            listing, args = True, args[1:]
        else:
            sys.exit(__doc__)
    folders = folders or GOAL_FOLDERS
    with open(report_path, encoding="utf-8") as f:
        report = json.load(f)
    reasons = parse_reasons(reasons_dir)
    cache = {}
    counts = collections.defaultdict(collections.Counter)
    left = []
    for folder, path, number, kind, text in uncovered_entries(report, folders):
        code = source_line(cache, root, path, number)
        r = classify(reasons, path, kind, code)
        klass = r["class"] if r else "unclassified"
        counts[folder][klass] += 1
        if listing:
            print(f"{path}:{number}: {text}: {klass}" + (f" ({r['where']})" if r else ""))
        if r is None:
            left.append(f"{path}:{number}: {text}: {code.strip()}")
    print(f"{'folder':<14} {'reason':>7} {'gcov':>5} {'test':>5} {'unclassified':>13}")
    for folder in folders:
        c = counts[folder]
        print(f"{folder:<14} {c['reason']:>7} {c['gcov']:>5} {c['test']:>5} {c['unclassified']:>13}")
    stale = [r for r in reasons if r["used"] == 0 and
             any(fnmatch.fnmatchcase(f + "/x", r["glob"]) or r["glob"].startswith(f + "/")
                 for f in folders)]
    for line in left:
        print(f"unclassified: {line}")
    for r in stale:
        print(f"stale: {r['where']}: '{r['snippet']}' matches no uncovered entry of {r['glob']}")
    return 1 if left or stale else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
