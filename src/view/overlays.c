/* overlays.c: what is drawn over the panels: the hover tooltip (the numbers under
 * the pointer), the text editor, the help overlay and the transient notice. What
 * is under the pointer is hit.c's to say; the panels' own hover marks are theirs. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "view.h"
#include "view_internal.h"

static int rects_meet(view_rect a, view_rect b) {
    return a.w > 0 && a.h > 0 && b.w > 0 && b.h > 0 && a.x < b.x + b.w && b.x < a.x + a.w &&
           a.y < b.y + b.h && b.y < a.y + a.h;
}

/* 1 when r covers a head's title (a tooltip leaves them readable). */
static int meets_title(const view_layout *L, view_rect r) {
    for (int i = 0; i < L->shown_heads && i < VIEW_MAX_VISIBLE; i++)
        if (rects_meet(r, L->heads[i].title)) return 1;
    return 0;
}

/* A box of lines near the pointer (x, y), the first bold, kept inside the output
 * and clear of what it describes: the hovered row's band (row) and column's band
 * (col), the cell where they cross and the labels at their ends, and of the heads'
 * titles. It goes into the first quadrant around that cross that holds it (below
 * right, below left, above right, above left), else beside the row; else, moved
 * just under or over a title it would cover, the place nearest the pointer; else
 * (titles no longer kept clear) the first of the quadrants; else where it fits. */
static void tooltip(const view_ctx *c, int x, int y, char lines[][160], int count, view_rect row,
                    view_rect col) {
    const view_layout *L = c->L;
    int w = 0;
    for (int i = 0; i < count; i++) {
        int lw = view_tw(c, lines[i], L->font, i == 0);
        if (lw > w) w = lw;
    }
    const int W = c->s->width, H = c->s->height, g = L->gap;
    int h = count * L->line + L->pad * 2;
    w += L->pad * 2;
    if (row.w <= 0) row = (view_rect){x, y, 1, 1};
    if (col.w <= 0) col = (view_rect){x, y, 1, 1};
    /* candidates: the four quadrants, then above / below the row near the pointer */
    const int xs[2] = {col.x + col.w + g, col.x - w - g};
    const int ys[2] = {row.y + row.h + g, row.y - h - g};
    int tx = -1, ty = -1;
    for (int pass = 0; pass < 2 && tx < 0; pass++) { /* pass 0: titles kept clear */
        for (int k = 0; k < 6 && tx < 0; k++) {
            int cx = k < 4 ? xs[k % 2] : x + g, cy = k < 4 ? ys[k / 2] : ys[k - 4];
            if (k >= 4 && cx + w > W) cx = W - w;
            view_rect r = {cx, cy, w, h};
            if (cx < 0 || cy < 0 || cx + w > W || cy + h > H) continue;
            if (rects_meet(r, row) || rects_meet(r, col)) continue;
            if (pass == 0 && meets_title(L, r)) continue;
            tx = cx, ty = cy;
        }
        if (tx >= 0 || pass > 0) break;
        /* under or over each title, at the quadrants' columns or by the pointer */
        long best = -1;
        const int cxs[5] = {xs[0], xs[1], x + g, x - w - g, W - w};
        for (int i = 0; i < L->shown_heads && i < VIEW_MAX_VISIBLE; i++) {
            const view_rect t = L->heads[i].title;
            const int cys[2] = {t.y + t.h + 1, t.y - h - 1};
            for (int a = 0; a < 5; a++)
                for (int b = 0; b < 2; b++) {
                    view_rect r = {cxs[a], cys[b], w, h};
                    if (r.x < 0 || r.y < 0 || r.x + w > W || r.y + h > H) continue;
                    if (rects_meet(r, row) || rects_meet(r, col) || meets_title(L, r)) continue;
                    const long dx = r.x + w / 2 - x, dy = r.y + h / 2 - y;
                    if (best < 0 || dx * dx + dy * dy < best)
                        best = dx * dx + dy * dy, tx = r.x, ty = r.y;
                }
        }
    }
    if (tx < 0) { /* nowhere clear: near the pointer, inside the output */
        tx = x + g * 2, ty = y + g * 2;
        if (tx + w > W) tx = x - w - g;
        if (ty + h > H) ty = y - h - g;
        if (tx < 0) tx = 0;
        if (ty < 0) ty = 0;
    }
    rgba fg = c->th.bg;
    draw_fill(c->dl, (view_rect){tx, ty, w, h}, c->th.tooltip_bg);
    for (int i = 0; i < count; i++)
        draw_text(c->dl, tx + L->pad, ty + L->pad + i * L->line, lines[i], L->font, fg, i == 0, 0);
}

