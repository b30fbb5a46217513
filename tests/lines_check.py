#!/usr/bin/env python3
"""lines_check.py: the head view's exported lines against --dump's attention.

For `--panel lines:K` (and `--panel lines`, every head overlaid) exported as SVG,
every <line> of head K's group <g id="head-K"> joins query i (left) to key j
(right); its stroke-opacity must be attn[K-1, i, j] from --dump's attn.npy within
0.0025 (the 8-bit alpha's 0.5/255 plus the SVG's three decimals), every weight of
at least 0.02 has exactly one line and none under it has any; under the causal mask
no line goes to a later key. Rows are found from the lines' own end points: token i
is the i-th distinct y from the top (every token has lines at these sizes).
`--panel lines:K` with K outside 1..h is refused with one "mhaviz: " line, exit 2,
and no file. Usage: lines_check.py MHAVIZ
"""
import json
import os
import re
import subprocess
import sys
import tempfile

import numpy as np

FLOOR = 0.02
TOL = 0.5 / 255 + 0.0005 + 1e-6  # alpha is round(255 w); the SVG writes 3 decimals

failures = []


def check(cond, msg):
    if not cond:
        failures.append(msg)
        print("FAIL:", msg)


def run(args):
    return subprocess.run(args, capture_output=True, text=True, timeout=120)


def lines_by_group(svg):
    """{group id: [(x1, y1, x2, y2, opacity)]} of the SVG's <line>s in each <g id=...>."""
    groups, current = {}, None
    for tok in re.finditer(r'<g id="([^"]+)"|</g>|<line ([^>]*)/>', svg):
        if tok.group(1):
            current = tok.group(1)
            groups.setdefault(current, [])
        elif tok.group(0) == "</g>":
            current = None
        elif current is not None:
            a = dict(re.findall(r'([\w-]+)="([^"]*)"', tok.group(2)))
            op = float(a.get("stroke-opacity", "1"))
            groups[current].append(
                (float(a["x1"]), float(a["y1"]), float(a["x2"]), float(a["y2"]), op))
    return groups


def check_head(lines, attn, head, what, causal):
    n = attn.shape[1]
    ys = sorted({round(l[1], 1) for l in lines} | {round(l[3], 1) for l in lines})
    check(len(ys) == n, f"{what}: expected {n} token rows among the lines' ends, got {len(ys)}")
    if len(ys) != n:
        return
    row = {y: i for i, y in enumerate(ys)}
    left = min(l[0] for l in lines)
    seen = {}
    worst = 0.0
    for x1, y1, x2, y2, op in lines:
        check(x1 == left and x2 > x1, f"{what}: a line not from the query column to the keys")
        i, j = row[round(y1, 1)], row[round(y2, 1)]
        check((i, j) not in seen, f"{what}: two lines for query {i}, key {j}")
        seen[(i, j)] = op
        w = float(attn[head, i, j])
        worst = max(worst, abs(op - w))
        check(abs(op - w) <= TOL,
              f"{what}: query {i} key {j}: opacity {op:.4f}, weight {w:.4f} (tolerance {TOL:.4f})")
        if causal:
            check(j <= i, f"{what}: a line from query {i} to the later key {j} under the mask")
    want = {(i, j) for i in range(n) for j in range(n) if attn[head, i, j] >= FLOOR}
    missing = want - set(seen)
    extra = set(seen) - want
    check(not missing, f"{what}: weights >= {FLOOR} with no line: {sorted(missing)[:5]}")
    check(not extra, f"{what}: lines for weights under {FLOOR}: {sorted(extra)[:5]}")
    print(f"{what}: {len(seen)} lines, max |opacity - weight| {worst:.5f} (tolerance {TOL:.4f})")


def main():
    exe = sys.argv[1]
    with tempfile.TemporaryDirectory() as tmp:
        cases = [
            ("h=4 none", ["--heads", "4"], False),
            ("h=3 causal", ["--heads", "3", "--d-model", "48", "--mask", "causal", "--sample", "2"],
             True),
        ]
        for name, opts, causal in cases:
            dump = os.path.join(tmp, "dump-" + name.replace(" ", "-").replace("=", ""))
            r = run([exe, *opts, "--dump", dump])
            check(r.returncode == 0, f"{name}: --dump exit {r.returncode}: {r.stderr.strip()}")
            attn = np.load(os.path.join(dump, "attn.npy")).astype(np.float64)
            meta = json.load(open(os.path.join(dump, "meta.json")))
            h = meta["h"]
            for k in range(1, h + 1):  # one head at a time
                svg = os.path.join(tmp, f"lines{k}.svg")
                r = run([exe, *opts, "--panel", f"lines:{k}", "--export", svg])
                check(r.returncode == 0, f"{name} lines:{k}: exit {r.returncode}: {r.stderr}")
                g = lines_by_group(open(svg, encoding="utf-8").read())
                check(f"head-{k}" in g, f"{name} lines:{k}: no group head-{k}")
                check_head(g.get(f"head-{k}", []), attn, k - 1, f"{name} lines:{k}", causal)
            svg = os.path.join(tmp, "all.svg")  # every head overlaid, each in its group
            r = run([exe, *opts, "--panel", "lines", "--export", svg])
            check(r.returncode == 0, f"{name} lines: exit {r.returncode}: {r.stderr}")
            g = lines_by_group(open(svg, encoding="utf-8").read())
            for k in range(1, h + 1):
                check_head(g.get(f"head-{k}", []), attn, k - 1, f"{name} lines (head {k})", causal)
            colours = [set(re.findall(r'stroke="(#[0-9a-f]{6})"', " ".join(
                f'stroke="{c}"' for c in re.findall(
                    r'<line [^>]*stroke="(#[0-9a-f]{6})"',
                    open(svg).read().split(f'<g id="head-{k}"')[1].split("</g>")[0]))))
                for k in range(1, h + 1)]
            check(all(len(c) >= 1 for c in colours) and
                  len(set.union(*colours)) >= min(h, 3),
                  f"{name} lines: expected a colour per head, got {colours}")
            for fmt in ("png", "pdf"):  # the other formats are written too
                out = os.path.join(tmp, "all." + fmt)
                r = run([exe, *opts, "--panel", "lines", "--size", "1920x1080", "--export", out])
                check(r.returncode == 0 and os.path.getsize(out) > 1000,
                      f"{name} lines as {fmt}: exit {r.returncode}")
        # a head that is not there: one line, exit 2, nothing written
        for bad in ("lines:5", "lines:0", "lines:x", "lines:"):
            out = os.path.join(tmp, "bad.png")
            r = run([exe, "--heads", "4", "--panel", bad, "--export", out])
            lines = r.stderr.strip().splitlines()
            check(r.returncode == 2, f"--panel {bad}: expected exit 2, got {r.returncode}")
            check(len(lines) == 1 and lines[0].startswith("mhaviz: "),
                  f"--panel {bad}: expected one 'mhaviz: ' line, got {r.stderr!r}")
            check(not os.path.exists(out), f"--panel {bad}: a file was written")
    if failures:
        print(f"{len(failures)} failure(s)")
        sys.exit(1)
    print("lines_check: ok")


if __name__ == "__main__":
    main()
