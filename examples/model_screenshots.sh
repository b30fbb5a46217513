#!/bin/sh
# model_screenshots.sh: makes the README's three pictures of a Llama-family layer with
# `mhaviz --export`, on a checkpoint tests/llama_gen.py writes into a temporary folder
# named smollm2-shaped-random-weights (the name the figures' titles show): SmolLM2-135M's
# layer shapes (30 layers, d_model 576, 9 query heads sharing 3 K/V heads, head_dim 64,
# MLP 1536, RoPE theta 100000, BF16) with RANDOM weights (seed 1), the tests' own
# 437-token byte-level tokenizer in place of SmolLM2's 49,152-token one (which cannot be
# fetched here), and an untied output head (with random weights a tied one guesses the
# last token again, 100 %, whatever the attention does). The figures show the structure,
# not anything SmolLM2 has learned. The same bytes on every run.
#   usage: examples/model_screenshots.sh [out-folder] [path/to/mhaviz]
# Needs Debian's python3-numpy (/usr/bin/python3, or MHAVIZ_PYTHON) for llama_gen.py.
set -eu
out=${1:-assets/screenshots}
bin=${2:-$(dirname "$0")/../build/mhaviz}
here=$(dirname "$0")
py=${MHAVIZ_PYTHON:-/usr/bin/python3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
ck="$tmp/smollm2-shaped-random-weights"
"$py" "$here/../tests/llama_gen.py" "$ck" --type llama --layers 30 --hidden 576 --heads 9 \
    --kv-heads 3 --head-dim 64 --ff 1536 --positions 8192 --theta 100000 --tied 0 \
    --dtype BF16 --tokenizer bytelevel --seed 1 >/dev/null
text="The quick brown fox jumps over the lazy dog. The lazy dog"
mkdir -p "$out"

# shot NAME OPTIONS...: layer 12 of the checkpoint on the text, exported to NAME.png
shot() {
    name=$1
    shift
    "$bin" --model "$ck" --text "$text" --layer 12 "$@" --export "$out/$name.png"
    echo "$out/$name.png"
}

shot model-gqa --size 1600x900                       # 9 heads in 3 K/V groups
shot model-rope --panel steps:5:3 --size 1600x600    # head 5's RoPE stage (K/V head 2)
shot model-regroup --kv-heads 1 --size 1600x900      # J J: 3 K/V heads pooled into 1
