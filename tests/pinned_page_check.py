#!/usr/bin/python3
"""pinned_page_check.py MHAVIZ: every head of a pinned compare view can be exported.

`-H 1 --sample 7 --size 800x600 --compare h=64`: the pinned pane pages like the
live one. --pinned-page K for K = 1, 2, ... exports pages whose captions
("heads A-B of 64", "head A of 64", or as short as "A-B/64") together name every head 1..64 once, in
order; the page after the last is exit 2 with one line naming --pinned-page and
nothing written; --pinned-page without --compare is exit 2.
Exits 1 with "expected X, got Y" lines on any failure."""
import os
import re
import subprocess
import sys
import tempfile

FAILURES = []
BASE = ["-H", "1", "--sample", "7", "--size", "800x600", "--compare", "h=64"]


def fail(where, expected, got):
    FAILURES.append(where)
    print(f"FAIL {where}: expected {expected}, got {got}", file=sys.stderr)


def run(mhaviz, args, cwd):
    return subprocess.run([mhaviz] + args, cwd=cwd, capture_output=True, timeout=120)


def main():
    if len(sys.argv) != 2:
        print("usage: pinned_page_check.py MHAVIZ", file=sys.stderr)
        return 2
    mhaviz = os.path.abspath(sys.argv[1])
    # the caption, from its longest form to its shortest ("9-10/64" in a narrow pane)
    caption = re.compile(r">(?:heads )?(\d+)\u2013(\d+)(?: of |/)64[ <(]|>(?:head )?(\d+)(?: of |/)64[ <(]")
    with tempfile.TemporaryDirectory(prefix="mhaviz-pinned-") as d:
        covered = []
        k = 0
        while len(covered) < 64 and k < 64:
            k += 1
            name = f"p{k}.svg"
            p = run(mhaviz, BASE + ["--pinned-page", str(k), "--export", name], d)
            if p.returncode != 0:
                fail(f"--pinned-page {k}", "exit 0", f"{p.returncode} {p.stderr[:200]!r}")
                break
            svg = open(os.path.join(d, name), encoding="utf-8").read()
            m = caption.search(svg)
            if not m:
                fail(f"--pinned-page {k}", "a caption 'heads A-B of 64'", "none")
                break
            a, b = (int(m.group(1)), int(m.group(2))) if m.group(1) else (int(m.group(3)),) * 2
            covered.extend(range(a, b + 1))
        if covered != list(range(1, 65)):
            fail("pinned pages", "heads 1..64 once, in order, over the pages", covered)
        pages = k
        p = run(mhaviz, BASE + ["--pinned-page", str(pages + 1), "--export", "over.png"], d)
        err = p.stderr.decode()
        want = f"mhaviz: --pinned-page {pages + 1}: at 800x600 the pinned view has {pages} pages"
        if p.returncode != 2 or err.count("\n") != 1 or not err.startswith(want):
            fail(f"--pinned-page {pages + 1}", f"exit 2 and {want!r}", f"{p.returncode} {err!r}")
        if os.path.exists(os.path.join(d, "over.png")):
            fail(f"--pinned-page {pages + 1}", "nothing written", "over.png")
        p = run(mhaviz, ["--pinned-page", "2", "--export", "x.png"], d)
        if p.returncode != 2 or b"--pinned-page 2: only with --compare" not in p.stderr:
            fail("--pinned-page without --compare", "exit 2 naming it", p.stderr)
        print(f"pinned_page_check: {pages} pages hold heads 1-64" if not FAILURES else "")
    return 1 if FAILURES else 0


if __name__ == "__main__":
    sys.exit(main())
