/* tokjson_encode.c: text -> ids for a tokjson (tokjson.h), as Hugging Face's
 * `tokenizers` does it: invalid UTF-8 read as U+FFFD, added tokens split off, each
 * other section normalized (tokjson_norm.c), pre-tokenized into pieces, each piece's
 * BPE (the Rust library's: symbols merged lowest rank first, leftmost on a tie), then
 * the post-processor's tokens. Every byte keeps the byte range of the text it came
 * from, which gives each token's offsets. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <utf8proc.h>

#include "tokjson_text.h"

/* ---- pieces ------------------------------------------------------------------------- */

/* A piece of a section: its bytes in the section (off, len), with pre bytes inserted
 * before them (ByteLevel's prefix space: at most 1) */
typedef struct {
    int32_t off, len, pre;
} piece;

typedef struct {
    piece *p;
    size_t n, cap;
    int oom;
} pieces;

static void push_piece(pieces *ps, int32_t off, int32_t len, int32_t pre) {
    if (ps->oom || (len == 0 && pre == 0)) return;
    if (ps->n == ps->cap) {
        size_t cap = ps->cap ? 2 * ps->cap : 64;
        piece *np = realloc(ps->p, cap * sizeof *np);
        if (!np) {
            ps->oom = 1;
            return;
        }
        ps->p = np, ps->cap = cap;
    }
    ps->p[ps->n++] = (piece){off, len, pre};
}

/* a segment of a piece: [s, e) and whether the pattern matched it */
typedef struct {
    int32_t s, e;
    int match;
} seg;

/* Split's behaviours over the piece's segments (in order, covering it). Segments
 * count the piece's inserted prefix (pre bytes) as its first bytes. */
static void split_segments(pieces *out, const piece *pc, seg *sg, int n, enum tj_behavior b) {
    int prev = 0, k = 0;
    seg *acc = sg; /* merged in place: acc[0..k) */
    if (b == TJ_MERGED_NEXT) {
        /* Hugging Face folds from the end: a match joins the segment after it when that one
         * is not a match; forwards, with k <= i, it merges in place */
        for (int i = 0; i < n; i++) {
            if (sg[i].match && i + 1 < n && !sg[i + 1].match)
                acc[k++] = (seg){sg[i].s, sg[i + 1].e, 0}, i++;
            else
                acc[k++] = sg[i];
        }
    } else if (b == TJ_MERGED_PREV) {
        for (int i = 0; i < n; i++) {
            seg s = sg[i];
            if (s.match && !prev && k > 0)
                acc[k - 1].e = s.e;
            else
                acc[k++] = s;
            prev = s.match;
        }
    } else {
        k = n;
    }
    for (int i = 0; i < k; i++) {
        if (b == TJ_REMOVED && acc[i].match) continue;
        int32_t s = acc[i].s < pc->pre ? pc->pre : acc[i].s;
        push_piece(out, pc->off + s - pc->pre, acc[i].e - s, acc[i].s < pc->pre ? pc->pre : 0);
    }
}

static int grow_segs(seg **sg, int *cap, int need) {
    if (need <= *cap) return 0;
    int nc = *cap * 2 + need + 16;
    seg *ns = realloc(*sg, (size_t)nc * sizeof *ns);
    if (!ns) return -1;
    *sg = ns, *cap = nc;
    return 0;
}

/* s's segments by a regex (matches, and the gaps between them) */
static int regex_segments(const pcre2_code *re, int invert, const unsigned char *s, size_t len,
                          seg **sg, int *cap, pcre2_match_data *md) {
    int n = 0;
    size_t at = 0, gap = 0;
    while (at < len) {
        int r = pcre2_match(re, s, len, at, PCRE2_NO_UTF_CHECK, md, NULL);
        if (r < 0 && r != PCRE2_ERROR_NOMATCH) return -1; /* a match limit */
        if (grow_segs(sg, cap, n + 2)) return -1;
        if (r < 0) break;
        PCRE2_SIZE *ov = pcre2_get_ovector_pointer(md);
        size_t ms = ov[0], me = ov[1];
        if (me > ms) {
            if (ms > gap) (*sg)[n++] = (seg){(int32_t)gap, (int32_t)ms, invert};
            (*sg)[n++] = (seg){(int32_t)ms, (int32_t)me, !invert};
            gap = at = me;
        } else { /* an empty match: step one character */
            size_t sub, l = ms < len ? tj_utf8_char(s + ms, len - ms, &sub, NULL) : 1;
            at = ms + (l ? l : 1);
        }
    }
    if (grow_segs(sg, cap, n + 1)) return -1;
    if (len > gap) (*sg)[n++] = (seg){(int32_t)gap, (int32_t)len, invert};
    return n;
}

