#!/usr/bin/python3
"""state_encoder_check.py TEST_STATE_ENCODER: the state machine's test of a loaded
encoder (tests/test_state_encoder.c) on a random BERT checkpoint made here.

Writes into a temporary directory a BERT folder (encoder_gen.py: 2 layers, 4 heads,
hidden 32, the masked-LM head, vocab.txt) and a bare one (no head), and from
tokjson_ref.py's ids of TEXT (the same text as test_state_encoder.c's REF_TEXT, on the
tokenizer.json Hugging Face's BertConverter makes of vocab.txt) bert_ref.py's float64
numbers:
    ref/fill_full.txt   the blank's top 5 probabilities with every head on
    ref/fill_off.txt    with head 2 of layer 1 removed: the top 5's probabilities, then
                        the same 5 tokens' probabilities with every head on
    ref/mask_pos.txt    the blank's position (0-based)
Then runs TEST_STATE_ENCODER with MHAVIZ_TEST_ENCODER, MHAVIZ_TEST_ENCODER_BARE and
MHAVIZ_TEST_REF set, and exits with its code (timeout 240 s)."""
import json
import os
import shutil
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import bert_ref  # noqa: E402
import encoder_gen  # noqa: E402
import tokjson_ref  # noqa: E402

# Must equal REF_TEXT in test_state_encoder.c.
TEXT = "The cat sat on the [MASK]. It was tired."


def write_list(path, values):
    with open(path, "w") as f:
        f.write("".join(repr(float(v)) + "\n" for v in values))


def main(argv):
    tmp = tempfile.mkdtemp(prefix="mhaviz-state-encoder-")
    try:
        d, bare, ref = (os.path.join(tmp, x) for x in ("bert", "bare", "ref"))
        _, tok_json = encoder_gen.write(d, "bert", layers=2, hidden=32, heads=4, ff=48,
                                        mlm=True, seed=51)
        encoder_gen.write(bare, "bert", layers=2, hidden=32, heads=4, ff=48, seed=52)
        with open(tok_json) as f:
            ids = tokjson_ref.Ref(json.load(f)).encode(TEXT.encode(), True)
        mask = ids.index(4)  # [MASK]: tokvocab_check.SPECIALS' fifth line
        os.makedirs(ref)
        full = bert_ref.forward(d, ids, (), (), (mask,))
        off = bert_ref.forward(d, ids, ((0, 1),), (), (mask,))
        write_list(os.path.join(ref, "fill_full.txt"), full["fill_p"][0][:5])
        top = off["fill_ids"][0][:5]
        write_list(os.path.join(ref, "fill_off.txt"),
                   list(off["fill_p"][0][:5]) + [full["fill_all"][0][i] for i in top])
        with open(os.path.join(ref, "mask_pos.txt"), "w") as f:
            f.write(f"{mask}\n")
        env = dict(os.environ, MHAVIZ_TEST_ENCODER=d, MHAVIZ_TEST_ENCODER_BARE=bare,
                   MHAVIZ_TEST_REF=ref)
        try:
            return subprocess.run(argv[1:], env=env, timeout=240).returncode
        except subprocess.TimeoutExpired:
            print("state_encoder_check: timed out (240 s)", file=sys.stderr)
            return 1
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
