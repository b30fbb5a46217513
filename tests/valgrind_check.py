#!/usr/bin/python3
"""valgrind_check.py MHAVIZ SUPPRESSIONS: memcheck over --dump and --export.

Runs mhaviz under valgrind's memcheck for --dump (new, and over an earlier dump),
--export PNG (banded, causal mask, padding), SVG and PDF, and for the failure
paths: a dump and an export past a file-size limit (a full disk without root:
every write past it fails) and --help into /dev/full. Each run must have zero
memcheck errors and zero bytes definitely lost (--errors-for-leak-kinds=definite),
and the exit status the run should have. Exits 77 (skipped) when valgrind is not
installed or the build has sanitizers, 1 with "FAIL ..." lines on a failure."""
import os
import resource
import shutil
import signal
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True
from e2e_util import Checker, no_display_env

CK = Checker()
ERROR_EXIT = 99  # not one of mhaviz's own statuses, so a memcheck error is told apart


def small_files():
    """In the child: writes past 64 KiB fail with EFBIG instead of killing it."""
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (65536, resource.RLIM_INFINITY))


def memcheck(mhaviz, supp, args, cwd, where, status=0, stdout=subprocess.DEVNULL, preexec=None):
    cmd = ["valgrind", "--tool=memcheck", "--leak-check=full", "--errors-for-leak-kinds=definite",
           "--show-leak-kinds=definite", f"--error-exitcode={ERROR_EXIT}",
           f"--suppressions={supp}", "--num-callers=30", mhaviz] + args
    r = subprocess.run(cmd, cwd=cwd, env=no_display_env(OPENBLAS_NUM_THREADS="1"), stdout=stdout,
                       stderr=subprocess.PIPE, text=True, timeout=300, preexec_fn=preexec)
    report = [l for l in r.stderr.splitlines() if l.startswith("==")]
    summary = [l for l in report if "ERROR SUMMARY" in l or "definitely lost" in l]
    CK.check(r.returncode == status, f"{where}: exit status", status,
             f"{r.returncode}; {summary or r.stderr[-600:]}")
    errors = [l for l in report if "ERROR SUMMARY" in l and " 0 errors" not in l]
    CK.check(not errors, f"{where}: memcheck", "0 errors, 0 bytes definitely lost",
             "\n".join(report[-40:]))
    print(f"{where}: {(summary or ['ok'])[0]}", flush=True)


def main():
    if len(sys.argv) != 3:
        print("usage: valgrind_check.py MHAVIZ SUPPRESSIONS", file=sys.stderr)
        return 2
    mhaviz, supp = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    if not shutil.which("valgrind"):
        print("SKIP: valgrind is not installed (apt-get install valgrind)")
        return 77
    if "asan" in subprocess.run(["ldd", mhaviz], capture_output=True, text=True).stdout:
        print("SKIP: a sanitizer build cannot run under valgrind; the normal build runs this")
        return 77
    with tempfile.TemporaryDirectory() as d:
        memcheck(mhaviz, supp, ["--dump", "out", "-H", "4", "-d", "64", "--sample", "2"], d,
                 "--dump")
        memcheck(mhaviz, supp, ["--dump", "out", "-H", "6", "-d", "48", "--weights", "patterns",
                                "--pad", "16", "--sample", "3"], d, "--dump over an earlier dump")
        memcheck(mhaviz, supp, ["--export", "a.png", "--size", "800x600", "--scale", "2",
                                "--mask", "causal", "-H", "8", "-d", "64", "--sample", "7"], d,
                 "--export PNG")
        memcheck(mhaviz, supp, ["--export", "a.png", "--size", "600x400", "--pad", "20",
                                "--panel", "head:2"], d, "--export PNG, padding, one head")
        for f in ("a.svg", "a.pdf"):
            memcheck(mhaviz, supp, ["--export", f, "--size", "800x600", "-H", "8", "-d", "64",
                                    "--mask", "causal", "--sample", "7"], d, f"--export {f[2:]}")
        # failure paths: every write past 64 KiB fails, and the cleanup runs
        memcheck(mhaviz, supp, ["--dump", "out", "-d", "256", "-H", "8"], d,
                 "--dump past a file-size limit", status=1, preexec=small_files)
        memcheck(mhaviz, supp, ["--export", "b.png", "--size", "1600x900", "--scale", "2"], d,
                 "--export PNG past a file-size limit", status=1, preexec=small_files)
        with open("/dev/full", "wb") as full:
            memcheck(mhaviz, supp, ["--help"], d, "--help into /dev/full", status=1, stdout=full)
        left = sorted(f for f in os.listdir(d) if ".tmp-" in f or f == "b.png")
        CK.check(not left, "after the failed runs", "no temporary or partial file", left)
    return CK.finish("valgrind_check")


if __name__ == "__main__":
    sys.exit(main())
