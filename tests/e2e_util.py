"""e2e_util.py: helpers shared by the window tests and export_check.py.

A private Xvfb on a free display, screenshots and PNG decoding with numpy, the
window title through xprop (xdotool getwindowname can be stale under SDL 2.26
without a window manager), a small failure collector, and readers of the window's
picture that need no knowledge of the code: the status strip at the bottom, the
formula strip (the band filled edge to edge) and the 1-pixel frames around
heatmaps, colorbars and buttons; and waits for the window's state from its
MHAVIZ_STATS=lines output (settled: the last frame, with no job under way). Every
process is stopped by its own PID; nothing here looks for processes by name."""
import json
import os
import re
import signal
import struct
import subprocess
import sys
import time

import numpy as np

CONVERT = "/usr/bin/convert"  # the `convert` first on PATH may be a stand-in
IMPORT = "/usr/bin/import"
# the longest a window test waits for a state: a machine twice as slow as a loaded
# reference machine still gets there well within it
SETTLE_TIMEOUT = 30.0


# --- sampled sweeps (tests/sample.h's rule, for the Python tests) -----------------

class Sample:
    """MHAVIZ_TEST_SAMPLE=k (or k:r), set in the sanitizer build's test environment
    only: a sweep runs the cases whose index, counted over the whole script, is r
    modulo k; unset or k = 1, every case. The same subset on every run."""

    def __init__(self, script):
        self.k, self.r, self.index = 1, 0, 0
        env = os.environ.get("MHAVIZ_TEST_SAMPLE", "")
        m = re.fullmatch(r"(\d+)(?::(\d+))?", env)
        if m and 1 <= int(m.group(1)) <= 1000 and int(m.group(2) or 0) < int(m.group(1)):
            self.k, self.r = int(m.group(1)), int(m.group(2) or 0)
        elif env:
            print(f"{script}: MHAVIZ_TEST_SAMPLE={env} is not k or k:r: every case runs",
                  file=sys.stderr)
        if self.k > 1:
            print(f"{script}: sampled, the cases i with i % {self.k} == {self.r} "
                  "(MHAVIZ_TEST_SAMPLE)", flush=True)

    def pick(self, cases):
        """The cases of this sweep that run (in order)."""
        out = [c for i, c in enumerate(cases, self.index) if i % self.k == self.r]
        self.index += len(cases)
        return out

    def take(self):
        """Whether the next case runs, for a sweep met one case at a time (counts it)."""
        self.index += 1
        return (self.index - 1) % self.k == self.r


class Checker:
    """Collects failures; each prints "FAIL where: expected X, got Y"."""

    def __init__(self, verbose=False):
        self.failures = []
        self.verbose = verbose  # also print "ok where" for passing checks

    def fail(self, where, expected, got):
        self.failures.append(where)
        print(f"FAIL {where}: expected {expected}, got {got}", file=sys.stderr, flush=True)

    def check(self, cond, where, expected, got):
        if not cond:
            self.fail(where, expected, got)
        elif self.verbose:
            print(f"ok {where}", flush=True)
        return bool(cond)

    def finish(self, name):
        if self.failures:
            print(f"{name}: {len(self.failures)} failure(s)", file=sys.stderr)
            return 1
        print(f"{name}: all checks passed")
        return 0


def no_display_env(**extra):
    env = dict(os.environ)
    for k in ("DISPLAY", "WAYLAND_DISPLAY", "SDL_VIDEODRIVER"):
        env.pop(k, None)
    env.setdefault("OPENBLAS_NUM_THREADS", "1")
    env.update(extra)
    return env


# --- PNG -----------------------------------------------------------------------

def png_ihdr(path):
    """(width, height, bit depth, colour type) read from the IHDR chunk."""
    with open(path, "rb") as f:
        head = f.read(33)
    if len(head) < 33 or head[:8] != b"\x89PNG\r\n\x1a\n" or head[12:16] != b"IHDR":
        raise ValueError(f"{path}: not a PNG")
    w, h, depth, ctype = struct.unpack(">IIBB", head[16:26])
    return w, h, depth, ctype


def read_rgba(path):
    """Pixels as an (h, w, 4) uint8 array (alpha 255 where the file has none)."""
    w, h, _, _ = png_ihdr(path)
    out = subprocess.run([CONVERT, path, "-depth", "8", "rgba:-"], capture_output=True,
                         timeout=60, check=True).stdout
    return np.frombuffer(out, np.uint8).reshape(h, w, 4)


