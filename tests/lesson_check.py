#!/usr/bin/python3
"""lesson_check.py MHAVIZ: lesson files through the real binary, headless.

Broken lessons (unknown name, bad value, a name twice, an empty step, broken
markup, a 50 MB file, a NUL byte, invalid UTF-8, a missing file, a folder, a head
that the step's own view does not have, an unknown or bad `do =`, text before the
first step): each gives exactly one stderr line `mhaviz: FILE:LINE: ...` with the
line the test expects, exit 2 (1 for a file that cannot be read), nothing on
stdout and nothing written. Good lessons: `--step K --dump` writes step K's
model (h from the file, the causal mask's zeros, rows summing to 1, checked with
NumPy); a deck has one page per step (pdfinfo), each page a 16:9 slide (960 x 540 pt) and
holding its step's heading (pdftotext), one progress line per page on stderr,
the same text when made twice; a PNG deck has a file per step at --size x
--scale pixels, byte-identical when made twice. A deck whose training would take
more than 10 minutes is refused up front with the estimate. Every built-in lesson
as a deck; under MHAVIZ_TEST_SAMPLE=k (the sanitizer build) every k-th of them (in
the order of their names), the normal build every one. Exits 1 on any failure."""
import os
import re
import shutil
import subprocess
import sys
import tempfile

import numpy as np

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
from e2e_util import Sample

FAILURES = []
SAMPLE = Sample("lesson_check")  # the sanitizer build: every k-th built-in deck


def fail(where, expected, got):
    FAILURES.append(where)
    print(f"FAIL {where}: expected {expected}, got {got}", file=sys.stderr)


def run(mhaviz, args, cwd, timeout=240):
    return subprocess.run([mhaviz] + args, cwd=cwd, capture_output=True, timeout=timeout)


GOOD = """# a lesson for the tests
title = Test lesson

step = One head: d_k = d_model
h = 1
| The whole of d_model in one head.

step = Four heads
h = 4
focus = 2
| Each head gets d_k = d_model / h.
do = stages 0.5

step = Causal
mask = causal
focus = none
| A token sees only itself and earlier ones.
"""
HEADINGS = ["One head: d_k = d_model", "Four heads", "Causal"]
STEP_H = [1, 4, 4]
STEP_CAUSAL = [False, False, True]

# (file name, content bytes, line the message names, status, a word the message holds)
BROKEN = [
    ("unknown.lesson", b"title = t\nstep = a\nh = 2\nbogus = 4\n", 4, 2, "bogus"),
    ("badvalue.lesson", b"title = t\nstep = a\nh = four\n", 3, 2, "h"),
    ("twice.lesson", b"title = t\nstep = a\nh = 2\nh = 4\n", 4, 2, "twice"),
    ("empty.lesson", b"title = t\nstep = a\nh = 2\n\nstep = b\n\nstep = c\nh = 1\n", 5, 2, "empty"),
    ("markup.lesson", b"title = t\nstep = a\nh = 2\n| W_i^{Q\n", 4, 2, "column"),
    ("heading.lesson", b"title = t\nstep = *bold\nh = 2\n", 2, 2, "column"),
    ("nul.lesson", b"title = t\nstep = a\nh = 2\x00\n", 3, 2, "NUL"),
    ("utf8.lesson", b"title = t\nstep = a\n| caf\xe9\n", 3, 2, "UTF-8"),
    ("head.lesson", b"title = t\nstep = a\nh = 4\nfocus = 5\n", 4, 2, "head 5"),
    ("head2.lesson", b"title = t\nstep = a\nh = 8\nfocus = 6\nstep = b\nh = 2\n", 5, 2, "head 6"),
    ("ablate.lesson", b"title = t\nstep = a\nh = 2\nablate = 1,3\n", 4, 2, "head 3"),
    ("do.lesson", b"title = t\nstep = a\nh = 2\ndo = dance\n", 4, 2, "unknown action"),
    ("stages.lesson", b"title = t\nstep = a\nh = 2\ndo = stages 0\n", 4, 2, "stages"),
    ("nofocus.lesson", b"title = t\nstep = a\nh = 2\ndo = stages 1\n", 2, 2, "focus"),
    ("write.lesson", b"title = t\nstep = a\nh = 2\ndo = write 0\n", 4, 2, "write N"),
    ("nomodel.lesson", b"title = t\nstep = a\nh = 2\ndo = write 5\n", 2, 2, "no model"),
    ("before.lesson", b"title = t\nh = 2\nstep = a\nh = 4\n", 2, 2, "before the first step"),
    ("nostep.lesson", b"# nothing\ntitle = t\n", 2, 2, "no step"),
    ("noteq.lesson", b"title = t\nstep = a\nh 2\n", 3, 2, "not a setting"),
    # found only when the step is shown: its setting's line, as apply says it
    ("model.lesson", b"title = t\nstep = a\nh = 2\nmodel = /nonexistent/gpt2\n", 4, 2, "model"),
]


