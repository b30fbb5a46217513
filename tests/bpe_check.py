"""bpe_check.py BUILD_DIR: src/model/bpe.c (through tests/bpe_driver) against
tests/bpe_ref.py, the independent Python reference (encoder.py's semantics, the
regex module). Trains a small vocabulary on a generated mixed corpus, then checks
on thousands of texts (contractions, white space runs, digits, punctuation, accents
NFC and NFD, CJK, emoji sequences, right-to-left scripts, combining marks, invalid
UTF-8, NUL bytes, seeded random strings):
  - the ids, and the "replaced" flag (Python's decode fails);
  - the tokens' bytes joined: the input (valid UTF-8) or Python's
    decode('utf-8', 'replace') of it;
  - each label, against the rules of bpe.h written again here;
then hostile vocab.json / merges.txt files: exit 1 or 2 and one "mhaviz: " line."""

import os
import random
import subprocess
import sys
import tempfile
import unicodedata

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bpe_ref  # noqa: E402

BUILD = sys.argv[1] if len(sys.argv) > 1 else "build"
DRIVER = os.path.join(BUILD, "tests", "bpe_driver")
failures = []


def fail(msg):
    failures.append(msg)
    if len(failures) <= 30:
        print("FAIL:", msg)


# ---- a corpus and a vocabulary -------------------------------------------------------

WORDS_EN = (
    "the of and to in is that it was for on are as with his they at be this from have "
    "or by one had not but what all were when we there can an your which their said if "
    "do will each about how up out them then she many some so these would other into "
    "has more her two like him see time could no make than first been its who now people"
).split()
WORDS_ACC = "café naïve résumé über straße fiancée jalapeño año coração ça façade Ærø".split()
WORDS_CJK = ["東京", "日本語", "中文", "汉字", "漢字", "こんにちは", "カタカナ", "한국어", "서울"]
WORDS_RTL = ["مرحبا", "بالعالم", "العربية", "שלום", "עולם", "עברית"]
WORDS_MISC = ["1234", "3.14", "2024", "42", "'s", "'t", "'re", "'ll", "!!", "...", "--", "😀",
              "👍🏽", "ÿ", "€", "—", "«", "»", "\n", "\n\n", "  ", "\t"]


def corpus(rng, n):
    pools = [WORDS_EN] * 6 + [WORDS_ACC, WORDS_CJK, WORDS_RTL, WORDS_MISC]
    texts = []
    for _ in range(n):
        words = []
        for _ in range(rng.randint(5, 40)):
            w = rng.choice(rng.choice(pools))
            if rng.random() < 0.1:
                w = w.capitalize()
            words.append(w)
        texts.append(" ".join(words) + rng.choice([".", "!", "?", "\n", " it's done.", ""]))
    return texts


def nfd(s):
    return unicodedata.normalize("NFD", s)


# ---- texts to check ------------------------------------------------------------------

