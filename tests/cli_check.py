#!/usr/bin/python3
"""cli_check.py [--long-options] MHAVIZ: the mhaviz command line.

Every bad value must exit 2 with exactly one line on stderr, starting "mhaviz: "
and naming the option, nothing on stdout, and nothing written: each case runs in
an empty temporary folder with `--dump out`, and the folder must stay empty.
Good cases: --help, --version, --list-samples, --dump into nested missing folders,
the edges of --temperature, --pad, --ablate and --weights; --dump onto an existing
regular file exits 1 and leaves the file alone; --pad figures label [PAD].

With --long-options: the same rules for long options given without their value
or with a value they do not take (--mask at the end, --help=1, ...).
Exits 1 with "expected X, got Y" lines on any failure."""
import os
import re
import subprocess
import sys
import tempfile

FAILURES = []


def fail(where, expected, got):
    FAILURES.append(where)
    print(f"FAIL {where}: expected {expected}, got {got}", file=sys.stderr)


def run(mhaviz, args, cwd):
    return subprocess.run([mhaviz] + args, cwd=cwd, capture_output=True, timeout=60)


SIX_HUNDRED = " ".join(f"w{i}" for i in range(600))
FIVE_TWELVE = " ".join(f"w{i}" for i in range(512))

# (args, names: the message must contain one of these)
BAD = [
    (["-H", "0"], ["--heads", "-H"]),
    (["-H", "5"], ["--heads", "-H"]),            # does not divide the default d_model 64
    (["-H", "65"], ["--heads", "-H"]),           # more heads than d_model
    (["-H", "abc"], ["--heads", "-H"]),
    (["-H", "4x"], ["--heads", "-H"]),
    (["-H", "-4"], ["--heads", "-H"]),
    (["-H", " 4"], ["--heads", "-H"]),
    (["-H", "+4"], ["--heads", "-H"]),
    (["-H", ""], ["--heads", "-H"]),
    (["-H", "99999999999999999999"], ["--heads", "-H"]),
    (["--heads=3"], ["--heads", "-H"]),          # 3 does not divide 64
    (["-d", "0"], ["--d-model", "-d"]),
    (["-d", "4097"], ["--d-model", "-d"]),
    (["-d", "6", "-H", "4"], ["--heads", "-H", "--d-model", "-d"]),
    (["-d", "1e3"], ["--d-model", "-d"]),
    (["-s", "0"], ["--seed", "-s"]),
    (["-s", "-1"], ["--seed", "-s"]),
    (["-s", "1.5"], ["--seed", "-s"]),
    (["-s", "99999999999999999999"], ["--seed", "-s"]),
    (["--sample", "0"], ["--sample"]),
    (["--sample", "99"], ["--sample"]),
    (["--sample", "x"], ["--sample"]),
    (["--mask", "foo"], ["--mask"]),
    (["--mask", "Causal"], ["--mask"]),
    (["--text", ""], ["--text"]),
    (["--text", "   "], ["--text"]),
    (["--text", " \t\n "], ["--text"]),
    (["--text", SIX_HUNDRED], ["--text"]),
    (["--text", "hello", "--sample", "2"], ["--text", "--sample"]),
    (["--bogus"], ["--bogus"]),
    (["-x"], ["-x"]),
    (["-H"], ["-H", "--heads"]),                 # missing value at the end
    (["extra"], ["extra"]),                      # a positional argument
    (["-H", "4", "extra"], ["extra"]),
    (["--export", "x.txt"], ["--export"]),
    (["--export", "x"], ["--export"]),
    (["--size", "100x100"], ["--size"]),
    (["--size", "800"], ["--size"]),
    (["--size", "800x9000"], ["--size"]),
    (["--scale", "5"], ["--scale"]),
    (["--scale", "0"], ["--scale"]),
    (["--panel", "head:9"], ["--panel"]),        # default h is 4
    (["--panel", "head:0"], ["--panel"]),
    (["--panel", "foo"], ["--panel"]),
    (["-H", "2", "--panel", "head:3"], ["--panel"]),
    (["--theme", "pink"], ["--theme"]),
    (["--colormap", "nope"], ["--colormap"]),
    (["--background", "x"], ["--background"]),
    (["--font", ""], ["--font"]),
    (["--pad", "5", "--sample", "2"], ["--pad"]),   # 12 tokens: pad below n
    (["--pad", "11", "--sample", "2"], ["--pad"]),
    (["--pad", "513"], ["--pad"]),
    (["--pad", "0"], ["--pad"]),
    (["--pad", "-20"], ["--pad"]),
    (["--pad", "20x"], ["--pad"]),
    (["--temperature", "0"], ["--temperature"]),
    (["--temperature", "0.04"], ["--temperature"]),
    (["--temperature", "0.0499"], ["--temperature"]),
    (["--temperature", "20.5"], ["--temperature"]),
    (["--temperature", "20.000001"], ["--temperature"]),
    (["--temperature", "nan"], ["--temperature"]),
    (["--temperature", "inf"], ["--temperature"]),
    (["--temperature", "1e"], ["--temperature"]),
    (["--temperature", "1e0"], ["--temperature"]),
    (["--temperature", "-1"], ["--temperature"]),
    (["--temperature", "+1"], ["--temperature"]),
    (["--temperature", " 1"], ["--temperature"]),
    (["--temperature", "1 "], ["--temperature"]),
    (["--temperature", ""], ["--temperature"]),
    (["--temperature", "."], ["--temperature"]),
    (["--temperature", "1."], ["--temperature"]),
    (["--temperature", "1.2.3"], ["--temperature"]),
    (["--temperature", "0x1p1"], ["--temperature"]),
    (["--temperature", "1,5"], ["--temperature"]),
    (["--ablate", "0"], ["--ablate"]),
    (["--ablate", "5"], ["--ablate"]),              # h + 1 with the default h = 4
    (["-H", "2", "--ablate", "3"], ["--ablate"]),
    (["--ablate", "1,,2"], ["--ablate"]),
    (["--ablate", "1,1"], ["--ablate"]),
    (["--ablate", "2,3,2"], ["--ablate"]),
    (["--ablate", ""], ["--ablate"]),
    (["--ablate", ",1"], ["--ablate"]),
    (["--ablate", "1,"], ["--ablate"]),
    (["--ablate", "a"], ["--ablate"]),
    (["--ablate", "1 2"], ["--ablate"]),
    (["--ablate", "99999999999999999999"], ["--ablate"]),
    (["--weights", "foo"], ["--weights"]),
    (["--weights", "Patterns"], ["--weights"]),
    (["--weights", ""], ["--weights"]),
    # beyond the 1.5 GiB bound on the model's tensors (2 h n^2 floats of attention)
    (["-d", "4096", "-H", "4096", "--text", FIVE_TWELVE], ["1.5 GiB"]),
    (["-d", "4096", "-H", "4096", "--pad", "512", "--sample", "2"], ["1.5 GiB"]),
]

