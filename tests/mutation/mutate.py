#!/usr/bin/python3
"""A mutation check of bloomshard's own tests (docs/testing.md "Mutation check").

Small changes of the kind a real bug makes are applied one at a time to the
chosen source files; each mutant is rebuilt incrementally in a separate build
tree (build/mutation) and the tests that guard its folder are run in stages,
cheapest first, until the first failure. A mutant that no test fails is a
survivor: the report lists each with its place and text, for a verdict
(equivalent, or the test that kills it).

Operators (one change per mutant, on one line of code):
  negate    if (C) / while (C)            -> if (!(C)) / while (!(C))
  drop      a call statement `f(...);`    -> `;`
  compare   < <= > >= == !=               -> <= < >= > != ==
  offset    an integer literal N          -> N + 1 (and N - 1 for N > 0)
  return    the first statement of a function body -> `return;` / `return {};`

Python files (the pure-Python package python/bloomshard, folder pypkg, and
the documented examples python/examples, folder pyexamples) get
the same operators through the `ast` module (python_mutants_of): `if C:` ->
`if not (C):`, a comparison flipped (`in` <-> `not in`, `is` <-> `is not`
too), an int literal moved by one, a call statement replaced by `pass`,
`return None` before a function's first statement (after its docstring).

Not mutated: statements that only report (std::cerr, write_stderr_line,
fprintf(stderr), the watchdog's set_activity label), from their first line
to their `;`. Their conditions are mutated (`if (rank == 0) std::cerr ...`).

Sampling is deterministic: the mutants of each folder are listed in file and
line order and --per-folder of them drawn with --seed. Every mutated file is
restored from the bytes read before the change whatever happens (try/finally,
and at exit); the script refuses to start if git reports changes under src/
or python/.
With --copy DIR the worktree's files (git ls-files) are copied to DIR first
and mutated there, so the worktree stays free for edits and builds while
the check runs.

A stage that runs past --test-timeout is reported as "timed out", apart
from the killed: a hang, or only the load of a shared machine.

Not in CI: it rebuilds and reruns tests once per mutant (~20-60 s each for
store and core, 40-160 s for run, guard and python on 2 shared cores).
Folders: store core run guard python (the first five), io comm state split
round feed options (src/io, src/comm, src/app/<name>), pypkg pyexamples.
Usage: tests/mutation/mutate.py [--folders store core ...] [--per-folder N]
       [--seed S] [--report FILE] [--list] [--broad] [--copy DIR]
       [--deadline HH:MM] [--test-timeout S]
"""
import argparse
import ast
import atexit
import itertools
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# folder -> (sources, build targets, stages, broad ctest regex).
# Stages run in order and stop at the first failure: the cheapest and most
# discriminating first. A stage is either a GoogleTest binary (run with
# --gtest_fail_fast: one process instead of one ctest process per test) or a
# ctest regex (run with --stop-on-failure). --broad reruns each survivor
# under ctest over the wider regex (every test that reaches the folder's code).
APP_UNITS = ("gtest", "tests/app/bloomshard_app_tests")
# Dedup runs that start, stop, resume and finish on a state, checked against
# the oracle: 5-20 s each here.
RUN_E2E = ("ctest", r"^(e2e\.(checkpoint_rounds|split_finished|split_resume_remembered|"
                    r"mixed\.3ranks|incremental\.3ranks|finished_metrics|changes\.1ranks|"
                    r"window_resume\.3ranks|window_slot_stop\.2ranks|inputs_empty\.2ranks|v1_state|"
                    r"paragraph_kill\.2ranks|"
                    r"split\.2ranks)|cli\.plan_line_once)$")
