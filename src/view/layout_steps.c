/* layout_steps.c: where the step-through of one head goes, and what its text says.
 * On screen (and in the panel Ctrl+Shift+S saves) one stage at a time: a strip of
 * nine numbered chips (ten in a RoPE model, whose rotation of Q and K is stage 3;
 * the current one filled), the stage's formula large, a note
 * saying what it does, and the stage's own matrices as large as fit, with token
 * labels on the query and key sides where they fit. The --panel steps:K figure
 * shows all nine in a 3 x 3 grid instead. Drawing them is steps.c's. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "layout_internal.h"

#define imax lay_imax
#define imin lay_imin

/* --- what the stages say ------------------------------------------------------- */

/* The divisor of stage 4: "√16", "√16 · 2", or the temperature alone. */
static void divisor(char *buf, size_t len, const attn_layer *layer) {
    const float t = layer->temperature > 0.0f ? layer->temperature : 1.0f;
    if (layer->scaled && fabsf(t - 1.0f) > 1e-6f)
        snprintf(buf, len, "\xE2\x88\x9A%d \xC2\xB7 %g", layer->d_k, (double)t);
    else if (layer->scaled)
        snprintf(buf, len, "\xE2\x88\x9A%d", layer->d_k);
    else
        snprintf(buf, len, "%g", (double)t);
}

static int is_masked(const attn_layer *layer) {
    return layer->mask == ATTN_MASK_CAUSAL || layer->n_real < layer->n;
}

int view_steps_count(const attn_layer *layer) {
    return layer && layer->q_unrot && layer->q_rot && layer->k_unrot && layer->k_rot ? 10 : 9;
}

int view_steps_kind(const attn_layer *layer, int k) {
    if (view_steps_count(layer) == 9 || k < 3) return k;
    return k == 3 ? VIEW_STAGE_ROPE : k - 1;
}

/* The stage (1-based) whose kind is kind. */
static int stage_of(const attn_layer *layer, int kind) {
    return view_steps_count(layer) == 10 && kind >= 3 && kind != VIEW_STAGE_ROPE ? kind + 1 : kind;
}

/* The K/V head that query head `head` (0-based) reads, 0-based. */
static int kv_of(const attn_layer *layer, int head) {
    return layer->h_kv > 0 && layer->h_kv < layer->h ? head / (layer->h / layer->h_kv) : head;
}

int view_steps_same(const attn_layer *layer, int k) {
    if (!layer) return 0;
    k = view_steps_kind(layer, k);
    const float t = layer->temperature > 0.0f ? layer->temperature : 1.0f;
    if (k == 4) return !layer->scaled && fabsf(t - 1.0f) <= 1e-6f;
    if (k == 5) return !is_masked(layer);
    return 0;
}

static void title_of(char *buf, size_t len, const attn_layer *layer, int head, int k, int variant);

void view_steps_title(char *buf, size_t len, const attn_layer *layer, int head, int k,
                      int variant) {
    const int stage = k;
    k = view_steps_kind(layer, k);
    title_of(buf, len, layer, head, k, variant);
    if (stage != k && buf[0]) { /* RoPE's stage 3 moved those after it on: their number */
        char num[12];
        const size_t w = (size_t)snprintf(num, sizeof num, "%d", stage);
        const size_t skip = k == VIEW_STAGE_ROPE ? 2 : 1, rest = strlen(buf + skip);
        if (w + rest < len) { /* the number swapped in place (a title fits: it did before) */
            memmove(buf + w, buf + skip, rest + 1);
            memcpy(buf, num, w);
        }
    }
}

