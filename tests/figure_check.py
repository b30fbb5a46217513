#!/usr/bin/python3
"""figure_check.py MHAVIZ: figures for slides, made headless with `mhaviz --export`.

Checks:
- The figure fills itself. Blank share: the picture cut into 32x32-pixel tiles, the
  fraction of tiles whose every pixel is the background colour (the corner pixel); so
  gaps between labels and heatmaps do not count, an empty region of a tile or more
  does. The default export (1600x900, with the lesson's how-alike and cost panels,
  which are on by default) stays under a fifth (15 % with the panels in a column
  beside the equation; 23 % with them under it, 42 % before the layout filled
  figures); other configurations (h = 1, 8, 16, a long text, portrait, dark) are
  printed and stay under a third. Without the lesson's panels the same figure is
  under a fifth (10 %): window_zoom_e2e.py checks that, in presentation mode, which
  draws what an export draws (the panels go with the I key, which exports lack).
- No UI text in any figure: the SVG's <text> elements hold no hint, page note, key
  name, notice or timing ("PgUp", "hover", "Esc", "Ctrl", "compute", ...), for the
  default view, a paged grid, every page of it, a long text and a dark figure.
- --page K exports page K: the heads of a paged figure (h = 64 at 800x600) are
  split over the pages K = 1, 2, ... in order, each head on exactly one page; the
  caption says which; a page past the last is exit 2 with one "mhaviz: --page" line
  and no file.
- Single panels are cropped to their content: --panel head:2 and --panel equation
  (PNG and SVG) are smaller than the --size, their content comes to within 16 px of
  every edge, and the first and last rows and columns are background.
- Greys is greyscale-safe in every panel: with --colormap greys every heatmap and
  colorbar cell of the SVG (the attention heads, Concat, W^O, MultiHead) is grey.
Exits 1 with "FAIL where: expected X, got Y" lines on any failure."""
import os
import re
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

import numpy as np

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
from e2e_util import Checker, no_display_env, read_rgba

CK = Checker()
SVG_NS = "{http://www.w3.org/2000/svg}"
TILE = 32
HINTS = ("PgUp", "PgDn", "page ", "hover", "Esc", "Ctrl", "F1", "F11", "compute", "frame",
         "zoom", "saved", "cannot", "labelled", "hidden", "Enter", "click")


def run(mhaviz, args, cwd):
    return subprocess.run([mhaviz] + args, cwd=cwd, env=no_display_env(), capture_output=True,
                          text=True, timeout=120)


def export(mhaviz, name, args, cwd, where):
    r = run(mhaviz, ["--export", name] + args, cwd)
    ok = CK.check(r.returncode == 0 and r.stderr == "", f"{where}: export runs",
                  "exit 0, nothing on stderr", f"exit {r.returncode}, {r.stderr.strip()!r}")
    return os.path.join(cwd, name) if ok else None


def blank_share(img):
    """Fraction of TILE x TILE tiles that are background only (see the module doc)."""
    rgb = img[..., :3].astype(np.int32)
    p = (rgb[..., 0] << 16) | (rgb[..., 1] << 8) | rgb[..., 2]
    th, tw = p.shape[0] // TILE, p.shape[1] // TILE
    tiles = (p[:th * TILE, :tw * TILE] == p[0, 0]).reshape(th, TILE, tw, TILE)
    return float(tiles.all(axis=(1, 3)).mean())


def svg_texts(path):
    root = ET.parse(path).getroot()
    return ["".join(t.itertext()) for t in root.iter(SVG_NS + "text")]


def svg_heads(path):
    """Head numbers of the <g id="head-K"> groups, in document order."""
    root = ET.parse(path).getroot()
    return [int(m.group(1)) for g in root.iter(SVG_NS + "g")
            if (m := re.fullmatch(r"head-(\d+)", g.get("id") or ""))]


