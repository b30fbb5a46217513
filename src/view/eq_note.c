/* eq_note.c: what the equation says where the layer does not hold Concat or W^O:
 * a plain note in the place of the missing one, saying why (a loaded model whose
 * h head_dim is not d_model: Concat is n x h d_k and W^O h d_k x d_model, which this
 * view does not draw; or a source that keeps none), instead of head bands over
 * empty frames; and such notes' lines, which the step-through's stages use too. The
 * rest of the equation is panels.c's. */
#include <stdio.h>
#include <string.h>

#include "view_internal.h"

static int imax(int a, int b) {
    return a > b ? a : b;
}

/* The note's words: what is missing and why, and what MultiHead is. */
static void note_text(const attn_layer *layer, char *buf, size_t len) {
    const int n = layer->n, h = layer->h, dk = layer->d_k, d = layer->d_model;
    const int both = !layer->concat && !layer->w_o;
    const char *what = both             ? "Concat and W\xE1\xB4\xBC are"
                       : !layer->concat ? "Concat is"
                                        : "W\xE1\xB4\xBC is";
    char after[96] = "";
    if (layer->out && both)
        snprintf(after, sizeof after, " MultiHead (%d \xC3\x97 %d) is drawn as computed.", n, d);
    if (h * dk != d) {
        snprintf(buf, len,
                 "%s not drawn: here Concat is %d \xC3\x97 %d and W\xE1\xB4\xBC %d \xC3\x97 %d "
                 "(h \xC2\xB7 d\xE2\x82\x96 = %d \xC2\xB7 %d = %d \xE2\x89\xA0 d_model = %d), and "
                 "this view draws only matrices d_model wide.%s",
                 what, n, h * dk, h * dk, d, h, dk, h * dk, d, after);
        return;
    }
    snprintf(buf, len, "%s not drawn: this layer's source does not keep %s.%s", what,
             both ? "them" : "it", after);
}

/* Copies the longest prefix of words (from *p) that fits w into line; advances *p.
   A single word wider than w is cut where it must be (view_fit_text). */
static void next_line(const view_ctx *c, const char **p, char *line, size_t len, int w, int size) {
    const char *s = *p;
    while (*s == ' ') s++;
    size_t best = 0, at = 0;
    for (;;) {
        while (s[at] && s[at] != ' ') at++;
        if (at >= len) break;
        char try[512];
        memcpy(try, s, at);
        try[at] = '\0';
        if (best && view_tw(c, try, size, 0) > w) break;
        best = at;
        if (!s[at]) break;
        at++;
    }
    char word[512];
    memcpy(word, s, best);
    word[best] = '\0';
    view_fit_text(line, len, word, w, size, 0, c->measure, c->ud);
    *p = s + best;
}

void view_draw_eq_note(const view_ctx *c) {
    const view_layout *L = c->L;
    const attn_layer *layer = c->s->layer;
    /* the place of what is missing: Concat's box, W^O's, or both and between */
    const view_matrix_box *a = layer->concat ? &L->w_o : &L->concat;
    const view_matrix_box *b = layer->w_o ? &L->concat : &L->w_o;
    const int x0 = a->map.x < b->map.x ? a->map.x : b->map.x;
    const int x1 = imax(a->map.x + a->map.w, b->map.x + b->map.w);
    const int y0 = a->map.y < b->map.y ? a->map.y : b->map.y;
    const int y1 = imax(imax(a->cbar.y + a->cbar.h, b->cbar.y + b->cbar.h),
                        imax(a->map.y + a->map.h, b->map.y + b->map.h));
    char text[512];
    note_text(layer, text, sizeof text);
    view_draw_note_lines(c, x0, y0, x1 - x0, y1, text, L->font_small);
}

void view_draw_note_lines(const view_ctx *c, int x, int y, int w, int y1, const char *text,
                          int size) {
    const int line_h = imax(c->L->line, size + 2);
    char line[512];
    const char *p = text;
    for (; *p && y + line_h <= y1 + line_h / 2; y += line_h) {
        next_line(c, &p, line, sizeof line, w, size);
        if (!line[0]) break;
        draw_text(c->dl, x, y, line, size, c->th.muted, 0, 0);
        while (*p == ' ') p++;
    }
}
