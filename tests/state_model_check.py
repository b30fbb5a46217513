#!/usr/bin/python3
"""state_model_check.py TEST_STATE_MODEL [ARG ...]: the state machine's tests of a loaded
GPT-2 model (tests/test_state_model.c) on random checkpoints made here.

Writes three checkpoint folders into a temporary directory with gpt2_gen.py (seed 1):
    big:   3 layers, 4 heads, n_embd 32, n_positions 64, 200 merges
    short: the same with n_positions 16 (long texts are cut)
    wide:  the same as big with 8 heads (more than the random model's 4)
and with llama_gen.py a llama (RoPE, 6 query heads sharing 2 K/V heads, head_dim 8,
d_model 48, its byte-level tokenizer.json, seed 3) in MHAVIZ_TEST_MODEL_LLAMA;
and, when PyTorch is importable, the float64 reference of tests/gpt2_ref.py on
bpe_ref's ids of TEXT (the same text as test_state_model.c's REF_TEXT):
    ref/ids.txt            n, then the n ids
    ref/attn_l2.txt        h n, then layer 2's (index 1) attention (h, n, n)
    ref/resplit8_l1.txt    h n, then layer 1's (index 0) attention re-split at 8 heads
    ref/off_l1h2.txt       the vocabulary's probabilities with head 2 of layer 1
                           removed: V, then V values
    ref/probs.txt          the same with every head on
Then runs TEST_STATE_MODEL with the ARGs (--only / --skip NAMES, comma-separated)
and MHAVIZ_TEST_MODEL, MHAVIZ_TEST_MODEL_SHORT, MHAVIZ_TEST_MODEL_WIDE, MHAVIZ_TEST_TMP
and (with the reference) MHAVIZ_TEST_REF set, and exits with its code (timeout 240 s).
The temporary directory is removed afterwards (MHAVIZ_TEST_KEEP=DIR writes into DIR
instead and keeps it)."""
import os
import shutil
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

# Must equal REF_TEXT in test_state_model.c.
TEXT = "The quick brown fox jumps over the lazy dog. The dog sleeps; the fox runs away."


def gen(outdir, positions, heads=4):
    cmd = [sys.executable, os.path.join(HERE, "gpt2_gen.py"), outdir, "--layers", "3",
           "--heads", str(heads), "--embd", "32", "--positions", str(positions), "--merges", "200",
           "--seed", "1"]
    subprocess.run(cmd, check=True, timeout=120, stdout=subprocess.DEVNULL)


def write_matrix(path, a):
    with open(path, "w") as f:
        f.write(" ".join(str(x) for x in a.shape) + "\n")
        for v in a.reshape(-1):
            f.write(repr(float(v)) + "\n")


def write_reference(ckpt, refdir):
    try:
        import bpe_ref
        import gpt2_ref
    except ImportError as e:  # no torch or regex here: the C test skips these checks
        print(f"state_model_check: no reference ({e}); its checks skipped", file=sys.stderr)
        return False
    os.makedirs(refdir, exist_ok=True)
    tok = bpe_ref.load(os.path.join(ckpt, "vocab.json"), os.path.join(ckpt, "merges.txt"))
    ids = tok.encode(TEXT)
    with open(os.path.join(refdir, "ids.txt"), "w") as f:
        f.write(f"{len(ids)}\n" + "".join(f"{i}\n" for i in ids))
    r = gpt2_ref.forward(ckpt, ids)
    write_matrix(os.path.join(refdir, "attn_l2.txt"), r["attn"][1])
    write_matrix(os.path.join(refdir, "probs.txt"), r["probs_last"])
    rs = gpt2_ref.forward(ckpt, ids, resplit=8)
    write_matrix(os.path.join(refdir, "resplit8_l1.txt"), rs["attn"][0])
    ro = gpt2_ref.forward(ckpt, ids, off={(0, 1)})
    write_matrix(os.path.join(refdir, "off_l1h2.txt"), ro["probs_last"])
    return True


def main(argv):
    if len(argv) < 2:
        print("usage: state_model_check.py TEST_STATE_MODEL [ARG ...]", file=sys.stderr)
        return 2
    keep = os.environ.get("MHAVIZ_TEST_KEEP")
    tmp = keep if keep else tempfile.mkdtemp(prefix="mhaviz-state-model-")
    try:
        big, short, wide, ref = (os.path.join(tmp, x) for x in ("big", "short", "wide", "ref"))
        gen(big, 64)
        gen(short, 16)
        gen(wide, 64, heads=8)
        llama = os.path.join(tmp, "llama")
        subprocess.run([sys.executable, os.path.join(HERE, "llama_gen.py"), llama, "--layers", "2",
                        "--heads", "6", "--kv-heads", "2", "--head-dim", "8", "--hidden", "48",
                        "--ff", "64", "--tokenizer", "bytelevel", "--seed", "3"],
                       check=True, timeout=120, stdout=subprocess.DEVNULL)
        env = dict(os.environ, MHAVIZ_TEST_MODEL=big, MHAVIZ_TEST_MODEL_SHORT=short,
                   MHAVIZ_TEST_MODEL_WIDE=wide, MHAVIZ_TEST_MODEL_LLAMA=llama, MHAVIZ_TEST_TMP=tmp)
        if write_reference(big, ref):
            env["MHAVIZ_TEST_REF"] = ref
        try:
            return subprocess.run(argv[1:], env=env, timeout=240).returncode
        except subprocess.TimeoutExpired:
            print("state_model_check: test_state_model timed out (240 s)", file=sys.stderr)
            return 1
    finally:
        if not keep:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
