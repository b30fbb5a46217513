/* lesson_panels.c: the two panels under the equation. "How alike are the heads?":
 * an h x h matrix, below its diagonal 1 - the mean Jensen-Shannon divergence
 * between the heads' attention rows (where they look; grey up to what unrelated
 * heads read, the baseline), above it the cosine of their contributions head_i
 * W^O_i (what they pass on), and on the diagonal how much MultiHead changes when
 * the head alone is removed, or on a loaded model the next token's KL; a head
 * "could go alone" only under VIEW_COULD_GO (VIEW_NEXT_KL_GO). "Cost":
 * parameters 4 d^2 whatever h is, the h n^2 attention weights, the projections'
 * 8 n d^2 FLOPs beside the attention's 4 n^2 d, which dominates, the time taken.
 * Where they go is layout_lesson.c's. */
#include <math.h>
#include <stdio.h>
#include <string.h>

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

static int imin_(int a, int b) {
    return a < b ? a : b;
}

/* The h x h matrix: below the diagonal where two heads look alike (1 - JS, the
   sequential map), above it what they pass on alike (the cosine of head_i W^O_i and
   head_j W^O_j, the signed map), on the diagonal how much MultiHead changes
   without the head. Its numbers where they fit. */
/* The text size of the diagonal's percentages: as the cells' numbers, or 0 when
   "100%" does not fit a cell legibly. */
static int diagonal_size(const view_ctx *c, view_rect map, int h) {
    int size = imin_(map.h / h * 45 / 100, c->L->font_small);
    const char *widest = c->s->head_next_kl ? "0.00" : "100%";
    return size >= 9 && view_tw(c, widest, size, 1) + 2 <= map.w / h ? size : 0;
}

/* A cell's number, to two decimals: a similarity's third digit says nothing a class
   needs, and a deck's wider cells then print what the window prints ("−0.04", never
   "−0.0437"). */
static void alike_number(char *buf, size_t len, float v) {
    if (fabs((double)v) < 0.005)
        snprintf(buf, len, "0");
    else
        snprintf(buf, len, "%s%.2f", v < 0 ? "\xE2\x88\x92" : "", fabs((double)v));
}

/* 1 when every off-diagonal cell has room for its number at size (with a gap of a
 * quarter of the size), else 0 and the colours alone: a cell left blank where its
 * neighbours have numbers would read as 0. */
static int alike_numbers_fit(const view_ctx *c, view_rect map, const float *sim, const float *pass,
                             int h, int size) {
    for (int r = 0; r < h; r++)
        for (int k = 0; k < h; k++) {
            if (r == k || (r < k && !pass)) continue;
            const float v = r > k ? sim[r * h + k] : pass[r * h + k];
            const int room = (int)((long)(k + 1) * map.w / h) - (int)((long)k * map.w / h) -
                             (size > 12 ? size / 4 : 3);
            char buf[24];
            alike_number(buf, sizeof buf, v);
            if (view_tw(c, buf, size, 0) > room) return 0;
        }
    return 1;
}

/* A diagonal cell's KL in bits: "0" under 0.005, two decimals under 1, then one, then
   none ("0.03", "1.4", "12"). */
static void kl_number(char *buf, size_t len, float v) {
    if (v < 0.005f)
        snprintf(buf, len, "0");
    else
        snprintf(buf, len, "%.*f", v < 1.0f ? 2 : (v < 10.0f ? 1 : 0), (double)v);
}

/* The grey of a similarity no higher than unrelated heads read (the baseline). */
static rgba baseline_grey(const view_ctx *c) {
    const rgba a = c->th.panel, b = c->th.grid;
    return (rgba){(unsigned char)((a.r + b.r) / 2), (unsigned char)((a.g + b.g) / 2),
                  (unsigned char)((a.b + b.b) / 2), 255};
}

/* The colour of 1 - JS = v: grey up to the baseline's top (unrelated heads read as
   much) and a last digit above it, the sequential map over (top, 1] above that; the
   map over [0, 1] when no baseline was measured. */
static rgba alike_colour(const view_ctx *c, float v) {
    const float top = c->s->alike_base_hi;
    if (top <= 0.0f) return cmap_seq(c->s->look.cmap, v);
    /* within the cells' last digit of it: as unrelated (flat heads: top 1, every cell) */
    if (v < top + 0.01f) return baseline_grey(c);
    return cmap_seq(c->s->look.cmap, (v - top) / (1.0f - top));
}

/* A head that could go alone: on a loaded model (kl, the next token's), when its
   removal moves the next-token distribution by under VIEW_NEXT_KL_GO bits and keeps
   its most likely token; else when it changes MultiHead by under VIEW_COULD_GO. */
static int could_go(const view_state *s, const float *change, int i) {
    if (s->head_next_kl)
        return s->head_next_kl[i] < VIEW_NEXT_KL_GO && s->head_next_top[i] == s->next_top_full;
    return change[i] < VIEW_COULD_GO;
}

