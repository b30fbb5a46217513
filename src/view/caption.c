/* caption.c: draws a lesson's caption band as layout_caption.c placed it: the
 * panel, the progress strip (steps done in the accent, the current one full, the
 * rest pale), "step k of N" with the title and (in the window) the hints, then the
 * heading and the text, run by run at their levels. */
#include "view.h"
#include "view_internal.h"

static rgba mix(rgba a, rgba b, int t) { /* t / 100 of b over a */
    rgba r = {(uint8_t)((a.r * (100 - t) + b.r * t) / 100),
              (uint8_t)((a.g * (100 - t) + b.g * t) / 100),
              (uint8_t)((a.b * (100 - t) + b.b * t) / 100), 255};
    return r;
}

void view_draw_caption(const view_ctx *c) {
    const view_caption_box *C = &c->L->caption;
    if (!C->shown) return;
    const view_theme *th = &c->th;
    draw_fill(c->dl, C->band, th->panel);
    /* a rule between the figure and the band */
    if (C->side)
        draw_fill(c->dl, (view_rect){C->band.x, C->band.y, 2, C->band.h}, th->grid);
    else
        draw_fill(c->dl, (view_rect){C->band.x, C->band.y, C->band.w, 2}, th->grid);
    const rgba accent = view_head_color(0, c->s->look.theme);
    for (int i = 0; i < C->steps && C->strip.w > 0; i++) {
        view_rect r = view_caption_segment(C, i);
        rgba col = i + 1 < C->step ? mix(th->panel, accent, 60)
                                   : (i + 1 == C->step ? accent : mix(th->panel, th->muted, 30));
        draw_fill(c->dl, r, col);
    }
    if (C->rec.w)
        draw_text(c->dl, C->rec.x, C->rec.y, C->rec_text, C->meta_size, (rgba){200, 30, 30, 255}, 1,
                  0);
    if (C->title.w)
        draw_text(c->dl, C->title.x, C->title.y, C->title_text, C->meta_size, th->muted, 0, 0);
    if (C->hint.w)
        draw_text(c->dl, C->hint.x, C->hint.y, C->hint_text, C->meta_size, th->accent_text, 0, 0);
    if (C->step_label.w)
        draw_text(c->dl, C->step_label.x, C->step_label.y, C->step_text, C->meta_size, th->text, 1,
                  0);
    for (int i = 0; i < C->run_count; i++) {
        const view_caption_run *r = &C->run[i];
        draw_text(c->dl, r->x, r->y, r->text, r->size, th->text, r->bold, 0);
    }
}
