#!/usr/bin/python3
"""tokjson_check.py BUILD_DIR [--hf]: builds small tokenizer.json files (byte-level BPE
with Llama 3's Split regex, NFC and a BOS template; byte-level BPE with ByteLevel's own
regex and prefix space, Lowercase; SentencePiece-style BPE with Prepend/Replace, byte
fallback, unk and fuse_unk; Metaspace with NFKC, and splitting; WordPiece with BERT's
normalizer and pre-tokenizer, cased and uncased) with merges trained here, and compares
tokjson_driver's ids on hard and random texts with tokjson_ref.py; with --hf, with
Hugging Face's @huggingface/tokenizers under node instead (exit 77 when
MHAVIZ_HF_TOKENIZERS does not name a folder holding it). Then hostile files: each
refused with one "mhaviz: " line and exit 2, no crash."""
import collections
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tokjson_hard  # noqa: E402
import tokjson_ref  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
LLAMA3 = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}"
          r"| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+")
CORPUS = ("The quick brown fox jumps over the lazy dog. It's 2024 and they're testing "
          "tokenizers: don't stop, we've 12345 numbers!\n\tIndented code() {}\n") * 3 + \
    "日本語のテキスト 中文 한국어 שלום مرحبا café naïve 👍 the then there these those" + \
    " aaa aaa aaa aaaaa !!! ??? ..." * 4  # odd runs: which of two equal pairs merges first


def train(words, n_merges):
    """plain BPE training over words (lists of symbols): the merges and new symbols"""
    words = collections.Counter(tuple(w) for w in words if w)
    merges = []
    for _ in range(n_merges):
        pairs = collections.Counter()
        for w, c in words.items():
            for a, b in zip(w, w[1:]):
                pairs[(a, b)] += c
        if not pairs:
            break
        (a, b), _ = max(pairs.items(), key=lambda kv: (kv[1], kv[0]))
        merges.append((a, b))
        nw = collections.Counter()
        for w, c in words.items():
            out, i = [], 0
            while i < len(w):
                if i + 1 < len(w) and w[i] == a and w[i + 1] == b:
                    out.append(a + b)
                    i += 2
                else:
                    out.append(w[i])
                    i += 1
            nw[tuple(out)] += c
        words = nw
    return merges


def byte_level_file(split, lowercase):
    table = tokjson_ref.BYTES
    vocab = {table[b]: b for b in range(256)}
    import regex
    pat = LLAMA3 if split else tokjson_ref.GPT2
    corpus = CORPUS.lower() if lowercase else CORPUS
    words = ["".join(table[b] for b in m.encode()) for m in regex.findall(pat, corpus)]
    merges = train([list(w) for w in words], 250)
    for a, b in merges:
        vocab.setdefault(a + b, len(vocab))
    # a whole word no merge makes: ignore_merges takes it whole, the merges do not
    vocab.setdefault("".join(table[b] for b in " qwertyuiop".encode()), len(vocab))
    n = len(vocab)
    added = [{"id": n, "content": "<|begin_of_text|>", "special": True},
             {"id": n + 1, "content": "<|endoftext|>", "special": True},
             {"id": n + 2, "content": "<tool>", "special": False, "normalized": False},
             # matched in the normalized text: with Lowercase, <NOTE> and <note> too
             {"id": n + 3, "content": "<Note>", "special": False, "normalized": True}]
    for a in added:
        a.update({"single_word": False, "lstrip": False, "rstrip": False})
        a.setdefault("normalized", False)
    j = {"version": "1.0", "truncation": None, "padding": None, "added_tokens": added,
         "model": {"type": "BPE", "dropout": None, "unk_token": None,
                   "continuing_subword_prefix": None, "end_of_word_suffix": None,
                   "fuse_unk": False, "byte_fallback": False, "ignore_merges": split,
                   "vocab": vocab}}
    if split:
        j["normalizer"] = {"type": "NFC"}
        j["pre_tokenizer"] = {"type": "Sequence", "pretokenizers": [
            {"type": "Split", "pattern": {"Regex": LLAMA3}, "behavior": "Isolated",
             "invert": False},
            {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True,
             "use_regex": False}]}
        j["model"]["merges"] = [[a, b] for a, b in merges]
        j["post_processor"] = {"type": "Sequence", "processors": [
            {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": False,
             "use_regex": True},
            {"type": "TemplateProcessing",
             "single": [{"SpecialToken": {"id": "<|begin_of_text|>", "type_id": 0}},
                        {"Sequence": {"id": "A", "type_id": 0}}],
             "pair": [], "special_tokens": {"<|begin_of_text|>": {
                 "id": "<|begin_of_text|>", "ids": [n], "tokens": ["<|begin_of_text|>"]}}}]}
    else:
        j["normalizer"] = {"type": "Lowercase"}
        j["pre_tokenizer"] = {"type": "ByteLevel", "add_prefix_space": True,
                              "trim_offsets": True, "use_regex": True}
        j["model"]["merges"] = [a + " " + b for a, b in merges]
        j["post_processor"] = None
    j["decoder"] = {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True,
                    "use_regex": True}
    return j


