/* layout_place.c: how the layer view shares the main area: the heads grid beside
 * or above the equation at the split that balances them best (lay_main), and
 * where the next-token panel goes: in the room
 * the heads and the equation leave as they are (right of the equation), else in a
 * column or a strip of its own that they give up, whichever leaves the heads the
 * larger. The panel's own rectangles are layout_next.c's. No drawing. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "layout_internal.h"

#define imax lay_imax
#define imin lay_imin

/* How well a split uses the room: the heads' and the equation's heatmap areas,
 * weighted 3 : 2 (geometric), so neither is starved. Heads labelled every k-th
 * token, or not at all, count three quarters of their area. */
static double split_score(long heads, long eq) {
    if (heads <= 0 || eq <= 0) return -1e300;
    return 0.6 * log((double)heads) + 0.4 * log((double)eq);
}

/* The equation in b; above the base zoom it gives way (give_way; not in compare's
 * panes, whose room shrinks as the banner grows with the zoom: the data's zoom would
 * fall); compare's panes try the live pane's arrangement first. Its heatmaps' area,
 * or -1 when it does not fit. */
static long split_equation(view_layout *L, lay_ctx *cx, view_rect b, int give_way) {
    cx->eq_compact = give_way;
    long eq = -1;
    if (cx->like && cx->like->eq_area.w > 0 && !cx->eq_allow) {
        cx->eq_allow = 1 << cx->like->eq_arrange;
        eq = lay_equation(L, cx, b);
        cx->eq_allow = 0;
    }
    if (eq < 0) eq = lay_equation(L, cx, b);
    cx->eq_compact = 0;
    return eq;
}

/* Heads grid in one part of main, the equation in what the grid leaves unused.
 * stacked: heads above, else heads left; frac: the heads' share in percent;
 * lesson: the share of the equation's part left under it for the lesson's panels
 * (the how-alike matrix then counts with the equation's heatmaps). A bare layout's
 * strip for its captions (cx->eq_foot) is kept at the foot of the equation's part. */