# long options without their value, or with a value they do not take
LONG = [
    (["--mask"], ["--mask"]),
    (["--sample"], ["--sample"]),
    (["--seed"], ["--seed", "-s"]),
    (["--heads"], ["--heads", "-H"]),
    (["--text"], ["--text", "-t"]),
    (["--colormap"], ["--colormap"]),
    (["--no-scale=1"], ["--no-scale"]),
    (["--list-samples=x"], ["--list-samples"]),
    (["--help=1"], ["--help"]),
    (["--pad"], ["--pad"]),
    (["--temperature"], ["--temperature"]),
    (["--ablate"], ["--ablate"]),
    (["--weights"], ["--weights"]),
]


# Given twice, or doing nothing with the others: run as they are (no --dump out in
# front), each in an empty folder that must stay empty. The message names the option
# and says which of the two it is.
ALONE = [
    (["--export", "x.png", "--export", "y.png"], ["--export: given twice ('x.png', then 'y.png')"]),
    (["--dump", "a", "--dump", "b"], ["--dump: given twice ('a', then 'b')"]),
    (["--compare", "h=1", "--compare", "h=2"], ["--compare: given twice ('h=1', then 'h=2')"]),
    (["-H", "2", "-H", "4", "--export", "x.png"], ["--heads: given twice ('2', then '4')"]),
    (["--ablate", "1", "--ablate", "2", "--dump", "a"], ["--ablate: given twice"]),
    (["--values", "--values", "--export", "x.png"], ["--values: given twice"]),
    (["--train", "pair", "--page", "2"], ["--page: does nothing with --train"]),
    (["--dump", "a", "--page", "2"], ["--page: does nothing with --dump"]),
    (["--dump", "a", "--panel", "all"], ["--panel: does nothing with --dump"]),
    (["--panel", "equation"], ["--panel: does nothing in the window"]),
    (["--dump", "a", "--size", "800x600"], ["--size: does nothing with --dump"]),
    (["--dump", "a", "--scale", "2"], ["--scale: does nothing with --dump"]),
    (["--dump", "a", "--background", "transparent"], ["--background: does nothing with --dump"]),
    (["--dump", "a", "--values"], ["--values: does nothing with --dump"]),
    (["--dump", "a", "--contrast", "row"], ["--contrast: does nothing with --dump"]),
    (["--dump", "a", "--diff"], ["--diff: does nothing with --dump"]),
    (["--dump", "a", "--theme", "dark"], ["--theme: does nothing with --dump"]),
    (["--dump", "a", "--colormap", "magma"], ["--colormap: does nothing with --dump"]),
    (["--bench", "--values"], ["--values: does nothing with --bench"]),
    (["--bench", "--contrast", "log"], ["--contrast: does nothing with --bench"]),
    (["--bench", "--diff"], ["--diff: does nothing with --bench"]),
    (["--bench", "--theme", "dark"], ["--theme: does nothing with --bench"]),
    (["--bench", "--colormap", "greys"], ["--colormap: does nothing with --bench"]),
    (["--export", "x.png", "--export-dir", "e"], ["--export-dir: does nothing with --export"]),
    (["--dump", "a", "--export-dir", "e"], ["--export-dir: does nothing with --dump"]),
    (["--dump", "a", "--font", "f.ttf"], ["--font: does nothing with --dump"]),
]


