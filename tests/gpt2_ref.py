#!/usr/bin/python3
"""gpt2_ref.py: a reference forward of a GPT-2 checkpoint in Hugging Face's layout,
in PyTorch (float64 by default), written from Hugging Face GPT2LMHeadModel's
published semantics (nothing of mhaviz's C code):

    x = wte[ids] + wpe[0..n)
    per layer:
        a = ln_1(x); qkv = a @ c_attn.weight + c_attn.bias       (Conv1D: (in, out))
        q, k, v = the thirds of qkv's columns; head j = columns j*dh:(j+1)*dh of each
        A_j = softmax(q_j k_j^T / sqrt(dh)), future keys -inf (causal)
        Concat = [A_1 v_1 .. A_h v_h] (heads in `off` zeroed here)
        out = Concat @ c_proj.weight + c_proj.bias;  x = x + out
        x = x + mlp(ln_2(x)), mlp(y) = gelu_new(y @ c_fc.weight + b) @ c_proj.weight + b,
            gelu_new(u) = 0.5 u (1 + tanh(sqrt(2/pi) (u + 0.044715 u^3)))
    final = ln_f(x); logits = final @ wte^T (tied); probs = softmax(logits)
    LayerNorm(y) = (y - mean) / sqrt(var + eps) * weight + bias (biased variance,
    eps = config.json's layer_norm_epsilon)

Re-split at h' heads (h' divides d): each layer's attention recomputed from that
layer's own ln_1 output in the model's stream, with the same q, k, v (bias
included) split into h' heads of d/h' columns, scale 1/sqrt(d/h'), causal, then
Concat @ c_proj + bias: that layer's attn (h', n, n) and out (n, d). The stream
itself continues as the model's (each layer's input is the model's own), so final
and the logits are the model's.

Head removal: off = a set of (layer, head), both 0-based; those heads' bands of
Concat are zeroed before c_proj and later layers see the changed stream.

API:
    load(ckpt_dir) -> (config dict, {name without "transformer.": float32 ndarray})
    read_safetensors(path) -> {name: float32 ndarray}  (F32, F16, BF16; by hand)
    forward(ckpt_dir, ids, off=set(), resplit=None, dtype=torch.float64) ->
        dict(attn=[(h, n, n)] * L, out=[(n, d)] * L (the attention sublayer's output,
        c_proj(...) + bias, before the residual), final (n, d) after ln_f,
        logits_last (V), probs_last (V)), all numpy float64 (or dtype's)
    forward_tensors(cfg, W, ids, off, resplit) : the same on torch tensors W (name ->
        tensor of the wanted dtype), returning torch tensors; no autograd needed
        (call it under torch.inference_mode()).

CLI: gpt2_ref.py CKPT_DIR ID [ID ...] [-H K]: prints the top 10 next tokens."""
import json
import math
import os
import struct
import sys

import numpy as np
import torch

PREFIX = "transformer."


def read_safetensors(path):
    """Parses a .safetensors file by hand: {name: float32 array (shape as stored)}."""
    with open(path, "rb") as f:
        buf = f.read()
    (hlen,) = struct.unpack_from("<Q", buf, 0)
    header = json.loads(buf[8:8 + hlen].decode("utf-8"))
    base = 8 + hlen
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        b, e = info["data_offsets"]
        raw = buf[base + b:base + e]
        shape = tuple(info["shape"])
        dt = info["dtype"]
        if dt == "F32":
            a = np.frombuffer(raw, dtype="<f4").astype(np.float32)
        elif dt == "F16":
            a = np.frombuffer(raw, dtype="<f2").astype(np.float32)
        elif dt == "BF16":
            a = (np.frombuffer(raw, dtype="<u2").astype(np.uint32) << 16).view(np.float32)
        else:
            raise ValueError(f"{path}: {name}: dtype {dt} not handled")
        if a.size != int(np.prod(shape, dtype=np.int64)):
            raise ValueError(f"{path}: {name}: {a.size} values for shape {shape}")
        out[name] = a.reshape(shape)
    return out


_CACHE = {}


def load(ckpt_dir):
    """(config, weights) of a checkpoint folder; names without "transformer.";
    buffers (attn.bias, attn.masked_bias) and lm_head.weight dropped."""
    key = os.path.abspath(ckpt_dir)
    st = os.stat(os.path.join(key, "model.safetensors"))
    stamp = (st.st_mtime_ns, st.st_size)
    if key in _CACHE and _CACHE[key][0] == stamp:
        return _CACHE[key][1]
    with open(os.path.join(key, "config.json")) as f:
        cfg = json.load(f)
    raw = read_safetensors(os.path.join(key, "model.safetensors"))
    w = {}
    for name, a in raw.items():
        n = name[len(PREFIX):] if name.startswith(PREFIX) else name
        if n == "lm_head.weight" or n.endswith(".attn.bias") or n.endswith(".attn.masked_bias"):
            continue
        w[n] = a
    _CACHE.clear()
    _CACHE[key] = (stamp, (cfg, w))
    return cfg, w


