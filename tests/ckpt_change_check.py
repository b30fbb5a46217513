#!/usr/bin/python3
"""ckpt_change_check.py MHAVIZ: `mhaviz --model m --dump out` while another process
changes m/model.safetensors underneath it. The file is cut short, grown, or has a
different checkpoint renamed over it, at random moments of the load:

- by the clock: 20 truncations at a random delay within the time a whole run takes
  here (measured first, so the moments spread over the load on any machine; some
  land before the file is opened, some after the load);
- by progress: 20 truncations, 5 growths and 5 replacements once the program has
  read a random share (2 % to 90 %) of the file, seen in /proc/PID/io's rchar (the
  reader uses pread, so rchar counts the weights read): these land during the load
  whatever the machine's speed.

Every run must end by exit, never by a signal (a mapping cut short raises SIGBUS):
exit 0 with nothing on stderr and the dump byte for byte the dump of the file as it
was, or exit 1 with exactly one line `mhaviz: m/model.safetensors: the file changed
while it was read` (or, cut before it was opened, `...: short file: ...`) and no
dump and no temporary file left. A replacement is not a change: the file opened is
read whole, so the dump is the original's. At least half of the truncations by
progress must be seen as a change (they land during the load), and the growths
that land before the end of the load too. Exits 1 with "FAIL ..." lines."""
import os
import random
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
FAILS = []
SHAPE = ["--layers", "6", "--heads", "8", "--embd", "512", "--positions", "1024"]  # 79 MB


def check(cond, msg):
    if not cond:
        FAILS.append(msg)
        print("FAIL:", msg, flush=True)


def snapshot(d):
    out = {}
    for base, dirs, files in os.walk(d):
        for n in dirs:
            out[os.path.relpath(os.path.join(base, n), d)] = "dir"
        for n in files:
            p = os.path.join(base, n)
            with open(p, "rb") as f:
                out[os.path.relpath(p, d)] = f.read()
    return out


def rchar(pid):
    try:
        with open(f"/proc/{pid}/io") as f:
            for line in f:
                if line.startswith("rchar:"):
                    return int(line.split()[1])
    except OSError:
        return None
    return None