def check_bad(mhaviz, args, names, prefix=("--dump", "out")):
    where = "mhaviz " + " ".join(repr(a) if (" " in a or not a) else a for a in args)
    if len(where) > 90:
        where = where[:90] + "..."
    with tempfile.TemporaryDirectory(prefix="mhaviz-cli-") as d:
        full = list(prefix) + args
        p = run(mhaviz, full, d)
        err = p.stderr.decode("utf-8", errors="replace")
        if p.returncode != 2:
            fail(where, "exit status 2", f"{p.returncode} (stderr: {err.strip()[:200]!r})")
        lines = err.split("\n")
        if not (err.endswith("\n") and len(lines) == 2):
            fail(where, "exactly one line on stderr", repr(err[:300]))
        line = lines[0]
        if not line.startswith("mhaviz: "):
            fail(where, "a line starting 'mhaviz: '", repr(line))
        # "(see --help)" is a hint, not the option named
        named = line.replace("(see --help)", "")
        if not any(n in named for n in names):
            fail(where, f"a message naming {' or '.join(names)}", repr(line))
        if re.search(r"[\x00-\x08\x0b-\x1f\x7f]", line):
            fail(where, "a printable message", repr(line))
        if p.stdout:
            fail(where, "nothing on stdout", repr(p.stdout[:200]))
        left = os.listdir(d)
        if left:
            fail(where, "nothing written (empty folder)", left)