# Every field a state fixes, every input-change signal: 15-45 s each.
GUARDS = ("ctest", r"^guards\.(state\.resume|inputs\.running)$")
FOLDERS = {
    "store": (["src/store"], ["bloomshard_store_tests"],
              [("gtest", "tests/store/bloomshard_store_tests")], r"^Store|^io_|^python"),
    "core": (["src/core"], ["bloomshard_core_tests"],
             [("gtest", "tests/core/bloomshard_core_tests")], r"^[A-Z]|^core\.|^io_|^app_"),
    "run": (["src/app/run"], ["bloomshard", "bloomshard_app_tests"], [APP_UNITS, RUN_E2E, GUARDS],
            r"^e2e\.|^cli\.|^faults\.|^guards\."),
    "guard": (["src/app/guard"], ["bloomshard", "bloomshard_app_tests"],
              [APP_UNITS, ("ctest", r"^(guards\.output_dir|cli\.messages|e2e\.(mixed\.3ranks|"
                                    r"incremental\.3ranks|changes\.1ranks|split\.2ranks))$")],
              r"^e2e\.|^cli\.|^guards\."),
    "python": (["src/python"], ["bloomshard", "bloomshard_python"],
               [("ctest", r"^python\.(mutation_kills|state\.1ranks|v1_state|key_scheme|normalization)$"),
                ("ctest", r"^(python\.(damage|state\.3ranks)|guards\.python)$")], r"^python|^guards\.python"),
    # The folders below were added after the first five (issue 31: mutants
    # anywhere in src/ and python/). Their e2e stages hold runs of 1-15 s
    # that reach the folder's code; the guards (~250 s each) are left to --broad.
    "io": (["src/io"], ["bloomshard", "bloomshard_io_tests", "bloomshard_io_mpi_tests"],
           [("gtest", "tests/io/bloomshard_io_tests"),
            ("ctest", r"^io_checkpoint\.(1|3)ranks$"),
            ("ctest", r"^e2e\.(checkpoint_rounds|rejects\.1ranks|mixed\.2ranks|v1_state|corruption|"
                      r"split\.2ranks|paragraph\.1ranks|state_mark_refusals)$")],
           r"^io_|^e2e\.|^faults\.(eio|disk_full|lost_outputs)|^guards\.state"),
    "comm": (["src/comm"], ["bloomshard", "bloomshard_comm_tests"],
             [("ctest", r"^comm_router\.(1|3)ranks$"),
              ("ctest", r"^e2e\.(mixed\.2ranks|split\.4ranks|checkpoint_rounds|input_order\.3ranks|"
                        r"mpiio_hints|transport_default)$")],
             r"^comm_|^e2e\.|^faults\.(stall|kill_rank)"),
    "state": (["src/app/state"], ["bloomshard", "bloomshard_app_tests"],
              [APP_UNITS,
               ("ctest", r"^(cli\.exact_options|e2e\.(merge\.1ranks|query\.1ranks|commands_keyscheme\.1ranks|"
                         r"merge_crash\.3ranks|window_annotate\.2ranks|"
                         r"state_mark_refusals|minhash_query_confirm\.1ranks|minhash_merge_confirm\.1ranks|"
                         r"minhash_window\.1ranks|v1_state))$")],
              r"^e2e\.(commands|merge|query|minhash_(query|merge|window)|window)|^guards\.state"),
    "split": (["src/app/split"], ["bloomshard", "bloomshard_app_tests"],
              [APP_UNITS,
               ("ctest", r"^e2e\.(split\.2ranks|split_finished|split_resume_remembered|split\.4ranks|"
                         r"input_order\.2ranks|input_order_state\.2ranks|input_order_state_kill\.2ranks)$")],
              r"^e2e\.(split|input_order)|^faults\.finish_stop"),
    "round": (["src/app/round"], ["bloomshard", "bloomshard_app_tests", "bloomshard_app_mpi_tests"],
              [APP_UNITS, ("ctest", r"^app_round\.(1|3)ranks$"),
               ("ctest", r"^e2e\.(mixed\.2ranks|checkpoint_rounds|input_order\.3ranks|minhash\.2ranks|"
                         r"paragraph\.2ranks|window_slot_stop\.2ranks|split\.2ranks)$")],
              r"^app_round|^e2e\."),
    "feed": (["src/app/feed"], ["bloomshard", "bloomshard_app_tests"],
             [APP_UNITS,
              ("ctest", r"^e2e\.(mixed\.2ranks|rejects\.1ranks|annotate_basic\.2ranks|window_annotate\.2ranks|"
                        r"paragraph\.2ranks|minhash\.2ranks|input_order\.2ranks|input_error_stateless|"
                        r"paragraph_annotate\.1ranks|minhash_annotate_confirm\.1ranks)$")],
             r"^e2e\.|^guards\.inputs"),
    "options": (["src/app/options"], ["bloomshard", "bloomshard_app_tests"],
                [APP_UNITS,
                 ("ctest", r"^(cli\.(messages|exact_options|plan_line|output_levels)|"
                           r"e2e\.(start_refusals|mixed\.2ranks|paragraph\.1ranks|minhash\.1ranks|"
                           r"window_annotate\.1ranks))$")],
                r"^cli\.|^e2e\.|^faults\.(start|path)_rules"),
    # The pure-Python package (and the documented no-build reader, which its
    # tests import): the build copies python/bloomshard/*.py next to the
    # extension, so its targets rebuild that copy (see refresh_python_copy).
    "pypkg": (["python/bloomshard"], ["bloomshard", "bloomshard_python"],
              [("ctest", r"^python\.(state\.1ranks|coverage|mutation_kills)$"),
               ("ctest", r"^python\.(v1_state|key_scheme|normalization|minhash_state|install)$")],
              r"^python|^guards\.python"),
    # The documented examples: the reader without the extension (h5py alone,
    # test_pure_reader.py, test_v1_state.py, test_damage.py) and the JSONL
    # decontamination filter (test_filter.py). Their own folder, or the
    # reader's tables of hash constants would crowd the package's draw.
    "pyexamples": (["python/examples"], ["bloomshard", "bloomshard_python"],
                   [("ctest", r"^python\.(state\.1ranks|v1_state)$"), ("ctest", r"^python\.damage$")],
                   r"^python"),
}

