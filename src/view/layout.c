/* layout.c: every rectangle of the picture from the state (size, zoom, model,
 * tokens) and a text measurer: the header, the formula strip and the status line
 * here, and the split of the rest between the heads grid (layout_heads.c) and the
 * equation (layout_eq.c) that gives both the largest heatmaps. No drawing. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "layout_internal.h"

static int iround(float v) {
    return (int)lroundf(v);
}

#define imax lay_imax
#define imin lay_imin

/* --- header: buttons and value captions, flowed left to right, wrapping ------ */

static void header_button_label(const view_state *s, int b, char *out, size_t len) {
    static const char *fixed[BTN_COUNT] = {
        [BTN_H_DOWN] = "\xE2\x88\x92", /* − */
        [BTN_H_UP] = "+",
        [BTN_D_DOWN] = "\xE2\x88\x92",
        [BTN_D_UP] = "+",
        [BTN_SAMPLE_PREV] = "\xE2\x97\x80", /* ◀ */
        [BTN_SAMPLE_NEXT] = "\xE2\x96\xB6", /* ▶ */
        [BTN_TEXT] = "Text (Enter)",
        [BTN_SEED] = "Seed (R)",
        [BTN_ZOOM_OUT] = "A\xE2\x88\x92",
        [BTN_ZOOM_IN] = "A+",
        [BTN_SAVE] = "Save (Ctrl+S)",
        [BTN_HELP] = "Help (F1)",
        [BTN_PAGE_PREV] = "\xE2\x97\x80",
        [BTN_PAGE_NEXT] = "\xE2\x96\xB6",
    };
    const mha_model *m = s->m;
    switch (b) {
    case BTN_MASK:
        snprintf(out, len, "Mask %s (M)", m && m->cfg.mask == MHA_MASK_CAUSAL ? "causal" : "none");
        break;
    case BTN_SCALE: snprintf(out, len, "Scale %s (N)", m && m->cfg.no_scale ? "off" : "on"); break;
    case BTN_PNG_SCALE:
        snprintf(out, len, "PNG \xC3\x97%d", s->png_scale > 0 ? s->png_scale : 2);
        break;
    case BTN_CMAP:
        snprintf(out, len, "%s (C)", cmap_name(s->cmap) ? cmap_name(s->cmap) : "?");
        break;
    case BTN_THEME: snprintf(out, len, "%s (T)", s->theme ? "Light" : "Dark"); break;
    default: snprintf(out, len, "%s", fixed[b] ? fixed[b] : "");
    }
}

typedef struct {
    int kind; /* 0 caption, 1 button */
    int id;   /* button id or caption index */
    char text[64];
    int w;
    int group_end; /* extra gap after this item */
} hdr_item;

