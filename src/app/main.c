/* main.c: parses the options, resolves the text and configuration, and picks a
 * mode (window, dump, export, bench, list). The single place that prints
 * "mhaviz: ..." and chooses the exit status: 0 ok, 2 usage, 1 runtime (130, 143
 * after SIGINT, SIGTERM: see cleanup.h). */
#define _GNU_SOURCE /* fopencookie */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "app.h"
#include "cleanup.h"
#include "cli.h"
#include "dump.h"
#include "lesson_mode.h"
#include "mha.h"
#include "samples.h"
#include "settings.h"
#include "sweep.h"
#include "text_file.h"
#include "tok.h"
#include "train_figure.h"
#include "train_mode.h"

#ifndef MHAVIZ_VERSION
#define MHAVIZ_VERSION "0.0.0"
#endif

/* The messages' buffer: room for any argument (the kernel's limit on one is
 * 128 KiB) and its reason, so no message is cut before fail shortens it. */
#define MSG_LEN (1u << 18)

/* A word (a run without spaces) longer than WORD_MAX bytes is shortened in its
 * middle to its first WORD_HEAD and last WORD_TAIL bytes around an ellipsis:
 * a long path keeps its start and its file name, and the reason after it. */
#define WORD_MAX 100
#define WORD_HEAD 40
#define WORD_TAIL 50

/* Prints "mhaviz: msg" as one line (a control character in a file name or a
 * value shows as '?'), every long word shortened in the middle, and returns
 * status. */
static int fail(int status, const char *msg) {
    static char line[MSG_LEN];
    size_t o = 0;
    for (size_t i = 0; msg[i] && o + 4 < sizeof line;) {
        if (msg[i] == ' ') {
            line[o++] = msg[i++];
            continue;
        }
        size_t len = strcspn(msg + i, " ");
        size_t head = len, tail = 0;
        if (len > WORD_MAX) { /* cut between UTF-8 characters, never inside one */
            head = WORD_HEAD;
            while (head > 0 && ((unsigned char)msg[i + head] & 0xC0) == 0x80) head--;
            tail = WORD_TAIL;
            while (tail > 0 && ((unsigned char)msg[i + len - tail] & 0xC0) == 0x80) tail--;
        }
        for (size_t k = 0; k < head && o + 4 < sizeof line; k++) line[o++] = msg[i + k];
        if (tail) {
            memcpy(line + o, "\xE2\x80\xA6", 3); /* ... */
            o += 3;
            for (size_t k = len - tail; k < len && o + 4 < sizeof line; k++) line[o++] = msg[i + k];
        }
        i += len;
    }
    line[o] = '\0';
    for (char *c = line; *c; c++)
        if ((unsigned char)*c < 0x20 || *c == 0x7F) *c = '?';
    fprintf(stderr, "mhaviz: %s\n", line);
    return status;
}

/* Standard output goes through out_write, which keeps the reason of the first
 * failed write: a flush elsewhere (one that ignores its result) leaves only the
 * stream's error flag, and finish_stdout must still say why. */
static int out_errno;

static ssize_t out_write(void *cookie, const char *buf, size_t len) {
    (void)cookie;
    for (size_t done = 0; done < len;) {
        ssize_t w = write(STDOUT_FILENO, buf + done, len - done);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) {
            if (!out_errno) out_errno = w < 0 ? errno : EIO;
            return -1;
        }
        done += (size_t)w;
    }
    return (ssize_t)len;
}

static void stdout_checked(void) {
    cookie_io_functions_t io = {NULL, out_write, NULL, NULL};
    FILE *f = fopencookie(NULL, "w", io);
    if (!f) return; /* then the plain stream, and EIO for a reason lost */
    setvbuf(f, NULL, isatty(STDOUT_FILENO) ? _IOLBF : _IOFBF, BUFSIZ);
    stdout = f;
}

/* Standard output must have reached its file: a full disk or a closed pipe shows
 * at the flush or the close. errnum is the errno of a failed print (0: none).
 * Returns 0, or 1 after "mhaviz: cannot write standard output: reason". */
