#!/usr/bin/python3
"""model_check.py BUILD_DIR [--fake | --fake-broken] [--skip resplit,ablate] [--keep DIR]

mhaviz --model against a PyTorch reference. Generates varied random GPT-2
checkpoints in Hugging Face's layout in a temporary folder (gpt2_gen.py: F32, F16
and BF16; names with and without "transformer."; with and without the attn.bias /
attn.masked_bias buffers and a tied lm_head.weight; odd d_head (35 / 5 = 7, 45 / 3
= 15); layer_norm_epsilon 1e-5 and 1e-6; 1 to 4 layers; small n_positions so long
texts are cut), each with a BPE vocabulary trained by bpe_ref.train. For each it runs

    BUILD_DIR/mhaviz --model CKPT --text TEXT --dump OUT            (the model's heads)
    BUILD_DIR/mhaviz --model CKPT --text TEXT -H K --dump OUT       (re-split, K != n_head)
    BUILD_DIR/mhaviz --model CKPT --text TEXT --ablate LIST --dump OUT  (heads removed)

and compares the dump with gpt2_ref.forward (float64, Hugging Face GPT-2's
semantics) on bpe_ref's ids:

  - tokens.json: "ids" equal to bpe_ref's encoding cut to n_positions (a text longer
    than n_positions gives exactly n_positions tokens); "tokens" one string per id;
  - meta.json: "model" {"n_layer", "n_head", "d_model", "n_vocab"} as config.json,
    "h" the heads in use (n_head, or K with -H K); where the dump has them, also
    "n" (tokens), "n_text" (before the cut), "resplit" and "ablated" ([[l, h]], 1-based);
  - layer_l/attn.npy (l = 1..n_layer; float32, (h, n, n)): max |C - ref| <= 1e-4;
  - layer_l/out.npy and final.npy (float32, (n, d_model)):
        ||C - ref|| / ||ref|| <= 1e-3 (Euclidean norm over the array) and every
        element |C - ref| <= 1e-3 |ref| + 1e-4;
  - next.json "top": 10 entries {"id", "token", "p"}; the ids at each rank equal
    the reference's top 10 unless the two ids' reference probabilities tie (within
    1e-6); each p within 1e-4 (absolute) of the reference's probability of that id.

Removed heads: LIST names (layer, head) pairs, 1-based, in the format
MODEL_CHECK_ABLATE_ITEM (default "{l}:{h}", so "1:2,2:1", as mhaviz's usage has it),
after the option MODEL_CHECK_ABLATE_OPT (default "--ablate"). --skip resplit,ablate (or the
environment's MODEL_CHECK_SKIP, same list) leaves out what the binary does not
offer yet; the skipped kinds are printed.

--fake: no binary; the dumps are written by the reference itself run in float32
(what a correct float32 implementation looks like), which exercises the comparison.
--fake-broken: the same dumps each spoiled in one way (an attention weight off by
3e-4, a layer's out scaled by 1 + 3e-3, one final value off by 0.05, an id changed,
a top-10 p off by 3e-4, the top 10 reversed, meta.json's h off by one, the last
layer's folder missing); every one must be caught (exit 0 when all are).

Exits 1 with "expected X, got Y" lines on any failure."""
import json
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
try:
    import bpe_ref  # noqa: E402
except ImportError:
    print("FAIL: tests/bpe_ref.py is needed (the reference tokenizer)", file=sys.stderr)
    sys.exit(1)
try:
    import torch  # noqa: E402
except ImportError:
    print("FAIL: PyTorch is needed (Debian: apt-get install python3-torch)", file=sys.stderr)
    sys.exit(1)
import gpt2_gen  # noqa: E402
import gpt2_ref  # noqa: E402

torch.set_num_threads(1)  # small models; the cores are shared with the other tests

ATTN_ATOL = 1e-4
REL_TOL = 1e-3
EL_RTOL, EL_ATOL = 1e-3, 1e-4
P_ATOL = 1e-4
TIE = 1e-6
TOP = 10

FAILURES = []

SHORT = "The quick brown fox jumps over the lazy dog."
MID = "Heads attend to previous tokens; it's fine, we'll see: 2023 naïve café 🙂!"
LONG = ("Multi-head attention splits the model dimension into heads, and each head computes "
        "softmax of queries times keys over the square root of d, times values; the outputs "
        "are concatenated and projected. The quick brown fox jumps over the lazy dog again "
        "and again, 1998 2004 2023, Übergröße 東京 text text text.")

