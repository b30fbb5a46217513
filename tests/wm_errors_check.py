#!/usr/bin/python3
"""wm_errors_check.py WM_ERRORS: the window's X error handler (wm.c), under a private
Xvfb. A SendEvent to a window already gone (a worker's wake-up arriving after Ctrl+Q
destroyed the window) leaves the process running; without the handler Xlib ends it
with status 1; any other refused request still ends it. After SDL_Quit the
same SendEvent leaves the process running with the handler set before SDL_Init, and
ends it with status 1 with the handler set after (SDL_Quit puts back the handler it
found: Xlib's)."""
import subprocess
import sys

from e2e_util import Checker, Xvfb

CK = Checker()


def main():
    prog = sys.argv[1]
    try:
        xvfb = Xvfb(size="640x480x24")
    except (OSError, RuntimeError) as e:
        print(f"no Xvfb: {e}")
        return 77
    try:
        for mode, rc, out, err in (("quiet", 0, "alive", ""),
                                   ("bare", 1, "", "BadWindow"),
                                   ("other", 1, "", "BadWindow"),
                                   ("quit", 0, "alive after SDL_Quit", ""),
                                   ("late", 1, "", "BadWindow")):
            p = subprocess.run([prog, mode], env=xvfb.env(), capture_output=True, text=True,
                               timeout=30)
            if p.returncode == 77:
                print("no X11 window")
                return 77
            CK.check(p.returncode == rc, f"{mode}: exit status", rc, p.returncode)
            CK.check(out in p.stdout and err in p.stderr, f"{mode}: what it said",
                     f"stdout with {out!r}, stderr with {err!r}", (p.stdout, p.stderr[:200]))
            if mode == "other":
                CK.check("X_ChangeProperty" in p.stderr, "other: the request named",
                         "X_ChangeProperty", p.stderr[:200])
    finally:
        xvfb.stop()
    return CK.finish("wm_errors_check")


if __name__ == "__main__":
    sys.exit(main())
