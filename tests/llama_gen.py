#!/usr/bin/python3
"""llama_gen.py: writes a random checkpoint of the Llama family in Hugging Face's
layout (config.json and model.safetensors, and with --tokenizer a tokenizer.json built
as tokjson_check.py builds its own: byte-level BPE with Llama 3's Split regex and
<|begin_of_text|>, or SentencePiece-style BPE with byte fallback and <s>; the
config's vocab_size is then the tokenizer's plus --vocab-pad rows, as Qwen pads its
own), for tests: real checkpoints cannot be downloaded here.

    llama_gen.py OUTDIR [--type llama|qwen2|qwen3|gemma] [--layers 2] [--hidden 48]
                 [--heads 6] [--kv-heads 2] [--head-dim 12] [--ff 80] [--vocab 97]
                 [--positions 64] [--theta 10000] [--rope linear:F | llama3:F,LOW,HIGH,ORIG]
                 [--tied 0|1] [--bias 0|1] [--dtype F32|F16|BF16] [--no-prefix] [--seed 0]
                 [--tokenizer bytelevel|sentencepiece] [--vocab-pad 0] [--shards K]

With --shards K the weights go to model-0000i-of-0000K.safetensors beside a
model.safetensors.index.json, as Hugging Face shards a large model.

Tensor names and shapes are those of Hugging Face's LlamaForCausalLM (and Qwen2,
Qwen3, Gemma's *ForCausalLM) state dict, nn.Linear weights stored (out, in):
    model.embed_tokens.weight (V, d), model.norm.weight (d), lm_head.weight (V, d)
      (absent when tied),
    model.layers.{i}.input_layernorm.weight (d),
    model.layers.{i}.self_attn.q_proj.weight (h hd, d), k_proj / v_proj (h_kv hd, d),
      o_proj (d, h hd); q/k/v_proj.bias (Qwen2 always, others with attention_bias,
      which also gives o_proj.bias); q_norm.weight / k_norm.weight (hd) (Qwen3),
    model.layers.{i}.post_attention_layernorm.weight (d),
    model.layers.{i}.mlp.gate_proj.weight / up_proj.weight (ff, d), down_proj (d, ff);
Phi-3 (Phi3ForCausalLM) keeps self_attn.qkv_proj.weight (h hd + 2 h_kv hd, d), Q | K | V
by rows, and mlp.gate_up_proj.weight (2 ff, d), gate | up.
The weights are random with some structure (norm weights near 1, or near 0 for
Gemma's 1 + w; projections scaled so that softmaxes are neither flat nor one-hot)."""
import argparse
import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gpt2_gen import write_safetensors  # noqa: E402

DTYPES = ("F32", "F16", "BF16")


def make_weights(c, typ, seed):
    rng = np.random.default_rng(seed)
    d, hd, h, kv, ff, V = (c["hidden_size"], c["head_dim"], c["num_attention_heads"],
                           c["num_key_value_heads"], c["intermediate_size"], c["vocab_size"])
    gemma = typ == "gemma"

    def r(*shape, std=1.0):
        return (rng.standard_normal(shape) * std).astype(np.float32)

    def norm_w(n):
        return r(n, std=0.1) if gemma else 1 + r(n, std=0.1)

    bias = typ == "qwen2" or c.get("attention_bias", False)
    w = {"embed_tokens.weight": r(V, d, std=1.0 if not gemma else 1 / np.sqrt(d)),
         "norm.weight": norm_w(d)}
    for i in range(c["num_hidden_layers"]):
        p = f"layers.{i}."
        w[p + "input_layernorm.weight"] = norm_w(d)
        w[p + "self_attn.q_proj.weight"] = r(h * hd, d, std=1.5 / np.sqrt(d))
        w[p + "self_attn.k_proj.weight"] = r(kv * hd, d, std=1.5 / np.sqrt(d))
        w[p + "self_attn.v_proj.weight"] = r(kv * hd, d, std=1 / np.sqrt(d))
        w[p + "self_attn.o_proj.weight"] = r(d, h * hd, std=1 / np.sqrt(h * hd))
        if bias:
            w[p + "self_attn.q_proj.bias"] = r(h * hd, std=0.3)
            w[p + "self_attn.k_proj.bias"] = r(kv * hd, std=0.3)
            w[p + "self_attn.v_proj.bias"] = r(kv * hd, std=0.3)
            if typ != "qwen2":
                w[p + "self_attn.o_proj.bias"] = r(d, std=0.3)
        if typ == "qwen3":
            w[p + "self_attn.q_norm.weight"] = 1 + r(hd, std=0.3)
            w[p + "self_attn.k_norm.weight"] = 1 + r(hd, std=0.3)
        w[p + "post_attention_layernorm.weight"] = norm_w(d)
        w[p + "mlp.gate_proj.weight"] = r(ff, d, std=1 / np.sqrt(d))
        w[p + "mlp.up_proj.weight"] = r(ff, d, std=1 / np.sqrt(d))
        w[p + "mlp.down_proj.weight"] = r(d, ff, std=1 / np.sqrt(ff))
        if typ == "phi3":  # Phi-3 keeps them fused: Q | K | V and gate | up by rows
            w[p + "self_attn.qkv_proj.weight"] = np.concatenate(
                [w.pop(p + f"self_attn.{x}_proj.weight") for x in "qkv"])
            w[p + "mlp.gate_up_proj.weight"] = np.concatenate(
                [w.pop(p + f"mlp.{x}_proj.weight") for x in ("gate", "up")])
    return w


