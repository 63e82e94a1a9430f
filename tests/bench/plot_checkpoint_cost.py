#!/usr/bin/python3
"""Checkpoint seconds vs tier-2 keys held, before (format 1) and after
(format 2), from the metrics JSON of two dedup runs (their
checkpoint_history; a format-1 build has no history, so for it pass the
seconds it logged, see --before-csv). Writes a PNG.

usage: /usr/bin/python3 tests/bench/plot_checkpoint_cost.py --after m-B.json
           [--before m-O.json | --before-csv FILE] --out docs/checkpoint-cost.png
           [--title TEXT]
Needs python3-matplotlib (Debian), hence /usr/bin/python3.
"""
import argparse
import json

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def history(path):
    m = json.load(open(path))
    h = m.get("checkpoint_history", [])
    return [x["tier2_keys"] / 1e6 for x in h], [x["seconds"] for x in h], h


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--after", required=True)
    ap.add_argument("--before")
    ap.add_argument("--before-csv", help="lines 'keys,seconds' (format-1 build)")
    ap.add_argument("--out", required=True)
    ap.add_argument("--title", default="checkpoint cost vs history size")
    a = ap.parse_args()
    fig, (ab, ax) = plt.subplots(1, 2, figsize=(10, 4))
    x, y, h = history(a.after)
    mib = [hi["bytes_written"] / 2**20 for hi in h]
    ab.plot(x, mib, "o-", label="format 2: Bloom + one run", color="tab:blue")
    ax.plot(x, y, "o-", label="format 2 (whole checkpoint)", color="tab:blue")
    for xi, yi, bi, hi in zip(x, y, mib, h):
        if hi.get("merged_runs", 0) > 0:
            ab.annotate(f"compaction +{hi['merged_runs']}", (xi, bi), fontsize=7, color="tab:blue")
    if a.before:
        bx, by, _ = history(a.before)
        if bx:
            ax.plot(bx, by, "s-", label="format 1 (rewrite all)", color="tab:red")
    if a.before_csv:
        pts = [tuple(map(float, l.split(","))) for l in open(a.before_csv) if l.strip()]
        ax.plot([p[0] / 1e6 for p in pts], [p[1] for p in pts], "s-",
                label="format 1 (file write only)", color="tab:red")
        if pts and len(pts[0]) > 2:
            ab.plot([p[0] / 1e6 for p in pts], [p[2] / 2**20 for p in pts], "s-",
                    label="format 1: whole file", color="tab:red")
    ab.set_ylabel("bytes written per checkpoint (MiB)")
    ax.set_ylabel("checkpoint seconds (loaded machine)")
    for axis in (ab, ax):
        axis.set_xlabel("tier-2 keys held at the checkpoint (millions)")
        axis.set_ylim(bottom=0)
        axis.grid(alpha=0.3)
        axis.legend(fontsize=8)
    fig.suptitle(a.title, fontsize=10)
    fig.tight_layout()
    fig.savefig(a.out, dpi=110)
    print(f"wrote {a.out}")


if __name__ == "__main__":
    main()
