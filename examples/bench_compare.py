#!/usr/bin/python3
"""bench_compare.py MHAVIZ [--rounds R] [--train-only]: mhaviz's forward pass against NumPy
and PyTorch, and its training steps against PyTorch's.

Each round runs, one after the other within about a minute, `mhaviz --bench-json`
and the same forward pass (X -> Q, K, V -> scores -> softmax -> heads -> Concat ->
W^O, float32, every attention weight kept) in NumPy and in PyTorch, each on 1 and
on 2 threads, each shape timed as mhaviz times it: a median over at least 0.5 s
after a warm-up. NumPy must link the same OpenBLAS (this script prints which
library it found). PyTorch is skipped when it is not installed; its OpenMP
threads wait passively (OMP_WAIT_POLICY=PASSIVE) so that they do not spin.

Prints, per shape, the median over rounds of mhaviz's time and of the faster
thread count of each library, the ratios, and how much mhaviz's own time moved
between rounds (min and max), to show how noisy the machine was; and the
forward's rate at the largest shape as a share of the sgemm rate of its round.

Training: the small step (pair, d_model 32, one thread) and the big one of issue 19
(d_model 128, h 8, T 64, 2 layers with the MLP, batch 32: `train_step_big`, on mhaviz's
bench-only sequence, the same batches here) on 1 and 2 threads, the same model written in
PyTorch (the faster of nn.MultiheadAttention and a hand-written attention; on 2 threads also the faster of OpenMP waiting passively and its
default). With
--train-only each round runs only `MHAVIZ_BENCH_ONLY=train mhaviz --bench-json` and the
PyTorch steps, who goes first alternating from round to round, and prints per thread
count the medians of the wall time and of the processor time a step (every thread's: on
a shared machine it moves much less than the wall time) and the range of the rounds' own
ratios.

    python3 examples/bench_compare.py build/mhaviz --rounds 5
    python3 examples/bench_compare.py build/mhaviz --rounds 7 --train-only
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

SHAPES = [(8, 64, 4), (12, 64, 4), (16, 128, 8), (64, 256, 8), (128, 512, 8),
          (256, 512, 16), (512, 1024, 16)]
MIN_S, MIN_RUNS = 0.5, 5


def time_it(fn):
    """Median seconds of fn() over at least MIN_S after a warm-up."""
    fn()
    samples, start = [], time.perf_counter()
    while time.perf_counter() - start < MIN_S or len(samples) < MIN_RUNS:
        t0 = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - t0)
    return statistics.median(samples)


def worker_numpy():
    import numpy as np
    rng = np.random.default_rng(1)
    for n, d, h in SHAPES:
        dk = d // h
        x = rng.standard_normal((n, d), dtype=np.float32)
        wq, wk, wv, wo = (rng.uniform(-0.1, 0.1, (d, d)).astype(np.float32) for _ in range(4))
        scale = np.float32(1.0 / np.sqrt(dk))

        def forward():
            q, k, v = x @ wq, x @ wk, x @ wv
            qh = q.reshape(n, h, dk).transpose(1, 0, 2)
            kh = k.reshape(n, h, dk).transpose(1, 0, 2)
            vh = v.reshape(n, h, dk).transpose(1, 0, 2)
            scores = (qh @ kh.transpose(0, 2, 1)) * scale
            attn = np.exp(scores - scores.max(axis=-1, keepdims=True))
            attn /= attn.sum(axis=-1, keepdims=True)
            heads = attn @ vh
            return heads.transpose(1, 0, 2).reshape(n, d) @ wo

        print(json.dumps({"n": n, "d_model": d, "h": h, "median_us": time_it(forward) * 1e6}))


def worker_torch(threads):
    import torch
    torch.set_num_threads(threads)
    torch.manual_seed(1)
    with torch.inference_mode():
        for n, d, h in SHAPES:
            dk = d // h
            x = torch.randn(n, d)
            wq, wk, wv, wo = (torch.empty(d, d).uniform_(-0.1, 0.1) for _ in range(4))

            def forward():
                q, k, v = x @ wq, x @ wk, x @ wv
                qh = q.view(n, h, dk).transpose(0, 1)
                kh = k.view(n, h, dk).transpose(0, 1)
                vh = v.view(n, h, dk).transpose(0, 1)
                attn = torch.softmax(qh @ kh.transpose(1, 2) / dk ** 0.5, dim=-1)
                heads = attn @ vh
                return heads.transpose(0, 1).reshape(n, d) @ wo

            mha = torch.nn.MultiheadAttention(d, h, bias=False, batch_first=True)
            xb = x.unsqueeze(0)

            def forward_module():  # the weights of every head, as mhaviz keeps them
                return mha(xb, xb, xb, need_weights=True, average_attn_weights=False)

            best = min(time_it(forward), time_it(forward_module))
            print(json.dumps({"n": n, "d_model": d, "h": h, "median_us": best * 1e6}))


def worker_train():
    """One AdamW step of the same model mhaviz trains for its train_step case:
    pair task shapes (vocabulary 5, 25 classes, T 12), d_model 32, h 4, batch 32,
    1 pre-LayerNorm block of causal attention, learned positions, final
    LayerNorm, unembedding, cross-entropy on positions 1..11. One thread."""
    import torch
    torch.set_num_threads(1)
    torch.manual_seed(1)
    d, h, T, vocab, classes, batch = 32, 4, 12, 5, 25, 32

    class Model(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.wte = torch.nn.Embedding(vocab, d)
            self.wpe = torch.nn.Embedding(T, d)
            self.ln1 = torch.nn.LayerNorm(d)
            self.attn = torch.nn.MultiheadAttention(d, h, bias=False, batch_first=True)
            self.lnf = torch.nn.LayerNorm(d)
            self.head = torch.nn.Linear(d, classes)
            self.register_buffer("mask", torch.triu(torch.ones(T, T, dtype=torch.bool), 1))

        def forward(self, tok):
            x = self.wte(tok) + self.wpe(torch.arange(T))
            a = self.ln1(x)
            x = x + self.attn(a, a, a, attn_mask=self.mask, need_weights=False)[0]
            return self.head(self.lnf(x))

    model = Model()
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=0.01)
    gen = torch.Generator().manual_seed(2)

    def step():
        tok = torch.randint(0, vocab, (batch, T), generator=gen)
        tgt = tok[:, :1] * vocab + torch.roll(tok, 1, 1)  # (token 0, token i-1)
        logits = model(tok)
        loss = torch.nn.functional.cross_entropy(logits[:, 1:].reshape(-1, classes),
                                                 tgt[:, 1:].reshape(-1))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()

    print(json.dumps({"train_step_us": time_it(step) * 1e6}))


BIG = dict(d=128, h=8, T=64, layers=2, batch=32, vocab=16, batches=4)


def big_batches():
    """The batches mhaviz's train_step_big takes (bench.c): tokens from the same LCG,
    uniform over 16 symbols, the target at i >= 1 the token at i - 1, -1 at 0."""
    import torch
    n = BIG["batches"] * BIG["batch"] * BIG["T"]
    x, tok = 0x9E3779B97F4A7C15, []
    for _ in range(n):
        x = (x * 6364136223846793005 + 1442695040888963407) % (1 << 64)
        tok.append((x >> 33) % BIG["vocab"])
    tok = torch.tensor(tok).view(BIG["batches"], BIG["batch"], BIG["T"])
    tgt = torch.roll(tok, 1, 2)
    tgt[:, :, 0] = -1
    return tok, tgt


def big_model(module_attention):
    """mhaviz's learner (src/learn/learn.c, transformer.c) at BIG's size: token +
    learned position embeddings, `layers` pre-LayerNorm blocks x + MHA(LN1(x)) (causal,
    no biases in W^Q, W^K, W^V, W^O) then x + W_proj GELU(W_fc LN2(x) + b_fc) + b_proj
    (exact GELU, d_ff = 4 d), final LayerNorm, W_U + b_U; N(0, 0.02) init. The attention
    by torch.nn.MultiheadAttention when module_attention, else by hand (Q K^T / sqrt(d_k),
    -inf above the diagonal, softmax, A V, in one batched product per step)."""
    import torch
    d, h, T, V = BIG["d"], BIG["h"], BIG["T"], BIG["vocab"]
    dk = d // h

    class Block(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.ln1, self.ln2 = torch.nn.LayerNorm(d), torch.nn.LayerNorm(d)
            if module_attention:
                self.attn = torch.nn.MultiheadAttention(d, h, bias=False, batch_first=True)
            else:
                self.qkv = torch.nn.Linear(d, 3 * d, bias=False)
                self.wo = torch.nn.Linear(d, d, bias=False)
            self.fc, self.proj = torch.nn.Linear(d, 4 * d), torch.nn.Linear(4 * d, d)
            self.register_buffer("mask", torch.triu(torch.ones(T, T, dtype=torch.bool), 1))

        def forward(self, x):
            a = self.ln1(x)
            if module_attention:
                x = x + self.attn(a, a, a, attn_mask=self.mask, need_weights=False)[0]
            else:
                B = x.shape[0]
                q, k, v = self.qkv(a).view(B, T, 3, h, dk).permute(2, 0, 3, 1, 4)
                s = (q @ k.transpose(-1, -2)) * dk ** -0.5
                att = torch.softmax(s.masked_fill(self.mask, float("-inf")), -1)
                x = x + self.wo((att @ v).transpose(1, 2).reshape(B, T, d))
            return x + self.proj(torch.nn.functional.gelu(self.fc(self.ln2(x))))

    class Model(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.wte, self.wpe = torch.nn.Embedding(V, d), torch.nn.Embedding(T, d)
            self.blocks = torch.nn.ModuleList(Block() for _ in range(BIG["layers"]))
            self.lnf, self.head = torch.nn.LayerNorm(d), torch.nn.Linear(d, V)
            for name, p in self.named_parameters():
                if p.dim() == 2:
                    torch.nn.init.normal_(p, 0.0, 0.02)
                elif name.endswith("bias"):
                    torch.nn.init.zeros_(p)

        def forward(self, tok):
            x = self.wte(tok) + self.wpe.weight
            for b in self.blocks:
                x = b(x)
            return self.head(self.lnf(x))

    return Model()


def worker_train_big(threads):
    """One AdamW step (lr 3e-3, weight decay 0.01) of big_model on mhaviz's batches,
    the faster of the two attentions; on `threads` threads."""
    import torch
    torch.set_num_threads(threads)
    torch.manual_seed(1)
    tok, tgt = big_batches()
    best = None
    for module_attention in (False, True):
        model = big_model(module_attention)
        opt = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=0.01)
        turn = [0]

        def step():
            i = turn[0] = (turn[0] + 1) % BIG["batches"]
            logits = model(tok[i])
            loss = torch.nn.functional.cross_entropy(logits.reshape(-1, BIG["vocab"]),
                                                     tgt[i].reshape(-1), ignore_index=-1)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()

        t = time_it(step)
        cpu = []  # each step's processor time (every thread's), as mhaviz's cpu_us
        for _ in range(MIN_RUNS * 2):
            c0 = time.process_time()
            step()
            cpu.append(time.process_time() - c0)
        if best is None or t < best[0]:
            best = (t, statistics.median(cpu))
    print(json.dumps({"train_step_us": best[0] * 1e6, "cpu_us": best[1] * 1e6}))


def run_worker(kind, threads, passive=True):
    env = dict(os.environ)
    env["OPENBLAS_NUM_THREADS"] = env["OMP_NUM_THREADS"] = str(threads)
    if passive:
        env["OMP_WAIT_POLICY"] = "PASSIVE"
    else:
        env.pop("OMP_WAIT_POLICY", None)
    r = subprocess.run([sys.executable, __file__, "--worker", kind, "--threads", str(threads)],
                       capture_output=True, text=True, env=env, timeout=900)
    if r.returncode != 0:
        return None
    if kind == "train":
        return json.loads(r.stdout.splitlines()[-1])["train_step_us"]
    if kind == "train_big":
        o = json.loads(r.stdout.splitlines()[-1])
        return o["train_step_us"], o["cpu_us"]
    return {(o["n"], o["d_model"], o["h"]): o["median_us"]
            for o in map(json.loads, r.stdout.splitlines())}


def run_mhaviz(mhaviz, only=None):
    env = dict(os.environ)
    if only:
        env["MHAVIZ_BENCH_ONLY"] = only
    r = subprocess.run([mhaviz, "--bench-json"], capture_output=True, text=True, check=True,
                       timeout=900, env=env)
    out, sgemm = {}, None
    for o in map(json.loads, r.stdout.splitlines()):
        if o["case"] == "forward":
            out[(o["n"], o["d_model"], o["h"])] = o["median_us"]
        elif o["case"] == "sgemm":
            sgemm = o["gflops"]
        elif o["case"] == "train_step":
            out["train_step"] = o["median_us"]
        elif o["case"] == "train_step_big":
            out[("big", o["threads"])] = (o["median_us"], o["cpu_us"])
    return out, sgemm


def torch_training(res):
    """PyTorch's two training steps into res: the small one on 1 thread, the big one on
    1 and 2; on 2 the faster (wall) of OpenMP's threads waiting passively and its own
    default (they spin a while before they sleep: faster on an idle machine)."""
    res["torch_train"] = run_worker("train", 1)
    res[("torch_big", 1)] = run_worker("train_big", 1)
    runs = [r for r in (run_worker("train_big", 2), run_worker("train_big", 2, passive=False))
            if r]
    res[("torch_big", 2)] = min(runs) if runs else None


def report_training(rounds):
    """The training steps, median over rounds, and each round's own ratio."""
    mt = [rd["mhaviz"].get("train_step") for rd in rounds if "train_step" in rd["mhaviz"]]
    tt = [rd["torch_train"] for rd in rounds if rd.get("torch_train")]
    if mt and tt:
        m, t = statistics.median(mt), statistics.median(tt)
        print(f"\ntraining step (pair, d_model 32, h 4, batch 32, T 12, 1 layer, one thread): "
              f"mhaviz {m:.0f} us, PyTorch {t:.0f} us: mhaviz {t / m:.2f}x faster")
    b = BIG
    print(f"\ntraining step at d_model {b['d']}, h {b['h']}, T {b['T']} (a bench-only sequence: "
          f"the prev rule over {b['vocab']} symbols), {b['layers']} layers with the MLP, batch "
          f"{b['batch']}, one AdamW step; medians over {len(rounds)} rounds, mhaviz and PyTorch "
          f"alternating:")
    for t in (1, 2):
        pairs = [(rd["mhaviz"][("big", t)], rd[("torch_big", t)]) for rd in rounds
                 if ("big", t) in rd["mhaviz"] and rd.get(("torch_big", t))]
        if not pairs:
            continue
        for k, what in ((0, "wall time"), (1, "processor time")):
            m = statistics.median(p[0][k] for p in pairs)
            tc = statistics.median(p[1][k] for p in pairs)
            ratios = [p[1][k] / p[0][k] for p in pairs]
            print(f"  {t} thread{'s' if t > 1 else ' '}, {what:>14}: mhaviz {m / 1e3:7.2f} ms, "
                  f"PyTorch {tc / 1e3:7.2f} ms: mhaviz {tc / m:.2f}x faster (per round "
                  f"{min(ratios):.2f}..{max(ratios):.2f}x)")
    # each at its own faster thread count in the round, wall time: the step as a user gets it
    best = []
    for rd in rounds:
        m = [rd["mhaviz"][("big", t)][0] for t in (1, 2) if ("big", t) in rd["mhaviz"]]
        tc = [rd[("torch_big", t)][0] for t in (1, 2) if rd.get(("torch_big", t))]
        if m and tc:
            best.append((min(m), min(tc)))
    if best:
        m = statistics.median(p[0] for p in best)
        tc = statistics.median(p[1] for p in best)
        ratios = [p[1] / p[0] for p in best]
        print(f"  each at its faster thread count, wall time: mhaviz {m / 1e3:7.2f} ms, PyTorch "
              f"{tc / 1e3:7.2f} ms: mhaviz {tc / m:.2f}x faster (per round "
              f"{min(ratios):.2f}..{max(ratios):.2f}x)")


