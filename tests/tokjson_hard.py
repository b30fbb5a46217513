"""tokjson_hard.py: texts that are hard for a tokenizer (shared by tokjson_check.py and
tokjson_real_check.py): contractions in any case, digit runs, white-space runs with
newlines and tabs, CJK, emoji with joiners, right-to-left text, combining marks,
special tokens typed in the text, and invalid UTF-8; plus random texts made of those."""
import random

HARD = [
    "Hello world", " Hello", "  two spaces", "I'M HERE, he's there, THEY'RE, we'Ve, you'LL, I'd",
    "don't DON'T Don'T 's 'S", "1234567 12 3.14159 1,000,000 ٣٤٥ ໑໒", "a\tb\t\tc\n\nd\r\n  \n\t x",
    "   leading and trailing   ", "\n\n\n", " ", "x  \n  y", "日本語のテキスト、中文文本。한국어",
    "👨‍👩‍👧‍👦 family 👍🏽 🏳️‍🌈 flags", "שלום עולם مرحبا بالعالم", "e\u0301 n\u0303 a\u030a\u0301 Å Å",
    "ﬁ ﬀ ① ² Ⅻ ｆｕｌｌ", "İstanbul ΣΊΣΥΦΟΣ ß ẞ", "<s>hello</s> <|begin_of_text|>x<|endoftext|>",
    "<unk> <0x41> ▁already ▁", "tab\there", "mixed日本abc123!!!???...", "a" * 300,
    "9" * 50, "!!!!!!!!!!!!!!!!!!!!", "http://example.com/path?q=1&r=2#frag",
    "def f(x):\n    return x ** 2  # square\n", "\u200b\u200c\u200d\ufeff zero widths",
    "\u3000ideographic space\u00a0nbsp\u2028line sep", "caf\u00e9 vs cafe\u0301",
    "Café ÉCOLE naïve NAÏVE Ångström ÀÉÎÕÜ àéîõü", "wait...!!! ?!?! (yes) [no] {maybe} --- ***",
    "x" * 150 + " " + "\u00e9" * 101, "the thinking unable thereafter untested",
    "ctrl\x00nul\x07bell\x1b[0m\u200e\u202e", "[CLS] [MASK] [SEP] [UNK]",
    "aaa aaaaa aaaaaaa !!! ??? ..... qwertyuiop Qwertyuiop  qwertyuiop",
    "<tool> <Tool> <TOOL> <note> <Note> <NOTE> <nOtE><note>x", "İ<Note>İ ΣΣ",
]
HARD_BYTES = [b"bad \xff byte", b"cut \xe2\x82", b"surrogate \xed\xa0\x80 x", b"\xc0\xaf overlong",
              b"\xf5\xf6 high", b"ok\xe2\x82\xacok"]

POOLS = [
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ", "0123456789", " ", "  \t\n\r",
    "'’\".,;:!?-_()[]{}<>/\\@#$%^&*+=|~`", "日本語中文한국어テキスト", "👍👨👩👧🏽\u200d️🌈",
    "שלוםمرحبا", "\u0301\u0303\u030a\u0308", "éüñçøåßİı", "ΣσςΑα", "<s></s>", "▁",
]


def random_text(rng):
    n = rng.randint(1, 40)
    out = []
    for _ in range(n):
        pool = rng.choice(POOLS)
        out.append("".join(rng.choice(pool) for _ in range(rng.randint(1, 6))))
    return "".join(out)


def texts(count, seed):
    """the hard texts as bytes, then count random ones"""
    rng = random.Random(seed)
    out = [t.encode() for t in HARD] + list(HARD_BYTES)
    out += [random_text(rng).encode() for _ in range(count)]
    return out
