#!/usr/bin/env python3
"""file_cycles.py: which source files call each other, and which headers include upwards.

    tests/file_cycles.py BUILD_DIR [--src SRC_DIR] [--under src/app] [--data]

Calls: for every object file built from SRC_DIR (BUILD_DIR/CMakeFiles/*.dir/src/...),
`nm` gives its defined functions (T) and the symbols it leaves undefined (U); file A
calls file B when one of A's U is one of B's T (--data also counts defined data, D B R
C, as something to call). Prints every pair that calls both ways (A <-> B) and every
longer cycle (A -> B -> C -> A), found in the strongly connected parts of the graph.

Headers: every #include "..." under SRC_DIR, each header given a layer below
(core at the bottom, the command line at the top). An include of a higher layer is
listed as upward, as is an include between headers that include each other; a header
in src/app that the table below does not place is listed as unplaced.

Exits 1 if any cycle or upward include was found (restricted to --under when given),
0 otherwise. Needs binutils' nm.
"""
import argparse
import os
import re
import subprocess
import sys

# The layers, bottom first. A file may include its own layer or lower ones. A .c file
# is in the layer of the header with its name (cli.c: cli.h), else of its folder;
# src/app's headers are placed one by one: a new one must be added here.
LAYERS = [
    ("core", ["src/core/"]),
    ("io, learn, model, view", ["src/io/", "src/learn/", "src/model/", "src/view/"]),
    ("backend", ["src/backend/"]),
    ("options (plain data)", ["src/app/options.h"]),
    ("values (the option values' grammar)", ["src/app/values.h"]),
    ("state machine", ["src/app/state/"]),
    ("jobs", ["src/app/jobs/"]),
    ("modes", ["src/app/modes/"]),
    ("command line", ["src/app/cli.h", "src/app/cli_internal.h", "src/app/cli", "src/app/main.c"]),
]
# every file is placed by its folder (or, for the command line, its name)
C_HOME = {}


def layer_of(path):
    """The layer index of a file (relative to the project), or None when unplaced."""
    for i, (_, members) in enumerate(LAYERS):
        for m in members:
            if path == m or ((m.endswith("/") or m.endswith("/cli")) and path.startswith(m)):
                return i
    if path.startswith("src/app/"):
        if path in C_HOME:
            return layer_of(C_HOME[path])
        if path.endswith(".c"):
            stem = path[:-2]
            prefix = os.path.join(os.path.dirname(stem), os.path.basename(stem).split("_")[0])
            for h in (stem + ".h", stem + "_internal.h", prefix + "_internal.h", prefix + ".h"):
                if any(h in members for _, members in LAYERS):
                    return layer_of(h)
    return None


# --- symbols -------------------------------------------------------------------------

def objects(build, under_src):
    """{source path relative to the project: [object files]} for src/ objects of build."""
    out = {}
    root = os.path.join(build, "CMakeFiles")
    for d in sorted(os.listdir(root)) if os.path.isdir(root) else []:
        top = os.path.join(root, d)
        if not d.endswith(".dir"):
            continue
        for dirpath, _, files in os.walk(top):
            for f in files:
                if not f.endswith(".c.o"):
                    continue
                rel = os.path.relpath(os.path.join(dirpath, f[:-2]), top)
                if rel.startswith(under_src + os.sep) or rel.startswith(under_src + "/"):
                    out.setdefault(rel, []).append(os.path.join(dirpath, f))
    return out


def symbols(obj, data):
    """(defined, undefined) global symbol names of one object file."""
    text = subprocess.run(["nm", "-P", obj], check=True, capture_output=True, text=True).stdout
    defined, undefined = set(), set()
    kinds = "TDBRCVW" if data else "TW"
    for line in text.splitlines():
        parts = line.split()
        if len(parts) < 2:
            continue
        name, kind = parts[0], parts[1]
        if kind == "U":
            undefined.add(name)
        elif kind in kinds:
            defined.add(name)
    return defined, undefined


def call_graph(objs, data):
    """{file: {file it calls: [symbols]}} over the files of objs."""
    defs, undefs = {}, {}
    for src, paths in objs.items():
        d, u = set(), set()
        for p in paths:
            pd, pu = symbols(p, data)
            d |= pd
            u |= pu
        defs[src], undefs[src] = d, u - d
    owner = {}
    for src, d in defs.items():
        for name in d:
            owner.setdefault(name, src)
    graph = {src: {} for src in objs}
    for src, u in undefs.items():
        for name in sorted(u):
            dst = owner.get(name)
            if dst and dst != src:
                graph[src].setdefault(dst, []).append(name)
    return graph


def strongly_connected(graph):
    """Tarjan's strongly connected components with more than one node, each sorted."""
    index, low, on, stack, out = {}, {}, set(), [], []
    counter = [0]
    sys.setrecursionlimit(10000)

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(out)


