#!/usr/bin/env python3
"""Benchmark (not a test) of the Python module's lookups (target
>= 1 M keys/s per process through contains on 10-100 byte keys in batches
>= 1000), against a Python set holding the same keys and the pure-Python
h5py reader (python/examples/pure_reader.py). It writes N random ASCII keys
of 10-100 bytes as a plain-line file, deduplicates them with a real job
into a state, then queries half present, half fresh keys.

    PYTHONPATH=build/release/python /usr/bin/python3 tests/bench/python_contains_bench.py \\
        --bin build/release/bin/bloomshard --keys 2000000 --work /tmp/pybench

Prints one line per method: keys per CPU-second of this process (median of
--repeat passes; the wall-clock rate in brackets) and the batch size.
Timings on shared machines are noisy: compare ratios of one run.
"""
import argparse
import os
import random
import statistics
import subprocess
import sys
import time

import bloomshard

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python", "examples"))
import pure_reader  # noqa: E402

ALPHABET = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./:"


def random_keys(n, seed):
    rnd = random.Random(seed)
    return ["".join(rnd.choices(ALPHABET, k=rnd.randint(10, 100))) for _ in range(n)]


def rss_mib():
    """(anonymous, file-backed) resident MiB of this process."""
    out = {}
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(("RssAnon:", "RssFile:")):
                out[line.split(":")[0]] = int(line.split()[1]) / 1024
    return out.get("RssAnon", 0), out.get("RssFile", 0)


def rate(fn, batches, repeat):
    """Keys per second of this process's CPU time (median of `repeat`
    passes): on a shared machine wall time mostly measures the other
    processes; the wall-time rate is printed beside it."""
    times = []
    walls = []
    for _ in range(repeat):
        t, w = time.process_time(), time.perf_counter()
        for b in batches:
            fn(b)
        times.append(time.process_time() - t)
        walls.append(time.perf_counter() - w)
    rate.wall = sum(len(b) for b in batches) / statistics.median(walls)
    n = sum(len(b) for b in batches)
    return n / statistics.median(times)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--keys", type=int, default=2000000, help="keys in the state")
    ap.add_argument("--queries", type=int, default=1000000)
    ap.add_argument("--batch", type=int, nargs="+", default=[1000, 10000, 100000])
    ap.add_argument("--ranks", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--work", default="/tmp/bloomshard-pybench")
    a = ap.parse_args()

    state = os.path.join(a.work, "state")
    keys = random_keys(a.keys, 1)
    if not os.path.exists(os.path.join(state, "LATEST")):
        os.makedirs(os.path.join(a.work, "in"), exist_ok=True)
        with open(os.path.join(a.work, "in", "keys.txt"), "w") as f:
            f.write("\n".join(keys) + "\n")
        subprocess.run(["mpiexec", "-n", str(a.ranks), "--oversubscribe", a.bin, "dedup",
                        "--input", os.path.join(a.work, "in"), "--output",
                        os.path.join(a.work, "out"), "--state", state,
                        "--capacity", str(a.keys)], check=True, stdout=subprocess.DEVNULL)
    rnd = random.Random(2)
    present = rnd.sample(keys, a.queries // 2)
    queries = present + random_keys(a.queries - len(present), 3)
    rnd.shuffle(queries)
    as_bytes = [q.encode() for q in queries]
    anon0, file0 = rss_mib()
    s = bloomshard.open_state(state)
    print("state: %d keys, %d Bloom layers, %d runs, probe %s, python %s"
          % (s.info()["exact_keys"], len(s.info()["layers"]), s.info()["run_count"],
             bloomshard.probe_isa(), sys.version.split()[0]))
    s.contains(queries)
    anon1, file1 = rss_mib()
    print("memory: state open + 1 pass of queries: +%.0f MiB anonymous, +%.0f MiB file-backed "
          "(page cache); state files %.0f MiB"
          % (anon1 - anon0, file1 - file0,
             sum(os.path.getsize(os.path.join(state, n)) for n in os.listdir(state)
                 if n.endswith(".h5")) / 2**20))
    py_set = set(keys)
    print("memory: python set of the same keys: %.0f MiB (the set and its str objects)"
          % ((sys.getsizeof(py_set) + sum(sys.getsizeof(k) for k in keys)) / 2**20))
    assert sum(s.contains(queries[:20000])) == sum(q in py_set for q in queries[:20000])
    for bs in a.batch:
        batches = [queries[i:i + bs] for i in range(0, len(queries), bs)]
        bbatches = [as_bytes[i:i + bs] for i in range(0, len(as_bytes), bs)]
        for name, fn, bb in (("contains(str)", s.contains, batches),
                             ("contains(bytes)", s.contains, bbatches),
                             ("maybe(str)", s.maybe, batches),
                             ("python set", lambda b: [k in py_set for k in b], batches)):
            r = rate(fn, bb, a.repeat)
            print("batch %6d  %-15s %6.2f M keys/s  (wall %.2f)" % (bs, name, r / 1e6, rate.wall / 1e6))
    # Two threads sharing the state (the GIL is released in the lookup).
    import threading
    batches = [queries[i:i + 10000] for i in range(0, len(queries), 10000)]
    for threads in (1, 2):
        t0 = time.perf_counter()
        ts = [threading.Thread(target=lambda: [s.contains(b) for b in batches]) for _ in range(threads)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        total = threads * len(queries)
        print("threads %d   contains(str)   %6.2f M keys/s (all threads, batch 10000)"
              % (threads, total / (time.perf_counter() - t0) / 1e6))
    one = queries[:100000]
    r = rate(lambda b: [s.contains_one(k) for k in b], [one], a.repeat)
    print("single      contains_one    %6.2f M keys/s  (wall %.2f)" % (r / 1e6, rate.wall / 1e6))
    pure = pure_reader.PureState(state)
    few = queries[:20000]
    r = rate(pure.contains, [few], 1)
    print("single      pure-Python     %6.3f M keys/s  (wall %.3f)" % (r / 1e6, rate.wall / 1e6))


if __name__ == "__main__":
    main()
