#!/usr/bin/env python3
"""code_size.py: no function in src/ over 100 lines, no file over 800 lines.

    tests/code_size.py [--src SRC_DIR] [--max-function 100] [--max-file 800]

Functions and their extents come from universal-ctags (`ctags --fields=+ne
--output-format=json`: a function's first line and its closing brace's line, both
counted); files are counted in lines, as `wc -l` does, over every .c and .h of
SRC_DIR. Prints each function and file over its limit and exits 1 when one is not on
the allow-list below, 0 otherwise; 77 (CTest's "skipped") when universal-ctags is
missing. An allow-list entry that no longer needs its place is printed too, and
fails, so the list shrinks as the work it names lands.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys

# Functions and files over the limits while they are being rewritten (none now: an
# entry comes off the list in the commit that brings it under the limit, and the test
# fails on an entry that no longer needs its place).
ALLOWED_FUNCTIONS = set()
ALLOWED_FILES = set()


def ctags_functions(project, src):
    """[(path relative to project, name, lines)] of every function ctags finds in src."""
    cmd = ["ctags", "--fields=+ne", "--output-format=json", "--kinds-C=f", "-R", "-f", "-", src]
    text = subprocess.run(cmd, cwd=project, check=True, capture_output=True, text=True).stdout
    out = []
    for line in text.splitlines():
        tag = json.loads(line)
        if tag.get("_type") != "tag" or tag.get("kind") != "function":
            continue
        if "line" not in tag or "end" not in tag:
            raise SystemExit(f"code_size: ctags gave no extent for {tag.get('name')}")
        out.append((os.path.normpath(tag["path"]), tag["name"], tag["end"] - tag["line"] + 1))
    return out


def file_lines(project, src):
    """[(path relative to project, lines)] of every .c and .h file of src."""
    out = []
    for dirpath, _, names in os.walk(os.path.join(project, src)):
        for n in sorted(names):
            if n.endswith((".c", ".h")):
                path = os.path.join(dirpath, n)
                with open(path, "rb") as f:
                    out.append((os.path.relpath(path, project), f.read().count(b"\n")))
    return sorted(out)


def is_universal_ctags():
    if not shutil.which("ctags"):
        return False
    r = subprocess.run(["ctags", "--version"], capture_output=True, text=True)
    return r.returncode == 0 and "Universal Ctags" in r.stdout


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--src", default="src", help="the sources, relative to the project")
    ap.add_argument("--max-function", type=int, default=100, help="lines a function may have")
    ap.add_argument("--max-file", type=int, default=800, help="lines a file may have")
    args = ap.parse_args()
    project = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    if not is_universal_ctags():
        print("code_size: universal-ctags not found (apt-get install universal-ctags): skipped")
        return 77

    funcs = ctags_functions(project, args.src)
    files = file_lines(project, args.src)
    if not funcs:
        print(f"code_size: ctags found no function in {args.src}")
        return 1
    bad = 0
    long_funcs = sorted((f for f in funcs if f[2] > args.max_function), key=lambda f: -f[2])
    print(f"functions over {args.max_function} lines ({len(long_funcs)} of {len(funcs)}):")
    for path, name, n in long_funcs:
        allowed = (path, name) in ALLOWED_FUNCTIONS
        bad += not allowed
        print(f"  {n:5d}  {path} {name}" + ("  (allowed for now)" if allowed else ""))
    long_files = [f for f in files if f[1] > args.max_file]
    print(f"files over {args.max_file} lines ({len(long_files)} of {len(files)}):")
    for path, n in long_files:
        allowed = path in ALLOWED_FILES
        bad += not allowed
        print(f"  {n:5d}  {path}" + ("  (allowed for now)" if allowed else ""))

    over = {(p, name) for p, name, _ in long_funcs} | {p for p, _ in long_files}
    stale = sorted(a for a in ALLOWED_FUNCTIONS if a not in over)
    stale_files = sorted(a for a in ALLOWED_FILES if a not in over)
    if stale or stale_files:
        print("on the allow-list but no longer over the limit (take them off):")
        for path, name in stale:
            print(f"  {path} {name}")
        for path in stale_files:
            print(f"  {path}")
        bad += len(stale) + len(stale_files)
    print(f"\n{'FAIL' if bad else 'ok'}: {bad} finding(s)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
