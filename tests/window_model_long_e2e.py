#!/usr/bin/python3
"""window_model_long_e2e.py MHAVIZ: every input answered by a frame while a loaded
model computes a 1024-token text.

Writes a random checkpoint of GPT-2 small's shape (gpt2_gen.py --small-shape: 12
layers of 12 heads, n_embd 768, n_positions 1024, vocabulary 50257) and runs
`mhaviz --model CKPT --text TEXT` (TEXT over 1024 tokens: cut to 1024) under a
private Xvfb with MHAVIZ_STATS=lines and MHAVIZ_LAYOUT_LOG. The sanitizer build
(MHAVIZ_TEST_SAMPLE set) takes n_embd 384 (12 layers of 12 heads, 1024 tokens) and
prints the times without checking them: its instrumented drawing alone took up to
150 ms of the window thread for one frame of twelve heads, at 256 tokens as at 1024.

The window measures what it answers: each MHAVIZ_STATS line after a frame that
answered inputs (keys, the pointer) says input_ms, the longest from such an input
to the frame that showed it, and input_cpu_ms, the window thread's own CPU time
over the same span (an input counts from when the loop last found its queue
empty, or from the return of a wait that blocked for it: time it spent queued
while the loop was busy is counted). Once loaded (no job under way):
  1, x        head 1 of layer 1 removed: every layer of the 1024 tokens recomputes
              on the jobs layer (seconds); the test waits for a stats line busy=1.
  y, Escape, y (at once, 0.3 s in) and pointer moves over head 1's map (a new tooltip
              each, so each is drawn), sent without a pause (by a thread, one xdotool run
              after another) from then until the last state is shown
              and its layer's own numbers (each head's entropy, how alike the heads
              are) have come, and a while after: inputs keep arriving as each result
              and then its numbers are taken by the window.
Checks: every frame that answered inputs took at most 100 ms of the window
thread's CPU (on the code before, the first derive after a result computed the
layer's own numbers on the window's thread: 0.2-0.5 s at n = 1024, and an input
arriving meanwhile waited for it); the wall-clock input_ms are printed, and with
MHAVIZ_TEST_QUIET=1 (a machine with nothing else running) each must be at most
100 ms too. The final picture is the last state's: the title says layer 3 of 12
and not computing, the next-token panel has its "every head on" bars (a head is
removed), and no stats line after the first busy=0 one says busy=1 again (no
older result is shown after it). Ctrl+Q exits 0. Waits for the states it checks,
never a fixed time. Exits 1 with "FAIL where: expected X, got Y" lines on any
failure; 77 (skipped) without Xvfb, xdotool or xprop."""
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from e2e_util import Checker, WindowApp, Xvfb  # noqa: E402
import gpt2_gen  # noqa: E402

CK = Checker(verbose=bool(os.environ.get("MHAVIZ_TEST_VERBOSE")))
TEXT = " ".join(["The quick brown fox jumps over the lazy dog; the dog sleeps and the fox runs "
                 "away into the woods, where queries meet keys and values."] * 60)
STATS_RE = re.compile(r"^stats.* frames=(\d+) recomputes=\d+ wakeups=\d+ busy=(\d) jobs=(\d+) "
                      r".* input_ms=(-|\d+) input_cpu_ms=(-|\d+)$")
LIMIT_MS = 100
# the sanitizer build (its test environment alone sets MHAVIZ_TEST_SAMPLE): its
# instrumented drawing alone takes up to 150 ms of the window thread for one frame of
# twelve heads, at 256 tokens as at 1024, so the times are printed there, not checked
SANITIZED = bool(os.environ.get("MHAVIZ_TEST_SAMPLE"))


