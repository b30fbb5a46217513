/* test_editor.c: the text field's layout (src/view/editor.c) over many texts,
 * widths, zooms and cursor places: the lines cover the text exactly, each fits
 * the field unless one character cannot, the cursor's line is shown and holds
 * the cursor, everything stays inside the window, and a click at the cursor
 * lands back on it. A test at the end proves the checkers catch planted faults. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "view_fixture.h"

static uint64_t rng = 7;
static int rnd_below(int n) {
    rng = rng * 6364136223846793005ull + 1442695040888963407ull;
    return (int)((rng >> 33) % (uint64_t)n);
}

static void random_text(char *buf, size_t len, int words) {
    static const char *const parts[] = {"a",
                                        "attention",
                                        "heads",
                                        "Z\xC3\xBCrich",
                                        "\xE6\x9D\xB1",
                                        "x",
                                        "supercalifragilisticexpialidocious",
                                        ",",
                                        "don't",
                                        "\xF0\x9F\x98\x80"};
    size_t o = 0;
    buf[0] = '\0';
    for (int i = 0; i < words; i++) {
        const char *p = parts[rnd_below(10)];
        const char *sep = rnd_below(9) == 0 ? "\n" : (rnd_below(7) == 0 ? "  " : " ");
        if (o + strlen(p) + strlen(sep) + 1 >= len) break;
        o += (size_t)snprintf(buf + o, len - o, "%s%s", i ? sep : "", p);
    }
}

/* Checks one laid-out field; returns the number of broken properties. */
static int check_field(const view_editor *E, const view_state *s, const char *where) {
    int bad = 0;
    char d[8192 + 512];
    int len = view_edit_text(d, sizeof d, s);
    int width = E->box.w - 2 * (E->text_x - E->box.x);
#define BAD(...)                                                                                   \
    do {                                                                                           \
        if (bad++ < 3) {                                                                           \
            printf("%s: ", where);                                                                 \
            printf(__VA_ARGS__);                                                                   \
            printf("\n");                                                                          \
        }                                                                                          \
    } while (0)
    if (E->shown < 1 || E->shown > VIEW_EDIT_MAX_LINES) BAD("shown %d", E->shown);
    if (E->first_line == 0 && E->start[0] != 0) BAD("first line starts at %d", E->start[0]);
    if (E->first_line + E->shown == E->total_lines && E->start[E->shown] != len)
        BAD("last line ends at %d of %d", E->start[E->shown], len);
    for (int k = 0; k < E->shown; k++) {
        if (E->end[k] < E->start[k] || E->start[k + 1] < E->end[k])
            BAD("line %d: start %d end %d next %d", k, E->start[k], E->end[k], E->start[k + 1]);
        for (int i = E->end[k]; i < E->start[k + 1]; i++)
            if (d[i] != ' ') BAD("line %d drops byte %d (%02x)", k, i, (unsigned char)d[i]);
        int l = E->end[k] - E->start[k];
        char line[sizeof d];
        memcpy(line, d + E->start[k], (size_t)l);
        line[l] = '\0';
        if (fx_cp_count(line) > 1 && fx_text_w(line, E->size) > width)
            BAD("line %d is %d px wide in %d", k, fx_text_w(line, E->size), width);
        if (l > 0 && (d[E->start[k]] & 0xC0) == 0x80) BAD("line %d starts mid-character", k);
    }
    if (E->total_lines > 1 && E->shown < E->total_lines && E->cursor_line < 0)
        BAD("cursor line not shown (%d lines, %d shown)", E->total_lines, E->shown);
    if (E->cursor_line >= 0) {
        int c = s->edit_cursor + (s->edit_preedit ? (int)strlen(s->edit_preedit) : 0);
        int k = E->cursor_line;
        int last = E->first_line + k == E->total_lines - 1;
        if (c < E->start[k] || (c > E->start[k + 1]) || (c == E->start[k + 1] && !last && c != len))
            BAD("cursor %d not in line %d [%d, %d)", c, k, E->start[k], E->start[k + 1]);
        if (E->cursor_x < E->box.x || E->cursor_x > E->box.x + E->box.w)
            BAD("cursor x %d outside the box", E->cursor_x);
    }
    if (E->box.x < 0 || E->box.y < 0 || E->box.x + E->box.w > s->width ||
        E->box.y + E->box.h > s->height)
        BAD("box %d,%d %dx%d outside %dx%d", E->box.x, E->box.y, E->box.w, E->box.h, s->width,
            s->height);
    if (E->cursor_line >= 0 && !(s->edit_preedit && *s->edit_preedit)) {
        int at = view_editor_offset(E, s, E->cursor_x, E->text_y + E->cursor_line * E->line + 1,
                                    fx_measure, NULL);
        /* a click at the cursor lands on it (or on the spaces it stands among) */
        int ok = at == s->edit_cursor;
        for (int i = at < s->edit_cursor ? at : s->edit_cursor;
             !ok && i < (at > s->edit_cursor ? at : s->edit_cursor); i++)
            ok = d[i] == ' ';
        if (!ok) BAD("click at the cursor gave %d, cursor %d", at, s->edit_cursor);
    }
    if (view_editor_offset(E, s, E->box.x - 1, E->box.y, fx_measure, NULL) != -1)
        BAD("a click outside the box hit the text");
    return bad;
#undef BAD
}

