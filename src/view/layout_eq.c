/* layout_eq.c: the equation Concat x W^O = MultiHead in its area, in one row, wrapped
 * (MultiHead under W^O, whose columns it shares) or in one column, whichever gives
 * the largest heatmaps; and the focus view. Each matrix has its shape label and
 * colorbar under it; the head bands sit above Concat and left of W^O. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "layout_internal.h"

static int iround(float v) {
    return (int)lroundf(v);
}

/* Height under a matrix for its shape label, colorbar and colorbar numbers. */
static int matrix_foot(const view_layout *L) {
    return L->pad / 2 + L->line + L->pad / 2 + lay_imax(6, L->font_small / 2) + L->line + L->pad;
}

/* Height under a matrix for its shape label alone (a compact equation). */
static int matrix_foot_compact(const view_layout *L) {
    return L->pad / 2 + L->line + L->pad;
}

static void matrix_box(view_matrix_box *b, const view_layout *L, int x, int y, int w, int h,
                       int rows, int cols) {
    b->rows = rows;
    b->cols = cols;
    b->map = (view_rect){x, y, lay_imax(1, w), lay_imax(1, h)};
    b->shape = (view_rect){x, y + b->map.h + L->pad / 2, b->map.w, L->line};
    b->cbar =
        (view_rect){x, b->shape.y + L->line + L->pad / 2, b->map.w, lay_imax(6, L->font_small / 2)};
}

/* Concat's (and MultiHead's) height for W^O's side s: rows at least as tall as
 * columns are wide and about a text line tall when there is room (avail), never
 * taller than W^O unless cells are square. In one row with W^O, a long text's
 * Concat is squeezed to the row (avail); wrapped or in a column it never is
 * (avail < 0 asks for the unsqueezed height). */
static int concat_height(const view_layout *L, int s, int n, int d, int avail) {
    float cw = (float)s / (float)d;
    float line = (float)L->font_small * 1.1f;
    float row_h = fmaxf(cw, avail < 0 ? line : fminf(line, (float)avail / (float)n));
    int hh = lay_imax(1, iround(row_h * (float)n));
    if (avail >= 0) hh = lay_imin(avail, hh);
    return lay_imin(hh, lay_imax(s, iround(cw * (float)n)));
}

typedef struct {
    int arrange, s, ch; /* W^O's side, Concat's height */
    long area;
} eq_fit;

/* The arrangement's largest W^O side in (w, h); fixed heights and widths around
 * the maps are title_h, band_t (above Concat), foot, sym_w (between matrices,
 * the W^O band included), sym_h. */
static eq_fit fit(int arrange, int w, int h, int n, int d, const view_layout *L, int title_h,
                  int band_t, int band_w, int foot, int sym_w, int sym_h, int min_s, int min_name) {
    eq_fit f = {arrange, 0, 0, 0};
    if (w < min_name) return f;
    int top = title_h + band_t;
    if (arrange == VIEW_EQ_ROW) {
        int avail = h - top - foot;
        int s = lay_imin(avail, (w - 2 * sym_w) / 3);
        if (s < 1) return f;
        f.s = s;
        f.ch = concat_height(L, s, n, d, avail);
        /* a label's room runs on to the next map */
        if (s < min_s || s + sym_w < min_name) return (eq_fit){arrange, 0, 0, 0};
    } else {
        int hi = arrange == VIEW_EQ_WRAP ? (w - sym_w) / 2 : w - band_w;
        int lo = 1;
        if (hi < 1) return f;
        while (lo < hi) { /* largest s that fits the height */
            int s = (lo + hi + 1) / 2, used;
            int ch = concat_height(L, s, n, d, -1);
            if (arrange == VIEW_EQ_WRAP)
                used = top + lay_imax(s, ch) + foot + L->gap + ch + foot;
            else
                used = top + 2 * ch + s + 3 * foot + 2 * sym_h;
            if (used <= h)
                lo = s;
            else
                hi = s - 1;
        }
        f.s = lo;
        f.ch = concat_height(L, lo, n, d, -1);
        int used = arrange == VIEW_EQ_WRAP ? top + lay_imax(lo, f.ch) + 2 * foot + L->gap + f.ch
                                           : top + 2 * f.ch + lo + 3 * foot + 2 * sym_h;
        /* wrapped, Concat's label runs on to W^O, MultiHead's (under W^O) to the edge */
        const int room = arrange == VIEW_EQ_WRAP ? lo + sym_w : lo;
        if (used > h || lo < min_s || room < min_name) return (eq_fit){arrange, 0, 0, 0};
    }
    f.area = (long)f.s * f.s + 2L * f.s * f.ch;
    return f;
}