CMP_SWAP = {"<": "<=", "<=": "<", ">": ">=", ">=": ">", "==": "!=", "!=": "=="}
CMP_RE = re.compile(r"(?<=\s)(<=|>=|==|!=|<|>)(?=\s)")
INT_RE = re.compile(r"(?<![\w.'])(\d+)(?![\w.'])")
CALL_STMT_RE = re.compile(r"^(\s*)((?:[A-Za-z_][\w:]*(?:\.|->))*[A-Za-z_][\w:]*(?:<[^;]*>)?\(.*\));\s*$")
COND_RE = re.compile(r"\b(if|while)\s*\(")
# Statements that only report (stderr messages, the watchdog's activity label):
# their mutants change words on stderr, not what a job computes or writes.
MESSAGE_RE = re.compile(r"^(std::cerr\b|write_stderr_line\(|std::fprintf\(stderr|fprintf\(stderr|set_activity\()")
SKIP_WORDS = ("return", "throw", "delete", "case", "static_assert", "assert", "sizeof", "new ",
              "co_", "template", "using", "typedef", "namespace", "#")


def code_part(line):
    """The line without a trailing // comment (strings left as they are)."""
    out, in_str, i = [], False, 0
    while i < len(line):
        c = line[i]
        if c == '"' and (i == 0 or line[i - 1] != "\\"):
            in_str = not in_str
        if not in_str and line.startswith("//", i):
            break
        out.append(c)
        i += 1
    return "".join(out)


def outside_strings(line, pos):
    """True if column pos is not inside a "..." or '...' literal."""
    quote = None
    for i, c in enumerate(line[:pos]):
        if quote and c == quote and line[i - 1] != "\\":
            quote = None
        elif not quote and c in "\"'":
            quote = c
    return quote is None


def matching_paren(text, open_pos):
    depth = 0
    for i in range(open_pos, len(text)):
        if text[i] == "(":
            depth += 1
        elif text[i] == ")":
            depth -= 1
            if depth == 0:
                return i
    return -1


