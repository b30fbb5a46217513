/* layout_caption.c: the caption band of a lesson (s->caption): where it goes (under
 * the figure, or beside it in a wide window), its sizes (presentation style: the
 * heading at 44 px and the text at 32 px for 1920 x 1080, lowered when a long
 * caption needs it but never under 36 and 28 px, in proportion to the window), the
 * progress strip and the "step k of N" line, and every markup run placed on lines
 * wrapped at word boundaries. The rest of the view is laid out in C->figure
 * (layout_compute.c). No drawing: caption.c draws it. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "layout_internal.h"

#define imax lay_imax
#define imin lay_imin

static int iround(float v) {
    return (int)lroundf(v);
}

static float size_k(int width, int height) {
    return fminf((float)width / 1920.0f, (float)height / 1080.0f);
}

/* The smallest caption text on a page `height` px tall (view.h, VIEW_CAPTION_FLOOR_DIV). */
static int page_floor(int height) {
    return imax(1, (height + VIEW_CAPTION_FLOOR_DIV - 1) / VIEW_CAPTION_FLOOR_DIV);
}

void view_caption_sizes(int width, int height, int *heading, int *text, int *heading_floor,
                        int *text_floor) {
    const float k = size_k(width, height);
    /* never under the text floor of a projected page (1/40 of its height) */
    const int floor_px = page_floor(height);
    const int tf = imax(floor_px, imax(1, (int)ceilf(28.0f * k - 1e-3f)));
    const int hf = imax(tf * 36 / 28, imax(1, (int)ceilf(36.0f * k - 1e-3f)));
    if (heading_floor) *heading_floor = hf;
    if (text_floor) *text_floor = tf;
    if (heading) *heading = imax(hf, iround(44.0f * k));
    if (text) *text = imax(tf, iround(32.0f * k));
}

typedef struct {
    view_caption_box *C;
    view_measure_fn measure;
    void *ud;
} cap_ctx;

static int line_h(const cap_ctx *x, int size) {
    return lay_measured_line(x->measure, x->ud, size);
}

static int run_size(int size, int level) {
    return level ? size * 72 / 100 : size; /* the formula strip's proportions (labels.c) */
}

static int run_dy(int size, int level) {
    return level > 0 ? -size * 30 / 100 : (level < 0 ? size * 42 / 100 : 0);
}

/* One block (the heading, or the text) flowed into lines of width from x0. */
typedef struct {
    cap_ctx *x;
    int size, bold_all, heading;
    int x0, width, pitch;
    int cx, line;   /* pen, line within the block */
    int first_run;  /* the block's first run in C */
    int line_first; /* first run of the line being filled */
} flow;

static void new_line(flow *f) {
    f->line++;
    f->cx = f->x0;
    f->line_first = f->x->C->run_count;
}

/* Places text at the pen (the caller made room). */
static int place(flow *f, const char *text, size_t len, int level, int bold, int w) {
    view_caption_box *C = f->x->C;
    if (C->run_count >= VIEW_CAPTION_RUNS) {
        C->cut = 1;
        return -1;
    }
    view_caption_run *r = &C->run[C->run_count++];
    if (len >= sizeof r->text) len = sizeof r->text - 1;
    memcpy(r->text, text, len);
    r->text[len] = '\0';
    r->level = level;
    r->bold = bold;
    r->size = run_size(f->size, level);
    r->w = w;
    r->x = f->cx;
    r->y = f->line * f->pitch + run_dy(f->size, level); /* relative; moved at the end */
    r->heading = f->heading;
    r->line = f->line; /* within the block for now */
    f->cx += w;
    return 0;
}

static size_t char_len(const char *p) {
    const unsigned char c = (unsigned char)*p;
    size_t n = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 1;
    for (size_t i = 1; i < n; i++)
        if (!p[i]) return i;
    return n;
}