static void layout_header(view_layout *L, const view_state *s, view_measure_fn measure, void *ud,
                          int x0, int y0, int width) {
    hdr_item items[32];
    int count = 0;
    const mha_model *m = s->m;
    char cap[64];
#define BTN(id_, end)                                                                              \
    do {                                                                                           \
        items[count].kind = 1;                                                                     \
        items[count].id = id_;                                                                     \
        header_button_label(s, id_, items[count].text, sizeof items[count].text);                  \
        items[count++].group_end = end;                                                            \
    } while (0)
#define CAP(end)                                                                                   \
    do {                                                                                           \
        items[count].kind = 0;                                                                     \
        items[count].id = L->hdr_count;                                                            \
        snprintf(items[count].text, sizeof items[count].text, "%s", cap);                          \
        items[count++].group_end = end;                                                            \
    } while (0)

    L->hdr_count = 0;
    if (s->figure || s->present) { /* a figure's header: what it shows, no buttons */
        snprintf(cap, sizeof cap, "h = %d", m ? m->cfg.h : 0);
        CAP(1);
        snprintf(cap, sizeof cap, "d_model = %d", m ? m->cfg.d_model : 0);
        CAP(1);
        if (s->train)
            snprintf(cap, sizeof cap, "task: %s", s->train->task);
        else if (s->sample_index > 0)
            snprintf(cap, sizeof cap, "sample: %s", s->sample_name ? s->sample_name : "");
        else
            snprintf(cap, sizeof cap, "custom text");
        CAP(1);
        snprintf(cap, sizeof cap, "seed %llu", m ? (unsigned long long)m->cfg.seed : 0ull);
        CAP(1);
    } else {
        BTN(BTN_H_DOWN, 0);
        snprintf(cap, sizeof cap, "h = %d", m ? m->cfg.h : 0);
        CAP(0);
        BTN(BTN_H_UP, 1);
        BTN(BTN_D_DOWN, 0);
        snprintf(cap, sizeof cap, "d_model = %d", m ? m->cfg.d_model : 0);
        CAP(0);
        BTN(BTN_D_UP, 1);
        BTN(BTN_SAMPLE_PREV, 0);
        if (s->train)
            snprintf(cap, sizeof cap, "task %d/%d: %s", s->sample_index, s->sample_count,
                     s->train->task);
        else if (s->sample_index > 0)
            snprintf(cap, sizeof cap, "sample %d/%d: %s", s->sample_index, s->sample_count,
                     s->sample_name ? s->sample_name : "");
        else
            snprintf(cap, sizeof cap, "custom text");
        CAP(0);
        BTN(BTN_SAMPLE_NEXT, 1);
        BTN(BTN_TEXT, 0);
        BTN(BTN_SEED, 0);
        BTN(BTN_MASK, 0);
        BTN(BTN_SCALE, 0);
        BTN(BTN_CMAP, 0);
        BTN(BTN_THEME, 1);
        BTN(BTN_ZOOM_OUT, 0);
        BTN(BTN_ZOOM_IN, 1);
        BTN(BTN_SAVE, 0);
        BTN(BTN_PNG_SCALE, 1);
        BTN(BTN_HELP, 0);
    }
#undef BTN
#undef CAP

    const int pad = L->ui_pad, gap = L->ui_pad * 3 / 2;
    const int bh = s->figure || s->present ? L->ui_line : L->ui_line + pad; /* button height */
    const int bpad = pad; /* inner horizontal padding */
    int x = x0, y = y0;
    for (int i = 0; i < count; i++) {
        hdr_item *it = &items[i];
        int tw = view_text_width(measure, ud, it->text, L->ui_font, it->kind == 0);
        it->w = it->kind ? tw + 2 * bpad : tw + pad;
        if (it->kind == 1 && it->w < bh) it->w = bh; /* square at least */
        if (x + it->w > x0 + width && x > x0) {
            x = x0;
            y += bh + pad / 2;
        }
        view_rect r = {x, y, imin(it->w, width), bh};
        if (it->kind) {
            L->buttons[it->id].r = r;
            L->buttons[it->id].present = 1;
            snprintf(L->buttons[it->id].label, sizeof L->buttons[it->id].label, "%s", it->text);
        } else if (L->hdr_count < VIEW_MAX_HDR) {
            view_run *run = &L->hdr_runs[L->hdr_count++];
            run->x = x + pad / 2;
            run->y = y + (bh - L->ui_line) / 2;
            run->size = L->ui_font;
            run->w = tw;
            snprintf(run->text, sizeof run->text, "%s", it->text);
        }
        x += it->w + (it->group_end ? gap + pad / 2 : pad / 3 + 1);
    }
    L->header = (view_rect){x0, y0, width, y + bh - y0};
}

/* --- formula strip: runs at three levels (normal, superscript, subscript) ---- */

typedef struct {
    view_layout *L;
    view_measure_fn measure;
    void *ud;
    int x0, width, x, y, line_h;
    int item_start; /* first run of the current item, for wrapping whole items */
} run_flow;

