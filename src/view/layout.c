/* layout.c: every rectangle of the picture (header, formula strip, heads grid paged
 * when h heads of n x n do not fit at one pixel a cell, focus view, equation) from
 * the state (size, zoom, model, tokens) and a text measurer. No drawing, no hit-testing. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "view.h"
#include "view_internal.h"

static int iround(float v) {
    return (int)lroundf(v);
}

static int imax(int a, int b) {
    return a > b ? a : b;
}

static int imin(int a, int b) {
    return a < b ? a : b;
}

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
#undef BTN
#undef CAP

    const int bh = L->line + L->pad; /* button height */
    const int bpad = L->pad;         /* inner horizontal padding */
    int x = x0, y = y0;
    for (int i = 0; i < count; i++) {
        hdr_item *it = &items[i];
        int tw = view_text_width(measure, ud, it->text, L->font, it->kind == 0);
        it->w = it->kind ? tw + 2 * bpad : tw + L->pad;
        if (it->kind == 1 && it->w < bh) it->w = bh; /* square at least */
        if (x + it->w > x0 + width && x > x0) {
            x = x0;
            y += bh + L->pad / 2;
        }
        view_rect r = {x, y, imin(it->w, width), bh};
        if (it->kind) {
            L->buttons[it->id].r = r;
            L->buttons[it->id].present = 1;
            snprintf(L->buttons[it->id].label, sizeof L->buttons[it->id].label, "%s", it->text);
        } else if (L->hdr_count < VIEW_MAX_HDR) {
            view_run *run = &L->hdr_runs[L->hdr_count++];
            run->x = x + L->pad / 2;
            run->y = y + (bh - L->line) / 2;
            run->size = L->font;
            run->w = tw;
            snprintf(run->text, sizeof run->text, "%s", it->text);
        }
        x += it->w + (it->group_end ? L->gap + L->pad / 2 : L->pad / 3 + 1);
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
    r->size = level ? iround(L->font * 0.72f) : L->font;
    snprintf(r->text, sizeof r->text, "%s", text);
    r->w = view_text_width(f->measure, f->ud, r->text, r->size, 0);
    r->x = f->x;
    /* scripts at 0.72 of the font, superscripts raised by 0.30 of it, subscripts
       lowered by 0.42; the titles' script runs (labels.c) use the same proportions */
    int base = f->y + (f->line_h - L->line) / 2;
    if (level > 0)
        r->y = base - iround(L->font * 0.30f);
    else if (level < 0)
        r->y = base + iround(L->font * 0.42f);
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
    run_flow f = {L, measure, ud, x0, width, x0, y0, iround(L->line * 1.45f), 0};
    const int gap = L->font * 2;
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

/* --- heads grid ------------------------------------------------------------ */

/* Largest heatmap side for k heads in cols columns within (w, h). */
static int grid_side(int k, int cols, int w, int h, int lw, int lh, int title_h, int gap) {
    int rows = (k + cols - 1) / cols;
    int aw = w - lw - (cols - 1) * gap;
    int ah = h - lh - rows * title_h - (rows - 1) * gap;
    if (aw <= 0 || ah <= 0) return 0;
    return imin(aw / cols, ah / rows);
}

static int best_grid(int k, int w, int h, int lw, int lh, int title_h, int gap, int *cols_out) {
    int best = 0, best_cols = 1;
    for (int cols = 1; cols <= k; cols++) {
        int side = grid_side(k, cols, w, h, lw, lh, title_h, gap);
        if (side > best) best = side, best_cols = cols;
    }
    *cols_out = best_cols;
    return best;
}

static void layout_heads(view_layout *L, const view_state *s, view_measure_fn measure, void *ud,
                         view_rect area, int single_head) {
    const int n = s->m ? s->m->n : 1;
    const int h = s->m ? s->m->cfg.h : 1;
    L->heads_area = area;
    L->label_size = L->font_small;
    const int title_h = L->line + L->pad / 2;
    const int gap = L->gap;
    /* bottom strip: the attention colorbar with its numbers */
    const int cbar_h = imax(8, L->font_small * 3 / 4);
    const int cbar_block = cbar_h + 2 * L->line + L->pad * 2; /* caption, bar, numbers */
    view_rect g = {area.x, area.y, area.w, area.h - cbar_block};

    int label_w = view_label_max_width(s, L->label_size, measure, ud) + L->pad;
    int label_fits_w = label_w <= area.w / 4; /* else labels would be cut: drop them */
    int lab_tw = 0, label_line = 0;
    measure(ud, "Ag", L->label_size, 0, &lab_tw, &label_line);
    L->label_line = label_line;
    int k = single_head ? 1 : h;

    /* paging: how many heads fit at >= 1 px a cell (never more than VIEW_MAX_VISIBLE) */
    int per_page = imin(k, VIEW_MAX_VISIBLE);
    int cols = 1;
    while (per_page > 1 && best_grid(per_page, g.w, g.h - L->line, 0, 0, title_h, gap, &cols) < n)
        per_page--;
    int pages = (k + per_page - 1) / per_page;
    int page = single_head ? 0 : imax(0, imin(s->page, pages - 1));
    if (pages > 1) {
        /* reserve a line for the page note and its buttons */
        L->page_note = (view_rect){g.x, g.y, g.w, L->line + L->pad};
        g.y += L->line + L->pad;
        g.h -= L->line + L->pad;
    }
    int first = page * per_page;
    int shown = imin(per_page, k - first);

    /* with labels first; drop them when a cell is shorter than the label text */
    int lw = label_w, lh = label_w;
    int side = best_grid(shown, g.w, g.h, lw, lh, title_h, gap, &cols);
    /* label every stride-th token so each label has a full text line of room;
       past a stride of 10 labels stop helping and are dropped (hover remains) */
    int need = label_line + 1, stride = 1;
    while (stride <= 10 && (long)side * stride < (long)need * n) stride++;
    int labels = label_fits_w && n > 0 && stride <= 10 && stride <= n && side >= n && side >= need;
    L->label_stride = labels ? stride : 0;
    if (!labels) {
        lw = lh = 0;
        side = best_grid(shown, g.w, g.h, 0, 0, title_h, gap, &cols);
    }
    /* keep cells from growing absurdly large for short sentences */
    int max_cell = L->font * 4; /* a lone head (focus, panel export) may fill its area */
    if (!single_head && side > n * max_cell) side = n * max_cell;
    if (side < 1) side = 1;
    int rows = (shown + cols - 1) / cols;

    L->first_head = single_head ? s->panel_head - 1 : first;
    if (single_head && s->focus) L->first_head = s->focus - 1;
    L->shown_heads = shown;
    L->per_page = per_page;
    L->pages = pages;
    L->page = page;
    L->grid_cols = cols;
    L->grid_rows = rows;
    L->show_row_labels = labels;
    L->show_col_labels = labels;
    L->row_label_w = lw;
    L->col_label_h = lh;

    /* a head exported alone is centred in its figure */
    int dx = 0;
    if (single_head && !s->focus) dx = imax(0, (g.w - lw - side) / 2);
    for (int i = 0; i < shown; i++) {
        int c = i % cols, r = i / cols;
        int x = g.x + dx + lw + c * (side + gap);
        int y = g.y + r * (title_h + side + gap) + title_h;
        L->heads[i].title = (view_rect){x, y - title_h, side, title_h};
        L->heads[i].map = (view_rect){x, y, side, side};
    }
    int grid_bottom = g.y + rows * (title_h + side + gap) - gap + lh;
    int cw = imin(area.w - lw, imax(L->font * 12, cols * side));
    L->attn_cbar =
        (view_rect){g.x + dx + lw, grid_bottom + L->pad + L->line, imin(cw, g.w - lw), cbar_h};

    if (pages > 1) {
        int bw = L->line + L->pad;
        L->buttons[BTN_PAGE_PREV].r = (view_rect){g.x, L->page_note.y, bw, L->line};
        L->buttons[BTN_PAGE_PREV].present = 1;
        L->buttons[BTN_PAGE_NEXT].r =
            (view_rect){g.x + bw + L->pad / 2, L->page_note.y, bw, L->line};
        L->buttons[BTN_PAGE_NEXT].present = 1;
        snprintf(L->buttons[BTN_PAGE_PREV].label, sizeof L->buttons[0].label, "\xE2\x97\x80");
        snprintf(L->buttons[BTN_PAGE_NEXT].label, sizeof L->buttons[0].label, "\xE2\x96\xB6");
    }
}

/* --- matrices with a shape label and a colorbar under them ----------------- */

static void matrix_box(view_matrix_box *b, const view_layout *L, int x, int y, int w, int h,
                       int rows, int cols) {
    b->rows = rows;
    b->cols = cols;
    b->map = (view_rect){x, y, imax(1, w), imax(1, h)};
    b->shape = (view_rect){x, y + b->map.h + L->pad / 2, imax(w, L->font * 5), L->line};
    int cbw = imax(w, L->font * 8);
    b->cbar = (view_rect){x, b->shape.y + L->line + L->pad / 2, cbw, imax(6, L->font_small / 2)};
}

/* Height under a matrix for its shape label, colorbar and colorbar numbers. */
static int matrix_foot(const view_layout *L) {
    return L->pad / 2 + L->line + L->pad / 2 + imax(6, L->font_small / 2) + L->line + L->pad;
}

static void layout_equation(view_layout *L, const view_state *s, view_measure_fn measure, void *ud,
                            view_rect area) {
    const int n = s->m ? s->m->n : 1;
    const int d = s->m ? s->m->cfg.d_model : 1;
    L->eq_area = area;
    L->eq_title = (view_rect){area.x, area.y, area.w, L->line + L->pad};
    int sym_w = view_text_width(measure, ud, "=", L->font_title, 1) + 2 * L->gap;
    int sym_h = 0, sym_tw = 0;
    measure(ud, "=", L->font_title, 1, &sym_tw, &sym_h);
    int top = area.y + L->eq_title.h + L->pad;
    int avail_h = area.y + area.h - top - matrix_foot(L);
    /* three matrices side by side, each at most (area - symbols) / 3 wide */
    int mat_w = (area.w - 2 * sym_w) / 3;
    mat_w = imax(1, mat_w);
    float cw = (float)mat_w / (float)d;
    int wo_h = imin(avail_h, iround(cw * d));
    float row_h = fmaxf(cw, fminf((float)L->font_small * 1.1f, (float)avail_h / (float)n));
    int hh = imin(avail_h, imax(1, iround(row_h * n)));
    hh = imin(hh, imax(wo_h, iround(cw * n))); /* keep Concat and W^O in proportion */
    wo_h = imax(1, wo_h);

    int x = area.x;
    /* symbols sit beside the shorter of the maps, so they never meet a shape label */
    int sym_y = top + imax(0, imin(hh, wo_h) / 2 - sym_h / 2);
    matrix_box(&L->concat, L, x, top, mat_w, hh, n, d);
    x += mat_w;
    L->times_sym = (view_rect){x, sym_y, sym_w, sym_h};
    x += sym_w;
    matrix_box(&L->w_o, L, x, top, mat_w, wo_h, d, d);
    x += mat_w;
    L->equals_sym = (view_rect){x, sym_y, sym_w, sym_h};
    x += sym_w;
    matrix_box(&L->out, L, x, top, mat_w, hh, n, d);
    /* shape labels and colorbars no wider than their matrix */
    view_matrix_box *mats[3] = {&L->concat, &L->w_o, &L->out};
    for (int i = 0; i < 3; i++) {
        mats[i]->cbar.w = imin(mats[i]->cbar.w, mat_w);
        mats[i]->shape.w = mats[i]->cbar.w;
    }
    /* a matrix shorter than the symbols pushes its foot below them */
    int sym_bottom = sym_y + sym_h + L->pad / 2;
    for (int i = 0; i < 3; i += 2) {
        int dy = sym_bottom - mats[i]->shape.y;
        if (dy > 0) mats[i]->shape.y += dy, mats[i]->cbar.y += dy;
    }
}

/* Focus view: the head large on the left, Q_i K_i V_i head_i in a 2 x 2 grid. */
static void layout_focus(view_layout *L, const view_state *s, view_measure_fn measure, void *ud,
                         view_rect area) {
    const int n = s->m ? s->m->n : 1;
    const int dk = s->m ? s->m->d_k : 1;
    view_rect left = {area.x, area.y, area.w * 55 / 100, area.h};
    view_rect right = {left.x + left.w + L->gap, area.y, area.w - left.w - L->gap, area.h};
    layout_heads(L, s, measure, ud, left, 1);
    L->focus = s->focus;
    int cell_w = (right.w - L->gap) / 2;
    L->focus_caption = (view_rect){right.x, right.y, right.w, L->line};
    int top = right.y + L->line + L->pad;
    int cell_h = (right.y + right.h - top - L->gap) / 2;
    int map_h_max = cell_h - matrix_foot(L) - L->line;
    float rh = fminf((float)cell_w / (float)dk * 2.0f, (float)map_h_max / (float)n);
    int mh = imax(1, imin(map_h_max, iround(rh * n)));
    int mw = imax(1, imin(cell_w, iround((float)mh / (float)n * dk * 1.0f)));
    if (mw < cell_w / 3) mw = imin(cell_w, cell_w / 3);
    for (int i = 0; i < 4; i++) {
        int x = right.x + (i % 2) * (cell_w + L->gap);
        int y = top + (i / 2) * (cell_h + L->gap) + L->line;
        matrix_box(&L->qkv[i], L, x, y, mw, mh, n, dk);
        L->qkv[i].cbar.w = imin(L->qkv[i].cbar.w, cell_w - L->pad);
        L->qkv[i].shape.w = L->qkv[i].cbar.w;
    }
}

void view_layout_compute(view_layout *L, const view_state *s, view_measure_fn measure, void *ud) {
    memset(L, 0, sizeof *L);
    float ui = s->ui_scale > 0 ? s->ui_scale : 1.0f;
    float zoom = s->zoom > 0 ? s->zoom : 1.0f;
    float k = ui * zoom;
    L->font = imax(1, iround(16.0f * k));
    L->font_small = imax(1, iround(14.0f * k));
    L->font_title = imax(1, iround(20.0f * k));
    int lw = 0;
    measure(ud, "Ag", L->font, 0, &lw, &L->line);
    if (L->line < L->font) L->line = L->font + L->font / 4;
    L->pad = imax(2, iround(8.0f * k));
    L->gap = imax(2, iround(12.0f * k));

    const int W = s->width, H = s->height;
    const int margin = L->gap;
    view_rect inner = {margin, margin, imax(1, W - 2 * margin), imax(1, H - 2 * margin)};

    if (s->panel == VIEW_PANEL_HEAD) {
        layout_heads(L, s, measure, ud, inner, 1);
        L->focus = s->panel_head;
        return;
    }
    if (s->panel == VIEW_PANEL_STEPS) {
        L->focus = s->panel_head;
        view_steps_layout(&L->steps, L, s, inner);
        return;
    }
    if (s->panel == VIEW_PANEL_EQUATION) {
        layout_equation(L, s, measure, ud, inner);
        return;
    }

    layout_header(L, s, measure, ud, inner.x, inner.y, inner.w);
    layout_formula(L, s, measure, ud, inner.x, L->header.y + L->header.h + L->pad, inner.w);
    L->status = (view_rect){inner.x, inner.y + inner.h - L->line, inner.w, L->line};
    int main_top = L->formula.y + L->formula.h + L->pad;
    L->main = (view_rect){inner.x, main_top, inner.w, imax(1, L->status.y - L->pad - main_top)};

    int left_w = L->main.w * 56 / 100;
    view_rect left = {L->main.x, L->main.y, left_w, L->main.h};
    view_rect right = {left.x + left.w + L->gap * 2, L->main.y, L->main.w - left_w - L->gap * 2,
                       L->main.h};
    if (s->train) { /* training mode: the trained heads, then curves and bars */
        layout_heads(L, s, measure, ud, left, 0);
        view_train_layout(L, s, right);
        return;
    }
    if (s->focus > 0) {
        layout_focus(L, s, measure, ud, left);
        if (s->step > 0) { /* the step-through takes the place of Q_i, K_i, V_i, head_i,
                              and of the equation, whose Concat and W^O are two of its stages */
            view_rect r = L->focus_caption;
            view_steps_layout(
                &L->steps, L, s,
                (view_rect){r.x, r.y, L->main.x + L->main.w - r.x, left.y + left.h - r.y});
            memset(L->qkv, 0, sizeof L->qkv);
            return;
        }
    } else {
        layout_heads(L, s, measure, ud, left, 0);
        /* give the equation whatever width the heads grid leaves unused */
        int used =
            L->attn_cbar.x +
            imax(L->attn_cbar.w, view_text_width(measure, ud, VIEW_ATTN_CAPTION, L->font_small, 0));
        for (int i = 0; i < L->shown_heads; i++)
            used = imax(used, L->heads[i].map.x + L->heads[i].map.w);
        if (L->pages > 1) used = left.x + left.w; /* the page note spans the area */
        int x = imin(used + L->gap * 3, right.x);
        right.w += right.x - x;
        right.x = x;
    }
    layout_equation(L, s, measure, ud, right);
    view_lesson_layout(L, s, measure, ud);
}
