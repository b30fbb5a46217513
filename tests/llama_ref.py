#!/usr/bin/python3
"""llama_ref.py: a reference forward of the Llama family (llama, mistral, qwen2,
qwen3, gemma, phi3) in float64 PyTorch, written from Hugging Face's published semantics
(modeling_llama.py, modeling_mistral.py, modeling_qwen2.py, modeling_qwen3.py,
modeling_gemma.py, modeling_phi3.py and modeling_rope_utils.py), independent of mhaviz:
it reads the checkpoint's safetensors by hand (gpt2_ref.read_safetensors; a sharded
one's files as its model.safetensors.index.json names them) and its config.json.

    forward(ckpt_dir, ids, off=(), faults=()) -> {"attn": [(h, n, n)], "q": [...],
        "k": [...], "q_pre": [...], "k_pre": [...] (before RoPE), "out": [(n, d)],
        "resid": [(n, d)], "final": (n, d), "logits": (V,)}

- RMSNorm: x * rsqrt(mean(x^2) + eps) * w (Gemma: * (1 + w)), on the stream before
  attention and before the MLP, and at the end.
- Embeddings: embed_tokens[ids] (Gemma: times sqrt(hidden_size) rounded to float32).
- Q, K, V = x W^T + b (nn.Linear, (out, in)); Qwen3: RMSNorm of each head's Q and K
  (q_norm, k_norm over head_dim) before RoPE.
- RoPE: inv_freq_j = 1 / theta^(2j / head_dim), divided by factor (linear) or
  Llama 3's wavelength-banded scaling; angle = position inv_freq; x cos +
  rotate_half(x) sin with rotate_half(x) = (-x2, x1) over the two halves of head_dim.
- Grouped-query attention: K, V repeated (repeat_kv): query head i reads K/V head
  i // (h / h_kv); scores Q K^T / sqrt(head_dim), causal, softmax; heads in `off`
  (pairs (layer, head)) have their band of the concatenation zeroed before o_proj.
- Mistral, Phi-3: a key j is seen by query i only when i - j < sliding_window (and
  j <= i), as Hugging Face's sliding-window mask.
- Phi-3: qkv_proj's output is Q | K | V (h hd, h_kv hd, h_kv hd columns), gate_up_proj's
  is gate | up (chunk(2)); split here on reading.
- MLP: down(act(gate(x)) * up(x)), act SiLU (Llama, Qwen) or GELU-tanh (Gemma).
- logits of the last position: final @ lm_head^T (or embed_tokens^T when tied).

faults plant a known mistake, for the check that the comparison catches it:
"gqa_mod" (head i reads K/V head i % h_kv), "rope_interleaved" (pairs (2j, 2j+1)),
"rope_unscaled" (rope_scaling ignored), "norm_plain" (Gemma's 1 + w read as w),
"no_qk_norm", "scale_d_over_h" (1 / sqrt(d_model / h)), "no_emb_scale", and for head_i
alone (the attention unchanged) "v_gqa_mod" (head i reads V of K/V head i % h_kv),
"heads_attn_t" (A_i^T V in place of A_i V)."""
import json
import math
import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gpt2_ref import read_safetensors  # noqa: E402


