#!/usr/bin/python3
"""train_check.py MHAVIZ: the headless --train mode end to end.

- `--train pair -H 2 --steps 300 --dump DIR`: exit 0, the summary on stdout, a
  progress line at steps 250 and 300 on stderr (not a terminal), train.json with
  exactly the issue's keys and types, the curve every 25 steps, final accuracy
  >= 0.99 and one head >= 0.6 on i-1 and another >= 0.6 on token 0;
- the dumped held-out example recomputed with NumPy in float64 from the dumped
  weights (embedding, LayerNorm, causal attention, W^O, residual, final LayerNorm,
  unembedding): every layer tensor and the logits within 1e-4 (1 + |value|);
  targets.txt follows pair's rule from tokens.txt;
- the same run twice gives the same train.json, byte for byte; another seed does not;
- --layers 2 --mlp writes both layers and the MLP weights with their shapes;
- every bad value exits 2 with one "mhaviz: " line naming the option and writes
  nothing; a --dump path under a file exits 1.
Exits 1 with "expected X, got Y" lines on any failure."""
import json
import re
import os
import subprocess
import sys
import tempfile

import numpy as np

FAILURES = []
ENV = dict(os.environ, OPENBLAS_NUM_THREADS="1")


def fail(where, msg):
    FAILURES.append(f"{where}: {msg}")
    print(f"FAIL {where}: {msg}", file=sys.stderr)


def check(where, cond, expected, got):
    if not cond:
        fail(where, f"expected {expected}, got {got}")
    return cond


def run(mhaviz, args):
    return subprocess.run([mhaviz] + args, capture_output=True, text=True, env=ENV, timeout=300)


def layer_norm(x, g, b):
    m = x.mean(-1, keepdims=True)
    v = ((x - m) ** 2).mean(-1, keepdims=True)
    return (x - m) / np.sqrt(v + 1e-5) * g + b


def recompute(d, h, layers, mlp):
    """The held-out example's forward in float64 from the dumped weights."""
    W = lambda n: np.load(os.path.join(d, "weights", n + ".npy")).astype(np.float64)
    letters = "ABCDEFGHIJKLMNOP"
    tokens = [letters.index(t) for t in open(os.path.join(d, "tokens.txt")).read().split()]
    T = len(tokens)
    x = W("wte")[tokens] + W("wpe")
    dm = x.shape[1]
    dk = dm // h
    out = {}
    for i in range(1, layers + 1):
        p = lambda n: W(f"layer{i}_{n}")
        t = {"resid_in": x.copy()}
        xn = layer_norm(x, p("ln1_gain"), p("ln1_bias"))
        q, k, v = xn @ p("W_Q"), xn @ p("W_K"), xn @ p("W_V")
        scores = np.empty((h, T, T))
        attn = np.empty((h, T, T))
        concat = np.empty((T, dm))
        for j in range(h):
            c = slice(j * dk, (j + 1) * dk)
            s = q[:, c] @ k[:, c].T / np.sqrt(dk)
            s[np.triu_indices(T, 1)] = -np.inf
            a = np.exp(s - s.max(1, keepdims=True))
            a /= a.sum(1, keepdims=True)
            scores[j], attn[j] = s, a
            concat[:, c] = a @ v[:, c]
        o = concat @ p("W_O")
        x = x + o
        if mlp:
            f = layer_norm(x, p("ln2_gain"), p("ln2_bias")) @ p("W_fc") + p("b_fc")
            from math import erf
            f = 0.5 * f * (1 + np.vectorize(erf)(f / np.sqrt(2)))
            x = x + f @ p("W_proj") + p("b_proj")
        t.update(X=xn, Q=q, K=k, V=v, scores=scores, attn=attn, concat=concat, out=o,
                 heads=concat.reshape(T, h, dk).transpose(1, 0, 2), resid_out=x.copy())
        out[i] = t
    logits = layer_norm(x, W("lnf_gain"), W("lnf_bias")) @ W("W_U") + W("b_U")
    return tokens, out, logits


def compare(where, want, got):
    if not check(where + " shape", want.shape == got.shape, want.shape, got.shape):
        return
    fin = np.isfinite(want)
    check(where + " -inf where masked", np.array_equal(fin, np.isfinite(got)), "same mask",
          "different")
    err = np.abs(want[fin] - got[fin]) - 1e-4 * (1 + np.abs(want[fin]))
    check(where, (err <= 0).all(), "within 1e-4 (1 + |value|)",
          f"max |diff| {np.abs(want[fin] - got[fin]).max():.3g}")


