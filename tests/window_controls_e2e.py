#!/usr/bin/python3
"""window_controls_e2e.py MHAVIZ: the "More keys…" panel and training mode's buttons,
clicked in the real window under a private Xvfb at 1024x768 (no window manager).

The app prints its layout after each frame on stderr (MHAVIZ_LAYOUT_LOG: every
button with its label); the test clicks buttons by label and reads the labels back:
- "More keys…" opens the panel: buttons that each name a key, inside the window;
  "Numbers: off (V)" clicked closes the panel and turns the numbers on (the panel,
  opened again, says "Numbers: on (V)"); Escape closes the panel, and the window stays.
- L: training mode's header has Pause/Go on (L), Speed (S), One step (.), Back (Esc)
  and no Text, Mask or Scale button; clicking "Sweep of h (H)" starts the sweep of h
  (the title says "sweep h pair d_model=32 ... sweeping", the button now reads "Back to
  training (H)"), clicking that leaves it (the title is training's again, the button
  "Sweep of h (H)"); clicking the Speed button steps the speed (its
  label changes, the buttons after it stay where they were); Back (Esc) returns to
  the attention view (Text (Enter) again).
Screenshots go to $MHAVIZ_SHOTS when it is set. Exits 1 with "FAIL ..." lines."""
import os
import re
import shutil
import sys
import tempfile
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
from e2e_util import Checker, WindowApp, Xvfb, colour_count, title_of

CK = Checker()


