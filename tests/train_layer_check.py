#!/usr/bin/python3
"""train_layer_check.py MHAVIZ: --layer L picks the trained model's layer that
--train ... --export draws.

`--train induction --steps 200` (two layers) exported with --layer 1 and with
--layer 2 must give different PNGs; without --layer the figure is --layer 1's;
the SVG of each names its layer ("layer 2 of 2"). A bad --layer (0, 3 on the
two-layer run, 2 on a one-layer run, not a number, without --train, without
--export) exits 2 with exactly one line on stderr starting "mhaviz: --layer",
nothing on stdout (nothing trained: --train prints its summary there) and nothing
written. Exits 1 with "expected X, got Y" lines on any failure."""
import hashlib
import os
import subprocess
import sys
import tempfile

FAILURES = []


def fail(where, expected, got):
    FAILURES.append(where)
    print(f"FAIL {where}: expected {expected}, got {got}", file=sys.stderr)


def run(mhaviz, args, cwd):
    return subprocess.run([mhaviz] + args, cwd=cwd, capture_output=True, timeout=120)


TRAIN = ["--train", "induction", "--steps", "200"]

BAD = [
    TRAIN + ["--layer", "3", "--export", "f.png"],
    TRAIN + ["--layer", "0", "--export", "f.png"],
    TRAIN + ["--layer", "two", "--export", "f.png"],
    TRAIN + ["--layer", "", "--export", "f.png"],
    TRAIN + ["--layers", "1", "--layer", "2", "--export", "f.png"],
    ["--train", "pair", "--layer", "2", "--export", "f.png"],
    ["--layer", "1", "--export", "f.png"],
    ["--layer", "1"],
    TRAIN + ["--layer", "1"],
    TRAIN + ["--layer", "1", "--dump", "out"],
]


def sha(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def export(mhaviz, tmp, name, extra):
    r = run(mhaviz, TRAIN + extra + ["--export", name], tmp)
    if r.returncode != 0:
        fail(f"{' '.join(extra) or 'no --layer'} {name}", "exit 0",
             f"{r.returncode}: {r.stderr.decode(errors='replace').strip()[-300:]}")
        return None
    return os.path.join(tmp, name)


def main():
    mhaviz = os.path.abspath(sys.argv[1])
    with tempfile.TemporaryDirectory() as tmp:
        one = export(mhaviz, tmp, "one.png", ["--layer", "1"])
        two = export(mhaviz, tmp, "two.png", ["--layer", "2"])
        default = export(mhaviz, tmp, "default.png", [])
        if one and two and sha(one) == sha(two):
            fail("--layer 1 vs --layer 2", "different figures", "the same PNG")
        if one and default and sha(one) != sha(default):
            fail("no --layer vs --layer 1", "the same figure (layer 1)", "different PNGs")
        for layer in ("1", "2"):
            svg = export(mhaviz, tmp, f"l{layer}.svg", ["--layer", layer])
            if not svg:
                continue
            with open(svg, encoding="utf-8") as f:
                text = f.read()
            want = f"layer {layer} of 2"
            if want not in text:
                fail(f"--layer {layer} .svg", f"the text \"{want}\"", "it missing")
    for args in BAD:
        with tempfile.TemporaryDirectory() as tmp:
            r = run(mhaviz, args, tmp)
            where = " ".join(args)
            err = r.stderr.decode(errors="replace")
            lines = err.splitlines()
            if r.returncode != 2:
                fail(where, "exit 2", r.returncode)
            if len(lines) != 1 or not lines[0].startswith("mhaviz: --layer"):
                fail(where, "one line starting \"mhaviz: --layer\"", repr(err))
            if r.stdout:
                fail(where, "nothing on stdout (nothing trained)", repr(r.stdout[:200]))
            if os.listdir(tmp):
                fail(where, "nothing written", os.listdir(tmp))
    if FAILURES:
        return 1
    print(f"train_layer_check: ok ({len(BAD)} bad cases, figures of layers 1 and 2)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