def svg_cells(path):
    """Fill colours of every heatmap or colorbar cell: the rects of the crisp-edged
    groups the SVG writer makes for images."""
    root = ET.parse(path).getroot()
    out = []
    for g in root.iter(SVG_NS + "g"):
        if g.get("shape-rendering") != "crispEdges":
            continue
        for r in g.iter(SVG_NS + "rect"):
            f = r.get("fill", "")
            if re.fullmatch(r"#[0-9a-fA-F]{6}", f):
                out.append(tuple(int(f[i:i + 2], 16) for i in (1, 3, 5)))
    return out


def check_blank(mhaviz, tmp):
    d = os.path.join(tmp, "blank")
    os.mkdir(d)
    path = export(mhaviz, "default.png", [], d, "blank: default")
    if path:
        share = blank_share(read_rgba(path))
        print(f"blank share, default 1600x900 export: {share:.1%}")
        CK.check(share < 0.20, "default export: blank share", "< 20% of 32 px tiles empty",
                 f"{share:.1%}")
    for name, args in (("h1", ["-H", "1"]), ("h8", ["-H", "8", "-d", "128"]),
                       ("h16", ["-H", "16", "--sample", "2"]), ("paragraph", ["--sample", "7"]),
                       ("portrait", ["--size", "1080x1920"]),
                       ("dark", ["--theme", "dark", "--colormap", "magma"])):
        path = export(mhaviz, f"{name}.png", args, d, f"blank: {name}")
        if path:
            share = blank_share(read_rgba(path))
            print(f"blank share, {name} ({' '.join(args)}): {share:.1%}")
            CK.check(share < 0.33, f"{name} export: blank share", "< 33% of 32 px tiles empty",
                     f"{share:.1%}")


def check_no_hints(mhaviz, tmp):
    d = os.path.join(tmp, "hints")
    os.mkdir(d)
    text_512 = " ".join(f"w{i}" for i in range(400))  # labels hidden at this size
    cases = (("default", []), ("paged", ["-H", "64", "--sample", "7", "--size", "800x600"]),
             ("paged-p2", ["-H", "64", "--sample", "7", "--size", "800x600", "--page", "2"]),
             ("long", ["--text", text_512, "-H", "8"]),
             ("dark", ["--theme", "dark", "-H", "16", "--sample", "3"]),
             ("head", ["--panel", "head:2"]), ("equation", ["--panel", "equation"]))
    for name, args in cases:
        path = export(mhaviz, f"{name}.svg", args, d, f"hints: {name}")
        if not path:
            continue
        texts = svg_texts(path)
        bad = [t for t in texts if any(h in t for h in HINTS)]
        CK.check(texts and not bad, f"hints: {name}: SVG text", "no UI hint, note or timing",
                 bad[:5] if bad else "no text at all")


def check_pages(mhaviz, tmp):
    d = os.path.join(tmp, "pages")
    os.mkdir(d)
    base = ["-H", "64", "--sample", "7", "--size", "800x600"]
    seen, k = [], 1
    while k <= 64:
        r = run(mhaviz, ["--export", f"p{k}.svg", "--page", str(k)] + base, d)
        if r.returncode != 0:
            break
        heads = svg_heads(os.path.join(d, f"p{k}.svg"))
        texts = " ".join(svg_texts(os.path.join(d, f"p{k}.svg")))
        CK.check(heads and heads == list(range(heads[0], heads[0] + len(heads))),
                 f"--page {k}: heads", "consecutive heads", heads)
        if heads:
            cap = f"heads {heads[0]}\u2013{heads[-1]} of 64"
            CK.check(cap in texts, f"--page {k}: caption", repr(cap), texts[:120])
        seen += heads
        k += 1
    pages = k - 1
    print(f"--page: h = 64 at 800x600 pages as {pages} pages")
    CK.check(pages >= 2, "--page: the grid pages", ">= 2 pages", pages)
    CK.check(seen == list(range(1, 65)), "--page: every head on exactly one page, in order",
             "heads 1..64 once", seen)
    # the page past the last: exit 2, one line naming --page and the pages there are
    r = run(mhaviz, ["--export", "past.svg", "--page", str(pages + 1)] + base, d)
    lines = r.stderr.splitlines()
    CK.check(r.returncode == 2 and len(lines) == 1 and lines[0].startswith("mhaviz: --page")
             and f"{pages} page" in lines[0], "--page past the last", "exit 2, one line "
             f"'mhaviz: --page ...' naming {pages} pages", f"exit {r.returncode}, {r.stderr!r}")
    CK.check(not os.path.exists(os.path.join(d, "past.svg")), "--page past the last: no file",
             "nothing written", "past.svg exists")
    r = run(mhaviz, ["--export", "one.svg", "--page", "2", "-H", "4"], d)
    CK.check(r.returncode == 2, "--page 2 of a grid with one page", "exit 2",
             f"exit {r.returncode}, {r.stderr!r}")


