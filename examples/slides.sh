#!/bin/sh
# slides.sh: a slide series for one sentence with h = 1, 2, 4, 8 at d_model = 64,
# as PNG (2x, for slides) and PDF (vector), to show how the heads split d_model.
#   usage: examples/slides.sh ["sentence"] [out-folder] [path/to/mhaviz]
set -eu
text=${1:-"The animal didn't cross the street because it was too tired."}
out=${2:-slides}
bin=${3:-$(dirname "$0")/../build/mhaviz}
mkdir -p "$out"
for h in 1 2 4 8; do
    "$bin" --export "$out/h$h.png" --size 1600x900 --scale 2 -H "$h" -d 64 --text "$text"
    "$bin" --export "$out/h$h.pdf" --size 1600x900 -H "$h" -d 64 --text "$text"
    echo "$out/h$h.png $out/h$h.pdf"
done