static int finish_stdout(int errnum) {
    if (!errnum && fflush(stdout) != 0) errnum = out_errno ? out_errno : errno;
    int flagged = ferror(stdout); /* a failure while printing, its reason gone */
    if (fclose(stdout) != 0 && !errnum) errnum = errno; /* often the reason again */
    if (!errnum && flagged) errnum = out_errno ? out_errno : EIO;
    if (!errnum) return 0;
    char msg[200];
    snprintf(msg, sizeof msg, "cannot write standard output: %s", strerror(errnum));
    return fail(1, msg);
}

/* --help, --version and --list-samples: what they print, checked. */
static int print_info(const cli_options *o) {
    int bad = 0;
    switch (o->mode) {
    case CLI_HELP: bad = fputs(cli_usage(), stdout) == EOF; break;
    case CLI_VERSION: bad = printf("mhaviz %s\n", MHAVIZ_VERSION) < 0; break;
    default:
        for (int i = 0; i < samples_count() && !bad; i++)
            bad = printf("%d\t%s\t%s\n", i + 1, samples_get(i)->name, samples_get(i)->text) < 0;
        break;
    }
    return finish_stdout(bad ? (out_errno ? out_errno : EIO) : 0);
}

/* Resolves --text / --text-file / --sample into tokens and checks the whole
 * configuration. A typed --text over 512 tokens is refused; a file's text is cut
 * to its first 512, and *cut_total says how many it held (0: not cut). Returns 0,
 * or 2 with a message: every usage error is found before anything is written. */
static int resolve_input(const cli_options *o, tok_list *toks, mha_config *cfg, int *cut_total,
                         char *err, size_t errlen) {
    *cut_total = 0;
    const char *text = NULL;
    if (o->text) {
        text = o->text;
    } else {
        int k = o->sample ? o->sample : 1;
        const sample *s = samples_get(k - 1);
        if (!s) {
            snprintf(err, errlen, "--sample %d: must be between 1 and %d (see --list-samples)", k,
                     samples_count());
            return 2;
        }
        text = s->text;
    }
    int total = 0;
    char terr[MHA_ERR_LEN];
    const char *what = o->text_file ? text_file_name(o->text_file) : "--text";
    if (tok_split(toks, text, MHA_MAX_N, &total, terr, sizeof terr) != 0) {
        snprintf(err, errlen, "%s: %s", what, terr);
        return 2;
    }
    if (total > MHA_MAX_N && o->text_file) {
        *cut_total = total; /* its first MHA_MAX_N tokens, kept by tok_split */
    } else if (total > MHA_MAX_N) {
        tok_free(toks);
        snprintf(err, errlen, "--text: %d tokens; at most %d are allowed", total, MHA_MAX_N);
        return 2;
    }
    *cfg = o->cfg;
    mha_config_resolve(cfg);
    if (mha_config_check(cfg, toks->count, err, errlen) != 0) {
        tok_free(toks);
        return 2;
    }
    if ((o->panel == CLI_PANEL_HEAD || o->panel == CLI_PANEL_LINES) && o->panel_head > cfg->h) {
        tok_free(toks);
        snprintf(err, errlen, "--panel %s:%d: must be between 1 and h (%d)",
                 o->panel == CLI_PANEL_LINES ? "lines" : "head", o->panel_head, cfg->h);
        return 2;
    }
    return 0;
}

static int run_dump(const cli_options *o, const tok_list *toks, const mha_config *cfg, char *err,
                    size_t errlen) {
    mha_model *m = mha_model_create();
    if (!m) return fail(1, "out of memory");
    if (mha_model_compute(m, cfg, toks, err, errlen) != 0) {
        mha_model_destroy(m);
        return fail(1, err);
    }
    attn_layer layer;
    mha_layer_text text;
    mha_layer_fill(&layer, &text, m, toks);
    int rc = dump_write_layer(o->dump_dir, &layer, err, errlen);
    mha_model_destroy(m);
    if (rc != 0) return fail(1, err);
    return 0;
}

/* Text widths for a state that is never drawn (--dump with --state). */
static void no_measure(void *ud, const char *text, int size, int bold, int *w, int *h) {
    (void)ud;
    (void)bold;
    *w = (int)strlen(text) * size / 2;
    *h = size;
}

