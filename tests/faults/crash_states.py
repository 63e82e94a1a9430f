#!/usr/bin/python3
"""Crash states, not only killed processes (docs/reliability.md "Crash states").

Runs one real `bloomshard dedup` job under mpiexec with the file-system call
recorder (fs_recorder.c, LD_PRELOAD) on everything under a root directory
(outputs, rejects, state, metrics), merges the ranks' logs by their shared
sequence number, and replays them over the snapshot taken before the job to
build the on-disk states a power cut could leave. Each state is written back
to the same root (the run's paths are part of its identity), the same
command is run on it, and the result must be exactly once (tests/e2e/
oracle.py, gzip -t, zstd -t) or a refusal: exit status not 0 and a message
naming a file of the run. Exit 0 with wrong outputs, a refusal that names
nothing, or a hang (--resume-timeout) is a failure.

The persistence model (strict POSIX, as ALICE and CrashMonkey use it):
- file data (write, pwrite, writev, pwritev, ftruncate, O_TRUNC) of a file
  is durable once fsync or fdatasync of that file (any descriptor of it)
  was called after the write completed; per file, durable data is a prefix
  of the file's data operations;
- a directory entry (create, mkdir, rename, unlink, rmdir) is durable once
  fsync of its directory was called after it; a rename counts as an entry
  of the target's directory; per directory, durable entries are a prefix;
- sync_file_range and msync make nothing durable;
- everything in the snapshot taken before the job is durable.
--model journal relaxes the entry rule as ext4 data=ordered does: any
fsync/fdatasync commits every entry made before it.
Crash points: just before each fsync/fdatasync and each rename, and after
the last call. Variants at each point:
- drop:   only what the model says is durable;
- meta:   every directory entry made so far, data only where durable (the
          entries reached the disk before the data: ext4 data=writeback, XFS);
- prefix: drop, plus the first half of the pending data operations of the
          file the next sync is for (one pending write: its first half of
          bytes), a write torn by the power cut;
- all:    everything done so far (a kill at that point, page cache intact).
States with the same bytes are tried once. --sample N tries a deterministic
subset (--seed), always including the last state of each variant; --sample 0
tries them all.

usage: crash_states.py --bin BIN --shim SO --oracle ORACLE [--mpiexec M]
         [--np-flag=F] [--python P] [--sample N] [--seed S] [--model M]
         [--match TEXT] [--keep] [--verbose]
Prints one line per state and a summary "STATES built B distinct D tried T
ok O refused R known K failed F"; exit 1 on any failure.
"""
import argparse
import collections
import glob
import hashlib
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile

# Exactly-once violations the product is known to have in some crash
# state, each with its reason: (variant, substring of the crash point's
# description) -> reason. A state matching one is reported as "known", not
# as a failure, so CI stays green while the bug is open.
# Each entry: (name, test(state), reason); test gets the state's variant,
# its crash point's description and the output paths the job had made by
# then that the state lacks (their directory entries were not durable).
KNOWN = []

SYNC_OPS = ("fsync", "fdatasync")


class Event:
    __slots__ = ("seq", "pid", "op", "fd", "arg", "path", "path2", "dat")

    def __init__(self, fields, datfile):
        self.seq, self.pid, self.op = int(fields[0]), int(fields[1]), fields[2]
        self.fd = int(fields[3])
        self.path2 = None
        self.dat = None
        if self.op == "open":  # seq pid open fd flags is_dir path
            self.arg = (int(fields[4]), fields[5] == "1")
            self.path = fields[6]
        elif self.op == "write":  # seq pid write fd offset length datoff path
            self.arg = (int(fields[4]), int(fields[5]))
            self.dat = (datfile, int(fields[6]))
            self.path = fields[7]
        else:  # seq pid op fd arg path [path2]
            self.arg = int(fields[4])
            self.path = fields[5]
            if len(fields) > 6:
                self.path2 = fields[6]


def read_events(logdir):
    events = []
    for log in glob.glob(os.path.join(logdir, "rec-*.log")):
        datfile = log[:-4] + ".dat"
        with open(log) as f:
            for line in f:
                if line.endswith("\n"):
                    events.append(Event(line[:-1].split("\t"), datfile))
    events.sort(key=lambda e: e.seq)
    return events


