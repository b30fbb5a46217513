#!/usr/bin/env python3
"""ckpt_hostile.py BUILD_DIR [--mhaviz BIN]: the checkpoint loader (src/model) on
hostile and on valid model folders, all generated here in a temporary folder.

The safetensors files are written by hand (struct.pack('<Q', N) + JSON header +
raw bytes from NumPy), never with the safetensors library, so that every rule
can be broken on purpose. Each hostile folder must be refused by
BUILD_DIR/tests/ckpt_driver with the exit code of its class (1: the file cannot
be read, 2: it was read but is not a model we can use), exactly one stderr line
"mhaviz: ..." naming the file at fault, and nothing written into the folder.
The valid ones (F32, F16, BF16 and a mixture, with and without the
"transformer." prefix, with mask buffers of several dtypes, a tied lm_head,
d_head 5 and 3, epsilon 1e-6) must load, and every tensor's sum, weighted sum and
first values must equal what NumPy computes from the arrays written, converted
independently here (numpy's float16; bfloat16 as a float32's upper 16 bits).

Weights holding NaN or an infinity (F32, F16, BF16; early and late in the file)
are refused with exit 2, the line naming the tensor and the element. An XL-shaped
config beside small weights is refused as a shape mismatch also under a 2 GiB
address-space limit: the shapes are checked before the 5.9 GB float32 block is
allocated (skipped under AddressSanitizer, which reserves terabytes of address
space and cannot run under such a limit).

--mhaviz BIN: the hostile folders go to `BIN --model DIR --dump OUTDIR` instead,
with the same checks, and OUTDIR must not have been created."""

import json
import math
import os
import resource
import shutil
import stat
import struct
import subprocess
import sys
import tempfile

import numpy as np

FAILS = []


def check(cond, msg):
    if not cond:
        FAILS.append(msg)
        print("FAIL:", msg)


# ------------------------------------------------------------------------------
# writing models

