#!/usr/bin/python3
"""lesson_facts.py: every built-in lesson's captions are true of their pictures.

A lesson file (README, "Lessons") is a title and steps; each step holds the settings that
change from the step before, caption lines and actions. A built-in step states facts about
its picture, and under its caption it carries them as comment lines (the app ignores
comments), one claim each:

    # fact: [CLAIM] EXPR | false at: NAME = VALUE; NAME = VALUE

CLAIM says in words which claim of the caption EXPR checks; EXPR is Python over the step's
numbers; the settings after "false at:" make a view of the same step where that claim is
false (h = 1 where the caption says two heads split the job). This script reads the file
with its own parser (written from the README's format, not the app's), builds each step's
view as the settings accumulate, computes that view with the app's plain command-line
options (`--dump`, or `--train ... --dump` for a training step, with as many steps as the
lesson trains), and requires every fact true there and false on the view with its "false
at" settings applied (the same training steps): a fact that stays true when its claim is
made false does not check that claim. A fact without a claim or a "false at" is refused.
For `cards`, the trained weights are run forward in NumPy (lesson_cards.py) to measure what
the heads do. With --lesson-binary it also asks the app for the step itself (`--lesson FILE
--step K --dump`) and requires the same attention as the options give (the lesson reaches
the view its settings name).

A step with `model = PATH` is computed with `--model PATH --dump` (its text, -H from
model-h, `--ablate` from model-ablate, `--kv-heads` from model-kv) and its facts read the
shown layer's attention, Q, K and V, tokens.json, next.json and fill.json (an encoder's
blanks), with every head on too where heads are removed, and as trained too where its K/V
heads are regrouped. The lesson's models are not in the repository: each is a test
checkpoint of random weights made here (TEST_MODELS, by the folder's name, through
encoder_gen.py, gpt2_gen.py and llama_gen.py, with the real model's heads at a small
width or depth) in a folder laid out
as the lesson names it, and the lesson is copied beside it for --lesson-binary. So a model
step's facts must be claims true of any weights of that kind (no mask, [CLS] and [SEP], a
removed head changes the blank), never of what a trained model learnt. With
--real-models the lesson's own folders are read instead (a teacher who downloaded them).

Under MHAVIZ_TEST_SAMPLE=k (the sanitizer build) the facts of every k-th step are checked
(counted over the lessons given, in order); the normal build checks every step's.

usage: lesson_facts.py MHAVIZ LESSON... [--lesson-binary] [--real-models]
"""
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile

import numpy as np

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
import lesson_cards  # noqa: E402
from e2e_util import Sample  # noqa: E402

FACT = re.compile(r"^\[(?P<claim>[^\]]+)\]\s*(?P<expr>.+?)\s*\|\s*false at:\s*(?P<cf>.+)$")

LOOK_ONLY = {  # settings that change how a view is drawn, not its numbers
    "focus", "stage", "values", "contrast", "colormap", "theme", "zoom", "present", "page",
    "panels", "diff", "pinned-page", "overview", "compare",
}


def parse(path):
    """(title, steps), each step {'line', 'heading', 'settings': {name: value},
    'caption': [lines], 'do': [actions], 'facts': [(line, claim, expr, {name: value})]};
    a fact line without a claim or a "false at" stops the check (naming its line)."""
    title, steps = None, []
    with open(path, encoding="utf-8") as f:
        for no, raw in enumerate(f, 1):
            line = raw.rstrip("\n")
            s = line.strip()
            if s.startswith("# fact:"):
                if not steps:
                    raise SystemExit(f"{path}:{no}: a fact before the first step")
                steps[-1]["facts"].append(parse_fact(path, no, s[len("# fact:"):].strip()))
                continue
            if not s or s.startswith("#"):
                continue
            if s.startswith("|"):
                steps[-1]["caption"].append(s[1:].strip())
                continue
            if "=" not in s:
                raise SystemExit(f"{path}:{no}: not a setting: {s}")
            name, value = (p.strip() for p in s.split("=", 1))
            if name == "title":
                title = value
            elif name == "step":
                steps.append({"line": no, "heading": value, "settings": {}, "caption": [],
                              "do": [], "facts": []})
            elif name == "do":
                steps[-1]["do"].append(value)
            else:
                steps[-1]["settings"][name] = value
    if not title or not steps:
        raise SystemExit(f"{path}: no title or no step")
    return title, steps


