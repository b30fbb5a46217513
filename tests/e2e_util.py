"""e2e_util.py: helpers shared by window_e2e.py and export_check.py.

A private Xvfb on a free display, screenshots and PNG decoding with numpy, the
window title through xprop (xdotool getwindowname can be stale under SDL 2.26
without a window manager), and a small failure collector. Every process is
stopped by its own PID; nothing here looks for processes by name."""
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


class Checker:
    """Collects failures; each prints "FAIL where: expected X, got Y"."""

    def __init__(self):
        self.failures = []

    def fail(self, where, expected, got):
        self.failures.append(where)
        print(f"FAIL {where}: expected {expected}, got {got}", file=sys.stderr, flush=True)

    def check(self, cond, where, expected, got):
        if not cond:
            self.fail(where, expected, got)
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
    """Distinct colours (like `convert x.png -format %k info:`) of an (h, w, 3+) array."""
    a = np.ascontiguousarray(rgb[..., :3]).astype(np.uint32)
    packed = (a[..., 0] << 16) | (a[..., 1] << 8) | a[..., 2]
    return int(np.unique(packed).size)


def diff_fraction(a, b, threshold=40):
    """Fraction of pixels where some channel differs by more than threshold."""
    d = np.abs(a[..., :3].astype(np.int16) - b[..., :3].astype(np.int16)).max(axis=2)
    return float((d > threshold).mean())


# --- Xvfb ----------------------------------------------------------------------

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
                if r.returncode == 0:
                    self.proc, self.display = proc, f":{n}"
                    return
                time.sleep(0.1)
            # lost a race for the display, or it did not start: try the next one
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


def stop_process(proc, timeout=5):
    """Stops our own child by its PID: SIGTERM, then SIGKILL."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout)