class App(WindowApp):
    """MHAVIZ_LAYOUT_LOG: every button with its label, after each frame; MHAVIZ_STATS=lines:
    after each frame, whether a job is still under way."""

    def __init__(self, xvfb, mhaviz, tmp):
        super().__init__(xvfb, mhaviz, tmp, MHAVIZ_LAYOUT_LOG="1", MHAVIZ_STATS="lines")

    def wait_layout(self, pred, timeout=15.0):
        """The newest layout for which pred holds, once the window has settled after it
        (None if pred never holds)."""
        return super().wait_layout(pred, timeout, keep=pred)

    def click(self, rect):
        x, y, w, h = rect
        self.xvfb.run(["xdotool", "mousemove", "--window", self.win, str(x + w // 2),
                       str(y + h // 2), "click", "1"])
        self.xvfb.run(["xdotool", "mousemove", "--window", self.win, "2", str(y + h + 400)])


def buttons(d):
    """{label: (x, y, w, h)} of a layout's buttons."""
    out = {}
    for kind, name, x, y, w, h in d["items"]:
        m = re.match(r"button \d+ (.*)$", name)
        if kind == "button" and m:
            out[m.group(1)] = (x, y, w, h)
    return out


def has(label_re):
    return lambda d: any(re.search(label_re, b) for b in buttons(d))


def lacks(label_re):
    return lambda d: not any(re.search(label_re, b) for b in buttons(d))


def find(d, label_re):
    for b, r in buttons(d).items():
        if re.search(label_re, b):
            return b, r
    return None, None


def wait_title(app, pattern, timeout=30.0):
    """The window's title once it matches pattern (None if it never does)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and app.proc.poll() is None:
        t = title_of(app.xvfb, app.win)
        if re.search(pattern, t):
            return t
        time.sleep(0.1)
    return None


def sweep_button(app, d):
    """Training mode's "Sweep of h (H)" clicked: the sweep of h starts (its title and
    the button's label say so); "Back to training (H)" clicked: training mode again.
    The newest layout, or None."""
    name, rect = find(d, r"^Sweep of h \(H\)$")
    CK.check(name, "training mode", "a Sweep of h (H) button", sorted(buttons(d))[:12])
    if not name:
        return d
    app.click(rect)
    # the sweep's own state: its title names it and counts its runs as they go
    title = wait_title(app, r"sweep h pair d_model=32 .* of \d+ runs done .* sweeping")
    CK.check(title, "Sweep of h clicked", "the title of the sweep under way", title_of(
        app.xvfb, app.win))
    d2 = app.wait_layout(has(r"^Back to training \(H\)$"))
    CK.check(d2, "Sweep of h clicked", "the button now reads Back to training (H)", None)
    if not d2:
        return None
    app.click(find(d2, r"^Back to training \(H\)$")[1])
    d3 = app.wait_layout(has(r"^Sweep of h \(H\)$"))
    CK.check(d3, "Back to training clicked", "Sweep of h (H) again", None)
    title = wait_title(app, r"training pair h=\d+ d_model=32 ")
    CK.check(title, "Back to training clicked", "training's title again", title_of(
        app.xvfb, app.win))
    return d3


def shot(xvfb, name):
    dest = os.environ.get("MHAVIZ_SHOTS")
    path = os.path.join(dest if dest else tempfile.gettempdir(), name)
    img = xvfb.screenshot(save=path) if dest else None
    return img


def main():
    mhaviz = sys.argv[1]
    xvfb = Xvfb("1024x768x24")
    tmp = tempfile.mkdtemp(prefix="mhaviz-controls-")
    app = None
    try:
        app = App(xvfb, mhaviz, tmp)
        CK.check(app.win, "start", "a window", None)
        if not app.win:
            return CK.finish("window_controls_e2e")
        d = app.wait_layout(has(r"^More keys"))
        CK.check(d, "attention view", "a More keys… button", None)
        if not d:
            return CK.finish("window_controls_e2e")
        W, H = d["width"], d["height"]
        app.click(find(d, r"^More keys")[1])
        d = app.wait_layout(has(r"^Numbers: off \(V\)$"))
        CK.check(d, "More keys… clicked", "the panel with Numbers: off (V)", None)
        if d:
            shot(xvfb, "controls-panel-1024.png")
            labels = buttons(d)
            keyed = [b for b in labels if re.search(r"\((Shift\+|Ctrl\+)*[^ ()]+\)$", b)]
            CK.check(len(keyed) >= 30, "the panel", "30 or more buttons naming their key",
                     len(keyed))
            outside = [b for b, (x, y, w, h) in labels.items()
                       if x < 0 or y < 0 or x + w > W or y + h > H]
            CK.check(not outside, f"the panel at {W}x{H}", "every button inside", outside[:3])
            app.click(find(d, r"^Numbers: off \(V\)$")[1])
            d = app.wait_layout(lacks(r"\(V\)$"))
            CK.check(d, "Numbers clicked", "the panel closed", None)
            app.click(find(d, r"^More keys")[1])
            d = app.wait_layout(has(r"^Numbers: on \(V\)$"))
            CK.check(d, "the panel again", "Numbers: on (V): the click did what V does", None)
            app.key("Escape")
            d = app.wait_layout(lacks(r"\(V\)$"))
            CK.check(d, "Escape", "the panel closed", None)
        CK.check(app.proc.poll() is None, "Escape", "the window stays", app.proc.poll())

        # training mode's own buttons
        app.key("l")
        d = app.wait_layout(has(r"^(Pause|Go on) \(L\)$"))
        CK.check(d, "L", "a Pause/Go on (L) button", None)
        if d:
            labels = buttons(d)
            for want in (r"^Speed: \w+ \(S\)$", r"^One step \(\.\)$", r"^Back \(Esc\)$"):
                CK.check(find(d, want)[0], "training mode", want, sorted(labels)[:8])
            for gone in (r"^Text \(Enter\)$", r"^Mask:", r"^Scale:"):
                CK.check(not find(d, gone)[0], "training mode", f"no {gone} button",
                         find(d, gone)[0])
            d = sweep_button(app, d)
        if d:
            speed, rect = find(d, r"^Speed: ")
            after = find(d, r"^Back \(Esc\)$")[1]
            app.click(rect)
            d2 = app.wait_layout(lambda e: find(e, r"^Speed: ")[0] not in (None, speed))
            CK.check(d2, "the Speed button clicked", f"a label other than {speed!r}", speed)
            if d2:
                CK.check(find(d2, r"^Back \(Esc\)$")[1] == after, "the Speed button clicked",
                         f"Back (Esc) where it was {after}", find(d2, r"^Back \(Esc\)$")[1])
                img = shot(xvfb, "controls-training-1024.png")
                if img is not None:
                    CK.check(colour_count(img) > 50, "training screenshot", "a picture",
                             colour_count(img))
                app.click(find(d2, r"^Back \(Esc\)$")[1])
                d3 = app.wait_layout(has(r"^Text \(Enter\)$"))
                CK.check(d3, "Back (Esc) clicked", "the attention view's Text (Enter)", None)
        CK.check(app.proc.poll() is None, "the end", "the window alive", app.proc.poll())
    finally:
        if app:
            app.stop()
        xvfb.stop()
        shutil.rmtree(tmp, ignore_errors=True)
    return CK.finish("window_controls_e2e")


if __name__ == "__main__":
    sys.exit(main())
