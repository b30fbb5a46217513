#!/usr/bin/python3
"""window_model_busy_e2e.py MHAVIZ: a loaded model's changes never stop the real window.

Writes a random checkpoint "busy" (gpt2_gen.py: 12 layers, 8 heads, n_embd 512,
n_positions 512, seed 3: a forward of a few hundred ms on a long text) and runs
`mhaviz --model busy --text TEXT` (TEXT some 450 tokens) under a private Xvfb with
MHAVIZ_STATS and MHAVIZ_LAYOUT_LOG set. Once loaded:
  1, x        head 1 of layer 1 removed: every layer recomputes, on the jobs layer.
              While it computes the window must say so and keep drawing: a stats line
              with busy=1, and, after pointer moves sent then, a frame drawn (the
              frames count grows) on a stats line that still has busy=1. The title
              ends in "(computing" meanwhile.
  y, x, Esc   pressed while that runs: layer 2, head 1 of layer 2 removed, focus gone;
              then a pointer move. Each must be answered by a frame, one at least
              while busy=1 (the time from each to its frame is printed, not checked). The
              final picture is the last state's: the title says layer 2 of 12 and not
              computing, the next-token panel has its "every head on" bars (heads are
              removed), and no stats line after the first busy=0 one says busy=1 again.
  Ctrl+Q      exits 0.
On the old code (the forward on the window's thread) no frame is drawn while a change
computes: no stats line ever says busy=1. It waits for the states it checks, never a
fixed time (each wait has a generous limit). Exits 1 with "FAIL where:
expected X, got Y" lines on any failure; 77 (skipped) without Xvfb, xdotool or xprop."""
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from e2e_util import Checker, WindowApp, Xvfb  # noqa: E402

CK = Checker(verbose=bool(os.environ.get("MHAVIZ_TEST_VERBOSE")))
TEXT = " ".join(["The quick brown fox jumps over the lazy dog; the dog sleeps and the fox runs "
                 "away into the woods, where queries meet keys and values."] * 20)
STATS_RE = re.compile(r"^stats.* frames=(\d+) recomputes=\d+ wakeups=\d+ busy=(\d) jobs=(\d+)")


class App(WindowApp):
    """MHAVIZ_STATS=1 and MHAVIZ_LAYOUT_LOG: a stats line and a layout line a frame."""

    def __init__(self, xvfb, mhaviz, tmp, args):
        super().__init__(xvfb, mhaviz, tmp, args, MHAVIZ_STATS="1", MHAVIZ_LAYOUT_LOG="1")
        self.stats = []  # (arrival time, frames, busy, jobs)
        self.layout_lines = []

    def read(self):
        """Reads the new whole lines of stderr into stats and layout_lines."""
        now = time.monotonic()
        for line in self.new_lines():
            m = STATS_RE.match(line)
            if m:
                self.stats.append((now, int(m.group(1)), int(m.group(2)), int(m.group(3))))
            elif line.startswith("layout "):
                self.layout_lines.append(line)

    def wait(self, pred, timeout=60.0):
        """Polls stderr until pred() holds; its last value."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and self.alive():
            self.read()
            if pred():
                return True
            time.sleep(0.01)
        self.read()
        return pred()


def main(argv):
    if len(argv) != 2:
        print("usage: window_model_busy_e2e.py MHAVIZ", file=sys.stderr)
        return 2
    for tool in ("Xvfb", "xdotool", "xprop"):
        if not shutil.which(tool):
            print(f"window_model_busy_e2e: no {tool}: skipped", file=sys.stderr)
            return 77
    mhaviz = os.path.abspath(argv[1])
    tmp = tempfile.mkdtemp(prefix="mhaviz-window-busy-")
    xvfb = app = None
    try:
        ckpt = os.path.join(tmp, "busy")
        subprocess.run([sys.executable, os.path.join(HERE, "gpt2_gen.py"), ckpt, "--layers", "12",
                        "--heads", "8", "--embd", "512", "--positions", "512", "--merges", "200",
                        "--seed", "3"], check=True, timeout=300, stdout=subprocess.DEVNULL)
        xvfb = Xvfb()
        app = App(xvfb, mhaviz, tmp, ["--model", ckpt, "--text", TEXT])
        if not CK.check(app.win is not None, "window", "a window titled mhaviz", None):
            return CK.finish("window_model_busy_e2e")
        loaded = app.wait(lambda: "layer 1 of 12" in app.title() and "loading" not in app.title()
                          and app.stats and app.stats[-1][3] == 0, timeout=120)
        CK.check(loaded, "load", "title layer 1 of 12, no job under way", app.title())

        app.key("1")
        app.wait(lambda: any('"focus":1' in line for line in app.layout_lines), timeout=20)
        mark = len(app.stats)
        app.key("x")
        busy = app.wait(lambda: any(s[2] == 1 for s in app.stats[mark:]), timeout=30)
        CK.check(busy, "x: a stats line with busy=1 (the window drew while computing)", "busy=1",
                 app.stats[mark:][-3:])
        # the title while computing (read before the stats say the job ended)
        title, still = app.title(), False
        app.read()
        still = app.stats[-1][2] == 1
        CK.check("computing" in title or not still, "x: the title while computing",
                 "ends in (computing...)", title)
        # keys and pointer moves while it computes: each answered by a frame, busy still 1
        latencies = []
        for k in ("y", "x", "Escape", "mousemove"):
            frames, sent = app.stats[-1][1], time.monotonic()
            if k == "mousemove":
                xvfb.run(["xdotool", "mousemove", "--window", app.win, "300", "400"])
            else:
                app.key(k)
            if app.wait(lambda: app.stats[-1][1] > frames, timeout=30):
                latencies.append((k, time.monotonic() - sent, app.stats[-1][2]))
        CK.check(any(busy for _, _, busy in latencies),
                 "keys and pointer while computing: a frame drawn with busy=1",
                 "a frame while busy", latencies)
        if latencies:
            print("window_model_busy_e2e: key to frame " + ", ".join(
                f"{k} {1000 * t:.0f} ms (busy={b})" for k, t, b in latencies), file=sys.stderr)
        first_busy = next((i for i in range(mark, len(app.stats)) if app.stats[i][2] == 1), 0)
        done = app.wait(lambda: app.stats[-1][2] == 0 and "layer 2 of 12" in app.title()
                        and "computing" not in app.title(), timeout=120)
        CK.check(done, "the last state shown", "layer 2 of 12, not computing", app.title())
        app.wait(lambda: any("every head on" in line for line in app.layout_lines[-3:]), timeout=10)
        CK.check(any("every head on" in line for line in app.layout_lines[-3:]),
                 "the next-token panel after x, y, x", "its every-head-on bars", "none")
        idle = next((i for i in range(first_busy, len(app.stats)) if app.stats[i][2] == 0), None)
        again = [s for s in app.stats[idle:] if s[2] == 1] if idle is not None else []
        CK.check(idle is not None and not again, "no change computed after the last one is shown",
                 "busy=0 from then on", again[:3])
        app.key("ctrl+q")
        try:
            rc = app.proc.wait(10)
        except subprocess.TimeoutExpired:
            rc = None
        CK.check(rc == 0, "Ctrl+Q", "exit 0", rc)
        return CK.finish("window_model_busy_e2e")
    finally:
        if app:
            app.stop()
        if xvfb:
            xvfb.stop()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