def roberta_file():
    """RoBERTa's, as Hugging Face's RobertaConverter writes it: no normalizer, ByteLevel
    without a prefix space, BPE, <s> <pad> </s> <unk> and <mask> (lstrip) added, and
    RobertaProcessing's <s> ... </s> (node only: tokjson_ref.py has no RobertaProcessing)"""
    j = byte_level_file(False, False)
    n = len(j["model"]["vocab"])
    specials = ["<s>", "<pad>", "</s>", "<unk>", "<mask>"]
    j["added_tokens"] = [{"id": n + i, "content": c, "single_word": False,
                          "lstrip": c == "<mask>", "rstrip": False, "normalized": c != "<mask>",
                          "special": True} for i, c in enumerate(specials)]
    j["normalizer"] = None
    j["pre_tokenizer"] = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True,
                          "use_regex": True}
    j["post_processor"] = {"type": "RobertaProcessing", "sep": ["</s>", n + 2],
                           "cls": ["<s>", n], "trim_offsets": True, "add_prefix_space": False}
    return j


def sentencepiece_file(metaspace, split=False):
    vocab = {"<unk>": 0, "<s>": 1, "</s>": 2}
    for b in range(256):
        vocab["<0x%02X>" % b] = len(vocab)
    text = "\u2581" + CORPUS.replace(" ", "\u2581").replace("👍", "")
    for c in sorted(set(text)):  # one character left to the byte fallback
        vocab.setdefault(c, len(vocab))
    merges = train([list(w) for w in text.split("\n") if w], 250)
    for a, b in merges:
        vocab.setdefault(a + b, len(vocab))
    added = [{"id": i, "content": c, "single_word": False, "lstrip": False, "rstrip": False,
              "normalized": False, "special": True} for c, i in (("<unk>", 0), ("<s>", 1),
                                                                 ("</s>", 2))]
    j = {"version": "1.0", "added_tokens": added,
         "model": {"type": "BPE", "dropout": None, "unk_token": "<unk>",
                   "continuing_subword_prefix": None, "end_of_word_suffix": None,
                   "fuse_unk": True, "byte_fallback": not metaspace, "vocab": vocab,
                   "merges": [a + " " + b for a, b in merges]},
         "post_processor": {"type": "TemplateProcessing",
                            "single": [{"SpecialToken": {"id": "<s>", "type_id": 0}},
                                       {"Sequence": {"id": "A", "type_id": 0}}],
                            "pair": [], "special_tokens": {"<s>": {"id": "<s>", "ids": [1],
                                                                    "tokens": ["<s>"]}}},
         "decoder": {"type": "Sequence", "decoders": [
             {"type": "Replace", "pattern": {"String": "\u2581"}, "content": " "},
             {"type": "ByteFallback"}, {"type": "Fuse"},
             {"type": "Strip", "content": " ", "start": 1, "stop": 0}]}}
    if metaspace:
        j["normalizer"] = {"type": "NFKC"}
        j["pre_tokenizer"] = {"type": "Metaspace", "replacement": "\u2581",
                              "prepend_scheme": "always" if split else "first", "split": split}
    else:
        j["normalizer"] = {"type": "Sequence", "normalizers": [
            {"type": "Prepend", "prepend": "\u2581"},
            {"type": "Replace", "pattern": {"String": " "}, "content": "\u2581"}]}
        j["pre_tokenizer"] = None
    return j


