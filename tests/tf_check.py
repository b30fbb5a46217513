#!/usr/bin/python3
"""tf_check.py TF_DRIVER: runs the transformer module (src/learn/transformer.h)
through tf_driver for several configurations with GPT-2's options, then rebuilds
the model in PyTorch (float64, autograd) from the dumped parameters and batch:

    x = wte[tokens] + wpe[:T]
    per layer: x = x + MHA(LayerNorm(x, eps)) with torch.nn.MultiheadAttention
               (in_proj_weight = [W_Q^T; W_K^T; W_V^T], in_proj_bias = [b_Q; b_K; b_V],
               out_proj = W_O^T, b_O; causal mask)
               [with an MLP: x = x + act(LayerNorm(x, eps) W_fc + b_fc) W_proj + b_proj,
               act = GELU (erf), ReLU or F.gelu(approximate="tanh") (GPT-2's gelu_new)]
    logits = LayerNorm(x, eps) W_te^T (tied) or LayerNorm(x, eps) W_U + b_U
    loss = cross-entropy over targets >= 0 (mean)

Checks (relative error rel(a, b) = ||a - b|| / ||b||, Euclidean over the tensor):
  - logits rel <= 1e-5 and the loss within 1e-5 relative;
  - every parameter's gradient rel <= 1e-4, and each element
    |g_c - g_t| <= 1e-3 |g_t| + 1e-5 max|g_t|; a gradient that is 0 in exact math
    (b_K: a constant added to a row of scores leaves the softmax unchanged) must
    stay within 1e-6 of the run's largest gradient element;
  - the trace of sequence 0, every layer, against a plain float64 recomputation
    (ln1, q, k, v, scores (-inf exactly where masked), attn, concat, out, out_full;
    rel <= 1e-5) and its attn against torch's own, taken by forward hooks on each
    nn.MultiheadAttention (rel <= 1e-5); with one head off, that head's band of concat
    exactly 0, out and out_full and the logits as the recomputation says;
  - the attn_layer filled for layer index 1: layer 1 of layers, the scale
    float32(1/sqrt(d_k)), causal, and every pointer at the second layer's tensors
    (its attn equals the second hook's, and is not the first's).
Prints the worst relative errors; exits 1 with "expected X, got Y" lines on failure."""
import os
import subprocess
import sys
import tempfile

import numpy as np

try:
    import torch
except ImportError:
    print("FAIL: PyTorch is needed (Debian: apt-get install python3-torch)", file=sys.stderr)
    sys.exit(1)

torch.set_num_threads(1)
F = torch.nn.functional
FAILURES = []
WORST = {}

# name, layers, h, d_model, vocab, ctx, T, B, mlp, act, bias, tied, eps, seed, off layer, head
RUNS = [
    ("gpt2-like-L2", 2, 4, 32, 50, 16, 12, 3, 1, "tanh", 1, 1, 1e-3, 5, 1, 2),
    ("untied-L3-erf", 3, 2, 16, 20, 10, 10, 2, 1, "gelu", 1, 0, 1e-5, 6, 0, 1),
    ("vocab50257-ctx1024", 2, 2, 8, 50257, 1024, 24, 1, 0, "relu", 1, 1, 1e-5, 7, 0, 0),
    # T 70: a causal head's products in blocks of 32 rows (attention.h), the last one short
    ("T70-blocks", 2, 4, 32, 30, 80, 70, 2, 1, "gelu", 1, 0, 1e-5, 8, 1, 3),
    # T d_k = 4800 floats, past ATTN_KT_MAX: Q_i K_i^T and dhead V_i^T with a transposed
    # operand instead of a copy of K_i^T or V_i^T
    ("wide-heads", 2, 2, 192, 20, 50, 50, 2, 0, "gelu", 0, 0, 1e-5, 9, 1, 1),
]
TOL_LOGITS, TOL_GRAD, TOL_TRACE = 1e-5, 1e-4, 1e-5


def fail(where, msg):
    FAILURES.append(f"{where}: {msg}")
    print(f"FAIL {where}: {msg}", file=sys.stderr)


