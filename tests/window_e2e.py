#!/usr/bin/python3
"""window_e2e.py MHAVIZ: the real visualizer window, driven under a private Xvfb.

Starts Xvfb (1920x1080x24) on a free display, runs `mhaviz` (default sample) and
presses keys with `xdotool key --window WIN`. After every key:
  (a) the title (xprop WM_NAME; format "mhaviz — h=H d_model=D n=N — NAME") has the
      expected h, d_model, n and sample name,
  (b) a screenshot (`import -window root`) differs from the previous one and is
      not blank (more than 200 colours),
  (c) the process is still alive.
Some keys get a sharper check: t (dark theme) lowers the mean brightness a lot,
m (causal mask) paints a large block in one colour (the masked weights, all 0),
Escape after a head focus or the help overlay restores the earlier picture.
Also: the text field (Return, Ctrl+U, typing, Return), an empty text (refused,
window stays), the h limits (h = d_model and h = 1), a resize, Ctrl+Q (exit 0 within
5 s); a second run with --sample 7; and without any display, `mhaviz` must exit 1
with one line "mhaviz: no display...".
Exits 1 with "FAIL where: expected X, got Y" lines on any failure."""
import json
import os
import re
import subprocess
import sys
import tempfile
import time

import numpy as np

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
from e2e_util import (Checker, Xvfb, colour_count, diff_fraction, geometry_of, no_display_env,
                      stop_process, title_of, window_of_pid)

CK = Checker()
TITLE_RE = re.compile(r"h=(\d+) d_model=(\d+) n=(\d+) .* (\S+)$")
MIN_COLOURS = 200   # a blank or half-drawn frame has a handful of colours
STATUS_STRIP = 48   # bottom rows of the window: status line with frame timings, always new


def parse_title(t):
    """(h, d_model, n, sample name) from a title, or None."""
    m = TITLE_RE.search(t)
    return (int(m.group(1)), int(m.group(2)), int(m.group(3)), m.group(4)) if m else None