def blas_of_numpy():
    import numpy as np
    import numpy.core._multiarray_umath as mu
    with open(f"/proc/{os.getpid()}/maps") as f:
        libs = {line.split()[-1] for line in f if "blas" in line.lower()}
    return np.__version__, sorted(libs) or [mu.__file__]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("mhaviz", nargs="?")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--worker", choices=["numpy", "torch", "train", "train_big"])
    ap.add_argument("--train-only", action="store_true",
                    help="only the training steps (mhaviz with MHAVIZ_BENCH_ONLY=train)")
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args()
    if args.worker == "numpy":
        return worker_numpy()
    if args.worker == "torch":
        return worker_torch(args.threads)
    if args.worker == "train":
        return worker_train()
    if args.worker == "train_big":
        return worker_train_big(args.threads)
    if not args.mhaviz:
        ap.error("MHAVIZ is needed")

    if args.train_only:
        print(f"load average at the start: {os.getloadavg()}")
        rounds = []
        for r in range(args.rounds):
            t0 = time.time()
            res = {}
            for first in ((0, 1) if r % 2 == 0 else (1, 0)):  # who goes first alternates
                if first == 0:
                    res["mhaviz"] = run_mhaviz(args.mhaviz, "train")[0]
                else:
                    torch_training(res)
            rounds.append(res)
            print(f"round {r + 1}: {time.time() - t0:.0f} s, load average {os.getloadavg()}",
                  flush=True)
        report_training(rounds)
        print(f"load average at the end: {os.getloadavg()}")
        return 0

    version, libs = blas_of_numpy()
    print(f"NumPy {version}, BLAS: {', '.join(libs)}")
    print(f"load average at the start: {os.getloadavg()}")
    rounds = []
    for r in range(args.rounds):
        t0 = time.time()
        mh, sgemm = run_mhaviz(args.mhaviz)
        res = {"mhaviz": mh, "sgemm": sgemm}
        for kind in ("numpy", "torch"):
            per_thread = [run_worker(kind, t) for t in (1, 2)]
            per_thread = [p for p in per_thread if p]
            if per_thread:
                res[kind] = {s: min(p[s] for p in per_thread) for s in SHAPES}
        torch_training(res)
        rounds.append(res)
        print(f"round {r + 1}: {time.time() - t0:.0f} s, load average {os.getloadavg()}",
              flush=True)

    def med(key, shape):
        vals = [rd[key][shape] for rd in rounds if key in rd]
        return statistics.median(vals) if vals else None

    sgemm = statistics.median(rd['sgemm'] for rd in rounds)
    print(f"\nsgemm 1024^3 in mhaviz, median over rounds: {sgemm:.1f} GFLOP/s")
    n, d, h = SHAPES[-1]
    top = [(8.0 * n * d * d + 4.0 * n * n * d) / (rd["mhaviz"][SHAPES[-1]] * 1e3) / rd["sgemm"]
           for rd in rounds]
    print(f"forward at {SHAPES[-1]}: {100 * statistics.median(top):.0f} % of the same round's "
          f"sgemm rate (median over rounds; {100 * min(top):.0f}..{100 * max(top):.0f} %)")
    print(f"{'(n, d_model, h)':>16} {'mhaviz_us':>10} {'min..max':>17} {'numpy_us':>10} "
          f"{'x numpy':>8} {'torch_us':>10} {'x torch':>8}")
    for s in SHAPES:
        m = med("mhaviz", s)
        lo = min(rd["mhaviz"][s] for rd in rounds)
        hi = max(rd["mhaviz"][s] for rd in rounds)
        npy, tch = med("numpy", s), med("torch", s)
        print(f"{str(s):>16} {m:10.1f} {lo:8.1f}..{hi:<8.1f} "
              f"{npy if npy else float('nan'):10.1f} {npy / m if npy else float('nan'):8.2f} "
              f"{tch if tch else float('nan'):10.1f} {tch / m if tch else float('nan'):8.2f}")
    report_training(rounds)
    print(f"load average at the end: {os.getloadavg()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
