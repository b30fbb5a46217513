#!/usr/bin/python3
"""window_model_e2e.py MHAVIZ: the real window with a loaded GPT-2 model, under a
private Xvfb.

Writes a random checkpoint folder "tiny" (gpt2_gen.py: 3 layers, 4 heads, n_embd 32,
n_positions 64, seed 1) into a temporary folder and runs `mhaviz --model tiny --text
TEXT` with MHAVIZ_LAYOUT_LOG set (the window prints each frame's layout as JSON on
stderr). The model loads on the jobs layer; then the title is
"mhaviz — tiny layer L of 3 h=H d_model=32 n=N" (N: bpe_ref's count of TEXT's tokens).
Keys pressed with `xdotool key --window WIN`, and what each must do:
  (load)      title layer 1 of 3, h=4, d_model=32, n=N; the layout has the next-token
              panel ("next" rows 5) and no overview; MHAVIZ_STATS counts at most 2
              forwards for the picture (the checkpoint's, the random model's drawn
              while it loads) and 1 + 4 + 1 for the "How alike" panel's measure,
              its own job once the picture is shown (the second run reaches the
              text, one forward for each of the 4 heads removed, one back): 8
  y y y       layer 2, 3, then 1 again (wraps)
  Shift+y     layer 3 (wraps back); Shift+y: layer 2; y: 3; y: 1
  Down / Up   h=2 (the next divisor of 32 below 4), then 4; Up h=8, Down h=4
  o / o       the layout has the overview: 3 x 4 cells "L1 H1" .. "L3 H4" and its
              "overview" block (layers 3, heads 4); o again: gone
  1           head 1 focused (the layout's focus 1); the window stays up
  Escape      focus gone
  Ctrl+Q      exits 0 within 5 s
The window must stay up throughout. Exits 1 with "FAIL where: expected X, got Y"
lines on any failure; 77 (skipped) without Xvfb or xdotool."""
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
from e2e_util import Checker, WindowApp, Xvfb, wait_idle  # noqa: E402

CK = Checker(verbose=bool(os.environ.get("MHAVIZ_TEST_VERBOSE")))
TEXT = "The quick brown fox jumps over the lazy dog. The dog sleeps; the fox runs away."
FORWARDS_RE = re.compile(r"^stats .* forwards=(\d+)(?: |$)")
TITLE_RE = re.compile(r"(\S+) layer (\d+) of (\d+) h=(\d+) d_model=(\d+) n=(\d+)")


def parse_title(t):
    """(name, layer, layers, h, d_model, n) and whether it is still loading, or None."""
    m = TITLE_RE.search(t)
    if not m:
        return None
    return (m.group(1), *(int(m.group(i)) for i in range(2, 7))), "loading" in t


class App(WindowApp):
    """MHAVIZ_LAYOUT_LOG and MHAVIZ_STATS=lines: a layout line a frame, and after it the
    forwards run (the status line as ever)."""

    def __init__(self, xvfb, mhaviz, tmp, args):
        super().__init__(xvfb, mhaviz, tmp, args, MHAVIZ_LAYOUT_LOG="1", MHAVIZ_STATS="lines")

    def last_layout(self, pred, timeout=10.0):
        """The latest layout after one for which pred holds, or None."""
        return self.wait_layout(pred, timeout)

    def wait_title(self, pred, timeout=20.0):
        """The parsed title once pred(parsed) holds (not loading), else the last seen."""
        deadline, last = time.monotonic() + timeout, None
        while time.monotonic() < deadline and self.alive():
            got = parse_title(self.title())
            if got:
                last = got[0]
                if not got[1] and pred(last):
                    return last
            time.sleep(0.05)
        return last


def names(d, kind):
    return {it[1] for it in d["items"] if it[0] == kind}


