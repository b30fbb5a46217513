#!/bin/sh
# encoder_figures.sh: the README's encoder figures, made by mhaviz itself on a BERT
# checkpoint of random weights that tests/encoder_gen.py writes (12 layers of 12 heads
# at d_model 48, the masked-LM head, a small vocab.txt): a layer with its fill-the-blank
# panel, and the panel alone with every head on and with one head removed. The layout
# and the numbers are the app's; what a trained BERT looks at and puts in the blank is
# not (README, "Encoders in the app").
#   usage: examples/encoder_figures.sh [out-folder] [path/to/mhaviz]
# Needs /usr/bin/python3 with numpy and torch (tests/bert_ref.py writes the weights).
set -eu
out=${1:-encoder}
bin=${2:-$(dirname "$0")/../build/mhaviz}
tests=$(cd "$(dirname "$0")/../tests" && pwd)
mkdir -p "$out"
tmp=$(mktemp -d)
trap 'rm -r "$tmp"' EXIT INT TERM
/usr/bin/python3 -c "import sys; sys.path.insert(0, sys.argv[1]); import encoder_gen
encoder_gen.write(sys.argv[2], 'bert', layers=12, heads=12, hidden=48, ff=64, mlm=True,
                  positions=128)" "$tests" "$tmp/bert-base-shaped"
blank="the cat sat on the [MASK] because it was tired"
fig() { name=$1; shift; "$bin" --model "$tmp/bert-base-shaped" --text "$blank" --export "$out/$name.png" "$@"; echo "$out/$name.png"; }
fig bert-layer --size 1600x900 --layer 9
fig bert-fill --size 800x450 --panel next
fig bert-fill-ablated --size 800x450 --panel next --ablate 12:5