def wordpiece_file(lowercase):
    """BERT's: BertNormalizer, BertPreTokenizer, WordPiece with "##", [CLS] ... [SEP]"""
    specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    vocab = {c: i for i, c in enumerate(specials)}
    norm = {"type": "BertNormalizer", "clean_text": True, "handle_chinese_chars": True,
            "strip_accents": None, "lowercase": lowercase}
    ref = tokjson_ref.Ref({"model": {"type": "WordPiece", "vocab": {}, "unk_token": "[UNK]"},
                           "normalizer": norm, "pre_tokenizer": {"type": "BertPreTokenizer"}})
    words = ref.pretokenize(ref.normalize(CORPUS.replace("👍", "")), True)
    for w in sorted(set(words)):
        vocab.setdefault(w, len(vocab))  # whole words
    for w in sorted(set(words)):  # and their characters, alone and after "##"
        for c in w:
            vocab.setdefault(c, len(vocab))
            vocab.setdefault("##" + c, len(vocab))
    for piece in ("##ing", "##ed", "##s", "##er", "##est", "un", "##able", "the", "##re"):
        vocab.setdefault(piece, len(vocab))
    added = [{"id": vocab[c], "content": c, "single_word": False, "lstrip": False,
              "rstrip": False, "normalized": False, "special": True} for c in specials]
    return {"version": "1.0", "added_tokens": added, "normalizer": norm,
            "pre_tokenizer": {"type": "BertPreTokenizer"},
            "model": {"type": "WordPiece", "unk_token": "[UNK]",
                      "continuing_subword_prefix": "##", "max_input_chars_per_word": 100,
                      "vocab": vocab},
            "post_processor": {"type": "TemplateProcessing",
                               "single": [{"SpecialToken": {"id": "[CLS]", "type_id": 0}},
                                          {"Sequence": {"id": "A", "type_id": 0}},
                                          {"SpecialToken": {"id": "[SEP]", "type_id": 0}}],
                               "pair": [], "special_tokens": {
                                   "[CLS]": {"id": "[CLS]", "ids": [2], "tokens": ["[CLS]"]},
                                   "[SEP]": {"id": "[SEP]", "ids": [3], "tokens": ["[SEP]"]}}},
            "decoder": {"type": "WordPiece", "prefix": "##", "cleanup": True}}


def frame(texts):
    return b"".join(b"%d\n" % len(t) + t for t in texts)


def run_c(build, path, texts, special):
    args = [os.path.join(build, "tests", "tokjson_driver"), path] + (["-s"] if special else [])
    r = subprocess.run(args, input=frame(texts), capture_output=True)
    if r.returncode != 0:
        sys.exit(f"FAIL: tokjson_driver {path}: exit {r.returncode}: {r.stderr.decode()}")
    return [[int(x) for x in line.split()[2:]] for line in r.stdout.decode().splitlines()]


def run_hf(path, texts, special):
    args = ["node", os.path.join(HERE, "tokjson_hf.mjs"), path] + (["-s"] if special else [])
    out = subprocess.run(args, input=frame(texts), capture_output=True, check=True).stdout
    return [[int(x) for x in line.split()] for line in out.decode().splitlines()]


HOSTILE = {
    "broken JSON": '{"model": {"type": "BPE", "vocab": {"a": 0}',
    "not an object": "[1, 2, 3]",
    "unknown model": '{"model": {"type": "WordLevel", "vocab": {"a": 0}}}',
    "Unigram without unk_id": '{"model": {"type": "Unigram", "vocab": [["a", 0.0]]}}',
    "merge of unknown symbol": '{"model": {"type": "BPE", "vocab": {"a": 0, "ab": 1},'
                               ' "merges": ["a b"]}}',
    "merge result missing": '{"model": {"type": "BPE", "vocab": {"a": 0, "b": 1},'
                            ' "merges": [["a", "b"]]}}',
    "merge with two spaces": '{"model": {"type": "BPE", "vocab": {"a": 0}, "merges": ["a a a"]}}',
    "id past range": '{"model": {"type": "BPE", "vocab": {"a": 99999999}, "merges": []}}',
    "negative id": '{"model": {"type": "BPE", "vocab": {"a": -1}, "merges": []}}',
    "two tokens one id": '{"model": {"type": "BPE", "vocab": {"a": 0, "b": 0}, "merges": []}}',
    "added id negative": '{"model": {"type": "BPE", "vocab": {"a": 0}, "merges": []},'
                         ' "added_tokens": [{"id": -5, "content": "<s>"}]}',
    "unk not in vocab": '{"model": {"type": "BPE", "vocab": {"a": 0}, "merges": [],'
                        ' "unk_token": "<unk>"}}',
    "bad regex": '{"model": {"type": "BPE", "vocab": {"a": 0}, "merges": []}, "pre_tokenizer":'
                 ' {"type": "Split", "pattern": {"Regex": "(a"}, "behavior": "Isolated"}}',
    "unknown normalizer": '{"model": {"type": "BPE", "vocab": {"a": 0}, "merges": []},'
                          ' "normalizer": {"type": "Strip"}}',
    "Precompiled without its table": '{"model": {"type": "BPE", "vocab": {"a": 0}, "merges": []},'
                                     ' "normalizer": {"type": "Precompiled"}}',
    "unknown pre-tokenizer": '{"model": {"type": "BPE", "vocab": {"a": 0}, "merges": []},'
                             ' "pre_tokenizer": {"type": "Magic"}}',
    "post id past vocab": '{"model": {"type": "BPE", "vocab": {"a": 0}, "merges": []},'
                          ' "post_processor": {"type": "RobertaProcessing", "cls": ["<s>", 7],'
                          ' "sep": ["</s>", 8]}}',
    "deep sequence": '{"model": {"type": "BPE", "vocab": {"a": 0}, "merges": []},'
                     ' "normalizer": ' + '{"type": "Sequence", "normalizers": [' * 30 +
                     ']}' * 30 + '}',
    "empty file": "",
}