/* --dump with --state: the model of the view the file describes (options beside it
   win), made as the window makes it, written as run_dump writes it. */
static int run_dump_state(const cli_options *o, tok_list *toks, const mha_config *cfg, char *err,
                          size_t errlen) {
    app_state *s = app_state_create(no_measure, NULL);
    if (!s) return fail(1, "out of memory");
    int rc = app_state_init(s, o, toks, cfg, err, errlen);
    if (rc != 0) {
        app_state_destroy(s);
        return fail(rc, err);
    }
    attn_layer layer;
    mha_layer_text text;
    mha_layer_fill(&layer, &text, s->m, &s->toks);
    rc = dump_write_layer(o->dump_dir, &layer, err, errlen);
    app_state_destroy(s);
    return rc ? fail(1, err) : 0;
}

/* The modes that compute: a loaded model's dump, or the random model's tokens
 * and configuration, then the dump, --bench, --export or the window. */
static int main_modes(const cli_options *op, char *err, size_t errlen) {
    const cli_options o = *op;
    int cut = 0; /* --text-file: the tokens it held when cut to MHA_MAX_N */
    if (o.model_path && (o.mode == CLI_DUMP || o.model_generate)) {
        int rc = app_model_dump(&o, err, errlen);
        return rc ? fail(rc, err) : 0;
    }
    tok_list toks = {0};
    mha_config cfg;
    int rc;
    if (o.model_path) { /* the random model under it: the default sample, h = 4 */
        cli_options base = o;
        base.text = base.text_file = NULL;
        base.sample = 0;
        memset(&base.cfg, 0, sizeof base.cfg);
        base.panel = CLI_PANEL_ALL;
        rc = resolve_input(&base, &toks, &cfg, &cut, err, errlen);
    } else {
        rc = resolve_input(&o, &toks, &cfg, &cut, err, errlen);
    }
    if (rc != 0) return fail(rc, err);
    if (cut && o.mode != CLI_WINDOW) /* the window's status line says it */
    {
        static char note[MSG_LEN]; /* a note, not an error: the run goes on (exit 0) */
        snprintf(note, sizeof note, "%s: text cut to the first %d of its %d tokens",
                 text_file_name(o.text_file), MHA_MAX_N, cut);
        fail(0, note);
    }

    switch (o.mode) {
    case CLI_DUMP:
        rc = o.lesson_path ? app_lesson_dump(&o, &toks, &cfg, err, errlen) /* --step K's */
             : o.state     ? run_dump_state(&o, &toks, &cfg, err, errlen)
                           : run_dump(&o, &toks, &cfg, err, errlen);
        if (rc != 0 && o.lesson_path) fail(rc, err);
        break;
    case CLI_BENCH:
        rc = app_bench(&o, err, errlen);
        if (rc != 0) fail(rc, err);
        break;
    case CLI_EXPORT:
        rc = o.lesson_path && !o.lesson_step ? app_lesson_deck(&o, &toks, &cfg, err, errlen)
             : o.lesson_path                 ? app_lesson_step_export(&o, &toks, &cfg, err, errlen)
                                             : app_export(&o, &toks, &cfg, err, errlen);
        if (rc != 0) fail(rc, err);
        break;
    default:
        rc = app_window(&o, &toks, &cfg, err, errlen);
        if (rc != 0) fail(rc, err);
        break;
    }
    tok_free(&toks);
    if (rc == 0 && o.mode == CLI_BENCH) rc = finish_stdout(0); /* its table */
    return rc;
}

