#!/usr/bin/python3
"""spec_check.py: the one layer forward (src/learn/block.c) on checkpoints that are not
GPT-2-shaped, loaded through the one loader (checkpoint.c with family_llama.c's spec
function and name table), against llama_ref.py's float64 PyTorch forward written from
Hugging Face's semantics. Checkpoints from llama_gen.py (random weights, Hugging Face's
layout), token ids given directly (no tokenizer):

  llama  GQA 6 query heads on 2 K/V heads, head_dim 12 != d_model / h (48 / 6 = 8),
         Llama 3's rope_scaling (all three wavelength bands), SwiGLU, separate lm_head
  qwen3  QK-norm, head_dim 16 != 40 / 4, GQA 4 on 2, linear rope_scaling, tied, BF16
  gemma  RMSNorm with 1 + w, embeddings times sqrt(d_model), GeGLU, multi-query
         (4 heads on 1), head_dim 8 != 24 / 4, tied, F16, no "model." prefix
  qwen2  Q/K/V biases (no o_proj bias), plain RoPE with theta 1e6, h_kv = h, heads removed
  llama3 attention_bias (Q/K/V and o_proj), 3 layers, one head removed in two layers
  bert   an encoder (bert_ref.py): post-LN blocks, the embeddings' LayerNorm, token type 0,
         attention in both directions, GELU exact or tanh, no next-token output

For every layer: the attention (h, n, n) within 1e-4; each head's head_i = A_i V (h, n,
head_dim, as the step-through and the focus view show it) within 1e-4 of the reference's
softmax(Q_i K_g^T / sqrt(head_dim)) V_g, g the K/V head it reads (qwen3 and gemma: head_dim
!= d_model / h, QK-norm, multi-query; a V of the wrong K/V head and A^T V planted there must
fail it); Q and K (after QK-norm and
RoPE, and for a RoPE model before the rotation too, as the step-through shows them), the attention's output projection and the stream out of the layer within 1e-3
relative (max |difference| / max |reference|); the final norm's output and the logits
within 1e-3 relative; the next-token top-1 identical. Then each planted fault of
llama_ref.py that applies to a case (K/V head i % h_kv, RoPE's interleaved pairing,
rope_scaling ignored, Gemma's w for 1 + w, QK-norm left out, 1 / sqrt(d_model / h),
no embedding scale; for BERT a causal mask and the attention's LayerNorm left out)
must make the comparison fail: the test can tell. And hostile
configs and tensors are refused with exit 2 and one "mhaviz: " line naming the fault.
Last, `mhaviz --model DIR --dump` on a GPT-2 checkpoint opens config.json once (strace).

    spec_check.py BUILD_DIR"""
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import llama_gen  # noqa: E402
import llama_ref  # noqa: E402
import bert_ref  # noqa: E402
from gpt2_gen import write_safetensors  # noqa: E402
from gpt2_ref import read_safetensors  # noqa: E402

FAILS = []


def check(cond, msg):
    if not cond:
        FAILS.append(msg)
        print("FAIL:", msg)


LLAMA3 = {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0,
          "high_freq_factor": 4.0, "original_max_position_embeddings": 64}
CASES = [
    ("llama", dict(typ="llama", heads=6, kv_heads=2, head_dim=12, hidden=48, ff=80, rope=LLAMA3,
                   theta=10000.0, seed=1), (), ("gqa_mod", "rope_interleaved", "rope_unscaled",
                                                 "scale_d_over_h")),
    ("qwen3", dict(typ="qwen3", heads=4, kv_heads=2, head_dim=16, hidden=40, ff=64, tied=True,
                   rope={"rope_type": "linear", "factor": 2.0}, dtype="BF16", seed=2), (),
     ("gqa_mod", "no_qk_norm", "rope_unscaled", "rope_interleaved", "v_gqa_mod",
      "heads_attn_t")),
    ("gemma", dict(typ="gemma", heads=4, kv_heads=1, head_dim=8, hidden=24, ff=56, tied=True,
                   dtype="F16", prefix=False, seed=3), (),
     ("norm_plain", "no_emb_scale", "scale_d_over_h", "heads_attn_t")),
    ("qwen2", dict(typ="qwen2", heads=4, kv_heads=4, head_dim=10, hidden=40, ff=48,
                   theta=1e6, seed=4), ((0, 1), (1, 3)), ("rope_interleaved",)),
    ("llama-bias", dict(typ="llama", layers=3, heads=4, kv_heads=2, head_dim=8, hidden=32, ff=40,
                        bias=True, seed=5), ((0, 2), (2, 0)), ("gqa_mod",)),
    ("bert", dict(bert=True, layers=2, hidden=32, heads=4, ff=48, act="gelu", seed=6),
     ((1, 2),), ("causal", "no_attn_ln")),
    ("bert-tanh", dict(bert=True, layers=3, hidden=30, heads=5, ff=40, act="gelu_new", eps=1e-5,
                       prefix=False, dtype="F16", seed=7), (), ("causal",)),
]


