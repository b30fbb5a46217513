#!/usr/bin/python3
"""numpy_check.py MHAVIZ: runs `mhaviz --dump DIR ...` for several configurations,
loads the files with NumPy and recomputes attention in float64 from X and the
weight matrices with the formulas of "Attention Is All You Need":

    Q = X W_Q, K = X W_K, V = X W_V
    head i uses columns [i*d_k, (i+1)*d_k) of W_Q, W_K, W_V (so of Q, K, V)
    A_i = softmax(Q_i K_i^T / sqrt(d_k))   (no division with --no-scale;
                                            -inf above the diagonal with --mask causal)
    head_i = A_i V_i, Concat = [head_1 .. head_h], out = Concat W_O
    (head i meets rows [i*d_k, (i+1)*d_k) of W_O)

Checks: attn max |diff| <= 1e-5, out within 1e-4 of max|out|, shapes, meta.json
fields and types, tokens.txt, the .npy headers (numpy.lib.format.read_magic is
(1, 0)). Exits 1 with "expected X, got Y" lines on any failure."""
import json
import math
import os
import subprocess
import sys
import tempfile

import numpy as np
from numpy.lib import format as npf

FAILURES = []


def fail(where, msg):
    FAILURES.append(f"{where}: {msg}")
    print(f"FAIL {where}: {msg}", file=sys.stderr)


def check(where, cond, expected, got):
    if not cond:
        fail(where, f"expected {expected}, got {got}")
    return cond


TENSORS = ["X", "W_Q", "W_K", "W_V", "W_O", "Q", "K", "V", "scores", "attn", "heads",
           "concat", "out"]

MULTI = "Café crème à Zürich, then 東京で寿司を食べた。"
MULTI_TOKENS = ["Café", "crème", "à", "Zürich", ",", "then", "東", "京", "で", "寿", "司",
                "を", "食", "べ", "た", "。"]

# (name, argv after --dump DIR, expected h, d_model, seed, causal, scaled, tokens or None)
CONFIGS = [
    ("h1", ["-H", "1"], 1, 64, 1, False, True, None),
    ("h2", ["-H", "2"], 2, 64, 1, False, True, None),
    ("h4", ["-H", "4"], 4, 64, 1, False, True, None),
    ("h8", ["--heads", "8", "--d-model", "64"], 8, 64, 1, False, True, None),
    ("d256h16", ["-H", "16", "-d", "256", "--sample", "7"], 16, 256, 1, False, True, None),
    ("d96h96_causal", ["-H", "96", "-d", "96", "--mask", "causal", "--sample", "4"], 96, 96, 1,
     True, True, None),
    ("d48h3", ["-d", "48", "-H", "3", "--sample", "2"], 3, 48, 1, False, True,
     ["The", "animal", "didn't", "cross", "the", "street", "because", "it", "was", "too",
      "tired", "."]),
    ("causal", ["--mask", "causal", "-H", "4", "--sample", "2", "-s", "5"], 4, 64, 5, True,
     True, None),
    ("noscale", ["--no-scale", "--sample", "3", "-H", "2", "-d", "32"], 2, 32, 1, False, False,
     ["the", "dog", "chased", "the", "cat", "and", "the", "cat", "chased", "the", "dog"]),
    ("text", ["--text", MULTI, "-H", "2", "-d", "32", "-s", "7"], 2, 32, 7, False, True,
     MULTI_TOKENS),
    ("causal_noscale_long", ["--mask", "causal", "--no-scale", "-d", "16", "-H", "16",
                             "--sample", "7"], 16, 16, 1, True, False, None),
    ("odd", ["-d", "7", "-H", "7", "--text", "a b a c", "-s", "3"], 7, 7, 3, False, True,
     ["a", "b", "a", "c"]),
]


def softmax_rows(s):
    m = np.max(s, axis=-1, keepdims=True)
    e = np.where(np.isneginf(s), 0.0, np.exp(s - m))
    return e / e.sum(axis=-1, keepdims=True)


def positional(n, d):
    pe = np.zeros((n, d))
    for pos in range(n):
        for i in range(0, d, 2):
            ang = pos / 10000.0 ** (i / d)
            pe[pos, i] = math.sin(ang)
            if i + 1 < d:
                pe[pos, i + 1] = math.cos(ang)
    return pe


