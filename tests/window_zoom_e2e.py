#!/usr/bin/python3
"""window_zoom_e2e.py MHAVIZ: zoom, presentation mode and the start on a 4K screen,
in the real window under a private Xvfb (3840x2160x24, no window manager).

The app prints its layout after each frame as one JSON line on stderr when
MHAVIZ_LAYOUT_LOG is set (every rectangle named, sizes, pages, zooms); the test reads
those lines and checks them itself:
- Start: on a 3840x2160 screen the window starts at 3200x1800 and at 150 % (the
  zoom of that size, min(3200 / 1920, 1800 / 1080) down to a step); Ctrl+0 returns
  to the zoom of the window's size (200 % at 3840x2160, 100 % at 1920x1080 or less).
- Zoom: at 800x600, 1920x1080, 3840x2160 and 1080x1920 (portrait), Ctrl+- down to
  80 % and Ctrl+= up to 300 %; at every step every rectangle lies inside the window
  and no two overlap (the formula strip holds its runs), and the heatmaps grow with
  the zoom where there is room: the side never shrinks from one step to the next
  unless the grid fills its area (then never below 3/4 of its side at the base
  zoom), and the zoom the data is shown at never falls. The screenshot of each
  size at 300 % is not blank.
- Focus (key 1) at 1024x768 and 768x1024, every zoom step 80 % to 300 %: every
  rectangle inside the window, no two overlapping (Q_i, K_i, V_i, head_i and the
  equation, their colorbars' numbers included).
- Presentation (P): no buttons and no status line in the layout; the pointer over a
  head cell draws the highlight (its colour appears in the picture); Escape leaves
  presentation and the window stays; Escape with nothing open does not quit; Ctrl+Q
  exits 0. At 1600x900 with the lesson's panels off (I), the presentation (the
  picture an export draws) has under a fifth of its 32x32 tiles empty.
- Compare (B, then Up): at 800x600, 1920x1080 and 1080x1920, zoom 80 % to 300 %: the
  two panes side by side (one above the other in portrait) do not overlap; every
  rectangle of the live view lies in the live pane (the status line across the
  bottom); the banner's chips lie above both panes, name h on each side and do not
  overlap; nothing else overlaps; the live heatmaps grow with the zoom as above (not
  at 800x600, whose panes are 400 px wide); the pinned pane's part of the screenshot
  is a picture. B again leaves compare; Escape then does not quit.
Under MHAVIZ_TEST_SAMPLE=k (the sanitizer build) every k-th of the nine sizes swept
(zoom, focus and compare counted as one list) runs; the normal build runs them all.
Exits 1 with "FAIL where: expected X, got Y" lines on any failure."""
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
from e2e_util import (SETTLE_TIMEOUT, Checker, Sample, WindowApp, Xvfb, colour_count,
                      geometry_of, last_stats, read_rgba, settled)

CK = Checker()
SAMPLE = Sample("window_zoom_e2e")  # the sanitizer build: every k-th window size
SIZES = ((800, 600), (1920, 1080), (3840, 2160), (1080, 1920))
FOCUS_SIZES = ((1024, 768), (768, 1024))
STEPS = (0.8, 0.9, 1.0, 1.1, 1.25, 1.5, 1.75, 2.0, 2.5, 3.0)
HIGHLIGHT = (0xff, 0x2d, 0x55)  # the pointer highlight of the light theme


class App(WindowApp):
    """A layout line at every frame; MHAVIZ_STATS=lines: after it, whether a job is under
    way (the test waits for a settled frame, not for a time)."""

    def __init__(self, xvfb, mhaviz, tmp, label, args=()):
        super().__init__(xvfb, mhaviz, tmp, args, log=f"{label}.log", MHAVIZ_LAYOUT_LOG="1",
                         MHAVIZ_STATS="lines")

    def wait_layout(self, pred, timeout=8.0):
        """The last layout line after `pred` holds for one, or None."""
        return super().wait_layout(pred, timeout)

    def answers(self):
        """Whether the window is still there and answering after the keys sent so far:
        a resize sent after them (the X server keeps their order) shows in a layout.
        The window is 1 px narrower afterwards."""
        x, y, w, h = geometry_of(self.xvfb, self.win)
        self.xvfb.run(["xdotool", "windowsize", self.win, str(w - 1), str(h)])
        return self.wait_layout(lambda d: d["width"] == w - 1, SETTLE_TIMEOUT) is not None


def overlap(a, b):
    return a[0] < b[0] + b[2] and b[0] < a[0] + a[2] and a[1] < b[1] + b[3] and b[1] < a[1] + a[3]