class App:
    def __init__(self, xvfb, mhaviz, args, tmp, label):
        self.xvfb, self.label, self.tmp = xvfb, label, tmp
        self.err = open(os.path.join(tmp, f"{label}.stderr"), "w+")
        # cwd is the temp folder: a stray Ctrl+S would save there, never in the tree
        self.proc = subprocess.Popen([mhaviz] + args, env=xvfb.env(), cwd=tmp,
                                     stdout=subprocess.DEVNULL, stderr=self.err)
        self.win = window_of_pid(xvfb, self.proc.pid)
        if not self.win:
            self.err.seek(0)
            print(f"{label}: no window; exit status {self.proc.poll()}; stderr: "
                  f"{self.err.read()[-2000:]!r}", file=sys.stderr)
        self.title = ""
        deadline = time.monotonic() + 10
        while self.win and time.monotonic() < deadline:
            # the window starts as plain "mhaviz"; the full title follows the first frame
            self.title = title_of(xvfb, self.win)
            if parse_title(self.title):
                break
            time.sleep(0.1)
        self.shot = self.settled_shot() if self.win else None

    def alive(self):
        return self.proc.poll() is None

    def window_crop(self, shot):
        x, y, w, h = geometry_of(self.xvfb, self.win)
        return shot[max(0, y):y + h, max(0, x):x + w]

    def settled_shot(self, first=None):
        """A screenshot that no longer changes (two equal in a row, 0.15 s apart)."""
        cur = first if first is not None else self.xvfb.screenshot()
        for _ in range(10):
            time.sleep(0.15)
            nxt = self.xvfb.screenshot()
            if np.array_equal(nxt, cur):
                return nxt
            cur = nxt
        return cur

    def press(self, keys, where, want=None, same_title=False, typed=None, timeout=5.0):
        """Sends keys (an xdotool key list) or types `typed`; waits until the picture
        changes and the title matches `want` (h, d, n, name; None entries are not
        checked). Returns (before, after) screenshots."""
        before, before_title = self.shot, self.title
        if typed is not None:
            cmd = ["xdotool", "type", "--window", self.win, "--delay", "15", typed]
        else:
            cmd = ["xdotool", "key", "--window", self.win] + keys.split()
        self.xvfb.run(cmd)

        def title_ok(t):
            if same_title:
                return t == before_title
            if want is None:
                return True
            got = parse_title(t)
            return got is not None and all(w is None or w == g for w, g in zip(want, got))

        deadline = time.monotonic() + timeout
        changed = ok = False
        shot, title = before, before_title
        while time.monotonic() < deadline and self.alive():
            title = title_of(self.xvfb, self.win)
            shot = self.xvfb.screenshot()
            changed = not np.array_equal(shot, before)
            ok = title_ok(title)
            if changed and ok:
                break
            time.sleep(0.1)
        if changed and self.alive():
            shot = self.settled_shot(shot)
            title = title_of(self.xvfb, self.win)
            ok = title_ok(title)
        self.shot, self.title = shot, title
        alive = self.alive()
        CK.check(alive, f"{self.label} {where}: process alive", "running",
                 f"exited with {self.proc.returncode}")
        if not alive:
            return before, shot
        CK.check(ok, f"{self.label} {where}: title",
                 before_title if same_title else f"h, d_model, n, name = {want}", repr(title))
        CK.check(changed, f"{self.label} {where}: picture changes", "a different screenshot",
                 "the same one")
        colours = colour_count(self.window_crop(shot))
        CK.check(colours > MIN_COLOURS, f"{self.label} {where}: picture not blank",
                 f"> {MIN_COLOURS} colours", colours)
        return before, shot

    def quit(self, where):
        """Ctrl+Q: exit status 0 within 5 s."""
        self.xvfb.run(["xdotool", "key", "--window", self.win, "ctrl+q"])
        try:
            rc = self.proc.wait(5)
            CK.check(rc == 0, f"{self.label} {where}: exit status", 0, rc)
        except subprocess.TimeoutExpired:
            CK.fail(f"{self.label} {where}: exit", "exit within 5 s", "still running")
        self.stop()

    def stop(self):
        stop_process(self.proc)
        self.err.seek(0)
        text = self.err.read()
        self.err.close()
        if text.strip():
            print(f"[{self.label} stderr]\n{text}", file=sys.stderr)
        return text


def tokens_of_sample(mhaviz, k, tmp):
    """n for built-in sample k, from --dump's meta.json."""
    out = os.path.join(tmp, f"dump{k}")
    subprocess.run([mhaviz, "--dump", out, "--sample", str(k)], env=no_display_env(),
                   capture_output=True, timeout=60, check=True)
    with open(os.path.join(out, "meta.json")) as f:
        return json.load(f)["n"]


def same_except_status(a, b, app):
    """Fraction of differing pixels in the window, its status line left out."""
    ca, cb = app.window_crop(a), app.window_crop(b)
    h = min(ca.shape[0], cb.shape[0]) - STATUS_STRIP
    return diff_fraction(ca[:h], cb[:h], threshold=0)


