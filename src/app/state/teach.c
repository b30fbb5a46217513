/* teach.c: a lesson in the state machine (teach.h). Presenting shows each
 * step's view (the defaults with steps 1..k applied, so a step looks the same
 * however it was reached) and runs its actions; the lesson owns the keys a
 * presenter's clicker sends and every other key acts as usual, so a question
 * can be answered by exploring and F5 returns to the step as written.
 * Recording captures the view as a step and writes the file after each one. */
#define _POSIX_C_SOURCE 200809L
#include "teach.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "model_pages.h"
#include "state_internal.h"

#define LIST_MAX 9 /* built-in lessons a digit can pick */
#define SWEEP_MAX 64
#define LIST_SHOWN_MS 600000.0 /* the list stays up until picked or closed */
#define LIST_HEAD "Lessons (a digit opens one, Esc closes):" /* the list's notice */

struct app_teach {
    /* presenting */
    lesson L;
    int open, k; /* k: the step shown, 0-based */
    char path[4096];
    int digits; /* a number typed for a jump, -1 none */
    /* timed actions of the step shown */
    double stage_s, stage_next; /* stages: one every stage_s seconds; 0 none */
    int sweep_h[SWEEP_MAX], sweep_n, sweep_i;
    double sweep_next;
    /* the built-in list */
    int list_open, list_n;
    char list_path[LIST_MAX][4096];
    /* recording */
    int recording, captioning;
    lesson rec;
    char rec_path[4096];
    app_settings *pending; /* the view A captured, waiting for its caption */
    view_caption cap;      /* what app_teach_view points the view at */
    char rec_heading[96], prompt[160];
    char why[4800]; /* the last step that could not be shown: "FILE:LINE: what" */
};

void app_teach_free(app_teach *t) {
    if (!t) return;
    lesson_free(&t->L);
    lesson_free(&t->rec);
    app_settings_free(t->pending);
    free(t);
}

static app_teach *get(app_state *s) {
    if (!s->teach) {
        s->teach = calloc(1, sizeof *s->teach);
        if (s->teach) s->teach->digits = -1;
    }
    return s->teach;
}

static void say(app_state *s, const char *fmt, const char *a, int x, int y) {
    snprintf(s->status, sizeof s->status, fmt, a, x, y);
}

/* Starts the step's actions: compare, train at once, stages and sweep timed. */
static void start_actions(app_state *s, app_teach *t) {
    const lesson_step *st = &t->L.steps[t->k];
    t->stage_s = 0.0;
    t->sweep_n = t->sweep_i = 0;
    app_write_start(s, 0); /* a step before's writing ends */
    for (int i = 0; i < st->nacts; i++) {
        const lesson_do *d = &st->acts[i];
        char err[512] = "";
        app_settings *one = NULL;
        switch (d->kind) {
        case LESSON_DO_TRAIN: { /* the training settings' run, anew, paused by the trainer after N
                                   steps */
            learn_config lc;
            long steps;
            int layer;
            app_training_get(s, &lc, &steps, &layer);
            if (s->train_mode) { /* a new run, the same every time */
                const app_action esc = {.kind = ACT_ESCAPE};
                app_training_apply(s, &esc);
            }
            if (app_training_set(s, 1, &lc, d->n, layer) != 0)
                snprintf(s->status, sizeof s->status, "do = train: out of memory");
            break;
        }
        case LESSON_DO_COMPARE:
            one = app_settings_create();
            if (!one || app_settings_set(one, "compare", d->spec, ".", err, sizeof err) != 0 ||
                app_settings_apply(s, one, err, sizeof err) != 0)
                snprintf(s->status, sizeof s->status, "do = compare: %.200s",
                         err[0] ? err : "out of memory");
            app_settings_free(one);
            break;
        case LESSON_DO_STAGES:
            t->stage_s = d->seconds;
            s->look.step = 1;
            t->stage_next = s->now_ms + d->seconds * 1000.0;
            break;
        case LESSON_DO_SWEEP_H: {
            const int dm = s->cfg.d_model;
            t->sweep_n = 0;
            for (int h = 1; h <= dm && t->sweep_n < SWEEP_MAX; h++)
                if (dm % h == 0 && h <= 64) t->sweep_h[t->sweep_n++] = h;
            t->sweep_i = 0;
            t->sweep_next = s->now_ms + LESSON_SWEEP_S * 1000.0;
            if (t->sweep_n) {
                mha_config c = s->cfg;
                c.h = t->sweep_h[0];
                memset(c.ablate, 0, sizeof c.ablate);
                app_change_cfg(s, c);
            }
            break;
        }
        case LESSON_DO_WRITE: app_write_start(s, (int)d->n); break;
        }
    }
    s->layout_valid = 0;
    s->dirty = 1;
}

