#!/usr/bin/python3
"""lesson_facts.py: every built-in lesson's captions are true of their pictures.

A lesson file (README, "Lessons") is a title and steps; each step holds the settings that
change from the step before, caption lines and actions. A built-in step states facts about
its picture, and under its caption it carries them as "# fact: EXPR" comment lines (the app
ignores comments). This script reads the file with its own parser (written from the README's
format, not the app's), builds each step's view as the settings accumulate, computes that
view with the app's plain command-line options (`--dump`, or `--train ... --dump` for a
training step), and evaluates each fact on the numbers with NumPy. With --lesson-binary it
also asks the app for the step itself (`--lesson FILE --step K --dump`) and requires the same
attention as the options give (the lesson reaches the view its settings name).

usage: lesson_facts.py MHAVIZ LESSON... [--lesson-binary]
"""
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np

LOOK_ONLY = {  # settings that change how a view is drawn, not its numbers
    "focus", "stage", "values", "contrast", "colormap", "theme", "zoom", "present", "page",
    "panels", "diff", "pinned-page", "overview", "compare",
}


def parse(path):
    """[(title, steps)], each step {'line', 'heading', 'settings': {name: value},
    'caption': [lines], 'do': [actions], 'facts': [(line, expr)]}."""
    title, steps = None, []
    with open(path, encoding="utf-8") as f:
        for no, raw in enumerate(f, 1):
            line = raw.rstrip("\n")
            s = line.strip()
            if s.startswith("# fact:"):
                if not steps:
                    raise SystemExit(f"{path}:{no}: a fact before the first step")
                steps[-1]["facts"].append((no, s[len("# fact:"):].strip()))
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


def options(view):
    """The app's command-line options for the numbers of a view (settings so far)."""
    o = []
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
    """The names a fact may use, over one dump."""

    def __init__(self, d, train=None):
        self.d = d
        self.train = train
        if train is None:
            self.meta = json.load(open(os.path.join(d, "meta.json")))
            self.A = np.load(os.path.join(d, "attn.npy")).astype(np.float64)

    def arr(self, name):
        return np.load(os.path.join(self.d, name + ".npy"))

    def env(self):
        e = {"np": np, "math": math, "abs": abs, "all": all, "any": any, "max": max,
             "min": min, "sum": sum, "len": len, "sorted": sorted}
        if self.train is not None:
            t = self.train
            heads = [x for x in t["heads"] if x["layer"] == 1]
            e.update(acc=t["acc"], h=t["h"], d_model=t["d_model"], steps=t["steps"],
                     mass_prev=[x["mass_prev"] for x in heads],
                     mass_first=[x["mass_first"] for x in heads],
                     ablated=[x["ablated_acc"] for x in heads])
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
        e["rows_sum_one"] = lambda: bool(np.allclose(A.sum(axis=2), 1.0, atol=1e-5))
        e["causal_zero"] = lambda: bool(all((A[:, i, i + 1:] == 0).all() for i in range(n)))
        e["pad_zero"] = lambda: bool((A[:, :, m["n_real"]:] == 0).all())
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

        def shares_sum():  # the heads' shares head_i W^O_i add up to MultiHead
            H, W, out = self.arr("heads"), self.arr("W_O"), self.arr("out")
            dk = m["d_k"]
            tot = sum(H[i].astype(np.float64) @ W[i * dk:(i + 1) * dk].astype(np.float64)
                      for i in range(h) if (i + 1) not in m.get("ablated", []))
            return bool(np.allclose(tot, out, rtol=1e-4, atol=1e-4))

        e["shares_sum"] = shares_sum

        def band_zero(hd):
            C = self.arr("concat")
            dk = m["d_k"]
            return bool((C[:, (hd - 1) * dk:hd * dk] == 0).all())

        e["band_zero"] = band_zero
        e["rel_change"] = lambda: float(np.linalg.norm(self.arr("out") - self.arr("out_full"))
                                        / np.linalg.norm(self.arr("out_full")))
        return e


def run(app, args, d):
    shutil.rmtree(d, ignore_errors=True)
    p = subprocess.run([app] + args + ["--dump", d], capture_output=True, text=True)
    if p.returncode != 0:
        raise SystemExit(f"{' '.join(args)}: exit {p.returncode}: {p.stderr.strip()}")


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    check_lesson = "--lesson-binary" in sys.argv
    app, lessons = args[0], args[1:]
    tmp = tempfile.mkdtemp(prefix="lesson-facts-")
    failed = checked = 0
    try:
        for path in lessons:
            title, steps = parse(path)
            view, train_steps = {}, {}
            for k, st in enumerate(steps, 1):
                for name in ("sample", "text", "text-file"):  # one text at a time
                    if name in st["settings"]:
                        for other in ("sample", "text", "text-file"):
                            view.pop(other, None)
                view.update(st["settings"])
                if "text-file" in st["settings"]:  # relative to the lesson's folder
                    view["text-file"] = os.path.join(os.path.dirname(os.path.abspath(path)),
                                                     st["settings"]["text-file"])
                if view.get("train", "off") != "off":
                    key = json.dumps(train_options(view, 0))
                    for a in st["do"]:
                        if a.split()[0] == "train":
                            train_steps[key] = train_steps.get(key, 0) + int(a.split()[1])
                if not st["facts"]:
                    print(f"{path}:{st['line']}: step {k} states no fact")
                    failed += 1
                    continue
                d = os.path.join(tmp, f"s{k}")
                if view.get("train", "off") != "off":
                    n = train_steps.get(json.dumps(train_options(view, 0)), 0)
                    run(app, train_options(view, n), d)
                    facts = Facts(d, json.load(open(os.path.join(d, "train.json"))))
                else:
                    run(app, options(view), d)
                    facts = Facts(d)
                    if check_lesson:
                        d2 = d + "-lesson"
                        run(app, ["--lesson", path, "--step", str(k)], d2)
                        # A lesson reaches step k through the steps before it and keeps
                        # the rows of Q, K, V an earlier step projected (mha_update); where
                        # OpenBLAS rounds a row by how many rows the product has (its direct
                        # kernel on AVX-512 processors), those rows differ from a fresh
                        # forward in the last bits: 2.4e-7 at most measured. A wrong setting
                        # moves the weights by far more than the 1e-5 allowed here.
                        a2 = np.load(os.path.join(d2, "attn.npy"))
                        if a2.shape != facts.A.shape or not np.allclose(a2, facts.A, rtol=0,
                                                                        atol=1e-5):
                            diff = (np.abs(a2 - facts.A).max()
                                    if a2.shape == facts.A.shape else "shape")
                            print(f"{path}:{st['line']}: step {k}: --lesson --step {k} "
                                  f"differs from the options {options(view)} ({diff})")
                            failed += 1
                env = facts.env()
                for no, expr in st["facts"]:
                    checked += 1
                    try:
                        ok = eval(expr, env)  # the lesson's own fact, on the step's numbers
                    except Exception as ex:  # a fact naming what the step does not have
                        ok = False
                        expr += f"  ({type(ex).__name__}: {ex})"
                    if not ok:
                        print(f"{path}:{no}: step {k} \"{st['heading']}\": fact false: {expr}")
                        failed += 1
            print(f"{os.path.basename(path)}: \"{title}\": {len(steps)} steps")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"{checked} facts checked, {failed} false or missing")
    return 1 if failed or not checked else 0


if __name__ == "__main__":
    sys.exit(main())