def rel(a, b):
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    n = np.linalg.norm(b)
    return np.linalg.norm(a - b) / n if n > 0 else np.linalg.norm(a)


def check_rel(where, what, got, want, tol):
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    if got.shape != want.shape:
        fail(where, f"{what}: expected shape {want.shape}, got {got.shape}")
        return
    r = rel(got, want)
    key = what.split()[0]
    if r > WORST.get(key, (0.0, ""))[0]:
        WORST[key] = (r, where)
    if not r <= tol:
        fail(where, f"{what}: expected relative error <= {tol:g}, got {r:.3g}")


class Run:
    def __init__(self, spec, out):
        (self.name, self.L, self.h, self.d, self.V, self.ctx, self.T, self.B, self.mlp, self.act,
         self.bias, self.tied, self.eps, self.seed, self.off_layer, self.off_head) = spec
        self.out = out

    def npy(self, name):
        return np.load(os.path.join(self.out, name + ".npy"))

    def names(self):
        n = ["wte", "wpe"]
        for i in range(1, self.L + 1):
            n += [f"layer{i}.{s}" for s in ("ln1.gain", "ln1.bias", "W_Q", "W_K", "W_V", "W_O")]
            if self.bias:
                n += [f"layer{i}.{s}" for s in ("b_Q", "b_K", "b_V", "b_O")]
            if self.mlp:
                n += [f"layer{i}.{s}" for s in ("ln2.gain", "ln2.bias", "W_fc", "b_fc", "W_proj",
                                                "b_proj")]
        return n + ["lnf.gain", "lnf.bias"] + ([] if self.tied else ["W_U", "b_U"])

    def act_fn(self, x):
        if self.act == "relu":
            return torch.relu(x)
        return F.gelu(x, approximate="tanh") if self.act == "tanh" else F.gelu(x)

    def ln(self, x, g, b):
        return F.layer_norm(x, (self.d,), g, b, self.eps)

    def mlp_and_logits(self, P, x, i):
        p = lambda s: P[f"layer{i}.{s}"]
        if self.mlp:
            f = self.act_fn(self.ln(x, p("ln2.gain"), p("ln2.bias")) @ p("W_fc") + p("b_fc"))
            x = x + f @ p("W_proj") + p("b_proj")
        return x

    def logits(self, P, x):
        xf = self.ln(x, P["lnf.gain"], P["lnf.bias"])
        return xf @ P["wte"].T if self.tied else xf @ P["W_U"] + P["b_U"]

    def torch_forward(self, P, tokens, hooked):
        """The model through nn.MultiheadAttention; hooked collects each layer's attn."""
        B, T = tokens.shape
        x = P["wte"][tokens] + P["wpe"][None, :T, :]
        causal = torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1)
        for i in range(1, self.L + 1):
            p = lambda s: P[f"layer{i}.{s}"]
            mha = torch.nn.MultiheadAttention(self.d, self.h, bias=bool(self.bias),
                                              batch_first=True, dtype=torch.float64)
            del mha.in_proj_weight
            mha.in_proj_weight = torch.cat([p("W_Q").T, p("W_K").T, p("W_V").T], 0)
            del mha.out_proj.weight
            mha.out_proj.weight = p("W_O").T
            if self.bias:
                del mha.in_proj_bias
                mha.in_proj_bias = torch.cat([p("b_Q"), p("b_K"), p("b_V")], 0)
                del mha.out_proj.bias
                mha.out_proj.bias = p("b_O")
            mha.register_forward_hook(lambda m, inp, out: hooked.append(out[1].detach()))
            xn = self.ln(x, p("ln1.gain"), p("ln1.bias"))
            a, _ = mha(xn, xn, xn, attn_mask=causal, need_weights=True,
                       average_attn_weights=False)
            x = self.mlp_and_logits(P, x + a, i)
        return self.logits(P, x)

    def plain_trace(self, P, tok, off):
        """One sequence by hand, every tensor kept; off = (layer, head) or None."""
        T, d, h = tok.shape[0], self.d, self.h
        dk = d // h
        x = P["wte"][tok] + P["wpe"][:T]
        hidden = torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1)
        layers = []
        for i in range(1, self.L + 1):
            p = lambda s: P[f"layer{i}.{s}"]
            z = lambda s: p(s) if self.bias else 0.0
            t = {"ln1": self.ln(x, p("ln1.gain"), p("ln1.bias"))}
            for s in "qkv":
                t[s] = t["ln1"] @ p("W_" + s.upper()) + z("b_" + s.upper())
            qh, kh, vh = (t[s].reshape(T, h, dk).transpose(0, 1) for s in "qkv")
            t["scores"] = (qh @ kh.transpose(1, 2) / np.sqrt(dk)).masked_fill(hidden, -np.inf)
            t["attn"] = torch.softmax(t["scores"], -1)
            full = (t["attn"] @ vh).transpose(0, 1).reshape(T, d)
            t["out_full"] = full @ p("W_O") + z("b_O")
            t["concat"] = full.clone()
            if off is not None and off[0] == i - 1:
                t["concat"][:, off[1] * dk:(off[1] + 1) * dk] = 0.0
            t["out"] = t["concat"] @ p("W_O") + z("b_O")
            x = self.mlp_and_logits(P, x + t["out"], i)
            layers.append(t)
        return layers, self.logits(P, x)


