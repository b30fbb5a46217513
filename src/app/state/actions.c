/* actions.c: what each action does to the state, grouped by what it changes:
 * the model (h, d_model, the text, seed, mask, scale), the look (theme, zoom,
 * pages, focus, overlays, saves, the window's size), the text field, and the
 * lesson with compare. state.c's app_apply picks the group and keeps the rest
 * (waiting keys, messages, the derived numbers); a click only says which action
 * it means, for app_apply to apply. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "controls.h"
#include "samples.h"
#include "state_internal.h"

static int load_kept(app_state *s, const char *text, int sample);

/* Tokenises text and recomputes; sample is 1-based, 0 for custom text. A custom
   text longer than the field (8 KiB) is cut to it, at a character boundary, before
   it is tokenised: the view shows what s->custom keeps, so a view file or a lesson
   saved from it shows the same. */
int app_load_text(app_state *s, const char *text, int sample) {
    const size_t fit = tok_fit(text, sizeof s->custom - 1);
    char *kept = NULL;
    if (!sample && text[fit]) {
        kept = malloc(fit + 1);
        if (!kept) {
            snprintf(s->status, sizeof s->status, "out of memory");
            return -1;
        }
        tok_copy_fit(kept, fit + 1, text);
    }
    const int rc = load_kept(s, kept ? kept : text, sample);
    if (rc == 0 && kept) { /* say the cut, counting the whole text's tokens */
        tok_list all = {0};
        int total = 0;
        char err[MHA_ERR_LEN];
        if (!s->gpt && s->toks.count == MHA_MAX_N &&
            tok_split(&all, text, 1, &total, err, sizeof err) == 0)
            snprintf(s->status, sizeof s->status, "text cut to the first %d of its %d tokens",
                     MHA_MAX_N, total);
        else if (!s->status[0])
            snprintf(s->status, sizeof s->status,
                     "text cut to its first %zu bytes (the text field's size)", fit);
        tok_free(&all);
    }
    free(kept);
    return rc;
}

static int load_kept(app_state *s, const char *text, int sample) {
    if (s->gpt) return app_gpt_text(s, text, sample); /* GPT-2's own tokenizer */
    tok_list t = {0};
    int total = 0;
    char err[MHA_ERR_LEN];
    if (tok_split(&t, text, MHA_MAX_N, &total, err, sizeof err) != 0) {
        snprintf(s->status, sizeof s->status, "%s", err);
        return -1;
    }
    if (app_recompute(s, &s->cfg, &t) != 0) {
        tok_free(&t);
        return -1;
    }
    s->sample = sample;
    if (!sample) tok_copy_fit(s->custom, sizeof s->custom, text); /* whole characters */
    s->look.page = 0;
    if (total > MHA_MAX_N)
        snprintf(s->status, sizeof s->status, "text cut to the first %d of its %d tokens",
                 MHA_MAX_N, total);
    return 0;
}

/* Steps h (which = 0) or d_model (which = 1); h always divides d_model after. */
static void step_dim(app_state *s, int which, int dir) {
    char why[160];
    int v = which ? controls_step_d(s->cfg.h, s->cfg.d_model, dir, why, sizeof why)
                  : controls_step_h(s->cfg.h, s->cfg.d_model, dir, why, sizeof why);
    if (!v) {
        snprintf(s->status, sizeof s->status, "%s", why);
        return;
    }
    mha_config c = s->cfg;
    if (which)
        c.d_model = v;
    else
        c.h = v;
    int ablated = mha_config_ablated_count(&c);
    memset(c.ablate, 0, sizeof c.ablate); /* the heads are split anew: none is ablated */
    c.kv_heads = 0;                       /* and each has its own K and V again */
    app_change_cfg(s, c);
    if (ablated && s->cfg.h == c.h && s->cfg.d_model == c.d_model)
        snprintf(s->status, sizeof s->status, "every head on again: h = %d splits d_model anew",
                 s->cfg.h);
}