int app_teach_goto(app_state *s, int k) {
    app_teach *t = s->teach;
    if (!t || !t->open) return -1;
    if (k < 1 || k > t->L.count) {
        snprintf(s->status, sizeof s->status, "there is no step %d: the lesson has %d", k,
                 t->L.count);
        return -1;
    }
    char err[512] = "";
    if (s->train_mode) { /* a step shows attention unless its view or actions train */
        const app_action esc = {.kind = ACT_ESCAPE};
        app_training_apply(s, &esc);
    }
    /* presentation is the presenter's: P and Escape change it, and a step only where its
       own lines say `present`, so a clicker's Space never brings the toolbar back */
    const int presenting = s->look.present;
    /* a missing model folder refused now: the window would read it later, on the jobs
       layer, and show the step's caption over the model before it */
    if (app_teach_models_check(&t->L, k, k, t->path, t->why, sizeof t->why) != 0) {
        char say[sizeof t->why + 32]; /* the status keeps its end: which files, from where */
        snprintf(say, sizeof say, "step %d: %s", k, strstr(t->why, ": model: ") + 2);
        app_gpt_say(s, say);
        return -1;
    }
    if (app_settings_apply(s, t->L.steps[k - 1].view, err, sizeof err) != 0) {
        if (strncmp(err, t->path, strlen(t->path)) == 0)
            snprintf(t->why, sizeof t->why, "%s", err);
        else
            snprintf(t->why, sizeof t->why, "%.4000s:%d: %.512s", t->path, t->L.steps[k - 1].line,
                     err);
        snprintf(s->status, sizeof s->status, "step %d: %.200s (the view is kept)", k, err);
        return -1;
    }
    if (!app_settings_has(t->L.steps[k - 1].set, "present")) s->look.present = presenting;
    t->k = k - 1;
    t->digits = -1;
    start_actions(s, t);
    return 0;
}

int app_teach_models_check(const lesson *L, int from, int to, const char *file, char *err,
                           size_t errlen) {
    for (int k = from; k <= to; k++) {
        char model[4096];
        struct stat sb;
        const lesson_step *st = &L->steps[k - 1];
        app_settings_get(st->view, "model", model, sizeof model);
        if (!model[0] || strcmp(model, "off") == 0 || stat(model, &sb) == 0) continue;
        const int e = errno;
        char where[4200]; /* "FILE:LINE: model = ": the line that named it */
        app_settings_where(st->view, "model", where, sizeof where);
        const size_t at = strlen(where) > 8 ? strlen(where) - 8 : 0;
        if (at > 0 && strcmp(where + at, "model = ") == 0)
            snprintf(err, errlen, "%.*smodel: %.1800s: %s", (int)(at > 2000 ? 2000 : at), where,
                     model, strerror(e));
        else
            snprintf(err, errlen, "%.2000s:%d: model: %.1800s: %s", file, st->line, model,
                     strerror(e));
        model_fetch_say(err, errlen, model);
        return 2;
    }
    return 0;
}

