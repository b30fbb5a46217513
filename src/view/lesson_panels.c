/* lesson_panels.c: the two panels under the equation. "Where heads look alike":
 * the h x h matrix of 1 - the mean Jensen-Shannon divergence between the heads'
 * attention rows (bright: two heads look at the same keys; what they pass on may
 * still differ, which X and D measure). "Cost":
 * parameters 4 d^2 whatever h is, the h n^2 attention weights, the projections'
 * 8 n d^2 FLOPs beside the attention's 4 n^2 d, which dominates, the time taken.
 * Where they go is layout_lesson.c's. */
#include <stdio.h>

#include "view_internal.h"

/* 1234567 as "1,234,567". */
static void thousands(char *buf, size_t len, double v) {
    char raw[40];
    snprintf(raw, sizeof raw, "%.0f", v);
    size_t n = 0, digits = 0;
    for (const char *p = raw; *p; p++) digits += *p >= '0' && *p <= '9';
    for (const char *p = raw; *p && n + 2 < len; p++) {
        buf[n++] = *p;
        if (*p >= '0' && *p <= '9' && --digits > 0 && digits % 3 == 0) buf[n++] = ',';
    }
    buf[n] = '\0';
}

/* The first of the variants (longest first) that fits w pixels, else the last cut. */
static void fit_variant(const view_ctx *c, char *buf, size_t len, const char *const *v, int count,
                        int w, int size, int bold) {
    for (int i = 0; i < count - 1; i++)
        if (view_tw(c, v[i], size, bold) <= w) {
            snprintf(buf, len, "%s", v[i]);
            return;
        }
    view_fit_text(buf, len, v[count - 1], w, size, bold, c->measure, c->ud);
}

static void draw_redundancy(const view_ctx *c) {
    const view_layout *L = c->L;
    const attn_layer *layer = c->s->layer;
    const int h = layer->h, fs = L->font_small;
    char buf[160];
    static const char *const titles[] = {"Where do heads look alike?", "Where heads look alike",
                                         "Heads alike?"};
    fit_variant(c, buf, sizeof buf, titles, 3, L->redund_title.w, L->font, 1);
    draw_text(c->dl, L->redund_title.x, L->redund_title.y, buf, L->font, c->th.text, 1, 0);
    if (!c->s->head_divergence || h > 16) {
        draw_text(c->dl, L->redund_map.x, L->redund_map.y,
                  h > 16 ? "compared for at most 16 heads" : "not computed", fs, c->th.muted, 0, 0);
        return;
    }
    float sim[16 * 16];
    for (int i = 0; i < h * h; i++) sim[i] = 1.0f - c->s->head_divergence[i];
    view_rect map = L->redund_map;
    int iw = 0, ih = 0;
    uint64_t key = view_key_mix(0x5E0D000000ull, c->s->data_version);
    const rgba *px = view_heat_image(c->cache, key, sim, h, h, h, map.w, map.h, VIEW_MAP_SEQ,
                                     c->s->cmap, 1.0f, &iw, &ih, &key);
    draw_image_cmd(c->dl, map, iw, ih, px, key);
    draw_frame(c->dl, (view_rect){map.x - 1, map.y - 1, map.w + 2, map.h + 2}, c->th.grid, 1);
    /* head numbers in their accent colours along both sides, where they fit */
    int cell = map.h / h;
    if (cell >= fs)
        for (int i = 0; i < h; i++) {
            snprintf(buf, sizeof buf, "%d", i + 1);
            int w = view_tw(c, buf, fs, 1);
            rgba col = view_head_color(i, c->s->theme);
            draw_text(c->dl, map.x - w - L->pad / 2,
                      map.y + i * map.h / h + (cell - L->line * fs / L->font) / 2, buf, fs, col, 1,
                      0);
        }
    /* the values when they fit: the matrix is small */
    view_ctx vc = *c;
    view_state vs = *c->s;
    vs.values = 1;
    vc.s = &vs;
    view_draw_cell_values(&vc, map, sim, h, h, h, px, iw, ih);
    view_colorbar(c, L->redund_cbar, VIEW_MAP_SEQ, 1.0f);
    char note[120];
    const int st = c->s->divergence_step;
    if (st > 1) /* a long text: the mean over evenly spaced rows */
        snprintf(note, sizeof note, "1 \xE2\x88\x92 JS divergence, every %d%s row: 1 = same keys",
                 st, st == 2 ? "nd" : (st == 3 ? "rd" : "th"));
    else /* where the heads look, not what they pass on: X measures that */
        snprintf(note, sizeof note, "1 \xE2\x88\x92 JS divergence: 1 = the same keys");
    const char *const notes[] = {note, "1 \xE2\x88\x92 JS: 1 = the same keys", "1 = the same keys"};
    fit_variant(c, buf, sizeof buf, notes, 3, L->redund_note.w, fs, 0);
    draw_text(c->dl, L->redund_note.x, L->redund_note.y, buf, fs, c->th.muted, 0, 0);
}

