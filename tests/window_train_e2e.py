"""window_train_e2e.py: training paced for a class, in the real window under a private
Xvfb, driven with xdotool and read from the window title (step, held-out accuracy,
pace) and screenshots:
- L on pair stops by itself within the task's budget (500 steps), and stays stopped;
- R (a new run) then S: slow motion shows at least 20 distinct pictures of the heads
  (the left quarter of the window, where they are drawn) before the run passes 99 %;
- S pauses: the step stands; . takes exactly one step; S goes on at full speed and the
  run stops by itself again.
Pictures are compared for equality only; nothing here is timed beyond generous waits."""
import hashlib
import os
import re
import subprocess
import sys
import tempfile
import time

from e2e_util import Checker, Xvfb, geometry_of, stop_process, title_of, window_of_pid

CK = Checker(verbose=bool(os.environ.get("MHAVIZ_TEST_VERBOSE")))
# "training pair h=2 d_model=32 — step 120 — held-out 99.2 % — slow motion" (xprop
# escapes the dashes)
TITLE = re.compile(r"training (\w+) h=(\d+) d_model=(\d+) .*step (\d+) .*held-out ([\d.]+) % "
                   r".*(full speed|slow motion|paused|stopped)")
BUDGET = 500  # pair's, as the README states


def state(xvfb, win):
    """(step, held-out %, pace) from the title, or None."""
    m = TITLE.search(title_of(xvfb, win))
    return (int(m.group(4)), float(m.group(5)), m.group(6)) if m else None


def wait(xvfb, win, pred, timeout):
    deadline, got = time.monotonic() + timeout, None
    while time.monotonic() < deadline:
        got = state(xvfb, win)
        if got and pred(got):
            return got
        time.sleep(0.05)
    return got


def heads_hash(xvfb, win):
    """A hash of the left quarter of the window below its controls: the heads."""
    shot = xvfb.screenshot()
    x, y, w, h = geometry_of(xvfb, win)
    part = shot[y + h // 8:y + h * 7 // 8, x + w // 50:x + w // 4]
    return hashlib.sha1(part.tobytes()).hexdigest()


def key(xvfb, win, *keys):
    xvfb.run(["xdotool", "key", "--window", str(win)] + list(keys))


def main():
    mhaviz = sys.argv[1]
    xvfb = Xvfb()
    proc = None
    try:
        with tempfile.TemporaryDirectory() as tmp:
            proc = subprocess.Popen([mhaviz], env=xvfb.env(), cwd=tmp,
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            win = window_of_pid(xvfb, proc.pid)
            if not CK.check(win, "window", "a window", "none"):
                return 1
            xvfb.run(["xdotool", "mousemove", "0", "0"])  # no tooltip in the pictures
            time.sleep(1.0)
            # 1. L on pair: stops by itself within its budget
            key(xvfb, win, "l")
            got = wait(xvfb, win, lambda s: s[2] == "stopped", 60)
            CK.check(got and got[2] == "stopped", "L on pair: stops by itself", "stopped", got)
            print(f"L on pair: stopped at step {got and got[0]}, held-out {got and got[1]} %",
                  flush=True)
            CK.check(got and 0 < got[0] <= BUDGET, "L on pair: within its budget",
                     f"a step in 1..{BUDGET}", got and got[0])
            CK.check(got and got[1] >= 99.0, "L on pair: learned", ">= 99 %", got and got[1])
            time.sleep(1.0)
            still = state(xvfb, win)
            CK.check(still and got and still[0] == got[0] and still[2] == "stopped",
                     "stopped: stays stopped", got, still)
            # 2. R (a new run), S: slow motion, every step drawn
            key(xvfb, win, "r", "s")
            slow = wait(xvfb, win, lambda s: s[2] == "slow motion", 20)
            CK.check(slow and slow[2] == "slow motion", "S: slow motion", "slow motion", slow)
            pictures, steps = set(), set()
            deadline = time.monotonic() + 120
            while time.monotonic() < deadline:
                before = state(xvfb, win)
                h = heads_hash(xvfb, win)
                after = state(xvfb, win)
                if not before or not after or after[1] >= 99.0 or after[2] != "slow motion":
                    break
                pictures.add(h)
                steps.add(after[0])
            print(f"slow motion: {len(pictures)} distinct pictures of the heads over "
                  f"{len(steps)} steps before 99 %", flush=True)
            CK.check(len(pictures) >= 20, "slow motion: distinct pictures of the heads before 99 %",
                     ">= 20", f"{len(pictures)} (over {len(steps)} steps seen)")
            # 3. S: paused; . one step; S: full speed, and it stops by itself again
            key(xvfb, win, "s")
            paused = wait(xvfb, win, lambda s: s[2] == "paused", 20)
            CK.check(paused and paused[2] == "paused", "S again: paused", "paused", paused)
            time.sleep(0.8)
            stand = state(xvfb, win)
            CK.check(paused and stand and stand[0] == paused[0], "paused: the step stands",
                     paused and paused[0], stand and stand[0])
            if stand:
                key(xvfb, win, "period")
                one = wait(xvfb, win, lambda s: s[0] == stand[0] + 1 and s[2] == "paused", 20)
                CK.check(one and one[0] == stand[0] + 1, ". : one step", stand[0] + 1,
                         one and one[0])
                time.sleep(0.8)
                two = state(xvfb, win)
                CK.check(two and two[0] == stand[0] + 1, ". : and no more", stand[0] + 1,
                         two and two[0])
            key(xvfb, win, "s")
            full = wait(xvfb, win, lambda s: s[2] in ("full speed", "stopped"), 20)
            CK.check(full is not None and full[2] in ("full speed", "stopped"),
                     "S a third time: full speed", "full speed", full)
            end = wait(xvfb, win, lambda s: s[2] == "stopped", 60)
            CK.check(end and end[2] == "stopped", "full speed: stops by itself again", "stopped",
                     end)
            CK.check(proc.poll() is None, "alive", "running", f"exited {proc.poll()}")
    finally:
        if proc:
            stop_process(proc)
        xvfb.stop()
    return CK.finish("window_train_e2e")


if __name__ == "__main__":
    sys.exit(main())
