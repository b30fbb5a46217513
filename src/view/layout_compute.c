/* layout_compute.c: the layout's entry point. It brings any state within the ranges
 * the layout handles, then hands it to the compare view (layout_compare.c) when a
 * view is pinned, else to the single pane's zoom search (layout.c); the head view
 * (layout_lines.c) then fills the heads' tiles it laid out. They call only
 * downwards; nothing calls back up here. No drawing. */
#include <math.h>

#include "layout_internal.h"

/* The state the layout promises to handle: sizes 1..65536, scales 0.05..16 (0 is
   1), and a layer view_layer_ok accepts (else none). A public function meets
   any input: outside these, the nearest that holds. */
static view_state within_range(const view_state *s) {
    view_state v = *s;
    if (v.width < 1) v.width = 1;
    if (v.width > 65536) v.width = 65536;
    if (v.height < 1) v.height = 1;
    if (v.height > 65536) v.height = 65536;
    if (!(v.look.zoom == 0.0f || (v.look.zoom >= 0.05f && v.look.zoom <= 16.0f)))
        v.look.zoom = isfinite(v.look.zoom) && v.look.zoom > 16.0f ? 16.0f : 1.0f;
    if (!(v.zoom_base == 0.0f || (v.zoom_base >= 0.05f && v.zoom_base <= 16.0f)))
        v.zoom_base = 1.0f;
    if (!(v.ui_scale == 0.0f || (v.ui_scale >= 0.05f && v.ui_scale <= 16.0f))) v.ui_scale = 1.0f;
    if (!view_layer_ok(v.layer)) v.layer = NULL;
    return v;
}

int view_text_floor(int width, int height) {
    const int page_h = lay_imin(height, width * 3 / 4); /* a portrait page: as if 4:3 */
    return lay_imax(1, (page_h + VIEW_TEXT_FLOOR_DIV - 1) / VIEW_TEXT_FLOOR_DIV);
}

/* A presentation (the window presenting, a deck page, a figure made while presenting):
   its smallest text, VIEW_SMALLEST_TEXT px at ui_scale * zoom 1, is raised to the text
   floor of its height where it is below, through the zoom (and the base zoom with it:
   the heatmaps fill the room at it; a zoom above it stays); the controls' text keeps it
   too (layout.c's fit_chrome), and token labels are thinned rather than set in a
   smaller type under it (layout_heads.c, layout_steps.c). A caption band's view keeps
   its page's floor. Outside presentation the window keeps its own zoom. */
static void present_floor(view_state *s) {
    if (!s->look.present || s->text_floor > 0) return;
    s->text_floor = view_text_floor(s->width, s->height);
    const float ui = s->ui_scale > 0.0f ? s->ui_scale : 1.0f;
    const float need = fminf(16.0f, (float)s->text_floor / ((float)VIEW_SMALLEST_TEXT * ui));
    if ((s->look.zoom > 0.0f ? s->look.zoom : 1.0f) < need) s->look.zoom = need;
    if ((s->zoom_base > 0.0f ? s->zoom_base : 1.0f) < need) s->zoom_base = need;
}

void view_layout_compute(view_layout *L, const view_state *s_in, view_measure_fn measure,
                         void *ud) {
    view_state safe = within_range(s_in), *s = &safe;
    present_floor(&safe);
    if (s->caption && s->panel == VIEW_PANEL_ALL) { /* a lesson's caption band: the view */
        static view_caption_box cap;                /* in the room it leaves (one thread) */
        view_caption_layout(&cap, s, measure, ud);
        view_state rest = *s;
        rest.caption = NULL;
        rest.width = cap.figure.w;
        rest.height = cap.figure.h;
        view_layout_compute(L, &rest, measure, ud);
        L->caption = cap;
        return;
    }
    if (s->pinned) { /* compare: the live view in its pane beside the pinned one */
        view_compare_layout(L, s, measure, ud);
        if (L->compare && s->look.head_view == VIEW_HEAD_LINES) { /* both panes as lines */
            view_lines_layout(L, s, measure, ud);
            if (s->pinned_layout && view_layer_ok(s->pinned->layer)) {
                view_state p;
                view_compare_pinned(s, L->compare_pane[0], &p);
                p.look.head_view = s->look.head_view;
                view_lines_layout(s->pinned_layout, &p, measure, ud);
            }
        }
        return;
    }
    if (s->panel == VIEW_PANEL_LINES) { /* the head view alone: a lone head's tile */
        view_state one = *s;
        one.panel = VIEW_PANEL_HEAD;
        one.panel_head =
            s->panel_head >= 1 && s->layer && s->panel_head <= s->layer->h ? s->panel_head : 1;
        lay_pane(L, &one, measure, ud);
        L->focus = 0; /* a figure of its own, not the focus view */
    } else {
        lay_pane(L, s, measure, ud);
    }
    view_lines_layout(L, s, measure, ud); /* the head view in the heads' tiles (H) */
}
