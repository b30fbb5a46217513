#!/bin/sh
# screenshots.sh: retakes the README's screenshots with mhaviz itself: the window
# under a private Xvfb driven by its keys (xdotool), captured with ImageMagick's
# `import`, and the figures by --export (lesson_figures.sh for the lesson's).
#   usage: examples/screenshots.sh [out-folder] [path/to/mhaviz]
# Needs xvfb, xdotool and imagemagick (the README's test command installs them).
set -eu
out=${1:-assets/screenshots}
bin=${2:-$(dirname "$0")/../build/mhaviz}
here=$(dirname "$0")
mkdir -p "$out"
display=:$((90 + $$ % 9))
Xvfb "$display" -screen 0 3840x2160x24 -nolisten tcp >/dev/null 2>&1 &
xvfb=$!
trap 'kill $xvfb 2>/dev/null' EXIT INT TERM
export DISPLAY="$display"
sleep 1

# shot NAME SIZE KEYS... -- ARGS...: starts the window at SIZE with ARGS, presses
# KEYS (xdotool key names; "move:X,Y" moves the pointer into the window), saves it
shot() {
    name=$1 size=$2
    shift 2
    keys=""
    while [ $# -gt 0 ] && [ "$1" != "--" ]; do keys="$keys $1"; shift; done
    [ $# -gt 0 ] && shift
    "$bin" --size "$size" "$@" >/dev/null 2>&1 &
    app=$!
    win=""
    for _ in $(seq 50); do
        win=$(xdotool search --pid "$app" 2>/dev/null | head -1) && [ -n "$win" ] && break
        sleep 0.1
    done
    xdotool windowmove "$win" 0 0
    xdotool mousemove 3839 2159 # off the window
    sleep 0.5
    [ -n "${MHAVIZ_SHOT_WAIT:-}" ] && sleep 3 # a model read by the window's worker
    for k in $keys; do
        case $k in
        move:*) xy=${k#move:}; xdotool mousemove "${xy%,*}" "${xy#*,}" ;;
        *) xdotool key --window "$win" "$k" ;;
        esac
        sleep 0.3
    done
    sleep 0.8
    import -window "$win" "$out/$name.png"
    kill "$app"
    wait "$app" 2>/dev/null || true
    echo "$out/$name.png"
}

shot default 1600x900 --
shot h1 1600x900 -- -H 1
shot h16 1600x900 -- -H 16
shot focus 1600x900 2 --
shot dark-causal 1600x900 t m --
shot paragraph 1600x900 -- --sample 7
shot present 1600x900 i p move:160,250 -- --sample 2
shot greys 1600x900 c c c -- -H 8 --sample 2
shot portrait 1080x1920 --
shot window-1024 1024x768 --
shot compare 1600x900 b Up Up Up -- -H 1 --sample 2
shot head-view 1600x900 h -- --weights patterns
"$bin" --export "$out/export-h8.png" --size 1600x900 -H 8 -d 128 --sample 1
echo "$out/export-h8.png"
tmp=$(mktemp -d)
"$here/lesson_figures.sh" "$tmp" "$bin" >/dev/null
for f in masks designed ablated values steps; do cp "$tmp/$f.png" "$out/lesson-$f.png"; done
rm -r "$tmp"
echo "$out/lesson-*.png"
"$here/encoder_figures.sh" "$out" "$bin" # a random BERT-shaped checkpoint of its own

# A loaded model, when MHAVIZ_SHOT_MODEL names a checkpoint folder (the README's were
# made on tests/gpt2_gen.py --small-shape, random weights, with GPT-2's own vocab.json
# and merges.txt copied in). The window loads it on a worker: wait for it.
if [ -n "${MHAVIZ_SHOT_MODEL:-}" ]; then
    mary="When Mary and John went to the store, John gave a drink to"
    MHAVIZ_SHOT_WAIT=1 shot model-layer 1600x900 -- --model "$MHAVIZ_SHOT_MODEL" --text "$mary" --layer 10
    MHAVIZ_SHOT_WAIT=1 shot model-overview 1600x900 o -- --model "$MHAVIZ_SHOT_MODEL" --text "$mary"
    MHAVIZ_SHOT_WAIT=1 shot model-resplit 1600x900 Down Down Down -- --model "$MHAVIZ_SHOT_MODEL" --text "$mary" --layer 10
fi

# A Llama-family layer (grouped K/V heads, RoPE, K/V regrouped): figures on a checkpoint
# tests/llama_gen.py writes, SmolLM2-135M's shapes with random weights
"$here/model_screenshots.sh" "$out" "$bin"