/* The fixed heights and widths around the equation's maps (see fit), and the
 * width of a symbol alone (eq_w). */
typedef struct {
    int title_h, band_t, band_w, sym_w, sym_h, foot, min_s, eq_w;
    int min_name; /* a label's room for its name alone, and the title's shortest form */
    int compact;  /* no colorbars: each matrix its shape label alone under it */
} eq_sizes;

/* The widest of the matrices' names alone (a label keeps its name before its
 * shape; the title's shortest form, "Concat W^O", is no wider), in the small size. */
static int name_w(const lay_ctx *cx, const view_layout *L) {
    return lay_text_w(cx, "MultiHead", L->font_small, 0) + 2;
}

/* Measures them for an (n, d) layer of h heads; sets the title's place in area. */
static eq_sizes eq_measure(view_layout *L, lay_ctx *cx, view_rect area, int n, int d, int h) {
    eq_sizes z;
    /* the title's superscript (W^O) rises above its line: room for it above */
    const int sup = iround((float)L->font * 0.30f);
    z.title_h = L->line + L->pad + sup;
    L->eq_title = (view_rect){area.x, area.y + sup, area.w, L->line + L->pad};
    /* the bands hold head numbers: a line of small text tall, "64" wide */
    char num[16];
    view_int_text(num, sizeof num, h);
    z.band_t = lay_line_h(cx, L->font_small) + 2;
    z.band_w = lay_text_w(cx, num, L->font_small, 0) + L->pad / 2 + 2;
    z.eq_w = lay_text_w(cx, "=", L->font_title, 1) + 2 * L->gap; /* a symbol alone */
    z.sym_w = z.eq_w + z.band_w;
    z.sym_h = lay_line_h(cx, L->font_title);
    z.foot = matrix_foot(L);
    z.compact = 0;

    /* a matrix is at least as wide as its shape label and colorbar numbers */
    char lab[48];
    view_shape_label(lab, sizeof lab, d, d);
    int min_s = lay_text_w(cx, lab, L->font_small, 0);
    view_shape_label(lab, sizeof lab, n, d);
    min_s = lay_imax(min_s, lay_text_w(cx, lab, L->font_small, 0));
    z.min_s = lay_imax(min_s, lay_text_w(cx,
                                         "\xE2\x88\x92"
                                         "0.000",
                                         L->font_small, 0)) +
              2;
    z.min_name = name_w(cx, L);
    return z;
}

/* The arrangement cx allows that gives the largest heatmaps in area (ties in
 * reading order), with the height to spare given to Concat and MultiHead; *fits
 * is 0 when none fits (then one row as small as it must be). */