static void run_add(run_flow *f, const char *text, int level) {
    view_layout *L = f->L;
    if (L->run_count >= VIEW_MAX_RUNS) return;
    view_run *r = &L->runs[L->run_count++];
    r->size = level ? iround(L->ui_font * 0.72f) : L->ui_font;
    snprintf(r->text, sizeof r->text, "%s", text);
    r->w = view_text_width(f->measure, f->ud, r->text, r->size, 0);
    r->x = f->x;
    /* scripts at 0.72 of the font, superscripts raised by 0.30 of it, subscripts
       lowered by 0.42; the titles' script runs (labels.c) use the same proportions */
    int base = f->y + (f->line_h - L->ui_line) / 2;
    if (level > 0)
        r->y = base - iround(L->ui_font * 0.30f);
    else if (level < 0)
        r->y = base + iround(L->ui_font * 0.42f);
    else
        r->y = base;
    f->x += r->w;
}

/* Ends an item: wraps it to a new line if it overflowed, then adds a gap. */
static void run_item_end(run_flow *f, int gap) {
    view_layout *L = f->L;
    int first = f->item_start;
    if (f->x > f->x0 + f->width && first < L->run_count && L->runs[first].x > f->x0) {
        int dx = L->runs[first].x - f->x0;
        f->y += f->line_h;
        for (int i = first; i < L->run_count; i++) {
            L->runs[i].x -= dx;
            L->runs[i].y += f->line_h;
        }
        f->x -= dx;
    }
    f->x += gap;
    f->item_start = L->run_count;
}

static void layout_formula(view_layout *L, const view_state *s, view_measure_fn measure, void *ud,
                           int x0, int y0, int width) {
    const mha_model *m = s->m;
    int n = m ? m->n : 0, d = m ? m->cfg.d_model : 0, dk = m ? m->d_k : 0, h = m ? m->cfg.h : 0;
    run_flow f = {L, measure, ud, x0, width, x0, y0, iround(L->ui_line * 1.45f), 0};
    const int gap = L->ui_font * 2;
    char a[48], b[48];
    const char *in_r = " \xE2\x88\x88 \xE2\x84\x9D"; /* " ∈ ℝ" */
    f.item_start = L->run_count;

    snprintf(a, sizeof a, "%d\xC3\x97%d", n, d);
    run_add(&f, "X", 0), run_add(&f, in_r, 0), run_add(&f, a, 1);
    run_item_end(&f, gap);

    snprintf(b, sizeof b, "h = %d,  d", h);
    run_add(&f, b, 0), run_add(&f, "k", -1);
    snprintf(b, sizeof b, " = d");
    run_add(&f, b, 0), run_add(&f, "model", -1);
    snprintf(b, sizeof b, "/h = %d", dk);
    run_add(&f, b, 0);
    run_item_end(&f, gap);

    snprintf(a, sizeof a, "%d\xC3\x97%d", n, dk);
    run_add(&f, "Q", 0), run_add(&f, "i", -1), run_add(&f, ", K", 0), run_add(&f, "i", -1);
    run_add(&f, ", V", 0), run_add(&f, "i", -1), run_add(&f, in_r, 0), run_add(&f, a, 1);
    run_item_end(&f, gap);

    run_add(&f, "head", 0), run_add(&f, "i", -1), run_add(&f, " = softmax(Q", 0);
    run_add(&f, "i", -1), run_add(&f, " K", 0), run_add(&f, "i", -1), run_add(&f, "T", 1);
    /* exactly what is in effect: the scaling, the temperature, the mask */
    const float temp = m && m->cfg.temperature > 0.0f ? m->cfg.temperature : 1.0f;
    const int scaled = !(m && m->cfg.no_scale), tempered = fabsf(temp - 1.0f) > 1e-6f;
    const int causal = m && m->cfg.mask == MHA_MASK_CAUSAL, padded = m && m->n_real < m->n;
    if (scaled && tempered)
        snprintf(b, sizeof b, " / (\xE2\x88\x9A%d \xC2\xB7 %g)", dk, (double)temp); /* √ · */
    else if (scaled)
        snprintf(b, sizeof b, " / \xE2\x88\x9A%d", dk);
    else if (tempered)
        snprintf(b, sizeof b, " / %g", (double)temp);
    else
        b[0] = '\0';
    run_add(&f, b, 0);
    run_add(&f, causal || padded ? " + M) V" : ") V", 0);
    run_add(&f, "i", -1);
    if (causal || padded)
        run_add(&f,
                causal && padded ? "  (M: causal + padding)"
                                 : (causal ? "  (M: causal)" : "  (M: padding)"),
                0);
    run_item_end(&f, gap);

    snprintf(a, sizeof a, "%d\xC3\x97%d", n, h * dk);
    run_add(&f, "Concat", 0), run_add(&f, in_r, 0), run_add(&f, a, 1);
    run_item_end(&f, gap);

    snprintf(a, sizeof a, "%d\xC3\x97%d", h * dk, d);
    run_add(&f, "W", 0), run_add(&f, "O", 1), run_add(&f, in_r, 0), run_add(&f, a, 1);
    run_item_end(&f, gap);

    snprintf(a, sizeof a, "%d\xC3\x97%d", n, d);
    run_add(&f, "MultiHead = Concat W", 0), run_add(&f, "O", 1), run_add(&f, in_r, 0);
    run_add(&f, a, 1);
    run_item_end(&f, 0);

    L->formula = (view_rect){x0, y0, width, f.y + f.line_h - y0};
}

