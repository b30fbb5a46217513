#!/usr/bin/python3
"""hostile_check.py MHAVIZ README: every row of the README's "Hostile inputs" table.

Reads the table, runs the check this script has for each row (and fails when a
row has no check, or a check no row), and for every run requires: the exit
status the row states, stderr empty or exactly one "mhaviz: " line (so any
sanitizer report fails), and the folder afterwards exactly as the row says:
nothing new, an earlier file or dump byte for byte, no temporary file anywhere.
Full disks are 64 KiB tmpfs mounts, which needs root: without it those rows say
SKIP. Runs without a display. Exits 1 with "FAIL where: expected X, got Y".
Under MHAVIZ_TEST_SAMPLE=k (the sanitizer build) the largest PNG is exported at its full
width, 32768 pixels, and a k-th of its height; the normal build exports it whole."""
import contextlib
import hashlib
import json
import os
import re
import resource
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import time
import zlib

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
from e2e_util import Checker, Sample, no_display_env

CK = Checker()
MHAVIZ = None
ENV = no_display_env()
ROWS = {}  # the README's first column -> check
SKIPPED = []
LARGEST_MB = 150  # the README says about 64 MB (measured in the build without sanitizers)
SANITIZED = False  # set in main: the binary links AddressSanitizer
SAMPLE = None  # set in main: under MHAVIZ_TEST_SAMPLE=k (the sanitizer build) the largest PNG
# is exported at its full width and a k-th of its height; the normal build exports it whole


def row(name):
    def register(fn):
        ROWS[name] = fn
        return fn
    return register


# --- helpers -----------------------------------------------------------------------

def run(args, cwd, timeout=60, stdout=subprocess.PIPE, preexec_fn=None):
    return subprocess.run([MHAVIZ] + args, cwd=cwd, env=ENV, stdout=stdout,
                          stderr=subprocess.PIPE, timeout=timeout, preexec_fn=preexec_fn)


def stderr_lines(r):
    return r.stderr.decode("utf-8", "replace").splitlines()


def expect(r, where, status, message=None):
    """Exit status and stderr: nothing for 0, else one "mhaviz: " line holding message."""
    lines = stderr_lines(r)
    CK.check(r.returncode == status, f"{where}: exit status", status,
             f"{r.returncode}; stderr {lines[:3]}")
    if status == 0:
        CK.check(lines == [], f"{where}: stderr", "nothing", lines[:5])
        return
    ok = len(lines) == 1 and lines[0].startswith("mhaviz: ")
    CK.check(ok, f"{where}: stderr", "one line starting 'mhaviz: '", lines[:5])
    if ok and message is not None:
        CK.check(message in lines[0], f"{where}: message", repr(message), repr(lines[0]))


def snapshot(top):
    """{relative path: sha256 of a file, 'dir' of a folder} of everything under top."""
    out = {}
    for base, dirs, files in os.walk(top):
        for d in dirs:
            out[os.path.relpath(os.path.join(base, d), top)] = "dir"
        for f in files:
            p = os.path.join(base, f)
            with open(p, "rb") as fh:
                out[os.path.relpath(p, top)] = hashlib.sha256(fh.read()).hexdigest()
    return out


def unchanged(top, before, where):
    after = snapshot(top)
    new = sorted(set(after) - set(before))
    gone = sorted(set(before) - set(after))
    changed = sorted(k for k in before if k in after and before[k] != after[k])
    CK.check(not new and not gone and not changed, f"{where}: the folder afterwards",
             "exactly as before", f"new {new[:6]}, gone {gone[:6]}, changed {changed[:6]}")


def no_temporaries(top, where):
    left = [k for k in snapshot(top) if ".tmp-" in k or ".old-" in k]
    CK.check(not left, f"{where}: temporary files", "none", left[:6])


MOUNT_OK = None


def can_mount():
    global MOUNT_OK
    if MOUNT_OK is None:
        MOUNT_OK = False
        if os.geteuid() == 0:
            with tempfile.TemporaryDirectory() as d:
                r = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", d],
                                   capture_output=True)
                if r.returncode == 0:
                    subprocess.run(["umount", d], check=True)
                    MOUNT_OK = True
    return MOUNT_OK


