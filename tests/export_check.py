#!/usr/bin/python3
"""export_check.py MHAVIZ: `mhaviz --export FILE` (PNG, SVG, PDF), headless.

Runs without DISPLAY. Checks:
- PNG: size from --size times --scale (read from IHDR); the same command twice gives
  byte-identical files; not blank; mode 0644 under umask 022; no temporary files.
- The heatmap cells are right: the SVG of the same view gives each head's cell
  rectangles; at their centres the PNG has the SVG's colours, and those colours are
  viridis(attention weight) with the weights from `--dump` (an independent viridis
  table, tolerance 14 per channel: the app interpolates 11 anchors, this 9).
- --panel head:2: cropped to its content (smaller than the --size), no header or
  formula, exactly one head (head 2, same colours as in the full view, larger cells).
- SVG: well-formed (xmllint), one <g id="head-K" class="head"> per head in order,
  n*n cells each, token words as <text>. PDF: one page, renders, text stays text.
- --background transparent: transparent background, opaque heatmap cells.
- Errors: unwritable targets exit 1 with one "mhaviz: cannot write" line, bad
  values exit 2 with one "mhaviz: " line naming the option; never a file or a
  temporary left behind, and an existing file stays untouched.
- Window and export agree: the window under Xvfb (1600x900) in presentation mode (P)
  and the headless `--export --present` of the same configuration differ in < 2% of
  the pixels (a presentation keeps its text floor; a plain export, at 100 %, does not).
Exits 1 with "FAIL where: expected X, got Y" lines on any failure."""
import os
import re
import stat
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET

import numpy as np

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
from e2e_util import (IMPORT, Checker, Xvfb, colour_count, diff_fraction, geometry_of,
                      no_display_env, png_ihdr, read_rgba, stop_process, svg_group_cells,
                      title_of, window_of_pid)

CK = Checker()
SVG_NS = "{http://www.w3.org/2000/svg}"
MIN_COLOURS = 200
# viridis at 0, 1/8, ..., 1 (viridisLite's viridis(9)); independent of the app's table
VIRIDIS9 = np.array([[0x44, 0x01, 0x54], [0x47, 0x2D, 0x7B], [0x3B, 0x52, 0x8B],
                     [0x2C, 0x72, 0x8E], [0x21, 0x90, 0x8C], [0x27, 0xAD, 0x81],
                     [0x5D, 0xC8, 0x63], [0xAA, 0xDC, 0x32], [0xFD, 0xE7, 0x25]], float)
VIRIDIS_TOL = 14


def viridis(t):
    t = np.clip(np.asarray(t, float), 0, 1) * 8
    i = np.minimum(np.floor(t).astype(int), 7)
    f = (t - i)[..., None]
    return VIRIDIS9[i] * (1 - f) + VIRIDIS9[i + 1] * f


def run(mhaviz, args, cwd, umask=None):
    pre = (lambda: os.umask(umask)) if umask is not None else None
    return subprocess.run([mhaviz] + args, cwd=cwd, env=no_display_env(), capture_output=True,
                          text=True, timeout=120, preexec_fn=pre)


def ok_run(mhaviz, args, cwd, where, **kw):
    r = run(mhaviz, args, cwd, **kw)
    CK.check(r.returncode == 0 and r.stderr == "" and r.stdout == "", f"{where}: runs cleanly",
             "exit 0, nothing printed", f"exit {r.returncode}, stderr {r.stderr.strip()!r}, "
             f"stdout {r.stdout.strip()!r}")
    return r.returncode == 0


def leftovers(folder):
    return [f for f in os.listdir(folder) if ".tmp-" in f]


# --- SVG ------------------------------------------------------------------------

def svg_heads(path):
    """{K: (title texts, [(x, y, w, h, (r, g, b)), ...] cells, row-major)} for
    every <g id="head-K" class="head">, plus the list of head ids in document order."""
    root = ET.parse(path).getroot()
    heads, order = {}, []
    for g in root.iter(SVG_NS + "g"):
        gid = g.get("id") or ""
        m = re.fullmatch(r"head-(\d+)", gid)
        if not m:
            continue
        k = int(m.group(1))
        order.append((k, g.get("class")))
        cells = svg_group_cells(g)
        texts = [t.text or "" for t in g.iter(SVG_NS + "text")]
        heads[k] = (texts, cells)
    return heads, order