def load(ckpt_dir):
    with open(os.path.join(ckpt_dir, "config.json")) as f:
        c = json.load(f)
    index = os.path.join(ckpt_dir, "model.safetensors.index.json")
    if os.path.exists(index):  # sharded: every file the index names, each once
        with open(index) as f:
            files = sorted(set(json.load(f)["weight_map"].values()))
        raw = {}
        for name in files:
            raw.update(read_safetensors(os.path.join(ckpt_dir, name)))
    else:
        raw = read_safetensors(os.path.join(ckpt_dir, "model.safetensors"))
    w = {}
    for k, v in raw.items():
        w[k[len("model."):] if k.startswith("model.") else k] = torch.from_numpy(
            np.array(v, dtype=np.float64))
    if c["model_type"] == "phi3":  # qkv[..., :h hd], [h hd: + kv hd], the rest; chunk(2)
        qd = c["num_attention_heads"] * c["head_dim"]
        kvd = c["num_key_value_heads"] * c["head_dim"]
        for i in range(c["num_hidden_layers"]):
            p = f"layers.{i}."
            qkv = w.pop(p + "self_attn.qkv_proj.weight")
            w[p + "self_attn.q_proj.weight"] = qkv[:qd]
            w[p + "self_attn.k_proj.weight"] = qkv[qd:qd + kvd]
            w[p + "self_attn.v_proj.weight"] = qkv[qd + kvd:]
            gate, up = w.pop(p + "mlp.gate_up_proj.weight").chunk(2, dim=0)
            w[p + "mlp.gate_proj.weight"], w[p + "mlp.up_proj.weight"] = gate, up
    return c, w


def inv_freq(c, hd, faults):
    inv = 1.0 / (c.get("rope_theta", 10000.0) ** (torch.arange(0, hd, 2).double() / hd))
    rs = c.get("rope_scaling")
    if not rs or "rope_unscaled" in faults:
        return inv
    kind = rs.get("rope_type", rs.get("type"))
    if kind == "linear":
        return inv / rs["factor"]
    if kind != "llama3":
        return inv
    factor, low, high = rs["factor"], rs["low_freq_factor"], rs["high_freq_factor"]
    old = rs["original_max_position_embeddings"]
    low_wl, high_wl = old / low, old / high
    wavelen = 2 * math.pi / inv
    inv_l = torch.where(wavelen > low_wl, inv / factor, inv)
    smooth = (old / wavelen - low) / (high - low)
    smoothed = (1 - smooth) * inv_l / factor + smooth * inv_l
    medium = ~(wavelen < high_wl) * ~(wavelen > low_wl)
    return torch.where(medium, smoothed, inv_l)


def rms(x, w, eps, plus_one):
    y = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps)
    return y * (1.0 + w) if plus_one else w * y