@contextlib.contextmanager
def tmpfs(options="size=64k"):
    """A fresh tmpfs mounted on a temporary folder (64 KiB: a full disk soon)."""
    d = tempfile.mkdtemp(prefix="mhaviz-hostile-")
    subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", d], check=True)
    try:
        yield d
    finally:
        subprocess.run(["umount", d], check=True)
        os.rmdir(d)


def needs_root(name):
    if can_mount():
        return False
    SKIPPED.append(name)
    print(f"SKIP {name}: needs root to mount a tmpfs (the CI runs as root)")
    return True


def wait_for(pred, timeout, proc):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and proc.poll() is None:
        if pred():
            return True
        time.sleep(0.01)
    return False


def names(top):
    """Relative paths under top, tolerating files that come and go meanwhile."""
    out = []
    for base, dirs, files in os.walk(top):
        out += [os.path.relpath(os.path.join(base, x), top) for x in dirs + files]
    return out


def has_tmp(top):
    return lambda: any(".tmp-" in k for k in names(top))


def png_check(path, where, w_want, h_want):
    """IHDR and every IDAT chunk's CRC, then the whole image inflated: h rows of
    1 + 3w (RGB) bytes, each starting with a valid filter byte."""
    with open(path, "rb") as f:
        data = f.read()
    if not CK.check(data[:8] == b"\x89PNG\r\n\x1a\n", f"{where}: PNG signature", "PNG", data[:8]):
        return
    pos, idat, ihdr, end = 8, zlib.decompressobj(), None, False
    rows, carry, bad_filter = 0, b"", 0
    while pos + 8 <= len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        crc = struct.unpack(">I", data[pos + 8 + n:pos + 12 + n])[0]
        if not CK.check(zlib.crc32(kind + body) == crc, f"{where}: CRC of {kind}", "valid", "bad"):
            return
        if kind == b"IHDR":
            ihdr = struct.unpack(">IIBB", body[:10])
        elif kind == b"IDAT":
            row = 1 + 3 * ihdr[0]
            buf = carry + idat.decompress(body)
            full = len(buf) // row * row
            for i in range(0, full, row):
                bad_filter += buf[i] > 4
            rows += full // row
            carry = buf[full:]
        elif kind == b"IEND":
            end = True
        pos += 12 + n
    CK.check(ihdr is not None and ihdr[:2] == (w_want, h_want) and ihdr[3] == 2,
             f"{where}: IHDR", f"{w_want}x{h_want} RGB", ihdr)
    CK.check(end and rows == h_want and not carry and bad_filter == 0,
             f"{where}: image data", f"{h_want} rows, IEND", f"{rows} rows, {len(carry)} bytes "
             f"left, {bad_filter} bad filter bytes, IEND {end}")


# --- full disks and unwritable places ----------------------------------------------

def full_disk_export(name, ext, extra):
    if needs_root(name):
        return
    for earlier in (False, True):
        with tmpfs() as d:
            where = f"{name} ({'over an earlier file' if earlier else 'new'})"
            if earlier:
                with open(os.path.join(d, "a." + ext), "wb") as f:
                    f.write(b"an earlier figure")
            before = snapshot(d)
            r = run(["--export", "a." + ext] + extra, d)
            expect(r, where, 1, f"cannot write a.{ext}: No space left on device")
            unchanged(d, before, where)


@row("`--export a.png` onto a full disk")
def _(name):
    full_disk_export(name, "png", ["--size", "1600x900", "--scale", "2"])


@row("`--export a.svg` onto a full disk")
def _(name):
    full_disk_export(name, "svg", ["--size", "1600x900"])


@row("`--export a.pdf` onto a full disk")
def _(name):
    full_disk_export(name, "pdf", ["--size", "1600x900", "-d", "512", "-H", "16", "--sample", "7"])


@row("`--dump d/e/out` onto a full disk")
def _(name):
    if needs_root(name):
        return
    with tmpfs() as d:
        r = run(["--dump", "d/e/out", "-d", "64", "-H", "8"], d)
        expect(r, name, 1, "No space left on device")
        CK.check(stderr_lines(r)[:1] and "cannot write d/e/out/" in stderr_lines(r)[0],
                 f"{name}: the message names the file", "cannot write d/e/out/NAME",
                 stderr_lines(r)[:1])
        unchanged(d, {}, name)


