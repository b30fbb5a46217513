#!/usr/bin/python3
"""encoder_open_check.py MHAVIZ: BERT, DistilBERT, RoBERTa and ALBERT folders
(encoder_gen.py: bert_ref.py's random checkpoints in Hugging Face's layout, with the
tokenizer each model ships: vocab.txt, or tokenizer.json) opened by the program, as a
class would: `mhaviz --model DIR --text T [--ablate L:H] --dump OUT` and
`--panel next --export OUT.svg`.

Checked against what is independent of mhaviz:
- the token ids against Hugging Face's own tokenizers (node's @huggingface/tokenizers,
  where MHAVIZ_HF_TOKENIZERS names it: on the tokenizer.json Hugging Face's
  BertConverter makes of vocab.txt, or the folder's tokenizer.json), the special
  tokens at both ends ([CLS] ... [SEP], <s> ... </s>);
- every layer's attention (h, n, n) within 1e-4 of bert_ref.py's float64 PyTorch
  forward (no mask: the planted causal mask must be caught), the attention's output
  projection and final.npy within 1e-3 relative, meta.json's mask "none";
- fill.json: each mask's position, top-1 identical to the reference's and the ten
  probabilities within 1e-3 (heads removed as asked);
- the drawn "fill the blank" panel (the SVG's text): each blank's heading names its
  position, each row's percentage is the reference's probability to 0.1 %, and with
  heads removed the pale "(… %)" is the same token's probability with every head on;
- a file without the masked-LM head, a text without a mask: fill.json and the panel
  say so; --generate refused for an encoder;
- the step-through (`--panel steps:1:K --export OUT.svg`) names where the norm sits as
  Hugging Face's modeling files place it: each encoder post-LN (stage 1 "no norm before
  the attention", LN(x + MultiHead(x)); stage 9 "LN(X + MultiHead)"), GPT-2 (gpt2_gen.py)
  and a Llama (llama_gen.py, RMSNorm) pre-norm, x + MultiHead(norm(x)); never the
  other's words.

The old program refused every encoder ("is an encoder; the app opens decoders")."""
import html
import json
import os
import re
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import bert_ref  # noqa: E402
import encoder_gen  # noqa: E402
from tokjson_check import frame  # noqa: E402

FAILS = []
ATTN_TOL, REL_TOL, P_TOL = 1e-4, 1e-3, 1e-3


def check(cond, msg):
    if not cond:
        FAILS.append(msg)
        print("FAIL:", msg)
    return cond


# name, encoder_gen's arguments, text, heads removed (1-based "L:H"), mask token
CASES = [
    ("bert", dict(typ="bert", layers=2, hidden=32, heads=4, ff=48, mlm=True, seed=41),
     "The cat sat on the [MASK]. The dog sat on the [MASK].", "1:2,2:4", "[MASK]"),
    ("distilbert", dict(typ="distilbert", layers=3, hidden=24, heads=3, ff=40, mlm=True,
                        tied=False, dtype="F16", seed=42),
     "Paris is the capital of [MASK].", "2:1", "[MASK]"),
    ("roberta", dict(typ="roberta", layers=2, hidden=32, heads=4, ff=48, act="gelu_new",
                     eps=1e-5, mlm=True, dtype="BF16", seed=43),
     "the cat sat on the <mask>. it was tired", "", "<mask>"),
    ("albert", dict(typ="albert", layers=3, hidden=32, heads=4, ff=48, embedding=16,
                    mlm=True, seed=44),
     "the dog [MASK] on the mat", "3:1", "[MASK]"),
]


def run(mhaviz, *args):
    return subprocess.run([mhaviz, *args], capture_output=True, text=True, timeout=300)


def hf_ids(tok_json, text):
    root = os.environ.get("MHAVIZ_HF_TOKENIZERS", "")
    if not root or not os.path.isdir(os.path.join(root, "node_modules/@huggingface/tokenizers")):
        return None
    out = subprocess.run(["node", os.path.join(HERE, "tokjson_hf.mjs"), tok_json, "-s"],
                         input=frame([text.encode()]), capture_output=True, check=True).stdout
    return [int(x) for x in out.decode().split()]


