#!/usr/bin/python3
"""view_file_check.py MHAVIZ: --state FILE through the real binary.

Broken view files (an unknown name, a bad value, a name given twice, a text set
twice, a head / page / layer that does not exist, an empty file, one that sets
nothing, a 50 MB file, a binary file, invalid UTF-8, a NUL byte, a missing file, a
folder): each is exactly one stderr line `mhaviz: FILE:LINE: ...` (`mhaviz: FILE:
...` where no line applies), exit 2 (1 for a file that exists and cannot be read), and nothing
written: no --export file, no --dump folder, no temporary file left.

Equivalence: `--state F --export x.png` gives the same pixels as the options that
say the same (the PNG decoded here with zlib and its filters undone, an
independent reader), and `--state F --dump D` the same files byte for byte; an
option given beside --state wins over the file.
Exits 1 with "expected X, got Y" lines on any failure."""
import os
import struct
import subprocess
import sys
import tempfile
import zlib

import numpy as np

FAILURES = []


def fail(where, expected, got):
    FAILURES.append(where)
    print(f"FAIL {where}: expected {expected}, got {got}", file=sys.stderr)


def run(mhaviz, args, cwd):
    return subprocess.run([mhaviz] + args, cwd=cwd, capture_output=True, timeout=120)


def png_pixels(path):
    """(width, height, rows of bytes) of an 8-bit RGB or RGBA PNG, filters undone."""
    data = open(path, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, w = 8, b"", 0
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            w, h, depth, ctype = struct.unpack(">IIBB", body[:10])
            assert depth == 8 and ctype in (2, 6), f"depth {depth} type {ctype}"
            bpp = 3 if ctype == 2 else 4
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    raw = zlib.decompress(idat)
    stride = w * bpp
    rows, prev = [], np.zeros(stride, np.uint8)
    for y in range(h):
        f = raw[y * (stride + 1)]
        line = np.frombuffer(raw, np.uint8, stride, y * (stride + 1) + 1).copy()
        if f == 1:  # Sub: each byte plus the one bpp to its left, as a running sum per channel
            line = (np.cumsum(line.reshape(w, bpp), axis=0, dtype=np.uint64) % 256).astype(
                np.uint8).reshape(stride)
        elif f == 2:  # Up (mhaviz's own filter)
            line = line + prev  # uint8: modulo 256
        elif f in (3, 4):  # Average, Paeth: byte by byte, each needs the one just undone
            prev_l = prev.tolist()
            out = line.tolist()
            for x in range(stride):
                a = out[x - bpp] if x >= bpp else 0
                b = prev_l[x]
                if f == 3:
                    out[x] = (out[x] + (a + b) // 2) & 255
                else:
                    c = prev_l[x - bpp] if x >= bpp else 0
                    p = a + b - c
                    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                    out[x] = (out[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
            line = np.array(out, np.uint8)
        rows.append(line.tobytes())
        prev = line
    return w, h, rows


def one_line(where, r, prefix, rc):
    err = r.stderr.decode("utf-8", "replace")
    lines = err.splitlines()
    if r.returncode != rc:
        fail(where, f"exit {rc}", f"exit {r.returncode} ({err.strip()})")
    if len(lines) != 1 or not lines[0].startswith(prefix):
        fail(where, f"one line starting {prefix!r}", repr(err))


# a file as Ctrl+Shift+V writes it: every setting, the defaults but a pinned h = 2, dark
FULL = """# mhaviz view 1
sample = 1
h = 4
d_model = 64
seed = 1
mask = none
pad = off
scale = on
temperature = 1
weights = random
ablate = none
focus = none
stage = 0
values = off
contrast = fixed
colormap = viridis
theme = dark
zoom = 100
present = off
page = 1
panels = on
diff = off
compare = h=2
pinned-sample = live
pinned-ablate = none
pinned-page = 1
train = off
train-h = 2
train-d_model = 32
train-seed = 1
train-steps = 0
train-layers = 1
train-mlp = off
train-layer = 1
model = off
layer = 1
model-h = own
overview = off
"""

BROKEN = [  # name, contents, what the line says after "mhaviz: FILE", exit
    ("unknown.view", b"# a view\nh = 4\nheads = 4\n", ":3: unknown setting 'heads'", 2),
    ("bad.view", b"mask = sideways\n", ":1: mask = sideways: must be none or causal", 2),
    ("twice.view", b"h = 4\ntheme = dark\nh = 2\n", ":3: h is given twice", 2),
    ("text-twice.view", b"sample = 2\ntext = hello\n", ":2: text: the text is set already", 2),
    ("nohead.view", b"h = 4\nfocus = 9\n", ":2: focus = 9: there is no head 9 (h = 4)", 2),
    ("noablate.view", b"ablate = 7\n", ":1: ablate: there is no head 7 (h = 4)", 2),
    ("nopage.view", b"theme = dark\npage = 3\n", ":2: page = 3: at 1600x900 the figure has 1 page", 2),
    ("nopinned.view", b"compare = h=1\npinned-page = 2\n", ":2: pinned-page = 2: at 1600x900", 2),
    ("nolayer.view", b"train = off\ntrain-layer = 3\n", ":2: train-layer = 3: the trained model", 2),
    ("train.view", b"h = 2\ntrain = pair\n", ":2: train = pair: training runs in the window", 2),
    ("divide.view", b"d_model = 60\nh = 8\n", ":2: h = 8 does not divide d_model = 60", 2),
    ("bg.view", b"background = clear\n", ":1: background = clear: must be opaque or transparent", 2),
    ("nothing.view", b"# only comments\n\n", ": sets nothing", 2),
    ("empty.view", b"", ": ", 2),
    ("utf8.view", b"text = caf\xc3\n", ": ", 2),
    ("nul.view", b"h = 4\n\x00\n", ": ", 2),
    ("binary.view", bytes((i * 37 + 11) & 255 for i in range(512)), ": ", 2),
    ("badtextfile.view", b"text-file = not-there.txt\n", ":1: text-file: ", 2),
    ("badmodel.view", b"model = not-a-model\n", ":1: model", 2),
]


def main():
    if len(sys.argv) != 2:
        print("usage: view_file_check.py MHAVIZ", file=sys.stderr)
        return 2
    mhaviz = os.path.abspath(sys.argv[1])
    with tempfile.TemporaryDirectory(prefix="mhaviz-view-") as d:
        cases = list(BROKEN)
        with open(os.path.join(d, "big.view"), "wb") as f:  # 50 MB, sparse
            f.write(b"h = 4\n")
            f.truncate(50 << 20)
        cases.append(("big.view", None, ": ", 2))
        os.mkdir(os.path.join(d, "folder.view"))
        cases.append(("folder.view", None, ": ", 2))
        cases.append(("missing.view", None, ": ", 2))
        for name, body, says, rc in cases:
            path = os.path.join(d, name)
            if body is not None:
                with open(path, "wb") as f:
                    f.write(body)
            for mode in (["--export", "out.png"], ["--dump", "outdir"]):
                if mode[0] == "--dump" and name in ("nopage.view", "nopinned.view"):
                    continue  # pages and training are the figure's: not --dump's
                r = run(mhaviz, ["--state", name] + mode, d)
                one_line(f"{name} {mode[0]}", r, f"mhaviz: {name}{says}", rc)
                left = sorted(set(os.listdir(d)) - {c[0] for c in cases})
                if left:
                    fail(f"{name} {mode[0]}: nothing written", "no new file", left)
                    for x in left:
                        p = os.path.join(d, x)
                        os.rmdir(p) if os.path.isdir(p) else os.remove(p)
        print(f"view files: {len(cases)} broken files, each one line and exit 1 or 2, nothing written")

        # a pinned view and a panel: refused, as --compare with --panel is
        with open(os.path.join(d, "full.view"), "w") as f:
            f.write(FULL)
        r = run(mhaviz, ["--state", "full.view", "--panel", "head:2", "--export", "p.png"], d)
        one_line("full.view --panel head:2", r,
                 "mhaviz: full.view:23: compare = h=2: the compare view is one figure", 2)
        if os.path.exists(os.path.join(d, "p.png")):
            fail("full.view --panel head:2", "nothing written", "p.png")

        # a panel's head among the file's h = 2 heads, not -H's default 4 (steps:3 wrote
        # a blank figure)
        with open(os.path.join(d, "h2.view"), "w") as f:
            f.write("h = 2\n")
        for panel in ("steps:3", "head:3", "lines:3"):
            r = run(mhaviz, ["--state", "h2.view", "--panel", panel, "--export", "p.png"], d)
            one_line(f"h2.view --panel {panel}", r,
                     f"mhaviz: --panel {panel}: there are only 2 heads", 2)
            if os.path.exists(os.path.join(d, "p.png")):
                fail(f"h2.view --panel {panel}", "nothing written", "p.png")

        # the same figure from a view file and from the options that say the same
        same = [
            ("h = 8\nd_model = 32\nseed = 3\nmask = causal\ntheme = dark\ncolormap = magma\n"
             "values = on\ncontrast = row\n",
             [], ["-H", "8", "-d", "32", "-s", "3", "--mask", "causal", "--theme", "dark",
                  "--colormap", "magma", "--values", "--contrast", "row"]),
            ("sample = 4\nweights = designed\ntemperature = 0.5\npad = 40\n",
             [], ["--sample", "4", "--weights", "patterns", "--temperature", "0.5", "--pad", "40"]),
            ("text = the cat sat on the mat\nablate = 2\ndiff = on\nscale = off\n",
             [], ["--text", "the cat sat on the mat", "--ablate", "2", "--diff", "--no-scale"]),
            ("compare = h=2,mask=causal\n", [], ["--compare", "h=2,mask=causal"]),
            ("h = 64\nd_model = 64\nsample = 7\npage = 2\n", ["--size", "800x600"],
             ["-H", "64", "-d", "64", "--sample", "7", "--page", "2", "--size", "800x600"]),
            ("h = 8\ntheme = dark\n", ["-H", "2"], ["-H", "2", "--theme", "dark"]),  # -H wins
            ("background = transparent\ntheme = dark\n", [],
             ["--background", "transparent", "--theme", "dark"]),  # an RGBA figure
            ("background = transparent\n", ["--background", "opaque"], []),  # --background wins
            (FULL, [], ["--compare", "h=2", "--theme", "dark"]),  # every setting, as the app writes
            (FULL.replace("compare = h=2", "compare = off"), ["--panel", "head:2"],
             ["--theme", "dark", "--panel", "head:2"]),
        ]
        for i, (text, beside, options) in enumerate(same):
            vf = os.path.join(d, f"same{i}.view")
            with open(vf, "w") as f:
                f.write(text)
            a, b = os.path.join(d, f"a{i}.png"), os.path.join(d, f"b{i}.png")
            ra = run(mhaviz, ["--state", vf] + beside + ["--export", a], d)
            rb = run(mhaviz, options + ["--export", b], d)
            if ra.returncode or rb.returncode:
                fail(f"same {i}", "both exit 0", f"{ra.returncode} {ra.stderr} / {rb.returncode} {rb.stderr}")
                continue
            pa, pb = png_pixels(a), png_pixels(b)
            if pa[:2] != pb[:2] or pa[2] != pb[2]:
                diff = sum(x != y for ra_, rb_ in zip(pa[2], pb[2]) for x, y in zip(ra_, rb_))
                fail(f"same {i}: --state {vf} {' '.join(beside)}", f"the pixels of {' '.join(options)}",
                     f"{pa[:2]} vs {pb[:2]}, {diff} bytes differ")
        print(f"view files: {len(same)} exports from --state equal the options' pixel for pixel")
        # a model named by the file (relative to its folder) as --model shows it
        sub = os.path.join(d, "lesson")
        os.mkdir(sub)
        gen = subprocess.run([sys.executable, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                           "gpt2_gen.py"), os.path.join(sub, "ck"),
                              "--layers", "2", "--heads", "3", "--embd", "48"], capture_output=True)
        if gen.returncode != 0:
            fail("gpt2_gen.py", "a checkpoint", gen.stderr.decode()[-300:])
        else:
            with open(os.path.join(sub, "m.view"), "w") as f:
                f.write("model = ck\nlayer = 2\nmodel-h = 6\nsample = 3\n")
            a, b = os.path.join(d, "ma.png"), os.path.join(d, "mb.png")
            ra = run(mhaviz, ["--state", os.path.join("lesson", "m.view"), "--export", a], d)
            rb = run(mhaviz, ["--model", os.path.join(sub, "ck"), "--layer", "2", "-H", "6",
                              "--sample", "3", "--export", b], d)
            if ra.returncode or rb.returncode:
                fail("model", "both exit 0", f"{ra.returncode} {ra.stderr} / {rb.returncode} {rb.stderr}")
            elif png_pixels(a) != png_pixels(b):
                fail("model", "the pixels of --model --layer 2 -H 6", "different")
            with open(os.path.join(sub, "m3.view"), "w") as f:
                f.write("model = ck\nlayer = 3\n")
            r = run(mhaviz, ["--state", os.path.join("lesson", "m3.view"), "--export", "m3.png"], d)
            one_line("model layer 3", r, "mhaviz: lesson/m3.view:2: layer = 3: ck has 2 layers", 2)
            # its K/V heads regrouped (J): as --kv-heads; one that does not divide its 3 heads
            # is one line naming the file's line, nothing written
            with open(os.path.join(sub, "kv.view"), "w") as f:
                f.write("model = ck\nmodel-kv = 1\nlayer = 2\n")
            a, b, c = (os.path.join(d, x) for x in ("ka.png", "kb.png", "kc.png"))
            ra = run(mhaviz, ["--state", os.path.join("lesson", "kv.view"), "--export", a], d)
            rb = run(mhaviz, ["--model", os.path.join(sub, "ck"), "--layer", "2", "--kv-heads",
                              "1", "--export", b], d)
            rc = run(mhaviz, ["--model", os.path.join(sub, "ck"), "--layer", "2", "--export", c], d)
            if ra.returncode or rb.returncode or rc.returncode:
                fail("model-kv", "exit 0", f"{ra.stderr} / {rb.stderr} / {rc.stderr}")
            elif png_pixels(a) != png_pixels(b) or png_pixels(a) == png_pixels(c):
                fail("model-kv = 1", "the pixels of --kv-heads 1, not those of its own K/V",
                     "different" if png_pixels(a) != png_pixels(b) else "its own K/V's")
            with open(os.path.join(sub, "kv2.view"), "w") as f:
                f.write("model = ck\nmodel-kv = 2\n")
            r = run(mhaviz, ["--state", os.path.join("lesson", "kv2.view"), "--export", "k2.png"], d)
            one_line("model-kv = 2", r,
                     "mhaviz: lesson/kv2.view:2: model-kv = 2: must divide ck's 3 K/V heads", 2)
            if os.path.exists(os.path.join(d, "k2.png")):
                fail("model-kv = 2", "nothing written", "k2.png")
            # --kv-heads beside a file naming a model: that model's K/V heads, as --model
            # --kv-heads 1 (it was given to the random model's, and the export showed the
            # model's own 3); 2 does not divide them: one line, nothing written
            with open(os.path.join(sub, "l2.view"), "w") as f:
                f.write("model = ck\nlayer = 2\n")
            ka = os.path.join(d, "kopt.png")
            ra = run(mhaviz, ["--state", os.path.join("lesson", "l2.view"), "--kv-heads", "1",
                              "--export", ka], d)
            if ra.returncode:
                fail("--state and --kv-heads 1", "exit 0", ra.stderr)
            elif png_pixels(ka) != png_pixels(b) or png_pixels(ka) == png_pixels(c):
                fail("--state and --kv-heads 1", "the pixels of --model --kv-heads 1",
                     "different" if png_pixels(ka) != png_pixels(b) else "its own K/V's")
            r = run(mhaviz, ["--state", os.path.join("lesson", "l2.view"), "--kv-heads", "2",
                             "--export", "kopt2.png"], d)
            one_line("--state and --kv-heads 2", r, "mhaviz: ", 2)
            if b"must divide ck's 3 K/V heads" not in r.stderr:
                fail("--state and --kv-heads 2", "must divide ck's 3 K/V heads", r.stderr)
            if os.path.exists(os.path.join(d, "kopt2.png")):
                fail("--state and --kv-heads 2", "nothing written", "kopt2.png")
            print("view files: a model named by the file exports as --model does")
        vf = os.path.join(d, "dump.view")
        with open(vf, "w") as f:
            f.write("h = 2\nd_model = 16\nseed = 9\nmask = causal\nsample = 3\n")
        ra = run(mhaviz, ["--state", vf, "--dump", "da"], d)
        rb = run(mhaviz, ["-H", "2", "-d", "16", "-s", "9", "--mask", "causal", "--sample", "3",
                          "--dump", "db"], d)
        fa, fb = sorted(os.listdir(os.path.join(d, "da"))), sorted(os.listdir(os.path.join(d, "db")))
        if ra.returncode or rb.returncode or fa != fb or not fa:
            fail("dump", "the same files", f"{fa} vs {fb} ({ra.stderr} {rb.stderr})")
        for name in fa:
            if open(os.path.join(d, "da", name), "rb").read() != open(os.path.join(d, "db", name), "rb").read():
                fail(f"dump {name}", "the same bytes", "different")
        print(f"view files: --state --dump wrote the options' {len(fa)} files byte for byte")
    if FAILURES:
        print(f"{len(FAILURES)} failure(s)", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
