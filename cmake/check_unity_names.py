#!/usr/bin/env python3
"""Fails when two source files of one library define a file-local function
of the same name.

The libraries build as unity batches (BLOOMSHARD_UNITY_BUILD): CMake
includes several .cpp files of a target into one translation unit, so the
file-local helpers of those files (in an anonymous namespace, or `static`)
meet in one scope. Same name and same parameters is a redefinition error,
loud. Same name and other parameters is an overload set that did not exist
before: a call may then pick the other file's helper, silently. Which files
share a batch changes whenever a file is added, so the rule is per target:
no two files of one library folder (src/core, src/io, ...) define a
file-local function of the same name.

A heuristic over clang-formatted code: a definition starts at column 0 inside
`namespace {` ... `}  // namespace`, or at column 0 with `static`.

Usage: check_unity_names.py SRC_DIR   (exit 1 and a list when a name repeats)
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
    """The names of the file-local functions defined in `path`."""
    names = set()
    in_anonymous = False
    for line in path.read_text(encoding="utf-8").split("\n"):
        if re.match(r"^namespace \{", line):
            in_anonymous = True
            continue
        if in_anonymous and re.match(r"^\}\s*//\s*namespace\s*$", line):
            in_anonymous = False
            continue
        if not (in_anonymous or line.startswith("static ")):
            continue
        match = DEFINITION.match(line)
        if match and match.group(1) not in KEYWORDS:
            names.add(match.group(1))
    return names


def main(argv):
    if len(argv) != 2:
        print(__doc__.strip().split("\n")[-1], file=sys.stderr)
        return 2
    src = pathlib.Path(argv[1])
    files_of = collections.defaultdict(lambda: collections.defaultdict(list))
    for path in sorted(src.rglob("*.cpp")):
        library = path.relative_to(src).parts[0]
        for name in local_functions(path):
            files_of[library][name].append(str(path.relative_to(src)))
    repeated = [(library, name, files)
                for library, names in sorted(files_of.items())
                for name, files in sorted(names.items()) if len(files) > 1]
    for library, name, files in repeated:
        print(f"src/{library}: file-local function '{name}' defined in " + ", ".join(files))
    if repeated:
        print("rename them apart: in a unity batch they would be one overload set"
              " (cmake/check_unity_names.py)")
        return 1
    print(f"no file-local function name repeats within a library of {src}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
