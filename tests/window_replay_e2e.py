"""window_replay_e2e.py: the replay of a training run in the real window, under a
private Xvfb with openbox, driven with xdotool, read from the window title and
screenshots:
- L on pair until it stops by itself; the heads area (the left quarter of the window)
  is pictured live;
- [ nine times: the title says "replay: step N of M" with N < M (M the live step), and
  the heads area is another picture than live;
- ] three times then [ three times: back at that moment, the heads area is the very
  same picture as before (pixel for pixel); End: live, the live picture again;
- a drag on the accuracy plot from its right to its left end scrubs: the title shows
  a moment near step 0.
MHAVIZ_TEST_SHOTS=DIR keeps a screenshot of the scrubbed moment there. Pictures are
compared for equality only; nothing is timed beyond generous waits."""
import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

from e2e_util import (SETTLE_TIMEOUT, Checker, Xvfb, geometry_of, settled, start_wm,
                      stop_process, title_of, wait_idle, window_of_pid)

CK = Checker(verbose=bool(os.environ.get("MHAVIZ_TEST_VERBOSE")))
STOPPED = re.compile(r"step (\d+) .*held-out ([\d.]+) % .*stopped")
REPLAY = re.compile(r"replay: step (\d+) of (\d+)")


def save_png(xvfb, win, folder, timeout=SETTLE_TIMEOUT):
    """Ctrl+S, then the names of the PNG files it added to folder (the window's cwd)."""
    before = set(os.listdir(folder))
    xvfb.run(["xdotool", "key", "--window", str(win), "ctrl+s"])
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        new = sorted(f for f in set(os.listdir(folder)) - before if f.endswith(".png"))
        if new:
            return new
        time.sleep(0.1)
    return []


def wait_title(xvfb, win, pattern, timeout, pred=lambda m: True):
    """The first title matching pattern (and pred of the match) within timeout s."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        m = pattern.search(title_of(xvfb, win))
        if m and pred(m):
            return m
        time.sleep(0.05)
    return None


def replay_keys(xvfb, win, k, count, timeout=SETTLE_TIMEOUT):
    """Presses k count times, each once the window has shown the one before: a replay
    title with another moment than before it (on a loaded machine keys queue up, and
    a title read after the first of them names a moment the rest move on from).
    Returns the last replay title's match."""
    m = REPLAY.search(title_of(xvfb, win))
    for _ in range(count):
        before = m.group(1) if m else None
        xvfb.run(["xdotool", "key", "--window", str(win), k])
        m = wait_title(xvfb, win, REPLAY, timeout, lambda t: t.group(1) != before) or m
    return m


def key(xvfb, win, k):
    xvfb.run(["xdotool", "key", "--window", str(win), k])