def code_lines(lines):
    """Indexes of lines that are code: not comments, not preprocessor, not
    inside a raw string or a block comment."""
    keep, in_raw, in_block = [], False, False
    for n, line in enumerate(lines):
        s = line.strip()
        if in_raw:
            if ')"' in line:
                in_raw = False
            continue
        if in_block:
            if "*/" in line:
                in_block = False
            continue
        if s.startswith("/*"):
            in_block = "*/" not in s
            continue
        if 'R"(' in line and ')"' not in line.split('R"(', 1)[1]:
            in_raw = True
            continue
        if not s or s.startswith("//") or s.startswith("#"):
            continue
        keep.append(n)
    return keep


def function_starts(lines):
    """Lines that open a function body at namespace level: a line ending in
    `{` at column 0 that is not a namespace, struct, class, enum or
    initializer; returns (line index of `{`, is_void)."""
    out = []
    for n, line in enumerate(lines):
        if not line.rstrip().endswith("{") or line.startswith((" ", "\t", "}")):
            continue
        if re.match(r"(namespace|struct|class|enum|union|extern|inline constexpr|constexpr \w+ \w+\[)",
                    line) or "=" in line.split("(")[0]:
            continue
        # The signature may span lines back to the previous blank or `}` line.
        start = n
        while start > 0 and lines[start - 1].strip() and not lines[start - 1].startswith(("}", "//", "#")):
            start -= 1
        sig = " ".join(l.strip() for l in lines[start:n + 1])
        if "(" not in sig or sig.startswith("//"):
            continue
        head = sig.split("(")[0]
        is_void = re.search(r"(^|\s)void\s+[\w:~]+$", head) is not None or re.search(r"[\w:]+::~?(\w+)::~?\1$", head) is not None \
            or re.search(r"\b(\w+)::\1$", head) is not None
        if re.search(r"\b(operator|->)\b", head) or "&" in head.split()[0] if head.split() else False:
            continue
        out.append((n, is_void))
    return out


def mutants_of(path):
    """Every mutant of one file: (line index, operator, new line, description)."""
    lines = open(os.path.join(ROOT, path)).read().split("\n")
    out = []
    code_at = code_lines(lines)
    in_message = False
    for i, n in enumerate(code_at):
        line = lines[n]
        code = code_part(line)
        stripped = code.strip()
        # A message statement, from its first line to its `;`.
        in_message = in_message or MESSAGE_RE.match(stripped) is not None
        if in_message:
            in_message = not stripped.endswith(";")
            continue
        # negate
        for m in COND_RE.finditer(code):
            if not outside_strings(code, m.start()):
                continue
            open_pos = m.end() - 1
            close = matching_paren(code, open_pos)
            if close < 0:
                continue
            cond = code[open_pos + 1:close]
            if cond.startswith("const ") or ";" in cond or "constexpr" in code[:open_pos]:
                continue
            new = line[:open_pos + 1] + "!(" + cond + ")" + line[close:]
            out.append((n, "negate", new, f"{m.group(1)} ({cond}) negated"))
        # compare
        for m in CMP_RE.finditer(code):
            if not outside_strings(code, m.start()) or "template" in code or "<<" in code or ">>" in code:
                continue
            op = m.group(1)
            new = line[:m.start()] + CMP_SWAP[op] + line[m.end():]
            out.append((n, "compare", new, f"{op} -> {CMP_SWAP[op]}"))
        # offset
        if not stripped.startswith(SKIP_WORDS[6:]) and "[" not in code.split("=")[0]:
            for m in INT_RE.finditer(code):
                if not outside_strings(code, m.start()):
                    continue
                if re.search(r"(std::|<|::)\s*$", code[:m.start()]) or code[m.end():m.end() + 1] == ">":
                    continue  # a template argument
                v = int(m.group(1))
                for delta in ((1, -1) if v > 0 else (1,)):
                    new = line[:m.start()] + str(v + delta) + line[m.end():]
                    out.append((n, "offset", new, f"{v} -> {v + delta}"))
        # drop
        m = CALL_STMT_RE.match(code)
        # A statement of its own: the code line before it ends one.
        prev = code_part(lines[code_at[i - 1]]).rstrip() if i > 0 else ";"
        if prev.endswith((";", "{", "}", ")", ":", "else")) and m and not stripped.startswith(SKIP_WORDS) and " = " not in code and "return" not in code:
            out.append((n, "drop", m.group(1) + ";", f"call dropped: {stripped}"))
    for n, is_void in function_starts(lines):
        if n + 1 < len(lines) and lines[n + 1].strip() and not lines[n + 1].strip().startswith("}"):
            indent = re.match(r"\s*", lines[n + 1]).group(0)
            stmt = "return;" if is_void else "return {};"
            new = indent + stmt + "  // mutant\n" + lines[n + 1]
            out.append((n + 1, "return", new, f"{stmt} before: {lines[n + 1].strip()}"))
    return out