/* Rows [r0, r1) (or columns) of a (rows, cols) matrix in map, as a band across it. */
static view_rect band(view_rect map, int rows, int cols, int r, int k) {
    if (r >= 0) {
        int y0 = map.y + (int)((long)r * map.h / rows),
            y1 = map.y + (int)((long)(r + 1) * map.h / rows);
        return (view_rect){map.x, y0, map.w, y1 > y0 ? y1 - y0 : 1};
    }
    int x0 = map.x + (int)((long)k * map.w / cols),
        x1 = map.x + (int)((long)(k + 1) * map.w / cols);
    return (view_rect){x0, map.y, x1 > x0 ? x1 - x0 : 1, map.h};
}

/* What a tooltip must leave visible: the hovered row and column, across the map,
 * its labels and (for heads) every head in the grid row or column. */
static void protected_bands(const view_ctx *c, const view_hit *hit, view_rect *row,
                            view_rect *col) {
    const view_layout *L = c->L;
    const int n = c->s->layer->n;
    *row = *col = (view_rect){0, 0, 0, 0};
    const view_matrix_box *b = NULL;
    switch (hit->kind) {
    case HIT_HEAD_CELL:
    case HIT_ROW_LABEL:
    case HIT_COL_LABEL: {
        int slot = -1;
        for (int i = 0; i < L->shown_heads; i++) {
            view_rect m = L->heads[i].map;
            int xin = c->s->hover_x >= m.x - L->row_label_w && c->s->hover_x < m.x + m.w;
            int yin = c->s->hover_y >= m.y && c->s->hover_y < m.y + m.h + L->col_label_h;
            if ((hit->kind == HIT_HEAD_CELL && L->first_head + i == hit->head) ||
                (hit->kind != HIT_HEAD_CELL && xin && yin))
                slot = i;
        }
        if (slot < 0) return;
        view_rect m = L->heads[slot].map;
        if (hit->kind != HIT_COL_LABEL) {
            *row = band(m, n, n, hit->row, 0);
            int x0 = m.x - L->row_label_w, x1 = m.x + m.w; /* across the grid row */
            for (int i = 0; i < L->shown_heads; i++)
                if (L->heads[i].map.y == m.y) x1 = L->heads[i].map.x + L->heads[i].map.w;
            row->x = x0, row->w = x1 - x0;
        }
        if (hit->kind != HIT_ROW_LABEL) {
            *col = band(m, n, n, -1, hit->col);
            col->h += L->col_label_h;
        }
        if (hit->kind == HIT_COL_LABEL)
            *row = (view_rect){col->x, m.y + m.h, col->w, L->col_label_h};
        if (hit->kind == HIT_ROW_LABEL)
            *col = (view_rect){m.x - L->row_label_w, row->y, L->row_label_w, row->h};
        return;
    }
    case HIT_CONCAT: b = &L->concat; break;
    case HIT_W_O: b = &L->w_o; break;
    case HIT_OUT: b = &L->out; break;
    case HIT_QKV: b = hit->which >= 0 && hit->which < 4 ? &L->qkv[hit->which] : NULL; break;
    default: return;
    }
    if (!b || b->map.w <= 0) return;
    *row = band(b->map, b->rows, b->cols, hit->row, 0);
    *col = band(b->map, b->rows, b->cols, -1, hit->col);
}

