#!/usr/bin/python3
"""bench_check.py MHAVIZ BENCH_PLOT: the output of `mhaviz --bench-json --bench-quick`.

A smoke test of the format, not of the speed: the run must exit 0 with nothing
on stderr; every line of stdout must parse as one JSON object with a "case"; every
case the README's Performance section lists must be there (sgemm; forward at the
seven shapes; frame at three; hover; update; h_step; export as png, svg and pdf; rss;
train_step; train_step_big on 1 thread; sweep_cards) with its fields; every number positive
and finite. `--bench --bench-quick` must
print its table (no JSON) and exit 0 too. examples/bench_plot.py must turn the
JSON into an SVG that parses, with one point per forward shape in each panel.
Exits 1 with "expected X, got Y" lines on any failure."""
import json
import math
import subprocess
import sys
import xml.etree.ElementTree as ET

FAILURES = []


def fail(where, expected, got):
    FAILURES.append(where)
    print(f"FAIL {where}: expected {expected}, got {got}", file=sys.stderr)


FORWARD_SHAPES = [(8, 64, 4), (12, 64, 4), (16, 128, 8), (64, 256, 8), (128, 512, 8),
                  (256, 512, 16), (512, 1024, 16)]
FRAME_SHAPES = [(4, 12), (16, 64), (16, 256)]  # (h, n)

# (case, the fields that pick one line, the numbers it must have)
EXPECTED = [("sgemm", {"m": 1024}, ["gflops", "threads"])]
EXPECTED += [("forward", {"n": n, "d_model": d, "h": h}, ["median_us", "p95_us", "gflops"])
             for n, d, h in FORWARD_SHAPES]
EXPECTED += [("frame", {"width": 1920, "height": 1080, "h": h, "n": n}, ["median_ms"])
             for h, n in FRAME_SHAPES]
EXPECTED += [("hover", {"width": 1920, "height": 1080, "h": 8, "n": 7, "d_model": 4096},
              ["median_ms"])]
EXPECTED += [("update", {"h": 8, "n": 16, "d_model": 128}, ["median_ms"]),
             ("h_step", {"d_model": 4096, "n": 7}, ["median_ms"])]
EXPECTED += [("export", {"format": f, "width": 3840, "height": 2160}, ["ms"])
             for f in ("png", "svg", "pdf")]
EXPECTED += [("rss", {"n": 512, "d_model": 1024, "h": 16}, ["peak_mb"])]
EXPECTED += [("train_step", {"task": "pair", "d_model": 32, "h": 4}, ["median_us", "p95_us"])]
# on 1 thread here (the tests' OPENBLAS_NUM_THREADS=1); on 1 and 2 when mhaviz chooses
EXPECTED += [("train_step_big", {"d_model": 128, "h": 8, "T": 64, "layers": 2, "mlp": 1,
                                 "batch": 32, "threads": 1}, ["median_us", "p95_us", "cpu_us"])]
EXPECTED += [("sweep_cards", {"d_model": 16, "seeds": 3, "runs": 15}, ["median_s", "steps"])]


def positive_numbers(where, obj):
    for key, value in obj.items():
        if isinstance(value, bool):
            fail(f"{where}.{key}", "a number or a string", "a boolean")
        elif isinstance(value, (int, float)):
            if not (math.isfinite(value) and value > 0):
                fail(f"{where}.{key}", "a positive finite number", value)
        elif not isinstance(value, str) or not value:
            fail(f"{where}.{key}", "a number or a non-empty string", repr(value))


def check_json(mhaviz):
    r = subprocess.run([mhaviz, "--bench-json", "--bench-quick"], capture_output=True,
                       timeout=600)
    if r.returncode != 0:
        fail("--bench-json --bench-quick exit status", 0, f"{r.returncode} ({r.stderr!r})")
    if r.stderr:
        fail("--bench-json --bench-quick stderr", "nothing", repr(r.stderr[:300]))
    lines = r.stdout.decode("utf-8").splitlines()
    records = []
    for i, line in enumerate(lines):
        try:
            obj = json.loads(line)
        except ValueError as e:
            fail(f"line {i + 1}", "one JSON object", f"{line!r} ({e})")
            continue
        if not isinstance(obj, dict) or not isinstance(obj.get("case"), str):
            fail(f"line {i + 1}", 'an object with a "case" string', line)
            continue
        positive_numbers(f"line {i + 1} ({obj['case']})", obj)
        records.append(obj)
    for case, keys, numbers in EXPECTED:
        where = f"{case} {keys}"
        found = [o for o in records
                 if o["case"] == case and all(o.get(k) == v for k, v in keys.items())]
        if len(found) != 1:
            fail(where, "exactly one line", len(found))
            continue
        for field in numbers:
            if not isinstance(found[0].get(field), (int, float)):
                fail(f"{where}.{field}", "a number", found[0].get(field))
    sgemm = [o for o in records if o["case"] == "sgemm"]
    if sgemm and not isinstance(sgemm[0].get("core"), str):
        fail("sgemm.core", "the OpenBLAS core name", sgemm[0].get("core"))
    known = {case for case, _, _ in EXPECTED}
    for o in records:
        if o["case"] not in known:
            fail(f"case {o['case']!r}", f"one of {sorted(known)}", o["case"])
    return len(records), r.stdout