static double split_try(view_layout *L, lay_ctx *cx, view_rect main, int stacked, int frac,
                        int lesson, int target) {
    view_rect a = main;
    if (stacked)
        a.h = main.h * frac / 100;
    else
        a.w = main.w * frac / 100;
    if (cx->next_h > 0 && cx->next_under) { /* the next-token panel under the heads */
        if (stacked || a.w < cx->next_w) return -1e300;
        a.h -= cx->next_h + L->gap * 2;
    }
    lay_heads(L, cx, a, 0, target);
    view_rect used = lay_heads_used(L, cx);
    view_rect b = main;
    if (stacked) {
        int y = used.y + used.h + L->gap;
        b.h = main.y + main.h - y;
        b.y = y;
    } else {
        int x = used.x + used.w + L->gap * 2;
        b.w = main.x + main.w - x;
        b.x = x;
    }
    /* compare: the equation as wide (or tall) as the live pane's, at the far side */
    const view_rect like_eq = cx->like ? cx->like->eq_area : (view_rect){0, 0, 0, 0};
    if (!stacked && like_eq.w > 0 && b.w > like_eq.w) b.x += b.w - like_eq.w, b.w = like_eq.w;
    if (stacked && like_eq.h > 0 && b.h > like_eq.h) b.y += b.h - like_eq.h, b.h = like_eq.h;
    /* room for an equation: four letters wide, four lines tall (of the smaller text it
       may take above the base zoom) */
    const int give_way = (target > 0 || cx->eq_give_way) && !cx->like;
    const int eq_font = give_way ? lay_eq_min_font(L, cx) : L->font;
    const int eq_line = eq_font < L->font ? lay_line_h(cx, eq_font) : L->line;
    if (cx->next_h > 0 && cx->next_under) { /* under the heads, as they came out */
        cx->next_slot = (view_rect){a.x, used.y + used.h + L->gap * 2, a.w, cx->next_h};
    } else if (cx->next_h > 0) { /* on top of the equation's part */
        if (stacked || b.w < cx->next_w) return -1e300;
        cx->next_slot = (view_rect){b.x, b.y, b.w, cx->next_h};
        b.y += cx->next_h + L->gap * 2;
        b.h -= cx->next_h + L->gap * 2;
    }
    L->foot = (view_rect){0, 0, 0, 0};
    if (cx->eq_foot > 0) { /* a bare layout's captions and formula under the equation */
        b.h -= cx->eq_foot + L->gap;
        L->foot = (view_rect){b.x, b.y + b.h + L->gap, b.w, cx->eq_foot};
    }
    if (b.w < eq_font * 4 || b.h < eq_line * 4 || used.h > main.h || used.w > main.w) return -1e300;
    /* heatmaps too small to read do not count as fitting */
    const int n = cx->s->layer ? cx->s->layer->n : 1;
    if (L->shown_heads < 1 || L->heads[0].map.w < imin(n, L->font * 3)) return -1e300;
    L->lesson_area = (view_rect){0, 0, 0, 0};
    const view_rect whole = b;          /* the equation's part, the panels' room in it */
    const int no_panels = lesson == -2; /* the side panels gave way */
    if (no_panels) lesson = 0;
    if (lesson > 0) b.h -= imax(10 * L->line + L->gap, b.h * lesson / 100);
    if (lesson < 0) { /* a column beside the equation, as wide as its panels need: the
                         matrix at most a head's side, the widest line of the cost */
        const int cost_w = lay_text_w(cx,
                                      "projections 8\xC2\xB7n\xC2\xB7"
                                      "d\xC2\xB2 = 000,000 FLOPs",
                                      L->font_small, 0);
        int w = imin(b.w * 40 / 100, imax(cost_w, L->heads[0].map.w + L->line + L->pad));
        if (b.w - w - L->gap * 2 < L->font * 8) return -1e300;
        b.w -= w + L->gap * 2;
        L->lesson_area = (view_rect){b.x + b.w + L->gap * 2, b.y, w, b.h};
    }
    long eq = split_equation(L, cx, b, give_way);
    if (eq < 0) return -1e300;
    if (no_panels) eq = eq / 4; /* the panels lost cost as when they find no room */
    if (lesson < 0) {           /* the column starts where the equation ends */
        const view_matrix_box *m[3] = {&L->concat, &L->w_o, &L->out};
        int right = 0;
        for (int i = 0; i < 3; i++)
            right = imax(right, imax(imax(m[i]->map.x + m[i]->map.w, m[i]->cbar.x + m[i]->cbar.w),
                                     m[i]->shape.x + m[i]->shape.w));
        L->eq_title.w = imax(1, right - L->eq_title.x); /* its shorter form when narrower */
        const int x = right + L->gap * 2;
        L->lesson_area.w = main.x + main.w - x;
        L->lesson_area.x = x;
    }
    if (lesson) { /* the panels where they go; not shown, or a how-alike matrix too
                     small to read its numbers (under 8 lines), costs three quarters */
        view_lesson_layout(L, cx->s, cx->measure, cx->ud);
        if (!L->lesson_shown) { /* no room for them: the equation takes the room kept
                                   for them, which would stay empty */
            L->lesson_area = (view_rect){0, 0, 0, 0};
            eq = split_equation(L, cx, whole, give_way);
            if (eq < 0) return -1e300;
        }
        const int one_head = cx->s->layer && cx->s->layer->h == 1; /* words, no matrix */
        if (L->lesson_shown && (L->redund_map.w >= 8 * L->line || one_head))
            eq += (long)L->redund_map.w * L->redund_map.h;
        else
            eq = eq / 4;
    }
    long heads = (long)L->per_page * L->heads[0].map.w * L->heads[0].map.h; /* any page */
    if (L->label_stride != 1) heads = heads * 3 / 4; /* every token labelled is worth room */
    return split_score(heads, eq);
}