def colour_count(rgb):
    """Distinct colours (like `convert x.png -format %k info:`) of an (h, w, 3+) array:
    each pixel's 0xRRGGBB marked in a table of every colour (16 MB). Sorting the pixels
    (np.unique) took 0.8 s a full-screen shot on a busy machine, a third of
    window_e2e's time; the table, 0.2-0.4 s in the same run."""
    a = np.ascontiguousarray(rgb[..., :3]).astype(np.uint32)
    packed = (a[..., 0] << 16) | (a[..., 1] << 8) | a[..., 2]
    seen = np.zeros(1 << 24, dtype=bool)
    seen[packed.ravel()] = True
    return int(np.count_nonzero(seen))


def diff_fraction(a, b, threshold=40):
    """Fraction of pixels where some channel differs by more than threshold."""
    d = np.abs(a[..., :3].astype(np.int16) - b[..., :3].astype(np.int16)).max(axis=2)
    return float((d > threshold).mean())


# --- reading the window's picture ----------------------------------------------

def pack_rgb(img):
    """An (h, w) int32 array of 0xRRGGBB values from an (h, w, 3+) uint8 array."""
    out = img[..., 0].astype(np.int32) << 16
    out |= img[..., 1].astype(np.int32) << 8
    out |= img[..., 2]
    return out


