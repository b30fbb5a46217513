#!/usr/bin/python3
"""window_e2e.py MHAVIZ: the real visualizer window, driven under a private Xvfb.

Starts Xvfb (1920x1080x24) on a free display, runs `mhaviz` (default sample) with the
pointer parked off the window, and presses keys with `xdotool key --window WIN`.
After every key it waits for the picture to settle and checks:
  (a) the title (xprop WM_NAME; format "mhaviz — h=H d_model=D n=N — NAME") has the
      expected h, d_model, n and sample name,
  (b) the picture changed outside the status strip (the status line holds the frame
      time, new on every redraw, so it never counts as a change); a refused key
      changes the status strip only,
  (c) the picture is not blank (more than 200 colours) and the process is alive.
The status strip is found in each screenshot: the last line of text at the bottom,
whatever the zoom. The picture is read without knowing the code: the background is
the window's corner pixel, the formula strip is the band of rows filled edge to edge,
heatmaps and colorbars are 1-pixel frames (heads in their own accent colours, the
matrices and colorbars in one shared grey); cells are sampled at their centres.
Each key's own effect is checked, and where the app promises it, that undoing the key
brings back the same picture, pixel for pixel, the status strip aside:
  Up / Down     the number of head heatmaps is the title's h; Up then Down returns
  Right / Left  W^O, Concat and the heads change (new weights of another size);
                Right then Left returns
  Tab / S-Tab   sample name and n change, head 1 changes; Shift+Tab returns
  R             same layout, the heatmaps and W^O change
  C             only the heatmaps' pixels, the attention colorbar and the buttons
                change (frames, labels, formula, equation stay); the third colormap
                is grey (R = G = B); four presses return
  M             every head's upper-triangle cells take the colorbar's colour for 0,
                cell (0, 0) the colour for 1 (viridis ends, checked against an
                independent table); twice returns
  N             head heatmaps, Concat and the formula strip change, W^O does not;
                twice returns
  T             the background pixel flips from light to dark; twice returns
  Ctrl+= / -    the formula strip grows / shrinks, and the status strip with it;
                Ctrl+- after Ctrl+=, and Ctrl+0, return to the first picture
  2             one head left, in head 2's colour and larger, and four more matrices
                (Q_2, K_2, V_2, head_2); Escape returns
  F1            the help overlay dims the background pixel; Escape returns
Also: the text field (Return, Ctrl+U, typing, Return), an empty text (refused,
window stays), the h limits (h = d_model and h = 1, refused keys change only the
status strip), a resize, Ctrl+Q (exit 0, not a hang); a second run with --sample 7;
and without any display, `mhaviz` must exit 1 with one line "mhaviz: no display...".
Exits 1 with "FAIL where: expected X, got Y" lines on any failure. Environment:
MHAVIZ_TEST_KEEP=DIR keeps screenshots in DIR; MHAVIZ_TEST_VERBOSE=1 prints each key's
time and each passing check."""
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from collections import Counter

import numpy as np

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
from e2e_util import (SETTLE_TIMEOUT, STATS_RE, Checker, Xvfb, colour_count, find_frames,
                      geometry_of, last_stats, no_display_env, pack_rgb, settled,
                      status_strip_top, stop_process, title_of, wait_idle, wide_band,
                      window_of_pid)

VERBOSE = bool(os.environ.get("MHAVIZ_TEST_VERBOSE"))  # print each key's time and value
CK = Checker(verbose=VERBOSE)
TITLE_RE = re.compile(r"h=(\d+) d_model=(\d+) n=(\d+) .* (\S+)$")
MIN_COLOURS = 200   # a blank or half-drawn frame has a handful of colours
# viridis at 0 and 1 (matplotlib's table), independent of the app; 8 per channel
VIRIDIS_0, VIRIDIS_1, VIRIDIS_TOL = (0x44, 0x01, 0x54), (0xFD, 0xE7, 0x25), 8


def parse_title(t):
    """(h, d_model, n, sample name) from a title, or None."""
    m = TITLE_RE.search(t)
    return (int(m.group(1)), int(m.group(2)), int(m.group(3)), m.group(4)) if m else None


def show_title(t):
    """A title for messages: its parsed parts (xprop escapes the em dashes)."""
    got = parse_title(t)
    return f"h, d_model, n, name = {got}" if got else repr(t)


def hexc(c):
    return f"#{c:06x}"


# --- reading a picture ---------------------------------------------------------

def status_top(img):
    """First row of the status strip, or the window's height when none is found."""
    t = status_strip_top(img)
    return img.shape[0] if t is None else t


