#!/usr/bin/env python3
"""window_fit_e2e.py: on a 1024x768 screen with a real window manager (openbox), the
window opens whole on the screen: its title bar, and its bottom edge (the status line)
inside the screen (issue 20: it opened at the full screen height plus the title bar,
the status line off the bottom; on a portrait 768x1024 screen the minimum size of
800 px made it wider than the screen). Skipped (77) without openbox.
Usage: window_fit_e2e.py MHAVIZ"""
import shutil
import subprocess
import sys
import tempfile
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
from e2e_util import (SETTLE_TIMEOUT, Checker, Xvfb, frame_extents, geometry_of, stop_process,
                      start_wm, wait_idle, window_of_pid)

CK = Checker()


def fitted(xvfb, win, sw, sh):
    """(checks, geometry, frame): the window's bottom and right edge on the screen,
    room above it for its title bar and most of the screen filled."""
    x, y, w, h = geometry_of(xvfb, win)
    checks = [(y + h <= sh, "the client's bottom (the status line) on the screen", f"<= {sh}",
               y + h),
              (x + w <= sw, "the client's right edge on the screen", f"<= {sw}", x + w),
              (y >= 1, "room above the client for its title bar", ">= 1", y),
              (h >= sh * 3 // 4, "the window still fills most of the screen",
               f">= {sh * 3 // 4}", h)]
    return checks, (x, y, w, h), frame_extents(xvfb, win)


def check_fit(xvfb, app, err_path, size, sw, sh):
    """Waits for the state the checks read (openbox has framed the window, the window
    has drawn its frames and has no job under way, the fit holds), then checks it."""
    win = window_of_pid(xvfb, app.pid, timeout=60.0)
    CK.check(win is not None, f"{size}: the window appears", "a window", None)
    if win is None:
        return
    deadline = time.monotonic() + SETTLE_TIMEOUT
    while time.monotonic() < deadline and app.poll() is None:
        win = window_of_pid(xvfb, app.pid, timeout=10.0) or win  # (SDL may make it anew)
        idle = wait_idle(err_path, timeout=max(0.0, deadline - time.monotonic()),
                         alive=lambda: app.poll() is None)
        checks, geo, frame = fitted(xvfb, win, sw, sh)
        if idle and frame and all(c[0] for c in checks):
            break
        time.sleep(0.05)
    print(f"{size}: client at {geo[0]},{geo[1]} size {geo[2]}x{geo[3]}; frame {frame}")
    CK.check(frame, f"{size}: openbox frames the window", "_NET_FRAME_EXTENTS", None)
    for ok, where, expected, got in checks:
        CK.check(ok, f"{size}: {where}", expected, got)


def main():
    mhaviz = sys.argv[1]
    if not shutil.which("openbox"):
        print("SKIP: no openbox (a window manager frames the window)")
        return 77
    for size in ("1024x768", "1280x720", "768x1024"):
        sw, sh = (int(v) for v in size.split("x"))
        xvfb = Xvfb(size + "x24")
        wm = start_wm(xvfb)
        app = None
        try:
            CK.check(wm, f"{size}: openbox takes the screen", "a window manager", "none")
            with tempfile.NamedTemporaryFile("w+", suffix=".stderr") as err:
                app = subprocess.Popen([mhaviz], env=xvfb.env(MHAVIZ_STATS="lines"),
                                       stdout=subprocess.DEVNULL, stderr=err)
                check_fit(xvfb, app, err.name, size, sw, sh)
        finally:
            if app:
                stop_process(app)
            if wm:
                stop_process(wm)
            xvfb.stop()
    return CK.finish("window_fit_e2e")


if __name__ == "__main__":
    sys.exit(main())