def check_broken(mhaviz, tmp):
    cases = list(BROKEN)
    big = os.path.join(tmp, "big.lesson")  # 50 MB: refused by its size, never read whole
    with open(big, "wb") as f:
        f.write(b"title = t\nstep = a\n")
        f.write(b"| " + b"x" * 1000 + b"\n")
        f.truncate(50 * 1000 * 1000)
    for name, content, _, _, _ in cases:
        with open(os.path.join(tmp, name), "wb") as f:
            f.write(content)
    cases.append(("big.lesson", None, 1, 2, "1 MiB"))
    cases.append(("missing.lesson", None, 1, 2, "cannot open"))
    os.mkdir(os.path.join(tmp, "folder.lesson"))
    cases.append(("folder.lesson", None, 1, 2, "folder"))
    for name, _, line, status, word in cases:
        for mode in (["--export", "out.png"], ["--export", "deck.pdf"], ["--step", "1", "--dump", "out"]):
            work = tempfile.mkdtemp(dir=tmp)
            path = os.path.join(tmp, name)
            p = run(mhaviz, ["--lesson", path] + mode, work)
            where = f"{name} {' '.join(mode)}"
            err = p.stderr.decode("utf-8", "replace").splitlines()
            if p.returncode != status:
                fail(where + ": status", status, p.returncode)
            if len(err) != 1:
                fail(where + ": stderr lines", 1, err)
                continue
            want = f"mhaviz: {path}:{line}: "
            if not err[0].startswith(want):
                fail(where + ": message", want + "...", err[0])
            if word.lower() not in err[0].lower():
                fail(where + ": message names", word, err[0])
            if p.stdout:
                fail(where + ": stdout", "nothing", p.stdout[:80])
            if os.listdir(work):
                fail(where + ": files written", "none", os.listdir(work))


USAGE = [
    (["--step", "2", "--export", "x.png"], "--step 2: only with --lesson"),
    (["--lesson", "L", "--step", "2"], "--step 2: only with --export or --dump"),
    (["--lesson", "L", "--dump", "out"], "give --step K"),
    (["--lesson", "L", "--step", "0", "--export", "x.png"], "--step '0'"),
    (["--lesson", "L", "--compare", "h=1"], "--lesson and --compare"),
    (["--lesson", "L", "--bench"], "--lesson: does nothing with --bench"),
]


def check_usage(mhaviz, tmp, lesson):
    """--lesson and --step with what they do not go with: exit 2, one line."""
    for args, want in USAGE:
        args = [lesson if a == "L" else a for a in args]
        work = tempfile.mkdtemp(dir=tmp)
        p = run(mhaviz, args, work)
        err = p.stderr.decode().splitlines()
        if p.returncode != 2 or len(err) != 1 or not err[0].startswith("mhaviz: ") or want not in err[0]:
            fail(f"usage {' '.join(args)}", f"exit 2, one line with '{want}'", (p.returncode, err))
        if os.listdir(work):
            fail(f"usage {' '.join(args)}: files", "none", os.listdir(work))