def check_trace(run, P, tok, hooks, tag, off):
    where = f"{run.name} {tag}"
    with torch.no_grad():
        ref, logits = run.plain_trace(P, tok, off)
    for i, t in enumerate(ref, 1):
        for s, want in t.items():
            got = run.npy(f"{tag}_L{i}_{s}")
            if s == "scores":
                mask = np.isinf(want.numpy())
                if not np.array_equal(np.isneginf(got), mask):
                    fail(where, f"L{i} scores: expected -inf exactly above the diagonal")
                got, want = np.where(mask, 0, got), torch.where(torch.from_numpy(mask), 0.0, want)
            check_rel(where, f"trace L{i} {s}", got, want, TOL_TRACE)
        if off is None:  # torch's own attention, from the hook on layer i
            check_rel(where, f"trace L{i} attn vs hook", run.npy(f"{tag}_L{i}_attn"),
                      hooks[i - 1][0], TOL_TRACE)
    check_rel(where, "trace logits", run.npy(f"{tag}_logits"), logits, TOL_TRACE)
    if off is not None:
        dk = run.d // run.h
        band = run.npy(f"{tag}_L{off[0] + 1}_concat")[:, off[1] * dk:(off[1] + 1) * dk]
        if np.any(band != 0):
            fail(where, "expected the band of the head off exactly 0, got non-zero values")


def check_attn_layer(run, P, tok, hooks, tag, off):
    """The attn_layer filled for layer index 1 must be the second layer's."""
    where = f"{run.name} {tag} attn_layer(1)"
    meta = run.npy(f"{tag}_meta")
    dk = run.d // run.h
    n_off = 1 if off is not None and off[0] == 1 else 0
    # 1 / sqrt(d_k) rounded once to float (in float32 arithmetic, twice: one ulp off at d_k 96)
    want = [1, run.L, run.T, run.h, dk, np.float32(1 / np.sqrt(float(dk))), 1, 1, 1, n_off,
            1 - n_off]
    names = ["layer", "layers", "n", "h", "d_k", "scale", "mask", "scaled", "temperature",
             "heads off", "out == out_full"]
    for nm, w, g in zip(names, want, meta):
        if not g == np.float32(w):
            fail(where, f"{nm}: expected {w}, got {g}")
    with torch.no_grad():
        ref, _ = run.plain_trace(P, tok, off)
    two = ref[1]
    pairs = [("x", two["ln1"]), ("q", two["q"]), ("k", two["k"]), ("v", two["v"]),
             ("attn", two["attn"]), ("concat", two["concat"]), ("out", two["out"]),
             ("out_full", two["out_full"]), ("w_o", P["layer2.W_O"])]
    for nm, w in pairs:
        check_rel(where, f"attn_layer {nm}", run.npy(f"{tag}_{nm}"), w.detach(), TOL_TRACE)
    if off is None:
        got = run.npy(f"{tag}_attn")
        check_rel(where, "attn_layer attn vs hook on layer 2", got, hooks[1][0], TOL_TRACE)
        if rel(got, hooks[0][0]) < 1e-3:
            fail(where, "expected layer 2's attention, got layer 1's")