def check_status_strip(img, where):
    """The status strip is found and is one line of small text: not taller than
    1.5 times the formula strip (if the status text went missing, the search would
    swallow the lowest part of the main area instead)."""
    top = status_strip_top(img)
    if not CK.check(top is not None, f"{where}: status strip",
                    "a line of text at the bottom of the window", "none found"):
        return
    band = wide_band(img, int(pack_rgb(img[:1, :1])[0, 0]))
    if band:
        fh, sh = band[1] - band[0] + 1, img.shape[0] - top
        CK.check(sh <= 1.5 * fh, f"{where}: status strip height",
                 f"<= 1.5 x the formula strip's {fh} px", sh)


def picture_diff(a, b):
    """(differing pixels above both status strips, a description of where)."""
    if a.shape != b.shape:
        return a.shape[0] * a.shape[1], (f"window size {a.shape[1]}x{a.shape[0]} vs "
                                         f"{b.shape[1]}x{b.shape[0]}")
    top = min(status_top(a), status_top(b))
    d = (a[:top] != b[:top]).any(axis=2)
    n = int(d.sum())
    if not n:
        return 0, "the same picture above the status strip"
    ys, xs = np.nonzero(d)
    return n, (f"{n} px ({n / d.size:.2%}) differ in rows {ys.min()}-{ys.max()}, "
               f"columns {xs.min()}-{xs.max()}")


def box_changed(a, b, box):
    """Fraction of the pixels in box (x0, y0, x1, y1 inclusive) that differ."""
    x0, y0, x1, y1 = box[:4]
    return float((a[y0:y1 + 1, x0:x1 + 1] != b[y0:y1 + 1, x0:x1 + 1]).any(axis=2).mean())


def check_part(where, part, a, b, boxes, more_than=None):
    """Checks the pixels inside `boxes` (x0, y0, x1, y1 inclusive; read from picture
    a): more than the fraction `more_than` of them differ in b, or (more_than None)
    none of them does. Returns the fraction, or None when no box was found."""
    boxes = [x for x in boxes if x is not None]
    if not boxes:
        CK.fail(f"{where}: {part}", "found in the picture", "not found")
        return None
    sizes = [(x1 - x0 + 1) * (y1 - y0 + 1) for x0, y0, x1, y1 in boxes]
    frac = float(np.average([box_changed(a, b, x) for x in boxes], weights=sizes))
    if more_than is None:
        CK.check(frac == 0, f"{where}: {part} must stay", "no pixel differs",
                 f"{frac:.1%} of its pixels differ")
    else:
        CK.check(frac > more_than, f"{where}: {part} must change",
                 f"more than {more_than:.0%} of its pixels differ", f"{frac:.1%} differ")
    return frac


def inside(f):
    """The inside of a frame (x0, y0, x1, y1, colour): the heatmap or colorbar."""
    return None if f is None else (f[0] + 1, f[1] + 1, f[2] - 1, f[3] - 1)