/* A run wider than a whole line: cut at characters into pieces that each fit. */
static void place_split(flow *f, const view_markup_run *m, int bold) {
    const int sz = run_size(f->size, m->level);
    const char *p = m->text;
    while (*p) {
        char piece[VIEW_MARKUP_RUN_TEXT];
        size_t len = 0;
        int w = 0;
        while (p[len]) {
            size_t n = char_len(p + len);
            memcpy(piece, p, len + n);
            piece[len + n] = '\0';
            int pw = view_text_width(f->x->measure, f->x->ud, piece, sz, bold);
            if (f->cx + pw > f->x0 + f->width && (len > 0 || f->cx > f->x0)) break;
            len += n;
            w = pw;
        }
        if (len == 0) { /* not even one character at the pen: a new line */
            new_line(f);
            continue;
        }
        if (place(f, p, len, m->level, bold, w)) return;
        p += len;
        if (*p) new_line(f);
    }
}

/* Flows runs [0, n) of m. Returns the number of lines. */
static int flow_block(flow *f, const view_markup_run *m, int n) {
    const cap_ctx *x = f->x;
    f->cx = f->x0;
    f->line = 0;
    f->first_run = f->line_first = x->C->run_count;
    const int space_w = view_text_width(x->measure, x->ud, " ", f->size, f->bold_all);
    int pending_space = 0;
    for (int i = 0; i < n;) {
        if (!strcmp(m[i].text, "\n")) {
            new_line(f);
            pending_space = 0;
            i++;
            continue;
        }
        if (!strcmp(m[i].text, " ")) {
            pending_space = f->cx > f->x0; /* no space at a line's start */
            i++;
            continue;
        }
        int j = i, ww = 0;
        for (; j < n && strcmp(m[j].text, " ") && strcmp(m[j].text, "\n"); j++)
            ww += view_text_width(x->measure, x->ud, m[j].text, run_size(f->size, m[j].level),
                                  m[j].bold || f->bold_all);
        int sp = pending_space ? space_w : 0;
        if (f->cx + sp + ww > f->x0 + f->width && f->cx > f->x0) {
            new_line(f);
            sp = 0;
        }
        f->cx += sp;
        pending_space = 0;
        for (int k = i; k < j; k++) { /* the word, run by run */
            const int bold = m[k].bold || f->bold_all;
            const int w =
                view_text_width(x->measure, x->ud, m[k].text, run_size(f->size, m[k].level), bold);
            if (f->cx + w > f->x0 + f->width) { /* a word wider than the line */
                place_split(f, &m[k], bold);
            } else if (place(f, m[k].text, strlen(m[k].text), m[k].level, bold, w)) {
                return f->line + 1;
            }
        }
        i = j;
    }
    return f->line + 1;
}

/* Moves the block's runs so that its highest box starts at y; returns its bottom
   (an empty block: y + one line). line0 is the block's first line overall. */
static int settle_block(flow *f, int y, int line0, int lines) {
    view_caption_box *C = f->x->C;
    int top = 1 << 30, bottom = -(1 << 30);
    for (int i = f->first_run; i < C->run_count; i++) {
        const view_caption_run *r = &C->run[i];
        top = imin(top, r->y);
        bottom = imax(bottom, r->y + line_h(f->x, r->size));
    }
    /* the last line's own box, even when it holds nothing (a blank last line) */
    top = imin(top, 0);
    bottom = imax(bottom, (lines - 1) * f->pitch + line_h(f->x, f->size));
    for (int i = f->first_run; i < C->run_count; i++) {
        C->run[i].y += y - top;
        C->run[i].line += line0;
    }
    return y + bottom - top;
}

/* The runs of markup (or, when it is broken, of its plain text split at spaces
   and lines). Returns how many. */