FIXED = [
    # contractions, in case and not, curly apostrophes
    "I'm sure you're right, they've said we'll see; he'd know, it's John's.",
    "IT'S I'M YOU'RE THEY'VE WE'LL HE'D DON'T John'S",
    "she’s we’re it’ll ’s ’t 's't 're've'm'll'd ''s ' '' ''' rock'n'roll 'x 'S",
    " 's  't\n'd",
    # runs of spaces and new lines
    "a  b", "a   b", "trailing   ", "   leading", "\n\n  x", "x \n y", "  \n", " \n\n",
    "x  \n  \n  y", "\n", "\n\n\n", " ", "  ", "\t\tx", " \t \n", "a\tb\t\tc", "\r\n\r\n",
    "line\r\nline", "\x0b\x0cx", "\u00a0x \u00a0 y", "\u3000x\u3000", "a\u2028b\u2029c",
    "\u0085x \u0085", "\u180ex \u180e", "\x1cx\x1d\x1e\x1f y", "\u1680 \u2000\u200a\u202f\u205f",
    "end with space ", "end with spaces  ", "end with newline\n", "\n  \n  ",
    # digits and punctuation
    "123456789", "3.14159", "1,000,000", " 42 43", "٣٤٥ ۱۲۳", "①② ⅫⅣ ½¾", "a1b2c3",
    "!!!???", "...", " --", "@#$%^&*()_+", "a.b,c;d:e", "x!!! y?? z...", "¿Qué? ¡Sí!",
    "<|endoftext|>", "http://example.com/a?b=c&d=e#f", "foo_bar(baz) {return 0;}",
    # accents, NFC and NFD, lone combining marks
    "café naïve résumé", nfd("café naïve résumé"), "\u0301", "a\u0301\u0302", " \u0301x",
    "\u0301\u0301\u0301", "e\u0301 ", nfd("Ångström Ærø"), "ﬁﬂ", "Ǆǅǆ",
    # CJK, emoji, right to left
    "東京は日本の首都です。", "中文汉字，漢字！", "한국어 서울", "カタカナ ひらがな",
    "👨\u200d👩\u200d👧\u200d👦 family", "👍🏽👍🏿 ok", "🇫🇷🇩🇪", "❤️‍🔥", "a\u200db\u200cc",
    "مرحبا بالعالم", "שלום עולם", "\u202eevil\u202c", "abc مرحبا 123 שלום",
    # letters and digits Unicode 15.0 added (PCRE2 10.42 does not know them)
    "\U00011f04\U00011f05 \U00011f50\U00011f51", "\U0001e4d0\U0001e4d1 \U0001e4f0",
    "\U00031350\U00031351 x", "a\U00011f04b", "x\U00031350", "1\U0001e4f0 \U00011f50!",
    # U+180E: PCRE2's \s, not Python regex's
    "\u180e!", "!\u180e!", "x\u180ey", "\u180e  x", "a \u180e\u180e.", "\U0001d2c0\U0001d2c1", "\U0001e030\U0001e031",
    "", "x", "a" * 300, " " * 300, "\n" * 100, "ab" * 200, "\U0010ffff\ufffd\ufeff",
]
FIXED_BYTES = [
    b"\x80", b"\xbf\x80", b"a\x80b", b"\xc0\xaf", b"\xc1\xbf", b"\xe0\x80\xaf", b"\xe0\x9f\xbf",
    b"\xed\xa0\x80", b"\xed\xbf\xbf", b"\xed\x9f\xbf", b"\xe2\x82", b"\xe2\x82a", b"\xe2",
    b"\xf0\x9f\x98", b"\xf0\x9f", b"\xf0\x80\x80\x80", b"\xf4\x90\x80\x80", b"\xf4\x8f\xbf\xbf",
    b"\xf5", b"\xf8\x88\x80\x80\x80", b"\xff\xfe", b"\xfe", b"\xc2", b"x\xc2", b"\xc2 ",
    b"\xe2\x82\xe2\x82\xac", b"\xf0\x9f\x98\xf0\x9f\x98\x80", b"\xe0\xa0", b"\xf1\x80\x80",
    b"a\x00b", b"\x00", b"\x00\x00 \x00", b" \x00\n", b"caf\xe9", b"\xc3\xa9\xc3",
    b"it\x92s", b"\x80\x81\x82\x83", b"\xed\xa0\x80\xed\xb0\x80", b"\xc3\x28", b"\xa0\xa1",
]

BLOCKS = [
    (0x20, 0x7F), (0x0, 0x20), (0x7F, 0xA0), (0xA0, 0x250), (0x300, 0x370), (0x370, 0x400),
    (0x400, 0x530), (0x530, 0x590), (0x590, 0x600), (0x600, 0x700), (0x900, 0x980),
    (0xE00, 0xE80), (0x1100, 0x1200), (0x1680, 0x1690), (0x1800, 0x18B0), (0x2000, 0x2070),
    (0x20A0, 0x20D0), (0x2100, 0x2200), (0x2460, 0x2500), (0x3000, 0x3100), (0x4E00, 0x4F00),
    (0xAC00, 0xAD00), (0xFB00, 0xFB50), (0xFE00, 0xFE10), (0xFF00, 0xFFF0), (0xFFF0, 0x10000),
    (0x10000, 0x10100), (0x11F00, 0x11F60), (0x13400, 0x13460), (0x1D2C0, 0x1D2E0),
    (0x1D400, 0x1D500), (0x1E030, 0x1E070), (0x1E4D0, 0x1E500), (0x1F300, 0x1F700),
    (0x1F900, 0x1FA00), (0x20000, 0x20100), (0x2B730, 0x2B740), (0x31350, 0x31400),
    (0xE0000, 0xE0080), (0x10FFF0, 0x110000),
]
SPECIAL = list(" \t\n\r\x0b\x0c'’sStTdmlrev0123456789.,!?-") + ["\u200d", "\u0301", "\U0001f3fd",
                                                               "\ufffd", "\x00", "  ", "'s"]


def random_text(rng):
    out = []
    for _ in range(rng.randint(0, 40)):
        r = rng.random()
        if r < 0.35:
            lo, hi = rng.choice(BLOCKS)
            c = rng.randrange(lo, hi)
            if 0xD800 <= c < 0xE000:
                c = 0xFFFD
            out.append(chr(c))
        elif r < 0.6:
            out.append(rng.choice(SPECIAL))
        else:
            out.append(rng.choice(rng.choice([WORDS_EN, WORDS_ACC, WORDS_CJK, WORDS_RTL])))
            if rng.random() < 0.5:
                out.append(" ")
    return "".join(out)