def parse_fact(path, no, text):
    """(line, claim, expr, {name: value}) of "[CLAIM] EXPR | false at: N = V; N = V"."""
    m = FACT.match(text)
    if not m:
        raise SystemExit(f"{path}:{no}: a fact must read \"[claim] EXPR | false at: NAME = "
                         f"VALUE\": {text}")
    cf = {}
    for part in m["cf"].split(";"):
        if "=" not in part:
            raise SystemExit(f"{path}:{no}: false at: not a setting: {part.strip()}")
        name, value = (x.strip() for x in part.split("=", 1))
        cf[name] = value
    return no, m["claim"].strip(), m["expr"], cf


TEXTS = ("sample", "text", "text-file")


def apply(view, settings, path):
    """view with settings applied as a lesson step applies them (one text at a time; a
    text file relative to the lesson's folder)."""
    v = dict(view)
    if any(name in settings for name in TEXTS):
        for name in TEXTS:
            v.pop(name, None)
    v.update(settings)
    if "text-file" in settings:
        v["text-file"] = os.path.join(os.path.dirname(os.path.abspath(path)),
                                      settings["text-file"])
    return v


# A lesson's model folders, by name: test checkpoints of random weights with the real
# model's layers and heads at a small width (lesson 5 shows bert-base-uncased's layer 9);
# SmolLM2-135M's heads (9 query heads on 3 K/V heads, head_dim 64, d_model 576, RoPE
# theta 100000) at 2 layers of its 30, a 64-wide MLP and the tests' byte-level tokenizer
TEST_MODELS = {
    "SmolLM2-135M": ("llama", dict(layers=2, hidden=576, heads=9, kv_heads=3, head_dim=64,
                                   ff=64, theta=100000.0, tokenizer="bytelevel")),
    "bert-base-uncased": ("bert", dict(layers=12, heads=12, hidden=48, ff=64, mlm=True,
                                       pretraining=True, positions=128)),
    "gpt2": ("gpt2", dict(n_layer=12, n_head=12, n_embd=48, n_positions=128)),
}
MODEL_ROOT = {}  # the folder a lesson's relative model paths are read from, by lesson
LESSON_COPY = {}  # the lesson copied beside its test checkpoints (--lesson-binary runs it)


def make_models(path, steps, root):
    """The test checkpoint of every model the lesson names, under root as the lesson
    names them (relative to its folder)."""
    import encoder_gen
    import gpt2_gen
    import llama_gen
    for st in steps:
        rel = st["settings"].get("model", "off")
        if rel == "off" or os.path.isabs(rel):
            continue
        out = os.path.join(root, rel)
        if os.path.isdir(out):
            continue
        name = os.path.basename(os.path.normpath(rel))
        if name not in TEST_MODELS:
            raise SystemExit(f"{path}:{st['line']}: model = {rel}: no test checkpoint for "
                             f"{name} (TEST_MODELS: {', '.join(TEST_MODELS)})")
        kind, args = TEST_MODELS[name]
        if kind == "gpt2":
            gpt2_gen.gen(out, vocab=gpt2_gen.train_tokenizer(None, 200), **args)
        elif kind == "llama":
            llama_gen.gen(out, kind, **args)
        else:
            encoder_gen.write(out, kind, **args)


def model_path(view, path):
    m = view["model"]
    return m if os.path.isabs(m) else os.path.join(
        MODEL_ROOT.get(path, os.path.dirname(os.path.abspath(path))), m)


def is_model(view):
    return view.get("model", "off") != "off"


