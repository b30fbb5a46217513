#!/usr/bin/python3
"""screen_numbers_check.py MHAVIZ: the numbers a figure draws, against NumPy.

For each configuration, `--export a.svg` draws the view and `--dump` writes the same
view's tensors; every number read back from the SVG's text is recomputed here from
the dumped tensors (float64), never from the program's own formulas or meta.json:
- each head's title "X of Y bits": X the head's mean row entropy (bits, over the
  text's real rows), Y the most it can be, the mean over those rows of log2 of the
  keys the row may see (every real key, or the keys up to the row under the causal
  mask); one decimal, so within 0.05 (+1e-3 for float32 sums);
- the cost panel: parameters 4 d^2 counted as the entries of W_Q, W_K, W_V and W_O,
  d_k as Q's width over h, the h n^2 attention weights as attn.npy's size, the
  projections' FLOPs as 2 multiply-adds an entry of each of the four (n, d)(d, d)
  products, the attention's as those of Q K^T and attn V, and which of the two
  dominates; exact where drawn with commas, to the shown digits where drawn short;
- a loaded layer with its own shapes (llama_gen.py: 6 heads on 2 K/V heads, head_dim 12
  at d_model 48): parameters as the entries of its q/k/v/o_proj (from the safetensors
  header), weights h n^2, both FLOPs and the K/V cache a token, 2 h_kv head_dim, beside
  2 h head_dim (a K/V head per head), and in all L layers, 2 L h_kv head_dim beside
  2 L h head_dim, L counted from the header's model.layers.i, n from the dump's tokens.json;
- compare (`--compare SPEC`): the pinned pane's heatmap cells (<g id="pinned-head-K">)
  are viridis of the pinned settings' own --dump, the live pane's (<g id="head-K">)
  viridis of the live one's, the PNG of the same figure has those colours at the
  cells' centres, and each pane's titles say its own model's bits.
Exits 1 with "FAIL where: expected X, got Y" lines on any failure."""
import os
import re
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

import numpy as np

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
from e2e_util import Checker, no_display_env, read_rgba, svg_group_cells

CK = Checker()
SVG_NS = "{http://www.w3.org/2000/svg}"
SIZE = "1600x900"
# viridis at 0, 1/8, ..., 1 (viridisLite's viridis(9)); independent of the app's table
VIRIDIS9 = np.array([[0x44, 0x01, 0x54], [0x47, 0x2D, 0x7B], [0x3B, 0x52, 0x8B],
                     [0x2C, 0x72, 0x8E], [0x21, 0x90, 0x8C], [0x27, 0xAD, 0x81],
                     [0x5D, 0xC8, 0x63], [0xAA, 0xDC, 0x32], [0xFD, 0xE7, 0x25]], float)
VIRIDIS_TOL = 14  # the app interpolates 11 anchors, this 9
BITS_TOL = 0.05 + 1e-3


def viridis(t):
    t = np.clip(np.asarray(t, float), 0, 1) * 8
    i = np.minimum(np.floor(t).astype(int), 7)
    f = (t - i)[..., None]
    return VIRIDIS9[i] * (1 - f) + VIRIDIS9[i + 1] * f


def mhaviz_ok(mhaviz, args, cwd):
    r = subprocess.run([mhaviz] + args, cwd=cwd, env=no_display_env(), capture_output=True,
                       text=True, timeout=120)
    return CK.check(r.returncode == 0, f"mhaviz {' '.join(args)}", "exit 0",
                    f"exit {r.returncode}, stderr {r.stderr.strip()!r}")


class Dump:
    """One --dump, read with NumPy (float64)."""

    def __init__(self, folder):
        def load(name):
            return np.load(os.path.join(folder, name)).astype(np.float64)
        self.attn = load("attn.npy")  # (h, n, n)
        self.q = load("Q.npy")  # (n, d_model)
        self.w = [load(f"W_{x}.npy") for x in "QKVO"]
        with open(os.path.join(folder, "tokens.txt"), encoding="utf-8") as f:
            self.tokens = f.read().split("\n")[:self.attn.shape[1]]
        self.h, self.n, _ = self.attn.shape
        self.d = self.q.shape[1]


