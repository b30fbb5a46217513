/* layout_json.c: a layout as one line of JSON, every rectangle named, for tests
 * that drive the real window (the window prints it when MHAVIZ_LAYOUT_LOG is set)
 * and check from outside that nothing overlaps or is cut. Writes text only. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "view.h"

typedef struct {
    char *buf;
    size_t len, o;
    int first;
} jbuf;

__attribute__((format(printf, 2, 3))) static void put(jbuf *j, const char *fmt, ...) {
    if (j->o >= j->len) return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(j->buf + j->o, j->len - j->o, fmt, ap);
    va_end(ap);
    if (n > 0) j->o += (size_t)n;
    if (j->o >= j->len) j->o = j->len; /* truncated: the caller sees it */
}

/* ["kind", "name", x, y, w, h]; names never hold quotes or backslashes */
static void item(jbuf *j, const char *kind, const char *name, view_rect r) {
    if (r.w <= 0 || r.h <= 0) return;
    put(j, "%s[\"%s\",\"%s\",%d,%d,%d,%d]", j->first ? "" : ",", kind, name, r.x, r.y, r.w, r.h);
    j->first = 0;
}

static void matrix(jbuf *j, const char *kind, const char *name, const view_matrix_box *b,
                   int tick_h) {
    char nm[48];
    snprintf(nm, sizeof nm, "%s map", name);
    item(j, kind, nm, b->map);
    snprintf(nm, sizeof nm, "%s shape label", name);
    item(j, kind, nm, b->shape);
    snprintf(nm, sizeof nm, "%s colorbar", name);
    item(j, "cbar", nm, b->cbar);
    snprintf(nm, sizeof nm, "%s colorbar numbers", name);
    item(j, "ticks", nm, (view_rect){b->cbar.x, b->cbar.y + b->cbar.h, b->cbar.w, tick_h});
}

/* The buttons, the header's captions, the formula strip's runs and the page note. */
static void json_chrome(jbuf *j, const view_layout *L) {
    char nm[128];
    for (int b = 0; b < BTN_COUNT; b++)
        if (L->buttons[b].present) { /* its label too: a test clicks the one it names */
            snprintf(nm, sizeof nm, "button %d %s", b, L->buttons[b].label);
            item(j, "button", nm, L->buttons[b].r);
        }
    for (int i = 0; i < L->hdr_count; i++) {
        const view_run *r = &L->hdr_runs[i];
        snprintf(nm, sizeof nm, "caption %d", i);
        item(j, "caption", nm, (view_rect){r->x, r->y, r->w, L->ui_line});
    }
    for (int i = 0; i < L->run_count; i++) {
        const view_run *r = &L->runs[i];
        snprintf(nm, sizeof nm, "formula run %d", i);
        item(j, "run", nm, (view_rect){r->x, r->y, r->w, L->ui_line * r->size / L->ui_font});
    }
    if (L->run_count) item(j, "formula", "formula strip", L->formula);
    if (L->page_note.w > 0) item(j, "note", "page note", L->page_note);
}

/* The shown heads: titles, maps, the labels of the first column and the last row,
 * and the attention colorbar. */
static void json_heads(jbuf *j, const view_layout *L, int tick_h) {
    char nm[64];
    const int cols = L->grid_cols > 0 ? L->grid_cols : 1;
    for (int i = 0; i < L->shown_heads && i < VIEW_MAX_VISIBLE; i++) {
        view_rect m = L->heads[i].map;
        int head = L->first_head + i + 1;
        snprintf(nm, sizeof nm, "head %d title", head);
        item(j, "title", nm, L->heads[i].title);
        snprintf(nm, sizeof nm, "head %d map", head);
        item(j, "map", nm, m);
        if (L->show_row_labels && i % cols == 0) {
            snprintf(nm, sizeof nm, "head %d row labels", head);
            item(j, "rowlab", nm, (view_rect){m.x - L->row_label_w, m.y, L->row_label_w, m.h});
        }
        if (L->show_col_labels && i + cols >= L->shown_heads) {
            snprintf(nm, sizeof nm, "head %d column labels", head);
            item(j, "collab", nm, (view_rect){m.x, m.y + m.h, m.w, L->col_label_h});
        }
    }
    for (int i = 0; i < L->lines_shown && i < VIEW_MAX_VISIBLE; i++) { /* the head view (H):
        each tile's box over its map, and its query and key columns inside the box */
        const view_lines_box *B = &L->lines[i];
        const int head = L->first_head + i + 1;
        snprintf(nm, sizeof nm, L->lines_all ? "every head lines" : "head %d lines", head);
        item(j, "lines", nm, B->box);
        snprintf(nm, sizeof nm, L->lines_all ? "every head queries" : "head %d queries", head);
        item(j, "lines", nm, B->qcol);
        snprintf(nm, sizeof nm, L->lines_all ? "every head keys" : "head %d keys", head);
        item(j, "lines", nm, B->kcol);
    }
    if (L->shown_heads > 0) {
        item(j, "cbar", "attention colorbar", L->attn_cbar);
        view_rect t = {L->attn_cbar.x, L->attn_cbar.y + L->attn_cbar.h, L->attn_cbar.w, tick_h};
        item(j, "ticks", "attention colorbar numbers", t);
    }
}