@row("`--dump out` over an earlier dump, disk full")
def _(name):
    if needs_root(name):
        return
    with tmpfs() as d:
        r = run(["--dump", "out", "-d", "8", "-H", "2"], d)
        expect(r, f"{name}: the earlier dump", 0)
        before = snapshot(d)
        r = run(["--dump", "out", "-d", "64", "-H", "8", "--sample", "3"], d)
        expect(r, name, 1, "No space left on device")
        unchanged(d, before, name)


@row("`--export a.png` into a read-only folder")
def _(name):
    if needs_root(name):
        return
    with tmpfs("size=64k,ro") as d:
        r = run(["--export", "a.png"], d)
        expect(r, name, 1, "cannot write a.png: Read-only file system")
        unchanged(d, {}, name)


@row("`--help`, `--version`, `--list-samples`, `--bench` into a full device (`>/dev/full`)")
def _(name):
    with tempfile.TemporaryDirectory() as d:
        for opt in ("--help", "--version", "--list-samples", "--bench"):
            with open("/dev/full", "wb") as full:
                r = run([opt], d, stdout=full)
            expect(r, f"{name}: {opt}", 1, "cannot write standard output: No space left on device")
            if opt == "--bench":
                continue  # 7 s a run; the others show a pipe still works
            r = run([opt], d)
            CK.check(r.returncode == 0 and len(r.stdout) > 0, f"{name}: {opt} into a pipe",
                     "exit 0 and some output", f"exit {r.returncode}, {len(r.stdout)} bytes")
        unchanged(d, {}, name)


# --- signals -----------------------------------------------------------------------

def interrupt(name, args, ready, sig, cwd, preexec_fn=None, settle=0.2):
    """Starts mhaviz, waits until ready() (its temporary file or folder exists) and
    settle seconds more, sends sig and returns (exit status, seconds to exit,
    stderr lines)."""
    p = subprocess.Popen([MHAVIZ] + args, cwd=cwd, env=ENV, stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE, preexec_fn=preexec_fn)
    try:
        seen = wait_for(ready, 60, p)
        CK.check(seen, f"{name}: the run got under way", "a temporary path", "none")
        time.sleep(settle)
        t0 = time.monotonic()
        p.send_signal(sig)
        err = p.communicate(timeout=20)[1]
        return p.returncode, time.monotonic() - t0, err.decode("utf-8", "replace").splitlines()
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()


def check_interrupted(where, rc, secs, lines, sig):
    want = 128 + sig
    word = {signal.SIGINT: "interrupted (SIGINT)", signal.SIGTERM: "terminated (SIGTERM)",
            signal.SIGHUP: "hung up (SIGHUP)"}[sig]
    CK.check(rc == want, f"{where}: exit status", want, rc)
    CK.check(secs < 2.0, f"{where}: stops promptly", "< 2 s", f"{secs:.2f} s")
    CK.check(len(lines) == 1 and lines[0].startswith("mhaviz: ") and word in lines[0],
             f"{where}: stderr", f"one line 'mhaviz: {word}; ...'", lines[:4])


LARGEST = ["--size", "8192x8192", "--scale", "4"]


@row("SIGINT, SIGTERM or SIGHUP during `--export` of the largest PNG")
def _(name):
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        with tempfile.TemporaryDirectory() as d:
            with open(os.path.join(d, "a.png"), "wb") as f:
                f.write(b"an earlier figure")
            before = snapshot(d)
            where = f"{name} ({sig.name})"
            rc, secs, lines = interrupt(where, ["--export", "a.png"] + LARGEST, has_tmp(d), sig, d)
            check_interrupted(where, rc, secs, lines, sig)
            unchanged(d, before, where)


@row("SIGINT or SIGTERM during `--dump`")
def _(name):
    big = ["-d", "4096", "-H", "8", "--sample", "7"]  # 4 x 64 MB of weights: time to interrupt
    for sig in (signal.SIGINT, signal.SIGTERM):
        for earlier in (False, True):
            with tempfile.TemporaryDirectory() as d:
                target = "out" if earlier else "new/deeper/out"
                if earlier:
                    expect(run(["--dump", "out", "-d", "8", "-H", "2"], d),
                           f"{name}: the earlier dump", 0)
                before = snapshot(d)
                where = f"{name} ({sig.name}, {'over an earlier dump' if earlier else 'new'})"
                # ready once the temporary folder holds its first file
                ready = lambda: any(".tmp-" in k and k.count("/") >= 1 + target.count("/")
                                    for k in names(d))
                rc, secs, lines = interrupt(where, ["--dump", target] + big, ready, sig, d,
                                            settle=0)
                check_interrupted(where, rc, secs, lines, sig)
                unchanged(d, before, where)


