#!/usr/bin/python3
"""bert_ref.py: a random BERT encoder checkpoint in Hugging Face's BertModel layout
(without the pooler or the pre-training heads), and a float64 PyTorch reference
forward written from Hugging Face's modeling_bert.py, independent of mhaviz.

    gen(outdir, ...) -> config;  forward(ckpt_dir, ids, off=()) -> as llama_ref.forward
    (logits None: the encoder has no next-token output)

- embeddings: word_embeddings[ids] + token_type_embeddings[0] + position_embeddings[0..n),
  then LayerNorm (eps layer_norm_eps);
- each layer, post-LN: a = LayerNorm(dense(attention(x)) + x), attention in both directions
  (no mask), scores Q K^T / sqrt(d_model / h), heads in `off` zeroed before dense;
  x' = LayerNorm(dense(act(dense(a))) + a), act GELU exact (erf) or its tanh form;
- no final norm: "final" is the last layer's output."""
import json
import math
import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gpt2_gen import write_safetensors  # noqa: E402
from gpt2_ref import read_safetensors  # noqa: E402


def gen(outdir, layers=2, hidden=32, heads=4, ff=48, vocab=89, positions=64, types=2,
        act="gelu", eps=1e-12, prefix=True, dtype="F32", seed=0):
    os.makedirs(outdir, exist_ok=True)
    rng = np.random.default_rng(seed)

    def r(*shape, std=1.0):
        return (rng.standard_normal(shape) * std).astype(np.float32)

    d = hidden
    w = {"embeddings.word_embeddings.weight": r(vocab, d),
         "embeddings.position_embeddings.weight": r(positions, d, std=0.3),
         "embeddings.token_type_embeddings.weight": r(types, d, std=0.3),
         "embeddings.LayerNorm.weight": 1 + r(d, std=0.1),
         "embeddings.LayerNorm.bias": r(d, std=0.1)}
    for i in range(layers):
        p = f"encoder.layer.{i}."
        for part, std in (("query", 2.0), ("key", 2.0), ("value", 1.0)):
            w[p + f"attention.self.{part}.weight"] = r(d, d, std=std / math.sqrt(d))
            w[p + f"attention.self.{part}.bias"] = r(d, std=0.2)
        w[p + "attention.output.dense.weight"] = r(d, d, std=1 / math.sqrt(d))
        w[p + "attention.output.dense.bias"] = r(d, std=0.2)
        w[p + "attention.output.LayerNorm.weight"] = 1 + r(d, std=0.1)
        w[p + "attention.output.LayerNorm.bias"] = r(d, std=0.1)
        w[p + "intermediate.dense.weight"] = r(ff, d, std=1 / math.sqrt(d))
        w[p + "intermediate.dense.bias"] = r(ff, std=0.2)
        w[p + "output.dense.weight"] = r(d, ff, std=1 / math.sqrt(ff))
        w[p + "output.dense.bias"] = r(d, std=0.2)
        w[p + "output.LayerNorm.weight"] = 1 + r(d, std=0.1)
        w[p + "output.LayerNorm.bias"] = r(d, std=0.1)
    named = {("bert." if prefix else "") + k: v for k, v in w.items()}
    write_safetensors(os.path.join(outdir, "model.safetensors"), named, dtype)
    c = {"model_type": "bert", "hidden_size": d, "num_hidden_layers": layers,
         "num_attention_heads": heads, "intermediate_size": ff, "vocab_size": vocab,
         "max_position_embeddings": positions, "type_vocab_size": types, "hidden_act": act,
         "layer_norm_eps": eps}
    with open(os.path.join(outdir, "config.json"), "w") as f:
        json.dump(c, f, indent=1)
    return c


def forward(ckpt_dir, ids, off=(), faults=()):
    with open(os.path.join(ckpt_dir, "config.json")) as f:
        c = json.load(f)
    w = {(k[5:] if k.startswith("bert.") else k): torch.from_numpy(np.array(v, dtype=np.float64))
         for k, v in read_safetensors(os.path.join(ckpt_dir, "model.safetensors")).items()}
    d, h, eps = c["hidden_size"], c["num_attention_heads"], c["layer_norm_eps"]
    hd, n = d // h, len(ids)

    def ln(x, p):
        return torch.nn.functional.layer_norm(x, (d,), w[p + ".weight"], w[p + ".bias"], eps)

    def lin(x, p):
        return x @ w[p + ".weight"].T + w[p + ".bias"]

    x = w["embeddings.word_embeddings.weight"][torch.tensor(ids)] + \
        w["embeddings.token_type_embeddings.weight"][0]
    x = ln(x + w["embeddings.position_embeddings.weight"][:n], "embeddings.LayerNorm")
    gelu = (lambda t: torch.nn.functional.gelu(t, approximate="tanh")) \
        if c["hidden_act"] != "gelu" else torch.nn.functional.gelu
    r = {"attn": [], "q": [], "k": [], "out": [], "resid": []}
    for i in range(c["num_hidden_layers"]):
        p = f"encoder.layer.{i}."
        q, k, v = (lin(x, p + "attention.self." + s) for s in ("query", "key", "value"))
        qh, kh, vh = (t.view(n, h, hd) for t in (q, k, v))
        scores = torch.einsum("qhd,khd->hqk", qh, kh) / math.sqrt(hd)
        if "causal" in faults:
            scores = scores.masked_fill(torch.triu(torch.ones(n, n, dtype=torch.bool), 1),
                                        float("-inf"))
        attn = torch.softmax(scores, dim=-1)
        heads = torch.einsum("hqk,khd->qhd", attn, vh)
        for (l, j) in off:
            if l == i:
                heads[:, j, :] = 0
        out = lin(heads.reshape(n, d), p + "attention.output.dense")
        a = out + x if "no_attn_ln" in faults else ln(out + x, p + "attention.output.LayerNorm")
        x = ln(lin(gelu(lin(a, p + "intermediate.dense")), p + "output.dense") + a,
               p + "output.LayerNorm")
        for key, val in (("attn", attn), ("q", q), ("k", k), ("out", out), ("resid", x)):
            r[key].append(val.numpy())
    r["final"] = x.numpy()
    r["logits"] = None
    return r