static const char *tok_at(const view_state *s, int i) {
    return s->layer && i >= 0 && i < s->layer->n ? attn_layer_token(s->layer, i) : "?";
}

/* The tooltip of a head's cell: the tokens, the layer's weight and scaled score
 * (each when the layer has it), the cell. Returns the lines written. */
static int cell_lines(char lines[4][160], const view_state *s, const view_hit *hit) {
    const attn_layer *layer = s->layer;
    const int n = layer->n;
    const size_t idx = (size_t)hit->head * n * n + (size_t)hit->row * n + hit->col;
    int count = 0;
    snprintf(
        lines[count++], 160,
        "head %d: query \xE2\x80\x9C%s\xE2\x80\x9D \xE2\x86\x92 key \xE2\x80\x9C%s\xE2\x80\x9D",
        hit->head + 1, tok_at(s, hit->row), tok_at(s, hit->col));
    if (layer->attn) snprintf(lines[count++], 160, "weight %.3f", (double)layer->attn[idx]);
    if (layer->scores && isinf(layer->scores[idx]))
        snprintf(lines[count++], 160,
                 "scaled score \xE2\x88\x92\xE2\x88\x9E (masked: key after query)");
    else if (layer->scores)
        snprintf(lines[count++], 160, "%s score %.3f", layer->scaled ? "scaled" : "unscaled",
                 (double)layer->scores[idx]);
    snprintf(lines[count++], 160, "row %d, column %d", hit->row + 1, hit->col + 1);
    return count;
}