def read_bytes(dat):
    path, offset = dat[0]
    with open(path, "rb") as f:
        f.seek(offset)
        return f.read(dat[1])


class Model:
    """Replays the merged log: the volatile file system, and what is durable."""

    def __init__(self, root, journal):
        self.root = root
        self.journal = journal
        self.ns_ops = []  # (dir, kind, path, value, path2) in order
        self.dir_ops = collections.defaultdict(list)  # dir -> indexes into ns_ops
        self.dir_durable = collections.defaultdict(int)  # dir -> count durable
        self.base_ns = {}  # path -> ("d",) | ("f", ino): the snapshot
        self.vol_ns = {}
        self.base = {}  # ino -> bytes of the snapshot
        self.data_ops = collections.defaultdict(list)  # ino -> [("w", off, dat) | ("t", len)]
        self.data_durable = collections.defaultdict(int)
        self.fds = {}  # (pid, fd) -> ("f", ino) | ("d", path)
        self.next_ino = 0
        self.problems = []
        for dirpath, dirnames, filenames in os.walk(root):
            if dirpath != root:
                self.base_ns[dirpath] = ("d",)
            for name in filenames:
                path = os.path.join(dirpath, name)
                with open(path, "rb") as f:
                    self.base[self.next_ino] = f.read()
                self.base_ns[path] = ("f", self.next_ino)
                self.next_ino += 1
        self.vol_ns = dict(self.base_ns)

    def ns_op(self, kind, path, value=None, path2=None):
        d = os.path.dirname(path2 if kind == "rename" else path)
        self.dir_ops[d].append(len(self.ns_ops))
        self.ns_ops.append((d, kind, path, value, path2))
        apply_ns(self.vol_ns, kind, path, value, path2)

    def apply(self, e):
        key = (e.pid, e.fd)
        if e.op == "open":
            flags, is_dir = e.arg
            if is_dir:
                self.fds[key] = ("d", e.path)
                if e.path not in self.vol_ns and e.path != self.root:
                    self.problems.append(f"directory {e.path} opened, never seen made")
                return
            entry = self.vol_ns.get(e.path)
            if entry is None:
                if not flags & os.O_CREAT:
                    self.problems.append(f"{e.path} opened, never seen made (unrecorded)")
                ino = self.next_ino
                self.next_ino += 1
                self.base[ino] = b""
                self.ns_op("create", e.path, ("f", ino))
            else:
                ino = entry[1]
                if flags & os.O_TRUNC and flags & (os.O_WRONLY | os.O_RDWR):
                    self.data_ops[ino].append(("t", 0))
            self.fds[key] = ("f", ino)
        elif e.op == "close":
            self.fds.pop(key, None)
        elif e.op == "write":
            h = self.fds.get(key)
            if h is None or h[0] != "f":
                self.problems.append(f"write to untracked descriptor {e.fd} of {e.path}")
                return
            offset, length = e.arg
            self.data_ops[h[1]].append(("w", offset, (e.dat, length)))
        elif e.op in ("ftruncate", "truncate"):
            ino = self.fds[key][1] if e.op == "ftruncate" else self.vol_ns[e.path][1]
            self.data_ops[ino].append(("t", e.arg))
        elif e.op in SYNC_OPS:
            h = self.fds.get(key)
            if h is None:
                self.problems.append(f"{e.op} of untracked descriptor {e.fd} ({e.path})")
                return
            if self.journal:  # the sync commits every metadata change made so far
                for d, ops in self.dir_ops.items():
                    self.dir_durable[d] = len(ops)
            if h[0] == "d":
                self.dir_durable[h[1]] = len(self.dir_ops[h[1]])
            else:
                self.data_durable[h[1]] = len(self.data_ops[h[1]])
        elif e.op in ("mkdir",):
            self.ns_op("mkdir", e.path, ("d",))
        elif e.op in ("unlink", "rmdir"):
            self.ns_op(e.op, e.path)
        elif e.op == "rename":
            self.ns_op("rename", e.path, None, e.path2)
        elif e.op == "msync":
            self.problems.append("msync under the root: writes through a mapping are not recorded")
        elif e.op in ("sync_file_range", "syncfail"):
            pass
        else:
            self.problems.append(f"unknown record {e.op}")

    def point(self):
        """What a crash now leaves: counts that describe it (cheap to keep)."""
        return (len(self.ns_ops), dict(self.dir_durable),
                {ino: (self.data_durable[ino], len(ops)) for ino, ops in self.data_ops.items()})

    def build(self, point, variant, torn_ino=None):
        """The state's tree: {path: None (dir) | bytes}."""
        n_ns, dir_durable, data = point
        seen = collections.Counter()
        ns = dict(self.base_ns)
        for d, kind, path, value, path2 in self.ns_ops[:n_ns]:
            index = seen[d]
            seen[d] += 1
            if variant == "drop" or variant == "prefix":
                if index >= dir_durable.get(d, 0):
                    continue
            apply_ns(ns, kind, path, value, path2)
        tree = {}
        for path, entry in ns.items():
            if entry[0] == "d":
                tree[path] = None
                continue
            ino = entry[1]
            durable, total = data.get(ino, (0, 0))
            upto = total if variant == "all" else durable
            ops = self.data_ops.get(ino, [])[:upto]
            torn = None
            if variant == "prefix" and ino == torn_ino and total > durable:
                pending = total - durable
                if pending == 1:
                    torn = self.data_ops[ino][durable]
                else:
                    ops = self.data_ops[ino][:durable + pending // 2]
            tree[path] = replay_data(self.base.get(ino, b""), ops, torn)
        return tree


def apply_ns(ns, kind, path, value, path2):
    """One entry change on ns; one whose parent is not there is lost with it."""
    def parent_ok(p):
        return os.path.dirname(p) in ns or os.path.dirname(p) == ROOT[0]
    if kind in ("create", "mkdir"):
        if parent_ok(path):
            ns[path] = value
    elif kind in ("unlink", "rmdir"):
        ns.pop(path, None)
    elif kind == "rename":
        if path in ns and parent_ok(path2):
            entry = ns.pop(path)
            ns[path2] = entry
            if entry[0] == "d":
                for p in [p for p in ns if p.startswith(path + "/")]:
                    ns[path2 + p[len(path):]] = ns.pop(p)


ROOT = [None]  # the recorded root: entries directly in it need no parent entry


def replay_data(base, ops, torn):
    data = bytearray(base)
    for op in ops + ([torn] if torn else []):
        if op[0] == "t":
            del data[op[1]:]
            data.extend(b"\0" * (op[1] - len(data)))
            continue
        _, offset, dat = op
        chunk = read_bytes(dat)
        if op is torn:
            chunk = chunk[:len(chunk) // 2]
        if len(data) < offset:
            data.extend(b"\0" * (offset - len(data)))
        data[offset:offset + len(chunk)] = chunk
    return bytes(data)


def tree_digest(tree):
    h = hashlib.sha256()
    for path in sorted(tree):
        h.update(path.encode() + b"\0")
        h.update(b"D" if tree[path] is None else hashlib.sha256(tree[path]).digest())
    return h.hexdigest()


def write_tree(root, tree):
    shutil.rmtree(root)
    os.mkdir(root)
    for path in sorted(tree):
        if tree[path] is None:
            os.makedirs(path, exist_ok=True)
        else:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "wb") as f:
                f.write(tree[path])


def run(cmd, env, timeout):
    try:
        p = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           timeout=timeout)
        return p.returncode, p.stdout.decode(errors="replace")
    except subprocess.TimeoutExpired as e:
        return None, (e.stdout or b"").decode(errors="replace")