static int draw_alike_matrix(const view_ctx *c, view_rect map, const float *sim, const float *pass,
                             const float *change, int h) {
    const view_layout *L = c->L;
    view_ctx vc = *c;
    view_state vs = *c->s;
    vs.look.values = 1;
    vc.s = &vs;
    int cells = view_cell_values_fit(&vc, map, h, h);
    const float *kl = c->s->head_next_kl; /* the diagonal's number: KL, or MultiHead's % */
    const int diag = diagonal_size(c, map, h);
    /* numbers in every cell or in none (alike_numbers_fit), a size smaller where that
       keeps them, not under 9 */
    int numbers = cells && alike_numbers_fit(c, map, sim, pass, h, cells);
    if (!numbers && cells * 4 / 5 >= 9 && alike_numbers_fit(c, map, sim, pass, h, cells * 4 / 5))
        cells = cells * 4 / 5, numbers = 1;
    for (int r = 0; r < h; r++)
        for (int k = 0; k < h; k++) {
            const int x0 = map.x + (int)((long)k * map.w / h),
                      x1 = map.x + (int)((long)(k + 1) * map.w / h);
            const int y0 = map.y + (int)((long)r * map.h / h),
                      y1 = map.y + (int)((long)(r + 1) * map.h / h);
            if ((r < k && !pass) || (r == k && !change && !kl)) { /* not measured: empty */
                draw_fill(c->dl, (view_rect){x0, y0, x1 - x0, y1 - y0}, c->th.panel);
                continue;
            }
            const float v = r > k   ? sim[r * h + k]
                            : r < k ? pass[r * h + k]
                                    : (change ? change[r] : kl[r]);
            const rgba bg = r > k   ? alike_colour(c, v)
                            : r < k ? cmap_signed(c->s->look.cmap, v)
                                    : c->th.panel;
            draw_fill(c->dl, (view_rect){x0, y0, x1 - x0, y1 - y0}, bg);
            const int size = r == k ? diag : cells;
            if (!size) continue;
            const int line = L->line * size / L->font;
            if (r != k && !numbers) continue; /* the colour alone */
            char buf[24];
            if (r == k && kl)
                kl_number(buf, sizeof buf, kl[r]);
            else if (r == k)
                snprintf(buf, sizeof buf, "%.0f%%", (double)(100.0f * v));
            else
                alike_number(buf, sizeof buf, v);
            const int w = view_tw(c, buf, size, r == k);
            const rgba fg = r == k ? c->th.text : view_ink_on(bg);
            draw_text(c->dl, (x0 + x1 - w) / 2, (y0 + y1 - line) / 2, buf, size, fg, r == k, 0);
        }
    /* the diagonal framed: it is a different number */
    for (int r = 0; r < h; r++) {
        const int x0 = map.x + (int)((long)r * map.w / h),
                  x1 = map.x + (int)((long)(r + 1) * map.w / h);
        const int y0 = map.y + (int)((long)r * map.h / h),
                  y1 = map.y + (int)((long)(r + 1) * map.h / h);
        draw_frame(c->dl, (view_rect){x0, y0, x1 - x0, y1 - y0}, c->th.grid, 1);
    }
    return diag > 0 && (change || kl);
}

/* The first line's forms: what the two triangles are, and what unrelated heads read
   (the grey) where it was measured. */