int main(int argc, char **argv) {
    cli_options o;
    static char err[MSG_LEN];
    if (cli_parse(&o, argc, argv, err, sizeof err) != 0) return fail(2, err);

    /* headless modes: a signal removes temporary files and exits 130 or 143; the
       window leaves SIGINT and SIGTERM to SDL, which turns them into a quit */
    if (o.mode != CLI_WINDOW) cleanup_install_signals();
    stdout_checked();

    switch (o.mode) {
    case CLI_HELP:
    case CLI_VERSION:
    case CLI_LIST_SAMPLES: return print_info(&o);
    case CLI_TRAIN: {
        if (o.train.sweep) { /* --sweep h: one run per h (sweep.c) */
            int rc = app_sweep(&o, err, sizeof err);
            return rc == 0 ? finish_stdout(0) : fail(rc, err);
        }
        int rc = o.export_path ? app_train_export(&o, err, sizeof err) /* trains once, then draws */
                               : app_train(&o.train, o.cfg.h, o.cfg.d_model, o.cfg.seed, o.dump_dir,
                                           err, sizeof err);
        if (rc == 0) return finish_stdout(0); /* its progress lines */
        return fail(rc, err);
    }
    default: break;
    }

    char *file_text = NULL; /* --text-file: read whole and checked before any mode starts */
    if (o.text_file) {
        int frc = text_file_read(o.text_file, &file_text, err, sizeof err);
        if (frc != 0) return fail(frc, err);
        o.text = file_text;
    }
    if (o.lesson_path) { /* the whole lesson checked before anything opens */
        int lrc = app_lesson_check(&o, err, sizeof err);
        if (lrc != 0) {
            free(file_text);
            return fail(lrc, err);
        }
    }
    app_settings *view = NULL; /* --state FILE: read and checked before any mode starts */
    if (o.state_file) {
        view = app_settings_create();
        int vrc = view ? app_view_file_read(o.state_file, view, err, sizeof err) : 1;
        if (vrc != 0) {
            if (!view) snprintf(err, sizeof err, "--state: out of memory");
            app_settings_free(view);
            free(file_text);
            return fail(vrc, err);
        }
        for (int i = 0; i < o.state_given_count; i++) app_settings_unset(view, o.state_given[i]);
        char v[64], where[1200];
        err[0] = '\0';
        if (o.mode != CLI_WINDOW && strcmp(app_settings_get(view, "train", v, sizeof v), "off") &&
            v[0]) /* the window's trainer; a figure of a trained model is --train's */
            snprintf(err, sizeof err,
                     "%s%s: training runs in the window (a figure: --train %s "
                     "--export FILE)",
                     app_settings_where(view, "train", where, sizeof where), v, v);
        if (o.panel != CLI_PANEL_ALL &&
            strcmp(app_settings_get(view, "compare", v, sizeof v), "off") &&
            v[0]) /* as --compare: the compare view is one figure */
            snprintf(err, sizeof err, "%s%s: the compare view is one figure: only with --panel all",
                     app_settings_where(view, "compare", where, sizeof where), v);
        if (o.mode == CLI_DUMP && strcmp(app_settings_get(view, "model", v, sizeof v), "off") &&
            v[0])
            snprintf(err, sizeof err,
                     "%s%s: --dump writes the random model (a checkpoint's: "
                     "--model PATH --dump DIR)",
                     app_settings_where(view, "model", where, sizeof where), v);
        /* --kv-heads G beside a view file of a loaded model: that model's K/V heads
           (model-kv = G, checked against them when the model is read), not the random
           model's it would share otherwise (cli_model_check gave it to those) */
        if (!err[0] && o.cfg.kv_heads && !o.model_path &&
            strcmp(app_settings_get(view, "model", v, sizeof v), "off") && v[0]) {
            char g[16];
            snprintf(g, sizeof g, "%d", o.cfg.kv_heads);
            char why[256];
            if (app_settings_set(view, "model-kv", g, ".", why, sizeof why) != 0)
                snprintf(err, sizeof err, "--kv-heads %s: %s", g, why);
            o.cfg.kv_heads = 0;
        }
        if (err[0]) {
            app_settings_free(view);
            free(file_text);
            return fail(2, err);
        }
        app_settings_shape(view, &o.cfg.h, &o.cfg.d_model); /* checked together below */
        o.state = view;
    }
    int rc = main_modes(&o, err, sizeof err);
    if (o.mode != CLI_WINDOW && getenv("MHAVIZ_STATS")) /* the window's own line says it */
        fprintf(stderr, "stats forwards=%lu\n", mha_forwards());
    app_settings_free(view);
    free(file_text);
    return rc;
}
