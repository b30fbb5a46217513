"""window_sweep_e2e.py: training mode's sweep of h (H) in the real window, under a
private Xvfb with openbox, driven with xdotool and read from the window title and
screenshots. A view file opens training mode on cards at d_model 16, h = 4, a seed
from the clock (printed) and a short budget (200 steps); then:
- H: the sweep view; the title counts the runs done while it sweeps, and the plot
  (the right part of the window) changes from the training panels;
- it ends with 15 of 15 runs done, the heads of the newest run (h = 16, the seed
  + 2) shown, whose held-out accuracy in the title is the one `--train cards -d 16
  -H 16 -s SEED --steps 200` prints; Left shows the run before (seed + 1), again
  equal to its --train run;
- Escape: the training run again (h = 4, its 200 steps), the window alive.
A screenshot of the sweep is kept with MHAVIZ_SHOTS=DIR. Nothing is timed beyond
generous waits."""
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

from e2e_util import (Checker, Xvfb, diff_fraction, settled, start_wm, stop_process,
                      title_of, window_of_pid)

CK = Checker(verbose=bool(os.environ.get("MHAVIZ_TEST_VERBOSE")))
STEPS = 200
SWEEP = re.compile(r"sweep h cards d_model=16 steps=(\d+) .* (\d+) of (\d+) runs done .* "
                   r"(heads h=(\d+) seed (\d+) held-out ([\d.]+) %|heads of the training run)"
                   r" .* (sweeping|done|stopped)")
TRAIN = re.compile(r"training cards h=(\d+) d_model=16 .*step (\d+) .*held-out ([\d.]+) % "
                   r".*(full speed|slow motion|paused|stopped|diverged)")


def wait_title(xvfb, win, pattern, pred, timeout):
    deadline, got = time.monotonic() + timeout, None
    while time.monotonic() < deadline:
        m = pattern.search(title_of(xvfb, win))
        if m:
            got = m
            if pred(m):
                return m
        time.sleep(0.1)
    return got


def key(xvfb, win, *keys):
    xvfb.run(["xdotool", "key", "--window", str(win)] + list(keys))


def train_acc(mhaviz, h, seed):
    """The held-out accuracy --train prints for the run (one decimal), or None."""
    out = subprocess.run([mhaviz, "--train", "cards", "-d", "16", "-H", str(h), "-s", str(seed),
                          "--steps", str(STEPS)], capture_output=True, text=True, timeout=120,
                         env=dict(os.environ, OPENBLAS_NUM_THREADS="1"))
    m = re.search(r"held-out accuracy ([\d.]+)% after", out.stdout)
    return m.group(1) if m else None