def svg_texts(path):
    root = ET.parse(path).getroot()
    return ["".join(t.itertext()) for t in root.iter(SVG_NS + "text")]


def cell_colours(img, cells, scale=1):
    """PNG colours at the centres of the SVG cell rectangles."""
    out = []
    for x, y, w, h, _ in cells:
        cx, cy = int((x + w / 2) * scale), int((y + h / 2) * scale)
        out.append(img[cy, cx, :3].astype(int))
    return np.array(out)


def check_cells(where, img, cells, attn, scale=1):
    """PNG at the cell centres == SVG fills (±3) == viridis(attn) (±VIRIDIS_TOL)."""
    n = attn.shape[0]
    if not CK.check(len(cells) == n * n, f"{where}: cells in the SVG group", n * n, len(cells)):
        return
    png = cell_colours(img, cells, scale)
    svg = np.array([c[4] for c in cells])
    d = int(np.abs(png - svg).max())
    CK.check(d <= 3, f"{where}: PNG cell colours equal the SVG's", "max channel diff <= 3", d)
    # cells in row-major order: row = query, column = key
    want = viridis(attn.reshape(-1))
    d = float(np.abs(svg - want).max())
    CK.check(d <= VIRIDIS_TOL, f"{where}: cell colours are viridis(attention weight)",
             f"max channel diff <= {VIRIDIS_TOL}", f"{d:.0f}")


def dump_attn(mhaviz, args, tmp, name):
    out = os.path.join(tmp, name)
    r = run(mhaviz, ["--dump", out] + args, tmp)
    if r.returncode != 0:
        CK.fail(f"--dump {args}", "exit 0", f"{r.returncode} {r.stderr.strip()!r}")
        return None
    return np.load(os.path.join(out, "attn.npy"))


# --- the checks ---------------------------------------------------------------------

def check_png_basics(mhaviz, tmp):
    d = os.path.join(tmp, "basics")
    os.mkdir(d)
    args = ["--export", "a.png", "--size", "1600x900", "--scale", "2", "-H", "8", "-d", "128",
            "--sample", "1"]
    if not ok_run(mhaviz, args, d, "png scale 2", umask=0o022):
        return
    w, h, depth, _ = png_ihdr(os.path.join(d, "a.png"))
    CK.check((w, h, depth) == (3200, 1800, 8), "png scale 2: IHDR", "3200x1800, 8 bit",
             f"{w}x{h}, {depth} bit")
    mode = stat.S_IMODE(os.stat(os.path.join(d, "a.png")).st_mode)
    CK.check(mode == 0o644, "png: file mode under umask 022", "0644", oct(mode))
    first = open(os.path.join(d, "a.png"), "rb").read()
    img1 = read_rgba(os.path.join(d, "a.png"))
    os.rename(os.path.join(d, "a.png"), os.path.join(d, "first.png"))
    ok_run(mhaviz, args, d, "png scale 2, second run")
    second = open(os.path.join(d, "a.png"), "rb").read()
    CK.check(first == second, "png: same command, same bytes", "identical files",
             f"{len(first)} vs {len(second)} bytes, differing")
    img2 = read_rgba(os.path.join(d, "a.png"))
    CK.check(np.array_equal(img1, img2), "png: same command, same pixels", "identical pixels",
             f"{int(np.any(img1 != img2, axis=2).sum())} pixels differ")
    colours = colour_count(img1)
    CK.check(colours > MIN_COLOURS, "png: not blank", f"> {MIN_COLOURS} colours", colours)
    CK.check(leftovers(d) == [], "png: no temporary files", "none", leftovers(d))

    # the cells: SVG of the same view (scale 1) and the weights from --dump
    ok_run(mhaviz, ["--export", "a.svg", "-H", "8", "-d", "128", "--sample", "1"], d, "svg h=8")
    attn = dump_attn(mhaviz, ["-H", "8", "-d", "128", "--sample", "1"], d, "dump8")
    heads, order = svg_heads(os.path.join(d, "a.svg"))
    if attn is not None and CK.check(sorted(heads) == list(range(1, 9)), "svg h=8: head groups",
                                     "head-1..head-8", sorted(heads)):
        for k in (1, 5, 8):
            check_cells(f"png scale 2, head {k}", img1, heads[k][1], attn[k - 1], scale=2)