def heads(xvfb, geo, err_path, save=None):
    """A hash of the left quarter of the window below its controls: the heads, once
    the window has drawn its last frame with no job under way (MHAVIZ_STATS lines)."""
    shot = settled(err_path, lambda: xvfb.screenshot(save))
    x, y, w, h = geo
    part = shot[y + h // 8:y + h * 7 // 8, x + w // 50:x + w // 4]
    return hashlib.sha1(part.tobytes()).hexdigest()


def main():
    mhaviz = sys.argv[1]
    shots = os.environ.get("MHAVIZ_TEST_SHOTS")
    xvfb = Xvfb()
    proc = wm = None
    try:
        with tempfile.TemporaryDirectory() as tmp:
            if shutil.which("openbox"):
                wm = start_wm(xvfb)  # retried: a server just started may refuse it
            err_path = os.path.join(tmp, "mhaviz.stderr")
            err = open(err_path, "w")
            proc = subprocess.Popen([mhaviz], env=xvfb.env(MHAVIZ_STATS="lines"), cwd=tmp,
                                    stdout=subprocess.DEVNULL, stderr=err)
            win = window_of_pid(xvfb, proc.pid)
            if not CK.check(win, "window", "a window", "none"):
                return 1
            xvfb.run(["xdotool", "mousemove", "0", "0"])  # no tooltip in the pictures
            # framed and drawn, its first forward timed: then where it is on the screen
            CK.check(wait_idle(err_path, alive=lambda: proc.poll() is None), "the first frames",
                     "drawn, no job under way", "still busy")
            geo = geometry_of(xvfb, win)
            key(xvfb, win, "l")
            stop = wait_title(xvfb, win, STOPPED, 60)
            if not CK.check(stop, "L on pair: stops by itself", "stopped", title_of(xvfb, win)):
                return CK.finish("window_replay_e2e")
            live_step = int(stop.group(1))
            live = heads(xvfb, geo, err_path)
            # [ nine times: an earlier moment
            m = replay_keys(xvfb, win, "bracketleft", 9)
            CK.check(m, "[ : the title says the replay", "replay: step N of M",
                     title_of(xvfb, win))
            back_step = int(m.group(1)) if m else -1
            CK.check(m and int(m.group(2)) == live_step, "[ : 'of M' is the live step", live_step,
                     m and m.group(2))
            CK.check(m and back_step < live_step, "[ : an earlier step", f"< {live_step}",
                     back_step)
            back = heads(xvfb, geo, err_path,
                         os.path.join(shots, "replay-scrubbed.png") if shots else None)
            print(f"live at step {live_step}; 9 x [ shows step {back_step}", flush=True)
            CK.check(back != live, "[ : the heads are another picture than live", "different",
                     "the same")
            # ] three times, [ three times: the same moment, the same picture
            fwd = replay_keys(xvfb, win, "bracketright", 3)
            CK.check(fwd and int(fwd.group(1)) > back_step, "] : a later moment",
                     f"> {back_step}", fwd and fwd.group(1))
            m = replay_keys(xvfb, win, "bracketleft", 3)
            CK.check(m and int(m.group(1)) == back_step, "] ] ] [ [ [ : the same moment",
                     back_step, m and m.group(1))
            CK.check(heads(xvfb, geo, err_path) == back,
                     "the same moment: the very same picture of the heads", "equal", "different")
            # Ctrl+S on a moment: the file is named by the task and the moment's step
            saved = save_png(xvfb, win, tmp)
            want = f"mhaviz-h2-d32-pair-step{back_step}-"
            CK.check(len(saved) == 1 and saved[0].startswith(want) and saved[0].endswith(".png"),
                     "Ctrl+S on a moment: named by the task and its step", want + "<time>.png",
                     saved)
            # End: live again
            key(xvfb, win, "End")
            m = wait_title(xvfb, win, STOPPED, SETTLE_TIMEOUT)
            CK.check(m and int(m.group(1)) == live_step and "replay" not in title_of(xvfb, win),
                     "End: live", f"step {live_step}, stopped", title_of(xvfb, win))
            CK.check(heads(xvfb, geo, err_path) == live, "End: the live picture again", "equal",
                     "different")
            saved = save_png(xvfb, win, tmp)
            want = f"mhaviz-h2-d32-pair-step{live_step}-"
            CK.check(len(saved) == 1 and saved[0].startswith(want), "Ctrl+S live: the live step",
                     want + "<time>.png", saved)
            # a drag on the accuracy plot, right to left: scrubs back to the start
            x, y, w, h = geo
            px, py = x + w * 9 // 10, y + h * 32 // 100
            xvfb.run(["xdotool", "mousemove", str(px), str(py), "mousedown", "1"])
            for k in range(1, 11):
                xvfb.run(["xdotool", "mousemove", str(px - (px - x - w * 41 // 100) * k // 10),
                          str(py)])
                time.sleep(0.05)
            xvfb.run(["xdotool", "mouseup", "1"])  # the title follows the drag: wait for its end
            m = wait_title(xvfb, win, REPLAY, SETTLE_TIMEOUT, lambda t: int(t.group(1)) <= 2)
            CK.check(m and int(m.group(1)) <= 2, "a drag to the plot's left end: a moment near "
                     "step 0", "step <= 2", title_of(xvfb, win))
            CK.check(proc.poll() is None, "alive", "running", f"exited {proc.poll()}")
    finally:
        if proc:
            stop_process(proc)
        if wm:
            stop_process(wm)
        xvfb.stop()
    return CK.finish("window_replay_e2e")


if __name__ == "__main__":
    sys.exit(main())