PY_CMP_SWAP = {ast.Lt: ("<", "<="), ast.LtE: ("<=", "<"), ast.Gt: (">", ">="), ast.GtE: (">=", ">"),
               ast.Eq: ("==", "!="), ast.NotEq: ("!=", "=="), ast.In: ("in", "not in"),
               ast.NotIn: ("not in", "in"), ast.Is: ("is", "is not"), ast.IsNot: ("is not", "is")}


def python_mutants_of(path):
    """Every mutant of one Python file, found with the `ast` module (so
    strings, comments and docstrings are never touched), in the same form as
    mutants_of: (line index, operator, new line, description). Only nodes
    that sit on one line are mutated, so one line changes.
      negate   if C: / while C: / elif C:  -> if not (C):
      compare  < <= > >= == != in is       -> <= < >= > != == not in, is not
      offset   an int literal N            -> N + 1 (and N - 1 for N > 0)
      drop     a call statement `f(...)`   -> `pass`
      return   `return None` before a function's first statement (after its docstring)
    """
    text = open(os.path.join(ROOT, path)).read()
    lines = text.split("\n")
    tree = ast.parse(text)
    out = []

    def segment(node):
        return lines[node.lineno - 1].encode()[node.col_offset:node.end_col_offset].decode()

    def replace(node, new_text):
        raw = lines[node.lineno - 1].encode()
        return (raw[:node.col_offset] + new_text.encode() + raw[node.end_col_offset:]).decode()

    def one_line(node):
        return node.lineno == node.end_lineno

    for node in ast.walk(tree):
        if isinstance(node, (ast.If, ast.While)) and one_line(node.test):
            word = "while" if isinstance(node, ast.While) else "if"
            cond = segment(node.test)
            out.append((node.test.lineno - 1, "negate", replace(node.test, f"not ({cond})"),
                        f"{word} {cond} negated"))
        elif isinstance(node, ast.Compare) and one_line(node):
            raw = lines[node.lineno - 1].encode()
            left = node.left
            for op, right in zip(node.ops, node.comparators):
                old, new = PY_CMP_SWAP[type(op)]
                gap = raw[left.end_col_offset:right.col_offset].decode()
                m = re.search(r"(?<![<>=!\w])" + re.escape(old).replace(r"\ ", r"\s+") + r"(?![<>=\w])", gap)
                if m:
                    start = left.end_col_offset + len(gap[:m.start()].encode())
                    end = left.end_col_offset + len(gap[:m.end()].encode())
                    out.append((node.lineno - 1, "compare",
                                (raw[:start] + new.encode() + raw[end:]).decode(), f"{old} -> {new}"))
                left = right
        elif (isinstance(node, ast.Constant) and type(node.value) is int and one_line(node)):
            v = node.value
            for delta in ((1, -1) if v > 0 else (1,)):
                out.append((node.lineno - 1, "offset", replace(node, str(v + delta)), f"{v} -> {v + delta}"))
        elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Call) and one_line(node):
            out.append((node.lineno - 1, "drop", replace(node, "pass"), f"call dropped: {segment(node)}"))
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
                    and isinstance(body[0].value.value, str):
                body = body[1:]  # the docstring stays
            if body and body[0].lineno > node.lineno:
                first = lines[body[0].lineno - 1]
                indent = re.match(r"\s*", first).group(0)
                out.append((body[0].lineno - 1, "return", indent + "return None  # mutant\n" + first,
                            f"return None in {node.name} before: {first.strip()}"))
    return sorted(out, key=lambda m: (m[0], m[1], m[2]))


