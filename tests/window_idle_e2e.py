#!/usr/bin/env python3
"""window_idle_e2e.py: the real window does no work while nothing happens, and a
large recompute never makes it wait (issue 11), under a private Xvfb.

The window runs with MHAVIZ_STATS=1, so it prints "stats frames=F recomputes=R
wakeups=W busy=B jobs=J woke=K forwards=N" on stderr whenever it draws a frame, shows a
recompute or starts or ends a job (B: a recompute was under way when the frame
was drawn, so the frame showed the progress sign; J: jobs under way, such as the
forward timed for the cost panel after a recompute; K: what woke the loop since
the line before, e.g. "pointer" or "timeout"). "Idle" begins once J is 0. The
configuration is large (d_model 2048, n 506): an h step there takes well over the
50 ms that send a recompute to the background.
  - idle: after the start has settled, 3 s with no event: 0 frames, 0 recomputes
    (a frame for an X event that came late starts the 3 s again, up to 4 times);
  - one Up: exactly one recompute, at least one frame, one of them drawn while it
    ran (the progress sign), the title at h=16 afterwards; then idle again;
  - the pointer moved while a d_model step computes: frames drawn meanwhile;
  - a burst of 5 Up/Down presses: fewer recomputes than keys, the last state shown.
Usage: window_idle_e2e.py MHAVIZ"""
import os
import re
import sys
import tempfile
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
from e2e_util import Checker, WindowApp, Xvfb

CK = Checker()
IDLE_S = 3.0
STATS = re.compile(r"^stats(?: exit)? frames=(\d+) recomputes=(\d+) wakeups=(\d+) busy=(\d) "
                   r"jobs=(\d+) woke=([a-z,]+) forwards=\d+(?: .*)?$")
# the key path's counts on the same line: numbers derived, views filled, actions applied
COUNTS = re.compile(r"^stats(?: exit)? frames=(\d+) recomputes=(\d+) .* derives=(\d+) "
                    r"views=(\d+) actions=(\d+)(?: .*)?$")
# what the X server sends: a frame for one of these is an answer, not idle work
FROM_X = {"key", "pointer", "window", "other"}


class App(WindowApp):
    """MHAVIZ_STATS=1: a stats line after each frame, wakeup and recompute."""

    def __init__(self, xvfb, mhaviz, tmp, args):
        super().__init__(xvfb, mhaviz, tmp, args, log="window.log", win_timeout=60.0,
                         MHAVIZ_STATS="1")

    def lines(self):
        """Every stats line so far, as (frames, recomputes, wakeups, busy)."""
        return [l[:4] for l in self.woke_lines()]

    def woke_lines(self):
        """Every stats line so far, as (frames, recomputes, wakeups, busy, jobs, woke)."""
        self.log.flush()
        with open(self.log_path) as f:
            return [tuple(int(g) for g in m.groups()[:5]) + (set(m.group(6).split(",")),)
                    for m in (STATS.match(l) for l in f.read().splitlines()) if m]

    def counts(self):
        """The last stats line's (frames, recomputes, derives, views, actions)."""
        self.log.flush()
        with open(self.log_path) as f:
            seen = [m for m in (COUNTS.match(l) for l in f.read().splitlines()) if m]
        return tuple(int(g) for g in seen[-1].groups()) if seen else (0, 0, 0, 0, 0)

    def stats(self):
        seen = self.lines()
        return seen[-1] if seen else (0, 0, 0, 0)

    def settle(self, quiet=1.0, timeout=60.0):
        """Waits until no job is under way (the last line says jobs=0: the
        forward timed for the cost panel after a recompute is one) and no stats
        line came for `quiet` seconds; the last line."""
        deadline = time.monotonic() + timeout
        count, since = len(self.lines()), time.monotonic()
        while time.monotonic() < deadline and self.proc.poll() is None:
            time.sleep(0.1)
            seen = self.woke_lines()
            if len(seen) != count:
                count, since = len(seen), time.monotonic()
            elif time.monotonic() - since >= quiet and (not seen or seen[-1][4] == 0):
                break
        return self.stats()

    def wait_title(self, pred, timeout=60.0):
        return super().wait_title(pred, timeout)

    def keys(self, *keys, delay=40):
        self.xvfb.run(["xdotool", "key", "--window", self.win, "--delay", str(delay)] + list(keys))


def idle(app, where, tries=4):
    """No frame and no recompute in IDLE_S seconds without an event. A frame for
    a late event from the X server (the window manager's, or the pointer the test
    moved, on a loaded machine) is no idle work: the IDLE_S seconds start again
    after it, up to `tries` times. A frame after a timeout or a worker's wake-up,
    or any recompute, fails at once."""
    before = app.settle()
    for attempt in range(tries):
        n_lines = len(app.woke_lines())
        time.sleep(IDLE_S)
        new = app.woke_lines()[n_lines:]
        after = app.stats()
        late_x = new and after[1] == before[1] and all(l[5] <= FROM_X for l in new)
        if not late_x or attempt + 1 == tries:
            break
        print(f"{where}: {len(new)} frame(s) for late X events "
              f"({','.join(sorted(set().union(*(l[5] for l in new))))})", file=sys.stderr)
        before = app.settle()
    CK.check(not new, f"{where}: {IDLE_S:.0f} s idle", "no stats line",
             [f"frames={l[0]} recomputes={l[1]} woke={','.join(sorted(l[5]))}" for l in new])
    CK.check(after[1] == before[1], f"{where}: recomputes in {IDLE_S:.0f} s idle", 0,
             after[1] - before[1])
    return after


