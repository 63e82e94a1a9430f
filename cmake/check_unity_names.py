#!/usr/bin/env python3
"""Fails when two source files of one target define a file-local function
of the same name.

The libraries and the test binaries build as unity batches (BLOOMSHARD_UNITY_BUILD): CMake
includes several .cpp files of a target into one translation unit, so the
file-local helpers of those files (in an anonymous namespace, or `static`)
meet in one scope. Same name and same parameters is a redefinition error,
loud. Same name and other parameters is an overload set that did not exist
before: a call may then pick the other file's helper, silently. Which files
share a batch changes whenever a file is added, so the rule is per target:
no two files of one target folder (src/core, src/io, ..., tests/core, ...)
define a file-local function of the same name in the same namespace.

A heuristic over clang-formatted code: a definition starts at column 0 inside
`namespace {` ... `}  // namespace`, or at column 0 with `static`; namespaces
open with `namespace NAME {` and close with `}  // namespace` at column 0.

Usage: check_unity_names.py ROOT [--only FOLDER,...]
  each folder under ROOT is one target; exit 1 and a list when a name repeats
"""
import collections
import pathlib
import re
import sys

# A function's first line at column 0: return type, then `name(`.
DEFINITION = re.compile(
    r"^(?:static |inline |constexpr |\[\[nodiscard\]\] )*"
    r"[A-Za-z_][\w:<>,\s*&]*?[\s*&]([a-z_]\w*)\(")
KEYWORDS = {"return", "if", "for", "while", "switch", "sizeof", "decltype", "operator"}


def local_functions(path):
    """The file-local functions defined in `path`, each as the namespace it
    is declared in and its name ("bloomshard::io::{anonymous}", "owned_by")."""
    names = set()
    scopes = []  # the namespaces open at this line, "" for an anonymous one
    for line in path.read_text(encoding="utf-8").split("\n"):
        opened = re.match(r"^namespace ([\w:]*)\s*\{", line)
        if opened:
            scopes.append(opened.group(1))
            continue
        if scopes and re.match(r"^\}\s*//\s*namespace\b", line):
            scopes.pop()
            continue
        in_anonymous = "" in scopes
        if not (in_anonymous or line.startswith("static ")):
            continue
        match = DEFINITION.match(line)
        if match and match.group(1) not in KEYWORDS:
            scope = "::".join(name or "{anonymous}" for name in scopes)
            names.add((scope, match.group(1)))
    return names


def main(argv):
    args = argv[1:]
    only = None
    if len(args) == 3 and args[1] == "--only":
        only = set(args[2].split(","))
    elif len(args) != 1:
        print("\n".join(__doc__.strip().split("\n")[-2:]), file=sys.stderr)
        return 2
    root = pathlib.Path(args[0])
    files_of = collections.defaultdict(list)
    for path in sorted(root.rglob("*.cpp")):
        target = path.relative_to(root).parts[0]
        if only is not None and target not in only:
            continue
        for scope, name in local_functions(path):
            files_of[(target, scope, name)].append(str(path.relative_to(root)))
    repeated = sorted((key, files) for key, files in files_of.items() if len(files) > 1)
    for (target, scope, name), files in repeated:
        print(f"{root.name}/{target}: file-local function '{scope}::{name}' defined in " +
              ", ".join(files))
    if repeated:
        print("rename them apart: in a unity batch they would be one overload set"
              " (cmake/check_unity_names.py)")
        return 1
    print(f"no file-local function name repeats within a target folder of {root}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