static void alike_key_forms(const view_ctx *c, char f[5][256]) {
    const int st = c->s->contrib_step;
    const double lo = c->s->alike_base_lo, hi = c->s->alike_base_hi;
    char every[40] = "";
    if (st > 1)
        snprintf(every, sizeof every, ", every %d%s row", st,
                 st == 2 ? "nd" : (st == 3 ? "rd" : "th"));
    if (!c->s->head_pass_cos) { /* what they pass on not measured: where they look only */
        if (hi <= 0.0)
            for (int k = 0; k < 5; k++)
                snprintf(f[k], 256, "\xE2\x86\x99 where they look (1 \xE2\x88\x92 JS)");
        else {
            snprintf(f[0], 256,
                     "\xE2\x86\x99 where they look (1 \xE2\x88\x92 JS; unrelated heads "
                     "%.2f\xE2\x80\x93%.2f, grey)",
                     lo, hi);
            snprintf(f[1], 256, "\xE2\x86\x99 where they look (random %.2f\xE2\x80\x93%.2f: grey)",
                     lo, hi);
            snprintf(f[2], 256, "\xE2\x86\x99 random %.2f\xE2\x80\x93%.2f: grey", lo, hi);
            snprintf(f[3], 256, "\xE2\x86\x99 random %.2f\xE2\x80\x93%.2f: grey", lo, hi);
            snprintf(f[4], 256, "random \xE2\x89\xA4 %.2f: grey", hi);
        }
        return;
    }
    if (hi <= 0.0) {
        snprintf(f[0], 256,
                 "\xE2\x86\x99 where they look (1 \xE2\x88\x92 JS) \xC2\xB7 \xE2\x86\x97 what "
                 "they pass on (cos of head_i W^O_i)%s",
                 every);
        snprintf(f[1], 256, "\xE2\x86\x99 where they look \xC2\xB7 \xE2\x86\x97 what they pass on");
        for (int k = 2; k < 5; k++)
            snprintf(f[k], 256, "\xE2\x86\x99 look \xC2\xB7 \xE2\x86\x97 pass on");
        return;
    }
    snprintf(
        f[0], 256,
        "\xE2\x86\x99 where they look (1 \xE2\x88\x92 JS; unrelated heads %.2f\xE2\x80\x93%.2f, "
        "grey) \xC2\xB7 \xE2\x86\x97 what they pass on (cos of head_i W^O_i)%s",
        lo, hi, every);
    snprintf(f[1], 256,
             "\xE2\x86\x99 where they look (random heads %.2f\xE2\x80\x93%.2f: grey) \xC2\xB7 "
             "\xE2\x86\x97 what they pass on",
             lo, hi);
    snprintf(f[2], 256,
             "\xE2\x86\x99 look (random %.2f\xE2\x80\x93%.2f: grey) \xC2\xB7 \xE2\x86\x97 pass on",
             lo, hi);
    snprintf(f[3], 256, "\xE2\x86\x99 random %.2f\xE2\x80\x93%.2f: grey", lo, hi);
    snprintf(f[4], 256, "random \xE2\x89\xA4 %.2f: grey", hi);
}

/* The verdict's forms: which heads could go alone (could_go), and by which measure. */
static void alike_verdict_forms(const view_ctx *c, const float *change, int h, char f[3][256]) {
    const int model = c->s->head_next_kl != NULL;
    char list[96] = "";
    int count = 0;
    for (int i = 0, k = 0; i < h && k < (int)sizeof list - 8; i++)
        if (could_go(c->s, change, i))
            k += snprintf(list + k, sizeof list - (size_t)k, "%s%d", count++ ? ", " : "", i + 1);
    const double pct = 100.0 * VIEW_COULD_GO, bits = VIEW_NEXT_KL_GO;
    const int why = c->s->next_measure;    /* a model's heads not measured (yet) */
    const int blank = c->s->next_is_blank; /* an encoder's: its first blank, not a next token */
    const char *on = blank ? "the blank" : "the next token";
    if (h > 1 && !model && why == VIEW_MEASURE_PENDING) {
        snprintf(f[0], 256, "could go alone? measuring each head on %s\xE2\x80\xA6", on);
        snprintf(f[1], 256, "could go? measuring\xE2\x80\xA6");
        snprintf(f[2], 256, "measuring\xE2\x80\xA6");
    } else if (h > 1 && !model && why == VIEW_MEASURE_TOO_LONG) {
        snprintf(f[0], 256, "could go alone: not measured on %s (over %d tokens)", on,
                 c->s->next_measure_cap);
        snprintf(f[1], 256, "could go: not measured (over %d tokens)", c->s->next_measure_cap);
        snprintf(f[2], 256, "could go: not measured");
    } else if (h == 1) {
        for (int k = 0; k < 3; k++)
            snprintf(f[k], 256, "%s",
                     k ? "the only head"
                       : "the only head: without it "
                         "MultiHead is 0");
    } else if (!count && model) {
        snprintf(f[0], 256,
                 "none could go alone: without any one %s moves (KL \xE2\x89\xA5 %.1f "
                 "bit or a new top)",
                 on, bits);
        snprintf(f[1], 256, "none could go alone (%s KL \xE2\x89\xA5 %.1f bit)",
                 blank ? "blank" : "next-token", bits);
        snprintf(f[2], 256, "none could go alone");
    } else if (!count) {
        snprintf(f[0], 256, "none could go alone: each changes MultiHead by %.0f %% or more", pct);
        snprintf(f[1], 256, "none could go alone (each \xE2\x89\xA5 %.0f %%)", pct);
        snprintf(f[2], 256, "none could go alone");
    } else if (model) {
        snprintf(f[0], 256, "could go alone (%s kept, KL < %.1f bit): head%s %s",
                 blank ? "the blank's top word" : "next token", bits, count > 1 ? "s" : "", list);
        snprintf(f[1], 256, "could go alone (KL < %.1f bit): %s", bits, list);
        snprintf(f[2], 256, "could go: %s", list);
    } else {
        snprintf(f[0], 256, "could go alone (MultiHead changes under %.0f %%): head%s %s", pct,
                 count > 1 ? "s" : "", list);
        snprintf(f[1], 256, "could go alone (< %.0f %%): %s", pct, list);
        snprintf(f[2], 256, "could go: %s", list);
    }
    if (h > 1 && !model && why == VIEW_MEASURE_NO_BLANK) /* MultiHead's, and why */
        for (int k = 0; k < 3; k++) {
            const size_t at = strlen(f[k]);
            snprintf(f[k] + at, 256 - at, "%s", k ? " (no blank)" : "; no blank to judge by");
        }
}