def sources(folder):
    """The files a folder's mutants are made in: .cpp (a header's mutant
    recompiles every includer) and .py; an entry may name one file."""
    files = []
    for d in FOLDERS[folder][0]:
        if os.path.isfile(os.path.join(ROOT, d)):
            files.append(d)
            continue
        for dirpath, _, names in os.walk(os.path.join(ROOT, d)):
            for name in names:
                if name.endswith((".cpp", ".py")):
                    files.append(os.path.relpath(os.path.join(dirpath, name), ROOT))
    return sorted(files)


def mutants_of_file(path):
    return python_mutants_of(path) if path.endswith(".py") else mutants_of(path)


def refresh_python_copy(path, build):
    """The build copies python/bloomshard/*.py into <build>/python/bloomshard
    (src/python/CMakeLists.txt) when the source is newer. A mutant and its
    restore may fall within one timestamp tick of that copy: make sure the
    copy holds the bytes of the source now, whatever make decided."""
    if not (path.startswith("python/bloomshard/") and path.endswith(".py")):
        return
    dst = os.path.join(build, "python", "bloomshard", os.path.basename(path))
    src = os.path.join(ROOT, path)
    if not os.path.exists(dst) or open(dst, "rb").read() != open(src, "rb").read():
        shutil.copyfile(src, dst)


def run(cmd, timeout):
    try:
        p = subprocess.run(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           timeout=timeout, text=True)
        return p.returncode, p.stdout
    except subprocess.TimeoutExpired as e:
        return 124, (e.stdout or b"").decode(errors="replace") if isinstance(e.stdout, bytes) else (e.stdout or "")


def run_stage(stage, args):
    """One stage of a folder's tests: (kind, what) as in FOLDERS. A test
    whose program was not built is the check's own error, never a kill."""
    kind, what = stage
    if kind == "gtest":
        return run([os.path.join(args.build, what), "--gtest_fail_fast"], args.test_timeout)
    rc, out = run(["ctest", "--test-dir", args.build, "-R", what, "-LE", "slurm|multihost",
                   "--stop-on-failure", "-j2", "--output-on-failure"], args.test_timeout)
    if "Not Run" in out or "Could not find executable" in out or "No tests were found" in out:
        sys.exit(f"mutate.py: stage {what} cannot run (a program not built, or no test):\n{out[-2000:]}")
    return rc, out


def first_failure(folder, output):
    """The name of the first failing test in a gtest or ctest output."""
    # MPI tests' gtest output keeps its colours under ctest: "[m" was read
    # into the name (e.g. "[mMpiError.CarriesCodeCallAndMpiText").
    output = re.sub(r"\x1b\[[0-9;]*m", "", output)
    for pat in (r"\[  FAILED  \] (\S+)", r"\d+/\d+ Test +#\d+: (\S+) .*(?:Failed|Timeout|Exception)",
                r"The following tests FAILED:\s*\n\s*\d+ - (\S+)"):
        m = re.search(pat, output)
        if m:
            return m.group(1)
    runs = re.findall(r"\[ RUN      \] (\S+)", output)
    if runs:  # a crash or a timeout: the test that was running
        return runs[-1] + " (crashed or timed out)"
    return "(failed: " + output.strip().split("\n")[-1][:120] + ")"


def copy_tree(dest):
    """Copies git's files of the worktree (working-tree bytes) into dest and
    returns dest: the mutants are made there, so the worktree stays free for
    edits and builds while a long check runs. Files whose size and mtime
    already match are left alone, so a second run rebuilds incrementally."""
    names = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, stdout=subprocess.PIPE,
                           check=True).stdout.decode().split("\0")
    for name in filter(None, names):
        src, dst = os.path.join(ROOT, name), os.path.join(dest, name)
        if not os.path.isfile(src):
            continue
        st = os.stat(src)
        if os.path.exists(dst):
            dt = os.stat(dst)
            if dt.st_size == st.st_size and int(dt.st_mtime) == int(st.st_mtime):
                continue
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        shutil.copy2(src, dst)
    return dest