int app_teach_open(app_state *s, const char *path, char *err, size_t errlen) {
    app_teach *t = get(s);
    if (!t) {
        snprintf(err, errlen, "%s:1: out of memory", path);
        return 1;
    }
    lesson L;
    int rc = lesson_read(path, &L, err, errlen);
    if (rc != 0) return rc;
    lesson_free(&t->L);
    t->L = L;
    t->open = 1;
    t->list_open = 0;
    snprintf(t->path, sizeof t->path, "%s", path);
    if (app_teach_goto(s, 1) != 0) {
        snprintf(err, errlen, "%s", t->why);
        t->open = 0;
        lesson_free(&t->L);
        return 2;
    }
    return 0;
}

/* ---- the built-in lessons ---- */

static int dir_exists(const char *p) {
    struct stat sb;
    return stat(p, &sb) == 0 && S_ISDIR(sb.st_mode);
}

const char *app_teach_builtin_dir(void) {
    static char found[4096];
    const char *env = getenv("MHAVIZ_LESSONS");
    if (env && dir_exists(env)) return env;
    char exe[4096];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n > 0) { /* installed: <prefix>/bin/mhaviz and <prefix>/share/mhaviz/lessons */
        exe[n] = '\0';
        char *slash = strrchr(exe, '/');
        if (slash) {
            *slash = '\0';
            snprintf(found, sizeof found, "%.4000s/../share/mhaviz/lessons", exe);
            if (dir_exists(found)) return found;
        }
    }
#ifdef MHAVIZ_LESSONS_INSTALL
    if (dir_exists(MHAVIZ_LESSONS_INSTALL)) return MHAVIZ_LESSONS_INSTALL;
#endif
#ifdef MHAVIZ_LESSONS_SOURCE
    if (dir_exists(MHAVIZ_LESSONS_SOURCE)) return MHAVIZ_LESSONS_SOURCE;
#endif
    return NULL;
}

static int cmp_str(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Opens the list: the lessons of the built-in folder, by file name. */
static void open_list(app_state *s, app_teach *t) {
    const char *dir = app_teach_builtin_dir();
    DIR *d = dir ? opendir(dir) : NULL;
    if (!d) {
        snprintf(s->status, sizeof s->status,
                 "no built-in lessons found (examples/lessons; MHAVIZ_LESSONS names a folder)");
        return;
    }
    char *names[256];
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL && n < 256) {
        size_t l = strlen(e->d_name);
        if (l > 7 && strcmp(e->d_name + l - 7, ".lesson") == 0) {
            names[n] = malloc(l + 1);
            if (names[n]) memcpy(names[n++], e->d_name, l + 1);
        }
    }
    closedir(d);
    qsort(names, (size_t)n, sizeof names[0], cmp_str);
    char msg[APP_MSG_LEN];
    int o = snprintf(msg, sizeof msg, "%s", LIST_HEAD);
    t->list_n = 0;
    for (int i = 0; i < n; i++) {
        if (t->list_n < LIST_MAX) {
            snprintf(t->list_path[t->list_n], sizeof t->list_path[0], "%.3000s/%.1000s", dir,
                     names[i]);
            lesson L;
            char err[600];
            const int ok = lesson_read(t->list_path[t->list_n], &L, err, sizeof err) == 0;
            if (o < (int)sizeof msg)
                o += snprintf(msg + o, sizeof msg - (size_t)o, "  %d %.120s%s", t->list_n + 1,
                              ok ? L.title : names[i], ok ? "" : " (broken)");
            if (ok) {
                char steps[32];
                snprintf(steps, sizeof steps, " (%d steps)", L.count);
                if (o < (int)sizeof msg)
                    o += snprintf(msg + o, sizeof msg - (size_t)o, "%s", steps);
            }
            lesson_free(&L);
            t->list_n++;
        }
        free(names[i]);
    }
    if (!t->list_n) {
        snprintf(s->status, sizeof s->status, "no lesson in %.200s", dir);
        return;
    }
    t->list_open = 1;
    app_notify(s, msg, 0);
    s->notice_until = s->now_ms + LIST_SHOWN_MS;
}

/* ---- recording ---- */

