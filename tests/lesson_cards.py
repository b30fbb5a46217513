"""lesson_cards.py: what a trained `cards` run's heads do, recomputed in NumPy from its dump.

A lesson step that trains `cards` makes claims about the run it shows ("one head reads
card 0", "removing head 2 leaves about 25 %"). `--train cards ... --dump DIR` writes the
trained weights (DIR/weights/*.npy); this module runs that model forward itself, written
from the README's description of the task and the model (Learn live, "More heads are smaller
heads" and "The model"), not from the C code, on its own fresh examples, and measures:
the held-out-style accuracy (cards_acc), each head's mean weight from the question rows on
the asked card and on card 0 (on_asked, on_card0), the share of questions for which a head
puts at least half of its weight on the asked card (finds, per head) and for which some head
does (found), and the accuracy with one head removed, its band of Concat zeroed (without).
The one example the app dumps (layer1/attn.npy, logits.npy) checks this forward first: a
forward that disagrees with the app's is refused.

cards: 16 cards `key=value` (token 4 key + value, keys distinct), then 8 questions `key?`
(token 128 + key, a key on one of the cards); the target at a question is 4 (value of the
asked card) + (value of card 0).
"""
import os

import numpy as np

KEYS, VALUES, SHOWN, ASKED = 32, 4, 16, 8
LN_EPS = 1e-5


def examples(count, seed=12345):
    """count random cards sequences: (tokens [count, 24], asked card positions [count, 8])."""
    rng = np.random.default_rng(seed)
    tok = np.zeros((count, SHOWN + ASKED), dtype=np.int64)
    pos = np.zeros((count, ASKED), dtype=np.int64)
    for b in range(count):
        keys = rng.choice(KEYS, SHOWN, replace=False)
        vals = rng.integers(0, VALUES, SHOWN)
        tok[b, :SHOWN] = VALUES * keys + vals
        pos[b] = rng.integers(0, SHOWN, ASKED)
        tok[b, SHOWN:] = VALUES * KEYS + keys[pos[b]]
    return tok, pos


def layernorm(x, g, b):
    m = x.mean(axis=-1, keepdims=True)
    v = ((x - m) ** 2).mean(axis=-1, keepdims=True)
    return (x - m) / np.sqrt(v + LN_EPS) * g + b


class Run:
    """The trained one-layer attention-only model of a `--train cards --dump DIR`."""

    def __init__(self, d, h):
        w = {f[:-4]: np.load(os.path.join(d, "weights", f)).astype(np.float64)
             for f in os.listdir(os.path.join(d, "weights"))}
        self.w, self.h = w, h
        self.dk = w["layer1_W_Q"].shape[0] // h

    def forward(self, tok, off=()):
        """(attention [B, h, T, T], logits [B, T, classes]) with the heads in off removed."""
        w, h, dk = self.w, self.h, self.dk
        T = tok.shape[1]
        x = w["wte"][tok] + w["wpe"][:T]
        xn = layernorm(x, w["layer1_ln1_gain"], w["layer1_ln1_bias"])
        B = tok.shape[0]

        def split(m):
            return (xn @ m).reshape(B, T, h, dk).transpose(0, 2, 1, 3)

        q, k, v = split(w["layer1_W_Q"]), split(w["layer1_W_K"]), split(w["layer1_W_V"])
        s = q @ k.transpose(0, 1, 3, 2) / np.sqrt(dk)
        s = np.where(np.tril(np.ones((T, T), dtype=bool)), s, -np.inf)
        a = np.exp(s - s.max(axis=-1, keepdims=True))
        a /= a.sum(axis=-1, keepdims=True)
        heads = a @ v
        for hd in off:
            heads[:, hd - 1] = 0.0
        concat = heads.transpose(0, 2, 1, 3).reshape(B, T, h * dk)
        r = x + concat @ w["layer1_W_O"]
        logits = layernorm(r, w["lnf_gain"], w["lnf_bias"]) @ w["W_U"] + w["b_U"]
        return a, logits

    def check_against(self, d):
        """The app's own example (tokens.txt) through this forward gives its dumped
        attention and logits; False when it does not (then nothing here can be trusted)."""
        names = [t for t in open(os.path.join(d, "tokens.txt"), encoding="utf-8")
                 .read().split("\n") if t]
        tok = np.array([[card_token(t) for t in names]])
        a, logits = self.forward(tok)
        return (np.allclose(a[0], np.load(os.path.join(d, "layer1", "attn.npy")), atol=1e-4)
                and np.allclose(logits[0], np.load(os.path.join(d, "logits.npy")), atol=1e-3))

    def measure(self, count=512):
        """The names a lesson's facts use, over count fresh examples."""
        tok, pos = examples(count)
        val = tok[:, :SHOWN] % VALUES
        target = VALUES * np.take_along_axis(val, pos, axis=1) + val[:, :1]
        rows = np.arange(SHOWN, SHOWN + ASKED)

        def acc(off=()):
            return float((self.forward(tok, off)[1][:, rows].argmax(-1) == target).mean())

        a = self.forward(tok)[0][:, :, rows]  # [B, h, 8, T]: the question rows
        on_asked = np.take_along_axis(a, pos[:, None, :, None], axis=3)[..., 0]  # [B, h, 8]
        return {
            "cards_acc": acc(),
            "on_asked": [float(x) for x in on_asked.mean(axis=(0, 2))],
            "on_card0": [float(x) for x in a[..., 0].mean(axis=(0, 2))],
            "found": float((on_asked.max(axis=1) >= 0.5).mean()),
            "finds": [float(x) for x in (on_asked >= 0.5).mean(axis=(0, 2))],
            "without": [acc((hd,)) for hd in range(1, self.h + 1)],
        }


def card_token(name):
    """a card's token id from its text: `k=v` is 4 k + v, `k?` is 128 + k."""
    if name.endswith("?"):
        return VALUES * KEYS + int(name[:-1])
    k, v = name.split("=")
    return VALUES * int(k) + int(v)