/* The title of stage kind k, numbered as without RoPE (VIEW_STAGE_ROPE: "10"). */
static void title_of(char *buf, size_t len, const attn_layer *layer, int head, int k, int variant) {
    char i[16], div[48];
    snprintf(i, sizeof i, "%d", head + 1);
    divisor(div, sizeof div, layer);
    const int lng = variant == 0;
    switch (k) {
    case VIEW_STAGE_ROPE:
        if (lng)
            snprintf(buf, len, "10  RoPE: Q_{%s} and K_{%s} rotated by position", i, i);
        else
            snprintf(buf, len, "10  RoPE");
        break;
    case 1:
        if (lng)
            snprintf(buf, len, "1  X: %s", layer->x_what ? layer->x_what : "embedding + position");
        else
            snprintf(buf, len, "1  X");
        break;
    case 2:
        if (lng)
            snprintf(buf, len,
                     "2  Q_{%s} = X W^{Q}_{%s},  K_{%s} = X W^{K}_{%s},  V_{%s} = X W^{V}_{%s}", i,
                     i, i, i, i, i);
        else
            snprintf(buf, len, "2  Q_{%s}, K_{%s}, V_{%s} = X W_{%s}", i, i, i, i);
        break;
    case 3: snprintf(buf, len, "3  S_{%s} = Q_{%s} K_{%s}^{T}", i, i, i); break;
    case 4:
        if (lng && view_steps_same(layer, stage_of(layer, 4)))
            snprintf(buf, len, "4  S_{%s} / 1: not scaled", i);
        else
            snprintf(buf, len, "4  S_{%s} / %s", i, div);
        break;
    case 5:
        if (lng)
            snprintf(buf, len, "5  S_{%s} / %s + M: %s", i, div,
                     is_masked(layer) ? "\xE2\x88\x92\xE2\x88\x9E where masked" : "no mask, M = 0");
        else
            snprintf(buf, len, is_masked(layer) ? "5  + M" : "5  + M = 0");
        break;
    case 6:
        snprintf(buf, len, lng ? "6  A_{%s} = softmax of each row" : "6  A_{%s} = softmax", i);
        break;
    case 7: snprintf(buf, len, "7  head_{%s} = A_{%s} V_{%s}", i, i, i); break;
    case 8:
        if (lng)
            snprintf(buf, len, "8  Concat: head_{%s} is columns %d\xE2\x80\x93%d", i,
                     head * layer->d_k + 1, (head + 1) * layer->d_k);
        else
            snprintf(buf, len, "8  Concat");
        break;
    default:
        snprintf(buf, len,
                 lng ? "9  head_{%s} W^{O}_{%s}: its share of MultiHead"
                     : "9  head_{%s} W^{O}_{%s}",
                 i, i);
        break;
    }
}

int view_steps_runs(const char *markup, char parts[][48], int *lvl, int max) {
    int count = 0, level = 0;
    size_t o = 0;
    for (const char *p = markup; *p && count < max; p++) {
        int close = *p == '}' && level != 0;
        int open = (*p == '_' || *p == '^') && p[1] == '{';
        if (open || close || o + 1 >= 48) {
            if (o) parts[count][o] = '\0', lvl[count++] = level, o = 0;
            if (count >= max) break;
            if (open) level = *p == '_' ? -1 : 1, p++;
            if (close) level = 0;
            if (open || close) continue;
        }
        parts[count][o++] = *p;
    }
    if (o && count < max) parts[count][o] = '\0', lvl[count++] = level;
    return count;
}

/* Width of markup at size (scripts at 72 %, the rest bold) as view_draw_script_runs draws it. */
static int markup_width(view_measure_fn measure, void *ud, const char *markup, int size) {
    char parts[24][48];
    int lvl[24], w = 0;
    const int n = view_steps_runs(markup, parts, lvl, 24);
    for (int i = 0; i < n; i++)
        w += view_text_width(measure, ud, parts[i], lvl[i] ? size * 72 / 100 : size, lvl[i] == 0);
    return w;
}

static void x_note(char *buf, size_t len, const attn_layer *layer);
static const char *norm_after(const attn_layer *layer);

/* Stage 2's note: the head's own matrices, or its query's and its K/V head's. */
static void qkv_note(char *buf, size_t len, const attn_layer *layer, int head) {
    const int d = layer->d_model, dk = layer->d_k;
    if (layer->h_kv > 0 && layer->h_kv < layer->h)
        snprintf(buf, len,
                 "Each token's row of X times %d \xC3\x97 %d matrices: head %d's own for its "
                 "query, K/V head %d's (shared) for its key and value, %d numbers each.",
                 d, dk, head + 1, kv_of(layer, head) + 1, dk);
    else
        snprintf(buf, len,
                 "Each token's row of X times head %d's own %d \xC3\x97 %d matrices: its query, "
                 "key and value, %d numbers each.",
                 head + 1, d, dk, dk);
}

