#!/usr/bin/python3
"""open_check.py MHAVIZ: the Llama family opened by the program itself, tokenizer and
all. For llama, qwen2, qwen3, gemma, mistral and phi3 (fused qkv_proj, gate_up_proj),
and sharded llama and qwen3 (model.safetensors.index.json beside 3 and 2 files),
llama_gen.py writes a checkpoint WITH a tokenizer.json (byte-level BPE with Llama 3's
Split regex and <|begin_of_text|>, or
SentencePiece-style BPE with byte fallback and <s>); `MHAVIZ --model DIR --text T
--dump OUT` must give the token ids Hugging Face's tokenizers give (the npm package
@huggingface/tokenizers under node where MHAVIZ_HF_TOKENIZERS names its folder, else
tokjson_ref.py, the Python reference), the BOS included, and every layer's attention
within 1e-4, every layer's output (out.npy) and the final norm within 1e-3 relative of
llama_ref.py's float64 forward on those ids, the next-token top-1 identical. meta.json
names the model type, its K/V heads and head width. A text longer than the model's
positions, or than Mistral's sliding_window, is cut to them (n < n_text): within the
window the reference's sliding-window mask is the causal one. Then hostile folders
(HOSTILE: an unknown model_type, h_kv not dividing h, an index naming a missing shard,
shapes disagreeing with config.json, a broken tokenizer.json, merges naming unknown
symbols, tokenizer ids past vocab_size, ...): each exit 1 or 2 with one "mhaviz: " line
saying what, no dump, nothing written into the folder."""
import html
import json
import os
import re
import shutil
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


def edit_json(path, fn):
    with open(path, encoding="utf-8") as f:
        j = json.load(f)
    fn(j)
    with open(path, "w", encoding="utf-8") as f:
        json.dump(j, f)


def cfg(**kv):
    return lambda d: edit_json(os.path.join(d, "config.json"), lambda j: j.update(kv))


def index_edit(fn):
    return lambda d: edit_json(os.path.join(d, "model.safetensors.index.json"), fn)


def write(name, text):
    def go(d):
        with open(os.path.join(d, name), "w", encoding="utf-8") as f:
            f.write(text)
    return go


def remove(name):
    return lambda d: os.remove(os.path.join(d, name))


def tok_edit(fn):
    return lambda d: edit_json(os.path.join(d, "tokenizer.json"), fn)


def first_key(j):
    return sorted(j["weight_map"])[0]


SHARD2 = "model-00002-of-00003.safetensors"
# name, base ("one": model.safetensors, "sharded": three shards), change, exit code,
# what the line must say
HOSTILE = [
    ("unknown model_type", "one", cfg(model_type="falcon"), 2, 'model_type "falcon"'),
    ("h_kv does not divide h", "one", cfg(num_key_value_heads=4), 2, "does not divide"),
    ("index names a missing shard", "sharded", remove(SHARD2), 1, SHARD2),
    ("shapes disagree with config", "one", cfg(intermediate_size=81), 2, "has shape"),
    ("tokenizer.json broken", "one", write("tokenizer.json", '{"model": {"type": "BPE", '),
     2, "tokenizer.json"),
    ("merges name unknown symbols", "one",
     tok_edit(lambda j: j["model"]["merges"].append(["\u4e00\u4e8c", "zz"])), 2,
     "tokenizer.json"),
    ("tokenizer ids past vocab_size", "one", cfg(vocab_size=300), 2, "past config.json"),
    ("unknown rope_scaling type", "one", cfg(rope_scaling={"rope_type": "yarn", "factor": 4}),
     2, "yarn"),
    ("index names a shard elsewhere", "sharded",
     index_edit(lambda j: j["weight_map"].update({first_key(j): "../x.safetensors"})), 2,
     "not a .safetensors file beside"),
    ("index misses a shard's tensor", "sharded",
     index_edit(lambda j: j["weight_map"].pop(first_key(j))), 2, "not in weight_map"),
    ("index puts a tensor in the wrong shard", "sharded",
     index_edit(lambda j: j["weight_map"].update({first_key(j): SHARD2})), 2, "does not hold"),
    ("index broken", "sharded", write("model.safetensors.index.json", '{"weight_map": {'), 2,
     "not valid JSON"),
    ("index empty map", "sharded", write("model.safetensors.index.json", '{"weight_map": {}}'),
     2, "empty"),
    ("no tokenizer", "one", remove("tokenizer.json"), 1, "vocab.json"),
    ("tokenizer of a model we do not run", "one",
     tok_edit(lambda j: j["model"].update({"type": "Unigram"})), 2, "tokenizer.json"),
    ("sliding_window 0", "one", cfg(model_type="mistral", sliding_window=0), 2,
     "sliding_window"),
    ("phi3 partial rotary", "one", cfg(model_type="phi3", partial_rotary_factor=0.5), 2,
     "partial_rotary_factor"),
]