/* J / Shift+J on the random model: its heads share fewer K/V heads (the next divisor
   of h below, down to one) or more (up to h, one each); each shared one's W^K and W^V
   columns the mean of its group's (mha.h). 1: the picture changes. */
static int regroup_kv(app_state *s, int fewer) {
    const int h = s->cfg.h, cur = s->cfg.kv_heads ? s->cfg.kv_heads : h;
    int k = cur;
    do k += fewer ? -1 : 1;
    while (k >= 1 && k <= h && h % k != 0);
    if (k < 1 || k > h) {
        snprintf(s->status, sizeof s->status,
                 fewer ? "K/V: one head shared by all %d heads already (multi-query)"
                       : "K/V: one per head already (%d heads)",
                 h);
        return 1;
    }
    mha_config c = s->cfg;
    c.kv_heads = k == h ? 0 : k;
    app_change_cfg(s, c);
    if (k == h)
        snprintf(s->status, sizeof s->status, "K/V: one per head again (%d)", h);
    else
        snprintf(
            s->status, sizeof s->status,
            "K/V regrouped: %d heads share %d K/V heads, each the mean of %d heads' W\xE1\xB4\xB7, "
            "W\xE2\xB1\xBD",
            h, k, h / k);
    return 1;
}

static void step_sample(app_state *s, int dir) {
    int count = samples_count();
    int next = s->sample ? s->sample + dir : (dir > 0 ? 1 : count);
    if (next < 1) next = count;
    if (next > count) next = 1;
    s->status[0] = '\0';
    app_load_text(s, samples_get(next - 1)->text, next);
}

static void zoom_by(app_state *s, int dir) {
    static const float steps[] = VIEW_ZOOM_STEPS;
    int n = (int)(sizeof steps / sizeof steps[0]), cur = 2;
    for (int i = 0; i < n; i++)
        if (steps[i] <= s->look.zoom + 1e-3f) cur = i;
    if (dir == 0)
        s->look.zoom = s->zoom_base > 0.0f ? s->zoom_base : 1.0f;
    else
        s->look.zoom = steps[cur + dir < 0 ? 0 : (cur + dir >= n ? n - 1 : cur + dir)];
    snprintf(s->status, sizeof s->status, "zoom %d%%", (int)(s->look.zoom * 100.0f + 0.5f));
    s->layout_valid = 0; /* say so when the window holds the data at a smaller zoom */
    const view_layout *L = app_layout(s);
    if (L->data_zoom > 0.0f && L->data_zoom < s->look.zoom - 1e-3f)
        snprintf(s->status, sizeof s->status, "zoom %d%%: this window shows the data at %d%%",
                 (int)(s->look.zoom * 100.0f + 0.5f), (int)(L->data_zoom * 100.0f + 0.5f));
}

static app_action_kind button_action(int b) {
    switch (b) {
    case BTN_H_DOWN: return ACT_H_DOWN;
    case BTN_H_UP: return ACT_H_UP;
    case BTN_D_DOWN: return ACT_D_DOWN;
    case BTN_D_UP: return ACT_D_UP;
    case BTN_SAMPLE_PREV: return ACT_SAMPLE_PREV;
    case BTN_SAMPLE_NEXT: return ACT_SAMPLE_NEXT;
    case BTN_TEXT: return ACT_EDIT_START;
    case BTN_SEED: return ACT_SEED;
    case BTN_MASK: return ACT_MASK;
    case BTN_SCALE: return ACT_SCALE;
    case BTN_CMAP: return ACT_CMAP;
    case BTN_THEME: return ACT_THEME;
    case BTN_ZOOM_OUT: return ACT_ZOOM_OUT;
    case BTN_ZOOM_IN: return ACT_ZOOM_IN;
    case BTN_SAVE: return ACT_SAVE;
    case BTN_PNG_SCALE: return ACT_PNG_SCALE;
    case BTN_HELP: return ACT_HELP;
    case BTN_PAGE_PREV: return ACT_PAGE_PREV;
    case BTN_PAGE_NEXT: return ACT_PAGE_NEXT;
    case BTN_OVERVIEW: return ACT_OVERVIEW;
    case BTN_WRITE: return ACT_WRITE;
    case BTN_LESSONS: return ACT_LESSON_LIST;
    case BTN_MORE: return ACT_MENU;
    case BTN_TRAIN_GO: return ACT_TRAIN;
    case BTN_TRAIN_SPEED: return ACT_TRAIN_SPEED;
    case BTN_TRAIN_STEP: return ACT_STEP_NEXT;
    case BTN_TRAIN_SWEEP: return ACT_TRAIN_SWEEP;
    case BTN_TRAIN_BACK: return ACT_ESCAPE;
    default: return ACT_NONE;
    }
}

