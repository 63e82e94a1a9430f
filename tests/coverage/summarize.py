#!/usr/bin/env python3
"""Per-folder line and branch coverage from gcovr's JSON report.

usage: summarize.py COVERAGE.json                  the table of docs/coverage.md
       summarize.py COVERAGE.json --uncovered DIR  each uncovered line and branch
                                                   of the files under DIR

Counts as gcovr does: a line counts when gcov saw code on it (lines gcovr
marks as non-code do not); a branch counts when gcovr kept it (throw and
unreachable branches are excluded before the JSON is written, by the
options run.sh passes). Folders: each layer under src/, each folder of
src/app and src/core, and src/app and src/core as a whole.
"""
import collections
import json
import sys


def file_counts(entry):
    lines = [l for l in entry["lines"] if not l.get("gcovr/noncode", False)]
    lines_hit = sum(1 for l in lines if l["count"] > 0)
    branches = [b for l in lines for b in l.get("branches", [])]
    branches_hit = sum(1 for b in branches if b["count"] > 0)
    return len(lines), lines_hit, len(branches), branches_hit


def folders_of(path):
    """The table's rows a file under src/ counts in."""
    parts = path.split("/")
    if len(parts) < 3 or parts[0] != "src":
        return []
    rows = ["/".join(parts[:2])]
    if parts[1] in ("app", "core") and len(parts) > 3:
        rows.append("/".join(parts[:3]))
    return rows


def percent(hit, total):
    return "-" if total == 0 else f"{100.0 * hit / total:.1f}%"


def table(report):
    sums = collections.defaultdict(lambda: [0, 0, 0, 0])
    for entry in report["files"]:
        counts = file_counts(entry)
        for row in folders_of(entry["file"]) + ["src (all)"]:
            sums[row] = [a + b for a, b in zip(sums[row], counts)]
    print(f"{'folder':<22} {'lines':>15} {'line %':>7} {'branches':>15} {'branch %':>8}")
    for row in sorted(sums, key=lambda r: (r == "src (all)", r)):
        lines, lines_hit, branches, branches_hit = sums[row]
        print(f"{row:<22} {lines_hit:>7}/{lines:<7} {percent(lines_hit, lines):>7} "
              f"{branches_hit:>7}/{branches:<7} {percent(branches_hit, branches):>8}")


def uncovered(report, folder):
    prefix = folder.rstrip("/") + "/"
    for entry in sorted(report["files"], key=lambda e: e["file"]):
        if not entry["file"].startswith(prefix):
            continue
        for line in entry["lines"]:
            if line.get("gcovr/noncode", False):
                continue
            where = f"{entry['file']}:{line['line_number']}"
            if line["count"] == 0:
                print(f"{where}: line never run")
                continue
            missed = [i for i, b in enumerate(line.get("branches", [])) if b["count"] == 0]
            if missed:
                total = len(line["branches"])
                print(f"{where}: branches {','.join(map(str, missed))} of {total} never taken")


def main(argv):
    if len(argv) not in (2, 4) or (len(argv) == 4 and argv[2] != "--uncovered"):
        sys.exit(__doc__)
    with open(argv[1], encoding="utf-8") as f:
        report = json.load(f)
    if len(argv) == 4:
        uncovered(report, argv[3])
    else:
        table(report)


if __name__ == "__main__":
    main(sys.argv)