def h_of(title):
    m = re.search(r"h=(\d+) d_model=(\d+) n=(\d+)", title)
    return (int(m.group(1)), int(m.group(2)), int(m.group(3))) if m else None


def step_h(h, d, direction):
    """The next divisor of d above or below h (the Up and Down keys)."""
    k = h + direction
    while not d % k == 0:
        k += direction
    return k


def done(h, d):
    return lambda t: h_of(t) == (h, d, 506) and "computing" not in t


def run(xvfb, mhaviz, tmp):
    text = " ".join(["the cat sat on the mat and looked at the dog"] * 46)  # 506 tokens
    app = App(xvfb, mhaviz, tmp, ["-d", "2048", "-H", "8", "--text", text])
    try:
        if not CK.check(app.win is not None, "window", "a window", None):
            return
        t = app.wait_title(done(8, 2048))
        CK.check(h_of(t) == (8, 2048, 506), "start", "h=8 d_model=2048 n=506", t)
        base = idle(app, "after the start")
        CK.check(base[1] == 1, "start: recomputes", 1, base[1])
        c0 = app.counts()

        # one key: one recompute in the background, the progress sign, then nothing
        app.keys("Up")
        t = app.wait_title(done(16, 2048))
        CK.check(h_of(t) == (16, 2048, 506), "Up: title", "h=16, nothing computing", t)
        after = app.settle()
        CK.check(after[1] - base[1] == 1, "Up: recomputes", 1, after[1] - base[1])
        # a key goes one way: one view a frame (a pointer's action may lay out once more,
        # to hit-test), and the numbers derived once, for the model shown
        c1 = app.counts()
        frames, derives, views, actions = (c1[0] - c0[0], c1[2] - c0[2], c1[3] - c0[3],
                                           c1[4] - c0[4])
        CK.check(views - frames <= actions - 1, "Up: one view a frame",
                 f"views - frames <= {actions - 1} (actions other than the key)",
                 f"{views} views for {frames} frames")
        CK.check(derives == c1[1] - c0[1], "Up: one derivation for the recompute shown",
                 c1[1] - c0[1], derives)
        CK.check(after[0] - base[0] >= 1, "Up: frames", ">= 1", after[0] - base[0])
        busy = [l for l in app.lines() if l[3] == 1 and l[0] > base[0]]
        CK.check(len(busy) >= 1, "Up: a frame with the progress sign", ">= 1 frame while busy",
                 len(busy))
        after = idle(app, "after Up")

        # the pointer while a d_model step computes (new weights): frames meanwhile
        app.keys("Right")
        for x in (200, 260, 320, 380, 440, 500):
            xvfb.run(["xdotool", "mousemove", "--window", app.win, str(x), "400"])
            time.sleep(0.03)
        t = app.wait_title(done(16, 3072))
        CK.check(h_of(t) == (16, 3072, 506), "Right: title", "h=16 d_model=3072", t)
        busy = [l for l in app.lines() if l[3] == 1 and l[0] > after[0]]
        CK.check(len(busy) >= 2, "Right: frames while computing (progress, then hover)", ">= 2",
                 len(busy))
        after = app.settle()
        CK.check(after[1] - base[1] == 2, "Right: one more recompute", 2, after[1] - base[1])
        xvfb.run(["xdotool", "mousemove", "--window", app.win, "5", "5"])
        after = idle(app, "after Right")

        # a burst of 5 presses, h along the divisors of 3072: 16 -> 12 -> 8 -> 12 -> 8 -> 12
        burst = ("Down", "Down", "Up", "Down", "Up")
        h = 16
        for k in burst:
            h = step_h(h, 3072, 1 if k == "Up" else -1)
        app.keys(*burst, delay=5)
        t = app.wait_title(done(h, 3072))
        CK.check(h_of(t) == (h, 3072, 506), "burst: the last state", f"h={h} d_model=3072", t)
        end = app.settle()
        got = end[1] - after[1]
        CK.check(1 <= got < 5, "burst: recomputes for 5 keys", "1 to 4", got)
        idle(app, "after the burst")
    finally:
        app.stop()
        with open(app.log_path) as f:
            other = [l for l in f.read().splitlines() if not STATS.match(l)]
        if other:
            print("[app stderr]\n" + "\n".join(other[-20:]), file=sys.stderr)


def main():
    if len(sys.argv) != 2:
        print("usage: window_idle_e2e.py MHAVIZ", file=sys.stderr)
        return 2
    mhaviz = os.path.abspath(sys.argv[1])
    t0 = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="mhaviz-idle-") as tmp:
        xvfb = Xvfb()
        try:
            run(xvfb, mhaviz, tmp)
        finally:
            xvfb.stop()
    print(f"window_idle_e2e: {time.monotonic() - t0:.1f} s")
    return CK.finish("window_idle_e2e")


if __name__ == "__main__":
    sys.exit(main())