def check_dump(mhaviz, tmp, lesson):
    for k in (1, 2, 3):
        out = os.path.join(tmp, f"dump{k}")
        p = run(mhaviz, ["--lesson", lesson, "--step", str(k), "--dump", out], tmp)
        if p.returncode != 0:
            fail(f"--step {k} --dump", 0, (p.returncode, p.stderr[-300:]))
            continue
        attn = np.load(os.path.join(out, "attn.npy"))
        if attn.shape[0] != STEP_H[k - 1]:
            fail(f"step {k}: heads in attn.npy", STEP_H[k - 1], attn.shape)
        if not np.allclose(attn.sum(axis=-1), 1.0, atol=1e-5):
            fail(f"step {k}: rows of softmax", "sum 1 (1e-5)", attn.sum(axis=-1).max())
        upper = np.triu(np.ones(attn.shape[-2:], bool), 1)
        above = float(np.abs(attn[..., upper]).max())
        if STEP_CAUSAL[k - 1] and above > 0.0:
            fail(f"step {k}: causal", "0 above the diagonal", above)
        if not STEP_CAUSAL[k - 1] and above < 1e-6:
            fail(f"step {k}: not causal", "weight above the diagonal", above)
    p = run(mhaviz, ["--lesson", lesson, "--step", "4", "--export", "x.png"], tmp)
    err = p.stderr.decode().splitlines()
    if p.returncode != 2 or len(err) != 1 or "--step 4" not in err[0]:
        fail("--step 4 of 3", "exit 2 and one line naming --step 4", (p.returncode, err))


def pdf_pages(path):
    info = subprocess.run(["pdfinfo", path], capture_output=True, text=True).stdout
    pages = int(re.search(r"Pages:\s+(\d+)", info).group(1))
    size = re.search(r"Page size:\s+([\d.]+) x ([\d.]+)", info)
    return pages, (float(size.group(1)), float(size.group(2)))


def check_deck(mhaviz, tmp, lesson):
    texts = []
    for run_no in (1, 2):
        work = tempfile.mkdtemp(dir=tmp)
        p = run(mhaviz, ["--lesson", lesson, "--export", "deck.pdf"], work)
        if p.returncode != 0:
            fail("deck.pdf", 0, (p.returncode, p.stderr[-400:]))
            return
        if os.listdir(work) != ["deck.pdf"]:
            fail("deck.pdf: files", ["deck.pdf"], os.listdir(work))
        progress = [l for l in p.stderr.decode().splitlines() if l.startswith("deck: page")]
        if len(progress) != len(HEADINGS):
            fail("deck.pdf: progress lines", len(HEADINGS), progress)
        if not os.path.exists(os.path.join(work, "deck.pdf")):
            return
        pages, size = pdf_pages(os.path.join(work, "deck.pdf"))
        if pages != len(HEADINGS):
            fail("deck.pdf: pages", len(HEADINGS), pages)
        # a slide's page: 13.333 x 7.5 in (960 x 540 pt), whatever the layout's pixels
        if abs(size[0] - 960) > 0.5 or abs(size[1] - 540) > 0.5:
            fail("deck.pdf: page size", "960 x 540 pt (13.33 x 7.5 in)", size)
        page_text = []
        for k in range(1, pages + 1):
            t = subprocess.run(["pdftotext", "-f", str(k), "-l", str(k), "-layout",
                                os.path.join(work, "deck.pdf"), "-"],
                               capture_output=True, text=True).stdout
            page_text.append(t)
            flat = " ".join(t.split())
            heading = HEADINGS[k - 1]
            if " ".join(heading.replace("_", "").split()) not in flat.replace("_", ""):
                # subscripts come out as separate runs: compare the words in order
                words = re.findall(r"\w+", heading)
                pos = 0
                for w in words:
                    pos = flat.find(w, pos)
                    if pos < 0:
                        fail(f"deck page {k}: heading", heading, flat[:200])
                        break
            if f"{k}" not in flat or str(len(HEADINGS)) not in flat:
                fail(f"deck page {k}: step k of N", f"{k} of {len(HEADINGS)}", flat[:200])
            for hint in ("Ctrl+", "F1", "help", ", and . step", "Esc"):
                if hint in t:
                    fail(f"deck page {k}: UI hints", "none", hint)
        texts.append(page_text)
    if texts[0] != texts[1]:
        fail("deck.pdf made twice", "the same text", "different")
    pngs = []
    for run_no in (1, 2):
        work = tempfile.mkdtemp(dir=tmp)
        p = run(mhaviz, ["--lesson", lesson, "--export", "deck.png", "--size", "960x540",
                         "--scale", "2"], work)
        if p.returncode != 0:
            fail("deck.png", 0, (p.returncode, p.stderr[-400:]))
            return
        names = sorted(os.listdir(work))
        want = [f"deck-{k:02d}.png" for k in range(1, len(HEADINGS) + 1)]
        if names != want:
            fail("deck.png: files", want, names)
            return
        for n in names:
            ident = subprocess.run(["identify", "-format", "%w %h", os.path.join(work, n)],
                                   capture_output=True, text=True).stdout.strip()
            if ident != "1920 1080":
                fail(f"deck.png {n}: size (--size 960x540 --scale 2)", "1920 1080", ident)
        pngs.append([open(os.path.join(work, n), "rb").read() for n in names])
    if pngs[0] != pngs[1]:
        fail("deck.png made twice", "byte-identical pages", "different")