class Restorer:
    """Holds the original bytes of the file being mutated; restores it on
    exit whatever happens."""

    def __init__(self):
        self.path, self.original = None, None
        atexit.register(self.restore)

    def mutate(self, path, text):
        self.path = os.path.join(ROOT, path)
        self.original = open(self.path, "rb").read()
        with open(self.path, "w") as f:
            f.write(text)

    def restore(self):
        if self.path is not None:
            with open(self.path, "wb") as f:
                f.write(self.original)
            self.path = None


def main():
    global ROOT
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--folders", nargs="+", default=["store", "core"], choices=sorted(FOLDERS))
    ap.add_argument("--per-folder", type=int, default=20, help="mutants drawn per folder")
    ap.add_argument("--seed", type=int, default=31)
    ap.add_argument("--ops", nargs="+", default=["negate", "drop", "compare", "offset", "return"])
    ap.add_argument("--build", default=None, help="build tree (default: build/mutation of the tree mutated)")
    ap.add_argument("--copy", default=None,
                    help="mutate a copy of the worktree made in this folder (e.g. build/mutation-src), "
                         "not the worktree itself")
    ap.add_argument("--report", default=None, help="write the report (markdown) here too")
    ap.add_argument("--list", action="store_true", help="list the drawn mutants, build nothing")
    ap.add_argument("--broad", action="store_true",
                    help="rerun each survivor against the folder's broad ctest regex")
    ap.add_argument("--test-timeout", type=int, default=300,
                    help="seconds; a hang past it kills the mutant (the ctest TIMEOUT of a unit)")
    ap.add_argument("--skip", type=int, default=0,
                    help="leave out the first N drawn mutants (run before, e.g. by a stopped check)")
    ap.add_argument("--only", default=None,
                    help="run only these drawn mutants: their numbers in the drawn order, e.g. 4,10,13")
    ap.add_argument("--deadline", default=None, help="UTC HH:MM: start no mutant after it")
    args = ap.parse_args()

    dirty = subprocess.run(["git", "status", "--porcelain", "--", "src", "python"], cwd=ROOT,
                           stdout=subprocess.PIPE, text=True).stdout
    if dirty.strip() and not args.list:
        sys.exit("mutate.py: src/ or python/ has uncommitted changes (git status):\n" + dirty +
                 "commit or stash them first: every mutated file is restored to its committed bytes")

    if args.copy and not args.list:
        ROOT = copy_tree(os.path.abspath(args.copy))
    args.build = os.path.abspath(args.build or os.path.join(ROOT, "build", "mutation"))

    rng = random.Random(args.seed)
    per_folder = []
    for folder in args.folders:
        pool = [(folder, path, m) for path in sources(folder) for m in mutants_of_file(path)
                if m[1] in args.ops]
        pick = sorted(rng.sample(range(len(pool)), min(args.per_folder, len(pool))))
        per_folder.append([pool[i] for i in pick])
        print(f"{folder}: {len(pool)} mutants, {len(pick)} drawn", flush=True)
    # Folders in turn, so that a --deadline cuts each folder's share alike.
    drawn = [m for group in itertools.zip_longest(*per_folder) for m in group if m]
    if args.list:
        for folder, path, (n, op, new, desc) in drawn:
            print(f"{folder} {path}:{n + 1} {op}: {desc}")
        return 0

    # The mutation tree shares the compiler cache with the worktree's other
    # trees: paths relative to the worktree hash alike in both.
    os.environ.setdefault("CCACHE_BASEDIR", ROOT)
    if not os.path.exists(os.path.join(args.build, "CMakeCache.txt")):
        rc, out = run(["cmake", "--preset", "release", "-B", args.build,
                       "-DCMAKE_CXX_COMPILER_LAUNCHER=ccache", "-DCMAKE_C_COMPILER_LAUNCHER=ccache"], 600)
        if rc != 0:
            sys.exit("mutate.py: configure failed:\n" + out)
    targets = sorted({t for f in args.folders for t in FOLDERS[f][1]})
    rc, out = run(["cmake", "--build", args.build, "--target", *targets, "-j2"], 3600)
    if rc != 0:
        sys.exit("mutate.py: the unmutated tree does not build:\n" + out[-3000:])

    restorer = Restorer()
    # A stop by kill (TERM) or Ctrl-C (INT, ignored in a background job) goes
    # through the finally that restores the mutated file.
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda signum, frame: sys.exit(128 + signum))
    results = []
    for i, (folder, path, (n, op, new, desc)) in enumerate(drawn):
        if i < args.skip or (args.only and str(i + 1) not in args.only.split(",")):
            continue
        if args.deadline and time.strftime("%H:%M", time.gmtime()) >= args.deadline:
            print(f"deadline {args.deadline} UTC reached: {len(drawn) - i} mutants not run", flush=True)
            break
        src, targets, stages, broad = FOLDERS[folder]
        text = open(os.path.join(ROOT, path)).read().split("\n")
        text[n] = new
        t0 = time.time()
        try:
            restorer.mutate(path, "\n".join(text))
            rc, out = run(["cmake", "--build", args.build, "--target", *targets, "-j2"], 1800)
            refresh_python_copy(path, args.build)
            if rc != 0:
                verdict, test = "uncompilable", ""
            else:
                if args.broad:
                    stages = stages + [("ctest", broad)]
                verdict, test = "survived", ""
                for stage in stages:
                    rc, out = run_stage(stage, args)
                    if rc == 124:
                        verdict, test = "timeout", f"{stage[1]} ran past {args.test_timeout} s"
                        break
                    if rc != 0:
                        verdict, test = "killed", first_failure(folder, out)
                        break
        finally:
            restorer.restore()
            refresh_python_copy(path, args.build)
        results.append((folder, path, n, op, desc, verdict, test))
        print(f"[{i + 1}/{len(drawn)}] {verdict:12} {path}:{n + 1} {op}: {desc}"
              f"{' <- ' + test if test else ''} ({time.time() - t0:.0f} s)", flush=True)

    # The files are restored, but the tree still holds the last mutant's
    # objects: rebuild, so that a test run in it afterwards (by hand, or
    # ctest on this tree) checks the real code, not a mutant.
    if results:
        targets = sorted({t for f in args.folders for t in FOLDERS[f][1]})
        rc, out = run(["cmake", "--build", args.build, "--target", *targets, "-j2"], 1800)
        if rc != 0:
            print("mutate.py: the restored tree does not rebuild:\n" + out[-3000:], flush=True)
    report = render(results, args)
    print(report)
    if args.report:
        with open(args.report, "w") as f:
            f.write(report)
    return 0