static int markup_or_plain(const char *text, view_markup_run *m, int max, int *broken) {
    char err[96];
    int n = view_markup_runs(text ? text : "", m, max, err, sizeof err);
    if (n >= 0) return n;
    *broken = 1;
    n = 0;
    for (const char *p = text; *p && n < max;) {
        size_t len = 0;
        if (*p == ' ' || *p == '\n') {
            len = 1;
        } else {
            while (p[len] && p[len] != ' ' && p[len] != '\n' && len < VIEW_MARKUP_RUN_TEXT - 5)
                len += char_len(p + len);
        }
        memcpy(m[n].text, p, len);
        m[n].text[len] = '\0';
        m[n].level = m[n].bold = 0;
        n++;
        p += len;
    }
    return n;
}

/* The whole band's content at the given sizes from y = 0, in a band of content
   width cw from x0. Returns its content height. */
static int lay_content(cap_ctx *x, const view_state *s, int x0, int cw, int hs, int ts, int ms,
                       int pad, const view_markup_run *hm, int hn, const view_markup_run *tm,
                       int tn) {
    view_caption_box *C = x->C;
    const view_caption *cap = s->caption;
    C->run_count = 0;
    C->cut = 0;
    C->heading_size = hs;
    C->text_size = ts;
    C->meta_size = ms;
    int y = 0;
    /* the progress strip and the step line */
    C->step = cap->step;
    C->steps = cap->steps > 0 ? cap->steps : 0;
    const int meta_line = line_h(x, ms);
    if (C->steps > 0) {
        C->seg_gap = C->steps > 1 ? imax(2, imin(ms / 3, cw / (C->steps * 4))) : 0;
        C->strip = (view_rect){x0, y, cw, imax(4, ms * 2 / 5)};
        y += C->strip.h + pad / 2;
    } else {
        C->strip = (view_rect){0, 0, 0, 0};
    }
    C->step_text[0] = C->hint_text[0] = C->rec_text[0] = C->title_text[0] = '\0';
    if (C->steps > 0)
        snprintf(C->step_text, sizeof C->step_text, "step %d of %d", cap->step, C->steps);
    if (!s->figure && cap->explored && cap->step > 0)
        snprintf(C->hint_text, sizeof C->hint_text, "F5: back to step %d", cap->step);
    if (!s->figure && cap->recording)
        snprintf(C->rec_text, sizeof C->rec_text, "\xE2\x97\x8F recording"); /* ● */
    int right = x0 + cw, left = x0;
    const int sep = ms;
    if (C->step_text[0]) {
        const int w = view_text_width(x->measure, x->ud, C->step_text, ms, 1);
        C->step_label = (view_rect){right - w, y, w, meta_line};
        right -= w + sep;
    } else {
        C->step_label = (view_rect){0, 0, 0, 0};
    }
    if (C->hint_text[0]) {
        const int w = view_text_width(x->measure, x->ud, C->hint_text, ms, 0);
        C->hint = (view_rect){right - w, y, w, meta_line};
        right -= w + sep;
    } else {
        C->hint = (view_rect){0, 0, 0, 0};
    }
    if (C->rec_text[0]) {
        const int w = view_text_width(x->measure, x->ud, C->rec_text, ms, 1);
        C->rec = (view_rect){left, y, w, meta_line};
        left += w + sep;
    } else {
        C->rec = (view_rect){0, 0, 0, 0};
    }
    C->title = (view_rect){0, 0, 0, 0};
    if (cap->title && cap->title[0] && right > left) {
        view_fit_text(C->title_text, sizeof C->title_text, cap->title, right - left, ms, 0,
                      x->measure, x->ud);
        const int w = view_text_width(x->measure, x->ud, C->title_text, ms, 0);
        if (C->title_text[0]) C->title = (view_rect){left, y, w, meta_line};
    }
    const int has_meta = C->step_text[0] || C->hint_text[0] || C->rec_text[0] || C->title.w;
    C->meta = has_meta ? (view_rect){x0, y, cw, meta_line} : (view_rect){0, 0, 0, 0};
    if (has_meta) y += meta_line + pad / 3;
    if (!C->steps && !has_meta) y = 0;

    int line0 = 0;
    flow f = {x, hs, 1, 1, x0, cw, line_h(x, hs) + hs / 8, 0, 0, 0, 0};
    if (hn > 0) {
        const int lines = flow_block(&f, hm, hn);
        y = settle_block(&f, y, line0, lines) + ts / 3;
        line0 += lines;
    }
    if (tn > 0) {
        flow g = {x, ts, 0, 0, x0, cw, line_h(x, ts) + ts / 4, 0, 0, 0, 0};
        const int lines = flow_block(&g, tm, tn);
        y = settle_block(&g, y, line0, lines);
        line0 += lines;
    } else if (hn > 0) {
        y -= ts / 3;
    }
    C->lines = line0;
    return y;
}