# name, layers, heads, embd, positions, dtype, prefix, mask_buffers, lm_head, eps,
# merges, seed, resplit K, removed heads (0-based (layer, head); None: no removal run), texts
CASES = [
    ("f32-L2-h4-d32", 2, 4, 32, 64, "F32", False, False, False, 1e-5, 120, 1, 2,
     {(0, 1), (1, 3)}, [SHORT, MID]),
    ("f16-L1-h5-d35-prefix-buffers", 1, 5, 35, 32, "F16", True, True, False, 1e-6, 200, 2, 7,
     {(0, 0), (0, 4)}, [MID, LONG]),
    ("bf16-L3-h3-d48-prefix-lmhead", 3, 3, 48, 32, "BF16", True, False, True, 1e-5, 300, 3, 4,
     {(1, 2)}, [SHORT, LONG]),
    ("f32-L4-h2-d24-buffers-lmhead", 4, 2, 24, 40, "F32", False, True, True, 1e-6, 60, 4, 3,
     {(0, 0), (3, 1)}, [LONG]),
    ("bf16-L2-h6-d36-buffers", 2, 6, 36, 128, "BF16", False, True, False, 1e-6, 400, 5, 4,
     {(0, 5)}, [LONG, SHORT]),
    ("f16-L1-h1-d16-ctx16", 1, 1, 16, 16, "F16", False, False, False, 1e-5, 30, 6, 4,
     None, [LONG]),
    ("f32-L2-h3-d45-prefix-ctx32", 2, 3, 45, 32, "F32", True, False, False, 1e-5, 250, 7, 5,
     {(1, 0)}, [LONG, "a"]),
]


def fail(where, msg):
    FAILURES.append(f"{where}: {msg}")
    print(f"FAIL {where}: {msg}", file=sys.stderr)


# ---------------------------------------------------------------- the comparison

def load_json(where, path):
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        fail(where, f"expected a JSON file {os.path.basename(path)}, got {e}")
        return None


def load_npy(where, path, shape):
    try:
        a = np.load(path)
    except (OSError, ValueError) as e:
        fail(where, f"expected {os.path.basename(path)}, got {e}")
        return None
    if a.dtype != np.float32:
        fail(where, f"expected float32, got {a.dtype}")
    if a.shape != shape:
        fail(where, f"expected shape {shape}, got {a.shape}")
        return None
    if not np.all(np.isfinite(a)):
        fail(where, "expected finite values, got NaN or inf")
        return None
    return a.astype(np.float64)


def close_rel(where, got, ref):
    rel = float(np.linalg.norm(got - ref) / max(np.linalg.norm(ref), 1e-300))
    if rel > REL_TOL:
        fail(where, f"expected ||C - ref|| / ||ref|| <= {REL_TOL}, got {rel:.3g}")
    bad = np.abs(got - ref) > EL_RTOL * np.abs(ref) + EL_ATOL
    if bad.any():
        i = np.unravel_index(np.argmax(np.abs(got - ref) * bad), ref.shape)
        fail(where, f"expected {ref[i]:.7g} at {tuple(int(v) for v in i)} "
                    f"(rtol {EL_RTOL}, atol {EL_ATOL}), got {got[i]:.7g} "
                    f"({int(bad.sum())} elements off)")
    return rel


