/* test_layout_room.c: two properties of projected layouts (README, "Legible from the
 * back of the room"), from the layout's own rectangles and text sizes, with the fake
 * text measure (no font needed):
 * - room: where a panel is shrunk (heads whose tokens are not all labelled, the side
 *   panels on but given no room) or paged, the largest rectangle of the main area that
 *   meets none of the layout's rectangles (layout_items.h, largest_empty) is at most
 *   15 % of the window, in presentation mode at the layout sweep's 16:9 sizes and at
 *   1024x768, and nothing placed over anything else;
 * - text: presenting, in the window as on a deck page (presentation as a figure),
 *   with or without the lesson's caption band, no text is under its floor: the
 *   caption's under 1/VIEW_CAPTION_FLOOR_DIV of the height, any other under
 *   view_text_floor. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "layout_items.h"

/* the presentation sizes: the layout sweep's 16:9 windows, and a 4:3 projector's */
static const int SIZES[][2] = {{1280, 720},  {1600, 900},  {1920, 1080},
                               {2560, 1440}, {3840, 2160}, {1024, 768}};
#define NSIZES ((int)(sizeof SIZES / sizeof SIZES[0]))

/* n, d_model, h: the built-in lessons' layers and a spread of h */
static const int MODELS[][3] = {{7, 64, 4},   {12, 64, 4},   {12, 64, 1},   {12, 64, 2},
                                {12, 64, 8},  {12, 64, 16},  {7, 96, 3},    {2, 64, 2},
                                {1, 64, 1},   {100, 64, 8},  {512, 64, 16}, {7, 96, 48},
                                {40, 64, 32}, {512, 64, 64}, {12, 64, 64},  {512, 256, 1}};
#define NMODELS ((int)(sizeof MODELS / sizeof MODELS[0]))

#define ROOM_MAX_PERCENT 15

static const view_caption ROOM_CAPTION = {
    "Multi-head attention, step by step",
    "Four heads, four views of one input",
    "Previous word, next word, first token, itself: each head its own similarity space,\n"
    "each with at least 0.9 of its weight where its title says.",
    10,
    11,
    0,
    0};

/* A panel shrunk or paged: more than one page of heads, heads whose tokens are not
   all labelled, or the side panels on and given no room. */
static int shrunk_or_paged(const view_layout *L, const view_state *s) {
    return L->pages > 1 || (L->shown_heads > 0 && L->label_stride != 1) ||
           (s->lesson && !L->lesson_shown);
}

static void check_text_floor(const view_layout *L, const view_state *s);

/* Nothing the layout placed overlaps another (the formula strip holds its runs):
   the room is not made by stacking one thing on another. */
static void check_apart(const items *it) {
    for (int i = 0; i < it->n; i++)
        for (int j = i + 1; j < it->n; j++)
            if (!overlap_allowed(it->v[i].kind, it->v[j].kind))
                EXPECT(!fx_rect_overlap(it->v[i].r, it->v[j].r),
                       "expected no overlap, got %s " FX_RFMT " overlapping %s " FX_RFMT,
                       it->v[i].name, FX_R(it->v[i].r), it->v[j].name, FX_R(it->v[j].r));
}

/* The room check of one layout; returns 1 when it holds. */
static int room_holds(const view_layout *L, const view_state *s) {
    static items it;
    collect(&it, L);
    check_apart(&it);
    view_rect r;
    const long empty = largest_empty(&it, room_area(L), &r);
    const long window = (long)s->width * s->height;
    if (!shrunk_or_paged(L, s)) return 1;
    EXPECT(empty * 100 <= window * ROOM_MAX_PERCENT,
           "expected no empty room over %d %% of the window while a panel is shrunk or paged "
           "(pages %d, label stride %d, side panels %s), got %.1f %% at " FX_RFMT,
           ROOM_MAX_PERCENT, L->pages, L->label_stride,
           s->lesson ? (L->lesson_shown ? "shown" : "no room") : "off",
           100.0 * (double)empty / (double)window, FX_R(r));
    return empty * 100 <= window * ROOM_MAX_PERCENT;
}