static int same_hit(view_hit x, view_hit y) {
    return x.kind == y.kind && x.button == y.button && x.head == y.head && x.row == y.row &&
           x.col == y.col && x.which == y.which;
}

static view_hit hit_at(app_state *s, int x, int y) {
    const view_layout *L = app_layout(s);
    return view_hit_test(L, app_layout_view(s), x, y);
}

int app_click(app_state *s, int x, int y, app_action *then) {
    *then = (app_action){.kind = ACT_NONE};
    if (s->help) { /* a click anywhere closes the help overlay */
        s->help = 0;
        return 1;
    }
    if (s->editing) { /* a click in the text puts the cursor there */
        view_editor E;
        const view_layout *L = app_layout(s);
        const view_state *vs = app_layout_view(s);
        view_editor_layout(&E, vs, L, s->measure, s->measure_ud);
        int at = view_editor_offset(&E, vs, x, y, s->measure, s->measure_ud);
        if (at >= 0) *then = (app_action){.kind = ACT_EDIT_CURSOR, .arg = at};
        return 0;
    }
    view_hit hit = hit_at(s, x, y);
    if (s->menu) { /* the "More" panel: a button sends its key; a click elsewhere closes it */
        const view_layout *L = app_layout(s);
        const int b = hit.kind == HIT_BUTTON ? hit.button : -1;
        if (b == BTN_MORE) { /* closes it, as the click's action */
            *then = (app_action){.kind = ACT_MENU};
            return 0;
        }
        s->menu = 0;
        s->layout_valid = 0;
        s->dirty = 1;
        if (b >= BTN_MENU && b <= BTN_MENU_LAST) {
            const int key = L->buttons[b].key, mods = L->buttons[b].mods;
            *then = app_key_action(s, key, mods);
            return 1;
        }
        if (b < 0) return 1; /* not a click on what is under the panel */
    }
    if (hit.kind == HIT_BUTTON && (hit.button == BTN_LAYER_PREV || hit.button == BTN_LAYER_NEXT))
        *then = (app_action){.kind = ACT_TRAIN_LAYER, .arg = hit.button == BTN_LAYER_PREV ? -1 : 1};
    else if (hit.kind == HIT_BUTTON)
        *then = (app_action){.kind = button_action(hit.button)};
    else if (hit.kind == HIT_OVERVIEW) /* a loaded model's head: its layer, that head focused */
        *then = (app_action){.kind = ACT_LAYER, .arg = hit.row, .x = hit.head + 1};
    else if (hit.kind == HIT_HEAD_OFF)
        *then = (app_action){.kind = ACT_ABLATE, .arg = hit.head + 1};
    else if ((hit.kind == HIT_HEAD_CELL || hit.kind == HIT_HEAD_TITLE) && !s->look.focus)
        *then = (app_action){.kind = ACT_FOCUS, .arg = hit.head + 1};
    return 0;
}

int app_hover(app_state *s, int x, int y) {
    s->hover_x = x;
    s->hover_y = y;
    view_hit hit = {HIT_NONE, -1, -1, -1, -1, -1};
    if (x >= 0 && y >= 0) hit = hit_at(s, x, y);
    if (s->menu && hit.kind != HIT_BUTTON) { /* nothing under the "More" panel is hovered */
        const view_rect m = app_layout(s)->menu;
        if (x >= m.x && y >= m.y && x < m.x + m.w && y < m.y + m.h)
            hit = (view_hit){HIT_NONE, -1, -1, -1, -1, -1};
    }
    int changed = !same_hit(hit, s->hover);
    s->hover = hit;
    if (changed) s->dirty = 1; /* the window redraws on dirty, not on the return value */
    return changed;
}

