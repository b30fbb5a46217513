#!/usr/bin/python3
"""numpy_check.py MHAVIZ: runs `mhaviz --dump DIR ...` for several configurations,
loads the files with NumPy and recomputes attention in float64 from X and the
weight matrices with the formulas of "Attention Is All You Need":

    Q = X W_Q, K = X W_K, V = X W_V
    head i uses columns [i*d_k, (i+1)*d_k) of W_Q, W_K, W_V (so of Q, K, V)
    A_i = softmax(Q_i K_i^T / (sqrt(d_k) T))   (T from --temperature, default 1;
                          no sqrt(d_k) with --no-scale; -inf above the diagonal with
                          --mask causal and in every [PAD] column with --pad)
    head_i = A_i V_i, Concat = [head_1 .. head_h] with the bands of --ablate heads
    zeroed, out = Concat W_O, out_full = the same without ablation
    (head i meets rows [i*d_k, (i+1)*d_k) of W_O)

Checks: attn max |diff| <= 1e-5 (5e-7 times the largest |score| where that is
more: float32 rounding grows with the scores), rows sum to 1 over the unmasked keys and are
exactly 0 on masked ones, out and out_full within 1e-4 of max|out|, shapes,
meta.json fields and types, tokens.txt, the .npy headers (numpy.lib.format.read_magic
is (1, 0)). With --weights patterns: every designed head's row argmax is where its
name says (previous i-1, next i+1, first 0, self i, same-word another occurrence of
the token or else i) for at least 95 % of the real rows where that key is visible,
and a broad head's rows are uniform over the visible keys (max weight <= 2/visible).
Texts for the long configurations are generated here from a fixed seed.
Exits 1 with "expected X, got Y" lines on any failure."""
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
           "concat", "out", "out_full"]

MULTI = "Café crème à Zürich, then 東京で寿司を食べた。"
MULTI_TOKENS = ["Café", "crème", "à", "Zürich", ",", "then", "東", "京", "で", "寿", "司",
                "を", "食", "べ", "た", "。"]

def gen_text(seed, n, vocab):
    """n words drawn (Zipf-like) from `vocab` made-up words: repeats and rare words."""
    rng = np.random.default_rng(seed)
    p = 1.0 / np.arange(1, vocab + 1)
    syll = ["ka", "lo", "mi", "ten", "ru", "sa", "vo", "ne", "pi", "dra"]
    words = ["".join(syll[int(x)] for x in rng.integers(0, len(syll), 3)) + str(k)
             for k in range(vocab)]
    return " ".join(words[int(k)] for k in rng.choice(vocab, size=n, p=p / p.sum()))


LONG_A = gen_text(11, 512, 60)     # 512 tokens, many repeats
LONG_B = gen_text(12, 300, 5000)   # mostly distinct words
LONG_C = gen_text(13, 97, 12)


def C(name, args, h, d, seed=1, causal=False, scaled=True, tokens=None, pad=None,
      temperature=1.0, ablated=(), patterns=False):
    """One configuration: argv after --dump DIR and what meta.json must say."""
    return dict(name=name, args=args, h=h, d=d, seed=seed, causal=causal, scaled=scaled,
                tokens=tokens, pad=pad, temperature=temperature, ablated=list(ablated),
                patterns=patterns)


SAMPLE2 = ["The", "animal", "didn't", "cross", "the", "street", "because", "it", "was", "too",
           "tired", "."]
