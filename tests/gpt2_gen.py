#!/usr/bin/python3
"""gpt2_gen.py: writes a random GPT-2 checkpoint folder in Hugging Face's layout
(config.json, model.safetensors, vocab.json, merges.txt), for tests: real
checkpoints cannot be downloaded here.

    gpt2_gen.py OUTDIR [--layers 2] [--heads 3] [--embd 48] [--positions 64]
                [--merges 200] [--dtype F32|F16|BF16] [--prefix] [--mask-buffers]
                [--lm-head] [--eps 1e-5] [--seed 0] [--std 1.0]
    gpt2_gen.py OUTDIR --small-shape [--seed 0]
        GPT-2 small's shapes: 12 layers, 12 heads, n_embd 768, n_positions 1024,
        vocab 50257 (256 byte symbols + 50000 merges + <|endoftext|>), F32, random
        weights (~500 MB).

Tensor names and shapes are those of Hugging Face GPT2LMHeadModel's state dict
(Conv1D weights stored (in, out)):
    wte.weight (V, d), wpe.weight (ctx, d),
    h.{i}.ln_1.weight / .bias (d), h.{i}.attn.c_attn.weight (d, 3d) / .bias (3d),
    h.{i}.attn.c_proj.weight (d, d) / .bias (d), h.{i}.ln_2.weight / .bias (d),
    h.{i}.mlp.c_fc.weight (d, 4d) / .bias (4d), h.{i}.mlp.c_proj.weight (4d, d) / .bias,
    ln_f.weight / .bias (d)
  with --prefix every name but lm_head.weight starts with "transformer."; with
  --mask-buffers each layer also has h.{i}.attn.bias (1, 1, ctx, ctx), lower
  triangular ones, and h.{i}.attn.masked_bias (a scalar, -1e4), as old checkpoints
  do; with --lm-head a tied lm_head.weight, a copy of wte.

The weights are random with structure, so attention is not uniform: c_attn's Q and
K columns have std sqrt(std * 3 / d) (scores q.k / sqrt(d_head) then have a spread
of about 3 std: peaked softmaxes), LayerNorm gains 1 + N(0, 0.1), biases nonzero.

The safetensors file is written by hand: an 8-byte little-endian header length,
the JSON header {name: {"dtype", "shape", "data_offsets": [begin, end]},
"__metadata__": {"format": "pt"}} padded with spaces to a multiple of 8 (as the
safetensors writer does), then each tensor's little-endian bytes in header order
(names sorted). F16 through numpy float16, BF16 through torch.bfloat16 (round to
nearest even).

The tokenizer: with bpe_ref (tests/bpe_ref.py) importable, its train() and
write(); otherwise a private fallback here (the 256 byte-level symbols in GPT-2's
order plus merges of adjacent pairs counted in a text)."""
import argparse
import collections
import json
import os
import struct
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
try:
    import bpe_ref  # noqa: E402  (tests/bpe_ref.py, the reference tokenizer)
except ImportError:
    bpe_ref = None

DTYPES = ("F32", "F16", "BF16")

TRAIN_TEXT = (
    "The quick brown fox jumps over the lazy dog. The dog sleeps; the fox runs away. "
    "Attention is all you need: queries, keys and values. Heads attend to previous "
    "tokens, to the first token, and to tokens that repeat. In 1998, 2004 and 2023 "
    "they said \"it's fine\", we'll see, they've gone, I'm here, you'd know.\n"
    "Multi-head attention splits the model dimension into heads; each head computes "
    "softmax(QK^T / sqrt(d)) V, and the outputs are concatenated and projected.\n"
    "   Spaces   and\ttabs, naïve café, Übergröße, 東京, emoji 🙂 and more text text text."
)


