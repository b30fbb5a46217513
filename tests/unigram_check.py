#!/usr/bin/python3
"""unigram_check.py BUILD_DIR: the Unigram model of tokenizer.json (src/model/
tokjson_unigram.c) against Hugging Face's @huggingface/tokenizers under node, on files
built here in ALBERT's layout as Hugging Face's AlbertConverter writes it: normalizer Sequence [Replace `` and '' by ",
NFKD, StripAccents, Lowercase, Replace " {2,}" by " "], Metaspace ("▁", always
prepended), Unigram (pieces with log-probabilities, unk_id), [CLS] $A [SEP]. Pieces are
the corpus' words with "▁", their pieces and characters, with scores drawn at random so
that Viterbi's choice is neither the longest nor the shortest match; and a cased variant
without the lowercase and accent steps. (Byte fallback, which Rust's Unigram has, is left
out: node's Unigram ignores the flag.)
tokjson_hard.py's hard and random texts (CJK and emoji mostly unk), with and without the
special tokens. The Precompiled normalizer (tokjson_precompiled.c): a darts-clone trie
built here (charsmap()) of the characters of a pool whose node treatment (node's
Precompiled stands in NFKC and a few control and space rules for the table) changes them,
each mapped to that, in the cased file before its last Replace, on texts of the pool's
characters: the ids must be node's. Then: the file with Metaspace split: true gives the same ids as without
(node's Metaspace never splits; the pieces here never hold "▁" past their first
character, so the two are the same segmentation); a Precompiled table that is not one
(too short, not base64), a Unigram without unk_id, a piece twice and a malformed piece are
refused with one "mhaviz: " line.
Exit 77 without @huggingface/tokenizers (MHAVIZ_HF_TOKENIZERS)."""
import json
import os
import random
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import tokjson_hard  # noqa: E402
from tokjson_check import CORPUS, frame, run_hf  # noqa: E402

FAILS = []
SP = "\u2581"


def check(cond, msg):
    if not cond:
        FAILS.append(msg)
        print("FAIL:", msg)


def unigram_file(lowercase, byte_fallback=False, split=False, seed=5):
    rng = random.Random(seed)
    specials = ["<pad>", "<unk>", "[CLS]", "[SEP]", "[MASK]"]
    pieces = {}
    text = CORPUS.lower() if lowercase else CORPUS
    for w in text.split():
        w = SP + w
        for i in range(len(w)):
            for j in range(i + 1, min(len(w), i + 6) + 1):
                sub = w[i:j]
                if SP in sub[1:] or rng.random() < 0.35:
                    continue
                pieces.setdefault(sub, -rng.uniform(1.0, 4.0) * (1 + 0.3 * len(sub)))
    for ch in set(text) - {" ", "\n", "\t"}:
        pieces.setdefault(ch, -rng.uniform(6.0, 9.0))
    pieces[SP] = -3.0
    vocab = [[s, 0.0] for s in specials] + sorted(pieces.items(), key=lambda kv: kv[1],
                                                    reverse=True)
    if byte_fallback:
        vocab += [[f"<0x{b:02X}>", -20.0] for b in range(256)]
    norms = [{"type": "Replace", "pattern": {"String": "``"}, "content": '"'},
             {"type": "Replace", "pattern": {"String": "''"}, "content": '"'}]
    if lowercase:
        norms += [{"type": "NFKD"}, {"type": "StripAccents"}, {"type": "Lowercase"}]
    norms.append({"type": "Replace", "pattern": {"Regex": " {2,}"}, "content": " "})
    ids = {s: i for i, s in enumerate(specials)}
    added = [{"id": i, "content": s, "single_word": False, "lstrip": False, "rstrip": False,
              "normalized": False, "special": True} for i, s in enumerate(specials)]
    return {"version": "1.0", "added_tokens": added,
            "normalizer": {"type": "Sequence", "normalizers": norms},
            "pre_tokenizer": {"type": "Metaspace", "replacement": SP, "prepend_scheme": "always",
                              "split": split},
            "model": {"type": "Unigram", "unk_id": 1, "vocab": vocab,
                      "byte_fallback": byte_fallback},
            "post_processor": {"type": "TemplateProcessing",
                               "single": [{"SpecialToken": {"id": "[CLS]", "type_id": 0}},
                                          {"Sequence": {"id": "A", "type_id": 0}},
                                          {"SpecialToken": {"id": "[SEP]", "type_id": 0}}],
                               "pair": [], "special_tokens": {
                                   "[CLS]": {"id": "[CLS]", "ids": [ids["[CLS]"]],
                                             "tokens": ["[CLS]"]},
                                   "[SEP]": {"id": "[SEP]", "ids": [ids["[SEP]"]],
                                             "tokens": ["[SEP]"]}}},
            "decoder": {"type": "Metaspace", "replacement": SP, "prepend_scheme": "always"}}