void view_steps_note(char *buf, size_t len, const attn_layer *layer, int head, int k) {
    char i[16], div[48];
    view_subscript(i, sizeof i, head + 1);
    divisor(div, sizeof div, layer);
    const int n = layer->n, d = layer->d_model, dk = layer->d_k;
    const float t = layer->temperature > 0.0f ? layer->temperature : 1.0f;
    const int s3 = stage_of(layer, 3), s4 = stage_of(layer, 4);
    k = view_steps_kind(layer, k);
    switch (k) {
    case VIEW_STAGE_ROPE: {
        char kv[40] = "";
        if (layer->h_kv > 0 && layer->h_kv < layer->h)
            snprintf(kv, sizeof kv, " (K/V head %d's)", kv_of(layer, head) + 1);
        snprintf(buf, len,
                 "Positions enter here, not added to X: each token's row of Q%s and K%s%s%s is "
                 "turned by angles that grow with its position, column j with column j + %d. A "
                 "score of Q%s K%s\xE1\xB5\x80 then sees positions only as how far apart two "
                 "tokens are. Drawn: Q%s, Q%s rotated, K%s, K%s rotated.",
                 i, i, kv, layer->qk_norm ? ", normed first (QK-norm)," : "", dk / 2, i, i, i, i, i,
                 i);
        break;
    }
    case 1: x_note(buf, len, layer); break;
    case 2: qkv_note(buf, len, layer, head); break;
    case 3:
        snprintf(buf, len,
                 "Row i, column j: query i \xC2\xB7 key j, %d products summed: how well token i's "
                 "query matches token j's key. Rows are queries, columns keys.",
                 dk);
        break;
    case 4:
        if (view_steps_same(layer, 4))
            snprintf(buf, len, "Not scaled: S%s / 1 is stage %d unchanged.", i, s3);
        else if (!layer->scaled)
            snprintf(buf, len,
                     "Divided by the temperature T = %g alone (no \xE2\x88\x9A"
                     "d\xE2\x82\x96).",
                     (double)t);
        else if (fabsf(t - 1.0f) > 1e-6f)
            snprintf(buf, len,
                     "Divided by \xE2\x88\x9A"
                     "d\xE2\x82\x96 = %.3g and by the temperature T = %g: T above 1 "
                     "flattens the softmax, below 1 sharpens it.",
                     sqrt((double)dk), (double)t);
        else
            snprintf(buf, len,
                     "Divided by \xE2\x88\x9A"
                     "d\xE2\x82\x96 = %.3g, so that the scores do not grow with "
                     "d\xE2\x82\x96 and the softmax does not saturate. Drawn on stage %d's "
                     "colour scale, it looks paler.",
                     sqrt((double)dk), s3);
        break;
    case 5:
        if (!is_masked(layer))
            snprintf(buf, len, "No mask: M = 0 everywhere, so this is stage %d unchanged.", s4);
        else if (layer->mask == ATTN_MASK_CAUSAL)
            snprintf(buf, len,
                     "Causal mask: a query sees only itself and the keys before it. M is "
                     "\xE2\x88\x92\xE2\x88\x9E on the hatched cells, so the softmax gives them 0.");
        else
            snprintf(buf, len,
                     "Padding mask: the %d [PAD] keys get M = \xE2\x88\x92\xE2\x88\x9E (hatched), "
                     "so the softmax gives them 0.",
                     n - layer->n_real);
        break;
    case 6:
        snprintf(buf, len,
                 "Each row of S%s / %s + M becomes e\xCB\xA2 / \xCE\xA3 e\xCB\xA2: weights from 0 "
                 "to 1 that sum to 1, where query i looks.",
                 i, div);
        break;
    case 7:
        snprintf(buf, len,
                 "Row i: the value rows of V%s mixed by the weights in row i of A%s: what token i "
                 "takes from the others (%d \xC3\x97 %d).",
                 i, i, n, dk);
        break;
    case 8:
        snprintf(buf, len,
                 "The %d heads side by side, %d \xC3\x97 %d: head %d's %d columns are framed.",
                 layer->h, n, layer->h * dk, head + 1, dk);
        break;
    default:
        snprintf(buf, len,
                 "head%s times its %d rows of W\xE1\xB4\xBC: %d \xC3\x97 %d. The %d heads' shares "
                 "add up to MultiHead.%s",
                 i, dk, n, d, layer->h, norm_after(layer));
        break;
    }
}

/* X's note: what X is, and where the block's norm sits (" Pre-norm: ...", nothing
   when the layer does not say: the built-in model): pre-LN and post-LN differ here. */
static void x_note(char *buf, size_t len, const attn_layer *layer) {
    const char *norm = layer->rms_norm ? "RMSNorm" : "LayerNorm";
    const char *f = layer->rms_norm ? "RMSNorm" : "LN";
    char where[200] = "";
    if (layer->norm_at == ATTN_NORM_PRE)
        snprintf(where, sizeof where,
                 " Pre-norm: the %s sits before the attention, and MultiHead is added to the "
                 "stream as it was, x + MultiHead(%s(x)).",
                 norm, f);
    else if (layer->norm_at == ATTN_NORM_POST)
        snprintf(where, sizeof where,
                 " Post-LN: no norm before the attention; the %s sits after the residual add, "
                 "%s(x + MultiHead(x)).",
                 norm, f);
    snprintf(buf, len, "One row per token: %s, %d numbers each.%s",
             layer->x_what ? layer->x_what : "its embedding plus its position", layer->d_model,
             where);
}

/* What follows MultiHead, as the W^O stage's note says it: the add, and a post-LN
   block's norm after it; "" when the layer does not say. */
static const char *norm_after(const attn_layer *layer) {
    if (layer->norm_at == ATTN_NORM_POST)
        return " Then added to X and normed: LN(X + MultiHead), the post-LN add.";
    return layer->norm_at == ATTN_NORM_PRE ? " Then added to the stream, no norm after it." : "";
}