/* a character that BERT's pre-tokenizer (and Punctuation) takes for punctuation: ASCII's
 * punctuation or Unicode's P* */
static int bert_punct(unsigned cp) {
    if (cp < 0x80)
        return (cp >= 0x21 && cp <= 0x2f) || (cp >= 0x3a && cp <= 0x40) ||
               (cp >= 0x5b && cp <= 0x60) || (cp >= 0x7b && cp <= 0x7e);
    utf8proc_category_t c = utf8proc_category((utf8proc_int32_t)cp);
    return c >= UTF8PROC_CATEGORY_PC && c <= UTF8PROC_CATEGORY_PO;
}

/* A step's characters against the rest: Digits' N* characters (a run is one match
 * unless individual), Metaspace's replacement (rep), white space (a run), punctuation
 * (each alone) */
enum { SEG_REP, SEG_DIGITS, SEG_WS, SEG_PUNCT };
static int char_segments(const unsigned char *s, size_t len, int what, int individual,
                         const char *rep, seg **sg, int *cap) {
    int n = 0;
    size_t rl = rep ? strlen(rep) : 0;
    for (size_t i = 0; i < len;) {
        unsigned cp;
        size_t sub, l = tj_utf8_char(s + i, len - i, &sub, &cp);
        if (!l) l = 1, cp = 0xfffd;
        int m = what == SEG_DIGITS  ? tj_is_numeric(cp)
                : what == SEG_WS    ? tj_is_ws(cp)
                : what == SEG_PUNCT ? bert_punct(cp)
                                    : (l == rl && memcmp(s + i, rep, rl) == 0);
        int run = what == SEG_WS || (what == SEG_DIGITS && !individual);
        if (grow_segs(sg, cap, n + 1)) return -1;
        if (n > 0 && (*sg)[n - 1].match == m && (!m || run))
            (*sg)[n - 1].e = (int32_t)(i + l);
        else
            (*sg)[n++] = (seg){(int32_t)i, (int32_t)(i + l), m};
        i += l;
    }
    return n;
}

/* One pre-tokenizer step over every piece (Metaspace's replacement and prefix were made
 * in the section's text by tj_normalize; here it splits). */
static int pre_step(const tj_pre *st, const tj_text *x, pieces *in, pieces *out,
                    pcre2_match_data *md, unsigned char **tmp, size_t *tcap) {
    seg *sg = NULL;
    int cap = 0, rc = 0;
    out->n = 0;
    for (size_t i = 0; i < in->n && !rc; i++) {
        piece pc = in->p[i];
        const unsigned char *s = x->b + pc.off;
        if (st->kind == TJ_BYTELEVEL && st->add_prefix_space && pc.pre == 0 &&
            !(pc.len > 0 && s[0] == ' '))
            pc.pre = 1;
        if ((st->kind == TJ_BYTELEVEL && !st->re) || (st->kind == TJ_METASPACE && !st->split)) {
            push_piece(out, pc.off, pc.len, pc.pre);
            continue;
        }
        size_t len = (size_t)(pc.pre + pc.len);
        if (pc.pre) { /* the regex sees the inserted space too */
            if (len > *tcap) {
                unsigned char *nt = realloc(*tmp, len * 2);
                if (!nt) {
                    rc = -1;
                    break;
                }
                *tmp = nt, *tcap = len * 2;
            }
            (*tmp)[0] = ' ';
            memcpy(*tmp + 1, s, (size_t)pc.len);
            s = *tmp;
        }
        int n = st->kind == TJ_METASPACE ? char_segments(s, len, SEG_REP, 0, st->rep, &sg, &cap)
                : st->kind == TJ_DIGITS
                    ? char_segments(s, len, SEG_DIGITS, st->individual, NULL, &sg, &cap)
                : st->kind == TJ_WS_SPLIT ? char_segments(s, len, SEG_WS, 0, NULL, &sg, &cap)
                : st->kind == TJ_PUNCT    ? char_segments(s, len, SEG_PUNCT, 0, NULL, &sg, &cap)
                                       : regex_segments(st->re, st->invert, s, len, &sg, &cap, md);
        if (n < 0)
            rc = -1;
        else
            split_segments(out, &pc, sg, n,
                           st->kind == TJ_METASPACE                       ? TJ_MERGED_NEXT
                           : st->kind == TJ_WS_SPLIT                      ? TJ_REMOVED
                           : st->kind == TJ_SPLIT || st->kind == TJ_PUNCT ? st->behavior
                                                                          : TJ_ISOLATED);
    }
    free(sg);
    return rc || out->oom ? -1 : 0;
}