def charsmap(mapping):
    """SentencePiece's precompiled_charsmap of {key: replacement}, base64: a u32 byte size,
    a darts-clone double-array trie (unit: label in bits 0-7, has_leaf bit 8, the offset to
    the node's children in bits 10-30; a leaf unit holds the replacement's offset), then the
    replacements, each NUL-ended"""
    import base64
    import struct
    chars, value = b"", {}
    for k, v in sorted(mapping.items()):
        value[k.encode()] = len(chars)
        chars += v.encode() + b"\0"
    root = {}
    for k, off in value.items():
        node = root
        for b in k:
            node = node.setdefault(b, {})
        node[None] = off
    units, used = {}, {0}

    def place(node):
        labels = sorted(b for b in node if b is not None)
        base = 1
        while True:
            slots = [base ^ c for c in labels] + ([base] if None in node else [])
            if all(x not in used for x in slots):
                break
            base += 1
        used.update(slots)
        if None in node:
            units[base] = node[None] | (1 << 31)
        for c in labels:
            child = node[c]
            off = (base ^ c) ^ place(child)
            assert off < 1 << 21
            units[base ^ c] = c | ((None in child) << 8) | (off << 10)
        return base

    units[0] = place(root) << 10
    arr = [units.get(i, 0) for i in range(max(units) + 1)]
    blob = struct.pack("<I", 4 * len(arr)) + struct.pack(f"<{len(arr)}I", *arr) + chars
    return base64.b64encode(blob).decode()


def node_precompiled(ch):
    """what node's Precompiled does to one character (its stand-in for the table: some
    controls dropped, some spaces made " ", then NFKC)"""
    import re
    import unicodedata
    ch = re.sub("[\u0001-\u0008\u000B\u000E-\u001F\u007F\u008F\u009F]", "", ch)
    ch = re.sub("[\u0009\u000A\u000C\u000D\u00A0\u1680\u2000-\u200F\u2028\u2029\u202F"
                "\u205F\u2581\u3000\uFEFF\uFFFD]", " ", ch)
    return unicodedata.normalize("NFKC", ch)


# characters whose every cluster is one character and whose NFKC needs no neighbour
POOL = ("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 .,!?'-()" * 2 +
        "\ufb01\ufb00\u2460\u00b2\u216b\uff21\uff42\uff11\u00a0\u3000\u2003\u200b"
        "\ufeff\u0007\u001b\u2581\u65e5\u672c\u8a9e\U0001F44D\u00e9\u00fc\u00f1\u2122"
        "\u2026\u00bd\u33a1\t\n")


def precompiled_texts(n, seed):
    rng = random.Random(seed)
    return ["".join(rng.choice(POOL) for _ in range(rng.randint(1, 60))).encode()
            for _ in range(n)] + ["fi ﬁ ﬀ ① ² Ⅻ Ａｂ１ ™ … ½ ㎡".encode()]


def run_c(build, path, texts, special):
    args = [os.path.join(build, "tests", "tokjson_driver"), path] + (["-s"] if special else [])
    r = subprocess.run(args, input=frame(texts), capture_output=True)
    if r.returncode != 0:
        check(False, f"tokjson_driver {path}: exit {r.returncode}: {r.stderr.decode()[:300]}")
        return None
    return [[int(x) for x in line.split()[2:]] for line in r.stdout.decode().splitlines()]


def write(tmp, name, j):
    d = os.path.join(tmp, name)
    os.makedirs(d)
    path = os.path.join(d, "tokenizer.json")
    with open(path, "w") as f:
        json.dump(j, f, ensure_ascii=False)
    return path