/* --- sizes and the zoom of the controls ------------------------------------ */

/* Text and spacing of the data (titles, labels, the equation) at scale k. */
static void data_sizes(view_layout *L, float k, view_measure_fn measure, void *ud) {
    L->font = imax(1, iround(16.0f * k));
    L->font_small = imax(1, iround(14.0f * k));
    L->font_title = imax(1, iround(20.0f * k));
    int w = 0;
    measure(ud, "Ag", L->font, 0, &w, &L->line);
    if (L->line < L->font) L->line = L->font + L->font / 4;
    L->pad = imax(2, iround(8.0f * k));
    L->gap = imax(2, iround(12.0f * k));
}

/* Text of the controls (header, formula strip, status line) at scale k. */
static void ui_sizes(view_layout *L, float k, view_measure_fn measure, void *ud) {
    L->ui_font = imax(1, iround(16.0f * k));
    L->ui_small = imax(1, iround(14.0f * k));
    int w = 0;
    measure(ud, "Ag", L->ui_font, 0, &w, &L->ui_line);
    if (L->ui_line < L->ui_font) L->ui_line = L->ui_font + L->ui_font / 4;
    L->ui_pad = imax(2, iround(8.0f * k));
}

/* Lays out the header, the formula strip and the status line at the controls'
 * scale k; returns the first row below the formula strip. */
static int layout_chrome(view_layout *L, const view_state *s, view_measure_fn measure, void *ud,
                         float k, view_rect inner) {
    ui_sizes(L, k, measure, ud);
    L->hdr_count = L->run_count = 0;
    memset(L->buttons, 0, sizeof L->buttons);
    layout_header(L, s, measure, ud, inner.x, inner.y, inner.w);
    layout_formula(L, s, measure, ud, inner.x, L->header.y + L->header.h + L->ui_pad, inner.w);
    int status_h = s->figure || s->present ? 0 : L->ui_line;
    L->status = status_h ? (view_rect){inner.x, inner.y + inner.h - status_h, inner.w, status_h}
                         : (view_rect){0, 0, 0, 0};
    return L->formula.y + L->formula.h + L->ui_pad;
}

/* --- the split between the heads grid and the equation ------------------------ */

/* How well a split uses the room: the heads' and the equation's heatmap areas,
 * weighted 3 : 2 (geometric), so neither is starved. Heads labelled every k-th
 * token, or not at all, count three quarters of their area. */
static double split_score(long heads, long eq) {
    if (heads <= 0 || eq <= 0) return -1e300;
    return 0.6 * log((double)heads) + 0.4 * log((double)eq);
}

/* Heads grid in one part of main, the equation in what the grid leaves unused.
 * stacked: heads above, else heads left; frac: the heads' share in percent;
 * lesson: the share of the equation's part left under it for the lesson's panels
 * (the how-alike matrix then counts with the equation's heatmaps). */