static void draw_cost(const view_ctx *c) {
    const view_layout *L = c->L;
    const attn_layer *layer = c->s->layer;
    const double n = layer->n, d = layer->d_model, h = layer->h;
    /* the cost's text at its own size when its column has room (cost_font), else the
       small and title sizes of the data */
    const int ft = L->cost_font > 0 ? L->cost_font * L->font / L->font_small : L->font;
    const int fs = L->cost_font > 0 ? L->cost_font : L->font_small;
    const int line = L->line * ft / L->font;
    char a[48], b[48], lines[8][160];
    int k = 0;
    snprintf(lines[k++], 160, "Cost of this layer");
    thousands(a, sizeof a, 4 * d * d);
    snprintf(lines[k++], 160,
             "parameters 4\xC2\xB7"
             "d\xC2\xB2 = %s (any h)",
             a);
    const int dk_line = k; /* drawn with its subscripts, as the formula strip writes them */
    snprintf(lines[k++], 160, "d_k = d_model / h = %d", layer->d_k);
    thousands(a, sizeof a, h * n * n);
    snprintf(lines[k++], 160, "attention weights h\xC2\xB7n\xC2\xB2 = %s", a);
    thousands(a, sizeof a, 8 * n * d * d);
    thousands(b, sizeof b, 4 * n * n * d);
    snprintf(lines[k++], 160,
             "projections 8\xC2\xB7n\xC2\xB7"
             "d\xC2\xB2 = %s FLOPs",
             a);
    snprintf(lines[k++], 160,
             "attention 4\xC2\xB7n\xC2\xB2\xC2\xB7"
             "d = %s FLOPs",
             b);
    const int proj = 8 * n * d * d >= 4 * n * n * d;
    snprintf(lines[k++], 160,
             "%s dominate: n %s 2\xC2\xB7"
             "d_model",
             proj ? "projections" : "scores", proj ? "\xE2\x89\xA4" : ">");
    if (!c->s->figure && !c->s->present && c->s->overview)
        snprintf(lines[k++], 160, "layers %d\xE2\x80\x93%d computed in %.1f ms",
                 c->s->overview->computed_from + 1, c->s->overview->layers, c->s->compute_ms);
    else if (!c->s->figure && !c->s->present)
        snprintf(lines[k++], 160, "last recompute: %.2f ms", /* only what changed, not a */
                 c->s->compute_ms);                          /* whole forward */
    for (int i = 0; i < k; i++) {
        char fitted[160];
        view_fit_text(fitted, sizeof fitted, lines[i], L->cost.w, i ? fs : ft, i == 0, c->measure,
                      c->ud);
        int y = L->cost.y + (i ? line + L->pad / 2 + (i - 1) * (line * fs / ft + 2) : 0);
        if (y + line > L->cost.y + L->cost.h) break;
        if (i == dk_line && view_markup_width(c, lines[i], fs) <= L->cost.w) {
            view_draw_markup(c, L->cost.x, y, lines[i], fs, c->th.muted);
            continue;
        }
        draw_text(c->dl, L->cost.x, y, fitted, i ? fs : ft, i == 0 ? c->th.text : c->th.muted,
                  i == 0, 0);
    }
}

void view_draw_lesson(const view_ctx *c) {
    if (!c->L->lesson_shown) return;
    draw_redundancy(c);
    draw_cost(c);
}
