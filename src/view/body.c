/* body.c: the panels of one view in the order they stack: header and formula,
 * the heads (or training's curves, or the step-through), the focus view, the
 * equation and the lesson's panels, the status line. view_render draws it for the
 * window or a figure, view_draw_compare once more for the pinned pane. */
#include "view.h"
#include "view_internal.h"

void view_draw_body(const view_ctx *c, const view_hit *hit) {
    const view_state *s = c->s;
    const view_layout *L = c->L;
    if (view_overview_mode(s) || s->panel == VIEW_PANEL_NEXT) { /* a loaded model's panels */
        if (s->panel == VIEW_PANEL_ALL) {
            view_draw_header(c);
            view_draw_formula(c);
        }
        view_draw_overview(c, hit);
        view_draw_next(c);
        if (s->panel == VIEW_PANEL_ALL && view_layer_ok(s->layer)) view_draw_status(c);
        view_draw_caption(c);
        return;
    }
    if (s->panel == VIEW_PANEL_ALL) {
        view_draw_header(c);
        view_draw_formula(c);
    }
    if (s->train) {
        view_draw_heads(c, hit);
        view_draw_equation(c);
        view_draw_train(c);
    } else if (s->panel == VIEW_PANEL_STEPS) {
        view_draw_steps(c, &L->steps, s->panel_head - 1, 0);
    } else {
        if (s->panel != VIEW_PANEL_EQUATION) view_draw_heads(c, hit);
        if (L->focus && s->panel == VIEW_PANEL_ALL && L->steps.shown)
            view_draw_steps(c, &L->steps, L->focus - 1, s->look.step);
        else if (L->focus && s->panel == VIEW_PANEL_ALL)
            view_draw_focus(c);
        if (s->panel != VIEW_PANEL_HEAD && s->panel != VIEW_PANEL_LINES) view_draw_equation(c);
        view_draw_lesson(c);
        view_draw_next(c);
    }
    if (s->panel == VIEW_PANEL_ALL) view_draw_status(c);
    view_draw_caption(c);
}
