/* markup.c: the caption markup (headings and caption lines of a lesson) turned
 * into runs at the formula strip's three levels: X_ident and X^ident scripts,
 * _{...} and ^{...} groups of one level, *bold*, and backslash escapes. Pure: no
 * measuring, no drawing (layout_caption.c places the runs, caption.c draws them). */
#include <stdio.h>
#include <string.h>

#include "view.h"

typedef struct {
    view_markup_run *runs;
    int max, count;
    int level, bold;
    int open;       /* the current run can take more text */
    int overflow;   /* more runs than max */
    size_t bold_at; /* where the open '*' is */
    char *err;
    size_t errlen;
} mk_out;

static int is_ident(unsigned char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

/* Column (1-based, in characters) of byte offset off. */
static int column_of(const char *s, size_t off) {
    int col = 1; /* counted on its line: lines are the caption's lines */
    for (size_t i = 0; i < off && s[i]; i++)
        col = s[i] == '\n' ? 1 : col + (((unsigned char)s[i] & 0xC0) != 0x80);
    return col;
}

static int fail(mk_out *o, const char *s, size_t off, const char *what) {
    if (o->err && o->errlen) snprintf(o->err, o->errlen, "column %d: %s", column_of(s, off), what);
    return -1;
}

static void end_run(mk_out *o) {
    o->open = 0;
}

/* Appends bytes (one character, or a space) to the current run, starting a new
 * one when the level or weight changed or the run is full. */
static void put(mk_out *o, const char *b, size_t n) {
    if (!o->runs) return; /* a check: nothing stored */
    view_markup_run *r = o->open && o->count > 0 ? &o->runs[o->count - 1] : NULL;
    if (r &&
        (r->level != o->level || r->bold != o->bold || strlen(r->text) + n >= VIEW_MARKUP_RUN_TEXT))
        r = NULL;
    if (!r) {
        if (o->count >= o->max) {
            o->overflow = 1;
            return;
        }
        r = &o->runs[o->count++];
        r->text[0] = '\0';
        r->level = o->level;
        r->bold = o->bold;
        o->open = 1;
    }
    size_t len = strlen(r->text);
    memcpy(r->text + len, b, n);
    r->text[len + n] = '\0';
}

/* Length in bytes of the UTF-8 character at p (1 for a stray byte). */
static size_t char_len(const unsigned char *p) {
    size_t n = *p < 0x80 ? 1 : (*p >> 5) == 6 ? 2 : (*p >> 4) == 14 ? 3 : (*p >> 3) == 30 ? 4 : 1;
    for (size_t i = 1; i < n; i++)
        if ((p[i] & 0xC0) != 0x80) return 1;
    return n;
}

/* A plain character (or a resolved escape) at the current level: at level 0 a
   space is a run of its own, so lines can wrap there. */
static void put_char(mk_out *o, const char *b, size_t n) {
    if (o->level == 0 && n == 1 && (b[0] == ' ' || b[0] == '\t')) {
        end_run(o);
        put(o, " ", 1);
        end_run(o);
        return;
    }
    put(o, b, n);
}

/* An escape at s + i ('\\' there): the literal it stands for, or an error. */
static int escape(mk_out *o, const char *s, size_t *i) {
    const char c = s[*i + 1];
    if (c == '\0') return fail(o, s, *i, "'\\' at the end (write \\\\ for a backslash)");
    if (!strchr("_^{}*\\", c))
        return fail(o, s, *i, "unknown escape (only \\_ \\^ \\{ \\} \\* \\\\)");
    put_char(o, &c, 1);
    *i += 2;
    return 0;
}

/* A script after '_' or '^' at s + *i: an identifier, ^-digits, or a {group} of
   one level (inside it _ and ^ are literal; groups do not nest). */
static int script(mk_out *o, const char *s, size_t *i) {
    const size_t at = *i;
    const int sup = s[at] == '^';
    size_t p = at + 1;
    const int saved = o->level;
    end_run(o);
    o->level = sup ? 1 : -1;
    if (s[p] == '{') {
        const size_t open_at = p++;
        int chars = 0;
        for (;;) {
            const unsigned char c = (unsigned char)s[p];
            if (c == '\0') return fail(o, s, open_at, "'{' is never closed");
            if (c == '}') break;
            if (c == '{') return fail(o, s, p, "groups do not nest (write \\{ for a brace)");
            if (c == '\n') return fail(o, s, open_at, "'{' is never closed on its line");
            if (c == '\\') {
                if (escape(o, s, &p)) return -1;
            } else if (c == '*') {
                o->bold = !o->bold;
                if (o->bold) o->bold_at = p;
                end_run(o);
                p++;
            } else {
                size_t n = char_len((const unsigned char *)s + p);
                put(o, s + p, n);
                p += n;
            }
            chars++;
        }
        if (chars == 0) return fail(o, s, open_at, "empty group {}");
        p++; /* the '}' */
    } else if (sup && s[p] == '-' && s[p + 1] >= '0' && s[p + 1] <= '9') {
        put(o, "\xE2\x88\x92", 3); /* − */
        for (p++; s[p] >= '0' && s[p] <= '9'; p++) put(o, s + p, 1);
    } else if (is_ident((unsigned char)s[p])) {
        for (; is_ident((unsigned char)s[p]); p++) put(o, s + p, 1);
    } else {
        return fail(o, s, at,
                    sup ? "'^' with no superscript after it (a letter, a digit, -1 or {...}; "
                          "\\^ for the sign)"
                        : "'_' with no subscript after it (a letter, a digit or {...}; \\_ for "
                          "the sign)");
    }
    end_run(o);
    o->level = saved;
    *i = p;
    return 0;
}

static int parse(const char *markup, mk_out *o) {
    const char *s = markup ? markup : "";
    size_t i = 0;
    while (s[i]) {
        const char c = s[i];
        if (c == '\\') {
            if (escape(o, s, &i)) return -1;
        } else if (c == '_' || c == '^') {
            if (script(o, s, &i)) return -1;
        } else if (c == '{') {
            return fail(o, s, i, "'{' opens a group only after _ or ^ (write \\{ for a brace)");
        } else if (c == '}') {
            return fail(o, s, i, "'}' closes no group (write \\} for a brace)");
        } else if (c == '*') {
            o->bold = !o->bold;
            if (o->bold) o->bold_at = i;
            end_run(o);
            i++;
        } else if (c == '\n') { /* lines are the caller's: a new run */
            end_run(o);
            put(o, "\n", 1);
            end_run(o);
            i++;
        } else {
            size_t n = char_len((const unsigned char *)s + i);
            put_char(o, s + i, n);
            i += n;
        }
    }
    if (o->bold) return fail(o, s, o->bold_at, "'*' is never closed (write \\* for a star)");
    if (o->overflow) return fail(o, s, i, "too long");
    return 0;
}

int view_markup_runs(const char *markup, view_markup_run *runs, int max, char *err, size_t errlen) {
    static view_markup_run none[1];
    mk_out o = {
        .runs = runs ? runs : none, .max = runs && max > 0 ? max : 0, .err = err, .errlen = errlen};
    if (err && errlen) err[0] = '\0';
    return parse(markup, &o) ? -1 : o.count;
}

int view_markup_check(const char *markup, char *err, size_t errlen) {
    mk_out o = {.runs = NULL, .err = err, .errlen = errlen}; /* no runs kept */
    if (err && errlen) err[0] = '\0';
    if (parse(markup, &o)) return -1;
    return 0;
}