def check_plot(plot_script, jsonl):
    r = subprocess.run([sys.executable, plot_script], input=jsonl, capture_output=True,
                       timeout=60)
    if r.returncode != 0:
        fail("bench_plot.py exit status", 0, f"{r.returncode} ({r.stderr!r})")
        return
    try:
        root = ET.fromstring(r.stdout)
    except ET.ParseError as e:
        fail("bench_plot.py output", "an SVG that parses", e)
        return
    if not root.tag.endswith("svg"):
        fail("bench_plot.py root element", "svg", root.tag)
    circles = [e for e in root.iter() if e.tag.endswith("circle")]
    if len(circles) != 2 * len(FORWARD_SHAPES):
        fail("bench_plot.py points", 2 * len(FORWARD_SHAPES), len(circles))


def check_table(mhaviz):
    r = subprocess.run([mhaviz, "--bench", "--bench-quick"], capture_output=True, timeout=600)
    out = r.stdout.decode("utf-8")
    if r.returncode != 0:
        fail("--bench --bench-quick exit status", 0, f"{r.returncode} ({r.stderr!r})")
    if any(line.startswith("{") for line in out.splitlines()):
        fail("--bench table", "no JSON lines", "a line starting with {")
    for word in ("sgemm", "forward", "frame", "hover", "update", "h_step", "png", "svg", "pdf",
                 "peak memory"):
        if word not in out:
            fail(f"--bench table mentions {word!r}", "present", "absent")


def check_model(mhaviz):
    """--bench-json --bench-quick --model DIR on a small generated checkpoint: sgemm
    and the model's cases (model_load, model_forward at n 64 and 256, or the most the
    model holds, model_resplit, the edits at n 64, 256 and the model's 300 positions
    with the whole forward beside them (model_edit_append, model_edit_middle,
    model_ablate in layers 1 and 2, model_generate), model_rss, the window's changes
    into its second run (model_window_ablate in layers 1 and 2, model_window_layer,
    model_window_resplit, each with catch_up_ms and full_ms) with their fields, and a
    missing folder
    one mhaviz: line, exit 1."""
    import os
    import tempfile
    here = os.path.dirname(os.path.abspath(__file__))
    with tempfile.TemporaryDirectory() as tmp:
        ckpt = os.path.join(tmp, "tiny")
        subprocess.run([sys.executable, os.path.join(here, "gpt2_gen.py"), ckpt, "--layers", "2",
                        "--heads", "4", "--embd", "32", "--positions", "300", "--merges", "100"],
                       check=True, capture_output=True, timeout=300)
        r = subprocess.run([mhaviz, "--bench-json", "--bench-quick", "--model", ckpt],
                           capture_output=True, text=True, timeout=600)
        if r.returncode != 0 or r.stderr:
            fail("--bench --model exit status and stderr", "0 and nothing",
                 f"{r.returncode} ({r.stderr[:300]!r})")
            return
        lines = [json.loads(x) for x in r.stdout.splitlines()]
        want = [("sgemm", {}, ["gflops"]),
                ("model_load", {"n_layer": 2, "d_model": 32}, ["median_ms", "file_mb"]),
                ("model_forward", {"n": 64, "n_layer": 2, "h": 4}, ["median_ms", "p95_ms"]),
                ("model_forward", {"n": 256, "n_layer": 2, "h": 4}, ["median_ms", "p95_ms"]),
                ("model_resplit", {"h": 4, "h2": 2, "n": 64}, ["median_ms"]),
                ("model_edit_append", {"n": 64}, ["median_ms", "full_ms"]),
                ("model_edit_append", {"n": 256}, ["median_ms", "full_ms"]),
                ("model_edit_append", {"n": 300}, ["median_ms", "full_ms"]),
                ("model_edit_middle", {"n": 64}, ["median_ms", "full_ms"]),
                ("model_edit_middle", {"n": 256}, ["median_ms", "full_ms"]),
                ("model_edit_middle", {"n": 300}, ["median_ms", "full_ms"]),
                ("model_ablate", {"n": 256, "layer": 1}, ["median_ms", "full_ms"]),
                ("model_ablate", {"n": 256, "layer": 2}, ["median_ms", "full_ms"]),
                ("model_generate", {"n": 256}, ["tokens_per_s", "full_tokens_per_s"]),
                ("model_rss", {"n_max": 300}, ["peak_mb", "file_mb"]),
                ("model_window_ablate", {"n": 256, "layer": 1},
                 ["median_ms", "catch_up_ms", "full_ms"]),
                ("model_window_ablate", {"n": 256, "layer": 2},
                 ["median_ms", "catch_up_ms", "full_ms"]),
                ("model_window_layer", {"n": 256}, ["median_ms", "catch_up_ms", "full_ms"]),
                ("model_window_resplit", {"n": 256, "h2": 2},
                 ["median_ms", "catch_up_ms", "full_ms"])]
        for case, pick, nums in want:
            got = [x for x in lines if x.get("case") == case and
                   all(x.get(k) == v for k, v in pick.items())]
            if len(got) != 1:
                fail(f"--bench --model case {case} {pick}", "one line", len(got))
                continue
            positive_numbers(f"{case} {pick}", {k: got[0].get(k) for k in nums})
        r = subprocess.run([mhaviz, "--bench-json", "--bench-quick", "--model",
                            os.path.join(tmp, "missing")], capture_output=True, text=True,
                           timeout=60)
        err = r.stderr.splitlines()
        if r.returncode != 1 or len(err) != 1 or not err[0].startswith("mhaviz: "):
            fail("--bench --model on a missing folder", "exit 1, one mhaviz: line",
                 f"{r.returncode} {err!r}")


def main():
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    count, jsonl = check_json(sys.argv[1])
    check_plot(sys.argv[2], jsonl)
    check_table(sys.argv[1])
    check_model(sys.argv[1])
    if FAILURES:
        return 1
    print(f"bench_check: {count} JSON lines, every case and field present; plot and table OK")
    return 0


if __name__ == "__main__":
    sys.exit(main())