static eq_fit choose_fit(const view_layout *L, const lay_ctx *cx, view_rect area, int n, int d,
                         const eq_sizes *z, int *fits) {
    eq_fit best = {VIEW_EQ_ROW, 0, 0, 0};
    for (int a = VIEW_EQ_ROW; a <= VIEW_EQ_COLUMN; a++) {
        if (cx->eq_allow && !(cx->eq_allow & (1 << a))) continue;
        eq_fit f = fit(a, area.w, area.h, n, d, L, z->title_h, z->band_t, z->band_w, z->foot,
                       z->sym_w, z->sym_h, z->min_s, z->min_name);
        if (f.area > best.area * 21 / 20 || best.s == 0) best = f; /* ties: reading order */
    }
    *fits = best.s > 0;
    if (!*fits) /* nothing fits: one row as small as it must be (the caller knows) */
        best = fit(VIEW_EQ_ROW, area.w, area.h, n, d, L, z->title_h, z->band_t, z->band_w, z->foot,
                   z->sym_w, z->sym_h, 1, 0);
    if (best.s < 1) best.s = 1;
    if (best.ch < 1) best.ch = 1;
    if (best.arrange != VIEW_EQ_ROW) {
        /* height to spare goes to Concat and MultiHead (taller rows, at most three
           text lines each, never taller than W^O) */
        const int title_h = z->title_h, band_t = z->band_t, foot = z->foot;
        int used = best.arrange == VIEW_EQ_WRAP
                       ? title_h + band_t + lay_imax(best.s, best.ch) + 2 * foot + L->gap + best.ch
                       : title_h + band_t + 2 * best.ch + best.s + 3 * foot + 2 * z->sym_h;
        int spare = area.h - used;
        if (best.arrange == VIEW_EQ_COLUMN) spare /= 2;
        int most = lay_imin(best.s, iround((float)n * (float)L->font_small * 3.3f));
        if (best.arrange == VIEW_EQ_WRAP && best.ch < best.s)
            most = lay_imin(most, best.s); /* row 1 stays W^O's height */
        if (spare > 0 && best.ch < most) best.ch = lay_imin(most, best.ch + spare);
    }
    return best;
}

/* Concat, W^O, MultiHead and the two symbols in the arrangement best, from the
 * top-left of area; then the head bands beside Concat and W^O. */
static void place_equation(view_layout *L, view_rect area, const eq_fit *best, int n, int d,
                           const eq_sizes *z) {
    const int sz = best->s, ch = best->ch, foot = z->foot, sym_w = z->sym_w, sym_h = z->sym_h;
    const int band_t = z->band_t, band_w = z->band_w, eq_w = z->eq_w;
    const int top = area.y + z->title_h + band_t;
    int x = area.x;

    if (best->arrange == VIEW_EQ_COLUMN) {
        x += band_w;
        int y = top;
        matrix_box(&L->concat, L, x, y, sz, ch, n, d);
        y += ch + foot;
        L->times_sym = (view_rect){x, y, sz, sym_h};
        y += sym_h;
        matrix_box(&L->w_o, L, x, y, sz, sz, d, d);
        y += sz + foot;
        L->equals_sym = (view_rect){x, y, sz, sym_h};
        y += sym_h;
        matrix_box(&L->out, L, x, y, sz, ch, n, d);
    } else {
        /* symbols sit beside the shorter of the maps, so they never meet a shape label */
        int sym_y = top + lay_imax(0, lay_imin(ch, sz) / 2 - sym_h / 2);
        matrix_box(&L->concat, L, x, top, sz, ch, n, d);
        x += sz;
        L->times_sym = (view_rect){x, sym_y, eq_w, sym_h};
        x += sym_w;
        matrix_box(&L->w_o, L, x, top, sz, sz, d, d);
        if (best->arrange == VIEW_EQ_ROW) {
            x += sz;
            L->equals_sym = (view_rect){x, sym_y, eq_w, sym_h};
            x += eq_w;
            matrix_box(&L->out, L, x, top, sz, ch, n, d);
        } else {
            int y2 = top + lay_imax(sz, ch) + foot + L->gap;
            matrix_box(&L->out, L, x, y2, sz, ch, n, d);
            int sy = y2 + lay_imax(0, ch / 2 - sym_h / 2);
            L->equals_sym = (view_rect){x - sym_w, sy, eq_w, sym_h};
        }
    }
    L->concat_band =
        (view_rect){L->concat.map.x, L->concat.map.y - band_t, L->concat.map.w, band_t - 2};
    L->wo_band = (view_rect){L->w_o.map.x - band_w, L->w_o.map.y, band_w - 2, L->w_o.map.h};
}

