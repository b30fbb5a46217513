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
        for r, mg in enumerate(m["merges"]):
            a, b = mg.split(" ") if isinstance(mg, str) else mg
            self.ranks[(a, b)] = r
        self.unk = m.get("unk_token")
        self.fuse_unk = m.get("fuse_unk", False)
        self.byte_fallback = m.get("byte_fallback", False)
        self.ignore_merges = m.get("ignore_merges", False)
        self.added = sorted(j.get("added_tokens", []), key=lambda a: -len(a["content"]))
        self.norms = self.flat(j.get("normalizer"), "normalizers")
        self.pres = self.flat(j.get("pre_tokenizer"), "pretokenizers")
        self.bos = []
        for post in self.flat(j.get("post_processor"), "processors"):
            if post["type"] != "TemplateProcessing":
                continue
            for e in post["single"]:
                if "SpecialToken" in e:
                    self.bos += post["special_tokens"][e["SpecialToken"]["id"]]["ids"]
                else:
                    break

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

    def bpe(self, w):
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

    def encode(self, data, special=False):
        text = data.decode("utf-8", "replace")
        ids = list(self.bos) if special else []
        at = 0
        sections = []
        while at < len(text):
            hit = None
            for i in range(at, len(text)):
                for a in self.added:
                    if text.startswith(a["content"], i):
                        hit = (i, a)
                        break
                if hit:
                    break
            end = hit[0] if hit else len(text)
            if end > at:
                sections.append((text[at:end], at == 0))
            if not hit:
                break
            sections.append(hit[1]["id"])
            at = hit[0] + len(hit[1]["content"])
        for s in sections:
            if isinstance(s, int):
                ids.append(s)
                continue
            norm = self.normalize(s[0])
            for p in self.pretokenize(norm, s[1]):
                ids += self.bpe(p)
        return ids