static double split_try(view_layout *L, lay_ctx *cx, view_rect main, int stacked, int frac,
                        int lesson, int target) {
    view_rect a = main;
    if (stacked)
        a.h = main.h * frac / 100;
    else
        a.w = main.w * frac / 100;
    lay_heads(L, cx, a, 0, target);
    view_rect used = lay_heads_used(L, cx);
    view_rect b = main;
    if (stacked) {
        int y = used.y + used.h + L->gap;
        b.h = main.y + main.h - y;
        b.y = y;
    } else {
        int x = used.x + used.w + L->gap * 2;
        b.w = main.x + main.w - x;
        b.x = x;
    }
    if (b.w < L->font * 4 || b.h < L->line * 4 || used.h > main.h || used.w > main.w) return -1e300;
    /* heatmaps too small to read do not count as fitting */
    const int n = cx->s->m ? cx->s->m->n : 1;
    if (L->shown_heads < 1 || L->heads[0].map.w < imin(n, L->font * 3)) return -1e300;
    if (lesson) b.h -= imax(10 * L->line + L->gap, b.h * lesson / 100);
    long eq = lay_equation(L, cx, b);
    if (eq < 0) return -1e300;
    if (lesson) { /* the panels where they go; not shown, or a how-alike matrix too
                     small to read its numbers (under 8 lines), costs three quarters */
        view_lesson_layout(L, cx->s, cx->measure, cx->ud);
        if (L->lesson_shown && L->redund_map.w >= 8 * L->line)
            eq += (long)L->redund_map.w * L->redund_map.h;
        else
            eq = eq / 4;
    }
    long heads = (long)L->per_page * L->heads[0].map.w * L->heads[0].map.h; /* any page */
    if (L->label_stride != 1) heads = heads * 3 / 4; /* every token labelled is worth room */
    return split_score(heads, eq);
}

static void layout_main(view_layout *L, lay_ctx *cx, view_rect main, int target) {
    static const int fracs[] = {30, 35, 40, 45, 50, 55, 60, 65, 70, 75, 80};
    static const int lessons[] = {22, 28, 35};
    enum { NF = (int)(sizeof fracs / sizeof fracs[0]), NL = 3 };
    const int nl = cx->s->lesson ? NL : 1;
    double score[NL][2][NF];
    int side[NL][2][NF], best_side = 0;
    for (int l = 0; l < nl; l++)
        for (int st = 0; st < 2; st++)
            for (int i = 0; i < NF; i++) {
                int ls = cx->s->lesson ? lessons[l] : 0;
                score[l][st][i] = split_try(L, cx, main, st, fracs[i], ls, target);
                side[l][st][i] = score[l][st][i] > -1e299 ? L->heads[0].map.w : 0;
                best_side = imax(best_side, side[l][st][i]);
            }
    /* away from the base zoom the heads come first: the split that brings them
       nearest their target, then the best balance among those within 3 % of it */
    double best = -1e301;
    int best_l = 0, best_st = 0, best_f = 0;
    cx->fits = best_side > 0;
    for (int l = 0; l < nl; l++)
        for (int st = 0; st < 2; st++)
            for (int i = 0; i < NF; i++) {
                if (target > 0 && (long)side[l][st][i] * 100 < (long)best_side * 97) continue;
                if (score[l][st][i] > best + 1e-9)
                    best = score[l][st][i], best_l = l, best_st = st, best_f = i;
            }
    split_try(L, cx, main, best_st, fracs[best_f], cx->s->lesson ? lessons[best_l] : 0, target);
}

/* Below the equation's feet, in its area: where a bare layout puts its formula
 * block. Wrapped, that is under Concat (MultiHead sits under W^O). */
static view_rect eq_leftover(const view_layout *L) {
    const view_matrix_box *m[3] = {&L->concat, &L->w_o, &L->out};
    const int tick = L->pad / 2 + L->line; /* colorbar numbers */
    view_rect a = L->eq_area;
    int x0 = a.x, x1 = a.x + a.w, top = 0;
    int bottom = a.y + a.h;
    if (L->eq_arrange == VIEW_EQ_WRAP) { /* under Concat, down to MultiHead's foot */
        x1 = L->times_sym.x;
        top = L->concat.cbar.y + L->concat.cbar.h + tick;
        bottom = imin(bottom, L->out.cbar.y + L->out.cbar.h + tick);
    } else {
        for (int i = 0; i < 3; i++) top = imax(top, m[i]->cbar.y + m[i]->cbar.h + tick);
    }
    top += L->gap;
    return (view_rect){x0 + L->pad, top, x1 - x0 - 2 * L->pad, bottom - top};
}

