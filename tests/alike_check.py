#!/usr/bin/python3
"""alike_check.py MHAVIZ: the "How alike are the heads?" panel's words and numbers
against NumPy, from the same run's --dump.

For each configuration (some fixed, some drawn at random now; the seed is printed),
mhaviz --dump writes heads.npy, W_O.npy and out_full.npy, and --export an SVG of the
same view. NumPy computes each head's contribution C_i = head_i W^O_i and its share
||C_i|| / ||MultiHead|| (what removing head i alone changes, rows of every position).
The SVG must then say:
  - "could go alone" with exactly the heads whose share is under 10 %, or "none
    could go alone" when there is none (never "could go" for a head at 10 % or more);
  - the diagonal's percentages, where drawn, equal to round(100 share) (+-1 for the
    rounding of float32 against float64), head by head;
  - the range line "changes by A-B %", where drawn, equal to the min and max shares.
  - off the diagonal, where numbers are drawn: below it 1 - the mean over the rows of
    the Jensen-Shannon divergence (bits) between the two heads' attention rows, above
    it the cosine of C_i and C_j, each within half its last shown digit (+1e-3 for
    float32); at least one such number over the fixed configurations."""
import json
import os
import random
import re
import subprocess
import sys
import tempfile

import numpy as np

THRESHOLD = 0.10
CELLS_SEEN = [0]  # numbers off the diagonal checked, over every configuration


def run(binary, args, tmp):
    dump = os.path.join(tmp, "d")
    svg = os.path.join(tmp, "a.svg")
    subprocess.run([binary, "--dump", dump] + args, check=True, capture_output=True)
    subprocess.run([binary, "--export", svg, "--size", "1600x900"] + args, check=True,
                   capture_output=True)
    heads = np.load(os.path.join(dump, "heads.npy")).astype(np.float64)
    w_o = np.load(os.path.join(dump, "W_O.npy")).astype(np.float64)
    full = np.load(os.path.join(dump, "out_full.npy")).astype(np.float64)
    h, n, dk = heads.shape
    contrib = [heads[i] @ w_o[i * dk:(i + 1) * dk, :] for i in range(h)]
    share = np.array([np.linalg.norm(c) / np.linalg.norm(full) for c in contrib])
    cos = np.array([[np.sum(a * b) / (np.linalg.norm(a) * np.linalg.norm(b)) for b in contrib]
                    for a in contrib])
    attn = np.load(os.path.join(dump, "attn.npy")).astype(np.float64)
    texts = re.findall(r'<text x="([\d.]+)" y="([\d.]+)"[^>]*>([^<]*)</text>', open(svg).read())
    return h, n, share, cos, 1 - js_divergence(attn), texts


def js_divergence(attn):
    """(h, h) mean over the rows of the Jensen-Shannon divergence, in bits, between two
    heads' attention rows (every row: the texts here have at most 32 positions)."""
    def plogp(p):
        return np.where(p > 0, p * np.log2(np.where(p > 0, p, 1)), 0).sum(axis=-1)
    h = attn.shape[0]
    out = np.zeros((h, h))
    for i in range(h):
        for j in range(h):
            mid = (attn[i] + attn[j]) / 2
            out[i, j] = np.mean(np.maximum(0, (plogp(attn[i]) + plogp(attn[j])) / 2 - plogp(mid)))
    return out


def check_cells(args, texts, diag, cos, alike):
    """The numbers off the diagonal, where drawn: below it 1 - JS (alike), above it the
    cosine of the two heads' contributions, each to the digits it shows. The cells'
    rows and columns are the diagonal's."""
    fails, seen = [], 0
    xs = sorted(x for x, _, _ in diag)
    ys = sorted(y for _, y, _ in diag)
    step = (xs[-1] - xs[0]) / (len(xs) - 1)
    for t in texts:
        x, y, w = float(t[0]), float(t[1]), t[2]
        if not re.fullmatch(r"\u2212?\d+(\.\d+)?", w) or x < xs[0] - step / 4:
            continue  # (the row labels, left of the first column's numbers)
        rows = [r for r, yy in enumerate(ys) if abs(yy - y) <= 3]
        col = min(range(len(xs)), key=lambda k: abs(xs[k] - x))
        if not rows or abs(xs[col] - x) > step / 2 or rows[0] == col:
            continue
        r = rows[0]
        want = alike[r, col] if r > col else cos[r, col]
        got = float(w.replace("\u2212", "-"))
        places = len(w.split(".")[1]) if "." in w else (0 if got else 2)
        seen += 1
        if abs(got - want) > 0.5 * 10 ** -places + 1e-3:
            what = "1 - JS" if r > col else "cosine"
            fails.append(f"{args}: cell ({r + 1}, {col + 1}) shows {w}, NumPy's {what} {want:.4f}")
    return fails, seen