def check_outputs(args, inputs, out, unique):
    rc, text = run([args.python, args.oracle, "--input", inputs, "--output", out, "--key-field",
                    "id", "--expect-unique", str(unique)], os.environ, 300)
    if rc != 0:
        return text.strip().splitlines()[-1] if text.strip() else f"oracle exit {rc}"
    for dirpath, _, names in os.walk(out):
        for name in names:
            tool = {"gz": ["gzip", "-t"], "zst": ["zstd", "-q", "-t"]}.get(name.rsplit(".", 1)[-1])
            if tool and subprocess.run(tool + [os.path.join(dirpath, name)],
                                       capture_output=True).returncode != 0:
                return f"corrupt compressed stream {os.path.join(dirpath, name)}"
    return None


def names_a_file(text, tree, root):
    if root in text:
        return True
    names = {os.path.basename(p) for p in tree} - {"out", "state"}
    return any(n in text for n in names if len(n) >= 5)


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--bin", required=True)
    p.add_argument("--shim", required=True)
    p.add_argument("--oracle", required=True)
    p.add_argument("--mpiexec", default="mpiexec")
    p.add_argument("--np-flag", default="-n")
    p.add_argument("--python", default=sys.executable)
    p.add_argument("--ranks", type=int, default=2)
    p.add_argument("--records", type=int, default=3000)
    p.add_argument("--checkpoint-rounds", type=int, default=2)
    p.add_argument("--sample", type=int, default=20, help="states to try; 0: all")
    p.add_argument("--seed", type=int, default=31)
    p.add_argument("--resume-timeout", type=int, default=120)
    p.add_argument("--model", choices=("posix", "journal"), default="posix",
                   help="posix: an entry is durable after fsync of its directory; journal "
                   "(ext4 data=ordered): after any fsync/fdatasync")
    p.add_argument("--keep", action="store_true", help="keep the work dir")
    p.add_argument("--match", help="try only the states whose 'VARIANT before ...' holds this")
    p.add_argument("--verbose", action="store_true", help="print the output of failures")
    args = p.parse_args(argv)
    args.bin = os.path.realpath(args.bin)

    work = os.path.realpath(tempfile.mkdtemp(prefix="bloomshard-crash_states."))
    try:
        return campaign(args, work)
    finally:
        if args.keep:
            print(f"kept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)


def campaign(args, work):
    root, logdir, inputs = (os.path.join(work, d) for d in ("root", "rec", "in"))
    ROOT[0] = root
    os.makedirs(logdir)
    # Inputs outside the root (read only): gzip, zstd and plain JSONL with
    # duplicates across files, and two malformed lines for the reject path.
    for sub, share, comp, seed in (("gz", 2, "gz", 11), ("zst", 1, "zst", 12),
                                    ("plain", 1, "none", 13)):
        subprocess.run([args.bin, "synth", "--out", os.path.join(inputs, sub), "--records",
                        str(args.records * share // 4), "--dup-rate", "0.3", "--files", "2",
                        "--compress", comp, "--seed", str(seed)], check=True,
                       stdout=subprocess.DEVNULL)
    plain = sorted(glob.glob(os.path.join(inputs, "plain", "*")))
    with open(plain[0], "ab") as f:
        f.write(b"{not json\n{\"no_id\": 1}\n")
    stats = subprocess.run([args.python, args.oracle, "--input", inputs, "--key-field", "id",
                            "--stats"], check=True, capture_output=True, text=True).stdout
    unique = int(json.loads(stats)["unique_keys"])
    # The job starts from existing, durable (snapshot) output and state dirs.
    out, state = os.path.join(root, "out"), os.path.join(root, "state")
    os.makedirs(out)
    os.makedirs(state)
    model = Model(root, args.model == "journal")

    job = [args.mpiexec, args.np_flag, str(args.ranks), "--oversubscribe"]
    dedup = [args.bin, "dedup", "--input", inputs, "--output", out, "--state", state,
             "--key-field", "id", "--checkpoint-rounds", str(args.checkpoint_rounds),
             "--batch-bytes", "4096", "--metrics", os.path.join(root, "metrics.json"),
             "--stall-timeout", "0", "--lock-wait", "0"]
    env = dict(os.environ)
    rec = ["-x", "LD_PRELOAD=" + os.path.realpath(args.shim), "-x",
           "BLOOMSHARD_FSREC_ROOT=" + root, "-x", "BLOOMSHARD_FSREC_LOG=" + logdir]
    rc, text = run(job + rec + dedup, env, 120)
    if rc != 0:
        print(text)
        print(f"FAIL: the recorded job exited {rc}")
        return 1
    bad = check_outputs(args, inputs, out, unique)
    if bad:
        print(f"FAIL: the recorded job itself is not exactly once: {bad}")
        return 1

    events = read_events(logdir)
    counts = collections.Counter(e.op for e in events)
    print("RECORDED " + " ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    points = []  # (description, point, next sync's inode)
    for e in events:
        if e.op in SYNC_OPS or e.op == "rename":
            h = model.fds.get((e.pid, e.fd))
            torn = h[1] if h and h[0] == "f" and e.op in SYNC_OPS else None
            what = f"before {e.op} #{e.seq} {os.path.relpath(e.path, root)}"
            if e.path2:
                what += " -> " + os.path.relpath(e.path2, root)
            points.append((what, model.point(), torn))
        model.apply(e)
    points.append(("after the last call", model.point(), None))
    if model.problems:
        for problem in sorted(set(model.problems))[:20]:
            print("RECORD PROBLEM " + problem)
        print("FAIL: the record cannot be replayed faithfully")
        return 1

    states, digests = [], set()
    built = 0
    for what, point, torn in points:
        for variant in ("drop", "meta", "prefix", "all"):
            if variant == "prefix" and (torn is None or point[2].get(torn, (0, 0))[0] ==
                                        point[2].get(torn, (0, 0))[1]):
                continue
            built += 1
            tree = model.build(point, variant, torn)
            digest = tree_digest(tree)
            if digest in digests:
                continue
            digests.add(digest)
            states.append((variant, what, point, torn))
    chosen = list(range(len(states)))
    if args.sample and args.sample < len(states):
        last = {v: i for i, (v, *_rest) in enumerate(states)}
        rest = [i for i in chosen if i not in last.values()]
        picked = random.Random(args.seed).sample(rest, max(0, args.sample - len(last)))
        chosen = sorted(set(picked) | set(last.values()))

    if args.match:
        chosen = [i for i, s in enumerate(states) if args.match in f"{s[0]} {s[1]}"]
    tally = collections.Counter()
    for n, i in enumerate(chosen):
        variant, what, point, torn = states[i]
        tree = model.build(point, variant, torn)
        write_tree(root, tree)
        rc, text = run(job + dedup, env, args.resume_timeout)
        label = f"state {i} ({n + 1}/{len(chosen)}) {variant} {what}:"
        made = model.build(point, "meta")
        lost = sorted(os.path.relpath(p, root) for p in made
                      if p.startswith(out + "/") and p not in tree)
        known = next((f"{name}: {reason}" for name, test, reason in KNOWN
                      if test(variant, what, lost)), None)
        if rc is None:
            verdict, detail = "failed", f"no end within {args.resume_timeout} s (a hang)"
        elif rc == 0:
            bad = check_outputs(args, inputs, out, unique)
            verdict, detail = ("failed", f"exit 0 but {bad}") if bad else ("ok", "exactly once")
            if bad and args.verbose:
                print(text)
                print(run([args.python, args.oracle, "--input", inputs, "--output", out,
                           "--key-field", "id", "--expect-unique", str(unique)],
                          os.environ, 300)[1])
        else:
            lines = [l for l in text.splitlines() if "error" in l or "refus" in l] or \
                text.strip().splitlines()[-1:]
            message = lines[0][:300] if lines else ""
            if names_a_file(text, tree, root):
                verdict, detail = "refused", f"exit {rc}: {message}"
            else:
                verdict, detail = "failed", f"exit {rc}, the message names no file: {message}"
        if verdict == "failed" and known:
            verdict, detail = "known", f"{detail} (known {known}; lost: {' '.join(lost[:4])})"
        tally[verdict] += 1
        print(f"{label} {verdict.upper()} {detail}", flush=True)
    print(f"STATES built {built} distinct {len(states)} tried {len(chosen)} ok {tally['ok']} "
          f"refused {tally['refused']} known {tally['known']} failed {tally['failed']}")
    return 1 if tally["failed"] else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