static void test_room(void **st) {
    (void)st;
    fx_reset();
    static view_layout L;
    for (int m = 0; m < NMODELS; m++) {
        fx_model fm;
        fx_model_make(&fm, MODELS[m][0], MODELS[m][1], MODELS[m][2], MHA_MASK_NONE);
        for (int k = 0; k < NSIZES; k++)
            for (int lesson = 0; lesson < 4; lesson++) { /* panels off, on; with a caption */
                view_state s;
                fx_state(&s, &fm, SIZES[k][0], SIZES[k][1]);
                s.look.present = 1;
                s.lesson = lesson & 1;
                s.caption = lesson & 2 ? &ROOM_CAPTION : NULL;
                s.look.zoom = s.zoom_base = view_zoom_for_size(s.width, s.height);
                snprintf(fx_where, sizeof fx_where, "n=%d d=%d h=%d %dx%d present, panels %s%s",
                         MODELS[m][0], MODELS[m][1], MODELS[m][2], s.width, s.height,
                         s.lesson ? "on" : "off", s.caption ? ", a caption" : "");
                view_layout_compute(&L, &s, fx_measure, NULL);
                room_holds(&L, &s);
                check_text_floor(&L, &s);
            }
        fx_model_free(&fm);
    }
    fx_finish("room");
}

/* Presenting at 16:9 sizes where the side panels give way to the heads (heads of about
   380 px at 1920x1080), they take a page of their own: over the pages, every head is on
   one, the panels on one, and every page says where the panels are while they are not
   on it ("panels on page 2 of 2" on a page of heads, "page 2 of 2: the panels" on
   theirs), no text under the floor, the room rule held. */
static void test_panels_paged(void **st) {
    (void)st;
    fx_reset();
    static view_layout L;
    static const int sizes[][2] = {{1600, 900}, {1920, 1080}, {2560, 1440}};
    static const int models[][3] = {{7, 64, 4}, {12, 64, 4}, {12, 64, 8}, {40, 64, 32}};
    for (int m = 0; m < 4; m++) {
        fx_model fm;
        fx_model_make(&fm, models[m][0], models[m][1], models[m][2], MHA_MASK_NONE);
        for (int k = 0; k < 3; k++)
            for (int cap = 0; cap < 2; cap++) {
                int seen[VIEW_MAX_VISIBLE * 2] = {0}, panels_seen = 0, pages = 1;
                for (int p = 0; p < pages && p < 64; p++) {
                    view_state s;
                    fx_state(&s, &fm, sizes[k][0], sizes[k][1]);
                    s.look.present = 1;
                    s.lesson = 1;
                    s.caption = cap ? &ROOM_CAPTION : NULL;
                    s.look.zoom = s.zoom_base = view_zoom_for_size(s.width, s.height);
                    s.look.page = p;
                    snprintf(fx_where, sizeof fx_where, "n=%d h=%d %dx%d present%s, page %d",
                             models[m][0], models[m][2], s.width, s.height,
                             cap ? ", a caption" : "", p + 1);
                    view_layout_compute(&L, &s, fx_measure, NULL);
                    pages = L.pages > 0 ? L.pages : 1;
                    for (int i = 0; i < L.shown_heads; i++)
                        if (L.first_head + i < VIEW_MAX_VISIBLE * 2) seen[L.first_head + i] = 1;
                    panels_seen |= L.lesson_shown;
                    if (!L.lesson_shown || L.panels_page > 0) { /* where they went, which page */
                        char want[48];
                        if (L.lesson_shown)
                            snprintf(want, sizeof want, "page %d of %d: the panels", L.pages,
                                     L.pages);
                        else
                            snprintf(want, sizeof want, "panels on page %d of %d", L.pages,
                                     L.pages);
                        int said = 0;
                        for (int i = 0; i < L.hdr_count; i++)
                            said |= strstr(L.hdr_runs[i].text, want) != NULL;
                        EXPECT(said, "expected the header to say \"%s\"", want);
                    }
                    room_holds(&L, &s);
                    check_text_floor(&L, &s);
                }
                snprintf(fx_where, sizeof fx_where, "n=%d h=%d %dx%d present%s, %d pages",
                         models[m][0], models[m][2], sizes[k][0], sizes[k][1],
                         cap ? ", a caption" : "", pages);
                EXPECT(panels_seen, "expected the side panels on one of the pages");
                for (int i = 0; i < models[m][2]; i++)
                    EXPECT(seen[i], "expected head %d on one of the pages", i + 1);
            }
        fx_model_free(&fm);
    }
    fx_finish("panels paged");
}

/* An encoder's fill-the-blank panel (lesson 5's step 4: BERT's 12 layers of 12 heads,
   12 tokens with [CLS] and [SEP], one blank) shows its five rows presenting, as a deck
   page with the lesson's caption and in the window: at 1600x900 the deck showed 2 of
   them (3 here), in a strip under the heads, while a column beside them had room. */