void view_draw_tooltip(const view_ctx *c, const view_hit *hit) {
    const view_state *s = c->s;
    const attn_layer *layer = s->layer;
    const int d = layer->d_model, dk = layer->d_k;
    char lines[4][160];
    int count = 0;
    char v[32];
    switch (hit->kind) {
    case HIT_HEAD_CELL: count = cell_lines(lines, s, hit); break;
    case HIT_ROW_LABEL:
        snprintf(lines[count++], 160, "query \xE2\x80\x9C%s\xE2\x80\x9D (row %d)",
                 tok_at(s, hit->row), hit->row + 1);
        snprintf(lines[count++], 160, "its row is outlined in every head");
        break;
    case HIT_COL_LABEL:
        snprintf(lines[count++], 160, "key \xE2\x80\x9C%s\xE2\x80\x9D (column %d)",
                 tok_at(s, hit->col), hit->col + 1);
        break;
    case HIT_CONCAT:
        if (layer->concat) {
            view_format_number(v, sizeof v, layer->concat[(size_t)hit->row * d + hit->col]);
            snprintf(lines[count++], 160, "Concat[%d, %d] = %s", hit->row + 1, hit->col + 1, v);
        }
        snprintf(lines[count++], 160,
                 "token \xE2\x80\x9C%s\xE2\x80\x9D; column from head %d (its column %d of %d)",
                 tok_at(s, hit->row), hit->head + 1, hit->col % dk + 1, dk);
        break;
    case HIT_W_O:
        if (layer->w_o) {
            view_format_number(v, sizeof v, layer->w_o[(size_t)hit->row * d + hit->col]);
            snprintf(lines[count++], 160, "W\xE1\xB4\xBC[%d, %d] = %s", hit->row + 1, hit->col + 1,
                     v);
        }
        snprintf(lines[count++], 160, "row %d multiplies head %d's column %d", hit->row + 1,
                 hit->head + 1, hit->row % dk + 1);
        break;
    case HIT_OUT:
        if (layer->out) {
            view_format_number(v, sizeof v, layer->out[(size_t)hit->row * d + hit->col]);
            snprintf(lines[count++], 160, "MultiHead[%d, %d] = %s", hit->row + 1, hit->col + 1, v);
        }
        snprintf(lines[count++], 160, "token \xE2\x80\x9C%s\xE2\x80\x9D", tok_at(s, hit->row));
        break;
    case HIT_QKV: {
        static const char *nm[4] = {"Q", "K", "V", "head"};
        int ld = 0, at = 0;
        const float *src = hit->which >= 0 && hit->which <= 3
                               ? view_focus_matrix(layer, hit->head, hit->which, &ld, &at)
                               : NULL;
        if (!src) break;
        view_format_number(v, sizeof v, src[(size_t)hit->row * ld + hit->col]);
        char sub[32];
        view_subscript(sub, sizeof sub, at + 1);
        snprintf(lines[count++], 160, "%s%s[%d, %d] = %s", nm[hit->which], sub, hit->row + 1,
                 hit->col + 1, v);
        snprintf(lines[count++], 160, "token \xE2\x80\x9C%s\xE2\x80\x9D", tok_at(s, hit->row));
        break;
    }
    case HIT_OVERVIEW: { /* a head of the loaded model */
        const view_overview *o = s->overview;
        if (!view_overview_ok(o) || hit->row < 0 || hit->row >= o->layers || hit->head < 0 ||
            hit->head >= o->h)
            break;
        snprintf(lines[count++], 160, "layer %d, head %d%s", hit->row + 1, hit->head + 1,
                 view_overview_off(o, hit->row, hit->head) ? " (removed)" : "");
        snprintf(lines[count++], 160, "click: open layer %d", hit->row + 1);
        break;
    }
    case HIT_NEXT: { /* a row of the next-token panel */
        const view_next *x = s->next;
        if (!view_next_ok(x) || hit->row < 0 || hit->row >= x->k) break;
        snprintf(lines[count++], 160,
                 x->title ? "\xE2\x80\x9C%s\xE2\x80\x9D in the blank: %.1f %%"
                          : "next token \xE2\x80\x9C%s\xE2\x80\x9D: %.1f %%",
                 x->token[hit->row] ? x->token[hit->row] : "", 100.0 * (double)x->p[hit->row]);
        if (x->p_full[hit->row] >= 0.0f)
            snprintf(lines[count++], 160, "with every head on: %.1f %%",
                     100.0 * (double)x->p_full[hit->row]);
        break;
    }
    default: return;
    }
    if (count == 0) return; /* the layer has no tensor to tell of here */
    view_rect row, col;
    protected_bands(c, hit, &row, &col);
    tooltip(c, s->hover_x, s->hover_y, lines, count, row, col);
}