/* ---- BPE of one piece --------------------------------------------------------------- */

typedef struct {
    int *id;
    int32_t *s, *e; /* byte ranges in the caller's text */
    size_t n, cap;
    int oom;
} toks;

static void push_tok(toks *o, int id, int32_t s, int32_t e) {
    if (o->oom) return;
    if (o->n == o->cap) {
        size_t cap = o->cap ? 2 * o->cap : 256;
        int *ni = realloc(o->id, cap * sizeof *ni);
        if (ni) o->id = ni;
        int32_t *ns = ni ? realloc(o->s, cap * sizeof *ns) : NULL;
        if (ns) o->s = ns;
        int32_t *ne = ns ? realloc(o->e, cap * sizeof *ne) : NULL;
        if (!ne) {
            o->oom = 1;
            return;
        }
        o->e = ne, o->cap = cap;
    }
    o->id[o->n] = id, o->s[o->n] = s, o->e[o->n] = e;
    o->n++;
}

typedef struct {
    int id, prev, next;
    int32_t us, ue; /* the piece's bytes it covers (inserted prefix included) */
} sym;

typedef struct {
    int32_t rank, pos, result;
} mrg;

static int mrg_less(mrg a, mrg b) {
    return a.rank < b.rank || (a.rank == b.rank && a.pos < b.pos);
}
static void heap_push(mrg *h, size_t *n, mrg e) {
    size_t i = (*n)++;
    while (i > 0 && mrg_less(e, h[(i - 1) / 2])) h[i] = h[(i - 1) / 2], i = (i - 1) / 2;
    h[i] = e;
}
static mrg heap_pop(mrg *h, size_t *n) {
    mrg top = h[0], last = h[--*n];
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= *n) break;
        if (c + 1 < *n && mrg_less(h[c + 1], h[c])) c++;
        if (!mrg_less(h[c], last)) break;
        h[i] = h[c], i = c;
    }
    if (*n) h[i] = last;
    return top;
}

/* scratch space for one encode */
typedef struct {
    sym *sy;
    mrg *heap;
    size_t cap;
    char *w; /* the piece as the vocabulary spells it */
    size_t wcap;
    int32_t *cs;    /* byte of w where the piece's byte k's character starts */
    tj_lattice lat; /* Unigram's */
    int *uid;
    int32_t *us, *ue;
} scratch;

static int scratch_fit(scratch *sc, size_t n) {
    if (n + 2 <= sc->cap) return 0;
    size_t cap = 2 * n + 16;
    sym *ns = realloc(sc->sy, cap * sizeof *ns);
    if (ns) sc->sy = ns;
    /* the heap: at most n - 1 pairs, then one more a merge (one popped, two pushed) */
    mrg *nh = ns ? realloc(sc->heap, 2 * cap * sizeof *nh) : NULL;
    if (nh) sc->heap = nh;
    int32_t *nc = nh ? realloc(sc->cs, (cap + 1) * sizeof *nc) : NULL;
    if (nc) sc->cs = nc;
    char *nw = nc ? realloc(sc->w, 2 * cap + 64) : NULL;
    if (nw) sc->w = nw;
    int *ni = nw ? realloc(sc->uid, cap * sizeof *ni) : NULL;
    if (ni) sc->uid = ni;
    int32_t *nus = ni ? realloc(sc->us, cap * sizeof *nus) : NULL;
    if (nus) sc->us = nus;
    int32_t *nue = nus ? realloc(sc->ue, cap * sizeof *nue) : NULL;
    if (nue) sc->ue = nue;
    if (!nue) return -1;
    sc->w = nw, sc->wcap = 2 * cap + 64, sc->cap = cap;
    return 0;
}

