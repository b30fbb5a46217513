#!/bin/bash
# same_output.sh BIN OUT: renders a fixed set of 20 states (figures in PNG and SVG,
# --dump folders, --train text, figures and dumps) with BIN into the folder OUT, and
# writes OUT/SHA256SUMS. Run it with the binary before and after a refactor, then
# compare the two SHA256SUMS files (`diff A/SHA256SUMS B/SHA256SUMS`): a refactor
# that should change no picture and no number must leave every line equal.
set -euo pipefail
bin=$(realpath "$1")
out=$2
rm -rf "$out"
mkdir -p "$out"
cd "$out"
export OPENBLAS_NUM_THREADS=1
i=0
run() { # name args...: one state, its stdout kept too
    i=$((i + 1))
    local name=$1
    shift
    "$bin" "$@" >"$name.stdout" 2>"$name.stderr"
}
run 01-default --export 01.png
run 02-h1 -H 1 --export 02.png
run 03-h8 -H 8 -d 128 --sample 2 --export 03.svg
run 04-causal-dark --mask causal --theme dark --export 04.png
run 05-noscale-temp --no-scale --temperature 2 --values --export 05.png
run 06-pad-row --pad 16 --contrast row --export 06.png
run 07-ablate-diff --ablate 1,3 --diff --export 07.png
run 08-patterns -H 6 -d 96 --weights patterns --export 08.png
run 09-head --panel head:2 --colormap cividis --export 09.png
run 10-equation --panel equation --export 10.svg
run 11-steps --panel steps:1 --mask causal --export 11.png
run 12-compare --compare h=1 --export 12.png
run 13-portrait --size 1080x1920 --colormap magma --export 13.png
run 14-many -H 64 -d 256 --sample 3 --size 1280x720 --export 14.png
run 15-seed-log -s 7 --contrast log --values --weights patterns --export 15.svg
run 16-dump --dump d16
run 17-dump-masked --mask causal --pad 20 --ablate 2 -H 2 -d 32 --dump d17
run 18-train-pair --train pair --steps 200 -H 2 --export 18.png
run 19-train-induction --train induction --steps 300 --layers 2 --export 19.svg
run 20-train-first --train first --steps 120 --mlp --dump d20
find . -type f ! -name SHA256SUMS ! -name '*.stderr' | sort | xargs sha256sum >SHA256SUMS
echo "same_output: $i states, $(wc -l <SHA256SUMS) files in $out"