/* The second line's forms: what the diagonal's numbers are, or, where they are not
   drawn, their range. */
static void alike_diagonal_forms(const view_ctx *c, const float *change, int h, int diagonal,
                                 char f[3][256]) {
    const float *kl = c->s->head_next_kl;
    const float *v = kl ? kl : change;
    float lo = v[0], hi = v[0];
    for (int i = 1; i < h; i++) lo = v[i] < lo ? v[i] : lo, hi = v[i] > hi ? v[i] : hi;
    const int blank = c->s->next_is_blank;
    if (kl && diagonal) {
        snprintf(f[0], 256, "diagonal: %s KL without the head, bits",
                 blank ? "the blank's" : "the next token's");
        snprintf(f[1], 256, "diagonal: %s KL without it, bits", blank ? "blank" : "next-token");
        snprintf(f[2], 256, "diagonal: %sKL, bits", blank ? "blank " : ""); /* which KL, still */
    } else if (kl) {
        char a[16], b[16];
        kl_number(a, sizeof a, lo);
        kl_number(b, sizeof b, hi);
        snprintf(f[0], 256, "without one head, %s KL is %s\xE2\x80\x93%s bits",
                 blank ? "the blank's" : "the next token's", a, b);
        snprintf(f[1], 256, "%s KL %s\xE2\x80\x93%s bits without one",
                 blank ? "blank" : "next-token", a, b);
        snprintf(f[2], 256, "%sKL without one: %s\xE2\x80\x93%s bits", blank ? "blank " : "", a, b);
    } else if (diagonal) {
        snprintf(f[0], 256, "diagonal: how much MultiHead changes without the head");
        snprintf(f[1], 256, "diagonal: MultiHead's change without it");
        snprintf(f[2], 256, "diagonal: change without it");
    } else {
        snprintf(f[0], 256, "without one head, MultiHead changes by %.0f\xE2\x80\x93%.0f %%",
                 (double)(100.0f * lo), (double)(100.0f * hi));
        snprintf(f[1], 256, "MultiHead changes %.0f\xE2\x80\x93%.0f %% without one",
                 (double)(100.0f * lo), (double)(100.0f * hi));
        snprintf(f[2], 256, "without one: %.0f\xE2\x80\x93%.0f %%", (double)(100.0f * lo),
                 (double)(100.0f * hi));
    }
}

/* The lines under the matrix, each the first of its forms that fits: what the two
   triangles are (and the baseline), what the diagonal is, and which heads could go
   alone. */
static void draw_alike_notes(const view_ctx *c, const float *change, int h, int diagonal) {
    const view_layout *L = c->L;
    const int fs = L->font_small, line = L->line * fs / L->font + 2;
    char forms[3][5][256], buf[256];
    alike_key_forms(c, forms[0]);
    alike_diagonal_forms(c, change, h, diagonal, forms[1]);
    alike_verdict_forms(c, change, h, forms[2]);
    for (int k = 3; k < 5; k++) {
        snprintf(forms[1][k], 256, "%s", forms[1][2]);
        snprintf(forms[2][k], 256, "%s", forms[2][2]);
    }
    for (int i = 0; i < 3; i++) {
        const int y = L->redund_note.y + i * line;
        if (y + line > L->redund_note.y + L->redund_note.h + 2) break;
        const char *const v[5] = {forms[i][0], forms[i][1], forms[i][2], forms[i][3], forms[i][4]};
        view_fit_first(c, buf, sizeof buf, v, 5, L->redund_note.w, fs, i == 2);
        if (i == 0 && view_markup_width(c, buf, fs) <= L->redund_note.w)
            view_draw_markup(c, L->redund_note.x, y, buf, fs, c->th.muted);
        else
            draw_text(c->dl, L->redund_note.x, y, buf, fs, i == 2 ? c->th.text : c->th.muted,
                      i == 2, 0);
    }
}

/* The colorbar of 1 - JS with its baseline: grey from 0 to the top of what unrelated
   heads read, the sequential map from there to 1 (alike_colour), ticks at 0, that
   top and 1 where they fit. Fills, not an image: the map starts at the baseline. */