def random_bytes(rng):
    b = bytearray(random_text(rng).encode("utf-8"))
    for _ in range(rng.randint(1, 6)):  # damage it: cut, insert or change bytes
        op = rng.random()
        pos = rng.randint(0, len(b))
        if op < 0.4:
            b[pos:pos] = bytes([rng.randrange(256)])
        elif op < 0.7 and pos < len(b):
            b[pos] = rng.randrange(256)
        else:
            b[pos:pos] = rng.choice([b"\xed\xa0\x80", b"\xe2\x82", b"\xf0\x9f\x98", b"\xc0\xaf",
                                     b"\xf5", b"\xff", b"\x80", b"\xf4\x90\x80\x80"])
    return bytes(b)


# ---- the label rules of bpe.h, written again ----------------------------------------

OTHER_WS = set("\x0b\x0c\r\x85\xa0\u1680\u2028\u2029\u202f\u205f\u3000") | {
    chr(c) for c in range(0x2000, 0x200B)}


def label(bs, size=256):
    """the label as bpe_token_label writes it into size bytes (NUL included)"""
    out = []
    i = 0
    while i < len(bs):
        c = None
        lead = bs[i]
        n = 1 if lead < 0x80 else 2 if lead < 0xE0 else 3 if lead < 0xF0 else 4
        try:
            c = bs[i:i + n].decode("utf-8")
            if len(c) != 1:
                c = None
        except UnicodeDecodeError:
            c = None
        if c is None or (ord(c) < 0x20 and c not in "\t\n\x0b\x0c\r") or c == "\x7f":
            out.append("<%02x>" % bs[i])
            n = 1
        elif c == " ":
            out.append("\u2423" if i == 0 else "\u00b7")
        elif c == "\n":
            out.append("\u21b5")
        elif c == "\t":
            out.append("\u2192")
        elif c in OTHER_WS:
            out.append("\u00b7")
        else:
            out.append(c)
        if len("".join(out).encode("utf-8")) >= size:  # whole units only, and the NUL
            out.pop()
            break
        i += n
    return "".join(out)


# ---- running the driver --------------------------------------------------------------


def run_driver(vocab, merges, texts, flags=("-l", "-b")):
    inp = b"".join(b"%d\n" % len(t) + t for t in texts)
    p = subprocess.run([DRIVER, vocab, merges, *flags], input=inp, capture_output=True,
                       timeout=600)
    if p.returncode != 0:
        fail("driver exit %d: %s" % (p.returncode, p.stderr.decode(errors="replace")[:500]))
        return None
    lines = p.stdout.decode("utf-8").split("\n")
    has_l = "-l" in flags or "--label-size" in flags
    per = 1 + has_l + ("-b" in flags)
    out = []
    for k in range(len(texts)):
        rec = lines[per * k:per * k + per]
        head = rec[0].split(" ")
        ids = [int(x) for x in head[2:]]
        if int(head[1]) != len(ids):
            fail("count %s but %d ids" % (head[1], len(ids)))
        labels = rec[1].split("\t")[1:] if has_l else None
        joined = bytes.fromhex(rec[-1][2:]) if "-b" in flags else None
        out.append((int(head[0]), ids, labels, joined))
    return out


def compare(tok, vocab, merges, texts, what, label_size=256):
    res = run_driver(vocab, merges, texts, flags=("--label-size", str(label_size), "-b"))
    if res is None:
        return 0
    agree = 0
    for t, (replaced, ids, labels, joined) in zip(texts, res):
        want = tok.encode_bytes(t)
        try:
            t.decode("utf-8")
            bad = 0
        except UnicodeDecodeError:
            bad = 1
        ok = True
        if ids != want:
            ok = False
            fail("%s: ids differ for %r: C %s, Python %s" % (what, t[:80], ids[:20], want[:20]))
        if replaced != bad:
            ok = False
            fail("%s: replaced %d for %r" % (what, replaced, t[:80]))
        fixed = t.decode("utf-8", "replace").encode("utf-8")
        if joined != fixed:
            ok = False
            fail("%s: tokens' bytes %r for %r (want %r)" % (what, joined[:60], t[:60], fixed[:60]))
        want_labels = [label(tok.decode_bytes([i]), label_size) for i in ids]
        if labels != want_labels:
            ok = False
            fail("%s: labels %r for %r, want %r" % (what, labels[:10], t[:60], want_labels[:10]))
        agree += ok
    print("%s: %d of %d texts agree (ids, replaced, bytes, labels)" % (what, agree, len(texts)))
    return agree