TRAINS = """title = Training
step = Untrained
h = 2
| Before training.
step = Trained pair
| After 150 steps of pair.
do = train 150
step = Trained longer, at h = 4
train-h = 4
| pair converges near step 300; the step asks for 600 and gets them.
do = train 600
step = Back
h = 4
| Attention again.
"""


def check_training_deck(mhaviz, tmp):
    """A step that trains runs its training headless to the same steps: the page
    says 150 steps and shows the trained model; a second training step shows its own
    run (h = 4), trained the 600 steps it asks for although pair converges near 300
    (the window's stop rule does not cut a lesson's run); the next step is attention
    again; two decks are byte-identical; --step K --export of a training step draws
    its run trained, as its page does."""
    lesson = os.path.join(tmp, "trains.lesson")
    with open(lesson, "w") as f:
        f.write(TRAINS)
    decks = []
    for run_no in (1, 2):
        work = tempfile.mkdtemp(dir=tmp)
        p = run(mhaviz, ["--lesson", lesson, "--export", "deck.png", "--size", "960x540"], work)
        if p.returncode != 0:
            fail("training deck", 0, (p.returncode, p.stderr[-400:]))
            return
        decks.append([open(os.path.join(work, f"deck-{k:02d}.png"), "rb").read()
                      for k in (1, 2, 3, 4)])
    if decks[0] != decks[1]:
        fail("training deck made twice", "byte-identical pages", "different")
    work = tempfile.mkdtemp(dir=tmp)
    p = run(mhaviz, ["--lesson", lesson, "--export", "deck.pdf"], work)
    pdf = os.path.join(work, "deck.pdf")
    if p.returncode != 0 or not os.path.exists(pdf):
        fail("training deck.pdf", 0, (p.returncode, p.stderr[-400:]))
        return
    pages = [subprocess.run(["pdftotext", "-f", str(k), "-l", str(k), pdf, "-"],
                            capture_output=True, text=True).stdout for k in (1, 2, 3, 4)]
    if "150 steps" not in pages[1] or "pair" not in pages[1]:
        fail("training deck page 2", "trained on pair, 150 steps", pages[1][:300])
    if "600 steps" not in pages[2] or "h = 4" not in pages[2]:
        fail("training deck page 3", "its own run: h = 4, 600 steps", pages[2][:300])
    for k in (0, 3):
        if "Held-out accuracy" in pages[k]:
            fail(f"training deck page {k + 1}", "attention, not training mode", pages[k][:200])
    # one step alone (--step K --export) shows what its page shows: a training step's
    # own run trained to its steps, not the attention view of the steps before it
    for k, want, absent in ((3, ("600 steps", "h = 4", "Held-out accuracy"), None),
                            (4, (), "Held-out accuracy")):
        p = run(mhaviz, ["--lesson", lesson, "--step", str(k), "--export", f"s{k}.pdf"], work)
        if p.returncode != 0:
            fail(f"--step {k} --export", 0, (p.returncode, p.stderr[-300:]))
            continue
        text = subprocess.run(["pdftotext", os.path.join(work, f"s{k}.pdf"), "-"],
                              capture_output=True, text=True).stdout
        if any(w not in text for w in want) or (absent and absent in text):
            fail(f"--step {k} --export", f"{want} shown{', no ' + absent if absent else ''}",
                 text[:300])