def load(where, path):
    """Loads one .npy, checking its header is format 1.0, float32 little-endian, C order."""
    with open(path, "rb") as f:
        version = npf.read_magic(f)
        check(f"{where} read_magic", version == (1, 0), (1, 0), version)
        shape, fortran, dtype = npf.read_array_header_1_0(f)
        check(f"{where} fortran_order", fortran is False, False, fortran)
        check(f"{where} dtype", dtype == np.dtype("<f4"), "<f4", dtype.str)
        check(f"{where} header size", f.tell() % 64 == 0, "a multiple of 64", f.tell())
    a = np.load(path, allow_pickle=False)
    check(f"{where} loaded shape", a.shape == shape, shape, a.shape)
    return a


def run_one(mhaviz, root, cfg):
    name, args, h, d, seed, causal, scaled, want_tokens = cfg
    out_dir = os.path.join(root, name)
    cmd = [mhaviz, "--dump", out_dir] + args
    p = subprocess.run(cmd, capture_output=True, timeout=120)
    if not check(f"{name} exit status ({' '.join(cmd[1:])})", p.returncode == 0, 0,
                 f"{p.returncode}; stderr: {p.stderr.decode(errors='replace').strip()}"):
        return None
    check(f"{name} stderr", p.stderr == b"", "nothing", repr(p.stderr[:200]))

    files = sorted(os.listdir(out_dir))
    want_files = sorted([t + ".npy" for t in TENSORS] + ["tokens.txt", "meta.json"])
    check(f"{name} files", files == want_files, want_files, files)

    with open(os.path.join(out_dir, "meta.json"), encoding="utf-8") as f:
        meta = json.load(f)
    with open(os.path.join(out_dir, "tokens.txt"), encoding="utf-8") as f:
        raw = f.read()
    check(f"{name} tokens.txt ends with newline", raw.endswith("\n"), "'\\n' at the end",
          repr(raw[-5:]))
    tokens = raw.split("\n")[:-1]
    n = len(tokens)
    if want_tokens is not None:
        check(f"{name} tokens", tokens == want_tokens, want_tokens, tokens)

    dk = d // h
    for key, want in [("n", n), ("d_model", d), ("h", h), ("d_k", dk), ("d_v", dk),
                      ("seed", seed)]:
        got = meta.get(key)
        check(f"{name} meta.{key}", type(got) is int and got == want, f"integer {want}",
              repr(got))
    check(f"{name} meta.mask", meta.get("mask") == ("causal" if causal else "none"),
          "causal" if causal else "none", repr(meta.get("mask")))
    sc = meta.get("scale")
    check(f"{name} meta.scale is a JSON boolean", type(sc) is bool, "true or false", repr(sc))
    check(f"{name} meta.scale", sc == scaled, scaled, sc)
    w = meta.get("weights", {})
    lim = w.get("limit")
    want_lim = math.sqrt(6.0 / (2 * d))
    check(f"{name} meta.weights.limit", isinstance(lim, float) and abs(lim - want_lim) <= 1e-6,
          want_lim, lim)
    check(f"{name} meta.weights.shape", w.get("shape") == [d, d], [d, d], w.get("shape"))

    T = {t: load(f"{name} {t}.npy", os.path.join(out_dir, t + ".npy")) for t in TENSORS}
    shapes = {"X": (n, d), "W_Q": (d, d), "W_K": (d, d), "W_V": (d, d), "W_O": (d, d),
              "Q": (n, d), "K": (n, d), "V": (n, d), "scores": (h, n, n), "attn": (h, n, n),
              "heads": (h, n, dk), "concat": (n, d), "out": (n, d)}
    ok = True
    for t, shp in shapes.items():
        ok &= check(f"{name} {t}.npy shape", T[t].shape == shp, shp, T[t].shape)
    if not ok:
        return None

    # recompute in float64 from X and the weights only
    X = T["X"].astype(np.float64)
    WQ, WK, WV, WO = (T[k].astype(np.float64) for k in ("W_Q", "W_K", "W_V", "W_O"))
    lim32 = want_lim * (1 + 1e-6)
    for k in ("W_Q", "W_K", "W_V", "W_O"):
        m = float(np.max(np.abs(T[k])))
        check(f"{name} {k} within the Glorot limit", m <= lim32, f"<= {want_lim}", m)
    Q, K, V = X @ WQ, X @ WK, X @ WV
    S = np.empty((h, n, n))
    A = np.empty((h, n, n))
    H = np.empty((h, n, dk))
    for i in range(h):
        cols = slice(i * dk, (i + 1) * dk)
        s = Q[:, cols] @ K[:, cols].T
        if scaled:
            s = s / math.sqrt(dk)
        if causal:
            s[np.triu_indices(n, 1)] = -np.inf
        S[i] = s
        A[i] = softmax_rows(s)
        H[i] = A[i] @ V[:, cols]
    C = np.concatenate([H[i] for i in range(h)], axis=1)
    O = C @ WO

    def rel(where, ref, got, tol):
        scale = max(float(np.max(np.abs(ref))), 1e-30)
        diff = float(np.max(np.abs(ref - got.astype(np.float64)))) if ref.size else 0.0
        check(f"{name} {where}", diff <= tol * scale, f"max |diff| <= {tol} * {scale:.4g}",
              f"{diff:.3g}")

    rel("Q", Q, T["Q"], 1e-5)
    rel("K", K, T["K"], 1e-5)
    rel("V", V, T["V"], 1e-5)
    masked = np.isneginf(S)
    check(f"{name} scores -inf exactly where masked", np.array_equal(np.isneginf(T["scores"]), masked),
          f"{int(masked.sum())} -inf entries", f"{int(np.isneginf(T['scores']).sum())}")
    fin = ~masked
    sdiff = float(np.max(np.abs(S[fin] - T["scores"][fin]))) if fin.any() else 0.0
    smax = max(1.0, float(np.max(np.abs(S[fin]))))
    check(f"{name} scores", sdiff <= 1e-5 * smax, f"max |diff| <= 1e-5 * {smax:.4g}", f"{sdiff:.3g}")
    adiff = float(np.max(np.abs(A - T["attn"])))
    check(f"{name} attn", adiff <= 1e-5, "max |diff| <= 1e-5", f"{adiff:.3g}")
    sums = T["attn"].astype(np.float64).sum(axis=-1)
    check(f"{name} attn row sums", float(np.max(np.abs(sums - 1))) <= 1e-5, "1 +- 1e-5",
          f"{float(np.max(np.abs(sums - 1))):.3g} off")
    if causal:
        above = T["attn"][:, np.triu_indices(n, 1)[0], np.triu_indices(n, 1)[1]]
        check(f"{name} causal attn above the diagonal", np.all(above == 0), "exactly 0",
              f"max {float(np.max(np.abs(above))) if above.size else 0}")
    rel("heads", H, T["heads"], 1e-4)
    rel("concat", C, T["concat"], 1e-4)
    for i in range(h):
        same = np.array_equal(T["concat"][:, i * dk:(i + 1) * dk], T["heads"][i])
        check(f"{name} concat columns of head {i}", same, "heads[i] exactly", "different values")
    rel("out", O, T["out"], 1e-4)
    # the must-show: out reproduced within 1e-5 (absolute) as well
    odiff = float(np.max(np.abs(O - T["out"])))
    check(f"{name} out absolute", odiff <= 1e-5, "max |diff| <= 1e-5", f"{odiff:.3g}")

    # X = embedding(token) + PE(pos): the same token gives the same X - PE
    E = X - positional(n, d)
    for a in range(n):
        for b in range(a + 1, n):
            if tokens[a] == tokens[b]:
                diff = float(np.max(np.abs(E[a] - E[b])))
                check(f"{name} embedding of '{tokens[a]}' at {a} and {b}", diff <= 1e-5,
                      "the same vector", f"max |diff| {diff:.3g}")
    return T


