/* editor.c: the text field's layout: the prompt, the text wrapped into lines at
 * word boundaries and scrolled so the cursor's line shows, the cursor's place,
 * and which byte a click lands on. Drawing it is overlays.c's job; editing the
 * text is the app's. */
#include <stdio.h>
#include <string.h>

#include "view_internal.h"

#define EDIT_BUF (8192 + 512) /* the app's field and an IME composition */

static int is_cont(char c) {
    return ((unsigned char)c & 0xC0) == 0x80;
}

static int next_char(const char *d, int at) {
    if (!d[at]) return at;
    at++;
    while (d[at] && is_cont(d[at])) at++;
    return at;
}

int view_edit_text(char *buf, size_t len, const view_state *s) {
    const char *t = s->edit_text ? s->edit_text : "";
    const char *pre = s->edit_preedit ? s->edit_preedit : "";
    int tl = (int)strlen(t), c = s->edit_cursor;
    if (c < 0 || c > tl) c = tl;
    int n = snprintf(buf, len, "%.*s%s%s", c, t, pre, t + c);
    if (n < 0) n = 0;
    if ((size_t)n >= len) n = (int)len - 1;
    for (int i = 0; i < n; i++)
        if (buf[i] == '\n' || buf[i] == '\t' || buf[i] == '\r') buf[i] = ' ';
    while (n > 0 && is_cont(buf[n])) n--; /* a cut never leaves half a character */
    buf[n] = '\0';
    return n;
}

/* Width of d[from, to) at the field's size. */
static int span_width(const char *d, int from, int to, int size, view_measure_fn measure,
                      void *ud) {
    char tmp[EDIT_BUF];
    int l = to - from;
    if (l <= 0) return 0;
    memcpy(tmp, d + from, (size_t)l);
    tmp[l] = '\0';
    return view_text_width(measure, ud, tmp, size, 0);
}

/* One line from p: the longest run ending at a word's end that fits width (or,
 * when the first word alone does not fit, as many characters as fit, at least
 * one). Sets *end to where the line's text ends; returns where the next starts. */
static int wrap_line(const char *d, int len, int p, int width, int size, view_measure_fn measure,
                     void *ud, int *end) {
    int best = -1;
    for (int e = p + 1; e <= len; e++) {
        if (!(e == len || (d[e] == ' ' && d[e - 1] != ' '))) continue;
        if (span_width(d, p, e, size, measure, ud) > width) break;
        best = e;
    }
    if (best < 0) { /* one word wider than the field: break inside it */
        best = next_char(d, p);
        for (int e = next_char(d, best); e <= len && e > best; e = next_char(d, e)) {
            if (span_width(d, p, e, size, measure, ud) > width) break;
            best = e;
        }
    }
    *end = best;
    int next = best;
    while (next < len && d[next] == ' ') next++;
    return next;
}

void view_editor_layout(view_editor *E, const view_state *s, const view_layout *L,
                        view_measure_fn measure, void *ud) {
    memset(E, 0, sizeof *E);
    E->size = L->font_title;
    E->line = L->font > 0 ? L->line * E->size / L->font : L->line;
    if (E->line < 1) E->line = 1;
    const int pad = L->pad;
    E->box = (view_rect){L->gap, L->header.y, s->width - 2 * L->gap, 0};
    int width = E->box.w - 2 * pad;
    if (width < 1) width = 1;
    int room = (s->height * 45 / 100 - 2 * L->line - 4 * pad) / E->line;
    int max_shown = room < 1 ? 1 : (room > VIEW_EDIT_MAX_LINES ? VIEW_EDIT_MAX_LINES : room);

    char d[EDIT_BUF];
    int len = view_edit_text(d, sizeof d, s);
    int pre = s->edit_preedit ? (int)strlen(s->edit_preedit) : 0;
    int c = s->edit_cursor + pre; /* the cursor stands after the composition */
    if (c > len) c = len;

    /* pass 1: how many lines, and which one holds the cursor */
    int total = 0, cursor_line = 0;
    for (int p = 0, e;; total++) {
        int next = len == 0 ? 0 : wrap_line(d, len, p, width, E->size, measure, ud, &e);
        if (c >= p && (c < next || next >= len)) cursor_line = total;
        if (next >= len) {
            total++;
            break;
        }
        p = next;
    }
    int first = 0;
    if (total > max_shown) {
        first = cursor_line - max_shown / 2;
        if (first > total - max_shown) first = total - max_shown;
        if (first < 0) first = 0;
    }
    E->total_lines = total;
    E->first_line = first;
    E->shown = total < max_shown ? total : max_shown;

    /* pass 2: the shown lines */
    E->cursor_line = -1;
    for (int p = 0, i = 0, e = 0; i < first + E->shown; i++) {
        int next = len == 0 ? 0 : wrap_line(d, len, p, width, E->size, measure, ud, &e);
        if (len == 0) e = 0;
        if (i >= first) {
            int k = i - first;
            E->start[k] = p;
            E->end[k] = e;
            E->start[k + 1] = next >= len ? len : next;
            if (i == cursor_line) {
                E->cursor_line = k;
                E->cursor_x = span_width(d, p, c, E->size, measure, ud);
            }
        }
        p = next;
    }

    E->prompt_x = E->box.x + pad;
    E->prompt_y = E->box.y + pad;
    E->text_x = E->box.x + pad;
    E->text_y = E->prompt_y + L->line + pad;
    E->count_x = E->text_x;
    E->count_y = E->text_y + E->shown * E->line + pad;
    E->box.h = E->count_y + L->line + pad - E->box.y;
    E->cursor_x += E->text_x;
}

int view_editor_offset(const view_editor *E, const view_state *s, int x, int y,
                       view_measure_fn measure, void *ud) {
    const view_rect b = E->box;
    if (x < b.x || y < b.y || x >= b.x + b.w || y >= b.y + b.h || E->shown < 1) return -1;
    int k = (y - E->text_y) / E->line;
    if (y < E->text_y) k = 0;
    if (k >= E->shown) k = E->shown - 1;
    char d[EDIT_BUF];
    int len = view_edit_text(d, sizeof d, s);
    int from = E->start[k], to = k + 1 < E->shown ? E->start[k + 1] : len;
    if (to > from && k + 1 < E->shown) to--; /* a click past a line's end: before the next */
    int best = from, best_dist = -1;
    for (int o = from;; o = next_char(d, o)) {
        int dist = span_width(d, from, o, E->size, measure, ud) - (x - E->text_x);
        if (dist < 0) dist = -dist;
        if (best_dist < 0 || dist < best_dist) best = o, best_dist = dist;
        if (o >= to) break;
    }
    /* back from the shown text to the field's own bytes */
    int pre = s->edit_preedit ? (int)strlen(s->edit_preedit) : 0;
    if (best > s->edit_cursor) best = best < s->edit_cursor + pre ? s->edit_cursor : best - pre;
    return best;
}