def bytes_to_unicode():
    """GPT-2's byte-to-character table (printable bytes stand for themselves, the
    others shift past 255), for a tokenizer the program will accept."""
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("\xa1"), ord("\xac") + 1)) + \
        list(range(ord("\xae"), ord("\xff") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return {b: chr(c) for b, c in zip(bs, cs)}


MERGES = [("\u0120", "t"), ("h", "e"), ("t", "h"), ("i", "n")]
VOCAB_SIZE = 256 + len(MERGES)


def write_tokenizer(d):
    table = bytes_to_unicode()
    vocab = {table[b]: i for i, b in enumerate(range(256))}
    for a, b in MERGES:
        vocab[a + b] = len(vocab)
    with open(os.path.join(d, "vocab.json"), "w", encoding="utf-8") as f:
        json.dump(vocab, f, ensure_ascii=False)
    with open(os.path.join(d, "merges.txt"), "w", encoding="utf-8") as f:
        f.write("#version: 0.2\n" + "".join(f"{a} {b}\n" for a, b in MERGES))


def config(n_layer=2, n_head=2, n_embd=8, n_positions=16, vocab_size=VOCAB_SIZE, eps=1e-5,
           **extra):
    c = {"model_type": "gpt2", "activation_function": "gelu_new", "n_layer": n_layer,
         "n_head": n_head, "n_embd": n_embd, "n_positions": n_positions,
         "vocab_size": vocab_size, "layer_norm_epsilon": eps, "n_inner": None}
    c.update(extra)
    return c


def gpt2_arrays(c, seed):
    """name (without prefix) -> float32 array, GPT-2's Conv1D (in, out) shapes."""
    rng = np.random.default_rng(seed)
    d, ff, L = c["n_embd"], 4 * c["n_embd"], c["n_layer"]

    def r(*shape, scale=0.5):
        return (rng.standard_normal(shape) * scale).astype(np.float32)

    a = {"wte.weight": r(c["vocab_size"], d), "wpe.weight": r(c["n_positions"], d, scale=0.1)}
    for i in range(L):
        p = f"h.{i}."
        a[p + "ln_1.weight"] = 1 + r(d, scale=0.1)
        a[p + "ln_1.bias"] = r(d, scale=1e-6)  # tiny: F16 subnormals on the way
        a[p + "attn.c_attn.weight"] = r(d, 3 * d)
        a[p + "attn.c_attn.bias"] = r(3 * d)
        a[p + "attn.c_proj.weight"] = r(d, d)
        a[p + "attn.c_proj.bias"] = r(d)
        a[p + "ln_2.weight"] = 1 + r(d, scale=0.1)
        a[p + "ln_2.bias"] = r(d)
        a[p + "mlp.c_fc.weight"] = r(d, ff)
        a[p + "mlp.c_fc.bias"] = r(ff)
        a[p + "mlp.c_proj.weight"] = r(ff, d)
        a[p + "mlp.c_proj.bias"] = r(d)
    a["ln_f.weight"] = 1 + r(d, scale=0.1)
    a["ln_f.bias"] = r(d)
    return a


def encode(arr, dtype):
    """(raw bytes, the float32 values the loader should produce), converted here."""
    arr = np.ascontiguousarray(arr, dtype=np.float32)
    if dtype == "F32":
        return arr.astype("<f4").tobytes(), arr.copy()
    if dtype == "F16":
        h = arr.astype(np.float16)
        return h.astype("<f2").tobytes(), h.astype(np.float32)
    if dtype == "BF16":
        u = (arr.view(np.uint32) >> 16).astype(np.uint16)  # truncation: still a bf16 value
        back = (u.astype(np.uint32) << 16).view(np.float32)
        return u.astype("<u2").tobytes(), back
    raise ValueError(dtype)


def st_bytes(entries, header_edit=None, raw_header=None, hlen=None, tail=b""):
    """entries: [(name, dtype, shape, raw)] in file order; offsets laid end to end.
    header_edit(header) may break the header; raw_header replaces its text;
    hlen the 8-byte length; tail bytes after the data."""
    header, data, at = {}, b"", 0
    for name, dtype, shape, raw in entries:
        header[name] = {"dtype": dtype, "shape": list(shape), "data_offsets": [at, at + len(raw)]}
        data += raw
        at += len(raw)
    if header_edit:
        header_edit(header)
    text = raw_header if raw_header is not None else json.dumps(header).encode()
    text += b" " * (-len(text) % 8)  # padded to 8 as safetensors writes it
    n = len(text) if hlen is None else hlen
    return struct.pack("<Q", n) + text + data + tail


def model_entries(c, seed=1, dtype="F32", prefix="transformer.", masks=None, order=None,
                  lm_head=None):
    """(entries, expected float32 arrays by name without prefix). masks: dtype of
    the attn.bias / attn.masked_bias buffers or None; dtype: one for all, or a
    function name -> dtype; lm_head: None, "tied" or "untied"."""
    arrays = gpt2_arrays(c, seed)
    entries, expect = [], {}
    for name, arr in arrays.items():
        dt = dtype(name) if callable(dtype) else dtype
        raw, back = encode(arr, dt)
        entries.append((prefix + name, dt, arr.shape, raw))
        expect[name] = back
    if masks:
        P = c["n_positions"]
        for i in range(c["n_layer"]):
            tri = np.tril(np.ones((1, 1, P, P)))
            if masks == "F32":
                mb = tri.astype("<f4").tobytes()
                mm = np.array(-1e4, dtype="<f4").tobytes()
                mmdt = "F32"
            else:  # BOOL / U8: one byte each
                mb = tri.astype(np.uint8).tobytes()
                mm = np.array([0], dtype=np.uint8).tobytes()
                mmdt = masks
            entries.append((prefix + f"h.{i}.attn.bias", masks, (1, 1, P, P), mb))
            shape = () if mmdt == "F32" else (1,)
            entries.append((prefix + f"h.{i}.attn.masked_bias", mmdt, shape, mm))
    if lm_head:
        wte = arrays["wte.weight"]
        dt = entries[0][1]
        if lm_head == "untied":
            wte = wte.copy()
            wte[3, 1] += 1.0
        raw, _ = encode(wte, dtype("wte.weight") if callable(dtype) else dtype)
        entries.append(("lm_head.weight", dt, wte.shape, raw))
    if order == "reversed":
        entries = entries[::-1]
    return entries, expect


def make_folder(root, name, c, st=None, cfg_text=None, tokenizer=True):
    d = os.path.join(root, name)
    os.makedirs(d)
    if cfg_text is None and c is not None:
        cfg_text = json.dumps(c)
    if cfg_text is not None:
        with open(os.path.join(d, "config.json"), "w") as f:
            f.write(cfg_text)
    if st is not None:
        with open(os.path.join(d, "model.safetensors"), "wb") as f:
            f.write(st)
    if tokenizer:
        write_tokenizer(d)
    return d


# ------------------------------------------------------------------------------
# what the loader must produce

def tf_tensors(c, expect):
    """The transformer's tensors (names as tf_create records them) from the
    arrays by Hugging Face name: c_attn split by columns, in tf's order."""
    d = c["n_embd"]
    out = [("wte", expect["wte.weight"]), ("wpe", expect["wpe.weight"])]
    for i in range(c["n_layer"]):
        p, q = f"h.{i}.", f"layer{i + 1}."
        w = expect[p + "attn.c_attn.weight"]
        b = expect[p + "attn.c_attn.bias"]
        out += [(q + "ln1.gain", expect[p + "ln_1.weight"]), (q + "ln1.bias", expect[p + "ln_1.bias"]),
                (q + "W_Q", w[:, :d]), (q + "W_K", w[:, d:2 * d]), (q + "W_V", w[:, 2 * d:]),
                (q + "W_O", expect[p + "attn.c_proj.weight"]),
                (q + "b_Q", b[:d]), (q + "b_K", b[d:2 * d]), (q + "b_V", b[2 * d:]),
                (q + "b_O", expect[p + "attn.c_proj.bias"]),
                (q + "ln2.gain", expect[p + "ln_2.weight"]), (q + "ln2.bias", expect[p + "ln_2.bias"]),
                (q + "W_fc", expect[p + "mlp.c_fc.weight"]), (q + "b_fc", expect[p + "mlp.c_fc.bias"]),
                (q + "W_proj", expect[p + "mlp.c_proj.weight"]),
                (q + "b_proj", expect[p + "mlp.c_proj.bias"])]
    out += [("lnf.gain", expect["ln_f.weight"]), ("lnf.bias", expect["ln_f.bias"])]
    return out


def check_loaded(case, c, expect, js, folder_name):
    conf = js["config"]
    for k, tk in (("n_layer", "n_layer"), ("n_head", "n_head"), ("n_embd", "n_embd"),
                  ("n_positions", "n_positions"), ("vocab_size", "vocab_size")):
        check(conf[tk] == c[k], f"{case}: config {k} {conf[tk]} != {c[k]}")
    check(np.float32(conf["layer_norm_epsilon"]) == np.float32(c["layer_norm_epsilon"]),
          f"{case}: epsilon {conf['layer_norm_epsilon']} != float32({c['layer_norm_epsilon']})")
    check(conf["d_ff"] == 4 * c["n_embd"] and conf["tied"] == 1 and conf["attn_bias"] == 1
          and conf["act"] == 2, f"{case}: GPT-2's options {conf}")
    want = tf_tensors(c, expect)
    n_params = sum(a.size for _, a in want)
    check(js["n_params"] == n_params, f"{case}: n_params {js['n_params']} != {n_params}")
    check(js["name"] == folder_name, f"{case}: name {js['name']!r} != {folder_name!r}")
    pr = js["progress"]
    check(pr["calls"] >= len(expect) and pr["last"] == 1.0 and pr["backwards"] == 0,
          f"{case}: progress {pr} (want >= {len(expect)} calls, ending at 1, never backwards)")
    got = js["tensors"]
    check(len(got) == len(want), f"{case}: {len(got)} tensors, want {len(want)}")
    for g, (name, a) in zip(got, want):
        flat = np.ascontiguousarray(a, dtype=np.float32).reshape(-1).astype(np.float64)
        shape = list(a.shape)
        check(g["name"] == name and g["shape"] == shape,
              f"{case}: tensor {g['name']} {g['shape']} != {name} {shape}")
        wts = 1 + np.arange(flat.size) % 13
        s, ws = math.fsum(flat), math.fsum(flat * wts)
        # the driver sums float32 values in double, in order: its rounding error is
        # below n * 2^-53 of the sum of magnitudes; 1e-12 of it is far above that
        tol = 1e-12 * (np.abs(flat) * wts).sum() * 1e3 + 1e-300
        check(abs(g["sum"] - s) <= tol, f"{case}: {name} sum {g['sum']!r} != {s!r}")
        check(abs(g["wsum"] - ws) <= tol, f"{case}: {name} weighted sum {g['wsum']!r} != {ws!r}")
        first = [np.float32(v) for v in g["first"]]
        check(first == list(np.float32(flat[:3])),
              f"{case}: {name} first {g['first']} != {list(flat[:3])}")


# ------------------------------------------------------------------------------
# running

def listing(d):
    out = {}
    for root, dirs, files in os.walk(d):
        for n in dirs + files:
            p = os.path.join(root, n)
            st = os.lstat(p)
            out[os.path.relpath(p, d)] = (st.st_mode, st.st_size, st.st_mtime_ns)
    return out


def run(cmd, preexec_fn=None):
    env = dict(os.environ)
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120,
                          env=env, preexec_fn=preexec_fn)


def sanitized(binary):
    """True when binary links AddressSanitizer (address-space limits cannot hold it)."""
    ldd = subprocess.run(["ldd", binary], capture_output=True, text=True).stdout
    return "libasan" in ldd


def limit_address_space(nbytes):
    def apply():
        resource.setrlimit(resource.RLIMIT_AS, (nbytes, nbytes))
    return apply


def hostile(args, tmp, case, path, want_rc, at_fault, needle=None, extra=(), preexec_fn=None):
    """Runs the loader on path: rc want_rc, one 'mhaviz: ' line naming at_fault
    (and holding needle), nothing written in the folder (or the folder's parent
    when path is a file). preexec_fn: run in the child before the loader (limits)."""
    watch = path if os.path.isdir(path) else os.path.dirname(path)
    before = listing(watch)
    out_dir = os.path.join(tmp, "out-" + case)
    if args.mhaviz:
        if extra:
            return  # driver-only cases (progress cancelling)
        r = run([args.mhaviz, "--model", path, "--dump", out_dir], preexec_fn)
        check(not os.path.exists(out_dir), f"{case}: {out_dir} was created")
    else:
        r = run([args.driver, path, *extra], preexec_fn)
    err = r.stderr.decode(errors="replace")
    lines = err.splitlines()
    check(r.returncode == want_rc, f"{case}: exit {r.returncode}, want {want_rc}: {err.strip()}")
    check(len(lines) == 1 and lines[0].startswith("mhaviz: "),
          f"{case}: stderr is not one 'mhaviz: ' line: {err!r}")
    if lines:
        check(at_fault in lines[0], f"{case}: {lines[0]!r} does not name {at_fault}")
        if needle:
            check(needle in lines[0], f"{case}: {lines[0]!r} does not say {needle!r}")
    check(r.stdout == b"" or args.mhaviz, f"{case}: stdout {r.stdout[:200]!r}")
    check(listing(watch) == before, f"{case}: the folder changed")
    print(f"ok {case}: exit {r.returncode}: {lines[0] if lines else ''}")


def positive(args, tmp, case, c, entries, expect, path=None):
    d = make_folder(tmp, case, c, st_bytes(entries))
    target = path(d) if path else d
    before = listing(d)
    r = run([args.driver, target])
    check(r.returncode == 0, f"{case}: exit {r.returncode}: {r.stderr.decode(errors='replace')}")
    check(r.stderr == b"", f"{case}: stderr {r.stderr!r}")
    check(listing(d) == before, f"{case}: the folder changed")
    if r.returncode == 0:
        js = json.loads(r.stdout)
        check_loaded(case, c, expect, js, case)
    if args.mhaviz:  # informational: the program on the same folder
        out_dir = os.path.join(tmp, "out-" + case)
        m = run([args.mhaviz, "--model", target, "--dump", out_dir])
        print(f"info {case}: mhaviz exit {m.returncode} {m.stderr.decode(errors='replace').strip()}")
    print(f"ok {case}: loaded")
    return d


def main():
    import argparse
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("--mhaviz")
    args = ap.parse_args()
    args.driver = os.path.join(args.build, "tests", "ckpt_driver")
    if not os.access(args.driver, os.X_OK):
        print("no driver at", args.driver)
        return 1
    tmp = tempfile.mkdtemp(prefix="ckpt_hostile_")
    try:
        cases(args, tmp)
    finally:
        for root, dirs, files in os.walk(tmp):
            for n in dirs + files:
                p = os.path.join(root, n)
                if not os.path.islink(p):
                    os.chmod(p, 0o700)
        shutil.rmtree(tmp)
    if FAILS:
        print(f"{len(FAILS)} failures")
        return 1
    print("all checkpoint cases passed")
    return 0


def cases(args, tmp):
    c = config()
    good, _ = model_entries(c)
    W = "model.safetensors"
    C = "config.json"

    def folder(name, st=None, cfg=c, cfg_text=None):
        return make_folder(tmp, name, cfg, st, cfg_text)

    def H(name, want, at, needle=None, st=None, cfg=c, cfg_text=None, extra=(), preexec_fn=None):
        d = folder(name, st, cfg, cfg_text)
        hostile(args, tmp, name, d, want, os.path.join(d, at), needle, extra, preexec_fn)

    # --- the file cannot be read: 1
    H("short-file", 1, W, "short", st=b"\x05\x00\x00")
    H("empty-file", 1, W, "short", st=b"")
    H("header-past-end", 1, W, "short", st=struct.pack("<Q", 1000) + b"{}" + b" " * 90)
    full = st_bytes(good)
    H("data-cut", 1, W, "short", st=full[:-7])
    H("no-safetensors", 1, W)
    H("no-config", 1, C, st=full, cfg=None)
    d = folder("fifo")
    os.mkfifo(os.path.join(d, W))
    hostile(args, tmp, "fifo", d, 1, os.path.join(d, W), "regular")
    d = folder("safetensors-is-a-folder")
    os.mkdir(os.path.join(d, W))
    hostile(args, tmp, "safetensors-is-a-folder", d, 1, os.path.join(d, W), "regular")
    d = folder("config-fifo", full, cfg=None)
    os.mkfifo(os.path.join(d, C))
    hostile(args, tmp, "config-fifo", d, 1, os.path.join(d, C), "regular")
    if os.geteuid() != 0:  # root reads anything
        d = folder("unreadable", full)
        os.chmod(os.path.join(d, W), 0)
        hostile(args, tmp, "unreadable", d, 1, os.path.join(d, W), "ermission")
        os.chmod(os.path.join(d, W), 0o600)
    else:
        print("skip unreadable: running as root")
    missing = os.path.join(tmp, "does-not-exist")
    hostile(args, tmp, "no-such-path", missing, 1, missing)
    H("cancelled", 1, W, "cancelled", st=full, extra=("--cancel-at", "0.5"))

    # --- read, but not usable: 2
    H("header-length-2^64-1", 2, W, "header length", st=struct.pack("<Q", 2**64 - 1) + b"{}" * 8)
    H("header-length-over-limit", 2, W, "header length",
      st=struct.pack("<Q", (100 << 20) + 1) + b"{}" * 8)

    def edit(fn):
        return st_bytes(good, header_edit=fn)

    def overlap(h):
        h["transformer.wpe.weight"]["data_offsets"][0] -= 4
        h["transformer.wpe.weight"]["data_offsets"][1] -= 4
    H("overlap", 2, W, "overlap", st=st_bytes(good, header_edit=overlap, tail=b""))

    def gap(h):
        for k in list(h)[1:]:
            h[k]["data_offsets"] = [h[k]["data_offsets"][0] + 4, h[k]["data_offsets"][1] + 4]
    H("gap", 2, W, "no tensor", st=st_bytes(good, header_edit=gap, tail=b"\0" * 4))
    H("trailing-bytes", 2, W, "after the last", st=st_bytes(good, tail=b"\0" * 8))

    def f16_label(h):
        h["transformer.ln_f.bias"]["dtype"] = "F16"
    H("dtype-size-disagree", 2, W, "ln_f.bias", st=edit(f16_label))

    bad_shape = [(n, dt, (s[0], s[1] + 1) if n.endswith("wte.weight") else s,
                  raw + (b"\0" * 4 * s[0] if n.endswith("wte.weight") else b""))
                 for n, dt, s, raw in good]
    H("shape-vs-config", 2, W, "transformer.wte.weight", st=st_bytes(bad_shape))
    bad_attn = [(n, dt, (s[0] * 3,) if n.endswith("h.1.attn.c_attn.bias") else s,
                 raw * 3 if n.endswith("h.1.attn.c_attn.bias") else raw) for n, dt, s, raw in good]
    H("shape-c_attn-bias", 2, W, "h.1.attn.c_attn.bias", st=st_bytes(bad_attn))
    H("missing-tensor", 2, W, "missing tensor transformer.ln_f.bias",
      st=st_bytes([e for e in good if e[0] != "transformer.ln_f.bias"]))
    extra_t = good + [("transformer.h.2.ln_1.weight", "F32", (8,), b"\0" * 32)]
    H("extra-layer", 2, W, "unexpected tensor transformer.h.2.ln_1.weight", st=st_bytes(extra_t))
    H("extra-head", 2, W, "unexpected tensor score.weight",
      st=st_bytes(good + [("score.weight", "F32", (8, 2), b"\0" * 64)]))
    lz = [(n.replace("h.1.", "h.01."), dt, s, raw) for n, dt, s, raw in good]
    H("leading-zero-layer", 2, W, "h.01.", st=st_bytes(lz))
    H("not-json", 2, W, "JSON", st=st_bytes(good, raw_header=b"{\"a\": nope}"))
    H("json-array", 2, W, "object", st=st_bytes([], raw_header=b"[]"))
    dup = json.dumps({e[0]: {"dtype": "F32", "shape": list(e[2]),
                             "data_offsets": [0, 0]} for e in good[:1]})
    dup_text = (dup[:-1] + ", " + dup[1:]).encode()  # the same key twice
    H("duplicate-key", 2, W, "duplicate", st=st_bytes([], raw_header=dup_text))

    def unknown(h):
        h["transformer.ln_f.bias"]["dtype"] = "F42"
    H("unknown-dtype", 2, W, "F42", st=edit(unknown))

    def neg(h):
        h["transformer.ln_f.bias"]["shape"] = [-8]
    H("negative-shape", 2, W, "shape", st=edit(neg))

    def nonint(h):
        h["transformer.ln_f.bias"]["shape"] = [8.0]
    H("fractional-shape", 2, W, "shape", st=edit(nonint))

    def meta(h):
        h["__metadata__"] = {"format": 1}
    H("metadata-not-strings", 2, W, "__metadata__", st=edit(meta))
    i64 = [(n, "I32" if n.endswith("wpe.weight") else dt, s, raw) for n, dt, s, raw in good]
    H("int-weights", 2, W, "I32", st=st_bytes(i64))
    masks_bad, _ = model_entries(c, masks="U8")

    def bad_mask(h):
        h["transformer.h.0.attn.bias"]["dtype"] = "XX"
    H("mask-unknown-dtype", 2, W, "XX", st=st_bytes(masks_bad, header_edit=bad_mask))
    untied, _ = model_entries(c, lm_head="untied")
    H("lm_head-untied", 2, W, "lm_head.weight differs from wte: untied models are not supported",
      st=st_bytes(untied))
    H("lm_head-shape", 2, W, "lm_head.weight differs from wte",
      st=st_bytes(good + [("lm_head.weight", "F32", (4, 8), b"\0" * 128)]))
    both = good + [("wte.weight", "F32", good[0][2], good[0][3])]
    H("duplicate-after-prefix", 2, W, "appears twice", st=st_bytes(both))
    mixed = [(n[len("transformer."):] if "ln_f" in n else n, dt, s, raw) for n, dt, s, raw in good]
    H("mixed-prefix", 2, W, "mix", st=st_bytes(mixed))

    # values that are not finite: refused as they are converted, the tensor and the
    # element named (counted from the tensor's first element, in the file's order)
    def poisoned(dtype, name, k, value):
        entries, _ = model_entries(c, dtype=dtype)
        out = []
        for n, dt, s, raw in entries:
            if n == "transformer." + name:
                a = np.frombuffer(raw, dtype={"F32": "<f4", "F16": "<f2", "BF16": "<u2"}[dt]).copy()
                if dt == "BF16":  # a float32's upper 16 bits
                    a[k] = np.array([value], dtype="<f4").view("<u4")[0] >> 16
                else:
                    a[k] = value
                raw = a.tobytes()
            out.append((n, dt, s, raw))
        return st_bytes(out)
    H("nan-f32", 2, W, "tensor transformer.h.0.attn.c_attn.weight holds NaN at element 77",
      st=poisoned("F32", "h.0.attn.c_attn.weight", 77, np.nan))
    H("inf-f16", 2, W, "tensor transformer.wte.weight holds Inf at element 1000",
      st=poisoned("F16", "wte.weight", 1000, np.inf))
    H("-inf-f32-bias", 2, W, "tensor transformer.h.1.attn.c_attn.bias holds -Inf at element 20",
      st=poisoned("F32", "h.1.attn.c_attn.bias", 20, -np.inf))  # in W_V's third
    # the last weights in the file but ln_f: after every other tensor was converted
    H("nan-bf16-late", 2, W, "tensor transformer.h.1.mlp.c_proj.weight holds NaN at element 255",
      st=poisoned("BF16", "h.1.mlp.c_proj.weight", 255, np.nan))

    # an XL-shaped config beside these small weights: a shape mismatch, said before
    # the 48 x 12 x 1600^2 floats (5.9 GB) are allocated, so also within 2 GiB
    xl = config(n_layer=48, n_head=25, n_embd=1600, n_positions=1024)
    limited = args.mhaviz or args.driver
    if sanitized(limited):
        print("skip xl-config-small-weights-2GiB: AddressSanitizer reserves more address "
              "space than the limit allows")
    else:
        H("xl-config-small-weights-2GiB", 2, W,
          "tensor transformer.wte.weight has shape [260, 8], config.json makes it [260, 1600]",
          st=full, cfg=xl, preexec_fn=limit_address_space(2 << 30))
    H("xl-config-small-weights", 2, W, "has shape [260, 8], config.json makes it [260, 1600]",
      st=full, cfg=xl)

    # config.json: missing fields, wrong types, values we cannot run
    def cfg_without(k):
        x = dict(c)
        del x[k]
        return x
    H("config-no-n_head", 2, C, "n_head", st=full, cfg=cfg_without("n_head"))
    H("config-no-epsilon", 2, C, "layer_norm_epsilon", st=full,
      cfg=cfg_without("layer_norm_epsilon"))
    H("config-not-json", 2, C, "JSON", st=full, cfg_text="{n_layer: 2")
    H("config-string-n_embd", 2, C, "n_embd", st=full, cfg=dict(c, n_embd="8"))
    H("config-float-n_layer", 2, C, "n_layer", st=full, cfg=dict(c, n_layer=2.5))
    H("config-heads-do-not-divide", 2, C, "divide", st=full, cfg=dict(c, n_head=3))
    H("config-too-long-context", 2, C, "n_positions", st=full, cfg=dict(c, n_positions=4096))
    H("config-relu", 2, C, "activation_function", st=full, cfg=dict(c, activation_function="relu"))
    H("config-duplicate-key", 2, C, "duplicate", st=full,
      cfg_text=json.dumps(c)[:-1] + ', "n_head": 2}')
    # a file given that is neither a folder nor a .safetensors
    d = folder("json-as-model", full)
    hostile(args, tmp, "json-as-model", os.path.join(d, C), 2, os.path.join(d, C))

    # --- valid checkpoints: loaded, every value as written
    # (with --mhaviz the driver still checks the values; the program's exit code on
    # each valid folder is printed, not judged, as --dump's needs are its own)
    c1 = config()
    e, x = model_entries(c1, seed=2, dtype="F32", masks="F32")
    positive(args, tmp, "ok-f32-prefix-masks", c1, e, x)
    e, x = model_entries(c1, seed=3, dtype="F16", prefix="", lm_head="tied")
    positive(args, tmp, "ok-f16-bare-tied", c1, e, x)
    c3 = config(n_layer=3, n_head=3, n_embd=15, n_positions=12, eps=1e-6)
    e, x = model_entries(c3, seed=4, dtype="BF16", masks="U8")
    positive(args, tmp, "ok-bf16-dhead5-eps1e-6", c3, e, x)
    c4 = config(n_layer=1, n_head=5, n_embd=15, n_positions=7)
    e, x = model_entries(c4, seed=5, dtype="F32", prefix="", masks="BOOL", order="reversed")
    positive(args, tmp, "ok-f32-reversed-file", c4, e, x, path=lambda d: os.path.join(d, W))
    kinds = ["F32", "F16", "BF16"]
    e, x = model_entries(c1, seed=6, dtype=lambda n: kinds[len(n) % 3], lm_head="tied")
    positive(args, tmp, "ok-mixed-dtypes-tied", c1, e, x)
    e, x = model_entries(c1, seed=8, dtype="F16")
    positive(args, tmp, 'ok-name "quoted"', c1, e, x)
    c6 = config(n_layer=1, n_head=1, n_embd=4, n_positions=1, vocab_size=1)
    e, x = model_entries(c6, seed=7)
    positive(args, tmp, "ok-smallest", c6, e, x)


if __name__ == "__main__":
    sys.exit(main())
