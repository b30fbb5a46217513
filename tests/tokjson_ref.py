"""tokjson_ref.py: an independent Python reference for the parts of Hugging Face's
tokenizer.json that tokjson_check.py's files use, written from the Rust library's
semantics: added tokens split off first (leftmost, then longest), normalizers (NFC,
NFKC, Lowercase per character, Prepend, Replace of a string), pre-tokenizers (Split with
the file's regex through the `regex` module, Isolated; ByteLevel; Metaspace), BPE merged
lowest rank first (leftmost on a tie) with byte_fallback, unk and fuse_unk, and the
template's BOS. Invalid UTF-8 is read as U+FFFD per maximal subpart (Python's 'replace')."""
import heapq
import unicodedata

import regex

# Unicode's White_Space (Rust's char::is_whitespace)
WHITE = set("\t\n\x0b\x0c\r \x85\xa0\u1680\u2028\u2029\u202f\u205f\u3000") | {
    chr(c) for c in range(0x2000, 0x200B)}
CHINESE = [(0x4E00, 0x9FFF), (0x3400, 0x4DBF), (0x20000, 0x2A6DF), (0x2A700, 0x2B73F),
           (0x2B740, 0x2B81F), (0x2B920, 0x2CEAF), (0xF900, 0xFAFF), (0x2F800, 0x2FA1F)]


def is_punct(c):
    return (c.isascii() and not c.isalnum() and 0x21 <= ord(c) <= 0x7E) or \
        unicodedata.category(c).startswith("P")


def bert_normalize(s, n):
    """Hugging Face's BertNormalizer: clean, Chinese characters, accents, lowercase"""
    if n.get("clean_text", True):
        s = "".join(" " if c in WHITE else c for c in s if not (
            c in "\0\ufffd" or (c not in "\t\n\r" and unicodedata.category(c).startswith("C"))))
    if n.get("handle_chinese_chars", True):
        s = "".join(f" {c} " if any(a <= ord(c) <= b for a, b in CHINESE) else c for c in s)
    lower = n.get("lowercase", True)
    strip = n.get("strip_accents")
    if strip if strip is not None else lower:
        s = "".join(c for c in unicodedata.normalize("NFD", s) if unicodedata.category(c) != "Mn")
    if lower:
        s = "".join("i\u0307" if c == "\u0130" else c.lower() for c in s)
    return s


GPT2 = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""


def byte_table():
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(0xA1, 0xAD)) + list(range(0xAE, 0x100))
    cs, n = bs[:], 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return {b: chr(c) for b, c in zip(bs, cs)}


BYTES = byte_table()