# ---- hostile tokenizer files -----------------------------------------------------------


def hostile(tmp, vocab, merges):
    import json

    v = json.load(open(vocab, encoding="utf-8"))
    m = open(merges, encoding="utf-8").read()
    good_v = json.dumps(v, ensure_ascii=False)
    inv = sorted(v, key=v.get)
    a, b = m.split("\n")[1].split(" ")
    cases = []  # (name, vocab text or None for the good one, merges text or None, want)

    def with_v(d):
        return json.dumps(d, ensure_ascii=False)

    gap = dict(v)
    del gap[inv[-1]]
    gap[inv[-1] + "x"] = len(v) + 5
    dup_id = dict(v)
    dup_id[inv[-1]] = 0
    nobyte = {k: i for i, k in enumerate(t for t in inv if t != "Ġ")}
    spacekey = dict(v)
    del spacekey[inv[-1]]
    spacekey["a b"] = len(v) - 1
    cases += [
        ("broken JSON", '{"a": 0,', None, 2),
        ("not JSON", "hello", None, 2),
        ("empty vocab file", "", None, 2),
        ("a JSON array", "[1, 2, 3]", None, 2),
        ("duplicate key", good_v[:-1] + ', "%s": %d}' % (inv[0], len(v)), None, 2),
        ("id gap", with_v(gap), None, 2),
        ("id duplicated", with_v(dup_id), None, 2),
        ("id not an integer", good_v[:-1] + ', "zzq": 1.5}', None, 2),
        ("id a string", good_v[:-1] + ', "zzq": "7"}', None, 2),
        ("negative id", good_v[:-1] + ', "zzq": -1}', None, 2),
        ("a key with a space", with_v(spacekey), None, 2),
        ("empty key", good_v[:-1] + ', "": %d}' % len(v), None, 2),
        ("a byte's token missing", with_v(nobyte), None, 2),
        ("a key with U+0000", good_v[:-1] + ', "a\\u0000": %d}' % len(v), None, 2),
        ("too few tokens", '{"a": 0}', None, 2),
        ("merge line with two spaces", None, "#version: 0.2\n%s  %s\n" % (a, b), 2),
        ("merge line without a space", None, "#version: 0.2\n%s%s\n" % (a, b), 2),
        ("merge line with three parts", None, "#version: 0.2\n%s %s %s\n" % (a, b, a), 2),
        ("merge line starting with a space", None, "#version: 0.2\n %s\n" % a, 2),
        ("merge line ending with a space", None, "#version: 0.2\n%s \n" % a, 2),
        ("merge line with CR", None, "#version: 0.2\n%s %s\r\n" % (a, b), 2),
        ("merge of characters outside the table", None, "#version: 0.2\na\u4e00 b\n", 2),
        ("merge whose result is missing", None, "#version: 0.2\nq Ġz\n", 2),
        ("merge whose part is missing", None, "#version: 0.2\nqzqzq z\n", 2),
        ("blank line in the middle", None, m.replace("\n", "\n\n", 2), 2),
        ("#version on line 2", None, "#version: 0.2\n#version: 0.2\n", 2),
    ]
    n = 0
    for name, vt, mt, want in cases:
        vp, mp = vocab, merges
        if vt is not None:
            vp = os.path.join(tmp, "bad_vocab.json")
            with open(vp, "w", encoding="utf-8") as f:
                f.write(vt)
        if mt is not None:
            mp = os.path.join(tmp, "bad_merges.txt")
            with open(mp, "w", encoding="utf-8") as f:
                f.write(mt)
        n += check_refusal(name, vp, mp, want, vp if vt is not None else mp)
    big = os.path.join(tmp, "big.json")
    with open(big, "wb") as f:
        f.truncate((64 << 20) + 1)  # sparse: 64 MiB + 1 byte of zeros
    os.mkdir(os.path.join(tmp, "folder"))
    for name, vp, mp, want, path in [
        ("missing vocab", os.path.join(tmp, "nope.json"), merges, 1, "nope.json"),
        ("missing merges", vocab, os.path.join(tmp, "nope.txt"), 1, "nope.txt"),
        ("vocab a folder", os.path.join(tmp, "folder"), merges, 1, "folder"),
        ("merges a folder", vocab, os.path.join(tmp, "folder"), 1, "folder"),
        ("vocab over 64 MiB", big, merges, 2, "big.json"),
        ("merges over 64 MiB", vocab, big, 2, "big.json"),
    ]:
        n += check_refusal(name, vp, mp, want, path)
    os.unlink(big)
    print("hostile files: %d of %d refused as they should be" % (n, len(cases) + 6))

    # files that must load: no #version, no final new line, no merges, blank lines at the end
    tok_ok = 0
    text = ["the café's 東京 1234 it's  \n the other theme".encode("utf-8")]
    for name, mt in [("no #version", m.split("\n", 1)[1]), ("no final new line", m.rstrip("\n")),
                     ("only #version", "#version: 0.2\n"), ("empty", ""),
                     ("blank lines at the end", m + "\n\n"),
                     # encoder.py's dict(zip(merges, range)): a repeated pair keeps its last
                     # rank, so the most frequent pair ranks last here
                     ("a repeated merge", m + m.split("\n")[1] + "\n")]:
        mp = os.path.join(tmp, "ok_merges.txt")
        with open(mp, "w", encoding="utf-8") as f:
            f.write(mt)
        want = bpe_ref.load(vocab, mp).encode_bytes(text[0])
        res = run_driver(vocab, mp, text, flags=())
        if res is None or res[0][1] != want:
            fail("merges.txt %s: %s, want %s" % (name, res and res[0][1], want))
        else:
            tok_ok += 1
    print("unusual but valid merges.txt: %d of 6 agree" % tok_ok)