static void rec_name(const app_state *s, char *out, size_t len) {
    time_t now = time(NULL);
    struct tm tm;
    localtime_r(&now, &tm);
    char stamp[32];
    strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &tm);
    const char *dir = s->export_dir ? s->export_dir : ".";
    char cwd[2048] = "";
    if (dir[0] != '/' && getcwd(cwd, sizeof cwd - 1)) {
        if (strcmp(dir, ".") == 0)
            snprintf(out, len, "%.2000s/mhaviz-lesson-%s.lesson", cwd, stamp);
        else
            snprintf(out, len, "%.2000s/%.2000s/mhaviz-lesson-%s.lesson", cwd, dir, stamp);
    } else {
        snprintf(out, len, "%.4000s/mhaviz-lesson-%s.lesson", dir, stamp);
    }
    struct stat sb;
    size_t stem = strlen(out) - 7;
    for (int k = 2; stat(out, &sb) == 0 && k < 1000 && stem + 16 < len; k++)
        snprintf(out + stem, len - stem, "-%d.lesson", k);
}

static void record_toggle(app_state *s, app_teach *t) {
    char msg[APP_MSG_LEN];
    if (t->recording) {
        t->recording = 0;
        if (s->editing && t->captioning) s->editing = 0;
        t->captioning = 0;
        if (t->rec.count)
            snprintf(msg, sizeof msg, "recorded %d step%s to %.4000s", t->rec.count,
                     t->rec.count == 1 ? "" : "s", t->rec_path);
        else
            snprintf(msg, sizeof msg, "recording stopped: no step was added (A adds one)");
        lesson_free(&t->rec);
        app_notify(s, msg, 0);
        return;
    }
    rec_name(s, t->rec_path, sizeof t->rec_path);
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", t->rec_path);
    char *slash = strrchr(dir, '/');
    if (slash) *slash = '\0';
    if (!dir_exists(dir)) {
        snprintf(msg, sizeof msg, "cannot record to %.200s: the folder does not exist", dir);
        app_notify(s, msg, 1);
        return;
    }
    lesson_free(&t->rec);
    time_t now = time(NULL);
    struct tm tm;
    localtime_r(&now, &tm);
    char title[64];
    strftime(title, sizeof title, "Recorded lesson, %Y-%m-%d %H:%M", &tm);
    t->rec.title = malloc(strlen(title) + 1);
    if (!t->rec.title) {
        app_notify(s, "cannot record: out of memory", 1);
        return;
    }
    memcpy(t->rec.title, title, strlen(title) + 1);
    t->recording = 1;
    snprintf(msg, sizeof msg, "recording to %.4000s: A adds the view as a step, Ctrl+R stops",
             t->rec_path);
    app_notify(s, msg, 0);
}

static void record_step(app_state *s, app_teach *t) {
    app_settings_free(t->pending);
    t->pending = app_settings_create();
    if (!t->pending) {
        app_notify(s, "cannot add a step: out of memory", 1);
        return;
    }
    app_settings_capture(s, t->pending);
    app_edit_start(s);
    s->edit[0] = '\0';
    s->edit_cursor = 0;
    s->edit_selected = 0;
    t->captioning = 1;
    snprintf(s->status, sizeof s->status,
             "step %d's caption: heading | line | line, Enter stores it, Esc without one",
             t->rec.count + 1);
}