def compare(where, dump, cfg, ids, ref, h, off=frozenset(), n_text=None):
    """Checks dump folder against the reference result ref for ids; h heads shown,
    off the removed heads (0-based), n_text the text's token count before the cut."""
    L, d, V = cfg["n_layer"], cfg["n_embd"], cfg["vocab_size"]
    n = len(ids)
    n_text = n if n_text is None else n_text
    worst = {"attn": 0.0, "out": 0.0, "final": 0.0, "p": 0.0}
    tj = load_json(where, os.path.join(dump, "tokens.json"))
    if tj is not None:
        if tj.get("ids") != ids:
            fail(where, f"expected tokens.json ids {ids}, got {tj.get('ids')}")
        toks = tj.get("tokens")
        if not (isinstance(toks, list) and len(toks) == n
                and all(isinstance(t, str) for t in toks)):
            fail(where, f"expected tokens.json tokens: {n} strings, got {toks!r}")
    meta = load_json(where, os.path.join(dump, "meta.json"))
    if meta is not None:
        want = {"n_layer": L, "n_head": cfg["n_head"], "d_model": d, "n_vocab": V}
        got = meta.get("model")
        if not isinstance(got, dict) or any(got.get(k) != v for k, v in want.items()):
            fail(where, f"expected meta.json model {want}, got {got}")
        if meta.get("h") != h:
            fail(where, f"expected meta.json h {h}, got {meta.get('h')}")
        # fields beyond the spec, checked when the dump has them
        extra = {"n": n, "n_text": n_text, "resplit": h != cfg["n_head"],
                 "ablated": [[l + 1, j + 1] for l, j in sorted(off)]}
        for k, v in extra.items():
            if k in meta and meta[k] != v:
                fail(where, f"expected meta.json {k} {v}, got {meta[k]}")
    for l in range(L):
        lw = f"{where} layer_{l + 1}"
        a = load_npy(lw + " attn.npy", os.path.join(dump, f"layer_{l + 1}", "attn.npy"), (h, n, n))
        if a is not None:
            e = float(np.max(np.abs(a - ref["attn"][l])))
            worst["attn"] = max(worst["attn"], e)
            if e > ATTN_ATOL:
                i = np.unravel_index(np.argmax(np.abs(a - ref["attn"][l])), a.shape)
                fail(lw + " attn.npy", f"expected {ref['attn'][l][i]:.7g} at head {i[0] + 1} "
                     f"row {i[1]} col {i[2]} (max |diff| <= {ATTN_ATOL}), got {a[i]:.7g}")
        o = load_npy(lw + " out.npy", os.path.join(dump, f"layer_{l + 1}", "out.npy"), (n, d))
        if o is not None:
            worst["out"] = max(worst["out"], close_rel(lw + " out.npy", o, ref["out"][l]))
    if os.path.exists(os.path.join(dump, f"layer_{L + 1}")):
        fail(where, f"expected {L} layer folders, got a layer_{L + 1}")
    f = load_npy(where + " final.npy", os.path.join(dump, "final.npy"), (n, d))
    if f is not None:
        worst["final"] = close_rel(where + " final.npy", f, ref["final"])
    nx = load_json(where, os.path.join(dump, "next.json"))
    if nx is not None:
        p = ref["probs_last"]
        rtop = [int(i) for i in np.argsort(-p, kind="stable")[:TOP]]
        top = nx.get("top")
        k = min(TOP, V)
        if not isinstance(top, list) or len(top) != k:
            fail(where, f"expected next.json top: {k} entries, got {top!r}"[:300])
        else:
            for r, ent in enumerate(top):
                try:
                    cid, cp, ct = ent["id"], ent["p"], ent["token"]
                except (TypeError, KeyError):
                    fail(where, f"expected next.json entry {{id, token, p}}, got {ent!r}")
                    continue
                if not (isinstance(cid, int) and 0 <= cid < V and isinstance(ct, str)
                        and isinstance(cp, (int, float))):
                    fail(where, f"expected an id in 0..{V - 1}, a token and a p, got {ent!r}")
                    continue
                if cid != rtop[r] and abs(p[cid] - p[rtop[r]]) > TIE:
                    fail(where, f"expected next.json rank {r + 1} id {rtop[r]} "
                         f"(p {p[rtop[r]]:.6g}), got id {cid} (reference p {p[cid]:.6g})")
                e = abs(cp - p[cid])
                worst["p"] = max(worst["p"], e)
                if e > P_ATOL:
                    fail(where, f"expected next.json p of id {cid} {p[cid]:.7g} "
                         f"(within {P_ATOL}), got {cp:.7g}")
    return worst


# ---------------------------------------------------------------- dumps

