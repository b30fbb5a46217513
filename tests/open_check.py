#!/usr/bin/python3
"""open_check.py MHAVIZ: the Llama family opened by the program itself, tokenizer and
all. For llama, qwen2, qwen3, gemma, mistral and phi3 (fused qkv_proj, gate_up_proj),
and sharded llama and qwen3 (model.safetensors.index.json beside 3 and 2 files), llama_gen.py writes a checkpoint WITH a
tokenizer.json (byte-level BPE with Llama 3's Split regex and <|begin_of_text|>, or
SentencePiece-style BPE with byte fallback and <s>); `MHAVIZ --model DIR --text T
--dump OUT` must give the token ids Hugging Face's tokenizers give (the npm package
@huggingface/tokenizers under node where MHAVIZ_HF_TOKENIZERS names its folder, else
tokjson_ref.py, the Python reference), the BOS included, and every layer's attention
within 1e-4, every layer's output (out.npy) and the final norm within 1e-3 relative of
llama_ref.py's float64 forward on those ids, the next-token top-1 identical. meta.json
names the model type, its K/V heads and head width. A text longer than the model's
positions, or than Mistral's sliding_window, is cut to them (n < n_text): within the
window the reference's sliding-window mask is the causal one."""
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import llama_gen  # noqa: E402
import llama_ref  # noqa: E402
import tokjson_ref  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
FAILS = []

TEXTS = ["The quick brown fox jumps over the lazy dog. It's 2024!",
         "Don't STOP: we've 12345 numbers\n\tand café naïve 日本語 👍🏽",
         "aaa aaa !!! ??? " * 30]  # past 64 positions: cut

CASES = [  # name, llama_gen's arguments
    ("llama", dict(typ="llama", layers=2, heads=6, kv_heads=2, head_dim=8, hidden=48, ff=80,
                   rope={"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0,
                         "high_freq_factor": 4.0, "original_max_position_embeddings": 16},
                   tokenizer="bytelevel", seed=11)),
    ("qwen2", dict(typ="qwen2", layers=2, heads=4, kv_heads=2, head_dim=10, hidden=40, ff=48,
                   theta=1e6, tokenizer="bytelevel", vocab_pad=13, dtype="BF16", seed=12)),
    ("qwen3", dict(typ="qwen3", layers=3, heads=4, kv_heads=1, head_dim=16, hidden=40, ff=64,
                   tied=True, rope={"rope_type": "linear", "factor": 2.0},
                   tokenizer="sentencepiece", dtype="F16", seed=13)),
    ("gemma", dict(typ="gemma", layers=2, heads=4, kv_heads=1, head_dim=8, hidden=24, ff=56,
                   tied=True, tokenizer="sentencepiece", prefix=False, seed=14)),
    # a sliding window shorter than the positions: texts cut to it
    ("mistral", dict(typ="mistral", layers=2, heads=8, kv_heads=2, head_dim=6, hidden=48,
                     ff=64, tokenizer="sentencepiece", extra={"sliding_window": 20},
                     dtype="BF16", seed=15)),
    ("phi3", dict(typ="phi3", layers=2, heads=6, kv_heads=3, head_dim=10, hidden=48, ff=72,
                  tokenizer="bytelevel", extra={"rms_norm_eps": 1e-5}, seed=16)),
    # sharded: model.safetensors.index.json and three files, a layer across two of them
    ("llama-sharded", dict(typ="llama", layers=3, heads=4, kv_heads=2, head_dim=12, hidden=48,
                           ff=64, tokenizer="bytelevel", shards=3, dtype="BF16", seed=17)),
    ("qwen3-sharded", dict(typ="qwen3", layers=2, heads=4, kv_heads=2, head_dim=16, hidden=40,
                           ff=64, tokenizer="sentencepiece", shards=2, seed=18)),
]


def check(cond, msg):
    if not cond:
        FAILS.append(msg)
        print("FAIL:", msg)