def offsets(build, tmp, texts):
    """byte offsets: on the byte-level file without a normalizer change (the texts that
    NFC leaves as they are, with no added token), the tokens tile the text, each one's
    byte range non-empty (a token holding part of a character too); the BOS an empty
    range at 0"""
    import unicodedata
    path = os.path.join(tmp, "tokenizer.json")
    with open(path, "w") as f:
        json.dump(byte_level_file(True, False), f, ensure_ascii=False)
    plain = [t for t in texts if t and b"<" not in t and unicodedata.is_normalized(
        "NFC", t.decode("utf-8", "replace")) and t.decode("utf-8", "replace").encode() == t]
    args = [os.path.join(build, "tests", "tokjson_driver"), path, "-s", "-o"]
    out = subprocess.run(args, input=frame(plain), capture_output=True, check=True)
    lines = out.stdout.decode().splitlines()
    bad = 0
    for t, o in zip(plain, lines[1::2]):
        r = [tuple(int(x) for x in span.split("-")) for span in o.split()[1:]]
        ok = r[0] == (0, 0) and r[1][0] == 0 and r[-1][1] == len(t) and all(
            a[1] == b[0] and a[0] < a[1] for a, b in zip(r[1:], r[2:]))
        if not ok:
            print(f"FAIL offsets {t[:60]!r}: {r[:12]}")
            bad += 1
    print(f"offsets: {len(plain) - bad} / {len(plain)} texts tiled by their tokens")
    return bad


def hostile_runs(build, tmp):
    """files a tokenizer may take but whose texts are hard: each run ends by itself with
    exit 0 (or 3, the driver's word for an encode that returned -1, as a regex past
    PCRE2's match limit does), never a signal (a sanitizer's report aborts)"""
    byte_vocab = {"<unk>": 0, **{"<0x%02X>" % b: b + 1 for b in range(256)}}
    cases = [
        ("a long prefix with byte fallback, every character missing",
         {"model": {"type": "BPE", "vocab": byte_vocab, "merges": [], "unk_token": "<unk>",
                    "byte_fallback": True, "continuing_subword_prefix": "#" * 10}},
         b"x" * 3000),
        ("a prefix past the lookup's room",
         {"model": {"type": "BPE", "vocab": byte_vocab, "merges": [], "unk_token": "<unk>",
                    "byte_fallback": True, "continuing_subword_prefix": "#" * 200}},
         b"xyz" * 100),
        ("WordPiece without a word limit, a 200 kB word",
         {"model": {"type": "WordPiece", "unk_token": "[UNK]", "max_input_chars_per_word": 10**9,
                    "vocab": {"[UNK]": 0, "a": 1, "##a": 2, "aa": 3, "##aa": 4}},
          "pre_tokenizer": {"type": "BertPreTokenizer"}}, b"a" * 200000 + b"b"),
        ("a regex that backtracks without end",
         {"model": {"type": "BPE", "vocab": {c: i for i, c in enumerate("ab")}, "merges": []},
          "pre_tokenizer": {"type": "Split", "pattern": {"Regex": "(a+)+$"},
                            "behavior": "Isolated"}}, b"a" * 40 + b"b"),
    ]
    bad = 0
    for name, j, text in cases:
        path = os.path.join(tmp, "hostile.json")
        with open(path, "w") as f:
            json.dump(j, f)
        r = subprocess.run([os.path.join(build, "tests", "tokjson_driver"), path],
                           input=frame([text]), capture_output=True, timeout=120)
        if r.returncode not in (0, 3):
            print(f"FAIL hostile run {name}: exit {r.returncode}: {r.stderr.decode()[:300]}")
            bad += 1
    print(f"hostile runs: {len(cases) - bad} / {len(cases)} ended by themselves")
    return bad