def check_sizes(mhaviz, tmp):
    d = os.path.join(tmp, "sizes")
    os.mkdir(d)
    for args, want in ((["--size", "800x600", "--scale", "1"], (800, 600)),
                       (["--scale", "3", "--size", "400x300"], (1200, 900)),
                       ([], (1600, 900)),
                       (["--size", "200x8192"], (200, 8192))):
        if ok_run(mhaviz, ["--export", "s.png"] + args, d, f"png {args}"):
            got = png_ihdr(os.path.join(d, "s.png"))[:2]
            CK.check(got == want, f"png {args}: size", f"{want[0]}x{want[1]}",
                     f"{got[0]}x{got[1]}")
            os.unlink(os.path.join(d, "s.png"))
    if ok_run(mhaviz, ["--export", "s.svg", "--size", "800x600"], d, "svg --size 800x600"):
        root = ET.parse(os.path.join(d, "s.svg")).getroot()
        CK.check((root.get("width"), root.get("height")) == ("800", "600"), "svg --size 800x600",
                 "width 800, height 600", (root.get("width"), root.get("height")))


def check_panel(mhaviz, tmp):
    d = os.path.join(tmp, "panel")
    os.mkdir(d)
    base = ["-H", "4", "-d", "64", "--sample", "1"]
    for name, extra in (("full", []), ("panel", ["--panel", "head:2"])):
        ok_run(mhaviz, ["--export", f"{name}.png"] + base + extra, d, f"png {name}")
        ok_run(mhaviz, ["--export", f"{name}.svg"] + base + extra, d, f"svg {name}")
    try:
        full, panel = read_rgba(os.path.join(d, "full.png")), read_rgba(os.path.join(d, "panel.png"))
    except (OSError, ValueError, subprocess.CalledProcessError) as e:
        CK.fail("panel: PNGs", "two PNG files", e)
        return
    # a single panel is cropped to its content: smaller than the --size, and the
    # full view holds it; the panel has no formula (the full view does)
    CK.check(200 < panel.shape[1] < full.shape[1] and 200 < panel.shape[0] <= full.shape[0],
             "panel head:2: size", f"cropped: smaller than {full.shape[1]}x{full.shape[0]}",
             f"{panel.shape[1]}x{panel.shape[0]}")
    full_texts = " ".join(svg_texts(os.path.join(d, "full.svg")))
    CK.check("\u211d" in full_texts, "full view: formula in the SVG", "the text '\u211d'",
             full_texts[:200])
    CK.check("\u211d" not in " ".join(svg_texts(os.path.join(d, "panel.svg"))),
             "panel head:2: no formula in the SVG", "no '\u211d'", "found")
    texts = svg_texts(os.path.join(d, "panel.svg"))
    header = [t for t in texts if re.search(r"d_model|sample \d|h = \d|MultiHead", t)]
    CK.check(header == [], "panel head:2: no header or equation text", "none", header)
    attn = dump_attn(mhaviz, base, d, "dump4")
    full_heads, _ = svg_heads(os.path.join(d, "full.svg"))
    panel_heads, _ = svg_heads(os.path.join(d, "panel.svg"))
    CK.check(sorted(panel_heads) == [2], "panel head:2: head groups in the SVG", "only head-2",
             sorted(panel_heads))
    if attn is None or 2 not in panel_heads or 2 not in full_heads:
        return
    pcells, fcells = panel_heads[2][1], full_heads[2][1]
    check_cells("panel head:2", panel, pcells, attn[1])
    check_cells("full view, head 2", full, fcells, attn[1])
    if len(pcells) == len(fcells) and pcells:
        same = np.array_equal(cell_colours(panel, pcells), cell_colours(full, fcells))
        CK.check(same, "panel head:2: same cell colours as head 2 of the full view", "equal",
                 "different")
        CK.check(pcells[0][2] >= fcells[0][2], "panel head:2: cells at least as large as in the"
                 " full view", f">= {fcells[0][2]} px", pcells[0][2])
        distinct = len({c[4] for c in pcells})
        CK.check(distinct >= 20, "panel head:2: heatmap has many distinct colours",
                 ">= 20 of 49", distinct)
    CK.check(any("head 2" in t for t in panel_heads[2][0]), "panel head:2: title", "'head 2'",
             panel_heads[2][0])