CONFIGS = [
    C("h1", ["-H", "1"], 1, 64),
    C("h2", ["-H", "2"], 2, 64),
    C("h4", ["-H", "4"], 4, 64),
    C("h8", ["--heads", "8", "--d-model", "64"], 8, 64),
    C("d256h16", ["-H", "16", "-d", "256", "--sample", "7"], 16, 256),
    C("d96h96_causal", ["-H", "96", "-d", "96", "--mask", "causal", "--sample", "4"], 96, 96,
      causal=True),
    C("d48h3", ["-d", "48", "-H", "3", "--sample", "2"], 3, 48, tokens=SAMPLE2),
    C("causal", ["--mask", "causal", "-H", "4", "--sample", "2", "-s", "5"], 4, 64, seed=5,
      causal=True),
    C("noscale", ["--no-scale", "--sample", "3", "-H", "2", "-d", "32"], 2, 32, scaled=False,
      tokens=["the", "dog", "chased", "the", "cat", "and", "the", "cat", "chased", "the",
              "dog"]),
    C("text", ["--text", MULTI, "-H", "2", "-d", "32", "-s", "7"], 2, 32, seed=7,
      tokens=MULTI_TOKENS),
    C("causal_noscale_long", ["--mask", "causal", "--no-scale", "-d", "16", "-H", "16",
                              "--sample", "7"], 16, 16, causal=True, scaled=False),
    C("odd", ["-d", "7", "-H", "7", "--text", "a b a c", "-s", "3"], 7, 7, seed=3,
      tokens=["a", "b", "a", "c"]),
    # temperature, padding, ablation alone
    C("temp_low", ["--temperature", "0.05", "-H", "4", "--sample", "2"], 4, 64,
      temperature=0.05),
    C("temp_high_noscale", ["--temperature", "20", "--no-scale", "-H", "8", "-d", "32",
                            "--sample", "6"], 8, 32, scaled=False, temperature=20.0),
    C("temp_mid", ["--temperature", "2.5", "-H", "2", "-d", "48", "--text", LONG_C], 2, 48,
      temperature=2.5),
    C("pad", ["--pad", "20", "-H", "4", "--sample", "2"], 4, 64, pad=20,
      tokens=SAMPLE2 + ["[PAD]"] * 8),
    C("pad_equal_n", ["--pad", "12", "-H", "2", "--sample", "2"], 2, 64, pad=12,
      tokens=SAMPLE2),
    C("pad_one_token", ["--pad", "7", "-d", "8", "-H", "2", "--text", "hello"], 2, 8, pad=7,
      tokens=["hello"] + ["[PAD]"] * 6),
    C("ablate", ["--ablate", "2", "-H", "4", "--sample", "3"], 4, 64, ablated=[2]),
    C("ablate_all", ["--ablate", "3,1,2", "-H", "3", "-d", "48", "--sample", "1"], 3, 48,
      ablated=[1, 2, 3]),
    # combined
    C("pad_causal", ["--pad", "16", "--mask", "causal", "-H", "8", "-d", "64", "--sample",
                     "3"], 8, 64, causal=True, pad=16),
    C("all_random", ["--pad", "512", "--mask", "causal", "--temperature", "0.7", "--no-scale",
                     "--ablate", "1,4", "-H", "4", "-d", "32", "--text", LONG_B, "-s", "9"],
      4, 32, seed=9, causal=True, scaled=False, pad=512, temperature=0.7, ablated=[1, 4]),
    # designed heads: alone and with everything else
    C("patterns_h6", ["--weights", "patterns", "-H", "6", "-d", "96", "--sample", "3"], 6, 96,
      patterns=True),
    C("patterns_long", ["--weights", "patterns", "-H", "8", "-d", "256", "--text", LONG_A], 8,
      256, patterns=True),
    C("patterns_small_dk", ["--weights", "patterns", "-H", "8", "-d", "64", "--sample", "7"], 8,
      64, patterns=True),
    C("patterns_tiny", ["--weights", "patterns", "-H", "4", "-d", "8", "--sample", "2"], 4, 8,
      patterns=True),
    C("patterns_noscale_causal", ["--weights", "patterns", "--no-scale", "--mask", "causal",
                                  "-H", "12", "-d", "192", "--text", LONG_B], 12, 192,
      causal=True, scaled=False, patterns=True),
    C("patterns_all", ["--weights", "patterns", "--pad", "120", "--mask", "causal",
                       "--temperature", "3", "--ablate", "5,2", "-H", "6", "-d", "192",
                       "--text", LONG_C, "-s", "4"], 6, 192, seed=4, causal=True, pad=120,
      temperature=3.0, ablated=[2, 5], patterns=True),
    C("patterns_pad_h1", ["--weights", "patterns", "--pad", "40", "-H", "1", "-d", "8",
                          "--text", LONG_C[:60]], 1, 8, pad=40, patterns=True),
]

