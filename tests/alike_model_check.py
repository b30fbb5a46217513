#!/usr/bin/python3
"""alike_model_check.py MHAVIZ: "How alike are the heads?" on a loaded model judges a
head by what removing it does to the model's own output, checked against PyTorch
(gpt2_ref.py, float64, written from Hugging Face's semantics) on generated
checkpoints (gpt2_gen.py), a seed drawn now (printed; MHAVIZ_ALIKE_SEED repeats it).

Some heads are made nearly silent (their rows of c_proj scaled down), so that both
verdicts occur. For each layer shown, mhaviz --export (SVG) must say:
  - on the diagonal (or, where it has no room, as the range "A-B bits"), each
    head's KL(P || P_-i) in bits, P the next-token distribution with every head
    on, P_-i with head i alone removed (all layers after it recomputed), as the
    reference computes it, to the digits shown;
  - "could go" for exactly the heads whose removal keeps the most likely next token
    and moves the distribution by under 0.1 bit; a head over the threshold is never
    listed (heads within 2e-3 of it may go either way: float32 against float64);
  - the similarity scale's baseline "A-B": what the heads' 1 - JS reads against
    each other head with its keys shuffled. NumPy estimates each ordered pair's
    expectation over 200 shuffles of its own (numpy's generator): the shown least
    and most must be within 0.06 of the least and most of those (mhaviz averages
    16 shuffles a row), and the baseline must not be a constant (two settings differ);
    the similarity scale has a tick at its top (the grey ends there)."""
import json
import os
import random
import re
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gpt2_gen  # noqa: E402
import gpt2_ref  # noqa: E402

GO_BITS = 0.10
FAILS = []


def fail(msg):
    FAILS.append(msg)
    print("FAIL " + msg)


def make_model(path, seed, layers, heads, d, quiet):
    """A generated checkpoint with the heads in quiet ((layer, head) 0-based) scaled
    down to a tenth... a thousandth of their contribution."""
    w = gpt2_gen.gen(path, n_layer=layers, n_head=heads, n_embd=d, n_positions=64, seed=seed)
    dh = d // heads
    for k, (layer, head) in enumerate(sorted(quiet)):
        name = f"h.{layer}.attn.c_proj.weight"
        w[name][head * dh:(head + 1) * dh, :] *= np.float32([1e-3, 1e-2, 0.1][k % 3])
    gpt2_gen.write_safetensors(os.path.join(path, "model.safetensors"), w, "F32")


def svg_texts(svg):
    raw = re.findall(r'<text x="([\d.]+)" y="([\d.]+)"[^>]*>([^<]*)</text>', open(svg).read())
    return [(float(x), float(y), t.replace("&lt;", "<").replace("&amp;", "&")) for x, y, t in raw]


def joined_lines(texts):
    """Texts drawn in pieces on one baseline (markup: one piece a word), joined."""
    rows = {}
    for x, y, t in texts:
        rows.setdefault(round(y), []).append((x, t))
    return ["".join(t for _, t in sorted(r)) for r in rows.values() if len(r) > 1]


def kl_bits(p, q):
    m = p > 0
    return float(np.sum(p[m] * (np.log(p[m]) - np.log(np.maximum(q[m], 1e-300)))) / np.log(2))


def js_rows(p, q):
    def plogp(x):
        return np.where(x > 0, x * np.log2(np.where(x > 0, x, 1)), 0).sum(axis=-1)
    mid = (p + q) / 2
    return np.maximum(0, (plogp(p) + plogp(q)) / 2 - plogp(mid))


def baseline(attn, rng, draws=200):
    """Each ordered pair's expected 1 - JS with the second head's row shuffled over
    the keys the row may see (causal: 0..r); (least, most) over the pairs."""
    h, n, _ = attn.shape
    vals = []
    for i in range(h):
        for j in range(h):
            if i == j:
                continue
            total = 0.0
            for _ in range(draws):
                js = 0.0
                for r in range(n):
                    q = attn[j, r].copy()
                    q[:r + 1] = q[:r + 1][rng.permutation(r + 1)]
                    js += js_rows(attn[i, r], q)
                total += 1 - js / n
            vals.append(total / draws)
    return min(vals), max(vals)