def check_json(where, j, steps, h, layers, d_model, seed, task):
    keys = {"task", "layers", "h", "d_model", "steps", "seed", "curve", "acc", "heads"}
    check(where + " keys", set(j) == keys, sorted(keys), sorted(j))
    for k, want in (("task", task), ("layers", layers), ("h", h), ("d_model", d_model),
                    ("steps", steps), ("seed", seed)):
        check(f"{where} {k}", j.get(k) == want and type(j.get(k)) is type(want), want, j.get(k))
    curve = j.get("curve", [])
    check(where + " curve steps", [r[0] for r in curve] == list(range(25, steps + 1, 25)),
          "every 25 steps", [r[0] for r in curve][:5])
    check(where + " curve rows", all(len(r) == 3 and 0 <= r[2] <= 1 and r[1] >= 0
                                     for r in curve), "[step, loss >= 0, acc in 0..1]", curve[:2])
    check(where + " acc", isinstance(j.get("acc"), float) and 0 <= j["acc"] <= 1, "0..1",
          j.get("acc"))
    check(where + " acc is the last row's", curve and curve[-1][2] == j.get("acc"),
          curve[-1][2] if curve else None, j.get("acc"))
    heads = j.get("heads", [])
    check(where + " heads", [(x.get("layer"), x.get("head")) for x in heads] ==
          [(l, k) for l in range(1, layers + 1) for k in range(1, h + 1)], "1-based, in order",
          [(x.get("layer"), x.get("head")) for x in heads])
    hk = {"layer", "head", "mass_prev", "mass_first", "mass_induction", "ablated_acc"}
    for x in heads:
        check(where + " head keys", set(x) == hk, sorted(hk), sorted(x))
        for k in ("mass_prev", "mass_first", "mass_induction", "ablated_acc"):
            check(f"{where} {k}", 0 <= x.get(k, -1) <= 1, "0..1", x.get(k))