/* The text sizes the equation is laid out with: the data's, or the controls' when it
 * gives way (the smallest text the window shows, legible from where its buttons are). */
typedef struct {
    int font, font_small, font_title, line, pad, gap;
} eq_text;

static eq_text text_of(const view_layout *L) {
    return (eq_text){L->font, L->font_small, L->font_title, L->line, L->pad, L->gap};
}

static void text_set(view_layout *L, eq_text t) {
    L->font = t.font, L->font_small = t.font_small, L->font_title = t.font_title;
    L->line = t.line, L->pad = t.pad, L->gap = t.gap;
}

/* The texts the equation takes when it gives way, larger first: the controls' sizes
 * when they are smaller than the data's (the window's buttons, legible from where
 * they are), then the base zoom's (a presentation's controls follow the zoom), in
 * the data's proportions (title 20 : text 16 : small 14, gap 12 : pad 8). A font of
 * 0: none smaller than the data's. */
static void give_way_texts(const view_layout *L, const lay_ctx *cx, eq_text out[2]) {
    const view_state *s = cx->s;
    memset(out, 0, 2 * sizeof *out);
    int k = 0;
    if (L->ui_font > 0 && L->ui_font < L->font)
        out[k++] = (eq_text){L->ui_font, L->ui_small, lay_imax(1, (L->ui_font * 20 + 8) / 16),
                             L->ui_line, L->ui_pad,   lay_imax(2, (L->ui_pad * 3 + 1) / 2)};
    const float z =
        (s->ui_scale > 0 ? s->ui_scale : 1.0f) * (s->zoom_base > 0 ? s->zoom_base : 1.0f);
    const int font = lay_imax(1, iround(16.0f * z));
    if (font >= (k ? out[0].font : L->font)) return;
    eq_text t;
    t.font = font;
    t.font_small = lay_imax(1, iround(14.0f * z));
    t.font_title = lay_imax(1, iround(20.0f * z));
    t.line = lay_line_h(cx, font);
    if (t.line < font) t.line = font + font / 4;
    t.pad = lay_imax(2, iround(8.0f * z));
    t.gap = lay_imax(2, iround(12.0f * z));
    out[k] = t;
}

int lay_eq_min_font(const view_layout *L, const lay_ctx *cx) {
    eq_text t[2];
    give_way_texts(L, cx, t);
    return t[1].font > 0 ? t[1].font : t[0].font > 0 ? t[0].font : L->font;
}

/* One way of laying the equation out in area at L's text sizes: with colorbars, or
 * compact (each matrix as wide as its shape label, no colorbars; hovering a cell
 * still gives its value). */
static eq_fit try_fit(view_layout *L, const lay_ctx *cx, view_rect area, int n, int d, int h,
                      int compact, eq_sizes *z, int *fits) {
    *z = eq_measure(L, (lay_ctx *)cx, area, n, d, h);
    if (compact) {
        char lab[48];
        view_shape_label(lab, sizeof lab, d, d);
        z->min_s = lay_text_w(cx, lab, L->font_small, 0);
        view_shape_label(lab, sizeof lab, n, d);
        z->min_s = lay_imax(z->min_s, lay_text_w(cx, lab, L->font_small, 0)) + 2;
        z->foot = matrix_foot_compact(L);
        z->compact = 1;
    }
    return choose_fit(L, cx, area, n, d, z, fits);
}