def gen(outdir, typ="llama", layers=2, hidden=48, heads=6, kv_heads=2, head_dim=12, ff=80,
        vocab=97, positions=64, theta=10000.0, rope=None, tied=False, bias=False, dtype="F32",
        prefix=True, seed=0, extra=None, tokenizer=None, vocab_pad=0, shards=0):
    """Writes the folder; returns its config (a dict)."""
    os.makedirs(outdir, exist_ok=True)
    if tokenizer:
        vocab = write_tokenizer(outdir, tokenizer) + vocab_pad
    c = {"model_type": typ, "architectures": ["X"], "hidden_size": hidden,
         "intermediate_size": ff, "num_hidden_layers": layers, "num_attention_heads": heads,
         "num_key_value_heads": kv_heads, "head_dim": head_dim, "vocab_size": vocab,
         "max_position_embeddings": positions, "rms_norm_eps": 1e-6, "rope_theta": theta,
         "tie_word_embeddings": tied, "torch_dtype": "float32"}
    if typ not in ("qwen2", "phi3"):
        c["attention_bias"] = bias
    c["hidden_act"] = "silu" if typ != "gemma" else "gelu_pytorch_tanh"
    if typ == "gemma":
        c["hidden_activation"] = "gelu_pytorch_tanh"
    c["rope_scaling"] = rope
    if extra:
        c.update(extra)
    w = make_weights(c, typ, seed)
    named = {("model." if prefix else "") + k: v for k, v in w.items()}
    if not tied:
        named["lm_head.weight"] = np.random.default_rng(seed + 1).standard_normal(
            (vocab, hidden)).astype(np.float32) / np.sqrt(hidden)
    if shards:
        write_shards(outdir, named, dtype, shards)
    else:
        write_safetensors(os.path.join(outdir, "model.safetensors"), named, dtype)
    with open(os.path.join(outdir, "config.json"), "w") as f:
        json.dump(c, f, indent=1)
    return c


def write_shards(outdir, named, dtype, k):
    """model-0000i-of-0000K.safetensors, the tensors dealt out in order (a layer may
    straddle two), and model.safetensors.index.json mapping each name to its file"""
    names = list(named)
    files = [f"model-{i + 1:05d}-of-{k:05d}.safetensors" for i in range(k)]
    per = -(-len(names) // k)
    wmap = {}
    for i, f in enumerate(files):
        part = names[i * per:(i + 1) * per]
        write_safetensors(os.path.join(outdir, f), {n: named[n] for n in part}, dtype)
        wmap.update({n: f for n in part})
    index = {"metadata": {"total_size": sum(v.size for v in named.values()) *
                          (4 if dtype == "F32" else 2)}, "weight_map": wmap}
    with open(os.path.join(outdir, "model.safetensors.index.json"), "w") as f:
        json.dump(index, f, indent=1)


def write_tokenizer(outdir, kind):
    """tokenizer.json of the kind in outdir; returns its size (one past its largest id)"""
    import tokjson_check
    j = tokjson_check.byte_level_file(True, False) if kind == "bytelevel" else \
        tokjson_check.sentencepiece_file(False)
    with open(os.path.join(outdir, "tokenizer.json"), "w", encoding="utf-8") as f:
        json.dump(j, f, ensure_ascii=False)
    ids = list(j["model"]["vocab"].values()) + [a["id"] for a in j.get("added_tokens", [])]
    return max(ids) + 1


def parse_rope(s):
    if not s:
        return None
    kind, _, args = s.partition(":")
    vals = [float(x) for x in args.split(",")]
    if kind == "linear":
        return {"rope_type": "linear", "factor": vals[0]}
    return {"rope_type": "llama3", "factor": vals[0], "low_freq_factor": vals[1],
            "high_freq_factor": vals[2], "original_max_position_embeddings": int(vals[3])}


def main(argv=None):
    ap = argparse.ArgumentParser(description="write a random Llama-family checkpoint folder")
    ap.add_argument("outdir")
    ap.add_argument("--type", default="llama",
                    choices=("llama", "mistral", "qwen2", "qwen3", "gemma", "phi3"))
    for name, default in (("layers", 2), ("hidden", 48), ("heads", 6), ("kv-heads", 2),
                          ("head-dim", 12), ("ff", 80), ("vocab", 97), ("positions", 64),
                          ("tied", 0), ("bias", 0), ("seed", 0), ("vocab-pad", 0),
                          ("shards", 0)):
        ap.add_argument("--" + name, type=int, default=default)
    ap.add_argument("--theta", type=float, default=10000.0)
    ap.add_argument("--rope", default=None)
    ap.add_argument("--dtype", choices=DTYPES, default="F32")
    ap.add_argument("--no-prefix", action="store_true")
    ap.add_argument("--tokenizer", choices=("bytelevel", "sentencepiece"), default=None)
    a = ap.parse_args(argv)
    gen(a.outdir, a.type, a.layers, a.hidden, a.heads, a.kv_heads, a.head_dim, a.ff, a.vocab,
        a.positions, a.theta, parse_rope(a.rope), bool(a.tied), bool(a.bias), a.dtype,
        not a.no_prefix, a.seed, tokenizer=a.tokenizer, vocab_pad=a.vocab_pad,
        shards=a.shards)


if __name__ == "__main__":
    main()