/* The chip of stage k (1-based) in the strip: variant 0 with a name, 1 the number. */
static void chip_label(char *buf, size_t len, const attn_layer *layer, int k, int variant) {
    static const char *const names[VIEW_STEPS] = {"X",
                                                  "Q K V",
                                                  "S = QK\xE1\xB5\x80",
                                                  "\xC3\xB7 scale",
                                                  "+ M",
                                                  "softmax",
                                                  "A V",
                                                  "Concat",
                                                  "\xC2\xB7 W\xE1\xB4\xBC",
                                                  "RoPE"};
    if (variant == 0)
        snprintf(buf, len, "%d  %s", k, names[view_steps_kind(layer, k) - 1]);
    else
        snprintf(buf, len, "%d", k);
}

/* --- the nine in a grid (the figure) ------------------------------------------- */

/* Shape (rows, cols) of the matrices of stage kind k + 1 for n tokens, d_model d, d_k dk. */
static void stage_shape(int k, int n, int d, int dk, int *rows, int *cols) {
    static const int kind[VIEW_STEPS] = {1, 2, 0, 0, 0, 0, 2, 1, 1, 2}; /* 0 nn, 1 nd, 2 n dk */
    *rows = n;
    *cols = kind[k] == 0 ? n : (kind[k] == 1 ? d : dk);
}

/* Room under a matrix: its shape label, the colorbar and its numbers. */
static int foot_h(const view_layout *L) {
    return L->pad / 2 + L->line + L->pad / 2 + imax(6, L->font_small / 2) + L->pad / 2 + L->line;
}

/* Wide enough for a colorbar's three numbers ("−3.99  0  +3.99") in w. */
static int cbar_w(const view_layout *L, int mw, int w) {
    return imax(8, imin(w, imax(mw, 12 * L->font_small)));
}

/* A matrix of rows x cols in at most w x h, cells square (or up to `tall` times as
   tall as wide where the height allows: a few rows of many columns), at least a
   pixel a cell when it fits, with the shape label and colorbar under it. */
static void box_tall(view_matrix_box *b, const view_layout *L, int x, int y, int w, int h, int rows,
                     int cols, float tall) {
    int avail = imax(1, h - foot_h(L));
    float px = (float)w / (float)cols;
    if ((float)avail / (float)rows < px) px = (float)avail / (float)rows;
    float py = fminf(px * tall, (float)avail / (float)rows);
    if (py < px) py = px;
    int mw = imax(1, imin(w, (int)(px * (float)cols)));
    int mh = imax(1, imin(avail, (int)(py * (float)rows)));
    b->rows = rows;
    b->cols = cols;
    b->map = (view_rect){x, y, mw, mh};
    b->shape = (view_rect){x, y + mh + L->pad / 2, w, L->line};
    b->cbar = (view_rect){x, b->shape.y + L->line + L->pad / 2, cbar_w(L, mw, w),
                          imax(6, L->font_small / 2)};
}

static void box_at(view_matrix_box *b, const view_layout *L, int x, int y, int w, int h, int rows,
                   int cols) {
    box_tall(b, L, x, y, w, h, rows, cols, 1.0f);
}

static int fit_square(view_steps *S, const view_layout *L, const view_state *s, int w, int h, int n,
                      int sizes_tried, int *lw, view_measure_fn measure, void *ud);

static void lay_grid(view_steps *S, const view_layout *L, const view_state *s, view_rect area,
                     view_measure_fn measure, void *ud) {
    const attn_layer *layer = s->layer;
    const int n = layer->n, d = layer->d_model, dk = layer->d_k, gap = L->gap;
    S->caption = (view_rect){area.x, area.y, area.w, L->line + L->pad};
    S->caption_size = L->font_title;
    int top = area.y + S->caption.h + L->pad;
    const int rows_of = (S->count + 2) / 3;
    int cw = imax(1, (area.w - 2 * gap) / 3);
    int ch = imax(1, (area.y + area.h - top - (rows_of - 1) * gap) / rows_of);
    for (int k = 0; k < S->count; k++) {
        const int kind = view_steps_kind(layer, k + 1) - 1; /* 0-based, as k is */
        int x = area.x + (k % 3) * (cw + gap), y = top + (k / 3) * (ch + gap);
        S->cell[k] = (view_rect){x, y, cw, ch};
        S->title[k] = (view_rect){x + L->pad / 2, y + L->pad / 2, cw - L->pad, L->line};
        /* the longest title that fits, at the text size or a size down */
        char t[200];
        const int sizes[2] = {L->font, L->font_small};
        S->title_variant[k] = 1, S->title_size[k] = L->font_small;
        for (int v = 0, done = 0; v < 2 && !done; v++)
            for (int z = 0; z < 2 && !done; z++) {
                view_steps_title(t, sizeof t, layer, S->head, k + 1, v);
                if (markup_width(measure, ud, t, sizes[z]) <= S->title[k].w)
                    S->title_variant[k] = v, S->title_size[k] = sizes[z], done = 1;
            }
        int rows, cols, bx = x + L->pad / 2, by = y + L->pad / 2 + L->line + L->pad / 2;
        int bw = cw - L->pad, bh = y + ch - by - L->pad / 2;
        stage_shape(kind, n, d, dk, &rows, &cols);
        S->boxes[k] = kind == 1 ? 3 : kind == VIEW_STAGE_ROPE - 1 ? 4 : 1;
        int each = (bw - (S->boxes[k] - 1) * L->pad) / S->boxes[k];
        for (int i = 0; i < S->boxes[k]; i++)
            box_at(&S->box[k][i], L, bx + i * (each + L->pad), by, imax(1, each), bh, rows, cols);
        if (kind >= 2 && kind <= 5) { /* n x n: token labels on both sides where they fit */
            int lw = 0;
            const int side = fit_square(S, L, s, bw, bh - foot_h(L), n, 2, &lw, measure, ud);
            if (S->label_stride > 0) {
                view_matrix_box *b = &S->box[k][0];
                S->grid_label_stride[k] = S->label_stride, S->grid_label_w[k] = lw;
                b->map = (view_rect){bx + lw, by, side, side};
                b->shape = (view_rect){bx + lw, by + side + lw + L->pad / 2, bw - lw, L->line};
                b->cbar = (view_rect){bx + lw, b->shape.y + L->line + L->pad / 2,
                                      cbar_w(L, side, bw - lw), imax(6, L->font_small / 2)};
            }
        }
    }
    S->label_stride = 0; /* (the large stage's; the grid's are per cell) */
}

