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
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
from e2e_util import Checker, Xvfb, geometry_of, stop_process, window_of_pid

CK = Checker()


def main():
    mhaviz = sys.argv[1]
    if not shutil.which("openbox"):
        print("SKIP: no openbox (a window manager frames the window)")
        return 77
    for size in ("1024x768", "1280x720", "768x1024"):
        sw, sh = (int(v) for v in size.split("x"))
        xvfb = Xvfb(size + "x24")
        wm = subprocess.Popen(["openbox"], env=xvfb.env(), stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
        app = None
        try:
            time.sleep(1.0)  # openbox takes the screen
            app = subprocess.Popen([mhaviz], env=xvfb.env(), stdout=subprocess.DEVNULL,
                                   stderr=subprocess.DEVNULL)
            win = window_of_pid(xvfb, app.pid, timeout=60.0)
            CK.check(win is not None, f"{size}: the window appears", "a window", None)
            if win is None:
                continue
            time.sleep(3.0)  # framed, sized and placed (a loaded machine frames late)
            win = window_of_pid(xvfb, app.pid, timeout=10.0)  # (SDL may make it anew)
            x, y, w, h = geometry_of(xvfb, win)
            frame = xvfb.run(["xprop", "-id", str(win), "_NET_FRAME_EXTENTS"]).stdout
            print(f"{size}: client at {x},{y} size {w}x{h}; {frame.strip()}")
            CK.check(y + h <= sh, f"{size}: the client's bottom (the status line) on the screen",
                     f"<= {sh}", y + h)
            CK.check(x + w <= sw, f"{size}: the client's right edge on the screen",
                     f"<= {sw}", x + w)
            CK.check(y >= 1, f"{size}: room above the client for its title bar", ">= 1", y)
            CK.check(h >= sh * 3 // 4, f"{size}: the window still fills most of the screen",
                     f">= {sh * 3 // 4}", h)
        finally:
            if app:
                stop_process(app)
            stop_process(wm)
            xvfb.stop()
    return CK.finish("window_fit_e2e")


if __name__ == "__main__":
    sys.exit(main())
