#!/usr/bin/env python3
"""Independent oracle for rolling windows (`dedup --window N`).

No bloomshard code: keys are the JSONL "id" field's bytes (normalization
none), and a record is kept iff its key did not occur in the current slot
earlier (file order, then line order) nor in any of the N slots before it.

  gen     --out DIR --runs R --records K --seed S [--files F --mixed]
          writes DIR/run-<r>/day-<r>-<f>.jsonl (F files per run, 2 unless
          told; --mixed: file f is plain, .gz, .zst as f mod 3): keys drawn
          from a pool so that keys recur at every distance from 0 to R slots;
          each record carries its run and number, so copies differ
  check   --window N --inputs D0 D1 ... --outputs O0 O1 ... [--first-in-run]
          one slot per input dir (per-run slots): each run keeps exactly the
          keys that occurred in none of the N runs before it, each once, as
          lines of its own input; prints the distinct keys per slot as JSON
          (the tier-2 keys `info` must list per slot). --first-in-run: the
          kept copy is the first in the run (files in sorted order, lines by
          position), so every output holds exactly the oracle's lines
          (`--kept-copy first`; .gz/.zst decompressed)
  query-check --window N --inputs D0 ... --probe DIR --output Q
          `query --emit hits` of DIR: exactly the lines whose key the live
          slots (the last N + 1 runs) hold
          (--bad-every B: a line without a key after every B-th record)
  check-annotate --window N --inputs D0 ... --outputs O0 ... [--first-in-run]
                 [--require-expiry]
          `--mode annotate` runs, one slot per input dir: each attribute file
          has one JSON line per input line, in order; a line without a key
          is a reject (key null, duplicate false, a reason); a record is a
          duplicate whenever its key occurred in one of the N runs before;
          otherwise exactly one record of its key in the run is not, the
          first in its file (--first-in-run: the first in the run, files in
          sorted order, as on one rank); --require-expiry: the runs must
          hold at least 20 keys new again after expiring, and rejects
  gen-records --out FILE --records K --seed S
          one file of fixed-length lines (every line the same number of bytes)
  check-records --window N --slot-records M --input FILE... --output FILE...
          runs (one per file, in order) whose slot s holds records [s*M, (s+1)*M)
          of the files' concatenation; outputs equal the oracle byte for byte
"""
import argparse
import gzip
import json
import os
import random
import subprocess
import sys


def read_lines(path):
    with open(path, "rb") as f:
        data = f.read()
    if path.endswith(".gz"):
        data = gzip.decompress(data)
    elif path.endswith(".zst"):
        data = subprocess.run(["zstd", "-q", "-d", "-c"], input=data, check=True,
                              stdout=subprocess.PIPE).stdout
    return data.splitlines(keepends=True)


def write_lines(path, lines):
    data = "".join(lines).encode()
    if path.endswith(".gz"):
        data = gzip.compress(data, compresslevel=1)
    elif path.endswith(".zst"):
        data = subprocess.run(["zstd", "-q", "-1", "-c"], input=data, check=True,
                              stdout=subprocess.PIPE).stdout
    with open(path, "wb") as out:
        out.write(data)


def key_of(line):
    return json.loads(line)["id"].encode()


def kept_lines(slots_of_lines, window):
    """slots_of_lines: list of (slot, line) in decision order -> kept flags."""
    last_seen = {}  # key -> newest slot it occurred in
    out = []
    for slot, line in slots_of_lines:
        k = key_of(line)
        seen = k in last_seen and last_seen[k] >= slot - window
        out.append(not seen)
        last_seen[k] = slot
    return out


def input_files(d):
    # Sorted bytewise by name, as the program walks a flat input dir.
    names = [n for n in os.listdir(d) if n.endswith((".jsonl", ".jsonl.gz", ".jsonl.zst"))]
    return [os.path.join(d, n) for n in sorted(names, key=lambda n: n.encode())]