def check_run(driver, spec, tmp):
    run = Run(spec, os.path.join(tmp, spec[0]))
    args = [str(a) for a in spec[1:]]
    r = subprocess.run([driver, run.out] + args, capture_output=True, text=True)
    if r.returncode != 0:
        fail(run.name, f"expected tf_driver to exit 0, got {r.returncode}: {r.stderr.strip()}")
        return
    names = run.names()
    P = {n: torch.tensor(run.npy("param_" + n), dtype=torch.float64, requires_grad=True)
         for n in names}
    tokens = torch.from_numpy(run.npy("tokens").astype(np.int64))
    targets = torch.from_numpy(run.npy("targets").astype(np.int64))
    hooks = []
    logits = run.torch_forward(P, tokens, hooks)
    loss = F.cross_entropy(logits.reshape(run.B * run.T, -1), targets.reshape(-1), ignore_index=-1)
    loss.backward()
    check_rel(run.name, "logits", run.npy("logits"), logits.detach().reshape(run.B * run.T, -1),
              TOL_LOGITS)
    loss_c = float(run.npy("loss")[0])
    if not abs(loss_c - loss.item()) <= 1e-5 * abs(loss.item()):
        fail(run.name, f"loss: expected {loss.item():.9g}, got {loss_c:.9g}")
    scale = max(np.abs(P[n].grad.numpy()).max() for n in names)
    for n in names:
        gt, gc = P[n].grad.numpy(), run.npy("grad_" + n).astype(np.float64)
        if gc.shape == gt.shape and np.abs(gt).max() <= 1e-9 * scale:  # b_K: zero in exact math
            if not np.abs(gc).max() <= 1e-6 * scale:
                fail(run.name, f"grad {n}: expected 0 (within 1e-6 of the largest gradient "
                     f"{scale:.3g}), got {np.abs(gc).max():.3g}")
            continue
        check_rel(run.name, f"grad {n}", gc, gt, TOL_GRAD)
        if gc.shape == gt.shape:
            bad = np.argwhere(np.abs(gc - gt) > 1e-3 * np.abs(gt) + 1e-5 * np.abs(gt).max())
            if len(bad):
                j = tuple(bad[0])
                fail(run.name, f"grad {n}{list(j)}: expected {gt[j]:.9g}, got {gc[j]:.9g} "
                     f"({len(bad)} elements out of tolerance)")
    P = {n: t.detach() for n, t in P.items()}
    off = (run.off_layer, run.off_head)
    check_trace(run, P, tokens[0], hooks, "trace", None)
    check_trace(run, P, tokens[0], hooks, "off", off)
    check_attn_layer(run, P, tokens[0], hooks, "al", None)
    check_attn_layer(run, P, tokens[0], hooks, "aloff", off)
    print(f"{run.name}: {len(names)} gradients, logits, trace and attn_layer checked, "
          f"loss {loss.item():.6f}")


def main():
    if len(sys.argv) != 2:
        print("usage: tf_check.py TF_DRIVER", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as tmp:
        for spec in RUNS:
            check_run(sys.argv[1], spec, tmp)
    for key, (r, where) in sorted(WORST.items()):
        print(f"worst {key}: {r:.2g} ({where})")
    if FAILURES:
        print(f"{len(FAILURES)} failure(s)", file=sys.stderr)
        return 1
    print("tf_check: logits, gradients, traces and attn_layer match PyTorch")
    return 0


if __name__ == "__main__":
    sys.exit(main())