def check_pad_export(mhaviz):
    """--pad draws padding in figures: the export succeeds and an SVG labels the
    [PAD] positions as text."""
    for args, pads in ((["--export", "x.png", "--pad", "20"], 0),
                       (["--export", "x.svg", "--pad", "20", "--sample", "2"], 8)):
        where = "mhaviz " + " ".join(args)
        with tempfile.TemporaryDirectory(prefix="mhaviz-cli-") as d:
            p = subprocess.run([mhaviz] + args, cwd=d, capture_output=True, timeout=60)
            if p.returncode != 0:
                fail(where, "exit status 0", f"{p.returncode} ({p.stderr!r})")
                continue
            out = os.path.join(d, args[1])
            if not os.path.isfile(out) or os.path.getsize(out) == 0:
                fail(where, "a figure written", os.listdir(d))
            elif pads:
                text = open(out, encoding="utf-8").read()
                got = text.count(">[PAD]<")
                if got < pads:  # at least one row label per [PAD] position
                    fail(where, f"at least {pads} [PAD] labels", got)


def check_good_values(mhaviz):
    """The edges of the new ranges are accepted."""
    for args in (["--temperature", "0.05"], ["--temperature", "20"], ["--temperature", ".5"],
                 ["--temperature", "1.25"], ["--pad", "12", "--sample", "2"],
                 ["--pad", "512"], ["--ablate", "1,2,3,4"], ["-H", "8", "--ablate", "8,1"],
                 ["--weights", "random"], ["--weights", "patterns", "-H", "6", "-d", "96"]):
        where = "mhaviz --dump out " + " ".join(args)
        with tempfile.TemporaryDirectory(prefix="mhaviz-cli-") as d:
            p = run(mhaviz, ["--dump", "out"] + args, d)
            if p.returncode != 0 or p.stderr:
                fail(where, "exit 0 and nothing on stderr", f"{p.returncode} {p.stderr[:200]!r}")
            elif not os.path.isfile(os.path.join(d, "out", "meta.json")):
                fail(where, "out/meta.json written", os.listdir(d))


def check_long_paths(mhaviz):
    """A long path in an error is shortened in its middle: the line stays one line
    of at most 200 characters, keeps the path's start and file name (around an
    ellipsis) and ends with the whole reason."""
    with tempfile.TemporaryDirectory(prefix="mhaviz-cli-") as d:
        deep = os.path.join(d, "/".join(c * 200 for c in "abc"))  # missing folders
        open(os.path.join(d, "taken"), "w").close()
        cases = [
            (["--export", deep + "/x.png"], 1, "/x.png: No such file or directory"),
            (["--export", deep + "/x.txt"], 2, "/x.txt': the file name must end in .png, .svg or .pdf"),
            (["--text-file", deep + "/notes.txt", "--dump", "out"], 1,
             "/notes.txt: cannot open: No such file or directory"),
            (["--export", "y.png", "--export", deep + "/x.png"], 2,
             "/x.png'); give it once"),
            (["--dump", os.path.join(d, "taken", "q" * 300)], 1, ""),
        ]
        for args, status, tail in cases:
            where = f"mhaviz {args[0]} <{len(args[1 if len(args) < 4 else 3])}-character path>"
            p = run(mhaviz, args, d)
            err = p.stderr.decode("utf-8", errors="replace")
            line = err.rstrip("\n")
            if p.returncode != status:
                fail(where, f"exit {status}", f"{p.returncode} ({line[:200]!r})")
            if not (err.endswith("\n") and err.count("\n") == 1 and line.startswith("mhaviz: ")):
                fail(where, "one line starting 'mhaviz: '", repr(err[:300]))
            if len(line) > 200 or "\u2026" not in line:
                fail(where, "at most 200 characters with the path shortened by an ellipsis",
                     f"{len(line)}: {line!r}")
            if tail and not line.endswith(tail):
                fail(where, f"a line ending {tail!r}", repr(line[-120:]))
            if not tail and not line.rstrip().endswith(("Not a directory", "not a folder")):
                fail(where, "the reason at the end", repr(line[-120:]))
            if os.path.exists(os.path.join(d, "out")) or os.path.exists(os.path.join(d, "y.png")):
                fail(where, "nothing written", os.listdir(d))