static void draw_baseline_bar(const view_ctx *c, view_rect r) {
    if (r.w < 8 || r.h < 2) return;
    const float top = c->s->alike_base_hi < 1.0f ? c->s->alike_base_hi : 1.0f;
    const int split = r.x + (int)lroundf(top * (float)r.w);
    draw_fill(c->dl, (view_rect){r.x, r.y, split - r.x, r.h}, baseline_grey(c));
    enum { STEPS = 24 };
    for (int k = 0; k < STEPS; k++) {
        const int x0 = split + (r.x + r.w - split) * k / STEPS,
                  x1 = split + (r.x + r.w - split) * (k + 1) / STEPS;
        if (x1 > x0)
            draw_fill(c->dl, (view_rect){x0, r.y, x1 - x0, r.h},
                      cmap_seq(c->s->look.cmap, ((float)k + 0.5f) / (float)STEPS));
    }
    draw_frame(c->dl, r, c->th.grid, 1);
    const int fs = c->L->font_small, ty = r.y + r.h + c->L->pad / 2, gap = c->L->pad / 2;
    char mid[16];
    snprintf(mid, sizeof mid, "%.2f", (double)top);
    const int wm = view_tw(c, mid, fs, 0), w1 = view_tw(c, "1", fs, 0), w0 = view_tw(c, "0", fs, 0);
    int xm = split - wm / 2;
    if (xm + wm + gap + w1 > r.x + r.w) xm = r.x + r.w - w1 - gap - wm;
    if (xm < r.x) xm = r.x;
    draw_line(c->dl, split, r.y + r.h, split, ty, c->th.muted, 1);
    draw_text(c->dl, xm, ty, mid, fs, c->th.muted, 0, 0);
    if (xm + wm + gap + w1 <= r.x + r.w)
        draw_text(c->dl, r.x + r.w - w1, ty, "1", fs, c->th.muted, 0, 0);
    if (r.x + w0 + gap <= xm) draw_text(c->dl, r.x, ty, "0", fs, c->th.muted, 0, 0);
}

static void draw_redundancy(const view_ctx *c) {
    const view_layout *L = c->L;
    const attn_layer *layer = c->s->layer;
    const int h = layer->h, fs = L->font_small;
    char buf[160];
    static const char *const titles[] = {"How alike are the heads?", "How alike are heads?",
                                         "Heads alike?"};
    view_fit_first(c, buf, sizeof buf, titles, 3, L->redund_title.w, L->font, 1);
    draw_text(c->dl, L->redund_title.x, L->redund_title.y, buf, L->font, c->th.text, 1, 0);
    if (h == 1) { /* no pair to compare: words, not a one-cell matrix reading 100% */
        static const char *const one[] = {"One head: no other head to compare it with.",
                                          "One head: nothing to compare.", "One head."};
        static const char *const gone[] = {"Without it MultiHead is 0: it cannot go.",
                                           "Without it MultiHead is 0.", "It cannot go."};
        const int line = L->line * fs / L->font + 2;
        view_fit_first(c, buf, sizeof buf, one, 3, L->redund_note.w, fs, 0);
        draw_text(c->dl, L->redund_map.x - L->line, L->redund_map.y, buf, fs, c->th.muted, 0, 0);
        view_fit_first(c, buf, sizeof buf, gone, 3, L->redund_note.w, fs, 1);
        draw_text(c->dl, L->redund_map.x - L->line, L->redund_map.y + line, buf, fs, c->th.text, 1,
                  0);
        return;
    }
    if (!c->s->head_divergence || h > 16) {
        draw_text(c->dl, L->redund_map.x, L->redund_map.y,
                  h > 16                  ? "compared for at most 16 heads"
                  : c->s->numbers_pending ? "computing\xE2\x80\xA6"
                                          : "not computed",
                  fs, c->th.muted, 0, 0);
        return;
    }
    float sim[16 * 16];
    for (int i = 0; i < h * h; i++) sim[i] = 1.0f - c->s->head_divergence[i];
    const view_rect map = L->redund_map;
    const int diagonal = draw_alike_matrix(c, map, sim, c->s->head_pass_cos, c->s->head_change, h);
    draw_frame(c->dl, (view_rect){map.x - 1, map.y - 1, map.w + 2, map.h + 2}, c->th.grid, 1);
    /* head numbers in their accent colours along both sides, where they fit */
    int cell = map.h / h;
    if (cell >= fs)
        for (int i = 0; i < h; i++) {
            snprintf(buf, sizeof buf, "%d", i + 1);
            int w = view_tw(c, buf, fs, 1);
            rgba col = view_head_color(i, c->s->look.theme);
            draw_text(c->dl, map.x - w - L->pad / 2,
                      map.y + i * map.h / h + (cell - L->line * fs / L->font) / 2, buf, fs, col, 1,
                      0);
        }
    /* two colorbars side by side: where they look 0..1, what they pass on -1..1 */
    const view_rect cb = L->redund_cbar;
    const int half = (cb.w - L->gap) / 2;
    /* (too narrow for either: none; the notes still say what the colours are) */
    if (c->s->alike_base_hi > 0.0f)
        draw_baseline_bar(c, (view_rect){cb.x, cb.y, half, cb.h});
    else
        view_colorbar(c, (view_rect){cb.x, cb.y, half, cb.h}, VIEW_MAP_SEQ, 1.0f);
    view_colorbar(c, (view_rect){cb.x + cb.w - half, cb.y, half, cb.h}, VIEW_MAP_DIV, 1.0f);
    if (c->s->head_change && c->s->head_pass_cos)
        draw_alike_notes(c, c->s->head_change, h, diagonal);
    else if (c->s->head_next_kl) /* a loaded model whose Concat and W^O are not drawn: the
                                    next token's measure needs neither */
        draw_alike_notes(c, c->s->head_next_kl, h, diagonal);
    else /* only where they look was measured */
        draw_text(c->dl, L->redund_note.x, L->redund_note.y,
                  "\xE2\x86\x99 where they look (1 \xE2\x88\x92 JS)", fs, c->th.muted, 0, 0);
}

