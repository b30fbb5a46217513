/* next_panel.c: draws the next-token panel into the rectangles of layout_next.c:
 * "What comes next after ␣the", each token's label, its probability as a bar on a
 * 0 to 100 % track and as "23.4 %", and, when heads are removed, the same token's
 * probability with every head on as a pale bar under it and "(31.0 %)", with a
 * caption saying so; "text cut to n tokens" when the text was cut. An encoder's
 * "fill the blank" draws its own title, each blank's heading and its note. */
#include <stdio.h>
#include <string.h>

#include "view.h"
#include "view_internal.h"

/* "23.4 %"; "< 0.1 %" for a probability above 0 that would print as 0.0. */
static void percent(char *buf, size_t len, float p, const char *open, const char *close) {
    if (!(p > 0.0f))
        snprintf(buf, len, "%s0.0 %%%s", open, close);
    else if (p < 0.0005f)
        snprintf(buf, len, "%s< 0.1 %%%s", open, close);
    else
        snprintf(buf, len, "%s%.1f %%%s", open, 100.0 * (double)(p < 1.0f ? p : 1.0f), close);
}

static void draw_title(const view_ctx *c) {
    const view_next_box *N = &c->L->next;
    const view_next *x = c->s->next;
    char t[160], fitted[160];
    const char *after = x->after && *x->after ? x->after : NULL;
    if (x->title)
        snprintf(t, sizeof t, "%s", x->title);
    else if (after)
        snprintf(t, sizeof t, "What comes next after %s", after);
    else
        snprintf(t, sizeof t, "What comes next");
    if (!x->title && after && view_tw(c, t, N->title_size, 1) > N->title.w)
        snprintf(t, sizeof t, "Next after %s", after);
    view_fit_text(fitted, sizeof fitted, t, N->title.w, N->title_size, 1, c->measure, c->ud);
    draw_text(c->dl, N->title.x, N->title.y, fitted, N->title_size, c->th.text, 1, 0);
}

void view_draw_next(const view_ctx *c) {
    const view_next_box *N = &c->L->next;
    const view_next *x = c->s->next;
    if (!N->shown || !view_next_ok(x)) return;
    draw_title(c);
    rgba pale = c->th.accent_text;
    pale.a = 80;
    const int fs = N->small_size; /* the pale numbers and the notes */
    char buf[96];
    for (int i = 0; i < N->k && i < x->k; i++) {
        if (N->group[i].w > 0 && x->group[i]) { /* the blank these rows fill */
            view_fit_text(buf, sizeof buf, x->group[i], N->group[i].w, N->size, 1, c->measure,
                          c->ud);
            draw_text(c->dl, N->group[i].x, N->group[i].y, buf, N->size, c->th.text, 1, 0);
        }
        view_rect lab = N->label[i];
        if (x->marked && x->mark == i) { /* the token drawn: the model writes it next */
            rgba hl = c->th.accent_text;
            hl.a = 40;
            draw_fill(c->dl, N->row[i], hl);
            draw_frame(c->dl, N->row[i], c->th.accent_text, 2);
        }
        view_fit_text(buf, sizeof buf, x->token[i] ? x->token[i] : "", lab.w, N->size, 0,
                      c->measure, c->ud);
        draw_text(c->dl, lab.x + lab.w - view_tw(c, buf, N->size, 0), lab.y, buf, N->size,
                  c->th.text, 0, 0);
        draw_fill(c->dl, N->track[i], c->th.panel);
        if (N->full[i].w > 0) draw_fill(c->dl, N->full[i], pale);
        if (N->bar[i].w > 0) draw_fill(c->dl, N->bar[i], c->th.accent_text);
        /* the track's 100 % end, so a short bar reads as a share of the whole */
        view_rect t = N->track[i];
        draw_line(c->dl, t.x + t.w - 1, t.y, t.x + t.w - 1, t.y + t.h - 1, c->th.grid, 1);
        percent(buf, sizeof buf, x->p[i], "", "");
        draw_text(c->dl, N->pct[i].x, N->pct[i].y, buf, N->size, c->th.text, 1, 0);
        if (x->p_full[i] >= 0.0f) {
            const int w = view_tw(c, buf, N->size, 1);
            percent(buf, sizeof buf, x->p_full[i], "(", ")");
            int lh = 0, tw = 0;
            c->measure(c->ud, "Ag", N->size, 0, &tw, &lh);
            int sh = 0;
            c->measure(c->ud, "Ag", fs, 0, &tw, &sh);
            draw_text(c->dl, N->pct[i].x + w + c->L->pad / 2, N->pct[i].y + lh - sh, buf, fs,
                      c->th.muted, 0, 0);
        }
    }
    char fitted[160];
    if (N->note.w > 0 && x->note) {
        view_fit_text(fitted, sizeof fitted, x->note, N->note.w, fs, 0, c->measure, c->ud);
        draw_text(c->dl, N->note.x, N->note.y, fitted, fs, c->th.text, 0, 0);
    }
    if (N->caption.w > 0) {
        char what[96] = "thin bar and (\xE2\x80\xA6 %): every head on";
        if (x->full_kv > 0) /* K/V regrouped: what the model loses against itself as trained */
            snprintf(what, sizeof what, "thin bar and (\xE2\x80\xA6 %%): as trained, %d K/V heads",
                     x->full_kv);
        view_fit_text(fitted, sizeof fitted, what, N->caption.w, fs, 0, c->measure, c->ud);
        draw_text(c->dl, N->caption.x, N->caption.y, fitted, fs, c->th.muted, 0, 0);
    }
    if (N->mark_note.w > 0) {
        char p[32];
        percent(p, sizeof p, x->mark_p, "", "");
        snprintf(buf, sizeof buf, "\xE2\x96\xB6 drawn, written next: %s (%s)",
                 x->mark_label ? x->mark_label : "", p);
        view_fit_text(fitted, sizeof fitted, buf, N->mark_note.w, fs, 1, c->measure, c->ud);
        draw_text(c->dl, N->mark_note.x, N->mark_note.y, fitted, fs, c->th.accent_text, 1, 0);
    }
    if (N->cut_note.w > 0) {
        const int n = view_overview_ok(c->s->overview)
                          ? c->s->overview->n
                          : (view_layer_ok(c->s->layer) ? c->s->layer->n : 0);
        snprintf(buf, sizeof buf, "text cut to %d tokens", n);
        view_fit_text(fitted, sizeof fitted, buf, N->cut_note.w, fs, 0, c->measure, c->ud);
        draw_text(c->dl, N->cut_note.x, N->cut_note.y, fitted, fs, c->th.text, 0, 0);
    }
    if (N->trained_note.w > 0) { /* the re-split is the layer's view, not the model's */
        const int h = c->s->overview->h;
        char forms[3][96];
        snprintf(forms[0], sizeof forms[0], "the model as trained: %d heads a layer, not re-split",
                 h);
        snprintf(forms[1], sizeof forms[1], "as trained: %d heads, not re-split", h);
        snprintf(forms[2], sizeof forms[2], "as trained (%d heads)", h);
        const char *const f[3] = {forms[0], forms[1], forms[2]};
        view_fit_first(c, fitted, sizeof fitted, f, 3, N->trained_note.w, fs, 0);
        draw_text(c->dl, N->trained_note.x, N->trained_note.y, fitted, fs, c->th.text, 0, 0);
    }
}
