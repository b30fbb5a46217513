#!/usr/bin/python3
"""generate_check.py MHAVIZ: `mhaviz --model DIR --text T --generate N` against an
independent reference sampler.

Writes a random checkpoint (gpt2_gen.py: 3 layers, 4 heads, n_embd 32, n_positions
64, --std 3 so the next-token distributions are spread, seed 2). Then:
  - `--generate 20 -s 7` twice: the same bytes on stdout both times;
  - for each sampler setting (the default temperature 1 with -s 7; 0.7 with
    --top-k 20 and --top-p 0.9, -s 3; 1.5 with --top-p 0.5, -s 11; 0, the most
    likely), with --dump: every step of generated.json replayed here. The text's
    ids are tokens.json's first prompt_tokens; at each step the reference logits
    come from gpt2_ref.py (a float64 PyTorch forward written from Hugging Face's
    semantics) on the ids so far, and the token is drawn by the sampler below,
    written from the steps sampler.h documents (its own splitmix64): the random
    number u must be equal, the token id equal, its probability p (softmax of the
    logits) and p_sample (in the distribution drawn from) within 1e-3 relative; the
    final ids must be the prompt's followed by the tokens drawn, and stdout their
    bytes;
  - bad uses: --generate 0, --top-k with --dump but no --generate, --generate without --model,
    --generate with --export, --top-p 0: exit 2 with one "mhaviz: " line.
Exits 1 with "FAIL where: expected X, got Y" lines."""
import json
import math
import os
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import gpt2_ref  # noqa: E402

FAILURES = []
TEXT = "The quick brown fox jumps over the lazy dog."
MASK = (1 << 64) - 1


def fail(where, expected, got):
    FAILURES.append(where)
    print(f"FAIL {where}: expected {expected}, got {got}")


def splitmix64(state):
    """(new state, output), as Steele, Lea and Flood's splitmix64."""
    state = (state + 0x9E3779B97F4A7C15) & MASK
    z = state
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
    return state, z ^ (z >> 31)


def reference_pick(logits, temperature, top_k, top_p, state):
    """(id, p_sample, u or None, new state) by the documented steps."""
    if temperature == 0:
        best = max(range(len(logits)), key=lambda i: (logits[i], -i))
        return best, 1.0, None, state
    top = max(logits)
    q = [math.exp((float(x) - top) / temperature) for x in logits]
    order = sorted(range(len(q)), key=lambda i: (-q[i], i))
    kept = order[:top_k] if 0 < top_k < len(order) else order
    total = sum(q[i] for i in kept)
    if 0 < top_p < 1:
        run, k = 0.0, 0
        while k < len(kept) and run < top_p * total:
            run += q[kept[k]]
            k += 1
        kept, total = kept[:k], run
    state, r = splitmix64(state)
    u = (r >> 11) * (1.0 / 9007199254740992.0)
    run, pick = 0.0, kept[-1]
    for i in kept:
        run += q[i]
        if run > u * total:
            pick = i
            break
    return pick, q[pick] / total, u, state


def rel(a, b):
    return abs(a - b) / max(abs(b), 1e-30)


def run(mhaviz, args, **kw):
    return subprocess.run([mhaviz] + args, capture_output=True, timeout=300, **kw)