class Run:
    """One `mhaviz --model m --dump out` in work/, on a fresh copy of the model."""

    def __init__(self, mhaviz, pristine, work, staged_from=None):
        shutil.rmtree(work, ignore_errors=True)
        os.makedirs(work)
        shutil.copytree(pristine, os.path.join(work, "m"))
        self.work = work
        self.st = os.path.join(work, "m", "model.safetensors")
        self.size = os.path.getsize(self.st)
        # a replacement is copied in before the program starts: copied after, the
        # copy of 79 MB could outlast the whole load on a quiet machine
        self.staged = os.path.join(work, "m", ".replacement")
        if staged_from:
            shutil.copyfile(staged_from, self.staged)
        self.p = subprocess.Popen([mhaviz, "--model", "m", "--dump", "out"], cwd=work,
                                  stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        self.t0 = time.monotonic()

    def wait_read(self, nbytes, timeout=120):
        """Waits until the program has read nbytes (rchar); False if it ended first."""
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            n = rchar(self.p.pid)
            if n is None or self.p.poll() is not None:
                return False
            if n >= nbytes:
                return True
            time.sleep(0.0003)
        return False

    def finish(self):
        err = self.p.communicate(timeout=300)[1].decode("utf-8", "replace")
        return self.p.returncode, err.splitlines()


def judge(where, run, rc, lines, ref, allow_short):
    """The rules above; returns 'changed', 'short' or 'complete'."""
    if rc < 0:
        check(False, f"{where}: killed by signal {signal.Signals(-rc).name}, stderr {lines[:3]}")
        return "signal"
    check(rc in (0, 1), f"{where}: exit {rc}, want 0 or 1: {lines[:3]}")
    names = sorted(os.listdir(run.work))
    if rc == 0:
        check(lines == [], f"{where}: exit 0 with stderr {lines[:3]}")
        check(names == ["m", "out"], f"{where}: the folder holds {names}")
        got = snapshot(os.path.join(run.work, "out"))
        check(got == ref, f"{where}: the dump differs from the original's "
              f"({sorted(k for k in set(got) | set(ref) if got.get(k) != ref.get(k))[:4]})")
        return "complete"
    changed = "mhaviz: m/model.safetensors: the file changed while it was read"
    short = "mhaviz: m/model.safetensors: short file: "
    ok = len(lines) == 1 and (lines[0] == changed or (allow_short and lines[0].startswith(short)))
    check(ok, f"{where}: stderr {lines[:3]}, want one line {changed!r}"
          + (" or 'short file'" if allow_short else ""))
    check(names == ["m"], f"{where}: a dump or temporary file left behind: {names}")
    return "changed" if lines[:1] == [changed] else "short"


def main():
    if len(sys.argv) != 2:
        print("usage: ckpt_change_check.py MHAVIZ", file=sys.stderr)
        return 2
    mhaviz = os.path.abspath(sys.argv[1])
    if not os.path.exists("/proc/self/io"):
        print("no /proc/PID/io: skipped")
        return 77
    seed = int(os.environ.get("MHAVIZ_TEST_SEED", random.randrange(1 << 30)))
    print(f"seed {seed} (MHAVIZ_TEST_SEED repeats it)", flush=True)
    rng = random.Random(seed)
    tmp = tempfile.mkdtemp(prefix="ckpt_change_")
    try:
        pristine, other = os.path.join(tmp, "pristine"), os.path.join(tmp, "other")
        for d, s in ((pristine, "0"), (other, "1")):
            subprocess.run([sys.executable, os.path.join(HERE, "gpt2_gen.py"), d, *SHAPE,
                            "--seed", s], check=True, stdout=subprocess.DEVNULL)
        work = os.path.join(tmp, "work")
        # the dump of the file as it is, and how long a whole run takes here
        secs = []
        for _ in range(3):
            run = Run(mhaviz, pristine, work)
            rc, lines = run.finish()
            secs.append(time.monotonic() - run.t0)
            check(rc == 0 and lines == [], f"intact run: exit {rc}, {lines[:3]}")
        ref = snapshot(os.path.join(work, "out"))
        t_run = statistics.median(secs)
        size = os.path.getsize(os.path.join(pristine, "model.safetensors"))
        before = sum(os.path.getsize(os.path.join(pristine, n))
                     for n in ("config.json", "vocab.json", "merges.txt")) * 2
        print(f"a whole run takes {t_run:.2f} s; model.safetensors is {size} bytes", flush=True)
        tally = {}

        def note(kind, outcome):
            tally.setdefault(kind, {}).setdefault(outcome, 0)
            tally[kind][outcome] += 1

        # 20 truncations by the clock
        for i in range(20):
            delay, to = rng.uniform(0, t_run), rng.randrange(0, size)
            run = Run(mhaviz, pristine, work)
            time.sleep(max(0.0, delay - (time.monotonic() - run.t0)))
            os.truncate(run.st, to)
            rc, lines = run.finish()
            where = f"truncate to {to} at {delay:.3f} s (run {i + 1})"
            note("truncate by clock", judge(where, run, rc, lines, ref, allow_short=True))
        # 20 truncations, 5 growths, 5 replacements by progress
        plan = ["truncate"] * 20 + ["grow"] * 5 + ["replace"] * 5
        for i, what in enumerate(plan):
            share = rng.uniform(0.02, 0.9)
            replacement = os.path.join(other, "model.safetensors") if what == "replace" else None
            run = Run(mhaviz, pristine, work, staged_from=replacement)
            reached = run.wait_read(before + int(share * size))
            check(reached, f"{what} {i + 1}: the program never read {share:.0%} of the file")
            if what == "truncate":
                to = rng.randrange(0, size)
                os.truncate(run.st, to)
                where = f"truncate to {to} after {share:.0%} read (run {i + 1})"
            elif what == "grow":
                with open(run.st, "ab") as f:
                    f.write(b"\0" * rng.randrange(1, 1 << 20))
                where = f"grow after {share:.0%} read (run {i + 1})"
            else:
                os.rename(run.staged, run.st)
                where = f"replace after {share:.0%} read (run {i + 1})"
            rc, lines = run.finish()
            outcome = judge(where, run, rc, lines, ref, allow_short=False)
            note(f"{what} by progress", outcome)
            if what == "replace":
                check(outcome == "complete", f"{where}: the file opened was not read whole")
        for kind, outcomes in tally.items():
            print(f"{kind}: {outcomes}")
        changed = tally.get("truncate by progress", {}).get("changed", 0)
        check(changed >= 10, f"only {changed} of 20 truncations by progress were seen as a "
              "change: they did not land during the load")
        check(tally.get("grow by progress", {}).get("changed", 0) >= 1,
              "no growth during the load was seen as a change")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if FAILS:
        print(f"ckpt_change_check: {len(FAILS)} failures")
        return 1
    print("ckpt_change_check: every run ended by exit, with a whole dump or one line")
    return 0


if __name__ == "__main__":
    sys.exit(main())