def check_refusal(name, vp, mp, want, path):
    p = subprocess.run([DRIVER, vp, mp], input=b"", capture_output=True, timeout=60)
    lines = p.stderr.decode(errors="replace").splitlines()
    if p.returncode != want or len(lines) != 1 or not lines[0].startswith("mhaviz: ") \
            or os.path.basename(path) not in lines[0]:
        fail("%s: exit %d (want %d), stderr %r" % (name, p.returncode, want, lines))
        return 0
    return 1


def main():
    if not os.access(DRIVER, os.X_OK):
        print("no driver at", DRIVER)
        return 1
    rng = random.Random(20261202)
    texts = corpus(rng, 1500) + FIXED
    vocab, merges = bpe_ref.train(texts, 800)
    print("trained: %d tokens, %d merges" % (len(vocab), len(merges)))
    with tempfile.TemporaryDirectory() as tmp:
        bpe_ref.write(tmp, vocab, merges)
        vp, mp = os.path.join(tmp, "vocab.json"), os.path.join(tmp, "merges.txt")
        tok = bpe_ref.load(vp, mp)
        fixed = [t.encode("utf-8") for t in FIXED] + FIXED_BYTES
        compare(tok, vp, mp, fixed, "fixed texts")
        rtexts = [random_text(rng).encode("utf-8") for _ in range(3000)]
        compare(tok, vp, mp, rtexts, "random valid UTF-8")
        for size in (1, 2, 4, 5, 8):  # labels cut between whole characters
            compare(tok, vp, mp, fixed + rtexts[:300], "labels in %d bytes" % size, size)
        rbytes = [random_bytes(rng) for _ in range(2000)]
        compare(tok, vp, mp, rbytes, "random damaged UTF-8")
        # long pieces (no spaces: one letter, digit or punctuation run each) take
        # bpe.c's heap path, BPE_HEAP_MIN bytes and up
        longs = []
        for _ in range(300):
            alphabet = rng.choice(["abcdefghijklmnopqrstuvwxyz", "aab", "a", "0123456789",
                                   "".join(WORDS_ACC + WORDS_CJK), "!?.,-", " ", "\n ",
                                   "thecatsat", "".join(WORDS_EN)])
            longs.append("".join(rng.choice(alphabet) for _ in range(rng.randint(60, 3000))))
        compare(tok, vp, mp, [t.encode("utf-8") for t in longs], "long pieces")
        long_text = "\n".join(corpus(rng, 300)).encode("utf-8")
        compare(tok, vp, mp, [long_text], "a long text")
        # merges out of training order: a merge's result may rank before its parts'
        # merges, so a round's new pairs can outrank what is left (encoder.py still
        # finishes the round first)
        shuffled = merges[:]
        rng.shuffle(shuffled)
        sdir = os.path.join(tmp, "shuffled")
        bpe_ref.write(sdir, vocab, shuffled)
        svp, smp = os.path.join(sdir, "vocab.json"), os.path.join(sdir, "merges.txt")
        compare(bpe_ref.load(svp, smp), svp, smp,
                fixed + rtexts[:500] + [t.encode("utf-8") for t in longs[:100]],
                "shuffled merges")
        hostile(tmp, vp, mp)
    if failures:
        print("%d failures" % len(failures))
        return 1
    print("bpe_check: all passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