def check_replay(mhaviz, ckpt, tmp, name, opts, seed):
    out = os.path.join(tmp, "dump_" + name)
    args = ["--model", ckpt, "--text", TEXT, "--generate", "20", "--dump", out] + opts
    if seed is not None:
        args += ["-s", str(seed)]
    r = run(mhaviz, args)
    if r.returncode != 0:
        fail(f"{name}: exit status", 0, (r.returncode, r.stderr[:300]))
        return
    with open(os.path.join(out, "generated.json")) as f:
        gen = json.load(f)
    with open(os.path.join(out, "tokens.json")) as f:
        final = json.load(f)["ids"]
    temperature = gen["sample_temperature"]
    top_k, top_p = gen["top_k"], gen["top_p"]
    ids = final[:gen["prompt_tokens"]]
    state = seed or 0
    cfg, w = gpt2_ref.load(ckpt)
    W = gpt2_ref.tensors(w)
    import torch
    drawn = []
    for k, step in enumerate(gen["steps"]):
        with torch.inference_mode():
            logits = gpt2_ref.forward_tensors(cfg, W, ids)["logits_last"].numpy()
        # the reference draws from float32 logits, as mhaviz does, rounded from float64
        logits32 = [float(x) for x in logits.astype("float32")]
        pick, p_sample, u, state = reference_pick(logits32, temperature, top_k, top_p, state)
        where = f"{name}: step {k + 1}"
        if (u is None) != (step["u"] is None) or (u is not None and u != step["u"]):
            fail(f"{where} random number", u, step["u"])
        if pick != step["id"]:
            fail(f"{where} token", pick, step["id"])
            return
        probs = torch.softmax(torch.from_numpy(logits), dim=-1).numpy()
        if rel(step["p"], float(probs[pick])) > 1e-3:
            fail(f"{where} p", float(probs[pick]), step["p"])
        if rel(step["p_sample"], p_sample) > 1e-3:
            fail(f"{where} p_sample", p_sample, step["p_sample"])
        ids = ids + [pick]
        drawn.append(pick)
    if final != ids:
        fail(f"{name}: tokens.json ids", ids, final)
    if len(drawn) != 20 and gen["stopped"] == "length":
        fail(f"{name}: steps", 20, len(drawn))
    enc = json.load(open(os.path.join(ckpt, "vocab.json"), encoding="utf-8"))
    byte_of = {c: b for b, c in gpt2_ref_bytes().items()}
    inv = {v: k for k, v in enc.items()}
    want = b"".join(bytes(byte_of[c] for c in inv[i]) for i in drawn) + b"\n"
    if r.stdout != want:
        fail(f"{name}: stdout", want[:80], r.stdout[:80])


def gpt2_ref_bytes():
    """GPT-2's byte-to-unicode table: printable bytes to themselves, the others to
    U+0100 + k in byte order."""
    keep = list(range(33, 127)) + list(range(161, 173)) + list(range(174, 256))
    table, k = {}, 0
    for b in range(256):
        if b in keep:
            table[b] = chr(b)
        else:
            table[b] = chr(256 + k)
            k += 1
    return table


def main(argv):
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    mhaviz = os.path.abspath(argv[1])
    with tempfile.TemporaryDirectory() as tmp:
        ckpt = os.path.join(tmp, "gen")
        subprocess.run([sys.executable, os.path.join(HERE, "gpt2_gen.py"), ckpt, "--layers", "3",
                        "--heads", "4", "--embd", "32", "--positions", "64", "--merges", "200",
                        "--std", "3", "--seed", "2"], check=True, capture_output=True,
                       timeout=300)
        a = run(mhaviz, ["--model", ckpt, "--text", TEXT, "--generate", "20", "-s", "7"])
        b = run(mhaviz, ["--model", ckpt, "--text", TEXT, "--generate", "20", "-s", "7"])
        if a.returncode != 0 or a.stdout != b.stdout or len(a.stdout) < 2:
            fail("--generate 20 -s 7 twice", "the same continuation, exit 0",
                 (a.returncode, a.stdout[:60], b.stdout[:60], a.stderr[:200]))
        check_replay(mhaviz, ckpt, tmp, "temperature 1", [], 7)
        check_replay(mhaviz, ckpt, tmp, "top-k 20 top-p 0.9",
                     ["--sample-temperature", "0.7", "--top-k", "20", "--top-p", "0.9"], 3)
        check_replay(mhaviz, ckpt, tmp, "top-p 0.5", ["--sample-temperature", "1.5",
                                                      "--top-p", "0.5"], 11)
        check_replay(mhaviz, ckpt, tmp, "most likely", ["--sample-temperature", "0"], None)
        for args in (["--model", ckpt, "--generate", "0"],
                     ["--model", ckpt, "--top-k", "5", "--dump", os.path.join(tmp, "d")],
                     ["--generate", "5"],
                     ["--model", ckpt, "--generate", "5", "--export", os.path.join(tmp, "x.png")],
                     ["--model", ckpt, "--generate", "5", "--top-p", "0"]):
            r = run(mhaviz, args, text=True)
            err = r.stderr.splitlines()
            if r.returncode != 2 or len(err) != 1 or not err[0].startswith("mhaviz: "):
                fail(f"{' '.join(args[2:] if args[0] == '--model' else args)}",
                     "exit 2 and one mhaviz: line", (r.returncode, err))
    if FAILURES:
        return 1
    print("generate_check: the continuation repeats, and every step equals the reference sampler's")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