void view_draw_editor(const view_ctx *c) {
    const view_layout *L = c->L;
    const view_state *s = c->s;
    view_editor E;
    view_editor_layout(&E, s, L, c->measure, c->ud);
    draw_fill(c->dl, E.box, c->th.panel);
    draw_frame(c->dl, E.box, c->th.accent_text, 2);
    char prompt[200];
    view_fit_text(prompt, sizeof prompt,
                  s->edit_prompt ? s->edit_prompt
                                 : "Type a sentence, or a file's path and Ctrl+O. Enter applies, "
                                   "Escape cancels, Ctrl+U clears, Ctrl+V pastes",
                  E.box.w - 2 * L->pad, L->font, 1, c->measure, c->ud);
    draw_text(c->dl, E.prompt_x, E.prompt_y, prompt, L->font, c->th.text, 1, 0);

    char d[8192 + 512];
    view_edit_text(d, sizeof d, s);
    rgba sel = c->th.accent_text;
    sel.a = 70;
    for (int k = 0; k < E.shown; k++) {
        int y = E.text_y + k * E.line;
        char line[sizeof d];
        int l = E.end[k] - E.start[k];
        memcpy(line, d + E.start[k], (size_t)l);
        line[l] = '\0';
        if (s->edit_selected && l > 0)
            draw_fill(c->dl, (view_rect){E.text_x, y, view_tw(c, line, E.size, 0), E.line}, sel);
        draw_text(c->dl, E.text_x, y, line, E.size, c->th.text, 0, 0);
    }
    if (E.cursor_line >= 0)
        draw_fill(c->dl, (view_rect){E.cursor_x, E.text_y + E.cursor_line * E.line, 2, E.line},
                  c->th.accent_text);

    char count[160];
    int n = s->edit_tokens;
    const int limit = s->edit_limit > 0 ? s->edit_limit : VIEW_BUILTIN_MAX_N;
    if (n > limit)
        snprintf(count, sizeof count, "%d tokens: the first %d are kept", n, limit);
    else
        snprintf(count, sizeof count, "%d / %d tokens", n, limit);
    if (s->edit_prompt) count[0] = '\0'; /* a caption is not tokenized */
    if (E.total_lines > E.shown) {
        size_t o = strlen(count);
        snprintf(count + o, sizeof count - o, "   \xC2\xB7   lines %d\xE2\x80\x93%d of %d",
                 E.first_line + 1, E.first_line + E.shown, E.total_lines);
    }
    draw_text(c->dl, E.count_x, E.count_y, count, L->font_small,
              n > limit ? c->th.accent_text : c->th.muted, 0, 0);
}

/* The help's rows, a key and what it does. A loaded model: its own keys; those of
   the random model's construction say why they do not apply (the state), so they
   are not listed. */