/* Moves the band's content down by dy. */
static void shift_content(view_caption_box *C, int dy) {
    view_rect *r[] = {&C->strip, &C->meta, &C->step_label, &C->title, &C->hint, &C->rec};
    for (size_t i = 0; i < sizeof r / sizeof r[0]; i++)
        if (r[i]->w > 0) r[i]->y += dy;
    for (int i = 0; i < C->run_count; i++) C->run[i].y += dy;
}

void view_caption_layout(view_caption_box *C, const view_state *s, view_measure_fn measure,
                         void *ud) {
    memset(C, 0, sizeof *C);
    const int W = s->width, H = s->height;
    C->figure = (view_rect){0, 0, W, H};
    if (!s->caption || s->panel != VIEW_PANEL_ALL) return;
    cap_ctx x = {C, measure, ud};
    static view_markup_run hm[VIEW_CAPTION_RUNS], tm[VIEW_CAPTION_RUNS]; /* one thread lays out */
    const int hn = markup_or_plain(s->caption->heading, hm, VIEW_CAPTION_RUNS, &C->broken);
    const int tn = markup_or_plain(s->caption->text, tm, VIEW_CAPTION_RUNS, &C->broken);

    int hs, ts, hf, tf;
    view_caption_sizes(W, H, &hs, &ts, &hf, &tf);
    const float k = size_k(W, H);
    /* a zoom above the window's base zoom enlarges the caption with the rest */
    const float base = s->zoom_base > 0 ? s->zoom_base : 1.0f,
                zoom = s->look.zoom > 0 ? s->look.zoom : 1.0f;
    const float zk = fminf(2.0f, fmaxf(1.0f, zoom / base));
    hs = iround((float)hs * zk), ts = iround((float)ts * zk);
    const int margin = imax(2, iround(12.0f * k)), pad = imax(4, iround(18.0f * k));
    C->side = W * 10 >= H * 22; /* a very wide window: a column beside the figure */
    const int band_w = C->side ? imax(1, W * 34 / 100) : imax(1, W - 2 * margin);
    const int cw = imax(1, band_w - 2 * pad);
    const int bx = C->side ? W - margin - band_w : margin;
    const int room = imax(1, H - 2 * margin);
    /* under the figure the band takes at most 36 % of the window at the sizes it
       prefers; a longer caption lowers them step by step to the floor */
    const int share = C->side ? room : H * 36 / 100;
    int h = 0;
    for (float f = 1.0f;; f -= 0.05f) {
        const int a = imax(hf, iround((float)hs * f)), b = imax(tf, iround((float)ts * f));
        const int ms = imax(page_floor(H), b * 3 / 4);
        h = lay_content(&x, s, bx + pad, cw, a, b, ms, pad, hm, hn, tm, tn) + 2 * pad;
        C->at_floor = a == hf && b == tf;
        if (h <= share || C->at_floor) break;
    }
    if (h > room) C->cut = 1; /* more than the window holds even at the floor */
    if (C->side) {
        C->band = (view_rect){bx, margin, band_w, room};
        C->figure = (view_rect){0, 0, imax(1, bx - margin / 2), H};
    } else {
        const int bh = imin(h, room);
        C->band = (view_rect){bx, H - margin - bh, band_w, bh};
        C->figure = (view_rect){0, 0, W, imax(1, C->band.y - margin / 2)};
    }
    shift_content(C, C->band.y + pad);
    C->shown = 1;
}
