#!/usr/bin/python3
"""window_view_file_e2e.py MHAVIZ: view files in the real window, under a private Xvfb.

- `mhaviz --state w.view --export-dir D` opens the view the file describes: the title
  says its h, d_model and sample;
- Ctrl+Shift+V writes D/mhaviz-h8-d64-<time>.view, whose settings are the file's
  (sample, h, focus, stage, theme, mask) and the first line `# mhaviz view 1`; after Up
  (h = 16) a second Ctrl+Shift+V writes the new h; the window is alive throughout;
- the saved file, exported with --state, gives the same PNG as the options that say the
  same view (the window's view and the command line's agree);
- a broken file with the window: one line `mhaviz: FILE:LINE: ...`, exit 2, no window.
Exits 1 with "expected X, got Y" lines on any failure."""
import glob
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from e2e_util import Checker, Xvfb, stop_process, title_of, window_of_pid  # noqa: E402

CK = Checker()


def settings(path):
    out = {}
    for line in open(path, encoding="utf-8"):
        if line.strip() and not line.startswith("#"):
            k, v = line.split("=", 1)
            out[k.strip()] = v.strip()
    return out


def wait_title(xvfb, win, pred, timeout=20):
    """The window's title once pred(title) holds, or its last title at the timeout."""
    deadline = time.monotonic() + timeout
    title = title_of(xvfb, win)
    while not pred(title) and time.monotonic() < deadline:
        time.sleep(0.05)
        title = title_of(xvfb, win)
    return title


def wait_files(folder, count, timeout=15):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        got = sorted(glob.glob(os.path.join(folder, "*.view")))
        if len(got) >= count:
            return got
        time.sleep(0.1)
    return sorted(glob.glob(os.path.join(folder, "*.view")))


def main():
    if len(sys.argv) != 2:
        print("usage: window_view_file_e2e.py MHAVIZ", file=sys.stderr)
        return 2
    mhaviz = os.path.abspath(sys.argv[1])
    with tempfile.TemporaryDirectory(prefix="mhaviz-view-e2e-") as tmp:
        saves = os.path.join(tmp, "saves")
        os.mkdir(saves)
        view = os.path.join(tmp, "w.view")
        with open(view, "w") as f:
            f.write("# a lesson's view\nsample = 2\nh = 8\nfocus = 3\nstage = 4\ntheme = dark\n"
                    "mask = causal\n")
        xvfb = Xvfb()
        proc = None
        try:
            proc = subprocess.Popen([mhaviz, "--state", view, "--export-dir", saves],
                                    env=xvfb.env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            win = window_of_pid(xvfb, proc.pid)
            CK.check(win is not None, "the window opens", "a window", "none")
            if win is None:
                return CK.finish("window_view_file_e2e")
            title = wait_title(xvfb, win, lambda t: "h=8 d_model=64" in t)
            CK.check("h=8 d_model=64" in title and "coreference" in title, "the title",
                     "h=8 d_model=64 ... coreference (sample 2)", title)
            xvfb.run(["xdotool", "key", "--window", win, "ctrl+shift+v"])
            got = wait_files(saves, 1)
            CK.check(len(got) == 1, "Ctrl+Shift+V writes a view file", 1, got)
            if got:
                first = open(got[0], encoding="utf-8").readline()
                CK.check(first == "# mhaviz view 1\n", "its first line", "# mhaviz view 1", first)
                CK.check(os.path.basename(got[0]).startswith("mhaviz-h8-d64-"), "its name",
                         "mhaviz-h8-d64-<time>.view", os.path.basename(got[0]))
                s = settings(got[0])
                want = {"sample": "2", "h": "8", "focus": "3", "stage": "4", "theme": "dark",
                        "mask": "causal", "d_model": "64", "compare": "off"}
                for k, v in want.items():
                    CK.check(s.get(k) == v, f"saved {k}", v, s.get(k))
                # the saved view, exported, is the options' export of the same view
                a, b = os.path.join(tmp, "a.png"), os.path.join(tmp, "b.png")
                ra = subprocess.run([mhaviz, "--state", got[0], "--panel", "steps:3", "--export", a],
                                    capture_output=True, timeout=60)
                rb = subprocess.run([mhaviz, "--sample", "2", "-H", "8", "--theme", "dark", "--mask",
                                     "causal", "--panel", "steps:3", "--export", b],
                                    capture_output=True, timeout=60)
                CK.check(ra.returncode == 0 and rb.returncode == 0, "both export", "exit 0 and 0",
                         f"{ra.returncode} {ra.stderr!r} / {rb.returncode} {rb.stderr!r}")
                if ra.returncode == 0 and rb.returncode == 0:
                    CK.check(open(a, "rb").read() == open(b, "rb").read(), "the same PNG",
                             "equal bytes", "different")
            time.sleep(1.2)  # a second later: another name
            xvfb.run(["xdotool", "key", "--window", win, "Up"])
            up = wait_title(xvfb, win, lambda t: "h=16 " in t)
            CK.check("h=16 " in up, "Up: the title says h=16", "h=16", up)
            xvfb.run(["xdotool", "key", "--window", win, "ctrl+shift+v"])
            got = wait_files(saves, 2)
            CK.check(len(got) == 2, "a second save", 2, got)
            if len(got) == 2:
                newest = max(got, key=os.path.getmtime)
                CK.check(settings(newest).get("h") == "16", "after Up: h", "16",
                         settings(newest).get("h"))
            CK.check(proc.poll() is None, "the window is alive", "running", proc.poll())
        finally:
            if proc:
                stop_process(proc)
            bad = os.path.join(tmp, "bad.view")
            with open(bad, "w") as f:
                f.write("h = 8\ntheme = purple\n")
            r = subprocess.run([mhaviz, "--state", bad], env=xvfb.env(), capture_output=True,
                               timeout=30)
            lines = r.stderr.decode().splitlines()
            CK.check(r.returncode == 2, "a broken file: exit", 2, r.returncode)
            CK.check(len(lines) == 1 and lines[0].startswith(f"mhaviz: {bad}:2: theme = purple"),
                     "a broken file: one line", f"mhaviz: {bad}:2: theme = purple ...", lines)
            xvfb.stop()
    print("window_view_file_e2e: opened, saved twice, exported alike, a broken file refused")
    return CK.finish("window_view_file_e2e")


if __name__ == "__main__":
    sys.exit(main())