def cmd_gen(a):
    rng = random.Random(a.seed)
    for r in range(a.runs):
        d = os.path.join(a.out, f"run-{r}")
        os.makedirs(d, exist_ok=True)
        lines = []
        for i in range(a.records):
            u = rng.random()
            if u < 0.35:
                k = f"hot-{rng.randrange(300)}"  # recurs in most slots
            elif u < 0.75:
                k = f"drift-{r * 400 + rng.randrange(900)}"  # overlaps slots 1-2 apart
            else:
                k = f"old-{rng.randrange(4000)}"  # rare: recurs at long distances
            lines.append(json.dumps({"id": k, "run": r, "n": i}) + "\n")
        if a.bad_every:
            bad = ["not json\n", '{"no_id": 1}\n', '{"id": null}\n']
            with_bad = []
            for i, line in enumerate(lines):
                with_bad.append(line)
                if i % a.bad_every == a.bad_every - 1:
                    with_bad.append(bad[(i // a.bad_every) % len(bad)])
            lines = with_bad
        n_files = a.files
        suffixes = [".jsonl", ".jsonl.gz", ".jsonl.zst"] if a.mixed else [".jsonl"]
        for f in range(n_files):
            part = lines[len(lines) * f // n_files:len(lines) * (f + 1) // n_files]
            write_lines(os.path.join(d, f"day-{r}-{f}{suffixes[f % len(suffixes)]}"), part)


def cmd_check(a):
    """Per run: the kept keys (each exactly once) are the run's keys that
    occurred in none of the `window` runs before it; every output line is a
    line of its mirrored input. Which copy of a key repeated inside one run
    is kept depends on the rank order, so copies are not compared."""
    if len(a.inputs) != len(a.outputs):
        sys.exit("check: as many --inputs as --outputs")
    run_keys = []
    bad = []
    total_kept = 0
    for slot, (d, o) in enumerate(zip(a.inputs, a.outputs)):
        earlier = set().union(*run_keys[max(0, slot - a.window):slot])
        keys = set()
        got = []
        for path in input_files(d):
            lines = read_lines(path)
            out_path = os.path.join(o, os.path.basename(path))
            if not os.path.exists(out_path):
                bad.append(f"run {slot}: no output {out_path}")
                keys.update(key_of(l) for l in lines)
                continue
            out_lines = read_lines(out_path)
            if a.first_in_run:  # the first copy in the run of a key new to the window
                want_lines = []
                for l in lines:
                    k = key_of(l)
                    if k not in earlier and k not in keys:
                        want_lines.append(l)
                    keys.add(k)
                if out_lines != want_lines:
                    at = next((i for i, (x, y) in enumerate(zip(out_lines, want_lines))
                               if x != y), min(len(out_lines), len(want_lines)))
                    bad.append(f"run {slot}: {out_path} differs from the first copies in the "
                               f"run at line {at + 1} ({len(out_lines)} lines, the oracle "
                               f"{len(want_lines)})")
            keys.update(key_of(l) for l in lines)
            allowed = set(lines)
            for l in out_lines:
                if l not in allowed:
                    bad.append(f"run {slot}: {out_path} holds a line not in its input")
                got.append(key_of(l))
        run_keys.append(keys)
        want = keys - earlier
        if len(got) != len(set(got)):
            bad.append(f"run {slot}: a key kept twice")
        if set(got) != want:
            bad.append(f"run {slot}: kept {len(set(got))} keys, the oracle {len(want)} "
                       f"({len(set(got) - want)} too many, {len(want - set(got))} missing)")
        total_kept += len(got)
    if bad:
        print("\n".join(bad), file=sys.stderr)
        sys.exit(f"{len(bad)} difference(s) from the window oracle")
    # How much the sequence tells the window rule apart from near misses:
    # keys new again after expiring, and keys a rule that remembers only
    # KEPT occurrences (no refresh on a duplicate) would keep wrongly.
    new_again = no_refresh_wrong = 0
    last_kept = {}
    for slot, keys in enumerate(run_keys):
        for k in keys:
            in_window = any(k in run_keys[t] for t in range(max(0, slot - a.window), slot))
            if not in_window and any(k in run_keys[t] for t in range(0, slot)):
                new_again += 1
            kept_without_refresh = k not in last_kept or last_kept[k] < slot - a.window
            if kept_without_refresh != (not in_window):
                no_refresh_wrong += 1
            if kept_without_refresh:
                last_kept[k] = slot
    print(json.dumps({"kept": total_kept, "new_again": new_again,
                      "no_refresh_wrong": no_refresh_wrong,
                      "slot_keys": {str(s): len(k) for s, k in enumerate(run_keys)}}))


def cmd_query_check(a):
    """`query --emit hits` on a windowed state after the runs of --inputs:
    the hits are exactly the probe lines (in order) whose key occurred in
    the last window + 1 runs (the live slots)."""
    live = set()
    for d in a.inputs[max(0, len(a.inputs) - 1 - a.window):]:
        for path in input_files(d):
            live.update(key_of(l) for l in read_lines(path))
    bad = 0
    for path in input_files(a.probe):
        want = [l for l in read_lines(path) if key_of(l) in live]
        out = os.path.join(a.output, os.path.basename(path))
        got = read_lines(out) if os.path.exists(out) else []
        if got != want:
            bad += 1
            print(f"{out}: {len(got)} hits, the oracle {len(want)}", file=sys.stderr)
    if bad:
        sys.exit("query hits differ from the live slots' keys")


def key_or_none(line):
    """The record's key, or None for a line the job rejects."""
    try:
        v = json.loads(line).get("id")
    except (ValueError, AttributeError):
        return None
    return v.encode() if isinstance(v, str) else None


def cmd_check_annotate(a):
    if len(a.inputs) != len(a.outputs):
        sys.exit("check-annotate: as many --inputs as --outputs")
    bad = []
    run_keys = []
    stats = {"lines": 0, "rejects": 0, "duplicates": 0, "expired_new": 0}
    for slot, (d, o) in enumerate(zip(a.inputs, a.outputs)):
        earlier = set().union(*run_keys[max(0, slot - a.window):slot])
        older = set().union(*run_keys[:max(0, slot - a.window)])
        keys = set()
        kept = {}  # key -> where its one non-duplicate record is
        first_in_run = {}
        for path in input_files(d):
            name = os.path.basename(path)
            lines = read_lines(path)
            out_path = os.path.join(o, name)
            if not os.path.exists(out_path):
                bad.append(f"run {slot}: no attribute file {out_path}")
                continue
            attrs = read_lines(out_path)
            if len(attrs) != len(lines):
                bad.append(f"run {slot}: {name}: {len(attrs)} attribute lines for "
                           f"{len(lines)} input lines")
                continue
            first_in_file = set()
            for n, (line, attr) in enumerate(zip(lines, attrs), start=1):
                where = f"run {slot}: {name}:{n}"
                stats["lines"] += 1
                try:
                    got = json.loads(attr)
                except ValueError:
                    bad.append(f"{where}: attribute line is not JSON")
                    continue
                k = key_or_none(line)
                if k is None:
                    stats["rejects"] += 1
                    if got.get("key") is not None or got.get("duplicate") is not False or \
                            not got.get("reject"):
                        bad.append(f"{where}: a line without a key annotated {got}")
                    continue
                if got.get("key") != k.decode() or "reject" in got:
                    bad.append(f"{where}: annotated {got} for key {k.decode()!r}")
                    continue
                dup = got.get("duplicate")
                first = k not in first_in_file
                first_in_file.add(k)
                first_in_run.setdefault(k, where)
                keys.add(k)
                stats["duplicates"] += bool(dup)
                if k in earlier:
                    if dup is not True:
                        bad.append(f"{where}: {k.decode()!r} occurred in the window, not flagged")
                elif dup is False:
                    if k in kept:
                        bad.append(f"{where}: {k.decode()!r} kept again (first kept {kept[k]})")
                    elif not first:
                        bad.append(f"{where}: {k.decode()!r} kept, not its file's first copy")
                    kept[k] = where
                    stats["expired_new"] += k in older
                elif dup is not True:
                    bad.append(f"{where}: duplicate is {dup!r}")
        for k in keys - earlier:
            if k not in kept:
                bad.append(f"run {slot}: {k.decode()!r} is new to the window, none kept")
            elif a.first_in_run and kept[k] != first_in_run[k]:
                bad.append(f"run {slot}: {k.decode()!r} kept at {kept[k]}, "
                           f"first at {first_in_run[k]}")
        run_keys.append(keys)
    if bad:
        print("\n".join(bad[:20]), file=sys.stderr)
        sys.exit(f"{len(bad)} difference(s) from the window oracle of annotate mode")
    # The whole sequence must tell the window apart from plain dedup (keys
    # new again after they expired) and include rejects.
    if a.require_expiry and (stats["expired_new"] < 20 or stats["rejects"] == 0):
        sys.exit(f"the corpus hardly exercises the window or rejects: {stats}")
    print(json.dumps(stats))


def cmd_gen_records(a):
    rng = random.Random(a.seed)
    with open(a.out, "w") as out:
        for i in range(a.records):
            u = rng.random()
            if u < 0.3:
                k = rng.randrange(200)  # in every slot
            elif u < 0.6:
                k = 1000 + (i // 500) * 100 + rng.randrange(600)  # drifts: 3 slots
            else:
                k = 5000 + rng.randrange(2500)  # rare: recurs after gaps of any length
            out.write(json.dumps({"id": f"r{k:06d}", "n": f"{i:06d}"}) + "\n")


def cmd_check_records(a):
    # Several inputs/outputs: successive runs on one state, whose records
    # slots go on across runs (the concatenation is one sequence).
    lines = [l for path in a.input for l in read_lines(path)]
    if len({len(l) for l in lines}) != 1:
        sys.exit("check-records: input lines are not all of one length")
    flags = kept_lines([(i // a.slot_records, l) for i, l in enumerate(lines)], a.window)
    want = [l for l, k in zip(lines, flags) if k]
    got = [l for path in a.output for l in read_lines(path)]
    if got != want:
        sys.exit(f"output has {len(got)} lines, the oracle keeps {len(want)}")
    if a.no_expiry_check:  # a prefix too short for expiry (a stopped run's output)
        print(json.dumps({"kept": len(want), "records": len(lines)}))
        return
    # The corpus must tell the window apart from plain dedup.
    plain = sum(kept_lines([(0, l) for l in lines], a.window))
    if len(want) - plain < 100:
        sys.exit(f"the corpus hardly exercises expiry ({len(want)} kept vs {plain} without window)")
    print(json.dumps({"kept": len(want), "kept_without_window": plain, "records": len(lines)}))


def main():
    p = argparse.ArgumentParser()
    sub = p.add_subparsers(dest="cmd", required=True)
    g = sub.add_parser("gen")
    g.add_argument("--out", required=True)
    g.add_argument("--runs", type=int, required=True)
    g.add_argument("--records", type=int, required=True)
    g.add_argument("--seed", type=int, default=13)
    g.add_argument("--bad-every", type=int, default=0)
    g.add_argument("--files", type=int, default=2)
    g.add_argument("--mixed", action="store_true")
    c = sub.add_parser("check")
    c.add_argument("--window", type=int, required=True)
    c.add_argument("--inputs", nargs="+", required=True)
    c.add_argument("--outputs", nargs="+", required=True)
    c.add_argument("--first-in-run", action="store_true")
    q = sub.add_parser("query-check")
    q.add_argument("--window", type=int, required=True)
    q.add_argument("--inputs", nargs="+", required=True)
    q.add_argument("--probe", required=True)
    q.add_argument("--output", required=True)
    ca = sub.add_parser("check-annotate")
    ca.add_argument("--window", type=int, required=True)
    ca.add_argument("--inputs", nargs="+", required=True)
    ca.add_argument("--outputs", nargs="+", required=True)
    ca.add_argument("--first-in-run", action="store_true")
    ca.add_argument("--require-expiry", action="store_true")
    gr = sub.add_parser("gen-records")
    gr.add_argument("--out", required=True)
    gr.add_argument("--records", type=int, required=True)
    gr.add_argument("--seed", type=int, default=13)
    cr = sub.add_parser("check-records")
    cr.add_argument("--window", type=int, required=True)
    cr.add_argument("--slot-records", type=int, required=True)
    cr.add_argument("--input", nargs="+", required=True)
    cr.add_argument("--output", nargs="+", required=True)
    cr.add_argument("--no-expiry-check", action="store_true")
    a = p.parse_args()
    {"gen": cmd_gen, "check": cmd_check, "query-check": cmd_query_check,
     "check-annotate": cmd_check_annotate, "gen-records": cmd_gen_records,
     "check-records": cmd_check_records}[a.cmd](a)


if __name__ == "__main__":
    main()
