/* edit.c: the text field's editing: a cursor kept at a character boundary, a
 * whole-text selection that the first key replaces, and the live token count.
 * Applying the text (tokenising, recomputing) is state.c's. No SDL. */
#include <stdio.h>
#include <string.h>

#include "samples.h"
#include "state_internal.h"

/* --- the text field: a cursor at a character boundary, and a whole-text
   selection that the first key replaces ----------------------------------------- */

static void count_tokens(app_state *s) {
    if (s->gpt) { /* a loaded model: its own tokenizer */
        s->edit_tokens = app_gpt_count(s, s->edit);
        return;
    }
    tok_list t = {0};
    int total = 0;
    char err[MHA_ERR_LEN];
    s->edit_tokens = tok_split(&t, s->edit, MHA_MAX_N, &total, err, sizeof err) == 0 ? total : 0;
    tok_free(&t);
}

static int is_cont(char c) {
    return ((unsigned char)c & 0xC0) == 0x80;
}

static int char_before(const char *t, int at) {
    while (at > 0 && is_cont(t[--at])) {
    }
    return at;
}

static int char_after(const char *t, int at) {
    if (!t[at]) return at;
    at++;
    while (t[at] && is_cont(t[at])) at++;
    return at;
}

static int is_space_at(const char *t, int at) {
    return t[at] == ' ' || t[at] == '\t' || t[at] == '\n' || t[at] == '\r';
}

void app_edit_start(app_state *s) {
    s->editing = 1;
    s->preedit[0] = '\0';
    const char *cur = s->sample ? samples_get(s->sample - 1)->text : s->custom;
    tok_copy_fit(s->edit, sizeof s->edit, cur);
    s->edit_cursor = (int)strlen(s->edit);
    s->edit_selected = s->edit[0] != '\0';
    count_tokens(s);
}

/* Removes the selected text, if any; returns 1 if there was a selection. */
static int edit_take_selection(app_state *s) {
    if (!s->edit_selected) return 0;
    s->edit[0] = '\0';
    s->edit_cursor = 0;
    s->edit_selected = 0;
    return 1;
}

/* Length of the valid UTF-8 sequence at p (1..4), or 0 when it is not one. */
static int utf8_len(const unsigned char *p) {
    if (p[0] < 0x80) return 1;
    int n = p[0] >= 0xF0 && p[0] <= 0xF4
                ? 4
                : (p[0] >= 0xE0 ? 3 : (p[0] >= 0xC2 && p[0] < 0xE0 ? 2 : 0));
    if (p[0] >= 0xF8) n = 0;
    for (int i = 1; i < n; i++)
        if ((p[i] & 0xC0) != 0x80) return 0;
    if (n == 3 && ((p[0] == 0xE0 && p[1] < 0xA0) || (p[0] == 0xED && p[1] >= 0xA0))) return 0;
    if (n == 4 && ((p[0] == 0xF0 && p[1] < 0x90) || (p[0] == 0xF4 && p[1] >= 0x90))) return 0;
    return n;
}

/* Copies text into out (len bytes), each byte that is not valid UTF-8 made U+FFFD
   as the tokenizer does, so the field never holds half a character. */
static void valid_utf8(char *out, size_t len, const char *text) {
    size_t o = 0;
    for (const unsigned char *p = (const unsigned char *)text; *p && o + 4 < len;) {
        int n = utf8_len(p);
        if (n == 0) {
            memcpy(out + o, "\xEF\xBF\xBD", 3);
            o += 3, p++;
        } else {
            memcpy(out + o, p, (size_t)n);
            o += (size_t)n, p += n;
        }
    }
    out[o] = '\0';
}

static void edit_insert(app_state *s, const char *raw) {
    if (!raw) return;
    static char text[APP_EDIT_MAX * 3]; /* the state machine runs on one thread */
    valid_utf8(text, sizeof text, raw);
    size_t len = s->edit_selected ? 0 : strlen(s->edit), add = strlen(text);
    if (len + add + 1 > sizeof s->edit) {
        snprintf(s->status, sizeof s->status, "text field is full (%zu bytes)", sizeof s->edit - 1);
        return;
    }
    edit_take_selection(s);
    char *at = s->edit + s->edit_cursor;
    memmove(at + add, at, len - (size_t)s->edit_cursor + 1);
    memcpy(at, text, add);
    s->edit_cursor += (int)add;
    s->preedit[0] = '\0';
}

/* Deletes bytes [from, to) of the text and puts the cursor at from. */
static void edit_cut(app_state *s, int from, int to) {
    memmove(s->edit + from, s->edit + to, strlen(s->edit + to) + 1);
    s->edit_cursor = from;
}

static void edit_move(app_state *s, app_action_kind kind, int word) {
    const char *t = s->edit;
    int len = (int)strlen(t), at = s->edit_cursor;
    if (s->edit_selected) { /* the first move ends the selection at its side */
        s->edit_selected = 0;
        s->edit_cursor = kind == ACT_EDIT_LEFT || kind == ACT_EDIT_HOME ? 0 : len;
        return;
    }
    switch (kind) {
    case ACT_EDIT_LEFT:
        at = char_before(t, at);
        if (word) {
            while (at > 0 && is_space_at(t, at)) at = char_before(t, at);
            while (at > 0 && !is_space_at(t, char_before(t, at))) at = char_before(t, at);
        }
        break;
    case ACT_EDIT_RIGHT:
        if (word) {
            while (at < len && !is_space_at(t, at)) at = char_after(t, at);
            while (at < len && is_space_at(t, at)) at = char_after(t, at);
        } else {
            at = char_after(t, at);
        }
        break;
    case ACT_EDIT_HOME: at = 0; break;
    default: at = len; break;
    }
    s->edit_cursor = at;
}

static void edit_set_cursor(app_state *s, int at) {
    int len = (int)strlen(s->edit);
    if (at < 0) at = 0;
    if (at > len) at = len;
    while (at > 0 && is_cont(s->edit[at])) at--;
    s->edit_cursor = at;
    s->edit_selected = 0;
}

int app_edit_apply(app_state *s, const app_action *a) {
    if (!s->editing) return 0;
    switch (a->kind) {
    case ACT_EDIT_CANCEL:
        s->editing = 0;
        s->preedit[0] = '\0';
        break;
    case ACT_EDIT_INSERT:
        edit_insert(s, a->text);
        count_tokens(s);
        break;
    case ACT_EDIT_PREEDIT:
        tok_copy_fit(s->preedit, sizeof s->preedit, a->text ? a->text : "");
        break;
    case ACT_EDIT_BACKSPACE:
        if (!edit_take_selection(s))
            edit_cut(s, char_before(s->edit, s->edit_cursor), s->edit_cursor);
        count_tokens(s);
        break;
    case ACT_EDIT_DELETE:
        if (!edit_take_selection(s))
            edit_cut(s, s->edit_cursor, char_after(s->edit, s->edit_cursor));
        count_tokens(s);
        break;
    case ACT_EDIT_CLEAR:
        s->edit_selected = 1;
        edit_take_selection(s);
        count_tokens(s);
        break;
    case ACT_EDIT_LEFT:
    case ACT_EDIT_RIGHT:
    case ACT_EDIT_HOME:
    case ACT_EDIT_END: edit_move(s, a->kind, a->arg); break;
    case ACT_EDIT_CURSOR: edit_set_cursor(s, a->arg); break;
    default: return 0;
    }
    return 1;
}
