#!/usr/bin/python3
"""bench_plot.py [BENCH.jsonl] [-o OUT.svg]: draws `mhaviz --bench-json` output as SVG.

Left: the forward pass's median time against its FLOPs (8 n d^2 + 4 n^2 d), both
axes logarithmic, one point per shape (n, d_model, h). Right: the rate it reaches
in GFLOP/s, with the sgemm rate of the same run as a dashed line: the machine's
limit. Reads the JSON lines from the file or standard input; writes the SVG to
OUT.svg or standard output. Needs nothing beyond the Python standard library.

    mhaviz --bench-json > bench.jsonl
    python3 examples/bench_plot.py bench.jsonl -o assets/bench.svg
"""
import argparse
import json
import math
import sys
from xml.sax.saxutils import escape

W, H = 980, 420            # the whole picture
PANEL_W, PANEL_H = 380, 290
LEFT = (80, 60)            # top-left corner of each panel's plot area
RIGHT = (560, 60)
INK, GRID, ACCENT, LIMIT = "#222222", "#dddddd", "#3b6ea8", "#c0392b"


def load(lines):
    forward, sgemm = [], None
    for line in lines:
        line = line.strip()
        if not line:
            continue
        obj = json.loads(line)
        if obj.get("case") == "forward":
            forward.append(obj)
        elif obj.get("case") == "sgemm":
            sgemm = obj
    if not forward:
        raise ValueError("no forward lines in the input")
    for f in forward:
        n, d = f["n"], f["d_model"]
        f["flops"] = 8.0 * n * d * d + 4.0 * n * n * d
    forward.sort(key=lambda f: f["flops"])
    return forward, sgemm


def log_ticks(lo, hi):
    """Powers of ten covering [lo, hi]."""
    a, b = math.floor(math.log10(lo)), math.ceil(math.log10(hi))
    return [10.0 ** e for e in range(a, b + 1)]


SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def fmt_power(v):
    e = int(round(math.log10(v)))
    return "10" + str(e).translate(SUPERSCRIPT) if abs(e) > 3 else f"{v:g}"


def text(x, y, s, size=12, anchor="middle", weight="normal", fill=INK, rotate=None):
    rot = f' transform="rotate({rotate} {x:.1f} {y:.1f})"' if rotate else ""
    return (f'<text x="{x:.1f}" y="{y:.1f}" font-size="{size}" text-anchor="{anchor}" '
            f'font-weight="{weight}" fill="{fill}"{rot}>{escape(s)}</text>')


def axes(origin, xticks, yticks, xmap, ymap, xlabel, ylabel, title, yfmt):
    ox, oy = origin
    out = [f'<rect x="{ox}" y="{oy}" width="{PANEL_W}" height="{PANEL_H}" fill="none" '
           f'stroke="{INK}" stroke-width="1"/>']
    for t in xticks:
        x = xmap(t)
        out.append(f'<line x1="{x:.1f}" y1="{oy}" x2="{x:.1f}" y2="{oy + PANEL_H}" '
                   f'stroke="{GRID}"/>')
        out.append(text(x, oy + PANEL_H + 16, fmt_power(t), 11))
    for t in yticks:
        y = ymap(t)
        out.append(f'<line x1="{ox}" y1="{y:.1f}" x2="{ox + PANEL_W}" y2="{y:.1f}" '
                   f'stroke="{GRID}"/>')
        out.append(text(ox - 6, y + 4, yfmt(t), 11, anchor="end"))
    out.append(text(ox + PANEL_W / 2, oy + PANEL_H + 36, xlabel, 12))
    out.append(text(ox - 52, oy + PANEL_H / 2, ylabel, 12, rotate=-90))
    out.append(text(ox + PANEL_W / 2, oy - 12, title, 14, weight="bold"))
    return out