def bytes_to_unicode():
    """GPT-2's byte -> unicode table: printable bytes map to themselves, the
    others to 256 + n in byte order. Returns the list of (byte, char) in GPT-2's
    vocabulary order (ids 0..255)."""
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + \
        list(range(ord("®"), ord("ÿ") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return [(b, chr(c)) for b, c in zip(bs, cs)]


BYTE_ENC = dict(bytes_to_unicode())


def _pretokenize(text):
    import regex
    pat = regex.compile(
        r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+""")
    return ["".join(BYTE_ENC[b] for b in p.encode("utf-8")) for p in pat.findall(text)]


def _private_train(texts, n_merges):
    """Fallback trainer: byte-level base vocabulary in GPT-2's order, then up to
    n_merges merges of the most frequent adjacent pair inside pre-tokenized words."""
    vocab = {ch: i for i, (_, ch) in enumerate(bytes_to_unicode())}
    words = collections.Counter()
    for t in texts:
        for w in _pretokenize(t):
            words[tuple(w)] += 1
    words = dict(words)
    merges = []
    for _ in range(n_merges):
        pairs = collections.Counter()
        for w, c in words.items():
            for a, b in zip(w, w[1:]):
                pairs[(a, b)] += c
        if not pairs:
            break
        best = min(pairs.items(), key=lambda kv: (-kv[1], kv[0]))[0]
        merges.append(best)
        vocab.setdefault(best[0] + best[1], len(vocab))
        nw = {}
        for w, c in words.items():
            out, i = [], 0
            while i < len(w):
                if i + 1 < len(w) and (w[i], w[i + 1]) == best:
                    out.append(w[i] + w[i + 1])
                    i += 2
                else:
                    out.append(w[i])
                    i += 1
            nw[tuple(out)] = nw.get(tuple(out), 0) + c
        words = nw
    return vocab, merges


def _private_write(dirpath, vocab, merges):
    with open(os.path.join(dirpath, "vocab.json"), "w", encoding="utf-8") as f:
        json.dump(vocab, f, ensure_ascii=False)
    with open(os.path.join(dirpath, "merges.txt"), "w", encoding="utf-8") as f:
        f.write("#version: 0.2\n")
        for a, b in merges:
            f.write(f"{a} {b}\n")


def train_tokenizer(texts=None, n_merges=200):
    """(vocab, merges) trained on texts (default TRAIN_TEXT): bpe_ref.train when
    bpe_ref exists, else the private fallback."""
    texts = texts if texts is not None else [TRAIN_TEXT]
    if bpe_ref is not None:
        return bpe_ref.train(texts, n_merges)
    return _private_train(texts, n_merges)


def write_tokenizer(dirpath, vocab, merges):
    if bpe_ref is not None:
        bpe_ref.write(dirpath, vocab, merges)
    else:
        _private_write(dirpath, vocab, merges)


def filler_tokenizer(target_vocab, texts=None, n_trained=300):
    """A valid vocab/merges pair of exactly target_vocab ids (0..V-1): a trained
    tokenizer, then filler merges (pairs of byte symbols, then of those pairs) whose
    results are new tokens, then <|endoftext|> as the last id (as GPT-2 has)."""
    vocab, merges = train_tokenizer(texts, n_trained)
    vocab = dict(vocab)
    merges = list(merges)
    eot = "<|endoftext|>"
    vocab.pop(eot, None)
    # ids must stay 0..len-1: renumber in the existing order
    vocab = {t: i for i, (t, _) in enumerate(sorted(vocab.items(), key=lambda kv: kv[1]))}
    have = set(merges)
    syms = [ch for _, ch in bytes_to_unicode()]
    need = target_vocab - 1

    def pairs():
        for a in syms:
            for b in syms:
                yield a, b
        for a in syms:
            for b in syms:
                for c in syms[:8]:
                    yield a + b, c
    for a, b in pairs():
        if len(vocab) >= need:
            break
        if (a, b) in have or a + b in vocab or a not in vocab or b not in vocab:
            continue
        merges.append((a, b))
        have.add((a, b))
        vocab[a + b] = len(vocab)
    assert len(vocab) == need, (len(vocab), need)
    vocab[eot] = need
    return vocab, merges


def _to_bytes(a, dtype):
    a = np.ascontiguousarray(a, dtype=np.float32)
    if dtype == "F32":
        return a.astype("<f4").tobytes()
    if dtype == "F16":
        return a.astype("<f2").tobytes()
    if dtype == "BF16":
        import torch
        t = torch.from_numpy(a).to(torch.bfloat16)
        return t.view(torch.int16).numpy().astype("<i2").tobytes()
    raise ValueError(f"dtype {dtype!r}: must be one of {DTYPES}")


def write_safetensors(path, tensors, dtype):
    """tensors: {name: float array}; every tensor written as dtype."""
    names = sorted(tensors)
    header = {"__metadata__": {"format": "pt"}}
    blobs = []
    off = 0
    for name in names:
        b = _to_bytes(tensors[name], dtype)
        header[name] = {"dtype": dtype, "shape": list(np.shape(tensors[name])),
                        "data_offsets": [off, off + len(b)]}
        blobs.append(b)
        off += len(b)
    h = json.dumps(header, separators=(",", ":")).encode("utf-8")
    h += b" " * ((8 - len(h) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)))
        f.write(h)
        for b in blobs:
            f.write(b)


def make_weights(n_layer, n_head, n_embd, n_positions, n_vocab, seed=0, std=1.0):
    """Random weights with structure: {name without prefix: float32 array}."""
    assert n_embd % n_head == 0
    rng = np.random.default_rng(seed)
    d = n_embd

    def nrm(shape, s):
        return (rng.standard_normal(shape, dtype=np.float32) * np.float32(s)).astype(np.float32)

    w = {}
    w["wte.weight"] = nrm((n_vocab, d), 0.3 * std)
    # positions: a smooth part (sinusoids) plus noise, so position matters
    pos = np.arange(n_positions)[:, None]
    freq = np.exp(-np.arange(d)[None, :] / d * 4.0)
    w["wpe.weight"] = (0.3 * np.sin(pos * freq + np.arange(d)[None, :])).astype(np.float32) + \
        nrm((n_positions, d), 0.05 * std)
    qk = np.sqrt(3.0 * std / d)
    for i in range(n_layer):
        p = f"h.{i}."
        w[p + "ln_1.weight"] = 1 + nrm((d,), 0.1)
        w[p + "ln_1.bias"] = nrm((d,), 0.05)
        ca = np.concatenate([nrm((d, d), qk), nrm((d, d), qk), nrm((d, d), 1.0 / np.sqrt(d))], 1)
        w[p + "attn.c_attn.weight"] = ca.astype(np.float32)
        w[p + "attn.c_attn.bias"] = nrm((3 * d,), 0.2)
        w[p + "attn.c_proj.weight"] = nrm((d, d), 0.5 / np.sqrt(d))
        w[p + "attn.c_proj.bias"] = nrm((d,), 0.05)
        w[p + "ln_2.weight"] = 1 + nrm((d,), 0.1)
        w[p + "ln_2.bias"] = nrm((d,), 0.05)
        w[p + "mlp.c_fc.weight"] = nrm((d, 4 * d), 1.0 / np.sqrt(d))
        w[p + "mlp.c_fc.bias"] = nrm((4 * d,), 0.1)
        w[p + "mlp.c_proj.weight"] = nrm((4 * d, d), 0.5 / np.sqrt(4 * d))
        w[p + "mlp.c_proj.bias"] = nrm((d,), 0.05)
    w["ln_f.weight"] = 1 + nrm((d,), 0.1)
    w["ln_f.bias"] = nrm((d,), 0.05)
    return w


def config_json(n_layer, n_head, n_embd, n_positions, n_vocab, eps):
    """config.json as Hugging Face's gpt2 has it (with these sizes)."""
    return {
        "activation_function": "gelu_new",
        "architectures": ["GPT2LMHeadModel"],
        "attn_pdrop": 0.1,
        "bos_token_id": n_vocab - 1,
        "embd_pdrop": 0.1,
        "eos_token_id": n_vocab - 1,
        "initializer_range": 0.02,
        "layer_norm_epsilon": eps,
        "model_type": "gpt2",
        "n_ctx": n_positions,
        "n_embd": n_embd,
        "n_head": n_head,
        "n_layer": n_layer,
        "n_positions": n_positions,
        "resid_pdrop": 0.1,
        "summary_activation": None,
        "summary_first_dropout": 0.1,
        "summary_proj_to_labels": True,
        "summary_type": "cls_index",
        "summary_use_proj": True,
        "task_specific_params": {"text-generation": {"do_sample": True, "max_length": 50}},
        "vocab_size": n_vocab,
    }


def gen(outdir, n_layer=2, n_head=3, n_embd=48, n_positions=64, vocab=None, dtype="F32",
        prefix=False, mask_buffers=False, lm_head=False, eps=1e-5, seed=0, std=1.0):
    """Writes the checkpoint folder outdir. vocab: (vocab dict, merges list) of the
    tokenizer, or None for one trained here (200 merges). Returns the weights
    {name without prefix: float32 array, before rounding to dtype}."""
    if dtype not in DTYPES:
        raise ValueError(f"dtype {dtype!r}: must be one of {DTYPES}")
    os.makedirs(outdir, exist_ok=True)
    voc, merges = vocab if vocab is not None else train_tokenizer(None, 200)
    n_vocab = len(voc)
    assert sorted(voc.values()) == list(range(n_vocab)), "vocab ids must be 0..V-1"
    write_tokenizer(outdir, voc, merges)
    w = make_weights(n_layer, n_head, n_embd, n_positions, n_vocab, seed, std)
    pre = "transformer." if prefix else ""
    tensors = {pre + k: v for k, v in w.items()}
    if mask_buffers:
        tri = np.tril(np.ones((n_positions, n_positions), np.float32))[None, None]
        for i in range(n_layer):
            tensors[f"{pre}h.{i}.attn.bias"] = tri
            tensors[f"{pre}h.{i}.attn.masked_bias"] = np.array(-1e4, np.float32)
    if lm_head:
        tensors["lm_head.weight"] = w["wte.weight"]
    write_safetensors(os.path.join(outdir, "model.safetensors"), tensors, dtype)
    with open(os.path.join(outdir, "config.json"), "w") as f:
        json.dump(config_json(n_layer, n_head, n_embd, n_positions, n_vocab, eps), f, indent=2)
    return w


def gen_small_shape(outdir, prefix=False, mask_buffers=False, lm_head=False, eps=1e-5, seed=0,
                    std=1.0):
    """GPT-2 small's shapes: 12 layers, 12 heads, 768, ctx 1024, vocab 50257, F32."""
    return gen(outdir, 12, 12, 768, 1024, filler_tokenizer(50257), "F32", prefix, mask_buffers,
               lm_head, eps, seed, std)


def main(argv=None):
    ap = argparse.ArgumentParser(description="write a random GPT-2 checkpoint folder")
    ap.add_argument("outdir")
    ap.add_argument("--layers", type=int, default=2)
    ap.add_argument("--heads", type=int, default=3)
    ap.add_argument("--embd", type=int, default=48)
    ap.add_argument("--positions", type=int, default=64)
    ap.add_argument("--merges", type=int, default=200, help="BPE merges trained (small models)")
    ap.add_argument("--dtype", choices=DTYPES, default="F32")
    ap.add_argument("--prefix", action="store_true", help='names start with "transformer."')
    ap.add_argument("--mask-buffers", action="store_true", help="attn.bias / attn.masked_bias")
    ap.add_argument("--lm-head", action="store_true", help="a tied lm_head.weight")
    ap.add_argument("--eps", type=float, default=1e-5)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--std", type=float, default=1.0, help="scale of the random weights")
    ap.add_argument("--small-shape", action="store_true",
                    help="GPT-2 small's shapes: 12 x 12 heads, 768, ctx 1024, vocab 50257, F32")
    a = ap.parse_args(argv)
    if a.small_shape:
        gen_small_shape(a.outdir, a.prefix, a.mask_buffers, a.lm_head, a.eps, a.seed, a.std)
    else:
        if a.embd % a.heads:
            ap.error("--heads must divide --embd")
        gen(a.outdir, a.layers, a.heads, a.embd, a.positions, train_tokenizer(None, a.merges),
            a.dtype, a.prefix, a.mask_buffers, a.lm_head, a.eps, a.seed, a.std)
    print(a.outdir)


if __name__ == "__main__":
    main()