def step_minutes(T, classes, d, layers, mlp, steps, batch=32):
    """The README's estimate of a deck's training: the matrix products of a step
    (forward 2 flops a multiply-add, backward twice that) at 20 GFLOP/s, plus
    0.3 ms a step."""
    block = 8 * T * d * d + 4 * T * T * d + (16 * T * d * d if mlp else 0)
    flops = 3 * batch * (layers * block + 2 * T * d * classes)
    return steps * (flops / 20e9 + 0.3e-3) / 60


# (lesson, the step line the message names, its words, estimated minutes)
SLOW = [
    # issue 34: accepted, then nothing for 900 s
    ("title = t\nstep = a\ndo = train 1000000\n", 2, "pair, h 2, d_model 32, 1 layer:",
     step_minutes(12, 25, 32, 1, False, 1000000)),
    # the step's own training settings: induction (T 24, 16 classes), 2 layers, MLP
    ("title = t\nstep = a\nh = 2\n| before\nstep = b\ntrain = induction\ntrain-h = 8\n"
     "train-d_model = 256\ntrain-layers = 2\ntrain-mlp = on\ndo = train 10000\n", 5,
     "induction, h 8, d_model 256, 2 layers, MLP:",
     step_minutes(24, 16, 256, 2, True, 10000)),
    # each step under the bound, the deck over it; the message names the longer one
    ("title = t\nstep = a\ndo = train 300000\nstep = b\nseed = 2\ndo = train 400000\n", 4,
     "do = train 400000", step_minutes(12, 25, 32, 1, False, 700000)),
]


def check_training_bound(mhaviz, tmp):
    """A deck whose training would take more than 10 minutes (estimated as the
    README says) is refused before anything runs: exit 2, one line naming the
    lesson, the step's line, the estimate in minutes and the bound, nothing
    written. Without --export the same lesson is not refused (the window runs it
    live, as long as it is shown): only the deck is bounded."""
    for i, (text, line, words, minutes) in enumerate(SLOW):
        lesson = os.path.join(tmp, f"slow{i}.lesson")
        with open(lesson, "w") as f:
            f.write(text)
        work = tempfile.mkdtemp(dir=tmp)
        p = run(mhaviz, ["--lesson", lesson, "--export", "deck.pdf"], work, timeout=60)
        err = p.stderr.decode()
        lines = err.splitlines()
        want = f"mhaviz: {lesson}:{line}: "
        if (p.returncode != 2 or len(lines) != 1 or not lines[0].startswith(want)
                or words not in lines[0] or f"about {minutes:.0f} min" not in lines[0]
                or "10 min" not in lines[0]):
            fail(f"slow lesson {i}", f"exit 2, {want}... {words} about {minutes:.0f} min",
                 (p.returncode, err))
        if os.listdir(work):
            fail(f"slow lesson {i}", "nothing written", os.listdir(work))
    # the window's lesson is not bounded: --step 1 (attention) of the second still dumps
    p = run(mhaviz, ["--lesson", os.path.join(tmp, "slow1.lesson"), "--step", "1", "--dump", "d"],
            tmp, timeout=60)
    if p.returncode != 0:
        fail("slow lesson 1 --step 1 --dump", 0, (p.returncode, p.stderr[-300:]))


HINTS = ("F5", "PgUp", "PgDn", "Esc", "Ctrl+", "(M, E)", ", and . step")


