#!/usr/bin/python3
"""encoder_bench.py BUILD_DIR [--n 128,512] [--runs 7] [--threads 2]: a measurement, not a
test. Times mhaviz's encoder forward (spec_driver --bench: the one layer forward, every
layer's attention kept, as the app runs it) on a bert-base-shaped random checkpoint
(encoder_gen.write: bert_ref.gen's 12 layers, 12 heads, hidden 768, intermediate 3072,
vocab 30,522, 512 positions, F32, ~440 MB, with a vocab.txt, in a temporary folder)
against PyTorch doing the same forward in float32 in the same run (torch ops from Hugging
Face's BertModel semantics, under inference_mode, set_num_threads(threads),
OMP_WAIT_POLICY=PASSIVE as torch_bench.py explains), the two alternating per n. Prints
one JSON line per n and side:
    {"case": "model_forward" | "torch_forward", "n", "median_ms", "min_ms", "runs"}
then the lines of `mhaviz --bench-json --model DIR` on the same folder (its
model_forward at n = 128 and 512, model_fill: the masked-LM head on one blank)."""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # before torch loads OpenMP

import numpy as np  # noqa: E402
import torch  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import encoder_gen  # noqa: E402
from gpt2_ref import read_safetensors  # noqa: E402


def torch_forward(w, c, ids):
    """BertModel's encoder in float32, every layer's attention kept"""
    d, h = c["hidden_size"], c["num_attention_heads"]
    hd, n, eps = d // h, len(ids), c["layer_norm_eps"]
    F = torch.nn.functional
    x = w["embeddings.word_embeddings.weight"][ids] + \
        w["embeddings.token_type_embeddings.weight"][0] + \
        w["embeddings.position_embeddings.weight"][:n]
    x = F.layer_norm(x, (d,), w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"], eps)
    attns = []
    for i in range(c["num_hidden_layers"]):
        p = f"encoder.layer.{i}."
        def lin(t, nm):
            return F.linear(t, w[p + nm + ".weight"], w[p + nm + ".bias"])
        q, k, v = (lin(x, "attention.self." + s).view(n, h, hd).transpose(0, 1)
                   for s in ("query", "key", "value"))
        attn = torch.softmax(q @ k.transpose(1, 2) / (hd ** 0.5), dim=-1)
        attns.append(attn)
        ctx = (attn @ v).transpose(0, 1).reshape(n, d)
        a = F.layer_norm(lin(ctx, "attention.output.dense") + x, (d,),
                         w[p + "attention.output.LayerNorm.weight"],
                         w[p + "attention.output.LayerNorm.bias"], eps)
        x = F.layer_norm(lin(F.gelu(lin(a, "intermediate.dense")), "output.dense") + a, (d,),
                         w[p + "output.LayerNorm.weight"], w[p + "output.LayerNorm.bias"], eps)
    return x, attns


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("--n", default="128,512")
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--threads", type=int, default=2)
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    with tempfile.TemporaryDirectory() as tmp:
        c, _ = encoder_gen.write(tmp, "bert", layers=12, hidden=768, heads=12, ff=3072,
                                 vocab=30522, positions=512, seed=1, mlm=True)
        w = {k[5:]: torch.from_numpy(np.array(v)) for k, v in
             read_safetensors(os.path.join(tmp, "model.safetensors")).items()}
        rng = np.random.default_rng(0)
        for n in (int(x) for x in a.n.split(",")):
            ids = [int(x) for x in rng.integers(0, c["vocab_size"], n)]
            out = subprocess.run([os.path.join(a.build, "tests", "spec_driver"), tmp,
                                  ",".join(map(str, ids)), tmp, "--bench", str(a.runs)],
                                 capture_output=True, text=True, check=True).stdout
            print(out.splitlines()[0], flush=True)
            tid = torch.tensor(ids)
            with torch.inference_mode():
                torch_forward(w, c, tid)
                ms = []
                for _ in range(a.runs):
                    t0 = time.perf_counter()
                    torch_forward(w, c, tid)
                    ms.append((time.perf_counter() - t0) * 1e3)
            print(json.dumps({"case": "torch_forward", "n": n,
                              "median_ms": round(statistics.median(ms), 3),
                              "min_ms": round(min(ms), 3), "runs": a.runs,
                              "threads": a.threads}), flush=True)
        app = subprocess.run([os.path.join(a.build, "mhaviz"), "--bench-json", "--model", tmp],
                             capture_output=True, text=True, check=True).stdout
        for line in app.splitlines():
            if json.loads(line).get("case", "").startswith("model_"):
                print(line, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