def check_crop(mhaviz, tmp):
    d = os.path.join(tmp, "crop")
    os.mkdir(d)
    for panel in ("head:2", "equation"):
        name = panel.replace(":", "")
        png = export(mhaviz, f"{name}.png", ["--panel", panel, "-H", "4"], d, f"crop {panel}")
        svg = export(mhaviz, f"{name}.svg", ["--panel", panel, "-H", "4"], d, f"crop {panel} svg")
        if not png:
            continue
        img = read_rgba(png)
        h, w = img.shape[:2]
        CK.check(w < 1600 and h <= 900 and (w, h) != (1600, 900), f"crop {panel}: size",
                 "smaller than the 1600x900 --size", f"{w}x{h}")
        p = img[..., :3].astype(int)
        ink = np.any(p != p[0, 0], axis=2)
        ys, xs = np.nonzero(ink)
        if not ys.size:
            CK.fail(f"crop {panel}: content", "something drawn", "a blank picture")
            continue
        margins = (int(ys.min()), h - 1 - int(ys.max()), int(xs.min()), w - 1 - int(xs.max()))
        CK.check(all(1 <= m <= 16 for m in margins), f"crop {panel}: margins",
                 "content 1..16 px from every edge (top, bottom, left, right)", margins)
        if svg:
            root = ET.parse(svg).getroot()
            CK.check((root.get("width"), root.get("height")) == (str(w), str(h)),
                     f"crop {panel}: SVG size", f"{w}x{h} as the PNG",
                     (root.get("width"), root.get("height")))


def check_greys(mhaviz, tmp):
    d = os.path.join(tmp, "greys")
    os.mkdir(d)
    for name, args in (("greys", ["--colormap", "greys"]),
                       ("greys-dark", ["--colormap", "greys", "--theme", "dark", "-H", "8"])):
        path = export(mhaviz, f"{name}.svg", args, d, name)
        if not path:
            continue
        cells = svg_cells(path)
        coloured = [c for c in cells if not c[0] == c[1] == c[2]]
        # heads 4 x 7 x 7 + Concat 7 x 64 + W^O 64 x 64 + MultiHead, and the colorbars
        CK.check(len(cells) > 4000 and not coloured, f"{name}: every heatmap cell grey",
                 "> 4000 cells, all with R = G = B",
                 f"{len(cells)} cells, {len(coloured)} coloured, e.g. {coloured[:3]}")
    path = export(mhaviz, "viridis.svg", [], d, "viridis")
    if path:  # the premise: with a colour map the cells are not all grey
        cells = svg_cells(path)
        CK.check(sum(1 for c in cells if not c[0] == c[1] == c[2]) > len(cells) // 2,
                 "viridis: most cells coloured", "the check can see colour", "all grey")


def main():
    if len(sys.argv) != 2:
        print("usage: figure_check.py MHAVIZ", file=sys.stderr)
        return 2
    mhaviz = os.path.abspath(sys.argv[1])
    with tempfile.TemporaryDirectory(prefix="mhaviz-figure-") as tmp:
        for check in (check_blank, check_no_hints, check_pages, check_crop, check_greys):
            try:
                check(mhaviz, tmp)
            except Exception as e:  # one broken section must not hide the others
                CK.fail(check.__name__, "no exception", f"{type(e).__name__}: {e}")
    return CK.finish("figure_check")


if __name__ == "__main__":
    sys.exit(main())