int app_apply_model(app_state *s, const app_action *a) {
    mha_config c = s->cfg;
    switch (a->kind) {
    case ACT_H_UP: step_dim(s, 0, +1); return 1;
    case ACT_H_DOWN: step_dim(s, 0, -1); return 1;
    case ACT_KV_FEWER:
    case ACT_KV_MORE: return regroup_kv(s, a->kind == ACT_KV_FEWER);
    case ACT_D_UP: step_dim(s, 1, +1); return 1;
    case ACT_D_DOWN: step_dim(s, 1, -1); return 1;
    case ACT_SAMPLE_NEXT: step_sample(s, +1); return 1;
    case ACT_SAMPLE_PREV: step_sample(s, -1); return 1;
    case ACT_SEED: c.seed = s->cfg.seed + 1; break;
    case ACT_MASK: c.mask = s->cfg.mask == MHA_MASK_CAUSAL ? MHA_MASK_NONE : MHA_MASK_CAUSAL; break;
    case ACT_SCALE: c.no_scale = !s->cfg.no_scale; break;
    default: return -1;
    }
    app_change_cfg(s, c);
    return 1;
}

/* Escape closes what is open, the innermost first; it never quits. */
static void escape(app_state *s) {
    if (s->menu)
        s->menu = 0;
    else if (s->editing) {
        s->editing = 0;
        s->preedit[0] = '\0';
    } else if (s->help)
        s->help = 0;
    else if (s->look.focus)
        s->look.focus = 0;
    else if (s->look.present)
        s->look.present = 0;
    else if (s->pin)
        app_compare_toggle(s);
    else
        snprintf(s->status, sizeof s->status, "nothing to close (Ctrl+Q quits)");
}

