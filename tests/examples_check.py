#!/usr/bin/env python3
"""examples_check.py: the examples do what they say.

- top_keys prints, per head, the key each token attends to most; checked against
  the argmax of attn.npy from `mhaviz --dump` for the same sentence and sizes
  (numpy, independent of the example's own loop);
- slides.sh writes h1..h8 as PNG (3200x1800) and PDF for one sentence.
- lesson_figures.sh writes the README's lesson figures (1600x900 PNGs).
- encoder_figures.sh writes the README's encoder figures on a random BERT-shaped
  checkpoint: the layer at 1600x900, the fill-the-blank panel (cropped) with every
  head on and with head 5 of layer 12 removed, which differ.
usage: examples_check.py MHAVIZ TOP_KEYS SLIDES_SH
"""
import json
import os
import re
import struct
import subprocess
import sys
import tempfile

import numpy as np

mhaviz, top_keys, slides = sys.argv[1:4]
failures = 0


def check(ok, what, expected, got):
    global failures
    if not ok:
        failures += 1
        print(f"FAIL {what}: expected {expected}, got {got}")


env = dict(os.environ)
for k in ("DISPLAY", "WAYLAND_DISPLAY"):
    env.pop(k, None)
sentence = "The animal didn't cross the street because it was too tired."
with tempfile.TemporaryDirectory() as tmp:
    for h, d in ((4, 64), (2, 48), (8, 128)):
        out = subprocess.run([top_keys, sentence, str(h), str(d)], capture_output=True, text=True,
                             env=env, timeout=60)
        check(out.returncode == 0, f"top_keys h={h} d={d} exit", 0, out.returncode)
        dump = os.path.join(tmp, f"d{h}-{d}")
        subprocess.run([mhaviz, "--dump", dump, "-H", str(h), "-d", str(d), "--text", sentence],
                       check=True, env=env, timeout=60)
        attn = np.load(os.path.join(dump, "attn.npy"))
        tokens = open(os.path.join(dump, "tokens.txt"), encoding="utf-8").read().split("\n")[:-1]
        # parse "head K" blocks and "  query -> key weight" lines
        got = {}
        head = None
        for line in out.stdout.splitlines():
            m = re.match(r"head (\d+)$", line)
            if m:
                head = int(m.group(1)) - 1
                got[head] = []
                continue
            m = re.match(r"\s+(\S+)\s+->\s+(\S+)\s+([0-9.]+)$", line)
            if m and head is not None:
                got[head].append((m.group(1), m.group(2), float(m.group(3))))
        check(sorted(got) == list(range(h)), f"top_keys h={h}: heads listed", list(range(h)),
              sorted(got))
        for i in range(h):
            rows = got.get(i, [])
            check(len(rows) == len(tokens), f"top_keys h={h} head {i+1}: rows", len(tokens), len(rows))
            for q, (qt, kt, w) in enumerate(rows[:len(tokens)]):
                k = int(np.argmax(attn[i, q]))
                check(qt == tokens[q] and kt == tokens[k] and abs(w - attn[i, q, k]) <= 5e-4,
                      f"top_keys h={h} head {i+1} row {q+1}",
                      f"{tokens[q]} -> {tokens[k]} {attn[i, q, k]:.3f}", f"{qt} -> {kt} {w}")

    sl = os.path.join(tmp, "slides")
    r = subprocess.run(["sh", slides, sentence, sl, mhaviz], capture_output=True, text=True,
                       env=env, timeout=300)
    check(r.returncode == 0, "slides.sh exit", 0, f"{r.returncode} {r.stderr.strip()}")
    for h in (1, 2, 4, 8):
        png = os.path.join(sl, f"h{h}.png")
        pdf = os.path.join(sl, f"h{h}.pdf")
        if os.path.exists(png):
            with open(png, "rb") as f:
                head = f.read(24)
            w, hh = struct.unpack(">II", head[16:24])
            check((w, hh) == (3200, 1800), f"slides h{h}.png size", (3200, 1800), (w, hh))
        else:
            check(False, f"slides h{h}.png", "a file", "none")
        check(os.path.exists(pdf) and open(pdf, "rb").read(5) == b"%PDF-", f"slides h{h}.pdf",
              "a PDF", "none or not a PDF")

    # lesson_figures.sh: the README's lesson figures, 1600x900 each (the step-through,
    # a single panel, cropped to its content)
    lf = os.path.join(tmp, "lesson")
    lesson = os.path.join(os.path.dirname(slides), "lesson_figures.sh")
    r = subprocess.run(["sh", lesson, lf, mhaviz], capture_output=True, text=True, env=env,
                       timeout=300)
    check(r.returncode == 0, "lesson_figures.sh exit", 0, f"{r.returncode} {r.stderr.strip()}")
    for name in ("masks", "designed", "ablated", "values", "steps", "sharp", "flat"):
        png = os.path.join(lf, name + ".png")
        size = None
        if os.path.exists(png):
            with open(png, "rb") as f:
                size = struct.unpack(">II", f.read(24)[16:24])
        if name == "steps":  # a single panel: cropped to its content
            check(size is not None and 200 < size[0] <= 1600 and 200 < size[1] <= 900,
                  f"lesson {name}.png size", "at most 1600x900 (cropped)", size)
        else:
            check(size == (1600, 900), f"lesson {name}.png size", (1600, 900), size)

    # encoder_figures.sh: the README's encoder figures
    ef = os.path.join(tmp, "encoder")
    script = os.path.join(os.path.dirname(slides), "encoder_figures.sh")
    r = subprocess.run(["sh", script, ef, mhaviz], capture_output=True, text=True, env=env,
                       timeout=300)
    check(r.returncode == 0, "encoder_figures.sh exit", 0, f"{r.returncode} {r.stderr.strip()}")
    sizes = {}
    for name in ("bert-layer", "bert-fill", "bert-fill-ablated"):
        png = os.path.join(ef, name + ".png")
        if os.path.exists(png):
            with open(png, "rb") as f:
                sizes[name] = struct.unpack(">II", f.read(24)[16:24])
        check(name in sizes, f"encoder {name}.png", "a PNG", "none")
    check(sizes.get("bert-layer") == (1600, 900), "encoder bert-layer.png size", (1600, 900),
          sizes.get("bert-layer"))
    if "bert-fill" in sizes and "bert-fill-ablated" in sizes:
        same = open(os.path.join(ef, "bert-fill.png"), "rb").read() == \
            open(os.path.join(ef, "bert-fill-ablated.png"), "rb").read()
        check(not same, "encoder fill panels with and without head 12:5", "different", "equal")

print("examples_check: %s" % ("all checks passed" if failures == 0 else f"{failures} failure(s)"))
sys.exit(1 if failures else 0)
