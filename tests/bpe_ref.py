"""bpe_ref.py: an independent reference for GPT-2's byte-level BPE (src/model/bpe.c),
written from the semantics of OpenAI's encoder.py: the same pre-tokenizer pattern
(Python `regex`), bytes_to_unicode, get_pairs and the merge loop by rank. It shares
no code with the C side. Other tools import it; keep this API:

    load(vocab_path, merges_path) -> Tok
    Tok.encode(text: str) -> list[int]
    Tok.encode_bytes(b: bytes) -> list[int]   # b.decode('utf-8', 'replace'), then encode
    train(texts: list[str], n_merges: int) -> (vocab: dict[str, int], merges: list[(str, str)])
    write(dirpath, vocab, merges)              # vocab.json, merges.txt (Hugging Face's format)
"""

import json
import os

import regex

PATTERN = regex.compile(
    r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""
)


def bytes_to_unicode():
    """GPT-2's table: printable Latin-1 bytes stand for themselves, the other 68
    bytes (controls, space, DEL, NBSP, soft hyphen) move to U+0100 upwards, in
    byte order. Returns the byte values in GPT-2's order (printable ones first) and
    the dict byte -> character."""
    bs = (
        list(range(ord("!"), ord("~") + 1))
        + list(range(ord("\xa1"), ord("\xac") + 1))
        + list(range(ord("\xae"), ord("\xff") + 1))
    )
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return bs, dict(zip(bs, [chr(c) for c in cs]))


BYTE_ORDER, BYTE_ENCODER = bytes_to_unicode()
BYTE_DECODER = {c: b for b, c in BYTE_ENCODER.items()}


def get_pairs(word):
    return {(word[i], word[i + 1]) for i in range(len(word) - 1)}


class Tok:
    def __init__(self, vocab, merges):
        self.encoder = dict(vocab)
        self.decoder = {v: k for k, v in self.encoder.items()}
        # as encoder.py: dict(zip(merges, range(len(merges)))), so a repeated pair
        # keeps its last rank
        self.ranks = dict(zip([tuple(m) for m in merges], range(len(merges))))
        self.cache = {}

    def bpe(self, token):
        if token in self.cache:
            return self.cache[token]
        word = tuple(token)
        pairs = get_pairs(word)
        if not pairs:
            return [token]
        inf = float("inf")
        while True:
            bigram = min(pairs, key=lambda p: self.ranks.get(p, inf))
            if bigram not in self.ranks:
                break
            first, second = bigram
            new_word = []
            i = 0
            while i < len(word):
                try:
                    j = word.index(first, i)
                except ValueError:
                    new_word.extend(word[i:])
                    break
                new_word.extend(word[i:j])
                i = j
                if word[i] == first and i < len(word) - 1 and word[i + 1] == second:
                    new_word.append(first + second)
                    i += 2
                else:
                    new_word.append(word[i])
                    i += 1
            word = tuple(new_word)
            if len(word) == 1:
                break
            pairs = get_pairs(word)
        out = list(word)
        if len(self.cache) < 100000:
            self.cache[token] = out
        return out

    def pieces(self, text):
        return PATTERN.findall(text)

    def encode(self, text):
        ids = []
        for piece in PATTERN.findall(text):
            token = "".join(BYTE_ENCODER[b] for b in piece.encode("utf-8"))
            ids.extend(self.encoder[t] for t in self.bpe(token))
        return ids

    def encode_bytes(self, b):
        return self.encode(b.decode("utf-8", "replace"))

    def decode_bytes(self, ids):
        return b"".join(bytes(BYTE_DECODER[c] for c in self.decoder[i]) for i in ids)


def load(vocab_path, merges_path):
    with open(vocab_path, encoding="utf-8") as f:
        vocab = json.load(f)
    with open(merges_path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    if lines and lines[0].startswith("#version"):
        lines = lines[1:]
    merges = [tuple(line.split(" ")) for line in lines if line != ""]
    return Tok(vocab, merges)


def train(texts, n_merges):
    """A small BPE trainer, GPT-2 style: the 256 byte symbols get ids 0..255 in
    GPT-2's order (the table's bytes list: '!' is 0, U+0100 for byte 0 is 188);
    pairs are counted within pre-tokenized pieces (weighted by how often each piece
    occurs); the most frequent pair merges, ties going to the smallest pair (as
    strings) so the result is deterministic; the merged token gets the next id
    (256 + k, unless the same string was already made by another merge, which then
    keeps its id). Stops early when no pair is left."""
    vocab = {BYTE_ENCODER[b]: i for i, b in enumerate(BYTE_ORDER)}
    counts = {}
    for t in texts:
        for piece in PATTERN.findall(t):
            w = "".join(BYTE_ENCODER[b] for b in piece.encode("utf-8"))
            counts[w] = counts.get(w, 0) + 1
    words = [list(w) for w in counts]
    freqs = list(counts.values())
    pair_count = {}
    where = {}  # pair -> set of word indices holding it
    for wi, w in enumerate(words):
        for i in range(len(w) - 1):
            p = (w[i], w[i + 1])
            pair_count[p] = pair_count.get(p, 0) + freqs[wi]
            where.setdefault(p, set()).add(wi)
    merges = []
    while len(merges) < n_merges:
        best = None
        for p, c in pair_count.items():
            if c <= 0:
                continue
            if best is None or c > best[1] or (c == best[1] and p < best[0]):
                best = (p, c)
        if best is None:
            break
        (a, b), _ = best
        merges.append((a, b))
        ab = a + b
        if ab not in vocab:
            vocab[ab] = len(vocab)
        for wi in list(where.get((a, b), ())):
            w = words[wi]
            f = freqs[wi]
            for i in range(len(w) - 1):  # take the word's pairs out
                p = (w[i], w[i + 1])
                pair_count[p] -= f
                if pair_count[p] <= 0:
                    del pair_count[p]
            nw = []
            i = 0
            while i < len(w):
                if i < len(w) - 1 and w[i] == a and w[i + 1] == b:
                    nw.append(ab)
                    i += 2
                else:
                    nw.append(w[i])
                    i += 1
            words[wi] = nw
            for i in range(len(nw) - 1):  # and the new ones in
                p = (nw[i], nw[i + 1])
                pair_count[p] = pair_count.get(p, 0) + f
                where.setdefault(p, set()).add(wi)
        pair_count.pop((a, b), None)
        where.pop((a, b), None)
    return vocab, merges


def write(dirpath, vocab, merges):
    os.makedirs(dirpath, exist_ok=True)
    with open(os.path.join(dirpath, "vocab.json"), "w", encoding="utf-8") as f:
        json.dump(vocab, f, ensure_ascii=False)
    with open(os.path.join(dirpath, "merges.txt"), "w", encoding="utf-8") as f:
        f.write("#version: 0.2\n")
        for a, b in merges:
            f.write(a + " " + b + "\n")


if __name__ == "__main__":
    import sys

    if len(sys.argv) == 3:
        tok = load(sys.argv[1], sys.argv[2])
        print(tok.encode(sys.stdin.read()))
    else:
        texts = ["Hello world, hello there. It's the world's best day!"] * 3
        v, m = train(texts, 20)
        tok = Tok(v, m)
        ids = tok.encode(texts[0])
        assert tok.decode_bytes(ids) == texts[0].encode()
        print(len(v), m[:5], ids)
