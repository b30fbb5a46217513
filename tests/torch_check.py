#!/usr/bin/python3
"""torch_check.py LEARN_DRIVER: runs the C learner through learn_driver for several
shapes, then rebuilds the same model in PyTorch (float64, autograd) from the dumped
weights and batch:

    x = wte[tokens] + wpe
    per layer: x = x + MHA(LayerNorm(x)) with torch.nn.MultiheadAttention (no biases,
               causal mask; in_proj_weight = [W_Q^T; W_K^T; W_V^T], out_proj = W_O^T,
               so torch's head i is columns [i d_k, (i+1) d_k) of W_Q, W_K, W_V)
               [with --mlp: x = x + act(LayerNorm(x) W_fc + b_fc) W_proj + b_proj]
    logits = LayerNorm(x) W_U + b_U; loss = cross-entropy over targets >= 0 (mean)

Checks, per step of each run:
  - loss: |loss_c - loss_t| <= 1e-5 |loss_t|;
  - every parameter's gradient: rel = ||g_c - g_t|| / ||g_t|| <= 1e-3 (Euclidean norm
    over the tensor), and every element |g_c - g_t| <= 1e-3 |g_t| + 1e-4 max|g_t|;
  - runs from a fresh learner: torch.optim.AdamW (lr, betas (0.9, 0.999), eps 1e-8,
    weight decay 0.01), fed the C gradients, reproduces the C parameters after each
    step: |p_c - p_t| <= 1e-6 + 1e-5 |p_t|.
Prints the worst relative error; exits 1 with "expected X, got Y" lines on failure."""
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
FAILURES = []
WORST = [0.0, ""]

# name, task, layers, h, d_model, mlp, act, batch, seed, warm-up steps, checked steps
RUNS = [
    ("pair-h2", "pair", 1, 2, 16, 0, "gelu", 8, 3, 0, 3),
    ("pair-h2-warm", "pair", 1, 2, 16, 0, "gelu", 8, 4, 150, 2),
    ("induction-L2-h4", "induction", 2, 4, 16, 0, "gelu", 6, 5, 120, 2),
    ("pair-L2-mlp-gelu", "pair", 2, 2, 16, 1, "gelu", 4, 6, 0, 3),
    ("sort-h1-mlp-relu", "sort", 1, 1, 8, 1, "relu", 8, 7, 60, 2),
    ("prev-h8-d32", "prev", 1, 8, 32, 0, "gelu", 32, 8, 40, 2),
    ("first-L2-h4-d32-mlp", "first", 2, 4, 32, 1, "gelu", 16, 9, 0, 2),
    # 1.6e9 FLOPs a step: the batch runs as two halves (32 and 31) side by side
    ("sort-L2-mlp-d128-split", "sort", 2, 4, 128, 1, "gelu", 63, 11, 0, 2),
]
LR = 3e-3


def fail(where, msg):
    FAILURES.append(f"{where}: {msg}")
    print(f"FAIL {where}: {msg}", file=sys.stderr)


def load(d, k, kind, name):
    return np.load(os.path.join(d, f"k{k}_{kind}_{name}.npy"))


def param_names(layers, mlp):
    names = ["wte", "wpe"]
    for i in range(1, layers + 1):
        names += [f"layer{i}.{n}" for n in ("ln1.gain", "ln1.bias", "W_Q", "W_K", "W_V", "W_O")]
        if mlp:
            names += [f"layer{i}.{n}" for n in ("ln2.gain", "ln2.bias", "W_fc", "b_fc", "W_proj",
                                                "b_proj")]
    return names + ["lnf.gain", "lnf.bias", "W_U", "b_U"]


def torch_loss(P, tokens, targets, layers, h, mlp, act):
    """The model in float64 from the parameter dict P (tensors requiring grad)."""
    B, T = tokens.shape
    d = P["wte"].shape[1]
    ln = torch.nn.functional.layer_norm
    x = P["wte"][tokens] + P["wpe"][None, :, :]
    causal = torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1)
    for i in range(1, layers + 1):
        p = lambda n: P[f"layer{i}.{n}"]
        mha = torch.nn.MultiheadAttention(d, h, bias=False, batch_first=True,
                                          dtype=torch.float64)
        # replace the module's own weights with ours (and keep the autograd graph)
        del mha.in_proj_weight
        mha.in_proj_weight = torch.cat([p("W_Q").T, p("W_K").T, p("W_V").T], 0)
        del mha.out_proj.weight
        mha.out_proj.weight = p("W_O").T
        xn = ln(x, (d,), p("ln1.gain"), p("ln1.bias"), 1e-5)
        a, _ = mha(xn, xn, xn, attn_mask=causal, need_weights=False)
        x = x + a
        if mlp:
            f = ln(x, (d,), p("ln2.gain"), p("ln2.bias"), 1e-5) @ p("W_fc") + p("b_fc")
            f = torch.relu(f) if act == "relu" else torch.nn.functional.gelu(f)
            x = x + f @ p("W_proj") + p("b_proj")
    logits = ln(x, (d,), P["lnf.gain"], P["lnf.bias"], 1e-5) @ P["W_U"] + P["b_U"]
    return torch.nn.functional.cross_entropy(logits.reshape(B * T, -1), targets.reshape(-1),
                                             ignore_index=-1)