/* v as a short number: "68.7 G" (M, G, T from a million on), else with commas. */
static void compact(char *buf, size_t len, double v) {
    static const char *const unit[] = {"M", "G", "T", "P"};
    if (v < 1e6) {
        thousands(buf, len, v);
        return;
    }
    int u = 0;
    double x = v / 1e6;
    while (x >= 1000.0 && u < 3) x /= 1000.0, u++;
    snprintf(buf, len, "%.*f %s", x < 100.0 ? 1 : 0, x, unit[u]);
}

/* Each line of the cost panel in three forms, longest first: the exact number, the
   short one, the short one without the formula. The first that fits is drawn. */
enum { COST_LINES = 9, COST_FORMS = 3 };

static int put_forms(char lines[][COST_FORMS][160], int k, const char *f0, const char *f1,
                     const char *f2);
static int cost_size_lines(char lines[][COST_FORMS][160], const attn_layer *layer, int *dk_line,
                           int *dominate_line);
static int cost_timing_line(char lines[][COST_FORMS][160], int k, const view_state *s);
static int cost_own_lines(char lines[][COST_FORMS][160], int k, const attn_layer *layer,
                          int *dk_line, int *kv_line);

static void draw_cost(const view_ctx *c) {
    const view_layout *L = c->L;
    /* the cost's text at its own size when its column has room (cost_font), else the
       small and title sizes of the data */
    const int ft = L->cost_font > 0 ? L->cost_font * L->font / L->font_small : L->font;
    const int fs = L->cost_font > 0 ? L->cost_font : L->font_small;
    const int line = L->line * ft / L->font;
    char lines[COST_LINES][COST_FORMS][160];
    int dk_line = -1, dominate_line = -1;
    int k = cost_size_lines(lines, c->s->layer, &dk_line, &dominate_line);
    k = cost_timing_line(lines, k, c->s);
    for (int i = 0; i < k; i++) {
        const int size = i ? fs : ft;
        int y = L->cost.y + (i ? line + L->pad / 2 + (i - 1) * (line * fs / ft + 2) : 0);
        if (y + line > L->cost.y + L->cost.h) break;
        if (i == dk_line || i == dominate_line) { /* with subscripts where they fit */
            const char *m = lines[i][0];
            for (int f = 1; f < COST_FORMS && view_markup_width(c, m, fs) > L->cost.w; f++)
                m = lines[i][f];
            if (view_markup_width(c, m, fs) <= L->cost.w) {
                view_draw_markup(c, L->cost.x, y, m, fs, c->th.muted);
                continue;
            }
        }
        const char *const forms[COST_FORMS] = {lines[i][0], lines[i][1], lines[i][2]};
        char fitted[160];
        view_fit_first(c, fitted, sizeof fitted, forms, COST_FORMS, L->cost.w, size, i == 0);
        draw_text(c->dl, L->cost.x, y, fitted, size, i == 0 ? c->th.text : c->th.muted, i == 0, 0);
    }
}

/* lines[k]'s three forms f0, f1, f2 (cut to 160 bytes). Returns k + 1. */
static int put_forms(char lines[][COST_FORMS][160], int k, const char *f0, const char *f1,
                     const char *f2) {
    snprintf(lines[k][0], 160, "%s", f0);
    snprintf(lines[k][1], 160, "%s", f1);
    snprintf(lines[k][2], 160, "%s", f2);
    return k + 1;
}

/* The panel's title and the layer's sizes: its parameters, d_k, the attention
 * weights, the FLOPs of the projections and of attention, and which dominate, into
 * lines; *dk_line and *dominate_line are the two drawn with subscripts. Returns how
 * many lines. */