def hostile(build, tmp):
    bad = 0
    for name, text in HOSTILE.items():
        path = os.path.join(tmp, "hostile.json")
        with open(path, "w") as f:
            f.write(text)
        r = subprocess.run([os.path.join(build, "tests", "tokjson_driver"), path],
                           input=b"1\na", capture_output=True)
        lines = r.stderr.decode().splitlines()
        ok = r.returncode == 2 and len(lines) == 1 and lines[0].startswith("mhaviz: ")
        if not ok:
            print(f"FAIL hostile {name}: exit {r.returncode}, stderr {lines!r}")
            bad += 1
    print(f"hostile files: {len(HOSTILE) - bad} / {len(HOSTILE)} refused with one line")
    return bad


def main():
    build, use_hf = sys.argv[1], "--hf" in sys.argv
    if use_hf:
        root = os.environ.get("MHAVIZ_HF_TOKENIZERS", "")
        lib = os.path.join(root, "node_modules", "@huggingface", "tokenizers")
        if not root or not os.path.isdir(lib):
            print("SKIP: @huggingface/tokenizers not found (set MHAVIZ_HF_TOKENIZERS to the "
                  "folder holding node_modules/@huggingface/tokenizers)")
            return 77
    texts = tokjson_hard.texts(400, seed=31)
    texts.append(("long" * 20000).encode())  # one 80 kB piece: the heap's merges
    bad = 0
    with tempfile.TemporaryDirectory() as tmp:
        files = {"byte-level + Llama 3 Split, NFC, BOS": byte_level_file(True, False),
                 "byte-level + prefix space, Lowercase": byte_level_file(False, True),
                 "SentencePiece-style, byte fallback": sentencepiece_file(False),
                 "Metaspace, NFKC, unk fused": sentencepiece_file(True),
                 "Metaspace split, always": sentencepiece_file(True, True),
                 "WordPiece, BERT uncased": wordpiece_file(True),
                 "WordPiece, BERT cased": wordpiece_file(False)}
        if use_hf:
            files["byte-level, RoBERTa's <s> ... </s> and <mask>"] = roberta_file()
        for name, j in files.items():
            if use_hf and name == "Metaspace split, always":
                # node's Metaspace never splits on the replacement (Rust's split: true)
                print(f"{name}: left out (node's Metaspace does not split)")
                continue
            path = os.path.join(tmp, "tokenizer.json")
            with open(path, "w") as f:
                json.dump(j, f, ensure_ascii=False)
            these = texts
            if "RoBERTa" in name:  # <mask> takes the space before it (lstrip)
                these = texts + [b"The capital of France is <mask>.", b"a <mask><mask>  <mask> b",
                                 b"<s>x</s> <mask>", b"  <mask>"]
            if use_hf and j["normalizer"] and (j["normalizer"]["type"] == "Lowercase" or
                           j["normalizer"].get("lowercase") is True):
                # node's toLowerCase gives a final sigma (Σ -> ς at a word's end); Rust's
                # Lowercase maps each character alone (Σ -> σ), as tokjson and the reference
                these = [t for t in texts if "Σ".encode() not in t]
                print(f"{name}: {len(texts) - len(these)} texts with Σ left out (node's final sigma)")
            for special in (False, True):
                c = run_c(build, path, these, special)
                if use_hf:
                    want = run_hf(path, these, special)
                else:
                    ref = tokjson_ref.Ref(j)
                    want = [ref.encode(t, special) for t in these]
                same = sum(a == b for a, b in zip(c, want)) if len(c) == len(want) else 0
                print(f"{name}{' +special' if special else ''}: {same} / {len(these)} identical")
                for t, a, b in [(t, a, b) for t, a, b in zip(these, c, want) if a != b][:3]:
                    print(f"  FAIL {t[:80]!r}\n    C:   {a[:40]}\n    ref: {b[:40]}")
                bad += len(these) - same
        if not use_hf:
            bad += offsets(build, tmp, texts)
            bad += hostile(build, tmp)
            bad += hostile_runs(build, tmp)
    print("PASS" if not bad else f"FAIL: {bad} disagreements")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