/* A character's symbols when the vocabulary lacks it: its bytes' <0xNN> tokens
 * (byte_fallback, when every one is there), else unk (fused with an unk just before
 * it when fuse_unk), else nothing (as Hugging Face's BPE). Returns the new count. */
static int missing_char(const tokjson *t, sym *sy, int k, const char *look, size_t ll, int32_t i,
                        int32_t j, int *unk_open, size_t room) {
    /* room: what the rest of the piece leaves (one symbol a byte); a prefix's bytes may
     * not fit, and the character is then unk */
    if (t->byte_fallback && ll > 0 && (size_t)k + ll <= room) {
        int ok = 1;
        for (size_t q = 0; q < ll; q++) ok &= t->byte_tok[(unsigned char)look[q]] >= 0;
        if (ok) {
            for (size_t q = 0; q < ll; q++) {
                int32_t a = i + (int32_t)q < j ? i + (int32_t)q : j - 1;
                sy[k++] = (sym){t->byte_tok[(unsigned char)look[q]], 0, 0, a, a + 1};
            }
            *unk_open = 0;
            return k;
        }
    }
    if (t->unk < 0) return k;
    if (*unk_open && t->fuse_unk)
        sy[k - 1].ue = j;
    else
        sy[k++] = (sym){t->unk, 0, 0, i, j};
    *unk_open = 1;
    return k;
}

/* the symbols before merging: each character's token, its continuing_subword_prefix
 * on all but the first and its end_of_word_suffix on the last */
static int initial_symbols(const tokjson *t, scratch *sc, size_t n, size_t wn) {
    int k = 0, unk_open = 0;
    size_t pl = t->prefix ? strlen(t->prefix) : 0, sl = t->suffix ? strlen(t->suffix) : 0;
    char look[96];
    for (size_t i = 0, j; i < n; i = j) {
        j = i + 1; /* the character's piece bytes [i, j) */
        while (j < n && sc->cs[j] == sc->cs[i]) j++;
        size_t a = (size_t)sc->cs[i], cl = (j < n ? (size_t)sc->cs[j] : wn) - a;
        int first = i == 0, last = j == n, id = -1;
        size_t ll = (first ? 0 : pl) + cl + (last ? sl : 0), q = 0;
        if (ll > sizeof look) { /* a prefix or suffix past any real file's */
            k = missing_char(t, sc->sy, k, "", 0, (int32_t)i, (int32_t)j, &unk_open,
                             sc->cap - (n - j));
            continue;
        }
        if (!first && pl) memcpy(look, t->prefix, pl), q = pl;
        memcpy(look + q, sc->w + a, cl), q += cl;
        if (last && sl) memcpy(look + q, t->suffix, sl);
        id = tj_vocab_find(t, look, ll);
        if (id >= 0) {
            sc->sy[k++] = (sym){id, 0, 0, (int32_t)i, (int32_t)j};
            unk_open = 0;
        } else {
            k = missing_char(t, sc->sy, k, look, ll, (int32_t)i, (int32_t)j, &unk_open,
                             sc->cap - (n - j));
        }
    }
    return k;
}

/* Hugging Face's Word::merge_all: a heap of (rank, position) over adjacent pairs; the
 * lowest rank, leftmost first; an entry whose pair has changed is skipped. */
static int merge_symbols(const tokjson *t, scratch *sc, int n) {
    sym *sy = sc->sy;
    size_t hn = 0;
    int32_t rank, result;
    for (int i = 0; i < n; i++) sy[i].prev = i - 1, sy[i].next = i + 1 < n ? i + 1 : -1;
    for (int i = 0; i + 1 < n; i++)
        if (tj_merge_find(t, sy[i].id, sy[i + 1].id, &rank, &result))
            heap_push(sc->heap, &hn, (mrg){rank, i, result});
    while (hn > 0) {
        mrg top = heap_pop(sc->heap, &hn);
        sym *s = &sy[top.pos];
        if (s->id < 0 || s->next < 0) continue;
        sym *r = &sy[s->next];
        if (!tj_merge_find(t, s->id, r->id, &rank, &result) || result != top.result) continue;
        s->id = result, s->ue = r->ue;
        r->id = -1; /* gone */
        s->next = r->next;
        if (s->next >= 0) sy[s->next].prev = top.pos;
        if (s->prev >= 0 && tj_merge_find(t, sy[s->prev].id, s->id, &rank, &result))
            heap_push(sc->heap, &hn, (mrg){rank, s->prev, result});
        if (s->next >= 0 && tj_merge_find(t, s->id, sy[s->next].id, &rank, &result))
            heap_push(sc->heap, &hn, (mrg){rank, top.pos, result});
    }
    int k = 0;
    for (int i = 0; i < n; i++)
        if (sy[i].id >= 0) sy[k++] = sy[i];
    return k;
}