/* --- one stage, large --------------------------------------------------------- */

/* Wraps text into the note's lines at size, each at most w wide; returns the lines
   used, or -1 when more than fit in `max` lines (or a word is wider than w). */
static int wrap(view_steps *S, const char *text, int w, int size, int max, view_measure_fn measure,
                void *ud) {
    int lines = 0;
    const char *p = text;
    while (*p) {
        while (*p == ' ') p++;
        if (!*p) break;
        if (lines >= max) return -1;
        char *line = S->note_text[lines];
        size_t best = 0, o = 0;
        const char *q = p, *after = p;
        for (;;) { /* take words while they fit */
            const char *e = q;
            while (*e && *e != ' ') e++;
            size_t add = (size_t)(e - q) + (o ? 1 : 0);
            if (o + add + 1 > sizeof S->note_text[0]) break;
            char trial[200];
            memcpy(trial, line, o);
            if (o) trial[o] = ' ';
            memcpy(trial + o + (o ? 1 : 0), q, (size_t)(e - q));
            trial[o + add] = '\0';
            if (view_text_width(measure, ud, trial, size, 0) > w) break;
            memcpy(line, trial, o + add + 1);
            o += add, best = o, after = e;
            while (*e == ' ') e++;
            if (!*e) break;
            q = e;
        }
        if (!best) return -1; /* a word wider than the line */
        p = after;
        lines++;
    }
    return lines;
}

/* The note in lines at the largest size (the title's when `large`, the text size,
   then a size down) that holds it in four lines of width w from (x, y), else in six
   at the smallest; returns the height used. */
static int lay_note(view_steps *S, const view_layout *L, const char *text, int x, int y, int w,
                    int large, view_measure_fn measure, void *ud) {
    const int sizes[3] = {L->font_title, L->font, L->font_small};
    S->notes = 0;
    for (int z = large ? 0 : 1; z < 4; z++) {
        const int size = sizes[z < 3 ? z : 2];
        int lines = wrap(S, text, w, size, z < 3 ? 4 : VIEW_STEP_NOTES, measure, ud);
        if (lines < 0) continue;
        const int lh = lay_measured_line(measure, ud, size);
        S->notes = lines, S->note_size = size;
        for (int i = 0; i < lines; i++) S->note[i] = (view_rect){x, y + i * lh, w, lh};
        return lines * lh;
    }
    return 0; /* (a width no word fits: no note) */
}

/* The mask legend's width at size (masks.c draws it: a swatch and its words). */
static int legend_w(const view_layout *L, int size, view_measure_fn measure, void *ud) {
    return size * 2 + L->pad / 2 + view_text_width(measure, ud, VIEW_MASK_LEGEND, size, 0);
}

/* 1 if labels every `stride` cells, lh tall, along extent px of n cells, placed as
   view_label_pos places them (the first and last moved inside), never touch. */
static int labels_apart(int extent, int n, int lh, int stride) {
    int prev = -1000000;
    for (int i = 0; i < n; i += stride) {
        int p = view_label_pos(0, extent, n, lh, i);
        if (p < prev + lh) return 0;
        prev = p;
    }
    return 1;
}

/* Token labels along a side of `extent` px for n cells: the size (the text size, else a
   size down) at which they fit, with their stride and width; 0 when none fits. */
