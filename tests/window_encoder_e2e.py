#!/usr/bin/python3
"""window_encoder_e2e.py MHAVIZ: the real window with a loaded BERT model, under a private
Xvfb (window_model_e2e.py's App: MHAVIZ_LAYOUT_LOG's layout JSON, one line a frame).

Writes a random BERT folder (encoder_gen.py: 2 layers, 4 heads, hidden 32, the masked-LM
head, vocab.txt) and runs `mhaviz --model bert --text TEXT` (TEXT holds one [MASK]):
  (load)   title "bert layer 1 of 2 h=4 d_model=32 n=N" (N: TEXT's tokens with [CLS] and
           [SEP], tokjson_ref.py's count); the layout has the fill panel: 5 rows under
           one heading ("next 1 heading"), no pale bars
  2 x Esc  head 2 of layer 1 removed: the panel's rows have their pale bars ("next K bar
           every head on"): the prediction without the head beside the one with it
  Shift+x  every head back: no pale bar
  Ctrl+Q   exits 0 within 5 s
Exits 1 with "FAIL where: expected X, got Y" lines on any failure; 77 (skipped) without
Xvfb or xdotool. Each step waits for the frame it checks, never a fixed time."""
import json
import os
import shutil
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from e2e_util import Checker, Xvfb  # noqa: E402
from window_model_e2e import App, parse_title  # noqa: E402

CK = Checker(verbose=bool(os.environ.get("MHAVIZ_TEST_VERBOSE")))
TEXT = "The cat sat on the [MASK]. It was tired."


def items(d, prefix):
    return sorted(it[1] for it in d["items"] if it[1].startswith(prefix)) if d else []


def pale(d):
    return [n for n in items(d, "next ") if n.endswith("bar every head on")]


def main(argv):
    for tool in ("Xvfb", "xdotool", "xprop"):
        if not shutil.which(tool):
            print(f"window_encoder_e2e: no {tool}: skipped", file=sys.stderr)
            return 77
    mhaviz = os.path.abspath(argv[1])
    tmp = tempfile.mkdtemp(prefix="mhaviz-window-encoder-")
    xvfb = app = None
    try:
        import encoder_gen
        import tokjson_ref
        ckpt = os.path.join(tmp, "bert")
        _, tok = encoder_gen.write(ckpt, "bert", layers=2, hidden=32, heads=4, ff=48, mlm=True,
                                   seed=61)
        with open(tok) as f:
            n = len(tokjson_ref.Ref(json.load(f)).encode(TEXT.encode(), True))
        xvfb = Xvfb()
        app = App(xvfb, mhaviz, tmp, ["--model", ckpt, "--text", TEXT])
        if not CK.check(app.win is not None, "window", "a window titled mhaviz", None):
            return CK.finish("window_encoder_e2e")
        got = app.wait_title(lambda t: t[1] == 1)
        CK.check(got == ("bert", 1, 2, 4, 32, n), "load: title", ("bert", 1, 2, 4, 32, n),
                 got or repr(app.title()))
        d = app.last_layout(lambda d: "next 1 heading" in items(d, "next 1 heading"))
        CK.check(d is not None and d.get("next", {}).get("rows") == 5, "load: fill panel",
                 "5 rows", d and d.get("next"))
        CK.check(items(d, "next ") and "next 2 heading" not in items(d, "next 2"),
                 "load: one heading", "next 1 heading only", items(d, "next"))
        CK.check(d is not None and not pale(d), "load: no pale bar", [], pale(d))
        for k in ("2", "x", "Escape"):
            app.key(k)
        d = app.last_layout(lambda d: d.get("focus") == 0 and len(pale(d)) >= 1)
        CK.check(d is not None and d.get("next", {}).get("rows") == 5 and len(pale(d)) >= 1,
                 "X on head 2: pale bars (every head on)", ">= 1 of 5 rows", pale(d))
        app.key("shift+x")
        d = app.last_layout(lambda d: "next" in d and not pale(d))
        CK.check(d is not None and not pale(d), "Shift+X: no pale bar", [], pale(d))
        CK.check(parse_title(app.title()) is not None, "title still parses", "bert layer …",
                 app.title())
        app.key("ctrl+q")
        try:
            rc = app.proc.wait(5)
        except subprocess.TimeoutExpired:
            rc = None
        CK.check(rc == 0, "Ctrl+Q", "exit 0 within 5 s", rc)
        return CK.finish("window_encoder_e2e")
    finally:
        if app:
            app.stop()
        if xvfb:
            xvfb.stop()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