static int cost_size_lines(char lines[][COST_FORMS][160], const attn_layer *layer, int *dk_line,
                           int *dominate_line) {
    const double n = layer->n, d = layer->d_model, h = layer->h;
    char a[48], b[48], f0[160], f1[160], f2[160];
    int k = 0;
    k = put_forms(lines, k, "Cost of this layer", "Cost of the layer", "Cost");
    if ((layer->h_kv > 0 && layer->h_kv < layer->h) || layer->d_k * layer->h != layer->d_model)
        return cost_own_lines(lines, k, layer, dk_line, dominate_line);
    thousands(a, sizeof a, 4 * d * d);
    compact(b, sizeof b, 4 * d * d);
    snprintf(f0, sizeof f0,
             "parameters 4\xC2\xB7"
             "d\xC2\xB2 = %s (any h)",
             a);
    snprintf(f1, sizeof f1,
             "parameters 4\xC2\xB7"
             "d\xC2\xB2 = %s (any h)",
             b);
    snprintf(f2, sizeof f2, "parameters %s", b);
    k = put_forms(lines, k, f0, f1, f2);
    *dk_line = k; /* drawn with its subscripts, as the formula strip writes them */
    snprintf(f0, sizeof f0, "d_k = d_model / h = %d", layer->d_k);
    snprintf(f2, sizeof f2, "d_k = %d", layer->d_k);
    k = put_forms(lines, k, f0, f0, f2);
    thousands(a, sizeof a, h * n * n);
    compact(b, sizeof b, h * n * n);
    snprintf(f0, sizeof f0, "attention weights h\xC2\xB7n\xC2\xB2 = %s", a);
    snprintf(f1, sizeof f1, "attention weights h\xC2\xB7n\xC2\xB2 = %s", b);
    snprintf(f2, sizeof f2, "weights h\xC2\xB7n\xC2\xB2 = %s", b);
    k = put_forms(lines, k, f0, f1, f2);
    thousands(a, sizeof a, 8 * n * d * d);
    compact(b, sizeof b, 8 * n * d * d);
    snprintf(f0, sizeof f0,
             "projections 8\xC2\xB7n\xC2\xB7"
             "d\xC2\xB2 = %s FLOPs",
             a);
    snprintf(f1, sizeof f1,
             "projections 8\xC2\xB7n\xC2\xB7"
             "d\xC2\xB2 = %sFLOPs",
             b);
    snprintf(f2, sizeof f2, "projections %sFLOPs", b);
    k = put_forms(lines, k, f0, f1, f2);
    thousands(a, sizeof a, 4 * n * n * d);
    compact(b, sizeof b, 4 * n * n * d);
    snprintf(f0, sizeof f0,
             "attention 4\xC2\xB7n\xC2\xB2\xC2\xB7"
             "d = %s FLOPs",
             a);
    snprintf(f1, sizeof f1,
             "attention 4\xC2\xB7n\xC2\xB2\xC2\xB7"
             "d = %sFLOPs",
             b);
    snprintf(f2, sizeof f2, "attention %sFLOPs", b);
    k = put_forms(lines, k, f0, f1, f2);
    const int proj = 8 * n * d * d >= 4 * n * n * d;
    *dominate_line = k; /* "n <= 2 d_model", its subscript drawn as dk_line's */
    snprintf(f0, sizeof f0,
             "%s dominate: n %s 2\xC2\xB7"
             "d_model",
             proj ? "projections" : "scores", proj ? "\xE2\x89\xA4" : ">");
    snprintf(f2, sizeof f2, "%s dominate", proj ? "projections" : "scores");
    k = put_forms(lines, k, f0, f0, f2);
    return k;
}

/* The window's line on time after lines[0..k): a model's layers computed, or the
 * forward pass at this setting (timing until it is measured); none in a figure or
 * presentation. Returns the lines now. */
static int cost_timing_line(char lines[][COST_FORMS][160], int k, const view_state *s) {
    char f0[160], f1[160], f2[160];
    if (!s->figure && !s->look.present && s->overview) {
        snprintf(f0, sizeof f0, "layers %d\xE2\x80\x93%d computed in %.1f ms",
                 s->overview->computed_from + 1, s->overview->layers, s->compute_ms);
        snprintf(f2, sizeof f2, "computed in %.1f ms", s->compute_ms);
        k = put_forms(lines, k, f0, f0, f2);
    } else if (!s->figure && !s->look.present && s->forward_ms > 0.0) {
        /* every row projected, timed the same way whatever led here (async.c) */
        char t[32]; /* microseconds below 0.1 ms, where "0.00 ms" would read as nothing */
        const double ms = s->forward_ms;
        if (ms < 0.1)
            snprintf(t, sizeof t, "%.0f \xC2\xB5s", ms * 1000.0 < 1.0 ? 1.0 : ms * 1000.0);
        else
            snprintf(t, sizeof t, ms < 10.0 ? "%.2f ms" : "%.1f ms", ms);
        snprintf(f0, sizeof f0, "forward at this setting: %s", t);
        snprintf(f1, sizeof f1, "forward here: %s", t);
        snprintf(f2, sizeof f2, "forward %s", t);
        k = put_forms(lines, k, f0, f1, f2);
    } else if (!s->figure && !s->look.present) {
        k = put_forms(lines, k, "forward at this setting: timing\xE2\x80\xA6",
                      "forward: timing\xE2\x80\xA6", "timing\xE2\x80\xA6");
    }
    return k;
}