/* The equation, and the focus view's Q_i, K_i, V_i and head_i. */
static void json_equation(jbuf *j, const view_layout *L, const view_state *s, int tick_h) {
    if (L->concat.map.w > 0) {
        /* the equation's numbers at its own size when it gave way to the heads */
        const int eq_tick = L->eq_font > 0 ? L->eq_pad / 2 + L->eq_line : tick_h;
        item(j, "eq", "equation title", L->eq_title);
        matrix(j, "eq", "Concat", &L->concat, eq_tick);
        matrix(j, "eq", "W^O", &L->w_o, eq_tick);
        matrix(j, "eq", "MultiHead", &L->out, eq_tick);
        item(j, "eq", "side panels' note", L->lesson_note);
        item(j, "sym", "times sign", L->times_sym);
        item(j, "sym", "equals sign", L->equals_sym);
        item(j, "band", "Concat bands", L->concat_band);
        item(j, "band", "W^O bands", L->wo_band);
    }
    if (L->focus && s->panel == VIEW_PANEL_ALL) {
        static const char *nmq[4] = {"Q_i", "K_i", "V_i", "head_i"};
        for (int i = 0; i < 4; i++) matrix(j, "qkv", nmq[i], &L->qkv[i], tick_h);
    }
}

/* The compare view: both panes, the line between them and the banner's chips (the
 * pinned pane's own layout is a figure's, drawn in pane 0). */
static void json_compare(jbuf *j, const view_layout *L) {
    static const char *side[2] = {"pinned", "live"};
    char nm[64];
    item(j, "compare", "pinned pane", L->compare_pane[0]);
    item(j, "compare", "live pane", L->compare_pane[1]);
    item(j, "compare", "line between the panes", L->compare_line);
    for (int k = 0; k < 2; k++) {
        const view_compare_side *S = &L->compare_side[k];
        snprintf(nm, sizeof nm, "%s name", side[k]);
        item(j, "chip", nm, S->name);
        for (int i = 0; i < S->chips; i++) {
            snprintf(nm, sizeof nm, "%s chip %d", side[k], i);
            item(j, "chip", nm, S->chip[i]);
        }
    }
    item(j, "chip", "same settings note", L->compare_same);
}

/* A loaded model's overview (every cell "layer L head H", 1-based, and the labels
 * drawn) and the next-token panel (its rows' parts). */
static void json_model(jbuf *j, const view_layout *L) {
    char nm[64];
    const view_overview_box *O = &L->overview;
    if (O->shown) {
        item(j, "overview", "overview title", O->title);
        item(j, "overview", "overview grid", O->grid);
        item(j, "overview", "open layer frame", O->open_frame);
        item(j, "cbar", "overview colorbar", O->cbar);
        item(j, "note", "overview note", O->note);
        for (int l = 0; l < O->layers; l++) {
            snprintf(nm, sizeof nm, "layer %d label", l + 1);
            item(j, "ovlab", nm, view_overview_layer_label(L, l));
        }
        for (int b = 0; b < O->blocks; b++)
            for (int k = 0; k < O->heads; k++) {
                snprintf(nm, sizeof nm, "block %d head %d number", b + 1, k + 1);
                item(j, "ovlab", nm, view_overview_head_label(L, b, k));
            }
        for (int l = 0; l < O->layers; l++)
            for (int k = 0; k < O->heads; k++) {
                snprintf(nm, sizeof nm, "L%d H%d", l + 1, k + 1);
                item(j, "ovcell", nm, view_overview_cell(L, l, k));
            }
    }
    const view_next_box *N = &L->next;
    if (N->shown) {
        item(j, "next", "next panel", N->area);
        item(j, "next", "next title", N->title);
        for (int i = 0; i < N->k && i < VIEW_NEXT_MAX; i++) {
            snprintf(nm, sizeof nm, "next %d label", i + 1);
            item(j, "next", nm, N->label[i]);
            snprintf(nm, sizeof nm, "next %d track", i + 1);
            item(j, "next", nm, N->track[i]);
            snprintf(nm, sizeof nm, "next %d bar", i + 1);
            item(j, "nextbar", nm, N->bar[i]);
            snprintf(nm, sizeof nm, "next %d bar every head on", i + 1);
            item(j, "nextbar", nm, N->full[i]);
            snprintf(nm, sizeof nm, "next %d percent", i + 1);
            item(j, "next", nm, N->pct[i]);
        }
        for (int i = 0; i < N->k; i++) {
            snprintf(nm, sizeof nm, "next %d heading", i + 1);
            item(j, "next", nm, N->group[i]);
        }
        item(j, "next", "next note", N->note);
        item(j, "next", "next caption", N->caption);
        item(j, "next", "next cut note", N->cut_note);
        item(j, "next", "next mark note", N->mark_note); /* a token drawn, written next */
    }
}