def main_run(xvfb, mhaviz, tmp):
    app = App(xvfb, mhaviz, [], tmp, "default")
    if not CK.check(app.win, "default: window", "a window of the mhaviz process",
                    f"none (alive: {app.alive()})"):
        app.stop()
        return
    CK.check(parse_title(app.title) == (4, 64, 7, "short"), "default: first title",
             "h=4 d_model=64 n=7 ... short", repr(app.title))
    CK.check(colour_count(app.window_crop(app.shot)) > MIN_COLOURS, "default: first picture",
             f"> {MIN_COLOURS} colours", colour_count(app.window_crop(app.shot)))
    xvfb.screenshot(save=os.path.join(tmp, "start.png"))

    # h and d_model (ladder 8,16,24,32,48,64,96,...: the next value h divides)
    app.press("Up", "Up", (8, 64, 7, "short"))
    app.press("Down", "Down", (4, 64, 7, "short"))
    app.press("Down", "Down again", (2, 64, 7, "short"))
    app.press("Right", "Right", (2, 96, 7, "short"))
    app.press("Left", "Left", (2, 64, 7, "short"))
    # samples: Tab forward, Shift+Tab back
    app.press("Tab", "Tab", (2, 64, 12, "coreference"))
    app.press("shift+Tab", "shift+Tab", (2, 64, 7, "short"))
    # new seed, theme, colormap, mask, scale: the title stays, the picture changes
    app.press("r", "r (new seed)", same_title=True)
    before, after = app.press("t", "t (dark theme)", same_title=True)
    lb = float(app.window_crop(before).mean())
    la = float(app.window_crop(after).mean())
    # heatmaps (dark in both themes) fill much of the window: the page's share drops
    CK.check(la < lb - 60, "t (dark theme): mean brightness of the window drops",
             f"below {lb - 60:.0f} (light {lb:.0f})", f"{la:.0f}")
    app.press("c", "c (colormap)", same_title=True)
    before, after = app.press("m", "m (causal mask)", same_title=True)
    # masked weights are exactly 0: the upper triangles of the heatmaps become one
    # colour (the colormap's 0). Count that colour before and after.
    changed = np.any(before != after, axis=2)
    if changed.any():
        px = after[changed].astype(np.uint32)
        packed = (px[:, 0] << 16) | (px[:, 1] << 8) | px[:, 2]
        vals, counts = np.unique(packed, return_counts=True)
        top = vals[counts.argmax()]

        def count(img):
            a = img.astype(np.uint32)
            return int((((a[..., 0] << 16) | (a[..., 1] << 8) | a[..., 2]) == top).sum())

        grown = count(after) - count(before)
        # h=2, n=7: 2 x 21 masked cells, each far more than 100 px at 1600x900
        CK.check(grown > 2 * 21 * 100, "m (causal mask): one colour fills the masked cells",
                 f"> {2 * 21 * 100} more pixels of colour #{top:06x}", grown)
    app.press("n", "n (no scale)", same_title=True)
    # focus head 2, then Escape restores the grid (all but the status line's timings)
    before_focus, _ = app.press("2", "2 (focus head 2)", same_title=True)
    _, back = app.press("Escape", "Escape (leave focus)", same_title=True)
    frac = same_except_status(before_focus, back, app)
    CK.check(frac < 0.001, "Escape after focus: the grid comes back",
             "< 0.1% pixels differ from before the focus", f"{frac:.2%}")
    before_help, _ = app.press("F1", "F1 (help)", same_title=True)
    _, back = app.press("Escape", "Escape (close help)", same_title=True)
    frac = same_except_status(before_help, back, app)
    CK.check(frac < 0.001, "Escape after help: the view comes back",
             "< 0.1% pixels differ from before the help", f"{frac:.2%}")
    xvfb.screenshot(save=os.path.join(tmp, "dark.png"))
    app.press("ctrl+equal", "ctrl+equal (zoom in)", same_title=True)
    app.press("ctrl+0", "ctrl+0 (zoom 100%)", same_title=True)

    # the text field: it opens with the current text, so clear it (Ctrl+U) first
    app.press("Return", "Return (open text field)", same_title=True)
    app.press("ctrl+u", "ctrl+u (clear field)", same_title=True)
    app.press(None, "type 'hello world again'", same_title=True, typed="hello world again")
    app.press("Return", "Return (apply text)", (2, 64, 3, "custom"))
    app.press("Return", "Return (reopen field)", same_title=True)
    app.press("ctrl+u", "ctrl+u (clear again)", same_title=True)
    app.press("Return", "Return on empty text (refused; status says why)", same_title=True)

    # h up to d_model, then one more: refused, the status line explains
    for h in (4, 8, 16, 32, 64):
        app.press("Up", f"Up to h={h}", (h, 64, 3, "custom"))
    app.press("Up", "Up at h=d_model=64 (refused)", same_title=True)
    for h in (32, 16, 8, 4, 2, 1):
        app.press("Down", f"Down to h={h}", (h, 64, 3, "custom"))
    app.press("Down", "Down at h=1 (refused)", same_title=True)

    # resize: the app redraws at the new size
    before = app.shot
    app.xvfb.run(["xdotool", "windowsize", app.win, "1000", "700"])
    deadline = time.monotonic() + 5
    geo = geometry_of(xvfb, app.win)
    while time.monotonic() < deadline and geo[2:] != (1000, 700):
        time.sleep(0.1)
        geo = geometry_of(xvfb, app.win)
    CK.check(geo[2:] == (1000, 700), "resize: window size", "1000x700", f"{geo[2]}x{geo[3]}")
    time.sleep(0.3)
    after = app.settled_shot()
    CK.check(app.alive(), "resize: process alive", "running", "exited")
    CK.check(not np.array_equal(before, after), "resize: picture changes", "a new frame",
             "the same screenshot")
    colours = colour_count(app.window_crop(after))
    CK.check(colours > MIN_COLOURS, "resize: picture not blank", f"> {MIN_COLOURS} colours",
             colours)
    xvfb.screenshot(save=os.path.join(tmp, "resized.png"))
    app.quit("ctrl+q")