void view_draw_lesson(const view_ctx *c) {
    if (!c->L->lesson_shown) return;
    draw_redundancy(c);
    draw_cost(c);
}

/* A loaded model's layer with its own shapes (K/V heads shared by groups, head_dim not
 * d_model / h): W^Q and W^O of h d_k columns, W^K and W^V of h_kv d_k; the K/V cache a
 * token adds to the layer, beside what it would be with a K/V head per head (why GQA
 * exists), and to all L layers, 2 L h_kv d_k, the panel's last line (drawn where there is
 * room). *kv_line is drawn with subscripts, as *dk_line. Returns the line count. */
static int cost_own_lines(char lines[][COST_FORMS][160], int k, const attn_layer *layer,
                          int *dk_line, int *kv_line) {
    const double n = layer->n, d = layer->d_model, h = layer->h, dk = layer->d_k;
    const double hkv = layer->h_kv > 0 ? layer->h_kv : layer->h;
    const double params = 2 * d * dk * (h + hkv);
    char a[48], b[48], f0[160], f1[160], f2[160];
    thousands(a, sizeof a, params);
    compact(b, sizeof b, params);
    snprintf(f0, sizeof f0,
             "parameters 2\xC2\xB7"
             "d\xC2\xB7"
             "d\xE2\x82\x96(h + h\xE2\x82\x96\xE1\xB5\xA5) = %s",
             a);
    snprintf(f1, sizeof f1, "parameters %s", a);
    snprintf(f2, sizeof f2, "parameters %s", b);
    k = put_forms(lines, k, f0, f1, f2);
    *dk_line = k;
    snprintf(f0, sizeof f0, "d_k = %d, the model's head size", layer->d_k);
    snprintf(f2, sizeof f2, "d_k = %d", layer->d_k);
    k = put_forms(lines, k, f0, f0, f2);
    thousands(a, sizeof a, h * n * n);
    compact(b, sizeof b, h * n * n);
    snprintf(f0, sizeof f0, "attention weights h\xC2\xB7n\xC2\xB2 = %s", a);
    snprintf(f2, sizeof f2, "weights h\xC2\xB7n\xC2\xB2 = %s", b);
    k = put_forms(lines, k, f0, f0, f2);
    thousands(a, sizeof a, 2 * n * params);
    compact(b, sizeof b, 2 * n * params);
    snprintf(f0, sizeof f0, "projections 2\xC2\xB7n\xC2\xB7parameters = %s FLOPs", a);
    snprintf(f1, sizeof f1, "projections %s FLOPs", a);
    snprintf(f2, sizeof f2, "projections %sFLOPs", b);
    k = put_forms(lines, k, f0, f1, f2);
    thousands(a, sizeof a, 4 * n * n * h * dk);
    compact(b, sizeof b, 4 * n * n * h * dk);
    snprintf(f0, sizeof f0,
             "attention 4\xC2\xB7n\xC2\xB2\xC2\xB7h\xC2\xB7"
             "d\xE2\x82\x96 = %s FLOPs",
             a);
    snprintf(f2, sizeof f2, "attention %sFLOPs", b);
    k = put_forms(lines, k, f0, f0, f2);
    *kv_line = k;
    snprintf(f0, sizeof f0,
             "K/V cache 2\xC2\xB7h_kv\xC2\xB7"
             "d_k = %.0f a token (h_kv = h: %.0f)",
             2 * hkv * dk, 2 * h * dk);
    snprintf(f1, sizeof f1, "K/V cache %.0f a token (h_kv = h: %.0f)", 2 * hkv * dk, 2 * h * dk);
    snprintf(f2, sizeof f2, "K/V cache %.0f a token", 2 * hkv * dk);
    k = put_forms(lines, k, f0, f1, f2);
    if (layer->layers < 2) return k;
    thousands(a, sizeof a, 2 * layer->layers * hkv * dk);
    thousands(b, sizeof b, 2 * layer->layers * h * dk);
    snprintf(f0, sizeof f0,
             "all %d layers 2\xC2\xB7L\xC2\xB7h\xE2\x82\x96\xE1\xB5\xA5\xC2\xB7"
             "d\xE2\x82\x96 = %.24s a token (h\xE2\x82\x96\xE1\xB5\xA5 = h: %.24s)",
             layer->layers, a, b);
    snprintf(f1, sizeof f1, "all %d layers: %.24s a token (h\xE2\x82\x96\xE1\xB5\xA5 = h: %.24s)",
             layer->layers, a, b);
    snprintf(f2, sizeof f2, "all %d layers: %s a token", layer->layers, a);
    return put_forms(lines, k, f0, f1, f2);
}