class App(WindowApp):
    """MHAVIZ_STATS=lines and MHAVIZ_LAYOUT_LOG: a stats line and a layout line a frame."""

    def __init__(self, xvfb, mhaviz, tmp, args):
        super().__init__(xvfb, mhaviz, tmp, args, win_timeout=120, MHAVIZ_STATS="lines",
                         MHAVIZ_LAYOUT_LOG="1")
        self.stats = []  # (frames, busy, jobs, input_ms or None, input_cpu_ms or None)
        self.layout_lines = []

    def read(self):
        """Reads the new whole lines of stderr into stats and layout_lines."""
        for line in self.new_lines():
            m = STATS_RE.match(line)
            if m:
                ms = None if m.group(4) == "-" else int(m.group(4))
                cpu = None if m.group(5) == "-" else int(m.group(5))
                self.stats.append((int(m.group(1)), int(m.group(2)), int(m.group(3)), ms, cpu))
            elif line.startswith("layout "):
                self.layout_lines.append(line)

    def wait(self, pred, timeout=60.0):
        """Polls stderr until pred() holds; its last value."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and self.alive():
            self.read()
            if pred():
                return True
            time.sleep(0.02)
        self.read()
        return pred()


def head_map(app):
    """Head 1's map in the last layout line: (x, y, w, h), or None."""
    for line in reversed(app.layout_lines):
        m = re.search(r'\["map","head 1 map",(\d+),(\d+),(\d+),(\d+)\]', line)
        if m:
            return tuple(int(g) for g in m.groups())
    return None


