#!/usr/bin/env python3
"""model_once_check.py: `--model DIR` computes once (issue 36). With MHAVIZ_STATS=1 a
headless run prints "stats forwards=N" at exit: the forwards of the built-in model
and of the loaded model the process ran. A start-up with a checkpoint runs the
checkpoint's forward once from start to figure or dump, and no random model beside
it (the random model under a checkpoint is never drawn in a figure or a dump).

The count is shown to count first: removing a head runs a second pass (the
distribution with every head on is kept beside the one without it), so --ablate
must say 2 or more; and the built-in model's figure and dump say exactly 1.

A figure with the "How alike" panel (the default, every panel) also measures each
of the shown layer's h heads on the next token: h forwards with one head removed and
one back to the model as shown, 1 + h + 1 in all; a figure without the panel (--panel
next), re-split (-H, not measured) and a dump stay at 1.

Usage: model_once_check.py MHAVIZ"""
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gpt2_gen  # noqa: E402
from e2e_util import Checker  # noqa: E402

CK = Checker()
STATS = re.compile(r"^stats forwards=(\d+)$", re.M)


def forwards(mhaviz, args, cwd):
    """Runs mhaviz with MHAVIZ_STATS=1; returns (exit status, forwards or None, stderr)."""
    env = dict(os.environ, MHAVIZ_STATS="1")
    p = subprocess.run([mhaviz] + args, cwd=cwd, env=env, capture_output=True, text=True,
                       timeout=120)
    found = STATS.findall(p.stderr)
    return p.returncode, int(found[-1]) if len(found) == 1 else None, p.stderr


def main(argv):
    mhaviz = os.path.abspath(argv[0])
    with tempfile.TemporaryDirectory() as tmp:
        ck = os.path.join(tmp, "ck")
        gpt2_gen.gen(ck, n_layer=2, n_head=3, n_embd=48, n_positions=64)
        cases = [  # (args, what the count must be: an int, or ">=2")
            (["--model", ck, "--export", "m.png"], 1 + 3 + 1),
            (["--model", ck, "--export", "m.svg", "--panel", "next"], 1),
            (["--model", ck, "--text", "the fox and the dog", "-H", "4", "--export", "m4.png"], 1),
            (["--model", ck, "--dump", "md"], 1),
            (["--model", ck, "--export", "ma.png", "--ablate", "1:2"], ">=2"),
            (["--export", "b.png"], 1),
            (["--dump", "bd"], 1),
        ]
        for args, want in cases:
            rc, got, err = forwards(mhaviz, args, tmp)
            where = " ".join(a if a != ck else "CK" for a in args)
            if not CK.check(rc == 0 and got is not None, f"{where}: runs and says its forwards",
                            "exit 0 and one 'stats forwards=N' line", f"exit {rc}, {err[-300:]!r}"):
                continue
            ok = got >= 2 if want == ">=2" else got == want
            CK.check(ok, f"{where}: forwards", want, got)
    return CK.finish("model_once_check")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