/* Ends the caption field: the step is added with caption (NULL: none). */
static void record_store(app_state *s, app_teach *t, const char *caption) {
    char heading[APP_EDIT_MAX] = "", text[APP_EDIT_MAX] = "";
    if (caption) { /* "heading | line | line" */
        const char *bar = strstr(caption, " | ");
        snprintf(heading, sizeof heading, "%.*s", bar ? (int)(bar - caption) : (int)strlen(caption),
                 caption);
        size_t o = 0;
        while (bar && o < sizeof text - 1) {
            const char *from = bar + 3, *next = strstr(from, " | ");
            int l = next ? (int)(next - from) : (int)strlen(from);
            o += (size_t)snprintf(text + o, sizeof text - o, "%s%.*s", o ? "\n" : "", l, from);
            bar = next;
        }
        char why[256];
        if (lesson_markup_check(heading, why, sizeof why) != 0 ||
            lesson_markup_check(text, why, sizeof why) != 0) {
            snprintf(s->status, sizeof s->status, "caption: %.200s (fix it, or Esc)", why);
            return; /* the field stays open */
        }
    }
    s->editing = 0;
    s->preedit[0] = '\0';
    t->captioning = 0;
    if (!lesson_changes(&t->rec, t->pending) && !heading[0] && !text[0]) {
        if (t->rec.count)
            snprintf(s->status, sizeof s->status,
                     "no step added: the view is step %d's and there is no caption", t->rec.count);
        else
            snprintf(s->status, sizeof s->status,
                     "no step added: the view is the one a lesson starts from and there is no "
                     "caption");
        return;
    }
    char err[600];
    if (lesson_append(&t->rec, t->pending, heading, text) != 0) {
        app_notify(s, "cannot add the step: out of memory", 1);
        return;
    }
    if (lesson_write(t->rec_path, &t->rec, err, sizeof err) != 0) {
        app_notify(s, err, 1);
        return;
    }
    char msg[APP_MSG_LEN];
    snprintf(msg, sizeof msg, "step %d recorded: %.4000s", t->rec.count, t->rec_path);
    app_notify(s, msg, 0);
}

/* ---- keys and actions ---- */

int app_teach_key(const app_state *s, int key, int mods, app_action *a) {
    const app_teach *t = s->teach;
    const int ctrl = (mods & APP_MOD_CTRL) != 0;
    *a = (app_action){.kind = ACT_NONE};
    if (ctrl) {
        if (key == 'r') a->kind = ACT_RECORD;
        return a->kind != ACT_NONE;
    }
    if (t && t->list_open && strncmp(s->notice, LIST_HEAD, strlen(LIST_HEAD)) == 0) {
        if (key >= '1' && key <= '9') {
            a->kind = ACT_LESSON_LIST;
            a->arg = key - '0';
        } else if (key == APP_KEY_ESCAPE || key == 'g') {
            a->kind = ACT_LESSON_LIST;
            a->arg = -1;
        }
        if (a->kind != ACT_NONE) return 1;
    }
    if (key == 'g') {
        a->kind = ACT_LESSON_LIST;
        return 1;
    }
    if (key == 'a' && t && t->recording) {
        a->kind = ACT_RECORD_STEP;
        return 1;
    }
    if (!t || !t->open) return 0;
    if ((key == APP_KEY_PAGEUP || key == APP_KEY_PAGEDOWN) && (mods & APP_MOD_SHIFT))
        return 0; /* Shift+PgUp / PgDn still page */
    switch (key) {
    case ' ':
    case APP_KEY_PAGEDOWN:
    case APP_KEY_RIGHT: a->kind = ACT_LESSON_NEXT; break;
    case APP_KEY_BACKSPACE:
    case APP_KEY_PAGEUP:
    case APP_KEY_LEFT: a->kind = ACT_LESSON_PREV; break;
    case APP_KEY_HOME: a->kind = ACT_LESSON_FIRST; break;
    case APP_KEY_END: a->kind = ACT_LESSON_LAST; break;
    case APP_KEY_F5: a->kind = ACT_LESSON_RESET; break;
    case APP_KEY_ESCAPE: a->kind = ACT_LESSON_LEAVE; break;
    case APP_KEY_RETURN:
        if (t->digits >= 0) a->kind = ACT_LESSON_JUMP;
        break;
    default:
        if (key >= '0' && key <= '9') {
            a->kind = ACT_LESSON_DIGIT;
            a->arg = key - '0';
        }
    }
    return a->kind != ACT_NONE;
}