class Ref:
    def __init__(self, j):
        m = j["model"]
        self.vocab = m["vocab"]
        self.ranks = {}
        for r, mg in enumerate(m.get("merges", [])):
            a, b = mg.split(" ") if isinstance(mg, str) else mg
            self.ranks[(a, b)] = r
        self.unk = m.get("unk_token")
        self.fuse_unk = m.get("fuse_unk", False)
        self.byte_fallback = m.get("byte_fallback", False)
        self.ignore_merges = m.get("ignore_merges", False)
        self.wordpiece = m.get("type") == "WordPiece"
        self.prefix = m.get("continuing_subword_prefix", "##") if self.wordpiece else None
        self.max_chars = m.get("max_input_chars_per_word", 100)
        self.added = sorted(j.get("added_tokens", []), key=lambda a: -len(a["content"]))
        self.norms = self.flat(j.get("normalizer"), "normalizers")
        self.pres = self.flat(j.get("pre_tokenizer"), "pretokenizers")
        self.bos, self.eos = [], []
        for post in self.flat(j.get("post_processor"), "processors"):
            if post["type"] != "TemplateProcessing":
                continue
            seen_a = False
            for e in post["single"]:
                if "SpecialToken" in e:
                    ids = post["special_tokens"][e["SpecialToken"]["id"]]["ids"]
                    (self.eos if seen_a else self.bos).extend(ids)
                else:
                    seen_a = True

    @staticmethod
    def flat(x, key):
        if not x:
            return []
        if x["type"] == "Sequence":
            return [y for s in x[key] for y in Ref.flat(s, key)]
        return [x]

    def normalize(self, s):
        for n in self.norms:
            t = n["type"]
            if t in ("NFC", "NFKC", "NFD", "NFKD"):
                s = unicodedata.normalize(t, s)
            elif t == "Lowercase":
                s = "".join("i\u0307" if c == "\u0130" else c.lower() for c in s)
            elif t == "Prepend":
                s = n["prepend"] + s if s else s
            elif t == "Replace":
                s = s.replace(n["pattern"]["String"], n["content"])
            elif t == "BertNormalizer":
                s = bert_normalize(s, n)
        return s

    def pretokenize(self, s, first):
        pieces = [s]
        for p in self.pres:
            out = []
            for x in pieces:
                if p["type"] == "Split":
                    out += [m.group() for m in regex.finditer(p["pattern"]["Regex"], x)]
                    # the gaps: the Llama 3 / Qwen patterns match everything, so none here
                elif p["type"] == "ByteLevel":
                    if p.get("add_prefix_space", True) and not x.startswith(" "):
                        x = " " + x
                    parts = regex.findall(GPT2, x) if p.get("use_regex", True) else [x]
                    out += ["".join(BYTES[b] for b in y.encode()) for y in parts]
                elif p["type"] == "BertPreTokenizer":
                    for w in "".join(" " if c in WHITE else c for c in x).split(" "):
                        run = ""
                        for c in w:
                            if is_punct(c):
                                out += [run, c] if run else [c]
                                run = ""
                            else:
                                run += c
                        out += [run] if run else []
                elif p["type"] == "Metaspace":
                    x = x.replace(" ", "\u2581")
                    if p.get("prepend_scheme") == "always" or (
                            p.get("prepend_scheme") == "first" and first):
                        if not x.startswith("\u2581"):
                            x = "\u2581" + x
                    if p.get("split", True):
                        out += [m for m in regex.split("(?=\u2581)", x) if m]
                    else:
                        out.append(x)
            pieces = [x for x in out if x]
        return pieces

    def word_piece(self, w):
        """greedy longest match first, the prefix on all but the first"""
        if len(w) > self.max_chars:
            return [self.vocab[self.unk]]
        out, start = [], 0
        while start < len(w):
            for end in range(len(w), start, -1):
                sub = (self.prefix if start else "") + w[start:end]
                if sub in self.vocab:
                    out.append(self.vocab[sub])
                    break
            else:
                return [self.vocab[self.unk]]
            start = end
        return out

    def bpe(self, w):
        if self.wordpiece:
            return self.word_piece(w)
        if self.ignore_merges and w in self.vocab:
            return [self.vocab[w]]
        syms, unk_open = [], False
        for c in w:
            if c in self.vocab:
                syms.append(c)
                unk_open = False
            elif self.byte_fallback and all("<0x%02X>" % b in self.vocab for b in c.encode()):
                syms += ["<0x%02X>" % b for b in c.encode()]
                unk_open = False
            elif self.unk is not None:
                if not (unk_open and self.fuse_unk):
                    syms.append(self.unk)
                unk_open = True
        # Rust's merge_all: a heap of (rank, position); a changed pair is skipped
        alive = list(syms)
        nxt = list(range(1, len(alive))) + [-1]
        prv = list(range(-1, len(alive) - 1))
        heap = [(self.ranks[(alive[i], alive[i + 1])], i, alive[i] + alive[i + 1])
                for i in range(len(alive) - 1) if (alive[i], alive[i + 1]) in self.ranks]
        heapq.heapify(heap)
        while heap:
            r, i, new = heapq.heappop(heap)
            if alive[i] is None or nxt[i] < 0:
                continue
            j = nxt[i]
            if self.ranks.get((alive[i], alive[j])) != r:
                continue
            alive[i], alive[j] = new, None
            nxt[i] = nxt[j]
            if nxt[i] >= 0:
                prv[nxt[i]] = i
            if prv[i] >= 0 and (alive[prv[i]], new) in self.ranks:
                heapq.heappush(heap, (self.ranks[(alive[prv[i]], new)], prv[i], alive[prv[i]] + new))
            if nxt[i] >= 0 and (new, alive[nxt[i]]) in self.ranks:
                heapq.heappush(heap, (self.ranks[(new, alive[nxt[i]])], i, new + alive[nxt[i]]))
        return [self.vocab[s] for s in alive if s is not None]

    def split_added(self, text, tokens):
        """text cut at the leftmost (then longest) of tokens [(match, id)]: strings and ids"""
        out, at = [], 0
        while at < len(text):
            hit = None
            for i in range(at, len(text)):
                for m, tid in tokens:
                    if text.startswith(m, i):
                        hit = (i, m, tid)
                        break
                if hit:
                    break
            end = hit[0] if hit else len(text)
            if end > at:
                out.append((text[at:end], at == 0))
            if not hit:
                break
            out.append(hit[2])
            at = hit[0] + len(hit[1])
        return out

    def encode(self, data, special=False):
        text = data.decode("utf-8", "replace")
        ids = list(self.bos) if special else []
        after = list(self.eos) if special else []
        normed = lambda a: a.get("normalized", not a.get("special", False)) and self.norms
        raw = [(a["content"], a["id"]) for a in self.added if not normed(a)]
        norm = sorted(((self.normalize(a["content"]), a["id"]) for a in self.added if normed(a)),
                      key=lambda x: -len(x[0]))
        for s in self.split_added(text, raw):
            if isinstance(s, int):
                ids.append(s)
                continue
            first = s[1]
            for p in self.split_added(self.normalize(s[0]), [x for x in norm if x[0]]):
                if isinstance(p, int):
                    ids.append(p)
                    continue
                for w in self.pretokenize(p[0], first and p[1]):
                    ids += self.bpe(w)
        return ids + after