/* Puts the captions and the formula into the room the equation leaves, as large
 * as fits there (up to 1.375 times the controls' size k). Returns 0 when they do
 * not fit even at k. */
static int fit_block(view_layout *L, const view_state *s, lay_ctx *cx, float k) {
    view_rect r = eq_leftover(L);
    for (float f = 1.375f; f > 0.99f && r.w > 0 && r.h > 0; f -= 0.125f) {
        ui_sizes(L, k * f, cx->measure, cx->ud);
        L->hdr_count = L->run_count = 0;
        layout_header(L, s, cx->measure, cx->ud, r.x, r.y, r.w);
        int y = L->header.y + L->header.h + L->ui_pad;
        layout_formula(L, s, cx->measure, cx->ud, r.x, y, r.w);
        int fits = L->formula.y + L->formula.h <= r.y + r.h && L->header.w <= r.w;
        for (int i = 0; i < L->run_count && fits; i++) /* an item wider than the room */
            fits = L->runs[i].x + L->runs[i].w <= r.x + r.w;
        for (int i = 0; i < L->hdr_count && fits; i++)
            fits = L->hdr_runs[i].x + L->hdr_runs[i].w <= r.x + r.w;
        if (fits) return 1;
    }
    return 0;
}

/* The main area: the heads grid and the equation, or the focus view (with the
 * step-through in place of Q_i, K_i, V_i, head_i and the equation), or training
 * mode's heads beside its curves; the lesson's panels under the equation. */
static void layout_body(view_layout *L, const view_state *s, lay_ctx *cx, int target) {
    if (s->train) { /* training mode: the trained heads, then curves and bars */
        view_rect left = L->main, right = L->main;
        left.w = L->main.w * 56 / 100;
        right.x = left.x + left.w + L->gap * 2;
        right.w = L->main.x + L->main.w - right.x;
        lay_heads(L, cx, left, 0, 0);
        view_train_layout(L, s, right);
        return;
    }
    if (s->focus > 0) {
        /* the focus view beside the equation, or above it in a portrait window */
        view_rect a = L->main, b = L->main;
        if (L->main.h > L->main.w) {
            a.h = L->main.h * 60 / 100;
            b.y = a.y + a.h + L->gap;
            b.h = L->main.y + L->main.h - b.y;
        } else { /* the head in focus at least as large as in the grid */
            a.w = L->main.w * 68 / 100;
            b.x = a.x + a.w + L->gap * 2;
            b.w = L->main.x + L->main.w - b.x;
        }
        lay_focus(L, cx, a);
        if (s->step > 0) { /* the step-through takes the place of Q_i, K_i, V_i, head_i,
                              and of the equation, whose Concat and W^O are two of its stages */
            view_rect r = L->focus_caption;
            view_steps_layout(
                &L->steps, L, s,
                (view_rect){r.x, r.y, L->main.x + L->main.w - r.x, L->main.y + L->main.h - r.y});
            memset(L->qkv, 0, sizeof L->qkv);
            return;
        }
        lay_equation(L, cx, b);
        view_lesson_layout(L, s, cx->measure, cx->ud);
        return;
    }
    layout_main(L, cx, L->main, target);
    view_lesson_layout(L, s, cx->measure, cx->ud);
}