@row("SIGINT to a background job of a script (started with SIGINT ignored)")
def _(name):
    ignore = lambda: signal.signal(signal.SIGINT, signal.SIG_IGN)  # what `cmd &` does in sh
    with tempfile.TemporaryDirectory() as d:
        rc, secs, lines = interrupt(name, ["--export", "a.png"] + LARGEST, has_tmp(d),
                                    signal.SIGINT, d, preexec_fn=ignore)
        check_interrupted(name, rc, secs, lines, signal.SIGINT)
        unchanged(d, {}, name)


# --- the largest sizes -------------------------------------------------------------

@row("`--export a.png --size 8192x8192 --scale 4`, the largest PNG")
def _(name):
    size, rows = LARGEST, 32768
    if SAMPLE.k > 1:  # the sanitizer build: every band as wide as the largest, a k-th of them
        size = ["--size", f"8192x{8192 // SAMPLE.k}", "--scale", "4"]
        rows = 4 * (8192 // SAMPLE.k)
        print(f"{name}: sampled (MHAVIZ_TEST_SAMPLE={SAMPLE.k}): {' '.join(size)}, "
              f"32768 x {rows} pixels")
    with tempfile.TemporaryDirectory() as d:
        t0 = time.monotonic()
        p = subprocess.Popen([MHAVIZ, "--export", "a.png"] + size, cwd=d, env=ENV,
                             stderr=subprocess.PIPE)
        err = p.stderr.read()
        _, status, usage = os.wait4(p.pid, 0)
        p.returncode = os.waitstatus_to_exitcode(status)
        secs = time.monotonic() - t0
        r = subprocess.CompletedProcess(p.args, p.returncode, b"", err)
        expect(r, name, 0)
        mb = usage.ru_maxrss / 1024
        print(f"{name}: {secs:.1f} s, {mb:.0f} MB")
        # the time is printed, not checked: speed is the benchmarks' (a loaded machine
        # under the sanitizers took 85 s); a hang is the test's TIMEOUT's
        if SANITIZED:  # ASan's quarantine keeps up to 256 MB of freed memory resident
            print(f"{name}: sanitizer build, peak memory not checked")
        else:
            CK.check(mb < LARGEST_MB, f"{name}: peak memory (max RSS)", f"< {LARGEST_MB} MB",
                     f"{mb:.0f} MB")
        if r.returncode == 0:
            png_check(os.path.join(d, "a.png"), name, 32768, rows)
        no_temporaries(d, name)


def words(n, stem="w"):
    return " ".join(f"{stem}{i}" for i in range(n))


@row("`--export` SVG and PDF at `--size 8192x8192`, 64 heads of 512 tokens")
def _(name):
    with tempfile.TemporaryDirectory() as d:
        args = ["--size", "8192x8192", "-H", "64", "-d", "512", "--text", words(512)]
        for f in ("a.svg", "a.pdf"):
            r = run(["--export", f] + args, d, timeout=120)
            expect(r, f"{name}: {f}", 0)
        x = subprocess.run(["xmllint", "--noout", "--huge", "a.svg"], cwd=d, capture_output=True)
        CK.check(x.returncode == 0, f"{name}: xmllint a.svg", "well-formed", x.stderr[:300])
        p = subprocess.run(["pdfinfo", "a.pdf"], cwd=d, capture_output=True, text=True)
        CK.check(p.returncode == 0 and re.search(r"Pages:\s+1", p.stdout), f"{name}: pdfinfo",
                 "one page", p.stdout[:200] + p.stderr[:200])
        no_temporaries(d, name)


@row("`--size 8193x900`, `--size 199x900`, `--scale 5`, `--scale 0`")
def _(name):
    with tempfile.TemporaryDirectory() as d:
        for args, want in ((["--size", "8193x900"], "--size"), (["--size", "199x900"], "--size"),
                           (["--scale", "5"], "--scale"), (["--scale", "0"], "--scale")):
            r = run(["--export", "a.png"] + args, d)
            expect(r, f"{name}: {' '.join(args)}", 2, want)
            line = (stderr_lines(r) or [""])[0]
            CK.check(re.search(r"\d+ and \d+", line), f"{name}: {' '.join(args)} names the range",
                     "'between LO and HI'", line)
        unchanged(d, {}, name)


# --- odd text ------------------------------------------------------------------------

ODD = (b"a \xef\xbf\xbe b \xef\xbf\xbf c \x01 \x02\x1b d \x7f e \xed\xa0\x80 f \xed\xbf\xbf "
       b"g \xc0\xaf h \xe0\x80\xaf i \xff\xfe j \xf4\x8f\xbf\xbf k \xf4\x90\x80\x80 "
       b"l \xef\xbb\xbf \xef\xb7\x90 m \xe2\x80\x8f\xe2\x80\xae n \xcc\x81\xcc\x81 o \x0b\x0c\x1c "
       b"\xe6\x9d\xb1 " + b"x" * 4000 + b" end")
FORBIDDEN = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufdd0-\ufdef\ufffe\uffff\U0010fffe\U0010ffff]")