long lay_equation(view_layout *L, lay_ctx *cx, view_rect area) {
    const view_state *s = cx->s;
    const int n = s->layer ? s->layer->n : 1;
    const int d = s->layer ? s->layer->d_model : 1;
    const int h = s->layer ? s->layer->h : 1;
    L->eq_area = area;
    L->eq_font = L->eq_font_small = L->eq_font_title = L->eq_line = L->eq_pad = 0;
    eq_text small[2];
    give_way_texts(L, cx, small);
    const eq_text data = text_of(L);
    /* the data's size with colorbars; when the heads asked for the room (a zoom above
       the base, the focus view), the equation gives way: its colorbars dropped, then
       its text at the smaller sizes with them, then without */
    const struct {
        int text, compact; /* text: 0 the data's, 1 and 2 small[0] and small[1] */
    } ways[] = {{0, 0}, {0, 1}, {1, 0}, {1, 1}, {2, 0}, {2, 1}};
    const int nways = !cx->eq_compact ? 1 : 6;
    eq_sizes z;
    eq_fit best = {VIEW_EQ_ROW, 0, 0, 0};
    int fits = 0, w = 0;
    for (; w < nways && !fits; w++) {
        if (ways[w].text && small[ways[w].text - 1].font <= 0) continue;
        text_set(L, ways[w].text ? small[ways[w].text - 1] : data);
        best = try_fit(L, cx, area, n, d, h, ways[w].compact, &z, &fits);
    }
    if (!fits) { /* none fits: at the data's size, as small as it must be (the caller knows) */
        text_set(L, data);
        best = try_fit(L, cx, area, n, d, h, 0, &z, &fits);
        w = 1;
    }
    L->eq_arrange = best.arrange;
    place_equation(L, area, &best, n, d, &z);
    if (z.compact) { /* no colorbars: empty rectangles, which nothing draws */
        view_matrix_box *m[3] = {&L->concat, &L->w_o, &L->out};
        for (int i = 0; i < 3; i++) m[i]->cbar = (view_rect){m[i]->shape.x, m[i]->shape.y, 0, 0};
    }
    if (ways[w - 1].text && fits) { /* the renderer draws it at these sizes */
        L->eq_font = L->font, L->eq_font_small = L->font_small, L->eq_font_title = L->font_title;
        L->eq_line = L->line, L->eq_pad = L->pad;
    }
    text_set(L, data);
    if (!fits) return -1;
    return (long)L->concat.map.w * L->concat.map.h + (long)L->w_o.map.w * L->w_o.map.h +
           (long)L->out.map.w * L->out.map.h;
}

/* Q_i, K_i, V_i and head_i in cols columns (4 / cols rows) in r, under the focus
 * caption (at least caption_w wide). Returns one map's area, or -1 when a matrix
 * would be narrower than its shape label, colorbar numbers or title, or shorter
 * than a text line (n px for fewer rows). */
static long qkv_grid(view_layout *L, lay_ctx *cx, view_rect r, int cols, int caption_w) {
    const view_state *s = cx->s;
    const int n = s->layer ? s->layer->n : 1;
    const int dk = s->layer ? s->layer->d_k : 1;
    const int rows = 4 / cols;
    if (r.w < caption_w || r.h <= 0) return -1;
    char lab[48];
    view_shape_label(lab, sizeof lab, n, dk);
    const int min_w =
        lay_imax(lay_imax(lay_text_w(cx, lab, L->font_small, 0), lay_text_w(cx,
                                                                            "\xE2\x88\x92"
                                                                            "0.000",
                                                                            L->font_small, 0)) +
                     2,
                 lay_text_w(cx, "head64", L->font, 0));
    L->focus_caption = (view_rect){r.x, r.y, r.w, L->line};
    const int top = r.y + L->line + L->pad;
    const int cell_w = (r.w - (cols - 1) * L->gap) / cols;
    const int cell_h = (r.y + r.h - top - (rows - 1) * L->gap) / rows;
    const int map_h_max = cell_h - matrix_foot(L) - L->line;
    if (cell_w - L->pad < min_w || map_h_max < lay_imin(n, L->line)) return -1;
    float rh = fminf((float)cell_w / (float)dk * 2.0f, (float)map_h_max / (float)n);
    int mh = lay_imax(1, lay_imin(map_h_max, iround(rh * (float)n)));
    int mw = lay_imax(1, lay_imin(cell_w, iround((float)mh / (float)n * (float)dk)));
    if (mw < cell_w / 3) mw = lay_imin(cell_w, cell_w / 3);
    mw = lay_imax(mw, min_w);
    for (int i = 0; i < 4; i++) {
        int x = r.x + (i % cols) * (cell_w + L->gap);
        int y = top + (i / cols) * (cell_h + L->gap) + L->line;
        matrix_box(&L->qkv[i], L, x, y, mw, mh, n, dk);
        L->qkv[i].cbar.w = lay_imin(L->qkv[i].cbar.w, cell_w - L->pad);
        L->qkv[i].shape.w = L->qkv[i].cbar.w;
    }
    return (long)mw * mh;
}