def run_driver(build, ckpt, ids, out, off=()):
    args = [os.path.join(build, "tests", "spec_driver"), ckpt, ",".join(map(str, ids)), out]
    if off:
        args += ["--off", ",".join(f"{l}:{h}" for l, h in off)]
    return subprocess.run(args, capture_output=True, text=True, timeout=120)


def compare(got_dir, ref, n_layers):
    """The worst of each check, and whether all are within their bounds."""
    def rel(a, b):
        return float(np.max(np.abs(a - b)) / max(np.max(np.abs(b)), 1e-30))
    worst = {"attn": 0.0, "q": 0.0, "k": 0.0, "out": 0.0, "resid": 0.0}
    for l in range(n_layers):
        got = lambda name: np.load(os.path.join(got_dir, f"{name}_{l}.npy"))  # noqa: E731
        worst["attn"] = max(worst["attn"], float(np.max(np.abs(got("attn") - ref["attn"][l]))))
        if "heads" in ref:  # head_i = A_i V of every head, within 1e-4 as the attention
            worst["heads"] = max(worst.get("heads", 0.0),
                                 float(np.max(np.abs(got("heads") - ref["heads"][l]))))
        for key in ("q", "k", "out", "resid"):
            worst[key] = max(worst[key], rel(got(key), ref[key][l]))
        if "q_pre" in ref:  # RoPE: Q and K before the rotation (the step-through's stage)
            for key, name in (("q_pre", "qpre"), ("k_pre", "kpre")):
                worst[key] = max(worst.get(key, 0.0), rel(got(name), ref[key][l]))
    worst["final"] = rel(np.load(os.path.join(got_dir, "final.npy")), ref["final"])
    top_same = True
    if ref["logits"] is not None:  # an encoder has none
        logits = np.load(os.path.join(got_dir, "logits.npy"))
        worst["logits"] = rel(logits, ref["logits"])
        top_same = int(np.argmax(logits)) == int(np.argmax(ref["logits"]))
    ok = all(worst[k] <= 1e-4 for k in ("attn", "heads") if k in worst) and \
        all(worst[k] <= 1e-3 for k in worst if k not in ("attn", "heads"))
    return ok and top_same, worst, top_same