/* Everything at one zoom; target as lay_heads. */
static void compute_at(view_layout *L, const view_state *s, lay_ctx *cx, int target) {
    view_measure_fn measure = cx->measure;
    void *ud = cx->ud;
    memset(L, 0, sizeof *L);
    const float ui = s->ui_scale > 0 ? s->ui_scale : 1.0f;
    const float zoom = s->zoom > 0 ? s->zoom : 1.0f;
    const float base = s->zoom_base > 0 ? s->zoom_base : 1.0f;
    data_sizes(L, ui * zoom, measure, ud);

    const int W = s->width, H = s->height;
    const int margin = imax(2, iround(12.0f * ui * zoom));
    view_rect inner = {margin, margin, imax(1, W - 2 * margin), imax(1, H - 2 * margin)};

    if (s->panel == VIEW_PANEL_HEAD) {
        ui_sizes(L, ui * zoom, measure, ud);
        L->ui_zoom = zoom;
        lay_heads(L, cx, inner, 1, 0);
        L->focus = s->panel_head;
        return;
    }
    if (s->panel == VIEW_PANEL_STEPS) {
        ui_sizes(L, ui * zoom, measure, ud);
        L->ui_zoom = zoom;
        L->focus = s->panel_head;
        view_steps_layout(&L->steps, L, s, inner);
        return;
    }
    if (s->panel == VIEW_PANEL_EQUATION) { /* alone: one row or one column, no empty corner */
        ui_sizes(L, ui * zoom, measure, ud);
        L->ui_zoom = zoom;
        cx->eq_allow = 1 << VIEW_EQ_ROW | 1 << VIEW_EQ_COLUMN;
        lay_equation(L, cx, inner);
        cx->eq_allow = 0;
        return;
    }

    /* the controls follow the zoom while they take at most a third of the window
       (or what they take at 100 %) and each formula item fits its width; past
       that they stay smaller */
    float zc = zoom;
    const float floor_z = fminf(zoom, fminf(base, 1.0f));
    int main_top = layout_chrome(L, s, measure, ud, ui * floor_z, inner);
    int limit = imax(H / 3, main_top + (L->status.h ? L->status.h + L->ui_pad : 0));
    for (;;) {
        main_top = layout_chrome(L, s, measure, ud, ui * zc, inner);
        int chrome = main_top + (L->status.h ? L->status.h + L->ui_pad : 0);
        int wide = 0; /* a formula item wider than the window */
        for (int i = 0; i < L->run_count; i++)
            wide |= L->runs[i].x + L->runs[i].w > inner.x + inner.w;
        if ((chrome <= limit && !wide) || zc <= floor_z + 1e-3f) break;
        zc = fmaxf(floor_z, zc * 0.92f);
    }
    L->ui_zoom = zc;
    int bottom = L->status.h ? L->status.y - L->ui_pad : inner.y + inner.h;
    L->main = (view_rect){inner.x, main_top, inner.w, imax(1, bottom - main_top)};
    layout_body(L, s, cx, target);

    /* a figure (or the presentation) has no controls: its captions and formula
       move into the room the equation leaves, as large as fits there (up to 1.375
       times), and the data grows into the rows they free */
    if ((s->figure || s->present) && !s->focus && !s->train) {
        static view_layout bare; /* large; the layout is computed on one thread */
        /* wrapped, the block goes under Concat; else under the whole equation (where
           the lesson's panels go when they are on: then wrapped only) */
        static const int allow[2] = {1 << VIEW_EQ_WRAP, 0};
        const int fits = cx->fits;
        for (int a = 0; a < (s->lesson ? 1 : 2); a++) {
            bare = *L;
            bare.main = (view_rect){inner.x, inner.y, inner.w, inner.h};
            cx->eq_allow = allow[a];
            cx->fits = 1;
            layout_body(&bare, s, cx, target);
            cx->eq_allow = 0;
            if (cx->fits && (bare.lesson_shown || !L->lesson_shown) &&
                fit_block(&bare, s, cx, ui * zc)) {
                *L = bare;
                break;
            }
            cx->fits = fits;
        }
    }

    /* a paged figure says which heads it holds, in its header */
    if ((s->figure || s->present) && L->pages > 1 && L->hdr_count < VIEW_MAX_HDR &&
        L->hdr_count > 0) {
        view_run *last = &L->hdr_runs[L->hdr_count - 1], *r = &L->hdr_runs[L->hdr_count];
        if (L->shown_heads == 1)
            snprintf(r->text, sizeof r->text, "head %d of %d", L->first_head + 1,
                     s->m ? s->m->cfg.h : 0);
        else
            snprintf(r->text, sizeof r->text, "heads %d\xE2\x80\x93%d of %d", L->first_head + 1,
                     L->first_head + L->shown_heads, s->m ? s->m->cfg.h : 0);
        r->size = last->size;
        r->w = view_text_width(measure, ud, r->text, r->size, 1);
        r->x = last->x + last->w + L->ui_pad * 3;
        r->y = last->y;
        if (r->x + r->w <= L->header.x + L->header.w) L->hdr_count++;
    }
}