def ref_ids(tok_path, text):
    """the ids Hugging Face gives (specials included): node's package, or tokjson_ref"""
    root = os.environ.get("MHAVIZ_HF_TOKENIZERS", "")
    data = text.encode()
    if root and os.path.isdir(os.path.join(root, "node_modules", "@huggingface", "tokenizers")):
        out = subprocess.run(["node", os.path.join(HERE, "tokjson_hf.mjs"), tok_path, "-s"],
                             input=b"%d\n" % len(data) + data, capture_output=True,
                             check=True).stdout
        return [int(x) for x in out.split()], "@huggingface/tokenizers"
    with open(tok_path, encoding="utf-8") as f:
        return tokjson_ref.Ref(json.load(f)).encode(data, special=True), "tokjson_ref.py"


def rel(a, b):
    return float(np.max(np.abs(a - b)) / max(float(np.max(np.abs(b))), 1e-30))


def one(mhaviz, tmp, name, c, d, k, text):
    out = os.path.join(tmp, f"{name}-dump-{k}")
    p = subprocess.run([mhaviz, "--model", d, "--text", text, "--dump", out],
                       capture_output=True, text=True, timeout=120)
    check(p.returncode == 0, f"{name} text {k}: exit {p.returncode}: {p.stderr.strip()}")
    if p.returncode:
        return
    with open(os.path.join(out, "tokens.json")) as f:
        got = json.load(f)["ids"]
    with open(os.path.join(out, "meta.json")) as f:
        meta = json.load(f)
    want, who = ref_ids(os.path.join(d, "tokenizer.json"), text)
    n = meta["n"]
    most = min(c["max_position_embeddings"], c.get("sliding_window") or 1 << 30)
    check(meta["n_text"] == len(want) and n == min(len(want), most),
          f"{name} text {k}: n {n}, n_text {meta['n_text']}, want {len(want)} tokens")
    check(got == want[:n], f"{name} text {k}: ids {got[:12]}..., {who} {want[:12]}...")
    m = meta["model"]
    check((m["type"], m["n_head"], m["n_kv_head"], m["d_head"]) ==
          (c["model_type"], c["num_attention_heads"], c["num_key_value_heads"], c["head_dim"]),
          f"{name}: meta.json's model {m}")
    ref = llama_ref.forward(d, got)
    worst = {"attn": 0.0, "out": 0.0}
    for layer in range(c["num_hidden_layers"]):
        attn = np.load(os.path.join(out, f"layer_{layer + 1}", "attn.npy"))
        o = np.load(os.path.join(out, f"layer_{layer + 1}", "out.npy"))
        check(attn.shape == ref["attn"][layer].shape, f"{name}: attn shape {attn.shape}")
        if attn.shape == ref["attn"][layer].shape:
            worst["attn"] = max(worst["attn"], float(np.max(np.abs(attn - ref["attn"][layer]))))
        worst["out"] = max(worst["out"], rel(o, ref["out"][layer]))
    worst["final"] = rel(np.load(os.path.join(out, "final.npy")), ref["final"])
    with open(os.path.join(out, "next.json")) as f:
        top = json.load(f)["top"][0]["id"]
    same = top == int(np.argmax(ref["logits"]))
    print(f"{name} text {k}: {n} tokens ({who} ids equal: {got == want[:n]}), top-1 same "
          f"{same}; worst " + ", ".join(f"{key} {v:.2e}" for key, v in worst.items()))
    check(worst["attn"] <= 1e-4 and worst["out"] <= 1e-3 and worst["final"] <= 1e-3,
          f"{name} text {k}: outside bounds {worst}")
    check(same, f"{name} text {k}: next-token top-1 {top}, the reference's "
          f"{int(np.argmax(ref['logits']))}")


def main():
    mhaviz = sys.argv[1]
    with tempfile.TemporaryDirectory() as tmp:
        for name, kw in CASES:
            d = os.path.join(tmp, name)
            c = llama_gen.gen(d, **kw)
            for k, text in enumerate(TEXTS):
                one(mhaviz, tmp, name, c, d, k, text)
    if FAILS:
        sys.exit(f"open_check: {len(FAILS)} failures")
    print("open_check: all passed")


if __name__ == "__main__":
    main()