def check_run(driver, run, tmp):
    name, task, layers, h, d, mlp, act, batch, seed, warm, steps = run
    out = os.path.join(tmp, name)
    cmd = [driver, out, task, str(layers), str(h), str(d), str(mlp), act, str(batch), str(seed),
           str(warm), str(steps)]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        fail(name, f"expected learn_driver to exit 0, got {r.returncode}: {r.stderr.strip()}")
        return
    shards = 2 if name.endswith("-split") else 1
    if f"shards {shards}" not in r.stdout:
        fail(name, f"expected the learner in {shards} shard(s), got {r.stdout.strip()!r}")
    names = param_names(layers, mlp)
    P = {n: torch.tensor(load(out, 1, "param", n), dtype=torch.float64, requires_grad=True)
         for n in names}
    opt = torch.optim.AdamW(list(P.values()), lr=LR, betas=(0.9, 0.999), eps=1e-8,
                            weight_decay=0.01) if warm == 0 else None
    for k in range(1, steps + 1):
        where = f"{name} step {k}"
        if opt is None:  # warmed-up run: the C parameters before this step
            with torch.no_grad():
                for n in names:
                    P[n].copy_(torch.from_numpy(load(out, k, "param", n).astype(np.float64)))
        tokens = torch.from_numpy(np.load(os.path.join(out, f"k{k}_tokens.npy")).astype(np.int64))
        targets = torch.from_numpy(
            np.load(os.path.join(out, f"k{k}_targets.npy")).astype(np.int64))
        for t in P.values():
            t.grad = None
        loss = torch_loss(P, tokens, targets, layers, h, mlp, act)
        loss.backward()
        loss_c = float(np.load(os.path.join(out, f"k{k}_loss.npy"))[0])
        if not abs(loss_c - loss.item()) <= 1e-5 * abs(loss.item()):
            fail(where, f"loss: expected {loss.item():.9g}, got {loss_c:.9g}")
        for n in names:
            gt = P[n].grad.numpy()
            gc = load(out, k, "grad", n).astype(np.float64)
            if gc.shape != gt.shape:
                fail(where, f"{n}: expected shape {gt.shape}, got {gc.shape}")
                continue
            norm = np.linalg.norm(gt)
            rel = np.linalg.norm(gc - gt) / norm if norm > 0 else np.linalg.norm(gc)
            if rel > WORST[0]:
                WORST[0], WORST[1] = rel, f"{where} {n}"
            if not rel <= 1e-3:
                fail(where, f"{n}: expected ||g_c - g_t|| / ||g_t|| <= 1e-3, got {rel:.3g}")
            tol = 1e-3 * np.abs(gt) + 1e-4 * np.abs(gt).max()
            bad = np.argwhere(np.abs(gc - gt) > tol)
            if len(bad):
                j = tuple(bad[0])
                fail(where, f"{n}{list(j)}: expected {gt[j]:.9g}, got {gc[j]:.9g} "
                     f"({len(bad)} elements out of tolerance)")
        if opt is not None:  # the C optimizer against torch's, fed the C gradients
            with torch.no_grad():
                for n in names:
                    P[n].grad = torch.from_numpy(load(out, k, "grad", n).astype(np.float64))
            opt.step()
            for n in names:
                pc = load(out, k + 1, "param", n).astype(np.float64)
                pt = P[n].detach().numpy()
                err = np.abs(pc - pt) - (1e-6 + 1e-5 * np.abs(pt))
                if (err > 0).any():
                    j = tuple(np.argwhere(err > 0)[0])
                    fail(where, f"AdamW {n}{list(j)}: expected {pt[j]:.9g}, got {pc[j]:.9g}")
    print(f"{name}: {steps} steps checked, loss {loss.item():.6f}")


def main():
    if len(sys.argv) != 2:
        print("usage: torch_check.py LEARN_DRIVER", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as tmp:
        for run in RUNS:
            check_run(sys.argv[1], run, tmp)
    print(f"worst gradient relative error {WORST[0]:.2g} ({WORST[1]})")
    if FAILURES:
        print(f"{len(FAILURES)} failure(s)", file=sys.stderr)
        return 1
    print("torch_check: all gradients, losses and AdamW steps match PyTorch")
    return 0


if __name__ == "__main__":
    sys.exit(main())
