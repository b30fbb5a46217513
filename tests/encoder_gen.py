#!/usr/bin/python3
"""encoder_gen.py: a random encoder checkpoint (bert_ref.gen: Hugging Face's published
layout) with a tokenizer beside it, as the model's Hugging Face page ships one, so that
`mhaviz --model DIR` opens the folder:

- bert, distilbert: vocab.txt (tokvocab_check.small_vocab's lines) and
  tokenizer_config.json, no tokenizer.json (BertTokenizer's files); hf/tokenizer.json
  beside them is what Hugging Face's BertConverter makes of the two (for node's
  @huggingface/tokenizers), in a subfolder so the app does not read it;
- roberta: tokenizer.json (tokjson_check.roberta_file: byte-level BPE, <s> ... </s>,
  <mask> with lstrip);
- albert: tokenizer.json (unigram_check.unigram_file: Unigram, [CLS] ... [SEP], [MASK]).

config.json's vocab_size is the tokenizer's size (or vocab, when larger), so every id
has a row.

    write(outdir, typ, vocab=0, **gen_args) -> (config, path of the tokenizer.json HF reads)
    python3 encoder_gen.py OUTDIR TYPE [mlm]"""
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import bert_ref  # noqa: E402
import tokjson_check  # noqa: E402
import tokvocab_check  # noqa: E402
import unigram_check  # noqa: E402

# the words the tests' texts use, so they are whole tokens of every vocabulary
WORDS = ("the", "cat", "sat", "on", "mat", "paris", "is", "capital", "of", "france", "dog",
         "a", "it", "was", "tired", "because")


def write(outdir, typ, vocab=0, **gen_args):
    """vocab: config.json's vocab_size when larger than the tokenizer's (bert-base's 30,522)"""
    os.makedirs(outdir, exist_ok=True)
    least = vocab
    if typ in ("bert", "distilbert"):
        lines = tokvocab_check.small_vocab()
        lines += [w for w in WORDS if w not in set(lines)]
        with open(os.path.join(outdir, "vocab.txt"), "w", encoding="utf-8") as f:
            f.write("\n".join(lines) + "\n")
        cfg = {"do_lower_case": True, "model_max_length": 512}
        with open(os.path.join(outdir, "tokenizer_config.json"), "w") as f:
            json.dump(cfg, f)
        j = tokvocab_check.hf_json(lines, cfg)
        hf = os.path.join(outdir, "hf", "tokenizer.json")
        os.makedirs(os.path.dirname(hf), exist_ok=True)
        vocab = len(lines)
    else:
        j = tokjson_check.roberta_file() if typ == "roberta" else unigram_check.unigram_file(True)
        hf = os.path.join(outdir, "tokenizer.json")
        if typ == "roberta":
            vocab = max(a["id"] for a in j["added_tokens"]) + 1
        else:
            vocab = len(j["model"]["vocab"])
    with open(hf, "w", encoding="utf-8") as f:
        json.dump(j, f, ensure_ascii=False)
    c = bert_ref.gen(outdir, typ=typ, vocab=max(vocab, least), **gen_args)
    return c, hf


if __name__ == "__main__":
    write(sys.argv[1], sys.argv[2], mlm=len(sys.argv) > 3 and sys.argv[3] == "mlm")