static void make_state(view_state *s, fx_model *fm, const char *text, int w, int h, float zoom) {
    fx_state(s, fm, w, h);
    s->look.zoom = zoom;
    s->editing = 1;
    s->edit_text = text;
}

static void test_field_sweep(void **st) {
    (void)st;
    fx_model fm;
    fx_model_make(&fm, 5, 16, 2, MHA_MASK_NONE);
    static char text[8192];
    static const int sizes[][2] = {{800, 600}, {1600, 900}, {3840, 2160}, {900, 1600}};
    static const float zooms[] = {0.8f, 1.0f, 2.0f, 3.0f};
    int cases = 0, failures = 0;
    for (int t = 0; t < 300; t++) {
        int words = t < 5 ? t : rnd_below(t < 200 ? 60 : 1400);
        random_text(text, sizeof text, words);
        int len = (int)strlen(text);
        for (int z = 0; z < 4; z++) {
            view_state s;
            view_layout L;
            make_state(&s, &fm, text, sizes[(t + z) % 4][0], sizes[(t + z) % 4][1], zooms[z]);
            int c = len ? rnd_below(len + 1) : 0;
            while (c > 0 && (text[c] & 0xC0) == 0x80) c--;
            s.edit_cursor = t % 3 == 0 ? len : c;
            s.edit_preedit = t % 11 == 0 ? "\xE3\x81\x8B\xE3\x81\xAA" : "";
            view_layout_compute(&L, &s, fx_measure, NULL);
            view_editor E;
            view_editor_layout(&E, &s, &L, fx_measure, NULL);
            char where[96];
            snprintf(where, sizeof where, "text %d (%d bytes) %dx%d zoom %.1f cursor %d", t, len,
                     s.width, s.height, (double)zooms[z], s.edit_cursor);
            failures += check_field(&E, &s, where) > 0;
            cases++;
        }
    }
    printf("text field: %d cases, %d failing\n", cases, failures);
    CHECK_INT("failing cases", 0, failures);
    fx_model_free(&fm);
}

/* The checkers catch what they are for: broken layouts planted by hand. */
static void test_checkers_catch_faults(void **st) {
    (void)st;
    fx_model fm;
    fx_model_make(&fm, 5, 16, 2, MHA_MASK_NONE);
    static char text[4096];
    random_text(text, sizeof text, 300);
    view_state s;
    view_layout L;
    make_state(&s, &fm, text, 1600, 900, 1.0f);
    s.edit_cursor = (int)strlen(text) / 2;
    while ((text[s.edit_cursor] & 0xC0) == 0x80) s.edit_cursor--;
    view_layout_compute(&L, &s, fx_measure, NULL);
    view_editor E, F;
    view_editor_layout(&E, &s, &L, fx_measure, NULL);
    CHECK_INT("the real layout passes", 0, check_field(&E, &s, "real"));
    CHECK_TRUE("long text scrolls", E.total_lines > E.shown);
    F = E;
    F.end[1] = F.start[2] - 1 > F.end[1] ? F.end[1] : F.end[1] - 2; /* drops text */
    CHECK_TRUE("dropped bytes caught", check_field(&F, &s, "planted: dropped") > 0);
    F = E;
    F.end[0] = F.start[1] + 20 <= (int)strlen(text) ? F.start[1] + 20 : F.end[0];
    F.start[1] = F.end[0];
    CHECK_TRUE("too wide a line caught", check_field(&F, &s, "planted: wide") > 0);
    F = E;
    F.cursor_line = (F.cursor_line + 1) % F.shown;
    CHECK_TRUE("cursor on the wrong line caught", check_field(&F, &s, "planted: cursor") > 0);
    F = E;
    F.box.h = s.height;
    CHECK_TRUE("box past the window caught", check_field(&F, &s, "planted: box") > 0);
    fx_model_free(&fm);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_field_sweep),
        cmocka_unit_test(test_checkers_catch_faults),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
