#!/usr/bin/env python3
"""long_check.py: a loaded model takes texts as long as its context.

A random GPT-2 checkpoint with n_positions = 1024 (gpt2_gen.py, 2 layers of 4 heads,
d_model 32; BPE from bpe_ref.py) and texts of exactly 1024 and 1025 tokens (counted
by bpe_ref.py):

  BUILD_DIR/mhaviz --model CKPT --text-file T1024 --dump OUT
      opens: exit 0, nothing on stderr, meta.json n = 1024; every layer's attn.npy,
      out.npy, final.npy and next.json equal gpt2_ref.py's float64 PyTorch forward
      within the model tests' tolerances (model_check.py's compare); overview.npy,
      (layers x heads, p, p), equals numpy's own max-pool of the reference attention
      (cell (y, x) the largest weight of query rows [y n / p, (y + 1) n / p) and keys
      [x n / p, (x + 1) n / p), p = 256) within 1e-4, and a mean-pool would not pass
      (so the check tells the two apart);
  BUILD_DIR/mhaviz --model CKPT --text-file T1025 --dump OUT
      exit 0, one line on stderr, "mhaviz: ..." naming 1024 and 1025 (the text is
      cut to the model's positions and says so); meta.json n = 1024, n_text = 1025.

Usage: long_check.py BUILD_DIR  (python3-torch, python3-regex)
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import model_check  # noqa: E402  (its compare and tolerances; imports torch, bpe_ref)
import bpe_ref  # noqa: E402
import gpt2_gen  # noqa: E402
import gpt2_ref  # noqa: E402

CTX = 1024
POOL_ATOL = 1e-4


def fail(msg):
    print(f"FAIL long_check: {msg}", file=sys.stderr)
    sys.exit(1)


def text_of(tok, count):
    """A text of exactly count tokens: a one-token word repeated."""
    for word in (" a", " the", " b", "a", " x"):
        if len(tok.encode(word)) == 1 and len(tok.encode(word * 8)) == 8:
            text = word * count
            if len(tok.encode(text)) == count:
                return text
    fail("set-up: expected a one-token word in the trained BPE, found none")


def max_pool(a, p):
    """(n, n) -> (p, p), each cell the largest of the block it covers."""
    n = a.shape[0]
    b = [y * n // p for y in range(p + 1)]
    return np.array([[a[b[y]:b[y + 1], b[x]:b[x + 1]].max() for x in range(p)]
                     for y in range(p)])


def mean_pool(a, p):
    n = a.shape[0]
    b = [y * n // p for y in range(p + 1)]
    return np.array([[a[b[y]:b[y + 1], b[x]:b[x + 1]].mean() for x in range(p)]
                     for y in range(p)])


def run(mhaviz, ckpt, text, root, name):
    path = os.path.join(root, name + ".txt")
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    out = os.path.join(root, name)
    shutil.rmtree(out, ignore_errors=True)
    p = subprocess.run([mhaviz, "--model", ckpt, "--text-file", path, "--dump", out],
                       capture_output=True, text=True, timeout=600)
    if p.returncode != 0:
        fail(f"{name}: expected exit 0, got {p.returncode}: {p.stderr.strip()[:300]}")
    with open(os.path.join(out, "meta.json"), encoding="utf-8") as f:
        return out, json.load(f), p.stderr


def main(argv):
    if len(argv) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    mhaviz = argv[0] if os.path.isfile(argv[0]) else os.path.join(argv[0], "mhaviz")
    root = tempfile.mkdtemp(prefix="mhaviz-long-")
    try:
        ckpt = os.path.join(root, "ckpt")
        voc = bpe_ref.train([gpt2_gen.TRAIN_TEXT], 120)
        gpt2_gen.gen(ckpt, 2, 4, 32, CTX, voc, "F32", False, False, False, 1e-5, 11)
        tok = bpe_ref.load(os.path.join(ckpt, "vocab.json"), os.path.join(ckpt, "merges.txt"))
        cfg, _ = gpt2_ref.load(ckpt)
        L, H = cfg["n_layer"], cfg["n_head"]

        # 1024 tokens: the whole context, no note
        text = text_of(tok, CTX)
        ids = tok.encode(text)
        out, meta, err = run(mhaviz, ckpt, text, root, "t1024")
        if err.strip():
            fail(f"1024 tokens: expected nothing on stderr, got {err.strip()[:300]!r}")
        if meta.get("n") != CTX or meta.get("n_text") != CTX:
            fail(f"1024 tokens: expected meta n = n_text = {CTX}, got {meta.get('n')}, "
                 f"{meta.get('n_text')}")
        ref = gpt2_ref.forward(ckpt, ids)
        worst = model_check.compare("1024 tokens", out, cfg, ids, ref, H)
        if model_check.FAILURES:
            fail("1024 tokens against gpt2_ref.py: " + "; ".join(model_check.FAILURES)[:600])

        # the overview's maps: numpy's own max-pool of the reference attention
        ov = np.load(os.path.join(out, "overview.npy"))
        p = ov.shape[1]
        if ov.shape != (L * H, 256, 256):
            fail(f"overview.npy: expected shape {(L * H, 256, 256)}, got {ov.shape}")
        pool_err, mean_gap = 0.0, 0.0
        for l in range(L):
            for j in range(H):
                a = np.asarray(ref["attn"][l][j], dtype=np.float64)
                want = max_pool(a, p)
                got = ov[l * H + j].astype(np.float64)
                pool_err = max(pool_err, float(np.max(np.abs(got - want))))
                mean_gap = max(mean_gap, float(np.max(np.abs(mean_pool(a, p) - want))))
        if pool_err > POOL_ATOL:
            fail(f"overview.npy: expected numpy's max-pool within {POOL_ATOL}, got {pool_err:.3g}")
        if mean_gap <= 10 * POOL_ATOL:
            fail(f"set-up: a mean-pool is within {mean_gap:.3g} of the max-pool: the check "
                 f"could not tell them apart")

        # 1025 tokens: cut to the context, and said in one line
        text = text_of(tok, CTX + 1)
        out, meta, err = run(mhaviz, ckpt, text, root, "t1025")
        lines = err.splitlines()
        if (len(lines) != 1 or not lines[0].startswith("mhaviz: ") or str(CTX) not in lines[0]
                or str(CTX + 1) not in lines[0]):
            fail(f"1025 tokens: expected one line 'mhaviz: ...' naming {CTX} and {CTX + 1}, "
                 f"got {err!r}"[:400])
        if meta.get("n") != CTX or meta.get("n_text") != CTX + 1:
            fail(f"1025 tokens: expected meta n = {CTX}, n_text = {CTX + 1}, got "
                 f"{meta.get('n')}, {meta.get('n_text')}")
        print(f"long_check: 1024 tokens within attn {worst['attn']:.2g}, out {worst['out']:.2g}, "
              f"final {worst['final']:.2g}, p {worst['p']:.2g}; overview max-pool within "
              f"{pool_err:.2g} (a mean-pool {mean_gap:.2g} away); 1025: {lines[0]}")
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
