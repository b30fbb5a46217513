#!/usr/bin/python3
"""window_write_e2e.py MHAVIZ: a loaded model writes in the real window (W, S, `.`,
any key), under a private Xvfb, and writes what --generate writes.

Writes a random checkpoint "tiny" (gpt2_gen.py: 3 layers, 4 heads, n_embd 32,
n_positions 64, seed 2) into a temporary folder. The reference continuations are
`mhaviz --model tiny --text PROMPT --generate N` with the same sampler options
(stdout: the tokens' bytes). The window runs with MHAVIZ_VIEW_LOG (the view as its
settings after each frame that changed it: its text) and MHAVIZ_LAYOUT_LOG (the
header's buttons: "Write, R/s (W)" while it does not write, "Stop writing, R/s (W)"
while it does); every wait is for a state those lines show, never for a time.
  1. --model tiny --text PROMPT --sample-temperature 0.8 --top-k 20 --top-p 0.9 -s 3:
     S three times: the button says 10/s (1 → 2 → 4 → 10 tokens a second); W: it
     writes until write-length (20) and stops by itself; the text is then PROMPT
     followed by --generate 20's bytes with the same options.
  2. --state FILE (model = tiny, text = PROMPT, sample-seed = 7, write-length = 8,
     write-pace = 2000): W: the next-token panel marks the token drawn ("next mark
     note" in the layout) before the text grows; once it has grown, T: it stops (the button says
     Write again), the key does nothing else (theme = light), the text is PROMPT
     followed by a part of --generate 8 -s 7's bytes; then `.` until 8 tokens are
     written, one token a press: the text is PROMPT followed by all of them.
Exits 1 with "FAIL where: expected X, got Y" lines on any failure; 77 (skipped)
without Xvfb or xdotool."""
import codecs
import json
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
PROMPT = "The quick brown fox"
TIMEOUT = 60.0
TEXT_RE = re.compile(rb"\|(?:text|sample) = (.*?);h = \d+;d_model = ")
THEME_RE = re.compile(rb";theme = ([^;]*);")
BUTTON_RE = re.compile(r"^button \d+ ((?:Write|Stop writing), (\S+)/s \(W\))$")


def unescape(v):
    """A view file's text value (settings_write.c's stg_put_text) as bytes."""
    if len(v) >= 2 and v[:1] == b'"' and v[-1:] == b'"':
        v = v[1:-1]
    out, i = bytearray(), 0
    while i < len(v):
        if v[i:i + 1] == b"\\" and i + 1 < len(v):
            out += {b"n": b"\n", b"t": b"\t", b"r": b"\r"}.get(v[i + 1:i + 2], v[i + 1:i + 2])
            i += 2
        else:
            out += v[i:i + 1]
            i += 1
    return bytes(out)


def as_text(raw):
    """Bytes as the window's text holds them: UTF-8, each ill-formed part one U+FFFD, a
    character only begun at the end left out."""
    return codecs.getincrementaldecoder("utf-8")("replace").decode(raw, final=False).encode()


def generate(mhaviz, ckpt, n, opts):
    """--generate n's continuation (bytes, NUL bytes left out as the window's text
    leaves them)."""
    r = subprocess.run([mhaviz, "--model", ckpt, "--text", PROMPT, "--generate", str(n)] + opts,
                       capture_output=True, timeout=120)
    if r.returncode != 0 or not r.stdout.endswith(b"\n"):
        CK.fail(f"--generate {n} {' '.join(opts)}", "exit 0 and a line",
                (r.returncode, r.stderr[:200]))
        return b""
    return r.stdout[:-1].replace(b"\0", b"")


class App(WindowApp):
    """MHAVIZ_LAYOUT_LOG, MHAVIZ_VIEW_LOG and MHAVIZ_STATS=lines: the layout, the view's
    text and theme, and whether a job is under way, after each frame."""

    def __init__(self, xvfb, mhaviz, tmp, args):
        super().__init__(xvfb, mhaviz, tmp, args, MHAVIZ_LAYOUT_LOG="1", MHAVIZ_VIEW_LOG="1",
                         MHAVIZ_STATS="lines")
        self.offset = 0  # bytes of stderr read
        self.text = None  # the view log's last text
        self.theme = None
        self.button = None  # the write button's label in the last layout
        self.marked = False  # the last layout's next-token panel marks a token drawn

    def read(self, pred=lambda a: False):
        """Reads the lines written since, one at a time, and stops after the first that
        leaves pred(self) true (a state between two reads counts): True then."""
        self.log.flush()
        with open(self.log_path, "rb") as f:
            f.seek(self.offset)
            data = f.read()
        at = 0
        while True:
            nl = data.find(b"\n", at)
            if nl < 0:
                break
            self.take(data[at:nl])
            at = nl + 1
            if pred(self):
                break
        self.offset += at
        return pred(self)

    def take(self, line):
        """One line of the window's stderr into what it shows."""
        if line.startswith(b"view "):
            m = TEXT_RE.search(line)
            if m:
                self.text = unescape(m.group(1))
            m = THEME_RE.search(line)
            if m:
                self.theme = m.group(1).decode()
        elif line.startswith(b"layout "):
            self.frames += 1
            try:
                d = json.loads(line[7:].decode("utf-8", "replace"))
            except json.JSONDecodeError:
                return
            self.marked = any(it[1] == "next mark note" for it in d["items"])
            for it in d["items"]:
                m = BUTTON_RE.match(it[1]) if it[0] == "button" else None
                if m:
                    self.button = m.group(1)

    def wait(self, pred, what):
        """Reads until pred(self) holds after a line; fails with what otherwise."""
        deadline = time.monotonic() + TIMEOUT
        while time.monotonic() < deadline:
            if self.read(pred):
                return True
            if not self.alive():
                break
            time.sleep(0.02)
        CK.fail(what, "reached", f"text {self.text!r}, button {self.button!r}")
        return False

    def settle(self):
        """Waits for the window to be idle after its last frame, then reads."""
        wait_idle(self.log_path, after=-1, alive=self.alive)
        self.read()


