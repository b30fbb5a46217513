#!/usr/bin/python3
"""bert_ref.py: random encoder checkpoints of the four Hugging Face types (BERT,
RoBERTa, DistilBERT, ALBERT) in exactly their published layouts, and a float64 PyTorch
reference forward written from Hugging Face's modeling_bert.py, modeling_roberta.py,
modeling_distilbert.py and modeling_albert.py, independent of mhaviz.

    gen(outdir, typ="bert", ...) -> config
    forward(ckpt_dir, ids, off=(), faults=(), fill=()) -> as llama_ref.forward
        (logits None: an encoder has no next-token output), plus with fill (positions)
        "fill_ids" (m, 10) and "fill_p" (m, 10): the masked-LM head's top 10, and
        "fill_all" (m, vocab): every token's probability

Layouts (names with the model's prefix, or none with prefix=False):
- bert: BertModel's embeddings.{word,position,token_type}_embeddings, embeddings.LayerNorm,
  encoder.layer.N.{attention.self.{query,key,value}, attention.output.{dense,LayerNorm},
  intermediate.dense, output.{dense,LayerNorm}}; BertForMaskedLM's cls.predictions.
  {transform.dense, transform.LayerNorm, bias} (decoder.weight tied to the word
  embeddings); gamma_beta: LayerNorm's old names; pretraining: BertForPreTraining's
  pooler and cls.seq_relationship (next sentence) too;
- roberta: BERT's names under "roberta.", type_vocab_size 1, pad_token_id 1 and
  max_position_embeddings = positions + 2 (positions counted from padding_idx + 1);
  RobertaForMaskedLM's lm_head.{dense, layer_norm, bias} (its transform always the exact GELU);
- distilbert: embeddings.{word,position}_embeddings, embeddings.LayerNorm,
  transformer.layer.N.{attention.{q,k,v,out}_lin, sa_layer_norm, ffn.lin1, ffn.lin2,
  output_layer_norm}; DistilBertForMaskedLM's vocab_transform, vocab_layer_norm,
  vocab_projector (weight tied); LayerNorm eps 1e-12 fixed;
- albert: embeddings (embedding_size wide) and their LayerNorm, encoder.embedding_hidden_
  mapping_in, ONE layer encoder.albert_layer_groups.0.albert_layers.0.{attention.{query,
  key,value,dense,LayerNorm}, ffn, ffn_output, full_layer_layer_norm} applied
  num_hidden_layers times; AlbertForMaskedLM's predictions.{dense, LayerNorm, bias}
  (dense hidden -> embedding_size; decoder.weight tied).
copies=True also stores the tied tensors (decoder weight and decoder bias) as HF's
state_dict has them.

Forward: embeddings = word[ids] + token_type[0] + position[pos] (DistilBERT: no types),
pos = 0..n-1 (RoBERTa: padding_idx + cumsum(ids != pad), pads at padding_idx), LayerNorm
(ALBERT: then the mapping); each layer post-LN: a = LN(dense(attention(x)) + x), no mask,
scores Q K^T / sqrt(head_dim), heads in `off` zeroed before dense; x' = LN(W2 act(W1 a) + a).
Fill: h = LN(act(dense(x[pos]))), logits = h dec^T + bias, softmax, top 10.
Planted faults: causal, no_attn_ln, pos_from_zero (RoBERTa's offset ignored),
mlm_no_ln (the head's LayerNorm left out), mlm_hidden_act (RoBERTa's head using
hidden_act), albert_map_after (ALBERT's mapping before the LayerNorm), no_type (token
type 0 left out)."""
import json
import math
import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gpt2_gen import write_safetensors  # noqa: E402
from gpt2_ref import read_safetensors  # noqa: E402

PREFIX = {"bert": "bert.", "roberta": "roberta.", "distilbert": "distilbert.",
          "albert": "albert."}
HEAD_PREFIXES = ("cls.", "lm_head.", "vocab_", "predictions.", "sop_classifier.")


