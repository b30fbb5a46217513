#!/usr/bin/python3
"""kv_regroup_check.py MHAVIZ: `--model DIR --kv-heads G` (the key J in the window) against
an independent reference: the checkpoint's K/V heads regrouped by hand, as grouped-query
checkpoints are made from multi-head ones (Ainslie et al., 2023): each new K/V head's
k_proj and v_proj rows (and biases) the mean of the r = h_kv / G old heads it replaces
(heads g r ... g r + r - 1), num_key_value_heads set to G, and llama_ref.py's float64
PyTorch forward run on that. For a llama (8 query heads on 4 K/V heads, head_dim 8 where
d_model / h is 6, Q/K/V and o_proj biases) at G = 2 and 1, a qwen3 (QK-norm) at G = 1 and
a phi3 (fused qkv_proj, 6 heads on 3) at G = 1, `--dump` must give: every layer's
attention within 1e-4, its output projection and the final norm within 1e-3 relative, the
next token's top-1 the reference's and its p within 1e-3 relative; next.json's
"p_trained" the model as trained (llama_ref.py on the checkpoint as it is); meta.json's
n_kv_head G beside n_kv_head_trained. A reference that pools the wrong heads (every G-th,
interleaved) must disagree (the check can fail). A GPT-2 checkpoint (4 heads, each its own
K and V) regrouped to 2 opens, and --kv-heads 4 (its own) dumps what no --kv-heads does.
Bad uses exit 2 with one "mhaviz: " line: G not dividing h_kv (or, without --model, the
built-in model's h), beside -H.
Exits 1 with "FAIL ..." lines."""
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import torch

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import llama_gen  # noqa: E402
import llama_ref  # noqa: E402

FAILS = []
TEXT = "The quick brown fox jumps over the lazy dog again"


def check(cond, msg):
    if not cond:
        FAILS.append(msg)
        print("FAIL " + msg)


def rel(a, b):
    return float(np.max(np.abs(a - b)) / max(float(np.max(np.abs(b))), 1e-30))


def regrouped(loaded, g, interleaved=False):
    """(config, weights) with the K/V heads pooled into g, as a converted checkpoint."""
    c, w = loaded
    c = dict(c)
    kv, hd = c["num_key_value_heads"], c["head_dim"]
    r = kv // g
    w = dict(w)
    for i in range(c["num_hidden_layers"]):
        for name in ("k_proj.weight", "v_proj.weight", "k_proj.bias", "v_proj.bias"):
            key = f"layers.{i}.self_attn.{name}"
            if key not in w:
                continue
            t = w[key].reshape(kv, hd, -1)  # (kv, hd, d) or (kv, hd, 1)
            if interleaved:  # the planted mistake: new head j the mean of j, j + g, ...
                t = t.reshape(r, g, hd, -1).mean(0)
            else:
                t = t.reshape(g, r, hd, -1).mean(1)
            w[key] = t.reshape(g * hd, -1).squeeze(-1) if name.endswith("bias") else \
                t.reshape(g * hd, -1)
    c["num_key_value_heads"] = g
    return c, w


def run(mhaviz, args):
    return subprocess.run([mhaviz] + args, capture_output=True, text=True, timeout=300)


def compare(out, ref, layers):
    worst = {"attn": 0.0, "out": 0.0}
    for l in range(layers):
        got = np.load(os.path.join(out, f"layer_{l + 1}", "attn.npy"))
        worst["attn"] = max(worst["attn"], float(np.max(np.abs(got - ref["attn"][l]))))
        got = np.load(os.path.join(out, f"layer_{l + 1}", "out.npy"))
        worst["out"] = max(worst["out"], rel(got, ref["out"][l]))
    worst["final"] = rel(np.load(os.path.join(out, "final.npy")), ref["final"])
    return worst


def softmax(x):
    e = np.exp(x - np.max(x))
    return e / e.sum()