def check_svg(mhaviz, tmp):
    d = os.path.join(tmp, "svg")
    os.mkdir(d)
    for h in (4, 8):
        name = f"h{h}.svg"
        if not ok_run(mhaviz, ["--export", name, "-H", str(h)], d, f"svg -H {h}"):
            continue
        path = os.path.join(d, name)
        r = subprocess.run(["xmllint", "--noout", path], capture_output=True, text=True)
        CK.check(r.returncode == 0, f"svg -H {h}: xmllint", "well-formed", r.stderr.strip())
        raw = open(path, encoding="utf-8").read()
        groups = re.findall(r'<g id="head-(\d+)" class="head"', raw)
        CK.check(groups == [str(k) for k in range(1, h + 1)], f"svg -H {h}: head groups",
                 f"head-1..head-{h} once each, in order", groups)
        CK.check(raw.count('<g id="head-') == h, f"svg -H {h}: <g id=\"head-\" count", h,
                 raw.count('<g id="head-'))
        heads, _ = svg_heads(path)
        sizes = sorted({len(c) for _, c in heads.values()})
        CK.check(sizes == [49], f"svg -H {h}: cells per head", "7*7 = 49", sizes)
        texts = svg_texts(path)
        for word in ("cat", "mat", "The"):
            CK.check(word in texts, f"svg -H {h}: <text>{word}</text>", "present", "missing")
        again = os.path.join(d, "again.svg")
        ok_run(mhaviz, ["--export", "again.svg", "-H", str(h)], d, f"svg -H {h} again")
        if os.path.exists(again):
            CK.check(open(again, "rb").read() == raw.encode(), f"svg -H {h}: deterministic",
                     "identical bytes", "different")
    # text that needs escaping stays well-formed
    if ok_run(mhaviz, ["--export", "esc.svg", "--text", 'a & b < c > "d" \'e\' ]]>'], d,
              "svg with & < > quotes"):
        r = subprocess.run(["xmllint", "--noout", os.path.join(d, "esc.svg")],
                           capture_output=True, text=True)
        CK.check(r.returncode == 0, "svg with & < > quotes: xmllint", "well-formed",
                 r.stderr.strip())
        CK.check("&" in svg_texts(os.path.join(d, "esc.svg")), "svg: token '&' as text",
                 "present", "missing")
    CK.check(leftovers(d) == [], "svg: no temporary files", "none", leftovers(d))


