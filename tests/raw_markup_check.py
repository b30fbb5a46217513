#!/usr/bin/python3
"""raw_markup_check.py MHAVIZ: no figure draws markup as raw text (issue 20: the cost
panel's "n <= 2·d_model", compare's "d_k = 2", the designed "none (d_k too small)", the
sweep's "d_k = d_model / h"). Each configuration is exported as SVG; every <text>
element's content is read and none may hold "_" or "^" (the formula strip draws d_k and
W^O with subscripts and superscripts, which the SVG writes as separate runs). The one
exception is the setting's own name "d_model = N" in the header and toolbar, as the
command line and the README spell it. Configurations: the default, h = 6 at 1920x1080,
designed heads at 1024x768 and 3840x2160 (head 5 is "none"), compare with h = 32, the
step-through figure, a long text at h = 16, a causal mask at h = 1.
Exits 1 with "FAIL where: ..." lines on any failure."""
import html
import os
import re
import subprocess
import sys
import tempfile

CONFIGS = [
    ("default", []),
    ("h6 1920x1080", ["-H", "6", "-d", "96", "--size", "1920x1080"]),
    ("patterns 1024x768", ["-H", "8", "--weights", "patterns", "--size", "1024x768"]),
    ("patterns 3840x2160", ["-H", "8", "--weights", "patterns", "--size", "3840x2160"]),
    ("compare h=32", ["--compare", "h=32"]),
    ("steps", ["--panel", "steps:2"]),
    ("causal h1", ["-H", "1", "--mask", "causal", "--size", "1280x800"]),
]
ALLOWED = re.compile(r"^d_model = \d+$")


def main():
    mhaviz = sys.argv[1]
    fails = 0
    checked = 0
    with tempfile.TemporaryDirectory() as tmp:
        words = ["the", "cat", "sat", "on", "a", "mat", "and", "then", "ran", "far"]
        long_text = os.path.join(tmp, "long.txt")
        with open(long_text, "w") as f:
            f.write(" ".join(words[(i * 7) % 10] for i in range(500)))
        configs = CONFIGS + [("long text h16", ["--text-file", long_text, "-H", "16"])]
        for name, args in configs:
            out = os.path.join(tmp, "f.svg")
            r = subprocess.run([mhaviz, *args, "--export", out], capture_output=True, text=True)
            if r.returncode != 0:
                print(f"FAIL {name}: expected exit 0, got {r.returncode}: {r.stderr.strip()}")
                fails += 1
                continue
            with open(out, encoding="utf-8") as f:
                svg = f.read()
            for m in re.finditer(r"<text[^>]*>(.*?)</text>", svg, re.S):
                text = html.unescape(re.sub(r"<[^>]*>", "", m.group(1)))
                checked += 1
                if ("_" in text or "^" in text) and not ALLOWED.match(text.strip()):
                    print(f"FAIL {name}: expected no raw markup, got \"{text}\"")
                    fails += 1
    print(f"raw_markup_check: {checked} texts in {len(CONFIGS) + 1} figures")
    if checked < 500:
        print(f"FAIL premise: expected texts to check, got {checked}")
        fails += 1
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