def _layer_names(typ):
    """HF's names of one layer's tensors: {role: name} (role as the reference uses it)."""
    if typ == "distilbert":
        return {"q": "attention.q_lin", "k": "attention.k_lin", "v": "attention.v_lin",
                "o": "attention.out_lin", "ln1": "sa_layer_norm", "fc": "ffn.lin1",
                "proj": "ffn.lin2", "ln2": "output_layer_norm"}
    if typ == "albert":
        return {"q": "attention.query", "k": "attention.key", "v": "attention.value",
                "o": "attention.dense", "ln1": "attention.LayerNorm", "fc": "ffn",
                "proj": "ffn_output", "ln2": "full_layer_layer_norm"}
    return {"q": "attention.self.query", "k": "attention.self.key",
            "v": "attention.self.value", "o": "attention.output.dense",
            "ln1": "attention.output.LayerNorm", "fc": "intermediate.dense",
            "proj": "output.dense", "ln2": "output.LayerNorm"}


def _layer_prefix(typ, i):
    if typ == "distilbert":
        return f"transformer.layer.{i}."
    if typ == "albert":
        return "encoder.albert_layer_groups.0.albert_layers.0."
    return f"encoder.layer.{i}."


def _head_names(typ):
    """The masked-LM head: dense, LayerNorm, decoder weight, bias (outside the prefix)."""
    return {"bert": ("cls.predictions.transform.dense", "cls.predictions.transform.LayerNorm",
                     "cls.predictions.decoder.weight", "cls.predictions.bias",
                     "cls.predictions.decoder.bias"),
            "roberta": ("lm_head.dense", "lm_head.layer_norm", "lm_head.decoder.weight",
                        "lm_head.bias", "lm_head.decoder.bias"),
            "distilbert": ("vocab_transform", "vocab_layer_norm", "vocab_projector.weight",
                           "vocab_projector.bias", None),
            "albert": ("predictions.dense", "predictions.LayerNorm", "predictions.decoder.weight",
                       "predictions.bias", "predictions.decoder.bias")}[typ]