int app_teach_apply(app_state *s, const app_action *a) {
    app_teach *t = s->teach;
    if ((a->kind == ACT_EDIT_APPLY || a->kind == ACT_EDIT_CANCEL) && t && t->captioning &&
        s->editing) {
        record_store(s, t, a->kind == ACT_EDIT_APPLY ? s->edit : NULL);
        return 1;
    }
    if (a->kind < ACT_LESSON_NEXT || a->kind > ACT_RECORD_STEP) return -1;
    t = get(s);
    if (!t) {
        snprintf(s->status, sizeof s->status, "out of memory");
        return 1;
    }
    switch (a->kind) {
    case ACT_RECORD: record_toggle(s, t); return 1;
    case ACT_RECORD_STEP:
        if (!t->recording) {
            snprintf(s->status, sizeof s->status, "not recording: Ctrl+R starts");
            return 1;
        }
        record_step(s, t);
        return 1;
    case ACT_LESSON_LIST:
        if (a->arg < 0 || (a->arg == 0 && t->list_open)) {
            t->list_open = 0;
            s->notice[0] = '\0';
            return 1;
        }
        if (a->arg == 0) {
            open_list(s, t);
            return 1;
        }
        if (a->arg > t->list_n) {
            snprintf(s->status, sizeof s->status, "there is no lesson %d: the list has %d", a->arg,
                     t->list_n);
            return 1;
        } else {
            char err[600];
            t->list_open = 0;
            s->notice[0] = '\0';
            if (app_teach_open(s, t->list_path[a->arg - 1], err, sizeof err) != 0)
                app_notify(s, err, 1);
            return 1;
        }
    default: break;
    }
    if (!t->open) return 0;
    const int k = t->k + 1, n = t->L.count;
    switch (a->kind) {
    case ACT_LESSON_NEXT:
        if (k >= n) {
            say(s, "%sthe last step (%d of %d): Escape leaves the lesson", "", k, n);
            return 1;
        }
        app_teach_goto(s, k + 1);
        return 1;
    case ACT_LESSON_PREV:
        if (k <= 1) {
            say(s, "%sthe first step (%d of %d)", "", k, n);
            return 1;
        }
        app_teach_goto(s, k - 1);
        return 1;
    case ACT_LESSON_FIRST: app_teach_goto(s, 1); return 1;
    case ACT_LESSON_LAST: app_teach_goto(s, n); return 1;
    case ACT_LESSON_RESET: app_teach_goto(s, k); return 1;
    case ACT_LESSON_DIGIT:
        t->digits = t->digits < 0 ? a->arg : (t->digits * 10 + a->arg) % 100000;
        snprintf(s->status, sizeof s->status, "step %d: Enter goes there (of %d)", t->digits, n);
        return 1;
    case ACT_LESSON_JUMP: {
        const int to = t->digits;
        t->digits = -1;
        app_teach_goto(s, to);
        return 1;
    }
    case ACT_LESSON_LEAVE:
        t->open = 0;
        t->stage_s = 0.0;
        t->sweep_n = 0;
        lesson_free(&t->L);
        snprintf(s->status, sizeof s->status,
                 "the lesson is closed; its view stays (G lists lessons)");
        return 1;
    default: return 0;
    }
}

/* ---- the clock ---- */

static int tick_once(app_state *s, app_teach *t, double now) {
    int changed = 0;
    if (t->stage_s > 0.0 && now >= t->stage_next) {
        if (s->look.focus && s->look.step < app_stage_count(s)) s->look.step++;
        if (!s->look.focus || s->look.step >= app_stage_count(s))
            t->stage_s = 0.0;
        else
            t->stage_next += t->stage_s * 1000.0;
        changed = 1;
    }
    if (t->sweep_n && now >= t->sweep_next) {
        t->sweep_i++;
        if (t->sweep_i < t->sweep_n && s->cfg.d_model % t->sweep_h[t->sweep_i] == 0) {
            mha_config c = s->cfg;
            c.h = t->sweep_h[t->sweep_i];
            memset(c.ablate, 0, sizeof c.ablate);
            app_change_cfg(s, c);
            t->sweep_next += LESSON_SWEEP_S * 1000.0;
        }
        if (t->sweep_i >= t->sweep_n - 1) t->sweep_n = 0;
        changed = 1;
    }
    if (changed) {
        s->layout_valid = 0;
        s->dirty = 1;
    }
    return changed;
}

int app_teach_tick(app_state *s, double now_ms) {
    app_teach *t = s->teach;
    if (!t) return 0;
    int changed = 0;
    for (int guard = 0; guard < 100 && tick_once(s, t, now_ms); guard++) changed = 1;
    return changed;
}