def main():
    if len(sys.argv) != 2:
        print("usage: train_check.py MHAVIZ", file=sys.stderr)
        return 2
    mhaviz = sys.argv[1]
    tmp = tempfile.mkdtemp(prefix="train_check.")

    # --- pair at h = 2: the files, the numbers, the heads ---------------------------
    d1 = os.path.join(tmp, "pair")
    r = run(mhaviz, ["--train", "pair", "-H", "2", "--steps", "300", "--dump", d1])
    check("pair exit", r.returncode == 0, 0, f"{r.returncode}: {r.stderr}")
    check("summary", r.stdout.startswith("pair: held-out accuracy"), "a summary",
          r.stdout[:60])
    lines = r.stderr.splitlines()
    check("progress lines", len(lines) == 2 and "step 250/300" in lines[0] and
          "step 300/300" in lines[1], "lines at 250 and 300", lines)
    j = json.load(open(os.path.join(d1, "train.json")))
    check_json("pair", j, 300, 2, 1, 32, 1, "pair")
    check("pair acc", j["acc"] >= 0.99, ">= 0.99", j["acc"])
    mp = [x["mass_prev"] for x in j["heads"]]
    mf = [x["mass_first"] for x in j["heads"]]
    kp, kf = int(np.argmax(mp)), int(np.argmax(mf))
    check("pair heads split", kp != kf and mp[kp] >= 0.6 and mf[kf] >= 0.6,
          "one head >= 0.6 on i-1, another >= 0.6 on 0", (mp, mf))
    check("ablating a pair head costs", all(x["ablated_acc"] < j["acc"] - 0.1 for x in j["heads"]),
          "each head needed", [x["ablated_acc"] for x in j["heads"]])

    tokens, want, logits = recompute(d1, 2, 1, False)
    for name, arr in want[1].items():
        compare(f"layer1/{name}", arr, np.load(os.path.join(d1, "layer1", name + ".npy")))
    compare("logits", logits, np.load(os.path.join(d1, "logits.npy")))
    targets = open(os.path.join(d1, "targets.txt")).read().split()
    letters = "ABCDE"
    rule = ["-"] + [f"{letters[tokens[0]]},{letters[tokens[i - 1]]}" for i in range(1, 12)]
    check("targets.txt", targets == rule, rule, targets)
    shapes = {"wte": (5, 32), "wpe": (12, 32), "layer1_W_Q": (32, 32), "layer1_W_O": (32, 32),
              "layer1_ln1_gain": (32,), "lnf_bias": (32,), "W_U": (32, 25), "b_U": (25,)}
    for n, s in shapes.items():
        got = np.load(os.path.join(d1, "weights", n + ".npy")).shape
        check(f"weights/{n}.npy shape", got == s, s, got)

    # --- determinism -----------------------------------------------------------------
    d2 = os.path.join(tmp, "pair2")
    run(mhaviz, ["--train", "pair", "-H", "2", "--steps", "300", "--dump", d2])
    same = open(os.path.join(d1, "train.json")).read() == open(os.path.join(d2, "train.json")).read()
    check("same seed, same train.json", same, "identical", "different")
    d3 = os.path.join(tmp, "pair3")
    run(mhaviz, ["--train", "pair", "-H", "2", "--steps", "300", "-s", "2", "--dump", d3])
    j3 = json.load(open(os.path.join(d3, "train.json")))
    check("another seed", j3["seed"] == 2 and j3["curve"] != j["curve"], "seed 2, other curve",
          j3["seed"])

    # --- two layers with the MLP ---------------------------------------------------------
    d4 = os.path.join(tmp, "first")
    r = run(mhaviz, ["--train", "first", "--layers", "2", "--mlp", "-H", "4", "-d", "16",
                     "--steps", "100", "--batch", "16", "--lr", "0.002", "--dump", d4])
    check("first exit", r.returncode == 0, 0, f"{r.returncode}: {r.stderr}")
    j4 = json.load(open(os.path.join(d4, "train.json")))
    check_json("first", j4, 100, 4, 2, 16, 1, "first")
    for n, s in (("layer2_W_fc", (16, 64)), ("layer2_b_fc", (64,)), ("layer2_W_proj", (64, 16)),
                 ("layer1_ln2_gain", (16,))):
        got = np.load(os.path.join(d4, "weights", n + ".npy")).shape
        check(f"weights/{n}.npy shape", got == s, s, got)
    _, want, logits = recompute(d4, 4, 2, True)
    for i in (1, 2):
        for name in ("attn", "out", "resid_out"):
            compare(f"mlp layer{i}/{name}", want[i][name],
                    np.load(os.path.join(d4, f"layer{i}", name + ".npy")))
    compare("mlp logits", logits, np.load(os.path.join(d4, "logits.npy")))

    # --- bad values: exit 2, one line naming the option, nothing written ----------------
    bad = [
        (["--train", "nope"], "--train"),
        (["--train", "pair", "--steps", "0"], "--steps"),
        (["--train", "pair", "--steps", "12x"], "--steps"),
        (["--train", "pair", "--layers", "3"], "--layers"),
        (["--train", "pair", "--lr", "0"], "--lr"),
        (["--train", "pair", "--lr", "2"], "--lr"),
        (["--train", "pair", "--lr", "1e-3"], "--lr"),
        (["--train", "pair", "--batch", "0"], "--batch"),
        (["--train", "pair", "--batch", "5000"], "--batch"),
        (["--train", "pair", "-H", "3"], "--heads"),
        (["--train", "pair", "-d", "1024"], "--d-model"),
        (["--steps", "10"], "--steps"),
        (["--mlp"], "--mlp"),
        (["--train", "pair", "--text", "hello"], "--train"),
        (["--train", "pair", "--mask", "causal"], "--train"),
        (["--train"], "--train"),
    ]
    for args, opt in bad:
        out = os.path.join(tmp, "bad")
        r = run(mhaviz, args + ["--dump", out])
        where = " ".join(args)
        check(where + " exit", r.returncode == 2, 2, r.returncode)
        lines = r.stderr.splitlines()
        check(where + " message", len(lines) == 1 and lines[0].startswith("mhaviz: ") and
              opt in lines[0], f"one 'mhaviz: ' line naming {opt}", lines)
        check(where + " writes nothing", not os.path.exists(out), "no folder", "a folder")
    afile = os.path.join(tmp, "afile")
    open(afile, "w").close()
    r = run(mhaviz, ["--train", "prev", "--steps", "10", "--dump", os.path.join(afile, "x")])
    check("dump under a file exit", r.returncode == 1, 1, r.returncode)
    check("dump under a file message", r.stderr.startswith("mhaviz: "), "mhaviz: ...", r.stderr)

    # the figure's curves are on the window's dense schedule: a point at every step up
    # to 50, then every 5th (train.json keeps its rows every 25 steps, checked above).
    # The run's curves are the thickest lines of the SVG, one segment between points,
    # in both plots: 60 steps have points at 0, 1 ... 50, 55, 60, 52 of them a plot.
    svg = os.path.join(tmp, "fig.svg")
    r = run(mhaviz, ["--train", "pair", "-H", "2", "--steps", "60", "--export", svg])
    check("figure exit", r.returncode == 0, 0, f"{r.returncode}: {r.stderr}")
    if r.returncode == 0:
        widths = [float(w) for w in re.findall(r'<line [^>]*stroke-width="([0-9.]+)"',
                                                open(svg).read())]
        thick = sum(1 for w in widths if w == max(widths))
        check("figure curves on the dense schedule (2 plots x 51 segments)", thick >= 2 * 51,
              ">= 102 segments", thick)

    subprocess.run(["rm", "-rf", tmp])
    if FAILURES:
        print(f"{len(FAILURES)} failure(s)", file=sys.stderr)
        return 1
    print("train_check: --train and its dump are right")
    return 0


if __name__ == "__main__":
    sys.exit(main())