int app_apply_look(app_state *s, const app_action *a) {
    switch (a->kind) {
    case ACT_CMAP: s->look.cmap = (s->look.cmap + 1) % CMAP_COUNT; return 1;
    case ACT_THEME: s->look.theme = !s->look.theme; return 1;
    case ACT_ZOOM_IN: zoom_by(s, +1); return 1;
    case ACT_ZOOM_OUT: zoom_by(s, -1); return 1;
    case ACT_ZOOM_RESET: zoom_by(s, 0); return 1;
    case ACT_PAGE_PREV:
        if (s->look.page > 0) s->look.page--;
        return 1;
    case ACT_PAGE_NEXT: s->look.page++; return 1; /* app_layout clamps it to the pages there are */
    case ACT_PINNED_PAGE_PREV: {                  /* without a pinned view, the live one's */
        int *page = s->pin ? &s->pinned_page : &s->look.page;
        if (*page > 0) (*page)--;
        return 1;
    }
    case ACT_PINNED_PAGE_NEXT: (*(s->pin ? &s->pinned_page : &s->look.page))++; return 1;
    case ACT_FOCUS: { /* the heads shown: a loaded model's (or its re-split) */
        const int h = s->gpt ? app_gpt_heads(s) : s->cfg.h;
        if (a->arg >= 1 && a->arg <= h) {
            s->look.focus = a->arg;
            s->status[0] = '\0';
        } else {
            snprintf(s->status, sizeof s->status, "there is no head %d: h = %d", a->arg, h);
        }
        return 1;
    }
    case ACT_HEAD_VIEW:      /* the heads as lines or heatmaps: the grid and the focus view */
        if (s->train_mode) { /* its heads stay heatmaps: nothing hidden changes */
            snprintf(s->status, sizeof s->status,
                     "the head view (H) is the attention view's: training shows heatmaps");
            return 1;
        }
        s->look.head_view =
            s->look.head_view == VIEW_HEAD_LINES ? VIEW_HEAD_HEATMAP : VIEW_HEAD_LINES;
        snprintf(s->status, sizeof s->status, "%s",
                 s->look.head_view == VIEW_HEAD_LINES
                     ? "head view: lines, opacity = weight (H: heatmaps again)"
                     : "heads as heatmaps (H: lines)");
        return 1;
    case ACT_HELP: s->help = !s->help; return 1;
    case ACT_MENU: s->menu = !s->menu; return 1;
    case ACT_FULLSCREEN: s->fullscreen = !s->fullscreen; return 1;
    case ACT_PRESENT:
        s->look.present = !s->look.present;
        s->menu = 0; /* the panel is the controls': none in presentation */
        if (s->look.present) snprintf(s->status, sizeof s->status, "presentation: P or Esc leaves");
        return 1;
    case ACT_ESCAPE: escape(s); return 1;
    case ACT_QUIT: s->quit = 1; return 1;
    case ACT_SAVE: s->save_request = APP_SAVE_VIEW; return 0;
    case ACT_SAVE_PANEL: s->save_request = APP_SAVE_PANEL; return 0;
    case ACT_SAVE_VIEW_FILE: s->save_request = APP_SAVE_VIEW_FILE; return 0;
    case ACT_PNG_SCALE:
        s->png_scale = s->png_scale % 4 + 1; /* 1, 2, 3, 4, 1, ... */
        snprintf(s->status, sizeof s->status, "Ctrl+S saves PNGs at %d\xC3\x97 the window's pixels",
                 s->png_scale);
        return 1;
    case ACT_RESIZE:
        if (a->x < 1 || a->y < 1) return 0;
        s->width = a->x;
        s->height = a->y;
        s->ui_scale = a->f > 0.0f ? a->f : 1.0f;
        s->zoom_base = view_zoom_for_size((int)((float)s->width / s->ui_scale),
                                          (int)((float)s->height / s->ui_scale));
        return 1;
    default: return -1;
    }
}

int app_open_text_file(app_state *s, const char *path) {
    char err[600], *text = NULL;
    const char *slash = strrchr(path, '/');
    const char *name = slash && slash[1] ? slash + 1 : path;
    if (!s->read_text) {
        snprintf(s->status, sizeof s->status, "no file can be opened here");
        return -1;
    }
    if (s->read_text(path, &text, err, sizeof err) != 0) {
        app_gpt_say(s, err); /* a long path loses its middle, never the reason */
        return -1;
    }
    tok_list t = {0};
    int total = 0;
    char terr[MHA_ERR_LEN];
    const int counted = tok_split(&t, text, 1, &total, terr, sizeof terr) == 0;
    tok_free(&t);
    s->status[0] = '\0';
    int rc = app_load_text(s, text, 0);
    free(text);
    if (rc != 0) return -1;
    s->editing = 0;
    s->preedit[0] = '\0';
    if (!s->status[0]) { /* app_load_text says when the text was cut */
        if (s->gpt || !counted)
            snprintf(s->status, sizeof s->status, "opened %.200s", name);
        else
            snprintf(s->status, sizeof s->status, "opened %.200s: %d token%s", name, total,
                     total == 1 ? "" : "s");
    }
    return 0;
}

/* Ctrl+O in the text field: the field holds a file's path (spaces around it dropped). */
static int open_named_file(app_state *s) {
    if (!s->editing) return 0;
    char path[APP_EDIT_MAX];
    const char *p = s->edit;
    while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r') p++;
    snprintf(path, sizeof path, "%s", p);
    size_t n = strlen(path);
    while (n > 0 && (path[n - 1] == ' ' || path[n - 1] == '\t' || path[n - 1] == '\n' ||
                     path[n - 1] == '\r'))
        path[--n] = '\0';
    if (!n) {
        snprintf(s->status, sizeof s->status, "type a text file's path in the field, then Ctrl+O");
        return 1;
    }
    app_open_text_file(s, path);
    return 1;
}