static int label_fit(view_steps *S, const view_layout *L, const view_state *s, int extent, int n,
                     view_measure_fn measure, void *ud) {
    const int sizes[3] = {L->font, L->font_small, imax(9, L->font_small * 3 / 4)};
    for (int z = 0; z < 3; z++) {
        if (z > 0 && sizes[z] < s->text_floor) break; /* a projected page's floor */
        const int lh = lay_measured_line(measure, ud, sizes[z]);
        const int stride = view_label_stride(extent, n, lh);
        if (stride > 0 && labels_apart(extent, n, lh, stride)) {
            S->label_size = sizes[z], S->label_line = lh, S->label_stride = stride;
            return view_label_max_width(s, sizes[z], measure, ud) + L->pad;
        }
    }
    S->label_stride = 0;
    return 0;
}

/* The largest square for n x n cells in w x h with token labels on its left and
   under it (rotated), taking the largest of the first sizes_tried label sizes at which labels fit
   the side without being longer than the side itself; none when no size does. Sets S's label fields
   and *lw (the labels' room); returns the side. */
static int fit_square(view_steps *S, const view_layout *L, const view_state *s, int w, int h, int n,
                      int sizes_tried, int *lw, view_measure_fn measure, void *ud) {
    const int sizes[4] = {L->font, L->font_small, imax(10, L->font_small * 3 / 4),
                          imax(10, L->font_small * 3 / 5)};
    for (int z = 0; z < sizes_tried && z < 4; z++) {
        if (z > 0 && sizes[z] < s->text_floor) break; /* a projected page's floor */
        const int lh = lay_measured_line(measure, ud, sizes[z]);
        const int room = view_label_max_width(s, sizes[z], measure, ud) + L->pad;
        const int side = imin(w, h) - room;
        const int stride = side > 0 ? view_label_stride(side, n, lh) : 0;
        if (stride > 0 && room <= side && labels_apart(side, n, lh, stride)) {
            S->label_size = sizes[z], S->label_line = lh, S->label_stride = stride;
            *lw = room;
            return side;
        }
    }
    S->label_stride = 0;
    *lw = 0;
    return imax(1, imin(w, h));
}

static int lay_strip(view_steps *S, const view_layout *L, const view_state *s, view_rect a,
                     view_measure_fn measure, void *ud);
static int lay_stage_title(view_steps *S, const view_layout *L, const attn_layer *layer,
                           view_rect a, int y, view_measure_fn measure, void *ud);
static void lay_square_stage(view_steps *S, const view_layout *L, const view_state *s, view_rect a,
                             int y, const char *note, view_measure_fn measure, void *ud);
static void lay_tall_stage(view_steps *S, const view_layout *L, const view_state *s, view_rect a,
                           int y, const char *note, view_measure_fn measure, void *ud);

/* One stage of the head's step-through in a: the strip of chips, the stage's
 * formula, its note and its matrices. */
static void lay_one(view_steps *S, const view_layout *L, const view_state *s, view_rect a,
                    view_measure_fn measure, void *ud) {
    int y = lay_strip(S, L, s, a, measure, ud);
    y = lay_stage_title(S, L, s->layer, a, y, measure, ud);
    char note[400];
    view_steps_note(note, sizeof note, s->layer, S->head, S->current);
    const int kind = view_steps_kind(s->layer, S->current);
    if (kind >= 3 && kind <= 6)
        lay_square_stage(S, L, s, a, y, note, measure, ud);
    else
        lay_tall_stage(S, L, s, a, y, note, measure, ud);
}

/* The strip along a's top: the stages' chips with names, or numbers alone where
 * they do not fit, and the key hint at the right where it fits. Returns the y under it. */
static int lay_strip(view_steps *S, const view_layout *L, const view_state *s, view_rect a,
                     view_measure_fn measure, void *ud) {
    const int hint = !s->figure && !s->look.present;
    const char *hint_text = ", and . step \xC2\xB7 Esc: all heads";
    S->chip_size = L->font;
    const int chip_h = L->line + L->pad;
    for (int v = 0; v < 2; v++) {
        int x = a.x, w[VIEW_STEPS];
        for (int j = 0; j < S->count; j++) {
            chip_label(S->chip_text[j], sizeof S->chip_text[j], s->layer, j + 1, v);
            w[j] = view_text_width(measure, ud, S->chip_text[j], S->chip_size, 1) + 2 * L->pad;
            x += w[j] + (j ? L->pad : 0);
        }
        if (x > a.x + a.w && v == 0) continue;
        x = a.x;
        for (int j = 0; j < S->count; j++) {
            S->chip[j] = (view_rect){x, a.y, w[j], chip_h};
            x += w[j] + L->pad;
        }
        const int hw = view_text_width(measure, ud, hint_text, L->font_small, 0);
        const int hl = lay_measured_line(measure, ud, L->font_small);
        if (hint && x + L->gap + hw <= a.x + a.w)
            S->hint = (view_rect){a.x + a.w - hw, a.y + (chip_h - hl) / 2, hw, hl};
        break;
    }
    return a.y + chip_h + L->pad;
}