/* The split lay_main chose, recorded in L for compare's other pane. */
static void note_split(view_layout *L, int stacked, int frac, int lesson) {
    L->split_stacked = stacked;
    L->split_frac = frac;
    L->split_lesson = lesson;
}

void lay_main(view_layout *L, lay_ctx *cx, view_rect main, int target) {
    static const int fracs[] = {30, 35, 40, 45, 50, 55, 60, 65, 70, 75, 80, 85, 90};
    /* under: % of the height; -1 beside; above the base zoom also none (-2): the side
       panels give way when that puts more heads on a page */
    static const int lessons[] = {22, 28, 35, -1, -2};
    enum { NF = (int)(sizeof fracs / sizeof fracs[0]), NL = 5 };
    const int nl = cx->s->lesson ? (target > 0 ? NL : NL - 1) : 1;
    if (cx->like && cx->like->split_frac > 0) {
        /* compare: the live pane's split, else the nearest share that fits */
        const int ls = cx->s->lesson ? cx->like->split_lesson : 0;
        const view_layout *like = cx->like;
        for (int dist = 0; dist <= 100; dist += 5)
            for (int sign = -1; sign <= 1; sign += 2) {
                const int frac = like->split_frac + sign * dist;
                if ((dist == 0 && sign > 0) || frac < fracs[0] || frac > fracs[NF - 1]) continue;
                if (split_try(L, cx, main, like->split_stacked, frac, ls, target) > -1e299) {
                    cx->fits = 1;
                    note_split(L, like->split_stacked, frac, ls);
                    return;
                }
            }
    }
    double score[NL][2][NF];
    int side[NL][2][NF], per_page[NL][2][NF], best_side = 0;
    for (int l = 0; l < nl; l++)
        for (int st = 0; st < 2; st++)
            for (int i = 0; i < NF; i++) {
                int ls = cx->s->lesson ? lessons[l] : 0;
                score[l][st][i] = split_try(L, cx, main, st, fracs[i], ls, target);
                /* a side is worth three quarters when its tokens are not all labelled */
                side[l][st][i] = score[l][st][i] <= -1e299 ? 0
                                 : L->label_stride == 1    ? L->heads[0].map.w * 4
                                                           : L->heads[0].map.w * 3;
                per_page[l][st][i] = L->per_page;
                best_side = imax(best_side, side[l][st][i]);
            }
    /* away from the base zoom the heads come first: the splits that bring them
       nearest their target (within 3 %), among those the one with the most heads a
       page (the equation and the side panels give way before heads go to extra
       pages), then the best balance */
    double best = -1e301;
    int best_l = 0, best_st = 0, best_f = 0, best_pp = 0;
    cx->fits = best_side > 0;
    for (int l = 0; l < nl; l++)
        for (int st = 0; st < 2; st++)
            for (int i = 0; i < NF; i++) {
                if (target > 0 && (long)side[l][st][i] * 100 < (long)best_side * 97) continue;
                const int pp = target > 0 ? per_page[l][st][i] : 0;
                if (pp > best_pp || (pp == best_pp && score[l][st][i] > best + 1e-9))
                    best = score[l][st][i], best_l = l, best_st = st, best_f = i, best_pp = pp;
            }
    const int ls = cx->s->lesson ? lessons[best_l] : 0;
    split_try(L, cx, main, best_st, fracs[best_f], ls, target);
    note_split(L, best_st, fracs[best_f], ls);
}

/* The next-token panel in r at one size; 1 when every row fits. */
static int next_fits(view_layout *L, const view_state *s, lay_ctx *cx, view_rect r, int compact) {
    view_next_layout(L, s, cx->measure, cx->ud, r, compact);
    return L->next.shown && L->next.k == s->next->k;
}

