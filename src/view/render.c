/* render.c: view_render, the whole picture for one frame: the background, then
 * the panels (body.c) in the order they stack, after the pinned pane when
 * comparing (compare.c), then the overlays (overlays.c).
 * It decides what goes in the drawing list; the backends decide how to draw it. */
#include "view.h"
#include "view_internal.h"

void view_render(draw_list *dl, view_cache *cache, const view_layout *L, const view_state *s,
                 view_measure_fn measure, void *ud) {
    view_ctx c = {dl, cache, L, s, measure, ud, view_theme_get(s->look.theme)};
    rgba bg = c.th.bg;
    if (s->transparent) bg.a = 0;
    draw_list_clear(dl, s->width, s->height, bg);
    if (!s->transparent) draw_fill(dl, (view_rect){0, 0, s->width, s->height}, bg);
    /* a loaded model's overview and next-token panel draw without a layer */
    const int layer_ok = view_layer_ok(s->layer);
    const int model_only = view_overview_mode(s) || (s->panel == VIEW_PANEL_NEXT && s->next);
    if (!layer_ok && !model_only) return;
    view_cache_begin(cache);
    view_hit hit = {HIT_NONE, -1, -1, -1, -1, -1};
    if (s->hover_x >= 0 && s->hover_y >= 0 && !s->editing && !s->help)
        hit = view_hit_test(L, s, s->hover_x, s->hover_y);

    if (s->pinned && L->compare && layer_ok) view_draw_compare(&c, &hit); /* the pinned pane */
    view_draw_body(&c, &hit);
    if (s->look.present && layer_ok) view_draw_pointer(&c, &hit);
    if (layer_ok) view_draw_tooltip(&c, &hit);
    if (s->editing) view_draw_editor(&c);
    if (s->menu && L->menu.w > 0) view_draw_menu(&c);
    if (s->help) view_draw_help(&c);
    if (s->toast && *s->toast) view_draw_toast(&c);
    view_cache_end(cache);
}