def gen(outdir, typ="bert", layers=2, hidden=32, heads=4, ff=48, vocab=89, positions=64,
        types=2, act="gelu", eps=1e-12, prefix=True, dtype="F32", seed=0, mlm=False,
        copies=False, gamma_beta=False, pretraining=False, embedding=16, tied=True):
    os.makedirs(outdir, exist_ok=True)
    rng = np.random.default_rng(seed)

    def r(*shape, std=1.0):
        return (rng.standard_normal(shape) * std).astype(np.float32)

    d = hidden
    e = embedding if typ == "albert" else d
    pad = 1
    rows = positions + pad + 1 if typ == "roberta" else positions
    if typ == "roberta":
        types = 1
    w = {"embeddings.word_embeddings.weight": r(vocab, e),
         "embeddings.position_embeddings.weight": r(rows, e, std=0.3)}
    if typ != "distilbert":
        w["embeddings.token_type_embeddings.weight"] = r(types, e, std=0.3)
    w["embeddings.LayerNorm.weight"] = 1 + r(e, std=0.1)
    w["embeddings.LayerNorm.bias"] = r(e, std=0.1)
    if typ == "albert":
        w["encoder.embedding_hidden_mapping_in.weight"] = r(d, e, std=1 / math.sqrt(e))
        w["encoder.embedding_hidden_mapping_in.bias"] = r(d, std=0.2)
    ln = _layer_names(typ)
    for i in range(1 if typ == "albert" else layers):
        p = _layer_prefix(typ, i)
        for part, std in (("q", 2.0), ("k", 2.0), ("v", 1.0), ("o", 1.0)):
            w[p + ln[part] + ".weight"] = r(d, d, std=std / math.sqrt(d))
            w[p + ln[part] + ".bias"] = r(d, std=0.2)
        w[p + ln["fc"] + ".weight"] = r(ff, d, std=1 / math.sqrt(d))
        w[p + ln["fc"] + ".bias"] = r(ff, std=0.2)
        w[p + ln["proj"] + ".weight"] = r(d, ff, std=1 / math.sqrt(ff))
        w[p + ln["proj"] + ".bias"] = r(d, std=0.2)
        for nm in ("ln1", "ln2"):
            w[p + ln[nm] + ".weight"] = 1 + r(d, std=0.1)
            w[p + ln[nm] + ".bias"] = r(d, std=0.1)
    if pretraining and typ in ("bert", "roberta"):
        w["pooler.dense.weight"] = r(d, d, std=0.1)
        w["pooler.dense.bias"] = r(d, std=0.1)
    if pretraining and typ == "albert":
        w["pooler.weight"] = r(d, d, std=0.1)
        w["pooler.bias"] = r(d, std=0.1)
    pre = PREFIX[typ] if prefix else ""
    named = {pre + k: v for k, v in w.items()}
    if mlm:
        dense, lnorm, dec, bias, dec_bias = _head_names(typ)
        named[dense + ".weight"] = r(e, d, std=1.5 / math.sqrt(d))
        named[dense + ".bias"] = r(e, std=0.2)
        named[lnorm + ".weight"] = 1 + r(e, std=0.1)
        named[lnorm + ".bias"] = r(e, std=0.1)
        named[bias] = r(vocab, std=0.5)
        if not tied:
            named[dec] = r(vocab, e)
        elif copies:
            named[dec] = w["embeddings.word_embeddings.weight"]
        if copies and dec_bias:
            named[dec_bias] = named[bias]
    if pretraining and typ == "bert":
        named["cls.seq_relationship.weight"] = r(2, d, std=0.1)
        named["cls.seq_relationship.bias"] = r(2, std=0.1)
    if gamma_beta:
        named = {k.replace("LayerNorm.weight", "LayerNorm.gamma")
                  .replace("LayerNorm.bias", "LayerNorm.beta"): v for k, v in named.items()}
    write_safetensors(os.path.join(outdir, "model.safetensors"), named, dtype)
    if typ == "distilbert":
        c = {"model_type": "distilbert", "dim": d, "n_layers": layers, "n_heads": heads,
             "hidden_dim": ff, "vocab_size": vocab, "max_position_embeddings": positions,
             "activation": act, "sinusoidal_pos_embds": False, "dropout": 0.1,
             "attention_dropout": 0.1, "pad_token_id": 0}
    else:
        c = {"model_type": typ, "hidden_size": d, "num_hidden_layers": layers,
             "num_attention_heads": heads, "intermediate_size": ff, "vocab_size": vocab,
             "max_position_embeddings": rows, "type_vocab_size": types, "hidden_act": act,
             "layer_norm_eps": eps, "position_embedding_type": "absolute",
             "hidden_dropout_prob": 0.1, "attention_probs_dropout_prob": 0.1,
             "initializer_range": 0.02}
        if typ == "roberta":
            c.update(pad_token_id=pad, bos_token_id=0, eos_token_id=2)
        if typ == "albert":
            c.update(embedding_size=e, num_hidden_groups=1, inner_group_num=1)
    if not tied:
        c["tie_word_embeddings"] = False
    with open(os.path.join(outdir, "config.json"), "w") as f:
        json.dump(c, f, indent=1)
    c["num_hidden_layers"] = layers  # distilbert's under n_layers: for the callers
    c["hidden_size"] = d
    c["num_attention_heads"] = heads
    return c


def _bare(name, typ):
    """A file's name without the model's prefix, LayerNorm.gamma/beta as weight/bias."""
    if not name.startswith(HEAD_PREFIXES) and name.startswith(PREFIX[typ]):
        name = name[len(PREFIX[typ]):]
    return name.replace("LayerNorm.gamma", "LayerNorm.weight").replace(
        "LayerNorm.beta", "LayerNorm.bias")


def _gelu(name):
    if name == "gelu":
        return torch.nn.functional.gelu
    if name == "relu":
        return torch.relu
    return lambda t: torch.nn.functional.gelu(t, approximate="tanh")