def head_bits(dump, causal):
    """(mean row entropy, its most) per head, in bits, over the text's real rows."""
    real = [i for i, t in enumerate(dump.tokens) if t != "[PAD]"]
    most = np.mean([np.log2(len([k for k in real if not causal or k <= r])) for r in real])
    out = []
    for a in dump.attn:
        rows = a[real]
        plogp = np.where(rows > 0, rows * np.log2(np.where(rows > 0, rows, 1)), 0)
        out.append((float(np.mean(-plogp.sum(axis=1))), float(most)))
    return out


def svg_groups(path, prefix):
    """{K: (texts, cells)} for every <g id="{prefix}K">; cells [(x, y, w, h, rgb)] in
    row-major order, a run of equal neighbours drawn as one wider rect split again."""
    root = ET.parse(path).getroot()
    out = {}
    for g in root.iter(SVG_NS + "g"):
        m = re.fullmatch(re.escape(prefix) + r"(\d+)", g.get("id") or "")
        if not m:
            continue
        cells = svg_group_cells(g)
        texts = ["".join(t.itertext()) for t in g.iter(SVG_NS + "text")]
        out[int(m.group(1))] = (texts, cells)
    return out


def svg_lines(path):
    """The cost panel's text as lines: the runs at or right of its title "Cost…" and
    below it, those on one baseline (within 3 px: the markup's subscripts are runs a
    little above it) joined left to right."""
    root = ET.parse(path).getroot()
    runs = [(float(t.get("x")), float(t.get("y")), "".join(t.itertext()))
            for t in root.iter(SVG_NS + "text")]
    title = [r for r in runs if r[2].startswith("Cost")]
    if not CK.check(len(title) == 1, f"{path}: the cost panel's title", "one", title):
        return []
    x0, y0 = title[0][0], title[0][1]
    lines = []
    for x, y, s in sorted(runs, key=lambda r: (r[1], r[0])):
        if x < x0 - 2 or y < y0 - 3:
            continue
        if lines and abs(lines[-1][0] - y) <= 3:
            lines[-1][1].append((x, s))
        else:
            lines.append([y, [(x, s)]])
    return ["".join(s for _, s in sorted(ln[1])) for ln in lines]


# --- head titles ----------------------------------------------------------------

def check_titles(where, groups, dump, causal, every=True):
    """Each title's bits, where drawn; every: a title in each head has them (they fit)."""
    want = head_bits(dump, causal)
    seen = 0
    for k, (texts, _) in sorted(groups.items()):
        for t in texts:
            m = re.search(r"(\d+\.\d) of (\d+\.\d) bits", t)
            if not m:
                continue
            seen += 1
            ent, most = want[k - 1]
            got = (float(m.group(1)), float(m.group(2)))
            CK.check(abs(got[0] - ent) <= BITS_TOL and abs(got[1] - most) <= BITS_TOL,
                     f"{where}: head {k}'s title {t!r}",
                     f"{ent:.3f} of {most:.3f} bits (NumPy)", f"{got[0]} of {got[1]} bits")
    if every:
        CK.check(seen == len(groups) and seen > 0, f"{where}: titles with bits",
                 f"one in each of {len(groups)} heads", seen)
    return seen


def check_head_titles(mhaviz, tmp):
    configs = [[], ["-H", "8", "-d", "128", "--sample", "1"], ["--mask", "causal", "-s", "5"],
               ["-H", "2", "--pad", "12", "--sample", "2"],
               ["-H", "6", "-d", "96", "--mask", "causal", "--pad", "20", "--temperature", "0.3"],
               ["-H", "1", "--no-scale", "--sample", "3"], ["-H", "8", "-s", "3", "--sample", "3"]]
    for i, args in enumerate(configs):
        d = os.path.join(tmp, f"titles{i}")
        os.mkdir(d)
        if not (mhaviz_ok(mhaviz, ["--export", "a.svg", "--size", SIZE] + args, d)
                and mhaviz_ok(mhaviz, ["--dump", "dump"] + args, d)):
            continue
        check_titles(f"titles {args}", svg_groups(os.path.join(d, "a.svg"), "head-"),
                     Dump(os.path.join(d, "dump")), "causal" in args)


