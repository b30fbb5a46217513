#!/usr/bin/env python3
"""window_lesson_e2e.py MHAVIZ: a lesson in the real window under a private Xvfb.

The window runs with MHAVIZ_VIEW_LOG=1: after each frame whose view changed it
prints "view step=K/N recorded=R recording=0|1 field=0|1 | name = value; ..." on stderr (every setting,
as a view file writes them). Checked:
  - `--lesson FILE`: step 1 shows what the file says (every setting the file set
    up to that step, cumulated in Python from the file's text);
  - Space steps forward and Backspace back through every step, each matching;
  - PgDn/PgUp and Right/Left too, End and Home, 3 then Enter;
  - exploring (Up changes h, M the mask) then F5: the step as written again;
  - Escape leaves the lesson and keeps the view;
  - Ctrl+R, A, a caption typed, Enter: the file in --export-dir holds the step;
    two steps recorded, Ctrl+R stops; a new window on the recorded file shows
    exactly the two views that were recorded (every setting).
MHAVIZ_TEST_KEEP=DIR keeps a screenshot of the lesson in the window there."""
import os
import re
import shutil
import sys
import tempfile
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
from e2e_util import Checker, WindowApp, Xvfb

CK = Checker()
VIEW = re.compile(r"^view step=(\d+)/(\d+) recorded=(\d+) recording=(\d) field=(\d) \|(.*)$")

LESSON = """title = Window lesson
step = One head
h = 1
seed = 3
| All of d_model in one head.

step = Two heads, causal
h = 2
mask = causal
| A token sees itself and the ones before.

step = Eight heads
h = 8
focus = 3
| Head 3 focused.

step = Back to no mask
mask = none
focus = none
d_model = 32
| Thirty-two wide.
"""


def expected_views(text):
    """The settings each step sets, cumulated: what its view must hold."""
    views, cur = [], None
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#") or line.startswith("|"):
            continue
        name, _, value = (p.strip() for p in line.partition("="))
        if name == "title":
            continue
        if name == "step":
            cur = dict(views[-1]) if views else {}
            views.append(cur)
            continue
        if name != "do":
            cur[name] = value
    return views