@row("text with U+FFFE, U+FFFF, C0 controls, DEL, surrogate and overlong byte sequences, "
     "bytes that are not UTF-8, U+10FFFF, a 4000-letter word, to PNG, SVG and PDF")
def _(name):
    with tempfile.TemporaryDirectory() as d:
        text = os.fsdecode(ODD)  # surrogateescape: the raw bytes reach argv
        for f in ("a.png", "a.svg", "a.pdf"):
            r = run(["--export", f, "--text", text, "--mask", "causal", "--size", "4000x3000"], d)
            expect(r, f"{name}: {f}", 0)
        x = subprocess.run(["xmllint", "--noout", "a.svg"], cwd=d, capture_output=True)
        CK.check(x.returncode == 0, f"{name}: xmllint a.svg", "well-formed", x.stderr[:300])
        with open(os.path.join(d, "a.svg"), "rb") as fh:
            svg = fh.read().decode("utf-8")  # must be UTF-8 throughout
        bad = FORBIDDEN.findall(svg)
        CK.check(not bad, f"{name}: characters XML forbids in a.svg", "none", bad[:5])
        CK.check("\ufffd" in svg, f"{name}: U+FFFD in a.svg", "present", "absent")
        t = subprocess.run(["pdftotext", "a.pdf", "-"], cwd=d, capture_output=True)
        pdf = t.stdout.decode("utf-8", "replace").replace("\f", "")  # pdftotext's page break
        # the last token too: a character cairo refuses would stop all drawing after it
        CK.check(t.returncode == 0 and "\ufffd" in pdf and "end" in pdf.split()
                 and not FORBIDDEN.findall(pdf), f"{name}: pdftotext a.pdf",
                 "text with U+FFFD, the last token 'end', no forbidden character",
                 f"exit {t.returncode}, {pdf[-80:]!r}")
        no_temporaries(d, name)


@row("`--text` of 513 tokens, or blank")
def _(name):
    with tempfile.TemporaryDirectory() as d:
        for text in (words(513), "", "  \t\n "):
            r = run(["--export", "a.png", "--text", text], d)
            expect(r, f"{name}: {text[:12]!r}", 2, "--text")
            r = run(["--dump", "out", "--text", text], d)
            expect(r, f"{name}: --dump {text[:12]!r}", 2, "--text")
        unchanged(d, {}, name)


# --- where --dump and --export may write ----------------------------------------------

@row("`--dump out` where `out` holds another file")
def _(name):
    with tempfile.TemporaryDirectory() as d:
        expect(run(["--dump", "out", "-d", "8", "-H", "2"], d), f"{name}: the earlier dump", 0)
        with open(os.path.join(d, "out", "notes.txt"), "w") as f:
            f.write("mine")
        before = snapshot(d)
        r = run(["--dump", "out"], d)
        expect(r, name, 1, "the folder holds 'notes.txt'")
        unchanged(d, before, name)


@row("`--dump .`, `--dump ..`, `--dump /`")
def _(name):
    with tempfile.TemporaryDirectory() as d:
        os.mkdir(os.path.join(d, "sub"))
        before = snapshot(d)
        for target in (".", "..", "/", "./", "sub/.."):
            r = run(["--dump", target], os.path.join(d, "sub"))
            expect(r, f"{name}: --dump {target}", 1, "needs a folder name of its own")
        r = run(["--dump", "../sub"], os.path.join(d, "sub"))
        expect(r, f"{name}: --dump ../sub (the current folder)", 1, "holds the current folder")
        unchanged(d, before, name)