/* The stage's formula at y, as large as fits a's width (the long title, else the
 * short one). Returns the y under it. */
static int lay_stage_title(view_steps *S, const view_layout *L, const attn_layer *layer,
                           view_rect a, int y, view_measure_fn measure, void *ud) {
    const int k = S->current;
    char t[200];
    S->title_variant[k - 1] = 1;
    S->caption_size = L->font;
    for (int v = 0, done = 0; v < 2 && !done; v++)
        for (int size = L->font_title * 3 / 2; size >= L->font && !done;
             size -= imax(1, size / 8)) {
            view_steps_title(t, sizeof t, layer, S->head, k, v);
            if (markup_width(measure, ud, t, size) <= a.w)
                S->title_variant[k - 1] = v, S->caption_size = size, done = 1;
        }
    const int cap_h = lay_measured_line(measure, ud, S->caption_size) + S->caption_size / 4;
    S->caption = (view_rect){a.x, y, a.w, cap_h};
    return y + cap_h + L->pad;
}

/* Stages 3-6, an n x n matrix from y down: labels on both sides, the note beside
 * the square where that leaves it larger, else on top. */
static void lay_square_stage(view_steps *S, const view_layout *L, const view_state *s, view_rect a,
                             int y, const char *note, view_measure_fn measure, void *ud) {
    const attn_layer *layer = s->layer;
    const int n = layer->n, k = view_steps_kind(layer, S->current), bottom = a.y + a.h;
    const int masked_stage = (k == 5 || k == 6) && is_masked(layer);
    const int leg_w = legend_w(L, L->font_small, measure, ud);
    const int leg_h = lay_measured_line(measure, ud, L->font_small) + L->pad / 2;
    const int foot = foot_h(L);
    const int avail = bottom - y - foot, note_min = 16 * L->font;
    /* on top: the note's lines over the whole width, the square under them */
    int lw_top = 0, top_y = y + lay_note(S, L, note, a.x, y, a.w, 0, measure, ud) + L->pad;
    if (masked_stage) top_y += leg_h + L->pad;
    const int side_top =
        fit_square(S, L, s, a.w, bottom - top_y - foot, n, 4, &lw_top, measure, ud);
    /* beside: a column right of the square, as wide as a reader's eye follows */
    int lw = 0,
        side = fit_square(S, L, s, a.w - 2 * L->gap - note_min, avail, n, 4, &lw, measure, ud);
    int nx = a.x + lw + side + 2 * L->gap;
    int nw = imin(a.x + a.w - nx, 28 * L->font);
    int beside = 0, h = 0;
    if (nw >= note_min && side > side_top) {
        h = lay_note(S, L, note, nx, y, nw, 1, measure, ud);
        beside = S->notes > 0 && y + h + (masked_stage ? L->pad + leg_h : 0) <= bottom;
    }
    int my = y;
    if (beside) {
        if (masked_stage && leg_w <= nw) S->legend = (view_rect){nx, y + h + L->pad, leg_w, leg_h};
    } else { /* the note on top, the square under it */
        lay_note(S, L, note, a.x, y, a.w, 0, measure, ud);
        my = top_y;
        if (masked_stage && leg_w <= a.w)
            S->legend = (view_rect){a.x, top_y - leg_h - L->pad, leg_w, leg_h};
        side = fit_square(S, L, s, a.w, bottom - my - foot, n, 4, &lw, measure, ud);
    }
    S->row_labels = S->col_labels = S->label_stride > 0;
    S->row_label_w = lw;
    S->bigs = 1;
    view_matrix_box *b = &S->big[0];
    b->rows = b->cols = n;
    b->map = (view_rect){a.x + lw, my, side, side};
    const int ly = my + side + lw; /* under the rotated key labels */
    b->shape = (view_rect){a.x + lw, ly + L->pad / 2, side, L->line};
    b->cbar =
        (view_rect){a.x + lw, b->shape.y + L->line + L->pad / 2, 0, imax(6, L->font_small / 2)};
    /* the colorbar may reach under the note where the note ends above it */
    const int note_end = beside ? S->note[S->notes - 1].y + S->note[S->notes - 1].h +
                                      (S->legend.w ? L->pad + leg_h : 0)
                                : 0;
    const int room =
        !beside || note_end + L->pad <= b->shape.y ? a.w - lw : nx - L->gap - (a.x + lw);
    b->cbar.w = cbar_w(L, side, room);
}

/* Stages 1, 2, 7-9 from y down, an n x d or n x d_k matrix, or Q, K, V side by side
 * (or stacked): the note on top, row labels left. */