static void test_fill_rows(void **st) {
    (void)st;
    fx_reset();
    static view_layout L;
    static const int sizes[][2] = {{1600, 900}, {1920, 1080}, {1280, 720}, {1024, 768}};
    const view_caption cap = {"Both directions: GPT-2 and BERT",
                              "Fill the blank",
                              "Type [MASK] in the text: the masked-LM head fills the blank, and "
                              "the panel lists\nthe words it would put there, the most likely "
                              "first, each with its probability.\nThe blank's row reads the "
                              "words after it too: \"because it was tired\".",
                              4,
                              5,
                              0,
                              0};
    static const char *const words[5] = {"x", "paris", "##u", "##ch", "was"};
    view_next next = {0};
    next.k = 5;
    next.title = "Fill the blank";
    next.group[0] = "token 7: the ___ because";
    for (int i = 0; i < 5; i++)
        next.token[i] = words[i], next.p[i] = 0.5f / (float)(i + 1), next.p_full[i] = -1.0f;
    fx_model fm;
    fx_model_make(&fm, 12, 48, 12, MHA_MASK_NONE);
    for (int k = 0; k < 4; k++)
        for (int deck = 0; deck < 2; deck++) {
            view_state s;
            fx_state(&s, &fm, sizes[k][0], sizes[k][1]);
            s.look.present = 1;
            s.figure = s.one_page = deck;
            s.caption = &cap;
            s.next = &next;
            s.look.zoom = s.zoom_base = view_zoom_for_size(s.width, s.height);
            snprintf(fx_where, sizeof fx_where, "fill panel, %dx%d %s", s.width, s.height,
                     deck ? "deck page" : "presenting");
            view_layout_compute(&L, &s, fx_measure, NULL);
            EXPECT(L.next.shown && L.next.k == 5, "expected the panel's 5 rows, got %d",
                   L.next.shown ? L.next.k : 0);
            room_holds(&L, &s);
            check_text_floor(&L, &s);
        }
    fx_model_free(&fm);
    fx_finish("fill rows");
}

/* A step-through's square stage (3-6) presented with a lesson's caption band fills
   the height it has: only its chips and formula stand above its square, the header
   and the formula strip go beside it, under its note (layout.c, bare_stage). */
static void test_stage_fills(void **st) {
    (void)st;
    fx_reset();
    static view_layout L;
    const view_caption cap = {"Multi-head attention, step by step",
                              "Scores: S_1 = Q_1 K_1^T",
                              "One score for every query row and key column.",
                              3,
                              11,
                              0,
                              0};
    static const int ns[] = {7, 12, 40};
    for (int ni = 0; ni < 3; ni++) {
        fx_model fm;
        fx_model_make(&fm, ns[ni], 64, 4, MHA_MASK_CAUSAL);
        for (int k = 0; k < NSIZES; k++)
            for (int stage = 3; stage <= 6; stage++)
                for (int figure = 0; figure < 2; figure++) {
                    view_state s;
                    fx_state(&s, &fm, SIZES[k][0], SIZES[k][1]);
                    s.look.present = 1;
                    s.figure = figure;
                    s.caption = &cap;
                    s.look.focus = 1;
                    s.look.step = stage;
                    s.look.zoom = s.zoom_base = view_zoom_for_size(s.width, s.height);
                    snprintf(fx_where, sizeof fx_where, "n=%d %dx%d %s, stage %d", ns[ni], s.width,
                             s.height, figure ? "deck page" : "present", stage);
                    view_layout_compute(&L, &s, fx_measure, NULL);
                    EXPECT(L.steps.shown && L.steps.bigs == 1, "expected the stage's square");
                    const view_rect m = L.steps.big[0].map;
                    for (int i = 0; i < L.hdr_count; i++)
                        EXPECT(L.hdr_runs[i].y >= m.y,
                               "header \"%s\" at y %d: expected beside the square (top %d)",
                               L.hdr_runs[i].text, L.hdr_runs[i].y, m.y);
                    for (int i = 0; i < L.run_count; i++)
                        EXPECT(L.runs[i].y >= m.y,
                               "formula \"%s\" at y %d: expected beside the square (top %d)",
                               L.runs[i].text, L.runs[i].y, m.y);
                }
        fx_model_free(&fm);
    }
    fx_finish("stage fills");
}

/* The check catches an empty column: the layout above with its equation and side
   panels taken away while its heads are paged leaves their room empty. */