def options(view, path=None, full=False, trained=False):
    """The app's command-line options for the numbers of a view (settings so far); a
    model's with its heads removed, or every head on (full), with its K/V heads regrouped,
    or as trained (trained)."""
    o = []
    if is_model(view):
        o = ["--model", model_path(view, path)]
        if "text" in view:
            o += ["--text", view["text"]]
        elif "sample" in view:
            o += ["--sample", view["sample"]]
        if view.get("model-h", "own") != "own":
            o += ["-H", view["model-h"]]
        if view.get("model-ablate", "none") != "none" and not full:
            o += ["--ablate", view["model-ablate"]]
        if view.get("model-kv", "own") != "own" and not trained:
            o += ["--kv-heads", view["model-kv"]]
        return o
    if "text-file" in view:
        o += ["--text-file", view["text-file"]]
    elif "text" in view:
        o += ["--text", view["text"]]
    elif "sample" in view:
        o += ["--sample", view["sample"]]
    m = {"h": "-H", "d_model": "-d", "seed": "-s", "mask": "--mask", "temperature":
         "--temperature", "weights": "--weights"}
    for k, flag in m.items():
        if k in view:
            o += [flag, view[k]]
    if view.get("scale") == "off":
        o.append("--no-scale")
    if view.get("pad", "off") != "off":
        o += ["--pad", view["pad"]]
    if view.get("ablate", "none") != "none":
        o += ["--ablate", view["ablate"]]
    if view.get("kv", "own") != "own":
        o += ["--kv-heads", view["kv"]]
    return o


def train_options(view, steps):
    o = ["--train", view["train"], "--steps", str(steps)]
    for k, flag in {"train-h": "-H", "train-d_model": "-d", "train-seed": "-s",
                    "train-layers": "--layers"}.items():
        if k in view:
            o += [flag, view[k]]
    if view.get("train-mlp") == "on":
        o.append("--mlp")
    return o