def off_pairs(ablate):
    return tuple((int(l) - 1, int(h) - 1) for l, h in
                 (item.split(":") for item in ablate.split(","))) if ablate else ()


def check_dump(name, d, c, out, ids, off, masks):
    """every layer, final.npy and fill.json against the reference"""
    ref = bert_ref.forward(d, ids, off, (), masks)
    causal = bert_ref.forward(d, ids, off, ("causal",), ())
    L = c["num_hidden_layers"]
    worst = {"attn": 0.0, "out": 0.0, "final": 0.0}
    caught = 0.0

    def rel(a, b):
        return float(np.max(np.abs(a - b)) / max(np.max(np.abs(b)), 1e-30))
    for l in range(L):
        a = np.load(os.path.join(out, f"layer_{l + 1}", "attn.npy"))
        check(a.shape == ref["attn"][l].shape, f"{name} layer {l + 1}: attn shape {a.shape}")
        if a.shape != ref["attn"][l].shape:
            return None
        worst["attn"] = max(worst["attn"], float(np.max(np.abs(a - ref["attn"][l]))))
        caught = max(caught, float(np.max(np.abs(a - causal["attn"][l]))))
        o = np.load(os.path.join(out, f"layer_{l + 1}", "out.npy"))
        worst["out"] = max(worst["out"], rel(o, ref["out"][l]))
    worst["final"] = rel(np.load(os.path.join(out, "final.npy")), ref["final"])
    print(f"{name}: attn {worst['attn']:.2e}, out {worst['out']:.2e} rel, final "
          f"{worst['final']:.2e} rel; planted causal mask differs by {caught:.2f}")
    check(worst["attn"] <= ATTN_TOL and worst["out"] <= REL_TOL and worst["final"] <= REL_TOL,
          f"{name}: outside bounds {worst}")
    check(caught > 1e-2, f"{name}: a causal mask is not told apart ({caught:.2e})")
    with open(os.path.join(out, "fill.json")) as f:
        fill = json.load(f)
    check(fill["head"] is True and [m["pos"] for m in fill["masks"]] == list(masks),
          f"{name}: fill.json masks {[m['pos'] for m in fill['masks']]}, want {masks}")
    for i, m in enumerate(fill["masks"]):
        got_ids = [t["id"] for t in m["top"]]
        got_p = np.array([t["p"] for t in m["top"]])
        top1 = got_ids[0] == int(ref["fill_ids"][i][0])
        pw = float(np.max(np.abs(got_p - ref["fill_p"][i])))
        print(f"{name}: mask at {m['pos']}: top-1 {m['top'][0]['token']!r} "
              f"p {got_p[0]:.4f} (reference {ref['fill_p'][i][0]:.4f}); top-10 p worst {pw:.1e}")
        check(top1 and pw <= P_TOL, f"{name}: mask {m['pos']}: top-1 same {top1}, p {pw:.2e}")
    return ref


def svg_texts(path):
    with open(path, encoding="utf-8") as f:
        svg = f.read()
    return [html.unescape(t) for t in re.findall(r"<text[^>]*>([^<]*)</text>", svg)]


