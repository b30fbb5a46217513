#!/bin/bash
# run.sh SECONDS [TARGET...]: builds the libFuzzer targets with clang in build-fuzz/
# (-DMHAVIZ_FUZZ=ON: ASan and UBSan too) and runs each for SECONDS, two at a time,
# from its seed corpus in tests/fuzz/corpus/TARGET/. New inputs collect in
# build-fuzz/corpus/TARGET/, so a later, longer run goes on from there. A finding
# stops that target, prints its report and makes the script exit 1; the input is
# saved as build-fuzz/crashes/TARGET-crash-*.
#   tests/fuzz/run.sh 10                 # each CI target for 10 s (the README's test command)
#   tests/fuzz/run.sh 3600 layout state  # two targets for an hour each
#   tests/fuzz/run.sh replay             # the reproducers in tests/fuzz/crashes/ (see its README)
set -euo pipefail
cd "$(dirname "$0")/../.."

# every target runs in CI, layout_edges (sizes, zooms and models outside the valid
# ranges) too since the layout meets any input
CI_TARGETS=(tok cli npy_read npy_write layout state layout_edges model bpe tokjson shard_index vocab
    lesson)
ALL_TARGETS=("${CI_TARGETS[@]}")
B=build-fuzz

if [ $# -lt 1 ]; then
    echo "usage: tests/fuzz/run.sh SECONDS [TARGET...] | replay" >&2
    exit 2
fi
mode=$1
shift
if [ "$mode" = replay ]; then
    targets=("${ALL_TARGETS[@]}")
elif [[ "$mode" =~ ^[0-9]+$ ]] && [ "$mode" -gt 0 ]; then
    targets=("$@")
    [ ${#targets[@]} -gt 0 ] || targets=("${CI_TARGETS[@]}")
else
    echo "run.sh: SECONDS must be a whole number above 0, got '$mode'" >&2
    exit 2
fi

echo "fuzz: building ${targets[*]} in $B with clang"
mkdir -p "$B/logs"
# -O1 with line tables only (NDEBUG as the Release build has it): a report still names
# each frame's file and line, and the 13 targets build in 35 s instead of 44 (-O2 -g)
CC=clang cmake -S . -B "$B" -DMHAVIZ_FUZZ=ON -DMHAVIZ_TESTS=OFF -DCMAKE_BUILD_TYPE=None \
    -DCMAKE_C_FLAGS="-O1 -gline-tables-only -DNDEBUG" \
    >"$B/logs/configure.log" 2>&1 || { cat "$B/logs/configure.log"; exit 1; }
cmake --build "$B" -j2 --target "${targets[@]/#/fuzz_}" >"$B/logs/build.log" 2>&1 ||
    { tail -40 "$B/logs/build.log"; exit 1; }

export ASAN_OPTIONS=halt_on_error=1:abort_on_error=1:detect_leaks=1
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
export OPENBLAS_NUM_THREADS=1

if [ "$mode" = replay ]; then
    export MHAVIZ_FUZZ_STRICT=1 # the invariants the reproducers break
    status=0
    for f in tests/fuzz/crashes/*--*; do
        [ -e "$f" ] || { echo "fuzz replay: no open finding"; break; }
        t=${f##*/}
        t=${t%%--*}
        if "$B/tests/fuzz/fuzz_$t" "$f" >"$B/logs/replay.log" 2>&1; then
            echo "fuzz replay: $f passes now (fixed?)"
        else
            echo "fuzz replay: $f still fails: $(grep -m1 -E 'runtime error|invariant|ERROR' "$B/logs/replay.log")"
            status=1
        fi
    done
    exit $status
fi

mkdir -p "$B/crashes"
run_one() {
    local t=$1 secs=$2
    mkdir -p "$B/corpus/$t" "tests/fuzz/corpus/$t"
    if "$B/tests/fuzz/fuzz_$t" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 \
        -print_final_stats=1 -artifact_prefix="$B/crashes/$t-" \
        "$B/corpus/$t" "tests/fuzz/corpus/$t" >"$B/logs/$t.log" 2>&1; then
        local runs cov
        runs=$(grep -m1 -oE 'stat::number_of_executed_units: *[0-9]+' "$B/logs/$t.log" | grep -oE '[0-9]+$')
        cov=$(grep -oE 'cov: [0-9]+' "$B/logs/$t.log" | tail -1)
        echo "fuzz $t: ${runs:-?} runs in ${secs} s, ${cov:-cov: ?}, corpus $(ls "$B/corpus/$t" | wc -l) inputs: no finding"
    else
        echo "fuzz $t: FINDING (log $B/logs/$t.log):"
        grep -E 'invariant broken|runtime error|ERROR:|SUMMARY|Test unit written' "$B/logs/$t.log" | head -8
        return 1
    fi
}

echo "fuzz: ${targets[*]}, ${mode} s each, two at a time"
status=0
pids=()
for t in "${targets[@]}"; do
    if [ ${#pids[@]} -ge 2 ]; then
        wait "${pids[0]}" || status=1
        pids=("${pids[@]:1}")
    fi
    run_one "$t" "$mode" &
    pids+=($!)
done
for p in "${pids[@]}"; do wait "$p" || status=1; done
[ $status -eq 0 ] && echo "fuzz: all targets ran without a finding"
exit $status