# --- the cost panel -----------------------------------------------------------------

UNITS = {"M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15}


def shown_equals(text, value):
    """text is value as drawn: "1,234,567" exactly, or "68.7 G" to its digits."""
    text = text.strip()
    m = re.fullmatch(r"([\d.]+)\s*([MGTP])", text)
    if m:
        digits = m.group(1).split(".")
        step = 10.0 ** -(len(digits[1]) if len(digits) > 1 else 0)
        return abs(float(m.group(1)) - value / UNITS[m.group(2)]) <= step / 2 + 1e-9
    return re.fullmatch(r"\d{1,3}(,\d{3})*", text) is not None and int(text.replace(",", "")) == value


def check_cost(where, lines, dump):
    n, d, h = dump.n, dump.d, dump.h
    params = sum(w.size for w in dump.w)  # W_Q, W_K, W_V, W_O: (d, d) each
    dk = d // h if d % h == 0 else None
    weights = dump.attn.size  # (h, n, n)
    proj = sum(2 * n * w.shape[0] * w.shape[1] for w in dump.w)  # four (n, d)(d, d)
    attn = h * (2 * n * n * (d // h)) * 2  # per head Q_i K_i^T and attn V_i, (n, n, d_k)
    expect = [(r"parameters .*?= ?(.+?) \(any h\)$|^parameters ([^=]+)$", params, "parameters"),
              (r"attention weights h·n² = (.+)$|^weights h·n² = (.+)$", weights,
               "attention weights"),
              (r"projections (?:8·n·d² = )?(.+?) ?FLOPs$", proj, "projections' FLOPs"),
              (r"attention (?:4·n²·d = )?(.+?) ?FLOPs$", attn, "attention's FLOPs")]
    for pattern, value, what in expect:
        found = [m for m in (re.search(pattern, ln) for ln in lines) if m]
        if not CK.check(len(found) == 1, f"{where}: the cost panel's {what} line", "one line",
                        [ln for ln in lines if re.search(pattern, ln)] or lines[-12:]):
            continue
        shown = next(g for g in found[0].groups() if g is not None)
        CK.check(shown_equals(shown, value), f"{where}: cost panel, {what}", f"{value:,}",
                 found[0].group(0))
    dk_lines = [ln for ln in lines if re.match(r"dk = ", ln)]
    if CK.check(len(dk_lines) == 1, f"{where}: the cost panel's d_k line", "one line", dk_lines):
        CK.check(dk_lines[0].endswith(f"= {dk}"), f"{where}: cost panel, d_k", f"... = {dk}",
                 dk_lines[0])
    dom = [ln for ln in lines if "dominate" in ln]
    want = "projections" if proj >= attn else "scores"
    if CK.check(len(dom) == 1, f"{where}: the cost panel's dominate line", "one line", dom):
        CK.check(dom[0].startswith(want + " dominate"), f"{where}: which dominates (n={n}, d={d})",
                 f"{want} dominate", dom[0])


def check_cost_panel(mhaviz, tmp):
    long_text = " ".join(["the cat sat on the mat and"] * 6)  # 42 tokens: scores dominate at d 16
    words = " ".join(["word"] * 200)  # 200 tokens at d_model 4096: numbers in the billions
    configs = [[], ["-H", "8", "-d", "128", "--sample", "2"], ["-H", "2", "-d", "16", "-t", long_text],
               ["-H", "16", "-d", "4096", "--sample", "1"], ["-H", "3", "-d", "96", "--pad", "40"],
               ["-H", "16", "-d", "4096", "-t", words]]
    for i, args in enumerate(configs):
        d = os.path.join(tmp, f"cost{i}")
        os.mkdir(d)
        size = "1024x768" if i == len(configs) - 1 else SIZE
        if not (mhaviz_ok(mhaviz, ["--export", "a.svg", "--size", size] + args, d)
                and mhaviz_ok(mhaviz, ["--dump", "dump"] + args, d)):
            continue
        check_cost(f"cost {args}", svg_lines(os.path.join(d, "a.svg")),
                   Dump(os.path.join(d, "dump")))


def safetensors_shapes(path):
    """{tensor name: shape} from a .safetensors file's own header (8-byte length, JSON)."""
    import json
    with open(path, "rb") as f:
        size = int.from_bytes(f.read(8), "little")
        head = json.loads(f.read(size))
    return {k: v["shape"] for k, v in head.items() if k != "__metadata__"}


def check_cost_own(mhaviz, tmp):
    """A loaded layer with its own shapes (grouped K/V, head_dim * h != d_model): the cost
    panel's parameters, weights, FLOPs and K/V cache a token (and with a K/V head per
    head), in the layer and in all its layers (2 L h_kv head_dim, L counted from the
    header's model.layers.i), from the checkpoint's tensor shapes and the dumped token
    count."""
    here = os.path.dirname(os.path.abspath(__file__))
    ck = os.path.join(tmp, "own")
    subprocess.run(["/usr/bin/python3", os.path.join(here, "llama_gen.py"), ck, "--layers", "2",
                    "--hidden", "48", "--heads", "6", "--kv-heads", "2", "--head-dim", "12",
                    "--seed", "5", "--tokenizer", "bytelevel"], check=True, capture_output=True)
    shapes = safetensors_shapes(os.path.join(ck, "model.safetensors"))
    attn = {x: shapes[f"model.layers.1.self_attn.{x}_proj.weight"] for x in "qkvo"}
    d = os.path.join(tmp, "cost-own")
    os.mkdir(d)
    args = ["--model", ck, "--text", "the cat sat on the mat and then it slept", "--layer", "2"]
    if not (mhaviz_ok(mhaviz, ["--export", "a.svg", "--size", SIZE] + args, d)
            and mhaviz_ok(mhaviz, ["--export", "b.svg", "--size", "1920x1080"] + args, d)
            and mhaviz_ok(mhaviz, ["--dump", "dump"] + args[:-2], d)):  # (every layer)
        return
    import json
    with open(os.path.join(d, "dump", "tokens.json"), encoding="utf-8") as f:
        n = len(json.load(f)["ids"])
    qd, kvd = attn["q"][0], attn["k"][0]  # h head_dim, h_kv head_dim
    h, hd = 6, attn["q"][0] // 6
    layers = len({k.split(".")[2] for k in shapes if k.startswith("model.layers.")})
    params = sum(a * b for a, b in attn.values())
    want = [(r"^parameters .*?= ?(.+)$|^parameters ([^=]+)$", params, "parameters"),
            (r"weights h·n² = (.+)$", h * n * n, "attention weights"),
            (r"projections (?:2·n·parameters = )?(.+?) ?FLOPs$", 2 * n * params,
             "projections' FLOPs"),
            (r"attention (?:4·n²·h·dₖ = )?(.+?) ?FLOPs$", 4 * n * n * h * hd, "attention's FLOPs"),
            (r"K/V cache .*?(\d[\d,]*) a token", 2 * kvd, "K/V cache a token"),
            (r"K/V cache .*\(h_?kv = h: (\d[\d,]*)\)", 2 * qd, "K/V cache with h_kv = h"),
            (r"^all (\d+) layers", layers, "the whole model's layers"),
            (r"^all \d+ layers.*?(\d[\d,]*) a token", 2 * layers * kvd,
             "K/V cache of every layer a token, 2·L·h_kv·d_k"),
            (r"^all \d+ layers.*\(h(?:ₖᵥ|_?kv) = h: (\d[\d,]*)\)", 2 * layers * qd,
             "K/V cache of every layer with h_kv = h")]
    # at 1600x900 the panel has no room for the last line, every layer's cache; 1920x1080 has
    for svg, checks in (("a.svg", want[:-3]), ("b.svg", want)):
        lines = svg_lines(os.path.join(d, svg))
        for pattern, value, what in checks:
            found = [m for m in (re.search(pattern, ln) for ln in lines) if m]
            if not CK.check(len(found) == 1, f"own shapes ({svg}): the cost panel's {what} line",
                            "one line", lines[-12:]):
                continue
            shown = next(g for g in found[0].groups() if g is not None)
            CK.check(shown_equals(shown, value), f"own shapes ({svg}): cost panel, {what}",
                     f"{value:,}", found[0].group(0))


# --- compare: each pane its own model's ------------------------------------------------

def visible(dump, causal):
    """(n, n) True where query r may see key k: both real, and k <= r under the causal
    mask; the other cells are hatched or veiled, not coloured by their weight."""
    real = np.array([t != "[PAD]" for t in dump.tokens])
    see = np.outer(real, real)
    return np.tril(see) if causal else see


def check_cells(where, groups, dump, img, causal):
    see = visible(dump, causal).reshape(-1)
    for k, (_, cells) in sorted(groups.items()):
        a = dump.attn[k - 1]
        if not CK.check(len(cells) == a.size, f"{where}: head {k}'s cells", a.size, len(cells)):
            continue
        cells = [c for c, s in zip(cells, see) if s]
        svg = np.array([c[4] for c in cells], float)
        diff = float(np.abs(svg - viridis(a.reshape(-1)[see])).max())
        CK.check(diff <= VIRIDIS_TOL, f"{where}: head {k}'s cells are viridis(its own --dump's "
                 "attn)", f"max channel diff <= {VIRIDIS_TOL}", f"{diff:.0f}")
        png = np.array([img[int(y + hh / 2), int(x + w / 2), :3] for x, y, w, hh, _ in cells], float)
        diff = float(np.abs(png - svg).max())
        CK.check(diff <= 3, f"{where}: head {k}: the PNG's colours at the cells' centres",
                 "the SVG's (max channel diff <= 3)", f"{diff:.0f}")


def check_compare(mhaviz, tmp):
    # (live options, the SPEC, the same SPEC as options): the seed=7, and
    # settings that keep h (the panes' heatmaps could share a cache key) or change it
    cases = [([], "seed=7", ["-s", "7"]),
             (["-H", "8", "-d", "128"], "mask=causal", ["-H", "8", "-d", "128", "--mask", "causal"]),
             (["-H", "2", "--sample", "2"], "h=4,temperature=0.5",
              ["-H", "4", "--sample", "2", "--temperature", "0.5"])]
    titled = 0
    for i, (live, spec, pinned) in enumerate(cases):
        d = os.path.join(tmp, f"compare{i}")
        os.mkdir(d)
        fig = ["--size", SIZE, "--compare", spec] + live
        if not (mhaviz_ok(mhaviz, ["--export", "a.svg"] + fig, d)
                and mhaviz_ok(mhaviz, ["--export", "a.png"] + fig, d)
                and mhaviz_ok(mhaviz, ["--dump", "live"] + live, d)
                and mhaviz_ok(mhaviz, ["--dump", "pinned"] + pinned, d)):
            continue
        svg, img = os.path.join(d, "a.svg"), read_rgba(os.path.join(d, "a.png"))
        for pane, prefix, args in (("pinned", "pinned-head-", pinned), ("live", "head-", live)):
            where = f"--compare {spec} {' '.join(live)}: {pane} pane"
            groups = svg_groups(svg, prefix)
            dump = Dump(os.path.join(d, pane))
            if CK.check(sorted(groups) == list(range(1, dump.h + 1)), f"{where}: head groups",
                        list(range(1, dump.h + 1)), sorted(groups)):
                check_cells(where, groups, dump, img, "causal" in args)
                titled += check_titles(where, groups, dump, "causal" in args, every=False)
    CK.check(titled > 0, "compare: panes' titles with bits", "some", titled)


def main():
    mhaviz = os.path.abspath(sys.argv[1])
    with tempfile.TemporaryDirectory() as tmp:
        check_head_titles(mhaviz, tmp)
        check_cost_panel(mhaviz, tmp)
        check_cost_own(mhaviz, tmp)
        check_compare(mhaviz, tmp)
    return CK.finish("screen_numbers_check")


if __name__ == "__main__":
    sys.exit(main())