def forward(ckpt_dir, ids, off=(), faults=(), fill=()):
    with open(os.path.join(ckpt_dir, "config.json")) as f:
        c = json.load(f)
    typ = c.get("model_type", "bert")
    w = {_bare(k, typ): torch.from_numpy(np.array(v, dtype=np.float64))
         for k, v in read_safetensors(os.path.join(ckpt_dir, "model.safetensors")).items()}
    if typ == "distilbert":
        d, h, L, eps, act = c["dim"], c["n_heads"], c["n_layers"], 1e-12, c["activation"]
    else:
        d, h, L = c["hidden_size"], c["num_attention_heads"], c["num_hidden_layers"]
        eps, act = c["layer_norm_eps"], c["hidden_act"]
    hd, n = d // h, len(ids)
    tid = torch.tensor(ids)

    def ln(x, p):
        width = x.shape[-1]
        return torch.nn.functional.layer_norm(x, (width,), w[p + ".weight"], w[p + ".bias"], eps)

    def lin(x, p):
        return x @ w[p + ".weight"].T + w[p + ".bias"]

    # embeddings
    x = w["embeddings.word_embeddings.weight"][tid]
    if typ != "distilbert" and "no_type" not in faults:
        x = x + w["embeddings.token_type_embeddings.weight"][0]
    if typ == "roberta" and "pos_from_zero" not in faults:
        pad = c["pad_token_id"]
        mask = (tid != pad).long()
        pos = torch.cumsum(mask, 0) * mask + pad  # create_position_ids_from_input_ids
    else:
        pos = torch.arange(n)
    x = x + w["embeddings.position_embeddings.weight"][pos]
    if typ == "albert" and "albert_map_after" in faults:
        x = ln(x, "embeddings.LayerNorm")
        x = x @ w["encoder.embedding_hidden_mapping_in.weight"].T  # bias left out
    else:
        x = ln(x, "embeddings.LayerNorm")
        if typ == "albert":
            x = lin(x, "encoder.embedding_hidden_mapping_in")
    gelu = _gelu(act)
    names = _layer_names(typ)
    r = {"attn": [], "q": [], "k": [], "out": [], "resid": []}
    for i in range(L):
        p = _layer_prefix(typ, i)
        nm = {k: p + v for k, v in names.items()}
        q, k, v = lin(x, nm["q"]), lin(x, nm["k"]), lin(x, nm["v"])
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
        out = lin(heads.reshape(n, d), nm["o"])
        a = out + x if "no_attn_ln" in faults else ln(out + x, nm["ln1"])
        x = ln(lin(gelu(lin(a, nm["fc"])), nm["proj"]) + a, nm["ln2"])
        for key, val in (("attn", attn), ("q", q), ("k", k), ("out", out), ("resid", x)):
            r[key].append(val.numpy())
    r["final"] = x.numpy()
    r["logits"] = None
    if fill:
        r["fill_ids"], r["fill_p"], r["fill_all"] = _fill(w, c, typ, x[torch.tensor(list(fill))],
                                                          eps, faults)
    return r


def _fill(w, c, typ, x, eps, faults):
    """The masked-LM head on rows x: top-10 ids and probabilities per row."""
    dense, lnorm, dec, bias, _ = _head_names(typ)
    if typ == "roberta" and "mlm_hidden_act" not in faults:
        act = _gelu("gelu")  # RobertaLMHead: gelu, whatever hidden_act says
    else:
        act = _gelu(c["activation"] if typ == "distilbert" else c["hidden_act"])
    hid = act(x @ w[dense + ".weight"].T + w[dense + ".bias"])
    if "mlm_no_ln" not in faults:
        hid = torch.nn.functional.layer_norm(hid, (hid.shape[-1],), w[lnorm + ".weight"],
                                             w[lnorm + ".bias"], eps)
    tied = c.get("tie_word_embeddings", True)
    dec_w = w["embeddings.word_embeddings.weight"] if tied else w[dec]
    probs = torch.softmax(hid @ dec_w.T + w[bias], dim=-1)
    top = torch.topk(probs, 10, dim=-1)
    return top.indices.numpy(), top.values.numpy(), probs.numpy()