/* A lesson's caption band: the band, its strip and labels, every run (kind "lesson"). */
static void json_caption(jbuf *j, const view_layout *L) {
    const view_caption_box *C = &L->caption;
    char nm[64];
    item(j, "lesson", "caption band", C->band);
    item(j, "lesson", "progress strip", C->strip);
    item(j, "lesson", "step label", C->step_label);
    item(j, "lesson", "lesson title", C->title);
    item(j, "lesson", "back hint", C->hint);
    item(j, "lesson", "recording", C->rec);
    for (int i = 0; i < C->run_count; i++) {
        const view_caption_run *r = &C->run[i];
        snprintf(nm, sizeof nm, "%s run %d", r->heading ? "heading" : "caption text", i);
        item(j, "lesson", nm, (view_rect){r->x, r->y, r->w, r->size + r->size / 4});
    }
}

int view_layout_json(char *buf, size_t len, const view_layout *L, const view_state *s) {
    jbuf j = {buf, len, 0, 1};
    const int tick_h = L->pad / 2 + L->line;
    put(&j,
        "{\"width\":%d,\"height\":%d,\"zoom\":%.3f,\"zoom_base\":%.3f,\"ui_zoom\":%.3f,"
        "\"data_zoom\":%.3f,"
        "\"present\":%d,\"focus\":%d,\"font\":%d,\"ui_font\":%d,\"pages\":%d,\"per_page\":%d,"
        "\"page\":%d,\"panels_page\":%d,\"panels_shown\":%d,\"first_head\":%d,"
        "\"shown_heads\":%d,\"label_stride\":%d,"
        "\"labels\":%d,\"title_short\":%d,\"eq_arrange\":%d,\"head_side\":%d,"
        "\"grid_cols\":%d,\"grid_rows\":%d,\"gap\":%d,\"pad\":%d,\"line\":%d,"
        "\"heads_area\":[%d,%d,%d,%d],\"items\":[",
        s->width, s->height, (double)(s->look.zoom > 0 ? s->look.zoom : 1.0f),
        (double)(s->zoom_base > 0 ? s->zoom_base : 1.0f), (double)L->ui_zoom, (double)L->data_zoom,
        s->look.present, L->focus, L->font, L->ui_font, L->pages, L->per_page, L->page,
        L->panels_page, L->lesson_shown, L->first_head, L->shown_heads, L->label_stride,
        L->show_row_labels, L->title_short, L->eq_arrange,
        L->shown_heads > 0 ? L->heads[0].map.w : 0, L->grid_cols, L->grid_rows, L->gap, L->pad,
        L->line, L->heads_area.x, L->heads_area.y, L->heads_area.w, L->heads_area.h);
    json_chrome(&j, L);
    json_heads(&j, L, tick_h);
    json_equation(&j, L, s, tick_h);
    json_model(&j, L);
    if (L->status.w > 0) item(&j, "status", "status line", L->status);
    if (L->compare) json_compare(&j, L);
    if (L->caption.shown) json_caption(&j, L);
    put(&j, "]");
    if (L->caption.shown)
        put(&j,
            ",\"caption\":{\"step\":%d,\"steps\":%d,\"heading_size\":%d,\"text_size\":%d,"
            "\"lines\":%d,\"side\":%d,\"at_floor\":%d,\"cut\":%d,\"hint\":%d,\"recording\":%d}",
            L->caption.step, L->caption.steps, L->caption.heading_size, L->caption.text_size,
            L->caption.lines, L->caption.side, L->caption.at_floor, L->caption.cut,
            L->caption.hint_text[0] != 0, L->caption.rec_text[0] != 0);
    if (L->overview.shown) {
        const view_overview_box *O = &L->overview;
        put(&j,
            ",\"overview\":{\"layers\":%d,\"heads\":%d,\"blocks\":%d,\"rows\":%d,\"cell\":%d,"
            "\"step\":%d,\"open\":%d,\"layer_stride\":%d,\"head_stride\":%d}",
            O->layers, O->heads, O->blocks, O->rows, O->cell, O->step, O->open, O->layer_stride,
            O->head_stride);
    }
    if (L->next.shown) put(&j, ",\"next\":{\"rows\":%d}", L->next.k);
    put(&j, "}");
    return j.o < len ? (int)j.o : -1;
}