def listing(d):
    return sorted((n, os.path.getsize(os.path.join(d, n)), os.path.getmtime(os.path.join(d, n)))
                  for n in os.listdir(d))


def hostile(mhaviz, tmp):
    """Each folder refused: exit 1 or 2 as listed, one "mhaviz: " line saying what,
    no dump and nothing written into the folder."""
    bases = {"one": os.path.join(tmp, "h-one"), "sharded": os.path.join(tmp, "h-sharded")}
    for kind, d in bases.items():
        llama_gen.gen(d, typ="llama", layers=3, heads=6, kv_heads=2, head_dim=8, hidden=48,
                      ff=64, tokenizer="bytelevel", shards=3 if kind == "sharded" else 0,
                      seed=21)
    for k, (name, base, change, code, says) in enumerate(HOSTILE):
        d = os.path.join(tmp, f"hostile-{k}")
        shutil.copytree(bases[base], d)
        change(d)
        before = listing(d)
        out = os.path.join(tmp, f"hostile-{k}-out")
        p = subprocess.run([mhaviz, "--model", d, "--text", "hello", "--dump", out],
                           capture_output=True, text=True, timeout=120)
        lines = p.stderr.splitlines()
        ok = (p.returncode == code and len(lines) == 1 and lines[0].startswith("mhaviz: ") and
              says in lines[0] and not os.path.exists(out) and listing(d) == before)
        print(f"hostile {name}: exit {p.returncode}: {lines[:1]}")
        check(ok, f"hostile {name}: exit {p.returncode} (want {code}), stderr {lines[:3]}, "
              f"dump made {os.path.exists(out)}, folder changed {listing(d) != before}")


def too_big(mhaviz, tmp):
    """A model whose float32 copy does not fit under an address-space limit: refused
    before the block is allocated (exit 1, one line saying how many MB it needs: every
    tensor's values times 4 bytes, counted here from the config). Skipped under
    AddressSanitizer, which reserves terabytes of address space."""
    ldd = subprocess.run(["ldd", mhaviz], capture_output=True, text=True).stdout
    if "libasan" in ldd:
        print("too big: skipped under AddressSanitizer")
        return
    d = os.path.join(tmp, "too-big")
    c = llama_gen.gen(d, typ="llama", layers=2, heads=8, kv_heads=8, head_dim=128, hidden=1024,
                      ff=4096, vocab=50000, tied=True, dtype="BF16", tokenizer="bytelevel",
                      vocab_pad=50000 - 437, seed=22)
    hd, d_, ff = c["head_dim"], c["hidden_size"], c["intermediate_size"]
    per_layer = 2 * d_ + d_ * hd * (c["num_attention_heads"] + 2 * c["num_key_value_heads"]) + \
        hd * c["num_attention_heads"] * d_ + 3 * d_ * ff
    need = 4 * (c["vocab_size"] * d_ + d_ + c["num_hidden_layers"] * per_layer)
    out = os.path.join(tmp, "too-big-out")
    limit = 300 << 20  # the program itself takes 90-210 MB of it (OpenBLAS threads)

    def cap():
        import resource
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    p = subprocess.run([mhaviz, "--model", d, "--text", "hi", "--dump", out], capture_output=True,
                       text=True, timeout=120, preexec_fn=cap)
    lines = p.stderr.splitlines()
    want = f"the model needs {-(-need // (1 << 20))} MB of memory as float32"
    print(f"too big: exit {p.returncode}: {lines[:1]}")
    check(p.returncode == 1 and len(lines) == 1 and want in lines[0] and
          not os.path.exists(out), f"too big: exit {p.returncode}, {lines[:3]}, want {want!r}")