/* The next-token panel beside the heads and the equation, which give up room for
 * it: a column at the right of main (at most 30 % of its width; column set), else a
 * strip at its foot (at most 40 % of its height, every row; or as many rows as a
 * third holds), a size up from the data's text when that fits, else at it. L->main
 * shrinks to what is left. Returns 0 (nothing placed) when it fits nowhere. */
static int carve_next(view_layout *L, const view_state *s, lay_ctx *cx, int column) {
    memset(&L->next, 0, sizeof L->next);
    if (!view_next_ok(s->next)) return 0;
    const view_rect m = L->main;
    for (int compact = 0; compact < 2 && column; compact++) {
        const int w = imin(view_next_width(L, s, cx->measure, cx->ud, compact), m.w * 30 / 100);
        const view_rect col = {m.x + m.w - w, m.y, w, m.h};
        if (next_fits(L, s, cx, col, compact)) {
            L->main.w = imax(1, col.x - L->gap * 2 - m.x);
            return 1;
        }
    }
    if (column) return 0;
    /* a strip: every row within 40 % of the height, else what a third holds, compact */
    int compact = 0, w = 0;
    for (; compact < 2; compact++) {
        w = imin(m.w, view_next_width(L, s, cx->measure, cx->ud, compact));
        if (next_fits(L, s, cx, (view_rect){m.x, m.y, w, m.h * 40 / 100}, compact)) break;
    }
    if (compact == 2) {
        compact = 1;
        view_next_layout(L, s, cx->measure, cx->ud, (view_rect){m.x, m.y, w, m.h / 3}, compact);
    }
    if (!L->next.shown) return 0;
    const int h = L->next.area.h, y = m.y + m.h - h; /* at the foot of the main area */
    view_next_layout(L, s, cx->measure, cx->ud, (view_rect){m.x, y, w, h}, compact);
    L->main.h = imax(1, y - L->gap - m.y);
    return 1;
}

/* The room the next-token panel's place keeps that nothing fills (px^2): under it in a
 * column (under the side panels there, place 3), beside it in a strip (0) or on top
 * of the equation's part (2). */
static long next_waste(const view_layout *L, view_rect main, int place) {
    const view_rect n = L->next.area;
    const long col_w = main.x + main.w - n.x;
    if (place == 3) return col_w * (main.y + main.h - (L->cost.y + L->cost.h));
    if (place == 1) return col_w * (main.y + main.h - (n.y + n.h));
    if (place == 0) return (long)(main.w - n.w) * n.h;
    if (place == 4) return (long)(L->heads_area.w > n.w ? L->heads_area.w - n.w : 0) * n.h;
    return (long)(L->eq_area.w > n.w ? L->eq_area.w - n.w : 0) * n.h;
}

/* The next-token panel in a column at the right of main with the side panels under it
 * (they leave the room under the equation to it): L laid out so. Returns 0 (L
 * undefined) when they do not fit there. */
static int panels_under_next(view_layout *L, const view_state *s, lay_ctx *cx, int target) {
    const view_rect m = L->main;
    if (!carve_next(L, s, cx, 1)) return 0;
    const view_rect n = L->next.area, col = {n.x, m.y, m.x + m.w - n.x, m.h};
    const int y = n.y + n.h + L->gap * 2;
    view_state bare = *s; /* the heads and the equation without the panels' share */
    bare.lesson = 0;
    const view_state *was = cx->s; /* not always s: a caller's copy may be laid out */
    cx->s = &bare;
    lay_main(L, cx, L->main, target);
    cx->s = was;
    view_lesson_page_layout(L, s, cx->measure, cx->ud,
                            (view_rect){col.x, y, col.w, col.y + col.h - y});
    return L->lesson_shown;
}

/* The next-token panel at the top of the equation's part of main, beside the heads
 * (lay_main keeps its room there: split_try), every row at a size up from the data's
 * text, else at it; L laid out with it. Returns 0 (L undefined) when no split has room. */