class Picture:
    """What the test reads from one window image: the background colour (the top-left
    pixel, in the margin), the status strip, the formula strip and the framed boxes
    below it: heads (each in its own accent colour), and in the one colour that most
    frames share, the colorbars (every row of the inside alike) and the matrices
    (Concat, W^O, MultiHead from left to right)."""

    def __init__(self, img):
        self.img = img
        self.bg = int(pack_rgb(img[:1, :1])[0, 0])
        self.status_top = status_strip_top(img)
        self.formula = wide_band(img, self.bg)
        top = self.formula[1] + 1 if self.formula else 0
        bottom = (self.status_top or img.shape[0]) - 1
        frames = find_frames(img, top, bottom, self.bg)
        grey = Counter(f[4] for f in frames).most_common(1)[0][0] if frames else None
        self.heads = sorted((f for f in frames if f[4] != grey), key=lambda f: (f[1], f[0]))
        boxes = [f for f in frames if f[4] == grey]

        def is_bar(f):
            x0, y0, x1, y1 = inside(f)
            rows = img[y0:y1 + 1, x0:x1 + 1]
            return bool((rows == rows[:1]).all())

        self.colorbars = sorted((f for f in boxes if is_bar(f)), key=lambda f: (f[0], f[1]))
        self.matrices = sorted((f for f in boxes if not is_bar(f)), key=lambda f: (f[0], f[1]))
        self.layout = (self.formula, tuple(sorted(frames)))

    def bg_rgb(self):
        return tuple(int(v) for v in self.img[0, 0])

    def formula_height(self):
        return self.formula[1] - self.formula[0] + 1 if self.formula else 0

    def status_height(self):
        return self.img.shape[0] - self.status_top if self.status_top is not None else 0

    def matrix(self, name):
        """The inside of Concat, W^O or MultiHead, or None."""
        i = {"Concat": 0, "W^O": 1, "MultiHead": 2}[name]
        return inside(self.matrices[i]) if len(self.matrices) == 3 else None

    def head_boxes(self):
        return [inside(f) for f in self.heads]

    def attn_bar(self):
        """The inside of the attention colorbar (the leftmost), or None."""
        return inside(self.colorbars[0]) if self.colorbars else None

    def formula_box(self):
        return (0, self.formula[0], self.img.shape[1] - 1, self.formula[1]) if self.formula else None

    def attn_bar_ends(self):
        """Packed colours of the attention colorbar (the leftmost) at 0 and at 1."""
        if not self.colorbars:
            return None
        x0, y0, x1, y1 = inside(self.colorbars[0])
        p = pack_rgb(self.img[(y0 + y1) // 2])
        return int(p[x0]), int(p[x1])

    def cells(self, head, n):
        """(n, n) packed colours at the centres of head `head`'s cells."""
        x0, y0, x1, y1 = inside(self.heads[head])
        ys = y0 + ((np.arange(n) + 0.5) * (y1 - y0 + 1) / n).astype(int)
        xs = x0 + ((np.arange(n) + 0.5) * (x1 - x0 + 1) / n).astype(int)
        return pack_rgb(self.img[np.ix_(ys, xs)])



# --- the app --------------------------------------------------------------------

class App:
    def __init__(self, xvfb, mhaviz, args, tmp, label):
        self.xvfb, self.label, self.tmp = xvfb, label, tmp
        self.err_path = os.path.join(tmp, f"{label}.stderr")
        self.err = open(self.err_path, "w+")
        # cwd is the temp folder: a stray Ctrl+S would save there, never in the tree;
        # MHAVIZ_STATS=lines: a line after every frame says whether a job is under way
        self.proc = subprocess.Popen([mhaviz] + args, env=xvfb.env(MHAVIZ_STATS="lines"),
                                     cwd=tmp, stdout=subprocess.DEVNULL, stderr=self.err)
        self.win = window_of_pid(xvfb, self.proc.pid)
        if not self.win:
            self.err.seek(0)
            print(f"{label}: no window; exit status {self.proc.poll()}; stderr: "
                  f"{self.err.read()[-2000:]!r}", file=sys.stderr)
        self.title = ""
        self.wait = SETTLE_TIMEOUT  # seconds press() waits for a key's effect
        if self.win:
            # pointer off the window: no hover tooltip or outline in the pictures. Xvfb
            # resets (pointer back to the centre) whenever its last client leaves, so
            # this must happen while the app is connected.
            xvfb.run(["xdotool", "mousemove", "0", "0"])
        # the window starts as plain "mhaviz"; the full title is set with the first
        # frame, before its stats line
        self.shot = self.settled_shot() if self.win else None
        if self.win:
            self.title = title_of(xvfb, self.win)

    def alive(self):
        return self.proc.poll() is None

    def grab(self):
        """The window's pixels, (h, w, 3), from a screenshot of the screen."""
        shot = self.xvfb.screenshot()
        x, y, w, h = geometry_of(self.xvfb, self.win)
        return shot[max(0, y):y + h, max(0, x):x + w]

    def settled_shot(self):
        """The window's picture once it has drawn its last frame with no job under way
        (its MHAVIZ_STATS lines say so: e2e_util.settled)."""
        return settled(self.err_path, self.grab, alive=self.alive)

    def press(self, keys, where, want=None, same_title=False, typed=None, change="picture"):
        """Sends keys (an xdotool key list) or types `typed`; waits for a frame drawn
        after them with no job under way (the window's MHAVIZ_STATS lines), whose title
        matches `want` (h, d, n, name; None entries are not checked) and whose picture
        changed: outside the status strip (change="picture"), or only inside it
        (change="status": a refused key, whose reason the status line shows). A frame
        that does not show it yet (a key of several, a tick) is looked at again until
        a later one does. Waits up to SETTLE_TIMEOUT; after one key has not worked, up
        to 5 s (a broken key must fail the test with its messages, not make it run into
        ctest's timeout). Returns (before, after) window images, after settled."""
        where = f"{self.label} {where}"
        t0 = time.monotonic()
        before, before_title = self.shot, self.title
        frames = (last_stats(self.err_path) or (0,))[0]  # the key's frame comes after these
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

        def changed(img):
            if change == "status":
                return img.shape != before.shape or not np.array_equal(img, before)
            return picture_diff(before, img)[0] > 0

        deadline = time.monotonic() + self.wait
        seen = ok = False
        shot, title = before, before_title
        while time.monotonic() < deadline and self.alive():
            # the next frame after `frames`, drawn with no job under way
            st = wait_idle(self.err_path, frames, deadline - time.monotonic(), self.alive)
            if st is None:
                break
            shot = self.grab()
            if last_stats(self.err_path) != st:
                continue  # a frame drawn meanwhile: the picture may be of either
            title = title_of(self.xvfb, self.win)
            seen, ok = changed(shot), title_ok(title)
            if seen and ok:
                break
            time.sleep(0.1)  # a later frame of the key's, or the screen catching up
        if not (seen and ok):
            self.wait = 5.0
        self.shot, self.title = shot, title
        if VERBOSE:
            print(f"{where}: {time.monotonic() - t0:.2f} s", flush=True)
        alive = self.alive()
        CK.check(alive, f"{where}: process alive", "running", f"exited with {self.proc.returncode}")
        if not alive:
            return before, shot
        CK.check(ok, f"{where}: title",
                 show_title(before_title) if same_title else f"h, d_model, n, name = {want}",
                 show_title(title))
        check_status_strip(shot, where)
        n, desc = picture_diff(before, shot)
        if change == "status":
            CK.check(seen, f"{where}: status line changes", "a new status line",
                     "the same screenshot")
            CK.check(n == 0, f"{where}: only the status line changes",
                     "the same picture above the status strip", desc)
        else:
            CK.check(n > 0, f"{where}: picture changes",
                     "a different picture above the status strip", desc)
        colours = colour_count(shot)
        CK.check(colours > MIN_COLOURS, f"{where}: picture not blank", f"> {MIN_COLOURS} colours",
                 colours)
        return before, shot

    def same_as(self, ref, where, what):
        """The current picture equals ref above the status strip."""
        n, desc = picture_diff(ref, self.shot)
        return CK.check(n == 0, f"{self.label} {where}: {what}",
                        "the same picture above the status strip", desc)

    def quit(self, where):
        """Ctrl+Q: exit status 0 (within SETTLE_TIMEOUT: a hang fails)."""
        self.xvfb.run(["xdotool", "key", "--window", self.win, "ctrl+q"])
        try:
            rc = self.proc.wait(SETTLE_TIMEOUT)
            CK.check(rc == 0, f"{self.label} {where}: exit status", 0, rc)
        except subprocess.TimeoutExpired:
            CK.fail(f"{self.label} {where}: exit", f"exit within {SETTLE_TIMEOUT:.0f} s",
                    "still running")
        self.stop()

    def stop(self):
        stop_process(self.proc)
        self.err.seek(0)
        text = "".join(l for l in self.err.readlines() if not STATS_RE.match(l))
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


# --- the keys ---------------------------------------------------------------------

def check_pointer(app):
    """The pointer is off the window (so no tooltip or hover outline is drawn)."""
    x, y, w, h = geometry_of(app.xvfb, app.win)
    loc = app.xvfb.run(["xdotool", "getmouselocation"]).stdout
    m = re.match(r"x:(-?\d+) y:(-?\d+)", loc)
    px, py = (int(m.group(1)), int(m.group(2))) if m else (x, y)
    CK.check(not (x <= px < x + w and y <= py < y + h), f"{app.label}: pointer off the window",
             f"outside {w}x{h}+{x}+{y}", loc.strip())


def check_heads(app, where, h):
    """As many head heatmaps as the title's h (all heads fit on one page here)."""
    got = len(Picture(app.shot).heads)
    return CK.check(got == h, f"{where}: head heatmaps (accent frames)", h, got)


def check_layout_kept(where, a, b):
    CK.check(a.layout == b.layout, f"{where}: layout kept",
             "the same formula strip, frames and status strip",
             f"formula {a.formula} -> {b.formula}, {len(a.heads)} -> {len(b.heads)} heads, "
             f"matrices {[m[:4] for m in a.matrices]} -> {[m[:4] for m in b.matrices]}")


def keys_dims(app):
    """Up / Down (h) and Right / Left (d_model)."""
    first = app.shot
    check_heads(app, "start", 4)
    app.press("Up", "Up", (8, 64, 7, "short"))
    check_heads(app, "Up", 8)
    app.press("Down", "Down", (4, 64, 7, "short"))
    check_heads(app, "Down", 4)
    app.same_as(first, "Down after Up", "back to the first picture")
    app.press("Down", "Down again", (2, 64, 7, "short"))
    check_heads(app, "Down again", 2)

    before, after = app.press("Right", "Right", (2, 96, 7, "short"))
    pb = Picture(before)
    check_heads(app, "Right", 2)
    for name in ("W^O", "Concat"):
        check_part("Right", name, before, after, [pb.matrix(name)], 0.5)
    # new weights of another size: other attention weights
    check_part("Right", "heads", before, after, pb.head_boxes(), 0.3)
    app.press("Left", "Left", (2, 64, 7, "short"))
    app.same_as(before, "Left after Right", "back to the picture before Right")


def keys_sample(app):
    """Tab / Shift+Tab."""
    before, after = app.press("Tab", "Tab", (2, 64, 12, "coreference"))
    check_heads(app, "Tab", 2)
    check_part("Tab", "head 1 (12 tokens, not 7)", before, after, Picture(after).head_boxes()[:1],
               0.5)
    app.press("shift+Tab", "shift+Tab", (2, 64, 7, "short"))
    app.same_as(before, "shift+Tab after Tab", "back to the picture before Tab")


def keys_seed(app):
    """R: new weights and embeddings, the same layout."""
    before, after = app.press("r", "r (new seed)", same_title=True)
    pb, pa = Picture(before), Picture(after)
    check_layout_kept("r (new seed)", pb, pa)
    check_part("r (new seed)", "heads", before, after, pb.head_boxes(), 0.5)
    check_part("r (new seed)", "W^O", before, after, [pb.matrix("W^O")], 0.5)


def keys_colormap(app):
    """C, four times: viridis, magma, cividis, greys, back to viridis."""
    first = app.shot
    for k in range(1, 5):
        where = f"c (colormap, press {k})"
        before, after = app.press("c", where, same_title=True)
        pb, pa = Picture(before), Picture(after)
        check_layout_kept(where, pb, pa)
        check_part(where, "heatmaps", before, after, pb.head_boxes(), 0.9)
        check_part(where, "attention colorbar", before, after, [pb.attn_bar()], 0.9)
        # nothing else changes below the header: not the frames, labels, formula
        # strip or the equation, whose map for signed values is the diverging one
        # with every colormap but greys (entering greys, press 3, and leaving it,
        # press 4, its matrices and colorbars turn grey and back)
        if pb.formula and pb.layout == pa.layout:
            top, bottom = pb.formula[0], status_top(before)
            d = (before[top:bottom] != after[top:bottom]).any(axis=2)
            boxes = pb.head_boxes() + [pb.attn_bar()]
            if k in (3, 4):
                boxes += [inside(f) for f in pb.matrices + pb.colorbars]
            for x0, y0, x1, y1 in [x for x in boxes if x]:
                d[y0 - top:y1 - top + 1, x0:x1 + 1] = False
            ys, xs = np.nonzero(d)
            got = (f"{ys.size} px elsewhere, rows {ys.min() + top}-{ys.max() + top}, "
                   f"columns {xs.min()}-{xs.max()}" if ys.size else "")
            CK.check(ys.size == 0, f"{where}: nothing else changes below the header",
                     "only the heatmaps and the attention colorbar", got)
        if k == 3:  # greys: every heatmap pixel is grey
            coloured = 0
            for x0, y0, x1, y1 in pa.head_boxes():
                px = after[y0:y1 + 1, x0:x1 + 1].astype(int)
                coloured += int(((px[..., 0] != px[..., 1]) | (px[..., 1] != px[..., 2])).sum())
            CK.check(pa.heads and coloured == 0, f"{where}: greys",
                     "R = G = B in every heatmap pixel",
                     f"{coloured} coloured pixels in {len(pa.heads)} heads")
            coloured = 0  # and every panel: Concat, W^O, MultiHead
            for f in pa.matrices:
                x0, y0, x1, y1 = inside(f)
                px = after[y0:y1 + 1, x0:x1 + 1].astype(int)
                coloured += int(((px[..., 0] != px[..., 1]) | (px[..., 1] != px[..., 2])).sum())
            CK.check(len(pa.matrices) == 3 and coloured == 0, f"{where}: greys in the equation",
                     "R = G = B in Concat, W^O and MultiHead",
                     f"{coloured} coloured pixels in {len(pa.matrices)} matrices")
    app.same_as(first, "c four times", "the first colormap again")


def keys_mask(app):
    """M: causal mask on, then off."""
    h, _, n, _ = parse_title(app.title)
    before, after = app.press("m", "m (causal mask)", same_title=True)
    pb, pa = Picture(before), Picture(after)
    ends = pa.attn_bar_ends()
    if not CK.check(ends and len(pa.heads) == h, "m (causal mask): heads and colorbar",
                    f"{h} heads and a colorbar", f"{len(pa.heads)} heads, colorbar ends {ends}"):
        return
    w0, w1 = ends
    upper = np.triu(np.ones((n, n), bool), 1)
    # the colorbar's ends are viridis 0 and 1 (independent values)
    for name, c, ref in (("0", w0, VIRIDIS_0), ("1", w1, VIRIDIS_1)):
        rgb = ((c >> 16) & 255, (c >> 8) & 255, c & 255)
        CK.check(max(abs(a - b) for a, b in zip(rgb, ref)) <= VIRIDIS_TOL,
                 f"m (causal mask): colorbar at {name}", f"viridis({name}) #{bytes(ref).hex()}",
                 hexc(c))
    was = sum(int((pb.cells(i, n)[upper] != w0).sum()) for i in range(len(pb.heads)))
    CK.check(was > 0, "m (causal mask): before the mask", "some upper-triangle cells not weight 0",
             "all at weight 0 already")
    for i in range(h):
        # masked cells are drawn as masked: a neutral (grey) hatched ground, never
        # the colour of weight 0
        cells = pa.cells(i, n)
        r, g, b = (cells >> 16) & 255, (cells >> 8) & 255, cells & 255
        grey = (r == g) & (g == b)
        bad = upper & (~grey | (cells == w0))
        CK.check(not bad.any(), f"m (causal mask): head {i + 1} upper triangle",
                 f"all {upper.sum()} cells grey and not weight 0 ({hexc(w0)})",
                 f"{int(bad.sum())} other colours, e.g. {hexc(int(cells[bad][0]))}"
                 if bad.any() else "")
        x0, y0, x1, y1 = inside(pa.heads[i])
        cw, ch = (x1 - x0 + 1) / n, (y1 - y0 + 1) / n
        block = after[int(y0):int(y0 + ch), int(x0 + (n - 1) * cw):int(x0 + n * cw)]
        shades = len(np.unique(pack_rgb(block)))
        CK.check(shades >= 2, f"m (causal mask): head {i + 1} cell (0, {n - 1}) hatched",
                 "at least two shades (lines on a ground)", shades)
        CK.check(cells[0, 0] == w1, f"m (causal mask): head {i + 1} cell (0, 0)",
                 f"weight 1 ({hexc(w1)}): the first query sees only itself", hexc(int(cells[0, 0])))
    app.press("m", "m again (mask off)", same_title=True)
    app.same_as(before, "m twice", "back to the picture without the mask")


def keys_scale(app):
    """N: scaling by 1/sqrt(d_k) off, then on."""
    before, after = app.press("n", "n (no scale)", same_title=True)
    pb, pa = Picture(before), Picture(after)
    check_layout_kept("n (no scale)", pb, pa)
    check_part("n (no scale)", "heads", before, after, pb.head_boxes(), 0.3)
    # the formula strip loses its "/ sqrt(d_k)" (a few pixels of a wide strip)
    check_part("n (no scale)", "formula strip", before, after, [pb.formula_box()], 0.0)
    check_part("n (no scale)", "Concat", before, after, [pb.matrix("Concat")], 0.3)
    # the weights stay: W^O is the same
    check_part("n (no scale)", "W^O", before, after, [pb.matrix("W^O")])
    app.press("n", "n again (scale on)", same_title=True)
    app.same_as(before, "n twice", "back to the scaled picture")


def keys_theme(app):
    """T: dark theme, then light again."""
    before, after = app.press("t", "t (dark theme)", same_title=True)
    lb, la = Picture(before).bg_rgb(), Picture(after).bg_rgb()
    CK.check(min(lb) >= 200, "t: background before", "light (every channel >= 200)", str(lb))
    CK.check(max(la) <= 60, "t (dark theme): background", "dark (every channel <= 60)", str(la))
    app.press("t", "t again (light theme)", same_title=True)
    app.same_as(before, "t twice", "back to the light picture")


def keys_zoom(app):
    """Ctrl+= / Ctrl+- / Ctrl+0: all text and the UI grow and shrink."""
    first = app.shot
    p0 = Picture(first)
    f0, s0 = p0.formula_height(), p0.status_height()

    def sizes():
        p = Picture(app.shot)
        return p.formula_height(), p.status_height()

    app.press("ctrl+equal", "ctrl+equal (zoom 110%)", same_title=True)
    f1, _ = sizes()
    CK.check(f1 > f0, "ctrl+equal: formula strip taller", f"> {f0} px", f1)
    app.press("ctrl+minus", "ctrl+minus (back to 100%)", same_title=True)
    app.same_as(first, "ctrl+minus after ctrl+equal", "the first picture")
    app.press("ctrl+minus", "ctrl+minus (zoom 90%)", same_title=True)
    f2, s2 = sizes()
    CK.check(f2 < f0, "ctrl+minus: formula strip lower", f"< {f0} px", f2)
    CK.check(s2 <= s0, "ctrl+minus: status strip not taller", f"<= {s0} px", s2)
    app.press("ctrl+0", "ctrl+0 (from 90%)", same_title=True)
    app.same_as(first, "ctrl+0 from 90%", "the first picture")
    app.press("ctrl+equal", "ctrl+equal (110%)", same_title=True)
    app.press("ctrl+equal", "ctrl+equal again (125%)", same_title=True)
    f3, s3 = sizes()
    CK.check(f3 >= f0 * 1.15, "ctrl+equal twice: formula strip", f">= {f0 * 1.15:.0f} px (125%)",
             f3)
    CK.check(s3 >= s0 * 1.15, "ctrl+equal twice: status strip (its text grows too)",
             f">= {s0 * 1.15:.0f} px", s3)
    app.press("ctrl+0", "ctrl+0 (from 125%)", same_title=True)
    app.same_as(first, "ctrl+0 from 125%", "the first picture")


def keys_focus_help(app):
    """2: head 2 alone, larger, with Q_2, K_2, V_2 and head_2 beside it; F1: the help
    overlay dims the view; Escape closes either."""
    before, after = app.press("2", "2 (focus head 2)", same_title=True)
    pb, pa = Picture(before), Picture(after)
    if CK.check(len(pb.heads) == 2, "before 2: heads", 2, len(pb.heads)):
        side = pb.heads[1][2] - pb.heads[1][0]
        got = [(hexc(f[4]), f[2] - f[0]) for f in pa.heads]
        # as large as the grid's at least: with two heads the grid's already take the
        # window's height, which bounds the focused head too
        CK.check(len(pa.heads) == 1 and pa.heads[0][4] == pb.heads[1][4] and got[0][1] >= side,
                 "2 (focus head 2): heads shown",
                 f"one, in head 2's colour {hexc(pb.heads[1][4])}, at least {side} px wide",
                 f"(colour, width) {got}")
    CK.check(len(pa.matrices) == len(pb.matrices) + 4, "2 (focus head 2): matrices",
             f"{len(pb.matrices)} + 4 (Q_2, K_2, V_2, head_2)", len(pa.matrices))
    app.press("Escape", "Escape (leave focus)", same_title=True)
    app.same_as(before, "Escape after focus", "the grid comes back")
    before, after = app.press("F1", "F1 (help)", same_title=True)
    lb, la = Picture(before).bg_rgb(), Picture(after).bg_rgb()
    CK.check(all(a < b for a, b in zip(la, lb)), "F1 (help): the view behind is dimmed",
             f"a background darker than {lb}", str(la))
    app.press("Escape", "Escape (close help)", same_title=True)
    app.same_as(before, "Escape after help", "the view comes back")



def keys_train(app):
    """L: training mode. The title names the run and its step; the step climbs and the
    picture changes while training runs (the window keeps answering); L pauses (the step
    stops); Escape returns to the attention view with its own title."""
    def title_now():
        return title_of(app.xvfb, app.win)

    def step_of(t):
        m = re.search(r"training (\w+) h=(\d+) d_model=(\d+) .* step (\d+)", t)
        return (m.group(1), int(m.group(2)), int(m.group(3)), int(m.group(4))) if m else None

    before_title = title_now()
    # L, then S: slow motion, so the step still climbs a second later (at full speed
    # pair stops by itself within a second; window_train_e2e.py checks that)
    app.xvfb.run(["xdotool", "key", "--window", str(app.win), "l", "s"])
    deadline, got = time.monotonic() + SETTLE_TIMEOUT, None
    while time.monotonic() < deadline:
        got = step_of(title_now())
        if got and got[3] > 0:
            break
        time.sleep(0.1)
    CK.check(got and got[:3] == ("pair", 2, 32) and got[3] > 0, "l (train): title",
             "training pair h=2 d_model=32 at a step > 0", title_now())
    first = app.grab()
    # the title is set after each frame is shown: a step above the one the title says
    # now (at or after the picture above) is a frame drawn after that picture; two
    # steps on, the heads have changed
    base = step_of(title_now()) or got
    later_title, s1 = title_now(), None
    deadline = time.monotonic() + SETTLE_TIMEOUT  # slow motion: a few steps a second
    while time.monotonic() < deadline and app.alive():
        later_title = title_now()
        s1 = step_of(later_title)
        if s1 and base and s1[3] > base[3] + 1:
            break
        time.sleep(0.05)
    later = app.grab()
    CK.check(s1 and got and s1[3] > got[3], "l (train): the step climbs", f"> {got and got[3]}",
             later_title)
    CK.check(picture_diff(first, later)[0] > 0, "l (train): the picture follows the training",
             "a new frame", "the same picture")
    app.xvfb.run(["xdotool", "key", "--window", str(app.win), "l"])  # pause
    deadline = time.monotonic() + SETTLE_TIMEOUT
    while time.monotonic() < deadline and not title_now().endswith("paused"):
        time.sleep(0.05)
    CK.check(title_now().endswith("paused"), "l again (pause): the title", "... paused",
             title_now())
    # paused, the trainer's job ends: once no job is under way no step can follow
    idle = wait_idle(app.err_path, alive=app.alive)
    CK.check(idle, "l again (pause): the trainer stops", "no job under way", "a job runs on")
    paused = step_of(title_now())
    app.shot = app.settled_shot()
    still = step_of(title_now())
    CK.check(paused and still and paused[3] == still[3], "l again (pause): the step stops",
             paused and paused[3], still and still[3])
    app.xvfb.run(["xdotool", "key", "--window", str(app.win), "Escape"])
    deadline = time.monotonic() + SETTLE_TIMEOUT
    while time.monotonic() < deadline and title_now() != before_title:
        time.sleep(0.1)
    CK.check(title_now() == before_title, "Escape (leave training)", before_title, title_now())
    CK.check(app.alive(), "training: process alive", "running", "exited")
    app.shot = app.settled_shot()

def main_run(xvfb, mhaviz, tmp):
    app = App(xvfb, mhaviz, [], tmp, "default")
    if not CK.check(app.win, "default: window", "a window of the mhaviz process",
                    f"none (alive: {app.alive()})"):
        app.stop()
        return
    CK.check(parse_title(app.title) == (4, 64, 7, "short"), "default: first title",
             "h=4 d_model=64 n=7 ... short", show_title(app.title))
    CK.check(colour_count(app.shot) > MIN_COLOURS, "default: first picture",
             f"> {MIN_COLOURS} colours", colour_count(app.shot))
    check_pointer(app)
    # I hides the panels under the equation (how alike, cost): the picture loses
    # them; the key checks below look at the heads and the equation alone
    app.press("i", "i (hide the how-alike and cost panels)", same_title=True)
    p = Picture(app.shot)
    CK.check(p.status_top is not None and p.formula is not None, "default: strips",
             "a formula strip and a status strip", f"formula {p.formula}, status {p.status_top}")
    xvfb.screenshot(save=os.path.join(tmp, "start.png"))

    keys_dims(app)     # leaves h=2 d_model=64
    keys_sample(app)
    keys_seed(app)
    keys_colormap(app)
    keys_mask(app)
    keys_scale(app)
    keys_theme(app)
    keys_focus_help(app)
    keys_zoom(app)

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
    app.press("Up", "Up at h=d_model=64 (refused)", same_title=True, change="status")
    for h in (32, 16, 8, 4, 2, 1):
        app.press("Down", f"Down to h={h}", (h, 64, 3, "custom"))
    check_heads(app, "Down to h=1", 1)
    app.press("Down", "Down at h=1 (refused)", same_title=True, change="status")

    keys_train(app)

    # resize: the app redraws at the new size
    before = app.shot
    frames = last_stats(app.err_path)[0]  # the resize draws at least one frame after these
    app.xvfb.run(["xdotool", "windowsize", app.win, "1000", "700"])
    deadline = time.monotonic() + SETTLE_TIMEOUT
    geo = geometry_of(xvfb, app.win)
    while time.monotonic() < deadline and geo[2:] != (1000, 700):
        time.sleep(0.1)
        geo = geometry_of(xvfb, app.win)
    CK.check(geo[2:] == (1000, 700), "resize: window size", "1000x700", f"{geo[2]}x{geo[3]}")
    after = settled(app.err_path, app.grab, after=frames, alive=app.alive)
    CK.check(app.alive(), "resize: process alive", "running", "exited")
    CK.check(after.shape[:2] == (700, 1000), "resize: picture size", "1000x700",
             f"{after.shape[1]}x{after.shape[0]}")
    CK.check(picture_diff(before, after)[0] > 0, "resize: picture changes", "a new frame",
             "the same picture")
    colours = colour_count(after)
    CK.check(colours > MIN_COLOURS, "resize: picture not blank", f"> {MIN_COLOURS} colours",
             colours)
    check_status_strip(after, "resize")
    xvfb.screenshot(save=os.path.join(tmp, "resized.png"))
    app.quit("ctrl+q")


def sample7_run(xvfb, mhaviz, tmp):
    n7 = tokens_of_sample(mhaviz, 7, tmp)
    app = App(xvfb, mhaviz, ["--sample", "7"], tmp, "sample7")
    if not CK.check(app.win, "sample7: window", "a window", f"none (alive: {app.alive()})"):
        app.stop()
        return
    CK.check(parse_title(app.title) == (4, 64, n7, "paragraph"), "sample7: first title",
             f"h=4 d_model=64 n={n7} ... paragraph", show_title(app.title))
    colours = colour_count(app.shot)
    CK.check(colours > MIN_COLOURS, "sample7: first picture", f"> {MIN_COLOURS} colours", colours)
    check_pointer(app)
    app.press("i", "i (hide the panels under the equation: the cost panel shows a timing)",
              same_title=True)
    app.press("Up", "Up", (8, 64, n7, "paragraph"))
    before, _ = app.press("Tab", "Tab (wraps to sample 1)", (8, 64, 7, "short"))
    app.press("shift+Tab", "shift+Tab (back to sample 7)", (8, 64, n7, "paragraph"))
    app.same_as(before, "shift+Tab after Tab", "back to sample 7's picture")
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
        out, err = proc.communicate(timeout=SETTLE_TIMEOUT)
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
            main_run(xvfb, mhaviz, tmp)
            sample7_run(xvfb, mhaviz, tmp)
        finally:
            xvfb.stop()
    print(f"window_e2e: {time.monotonic() - t0:.1f} s")
    return CK.finish("window_e2e")


if __name__ == "__main__":
    sys.exit(main())