def sample7_run(xvfb, mhaviz, tmp):
    n7 = tokens_of_sample(mhaviz, 7, tmp)
    app = App(xvfb, mhaviz, ["--sample", "7"], tmp, "sample7")
    if not CK.check(app.win, "sample7: window", "a window", f"none (alive: {app.alive()})"):
        app.stop()
        return
    CK.check(parse_title(app.title) == (4, 64, n7, "paragraph"), "sample7: first title",
             f"h=4 d_model=64 n={n7} ... paragraph", repr(app.title))
    colours = colour_count(app.window_crop(app.shot))
    CK.check(colours > MIN_COLOURS, "sample7: first picture", f"> {MIN_COLOURS} colours", colours)
    app.press("Up", "Up", (8, 64, n7, "paragraph"))
    app.press("Tab", "Tab (wraps to sample 1)", (8, 64, 7, "short"))
    app.press("shift+Tab", "shift+Tab (back to sample 7)", (8, 64, n7, "paragraph"))
    app.quit("ctrl+q")


def no_display(mhaviz, tmp):
    """Without DISPLAY and WAYLAND_DISPLAY: exit 1, one line "mhaviz: no display".
    XDG_RUNTIME_DIR points at a private folder, as in any login session; without it
    libwayland-client prints its own complaint, which is not the app's doing."""
    xdg = os.path.join(tmp, "xdg")
    os.makedirs(xdg, mode=0o700, exist_ok=True)
    proc = subprocess.Popen([mhaviz], env=no_display_env(XDG_RUNTIME_DIR=xdg), cwd=tmp,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        out, err = proc.communicate(timeout=10)
    except subprocess.TimeoutExpired:
        stop_process(proc)
        out, err = proc.communicate()
        CK.fail("no display: exit", "exit 1 at once with 'mhaviz: no display'",
                "still running after 10 s (an invisible window?); stopped it; "
                f"stderr {err.strip()!r}")
        return
    lines = err.splitlines()
    CK.check(proc.returncode == 1, "no display: exit status", 1, proc.returncode)
    CK.check(len(lines) == 1 and lines[0].startswith("mhaviz: no display"),
             "no display: stderr", "one line starting 'mhaviz: no display'", repr(err))
    CK.check(out == "", "no display: stdout", "nothing", repr(out))


def main():
    if len(sys.argv) != 2:
        print("usage: window_e2e.py MHAVIZ", file=sys.stderr)
        return 2
    mhaviz = os.path.abspath(sys.argv[1])
    t0 = time.monotonic()
    keep = os.environ.get("MHAVIZ_TEST_KEEP")  # a folder: keep screenshots there
    with tempfile.TemporaryDirectory(prefix="mhaviz-win-") as tmp:
        if keep:
            os.makedirs(keep, exist_ok=True)
            tmp = keep
        no_display(mhaviz, tmp)
        xvfb = Xvfb()
        try:
            # no pointer over the window: no tooltip in the screenshots
            xvfb.run(["xdotool", "mousemove", "0", "0"])
            main_run(xvfb, mhaviz, tmp)
            sample7_run(xvfb, mhaviz, tmp)
        finally:
            xvfb.stop()
    print(f"window_e2e: {time.monotonic() - t0:.1f} s")
    return CK.finish("window_e2e")


if __name__ == "__main__":
    sys.exit(main())