def fake_dump(out, ckpt, cfg, tok, text, h, off, resplit):
    """The dump a correct float32 implementation would write (the reference in float32)."""
    ids = tok.encode(text)[:cfg["n_positions"]]
    r = gpt2_ref.forward(ckpt, ids, off=off, resplit=resplit, dtype=torch.float32)
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "tokens.json"), "w") as f:
        json.dump({"ids": ids, "tokens": [str(i) for i in ids]}, f)
    with open(os.path.join(out, "meta.json"), "w") as f:
        json.dump({"model": {"n_layer": cfg["n_layer"], "n_head": cfg["n_head"],
                             "d_model": cfg["n_embd"], "n_vocab": cfg["vocab_size"]},
                   "h": h}, f)
    for l in range(cfg["n_layer"]):
        os.makedirs(os.path.join(out, f"layer_{l + 1}"), exist_ok=True)
        np.save(os.path.join(out, f"layer_{l + 1}", "attn.npy"), r["attn"][l].astype(np.float32))
        np.save(os.path.join(out, f"layer_{l + 1}", "out.npy"), r["out"][l].astype(np.float32))
    np.save(os.path.join(out, "final.npy"), r["final"].astype(np.float32))
    p = r["probs_last"]
    top = np.argsort(-p, kind="stable")[:TOP]
    with open(os.path.join(out, "next.json"), "w") as f:
        json.dump({"top": [{"id": int(i), "token": str(int(i)), "p": float(p[i])} for i in top]}, f)


def spoil(out, kind, cfg):
    """Spoils a fake dump in one way (--fake-broken)."""
    def rw_json(name, fn):
        path = os.path.join(out, name)
        with open(path) as f:
            j = json.load(f)
        fn(j)
        with open(path, "w") as f:
            json.dump(j, f)
    L = cfg["n_layer"]
    if kind == "attn":
        p = os.path.join(out, f"layer_{L}", "attn.npy")
        a = np.load(p)
        a[0, -1, 0] += 3e-4
        np.save(p, a)
    elif kind == "out":
        p = os.path.join(out, "layer_1", "out.npy")
        np.save(p, (np.load(p) * (1 + 3e-3)).astype(np.float32))
    elif kind == "final":
        p = os.path.join(out, "final.npy")
        a = np.load(p)
        a[-1, 0] += 0.05
        np.save(p, a)
    elif kind == "id":
        rw_json("tokens.json", lambda j: j["ids"].__setitem__(0, (j["ids"][0] + 1) % 256))
    elif kind == "p":
        rw_json("next.json", lambda j: j["top"][3].__setitem__("p", j["top"][3]["p"] + 3e-4))
    elif kind == "order":
        rw_json("next.json", lambda j: j["top"].reverse())
    elif kind == "meta-h":
        rw_json("meta.json", lambda j: j.__setitem__("h", j["h"] + 1))
    elif kind == "layer":
        shutil.rmtree(os.path.join(out, f"layer_{L}"))
    else:
        raise ValueError(kind)


SPOILS = ["attn", "out", "final", "id", "p", "order", "meta-h", "layer"]


def ablate_args(off):
    opt = os.environ.get("MODEL_CHECK_ABLATE_OPT", "--ablate")
    item = os.environ.get("MODEL_CHECK_ABLATE_ITEM", "{l}:{h}")
    return [opt, ",".join(item.format(l=l + 1, h=h + 1) for l, h in sorted(off))]


def run_binary(where, mhaviz, ckpt, text, extra, out):
    cmd = [mhaviz, "--model", ckpt, "--text", text] + extra + ["--dump", out]
    try:
        p = subprocess.run(cmd, capture_output=True, timeout=300)
    except subprocess.TimeoutExpired:
        fail(where, f"expected {' '.join(cmd[1:])} to finish within 300 s, got a timeout")
        return False
    if p.returncode != 0:
        fail(where, f"expected exit 0 from mhaviz {' '.join(cmd[1:])}, got {p.returncode}: "
             f"{p.stderr.decode(errors='replace').strip()[:400]}")
        return False
    return True


# ---------------------------------------------------------------- main