def check_panel(mhaviz, name, d, text, ablate, ref, full, masks, tmp):
    """the fill panel as drawn: headings, then per row a label, "p %" and with heads
    removed "(p %)"; the numbers the reference's to the 0.1 % the panel prints"""
    svg = os.path.join(tmp, f"{name}-panel.svg")
    args = ["--model", d, "--text", text, "--panel", "next", "--export", svg]
    p = run(mhaviz, *(args + (["--ablate", ablate] if ablate else [])))
    check(p.returncode == 0, f"{name} panel: exit {p.returncode} {p.stderr}")
    if p.returncode:
        return
    texts = svg_texts(svg)
    check(texts and texts[0] == ("Fill the blanks" if len(masks) > 1 else "Fill the blank"),
          f"{name} panel: title {texts[:1]}")
    heads = [i for i, t in enumerate(texts) if re.search(r"token \d+: ", t)]
    check(len(heads) == len(masks), f"{name} panel: {len(heads)} headings for {len(masks)}")
    for b, (at, pos) in enumerate(zip(heads, masks)):
        check(f"token {pos + 1}: " in texts[at], f"{name} panel: heading {texts[at]!r}")
        pct = [t for t in texts[at + 1:heads[b + 1] if b + 1 < len(heads) else len(texts)]
               if re.fullmatch(r"\(?(< )?\d+\.\d %\)?", t)]
        drawn = [percent(t) for t in pct if not t.startswith("(")]
        pale = [percent(t) for t in pct if t.startswith("(")]
        want = ref["fill_p"][b][:len(drawn)]
        worst = off_by(drawn, want)
        check(len(drawn) >= 3 and worst <= 0.00051,
              f"{name} panel blank {b + 1}: drawn {drawn}, reference {list(want)}")
        if ablate:  # every head on: the same tokens' probabilities in the full forward
            want_full = [float(full["fill_all"][b][i]) for i in ref["fill_ids"][b][:len(pale)]]
            wf = off_by(pale, want_full)
            check(len(pale) == len(drawn) and wf <= 0.00051,
                  f"{name} panel blank {b + 1}: pale {pale}, every head on {want_full}")
            print(f"{name} panel blank {b + 1}: {len(drawn)} rows, drawn within {worst:.1e}, "
                  f"every-head-on within {wf:.1e}")
        else:
            print(f"{name} panel blank {b + 1}: {len(drawn)} rows, drawn within {worst:.1e}")


def percent(t):
    """a drawn "23.4 %" or "(23.4 %)" as a probability; "< 0.1 %" as -1 (below 0.0005)"""
    t = t.strip("() ")
    return -1.0 if t.startswith("<") else float(t.rstrip("% ")) / 100


def off_by(drawn, want):
    """the worst distance of the drawn numbers from want's (1 when none drawn); a
    "< 0.1 %" is 0 off when want is below 0.0005, else 1"""
    if not drawn:
        return 1.0
    return max((0.0 if w < 0.0005 else 1.0) if d < 0 else abs(d - w)
               for d, w in zip(drawn, want))


def positive(mhaviz, tmp):
    for name, kw, text, ablate, mask in CASES:
        d = os.path.join(tmp, name)
        c, tok_json = encoder_gen.write(d, **kw)
        out = os.path.join(tmp, f"{name}-out")
        p = run(mhaviz, "--model", d, "--text", text, "--dump", out,
                *(["--ablate", ablate] if ablate else []))
        check(p.returncode == 0, f"{name}: exit {p.returncode}: {p.stderr.strip()}")
        if p.returncode:
            continue
        with open(os.path.join(out, "tokens.json")) as f:
            toks = json.load(f)
        with open(os.path.join(out, "meta.json")) as f:
            meta = json.load(f)
        ids, strs = toks["ids"], toks["tokens"]
        ends = ("<s>", "</s>") if kw["typ"] == "roberta" else ("[CLS]", "[SEP]")
        check((strs[0], strs[-1]) == ends, f"{name}: ends {strs[0]!r} {strs[-1]!r}")
        check(meta["mask"] == "none" and meta["model"]["type"] == kw["typ"],
              f"{name}: meta mask {meta['mask']}, type {meta['model']['type']}")
        hf = hf_ids(tok_json, text)
        if hf is None:
            print(f"{name}: Hugging Face's tokenizers not found: ids not compared")
        else:
            check(ids == hf, f"{name}: ids {ids}, Hugging Face's {hf}")
        masks = tuple(i for i, s in enumerate(strs) if s == mask)
        check(len(masks) == text.count(mask), f"{name}: {len(masks)} masks in {strs}")
        off = off_pairs(ablate)
        ref = check_dump(name, d, c, out, ids, off, masks)
        if ref is None:
            continue
        full = bert_ref.forward(d, ids, (), (), masks) if off else ref
        check_panel(mhaviz, name, d, text, ablate, ref, full, masks, tmp)


