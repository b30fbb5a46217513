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
The cosines above the diagonal are checked the same way where their numbers are drawn
(3 decimals, tolerance 2e-3)."""
import json
import os
import random
import re
import subprocess
import sys
import tempfile

import numpy as np

THRESHOLD = 0.10


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
    texts = re.findall(r'<text x="([\d.]+)" y="([\d.]+)"[^>]*>([^<]*)</text>', open(svg).read())
    return h, n, share, cos, texts


def check(binary, args):
    fails = []
    with tempfile.TemporaryDirectory() as tmp:
        h, n, share, cos, texts = run(binary, args, tmp)
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
    for f in fails:
        print(f)
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