def check_builtin_decks(mhaviz, tmp):
    """Every built-in lesson (examples/lessons) as a PDF deck: one 16:9 page per step
    (the steps counted here from the file's own `step =` lines), each page carrying its
    step's heading (pdftotext; markup aside, its words) and "step k of N", and no key
    hint anywhere."""
    here = os.path.dirname(os.path.abspath(__file__))
    folder = os.path.join(here, "..", "examples", "lessons")
    for name in SAMPLE.pick(sorted(n for n in os.listdir(folder) if n.endswith(".lesson"))):
        path = os.path.join(folder, name)
        heads = [ln.split("=", 1)[1].strip() for ln in open(path, encoding="utf-8")
                 if re.match(r"\s*step\s*=", ln)]
        if any(re.match(r"\s*model\s*=", ln) for ln in open(path, encoding="utf-8")):
            path = models_lesson(mhaviz, tmp, name, path)
            if not path:
                continue
        work = tempfile.mkdtemp(dir=tmp)
        p = run(mhaviz, ["--lesson", path, "--export", "deck.pdf"], work)
        pdf = os.path.join(work, "deck.pdf")
        if p.returncode != 0 or not os.path.exists(pdf):
            fail(f"{name} deck", 0, (p.returncode, p.stderr[-300:]))
            continue
        pages, size = pdf_pages(pdf)
        if pages != len(heads):
            fail(f"{name} deck pages", len(heads), pages)
        if abs(size[0] / size[1] - 16 / 9) > 0.01:
            fail(f"{name} deck page shape", "16:9", size)
        for k in range(1, min(pages, len(heads)) + 1):
            text = subprocess.run(["pdftotext", "-f", str(k), "-l", str(k), pdf, "-"],
                                  capture_output=True, text=True).stdout
            flat = " ".join(text.split())
            words = [w for w in re.split(r"[\s_^{}*]+", heads[k - 1]) if len(w) > 3 and
                     w.isalpha()]
            missing = [w for w in words if w not in flat]
            if missing:
                fail(f"{name} page {k}: its heading's words", heads[k - 1], missing)
            if f"step {k} of {len(heads)}" not in flat:
                fail(f"{name} page {k}: step k of N", f"step {k} of {len(heads)}", flat[-120:])
            hints = [h for h in HINTS if h in text]
            if hints:
                fail(f"{name} page {k}: no key hints", "none", hints)


def models_lesson(mhaviz, tmp, name, path):
    """A built-in lesson that needs real models (lessons 4 and 5): where they are not beside
    it (never in the repository), its deck is refused up front naming the files to fetch and
    their page (exit 2, one line, nothing written), lesson 4's too, whose first steps need
    none; then the lesson copied beside test
    checkpoints of random weights in the folders it names (lesson_facts.make_models), the
    copy's path to make its deck; None when it failed."""
    import lesson_facts
    _, steps = lesson_facts.parse(path)
    names = [st["settings"]["model"] for st in steps if "model" in st["settings"]]
    if not all(os.path.isdir(os.path.join(os.path.dirname(path), m)) for m in names):
        work = tempfile.mkdtemp(dir=tmp)
        p = run(mhaviz, ["--lesson", path, "--export", "deck.pdf"], work)
        err = p.stderr.decode(errors="replace")
        if (p.returncode != 2 or len(err.splitlines()) != 1 or not err.startswith("mhaviz: ")
                or "download config.json, model.safetensors" not in err
                or "huggingface.co/" not in err or os.listdir(work)):
            fail(f"{name} without its models", "exit 2, one line naming the files and the page,"
                 " nothing written", (p.returncode, err[-300:], os.listdir(work)))
    root = tempfile.mkdtemp(dir=tmp)
    try:
        lesson_facts.make_models(path, steps, root)
    except SystemExit as e:
        fail(f"{name} test checkpoints", "made", str(e))
        return None
    copy = os.path.join(root, name)
    shutil.copy(path, copy)
    return copy


def main():
    mhaviz = os.path.abspath(sys.argv[1])
    with tempfile.TemporaryDirectory() as tmp:
        lesson = os.path.join(tmp, "good.lesson")
        with open(lesson, "w") as f:
            f.write(GOOD)
        check_broken(mhaviz, tmp)
        check_usage(mhaviz, tmp, lesson)
        check_dump(mhaviz, tmp, lesson)
        check_deck(mhaviz, tmp, lesson)
        check_training_deck(mhaviz, tmp)
        check_training_bound(mhaviz, tmp)
        check_builtin_decks(mhaviz, tmp)
        # the README's pictures' lesson: three pages, its headings on them
        readme = os.path.join(os.path.dirname(os.path.abspath(__file__)), "lessons", "readme.lesson")
        work = tempfile.mkdtemp(dir=tmp)
        p = run(mhaviz, ["--lesson", readme, "--export", "r.pdf"], work)
        pdf = os.path.join(work, "r.pdf")
        if p.returncode != 0 or not os.path.exists(pdf) or pdf_pages(pdf)[0] != 3:
            fail("readme.lesson deck", "3 pages", (p.returncode, p.stderr[-300:]))
    if FAILURES:
        print(f"{len(FAILURES)} failure(s)", file=sys.stderr)
        return 1
    print("lesson_check: all good")
    return 0


if __name__ == "__main__":
    sys.exit(main())