def check_layer(mhaviz, ck, tmp, text, layer, h, rng):
    where = f"layer {layer + 1}"
    svg = os.path.join(tmp, f"l{layer}.svg")
    dump = os.path.join(tmp, f"d{layer}")
    args = ["--model", ck, "--text", text, "--layer", str(layer + 1)]
    subprocess.run([mhaviz] + args + ["--export", svg, "--size", "1920x1080"], check=True,
                   capture_output=True)
    subprocess.run([mhaviz, "--model", ck, "--text", text, "--dump", dump], check=True,
                   capture_output=True)
    ids = json.load(open(os.path.join(dump, "tokens.json")))["ids"]
    full = gpt2_ref.forward(ck, ids)
    p = full["probs_last"]
    kl, flip = [], []
    for i in range(h):
        q = gpt2_ref.forward(ck, ids, off={(layer, i)})["probs_last"]
        kl.append(kl_bits(p, q))
        flip.append(int(np.argmax(q)) != int(np.argmax(p)))
    texts = svg_texts(svg)
    words = [t for _, _, t in texts] + joined_lines(texts)
    print(f"  {where}: KL (bits) {np.round(kl, 4).tolist()}, top flips {flip}")
    # the diagonal: h numbers on the matrix's diagonal, in row order
    diag = diagonal_numbers(texts, h)
    if os.environ.get("MHAVIZ_ALIKE_KEEP"):
        import shutil
        shutil.copy(svg, os.environ["MHAVIZ_ALIKE_KEEP"])
    rng_line = [re.search(r"(\d+(?:\.\d+)?)\u2013(\d+(?:\.\d+)?) bits", w) for w in words
                if "KL" in w]
    rng_line = [m for m in rng_line if m]
    if diag is None and not rng_line:
        fail(f"{where}: neither the diagonal's {h} numbers nor the KL range line is drawn")
    for m in rng_line[:1]:  # the range where the diagonal has no room
        for shown, want in ((m.group(1), min(kl)), (m.group(2), max(kl))):
            places = len(shown.split(".")[1]) if "." in shown else 2
            if abs(float(shown) - want) > 0.5 * 10 ** -places + 2e-3:
                fail(f"{where}: KL range shows {m.group(0)!r}, PyTorch {min(kl):.4f}-"
                     f"{max(kl):.4f}")
    if diag is not None:
        for i, (shown, want) in enumerate(zip(diag, kl)):
            places = len(shown.split(".")[1]) if "." in shown else 2
            if abs(float(shown) - want) > 0.5 * 10 ** -places + 2e-3:
                fail(f"{where}: head {i + 1}'s KL shows {shown}, PyTorch {want:.4f}")
    go = [w for w in words if "could go" in w]
    # a line drawn whole is also in a joined row when other text shares its baseline
    # (a token's label far to its left): that row is not a second verdict
    go = [w for w in go if not any(o != w and o in w for o in go)]
    if len(go) != 1:
        fail(f"{where}: expected one 'could go' line, got {go}")
        return
    listed = [int(x) for x in re.findall(r"\d+", go[0].split(":", 1)[1])] \
        if ":" in go[0] and not go[0].startswith("none") else []
    for i in range(h):
        should = kl[i] < GO_BITS and not flip[i]
        near = abs(kl[i] - GO_BITS) < 2e-3
        if (i + 1 in listed) != should and not near:
            fail(f"{where}: head {i + 1} (KL {kl[i]:.4f} bits, flip {flip[i]}) "
                 f"{'listed' if i + 1 in listed else 'not listed'}: {go[0]!r}")
    if not any("KL" in w for w in words):
        fail(f"{where}: no line says the measure is the next token's KL")
    attn = np.load(os.path.join(dump, f"layer_{layer + 1}", "attn.npy")).astype(np.float64) \
        if os.path.isdir(os.path.join(dump, f"layer_{layer + 1}")) else None
    if attn is None:
        attn = full["attn"][layer]
    m = [re.search(r"(\d\.\d\d)\u2013(\d\.\d\d)", w) for w in words if "random" in w or
         "unrelated" in w]
    m = [x for x in m if x]
    if not m:
        fail(f"{where}: the baseline 'A\u2013B' of unrelated heads is not shown: {words[-12:]}")
        return None
    lo, hi = float(m[0].group(1)), float(m[0].group(2))
    if str(f"{hi:.2f}") not in words:
        fail(f"{where}: the similarity scale has no tick at the baseline's top {hi:.2f}")
    want_lo, want_hi = baseline(attn, rng)
    print(f"  {where}: baseline shown {lo:.2f}-{hi:.2f}, NumPy {want_lo:.3f}-{want_hi:.3f}")
    if abs(lo - want_lo) > 0.06 or abs(hi - want_hi) > 0.06:
        fail(f"{where}: baseline {lo:.2f}-{hi:.2f}, NumPy's expectation {want_lo:.3f}-"
             f"{want_hi:.3f}")
    return hi


