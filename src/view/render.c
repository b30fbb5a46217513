/* render.c: view_render, the whole picture for one frame: the background, then
 * the panels (panels.c) in the order they stack, then the overlays (overlays.c).
 * It decides what goes in the drawing list; the backends decide how to draw it. */
#include "view.h"
#include "view_internal.h"

void view_render(draw_list *dl, view_cache *cache, const view_layout *L, const view_state *s,
                 view_measure_fn measure, void *ud) {
    view_ctx c = {dl, cache, L, s, measure, ud, view_theme_get(s->theme)};
    rgba bg = c.th.bg;
    if (s->transparent) bg.a = 0;
    draw_list_clear(dl, s->width, s->height, bg);
    if (!s->transparent) draw_fill(dl, (view_rect){0, 0, s->width, s->height}, bg);
    if (!s->m || s->m->n < 1) return;
    view_cache_begin(cache);
    view_hit hit = {HIT_NONE, -1, -1, -1, -1, -1};
    if (s->hover_x >= 0 && s->hover_y >= 0 && !s->editing && !s->help)
        hit = view_hit_test(L, s, s->hover_x, s->hover_y);

    if (s->panel == VIEW_PANEL_ALL) {
        view_draw_header(&c);
        view_draw_formula(&c);
    }
    if (s->train) {
        view_draw_heads(&c, &hit);
        view_draw_train(&c);
    } else if (s->panel == VIEW_PANEL_STEPS) {
        view_draw_steps(&c, &L->steps, s->panel_head - 1, 0);
    } else {
        if (s->panel != VIEW_PANEL_EQUATION) view_draw_heads(&c, &hit);
        if (L->focus && s->panel == VIEW_PANEL_ALL && L->steps.shown)
            view_draw_steps(&c, &L->steps, L->focus - 1, s->step);
        else if (L->focus && s->panel == VIEW_PANEL_ALL)
            view_draw_focus(&c);
        if (s->panel != VIEW_PANEL_HEAD) view_draw_equation(&c);
        view_draw_lesson(&c);
    }
    if (s->panel == VIEW_PANEL_ALL) view_draw_status(&c);
    if (s->present) view_draw_pointer(&c, &hit);
    view_draw_tooltip(&c, &hit);
    if (s->editing) view_draw_editor(&c);
    if (s->help) view_draw_help(&c);
    if (s->toast && *s->toast) view_draw_toast(&c);
    view_cache_end(cache);
}