def main():
    if len(sys.argv) != 2:
        print("usage: numpy_check.py MHAVIZ", file=sys.stderr)
        return 2
    mhaviz = os.path.abspath(sys.argv[1])
    if not os.access(mhaviz, os.X_OK):
        print(f"{os.path.basename(__file__)}: expected an executable mhaviz at {mhaviz}, got none",
              file=sys.stderr)
        return 1
    with tempfile.TemporaryDirectory(prefix="mhaviz-numpy-") as root:
        results = {}
        for cfg in CONFIGS:
            results[cfg[0]] = run_one(mhaviz, root, cfg)
        # weights depend on (seed, d_model) only: h = 1, 2, 4, 8 at d = 64 share them
        base = results.get("h1")
        for other in ("h2", "h4", "h8"):
            t = results.get(other)
            if base is None or t is None:
                continue
            for k in ("W_Q", "W_K", "W_V", "W_O", "X"):
                check(f"{other} {k} vs h1", t[k].tobytes() == base[k].tobytes(),
                      "identical bytes", "different bytes")
        # and a different d_model gives different weights
        if base is not None and results.get("noscale") is not None:
            a, b = base["W_Q"][:32, :32], results["noscale"]["W_Q"]
            check("W_Q at d=32 vs d=64", not np.array_equal(a, b), "different values",
                  "identical values")
    if FAILURES:
        print(f"numpy_check: {len(FAILURES)} failure(s)", file=sys.stderr)
        return 1
    print(f"numpy_check: {len(CONFIGS)} configurations OK")
    return 0


if __name__ == "__main__":
    sys.exit(main())