/* WordPiece (Hugging Face's): the longest vocabulary entry from each point on, "##"
 * before all but the first; a word with a character no entry covers, or longer than
 * max_input_chars_per_word characters, is one unk. Into sc->sy; the symbol count. */
static int wordpiece_symbols(const tokjson *t, scratch *sc, const unsigned char *p, size_t n) {
    size_t chars = 0, pl = t->prefix ? strlen(t->prefix) : 0;
    for (size_t i = 0; i < n; i++) chars += (p[i] & 0xc0) != 0x80;
    if (chars > (size_t)t->max_chars) goto unk;
    int k = 0;
    for (size_t start = 0; start < n;) {
        /* no entry is longer than max_len bytes: start there, not at the end */
        size_t end = n - start > (size_t)t->max_len ? start + (size_t)t->max_len : n;
        while (end > start && end < n && (p[end] & 0xc0) == 0x80) end--;
        int id = -1;
        for (; end > start; end--) {
            if (end < n && (p[end] & 0xc0) == 0x80) continue; /* not a character boundary */
            size_t q = 0;
            if (start > 0 && pl) memcpy(sc->w, t->prefix, pl), q = pl;
            memcpy(sc->w + q, p + start, end - start);
            if ((id = tj_vocab_find(t, sc->w, q + end - start)) >= 0) break;
        }
        if (id < 0) goto unk;
        sc->sy[k++] = (sym){id, 0, 0, (int32_t)start, (int32_t)end};
        start = end;
    }
    return k;
unk:
    sc->sy[0] = (sym){t->unk, 0, 0, 0, (int32_t)n};
    return 1;
}

/* The piece's tokens into o: p is its n bytes (the inserted prefix first); bytes map
 * to the caller's text through x (from byte 'off' of x, pre bytes inserted) */
static int bpe_piece(const tokjson *t, scratch *sc, const unsigned char *p, size_t n,
                     const tj_text *x, int32_t off, int32_t pre, toks *o) {
    if (n == 0) return 0;
    if (scratch_fit(sc, n + (t->prefix ? strlen(t->prefix) : 0))) return -1;
    size_t wn = 0;
    int ns = -1, id;
    if (t->wordpiece) {
        ns = wordpiece_symbols(t, sc, p, n);
        goto out;
    }
    if (t->unigram) {
        if ((ns = tj_unigram_encode(t, &sc->lat, p, n, sc->uid, sc->us, sc->ue)) < 0) return -1;
        for (int i = 0; i < ns; i++) sc->sy[i] = (sym){sc->uid[i], 0, 0, sc->us[i], sc->ue[i]};
        goto out;
    }
    for (size_t k = 0; k < n;) { /* the vocabulary's spelling: byte-level or as it is */
        if (t->byte_level) {
            sc->cs[k] = (int32_t)wn;
            wn += (size_t)tj_put_utf8((unsigned char *)sc->w + wn, tj_byte_to_cp(p[k]));
            k++;
            continue;
        }
        size_t sub, l = tj_utf8_char(p + k, n - k, &sub, NULL);
        if (!l) l = sub; /* cannot happen: the text is valid UTF-8 */
        for (size_t q = 0; q < l; q++) sc->cs[k + q] = (int32_t)wn;
        memcpy(sc->w + wn, p + k, l);
        wn += l, k += l;
    }
    if (t->ignore_merges && (id = tj_vocab_find(t, sc->w, wn)) >= 0) {
        sc->sy[0] = (sym){id, 0, 0, 0, (int32_t)n};
        ns = 1;
    } else {
        ns = merge_symbols(t, sc, initial_symbols(t, sc, n, wn));
    }
out:
    for (int i = 0; i < ns; i++) {
        /* piece byte u -> x's byte off + u - pre; an inserted byte maps to the first */
        int32_t a = sc->sy[i].us - pre, b = sc->sy[i].ue - 1 - pre;
        size_t ia = (size_t)off + (size_t)(a < 0 ? 0 : a);
        int32_t s = ia < x->n ? x->os[ia] : x->n ? x->oe[x->n - 1] : 0;
        int32_t e = b < 0 ? s : x->oe[(size_t)off + (size_t)b];
        push_tok(o, sc->sy[i].id, s, e);
    }
    return o->oom ? -1 : 0;
}