def main():
    mhaviz = os.path.abspath(sys.argv[1])
    seed = int(time.time()) % 9000 + 1
    print(f"seed {seed} (from the clock)", flush=True)
    xvfb = Xvfb()
    proc = wm = None
    try:
        with tempfile.TemporaryDirectory() as tmp:
            if shutil.which("openbox"):
                wm = start_wm(xvfb)  # retried: a server just started may refuse it
            view = os.path.join(tmp, "cards.view")
            with open(view, "w") as f:
                f.write("# mhaviz view 1\ntrain = cards\ntrain-d_model = 16\ntrain-h = 4\n"
                        f"train-seed = {seed}\ntrain-steps = {STEPS}\n")
            err_path = os.path.join(tmp, "stderr.txt")
            with open(err_path, "w") as err:
                proc = subprocess.Popen([mhaviz, "--state", view], cwd=tmp,
                                        env=xvfb.env(MHAVIZ_STATS="lines"),
                                        stdout=subprocess.DEVNULL, stderr=err)
            alive = lambda: proc.poll() is None  # noqa: E731
            win = window_of_pid(xvfb, proc.pid)
            if not CK.check(win, "window", "a window", "none"):
                return 1
            xvfb.run(["xdotool", "windowsize", str(win), "1600", "900"])
            xvfb.run(["xdotool", "mousemove", "0", "0"])  # no tooltip in the pictures
            got = wait_title(xvfb, win, TRAIN, lambda m: m.group(4) == "stopped", 120)
            if not CK.check(got and got.group(4) == "stopped" and int(got.group(2)) == STEPS,
                            "the view file's run of cards stops at its steps",
                            f"stopped at {STEPS}", got and got.group(0)):
                # what the window said instead, and no sweep on top of it (its wait would
                # run on to the test's timeout and say nothing more)
                print(f"the title instead: {title_of(xvfb, win)!r}", flush=True)
                return CK.finish("window_sweep_e2e")
            # the stopped run's last frame, with no job under way (the cost panel's forward)
            before = settled(err_path, lambda: xvfb.screenshot(os.path.join(tmp, "before.png")),
                             alive=alive)
            # H: the sweep
            key(xvfb, win, "h")
            first = wait_title(xvfb, win, SWEEP, lambda m: True, 20)
            CK.check(first is not None, "H: the sweep view's title", "sweep h cards ...",
                     title_of(xvfb, win))
            counts = set()
            deadline = time.monotonic() + 300
            end = None
            while time.monotonic() < deadline:
                m = SWEEP.search(title_of(xvfb, win))
                if m:
                    counts.add(int(m.group(2)))
                    if m.group(8) != "sweeping":
                        end = m
                        break
                time.sleep(0.1)
            print(f"runs done as seen in the title while it swept: {sorted(counts)}", flush=True)
            CK.check(len(counts) >= 3, "the title counts the runs as they finish",
                     ">= 3 distinct counts", sorted(counts))
            CK.check(end and end.group(8) == "done" and end.group(2) == "15" and
                     end.group(3) == "15", "the sweep ends: 15 of 15 runs done", "15 of 15, done",
                     end and end.group(0))
            CK.check(end and end.group(1) == str(STEPS), "at the run's budget", STEPS,
                     end and end.group(1))
            shot = os.path.join(tmp, "sweep.png")
            after = settled(err_path, lambda: xvfb.screenshot(shot), alive=alive)
            if os.environ.get("MHAVIZ_SHOTS"):
                shutil.copy(shot, os.path.join(os.environ["MHAVIZ_SHOTS"], "window-sweep.png"))
            right = slice(int(after.shape[1] * 0.55), int(after.shape[1] * 0.8))
            changed = diff_fraction(before[:, right], after[:, right])
            CK.check(changed > 0.02, "the plot in the panels' place", "> 2 % of the right part",
                     f"{100 * changed:.1f} %")
            # the newest run's heads, and its accuracy as --train prints it
            if end and end.group(5):
                h, sd, acc = int(end.group(5)), int(end.group(6)), end.group(7)
                CK.check((h, sd) == (16, seed + 2), "heads shown: the newest run",
                         (16, seed + 2), (h, sd))
                want = train_acc(mhaviz, h, sd)
                print(f"h={h} seed {sd}: window {acc} %, --train {want} %", flush=True)
                CK.check(want == acc, "its accuracy is --train's", want, acc)
            key(xvfb, win, "Left")
            left = wait_title(xvfb, win, SWEEP,
                              lambda m: m.group(6) is not None and int(m.group(6)) == seed + 1, 10)
            CK.check(left and left.group(5) == "16" and int(left.group(6)) == seed + 1,
                     "Left: the run before", f"h=16 seed {seed + 1}", left and left.group(0))
            if left and left.group(7):
                want = train_acc(mhaviz, 16, seed + 1)
                print(f"h=16 seed {seed + 1}: window {left.group(7)} %, --train {want} %",
                      flush=True)
                CK.check(want == left.group(7), "its accuracy is --train's", want, left.group(7))
            # Escape: the training run again
            key(xvfb, win, "Escape")
            back = wait_title(xvfb, win, TRAIN, lambda m: True, 10)
            CK.check(back and back.group(1) == "4" and int(back.group(2)) == STEPS,
                     "Escape: the training run (h = 4) again", f"h=4 step {STEPS}",
                     back and back.group(0))
            CK.check(proc.poll() is None, "alive", "running", f"exited {proc.poll()}")
    finally:
        if proc:
            stop_process(proc)
        if wm:
            stop_process(wm)
        xvfb.stop()
    return CK.finish("window_sweep_e2e")


if __name__ == "__main__":
    sys.exit(main())