static int next_on_equation(view_layout *L, const view_state *s, lay_ctx *cx, int target,
                            int under) {
    const view_rect m = L->main;
    for (int compact = 0; compact < 2; compact++) {
        const int w = imin(view_next_width(L, s, cx->measure, cx->ud, compact), m.w / 2);
        if (!next_fits(L, s, cx, (view_rect){m.x, m.y, w, m.h}, compact)) continue;
        const int h = L->next.area.h;
        cx->next_w = w, cx->next_h = h, cx->next_under = under;
        cx->next_slot = (view_rect){0, 0, 0, 0};
        const int fits = cx->fits;
        lay_main(L, cx, m, target);
        cx->next_w = cx->next_h = cx->next_under = 0;
        const view_rect slot = cx->next_slot;
        if (cx->fits && slot.w >= w &&
            next_fits(L, s, cx, (view_rect){slot.x, slot.y, w, h}, compact))
            return 1;
        cx->fits = fits;
    }
    return 0;
}

/* The room right of what the equation (and the lesson's panels) draw, down to the
 * foot of the main area: in a stacked layout (heads above) or beside a narrow
 * equation that is where the window is empty. */
static view_rect right_of_equation(const view_layout *L) {
    const view_matrix_box *m[3] = {&L->concat, &L->w_o, &L->out};
    int right = L->eq_title.x + L->eq_title.w;
    for (int i = 0; i < 3; i++)
        right = imax(right, imax(imax(m[i]->map.x + m[i]->map.w, m[i]->cbar.x + m[i]->cbar.w),
                                 m[i]->shape.x + m[i]->shape.w));
    if (L->lesson_shown) {
        const view_rect r[5] = {L->redund_title, L->redund_map, L->redund_cbar, L->redund_note,
                                L->cost};
        for (int i = 0; i < 5; i++) right = imax(right, r[i].x + r[i].w);
    }
    const int x = right + L->gap * 3, y = L->eq_area.y;
    return (view_rect){x, y, L->main.x + L->main.w - x, L->main.y + L->main.h - y};
}

/* (layout_internal.h) */
long lay_heads_size(const view_layout *L, const view_state *s) {
    if (L->shown_heads < 1) return 0;
    const long side = L->heads[0].map.w;
    const long size = L->label_stride == 1 && L->show_row_labels ? side * 4 : side * 3;
    return s->lesson && !L->lesson_shown ? size / 2 : size; /* the lesson lost costs half */
}

/* The heads and the equation in main, and the next-token panel where the window
 * has room for it as they are (right of the equation, in the window); else in a
 * column or a strip of its own that they give up (carve_next), whichever leaves
 * the heads larger. */
static void grid_next(view_layout *L, const view_state *s, lay_ctx *cx, int target);

/* The lesson's panels on but not shown (they gave way to the heads, or find no
 * room): a line saying so under the equation, in the first form that fits. */