@row("`--dump out` where `out`, or a folder above it, is a file")
def _(name):
    with tempfile.TemporaryDirectory() as d:
        with open(os.path.join(d, "out"), "w") as f:
            f.write("keep me")
        before = snapshot(d)
        for target in ("out", "out/deeper/x"):
            r = run(["--dump", target], d)
            expect(r, f"{name}: {target}", 1, "exists and is not a folder")
        unchanged(d, before, name)


@row("`--dump out` where `out` is a mount point")
def _(name):
    if needs_root(name):
        return
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "out")
        os.mkdir(out)
        subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", out], check=True)
        try:
            before = snapshot(d)
            r = run(["--dump", "out"], d)
            expect(r, name, 1, "mount point")
            unchanged(d, before, name)
        finally:
            subprocess.run(["umount", out], check=True)


@row("`--font` a file that is not a font (`/dev/zero`, random bytes, a folder)")
def _(name):
    with tempfile.TemporaryDirectory() as d:
        junk = os.path.join(d, "junk.ttf")
        with open(junk, "wb") as f:
            f.write(os.urandom(50000))
        before = snapshot(d)
        for font in ("/dev/zero", junk, d):
            r = run(["--export", "a.png", "--font", font], d, timeout=20)
            expect(r, f"{name}: {font}", 1, "cannot open font")
        unchanged(d, before, name)


@row("`--export` onto a folder named `a.png`")
def _(name):
    with tempfile.TemporaryDirectory() as d:
        os.mkdir(os.path.join(d, "a.png"))
        before = snapshot(d)
        r = run(["--export", "a.png"], d)
        expect(r, name, 1, "cannot write a.png: Is a directory")
        unchanged(d, before, name)


@row("`--export` into a missing folder whose name holds a newline")
def _(name):
    with tempfile.TemporaryDirectory() as d:
        r = run(["--export", "no\nsuch/a.png"], d)
        expect(r, name, 1, "cannot write no?such/a.png")
        unchanged(d, {}, name)


# --- model files: changed while read, not finite, far larger than their weights -------

HERE = os.path.dirname(os.path.abspath(__file__))


def gpt2_folder(d, *args):
    """A random checkpoint folder d (tests/gpt2_gen.py); returns d."""
    subprocess.run([sys.executable, os.path.join(HERE, "gpt2_gen.py"), d, *args], check=True,
                   stdout=subprocess.DEVNULL)
    return d


def rchar(pid):
    """Bytes the process has read (/proc/PID/io), or None once it is gone."""
    try:
        with open(f"/proc/{pid}/io") as f:
            return next(int(x.split()[1]) for x in f if x.startswith("rchar:"))
    except (OSError, StopIteration):
        return None


def poison(path, name, k, value):
    """Writes value (nan or inf) into element k of tensor name, whatever its dtype."""
    with open(path, "r+b") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        e = json.loads(f.read(n))[name]
        fmt = {"F32": "<f", "F16": "<e"}.get(e["dtype"])
        raw = (struct.pack(fmt, value) if fmt else struct.pack("<f", value)[2:])  # BF16
        f.seek(8 + n + e["data_offsets"][0] + k * len(raw))
        f.write(raw)