def draw(forward, sgemm):
    fl = [f["flops"] for f in forward]
    us = [f["median_us"] for f in forward]
    gf = [f["gflops"] for f in forward]
    xt = log_ticks(min(fl), max(fl))
    xlo, xhi = math.log10(xt[0]), math.log10(xt[-1])

    def xmap_at(ox):
        return lambda v: ox + (math.log10(v) - xlo) / (xhi - xlo) * PANEL_W

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" '
           f'viewBox="0 0 {W} {H}" font-family="DejaVu Sans, sans-serif">',
           f'<rect width="{W}" height="{H}" fill="#ffffff"/>']

    # left: time against FLOPs, log-log
    yt = log_ticks(min(us), max(us))
    ylo, yhi = math.log10(yt[0]), math.log10(yt[-1])
    xl = xmap_at(LEFT[0])

    def yl(v):
        return LEFT[1] + PANEL_H - (math.log10(v) - ylo) / (yhi - ylo) * PANEL_H

    out += axes(LEFT, xt, yt, xl, yl, "FLOPs of one forward (8 n d² + 4 n² d)",
                "median time (µs)", "forward pass: time", fmt_power)
    pts = " ".join(f"{xl(a):.1f},{yl(b):.1f}" for a, b in zip(fl, us))
    out.append(f'<polyline points="{pts}" fill="none" stroke="{ACCENT}" stroke-width="1.5"/>')
    for i, f in enumerate(forward):  # labels on alternate sides of the line
        x, y = xl(f["flops"]), yl(f["median_us"])
        out.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="3.5" fill="{ACCENT}"/>')
        label = f'({f["n"]}, {f["d_model"]}, {f["h"]})'
        if i % 2 or x - 6 * len(label) < LEFT[0] + 4:  # below right, or inside the panel
            out.append(text(x + 7, y + 14, label, 10, anchor="start"))
        elif y - 7 < LEFT[1] + 12:  # below left, under the panel's top edge
            out.append(text(x - 7, y + 14, label, 10, anchor="end"))
        else:
            out.append(text(x - 7, y - 7, label, 10, anchor="end"))

    # right: GFLOP/s against FLOPs, with the sgemm rate
    top = max(gf + ([sgemm["gflops"]] if sgemm else [])) * 1.1
    e = 10 ** math.floor(math.log10(top))
    step = e / 10  # the largest round step that still gives at least four ticks
    for m in (0.2, 0.5, 1, 2, 5):
        if top / (m * e) >= 4:
            step = m * e
    ymax = step * math.ceil(top / step)
    xr = xmap_at(RIGHT[0])

    def yr(v):
        return RIGHT[1] + PANEL_H - v / ymax * PANEL_H

    out += axes(RIGHT, xt, [step * i for i in range(int(round(ymax / step)) + 1)], xr, yr,
                "FLOPs of one forward (8 n d² + 4 n² d)", "GFLOP/s",
                "forward pass: rate", lambda v: f"{v:g}")
    if sgemm:
        y = yr(sgemm["gflops"])
        out.append(f'<line x1="{RIGHT[0]}" y1="{y:.1f}" x2="{RIGHT[0] + PANEL_W}" y2="{y:.1f}" '
                   f'stroke="{LIMIT}" stroke-width="1.5" stroke-dasharray="6 4"/>')
        out.append(text(RIGHT[0] + 6, y - 6,
                        f'sgemm 1024³: {sgemm["gflops"]:.0f} GFLOP/s, {sgemm["threads"]} '
                        f'thread(s), {sgemm["core"]}', 10, anchor="start", fill=LIMIT))
    pts = " ".join(f"{xr(a):.1f},{yr(b):.1f}" for a, b in zip(fl, gf))
    out.append(f'<polyline points="{pts}" fill="none" stroke="{ACCENT}" stroke-width="1.5"/>')
    for f in forward:
        out.append(f'<circle cx="{xr(f["flops"]):.1f}" cy="{yr(f["gflops"]):.1f}" r="3.5" '
                   f'fill="{ACCENT}"/>')
    out.append(text(W / 2, H - 8, "points: (n, d_model, h); mhaviz --bench-json, "
                    "medians over at least 0.5 s", 11, fill="#555555"))
    out.append("</svg>")
    return "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("input", nargs="?", help="JSON lines (default: standard input)")
    ap.add_argument("-o", "--output", help="SVG file (default: standard output)")
    args = ap.parse_args()
    src = open(args.input, encoding="utf-8") if args.input else sys.stdin
    with src:
        forward, sgemm = load(src)
    svg = draw(forward, sgemm)
    if args.output:
        with open(args.output, "w", encoding="utf-8") as f:
            f.write(svg)
    else:
        sys.stdout.write(svg)
    return 0


if __name__ == "__main__":
    sys.exit(main())
