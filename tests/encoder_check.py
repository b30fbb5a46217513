#!/usr/bin/python3
"""encoder_check.py: the four encoder families (BERT, RoBERTa, DistilBERT, ALBERT) read by
the one loader (checkpoint.c with family_bert.c, family_distilbert.c, family_albert.c) and
run by the one layer forward (block.c) and the masked-LM head (fill.c), against
bert_ref.py's float64 PyTorch forward written from Hugging Face's semantics. Checkpoints
from bert_ref.gen in Hugging Face's published layouts: with and without the prefix,
LayerNorm's old gamma/beta names, F32, F16 and BF16, the masked-LM head present (tied,
untied, with its tied copies stored) and absent, BertForPreTraining's pooler and
next-sentence head beside it.

Each case, for n = 1, 9 and 40 token ids: every layer's attention within 1e-4; Q, K, the
attention's output projection and every layer's output within 1e-3 relative; with the
head, the top 10 of several positions: top-1 identical and the 10 probabilities within
1e-3. Each planted fault of bert_ref.py that applies to a case must be caught. Then
hostile folders: exit 1 or 2, one "mhaviz: " line naming the fault, nothing written.

    encoder_check.py BUILD_DIR"""
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import bert_ref  # noqa: E402
from spec_check import compare  # noqa: E402
from gpt2_gen import write_safetensors  # noqa: E402
from gpt2_ref import read_safetensors  # noqa: E402

FAILS = []


def check(cond, msg):
    if not cond:
        FAILS.append(msg)
        print("FAIL:", msg)


# name, gen's arguments, heads removed, planted faults the comparison must catch
CASES = [
    ("bert-mlm", dict(typ="bert", layers=2, hidden=32, heads=4, ff=48, act="gelu", mlm=True,
                      seed=11), ((1, 2),), ("causal", "no_attn_ln", "mlm_no_ln", "no_type")),
    ("bert-old-names", dict(typ="bert", layers=2, hidden=24, heads=3, ff=40, act="gelu_new",
                            mlm=True, gamma_beta=True, copies=True, pretraining=True,
                            dtype="BF16", seed=12), (), ("causal",)),
    ("bert-bare-f16", dict(typ="bert", layers=1, hidden=16, heads=2, ff=24, prefix=False,
                           dtype="F16", seed=13), (), ("no_attn_ln",)),
    ("roberta-mlm", dict(typ="roberta", layers=2, hidden=32, heads=4, ff=48, act="relu",
                         eps=1e-5, mlm=True, copies=True, seed=14), ((0, 1),),
     ("pos_from_zero", "mlm_hidden_act", "causal")),
    ("roberta-bare", dict(typ="roberta", layers=3, hidden=30, heads=5, ff=40, prefix=False,
                          dtype="BF16", seed=15), (), ("pos_from_zero",)),
    ("distilbert-mlm", dict(typ="distilbert", layers=2, hidden=32, heads=4, ff=64, mlm=True,
                            seed=16), ((1, 0),), ("causal", "no_attn_ln", "mlm_no_ln")),
    ("distilbert-untied", dict(typ="distilbert", layers=2, hidden=24, heads=4, ff=32,
                               act="relu", mlm=True, tied=False, prefix=False, dtype="F16",
                               seed=17), (), ("causal",)),
    ("albert-mlm", dict(typ="albert", layers=4, hidden=32, heads=4, ff=48, embedding=12,
                        act="gelu_new", mlm=True, copies=True, seed=18), ((2, 3),),
     ("causal", "albert_map_after", "mlm_no_ln")),
    ("albert-pooler", dict(typ="albert", layers=3, hidden=24, heads=2, ff=40, embedding=24,
                           pretraining=True, dtype="BF16", seed=19), (), ("no_type",)),
]


def run_driver(build, ckpt, ids, out, off=(), fill=(), split=None):
    args = [os.path.join(build, "tests", "spec_driver"), ckpt, ",".join(map(str, ids)), out]
    if split:
        args += ["--split", f"{split[0]}:{split[1]}"]
    if off:
        args += ["--off", ",".join(f"{l}:{h}" for l, h in off)]
    if fill:
        args += ["--fill", ",".join(map(str, fill))]
    return subprocess.run(args, capture_output=True, text=True, timeout=120)