@row("`--model m --dump out` while another program cuts `m/model.safetensors` short")
def _(name):
    with tempfile.TemporaryDirectory() as d:
        src = gpt2_folder(os.path.join(d, "src"), "--layers", "4", "--heads", "8", "--embd",
                          "512", "--positions", "512")  # 52 MB
        size = os.path.getsize(os.path.join(src, "model.safetensors"))
        for share in (0.2, 0.5, 0.8):  # of the file read (the reader uses pread: rchar)
            m = os.path.join(d, "m")
            shutil.rmtree(m, ignore_errors=True)
            shutil.copytree(src, m)
            p = subprocess.Popen([MHAVIZ, "--model", "m", "--dump", "out"], cwd=d, env=ENV,
                                 stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            while (rchar(p.pid) or 0) < share * size and p.poll() is None:
                time.sleep(0.0003)
            os.truncate(os.path.join(m, "model.safetensors"), size // 3)
            err = p.communicate(timeout=120)[1]
            r = subprocess.CompletedProcess(p.args, p.returncode, b"", err)
            where = f"{name} (after {share:.0%} read)"
            expect(r, where, 1, "mhaviz: m/model.safetensors: the file changed while it was read")
            CK.check(sorted(os.listdir(d)) == ["m", "src"], f"{where}: the folder afterwards",
                     "nothing new", sorted(os.listdir(d)))


@row("`--model m` whose weights hold a NaN or an infinity (F32, F16, BF16)")
def _(name):
    with tempfile.TemporaryDirectory() as d:
        for dtype, tensor, k, value, said in (
                ("F32", "h.1.attn.c_attn.weight", 1234, float("nan"), "NaN"),
                ("F16", "wte.weight", 7, float("inf"), "Inf"),
                ("BF16", "h.1.mlp.c_proj.weight", 4095, float("-inf"), "-Inf")):
            m = gpt2_folder(os.path.join(d, dtype), "--dtype", dtype)
            poison(os.path.join(m, "model.safetensors"), tensor, k, value)
            before = snapshot(d)
            r = run(["--model", dtype, "--dump", "out"], d)
            expect(r, f"{name}: {dtype}", 2, f"mhaviz: {dtype}/model.safetensors: tensor "
                   f"{tensor} holds {said} at element {k}")
            unchanged(d, before, f"{name}: {dtype}")


@row("`--model m` with GPT-2 xl's config beside smaller weights, under a 2 GiB address-space "
     "limit")
def _(name):
    if SANITIZED:  # ASan reserves terabytes of address space: no run fits under a limit
        print(f"SKIP {name}: AddressSanitizer cannot run under an address-space limit")
        SKIPPED.append(name)
        return
    with tempfile.TemporaryDirectory() as d:
        m = gpt2_folder(os.path.join(d, "m"), "--embd", "48", "--positions", "64")
        cfg = os.path.join(m, "config.json")
        with open(cfg) as f:
            c = json.load(f)
        c.update(n_layer=48, n_head=25, n_embd=1600, n_positions=1024)  # 5.9 GB of float32
        with open(cfg, "w") as f:
            json.dump(c, f)
        before = snapshot(d)
        limit = lambda: resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))
        r = run(["--model", "m", "--dump", "out"], d, preexec_fn=limit)
        expect(r, name, 2, "m/model.safetensors: tensor wte.weight has shape [")
        CK.check(b"config.json makes it [" in r.stderr and b"1600]" in r.stderr,
                 f"{name}: the message", "the config's shape", stderr_lines(r)[:1])
        unchanged(d, before, name)


# --- the table -------------------------------------------------------------------------

def readme_rows(readme):
    """First cells of the table under '### Hostile inputs'."""
    with open(readme, encoding="utf-8") as f:
        lines = f.read().split("\n")
    at = lines.index("### Hostile inputs")
    cells, in_table = [], False
    for line in lines[at + 1:]:
        if line.startswith("|"):
            in_table = True
            first = line.split("|")[1].strip()
            if first and not set(first) <= set("-: ") and first != "hostile input":
                cells.append(first)
        elif in_table:
            break
    return cells


def main():
    global MHAVIZ, SANITIZED, SAMPLE
    if len(sys.argv) != 3:
        print("usage: hostile_check.py MHAVIZ README", file=sys.stderr)
        return 2
    MHAVIZ = os.path.abspath(sys.argv[1])
    SANITIZED = "asan" in subprocess.run(["ldd", MHAVIZ], capture_output=True, text=True).stdout
    SAMPLE = Sample("hostile_check")
    names = readme_rows(sys.argv[2])
    CK.check(names, "README: the 'Hostile inputs' table", "rows", "none")
    for n in names:
        CK.check(n in ROWS, f"README row {n!r}", "a check in hostile_check.py", "none")
    for n in ROWS:
        CK.check(n in names, f"check {n!r}", "a row in the README's table", "none")
    for n in names:
        if n in ROWS:
            t0 = time.monotonic()
            ROWS[n](n)
            print(f"row done in {time.monotonic() - t0:5.1f} s: {n}", flush=True)
    if SKIPPED:
        print(f"hostile_check: {len(SKIPPED)} row(s) skipped (see the SKIP lines: not root, "
              "or a sanitizer build)")
    return CK.finish("hostile_check")


if __name__ == "__main__":
    sys.exit(main())
