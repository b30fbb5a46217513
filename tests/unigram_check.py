#!/usr/bin/python3
"""unigram_check.py BUILD_DIR: the Unigram model of tokenizer.json (src/model/
tokjson_unigram.c) against Hugging Face's @huggingface/tokenizers under node, on files
built here in ALBERT's layout as Hugging Face's AlbertConverter writes it, less its
Precompiled table (refused: see below): normalizer Sequence [Replace `` and '' by ",
NFKD, StripAccents, Lowercase, Replace " {2,}" by " "], Metaspace ("▁", always
prepended), Unigram (pieces with log-probabilities, unk_id), [CLS] $A [SEP]. Pieces are
the corpus' words with "▁", their pieces and characters, with scores drawn at random so
that Viterbi's choice is neither the longest nor the shortest match; and a cased variant
without the lowercase and accent steps. (Byte fallback, which Rust's Unigram has, is left
out: node's Unigram ignores the flag.)
tokjson_hard.py's hard and random texts (CJK and emoji mostly unk), with and without the
special tokens. Then: the file with Metaspace split: true gives the same ids as without
(node's Metaspace never splits; the pieces here never hold "▁" past their first
character, so the two are the same segmentation); a Precompiled normalizer, a Unigram
without unk_id, a piece twice and a malformed piece are refused with one "mhaviz: " line.
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
        j = unigram_file(True)
        a = run_c(build, write(tmp, "nosplit", j), texts, False)
        j["pre_tokenizer"]["split"] = True
        b = run_c(build, write(tmp, "split", j), texts, False)
        check(a is not None and a == b, "Metaspace split: true changes the ids")
        print(f"Metaspace split true = false: {a == b}")
        hostile = {
            "Precompiled": ({"normalizer": {"type": "Precompiled", "precompiled_charsmap": "AA=="}},
                            "Precompiled\" is not supported"),
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