def check_missing_model(mhaviz):
    """A missing model folder named as one of the README's models (a lesson's
    models/gpt2, --model ~/models/bert-base-uncased) is answered with the files to
    download and their page, in the one line; any other missing path with the reason
    alone; a folder that is there but empty gets no download line either."""
    with tempfile.TemporaryDirectory(prefix="mhaviz-cli-") as d:
        os.makedirs(os.path.join(d, "empty", "gpt2"))
        cases = [
            ("models/bert-base-uncased", "No such file or directory: download config.json, "
             "model.safetensors, vocab.txt and tokenizer_config.json from "
             "huggingface.co/google-bert/bert-base-uncased into it"),
            ("models/roberta-base/", "No such file or directory: download config.json, "
             "model.safetensors and tokenizer.json from huggingface.co/FacebookAI/roberta-base "
             "into it"),
            ("gpt2", "No such file or directory: download config.json, model.safetensors, "
             "vocab.json and merges.txt from huggingface.co/openai-community/gpt2 into it"),
            ("models/my-bert-base-uncased", "my-bert-base-uncased: No such file or directory"),
            ("empty/gpt2", "model.safetensors: No such file or directory"),
        ]
        for path, tail in cases:
            where = f"mhaviz --model {path} (missing)"
            p = run(mhaviz, ["--model", path, "--dump", "out"], d)
            err = p.stderr.decode("utf-8", errors="replace")
            line = err.rstrip("\n")
            if p.returncode != 1 or err.count("\n") != 1 or not line.startswith("mhaviz: "):
                fail(where, "exit 1, one line starting 'mhaviz: '", f"{p.returncode} {err!r}")
            if not line.endswith(tail):
                fail(where, f"a line ending {tail!r}", repr(line))
            if os.path.exists(os.path.join(d, "out")):
                fail(where, "nothing written", os.listdir(d))


