/* compare.c: the compare view's own drawing: the banner that names the settings
 * in which the two views differ (as chips, the same setting at the same place on
 * each side), the line between the panes, and the pinned pane, laid out as a
 * figure of the pane's size and moved into place, with the pointer's query row
 * outlined in its heads as in the live ones. The live pane is the ordinary
 * view (render.c). */
#include <stdio.h>
#include <string.h>

#include "view.h"
#include "view_internal.h"

static void draw_side(const view_ctx *c, const view_compare_side *S, int side) {
    static const char *names[2] = {"Pinned", "Live"};
    const view_state *s = c->s;
    const int size = c->L->compare_font;
    draw_text(c->dl, S->name.x, S->name.y + (S->name.h - size) / 2 - size / 8, names[side], size,
              c->th.text, 1, 0);
    for (int i = 0; i < S->chips; i++) {
        view_rect r = S->chip[i];
        draw_fill(c->dl, r, c->th.accent_text); /* a differing setting: highlighted */
        view_text_center(c, r, s->compare_what[i][side], size, c->th.bg, 1);
    }
}

void view_draw_compare(const view_ctx *c, const view_hit *hit) {
    const view_state *s = c->s;
    const view_layout *L = c->L;
    const view_rect *pane = L->compare_pane;
    for (int side = 0; side < 2; side++) draw_side(c, &L->compare_side[side], side);
    if (L->compare_same.w > 0) {
        char buf[160];
        const view_rect r = L->compare_same;
        view_fit_text(buf, sizeof buf,
                      "same settings as Live: change h, d_model, mask, scaling, heads or text", r.w,
                      L->compare_font, 0, c->measure, c->ud);
        draw_text(c->dl, r.x, r.y + (r.h - L->compare_font) / 2 - L->compare_font / 8, buf,
                  L->compare_font, c->th.muted, 0, 0);
    }
    draw_fill(c->dl, L->compare_line, c->th.grid);

    if (!view_layer_ok(s->pinned->layer)) { /* its model is still being computed */
        const char *msg = "computing the pinned view\xE2\x80\xA6";
        const int w = view_tw(c, msg, L->compare_font, 0);
        draw_text(c->dl, pane[0].x + (pane[0].w - w) / 2, pane[0].y + pane[0].h / 2, msg,
                  L->compare_font, c->th.muted, 0, 0);
        return;
    }
    if (!s->pinned_layout) return;
    view_state p;
    view_compare_pinned(s, pane[0], &p);
    const view_layout *PL = s->pinned_layout; /* laid out with the live view (layout_compare.c) */
    const int first = c->dl->count;
    view_ctx pc = *c;
    pc.L = PL;
    pc.s = &p;
    /* the pointer's query row (or key column) in the live heads is outlined in the
       pinned heads too, when both views have the same positions */
    view_hit mirror = {HIT_NONE, -1, -1, -1, -1, -1};
    if (p.layer->n == s->layer->n) {
        if (hit->kind == HIT_HEAD_CELL || hit->kind == HIT_ROW_LABEL)
            mirror.kind = HIT_ROW_LABEL, mirror.row = hit->row;
        else if (hit->kind == HIT_COL_LABEL)
            mirror.kind = HIT_COL_LABEL, mirror.col = hit->col;
        else if (hit->kind == HIT_LINES_Q || hit->kind == HIT_LINES_K) /* the head view */
            mirror.kind = hit->kind, mirror.row = hit->row, mirror.col = hit->col;
    }
    view_draw_body(&pc, &mirror);
    if (s->look.present) view_draw_pointer(&pc, &mirror);
    for (int i = first; i < c->dl->count; i++) {
        draw_cmd *d = &c->dl->cmds[i];
        if (d->kind == DC_GROUP) { /* "head-3" of the live view stays unique in an SVG */
            char name[64];
            snprintf(name, sizeof name, "pinned-%s", draw_cmd_text(c->dl, d));
            if (d->group) draw_rename(c->dl, i, name);
            continue;
        }
        d->x += pane[0].x;
        d->y += pane[0].y;
    }
}