static const char *help_model_rows[][2] = {
    {"Y / Shift+Y", "next / previous layer"},
    {"O, click a head there", "overview of every layer \xC3\x97 head; open that layer"},
    {"Up / Down", "re-split this layer's trained weights into more / fewer heads"},
    {"X, Shift+X",
     "remove the focused head (the next token or the blank shows the cost); all back"},
    {"M", "an encoder: the token whose label is pointed at becomes a blank"},
    {"J, Shift+J", "K/V: heads share fewer / more K/V heads (each new one the mean)"},
    {"Tab / Shift+Tab", "next / previous built-in sample"}, /* + its tokenizer (HELP_TAB_ROW) */
    {"Enter", "type your own text (Enter applies, Esc cancels)"},
    {"W, S", "the model writes, token after token (any key stops it); S: its pace"},
    {"1 \xE2\x80\xA6 9, click a head", "focus on one head with Q, K, V; Esc returns"},
    {",  .", "focus view: step through the head; outside it, . writes one token"},
    {"PgUp / PgDn", "previous / next page of heads; presenting, then the side panels'"},
    {"D  V  K", "difference view; numbers; contrast"},
    {"C, T", "next colormap; light / dark theme"},
    {"Ctrl+=  Ctrl+\xE2\x88\x92  Ctrl+0", "zoom text and UI for a projector"},
    {"Ctrl+S, Ctrl+Shift+S", "save the view / the focused head as PNG"},
    {"Ctrl+Shift+V", "save the view as a view file (--state opens it)"},
    {"I", "how-alike and cost panels on / off"},
    {"P, F11", "presentation; fullscreen"},
    {"drop a folder", "open another checkpoint (the one shown stays if it fails)"},
    {"F1 or ?", "this help (any key closes it)"},
    {"Esc", "close what is open: help, text field, focus, presentation"},
    {"Ctrl+Q", "quit"},
};
#define HELP_TAB_ROW 6 /* help_model_rows' Tab row: the model's tokenizer is named there */
static const char *help_random_rows[][2] = {
    {"Up / Down", "h: next / previous divisor of d_model"},
    {"Right / Left", "d_model: next / previous size that h divides"},
    {"Tab / Shift+Tab", "next / previous built-in sample"},
    {"Enter", "type your own sentence (Enter applies, Esc cancels)"},
    {"1 \xE2\x80\xA6 9, click a head", "focus on one head with Q, K, V; Esc returns"},
    {"PgUp / PgDn",
     "previous / next page of heads; presenting, then the side panels' (Shift: pinned)"},
    {"R", "new seed (new weights and embeddings)"},
    {"M", "causal mask on / off"},
    {"N", "scaling by 1/\xE2\x88\x9A"
          "d\xE2\x82\x96 on / off"},
    {"C", "next colormap (viridis, magma, cividis, greys)"},
    {"T", "light / dark theme"},
    {"Ctrl+=  Ctrl+\xE2\x88\x92  Ctrl+0", "zoom text and UI for a projector"},
    {"Ctrl+S", "save the view as PNG (\xC3\x97N: the PNG button sets N, 1 to 4)"},
    {"Ctrl+Shift+S", "save the focused head (or the equation) alone"},
    {"Ctrl+Shift+V", "save the view as a view file (--state opens it)"},
    {"E", "padding with [PAD] on / off"},
    {"[  ]", "temperature down / up"},
    {"W", "random weights / designed heads"},
    {"X, Shift+X", "focused head off / on; every head on"},
    {"J, Shift+J", "heads share fewer / more K/V heads (each the mean)"},
    {"D  V  K", "difference view; numbers; contrast"},
    {",  .", "focus view: step through the head"},
    {"I", "how-alike and cost panels on / off"},
    {"H", "head view: heatmap / lines, in the grid and the focus view"},
    {"L", "learn live: train a small model (F1 there lists its keys)"},
    {"F11", "fullscreen"},
    {"P", "presentation: no controls, the data as large as it goes (Esc leaves)"},
    {"B", "compare: pin this view, change a setting, see both (B unpins)"},
    {"G", "built-in lessons (a digit opens one, Esc closes the list)"},
    {"lesson: Space PgDn \xE2\x86\x92 / Bksp PgUp \xE2\x86\x90",
     "next / previous step (Home, End; digits Enter jumps; Shift+PgDn pages)"},
    {"lesson: F5, Esc", "back to the step as written; leave (the view stays)"},
    {"Ctrl+R, A", "record a lesson on / off; add the view as a step + caption"},
    {"F1 or ?", "this help (any key closes it)"},
    {"Esc", "close what is open: help, text field, focus, presentation, compare"},
    {"Ctrl+Q", "quit"},
};
/* training mode's keys, all of them */
static const char *help_training_rows[][2] = {
    {"L", "pause / go on (after a stop by itself: more steps)"},
    {"S", "speed: full, slow motion, paused, in turn"},
    {".", "one step, then paused"},
    {"Tab / Shift+Tab", "next / previous task: a new run"},
    {"Up / Down", "h up / down: a new run (the earlier curves stay)"},
    {"Right / Left", "d_model up / down: a new run"},
    {"Y", "the next layer's heads (2-layer tasks)"},
    {"R", "a new seed: a new run"},
    {"H", "sweep of h: a run per divisor of d_model (H or Esc ends it)"},
    {"[  ]", "replay: one moment back / forward"},
    {"End", "back to live"},
    {"PgUp / PgDn", "previous / next page of heads"},
    {"V  K", "numbers in the cells; contrast"},
    {"C, T", "next colormap; light / dark theme"},
    {"Ctrl+=  Ctrl+\xE2\x88\x92  Ctrl+0", "zoom text and UI for a projector"},
    {"Ctrl+S, Ctrl+Shift+V", "save the view as PNG; as a view file"},
    {"P, F11", "presentation; fullscreen"},
    {"W E M N X D I B , 1\xE2\x80\xA6"
     "9 Enter",
     "the attention view's: the status line says so"},
    {"F1 or ?", "this help (any key closes it)"},
    {"Esc", "back to the attention view (training pauses; L returns)"},
    {"Ctrl+Q", "quit"},
};