def without(mhaviz, tmp):
    """no masked-LM head; no mask in the text; --generate"""
    d = os.path.join(tmp, "bert-nohead")
    encoder_gen.write(d, typ="bert", layers=1, hidden=16, heads=2, ff=24, seed=45)
    out = os.path.join(tmp, "nohead-out")
    p = run(mhaviz, "--model", d, "--text", "the [MASK] sat", "--dump", out)
    check(p.returncode == 0, f"no head: exit {p.returncode} {p.stderr}")
    if p.returncode == 0:
        with open(os.path.join(out, "fill.json")) as f:
            fill = json.load(f)
        check(fill["head"] is False and fill["masks"] == [{"pos": 2}],
              f"no head: fill.json {fill}")
        check(not os.path.exists(os.path.join(out, "next.json")), "no head: next.json written")
    svg = os.path.join(tmp, "nohead.svg")
    p = run(mhaviz, "--model", d, "--text", "the [MASK] sat", "--panel", "next", "--export", svg)
    texts = svg_texts(svg) if p.returncode == 0 else []
    check(any("no masked-LM head" in t for t in texts), f"no head panel: {texts}")
    d = os.path.join(tmp, "bert")  # positive()'s, with its head
    svg = os.path.join(tmp, "nomask.svg")
    p = run(mhaviz, "--model", d, "--text", "the cat sat", "--panel", "next", "--export", svg)
    texts = svg_texts(svg) if p.returncode == 0 else []
    check(any("type [MASK] in the text" in t for t in texts), f"no mask panel: {texts}")
    out = os.path.join(tmp, "nomask-out")
    p = run(mhaviz, "--model", d, "--text", "the cat sat", "--dump", out)
    if p.returncode == 0:
        with open(os.path.join(out, "fill.json")) as f:
            fill = json.load(f)
        check(fill["head"] is True and fill["masks"] == [], f"no mask: fill.json {fill}")
    out = os.path.join(tmp, "gen-out")
    p = run(mhaviz, "--model", d, "--text", "the cat", "--generate", "3", "--dump", out)
    lines = p.stderr.splitlines()
    check(p.returncode == 2 and len(lines) == 1 and "is an encoder" in lines[0] and
          not os.path.exists(out), f"--generate: exit {p.returncode} {p.stderr!r}")
    print("no head, no mask, --generate: checked")


def norm_place(mhaviz, tmp):
    """Where the norm sits, said by the step-through's stages 1 and ·W^O of the folders
    positive() made and of a GPT-2 and a Llama made here."""
    import gpt2_gen
    import llama_gen
    gpt2_gen.gen(os.path.join(tmp, "gpt2"), vocab=gpt2_gen.train_tokenizer(None, 50))
    llama_gen.gen(os.path.join(tmp, "llama"), tokenizer="bytelevel")
    post = (["Post-LN: no norm before the attention; the LayerNorm sits after the residual "
             "add, LN(x + MultiHead(x))."],
            ["Then added to X and normed: LN(X + MultiHead), the post-LN add."])
    folders = [(name, post) for name, _, _, _, _ in CASES]
    folders += [("gpt2", (["Pre-norm: the LayerNorm sits before the attention, and MultiHead "
                           "is added to the stream as it was, x + MultiHead(LN(x))."],
                          ["Then added to the stream, no norm after it."])),
                ("llama", (["Pre-norm: the RMSNorm sits before the attention, and MultiHead "
                            "is added to the stream as it was, x + MultiHead(RMSNorm(x))."],
                           ["Then added to the stream, no norm after it."]))]
    for name, want in folders:
        for stage, lines in zip((1, 10 if name == "llama" else 9), want):  # RoPE: W^O is 10
            svg = os.path.join(tmp, f"{name}-steps{stage}.svg")
            p = run(mhaviz, "--model", os.path.join(tmp, name), "--text", "the cat sat",
                    "--panel", f"steps:1:{stage}", "--export", svg)
            if not check(p.returncode == 0, f"{name} steps:1:{stage}: exit {p.returncode}: "
                         f"{p.stderr.strip()}"):
                continue
            said = " ".join(" ".join(svg_texts(svg)).split())
            for line in lines:
                check(line in said, f"{name} stage {stage}: {line!r} not in {said[-300:]!r}")
            others = ("Pre-norm",) if want is post else ("Post-LN", "post-LN")
            check(not any(o in said for o in others), f"{name} stage {stage}: says {others}")


def main():
    mhaviz = sys.argv[1]
    with tempfile.TemporaryDirectory() as tmp:
        positive(mhaviz, tmp)
        without(mhaviz, tmp)
        norm_place(mhaviz, tmp)
    if FAILS:
        print(f"{len(FAILS)} failed")
        return 1
    print("all ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