def check(binary, args):
    fails = []
    with tempfile.TemporaryDirectory() as tmp:
        h, n, share, cos, alike, texts = run(binary, args, tmp)
    if n > 32:
        raise SystemExit("alike_check: use texts of at most 32 positions (every row compared)")
    words = [t[2].replace("&lt;", "<") for t in texts]
    if h == 1:
        # no one-cell matrix: the panel says in words that there is nothing to compare
        # and that MultiHead is 0 without the head (its share is all of MultiHead)
        one = [w for w in words if w.startswith("One head")]
        gone = [w for w in words if w.startswith("Without it MultiHead is 0") or w == "It cannot go."]
        pct = [w for w in words if re.fullmatch(r"\d+%", w)]
        if len(one) == 1 and len(gone) == 1 and not pct and abs(share[0] - 1) < 1e-5:
            return []
        return [f"{args}: h = 1: expected 'One head ...' and 'Without it MultiHead is 0', no "
                f"percentage, share 1 (got {share[0]:.6f}): {words}"]
    go = [w for w in words if "could go" in w]
    if len(go) != 1:
        return [f"{args}: expected one 'could go' line, got {go}"]
    line = go[0]
    want = [i + 1 for i in range(h) if share[i] < THRESHOLD]
    if not want:
        if not line.startswith("none could go"):
            fails.append(f"{args}: no share under 10 % ({share.min():.3f} the least) "
                         f"but the panel says {line!r}")
    else:
        got = [int(x) for x in re.findall(r"\d+", line.split(":", 1)[1])] if ":" in line else []
        if line.startswith("none") or got != want:
            fails.append(f"{args}: heads under 10 % {want} (shares "
                         f"{np.round(share, 3).tolist()}), the panel says {line!r}")
    diag = [(float(t[1]), int(t[2][:-1])) for t in texts if re.fullmatch(r"\d+%", t[2])]
    if len(diag) == h:
        f, seen = check_cells(args, texts,
                              [(float(t[0]), float(t[1]), t[2]) for t in texts
                               if re.fullmatch(r"\d+%", t[2])], cos, alike)
        fails += f
        CELLS_SEEN[0] += seen
    if diag:
        diag.sort()
        got = [v for _, v in diag]
        exp = [round(100 * s) for s in share]
        if len(got) != h or any(abs(a - b) > 1 for a, b in zip(got, exp)):
            fails.append(f"{args}: diagonal {got}, NumPy {exp}")
    rng = [w for w in words if re.search(r"\d+\u2013\d+ %", w)]
    for w in rng:
        a, b = re.findall(r"(\d+)\u2013(\d+)", w)[0]
        if abs(int(a) - round(100 * share.min())) > 1 or abs(int(b) - round(100 * share.max())) > 1:
            fails.append(f"{args}: range {w!r}, NumPy {100 * share.min():.1f}-{100 * share.max():.1f}")
    if not diag and not rng and h > 1:
        fails.append(f"{args}: neither the diagonal nor the range line is drawn")
    return fails


def main():
    binary = sys.argv[1]
    seed = int(os.environ.get("MHAVIZ_ALIKE_SEED", random.randrange(1 << 30)))
    print(f"alike_check: random configurations from seed {seed} (MHAVIZ_ALIKE_SEED)")
    rnd = random.Random(seed)
    configs = [["--temperature", "20"], ["-H", "16", "-d", "16", "-s", "1"],
               ["-H", "8", "-d", "64", "--weights", "patterns"], ["-H", "1"],
               ["-H", "16", "-d", "32", "-s", "6", "--mask", "causal"]]
    for _ in range(6):
        h = rnd.choice([2, 4, 8, 16])
        d = h * rnd.choice([1, 2, 4, 8])
        c = ["-H", str(h), "-d", str(max(d, h)), "-s", str(rnd.randrange(1, 10000)),
             "--sample", str(rnd.randrange(1, 4))]
        if rnd.random() < 0.4:
            c += ["--temperature", str(rnd.choice([0.3, 2, 20]))]
        if rnd.random() < 0.3:
            c += ["--mask", "causal"]
        configs.append(c)
    fails, under = [], 0
    for c in configs:
        f = check(binary, c)
        fails += f
        print(("FAIL " if f else "ok   ") + " ".join(c))
    print(f"alike_check: {CELLS_SEEN[0]} numbers off the diagonal checked")
    if CELLS_SEEN[0] == 0:
        fails.append("no number off the diagonal was drawn in any configuration")
    for f in fails:
        print(f)
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
