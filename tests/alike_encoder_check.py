#!/usr/bin/python3
"""alike_encoder_check.py MHAVIZ: "How alike are the heads?" on an encoder (BERT,
RoBERTa) judges a head by what removing it does to the model's own output, its
fill-the-blank distribution, checked against bert_ref.py's float64 PyTorch forward on
generated checkpoints (encoder_gen.py), a seed drawn now (printed;
MHAVIZ_ALIKE_SEED repeats it).

Some heads are made nearly silent (their columns of the attention's output dense
scaled down), so that both verdicts occur. For each layer shown with a blank in the
text, mhaviz --export (SVG) must say:
  - on the diagonal (or as the range "A-B bits"), each head's KL(P || P_-i) in bits,
    P the masked-LM head's distribution at the first blank with every head on, P_-i
    with head i alone removed (every layer after it recomputed, every row), to the
    digits shown;
  - "could go" for exactly the heads whose removal keeps the blank's most likely token
    and moves it by under 0.1 bit (heads within 2e-3 of it may go either way);
  - that the measure is the blank's ("blank"), never the next token's.
Without a blank in the text it keeps MultiHead's measure and says there is no blank;
without a masked-LM head in the file, the same. The old program judged every encoder
by MultiHead, silently."""
import json
import os
import random
import re
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bert_ref  # noqa: E402
import encoder_gen  # noqa: E402
from alike_model_check import diagonal_numbers, joined_lines, kl_bits, svg_texts  # noqa: E402
from gpt2_gen import write_safetensors  # noqa: E402
from gpt2_ref import read_safetensors  # noqa: E402

GO_BITS = 0.10
FAILS = []


def fail(msg):
    FAILS.append(msg)
    print("FAIL " + msg)


def make_model(path, typ, seed, layers, heads, d, quiet, mlm=True):
    """encoder_gen's checkpoint with the heads in quiet ((layer, head) 0-based) scaled
    down to a thousandth ... a tenth of what they pass on."""
    encoder_gen.write(path, typ, layers=layers, heads=heads, hidden=d, ff=2 * d, mlm=mlm,
                      seed=seed)
    f = os.path.join(path, "model.safetensors")
    w = read_safetensors(f)
    dh = d // heads
    for k, (layer, head) in enumerate(sorted(quiet)):
        name = [n for n in w if n.endswith(f"encoder.layer.{layer}.attention.output.dense.weight")]
        w[name[0]][:, head * dh:(head + 1) * dh] *= np.float32([1e-3, 1e-2, 0.1][k % 3])
    write_safetensors(f, w, "F32")


def shown_tol(shown):
    """How far a KL as drawn may be from the reference: half its last digit (two
    places under 1 bit, one under 10, none above; "0" under 0.005), plus 2e-3 for
    float32 against float64."""
    places = len(shown.split(".")[1]) if "." in shown else (2 if shown == "0" else 0)
    return 0.5 * 10 ** -places + 2e-3


def words_of(mhaviz, ck, text, layer, svg):
    subprocess.run([mhaviz, "--model", ck, "--text", text, "--layer", str(layer + 1), "--export",
                    svg, "--size", "1920x1080"], check=True, capture_output=True)
    texts = svg_texts(svg)
    return texts, [t for _, _, t in texts] + joined_lines(texts)


