#!/usr/bin/python3
"""PNG plots of the figures in docs/performance.md, read from its tables
(so a plot never disagrees with the text it illustrates):

  docs/perf-peers.png   whole-job wall time and peak memory vs the peers
                        ("### Final figures" of the peers section)
  docs/perf-resume.png  recovery time after a kill at 70% and memory per
                        rank ("### B. Kill at 70% and restart")
  docs/perf-python.png  the Python module's lookups vs a Python set and the
                        pure-Python reader ("## Python module")

usage: /usr/bin/python3 tests/bench/plot_performance.py [--doc docs/performance.md] [--out docs]
Needs python3-matplotlib (Debian), hence /usr/bin/python3. Fails naming the
heading when a table it needs is missing or changed shape.
"""
import argparse
import os
import re

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

NUMBER = re.compile(r"(\d+(?:,\d{3})*(?:\.\d+)?)")


def table_after(text, heading):
    """Rows (lists of cell strings) of the first markdown table after `heading`."""
    at = text.find("\n" + heading + "\n")
    if at < 0:
        raise SystemExit("plot_performance: heading %r not found" % heading)
    rows, started = [], False
    for line in text[at + len(heading) + 2:].splitlines():
        if line.startswith("|"):
            started = True
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if not all(set(c) <= set("-: ") for c in cells):
                rows.append(cells)
        elif started:
            break
        elif line.startswith("#"):
            break
    if len(rows) < 2:
        raise SystemExit("plot_performance: no table after %r" % heading)
    return rows[0], rows[1:]


def number(cell, what):
    m = NUMBER.search(cell)
    if not m:
        raise SystemExit("plot_performance: no number in %r (%s)" % (cell, what))
    return float(m.group(1).replace(",", ""))


def short(name):
    name = re.sub(r"\(.*?\)", "", name).replace("`", "").strip(" ,")
    return {"bloomshard dedup, 2 ranks": "bloomshard\n(2 ranks)",
            "Python set, same job": "Python set",
            "LC_ALL=C sort -u keys only": "sort -u\n(keys only)",
            "mawk '!seen[$0]++' keys only": "mawk\n(keys only)",
            "Redis SADD, pipelined": "Redis SADD"}.get(name, name.replace(", ", "\n"))


def bars(ax, labels, values, title, unit, highlight=0, log=False):
    colors = ["tab:blue" if i == highlight else "tab:gray" for i in range(len(values))]
    ax.bar(range(len(values)), values, color=colors)
    ax.set_xticks(range(len(values)))
    ax.set_xticklabels(labels, fontsize=8)
    ax.set_title(title, fontsize=10)
    ax.set_ylabel(unit)
    if log:
        ax.set_yscale("log")
    for i, v in enumerate(values):
        ax.annotate("%g" % v, (i, v), ha="center", va="bottom", fontsize=8)


def peers(text, out):
    head, rows = table_after(text, "### Final figures (after the DOM key extraction and the 8 MiB default batch)")
    labels = [short(r[0]) for r in rows]
    wall = [number(r[1], "wall s") for r in rows]
    rss = [number(r[2], "peak RSS") for r in rows]
    fig, (a, b) = plt.subplots(1, 2, figsize=(11, 4))
    bars(a, labels, wall, "10M records, 7M unique keys: wall time (lower is better)", "seconds")
    bars(b, labels, rss, "peak memory (bloomshard: largest rank)", "MiB")
    fig.tight_layout()
    fig.savefig(os.path.join(out, "perf-peers.png"), dpi=110)


def resume(text, out):
    head, rows = table_after(text, "### B. Kill at 70% and restart (10M records, 7M unique keys, 2 ranks)")
    labels = ["bloomshard\nresume", "re-scan outputs\n(Python set)", "Python set\nstarts over",
              "Redis\nstarts over"][:len(rows)]
    rec = [number(r[1], "recovery") for r in rows]
    mem = [number(r[2], "memory") for r in rows]
    fig, (a, b) = plt.subplots(1, 2, figsize=(11, 4))
    bars(a, labels, rec, "recovery after a kill at 70% (log scale)", "seconds", log=True)
    bars(b, labels, mem, "peak memory (bloomshard: per rank)", "MiB")
    fig.tight_layout()
    fig.savefig(os.path.join(out, "perf-resume.png"), dpi=110)


def python_module(text, out):
    head, rows = table_after(text, "## Python module (issue 14)")
    batches = head[1:]
    fig, ax = plt.subplots(figsize=(11, 4))
    width = 0.8 / len(batches)
    labels = []
    for i, r in enumerate(rows):
        name = r[0].replace("`", "")
        labels.append(re.sub(r" of the same.*| \(exact\)| \(tier 1 only\)", "", name)
                      .replace(" in a Python loop", "\n(one key a call)")
                      .replace(" h5py reader ", "\nh5py reader\n").replace("(python/examples/pure_reader.py)", ""))
        values = [number(c, name) for c in r[1:] if NUMBER.search(c)]
        if len(values) == 1:  # one key at a time: no batch size
            ax.bar(i, values[0], width, color="tab:gray")
            ax.annotate("%g" % values[0], (i, values[0]), ha="center", va="bottom", fontsize=8)
            continue
        for j, v in enumerate(values):
            ax.bar(i + (j - (len(batches) - 1) / 2) * width, v, width,
                   color=["tab:blue", "tab:orange", "tab:green"][j % 3],
                   label=batches[j] if i == 0 else None)
    ax.set_xticks(range(len(rows)))
    ax.set_xticklabels(labels, fontsize=8)
    ax.set_ylabel("M keys per CPU-second")
    ax.set_title("Python lookups on a 2M-key state, 10-100 byte keys (higher is better)", fontsize=10)
    ax.axhline(1.0, color="red", linewidth=0.8, linestyle="--", label="target: 1 M/s")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(os.path.join(out, "perf-python.png"), dpi=110)


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser()
    ap.add_argument("--doc", default=os.path.join(here, "..", "..", "docs", "performance.md"))
    ap.add_argument("--out", default=os.path.join(here, "..", "..", "docs"))
    a = ap.parse_args()
    text = open(a.doc, encoding="utf-8").read()
    peers(text, a.out)
    resume(text, a.out)
    python_module(text, a.out)
    print("plot_performance: wrote perf-peers.png, perf-resume.png, perf-python.png in", a.out)


if __name__ == "__main__":
    main()
