#!/usr/bin/python3
"""An independent PyTorch reference of the `cards` task and of the trainer, written from
their published semantics (README, Learn live), not from the C code: the same task, model,
initialisation and optimizer, its own random numbers. It answers "does the trade-off of h
belong to the task and the trainer, or to our C code?" by training the same sweep of h.

cards: 32 keys x 4 values as 128 card tokens (id = 4 key + value) plus 32 question tokens
(id 128 + key); a sequence of 24: 16 cards with distinct keys, uniform values, then 8
questions each naming a key present (uniformly, with repeats). Targets only at the
questions: 4 (value of the asked card) + (value of the card at position 0), 16 classes.
A quarter of all examples is held out (by a hash of the tokens); 256 held-out examples.

Model: token + learned position embeddings, one pre-LayerNorm block x + MHA(LN(x)),
causal, no biases in W^Q, W^K, W^V, W^O, then LN and W_U + b_U. N(0, 0.1) for every
matrix and embedding (cards' own initialisation; the other tasks start N(0, 0.02), and
--init-std 0.02 starts cards so), LayerNorm gains 1, biases 0. AdamW (lr 3e-3, betas 0.9,
0.999, eps 1e-8, weight decay 0.01 on every parameter), batch 32, float32, one thread.

usage: cards_ref.py [--steps N] [--d-model D] [--seeds S0,S1,..] [--heads 1,2,4,..]
                   [--init-std S]
prints one line per (h, seed) and the mean per h; --json prints them as JSON.
"""
import argparse
import hashlib
import json
import math
import os
import sys

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
import numpy as np  # noqa: E402
import torch  # noqa: E402

KEYS, VALUES, SHOWN, ASKED = 32, 4, 16, 8
VOCAB, CLASSES, T = KEYS * VALUES + KEYS, VALUES * VALUES, SHOWN + ASKED


def draw(rng):
    keys = rng.choice(KEYS, SHOWN, replace=False)
    vals = rng.integers(0, VALUES, SHOWN)
    asked = rng.integers(0, SHOWN, ASKED)
    tok = np.concatenate([VALUES * keys + vals, KEYS * VALUES + keys[asked]])
    tgt = np.concatenate([np.full(SHOWN, -1), VALUES * vals[asked] + vals[0]])
    return tok, tgt


def held_out(tok):
    return hashlib.blake2b(bytes(tok.astype(np.uint8)), digest_size=8).digest()[0] % 4 == 0


def batch(rng, n, held):
    toks, tgts = [], []
    while len(toks) < n:
        tok, tgt = draw(rng)
        if held_out(tok) == held:
            toks.append(tok)
            tgts.append(tgt)
    return torch.tensor(np.array(toks)), torch.tensor(np.array(tgts))


class Model(torch.nn.Module):
    def __init__(self, d, h, std):
        super().__init__()
        self.h, self.dk = h, d // h
        self.wte = torch.nn.Parameter(torch.randn(VOCAB, d) * std)
        self.wpe = torch.nn.Parameter(torch.randn(T, d) * std)
        self.ln1 = torch.nn.LayerNorm(d)
        self.wq, self.wk, self.wv, self.wo = (
            torch.nn.Parameter(torch.randn(d, d) * std) for _ in range(4))
        self.lnf = torch.nn.LayerNorm(d)
        self.wu = torch.nn.Parameter(torch.randn(d, CLASSES) * std)
        self.bu = torch.nn.Parameter(torch.zeros(CLASSES))
        self.register_buffer("mask", torch.triu(torch.ones(T, T, dtype=torch.bool), 1))

    def forward(self, tok):
        B = tok.shape[0]
        x = self.wte[tok] + self.wpe
        a = self.ln1(x)

        def split(m):
            return (a @ m).view(B, T, self.h, self.dk).transpose(1, 2)

        q, k, v = split(self.wq), split(self.wk), split(self.wv)
        s = q @ k.transpose(-1, -2) / math.sqrt(self.dk)
        s = s.masked_fill(self.mask, float("-inf"))
        heads = torch.softmax(s, -1) @ v
        x = x + heads.transpose(1, 2).reshape(B, T, -1) @ self.wo
        return self.lnf(x) @ self.wu + self.bu


def run(d, h, seed, steps, std, batch_size=32, heldout=256):
    torch.manual_seed(seed)
    rng_train = np.random.default_rng([seed, 1])
    held_tok, held_tgt = batch(np.random.default_rng([seed, 2]), heldout, True)
    m = Model(d, h, std)
    opt = torch.optim.AdamW(m.parameters(), lr=3e-3, betas=(0.9, 0.999), eps=1e-8,
                            weight_decay=0.01)
    for _ in range(steps):
        tok, tgt = batch(rng_train, batch_size, False)
        loss = torch.nn.functional.cross_entropy(m(tok).view(-1, CLASSES), tgt.view(-1),
                                                 ignore_index=-1)
        opt.zero_grad()
        loss.backward()
        opt.step()
    with torch.no_grad():
        z = m(held_tok).view(-1, CLASSES)
        t = held_tgt.view(-1)
        keep = t >= 0
        acc = (z[keep].argmax(-1) == t[keep]).float().mean().item()
        loss = torch.nn.functional.cross_entropy(z[keep], t[keep]).item()
    return acc, loss


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=1000)
    p.add_argument("--d-model", type=int, default=16)
    p.add_argument("--seeds", default="1,2,3")
    p.add_argument("--heads", default="")
    p.add_argument("--init-std", type=float, default=0.1)
    p.add_argument("--json", action="store_true")
    a = p.parse_args()
    torch.set_num_threads(1)
    seeds = [int(s) for s in a.seeds.split(",")]
    heads = ([int(x) for x in a.heads.split(",")] if a.heads else
             [x for x in range(1, a.d_model + 1) if a.d_model % x == 0])
    rows = []
    for h in heads:
        accs = []
        for s in seeds:
            acc, loss = run(a.d_model, h, s, a.steps, a.init_std)
            rows.append({"h": h, "d_k": a.d_model // h, "seed": s, "acc": acc, "loss": loss})
            accs.append(acc)
            if not a.json:
                print(f"h={h:2d} d_k={a.d_model // h:2d} seed {s}: {100 * acc:5.1f}%  "
                      f"loss {loss:.4f}", flush=True)
        if not a.json:
            print(f"h={h:2d} mean {100 * np.mean(accs):5.1f}%  range "
                  f"{100 * min(accs):5.1f}-{100 * max(accs):5.1f}%", flush=True)
    if a.json:
        json.dump({"d_model": a.d_model, "steps": a.steps, "runs": rows}, sys.stdout)
        print()


if __name__ == "__main__":
    main()