def one(mhaviz, tmp, name, kw, groups):
    d = os.path.join(tmp, name)
    c = llama_gen.gen(d, tokenizer="bytelevel", **kw)
    loaded = llama_ref.load(d)
    trained = None
    for g in groups:
        out = os.path.join(tmp, f"{name}-kv{g}")
        p = run(mhaviz, ["--model", d, "--text", TEXT, "--kv-heads", str(g), "--dump", out])
        check(p.returncode == 0, f"{name} G={g}: exit {p.returncode}: {p.stderr.strip()}")
        if p.returncode:
            continue
        ids = json.load(open(os.path.join(out, "tokens.json")))["ids"]
        ref = llama_ref.forward(d, ids, loaded=regrouped(loaded, g))
        worst = compare(out, ref, c["num_hidden_layers"])
        ok = worst["attn"] <= 1e-4 and worst["out"] <= 1e-3 and worst["final"] <= 1e-3
        print(f"{name} G={g}: {'ok' if ok else 'BAD'}; worst " +
              ", ".join(f"{k} {v:.2e}" for k, v in worst.items()))
        check(ok, f"{name} G={g}: outside bounds: {worst}")
        bad = compare(out, llama_ref.forward(d, ids, loaded=regrouped(loaded, g, True)),
                      c["num_hidden_layers"])
        if g < c["num_key_value_heads"] and g > 1:
            check(bad["attn"] > 1e-3, f"{name} G={g}: the interleaved pooling not told apart")
        nxt = json.load(open(os.path.join(out, "next.json")))["top"]
        probs = softmax(ref["logits"])
        check(nxt[0]["id"] == int(np.argmax(ref["logits"])),
              f"{name} G={g}: top-1 {nxt[0]['id']}, reference {int(np.argmax(ref['logits']))}")
        check(abs(nxt[0]["p"] - probs[nxt[0]["id"]]) <= 1e-3 * probs[nxt[0]["id"]],
              f"{name} G={g}: p {nxt[0]['p']} against {probs[nxt[0]['id']]}")
        if trained is None:
            trained = softmax(llama_ref.forward(d, ids, loaded=loaded)["logits"])
        for e in nxt:
            check("p_trained" in e and abs(e["p_trained"] - trained[e["id"]]) <=
                  1e-3 * trained[e["id"]] + 1e-9,
                  f"{name} G={g}: p_trained of {e['id']}: {e.get('p_trained')} against "
                  f"{trained[e['id']]}")
        meta = json.load(open(os.path.join(out, "meta.json")))
        check(meta["model"]["n_kv_head"] == g and meta["kv_regrouped"] and
              meta["model"]["n_kv_head_trained"] == c["num_key_value_heads"],
              f"{name} G={g}: meta.json {meta['model']}, kv_regrouped {meta.get('kv_regrouped')}")
    return d


def gpt2(mhaviz, tmp):
    d = os.path.join(tmp, "gpt2")
    subprocess.run([sys.executable, os.path.join(HERE, "gpt2_gen.py"), d, "--layers", "2",
                    "--heads", "4", "--embd", "32", "--positions", "64", "--merges", "200"],
                   check=True, capture_output=True, timeout=300)
    outs = {}
    for name, extra in (("plain", []), ("own", ["--kv-heads", "4"]), ("two", ["--kv-heads", "2"])):
        outs[name] = os.path.join(tmp, f"gpt2-{name}")
        p = run(mhaviz, ["--model", d, "--text", TEXT, "--dump", outs[name]] + extra)
        check(p.returncode == 0, f"gpt2 {name}: exit {p.returncode}: {p.stderr.strip()}")
        if p.returncode:
            return
    a = np.load(os.path.join(outs["plain"], "layer_2", "attn.npy"))
    b = np.load(os.path.join(outs["own"], "layer_2", "attn.npy"))
    c = np.load(os.path.join(outs["two"], "layer_2", "attn.npy"))
    check(np.array_equal(a, b), "gpt2: --kv-heads 4 (its own) differs from no --kv-heads")
    check(float(np.max(np.abs(a - c))) > 1e-4, "gpt2: --kv-heads 2 changed nothing")
    meta = json.load(open(os.path.join(outs["two"], "meta.json")))
    check(meta["model"]["n_kv_head"] == 2 and meta["model"]["n_kv_head_trained"] == 4,
          f"gpt2 --kv-heads 2: meta.json {meta['model']}")


def bad_uses(mhaviz, tmp, d):
    for args in (["--model", d, "--kv-heads", "3", "--dump", os.path.join(tmp, "bad1")],
                 ["-H", "4", "--kv-heads", "3", "--dump", os.path.join(tmp, "bad2")],
                 ["--model", d, "--kv-heads", "2", "-H", "4", "--dump", os.path.join(tmp, "b3")],
                 ["--model", d, "--kv-heads", "0", "--export", os.path.join(tmp, "b4.png")]):
        p = run(mhaviz, args)
        err = p.stderr.splitlines()
        check(p.returncode == 2 and len(err) == 1 and err[0].startswith("mhaviz: ") and
              not os.path.exists(args[-1]), f"{' '.join(args[2:])}: exit {p.returncode}, {err}")


def main():
    mhaviz = os.path.abspath(sys.argv[1])
    torch.set_num_threads(1)
    with tempfile.TemporaryDirectory() as tmp:
        d = one(mhaviz, tmp, "llama", dict(typ="llama", layers=2, heads=8, kv_heads=4, head_dim=8,
                                          hidden=48, ff=64, bias=True, seed=3), (2, 1))
        one(mhaviz, tmp, "qwen3", dict(typ="qwen3", layers=2, heads=4, kv_heads=2, head_dim=16,
                                       hidden=40, ff=64, seed=4), (1,))
        one(mhaviz, tmp, "phi3", dict(typ="phi3", layers=2, heads=6, kv_heads=3, head_dim=8,
                                      hidden=48, ff=64, seed=5), (1,))
        gpt2(mhaviz, tmp)
        bad_uses(mhaviz, tmp, d)
    if FAILS:
        print(f"kv_regroup_check: {len(FAILS)} failures")
        return 1
    print("kv_regroup_check: regrouped K/V heads match a checkpoint converted by hand")
    return 0


if __name__ == "__main__":
    sys.exit(main())