static void lesson_note(view_layout *L, const view_state *s, lay_ctx *cx) {
    L->lesson_note = (view_rect){0, 0, 0, 0};
    L->lesson_note_text[0] = '\0';
    /* (a presentation's captions go under the equation: none there) */
    if (!s->lesson || L->lesson_shown || s->figure || s->look.present || L->concat.map.w <= 0)
        return;
    const view_matrix_box *m[3] = {&L->concat, &L->w_o, &L->out};
    int bottom = L->eq_title.y + L->eq_title.h;
    const int tick = (L->eq_font > 0 ? L->eq_pad : L->pad) / 2 +
                     lay_line_h(cx, L->eq_font > 0 ? L->eq_font_small : L->font_small);
    for (int i = 0; i < 3; i++) {
        bottom = imax(bottom, m[i]->shape.y + m[i]->shape.h);
        if (m[i]->cbar.w > 0) bottom = imax(bottom, m[i]->cbar.y + m[i]->cbar.h + tick);
    }
    if (s->layer && attn_layer_off_count(s->layer)) /* the line that heads are off */
        bottom = imax(bottom, L->out.cbar.y + L->out.cbar.h + 2 * L->line + L->pad);
    const int y = bottom + L->gap, x = L->eq_area.x;
    int room_w = L->main.x + L->main.w - x;
    if (L->next.shown && L->next.area.x > x) room_w = imin(room_w, L->next.area.x - L->gap - x);
    static const char *const forms[3] = {"side panels hidden: the heads need the room (I)",
                                         "side panels hidden (I)", "panels hidden (I)"};
    const int sizes[2] = {L->font_small, L->ui_small};
    for (int k = 0; k < 2; k++) {
        const int size = sizes[k], lh = lay_line_h(cx, size);
        if (y + lh > L->main.y + L->main.h) continue;
        for (int f = 0; f < 3; f++) {
            const char *t = forms[f];
            const int w = lay_text_w(cx, t, size, 0);
            if (w > room_w) continue;
            L->lesson_note = (view_rect){x, y, w, lh};
            snprintf(L->lesson_note_text, sizeof L->lesson_note_text, "%s", t);
            L->lesson_note_size = size;
            return;
        }
    }
}

void lay_grid_next(view_layout *L, const view_state *s, lay_ctx *cx, int target) {
    grid_next(L, s, cx, target);
    lesson_note(L, s, cx);
}

static void grid_next(view_layout *L, const view_state *s, lay_ctx *cx, int target) {
    memset(&L->next, 0, sizeof L->next);
    const view_rect main = L->main;
    lay_main(L, cx, main, target);
    view_lesson_layout(L, s, cx->measure, cx->ud);
    if (!view_next_ok(s->next)) return;
    if (!s->figure && !s->look.present) {
        const view_rect r = right_of_equation(L);
        for (int compact = 0; compact < 2 && r.h > 0; compact++) {
            const int want = view_next_width(L, s, cx->measure, cx->ud, compact);
            if (r.w >= want * 3 / 4 &&
                next_fits(L, s, cx, (view_rect){r.x, r.y, imin(r.w, want), r.h}, compact))
                return;
        }
    }
    static view_layout cand[5]; /* large; the layout is computed on one thread */
    long size[5], waste[5];
    int rows[5], ok[5] = {0}, best_rows = -1;
    long best_size = -1;
    /* under the heads beside the equation, a column with the side panels under the
       panel, on top of the equation's part beside the heads, in a column, in a strip */
    for (int place = 4; place >= 0; place--) {
        L->main = main;
        if (place == 3) {
            if (!s->lesson || !panels_under_next(L, s, cx, target)) continue;
        } else {
            if (place == 4 || place == 2 ? !next_on_equation(L, s, cx, target, place == 4)
                                         : !carve_next(L, s, cx, place))
                continue;
            if (place < 2) lay_main(L, cx, L->main, target);
            view_lesson_layout(L, s, cx->measure, cx->ud);
        }
        cand[place] = *L;
        ok[place] = 1;
        size[place] = lay_heads_size(L, s);
        rows[place] = L->next.k;
        waste[place] = next_waste(L, main, place);
        if (rows[place] > best_rows) best_rows = rows[place], best_size = -1;
        if (rows[place] == best_rows && size[place] > best_size) best_size = size[place];
    }
    /* every row of the panel first (a fill panel's five words, not two of them), then
       heads within 3 % of the largest, then the least room left empty beside the panel */
    int pick = -1;
    for (int place = 4; place >= 0; place--)
        if (ok[place] && rows[place] == best_rows && size[place] * 100 >= best_size * 97 &&
            (pick < 0 || waste[place] < waste[pick]))
            pick = place;
    if (pick >= 0) {
        *L = cand[pick];
        return;
    }
    L->main = main; /* it fits nowhere: the layer view alone */
    memset(&L->next, 0, sizeof L->next);
    lay_main(L, cx, main, target);
    view_lesson_layout(L, s, cx->measure, cx->ud);
}