def compare_fill(out, ref):
    """top-1 identical per position, the 10 probabilities' worst difference"""
    ids = np.load(os.path.join(out, "fill_ids.npy")).astype(np.int64)
    p = np.load(os.path.join(out, "fill_p.npy"))
    top1 = bool(np.all(ids[:, 0] == ref["fill_ids"][:, 0]))
    worst = float(np.max(np.abs(p - ref["fill_p"])))
    return top1 and worst <= 1e-3, top1, worst


def split_ref(ref, layer, h2, faults=()):
    """layer's attention re-split into h2 heads from the reference's own Q and K: scores
    Q_j K_j^T / sqrt(d / h2), softmax over whole rows (no mask)"""
    q, k = ref["q"][layer], ref["k"][layer]
    n, d = q.shape
    hd = d // h2
    qh, kh = q.reshape(n, h2, hd), k.reshape(n, h2, hd)
    sc = np.einsum("qhd,khd->hqk", qh, kh) / np.sqrt(hd)
    if "causal" in faults:
        sc = np.where(np.triu(np.ones((n, n), bool), 1), -np.inf, sc)
    e = np.exp(sc - sc.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def check_split(build, tmp, name, d, c, ids, ref):
    """re-split of the last layer into more heads, both directions, against split_ref"""
    h, dm = c["num_attention_heads"], c["hidden_size"]
    h2 = next((x for x in range(h + 1, dm + 1) if dm % x == 0), None)
    if h2 is None:
        return
    out = os.path.join(tmp, f"{name}-split")
    os.makedirs(out)
    layer = c["num_hidden_layers"] - 1
    p = run_driver(build, d, ids, out, split=(layer, h2))
    check(p.returncode == 0, f"{name} split: driver exit {p.returncode}: {p.stderr}")
    if p.returncode:
        return
    got = np.load(os.path.join(out, "split_attn.npy"))
    worst = float(np.max(np.abs(got - split_ref(ref, layer, h2))))
    caught = float(np.max(np.abs(got - split_ref(ref, layer, h2, ("causal",))))) > 1e-4
    print(f"{name} re-split layer {layer} into {h2} heads: attn {worst:.2e}; planted causal "
          f"{'caught' if caught else 'MISSED'}")
    check(worst <= 1e-4 and caught, f"{name} split: {worst:.2e}, causal caught {caught}")


def positive(build, tmp):
    for name, kw, off, faults in CASES:
        d = os.path.join(tmp, name)
        c = bert_ref.gen(d, **kw)
        rng = np.random.default_rng(len(name))
        mlm = kw.get("mlm", False)
        for n in (1, 9, 40):
            ids = [int(x) for x in rng.integers(0, c["vocab_size"], n)]
            if kw["typ"] == "roberta" and n > 1:
                ids[n // 2] = 1  # a pad token inside: its position is padding_idx
            fill = sorted(set(int(x) for x in rng.integers(0, n, min(n, 4)))) if mlm else ()
            out = os.path.join(tmp, f"{name}-out-{n}")
            os.makedirs(out)
            p = run_driver(build, d, ids, out, off, fill)
            check(p.returncode == 0, f"{name} n={n}: driver exit {p.returncode}: {p.stderr}")
            if p.returncode:
                continue
            spec = json.loads(p.stdout)
            check(spec.get("mlm") == int(mlm) and spec["type"] == kw["typ"],
                  f"{name}: spec {spec}")
            ref = bert_ref.forward(d, ids, off, (), fill)
            ok, worst, _ = compare(out, ref, c["num_hidden_layers"])
            msg = ", ".join(f"{k} {v:.2e}" for k, v in worst.items())
            if mlm:
                fok, top1, fworst = compare_fill(out, ref)
                ok = ok and fok
                msg += f", fill top-1 same {top1}, top-10 p {fworst:.2e}"
            print(f"{name} n={n}: {'ok' if ok else 'BAD'}; worst {msg}")
            check(ok, f"{name} n={n}: outside bounds: {msg}")
            if n != 40:
                continue
            check_split(build, tmp, name, d, c, ids, bert_ref.forward(d, ids, (), (), ()))
            for f in faults:  # the comparison must catch each planted mistake
                bad = bert_ref.forward(d, ids, off, (f,), fill)
                same, w, _ = compare(out, bad, c["num_hidden_layers"])
                if mlm:
                    same = same and compare_fill(out, bad)[0]
                print(f"  planted {f}: {'caught' if not same else 'MISSED'} "
                      f"(attn {w['attn']:.2e}, final {w['final']:.2e})")
                check(not same, f"{name}: planted fault {f} not caught")


def hostile(build, tmp):
    """Folders each wrong in one way: exit 1 or 2, one "mhaviz: " line naming it."""
    base = {}
    for typ in ("bert", "roberta", "distilbert", "albert"):
        d = os.path.join(tmp, "hbase-" + typ)
        c = bert_ref.gen(d, typ=typ, layers=2, hidden=16, heads=2, ff=24, mlm=True, seed=30)
        with open(os.path.join(d, "config.json")) as f:
            base[typ] = (json.load(f), read_safetensors(os.path.join(d, "model.safetensors")))

    def case(label, typ, needle, cfg_edit=None, drop=(), edit=None, code=2, raw=None):
        d = os.path.join(tmp, "hostile-" + label)
        os.makedirs(d)
        cfg, st = base[typ]
        cc = dict(cfg)
        cc.update(cfg_edit or {})
        for k in [k for k, v in cc.items() if v is None]:
            del cc[k]
        with open(os.path.join(d, "config.json"), "w") as f:
            json.dump(cc, f)
        t = {k: np.array(v) for k, v in st.items() if k not in drop}
        if edit:
            edit(t)
        if raw is not None:
            with open(os.path.join(d, "model.safetensors"), "wb") as f:
                f.write(raw)
        else:
            write_safetensors(os.path.join(d, "model.safetensors"), t, "F32")
        out = os.path.join(d, "out")
        os.makedirs(out)
        p = run_driver(build, d, [1, 2, 3], out)
        lines = p.stderr.splitlines()
        check(p.returncode == code and len(lines) == 1 and lines[0].startswith("mhaviz: ") and
              needle in lines[0] and "runtime error" not in p.stderr,
              f"hostile {label}: exit {p.returncode}, {p.stderr!r}, want {needle!r}")
        check(os.listdir(out) == [], f"hostile {label}: wrote {os.listdir(out)}")
        print(f"hostile {label}: exit {p.returncode}: {lines[:1]}")

    def nan_in(name):
        def f(t):
            t[name] = t[name].copy()
            t[name].flat[3] = np.nan
        return f

    case("albert-groups", "albert", "num_hidden_groups 2 is not supported",
         {"num_hidden_groups": 2})
    case("albert-inner", "albert", "inner_group_num 2", {"inner_group_num": 2})
    case("albert-emb-size", "albert", "config.json makes it", {"embedding_size": 8})
    case("distil-sinusoidal", "distilbert", "sinusoidal_pos_embds = true",
         {"sinusoidal_pos_embds": True})
    case("distil-no-dim", "distilbert", "dim", {"dim": None})
    case("bert-act-swish", "bert", "hidden_act \"swish\" is not supported", {"hidden_act": "swish"})
    case("bert-relative-pos", "bert", "position_embedding_type \"relative_key\"",
         {"position_embedding_type": "relative_key"})
    case("bert-decoder", "bert", "is_decoder = true", {"is_decoder": True})
    case("roberta-pad-eats-positions", "roberta", "no position after pad_token_id",
         {"max_position_embeddings": 2})
    case("roberta-positions-short", "roberta", "roberta.embeddings.position_embeddings.weight "
         "has shape", {"max_position_embeddings": 80})
    case("bert-mlm-half", "bert", "missing tensor cls.predictions.bias",
         drop=("cls.predictions.bias",))
    case("albert-nan", "albert", "holds NaN",
         edit=nan_in("albert.encoder.albert_layer_groups.0.albert_layers.0.ffn.weight"))
    case("distil-copy-differs", "distilbert", "vocab_projector.weight differs",
         edit=lambda t: t.__setitem__("vocab_projector.weight", t[
             "distilbert.embeddings.word_embeddings.weight"] + 1.0))
    case("albert-second-group", "albert", "unexpected tensor",
         edit=lambda t: t.__setitem__(
             "albert.encoder.albert_layer_groups.1.albert_layers.0.ffn.bias",
             t["albert.encoder.albert_layer_groups.0.albert_layers.0.ffn.bias"]))
    case("bert-mixed-prefix", "bert", "mix the \"bert.\" prefix",
         edit=lambda t: t.__setitem__("embeddings.LayerNorm.bias",
                                      t.pop("bert.embeddings.LayerNorm.bias")))
    case("truncated", "roberta", "model.safetensors", raw=b"\x10\x00\x00", code=1)


def main():
    build = sys.argv[1]
    with tempfile.TemporaryDirectory() as tmp:
        positive(build, tmp)
        hostile(build, tmp)
    if FAILS:
        print(f"{len(FAILS)} failed")
        return 1
    print("all ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