def check_good(mhaviz):
    with tempfile.TemporaryDirectory(prefix="mhaviz-cli-") as d:
        p = run(mhaviz, ["--help"], d)
        out = p.stdout.decode()
        if p.returncode != 0:
            fail("--help", "exit 0", p.returncode)
        if not out.startswith("usage: mhaviz"):
            fail("--help", "stdout starting 'usage: mhaviz'", repr(out[:60]))
        for opt in ["--heads", "--d-model", "--seed", "--text", "--sample", "--mask",
                    "--no-scale", "--dump", "--list-samples", "--temperature", "--pad",
                    "--ablate", "--weights"]:
            if opt not in out:
                fail("--help", f"text mentioning {opt}", "no mention")
        if p.stderr:
            fail("--help", "nothing on stderr", repr(p.stderr[:200]))
        for v in (["--version"], ["-V"]):
            p = run(mhaviz, v, d)
            out = p.stdout.decode()
            if p.returncode != 0:
                fail(v[0], "exit 0", p.returncode)
            if not re.fullmatch(r"mhaviz \d+\.\d+\.\d+\n", out):
                fail(v[0], "'mhaviz X.Y.Z'", repr(out))
        p = run(mhaviz, ["-h"], d)
        if p.returncode != 0 or not p.stdout.startswith(b"usage:"):
            fail("-h", "exit 0 and usage", f"{p.returncode} {p.stdout[:30]!r}")

        p = run(mhaviz, ["--list-samples"], d)
        lines = p.stdout.decode("utf-8").splitlines()
        if p.returncode != 0:
            fail("--list-samples", "exit 0", p.returncode)
        if len(lines) < 6:
            fail("--list-samples", "at least 6 lines", len(lines))
        for i, ln in enumerate(lines):
            parts = ln.split("\t")
            if len(parts) != 3 or parts[0] != str(i + 1) or not parts[1] or not parts[2]:
                fail("--list-samples", f"line '{i + 1}<TAB>name<TAB>text'", repr(ln))
        if os.listdir(d):
            fail("good cases", "nothing written", os.listdir(d))

    # --dump into nested missing folders
    with tempfile.TemporaryDirectory(prefix="mhaviz-cli-") as d:
        p = run(mhaviz, ["--dump", "a/b/c", "-H", "8", "--sample", "2"], d)
        if p.returncode != 0:
            fail("--dump a/b/c", "exit 0", f"{p.returncode} {p.stderr[:200]!r}")
        if p.stderr:
            fail("--dump a/b/c", "nothing on stderr", repr(p.stderr[:200]))
        c = os.path.join(d, "a", "b", "c")
        got = sorted(os.listdir(c)) if os.path.isdir(c) else None
        want = sorted([t + ".npy" for t in ["X", "W_Q", "W_K", "W_V", "W_O", "Q", "K", "V",
                                            "scores", "attn", "heads", "concat", "out",
                                            "out_full"]]
                      + ["tokens.txt", "meta.json"])
        if got != want:
            fail("--dump a/b/c", want, got)
        # files are created 0666 & ~umask like any other tool's output, not 0600
        mask = os.umask(0)
        os.umask(mask)
        for name in (got or []):
            mode = os.stat(os.path.join(c, name)).st_mode & 0o777
            if mode != 0o666 & ~mask:
                fail(f"--dump a/b/c mode of {name}", oct(0o666 & ~mask), oct(mode))
                break
        # and again into the same folder: replaced, still exit 0
        p = run(mhaviz, ["--dump", "a/b/c", "-H", "2"], d)
        if p.returncode != 0:
            fail("--dump a/b/c (again)", "exit 0", f"{p.returncode} {p.stderr[:200]!r}")
        got = sorted(os.listdir(c)) if os.path.isdir(c) else None
        if got != want:
            fail("--dump a/b/c (again)", want, got)

    # --dump onto a regular file, and below one
    for target in ("taken", "taken/sub"):
        with tempfile.TemporaryDirectory(prefix="mhaviz-cli-") as d:
            path = os.path.join(d, "taken")
            with open(path, "wb") as f:
                f.write(b"keep me\n")
            p = run(mhaviz, ["--dump", target], d)
            err = p.stderr.decode("utf-8", errors="replace")
            where = f"--dump {target} (a regular file)"
            if p.returncode != 1:
                fail(where, "exit 1", f"{p.returncode} ({err.strip()!r})")
            if not (err.startswith("mhaviz: ") and err.endswith("\n") and err.count("\n") == 1):
                fail(where, "one 'mhaviz: ' line on stderr", repr(err))
            with open(path, "rb") as f:
                content = f.read()
            if content != b"keep me\n":
                fail(where, "the file unchanged", repr(content[:100]))
            if os.listdir(d) != ["taken"]:
                fail(where, "nothing else written", os.listdir(d))


def main():
    args = sys.argv[1:]
    long_only = False
    if args and args[0] == "--long-options":
        long_only = True
        args = args[1:]
    if len(args) != 1:
        print("usage: cli_check.py [--long-options] MHAVIZ", file=sys.stderr)
        return 2
    mhaviz = os.path.abspath(args[0])
    if not os.access(mhaviz, os.X_OK):
        print(f"{os.path.basename(__file__)}: expected an executable mhaviz at {mhaviz}, got none",
              file=sys.stderr)
        return 1
    cases = LONG if long_only else BAD
    for a, names in cases:
        check_bad(mhaviz, a, names)
    if not long_only:
        for a, names in ALONE:
            check_bad(mhaviz, a, names, prefix=())
        check_good(mhaviz)
        check_long_paths(mhaviz)
        check_missing_model(mhaviz)
        check_pad_export(mhaviz)
        check_good_values(mhaviz)
    if FAILURES:
        print(f"cli_check: {len(set(FAILURES))} failing case(s) of {len(cases)} bad-value cases"
              + ("" if long_only else " and the good cases"), file=sys.stderr)
        return 1
    print(f"cli_check: {len(cases)} bad-value cases OK" + ("" if long_only else ", good cases OK"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