def _ln(x, g, b, eps):
    mu = x.mean(-1, keepdim=True)
    var = ((x - mu) ** 2).mean(-1, keepdim=True)
    return (x - mu) / torch.sqrt(var + eps) * g + b


def _gelu_new(u):
    return 0.5 * u * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (u + 0.044715 * u ** 3)))


def _attention(qkv, n_heads, d, causal):
    """(attn (h, n, n), Concat before removal as (h, n, dh)) for qkv (n, 3d)."""
    n = qkv.shape[0]
    dh = d // n_heads
    q, k, v = qkv[:, :d], qkv[:, d:2 * d], qkv[:, 2 * d:]
    q = q.reshape(n, n_heads, dh).transpose(0, 1)
    k = k.reshape(n, n_heads, dh).transpose(0, 1)
    v = v.reshape(n, n_heads, dh).transpose(0, 1)
    s = q @ k.transpose(1, 2) / math.sqrt(dh)
    s = s.masked_fill(causal, float("-inf"))
    a = torch.softmax(s, dim=-1)
    return a, a @ v


def forward_tensors(cfg, W, ids, off=frozenset(), resplit=None):
    """The forward on torch tensors W (see the module's docstring)."""
    L, H, d = cfg["n_layer"], cfg["n_head"], cfg["n_embd"]
    eps = float(cfg["layer_norm_epsilon"])
    n = len(ids)
    if n < 1 or n > cfg["n_positions"]:
        raise ValueError(f"{n} tokens: must be 1..n_positions ({cfg['n_positions']})")
    if resplit is not None and (resplit < 1 or d % resplit):
        raise ValueError(f"re-split at {resplit} heads: must divide d = {d}")
    idx = torch.as_tensor(list(ids), dtype=torch.long)
    x = W["wte.weight"][idx] + W["wpe.weight"][:n]
    causal = torch.triu(torch.ones(n, n, dtype=torch.bool), diagonal=1)
    attns, outs = [], []
    for l in range(L):
        p = f"h.{l}."
        a_in = _ln(x, W[p + "ln_1.weight"], W[p + "ln_1.bias"], eps)
        qkv = a_in @ W[p + "attn.c_attn.weight"] + W[p + "attn.c_attn.bias"]
        att, heads = _attention(qkv, H, d, causal)
        for (ol, oh) in off:
            if ol == l:
                heads[oh] = 0
        concat = heads.transpose(0, 1).reshape(n, d)
        out = concat @ W[p + "attn.c_proj.weight"] + W[p + "attn.c_proj.bias"]
        if resplit is None:
            attns.append(att)
            outs.append(out)
        else:
            ratt, rheads = _attention(qkv, resplit, d, causal)
            rcat = rheads.transpose(0, 1).reshape(n, d)
            attns.append(ratt)
            outs.append(rcat @ W[p + "attn.c_proj.weight"] + W[p + "attn.c_proj.bias"])
        x = x + out
        m = _ln(x, W[p + "ln_2.weight"], W[p + "ln_2.bias"], eps)
        m = _gelu_new(m @ W[p + "mlp.c_fc.weight"] + W[p + "mlp.c_fc.bias"])
        x = x + m @ W[p + "mlp.c_proj.weight"] + W[p + "mlp.c_proj.bias"]
    final = _ln(x, W["ln_f.weight"], W["ln_f.bias"], eps)
    logits = W["wte.weight"] @ final[-1]
    return dict(attn=attns, out=outs, final=final, logits_last=logits,
                probs_last=torch.softmax(logits, dim=-1))


def tensors(w, dtype=torch.float64):
    return {k: torch.from_numpy(np.asarray(v)).to(dtype) for k, v in w.items()}


def forward(ckpt_dir, ids, off=frozenset(), resplit=None, dtype=torch.float64):
    cfg, w = load(ckpt_dir)
    W = tensors(w, dtype)
    with torch.inference_mode():
        r = forward_tensors(cfg, W, ids, set(off), resplit)
    return {k: ([t.numpy() for t in v] if isinstance(v, list) else v.numpy())
            for k, v in r.items()}


def main(argv):
    import argparse
    ap = argparse.ArgumentParser(description="reference GPT-2 forward: top 10 next tokens")
    ap.add_argument("ckpt")
    ap.add_argument("ids", type=int, nargs="+")
    ap.add_argument("-H", type=int, default=None, help="re-split at this many heads")
    a = ap.parse_args(argv)
    r = forward(a.ckpt, a.ids, resplit=a.H)
    top = np.argsort(-r["probs_last"], kind="stable")[:10]
    print(json.dumps({"top": [{"id": int(i), "p": float(r["probs_last"][i])} for i in top]}))


if __name__ == "__main__":
    main(sys.argv[1:])