def main(argv):
    if len(argv) != 2:
        print("usage: window_model_e2e.py MHAVIZ", file=sys.stderr)
        return 2
    for tool in ("Xvfb", "xdotool", "xprop"):
        if not shutil.which(tool):
            print(f"window_model_e2e: no {tool}: skipped", file=sys.stderr)
            return 77
    mhaviz = os.path.abspath(argv[1])
    tmp = tempfile.mkdtemp(prefix="mhaviz-window-model-")
    xvfb = app = None
    try:
        ckpt = os.path.join(tmp, "tiny")
        subprocess.run([sys.executable, os.path.join(HERE, "gpt2_gen.py"), ckpt, "--layers", "3",
                        "--heads", "4", "--embd", "32", "--positions", "64", "--merges", "200",
                        "--seed", "1"], check=True, timeout=120, stdout=subprocess.DEVNULL)
        try:
            import bpe_ref
            n_want = len(bpe_ref.load(os.path.join(ckpt, "vocab.json"),
                                      os.path.join(ckpt, "merges.txt")).encode(TEXT))
        except ImportError:  # no regex module: any n the model holds
            n_want = None
        xvfb = Xvfb()
        app = App(xvfb, mhaviz, tmp, ["--model", ckpt, "--text", TEXT])
        if not CK.check(app.win is not None, "window", "a window titled mhaviz", None):
            return CK.finish("window_model_e2e")

        def title_is(where, layer, h):
            got = app.wait_title(lambda t: t[1] == layer and t[3] == h)
            want = ("tiny", layer, 3, h, 32, n_want if n_want else (got[5] if got else 0))
            CK.check(got == want, f"{where}: title", want, got or repr(app.title()))
            CK.check(app.alive(), f"{where}: window up", "alive", app.proc.poll())

        title_is("load", 1, 4)
        # the start-up's forwards: the checkpoint's, and the random model's under it
        # (drawn while the checkpoint loads); no forward of the random model is timed
        # for the cost panel meanwhile (3 more before: 6 in all)
        idle = wait_idle(app.log_path, alive=app.alive)
        with open(app.log_path) as f:
            said = [m.group(1) for m in map(FORWARDS_RE.search, f) if m]
        CK.check(idle and said and int(said[-1]) <= 2 + 1 + 4 + 1,
                 "load: forwards from start to picture and its heads measured",
                 "<= 8 (MHAVIZ_STATS)", said[-1] if said else None)
        got = parse_title(app.title())
        if got and n_want is None:
            CK.check(1 <= got[0][5] <= 64, "load: n", "1..64", got[0][5])
        d = app.last_layout(lambda d: "next" in d)
        CK.check(d is not None and d.get("next", {}).get("rows") == 5, "load: next-token panel",
                 "5 rows", d and d.get("next"))
        CK.check(d is not None and "overview" not in d, "load: no overview", "none",
                 d and d.get("overview"))

        for k, layer in (("y", 2), ("y", 3), ("y", 1), ("shift+y", 3), ("shift+y", 2), ("y", 3),
                         ("y", 1)):
            app.key(k)
            title_is(f"{k} to layer {layer}", layer, 4)
        for k, h in (("Down", 2), ("Up", 4), ("Up", 8), ("Down", 4)):
            app.key(k)
            title_is(f"{k} to h={h}", 1, h)

        app.key("o")
        d = app.last_layout(lambda d: "overview" in d)
        cells = names(d, "ovcell") if d else set()
        want = {f"L{l} H{h}" for l in range(1, 4) for h in range(1, 5)}
        CK.check(cells == want, "o: overview cells", sorted(want), sorted(cells))
        CK.check(d is not None and d["overview"]["layers"] == 3 and d["overview"]["heads"] == 4,
                 "o: overview block", "layers 3, heads 4", d and d.get("overview"))
        app.key("o")
        d = app.last_layout(lambda d: "overview" not in d)
        CK.check(d is not None and not names(d, "ovcell"), "o again: overview gone", "no cells",
                 d and sorted(names(d, "ovcell"))[:3])
        title_is("after o o", 1, 4)

        app.key("1")
        d = app.last_layout(lambda d: d.get("focus") == 1, timeout=5)
        CK.check(app.alive(), "1: window up after focusing head 1", "alive", app.proc.poll())
        CK.check(d is not None and d.get("focus") == 1, "1: head 1 focused", 1,
                 d and d.get("focus"))
        if app.alive():
            app.key("Escape")
            d = app.last_layout(lambda d: d.get("focus") == 0, timeout=5)
            CK.check(d is not None and d.get("focus") == 0, "Escape: focus gone", 0,
                     d and d.get("focus"))
            app.key("ctrl+q")
            try:
                rc = app.proc.wait(5)
            except subprocess.TimeoutExpired:
                rc = None
            CK.check(rc == 0, "Ctrl+Q", "exit 0 within 5 s", rc)
        return CK.finish("window_model_e2e")
    finally:
        if app:
            app.stop()
        if xvfb:
            xvfb.stop()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
