"""train_replay_check.py: --train TASK --export FILE --moments K, the flip-book of a run.
- a .pdf has K pages, each titled "Training pair · step N of 500", N rising from 0 to the
  last step, the steps those of the schedule (each about 1.3 times the one before,
  recomputed here) picked evenly among the run's moments;
- every page has its pruning bars, measured (the bars of a moment are measured only for
  the pages shown: none says "measuring"; its note names the step's verdict);
- .png writes PATH-01.png ... PATH-K.png, every one 1600x900, and nothing else;
- the run trains the same with moments taken as without (the same summary);
- more moments than the run keeps, or --moments without --export, is refused before
  training (exit 2, one line, nothing written)."""
import os
import re
import subprocess
import sys
import tempfile

from e2e_util import Checker, no_display_env, png_ihdr

CK = Checker(verbose=bool(os.environ.get("MHAVIZ_TEST_VERBOSE")))


def schedule(steps):
    """The moments a run of `steps` steps keeps: replay.h's schedule, and the last step."""
    out, s = [], 0
    while s <= steps:
        out.append(s)
        s = max(s + 1, int(s * 1.3 + 0.5))
    if out[-1] != steps:
        out.append(steps)
    return out


def run(mhaviz, args, cwd):
    return subprocess.run([mhaviz] + args, cwd=cwd, env=no_display_env(OPENBLAS_NUM_THREADS="1"),
                          capture_output=True, text=True, timeout=300)


def main():
    mhaviz = sys.argv[1]
    with tempfile.TemporaryDirectory() as tmp:
        # the PDF flip-book
        K = 6
        r = run(mhaviz, ["--train", "pair", "-H", "2", "--export", "fb.pdf", "--moments", str(K)],
                tmp)
        CK.check(r.returncode == 0, "pdf: exit 0", 0, f"{r.returncode} {r.stderr[-300:]}")
        info = subprocess.run(["pdfinfo", os.path.join(tmp, "fb.pdf")], capture_output=True,
                              text=True).stdout
        m = re.search(r"Pages:\s+(\d+)", info)
        CK.check(m and int(m.group(1)) == K, "pdf: K pages", K, m and m.group(1))
        kept = schedule(500)
        want = [kept[round(j * (len(kept) - 1) / (K - 1))] for j in range(K)]
        got = []
        for page in range(1, K + 1):
            text = subprocess.run(["pdftotext", "-f", str(page), "-l", str(page),
                                   os.path.join(tmp, "fb.pdf"), "-"], capture_output=True,
                                  text=True).stdout
            t = re.search(r"Training pair \S step (\d+) of (\d+)", text)
            got.append(int(t.group(1)) if t else None)
            CK.check(t and int(t.group(2)) == 500, f"pdf page {page}: 'of 500'", 500,
                     t and t.group(2))
            CK.check(t and f"step {t.group(1)}" in text.replace(t.group(0), ""),
                     f"pdf page {page}: the marker's label on the plot", f"step {t and t.group(1)}",
                     "none")
            verdict = re.search(r"Remove the \d+ pale head|No head can go|The only head", text)
            CK.check(verdict and "measuring" not in text and "measured every second" not in text,
                     f"pdf page {page}: its bars measured, their verdict shown", "a verdict",
                     "measuring" if "measuring" in text else "none")
        print(f"pdf pages: steps {got} (the schedule's, evenly picked: {want})", flush=True)
        CK.check(got == want, "pdf: the steps of the pages", want, got)
        CK.check(all(a < b for a, b in zip(got, got[1:])), "pdf: steps rising", "rising", got)
        # the training is the same with moments as without
        plain = run(mhaviz, ["--train", "pair", "-H", "2"], tmp)
        CK.check(plain.returncode == 0 and plain.stdout == r.stdout,
                 "moments change nothing of the run (the summary)", plain.stdout, r.stdout)
        # numbered PNG pages
        os.mkdir(os.path.join(tmp, "png"))
        r = run(mhaviz, ["--train", "pair", "--steps", "100", "--export", "png/run.png",
                         "--moments", "4"], tmp)
        CK.check(r.returncode == 0, "png: exit 0", 0, f"{r.returncode} {r.stderr[-300:]}")
        files = sorted(os.listdir(os.path.join(tmp, "png")))
        CK.check(files == [f"run-0{k}.png" for k in range(1, 5)], "png: run-01 .. run-04 only",
                 "4 files", files)
        for f in files:
            w, h = png_ihdr(os.path.join(tmp, "png", f))[:2]
            CK.check((w, h) == (1600, 900), f"png {f}: 1600x900", (1600, 900), (w, h))
        # refused before training, nothing written
        os.mkdir(os.path.join(tmp, "none"))
        for args, what in (
                (["--train", "pair", "--export", "none/x.pdf", "--moments", "25"],
                 "more moments than a run of 500 steps keeps (24)"),
                (["--train", "pair", "--moments", "3"], "--moments without --export"),
                (["--train", "pair", "--export", "none/x.pdf", "--moments", "1"], "--moments 1"),
                (["--train", "pair", "--export", "none/x.pdf", "--moments", "3", "--sweep", "h"],
                 "--moments with --sweep")):
            r = run(mhaviz, args, tmp)
            lines = r.stderr.strip().splitlines()
            CK.check(r.returncode == 2 and len(lines) == 1 and lines[0].startswith("mhaviz: "),
                     f"refused: {what}", "exit 2, one line", f"{r.returncode} {lines}")
            CK.check(not os.listdir(os.path.join(tmp, "none")), f"refused: {what}: nothing written",
                     [], os.listdir(os.path.join(tmp, "none")))
            CK.check("pair: step" not in r.stderr, f"refused: {what}: before training",
                     "no progress line", r.stderr[-200:])
    return CK.finish("train_replay_check")


if __name__ == "__main__":
    sys.exit(main())
