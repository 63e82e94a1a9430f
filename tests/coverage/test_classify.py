#!/usr/bin/env python3
"""classify.py against a report made up here: each entry classified by the
first matching reason, unclassified and stale entries reported (exit 1), a
malformed reason refused by file and line; and the project's own reasons
files parse. No coverage build needed (ctest coverage.classify)."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
CLASSIFY = os.path.join(HERE, "classify.py")

SOURCE = "int f(int x) {\n  if (x > 0) return g(x);\n  throw_error(\"no\");\n  return 0;\n}\n"


def report():
    lines = [
        {"line_number": 2, "count": 5, "branches": [{"count": 5}, {"count": 0}]},
        {"line_number": 3, "count": 0, "branches": []},
        {"line_number": 4, "count": 5, "branches": []},
    ]
    return {"files": [{"file": "src/core/f.cpp", "lines": lines},
                      {"file": "src/io/g.cpp", "lines": [{"line_number": 1, "count": 0}]}]}


class Classify(unittest.TestCase):
    def run_classify(self, reasons_text, *extra):
        with tempfile.TemporaryDirectory() as d:
            os.makedirs(os.path.join(d, "src", "core"))
            with open(os.path.join(d, "src", "core", "f.cpp"), "w") as f:
                f.write(SOURCE)
            with open(os.path.join(d, "cov.json"), "w") as f:
                json.dump(report(), f)
            os.makedirs(os.path.join(d, "reasons"))
            with open(os.path.join(d, "reasons", "core.txt"), "w") as f:
                f.write(reasons_text)
            return subprocess.run(
                [sys.executable, CLASSIFY, os.path.join(d, "cov.json"), "--reasons",
                 os.path.join(d, "reasons"), "--folder", "src/core", "--source-root", d,
                 "--list", *extra], capture_output=True, text=True)

    def test_every_entry_classified_exits_0(self):
        r = self.run_classify("src/core/* | if (x > 0) | branch | reason | x is never 0\n"
                              "src/core/f.cpp | throw_error | line | test:e2e.f | killed rank\n")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("src/core/f.cpp:2: branches 1 of 2 never taken: reason", r.stdout)
        self.assertIn("src/core/f.cpp:3: line never run: test", r.stdout)
        self.assertRegex(r.stdout, r"src/core\s+1\s+0\s+1\s+0")
        self.assertNotIn("src/io", r.stdout)  # folders not asked for are not listed

    def test_an_entry_without_a_reason_is_listed_and_fails(self):
        r = self.run_classify("src/core/f.cpp | if (x > 0) | branch | reason | x is never 0\n")
        self.assertEqual(r.returncode, 1)
        self.assertIn("unclassified: src/core/f.cpp:3: line never run: throw_error", r.stdout)

    def test_what_restricts_a_reason_to_lines_or_branches(self):
        r = self.run_classify("src/core/f.cpp | * | line | reason | never run\n")
        self.assertEqual(r.returncode, 1)
        self.assertIn("unclassified: src/core/f.cpp:2: branches 1 of 2", r.stdout)

    def test_a_reason_that_matches_nothing_is_stale_and_fails(self):
        r = self.run_classify("src/core/f.cpp | * | any | gcov | all of it\n"
                              "src/core/f.cpp | no such code | any | reason | gone\n")
        self.assertEqual(r.returncode, 1)
        self.assertIn("stale:", r.stdout)
        self.assertIn("'no such code'", r.stdout)

    def test_a_malformed_reason_is_refused_by_file_and_line(self):
        for bad, words in (("src/core/f.cpp | * | any | reason\n", "want 5 fields"),
                           ("src/core/f.cpp | * | some | reason | x\n", "WHAT is 'some'"),
                           ("src/core/f.cpp | * | any | maybe | x\n", "CLASS is 'maybe'")):
            r = self.run_classify("# a comment\n\n" + bad)
            self.assertNotEqual(r.returncode, 0)
            self.assertIn("core.txt:3:", r.stderr)
            self.assertIn(words, r.stderr)

    def test_the_projects_reasons_parse(self):
        sys.path.insert(0, HERE)
        import classify
        reasons = classify.parse_reasons(os.path.join(HERE, "reasons"))
        self.assertIsInstance(reasons, list)


if __name__ == "__main__":
    unittest.main()