static void lay_tall_stage(view_steps *S, const view_layout *L, const view_state *s, view_rect a,
                           int y, const char *note, view_measure_fn measure, void *ud) {
    const attn_layer *layer = s->layer;
    const int n = layer->n, d = layer->d_model, dk = layer->d_k;
    const int k = view_steps_kind(layer, S->current);
    const int bottom = a.y + a.h, foot = foot_h(L);
    int h = lay_note(S, L, note, a.x, y, a.w, 0, measure, ud);
    y += h + L->pad;
    const int nb = k == 2 ? 3 : k == VIEW_STAGE_ROPE ? 4 : 1;
    const int cols = (k == 1 || k == 8 || k == 9) ? d : dk;
    const int between = 2 * L->gap;
    if (nb >= 3) { /* Q, K, V side by side, or one under another where that gives more */
        int each = (a.w - (nb - 1) * between) / nb;
        float px_row = fminf((float)each / (float)cols, (float)(bottom - y - foot) / (float)n);
        int hbox = (bottom - y - (nb - 1) * L->pad) / nb;
        float px_col = fminf((float)a.w / (float)cols, (float)(hbox - foot) / (float)n);
        /* stacked where that gives larger cells, or where side by side is too narrow
           for a colorbar's three numbers and stacked still has two pixels a cell */
        S->stacked = hbox - foot >= 2 * n && (px_col > px_row * 1.25f || each < 10 * L->font_small);
    }
    if (S->stacked) {
        const int hbox = (bottom - y - (nb - 1) * L->pad) / nb;
        int lw = label_fit(S, L, s, imax(1, hbox - foot), n, measure, ud);
        if (lw >= a.w / 4) lw = 0, S->label_stride = 0;
        for (int i = 0; i < nb; i++)
            box_tall(&S->big[i], L, a.x + lw, y + i * (hbox + L->pad), a.w - lw, hbox, n, cols,
                     2.0f);
        if (S->label_stride) S->label_stride = view_label_stride(S->big[0].map.h, n, S->label_line);
        S->row_labels = S->label_stride > 0;
        S->row_label_w = S->row_labels ? lw : 0;
        S->bigs = nb;
        return;
    }
    int lw = 0;
    for (int pass = 0; pass < 2; pass++) { /* the labels fit the rows found, or go */
        int each = imax(1, (a.w - lw - (nb - 1) * between) / nb);
        int avail = imax(1, bottom - y - foot);
        float px = fminf((float)each / (float)cols, (float)avail / (float)n);
        int mh = imax(1, (int)(px * (float)n));
        int want = label_fit(S, L, s, mh, n, measure, ud);
        if (pass == 0 && want > 0 && want < a.w / 4) {
            lw = want;
            continue;
        }
        if (pass == 1 && want == 0) lw = 0;
        break;
    }
    if (lw == 0) S->label_stride = 0;
    S->row_labels = S->label_stride > 0;
    S->row_label_w = lw;
    S->bigs = nb;
    const int each = imax(1, (a.w - lw - (nb - 1) * between) / nb);
    for (int i = 0; i < nb; i++)
        box_tall(&S->big[i], L, a.x + lw + i * (each + between), y, each, bottom - y, n, cols,
                 2.0f);
    if (S->row_labels && S->label_stride != view_label_stride(S->big[0].map.h, n, S->label_line))
        S->label_stride = view_label_stride(S->big[0].map.h, n, S->label_line);
    S->row_labels = S->label_stride > 0;
}

void view_steps_layout(view_steps *S, const view_layout *L, const view_state *s, view_rect area,
                       view_measure_fn measure, void *ud) {
    const attn_layer *layer = s->layer;
    *S = (view_steps){0};
    if (!layer || area.w < 60 || area.h < 60) return;
    const int head = (s->panel == VIEW_PANEL_STEPS ? s->panel_head : s->look.focus) - 1;
    if (head < 0 || head >= layer->h) return;
    S->shown = 1;
    S->head = head;
    S->count = view_steps_count(layer);
    S->current =
        s->look.focus > 0 && s->look.step >= 1 && s->look.step <= S->count ? s->look.step : 0;
    if (S->current)
        lay_one(S, L, s, area, measure, ud);
    else
        lay_grid(S, L, s, area, measure, ud);
}

static void move(view_rect *r, int dx, int dy) {
    r->x += dx, r->y += dy;
}

static void move_box(view_matrix_box *b, int dx, int dy) {
    move(&b->map, dx, dy), move(&b->shape, dx, dy), move(&b->cbar, dx, dy);
}

void view_steps_translate(view_steps *S, int dx, int dy) {
    move(&S->caption, dx, dy);
    move(&S->hint, dx, dy);
    move(&S->legend, dx, dy);
    for (int k = 0; k < VIEW_STEPS; k++) {
        move(&S->cell[k], dx, dy);
        move(&S->title[k], dx, dy);
        move(&S->chip[k], dx, dy);
        for (int j = 0; j < 4; j++) move_box(&S->box[k][j], dx, dy);
    }
    for (int i = 0; i < VIEW_STEP_NOTES; i++) move(&S->note[i], dx, dy);
    for (int i = 0; i < 4; i++) move_box(&S->big[i], dx, dy);
}