class Facts:
    """The names a fact may use, over one dump (of the view, or of a training run)."""

    def __init__(self, d, view, train=None, full=None, trained=None):
        self.d = d
        self.view = view
        self.train = train
        self.full = full  # a model's dump with every head on (its heads removed: X)
        self.trained = trained  # a model's dump with its own K/V heads (regrouped: J)
        if is_model(view):
            self.meta = json.load(open(os.path.join(d, "meta.json")))
            layer = int(view.get("layer", "1"))
            self.A = np.load(os.path.join(d, f"layer_{layer}", "attn.npy")).astype(np.float64)
        elif train is None:
            self.meta = json.load(open(os.path.join(d, "meta.json")))
            self.A = np.load(os.path.join(d, "attn.npy")).astype(np.float64)

    def arr(self, name):
        return np.load(os.path.join(self.d, name + ".npy"))

    def env(self):
        if not hasattr(self, "_env"):
            self._env = self.compute_env()
        return self._env

    def compute_env(self):
        e = {"np": np, "math": math, "abs": abs, "all": all, "any": any, "max": max,
             "min": min, "sum": sum, "len": len, "sorted": sorted}
        if self.train is not None:
            e.update(self.train_env())
            return e
        if is_model(self.view):
            e.update(self.model_env())
            return e
        m, A = self.meta, self.A
        n, h = m["n"], m["h"]

        def rel(hd, f, rows):
            return float(np.mean([f(A[hd - 1], p) for p in rows]))

        e.update(n=n, n_real=m["n_real"], h=h, d_model=m["d_model"], d_k=m["d_k"],
                 patterns=m.get("head_patterns"), ablated_heads=m.get("ablated", []))
        e["prev"] = lambda hd: rel(hd, lambda a, p: a[p, p - 1], range(1, n))
        e["next"] = lambda hd: rel(hd, lambda a, p: a[p, p + 1], range(n - 1))
        e["first"] = lambda hd: rel(hd, lambda a, p: a[p, 0], range(1, n))
        e["self_"] = lambda hd: rel(hd, lambda a, p: a[p, p], range(n))
        e["rowmax"] = lambda hd: float(A[hd - 1].max(axis=1).mean())
        e["mean_rowmax"] = lambda: float(A.max(axis=2).mean())

        def entropy(hd):
            a = A[hd - 1]
            with np.errstate(divide="ignore", invalid="ignore"):
                t = np.where(a > 0, -a * np.log2(a), 0.0)
            return float(t.sum(axis=1).mean())

        e["entropy"] = entropy
        toks = open(os.path.join(self.d, "tokens.txt"), encoding="utf-8").read().split("\n")[:n]

        def same(hd):  # weight on the other occurrences of the query's word
            rows = [p for p in range(n) if sum(t == toks[p] for t in toks) > 1]
            return float(np.mean([sum(A[hd - 1, p, j] for j in range(n)
                                      if j != p and toks[j] == toks[p]) for p in rows]))

        e["same"] = same
        e["uniform"] = lambda hd: bool(np.allclose(A[hd - 1], 1.0 / n, atol=1e-5))
        # the matrix the step's stage shows: before the softmax (stages 3-5) the scores
        shown = self.arr("scores") if self.view.get("stage") in ("3", "4", "5") else A
        e["rows_sum_one"] = lambda: bool(np.allclose(shown.sum(axis=2), 1.0, atol=1e-5))
        e["causal_zero"] = lambda: bool(all((A[:, i, i + 1:] == 0).all() for i in range(n)))
        e["causal_scores"] = lambda: bool(all(np.isneginf(self.arr("scores")[:, i, i + 1:]).all()
                                              for i in range(n)))
        # [PAD] keys get no weight: there are some, and every row gives them 0
        e["pad_zero"] = lambda: n > m["n_real"] and bool((A[:, :, m["n_real"]:] == 0).all())
        e["shape"] = lambda name: tuple(self.arr(name).shape)

        def scaled_by(c):  # the scores are Q_i K_i^T / c wherever they are finite
            Q, K, S = self.arr("Q"), self.arr("K"), self.arr("scores")
            dk = m["d_k"]
            for i in range(h):
                raw = Q[:, i * dk:(i + 1) * dk].astype(np.float64) @ \
                    K[:, i * dk:(i + 1) * dk].astype(np.float64).T
                fin = np.isfinite(S[i])
                if not np.allclose(S[i][fin], raw[fin] / c, rtol=1e-4, atol=1e-4):
                    return False
            return True

        e["scaled_by"] = scaled_by

        def shares_sum():  # all h heads' shares head_i W^O_i add up to MultiHead
            H, W, out = self.arr("heads"), self.arr("W_O"), self.arr("out")
            dk = m["d_k"]
            tot = sum(H[i].astype(np.float64) @ W[i * dk:(i + 1) * dk].astype(np.float64)
                      for i in range(h))
            return bool(np.allclose(tot, out, rtol=1e-4, atol=1e-4))

        e["shares_sum"] = shares_sum

        def band_zero(hd):
            C = self.arr("concat")
            dk = m["d_k"]
            return bool((C[:, (hd - 1) * dk:hd * dk] == 0).all())

        e["band_zero"] = band_zero
        # K/V heads shared (kv = G): heads i and j (1-based) hold the same K and V columns
        e["kv_heads"] = m.get("kv_heads", h)

        def block(name, hd):
            dk = m["d_k"]
            return self.arr(name)[:, (hd - 1) * dk:hd * dk].astype(np.float64)

        e["kv_shared"] = lambda i, j: bool(all(np.allclose(block(x, i), block(x, j), rtol=0,
                                                           atol=1e-6) for x in ("K", "V")))
        e["q_distinct"] = lambda: h > 1 and all(
            not np.allclose(block("Q", i), block("Q", j), atol=1e-6)
            for i in range(1, h + 1) for j in range(i + 1, h + 1))
        e["heads_differ"] = lambda: h > 1 and all(
            not np.allclose(A[i], A[j], atol=1e-3) for i in range(h) for j in range(i + 1, h))
        e["rel_change"] = lambda: float(np.linalg.norm(self.arr("out") - self.arr("out_full"))
                                        / np.linalg.norm(self.arr("out_full")))
        return e

    def model_env(self):
        """A loaded model's step: the shown layer's attention A (h, n, n), its tokens, its
        blanks (fill.json) and what removing heads did to them."""
        m, A = self.meta, self.A
        n, h = m["n"], m["h"]
        toks = json.load(open(os.path.join(self.d, "tokens.json"), encoding="utf-8"))["tokens"]

        def fill(d):
            f = os.path.join(d, "fill.json")
            return json.load(open(f, encoding="utf-8")) if os.path.exists(f) else None

        def top(d, k):  # {token id: p} of blank k's top ten
            return {t["id"]: t["p"] for t in fill(d)["masks"][k]["top"]}

        def fill_change(k=0):  # the most a probability of both top tens moved (X)
            if not fill(self.d) or k >= len(fill(self.d)["masks"]):
                return 0.0
            a, b = top(self.d, k), top(self.full, k)
            return max(abs(a[i] - b[i]) for i in set(a) & set(b))

        def both_ways():  # every head's every row but the last weighs tokens after it
            return n > 1 and all(A[hd, i, i + 1:].sum() > 0 for hd in range(h)
                                 for i in range(n - 1))

        e = dict(n=n, h=h, d_k=m["d_k"], d_model=m["model"]["d_model"],
                 n_layer=m["model"]["n_layer"], layer=int(self.view.get("layer", "1")),
                 tokens=toks, encoder=m["mask"] == "none", ablated=m["ablated"], A=A)
        e["rows_sum_one"] = lambda: bool(np.allclose(A.sum(axis=2), 1.0, atol=1e-5))
        e["causal_zero"] = lambda: bool(all((A[:, i, i + 1:] == 0).all() for i in range(n)))

        def causal_every_layer():  # above the diagonal 0 in every head of every layer
            return all((np.triu(np.load(os.path.join(self.d, f"layer_{ly}", "attn.npy")),
                                1) == 0).all() for ly in range(1, m["model"]["n_layer"] + 1))

        e["causal_every_layer"] = causal_every_layer
        e["both_ways"] = both_ways
        e["after"] = lambda p: float(A[:, p, p + 1:].sum(axis=1).mean())  # row p, 0-based
        e["column"] = lambda j: float(A[:, :, j].mean())  # key j's share, all heads and rows
        e["blanks"] = lambda: [x["pos"] for x in fill(self.d)["masks"]] if fill(self.d) else []
        e["fill_top"] = lambda k=0: [(t["token"], t["p"]) for t in (
            fill(self.d)["masks"][k].get("top", []) if k < len(e["blanks"]()) else [])]
        e["fill_change"] = fill_change
        e["heads_differ"] = lambda: h > 1 and all(
            not np.allclose(A[i], A[j], atol=1e-3) for i in range(h) for j in range(i + 1, h))
        e.update(self.kv_env())
        return e

    def kv_env(self):
        """The shown layer's K/V heads as the model ran (layer_L/Q.npy, K.npy, V.npy):
        kv_heads, reads() (the K/V head each query head reads, found from its attention),
        pooled() (each K/V head the mean of the trained ones it replaces) and next_change()
        (the most a next-token probability moved from the model as trained)."""
        m, A, n, h = self.meta, self.A, self.meta["n"], self.meta["h"]
        dk = m["model"]["d_head"]
        layer = f"layer_{self.view.get('layer', '1')}"

        def qkv(d, name):
            return np.load(os.path.join(d, layer, name + ".npy")).astype(np.float64)

        Q, K = qkv(self.d, "Q"), qkv(self.d, "K")
        kv = K.shape[1] // dk
        causal = np.triu(np.ones((n, n), bool), 1) if m["mask"] == "causal" else \
            np.zeros((n, n), bool)

        def attention(i, g):  # softmax(Q_i K_g^T / sqrt(d_k)) with the mask
            s = Q[:, i * dk:(i + 1) * dk] @ K[:, g * dk:(g + 1) * dk].T / math.sqrt(dk)
            s[causal] = -np.inf
            p = np.exp(s - s.max(axis=1, keepdims=True))
            return p / p.sum(axis=1, keepdims=True)

        def reads():  # 1-based K/V head of each query head; 0 where none gives its attention
            return [next((g + 1 for g in range(kv) if np.allclose(attention(i, g), A[i],
                                                                  rtol=0, atol=1e-5)), 0)
                    for i in range(h)]

        def pooled():  # fewer K/V heads than trained, each the mean of those it replaces
            own = m["model"]["n_kv_head_trained"]
            if not self.trained or kv >= own:
                return False
            return all(np.allclose(qkv(self.d, x), qkv(self.trained, x).reshape(
                n, kv, own // kv, dk).mean(axis=2).reshape(n, kv * dk), rtol=0, atol=1e-5)
                for x in ("K", "V"))

        def next_change():
            top = json.load(open(os.path.join(self.d, "next.json")))["top"]
            return max((abs(t["p"] - t["p_trained"]) for t in top if "p_trained" in t),
                       default=0.0)

        return dict(kv_heads=kv, reads=reads, pooled=pooled, next_change=next_change)

    def train_env(self):
        """acc and the heads' summary from train.json; for cards, what the heads do,
        measured in NumPy on the dumped weights (lesson_cards.py), and as the app's
        summary (ablated) for comparison."""
        t = self.train
        heads = [x for x in t["heads"] if x["layer"] == 1]
        e = dict(acc=t["acc"], h=t["h"], d_model=t["d_model"], steps=t["steps"],
                 mass_prev=[x["mass_prev"] for x in heads],
                 mass_first=[x["mass_first"] for x in heads],
                 ablated=[x["ablated_acc"] for x in heads])
        if t["task"] == "cards":
            r = lesson_cards.Run(self.d, t["h"])
            if not r.check_against(self.d):
                raise SystemExit(f"{self.d}: the NumPy forward of cards differs from the app's")
            e.update(r.measure())
        return e


def run(app, args, d):
    shutil.rmtree(d, ignore_errors=True)
    p = subprocess.run([app] + args + ["--dump", d], capture_output=True, text=True)
    if p.returncode != 0:
        raise SystemExit(f"{' '.join(args)}: exit {p.returncode}: {p.stderr.strip()}")


COMPUTED = {}  # the facts of each set of options already run: a dump is only read


def compute(app, path, view, train_steps, d):
    """Facts of a view: its --dump, or its --train run with train_steps steps; a model's
    with its heads removed also dumped with every head on."""
    train = view.get("train", "off") != "off"
    args = train_options(view, train_steps) if train else options(view, path)
    key = json.dumps([args, view.get("stage"), view.get("layer")])
    if key not in COMPUTED:
        run(app, args, d)
        full = trained = None
        if is_model(view):
            full = d + "-full"
            run(app, options(view, path, full=True), full)
        if is_model(view) and view.get("model-kv", "own") != "own":
            trained = d + "-trained"
            run(app, options(view, path, trained=True), trained)
        COMPUTED[key] = Facts(d, view, json.load(open(os.path.join(d, "train.json")))
                              if train else None, full, trained)
    return COMPUTED[key]


def evaluate(expr, env):
    """(value, error): the fact's value, or the exception that stopped it."""
    try:
        return eval(expr, env), None  # the lesson's own fact, on the step's numbers
    except Exception as ex:  # a fact naming what the step does not have
        return None, f"{type(ex).__name__}: {ex}"


def same_as_lesson(app, path, k, view, facts, d):
    """--lesson PATH --step K gives the attention the options give; "" or what differs."""
    run(app, ["--lesson", LESSON_COPY.get(path, path), "--step", str(k)], d)
    # A lesson reaches step k through the steps before it and keeps the rows of Q, K, V an
    # earlier step projected (mha_update); where OpenBLAS rounds a row by how many rows the
    # product has (its direct kernel on AVX-512 processors), those rows differ from a fresh
    # forward in the last bits: 2.4e-7 at most measured. A wrong setting moves the weights
    # by far more than the 1e-5 allowed here.
    f = os.path.join(d, f"layer_{view.get('layer', '1')}", "attn.npy") if is_model(view) \
        else os.path.join(d, "attn.npy")
    if not os.path.exists(f):  # a model's step dumped as the random model's view
        return f"--lesson --step {k} wrote no {os.path.relpath(f, d)}: {sorted(os.listdir(d))}"
    a2 = np.load(f)
    if a2.shape == facts.A.shape and np.allclose(a2, facts.A, rtol=0, atol=1e-5):
        return ""
    diff = np.abs(a2 - facts.A).max() if a2.shape == facts.A.shape else "shape"
    return f"--lesson --step {k} differs from the options {options(view, path)} ({diff})"


def check_step(app, path, k, st, view, n, tmp, check_lesson):
    """The step's failures, one line each: a fact false on the step, or not false on the
    step with its "false at" settings applied."""
    where = f"{path}:{st['line']}: step {k} \"{st['heading']}\""
    if not st["facts"]:
        return [f"{where} states no fact"]
    out = []
    facts = compute(app, path, view, n, os.path.join(tmp, f"s{k}"))
    if check_lesson and facts.train is None:
        msg = same_as_lesson(app, path, k, view, facts, os.path.join(tmp, f"s{k}-lesson"))
        if msg:
            out.append(f"{where}: {msg}")
    env = facts.env()
    for i, (no, claim, expr, cf) in enumerate(st["facts"]):
        value, err = evaluate(expr, env)
        if err or not value:
            out.append(f"{path}:{no}: step {k}: [{claim}] false on the step: {expr}"
                       + (f"  ({err})" if err else ""))
            continue
        other = compute(app, path, apply(view, cf, path), n, os.path.join(tmp, f"s{k}-{i}"))
        value, err = evaluate(expr, other.env())
        if err or value is None or bool(value):
            out.append(f"{path}:{no}: step {k}: [{claim}] not false at {cf}: {expr}"
                       + (f"  ({err})" if err else f" is {value}"))
    return out


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    check_lesson = "--lesson-binary" in sys.argv
    real = "--real-models" in sys.argv
    app, lessons = args[0], args[1:]
    tmp = tempfile.mkdtemp(prefix="lesson-facts-")
    sample = Sample("lesson_facts")
    failed = checked = 0
    try:
        for li, path in enumerate(lessons):
            title, steps = parse(path)
            if not real and any(st["settings"].get("model", "off") != "off" for st in steps):
                root = os.path.join(tmp, f"models-{li}")
                make_models(path, steps, root)
                MODEL_ROOT[path] = root
                LESSON_COPY[path] = os.path.join(root, os.path.basename(path))
                shutil.copy(path, LESSON_COPY[path])
                print(f"{os.path.basename(path)}: its models are test checkpoints of random "
                      f"weights, made by encoder_gen.py, gpt2_gen.py and llama_gen.py")
            view, train_steps = {}, {}
            for k, st in enumerate(steps, 1):
                view = apply(view, st["settings"], path)
                key = json.dumps(train_options(view, 0)) if view.get("train", "off") != "off" \
                    else None
                for a in st["do"]:
                    if key and a.split()[0] == "train":
                        train_steps[key] = train_steps.get(key, 0) + int(a.split()[1])
                if not sample.take():  # the sanitizer build: every k-th step's facts
                    print(f"  step {k}: not in the sample")
                    continue
                bad = check_step(app, path, k, st, view, train_steps.get(key, 0), tmp,
                                 check_lesson)
                for line in bad:
                    print(line)
                for no, claim, _, cf in st["facts"]:
                    print(f"  step {k}, line {no}: [{claim}] (false at {cf})")
                checked += len(st["facts"])
                failed += len(bad)
            print(f"{os.path.basename(path)}: \"{title}\": {len(steps)} steps")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"{checked} facts checked, each also where its claim is false; {failed} failures")
    return 1 if failed or not checked else 0


if __name__ == "__main__":
    sys.exit(main())