def main(argv):
    import argparse
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("build", nargs="?", default=None)
    ap.add_argument("--fake", action="store_true", help="dumps from the reference in float32")
    ap.add_argument("--fake-broken", action="store_true", help="spoiled fake dumps must fail")
    ap.add_argument("--skip", default=os.environ.get("MODEL_CHECK_SKIP", ""),
                    help="comma list of kinds to leave out: resplit, ablate")
    ap.add_argument("--keep", default=None, help="write checkpoints and dumps here, kept")
    a = ap.parse_args(argv)
    skip = {s for s in a.skip.split(",") if s}
    if skip - {"resplit", "ablate"}:
        ap.error(f"--skip: unknown kinds {sorted(skip - {'resplit', 'ablate'})}")
    fake = a.fake or a.fake_broken
    mhaviz = None
    if not fake:
        if a.build is None:
            ap.error("BUILD_DIR is needed (or --fake)")
        mhaviz = a.build if os.path.isfile(a.build) else os.path.join(a.build, "mhaviz")
        if not os.access(mhaviz, os.X_OK):
            print(f"FAIL: expected the mhaviz binary at {mhaviz}", file=sys.stderr)
            return 1
    if skip:
        print(f"model_check: skipping {', '.join(sorted(skip))} (as asked)")
    root = a.keep or tempfile.mkdtemp(prefix="mhaviz-model-")
    os.makedirs(root, exist_ok=True)
    worst = {"attn": 0.0, "out": 0.0, "final": 0.0, "p": 0.0}
    runs = 0
    cuts = 0
    caught = []
    try:
        for (name, L, H, d, ctx, dtype, prefix, buffers, lm_head, eps, n_merges, seed, K, off,
             texts) in CASES:
            assert d % K == 0 and K != H
            ckpt = os.path.join(root, name)
            voc = bpe_ref.train([gpt2_gen.TRAIN_TEXT], n_merges)
            gpt2_gen.gen(ckpt, L, H, d, ctx, voc, dtype, prefix, buffers, lm_head, eps, seed)
            tok = bpe_ref.load(os.path.join(ckpt, "vocab.json"), os.path.join(ckpt, "merges.txt"))
            cfg, _ = gpt2_ref.load(ckpt)
            jobs = []
            for ti, text in enumerate(texts):
                jobs.append((f"text{ti}", text, [], H, set(), None))
            if "resplit" not in skip:
                jobs.append(("resplit", texts[0], ["-H", str(K)], K, set(), K))
            if "ablate" not in skip and off:
                jobs.append(("ablate", texts[0], ablate_args(off), H, off, None))
            for ji, (tag, text, extra, h, o, rs) in enumerate(jobs):
                where = f"{name} {tag}"
                ids = tok.encode(text)
                n_text = len(ids)
                cut = len(ids) > ctx
                cuts += cut
                ids = ids[:ctx]
                out = os.path.join(root, f"{name}-{tag}")
                shutil.rmtree(out, ignore_errors=True)
                if fake:
                    fake_dump(out, ckpt, cfg, tok, text, h, o, rs)
                elif not run_binary(where, mhaviz, ckpt, text, extra, out):
                    continue
                ref = gpt2_ref.forward(ckpt, ids, off=o, resplit=rs)
                if a.fake_broken:
                    kind = SPOILS[(runs + ji) % len(SPOILS)]
                    spoil(out, kind, cfg)
                    before = len(FAILURES)
                    compare(where + f" [spoiled: {kind}]", out, cfg, ids, ref, h, o, n_text)
                    caught.append((where, kind, len(FAILURES) > before))
                else:
                    w = compare(where, out, cfg, ids, ref, h, o, n_text)
                    for k in worst:
                        worst[k] = max(worst[k], w[k])
                runs += 1
                print(f"model_check: {where}: {len(ids)} tokens"
                      f"{' (cut to n_positions)' if cut else ''}, h {h}")
    finally:
        if a.keep is None:
            shutil.rmtree(root, ignore_errors=True)
    if cuts < 3:
        fail("set-up", f"expected at least 3 dumps of texts longer than n_positions, got {cuts}")
    if a.fake_broken:
        missed = [(w, k) for w, k, c in caught if not c]
        kinds = sorted({k for _, k, _ in caught})
        if missed:
            for w, k in missed:
                print(f"FAIL {w}: expected the spoiled dump ({k}) to fail, got a pass",
                      file=sys.stderr)
            return 1
        print(f"model_check --fake-broken: all {len(caught)} spoiled dumps caught "
              f"({', '.join(kinds)})")
        return 0
    print(f"model_check: {runs} dumps; worst attn |diff| {worst['attn']:.3g}, out rel "
          f"{worst['out']:.3g}, final rel {worst['final']:.3g}, next p |diff| {worst['p']:.3g}")
    if FAILURES:
        print(f"model_check: {len(FAILURES)} failures", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