int app_teach_timeout_ms(const app_state *s) {
    const app_teach *t = s->teach;
    if (!t) return -1;
    double next = -1.0;
    if (t->stage_s > 0.0) next = t->stage_next;
    if (t->sweep_n && (next < 0.0 || t->sweep_next < next)) next = t->sweep_next;
    if (next < 0.0) return -1;
    const double left = next - s->now_ms;
    return left > 0.0 ? (int)(left + 0.999) : 0;
}

void app_teach_finish(app_state *s) {
    app_teach *t = s->teach;
    if (!t) return;
    for (int guard = 0; guard < 1000 && (t->stage_s > 0.0 || t->sweep_n); guard++)
        tick_once(s, t, 1e300);
    app_write_finish(s); /* the tokens its model writes, all of them */
}

const lesson *app_teach_lesson(const app_state *s, int *k, int *n) {
    const app_teach *t = s->teach;
    if (!t || !t->open) return NULL;
    if (k) *k = t->k + 1;
    if (n) *n = t->L.count;
    return &t->L;
}

const char *app_teach_why(const app_state *s) {
    return s->teach ? s->teach->why : "";
}

const char *app_teach_recording(const app_state *s, int *steps) {
    const app_teach *t = s->teach;
    if (!t || !t->recording) return NULL;
    if (steps) *steps = t->rec.count;
    return t->rec_path;
}

/* 1 if s shows something else than step k as written. */
static int explored(const app_state *s, const app_teach *t) {
    app_settings *now = app_settings_create(), *step = app_settings_clone(t->L.steps[t->k].view);
    int same = 1;
    if (now && step) {
        app_settings_capture(s, now);
        if (t->stage_s > 0.0) /* what the step's own animation changes is not exploring */
            app_settings_unset(now, "stage"), app_settings_unset(step, "stage");
        if (t->sweep_n) app_settings_unset(now, "h"), app_settings_unset(step, "h");
        for (int i = 0; i < t->L.steps[t->k].nacts; i++) /* what `do =` changes neither */
            if (t->L.steps[t->k].acts[i].kind == LESSON_DO_TRAIN) {
                static const char *const train[] = {"train", "train-steps", "train-layer"};
                for (int j = 0; j < 3; j++)
                    app_settings_unset(now, train[j]), app_settings_unset(step, train[j]);
            } else if (t->L.steps[t->k].acts[i].kind == LESSON_DO_COMPARE) {
                app_settings_unset(now, "compare"), app_settings_unset(step, "compare");
            } else if (t->L.steps[t->k].acts[i].kind == LESSON_DO_WRITE) {
                app_settings_unset(now, "text"), app_settings_unset(step, "text");
            }
        same = app_settings_equal(now, step);
    }
    app_settings_free(now);
    app_settings_free(step);
    return !same;
}

void app_teach_view(const app_state *s, view_state *vs) {
    app_teach *t = s->teach;
    if (!t || (!t->open && !t->recording)) return;
    if (t->captioning && s->editing) {
        snprintf(t->prompt, sizeof t->prompt,
                 "Caption of step %d: heading | line | line. Enter stores it, Escape adds the "
                 "step without one",
                 t->rec.count + 1);
        vs->edit_prompt = t->prompt;
    }
    view_caption *c = &t->cap;
    memset(c, 0, sizeof *c);
    c->recording = t->recording;
    if (t->open) {
        const lesson_step *st = &t->L.steps[t->k];
        c->title = t->L.title;
        c->heading = st->heading;
        c->text = st->text;
        c->step = t->k + 1;
        c->steps = t->L.count;
        c->explored = explored(s, t);
    } else {
        snprintf(t->rec_heading, sizeof t->rec_heading,
                 "Recording: %d step%s (A adds the view, Ctrl+R stops)", t->rec.count,
                 t->rec.count == 1 ? "" : "s");
        c->heading = t->rec_heading;
    }
    vs->caption = c;
}