def check_layout(d, where):
    """Every rectangle inside the window, no two overlapping."""
    W, H = d["width"], d["height"]
    items = [(k, n, (x, y, w, h)) for k, n, x, y, w, h in d["items"]]
    outside = [n for k, n, r in items if r[0] < 0 or r[1] < 0 or r[0] + r[2] > W or r[1] + r[3] > H]
    CK.check(not outside, f"{where}: inside the {W}x{H} window", "every rectangle", outside[:4])
    bad = []
    for i in range(len(items)):
        for j in range(i + 1, len(items)):
            ki, kj = items[i][0], items[j][0]
            if {ki, kj} == {"formula", "run"} or {ki, kj} == {"note", "button"}:
                continue  # the strip holds its runs; the page note its buttons
            if overlap(items[i][2], items[j][2]):
                bad.append(f"{items[i][1]} / {items[j][1]}")
    CK.check(not bad, f"{where}: no overlap", "none", bad[:4])
    CK.check(d["shown_heads"] >= 1 and d["head_side"] >= 1, f"{where}: heads shown",
             ">= 1 head", f"{d['shown_heads']} of side {d['head_side']}")


def room_bound(d):
    """The grid fills its area's width or height: its heatmaps could not be larger."""
    ax, ay, aw, ah = d["heads_area"]
    maps = [r for k, n, *r in d["items"] if k == "map"]
    bars = [r for k, n, *r in d["items"] if n == "attention colorbar numbers"]
    if not maps or not bars:
        return True
    x0 = min(r[0] for r in maps)
    right = x0 + d["grid_cols"] * (d["head_side"] + d["gap"]) - d["gap"]
    bottom = bars[0][1] + bars[0][3]
    return (ax + aw - right <= d["grid_cols"] + 1
            or ay + ah - bottom <= d["pad"] * 3 // 2 + d["grid_rows"] + 1)


def check_growth(points, where, base):
    """points: [(zoom, layout)] in rising zoom."""
    base_side = dict((round(z, 3), d["head_side"]) for z, d in points).get(round(base, 3))
    for (z0, a), (z1, b) in zip(points, points[1:]):
        CK.check(b["data_zoom"] >= a["data_zoom"] - 1e-3, f"{where}: zoom {z0} -> {z1}",
                 "the data's zoom does not fall", f"{a['data_zoom']} -> {b['data_zoom']}")
        if not room_bound(b):
            CK.check(b["head_side"] >= a["head_side"], f"{where}: zoom {z0} -> {z1}",
                     "heatmaps not smaller while the grid has room",
                     f"side {a['head_side']} -> {b['head_side']} ({b['per_page']} a page)")
        if base_side and z1 > base + 1e-3:
            CK.check(4 * b["head_side"] >= 3 * base_side, f"{where}: zoom {z1}",
                     f">= 3/4 of the side at the base zoom ({base_side})", b["head_side"])
    sides = " ".join(f"{z:g}:{d['head_side']}" for z, d in points)
    print(f"{where}: heatmap side by zoom {sides}")


def zoom_sweep(app, w, where, check):
    """Ctrl+- down to 80 %, then Ctrl+= step by step up to 300 %, each step's layout
    checked with check(d, where); returns [(zoom, layout)] in rising zoom."""
    for _ in range(len(STEPS)):
        app.key("ctrl+minus")
    d = app.wait_layout(lambda d: d["width"] == w and abs(d["zoom"] - STEPS[0]) < 1e-3)
    points = []
    for i, z in enumerate(STEPS):
        if i:
            app.key("ctrl+equal")
            d = app.wait_layout(lambda d: d["width"] == w and abs(d["zoom"] - z) < 1e-3)
        if not CK.check(d, f"{where} zoom {z}", "a layout at that zoom", "none"):
            break
        check(d, f"{where} zoom {z:g}")
        points.append((z, d))
    return points


def shot(xvfb, w, h, path):
    subprocess.run(["/usr/bin/import", "-display", xvfb.display, "-window", "root", "-crop",
                    f"{w}x{h}+0+0", path], check=True, timeout=60)
    return read_rgba(path)[..., :3]


def zoom_run(xvfb, mhaviz, tmp):
    app = App(xvfb, mhaviz, tmp, "zoom")
    if not CK.check(app.win, "window", "a window of the mhaviz process", "none"):
        app.stop()
        return
    first = app.wait_layout(lambda d: True)
    if not CK.check(first, "first layout", "a layout line on stderr", "none"):
        app.stop()
        return
    # 5/6 of the screen, at the zoom of that size: 3200x1800 is 150 % (min(3200 / 1920,
    # 1800 / 1080) = 1.67, down to a step)
    CK.check((first["width"], first["height"]) == (3200, 1800), "start on a 3840x2160 screen: size",
             "3200x1800", f"{first['width']}x{first['height']}")
    CK.check(abs(first["zoom"] - 1.5) < 1e-3 and abs(first["zoom_base"] - 1.5) < 1e-3,
             "start on a 3840x2160 screen: zoom", "150 % (base 150 %)",
             f"{first['zoom']} (base {first['zoom_base']})")
    xvfb.run(["xdotool", "windowmove", app.win, "0", "0"])
    xvfb.run(["xdotool", "mousemove", "3839", "2159"])  # off the window: no hover
    for w, h in SAMPLE.pick(SIZES):
        where = f"{w}x{h}"
        xvfb.run(["xdotool", "windowsize", app.win, str(w), str(h)])
        base = 2.0 if (w, h) == (3840, 2160) else 1.0  # min(w / 1920, h / 1080), >= 1
        # Ctrl+0 once the app has seen the new size (the base follows the size)
        app.wait_layout(lambda d: d["width"] == w and d["height"] == h)
        app.key("ctrl+0")
        d = app.wait_layout(lambda d: d["width"] == w and d["height"] == h
                            and abs(d["zoom"] - base) < 1e-3)
        if not CK.check(d, f"{where}: resized", f"a layout at {w}x{h}", geometry_of(xvfb, app.win)):
            continue
        points = zoom_sweep(app, w, where, check_layout)
        check_growth(points, where, base)
        img = shot(xvfb, w, h, os.path.join(tmp, f"zoom300-{w}x{h}.png"))
        CK.check(colour_count(img) > 200, f"{where} at 300 %: picture", "> 200 colours",
                 colour_count(img))
    # the focus view (key 1) on a classroom laptop's screen, landscape and portrait,
    # every zoom step: inside the window, nothing overlapping (Q_i, K_i, V_i, head_i,
    # their colorbars' numbers and the equation's)
    for w, h in SAMPLE.pick(FOCUS_SIZES):
        where = f"{w}x{h} focus"
        xvfb.run(["xdotool", "windowsize", app.win, str(w), str(h)])
        app.wait_layout(lambda d: d["width"] == w and d["height"] == h)
        app.key("ctrl+0")
        app.key("1")
        d = app.wait_layout(lambda d: d["width"] == w and d["height"] == h and d["focus"] == 1)
        if not CK.check(d, f"{where}: key 1", "a focus layout", "none"):
            continue
        zoom_sweep(app, w, where, check_layout)
        app.key("Escape")
        app.wait_layout(lambda d: d["focus"] == 0)
    CK.check(app.alive(), "after the zoom sweep", "running", f"exit {app.proc.returncode}")
    app.key("ctrl+q")
    try:
        CK.check(app.proc.wait(5) == 0, "Ctrl+Q", "exit 0", app.proc.returncode)
    except subprocess.TimeoutExpired:
        CK.fail("Ctrl+Q", "exit within 5 s", "still running")
    app.stop()


def inside(outer, r):
    return (r[0] >= outer[0] and r[1] >= outer[1] and r[0] + r[2] <= outer[0] + outer[2]
            and r[1] + r[3] <= outer[1] + outer[3])


def check_compare(d, where):
    """The compare layout: panes apart, the live view in its pane, chips in the banner."""
    named = {n: (x, y, w, h) for k, n, x, y, w, h in d["items"]}
    pinned, live = named.get("pinned pane"), named.get("live pane")
    if not CK.check(pinned and live, f"{where}: compare panes", "pinned and live panes", "missing"):
        return
    CK.check(not overlap(pinned, live), f"{where}: panes apart", "no overlap", (pinned, live))
    chips = [(n, (x, y, w, h)) for k, n, x, y, w, h in d["items"] if k == "chip"]
    CK.check(any(n.startswith("pinned chip") for n, _ in chips)
             and any(n.startswith("live chip") for n, _ in chips), f"{where}: chips",
             "a chip on each side (h differs)", [n for n, _ in chips])
    if d["width"] >= d["height"]:  # one banner row over both panes
        CK.check(all(r[1] + r[3] <= min(pinned[1], live[1]) for _, r in chips),
                 f"{where}: chips above the panes", "all", [n for n, r in chips
                                                           if r[1] + r[3] > pinned[1]])
    else:  # each pane under its own row
        for n, r in chips:
            pane = pinned if n.startswith("pinned") else live
            CK.check(r[1] + r[3] <= pane[1] and not overlap(r, pinned) and not overlap(r, live),
                     f"{where}: {n} above its pane", "above, outside both panes", r)
    outside = [n for k, n, *r in d["items"]
               if k not in ("compare", "chip", "status") and not inside(live, r)]
    CK.check(not outside, f"{where}: the live view in its pane", "every rectangle", outside[:4])
    rest = {"width": d["width"], "height": d["height"], "shown_heads": d["shown_heads"],
            "head_side": d["head_side"],
            "items": [i for i in d["items"] if i[0] != "compare"]}
    check_layout(rest, where)


def compare_run(xvfb, mhaviz, tmp):
    app = App(xvfb, mhaviz, tmp, "compare", ["--size", "1600x900"])
    if not CK.check(app.win, "compare: window", "a window of the mhaviz process", "none"):
        app.stop()
        return
    app.wait_layout(lambda d: True)
    xvfb.run(["xdotool", "windowmove", app.win, "0", "0"])
    xvfb.run(["xdotool", "mousemove", "3839", "2159"])
    app.key("b")
    app.key("Up")
    d = app.wait_layout(lambda d: any(i[1] == "live chip 0" for i in d["items"]))
    CK.check(d, "compare: B then Up", "a layout with chips", "none")
    for w, h in SAMPLE.pick([(800, 600), (1920, 1080), (1080, 1920)]):
        where = f"compare {w}x{h}"
        xvfb.run(["xdotool", "windowsize", app.win, str(w), str(h)])
        app.wait_layout(lambda d: d["width"] == w and d["height"] == h)
        points = zoom_sweep(app, w, where, check_compare)
        d = points[-1][1] if points else None
        if w > 800:  # at 800x600 a pane is 400 px wide: the data cannot grow there
            check_growth(points, where, 1.0)
        if d:
            img = shot(xvfb, w, h, os.path.join(tmp, f"compare-{w}x{h}.png"))
            px, py, pw, ph = [v for k, n, *v in d["items"] if n == "pinned pane"][0]
            CK.check(colour_count(img[py:py + ph, px:px + pw]) > 100, f"{where}: pinned pane",
                     "a picture (> 100 colours)", colour_count(img[py:py + ph, px:px + pw]))
    app.key("b")
    d = app.wait_layout(lambda d: not any(i[0] == "compare" for i in d["items"]))
    CK.check(d, "compare: B again", "a layout without panes", "none")
    app.key("Escape")
    CK.check(app.answers(), "compare: Escape with nothing open", "running", "exited")
    app.key("ctrl+q")
    app.stop()


def blank_share(img, tile=32):
    """Fraction of tile x tile squares that are background only (the corner pixel)."""
    p = (img[..., 0].astype(np.int32) << 16) | (img[..., 1].astype(np.int32) << 8) | img[..., 2]
    th, tw = p.shape[0] // tile, p.shape[1] // tile
    t = (p[:th * tile, :tw * tile] == p[0, 0]).reshape(th, tile, tw, tile)
    return float(t.all(axis=(1, 3)).mean())


def present_run(xvfb, mhaviz, tmp):
    app = App(xvfb, mhaviz, tmp, "present", ["--sample", "2"])
    if not CK.check(app.win, "present: window", "a window", "none"):
        app.stop()
        return
    xvfb.run(["xdotool", "windowmove", app.win, "0", "0"])
    xvfb.run(["xdotool", "windowsize", app.win, "1920", "1080"])
    xvfb.run(["xdotool", "mousemove", "3839", "2159"])
    app.wait_layout(lambda d: d["width"] == 1920)  # then Ctrl+0: the zoom of that size
    app.key("ctrl+0")
    d = app.wait_layout(lambda d: d["width"] == 1920 and abs(d["zoom"] - 1.0) < 1e-3)
    CK.check(d and any(k == "button" for k, *_ in d["items"]), "window: buttons",
             "the controls", "none")
    app.key("p")
    d = app.wait_layout(lambda d: d["present"] == 1)
    if not CK.check(d, "P: presentation", "a layout with present = 1", "none"):
        app.stop()
        return
    kinds = {k for k, *_ in d["items"]}
    CK.check("button" not in kinds and "status" not in kinds, "P: no controls",
             "no buttons and no status line", sorted(kinds))
    check_layout(d, "presentation 1920x1080")
    # the side panels gave way to the heads: a page of their own after them, PgDn
    CK.check(d["panels_page"] == d["pages"] and not d["panels_shown"],
             "P 1920x1080: the side panels' page", "the last page, not this one",
             f"panels_page {d['panels_page']} of {d['pages']}, shown {d['panels_shown']}")
    if d["panels_page"] > 1:
        app.key("Next")
        d3 = app.wait_layout(lambda d: d["page"] == d["panels_page"] - 1)
        CK.check(d3 and d3["panels_shown"] and d3["shown_heads"] == 0,
                 "P 1920x1080, PgDn: the side panels' page", "the panels, no heads",
                 d3 and f"panels shown {d3['panels_shown']}, heads {d3['shown_heads']}")
        app.key("Prior")
        d = app.wait_layout(lambda d: d["page"] == 0) or d
    # the default figure, the lesson's panels off: under a fifth of it empty
    xvfb.run(["xdotool", "windowsize", app.win, "1600", "900"])
    app.wait_layout(lambda d: d["width"] == 1600)
    app.key("i")
    app.key("ctrl+0")
    d2 = app.wait_layout(lambda d: d["width"] == 1600 and d["present"] == 1
                         and abs(d["zoom"] - 1.0) < 1e-3)
    if d2:
        share = blank_share(settled(app.log_path, lambda: shot(
            xvfb, 1600, 900, os.path.join(tmp, "present-1600.png")), alive=app.alive))
        print(f"presentation 1600x900, lesson panels off: blank share {share:.1%}")
        CK.check(share < 0.2, "presentation 1600x900 (I off): blank share",
                 "< 20% of 32 px tiles empty", f"{share:.1%}")
    app.key("i")
    xvfb.run(["xdotool", "windowsize", app.win, "1920", "1080"])
    d = app.wait_layout(lambda d: d["width"] == 1920 and d["present"] == 1) or d
    # the pointer on a head cell: the highlight shows
    maps = [r for k, n, *r in d["items"] if k == "map" and n.startswith("head")]
    before = shot(xvfb, 1920, 1080, os.path.join(tmp, "present.png"))
    if maps:
        x, y, w, h = maps[0]
        frames = last_stats(app.log_path)[0]  # the highlight is a frame after these
        xvfb.run(["xdotool", "mousemove", str(x + w // 3), str(y + h // 2)])
        xvfb.run(["xdotool", "mousemove", str(x + w // 3 + 1), str(y + h // 2)])
        after = settled(app.log_path, lambda: shot(
            xvfb, 1920, 1080, os.path.join(tmp, "present-hover.png")), after=frames,
            alive=app.alive)
        hl = lambda img: int(np.all(img == np.array(HIGHLIGHT), axis=2).sum())
        CK.check(hl(after) > 20 * hl(before) + 2000, "P: pointer highlight",
                 f"many more {HIGHLIGHT} pixels than before ({hl(before)})", hl(after))
        xvfb.run(["xdotool", "mousemove", "3839", "2159"])
    app.key("Escape")
    d = app.wait_layout(lambda d: d["present"] == 0)
    CK.check(d is not None, "Escape leaves presentation", "a layout with present = 0", "none")
    app.key("Escape")
    CK.check(app.answers(), "Escape with nothing open", "the window stays", "the app quit")
    app.key("ctrl+q")
    try:
        CK.check(app.proc.wait(5) == 0, "present: Ctrl+Q", "exit 0", app.proc.returncode)
    except subprocess.TimeoutExpired:
        CK.fail("present: Ctrl+Q", "exit within 5 s", "still running")
    app.stop()


def main():
    if len(sys.argv) != 2:
        print("usage: window_zoom_e2e.py MHAVIZ", file=sys.stderr)
        return 2
    mhaviz = os.path.abspath(sys.argv[1])
    t0 = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="mhaviz-zoom-") as tmp:
        keep = os.environ.get("MHAVIZ_TEST_KEEP")  # a folder: keep screenshots there
        if keep:
            os.makedirs(keep, exist_ok=True)
            tmp = keep
        xvfb = Xvfb(size="3840x2160x24")
        try:
            zoom_run(xvfb, mhaviz, tmp)
            present_run(xvfb, mhaviz, tmp)
            compare_run(xvfb, mhaviz, tmp)
        finally:
            xvfb.stop()
    print(f"window_zoom_e2e: {time.monotonic() - t0:.1f} s")
    return CK.finish("window_zoom_e2e")


if __name__ == "__main__":
    sys.exit(main())