/* One arrangement of the focus view: the head in the part frac % of area (its
 * width when beside, else its height), Q_i, K_i, V_i, head_i in cols columns in
 * the room it leaves. Returns how well it uses the room, or -1e300 when they do not
 * fit. */
static double focus_try(view_layout *L, lay_ctx *cx, view_rect area, int below, int frac, int cols,
                        int caption_w) {
    view_rect a = area;
    if (below)
        a.h = area.h * frac / 100;
    else
        a.w = area.w * frac / 100;
    lay_heads(L, cx, a, 1, 0);
    L->focus = cx->s->look.focus;
    const view_rect used = lay_heads_used(L, cx);
    view_rect r = area;
    if (below) {
        r.y = used.y + used.h + L->gap;
        r.h = area.y + area.h - r.y;
    } else {
        r.x = used.x + used.w + L->gap;
        r.w = area.x + area.w - r.x;
    }
    const long q = qkv_grid(L, cx, r, cols, caption_w);
    const long side = L->shown_heads > 0 ? L->heads[0].map.w : 0;
    if (q < 0 || side < 1 || used.w > area.w || used.h > area.h) return -1e300;
    return 0.7 * log((double)side * (double)side) + 0.3 * log(4.0 * (double)q);
}

double lay_focus(view_layout *L, lay_ctx *cx, view_rect area) {
    const view_state *s = cx->s;
    /* the caption's form with the keys (". , step · Esc returns") where it fits, else
       its shortest: "head 12 (Esc returns)" (a figure: "head 12") */
    char cap[2][64];
    snprintf(cap[0], sizeof cap[0], "head %d: . , step \xC2\xB7 Esc returns", s->look.focus);
    snprintf(cap[1], sizeof cap[1], s->figure ? "head %d" : "head %d (Esc returns)", s->look.focus);
    static const int fracs[] = {45, 50, 55, 60, 64, 70, 75};
    static const int cols_beside[] = {2, 1}, cols_below[] = {4, 2};
    double best = -1e301;
    int best_below = 0, best_frac = 64, best_cols = 2;
    for (int k = s->figure ? 1 : 0; k < 2 && best <= -1e299; k++) {
        const int caption_w = lay_text_w(cx, cap[k], L->font, 1);
        for (int below = 0; below < 2; below++)
            for (size_t f = 0; f < sizeof fracs / sizeof fracs[0]; f++)
                for (int c = 0; c < 2; c++) {
                    const int cols = below ? cols_below[c] : cols_beside[c];
                    const double v = focus_try(L, cx, area, below, fracs[f], cols, caption_w);
                    if (v > best + 1e-9)
                        best = v, best_below = below, best_frac = fracs[f], best_cols = cols;
                }
    }
    focus_try(L, cx, area, best_below, best_frac, best_cols, 0);
    if (best <= -1e299) { /* nothing fits: the head alone (no Q_i, K_i, V_i, head_i) */
        lay_heads(L, cx, area, 1, 0);
        L->focus = s->look.focus;
        memset(L->qkv, 0, sizeof L->qkv);
        L->focus_caption = (view_rect){0, 0, 0, 0};
    }
    return best;
}