/* The side of one heatmap at zoom z when the heads get all the room they can. */
static int side_at(view_layout *L, const view_state *s, lay_ctx *cx, float z, int target) {
    view_state at = *s;
    at.zoom = z;
    cx->fits = 1;
    compute_at(L, &at, cx, target);
    return L->shown_heads > 0 && cx->fits ? L->heads[0].map.w : 0; /* 0: the zoom does not fit */
}

float view_zoom_for_size(int width, int height) {
    static const float steps[] = VIEW_ZOOM_STEPS;
    float want = fminf((float)width / 1920.0f, (float)height / 1080.0f), z = 1.0f;
    for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++)
        if (steps[i] <= want + 1e-3f && steps[i] > z) z = steps[i];
    return z;
}

void view_layout_compute(view_layout *L, const view_state *s, view_measure_fn measure, void *ud) {
    lay_ctx cx = {s, measure, ud, {0}, {0}, 0, 0, 1};
    const float zoom = s->zoom > 0 ? s->zoom : 1.0f;
    float base = s->zoom_base > 0 ? s->zoom_base : 1.0f;
    static const float steps[] = VIEW_ZOOM_STEPS;
    const int ns = (int)(sizeof steps / sizeof steps[0]);
    if (s->panel != VIEW_PANEL_ALL || s->focus || s->train || !s->m) {
        compute_at(L, s, &cx, 0);
        L->data_zoom = zoom;
        return;
    }
    /* The base zoom (the display's: 200 % on a 4K screen) is where heatmaps fill
       the window. When the window is too small for it (a 4K display, a small
       window), the base is the largest zoom step below it that fits. */
    int ref = side_at(L, s, &cx, base, 0);
    for (int i = ns - 1; i >= 0 && ref == 0; i--)
        if (steps[i] < base - 1e-4f) base = steps[i], ref = side_at(L, s, &cx, base, 0);
    if (ref == 0) { /* nothing fits: the smallest, as it comes */
        L->data_zoom = base;
        return;
    }
    if (fabsf(zoom - base) <= 1e-3f) {
        L->data_zoom = base; /* L holds this layout */
        return;
    }
    /* Above the base zoom, heatmaps take their side at the base zoom times
       zoom / base: text and data grow together and pages hold fewer heads. Past
       the zoom at which one head can no longer keep its base size (or three
       quarters of the most it could have at the base zoom, for a lone head that
       fills the window), or at which the window cannot hold it all, the data
       stays at that zoom: bigger text would only shrink the data. Zooms are tried
       on the steps of Ctrl+=, so the zoom shown never falls when the zoom rises. */
    if (zoom > base) {
        const int most = side_at(L, s, &cx, base, 1 << 28);
        const int floor_side = imin(ref, (most * 3 + 3) / 4); /* 3/4, rounded up */
        for (int i = ns; i >= 0; i--) { /* zoom itself, then the steps below it */
            float z = i == ns ? zoom : steps[i];
            if (z > zoom + 1e-4f || z <= base + 1e-4f) continue;
            int side = side_at(L, s, &cx, z, imax(1, iround((float)ref * z / base)));
            if (side > 0 && side >= floor_side) {
                L->data_zoom = z; /* L holds this layout */
                return;
            }
        }
        side_at(L, s, &cx, base, 0);
        L->data_zoom = base;
        return;
    }
    /* below the base zoom the text is smaller and the heatmaps fill the room */
    side_at(L, s, &cx, zoom, 0);
    L->data_zoom = zoom;
}