PATTERN_CYCLE = ["previous", "next", "first", "self", "same-word", "broad"]
# the smallest d_k of each pattern, as the README states
PATTERN_MIN_DK = {"previous": 8, "next": 8, "first": 1, "self": 8, "same-word": 16, "broad": 1}


def want_patterns(h, dk):
    names = []
    for i in range(h):
        p = PATTERN_CYCLE[i % 6]
        names.append(p if dk >= PATTERN_MIN_DK[p] else "none (d_k too small)")
    return names


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


def check_patterns(name, attn, tokens, n_real, causal, patterns, temperature, scaled):
    """The must-show: each designed head's argmax where its name says (>= 95 % of the
    real rows whose target key is visible); broad rows uniform. Returns
    {pattern: (fraction, mean target weight)} for the report."""
    stats = {}
    sharp = temperature == 1.0
    for i, p in enumerate(patterns):
        if p.startswith("none"):
            continue
        hits, rows, mass = 0, 0, []
        for r in range(n_real):
            vis = r + 1 if causal else n_real    # visible keys are 0 .. vis-1
            a = attn[i, r].astype(np.float64)
            if p == "broad":
                rows += 1
                hits += bool(a.max() <= 2.0 / vis)
                mass.append(a.max() * vis)
                continue
            if p == "same-word":
                others = [j for j in range(vis) if j != r and tokens[j] == tokens[r]]
                target = others if others else [r]
            else:
                t = {"previous": r - 1, "next": r + 1, "first": 0, "self": r}[p]
                if not 0 <= t < vis:
                    continue                      # that position does not exist (or is masked)
                target = [t]
            rows += 1
            hits += int(np.argmax(a)) in target
            mass.append(float(a[target].sum()))
        if rows == 0:
            continue
        frac = hits / rows
        check(f"{name} head {i + 1} ({p}) argmax where its name says",
              frac >= 0.95, ">= 95 % of rows", f"{100 * frac:.1f} % of {rows}")
        if sharp and scaled and p != "broad":
            m = float(np.mean(mass))
            check(f"{name} head {i + 1} ({p}) sharp at T = 1", m >= 0.9,
                  "mean weight on the target >= 0.9", f"{m:.4f}")
        stats.setdefault(p, []).append((frac, float(np.mean(mass))))
    return stats