def burst(app, box, keys):
    """One xdotool run: pointer moves between two cells of head 1's map, 20 ms
    apart, with the given keys among them. Returns at once (the run's process)."""
    x, y, w, h = box
    args = ["xdotool"]
    for i in range(24):
        args += ["mousemove", "--window", app.win, str(x + w // 4 + (i % 2) * (w // 2)),
                 str(y + h // 3 + (i % 3) * (h // 6)), "sleep", "0.02"]
        if i == 12 and keys:
            for k in keys:
                args += ["key", "--window", app.win, k]
    return subprocess.Popen(args, env=app.xvfb.env(), stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)


def make_checkpoint(path):
    """The checkpoint; the tokens its text is cut to."""
    if SANITIZED:  # narrower: the instrumented forward is slower
        gpt2_gen.gen(path, 12, 12, 384, 1024, gpt2_gen.filler_tokenizer(50257), "F32", False,
                     False, False, 1e-5, 0, 1.0)
        return 1024
    gpt2_gen.gen_small_shape(path)
    return 1024


def main(argv):
    if len(argv) != 2:
        print("usage: window_model_long_e2e.py MHAVIZ", file=sys.stderr)
        return 2
    for tool in ("Xvfb", "xdotool", "xprop"):
        if not shutil.which(tool):
            print(f"window_model_long_e2e: no {tool}: skipped", file=sys.stderr)
            return 77
    mhaviz = os.path.abspath(argv[1])
    tmp = tempfile.mkdtemp(prefix="mhaviz-window-long-")
    xvfb = app = None
    try:
        ckpt = os.path.join(tmp, "small")
        n, layers = make_checkpoint(ckpt), 12
        xvfb = Xvfb()
        app = App(xvfb, mhaviz, tmp, ["--model", ckpt, "--text", TEXT])
        if not CK.check(app.win is not None, "window", "a window titled mhaviz", None):
            return CK.finish("window_model_long_e2e")
        loaded = app.wait(lambda: f"layer 1 of {layers}" in app.title() and f"n={n}" in app.title()
                          and app.stats and app.stats[-1][2] == 0, timeout=300)
        CK.check(loaded, "load", f"title layer 1 of {layers}, n={n}, no job under way",
                 app.title())
        app.key("1")
        app.wait(lambda: any('"focus":1' in line for line in app.layout_lines), timeout=30)
        box = head_map(app)
        if not CK.check(box is not None, "head 1's map in the layout", "a map item", None):
            return CK.finish("window_model_long_e2e")
        mark = len(app.stats)
        app.key("x")
        busy = app.wait(lambda: any(s[1] == 1 for s in app.stats[mark:]), timeout=60)
        CK.check(busy, "x: a stats line with busy=1", "busy=1", app.stats[mark:][-3:])
        start = len(app.stats)
        # inputs without a pause until the last state and its numbers are shown, then
        # a while after (its first frames and the numbers' arrival covered)
        # a thread sends the bursts back to back (the gap between two is one process
        # start), so that inputs arrive all through the window's handling of each result
        stop = threading.Event()

        def send():
            keys = ["y", "Escape", "y"]  # in the first burst: all while the x computes
            while not stop.is_set() and app.alive():
                burst(app, box, keys).wait(30)
                keys = []
        sender = threading.Thread(target=send, daemon=True)
        sender.start()
        deadline = time.monotonic() + 300
        settled_at = None
        while time.monotonic() < deadline and app.alive():
            time.sleep(0.05)
            app.read()
            if settled_at is None and len(app.stats) > start and app.stats[-1][1] == 0 and \
                    app.stats[-1][2] == 0 and f"layer 3 of {layers}" in app.title():
                settled_at = len(app.stats)
            if settled_at is not None and len(app.stats) > settled_at + 20:
                break
        stop.set()
        sender.join(60)
        app.read()
        CK.check(settled_at is not None, "the last state shown while inputs came",
                 f"layer 3 of {layers}, nothing under way", app.title())
        answered = [s for s in app.stats[start:] if s[3] is not None]
        CK.check(len(answered) >= 20, "inputs answered by frames", "at least 20", len(answered))
        cpu = [s[4] for s in answered]
        wall = [s[3] for s in answered]
        if answered:
            print(f"window_model_long_e2e: {len(answered)} frames answered inputs: wall "
                  f"{min(wall)}-{max(wall)} ms (median {sorted(wall)[len(wall) // 2]}), "
                  f"the window thread's CPU {min(cpu)}-{max(cpu)} ms", file=sys.stderr)
        slow = [s for s in answered if s[4] > LIMIT_MS]
        CK.check(not slow or SANITIZED,
                 f"every input answered within {LIMIT_MS} ms of the window thread",
                 f"input_cpu_ms <= {LIMIT_MS}", slow[:5])
        if os.environ.get("MHAVIZ_TEST_QUIET") == "1" and not SANITIZED:
            late = [s for s in answered if s[3] > LIMIT_MS]
            CK.check(not late, f"every input answered within {LIMIT_MS} ms (a quiet machine)",
                     f"input_ms <= {LIMIT_MS}", late[:5])
        # the last state's picture, and nothing older after it
        CK.check(f"layer 3 of {layers}" in app.title() and "computing" not in app.title(),
                 "the last state shown", f"layer 3 of {layers}, not computing", app.title())
        app.wait(lambda: any("every head on" in line for line in app.layout_lines[-3:]), timeout=10)
        CK.check(any("every head on" in line for line in app.layout_lines[-3:]),
                 "the next-token panel after x (head 1 of layer 1 off)",
                 "its every-head-on bars", "none")
        first_busy = next((i for i in range(mark, len(app.stats)) if app.stats[i][1] == 1), 0)
        idle = next((i for i in range(first_busy, len(app.stats)) if app.stats[i][1] == 0),
                    None)
        again = [s for s in app.stats[idle:] if s[1] == 1] if idle is not None else []
        CK.check(idle is not None and not again, "no change shown after the last one",
                 "busy=0 from then on", again[:3])
        app.key("ctrl+q")
        try:
            rc = app.proc.wait(30)
        except subprocess.TimeoutExpired:
            rc = None
        # on a failure, its last words on stderr follow (app.stop: all but its stats and
        # layout lines)
        CK.check(rc == 0, "Ctrl+Q", "exit 0", rc)
        return CK.finish("window_model_long_e2e")
    finally:
        if app:
            app.stop()
        if xvfb:
            xvfb.stop()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