def drawn(mhaviz, tmp):
    """A Qwen3-shaped layer (6 query heads sharing 2 K/V heads, head_dim 12 where
    d_model / h is 8) drawn by --export: every head's map titled with its K/V group
    ("head 5 · K/V 2"), the formula strip giving h, h_kv and head_dim and saying it is
    not d_model / h. (The view refused such a layer once and drew an empty page.)"""
    d = os.path.join(tmp, "drawn")
    llama_gen.gen(d, typ="qwen3", layers=2, heads=6, kv_heads=2, head_dim=12, hidden=48, ff=64,
                  tokenizer="bytelevel", seed=5)
    svg = os.path.join(tmp, "drawn.svg")
    p = subprocess.run([mhaviz, "--model", d, "--text", "The quick brown fox", "--export", svg],
                       capture_output=True, text=True, timeout=120)
    check(p.returncode == 0, f"drawn: exit {p.returncode}: {p.stderr.strip()}")
    text = open(svg, encoding="utf-8").read() if p.returncode == 0 else ""
    for i in range(6):
        want = f"head {i + 1} \u00b7 K/V {i // 3 + 1}"
        check(want in text, f"drawn: no title {want!r}")
    for want in ("head_dim = 12", "\u2260 d"):
        check(want in text, f"drawn: the formula strip lacks {want!r}")
    # the cost panel counts W^Q, W^O of h head_dim columns and W^K, W^V of h_kv head_dim
    params = 2 * 48 * 12 * (6 + 2)
    want = f"parameters 2\u00b7d\u00b7d\u2096(h + h\u2096\u1d65) = {params:,}"
    check(want in text, f"drawn: the cost panel lacks {want!r}")
    # Concat (n, 72) and W^O (72, 48) do not fit the equation's d_model-wide frames: a
    # note says so in their place (there were head bands over empty frames)
    runs = " ".join(re.findall(r">([^<]*)</text", html.unescape(text)))
    check("Concat and W\u1d3c are not drawn: here Concat is 5 \u00d7 72 and W\u1d3c 72 \u00d7 48 "
          "(h \u00b7 d\u2096 = 6 \u00b7 12 = 72 \u2260 d_model = 48)" in runs,
          "drawn: no note in place of Concat and W^O")
    print(f"drawn: {len(FAILS) == 0 and 'titles and formula strip as wanted' or 'BAD'}")
    # the step-through of head 5 (K/V head 2), the grid and RoPE's stage large: drawn
    # (the focused head's S once stopped the program: its Q and K were not there)
    for panel, wants in (("steps:5", ("RoPE \u2192 S", "10  head")),
                         ("steps:5:3", ("Positions enter here", "(K/V head 2's)",
                                        "normed first (QK-norm)"))):
        out = os.path.join(tmp, f"drawn-{panel.replace(':', '-')}.svg")
        p = subprocess.run([mhaviz, "--model", d, "--text", "The quick brown fox", "--panel",
                            panel, "--export", out], capture_output=True, text=True, timeout=120)
        check(p.returncode == 0, f"--panel {panel}: exit {p.returncode}: {p.stderr.strip()}")
        got = html.unescape(open(out, encoding="utf-8").read()) if p.returncode == 0 else ""
        for want in wants:
            check(want in got, f"--panel {panel}: lacks {want!r}")
    # a head past the layer's 6 is refused, nothing written (steps:7 exported a blank
    # image: the random model's -H was all cli.c could check)
    for panel in ("steps:7", "steps:7:3", "head:7", "lines:7"):
        out = os.path.join(tmp, f"drawn-{panel.replace(':', '-')}.png")
        p = subprocess.run([mhaviz, "--model", d, "--text", "The quick brown fox", "--panel",
                            panel, "--export", out], capture_output=True, text=True, timeout=120)
        lines = p.stderr.splitlines()
        check(p.returncode == 2 and lines == [f"mhaviz: --panel {panel.split(':')[0]}:7: "
                                              "there are only 6 heads in the model's layer shown"]
              and not os.path.exists(out), f"--panel {panel}: exit {p.returncode}, {lines}")
    # its heads are not re-split (RoPE pairs dimensions inside a head): -H says so
    for mode in (["--dump", os.path.join(tmp, "drawn-h3")], ["--export", svg + ".h3.svg"]):
        p = subprocess.run([mhaviz, "--model", d, "-H", "3", *mode], capture_output=True,
                           text=True, timeout=120)
        lines = p.stderr.splitlines()
        check(p.returncode == 2 and len(lines) == 1 and "cannot be re-split (RoPE" in lines[0]
              and not os.path.exists(mode[1]), f"-H 3 {mode[0]}: exit {p.returncode}, {lines}")


def main():
    mhaviz = sys.argv[1]
    with tempfile.TemporaryDirectory() as tmp:
        hostile(mhaviz, tmp)
        too_big(mhaviz, tmp)
        drawn(mhaviz, tmp)
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