static int help_size(const view_ctx *c, const char *(*rows)[2], int count, const char *title,
                     int *cols);
static void draw_help_box(const view_ctx *c, const char *(*rows)[2], int count, const char *title,
                          int fs, int cols);

void view_draw_help(const view_ctx *c) {
    const view_state *s = c->s;
    const int training = s->train != NULL;
    const char *(*rows)[2] = training      ? help_training_rows
                             : s->overview ? help_model_rows
                                           : help_random_rows;
    const int count = training ? (int)(sizeof help_training_rows / sizeof help_training_rows[0])
                      : s->overview ? (int)(sizeof help_model_rows / sizeof help_model_rows[0])
                                    : (int)(sizeof help_random_rows / sizeof help_random_rows[0]);
    /* a model's Tab row names the tokenizer the samples go through: the model's own */
    const char *model_rows[sizeof help_model_rows / sizeof help_model_rows[0]][2];
    char tab[160];
    if (!training && s->overview) {
        memcpy(model_rows, help_model_rows, sizeof model_rows);
        if (s->overview->tokenizer && s->overview->tokenizer[0]) {
            snprintf(tab, sizeof tab, "%s, through its tokenizer: %s",
                     help_model_rows[HELP_TAB_ROW][1], s->overview->tokenizer);
            model_rows[HELP_TAB_ROW][1] = tab;
        }
        rows = model_rows;
    }
    const char *title =
        training
            ? "Training mode's keys (F1 or Esc closes; More keys\xE2\x80\xA6 has a button for each)"
            : "Keyboard shortcuts (F1 or Esc closes; More keys\xE2\x80\xA6 has a button for each)";
    int cols = 1;
    const int fs = help_size(c, rows, count, title, &cols);
    draw_help_box(c, rows, count, title, fs, cols);
}

/* The help's text size and its columns (*cols): the controls' size, in one column or
 * two (whichever keeps the text larger: two at a large zoom), smaller when the
 * window cannot hold the whole list; never under 6 pixels. */
static int help_size(const view_ctx *c, const char *(*rows)[2], int count, const char *title,
                     int *cols) {
    const view_layout *L = c->L;
    const view_state *s = c->s;
    const int base = L->ui_font > L->font ? L->ui_font : L->font; /* follows the zoom */
    int fs = base;
    for (int k = 1, best = 0; k <= 2; k++) {
        int per = (count + k - 1) / k, kw = 0, dw = 0, tw = 0, line = 0;
        for (int i = 0; i < count; i++) {
            int a = view_tw(c, rows[i][0], base, 1), b = view_tw(c, rows[i][1], base, 0);
            if (a > kw) kw = a;
            if (b > dw) dw = b;
        }
        c->measure(c->ud, "Ag", base, 0, &tw, &line);
        int gap = base * 3 / 4, pad = base / 2;
        int w = k * (kw + dw + gap * 3), h = (per + 2) * line + pad * 4;
        const int title_w = view_tw(c, title, base, 1) + gap * 2;
        if (w < title_w) w = title_w;
        float f = fminf(
            1.0f, fminf(0.95f * (float)s->width / (float)w, 0.95f * (float)s->height / (float)h));
        int size = (int)((float)base * f);
        if (size > best) best = size, fs = size, *cols = k;
    }
    return fs < 6 ? 6 : fs;
}

/* The help over the dimmed view: a framed box in the middle, the title, then the
 * rows in cols columns at text size fs. */
