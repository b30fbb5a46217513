#!/usr/bin/python3
"""lesson_facts_check.py MHAVIZ: lesson_facts.py refuses the facts it exists to refuse.

lesson_facts.py passes a fact only when it is true on its step and false on the step with
its "false at" settings applied. This runs it on small lessons written here, each fact of
which must be refused, naming its line and why:
  - the claims of the former lesson 2, as facts about what they say: "one head has to
    compromise" (one head cannot solve pair: h = 1, 500 steps, seed 1 reaches 100 %), and
    "a previous-word head needs 8 dimensions" (at d_k = 2, --train prev -H 16, heads put
    0.97 of their weight on i-1): false on their steps;
  - the former lesson 2 step 6's own fact, the designed heads' label, under the view where
    that claim is tested (trained heads of d_k = 2): it names nothing there;
  - a fact true whatever its claim (MultiHead has the shape of X, at any d_model): not false
    at its "false at" settings;
  - a fact whose "false at" view has no such head: an error is not "false";
  - a fact line without its claim or its "false at": refused before anything runs;
  - on a loaded model's steps (test checkpoints of random weights, as lesson 5's are
    checked): "no mask" on GPT-2, the literature's "over half of layer 9's attention on
    [SEP]" (true of the trained BERT, not of random weights), rows adding up to 1 (true
    whatever the model) and a removed head moving the blank "false" where another head is
    removed: each refused, and the sound ones pass.
A lesson of sound facts passes (exit 0), so the refusals are the facts', not the script's.
"""
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
FAILURES = []

FALSE_CLAIMS = """title = Claims of the former lesson 2
step = One head has to compromise
train = pair
train-h = 1
train-d_model = 32
train-seed = 1
do = train 500
| With h = 1 the only head splits its weight between the two.
# fact: [one head cannot solve pair] acc <= 0.9 | false at: train-h = 2

step = A previous-word head needs 8 dimensions
train = prev
train-h = 16
do = train 500
| d_k = 2: these heads are too small for a previous-word head.
# fact: [no head of d_k = 2 puts half of its weight on i-1] max(mass_prev) < 0.5 | false at: train-h = 4
# fact: [the former fact: the designed heads' label] all(p == 'none (d_k too small)' for i, p in enumerate(patterns) if i % 6 in (0, 1, 3, 4)) | false at: train-h = 4

step = Designed heads
train = off
sample = 2
h = 4
d_model = 64
weights = patterns
| MultiHead has the shape of X; head 4 attends to itself.
# fact: [MultiHead has the shape of X] shape('out') == shape('X') | false at: d_model = 32
# fact: [head 4 attends to itself] self_(4) >= 0.9 | false at: h = 2
"""
EXPECTED = [  # (line, what the failure says)
    (9, "false on the step"),
    (16, "false on the step"),
    (17, "false on the step"),
    (26, "not false at"),
    (27, "not false at"),
]

SOUND = """title = Sound facts
step = Designed heads
sample = 2
h = 4
d_model = 64
weights = patterns
| Head 1 attends to the previous word.
# fact: [head 1 attends to the previous word] prev(1) >= 0.9 | false at: weights = random
"""

NO_CLAIM = """title = A fact without its claim
step = Designed heads
sample = 2
weights = patterns
| Head 1 attends to the previous word.
# fact: prev(1) >= 0.9
"""


MODEL_CLAIMS = """title = Claims on loaded models
step = GPT-2
model = models/gpt2
text = the cat sat on the mat because it was tired
| GPT-2 reads both ways.
# fact: [each row gives weight to the tokens after it] both_ways() | false at: model = models/bert-base-uncased

step = BERT
model = models/bert-base-uncased
layer = 9
| Over half of layer 9's attention goes to [SEP]; every row adds up to 1; no mask.
# fact: [over half on SEP] column(n - 1) > 0.5 | false at: layer = 1
# fact: [every row adds up to 1] rows_sum_one() | false at: model = models/gpt2
# fact: [no mask] both_ways() | false at: model = models/gpt2

step = A head removed
text = the cat sat on the [MASK] because it was tired
model-ablate = 12:5
| Head 5 of layer 12 removed: the blank moves.
# fact: [the blank moves] fill_change() > 1e-6 | false at: model-ablate = 12:6
# fact: [the blank moves without head 5] fill_change() > 1e-6 | false at: model-ablate = none
"""
MODEL_EXPECTED = [(6, "false on the step"), (12, "false on the step"), (13, "not false at"),
                  (20, "not false at")]


def fail(what, want, got):
    FAILURES.append(what)
    print(f"FAIL {what}: want {want}, got {got}", file=sys.stderr)


def facts(mhaviz, tmp, name, text):
    path = os.path.join(tmp, name)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    # every step, also in the sanitizer build: the planted faults must all be met
    env = {k: v for k, v in os.environ.items() if k != "MHAVIZ_TEST_SAMPLE"}
    p = subprocess.run([sys.executable, os.path.join(HERE, "lesson_facts.py"), mhaviz, path],
                       capture_output=True, text=True, timeout=300, env=env)
    return path, p


def main():
    mhaviz = os.path.abspath(sys.argv[1])
    with tempfile.TemporaryDirectory() as tmp:
        path, p = facts(mhaviz, tmp, "false.lesson", FALSE_CLAIMS)
        if p.returncode != 1:
            fail("false facts: exit", 1, (p.returncode, p.stderr[-300:]))
        lines = [ln for ln in p.stdout.splitlines() if ln.startswith(path + ":")]
        for no, why in EXPECTED:
            if not any(ln.startswith(f"{path}:{no}:") and why in ln for ln in lines):
                fail(f"false facts: line {no}", why, lines)
        if len(lines) != len(EXPECTED):
            fail("false facts: one line per refused fact", len(EXPECTED), lines)

        path, p = facts(mhaviz, tmp, "sound.lesson", SOUND)
        if p.returncode != 0 or "1 facts checked" not in p.stdout:
            fail("sound facts", "exit 0, 1 fact checked", (p.returncode, p.stdout[-300:]))

        path, p = facts(mhaviz, tmp, "models.lesson", MODEL_CLAIMS)
        if p.returncode != 1 or "6 facts checked" not in p.stdout:
            fail("model facts: exit", "1, 6 facts checked", (p.returncode, p.stdout[-300:],
                                                             p.stderr[-300:]))
        lines = [ln for ln in p.stdout.splitlines() if ln.startswith(path + ":")]
        for no, why in MODEL_EXPECTED:
            if not any(ln.startswith(f"{path}:{no}:") and why in ln for ln in lines):
                fail(f"model facts: line {no}", why, lines)
        if len(lines) != len(MODEL_EXPECTED):
            fail("model facts: one line per refused fact", len(MODEL_EXPECTED), lines)

        path, p = facts(mhaviz, tmp, "noclaim.lesson", NO_CLAIM)
        if p.returncode == 0 or f"{path}:6:" not in p.stdout + p.stderr:
            fail("a fact without its claim", f"refused at {path}:6",
                 (p.returncode, (p.stdout + p.stderr)[-300:]))
    if FAILURES:
        print(f"{len(FAILURES)} failure(s)", file=sys.stderr)
        return 1
    print("lesson_facts_check: all good")
    return 0


if __name__ == "__main__":
    sys.exit(main())