def rope(x, cos, sin, faults):
    """x (n, heads, hd); cos, sin (n, hd)"""
    if "rope_interleaved" in faults:
        x1, x2 = x[..., 0::2], x[..., 1::2]
        c, s = cos[:, None, : x.shape[-1] // 2], sin[:, None, : x.shape[-1] // 2]
        out = torch.empty_like(x)
        out[..., 0::2] = x1 * c - x2 * s
        out[..., 1::2] = x2 * c + x1 * s
        return out
    half = x.shape[-1] // 2
    rot = torch.cat((-x[..., half:], x[..., :half]), dim=-1)
    return x * cos[:, None, :] + rot * sin[:, None, :]


def attention(c, w, p, hn, cos, sin, off_l, faults, pre):
    """pre: (Q, K) before RoPE (after QK-norm) appended, (n, h hd) and (n, h_kv hd)"""
    typ = c["model_type"]
    n = hn.shape[0]
    h, kv, hd = c["num_attention_heads"], c["num_key_value_heads"], c["head_dim"]
    eps, gemma = c.get("rms_norm_eps", 1e-6), typ == "gemma"

    def lin(x, name):
        y = x @ w[p + name + ".weight"].T
        b = w.get(p + name + ".bias")
        return y + b if b is not None else y

    q = lin(hn, "self_attn.q_proj").view(n, h, hd)
    k = lin(hn, "self_attn.k_proj").view(n, kv, hd)
    v = lin(hn, "self_attn.v_proj").view(n, kv, hd)
    if typ == "qwen3" and "no_qk_norm" not in faults:
        q = rms(q, w[p + "self_attn.q_norm.weight"], eps, False)
        k = rms(k, w[p + "self_attn.k_norm.weight"], eps, False)
    pre.append((q.reshape(n, h * hd).numpy(), k.reshape(n, kv * hd).numpy()))
    q, k = rope(q, cos, sin, faults), rope(k, cos, sin, faults)
    if "gqa_mod" in faults:
        idx = torch.arange(h) % kv
    else:
        idx = torch.arange(h) // (h // kv)
    vidx = torch.arange(h) % kv if "v_gqa_mod" in faults else idx
    kr, vr = k[:, idx, :], v[:, vidx, :]
    scale = 1 / math.sqrt(c["hidden_size"] / h) if "scale_d_over_h" in faults else hd ** -0.5
    scores = torch.einsum("qhd,khd->hqk", q, kr) * scale
    mask = torch.triu(torch.ones(n, n, dtype=torch.bool), 1)
    window = c.get("sliding_window") if typ in ("mistral", "phi3") else None
    if window:
        pos = torch.arange(n)
        mask = mask | (pos[:, None] - pos[None, :] >= window)
    scores = scores.masked_fill(mask, float("-inf"))
    attn = torch.softmax(scores, dim=-1)
    heads = torch.einsum("hkq,khd->qhd" if "heads_attn_t" in faults else "hqk,khd->qhd", attn,
                         vr)
    every = heads.permute(1, 0, 2).clone()  # (h, n, hd): head_i = A_i V, removed heads' too
    for j in off_l:
        heads[:, j, :] = 0
    out = lin(heads.reshape(n, h * hd), "self_attn.o_proj")
    return attn, q.reshape(n, h * hd), k.reshape(n, kv * hd), out, every


def forward(ckpt_dir, ids, off=(), faults=(), loaded=None, dtype=torch.float64):
    """loaded: load(ckpt_dir)'s (c, w) read once (torch_bench.py times the forward
    alone, in float32: dtype casts the weights and RoPE's cos and sin)"""
    c, w = loaded if loaded else load(ckpt_dir)
    if dtype != torch.float64:
        w = {k: v.to(dtype) for k, v in w.items()}
    typ = c["model_type"]
    gemma = typ == "gemma"
    eps = c.get("rms_norm_eps", 1e-6)
    plus_one = gemma and "norm_plain" not in faults
    n = len(ids)
    x = w["embed_tokens.weight"][torch.tensor(ids)]
    if gemma and "no_emb_scale" not in faults:
        x = x * float(np.float32(c["hidden_size"] ** 0.5))
    hd = c["head_dim"]
    ang = torch.arange(n).double()[:, None] * inv_freq(c, hd, faults)[None, :]
    emb = torch.cat((ang, ang), dim=-1)
    cos, sin = emb.cos().to(dtype), emb.sin().to(dtype)
    act = (lambda t: torch.nn.functional.gelu(t, approximate="tanh")) if gemma else \
        torch.nn.functional.silu
    r = {"attn": [], "q": [], "k": [], "out": [], "resid": [], "heads": []}
    pre = []
    for i in range(c["num_hidden_layers"]):
        p = f"layers.{i}."
        hn = rms(x, w[p + "input_layernorm.weight"], eps, plus_one)
        attn, q, k, out, heads = attention(c, w, p, hn, cos, sin,
                                           [j for (l, j) in off if l == i], faults, pre)
        x = x + out
        hn = rms(x, w[p + "post_attention_layernorm.weight"], eps, plus_one)
        mlp = (act(hn @ w[p + "mlp.gate_proj.weight"].T) * (hn @ w[p + "mlp.up_proj.weight"].T)) \
            @ w[p + "mlp.down_proj.weight"].T
        x = x + mlp
        for key, val in (("attn", attn), ("q", q), ("k", k), ("out", out), ("resid", x),
                         ("heads", heads)):
            r[key].append(val.numpy())
    final = rms(x, w["norm.weight"], eps, plus_one)
    head = w["lm_head.weight"] if "lm_head.weight" in w else w["embed_tokens.weight"]
    r["q_pre"], r["k_pre"] = [a for a, _ in pre], [b for _, b in pre]
    r["final"] = final.numpy()
    r["logits"] = (final[-1] @ head.T).numpy()
    return r