def check_pdf(mhaviz, tmp):
    d = os.path.join(tmp, "pdf")
    os.mkdir(d)
    if not ok_run(mhaviz, ["--export", "a.pdf"], d, "pdf"):
        return
    path = os.path.join(d, "a.pdf")
    r = subprocess.run(["pdfinfo", path], capture_output=True, text=True)
    CK.check(r.returncode == 0, "pdf: pdfinfo", "exit 0", f"{r.returncode} {r.stderr.strip()}")
    pages = re.search(r"^Pages:\s+(\d+)", r.stdout, re.M)
    CK.check(pages and pages.group(1) == "1", "pdf: pages", 1, pages and pages.group(1))
    size = re.search(r"^Page size:\s+([\d.]+) x ([\d.]+)", r.stdout, re.M)
    if CK.check(size, "pdf: page size", "a page size line", r.stdout):
        ratio = float(size.group(1)) / float(size.group(2))
        CK.check(abs(ratio - 16 / 9) < 0.01, "pdf: page aspect", "16:9 like 1600x900",
                 f"{size.group(1)} x {size.group(2)}")
    r = subprocess.run(["pdftoppm", "-r", "50", "-png", "-singlefile", path,
                        os.path.join(d, "page")], capture_output=True, text=True)
    if CK.check(r.returncode == 0, "pdf: pdftoppm", "exit 0", r.stderr.strip()):
        colours = colour_count(read_rgba(os.path.join(d, "page.png")))
        CK.check(colours > MIN_COLOURS, "pdf: rendered page not blank", f"> {MIN_COLOURS} colours",
                 colours)
    r = subprocess.run(["pdftotext", path, "-"], capture_output=True, text=True)
    for word in ("head 1", "MultiHead", "cat"):
        CK.check(word in r.stdout, f"pdf: text '{word}'", "found by pdftotext", "missing")


def check_transparent(mhaviz, tmp):
    d = os.path.join(tmp, "alpha")
    os.mkdir(d)
    base = ["-H", "4", "--sample", "1"]
    if not (ok_run(mhaviz, ["--export", "t.png", "--background", "transparent"] + base, d,
                   "png transparent")
            and ok_run(mhaviz, ["--export", "o.png"] + base, d, "png opaque")
            and ok_run(mhaviz, ["--export", "t.svg"] + base, d, "svg for transparent")):
        return
    t, o = read_rgba(os.path.join(d, "t.png")), read_rgba(os.path.join(d, "o.png"))
    ctype = png_ihdr(os.path.join(d, "t.png"))[3]
    CK.check(ctype in (4, 6), "png transparent: colour type with alpha", "4 or 6", ctype)
    corners = [int(t[y, x, 3]) for y, x in ((0, 0), (0, -1), (-1, 0), (-1, -1))]
    CK.check(max(corners) < 255, "png transparent: background alpha", "< 255 at the corners",
             corners)
    # the figure fills most of itself now; its background is still a good share
    CK.check(float((t[..., 3] < 255).mean()) > 0.2, "png transparent: most background clear",
             "> 20% of pixels with alpha < 255", f"{float((t[..., 3] < 255).mean()):.0%}")
    CK.check(int(o[..., 3].min()) == 255, "png opaque: alpha", "255 everywhere",
             int(o[..., 3].min()))
    heads, _ = svg_heads(os.path.join(d, "t.svg"))
    if heads.get(1):
        cells = heads[1][1]
        alphas = [int(t[int(y + h / 2), int(x + w / 2), 3]) for x, y, w, h, _ in cells]
        CK.check(min(alphas) == 255, "png transparent: heatmap cells opaque", "alpha 255",
                 min(alphas))


# bad values: exit 2, one "mhaviz: " line naming the option, nothing written
BAD = [
    (["--export", "a.txt"], "--export"),
    (["--export", "a"], "--export"),
    (["--export", "a.png", "--size", "199x300"], "--size"),
    (["--export", "a.png", "--size", "300x8193"], "--size"),
    (["--export", "a.png", "--size", "10"], "--size"),
    (["--export", "a.png", "--size", "axb"], "--size"),
    (["--export", "a.png", "--size", "300x"], "--size"),
    (["--export", "a.png", "--scale", "0"], "--scale"),
    (["--export", "a.png", "--scale", "5"], "--scale"),
    (["--export", "a.png", "--scale", "1.5"], "--scale"),
    (["--export", "a.png", "--panel", "head:0"], "--panel"),
    (["--export", "a.png", "--panel", "head:9", "-H", "4"], "--panel"),
    (["--export", "a.png", "-H", "4", "--panel", "head:9"], "--panel"),
    (["--export", "a.png", "--panel", "foo"], "--panel"),
    (["--export", "a.png", "--theme", "pink"], "--theme"),
    (["--export", "a.png", "--colormap", "nope"], "--colormap"),
    (["--export", "a.png", "--background", "x"], "--background"),
    (["--export", "a.svg", "--size", "10"], "--size"),
    (["--export", "a.pdf", "--panel", "head:5"], "--panel"),
]