class App(WindowApp):
    """MHAVIZ_VIEW_LOG: the view the window shows, after each frame that changes it."""

    def __init__(self, xvfb, mhaviz, tmp, args, name):
        super().__init__(xvfb, mhaviz, tmp, args, log=name + ".log", win_timeout=60.0,
                         MHAVIZ_VIEW_LOG="1")
        self.taken = 0  # views taken by wait_view

    def views(self):
        self.log.flush()
        with open(self.log_path) as f:
            out = []
            for l in f.read().splitlines():
                m = VIEW.match(l)
                if m:
                    settings = dict(p.strip().partition(" = ")[::2] for p in m.group(6).split(";")
                                    if " = " in p)
                    out.append((int(m.group(1)), int(m.group(2)), int(m.group(3)), settings,
                                int(m.group(4)), int(m.group(5))))
            return out

    def wait_view(self, pred, timeout=30.0):
        """The first view logged after the last one taken that satisfies pred."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            v = self.views()
            for i in range(self.taken, len(v)):
                if pred(v[i]):
                    self.taken = i + 1
                    return v[i]
            time.sleep(0.05)
        return None

    def last(self):
        v = self.views()
        return v[-1] if v else None

    def keys(self, *keys):
        self.xvfb.run(["xdotool", "key", "--window", self.win, "--delay", "60"] + list(keys))

    def type(self, text):
        self.xvfb.run(["xdotool", "type", "--window", self.win, "--delay", "30", text])


def matches(view, want):
    return all(view.get(k) == v for k, v in want.items())


def check_step(app, k, n, want, where):
    v = app.wait_view(lambda v: v[0] == k and matches(v[3], want))
    if not CK.check(v is not None, f"{where}: step {k} of {n} as the file says", want,
                    app.last()):
        return None
    CK.check(v[1] == n, f"{where}: N", n, v[1])
    return v


def run(xvfb, mhaviz, tmp):
    path = os.path.join(tmp, "w.lesson")
    with open(path, "w") as f:
        f.write(LESSON)
    want = expected_views(LESSON)
    n = len(want)
    rec_dir = os.path.join(tmp, "rec")
    os.mkdir(rec_dir)
    app = App(xvfb, mhaviz, tmp, ["--lesson", path, "--export-dir", rec_dir], "present")
    try:
        if not CK.check(app.win is not None, "window", "a window", None):
            return
        check_step(app, 1, n, want[0], "opened")
        for k in range(2, n + 1):
            app.keys("space")
            check_step(app, k, n, want[k - 1], "Space")
        keep = os.environ.get("MHAVIZ_TEST_KEEP")
        if keep:
            time.sleep(0.5)
            xvfb.screenshot(save=os.path.join(keep, "lesson-window.png"))
        for k in range(n - 1, 0, -1):
            app.keys("BackSpace")
            check_step(app, k, n, want[k - 1], "Backspace")
        app.keys("Next")
        check_step(app, 2, n, want[1], "PgDn")
        app.keys("Right")
        check_step(app, 3, n, want[2], "Right")
        app.keys("Prior")
        check_step(app, 2, n, want[1], "PgUp")
        app.keys("Left")
        check_step(app, 1, n, want[0], "Left")
        app.keys("End")
        check_step(app, n, n, want[n - 1], "End")
        app.keys("Home")
        check_step(app, 1, n, want[0], "Home")
        app.keys("3", "Return")
        check_step(app, 3, n, want[2], "3 Enter")
        # exploring, then F5
        app.keys("Up")
        v = app.wait_view(lambda v: v[0] == 3 and v[3].get("h") != want[2]["h"])
        CK.check(v is not None, "Up during a lesson changes h", "h != 8", app.last())
        app.keys("m")
        v = app.wait_view(lambda v: v[0] == 3 and v[3].get("mask") == "none")
        CK.check(v is not None, "M during a lesson changes the mask", "mask = none", app.last())
        app.keys("F5")
        check_step(app, 3, n, want[2], "F5 after exploring")
        # Escape leaves, the view stays
        app.keys("Escape")
        v = app.wait_view(lambda v: v[0] == 0)
        if CK.check(v is not None, "Escape leaves the lesson", "step=0/0", app.last()):
            CK.check(matches(v[3], want[2]), "Escape keeps the view", want[2], v[3])
        # recording two steps
        # each key waits for the state it needs (the log says it), never for a time
        app.keys("ctrl+r")
        v = app.wait_view(lambda v: v[4] == 1)
        CK.check(v is not None, "Ctrl+R starts recording", "recording=1", app.last())
        recorded = []
        for i, caption in enumerate(["First recorded | the line of W_i", "Second recorded"]):
            if i == 1:
                app.keys("Down")
                v = app.wait_view(lambda v: v[4] == 1 and v[5] == 0
                                  and v[3].get("h") != recorded[0]["h"])
                CK.check(v is not None, "Down while recording changes h", "h changed", app.last())
            recorded.append((v or app.last())[3])
            app.keys("a")
            f = app.wait_view(lambda v: v[5] == 1)
            CK.check(f is not None, "A opens the caption field", "field=1", app.last())
            app.type(caption)
            app.keys("Return")
            v = app.wait_view(lambda v, i=i: v[2] == i + 1)
            CK.check(v is not None, f"A, caption, Enter: {i + 1} step(s) recorded", i + 1,
                     app.last())
        app.keys("ctrl+r")
        v = app.wait_view(lambda v: v[4] == 0)
        CK.check(v is not None, "Ctrl+R again stops recording", "recording=0", app.last())
    finally:
        app.stop()
    files = [f for f in os.listdir(rec_dir) if f.endswith(".lesson")]
    if not CK.check(len(files) == 1, "one recorded lesson in --export-dir", 1, files):
        return
    rec = os.path.join(rec_dir, files[0])
    text = open(rec).read()
    CK.check("step = First recorded" in text and "| the line of W_i" in text,
             "the recorded file holds the caption", "step = First recorded", text[:300])
    again = App(xvfb, mhaviz, tmp, ["--lesson", rec], "reopen")
    try:
        if not CK.check(again.win is not None, "window on the recording", "a window", None):
            return
        for k, view in enumerate(recorded, 1):
            if k > 1:
                again.keys("space")
            v = again.wait_view(lambda v, k=k: v[0] == k)
            if CK.check(v is not None, f"recorded step {k} opens", k, again.last()):
                diff = {key: (view.get(key), v[3].get(key)) for key in set(view) | set(v[3])
                        if view.get(key) != v[3].get(key)}
                CK.check(not diff, f"recorded step {k}: the same view (every setting)", "{}",
                         diff)
    finally:
        again.stop()


def main():
    mhaviz = os.path.abspath(sys.argv[1])
    for tool in ("Xvfb", "xdotool", "xprop"):
        if not shutil.which(tool):
            print(f"window_lesson_e2e: {tool} missing", file=sys.stderr)
            return 1
    xvfb = Xvfb()
    try:
        with tempfile.TemporaryDirectory() as tmp:
            run(xvfb, mhaviz, tmp)
    finally:
        xvfb.stop()
    return CK.finish("window_lesson_e2e")


if __name__ == "__main__":
    sys.exit(main())
