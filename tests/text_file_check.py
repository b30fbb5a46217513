#!/usr/bin/python3
"""text_file_check.py MHAVIZ: --text-file FILE and --text-file - (standard input).

Each case runs `mhaviz --text-file F --dump out` in an empty temporary folder.
Refused files end with exactly one line on stderr, "mhaviz: NAME: reason", the
exit status the README gives (1: cannot be read; 2: read but not a text to use)
and no out folder. A 600-token file is cut to its first 512 tokens with one note
line and exit 0; a 2 MB file is refused, naming the 1 MiB bound. A FIFO must not
hang (every run has a timeout). Exits 1 with "expected X, got Y" on any failure."""
import json
import os
import stat
import subprocess
import sys
import tempfile

FAILURES = []
SIX_HUNDRED = " ".join(f"w{i}" for i in range(600)) + "\n"


def fail(where, expected, got):
    FAILURES.append(where)
    print(f"FAIL {where}: expected {expected}, got {got}", file=sys.stderr)


def run(mhaviz, args, cwd, stdin=None):
    try:
        return subprocess.run([mhaviz] + args, cwd=cwd, capture_output=True, timeout=30,
                              input=stdin, stdin=None if stdin is not None else subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        return None


def refused(mhaviz, where, args, status, want, cwd, stdin=None):
    """One line starting 'mhaviz: ' holding want, exit status, no out folder."""
    p = run(mhaviz, args + ["--dump", "out"], cwd, stdin)
    if p is None:
        fail(where, "an answer within 30 s", "a hang")
        return
    err = p.stderr.decode("utf-8", errors="replace")
    if p.returncode != status:
        fail(where, f"exit {status}", f"{p.returncode} ({err.strip()[:200]!r})")
    if not (err.endswith("\n") and err.count("\n") == 1 and err.startswith("mhaviz: ")):
        fail(where, "one line starting 'mhaviz: '", repr(err[:300]))
    if want not in err:
        fail(where, f"a message holding {want!r}", repr(err.strip()))
    if p.stdout:
        fail(where, "nothing on stdout", repr(p.stdout[:200]))
    if os.path.exists(os.path.join(cwd, "out")):
        fail(where, "no out folder", os.listdir(cwd))


def cut(mhaviz, where, args, name, cwd, stdin=None):
    """Cut to 512 tokens: exit 0, one note line, meta n 512, the first 512 tokens."""
    p = run(mhaviz, args + ["--dump", "out"], cwd, stdin)
    if p is None:
        fail(where, "an answer within 30 s", "a hang")
        return
    err = p.stderr.decode("utf-8", errors="replace")
    note = f"mhaviz: {name}: text cut to the first 512 of its 600 tokens\n"
    if p.returncode != 0:
        fail(where, "exit 0", f"{p.returncode} ({err.strip()[:200]!r})")
        return
    if err != note:
        fail(where, repr(note), repr(err[:300]))
    meta = json.load(open(os.path.join(cwd, "out", "meta.json")))
    if meta["n"] != 512 or meta["n_real"] != 512:
        fail(where, "n and n_real 512", (meta["n"], meta["n_real"]))
    toks = open(os.path.join(cwd, "out", "tokens.txt"), encoding="utf-8").read().split("\n")
    if toks[0] != "w0" or toks[511] != "w511":
        fail(where, "tokens w0 ... w511", (toks[0], toks[511] if len(toks) > 511 else toks[-1]))


def main():
    if len(sys.argv) != 2:
        print("usage: text_file_check.py MHAVIZ", file=sys.stderr)
        return 2
    mhaviz = os.path.abspath(sys.argv[1])
    big = ("0123456789abcdef " * 64 + "\n") * (2 * 1024 * 1024 // (17 * 64 + 1) + 1)
    big = big[:2 * 1024 * 1024].encode()
    with tempfile.TemporaryDirectory(prefix="mhaviz-textfile-") as top:
        def path(name, data=None):
            p = os.path.join(top, name)
            if data is not None:
                with open(p, "wb") as f:
                    f.write(data)
            return p

        t600 = path("t600.txt", SIX_HUNDRED.encode())
        bigf = path("big.txt", big)
        bom = path("bom.txt", "\ufeffcafé naïve\r\nΔ déjà vu\n".encode())
        hostile = [  # (name, path, status, what the message says)
            ("binary", path("bin.dat", bytes(range(1, 32)) * 8 + b"\x80\x81"), 2, "control character 0x01 at byte 1: not a text file"),
            ("NUL bytes", path("nul.txt", b"hello\0world"), 2, "a NUL byte at byte 6"),
            ("invalid UTF-8", path("bad.txt", b"caf\xe9 ok"), 2, "not UTF-8 (byte 4 is 0xE9)"),
            ("a folder", path("adir"), 1, "is a folder"),
            ("a FIFO without a writer", path("fifo"), 2, "empty"),
            ("/dev/zero", "/dev/zero", 2, "more than 1 MiB"),
            ("unreadable", "/proc/self/mem", 1, "cannot read"),
            ("missing", path("missing.txt"), 1, "cannot open: No such file or directory"),
            ("empty", path("empty.txt", b""), 2, "empty"),
            ("only white space", path("ws.txt", b" \t\r\n\n  \f\v"), 2, "only white space"),
            ("overlong UTF-8", path("overlong.txt", b"a \xc0\xaf b"), 2, "not UTF-8"),
            ("a surrogate", path("surrogate.txt", b"a \xed\xa0\x80 b"), 2, "not UTF-8"),
            ("cut UTF-8", path("cututf.txt", b"a b \xe2\x82"), 2, "not UTF-8"),
        ]
        os.mkdir(os.path.join(top, "adir"))
        os.mkfifo(os.path.join(top, "fifo"))
        if os.geteuid() != 0:  # root reads a mode-000 file anyway
            locked = path("locked.txt", b"secret words")
            os.chmod(locked, 0)
            hostile.append(("mode 000", locked, 1, "Permission denied"))
        else:
            print("text_file_check: running as root: mode-000 file skipped "
                  "(/proc/self/mem stands for an unreadable file)")
        with tempfile.TemporaryDirectory(prefix="mhaviz-textfile-run-") as d:
            for what, p, status, want in hostile:
                refused(mhaviz, f"--text-file {what}", ["--text-file", p], status,
                        f"mhaviz: {p}: {want}" if p != "/dev/zero" else want, d)
            refused(mhaviz, "--text-file 2 MB", ["--text-file", bigf], 2,
                    f"mhaviz: {bigf}: 2097152 bytes; a text file may hold at most 1 MiB", d)
            refused(mhaviz, "--text-file - 2 MB", ["--text-file", "-"], 2,
                    "mhaviz: standard input: more than 1 MiB", d, stdin=big)
            refused(mhaviz, "--text-file - NUL", ["--text-file", "-"], 2,
                    "mhaviz: standard input: a NUL byte", d, stdin=b"a\0b")
            refused(mhaviz, "--text-file - empty", ["--text-file", "-"], 2,
                    "mhaviz: standard input: empty", d, stdin=b"")
            # what goes with it
            refused(mhaviz, "--text-file and --text", ["--text-file", t600, "--text", "a"], 2,
                    "--text-file and --text: give one or the other", d)
            refused(mhaviz, "--text-file and --sample", ["--text-file", t600, "--sample", "2"],
                    2, "--text-file and --sample: give one or the other", d)
            refused(mhaviz, "--text-file twice", ["--text-file", t600, "--text-file", bom], 2,
                    "--text-file: given twice", d)
            refused(mhaviz, "--text-file empty name", ["--text-file", ""], 2,
                    "--text-file: needs a file name", d)
        for where, args, name, stdin in (
                ("--text-file 600 tokens", ["--text-file", t600], t600, None),
                ("--text-file - 600 tokens", ["--text-file", "-"], "standard input",
                 SIX_HUNDRED.encode())):
            with tempfile.TemporaryDirectory(prefix="mhaviz-textfile-run-") as d:
                cut(mhaviz, where, args, name, d, stdin)
        with tempfile.TemporaryDirectory(prefix="mhaviz-textfile-run-") as d:
            p = run(mhaviz, ["--text-file", bom, "--dump", "out"], d)
            if p is None or p.returncode != 0 or p.stderr:
                fail("--text-file BOM and CRLF", "exit 0, nothing on stderr",
                     p and (p.returncode, p.stderr[:200]))
            else:
                toks = open(os.path.join(d, "out", "tokens.txt"), encoding="utf-8").read()
                if "\ufeff" in toks or "café" not in toks or "Δ" not in toks:
                    fail("--text-file BOM", "the text's words, no byte order mark", repr(toks))
        with tempfile.TemporaryDirectory(prefix="mhaviz-textfile-run-") as d:
            p = run(mhaviz, ["--text-file", t600, "--export", "x.svg"], d)
            if p is None or p.returncode != 0 or not os.path.isfile(os.path.join(d, "x.svg")):
                fail("--text-file --export", "exit 0 and x.svg", p and (p.returncode, p.stderr))
    if FAILURES:
        print(f"text_file_check: {len(FAILURES)} failure(s)", file=sys.stderr)
        return 1
    print("text_file_check: OK")
    return 0


if __name__ == "__main__":
    sys.exit(main())
