/* labels.c: text as the view shows it: token labels, subscript digits, shape
 * labels ("12 × 64"), numbers, text cut to fit a width, runs with sub- and
 * superscripts, and a switched-off head's veil with its note (the heads grid's and
 * the head view's). Both layout and the panels use it; where text goes is theirs. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "view.h"
#include "view_internal.h"

static void copy_cut(char *buf, size_t len, const char *src);

void view_token_label(char *buf, size_t len, const char *tok) {
    size_t o = 0;
    int chars = 0;
    const unsigned char *p = (const unsigned char *)tok;
    while (*p && o + 8 < len) {
        int l = 1;
        if (*p >= 0xF0)
            l = 4;
        else if (*p >= 0xE0)
            l = 3;
        else if (*p >= 0xC0)
            l = 2;
        if (chars == VIEW_LABEL_CHARS - 1 && p[l - 1] && strlen((const char *)p) > (size_t)l) {
            memcpy(buf + o, "\xE2\x80\xA6", 3); /* … */
            o += 3;
            break;
        }
        for (int i = 0; i < l && p[i]; i++) buf[o++] = (char)p[i];
        p += l;
        chars++;
    }
    buf[o] = '\0';
}

void view_subscript(char *buf, size_t len, int v) {
    char digits[16];
    snprintf(digits, sizeof digits, "%d", v);
    size_t o = 0;
    for (const char *p = digits; *p && o + 4 < len; p++) {
        /* U+2080..U+2089 */
        buf[o++] = (char)0xE2;
        buf[o++] = (char)0x82;
        buf[o++] = (char)(0x80 + (*p - '0'));
    }
    buf[o] = '\0';
}

void view_shape_label(char *buf, size_t len, int rows, int cols) {
    char t[48]; /* "rows × cols", U+00D7 multiplication sign */
    size_t o = (size_t)view_int_text(t, sizeof t, rows);
    memcpy(t + o, " \xC3\x97 ", 4);
    view_int_text(t + o + 4, sizeof t - o - 4, cols);
    copy_cut(buf, len, t);
}

/* Digits by hand, not snprintf: the layout writes these thousands of times a
 * layout, and with OpenBLAS's libquadmath loaded (it registers printf types) every
 * glibc printf call takes its slow positional path. */
int view_int_text(char *buf, size_t len, int v) {
    char t[16];
    int n = 0;
    unsigned long long u = v < 0 ? 0ull - (unsigned long long)v : (unsigned long long)v;
    do t[n++] = (char)('0' + u % 10);
    while (u /= 10);
    if (v < 0) t[n++] = '-';
    int o = 0;
    for (; n > 0 && (size_t)o + 1 < len; o++) buf[o] = t[--n];
    if (len) buf[o] = '\0';
    return o;
}

/* src into buf as snprintf("%s") would: cut to len - 1 bytes. */
static void copy_cut(char *buf, size_t len, const char *src) {
    if (!len) return;
    size_t n = strlen(src);
    if (n > len - 1) n = len - 1;
    memcpy(buf, src, n);
    buf[n] = '\0';
}

int view_text_width(view_measure_fn measure, void *ud, const char *s, int size, int bold) {
    int w = 0, h = 0;
    measure(ud, s, size, bold, &w, &h);
    return w;
}

int view_label_max_width(const view_state *s, int size, view_measure_fn measure, void *ud) {
    int w = 0;
    char buf[64];
    const attn_layer *layer = s->layer;
    if (!layer) return 0;
    for (int i = 0; i < layer->n_real; i++) {
        view_token_label(buf, sizeof buf, attn_layer_token(layer, i));
        int lw = view_text_width(measure, ud, buf, size, 0);
        if (lw > w) w = lw;
    }
    if (layer->n > layer->n_real) { /* padding positions are labelled as the layer says */
        int lw = view_text_width(measure, ud, attn_layer_token(layer, layer->n_real), size, 0);
        if (lw > w) w = lw;
    }
    return w;
}

void view_fit_text(char *buf, size_t len, const char *s, int maxw, int size, int bold,
                   view_measure_fn measure, void *ud) {
    snprintf(buf, len, "%s", s);
    if (view_text_width(measure, ud, buf, size, bold) <= maxw) return;
    size_t l = strlen(buf);
    while (l > 0) {
        l--;
        while (l > 0 && ((unsigned char)buf[l] & 0xC0) == 0x80) l--;
        if (l + 4 > len) continue;
        memcpy(buf + l, "\xE2\x80\xA6", 4); /* "…" and NUL */
        if (view_text_width(measure, ud, buf, size, bold) <= maxw) return;
    }
    buf[0] = '\0';
}