int app_apply_text(app_state *s, const app_action *a) {
    switch (a->kind) {
    case ACT_EDIT_START: app_edit_start(s); return 1;
    case ACT_EDIT_APPLY:
        if (!s->editing) return 0;
        s->editing = 0;
        s->preedit[0] = '\0';
        s->status[0] = '\0';
        app_load_text(s, s->edit, 0);
        return 1;
    case ACT_EDIT_OPEN: return open_named_file(s);
    case ACT_EDIT_CANCEL:
    case ACT_EDIT_INSERT:
    case ACT_EDIT_PREEDIT:
    case ACT_EDIT_BACKSPACE:
    case ACT_EDIT_DELETE:
    case ACT_EDIT_CLEAR:
    case ACT_EDIT_LEFT:
    case ACT_EDIT_RIGHT:
    case ACT_EDIT_HOME:
    case ACT_EDIT_END:
    case ACT_EDIT_CURSOR: return app_edit_apply(s, a) ? 1 : 0;
    default: return -1;
    }
}

int app_apply_lesson(app_state *s, const app_action *a) {
    switch (a->kind) {
    case ACT_PAD:
    case ACT_TEMP_UP:
    case ACT_TEMP_DOWN:
    case ACT_WEIGHTS:
    case ACT_ABLATE:
    case ACT_ABLATE_CLEAR:
    case ACT_DIFF:
    case ACT_VALUES:
    case ACT_CONTRAST:
    case ACT_STEP_NEXT:
    case ACT_STEP_PREV:
    case ACT_LESSON:
        if (!app_lesson_apply(s, a)) return 0;
        if (a->kind == ACT_LESSON && s->pin)
            snprintf(s->status, sizeof s->status,
                     "the lesson's panels show when compare is off (B unpins)");
        return 1;
    case ACT_COMPARE: return app_compare_toggle(s) ? 1 : 0;
    default: return -1;
    }
}

/* --- training mode: the attention view's keys say so ----------------------------- */

/* The key (and what it does) of an action that is the attention view's only, or
   NULL for one that applies in training mode too (the look, zoom, saves, help). */
static const char *attention_only(const app_action *a, char *buf, size_t len) {
    switch (a->kind) {
    case ACT_EDIT_START: return "Enter (your own sentence)";
    case ACT_MASK: return "M (the causal mask)";
    case ACT_SCALE:
        return "N (scaling by 1/\xE2\x88\x9A"
               "d\xE2\x82\x96)";
    case ACT_PAD: return "E (padding)";
    case ACT_TEMP_UP: return "] (temperature up)";
    case ACT_TEMP_DOWN: return "[ (temperature down)";
    case ACT_WEIGHTS: return "W (weights)";
    case ACT_ABLATE:
        return a->arg > 0 ? "The \xC3\x97 in a head's title (head off)" : "X (focused head off)";
    case ACT_ABLATE_CLEAR: return "Shift+X (every head on)";
    case ACT_KV_FEWER:
    case ACT_KV_MORE: return "J (K/V regrouped)";
    case ACT_DIFF: return "D (difference view)";
    case ACT_STEP_PREV: return ", (the step-through)";
    case ACT_LESSON: return "I (how-alike and cost panels)";
    case ACT_COMPARE: return "B (compare)";
    case ACT_OVERVIEW:
    case ACT_LAYER: return "O (a model's overview)";
    case ACT_FOCUS: snprintf(buf, len, "%d (focus on head %d)", a->arg, a->arg); return buf;
    default: return NULL;
    }
}

int app_training_refuse(app_state *s, const app_action *a) {
    char buf[48];
    const char *what = attention_only(a, buf, sizeof buf);
    if (!what) return 0;
    snprintf(s->status, sizeof s->status, "%s is for the attention view: Esc goes back to it%s",
             what,
             a->kind == ACT_ABLATE  ? "; the bars show each head removed"
             : a->kind == ACT_FOCUS ? "; a cell's tooltip gives its value"
                                    : "");
    return 1;
}
