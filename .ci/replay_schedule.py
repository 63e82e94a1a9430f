#!/usr/bin/env python3
"""Replays ctest's scheduler over the per-test times of a finished run.

Why: on the 2-core CI machine the suite's wall time is shaped by its serial
chains (the timed tests' resource lock, tests that need several slots at
once) more than by its CPU; this says what a change of slots, locks or COST
would do, before a 40-minute CI run does.

Model (ctest 3.25's greedy start): tests in order of COST (descending), then
of registration; whenever slots free up, start the first waiting tests whose
PROCESSORS fit the free slots and whose RESOURCE_LOCKs are free. Each test
takes the wall time it took in the log (so it ignores how neighbours slow
each other: compare layouts, do not read it as a forecast).

usage: replay_schedule.py TESTS_JSON CTEST_LOG [-j 3] [--max-slots N]
  TESTS_JSON  `ctest --test-dir build/release --show-only=json-v1 > t.json`
  CTEST_LOG   the output of that ctest run (lines "Test  #N: NAME ...  S sec");
              a whole .ci/run log works: the first ctest run in it is used
"""
import argparse
import heapq
import json
import re
import sys


def read_times(path):
    times = {}
    line_re = re.compile(r"Test +#\d+: (\S+) .*?([0-9.]+) sec")
    with open(path, errors="replace") as log:
        for line in log:
            if line.startswith("Total Test time") and times:
                break  # the first ctest run only
            match = line_re.search(line)
            if match:
                times[match.group(1)] = float(match.group(2))
    return times


def read_tests(path, times, max_slots, jobs):
    tests = []
    for index, test in enumerate(json.load(open(path))["tests"]):
        if test["name"] not in times:
            continue
        props = {p["name"]: p["value"] for p in test.get("properties", [])}
        slots = int(props.get("PROCESSORS", 1))
        if max_slots:
            slots = min(slots, max_slots)
        tests.append({"name": test["name"], "index": index, "cost": float(props.get("COST", 0)),
                      "slots": min(slots, jobs),
                      "locks": frozenset(props.get("RESOURCE_LOCK") or []),
                      "wall": times[test["name"]]})
    tests.sort(key=lambda t: (-t["cost"], t["index"]))
    return tests


def replay(tests, jobs):
    now, free, held, running, waiting = 0.0, jobs, set(), [], list(tests)
    while waiting or running:
        for test in list(waiting):
            if test["slots"] <= free and not test["locks"] & held:
                waiting.remove(test)
                free -= test["slots"]
                held |= test["locks"]
                heapq.heappush(running, (now + test["wall"], test["index"], test))
        end, _, test = heapq.heappop(running)
        now, free = end, free + test["slots"]
        held -= test["locks"]
    return now


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("tests_json")
    parser.add_argument("ctest_log")
    parser.add_argument("-j", type=int, default=3, help="ctest's parallel level (3 in CI)")
    parser.add_argument("--max-slots", type=int, default=0,
                        help="cap every test's PROCESSORS (0: as declared)")
    args = parser.parse_args()
    times = read_times(args.ctest_log)
    if not times:
        sys.exit(f"replay_schedule: no test times in {args.ctest_log}")
    tests = read_tests(args.tests_json, times, args.max_slots, args.j)
    print(f"{len(tests)} tests, {sum(t['wall'] for t in tests):.0f} s of test wall time; "
          f"-j{args.j}: the run would take {replay(tests, args.j):.0f} s")


if __name__ == "__main__":
    main()