def run_one(mhaviz, root, cfg):
    name, args, h, d, seed = cfg["name"], cfg["args"], cfg["h"], cfg["d"], cfg["seed"]
    causal, scaled, want_tokens = cfg["causal"], cfg["scaled"], cfg["tokens"]
    out_dir = os.path.join(root, name)
    cmd = [mhaviz, "--dump", out_dir] + args
    p = subprocess.run(cmd, capture_output=True, timeout=120)
    shown = " ".join(a if len(a) < 40 else a[:20] + "..." for a in cmd[1:])
    if not check(f"{name} exit status ({shown})", p.returncode == 0, 0,
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
    # padding: [PAD] tokens exactly at the end, up to --pad
    n_real = tokens.index("[PAD]") if "[PAD]" in tokens else n
    check(f"{name} [PAD] only at the end", all(t == "[PAD]" for t in tokens[n_real:]),
          "text tokens, then [PAD] tokens", tokens[n_real:][:5])
    if cfg["pad"] is not None:
        check(f"{name} n with --pad", n == cfg["pad"], cfg["pad"], n)
    else:
        check(f"{name} no [PAD] without --pad", n_real == n, n, n_real)

    dk = d // h
    for key, want in [("n", n), ("n_real", n_real), ("d_model", d), ("h", h), ("d_k", dk),
                      ("d_v", dk), ("seed", seed)]:
        got = meta.get(key)
        check(f"{name} meta.{key}", type(got) is int and got == want, f"integer {want}",
              repr(got))
    check(f"{name} meta.mask", meta.get("mask") == ("causal" if causal else "none"),
          "causal" if causal else "none", repr(meta.get("mask")))
    check(f"{name} meta.pad", "pad" in meta and meta.get("pad") == cfg["pad"] and
          (cfg["pad"] is None or type(meta["pad"]) is int), cfg["pad"], repr(meta.get("pad")))
    sc = meta.get("scale")
    check(f"{name} meta.scale is a JSON boolean", type(sc) is bool, "true or false", repr(sc))
    check(f"{name} meta.scale", sc == scaled, scaled, sc)
    temp = meta.get("temperature")
    check(f"{name} meta.temperature", isinstance(temp, (int, float)) and
          np.float32(temp) == np.float32(cfg["temperature"]), cfg["temperature"], repr(temp))
    check(f"{name} meta.ablated", meta.get("ablated") == sorted(cfg["ablated"]),
          sorted(cfg["ablated"]), repr(meta.get("ablated")))
    w = meta.get("weights", {})
    mode = "patterns" if cfg["patterns"] else "random"
    check(f"{name} meta.weights.mode", w.get("mode") == mode, mode, repr(w.get("mode")))
    want_pat = want_patterns(h, dk) if cfg["patterns"] else None
    check(f"{name} meta.head_patterns", "head_patterns" in meta and
          meta.get("head_patterns") == want_pat, want_pat, repr(meta.get("head_patterns")))
    lim = w.get("limit")
    want_lim = math.sqrt(6.0 / (2 * d))
    check(f"{name} meta.weights.limit", isinstance(lim, float) and abs(lim - want_lim) <= 1e-6,
          want_lim, lim)
    check(f"{name} meta.weights.shape", w.get("shape") == [d, d], [d, d], w.get("shape"))

    T = {t: load(f"{name} {t}.npy", os.path.join(out_dir, t + ".npy")) for t in TENSORS}
    shapes = {"X": (n, d), "W_Q": (d, d), "W_K": (d, d), "W_V": (d, d), "W_O": (d, d),
              "Q": (n, d), "K": (n, d), "V": (n, d), "scores": (h, n, n), "attn": (h, n, n),
              "heads": (h, n, dk), "concat": (n, d), "out": (n, d), "out_full": (n, d)}
    ok = True
    for t, shp in shapes.items():
        ok &= check(f"{name} {t}.npy shape", T[t].shape == shp, shp, T[t].shape)
    if not ok:
        return None

    # recompute in float64 from X and the weights only
    X = T["X"].astype(np.float64)
    WQ, WK, WV, WO = (T[k].astype(np.float64) for k in ("W_Q", "W_K", "W_V", "W_O"))
    lim32 = want_lim * (1 + 1e-6)
    # random weights are Glorot; designed heads' W_Q, W_K columns are not
    glorot = {"W_V": T["W_V"], "W_O": T["W_O"]}
    random_cols = [i for i in range(h) if want_pat is None or want_pat[i].startswith("none")]
    cols = np.concatenate([np.arange(i * dk, (i + 1) * dk) for i in random_cols]) \
        if random_cols else np.arange(0)
    glorot["W_Q"], glorot["W_K"] = T["W_Q"][:, cols], T["W_K"][:, cols]
    for k, arr in glorot.items():
        m = float(np.max(np.abs(arr))) if arr.size else 0.0
        check(f"{name} {k} within the Glorot limit", m <= lim32, f"<= {want_lim}", m)
    Q, K, V = X @ WQ, X @ WK, X @ WV
    S = np.empty((h, n, n))
    A = np.empty((h, n, n))
    H = np.empty((h, n, dk))
    div = (math.sqrt(dk) if scaled else 1.0) * float(np.float32(cfg["temperature"]))
    hidden = np.zeros((n, n), dtype=bool)
    hidden[:, n_real:] = True                 # [PAD] keys, for every row
    if causal:
        hidden |= np.triu(np.ones((n, n), dtype=bool), 1)
    for i in range(h):
        cols = slice(i * dk, (i + 1) * dk)
        s = Q[:, cols] @ K[:, cols].T / div
        s[hidden] = -np.inf
        S[i] = s
        A[i] = softmax_rows(s)
        H[i] = A[i] @ V[:, cols]
    C_full = np.concatenate([H[i] for i in range(h)], axis=1)
    C_abl = C_full.copy()
    for i in cfg["ablated"]:
        C_abl[:, (i - 1) * dk:i * dk] = 0.0
    O_full = C_full @ WO
    O = C_abl @ WO

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
    # float32 scores of size M carry rounding errors of about M * 1e-7 (seen up to
    # 2.7e-7 M), and a softmax passes them on to the weights: the tolerance for attn
    # and the absolute one for out is 1e-5, or 5e-7 M where that is larger (only the
    # designed heads without scaling, or T = 0.05, reach M > 20)
    atol = max(1e-5, 5e-7 * float(np.max(np.abs(S[~np.isneginf(S)]))))
    adiff = float(np.max(np.abs(A - T["attn"])))
    check(f"{name} attn", adiff <= atol, f"max |diff| <= {atol:.3g}", f"{adiff:.3g}")
    sums = T["attn"].astype(np.float64).sum(axis=-1)
    check(f"{name} attn row sums", float(np.max(np.abs(sums - 1))) <= 1e-5, "1 +- 1e-5",
          f"{float(np.max(np.abs(sums - 1))):.3g} off")
    hid = T["attn"][:, hidden]
    check(f"{name} attn on masked keys", np.all(hid == 0), "exactly 0",
          f"max {float(np.max(np.abs(hid))) if hid.size else 0}")
    vis_sums = np.where(hidden[None], 0.0, T["attn"].astype(np.float64)).sum(axis=-1)
    check(f"{name} attn sums over unmasked keys", float(np.max(np.abs(vis_sums - 1))) <= 1e-5,
          "1 +- 1e-5", f"{float(np.max(np.abs(vis_sums - 1))):.3g} off")
    rel("heads", H, T["heads"], 1e-4)
    rel("concat", C_abl, T["concat"], 1e-4)
    for i in range(h):
        band = T["concat"][:, i * dk:(i + 1) * dk]
        if i + 1 in cfg["ablated"]:
            check(f"{name} concat band of ablated head {i + 1}", np.all(band == 0), "exactly 0",
                  f"max {float(np.max(np.abs(band)))}")
        else:
            same = np.array_equal(band, T["heads"][i])
            check(f"{name} concat columns of head {i}", same, "heads[i] exactly",
                  "different values")
    rel("out", O, T["out"], 1e-4)
    rel("out_full", O_full, T["out_full"], 1e-4)
    if not cfg["ablated"]:
        check(f"{name} out_full equals out", np.array_equal(T["out"], T["out_full"]),
              "identical", "different")
    # the must-show: out reproduced within 1e-5 (absolute) as well
    odiff = float(np.max(np.abs(O - T["out"])))
    check(f"{name} out absolute", odiff <= atol, f"max |diff| <= {atol:.3g}", f"{odiff:.3g}")

    if cfg["patterns"]:
        T["stats"] = check_patterns(name, T["attn"], tokens, n_real, causal, want_pat,
                                    cfg["temperature"], scaled)
    else:
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
            results[cfg["name"]] = run_one(mhaviz, root, cfg)
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
        # padding changes nothing for the text's own rows: attn (on the real keys) and
        # out of "pad" (sample 2, h 4) equal those of the same text unpadded
        plain = os.path.join(root, "pad_plain")
        subprocess.run([mhaviz, "--dump", plain, "-H", "4", "--sample", "2"], check=True,
                       timeout=120)
        t = results.get("pad")
        if t is not None:
            a0 = np.load(os.path.join(plain, "attn.npy"))
            o0 = np.load(os.path.join(plain, "out.npy"))
            n0 = a0.shape[1]
            da = float(np.max(np.abs(t["attn"][:, :n0, :n0] - a0)))
            do = float(np.max(np.abs(t["out"][:n0] - o0)))
            check("pad vs unpadded: attn of the real rows", da <= 1e-6, "<= 1e-6", f"{da:.3g}")
            check("pad vs unpadded: out of the real rows", do <= 1e-5, "<= 1e-5", f"{do:.3g}")
        # designed heads: how sharp, for the record
        for name, t in results.items():
            if t is not None and "stats" in t:
                line = ", ".join(f"{p} {100 * min(f for f, _ in v):.1f}% / {min(m for _, m in v):.4f}"
                                 for p, v in t["stats"].items())
                print(f"  {name}: argmax fraction / mean target weight (worst head): {line}")
    if FAILURES:
        print(f"numpy_check: {len(FAILURES)} failure(s)", file=sys.stderr)
        return 1
    print(f"numpy_check: {len(CONFIGS)} configurations OK")
    return 0


if __name__ == "__main__":
    sys.exit(main())