def check_errors(mhaviz, tmp):
    for args, opt in BAD:
        d = tempfile.mkdtemp(dir=tmp, prefix="bad-")
        r = run(mhaviz, args, d)
        lines = r.stderr.splitlines()
        where = " ".join(args)
        CK.check(r.returncode == 2, f"{where}: exit status", 2, r.returncode)
        CK.check(len(lines) == 1 and lines[0].startswith("mhaviz: ") and opt in lines[0],
                 f"{where}: stderr", f"one 'mhaviz: ' line naming {opt}", repr(r.stderr))
        CK.check(os.listdir(d) == [], f"{where}: nothing written", "empty folder", os.listdir(d))

    # unwritable targets: exit 1, "mhaviz: cannot write", nothing left behind.
    # Tests run as root, which ignores permission bits, so use paths no one can create.
    d = tempfile.mkdtemp(dir=tmp, prefix="unwritable-")
    with open(os.path.join(d, "somefile"), "w") as f:
        f.write("x")
    for target in ("/nonexistent/dir/a.png", "somefile/a.png", "somefile/a.svg",
                   "somefile/a.pdf", "/proc/a.png", "/proc/a.svg"):
        r = run(mhaviz, ["--export", target], d)
        lines = r.stderr.splitlines()
        CK.check(r.returncode == 1, f"--export {target}: exit status", 1, r.returncode)
        CK.check(len(lines) == 1 and lines[0].startswith("mhaviz: cannot write"),
                 f"--export {target}: stderr", "one line starting 'mhaviz: cannot write'",
                 repr(r.stderr))
        CK.check(sorted(os.listdir(d)) == ["somefile"], f"--export {target}: folder unchanged",
                 ["somefile"], sorted(os.listdir(d)))
        CK.check(not os.path.exists(target if target.startswith("/") else os.path.join(d, target)),
                 f"--export {target}: no file", "none", "a file")
    proc_left = [f for f in os.listdir("/proc") if f.startswith("a.")]
    CK.check(proc_left == [], "/proc: nothing left", "none", proc_left)

    # an existing file survives a refused export and is replaced by a good one
    d = tempfile.mkdtemp(dir=tmp, prefix="existing-")
    path = os.path.join(d, "a.png")
    with open(path, "wb") as f:
        f.write(b"old")
    r = run(mhaviz, ["--export", "a.png", "--scale", "9"], d)
    CK.check(r.returncode == 2 and open(path, "rb").read() == b"old",
             "bad --scale onto an existing file", "exit 2, file untouched",
             f"exit {r.returncode}, file {'untouched' if open(path, 'rb').read() == b'old' else 'changed'}")
    r = run(mhaviz, ["--export", "a.png"], d)
    CK.check(r.returncode == 0 and png_ihdr(path)[:2] == (1600, 900),
             "good export onto an existing file", "exit 0, a 1600x900 PNG", f"exit {r.returncode}")
    CK.check(sorted(os.listdir(d)) == ["a.png"], "existing file: no temporaries", ["a.png"],
             sorted(os.listdir(d)))