/* ---- added tokens ------------------------------------------------------------------- */

static int word_char_before(const unsigned char *s, size_t at) {
    if (at == 0) return 0;
    size_t i = at - 1;
    while (i > 0 && (s[i] & 0xc0) == 0x80) i--;
    unsigned cp;
    size_t sub;
    return tj_utf8_char(s + i, at - i, &sub, &cp) && tj_is_word(cp);
}
static int word_char_at(const unsigned char *s, size_t n, size_t at) {
    unsigned cp;
    size_t sub;
    return at < n && tj_utf8_char(s + at, n - at, &sub, &cp) && tj_is_word(cp);
}

/* The leftmost (then longest) added token in s[at, n) with the normalized flag given:
 * its index, and the bytes [*ms, *me) it takes (lstrip / rstrip take the white space
 * beside it, not before 'at'); -1 when there is none. */
static int find_added(const tokjson *t, const unsigned char *s, size_t n, size_t at, int normalized,
                      size_t *ms, size_t *me) {
    for (size_t i = at; i < n; i++) {
        const int *l = t->first_added[s[i]];
        for (; l && *l >= 0; l++) {
            const tj_added *a = &t->added[*l];
            int norm = a->normalized && t->n_norm > 0;
            if (norm != normalized || a->mlen > n - i || memcmp(s + i, a->match, a->mlen)) continue;
            if (a->single_word && (word_char_before(s, i) || word_char_at(s, n, i + a->mlen)))
                continue;
            size_t b = i, e = i + a->mlen;
            unsigned cp;
            size_t sub, cl;
            while (a->lstrip && b > at) {
                size_t k = b - 1;
                while (k > at && (s[k] & 0xc0) == 0x80) k--;
                if (!tj_utf8_char(s + k, b - k, &sub, &cp) || !tj_is_ws(cp)) break;
                b = k;
            }
            while (a->rstrip && e < n && (cl = tj_utf8_char(s + e, n - e, &sub, &cp)) &&
                   tj_is_ws(cp))
                e += cl;
            *ms = b, *me = e;
            return *l;
        }
    }
    return -1;
}

/* ---- sections ----------------------------------------------------------------------- */

typedef struct {
    scratch sc;
    tj_text norm, sub, tmp;
    pieces a, b;
    pcre2_match_data *md;
    unsigned char *pbuf; /* a piece with its inserted prefix */
    size_t pcap;
} work;

/* x's bytes [s, e): pre-tokenized, each piece's BPE into o */
static int encode_pieces(const tokjson *t, work *w, const tj_text *x, toks *o) {
    w->a.n = 0;
    push_piece(&w->a, 0, (int32_t)x->n, 0);
    pieces *in = &w->a, *out = &w->b;
    for (int i = 0; i < t->n_pre; i++) {
        if (pre_step(&t->pre[i], x, in, out, w->md, &w->pbuf, &w->pcap)) return -1;
        pieces *sw = in;
        in = out, out = sw;
    }
    for (size_t i = 0; i < in->n; i++) {
        piece pc = in->p[i];
        const unsigned char *p = x->b + pc.off;
        size_t n = (size_t)(pc.pre + pc.len);
        if (pc.pre) {
            if (n > w->pcap) {
                unsigned char *nb = realloc(w->pbuf, 2 * n);
                if (!nb) return -1;
                w->pbuf = nb, w->pcap = 2 * n;
            }
            w->pbuf[0] = ' ';
            memcpy(w->pbuf + 1, p, (size_t)pc.len);
            p = w->pbuf;
        }
        if (bpe_piece(t, &w->sc, p, n, x, pc.off, pc.pre, o)) return -1;
    }
    return 0;
}

/* one text section (no added token that is matched on the raw text): normalized,
 * split on the normalized added tokens, each part's pieces */