static void test_room_catches(void **st) {
    (void)st;
    fx_reset();
    static view_layout L;
    fx_model fm;
    fx_model_make(&fm, 12, 64, 16, MHA_MASK_NONE);
    view_state s;
    fx_state(&s, &fm, 1280, 720);
    s.look.present = 1;
    s.lesson = 1;
    view_layout_compute(&L, &s, fx_measure, NULL);
    memset(&L.concat, 0, sizeof L.concat);
    memset(&L.w_o, 0, sizeof L.w_o);
    memset(&L.out, 0, sizeof L.out);
    L.lesson_shown = 0;
    L.pages = 2;
    const long before = fx_sandbox_begin();
    const int held = room_holds(&L, &s);
    fx_model_free(&fm);
    assert_int_equal(1, fx_sandbox_end(before));
    assert_false(held);
}

/* --- the text floor of a presentation -------------------------------------------- */

static void floor_check(const char *what, int size, int floor) {
    EXPECT(size >= floor, "%s: expected at least %d px (the page's floor), got %d", what, floor,
           size);
}

/* Every text size the layout gives a presentation (a deck page, the window presenting),
   against its floors. */
static void check_text_floor(const view_layout *L, const view_state *s) {
    const int fl = view_text_floor(s->width, s->height);
    const int cap_fl = (s->height + VIEW_CAPTION_FLOOR_DIV - 1) / VIEW_CAPTION_FLOOR_DIV;
    floor_check("data text", L->font, fl);
    floor_check("data small text", L->font_small, fl);
    floor_check("titles", L->font_title, fl);
    for (int i = 0; i < L->hdr_count; i++) floor_check("header", L->hdr_runs[i].size, fl);
    /* the formula's sub- and superscripts are 0.72 of its text (layout_chrome.c) */
    floor_check("formula", L->ui_font, fl);
    const int script = (int)lroundf((float)L->ui_font * 0.72f);
    for (int i = 0; i < L->run_count; i++)
        if (L->runs[i].size != script) floor_check("formula", L->runs[i].size, fl);
    if (L->show_row_labels || L->show_col_labels) floor_check("token labels", L->label_size, fl);
    if (L->eq_font > 0) floor_check("equation's small text", L->eq_font_small, fl);
    if (L->lesson_shown && L->cost_font > 0) floor_check("cost panel", L->cost_font, fl);
    if (L->lesson_note.w > 0) floor_check("side panels' note", L->lesson_note_size, fl);
    const view_steps *S = &L->steps;
    if (S->shown) {
        floor_check("stage chips", S->chip_size, fl);
        floor_check("stage formula", S->caption_size, fl);
        if (S->notes > 0) floor_check("stage note", S->note_size, fl);
        if (S->label_stride > 0) floor_check("stage token labels", S->label_size, fl);
    }
    const view_caption_box *C = &L->caption;
    if (C->shown) {
        floor_check("caption heading", C->heading_size, cap_fl);
        floor_check("caption text", C->text_size, cap_fl);
        floor_check("caption's step line", C->meta_size, cap_fl);
    }
}

static void test_present_text_floor(void **st) {
    (void)st;
    fx_reset();
    static view_layout L;
    static const int pages[][2] = {{1920, 1080}, {1280, 720}, {1024, 768}, {3840, 2160}};
    const view_caption cap = {"Multi-head attention, step by step",
                              "Scores: S_1 = Q_1 K_1^T",
                              "One score for every query row and key column.",
                              3,
                              11,
                              0,
                              0};
    fx_model fm;
    fx_model_make(&fm, 12, 64, 4, MHA_MASK_CAUSAL);
    for (int p = 0; p < 4; p++)
        for (int step = 0; step <= 9; step += 3)         /* the layer view, then stages 3, 6, 9 */
            for (int lesson = 0; lesson < 4; lesson++) { /* panels off, on; a deck page */
                view_state s;
                fx_state(&s, &fm, pages[p][0], pages[p][1]);
                s.look.present = 1;
                s.figure = lesson >= 2;
                s.lesson = lesson & 1;
                s.caption = &cap;
                s.look.focus = step ? 1 : 0;
                s.look.step = step;
                snprintf(fx_where, sizeof fx_where, "%s %dx%d, stage %d, panels %s",
                         s.figure ? "deck page" : "presenting", s.width, s.height, step,
                         s.lesson ? "on" : "off");
                view_layout_compute(&L, &s, fx_measure, NULL);
                EXPECT(L.caption.shown, "expected the caption band shown");
                check_text_floor(&L, &s);
            }
    fx_model_free(&fm);
    fx_finish("presentation text floor");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_room),         cmocka_unit_test(test_room_catches),
        cmocka_unit_test(test_panels_paged), cmocka_unit_test(test_fill_rows),
        cmocka_unit_test(test_stage_fills),  cmocka_unit_test(test_present_text_floor),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