def render(results, args):
    lines = [f"mutation check: seed {args.seed}, {args.per_folder} per folder, operators {' '.join(args.ops)}",
             "", "| folder | mutants run | uncompilable | killed | timed out | survived | kill ratio |",
             "| --- | --- | --- | --- | --- | --- | --- |"]
    for folder in args.folders:
        rs = [r for r in results if r[0] == folder]
        built = [r for r in rs if r[5] != "uncompilable"]
        killed = sum(r[5] == "killed" for r in built)
        hung = sum(r[5] == "timeout" for r in built)
        ratio = f"{killed}/{len(built)}" + (f" ({100 * killed / len(built):.0f}%)" if built else "")
        lines.append(f"| {folder} | {len(rs)} | {len(rs) - len(built)} | {killed} | {hung} | "
                     f"{len(built) - killed - hung} | {ratio} |")
    lines += ["", "timed out (a hang, or the load: rerun it alone before counting it killed):"]
    lines += [f"- {p}:{n + 1} {op}: {desc}" for _, p, n, op, desc, v, _ in results if v == "timeout"]
    lines += ["", "survivors:"]
    lines += [f"- {p}:{n + 1} {op}: {desc}" for _, p, n, op, desc, v, _ in results if v == "survived"]
    lines += ["", "killed by:"]
    lines += [f"- {p}:{n + 1} {op}: {desc} <- {t}" for _, p, n, op, desc, v, t in results if v == "killed"]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.exit(main())