static int encode_section(const tokjson *t, work *w, const tj_text *x0, size_t s, size_t e,
                          toks *o) {
    if (tj_normalize(t, x0, s, e, &w->norm)) return -1;
    const tj_text *x = &w->norm;
    size_t at = 0;
    while (at < x->n) {
        size_t ms = x->n, me = x->n;
        int k = find_added(t, x->b, x->n, at, 1, &ms, &me);
        if (ms > at) {
            w->sub.n = 0;
            tj_text_push(&w->sub, x->b + at, ms - at, 0, 0);
            if (w->sub.oom) return -1;
            memcpy(w->sub.os, x->os + at, (ms - at) * sizeof *x->os);
            memcpy(w->sub.oe, x->oe + at, (ms - at) * sizeof *x->oe);
            if (t->n_pre && t->pre[0].kind == TJ_METASPACE &&
                tj_metaspace(&t->pre[0], &w->sub, &w->tmp))
                return -1;
            if (encode_pieces(t, w, &w->sub, o)) return -1;
        }
        if (k < 0) break;
        push_tok(o, t->added[k].id, x->os[ms], x->oe[me - 1]);
        at = me;
    }
    return o->oom ? -1 : 0;
}

/* text as valid UTF-8 into x, each byte with its range in text; *replaced when an
 * ill-formed subpart became U+FFFD */
static int sanitize(const unsigned char *text, size_t len, tj_text *x, int *replaced) {
    x->n = 0;
    for (size_t i = 0; i < len;) {
        size_t sub, l = tj_utf8_char(text + i, len - i, &sub, NULL);
        if (l) { /* each byte its own range: a byte-level token may hold part of one */
            for (size_t k = i; k < i + l; k++)
                tj_text_push(x, text + k, 1, (int32_t)k, (int32_t)(k + 1));
        } else {
            tj_text_push(x, (const unsigned char *)"\xef\xbf\xbd", 3, (int32_t)i,
                         (int32_t)(i + sub));
            *replaced = 1;
            l = sub;
        }
        i += l;
    }
    return x->oom ? -1 : 0;
}

static int encode_all(const tokjson *t, work *w, const unsigned char *text, size_t len,
                      int add_special, toks *o, int *replaced) {
    tj_text x0 = {0};
    int rc = sanitize(text, len, &x0, replaced);
    if (add_special)
        for (int i = 0; i < t->n_before; i++) push_tok(o, t->post_before[i], 0, 0);
    size_t at = 0;
    while (!rc && at < x0.n) {
        size_t ms = x0.n, me = x0.n;
        int k = find_added(t, x0.b, x0.n, at, 0, &ms, &me);
        if (ms > at) rc = encode_section(t, w, &x0, at, ms, o);
        if (k < 0 || rc) break;
        push_tok(o, t->added[k].id, x0.os[ms], x0.oe[me - 1]);
        at = me;
    }
    if (add_special)
        for (int i = 0; i < t->n_after; i++)
            push_tok(o, t->post_after[i], (int32_t)len, (int32_t)len);
    tj_text_free(&x0);
    return rc || o->oom ? -1 : 0;
}

int tokjson_encode(const tokjson *t, const char *text, size_t len, int add_special, int *ids,
                   int *starts, int *ends, int max, int *replaced) {
    int rep = 0;
    if (replaced) *replaced = 0;
    if (!t || (!text && len) || len > INT_MAX / 4) return -1;
    work w = {0};
    toks o = {0};
    w.md = pcre2_match_data_create(8, NULL);
    int rc = w.md ? encode_all(t, &w, (const unsigned char *)text, len, add_special, &o, &rep) : -1;
    if (!rc) {
        for (size_t i = 0; i < o.n && (int)i < max; i++) {
            if (ids) ids[i] = o.id[i];
            if (starts) starts[i] = o.s[i];
            if (ends) ends[i] = o.e[i];
        }
        if (o.n > INT_MAX) rc = -1;
    }
    if (replaced) *replaced = rep;
    int n = rc ? -1 : (int)o.n;
    free(o.id), free(o.s), free(o.e);
    free(w.sc.sy), free(w.sc.heap), free(w.sc.w), free(w.sc.cs);
    free(w.sc.uid), free(w.sc.us), free(w.sc.ue);
    free(w.sc.lat.best), free(w.sc.lat.from), free(w.sc.lat.id);
    tj_text_free(&w.norm), tj_text_free(&w.sub), tj_text_free(&w.tmp);
    free(w.a.p), free(w.b.p), free(w.pbuf);
    pcre2_match_data_free(w.md);
    return n;
}