def simple_cycles(graph, comp, limit):
    """Every elementary cycle of length >= 3 inside comp (each once, starting at its
    smallest file), at most limit of them; returns (cycles, truncated)."""
    nodes = sorted(comp)
    cycles = []
    for i, start in enumerate(nodes):
        allowed = set(nodes[i:])
        path, seen = [start], {start}

        def walk(v):
            for w in sorted(graph[v]):
                if w not in allowed:
                    continue
                if w == start and len(path) >= 3:
                    cycles.append(list(path))
                    if len(cycles) >= limit:
                        return True
                elif w not in seen:
                    seen.add(w)
                    path.append(w)
                    if walk(w):
                        return True
                    path.pop()
                    seen.discard(w)
            return False

        if walk(start):
            return cycles, True
    return cycles, False


# --- headers -------------------------------------------------------------------------

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def include_graph(project, src):
    """{file: [included files]}, both relative to project, for every .c and .h of src."""
    files = {}
    for dirpath, _, names in os.walk(os.path.join(project, src)):
        for n in names:
            if n.endswith((".c", ".h")):
                rel = os.path.relpath(os.path.join(dirpath, n), project)
                files[n] = files.get(n, []) + [rel]
    graph = {}
    for paths in files.values():
        for rel in paths:
            with open(os.path.join(project, rel), encoding="utf-8", errors="replace") as f:
                text = f.read()
            out = []
            for inc in INCLUDE.findall(text):
                here = os.path.join(os.path.dirname(rel), inc)
                if os.path.exists(os.path.join(project, here)):
                    out.append(os.path.normpath(here))
                elif os.path.basename(inc) in files:
                    out.append(files[os.path.basename(inc)][0])
            graph[rel] = out
    return graph


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("build", help="a CMake build folder of the project")
    ap.add_argument("--src", default="src", help="the sources, relative to the project")
    ap.add_argument("--under", default=None,
                    help="fail only for cycles and includes touching this folder (e.g. src/app)")
    ap.add_argument("--data", action="store_true", help="count data symbols as well")
    ap.add_argument("--limit", type=int, default=200, help="longer cycles listed per group")
    args = ap.parse_args()
    project = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

    def counts(*paths):
        return args.under is None or any(p.startswith(args.under.rstrip("/") + "/") for p in paths)

    bad = 0
    graph = call_graph(objects(args.build, args.src), args.data)
    print(f"calls: {len(graph)} files, {sum(len(v) for v in graph.values())} file-to-file calls")

    pairs = []
    for a in sorted(graph):
        for b in sorted(graph[a]):
            if a < b and a in graph[b]:
                pairs.append((a, b))
    print(f"\nfiles that call each other ({len(pairs)}):")
    for a, b in pairs:
        print(f"  {a} <-> {b}")
        print(f"      {a} calls {', '.join(graph[a][b])}")
        print(f"      {b} calls {', '.join(graph[b][a])}")
        bad += counts(a, b)

    comps = strongly_connected(graph)
    print(f"\ngroups of files in a cycle ({len(comps)}):")
    for comp in comps:
        print(f"  {len(comp)} files: {' '.join(comp)}")
    for comp in comps:
        cycles, truncated = simple_cycles(graph, comp, args.limit)
        more = f", the first {args.limit}" if truncated else ""
        print(f"\nlonger cycles in the group of {comp[0]} ({len(cycles)}{more}):")
        for c in cycles:
            print("  " + " -> ".join(c + [c[0]]))
            bad += counts(*c)

    inc = include_graph(project, args.src)
    headers = {f: v for f, v in inc.items() if f.endswith(".h")}
    print("\nheaders and what they include:")
    for h in sorted(headers):
        if headers[h]:
            print(f"  {h}: {' '.join(headers[h])}")
    upward, unplaced = [], set()
    for f in sorted(inc):
        lf = layer_of(f)
        if lf is None:
            unplaced.add(f)
        for g in inc[f]:
            lg = layer_of(g)
            if lg is None:
                unplaced.add(g)
            if lf is not None and lg is not None and lg > lf:
                upward.append(f"{f} ({LAYERS[lf][0]}) includes {g} ({LAYERS[lg][0]})")
            elif f.endswith(".h") and f in inc.get(g, []) and f < g:
                upward.append(f"{f} and {g} include each other")
    print(f"\nupward includes ({len(upward)}):")
    for u in upward:
        print("  " + u)
        bad += counts(*re.findall(r"src/\S+", u))
    unplaced = sorted(u for u in unplaced if u.startswith("src/app/"))
    if unplaced:
        print(f"\nunplaced in the layer table of {os.path.basename(__file__)} ({len(unplaced)}):")
        for u in unplaced:
            print("  " + u)
            bad += counts(u)
    print(f"\n{'FAIL' if bad else 'ok'}: {bad} finding(s)" + (f" under {args.under}" if args.under else ""))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
