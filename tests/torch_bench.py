#!/usr/bin/python3
"""torch_bench.py [CKPT_DIR] [--n 64,256] [--runs 7] [--warmup 2] [--threads 2]

Times PyTorch doing mhaviz --model's forward, for comparison with
`mhaviz --bench-json`'s model_forward in the same run: gpt2_ref.forward_tensors in
float32 (torch ops: every layer, every attention matrix kept, ln_f on all positions,
logits and softmax at the last position only, as the C does), under
torch.inference_mode() (no autograd), torch.set_num_threads(2) by default (the
machine has 2 cores). The ids are fixed pseudo-random ids (seed 0) in 0..V-1.

Threads: Debian's torch does its matrix products in the system BLAS (OpenBLAS, its
own pthread pool, OPENBLAS_NUM_THREADS or one thread per core) and the rest in its
OpenMP pool; OpenMP threads that spin after each op steal the two cores from
OpenBLAS: with OMP_WAIT_POLICY unset (GNU OpenMP spins a while before sleeping) or
ACTIVE the median was 2.5-4x slower in our quietest runs and up to 10-30x when other
jobs shared the cores. So this
script sets OMP_WAIT_POLICY=PASSIVE unless the environment already sets it; both
settings are printed in the JSON ("omp_wait_policy", "openblas_threads").

A CKPT_DIR of the Llama family (config.json's model_type not gpt2) is run through
llama_ref.forward in float32 (the weights cast once, not timed): every layer with its
attention, the logits of the last position and their softmax.

CKPT_DIR defaults to a GPT-2-small-shaped random checkpoint generated in a
temporary folder (gpt2_gen.py --small-shape: 12 layers, 12 heads, n_embd 768,
n_positions 1024, vocab 50257, F32, ~500 MB; removed afterwards). The load is not
timed. Per n: warm-up runs, then the median of --runs (>= 7) timed runs
(time.perf_counter); prints one JSON line per n:
    {"case": "torch_forward", "n": 64, "median_ms": ..., "min_ms": ..., "runs": 7,
     "threads": 2, "omp_wait_policy": "PASSIVE", "openblas_threads": "default"}"""
import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # before torch loads OpenMP

import numpy as np  # noqa: E402
import torch  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import gpt2_gen  # noqa: E402
import gpt2_ref  # noqa: E402
import llama_ref  # noqa: E402


def run_llama(loaded, ids):
    """llama_ref.forward in float32: every layer, its attention kept; logits at the last
    position and their softmax, as the C does"""
    r = llama_ref.forward(None, ids, loaded=loaded, dtype=torch.float32)
    return float(torch.softmax(torch.from_numpy(r["logits"]), dim=-1)[0])


def bench(cfg, W, n, runs, warmup):
    llama = cfg.get("model_type", "gpt2") != "gpt2"
    most = cfg["max_position_embeddings"] if llama else cfg["n_positions"]
    if n > most:
        raise SystemExit(f"torch_bench: n {n} is more than the model's {most} positions")
    ids = [int(i) for i in np.random.default_rng(0).integers(0, cfg["vocab_size"], n)]
    times = []
    with torch.inference_mode():
        for i in range(warmup + runs):
            t0 = time.perf_counter()
            if llama:
                run_llama(W, ids)
            else:
                r = gpt2_ref.forward_tensors(cfg, W, ids)
                float(r["probs_last"][0])  # the result is used
            t1 = time.perf_counter()
            if i >= warmup:
                times.append((t1 - t0) * 1e3)
    return times


def main(argv):
    ap = argparse.ArgumentParser(description="time PyTorch on mhaviz --model's forward")
    ap.add_argument("ckpt", nargs="?", default=None)
    ap.add_argument("--n", default="64,256", help="comma list of token counts")
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--threads", type=int, default=2)
    a = ap.parse_args(argv)
    if a.runs < 7:
        ap.error("--runs: at least 7")
    torch.set_num_threads(a.threads)
    tmp = None
    ckpt = a.ckpt
    try:
        if ckpt is None:
            tmp = tempfile.mkdtemp(prefix="mhaviz-torch-bench-")
            ckpt = os.path.join(tmp, "gpt2-small-shape")
            gpt2_gen.gen_small_shape(ckpt)
        with open(os.path.join(ckpt, "config.json")) as f:
            typ = json.load(f).get("model_type", "gpt2")
        if typ == "gpt2":
            cfg, w = gpt2_ref.load(ckpt)
            W = gpt2_ref.tensors(w, torch.float32)
        else:  # the Llama family: llama_ref's forward in float32, weights cast once
            cfg, w = llama_ref.load(ckpt)
            W = (cfg, {k: v.to(torch.float32) for k, v in w.items()})
        for n in [int(s) for s in a.n.split(",") if s]:
            t = bench(cfg, W, n, a.runs, a.warmup)
            print(json.dumps({"case": "torch_forward", "n": n,
                              "median_ms": round(statistics.median(t), 3),
                              "min_ms": round(min(t), 3), "runs": len(t),
                              "threads": a.threads,
                              "omp_wait_policy": os.environ["OMP_WAIT_POLICY"],
                              "openblas_threads": os.environ.get("OPENBLAS_NUM_THREADS",
                                                                 "default")}), flush=True)
    finally:
        if tmp:
            shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