def diagonal_numbers(texts, h):
    """The diagonal's numbers, row by row: the matrix's rows are found by its head
    labels 1..h (one column of texts left of the map, y increasing; the first such
    column whose rows read); in each row the numbers right of the label are the
    cells drawn: all h (the diagonal is the r-th) or the diagonal's alone."""
    for x, y, t in texts:
        if t != "1":
            continue
        run = [(x, y)]
        for k in range(2, h + 1):
            nxt = [(xx, yy) for xx, yy, tt in texts if tt == str(k) and abs(xx - x) < 12 and
                   yy > run[-1][1]]
            if not nxt:
                break
            run.append(min(nxt, key=lambda p: p[1]))
        if len(run) == h:
            out = rows_read(texts, run, h)
            if out:
                return out
    return None


def rows_read(texts, labels, h):
    out = []
    pitch = labels[1][1] - labels[0][1]  # a cell's height = its width
    for r, (lx, ly) in enumerate(labels):
        row = sorted((x, t) for x, y, t in texts
                     if abs(y - ly) <= 4 and lx + 4 < x < lx + pitch * (h + 1) and
                     re.fullmatch(r"\u2212?\d+(\.\d+)?", t))
        if len(row) == h:
            out.append(row[r][1])
        elif len(row) == 1:
            out.append(row[0][1])
        else:
            return None
    return out


def main():
    mhaviz = os.path.abspath(sys.argv[1])
    seed = int(os.environ.get("MHAVIZ_ALIKE_SEED", random.randrange(1 << 30)))
    print(f"alike_model_check: seed {seed} (MHAVIZ_ALIKE_SEED)")
    rnd = random.Random(seed)
    rng = np.random.default_rng(seed)
    his = []
    with tempfile.TemporaryDirectory() as tmp:
        for case in range(2):
            layers, heads, d = 3, 4, 64
            quiet = {(rnd.randrange(layers), rnd.randrange(heads)) for _ in range(3)}
            ck = os.path.join(tmp, f"ck{case}")
            make_model(ck, seed + case, layers, heads, d, quiet)
            text = ["the cat sat on the mat and then it slept", "a b c a b c a b",
                    "heads look back; some look nowhere at all"][rnd.randrange(3)]
            print(f"case {case}: quiet heads {sorted(quiet)}, text {text!r}")
            for layer in range(layers):
                hi = check_layer(mhaviz, ck, tmp, text, layer, heads, rng)
                if hi is not None:
                    his.append(hi)
    if len(set(his)) < 2:
        fail(f"the baseline reads the same everywhere ({his}): it is not measured")
    if FAILS:
        print(f"alike_model_check: {len(FAILS)} failure(s)")
        return 1
    print("alike_model_check: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
