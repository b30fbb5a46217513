#!/usr/bin/env python3
"""window_lines_e2e.py: the head view (H) in the real window, under a private Xvfb.

The app prints its layout after each frame (MHAVIZ_LAYOUT_LOG); the test reads it:
- H turns the grid's heads into lines: one "head K lines" box per shown head over its
  map, and the picture of the heads changes; H again gives the heatmaps back, pixel
  for pixel the picture before;
- the pointer on a query label of head 1 keeps that token's lines: the head tiles'
  picture changes (the other lines dimmed), and moving away restores it;
- 1 … 9 opens the focus view as lines (one box, of that head), at 1600x900 and
  1024x768; every box lies inside the window.
Usage: window_lines_e2e.py MHAVIZ
"""
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from e2e_util import (SETTLE_TIMEOUT, Checker, WindowApp, Xvfb, diff_fraction,  # noqa: E402
                      start_wm, stop_process)

CK = Checker()


class App(WindowApp):
    """MHAVIZ_LAYOUT_LOG: the layout after each frame; MHAVIZ_STATS=lines: is a job on?"""

    def __init__(self, xvfb, mhaviz, tmp, size):
        super().__init__(xvfb, mhaviz, tmp, ["--size", size, "--weights", "patterns"],
                         log=f"lines-{size}.log", MHAVIZ_LAYOUT_LOG="1", MHAVIZ_STATS="lines")

    def wait_layout(self, pred=lambda d: True, timeout=8.0):
        """The last layout after pred holds (frames stop coming), or None."""
        return super().wait_layout(pred, timeout)

    def move(self, x, y):
        self.xvfb.run(["xdotool", "mousemove", "--window", self.win, str(x), str(y)])

    def window_origin(self):
        r = self.xvfb.run(["xdotool", "getwindowgeometry", self.win]).stdout
        pos = r.split("Position:")[1].split()[0].split(",")
        return int(pos[0]), int(pos[1])


def items(d, kind):
    return {name: (x, y, w, h) for k, name, x, y, w, h in d["items"] if k == kind}


def crop(img, r, ox, oy):
    x, y, w, h = r
    return img[oy + y:oy + y + h, ox + x:ox + x + w]


def run_size(xvfb, mhaviz, tmp, size):
    W, H = map(int, size.split("x"))
    app = App(xvfb, mhaviz, tmp, size)
    where = f"{size}"
    try:
        if not CK.check(app.win is not None, where, "a window", None):
            return
        # the first frame: a window just mapped by a window manager just started, on a
        # machine that may be busy, gets the settle timeout (its 8 s fell short once in CI)
        d0 = app.wait_layout(timeout=SETTLE_TIMEOUT)
        if not CK.check(d0 is not None, where, "a layout line", None):
            return
        app.move(2, H - 2)  # the pointer out of the heads
        app.wait_layout(timeout=1.0)
        ox, oy = app.window_origin()
        maps = items(d0, "map")
        heads = sorted(maps.items())
        CK.check(not items(d0, "lines"), where + " start", "heatmaps (no lines boxes)",
                 items(d0, "lines"))
        before = xvfb.screenshot(os.path.join(tmp, f"{size}-heatmaps.png"))
        # H: lines
        app.key("h")
        d1 = app.wait_layout(lambda d: bool(items(d, "lines")))
        if not CK.check(d1 is not None, where + " H", "lines boxes in the layout", None):
            return
        boxes = items(d1, "lines")
        tiles = {n: r for n, r in boxes.items() if n.endswith(" lines")}
        CK.check(len(tiles) == len(items(d1, "map")), where + " H",
                 f"a box per shown head ({len(items(d1, 'map'))})", len(tiles))
        for n, (x, y, w, h) in boxes.items():
            CK.check(x >= 0 and y >= 0 and x + w <= W and y + h <= H, f"{where} {n}",
                     "inside the window", (x, y, w, h))
        lines_img = xvfb.screenshot(os.path.join(tmp, f"{size}-lines.png"))
        r1 = tiles.get("head 1 lines")
        if r1:
            f = diff_fraction(crop(before, r1, ox, oy), crop(lines_img, r1, ox, oy))
            CK.check(f > 0.05, where + " H", "head 1's tile drawn anew (> 5 % pixels)", f)
        # the pointer on the 4th query label of head 1: its lines alone
        q = boxes.get("head 1 queries")
        if q and r1:
            x, y, w, h = q
            app.move(x + w // 2, y + h * 7 // 14)  # row 4 of 7
            app.wait_layout(timeout=2.0)
            hover = xvfb.screenshot(os.path.join(tmp, f"{size}-hover.png"))
            f = diff_fraction(crop(lines_img, r1, ox, oy), crop(hover, r1, ox, oy))
            CK.check(f > 0.01, where + " hover", "head 1's lines dimmed but the token's", f)
            r2 = tiles.get("head 2 lines")
            if r2:
                f2 = diff_fraction(crop(lines_img, r2, ox, oy), crop(hover, r2, ox, oy))
                CK.check(f2 > 0.01, where + " hover", "head 2 keeps the same token's lines", f2)
            app.move(2, H - 2)
            app.wait_layout(timeout=2.0)
            away = xvfb.screenshot()
            f = diff_fraction(crop(lines_img, r1, ox, oy), crop(away, r1, ox, oy))
            CK.check(f < 0.002, where + " pointer away", "the lines as before", f)
        # focus view on head 2: one box, of head 2
        app.key("2")
        d2 = app.wait_layout(lambda d: "head 2 lines" in items(d, "lines") and
                        len([n for n in items(d, "lines") if n.endswith(" lines")]) == 1)
        CK.check(d2 is not None, where + " focus 2", "one lines box, head 2's", None)
        xvfb.screenshot(os.path.join(tmp, f"{size}-focus.png"))
        app.key("Escape")
        app.wait_layout(lambda d: len(items(d, "map")) == len(heads), timeout=4.0)
        # H again: the heatmaps, as before
        app.key("h")
        d3 = app.wait_layout(lambda d: not items(d, "lines"))
        CK.check(d3 is not None, where + " H again", "no lines boxes", None)
        again = xvfb.screenshot()
        for name, r in heads:
            f = diff_fraction(crop(before, r, ox, oy), crop(again, r, ox, oy))
            CK.check(f < 0.002, f"{where} H again {name}", "the heatmap as before", f)
    finally:
        app.stop()


def main():
    mhaviz = os.path.abspath(sys.argv[1])
    xvfb = Xvfb("1920x1080x24")
    wm = None
    try:
        wm = start_wm(xvfb)  # retried: a server just started may refuse it
        with tempfile.TemporaryDirectory() as tmp:
            for size in ("1600x900", "1024x768"):
                run_size(xvfb, mhaviz, tmp, size)
            if CK.failures and os.environ.get("MHAVIZ_KEEP"):
                subprocess.run(["cp", "-r", tmp, os.environ["MHAVIZ_KEEP"]])
    finally:
        if wm:
            stop_process(wm)
        xvfb.stop()
    if CK.failures:
        print(f"{len(CK.failures)} failure(s)", file=sys.stderr)
        sys.exit(1)
    print("window_lines_e2e: ok")


if __name__ == "__main__":
    main()