def main():
    build = sys.argv[1]
    root = os.environ.get("MHAVIZ_HF_TOKENIZERS", "")
    if not root or not os.path.isdir(os.path.join(root, "node_modules", "@huggingface",
                                                  "tokenizers")):
        print("SKIP: @huggingface/tokenizers not found (MHAVIZ_HF_TOKENIZERS)")
        return 77
    texts = tokjson_hard.texts(300, seed=53)
    texts.append(b"``quoted'' and  spaced   out " * 3)
    with tempfile.TemporaryDirectory() as tmp:
        cases = {"uncased, ALBERT's normalizers": unigram_file(True),
                 "cased": unigram_file(False, seed=6)}
        for name, j in cases.items():
            path = write(tmp, name.replace(" ", "_").replace(",", "").replace("'", ""), j)
            these = [t for t in texts if "Σ".encode() not in t] if "uncased" in name else texts
            for special in (False, True):
                c = run_c(build, path, these, special)
                want = run_hf(path, these, special)
                if c is None:
                    continue
                same = sum(a == b for a, b in zip(c, want)) if len(c) == len(want) else 0
                print(f"{name}{' +special' if special else ''}: {same} / {len(these)} identical")
                check(same == len(these), f"{name}: {len(these) - same} texts differ")
                for t, a, b in [(t, a, b) for t, a, b in zip(these, c, want) if a != b][:3]:
                    print(f"  {t[:60]!r}\n    C:  {a[:30]}\n    HF: {b[:30]}")
        # ALBERT's normalizers with a precompiled table in place of SentencePiece's nmt_nfkc:
        # the pool's characters mapped as node's Precompiled treats them (keep_accents: the
        # table does the work), texts of those characters alone
        table = {ch: node_precompiled(ch) for ch in set(POOL) if node_precompiled(ch) != ch}
        j = unigram_file(False, seed=8)
        j["normalizer"]["normalizers"].insert(2, {"type": "Precompiled",
                                                  "precompiled_charsmap": charsmap(table)})
        path = write(tmp, "precompiled", j)
        ptexts = precompiled_texts(300, 61)
        for special in (False, True):
            c = run_c(build, path, ptexts, special)
            want = run_hf(path, ptexts, special)
            same = sum(a == b for a, b in zip(c, want)) if c and len(c) == len(want) else 0
            print(f"Precompiled ({len(table)} keys){' +special' if special else ''}: "
                  f"{same} / {len(ptexts)} identical")
            check(same == len(ptexts), f"Precompiled: {len(ptexts) - same} texts differ")
            for t, a, b in [(t, a, b) for t, a, b in zip(ptexts, c or [], want) if a != b][:3]:
                print(f"  {t[:60]!r}\n    C:  {a[:30]}\n    HF: {b[:30]}")
        j = unigram_file(True)
        a = run_c(build, write(tmp, "nosplit", j), texts, False)
        j["pre_tokenizer"]["split"] = True
        b = run_c(build, write(tmp, "split", j), texts, False)
        check(a is not None and a == b, "Metaspace split: true changes the ids")
        print(f"Metaspace split true = false: {a == b}")
        hostile = {
            "Precompiled not a table": ({"normalizer": {"type": "Precompiled",
                                                        "precompiled_charsmap": "AA=="}},
                                        "precompiled_charsmap is not a table"),
            "Precompiled not base64": ({"normalizer": {"type": "Precompiled",
                                                       "precompiled_charsmap": "*!*!"}},
                                       "precompiled_charsmap is not a table"),
            "no unk_id": ({"model": {"type": "Unigram", "vocab": [["a", -1.0]]}}, "unk_id"),
            "piece twice": ({"model": {"type": "Unigram", "unk_id": 0,
                                       "vocab": [["a", -1.0], ["a", -2.0]]}}, "twice"),
            "malformed piece": ({"model": {"type": "Unigram", "unk_id": 0,
                                           "vocab": [["a", "x"]]}}, "not [piece, score]"),
        }
        for label, (edit, needle) in hostile.items():
            j = unigram_file(True)
            j.update(edit)
            path = write(tmp, "hostile-" + label.replace(" ", "-"), j)
            r = subprocess.run([os.path.join(build, "tests", "tokjson_driver"), path],
                               input=b"", capture_output=True)
            lines = r.stderr.decode().splitlines()
            print(f"hostile {label}: exit {r.returncode}: {lines[:1]}")
            check(r.returncode == 2 and len(lines) == 1 and lines[0].startswith("mhaviz: ") and
                  needle in lines[0], f"hostile {label}: {r.returncode} {lines}")
    if FAILS:
        print(f"{len(FAILS)} failed")
        return 1
    print("all ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
