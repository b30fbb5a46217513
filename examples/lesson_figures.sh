#!/bin/sh
# lesson_figures.sh: the figures of the README's "The lesson" section, made by
# mhaviz itself: masks, designed heads, a head switched off with the difference
# view, values in the cells, the step-through of one head, temperature.
#   usage: examples/lesson_figures.sh [out-folder] [path/to/mhaviz]
set -eu
out=${1:-lesson}
bin=${2:-$(dirname "$0")/../build/mhaviz}
mkdir -p "$out"
fig() { name=$1; shift; "$bin" --export "$out/$name.png" --size 1600x900 "$@"; echo "$out/$name.png"; }
fig masks --sample 1 -H 4 --mask causal --pad 10
fig designed --sample 2 -H 6 -d 96 --weights patterns
fig ablated --sample 2 -H 4 --ablate 2 --diff
fig values --sample 1 -H 2 --mask causal --values
fig steps --sample 2 -H 4 --mask causal --panel steps:2:5
fig sharp --sample 1 -H 4 --temperature 0.25
fig flat --sample 1 -H 4 --temperature 5