def status_strip_top(win):
    """The first row of the status strip of a window image (h, w, 3), or None.

    The status line is the last line of text at the bottom of the window, below it
    only the margin. Scanning up from the bottom: rows of the background colour (the
    margin; the colour of the bottom-left pixel), then rows with ink (the status
    text), then the first row of background again. That row is returned: it lies in
    the gap between the main area and the status text, so everything from it down is
    the status line and the margin, whatever the zoom (the text's height follows it).
    None when no such line is found in the bottom fifth of the window."""
    rgb = win[..., :3]
    h = rgb.shape[0]
    lo = max(h * 4 // 5 - 1, 0)  # rows above lo cannot be the answer: only these are read
    plain = (pack_rgb(rgb[lo:]) == pack_rgb(rgb[-1:, :1])[0, 0]).all(axis=1)
    y = h - 1
    while y >= lo and plain[y - lo]:
        y -= 1
    ink_bottom = y
    while y >= lo and not plain[y - lo]:
        y -= 1
    if y < lo or ink_bottom < h * 4 // 5 or y < h * 4 // 5:
        return None
    return y


def wide_band(win, bg):
    """(top, bottom) rows of the first band of rows filled edge to edge: each row's
    non-background pixels form one run without gaps over at least 90 % of the width
    (the formula strip: a panel across the window with text on it). None if none."""
    p = pack_rgb(win)
    ink = p != bg
    w = p.shape[1]
    count = ink.sum(axis=1)
    first = ink.argmax(axis=1)
    last = w - 1 - ink[:, ::-1].argmax(axis=1)
    rows = (count >= 0.9 * w) & (count == last - first + 1)
    ys = np.flatnonzero(rows)
    if ys.size == 0:
        return None
    top = bottom = int(ys[0])
    while bottom + 1 < len(rows) and rows[bottom + 1]:
        bottom += 1
    return top, bottom


def find_frames(win, top, bottom, bg, min_side=6):
    """1-pixel rectangular frames in rows top..bottom of a window image, as a list of
    (x0, y0, x1, y1, colour) with inclusive edges (window coordinates) and colour as
    0xRRGGBB. A frame: four edges of one colour, each one pixel wide, at least
    min_side long, around an inside that is mostly another colour (so filled boxes
    and strips do not count). Heatmaps, colorbars and buttons are drawn framed."""
    p = pack_rgb(win[top:bottom + 1])
    h, w = p.shape
    # every vertical run of one colour, column by column (top to bottom in each): a
    # run starts at row 0 and where a column's colour changes, and ends where the next
    # one starts (the next column's row 0 for a column's last run)
    cols = np.ascontiguousarray(p.T)  # (w, h)
    start = np.ones((w, h), dtype=bool)
    start[:, 1:] = cols[:, 1:] != cols[:, :-1]
    starts = np.flatnonzero(start)
    ends = np.append(starts[1:], w * h) - 1
    colour = cols.ravel()[starts]
    keep = (ends - starts + 1 >= min_side) & (colour != bg)
    runs = {}  # (y0, y1, colour) -> columns holding that vertical run
    for s0, e0, c in zip(starts[keep].tolist(), ends[keep].tolist(), colour[keep].tolist()):
        x, s = divmod(s0, h)
        runs.setdefault((s, e0 - x * h, c), []).append(x)
    out = []
    for (s, e, c), xs in runs.items():
        xset = set(xs)
        for i, xl in enumerate(xs):
            if xl + 1 in xset or xl - 1 in xset:
                continue
            for xr in xs[i + 1:]:
                if xr - xl + 1 < min_side or xr - 1 in xset or xr + 1 in xset:
                    continue
                if not ((p[s, xl:xr + 1] == c).all() and (p[e, xl:xr + 1] == c).all()):
                    continue
                inner = (p[s + 1:e, xl + 1], p[s + 1:e, xr - 1], p[s + 1, xl + 1:xr],
                         p[e - 1, xl + 1:xr])
                if all(line.size and (line == c).mean() < 0.5 for line in inner):
                    out.append((xl, s + top, xr, e + top, c))
                break
    return out


# --- Xvfb ----------------------------------------------------------------------

def lock_holder(n):
    """The PID in display n's lock file (an X server writes its own there), or None.
    Another test's server that took the display first answers xprop too: only the
    lock tells whose server it is."""
    try:
        with open(f"/tmp/.X{n}-lock") as f:
            return int(f.read().strip())
    except (OSError, ValueError):
        return None


class Xvfb:
    """A private X server on the first free display from 60 up."""

    def __init__(self, size="1920x1080x24"):
        self.proc = None
        self.display = None
        for n in range(60, 400):
            if os.path.exists(f"/tmp/.X{n}-lock") or os.path.exists(f"/tmp/.X11-unix/X{n}"):
                continue
            proc = subprocess.Popen(["Xvfb", f":{n}", "-screen", "0", size, "-nolisten", "tcp"],
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline and proc.poll() is None:
                r = subprocess.run(["xprop", "-display", f":{n}", "-root", "-len", "0"],
                                   capture_output=True)
                if r.returncode == 0 and lock_holder(n) == proc.pid:
                    self.proc, self.display = proc, f":{n}"
                    return
                time.sleep(0.1)
            # lost a race for the display (another server holds its lock), or it did not
            # start: try the next one
            if proc.poll() is None:
                proc.terminate()
                proc.wait(5)
        raise RuntimeError("cannot start Xvfb on any display from :60 to :399")

    def env(self, **extra):
        env = dict(os.environ)
        env.pop("WAYLAND_DISPLAY", None)
        env.pop("SDL_VIDEODRIVER", None)
        env["DISPLAY"] = self.display
        env.setdefault("OPENBLAS_NUM_THREADS", "1")
        env.update(extra)
        return env

    def run(self, args, **kw):
        return subprocess.run(args, env=self.env(), capture_output=True, text=True, timeout=30, **kw)

    def screenshot(self, save=None):
        """The whole screen as an (h, w, 3) array; also written to `save` if given."""
        if save:
            subprocess.run([IMPORT, "-display", self.display, "-window", "root", save],
                           check=True, timeout=30)
            return read_rgba(save)[..., :3]
        out = subprocess.run([IMPORT, "-display", self.display, "-window", "root", "-depth", "8", "rgb:-"],
                             capture_output=True, check=True, timeout=30).stdout
        return np.frombuffer(out, np.uint8).reshape(1080, 1920, 3)

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)


def window_of_pid(xvfb, pid, timeout=20.0):
    """The X window of process pid that has a title, or None (and says what it saw)."""
    deadline = time.monotonic() + timeout
    seen = []
    while time.monotonic() < deadline:
        r = xvfb.run(["xdotool", "search", "--pid", str(pid)])
        seen = [(w, title_of(xvfb, w)) for w in r.stdout.split()]
        for w, t in seen:
            if "mhaviz" in t:
                return w
        time.sleep(0.1)
    names = xvfb.run(["xdotool", "search", "--name", "mhaviz"]).stdout.split()
    print(f"window_of_pid({pid}): windows of the pid {seen}; windows named mhaviz {names}",
          file=sys.stderr)
    return None


def title_of(xvfb, win):
    """WM_NAME as xprop prints it (non-ASCII bytes escaped), or ''."""
    r = xvfb.run(["xprop", "-id", str(win), "WM_NAME"])
    m = re.search(r'WM_NAME\([^)]*\) = "(.*)"', r.stdout)
    return m.group(1) if m else ""


def geometry_of(xvfb, win):
    """(x, y, w, h) of the window on the screen."""
    r = xvfb.run(["xwininfo", "-id", str(win)])
    val = {}
    for key, pat in (("x", r"Absolute upper-left X:\s+(-?\d+)"),
                     ("y", r"Absolute upper-left Y:\s+(-?\d+)"),
                     ("w", r"Width:\s+(\d+)"), ("h", r"Height:\s+(\d+)")):
        m = re.search(pat, r.stdout)
        val[key] = int(m.group(1)) if m else 0
    return val["x"], val["y"], val["w"], val["h"]


def start_wm(xvfb, timeout=SETTLE_TIMEOUT):
    """Starts openbox on xvfb and waits until it has taken the screen (the root window
    names its check window, _NET_SUPPORTING_WM_CHECK). An X server that has just
    started may refuse the first connections (openbox then exits at once with
    "Failed to open the display"): it is started again. Returns the process, or None
    when no openbox took the screen within timeout."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        wm = subprocess.Popen(["openbox"], env=xvfb.env(), stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
        while time.monotonic() < deadline and wm.poll() is None:
            r = xvfb.run(["xprop", "-root", "_NET_SUPPORTING_WM_CHECK"])
            if "window id #" in r.stdout:
                return wm
            time.sleep(0.05)
        if wm.poll() is None:
            stop_process(wm)
    return None


def frame_extents(xvfb, win):
    """The window manager's frame around win as (left, right, top, bottom), or None
    while it has not framed it."""
    r = xvfb.run(["xprop", "-id", str(win), "_NET_FRAME_EXTENTS"])
    m = re.search(r"= (\d+), (\d+), (\d+), (\d+)", r.stdout)
    return tuple(int(v) for v in m.groups()) if m else None


def stop_process(proc, timeout=5):
    """Stops our own child by its PID: SIGTERM, then SIGKILL."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout)


# --- waiting for the window's state (MHAVIZ_STATS=lines) -----------------------------

# "stats frames=F recomputes=R wakeups=W busy=B jobs=J woke=K forwards=N", one after
# every frame and whenever a recompute is shown or the count of jobs changes
STATS_RE = re.compile(r"^stats(?: exit)? frames=(\d+) recomputes=(\d+) wakeups=\d+ busy=(\d) "
                      r"jobs=(\d+) ")


def last_stats(path):
    """The last MHAVIZ_STATS line of the window's stderr file as (frames, recomputes,
    busy, jobs), or None before the first."""
    last = None
    with open(path, errors="replace") as f:
        for line in f:
            m = STATS_RE.match(line)
            if m:
                last = tuple(int(g) for g in m.groups())
    return last


def wait_idle(path, after=-1, timeout=SETTLE_TIMEOUT, alive=lambda: True):
    """Waits until the window's last stats line counts more than `after` frames and
    says no recompute is being shown and no job is under way (the forward timed for
    the cost panel, a load, training): the frame it follows is the last one until the
    next event. Returns that line (last_stats), or None at the timeout."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and alive():
        st = last_stats(path)
        if st and st[0] > after and st[2] == 0 and st[3] == 0:
            return st
        time.sleep(0.02)
    return None


def settled(path, grab, after=-1, timeout=SETTLE_TIMEOUT, alive=lambda: True):
    """grab() of the window's last frame: once wait_idle, a picture taken between two
    reads of the same stats line (a frame drawn meanwhile: taken again). A window that
    never settles within timeout gives its picture of then."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and alive():
        st = wait_idle(path, after, deadline - time.monotonic(), alive)
        if st is None:
            break
        img = grab()
        if last_stats(path) == st:
            return img
    return grab()



# --- the app in a window of its own --------------------------------------------------

class WindowApp:
    """mhaviz started with args in a window on xvfb, the MHAVIZ_* switches of env set
    (MHAVIZ_STATS, MHAVIZ_LAYOUT_LOG, ...), its stderr kept in tmp/log: the start, the
    reads and the waits every window test needs. Each test's App adds the readers of
    the lines it asked for."""

    def __init__(self, xvfb, mhaviz, tmp, args=(), log="app.log", win_timeout=20.0, **env):
        self.xvfb = xvfb
        self.log_path = os.path.join(tmp, log)
        self.log = open(self.log_path, "w+")
        self.proc = subprocess.Popen([mhaviz] + list(args), env=xvfb.env(**env), cwd=tmp,
                                     stdout=subprocess.DEVNULL, stderr=self.log)
        self.win = window_of_pid(xvfb, self.proc.pid, timeout=win_timeout)
        self.lines_read = 0  # whole lines of stderr taken by new_lines
        self.frames = 0  # layout lines taken by layouts: one a frame

    def alive(self):
        return self.proc.poll() is None

    def new_lines(self):
        """The whole lines of stderr written since the last call (a line being written
        is taken next time)."""
        self.log.flush()
        with open(self.log_path, errors="replace") as f:
            lines = f.read().split("\n")[:-1]
        new, self.lines_read = lines[self.lines_read:], len(lines)
        return new

    def layouts(self):
        """The layouts (MHAVIZ_LAYOUT_LOG lines, one a frame) drawn since the last call."""
        new = [json.loads(line[7:]) for line in self.new_lines() if line.startswith("layout ")]
        self.frames += len(new)
        return new

    def settle(self):
        """Waits until the frames taken so far are drawn and no job is under way after
        them (MHAVIZ_STATS=lines); that stats line, or None at the timeout."""
        return wait_idle(self.log_path, after=self.frames - 1, alive=self.alive)

    def wait_layout(self, pred, timeout=SETTLE_TIMEOUT, keep=lambda d: True):
        """Once pred holds for a layout, and the window has settled after it: the newest
        layout since for which keep holds (any, by default). None if pred never held."""
        deadline, found = time.monotonic() + timeout, None
        while time.monotonic() < deadline and self.alive():
            for d in self.layouts():
                if pred(d) or (found is not None and keep(d)):
                    found = d
            if found is not None:
                self.settle()
                for d in self.layouts():
                    found = d if keep(d) else found
                return found
            time.sleep(0.05)
        return found

    def title(self):
        return title_of(self.xvfb, self.win)

    def wait_title(self, pred, timeout=SETTLE_TIMEOUT):
        """The title once pred(title) holds, or the last one seen at the timeout."""
        deadline, title = time.monotonic() + timeout, self.title()
        while not pred(title) and time.monotonic() < deadline and self.alive():
            time.sleep(0.05)
            title = self.title()
        return title

    def key(self, *keys):
        self.xvfb.run(["xdotool", "key", "--window", str(self.win)] + list(keys))

    def stop(self):
        """Stops the app by its PID and prints what it said on stderr besides its
        stats and layout lines (its last 20 such lines), for a failure to be read."""
        stop_process(self.proc)
        self.log.close()
        with open(self.log_path, errors="replace") as f:
            other = [line[:300] for line in f.read().splitlines()
                     if not line.startswith(("layout ", "view ", "stats", "MHAVIZ_STATS"))]
        if other:
            print("[app stderr]\n" + "\n".join(other[-20:]), file=sys.stderr)

SVG_NS = "{http://www.w3.org/2000/svg}"


def svg_group_cells(g):
    """The heatmap cells drawn inside an SVG head group g (an ElementTree element):
    (x, y, w, h, (r, g, b)) for every filled rect of its inner groups. A run of equal
    neighbours in a row is one wider rect, and cells are square, so a run is split back
    into its cells."""
    cells = []
    for inner in g.iter(SVG_NS + "g"):
        if inner is g:
            continue
        for r in inner.iter(SVG_NS + "rect"):
            fill = r.get("fill", "")
            if re.fullmatch(r"#[0-9a-fA-F]{6}", fill):
                rgb = tuple(int(fill[i:i + 2], 16) for i in (1, 3, 5))
                x, y = float(r.get("x")), float(r.get("y"))
                w, h = float(r.get("width")), float(r.get("height"))
                runs = max(1, round(w / h))
                cells += [(x + i * w / runs, y, w / runs, h, rgb) for i in range(runs)]
    return cells