void view_fit_first(const view_ctx *c, char *out, size_t len, const char *const *forms, int count,
                    int w, int size, int bold) {
    for (int i = 0; i < count; i++)
        if (view_tw(c, forms[i], size, bold) <= w) {
            snprintf(out, len, "%s", forms[i]);
            return;
        }
    view_fit_text(out, len, forms[count - 1], w, size, bold, c->measure, c->ud);
}

void view_format_number(char *buf, size_t len, float v) {
    char num[16]; /* "%.3g" of a float is at most 10 bytes ("-1.23e+38") */
    if (fabsf(v) < 1e-9f) v = 0.0f;
    snprintf(num, sizeof num, "%.3g", (double)v);
    if (v < 0) /* typographic minus (3 bytes) in place of '-' */
        snprintf(buf, len, "\xE2\x88\x92%s", num + 1);
    else
        snprintf(buf, len, "%s", num);
}

void view_text_center(const view_ctx *c, view_rect r, const char *s, int size, rgba col, int bold) {
    int w = view_tw(c, s, size, bold);
    int x = r.x + (r.w - w) / 2;
    if (w > r.w) x = r.x;
    draw_text(c->dl, x, r.y + (r.h - c->L->line * size / c->L->font) / 2, s, size, col, bold, 0);
}

int view_script_runs_width(const view_ctx *c, const char *const *parts, const int *lvl, int count,
                           int size) {
    int w = 0;
    for (int i = 0; i < count; i++) {
        int sz = lvl[i] ? size * 72 / 100 : size;
        w += view_tw(c, parts[i], sz, lvl[i] == 0);
    }
    return w;
}

#define MARKUP_LINE_RUNS 48

int view_markup_width(const view_ctx *c, const char *markup, int size) {
    view_markup_run runs[MARKUP_LINE_RUNS];
    char err[80];
    const int n = view_markup_runs(markup, runs, MARKUP_LINE_RUNS, err, sizeof err);
    if (n < 0) return -1;
    int w = 0;
    for (int i = 0; i < n; i++)
        w += view_tw(c, runs[i].text, runs[i].level ? size * 72 / 100 : size, runs[i].bold);
    return w;
}

void view_draw_markup(const view_ctx *c, int x, int y, const char *markup, int size, rgba col) {
    view_markup_run runs[MARKUP_LINE_RUNS];
    char err[80];
    const int n = view_markup_runs(markup, runs, MARKUP_LINE_RUNS, err, sizeof err);
    if (n < 0) {
        draw_text(c->dl, x, y, markup, size, col, 0, 0);
        return;
    }
    for (int i = 0; i < n; i++) {
        const int sz = runs[i].level ? size * 72 / 100 : size;
        /* inline in a block of lines: scripts shifted less than the formula strip's,
           so a subscript stays inside its own line */
        const int dy =
            runs[i].level > 0 ? -size * 22 / 100 : (runs[i].level < 0 ? size * 22 / 100 : 0);
        draw_text(c->dl, x, y + dy, runs[i].text, sz, col, runs[i].bold, 0);
        x += view_tw(c, runs[i].text, sz, runs[i].bold);
    }
}

void view_draw_script_runs(const view_ctx *c, int x, int y, const char *const *parts,
                           const int *lvl, int count, int size, rgba col) {
    for (int i = 0; i < count; i++) {
        int sz = lvl[i] ? size * 72 / 100 : size;
        int dy = lvl[i] > 0 ? -size * 30 / 100 : (lvl[i] < 0 ? size * 42 / 100 : 0);
        draw_text(c->dl, x, y + dy, parts[i], sz, col, lvl[i] == 0, 0);
        x += view_tw(c, parts[i], sz, lvl[i] == 0);
    }
}

void view_draw_off_veil(const view_ctx *c, view_rect r) {
    rgba veil = c->th.bg;
    veil.a = 170;
    draw_fill(c->dl, r, veil);
    static const char *const forms[] = {"off: its band of Concat is 0", "Concat band = 0", "off"};
    for (size_t i = 0; i < sizeof forms / sizeof forms[0]; i++)
        if (view_tw(c, forms[i], c->L->font_small, 1) <= r.w - 4) {
            view_text_center(c, r, forms[i], c->L->font_small, c->th.text, 1);
            return;
        }
}