static void draw_help_box(const view_ctx *c, const char *(*rows)[2], int count, const char *title,
                          int fs, int cols) {
    const view_state *s = c->s;
    const int per = (count + cols - 1) / cols;
    int kw = 0, dw = 0, line = 0, tw = 0;
    for (int i = 0; i < count; i++) {
        int a = view_tw(c, rows[i][0], fs, 1), b = view_tw(c, rows[i][1], fs, 0);
        if (a > kw) kw = a;
        if (b > dw) dw = b;
    }
    c->measure(c->ud, "Ag", fs, 0, &tw, &line);
    const int pad = fs / 2, gap = fs * 3 / 4, colw = kw + dw + gap * 3;
    int w = cols * colw, h = (per + 2) * line + pad * 4;
    if (w < view_tw(c, title, fs, 1) + gap * 2) w = view_tw(c, title, fs, 1) + gap * 2;
    if (w > s->width) w = s->width;
    view_rect box = {(s->width - w) / 2, (s->height - h) / 2, w, h};
    if (box.y < 0) box.y = 0;
    draw_fill(c->dl, (view_rect){0, 0, s->width, s->height}, c->th.overlay);
    draw_fill(c->dl, box, c->th.bg);
    draw_frame(c->dl, box, c->th.accent_text, 2);
    draw_text(c->dl, box.x + gap, box.y + pad, title, fs, c->th.text, 1, 0);
    for (int i = 0; i < count; i++) {
        int x = box.x + (i / per) * colw, y = box.y + pad * 2 + (i % per + 1) * line + pad;
        draw_text(c->dl, x + gap, y, rows[i][0], fs, c->th.accent_text, 1, 0);
        draw_text(c->dl, x + gap * 2 + kw, y, rows[i][1], fs, c->th.text, 0, 0);
    }
}

/* The "More" panel: a framed grid of buttons, each naming its key, over the data. */
void view_draw_menu(const view_ctx *c) {
    const view_layout *L = c->L;
    const view_rect m = L->menu;
    const int f = L->menu_font > 0 ? L->menu_font : L->ui_font;
    const int pad =
        L->menu.h > 0 && L->buttons[BTN_MENU].present ? L->buttons[BTN_MENU].r.x - m.x : L->ui_pad;
    draw_fill(c->dl, m, c->th.bg);
    draw_frame(c->dl, m, c->th.accent_text, 2);
    draw_text(c->dl, m.x + pad, m.y + pad, VIEW_MENU_TITLE, f, c->th.text, 1, 0);
    for (int b = BTN_MENU; b <= BTN_MENU_LAST; b++) {
        if (!L->buttons[b].present) continue;
        const view_rect r = L->buttons[b].r;
        draw_fill(c->dl, r, c->th.button);
        draw_frame(c->dl, r, c->th.grid, 1);
        view_text_center(c, r, L->buttons[b].label, f, c->th.button_text, 0);
    }
}

void view_draw_toast(const view_ctx *c) {
    const view_layout *L = c->L;
    const view_state *s = c->s;
    int w = view_tw(c, s->toast, L->font, 0) + L->pad * 2;
    if (w > s->width) w = s->width;
    /* above a lesson's caption band, which it would hide */
    const int bottom =
        L->caption.shown && !L->caption.side ? L->caption.band.y + L->line * 2 : s->height;
    const int fw = L->caption.shown && L->caption.side ? L->caption.figure.w : s->width;
    if (w > fw) w = fw;
    view_rect r = {(fw - w) / 2, bottom - L->line * 3 - L->pad * 3, w, L->line + L->pad * 2};
    if (!L->caption.shown && L->status.h > 0) { /* the status line's row: over no data
                                                   (the colorbar under the heads) */
        r.x = L->status.x;
        r.h = L->line + L->pad * 2;
        const int foot = L->status.y + L->status.h;
        r.y = (foot < s->height ? foot : s->height) - r.h;
        if (r.x + r.w > s->width) r.w = s->width - r.x;
    } else if (!L->caption.shown) { /* presentation: the top right corner, by the captions */
        r.x = s->width - w - L->pad;
        r.y = L->pad;
    }
    draw_fill(c->dl, r, c->th.tooltip_bg);
    draw_text(c->dl, r.x + L->pad, r.y + L->pad, s->toast, L->font, c->th.bg, 0, 0);
}