def positive(build, tmp):
    for name, kw, off, faults in CASES:
        kw = dict(kw)
        d = os.path.join(tmp, name)
        bert = kw.pop("bert", False)
        ref_of = bert_ref if bert else llama_ref
        c = (bert_ref if bert else llama_gen).gen(d, **kw)
        rng = np.random.default_rng(len(name))
        for n in (1, 7, 40):
            ids = [int(x) for x in rng.integers(0, c["vocab_size"], n)]
            out = os.path.join(tmp, f"{name}-out-{n}")
            os.makedirs(out)
            p = run_driver(build, d, ids, out, off)
            check(p.returncode == 0, f"{name} n={n}: driver exit {p.returncode}: {p.stderr}")
            if p.returncode:
                continue
            ref = ref_of.forward(d, ids, off)
            ok, worst, top = compare(out, ref, c["num_hidden_layers"])
            print(f"{name} n={n}: {'ok' if ok else 'BAD'} top-1 same {top}; worst " +
                  ", ".join(f"{k} {v:.2e}" for k, v in worst.items()))
            check(ok, f"{name} n={n}: outside bounds: {worst}, top-1 same {top}")
            if n != 40:
                continue
            spec = json.loads(p.stdout)
            check(spec["h"] == c["num_attention_heads"] and spec["h_kv"] ==
                  c.get("num_key_value_heads", spec["h"]) and spec["head_dim"] ==
                  c.get("head_dim", c["hidden_size"] // spec["h"]), f"{name}: spec {spec}")
            for f in faults:  # the comparison must catch each planted mistake
                ref_f = ref_of.forward(d, ids, off, (f,))
                bad, worst_f, _ = compare(out, ref_f, c["num_hidden_layers"])
                print(f"  planted {f}: {'caught' if not bad else 'MISSED'} "
                      f"(attn {worst_f['attn']:.2e}, final {worst_f['final']:.2e})")
                check(not bad, f"{name}: planted fault {f} not caught")
                if f in ("v_gqa_mod", "heads_attn_t"):  # layer 1's head_i check alone tells
                    a0 = np.max(np.abs(np.load(os.path.join(out, "attn_0.npy")) -
                                       ref_f["attn"][0]))
                    h0 = np.max(np.abs(np.load(os.path.join(out, "heads_0.npy")) -
                                       ref_f["heads"][0]))
                    print(f"    layer 1: attention {a0:.2e}, head_i {h0:.2e}")
                    check(a0 <= 1e-4 < h0, f"{name}: planted {f}: layer 1's head_i check did "
                          f"not tell (attention {a0:.2e}, head_i {h0:.2e})")


def hostile(build, tmp):
    base = os.path.join(tmp, "hostile-base")
    c = llama_gen.gen(base, typ="qwen3", heads=4, kv_heads=2, head_dim=8, hidden=16, ff=24,
                      seed=9)
    st = read_safetensors(os.path.join(base, "model.safetensors"))

    def case(label, needle, cfg_edit=None, drop=None, reshape=None):
        d = os.path.join(tmp, "hostile-" + label)
        os.makedirs(d)
        cc = dict(c)
        if cfg_edit:
            cc.update(cfg_edit)
        with open(os.path.join(d, "config.json"), "w") as f:
            json.dump(cc, f)
        t = {k: v for k, v in st.items() if k != drop}
        if reshape:
            t[reshape] = t[reshape].reshape(-1)
        write_safetensors(os.path.join(d, "model.safetensors"), t, "F32")
        out = os.path.join(d, "out")
        os.makedirs(out)
        p = run_driver(build, d, [1, 2, 3], out)
        lines = p.stderr.splitlines()
        check(p.returncode == 2 and len(lines) == 1 and lines[0].startswith("mhaviz: ") and
              needle in lines[0], f"hostile {label}: exit {p.returncode}, {p.stderr!r}, "
              f"want {needle!r}")
        check(os.listdir(out) == [], f"hostile {label}: wrote {os.listdir(out)}")

    case("unknown-type", "model_type \"mistral7\"", {"model_type": "mistral7"})
    case("kv-not-dividing", "does not divide", {"num_key_value_heads": 3})
    case("rope-yarn", "rope_scaling type \"yarn\"", {"rope_scaling": {"rope_type": "yarn",
                                                                    "factor": 4.0}})
    case("llama3-no-low", "low_freq_factor", {"rope_scaling": dict(LLAMA3, low_freq_factor=None)})
    case("act-gelu", "hidden activation", {"hidden_act": "gelu"})
    case("odd-head-dim", "even head_dim", {"head_dim": 7})
    case("missing-q-norm", "missing tensor model.layers.1.self_attn.q_norm.weight",
         drop="model.layers.1.self_attn.q_norm.weight")
    case("k-proj-flat", "tensor model.layers.0.self_attn.k_proj.weight has shape",
         reshape="model.layers.0.self_attn.k_proj.weight")
    case("head-dim-vs-weights", "config.json makes it", {"head_dim": 4})
    case("lm-head-missing", "missing tensor lm_head.weight", drop="lm_head.weight")
    case("lm-head-when-tied",
         "lm_head.weight differs from embed_tokens.weight, but config.json ties them",
         {"tie_word_embeddings": True})
    case("mlp-bias", "mlp_bias", {"mlp_bias": True})


def config_read_once(build, tmp):
    """mhaviz --model DIR --dump opens config.json once (strace counts the opens; the
    check is skipped without strace)."""
    import shutil
    import gpt2_gen
    if not shutil.which("strace"):
        print("config read once: skipped (no strace)")
        return
    d = os.path.join(tmp, "gpt2-once")
    gpt2_gen.gen(d, n_layer=1, n_head=2, n_embd=16, n_positions=16, seed=1)
    trace = os.path.join(tmp, "strace.txt")
    env = dict(os.environ)  # LeakSanitizer cannot run under ptrace
    env["ASAN_OPTIONS"] = (env.get("ASAN_OPTIONS", "") + ":detect_leaks=0").lstrip(":")
    p = subprocess.run(["strace", "-f", "-e", "trace=openat,open", "-o", trace,
                        os.path.join(build, "mhaviz"), "--model", d, "--dump",
                        os.path.join(tmp, "gpt2-once-out")], capture_output=True, text=True,
                       timeout=120, env=env)
    with open(trace) as f:
        opens = sum("config.json" in line for line in f)
    print(f"config read once: mhaviz exit {p.returncode}, config.json opened {opens} time(s)")
    check(p.returncode == 0 and opens == 1, f"config.json opened {opens} times, exit "
          f"{p.returncode}: {p.stderr}")


def main():
    build = sys.argv[1]
    with tempfile.TemporaryDirectory() as tmp:
        positive(build, tmp)
        hostile(build, tmp)
        config_read_once(build, tmp)
    if FAILS:
        print(f"{len(FAILS)} failed")
        return 1
    print("all ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