def check_window_agrees(mhaviz, tmp):
    """The window (under Xvfb) in presentation mode and the headless export of one
    configuration agree: both show the figure, no buttons and no timings.
    The Xvfb screen is wider than the window so that, with the pointer stuck at the
    screen's centre (Xvfb here ignores xdotool mousemove), moving the window to
    (0, 0) takes it from under the pointer: no hover, no tooltip."""
    d = os.path.join(tmp, "agree")
    os.mkdir(d)
    cfg = ["-H", "4", "-d", "64", "--sample", "2"]
    # the window presents at its text floor (1/54 of 900 px: 17 px, a zoom of 121 %), and
    # so does a figure made presenting; a plain export keeps the zoom of its size
    if not ok_run(mhaviz, ["--export", "e.png", "--size", "1600x900", "--present"] + cfg, d,
                  "agree: export"):
        return
    ok_run(mhaviz, ["--export", "e.svg", "--size", "1600x900", "--present"] + cfg, d,
           "agree: export svg")
    plain = os.path.join(d, "plain.png")
    if ok_run(mhaviz, ["--export", plain, "--size", "1600x900"] + cfg, d, "agree: plain export"):
        frac = diff_fraction(read_rgba(plain), read_rgba(os.path.join(d, "e.png")), threshold=40)
        CK.check(frac > 0.05, "agree: a plain export is not the presentation",
                 "> 5% of the pixels differ (100 % against the floor's 121 %)", f"{frac:.2%}")
    xvfb = Xvfb(size="3840x1080x24")
    proc = None
    try:
        xvfb.run(["xdotool", "mousemove", "0", "0"])
        proc = subprocess.Popen([mhaviz] + cfg, env=xvfb.env(), cwd=d,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        win = window_of_pid(xvfb, proc.pid)
        if not CK.check(win, "agree: window", "a window", "none"):
            return
        xvfb.run(["xdotool", "windowmove", win, "0", "0"])
        xvfb.run(["xdotool", "windowsize", win, "1600", "900"])
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and geometry_of(xvfb, win) != (0, 0, 1600, 900):
            time.sleep(0.1)
        geo = geometry_of(xvfb, win)
        CK.check(geo == (0, 0, 1600, 900), "agree: window geometry", "1600x900 at (0, 0)", geo)
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and "d_model=64" not in title_of(xvfb, win):
            time.sleep(0.1)
        # presentation mode (P) hides the controls and the status line: what the window
        # then shows is the figure, so the whole picture is compared. The picture is
        # taken once it has changed from the one before P and then held still for two
        # grabs (a fixed 0.7 s wait grabbed the window before its redraw under the
        # sanitizers on a busy machine: 35 % of the pixels differed)
        shot = os.path.join(d, "window.png")

        def grab():
            subprocess.run([IMPORT, "-display", xvfb.display, "-window", win, shot],
                           check=True, timeout=30)
            return read_rgba(shot)

        before = grab()
        xvfb.run(["xdotool", "key", "--window", win, "p"])
        win_img, last = None, None
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            time.sleep(0.3)
            img = grab()
            if (last is not None and np.array_equal(img, last)
                    and not np.array_equal(img, before)):
                win_img = img
                break
            last = img
        if not CK.check(win_img is not None, "agree: presentation mode drawn",
                        "a changed picture, still for two grabs", "none within 20 s"):
            return
        exp_img = read_rgba(os.path.join(d, "e.png"))
        if not CK.check(win_img.shape == exp_img.shape, "agree: screenshot size",
                        exp_img.shape, win_img.shape):
            return
        top, bottom = 0, exp_img.shape[0]
        frac = diff_fraction(win_img[top:bottom], exp_img[top:bottom], threshold=40)
        print(f"agree: rows {top}..{bottom}: {frac:.2%} of the pixels differ")
        # tolerance 2%: measured about 0.3% (1-px shifts where the GPU scales heatmap
        # textures and draws rotated labels); a wrong layout or colour is far above it
        CK.check(frac < 0.02, f"agree: window vs export, rows {top}..{bottom}",
                 "< 2% pixels differ by more than 40 in a channel", f"{frac:.2%}")
    finally:
        if proc:
            stop_process(proc)
        xvfb.stop()


def main():
    if len(sys.argv) != 2:
        print("usage: export_check.py MHAVIZ", file=sys.stderr)
        return 2
    mhaviz = os.path.abspath(sys.argv[1])
    with tempfile.TemporaryDirectory(prefix="mhaviz-export-") as tmp:
        for check in (check_png_basics, check_sizes, check_panel, check_svg, check_pdf,
                      check_transparent, check_errors, check_window_agrees):
            try:
                check(mhaviz, tmp)
            except Exception as e:  # one broken section must not hide the others
                CK.fail(check.__name__, "no exception", f"{type(e).__name__}: {e}")
    return CK.finish("export_check")


if __name__ == "__main__":
    sys.exit(main())