def writing(app):
    return app.button is not None and app.button.startswith("Stop writing")


def idle_button(app):
    return app.button is not None and app.button.startswith("Write,")


def run_paced(xvfb, mhaviz, tmp, ckpt):
    """1: S three times, then W writes write-length tokens and stops by itself."""
    opts = ["--sample-temperature", "0.8", "--top-k", "20", "--top-p", "0.9", "-s", "3"]
    want = generate(mhaviz, ckpt, 20, opts)
    app = App(xvfb, mhaviz, tmp, ["--model", ckpt, "--text", PROMPT] + opts)
    try:
        if not CK.check(app.win, "1: window", "a window", None):
            return
        if not app.wait(lambda a: idle_button(a) and a.text == PROMPT.encode(),
                        "1: the model loaded, its Write button"):
            return
        CK.check(app.button == "Write, 1/s (W)", "1: the pace at start", "Write, 1/s (W)",
                 app.button)
        for rate in ("2", "4", "10"):
            app.key("s")
            app.wait(lambda a, r=rate: a.button == f"Write, {r}/s (W)", f"1: S to {rate}/s")
        app.key("w")
        app.wait(writing, "1: W: the button says it writes")
        app.wait(lambda a: idle_button(a) and a.text != PROMPT.encode(),
                 "1: it stops by itself after write-length tokens")
        app.settle()
        full = as_text(PROMPT.encode() + want)
        CK.check(app.text == full, "1: the text written (20 tokens)", full, app.text)
    finally:
        app.stop()


def run_stopped(xvfb, mhaviz, tmp, ckpt):
    """2: W at 2 s a token, stopped by T once a token is in; then `.` to 8 tokens."""
    want = generate(mhaviz, ckpt, 8, ["-s", "7"])
    full = as_text(PROMPT.encode() + want)
    view = os.path.join(tmp, "write.view")
    with open(view, "w") as f:
        f.write(f"model = {ckpt}\ntext = {PROMPT}\nsample-seed = 7\nwrite-length = 8\n"
                "write-pace = 2000\n")
    app = App(xvfb, mhaviz, tmp, ["--state", view])
    prompt = PROMPT.encode()
    try:
        if not CK.check(app.win, "2: window", "a window", None):
            return
        if not app.wait(lambda a: idle_button(a) and a.text == prompt, "2: loaded"):
            return
        app.key("w")
        app.wait(lambda a: writing(a) and a.marked and a.text == prompt,
                 "2: W: the token drawn is marked in the panel before it is written")
        if not app.wait(lambda a: writing(a) and a.text != prompt, "2: W writes a token"):
            return
        app.key("t")
        app.wait(idle_button, "2: T stops it")
        app.settle()
        part = app.text or b""
        CK.check(part.startswith(prompt) and len(part) > len(prompt) and full.startswith(part),
                 "2: the text when stopped", "a part of the continuation", part)
        CK.check(app.theme == "light", "2: T stopped writing and did nothing else", "light",
                 app.theme)
        for press in range(8):
            if app.text == full:
                break
            before = app.text
            app.key("period")
            if not app.wait(lambda a, b=before: a.text != b, f"2: `.` press {press + 1}"):
                return
            app.settle()
        CK.check(app.text == full, "2: `.` to 8 tokens", full, app.text)
        CK.check(idle_button(app), "2: `.` writes one, it does not start writing",
                 "Write, 0.5/s (W)", app.button)
    finally:
        app.stop()


def main(argv):
    if len(argv) != 2:
        print("usage: window_write_e2e.py MHAVIZ", file=sys.stderr)
        return 2
    for tool in ("Xvfb", "xdotool", "xprop"):
        if not shutil.which(tool):
            print(f"window_write_e2e: no {tool}: skipped", file=sys.stderr)
            return 77
    mhaviz = os.path.abspath(argv[1])
    with tempfile.TemporaryDirectory() as tmp:
        ckpt = os.path.join(tmp, "tiny")
        subprocess.run([sys.executable, os.path.join(HERE, "gpt2_gen.py"), ckpt, "--layers", "3",
                        "--heads", "4", "--embd", "32", "--positions", "64", "--seed", "2"],
                       check=True, capture_output=True, timeout=120)
        xvfb = Xvfb()
        try:
            run_paced(xvfb, mhaviz, tmp, ckpt)
            run_stopped(xvfb, mhaviz, tmp, ckpt)
        finally:
            xvfb.stop()
    return CK.finish("window_write_e2e")


if __name__ == "__main__":
    sys.exit(main(sys.argv))