def check_layer(mhaviz, ck, tmp, text, mask, layer, h):
    where = f"{os.path.basename(ck)} layer {layer + 1}"
    dump = os.path.join(tmp, "d")
    subprocess.run([mhaviz, "--model", ck, "--text", text, "--dump", dump], check=True,
                   capture_output=True)
    toks = json.load(open(os.path.join(dump, "tokens.json")))
    ids, pos = toks["ids"], toks["tokens"].index(mask)
    p = bert_ref.forward(ck, ids, fill=(pos,))["fill_all"][0]
    kl, flip = [], []
    for i in range(h):
        q = bert_ref.forward(ck, ids, off={(layer, i)}, fill=(pos,))["fill_all"][0]
        kl.append(kl_bits(p, q))
        flip.append(int(np.argmax(q)) != int(np.argmax(p)))
    print(f"  {where}: blank at {pos}, KL (bits) {np.round(kl, 4).tolist()}, top flips {flip}")
    texts, words = words_of(mhaviz, ck, text, layer, os.path.join(tmp, "l.svg"))
    diag = diagonal_numbers(texts, h)
    rng_line = [re.search(r"(\d+(?:\.\d+)?)\u2013(\d+(?:\.\d+)?) bits", w) for w in words
                if "KL" in w]
    rng_line = [m for m in rng_line if m]
    if diag is None and not rng_line:
        fail(f"{where}: neither the diagonal's {h} numbers nor the KL range line is drawn")
    for m in rng_line[:1]:
        for shown, want in ((m.group(1), min(kl)), (m.group(2), max(kl))):
            if abs(float(shown) - want) > shown_tol(shown):
                fail(f"{where}: KL range shows {m.group(0)!r}, PyTorch {min(kl):.4f}-"
                     f"{max(kl):.4f}")
    if diag is not None:
        for i, (shown, want) in enumerate(zip(diag, kl)):
            if abs(float(shown) - want) > shown_tol(shown):
                fail(f"{where}: head {i + 1}'s KL shows {shown}, PyTorch {want:.4f}")
    go = [w for w in words if "could go" in w]
    go = [w for w in go if not any(o != w and o in w for o in go)]  # (a joined row holding it)
    if len(go) != 1:
        fail(f"{where}: expected one 'could go' line, got {go}")
        return 0
    listed = [int(x) for x in re.findall(r"\d+", go[0].split(":", 1)[1])] \
        if ":" in go[0] and not go[0].startswith("none") else []
    for i in range(h):
        should = kl[i] < GO_BITS and not flip[i]
        near = abs(kl[i] - GO_BITS) < 2e-3
        if (i + 1 in listed) != should and not near:
            fail(f"{where}: head {i + 1} (KL {kl[i]:.4f} bits, flip {flip[i]}) "
                 f"{'listed' if i + 1 in listed else 'not listed'}: {go[0]!r}")
    said = " ".join(w for w in words if "KL" in w or "could go" in w)
    if "blank" not in said or "next token" in said or "next-token" in said:
        fail(f"{where}: the measure is not said to be the blank's: {said!r}")
    return sum(kl[i] < GO_BITS and not flip[i] for i in range(h))


def check_no_blank(mhaviz, ck, tmp, text, why):
    texts, words = words_of(mhaviz, ck, text, 0, os.path.join(tmp, "nb.svg"))
    go = [w for w in words if "could go" in w]
    go = [w for w in go if not any(o != w and o in w for o in go)]  # (a joined row holding it)
    if len(go) != 1 or "no blank" not in go[0]:
        fail(f"{os.path.basename(ck)} {why}: the verdict does not say there is no blank: {go}")
    if any("KL" in w for w in words):
        fail(f"{os.path.basename(ck)} {why}: a KL is drawn with no blank to measure it on")
    if not any("MultiHead" in w for w in words if "diagonal" in w or "without one" in w):
        fail(f"{os.path.basename(ck)} {why}: MultiHead's measure is not drawn")


def main():
    mhaviz = os.path.abspath(sys.argv[1])
    seed = int(os.environ.get("MHAVIZ_ALIKE_SEED", random.randrange(1 << 30)))
    print(f"alike_encoder_check: seed {seed} (MHAVIZ_ALIKE_SEED)")
    rnd = random.Random(seed)
    could = 0
    with tempfile.TemporaryDirectory() as tmp:
        for typ, mask in (("bert", "[MASK]"), ("roberta", "<mask>")):
            layers, heads, d = 3, 4, 32
            quiet = {(rnd.randrange(layers), rnd.randrange(heads)) for _ in range(3)}
            ck = os.path.join(tmp, typ)
            make_model(ck, typ, seed % 100000 + len(typ), layers, heads, d, quiet)
            words = ["the cat sat on the MASK because it was tired", "paris is the MASK of france",
                     "the dog sat on a MASK"][rnd.randrange(3)]
            text = words.replace("MASK", mask)
            print(f"{typ}: quiet heads {sorted(quiet)}, text {text!r}")
            for layer in range(layers):
                could += check_layer(mhaviz, ck, tmp, text, mask, layer, heads)
            check_no_blank(mhaviz, ck, tmp, words.replace("MASK", "mat"), "without a blank")
        bare = os.path.join(tmp, "bare")
        make_model(bare, "bert", seed % 100000, 2, 4, 32, set(), mlm=False)
        check_no_blank(mhaviz, bare, tmp, "the cat sat on the [MASK]", "without a masked-LM head")
    print(f"heads that could go alone, by the reference: {could}")
    if FAILS:
        print(f"alike_encoder_check: {len(FAILS)} failure(s)")
        return 1
    print("alike_encoder_check: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
