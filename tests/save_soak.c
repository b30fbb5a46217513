/* save_soak.c: the soak's missing piece, saves. Random actions on the app's state
 * (heads, width, samples, seed, mask, theme, colormap, zoom, focus, pages, the PNG
 * multiplier, resizes); at every Ctrl+S or Ctrl+Shift+S, and now and then an SVG
 * or PDF, the figure is written the way the window writes it (export_png,
 * export_vector) into one fixed name, half the time under a random file-size
 * limit (a disk that fills up at any byte). After each save: either it succeeded
 * and the file is whole (PNG: IHDR the size the state says, or at most that for a
 * panel, which is cropped; IEND last; SVG: ends
 * with </svg>; PDF: ends with %%EOF), or it failed with "cannot write PATH:
 * reason" and the earlier file is byte for byte what it was; never a temporary
 * file.
 * With --mhaviz BIN it also saves what the window writes for mhaviz to read
 * (save_files.h): texts typed and opened (non-ASCII over the text field's 8 KiB,
 * blank ones), view files (Ctrl+Shift+V) and recorded lessons (Ctrl+R, A, a caption
 * or Esc, Ctrl+R), and opens each with BIN headless: `--state F --export` must exit
 * 0 with a PNG byte for byte the one the state itself exports, `--lesson F
 * --export` must exit 0. --model PATH loads a checkpoint first (its keys Y, O, X,
 * J and Shift+J join the actions; without it MHAVIZ_TEST_MODEL, when set). Usage: save_soak
 * [--seed N] [--count N] [--mhaviz BIN] [--model PATH] (defaults 1 and 400). Under
 * MHAVIZ_TEST_SAMPLE=k (the sanitizer build) every k-th save is written and checked; the
 * actions, texts, view files and lessons are all the same. */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "export.h"
#include "font.h"
#include "samples.h"
#include "save_files.h"
#include "state.h"
#include "text_file.h"

#include "sample.h"
#include "soak_rng.h"

static long step_no;
static char g_dir[] = "/tmp/mhaviz-save-soak-XXXXXX";

/* At exit, also after a failed check: the figures and the folder go. */
static void remove_dir(void) {
    static const char *ext[3] = {"png", "svg", "pdf"};
    char path[600];
    for (int i = 0; i < 3; i++) {
        snprintf(path, sizeof path, "%s/figure.%s", g_dir, ext[i]);
        unlink(path);
    }
    rmdir(g_dir);
}

#define EXPECT(cond, ...)                                                                          \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "save_soak: step %ld: ", step_no);                                     \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fprintf(stderr, "\n");                                                                 \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

static unsigned char *slurp(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *buf = malloc((size_t)n + 1);
    EXPECT(buf != NULL, "out of memory");
    *len = fread(buf, 1, (size_t)n, f);
    buf[*len] = '\0';
    fclose(f);
    return buf;
}

static uint32_t be32(const unsigned char *p) {
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* A whole PNG of w x h (at most, when cropped): the signature, IHDR first, then
 * chunks end to end to IEND. */
static void expect_whole_png(const unsigned char *b, size_t len, int w, int h, int cropped) {
    EXPECT(len > 33 && memcmp(b, "\x89PNG\r\n\x1a\n", 8) == 0 && memcmp(b + 12, "IHDR", 4) == 0,
           "not a PNG (%zu bytes)", len);
    int pw = (int)be32(b + 16), ph = (int)be32(b + 20);
    EXPECT(cropped ? pw >= 1 && ph >= 1 && pw <= w && ph <= h : pw == w && ph == h,
           "PNG of %dx%d, expected %s%dx%d", pw, ph, cropped ? "at most " : "", w, h);
    size_t pos = 8;
    for (;;) {
        EXPECT(pos + 12 <= len, "PNG cut at byte %zu of %zu", pos, len);
        uint32_t n = be32(b + pos);
        EXPECT(pos + 12 + n <= len, "chunk past the end");
        if (memcmp(b + pos + 4, "IEND", 4) == 0) {
            EXPECT(pos + 12 == len, "bytes after IEND");
            return;
        }
        pos += 12 + n;
    }
}

static int temporaries(const char *dir) {
    DIR *d = opendir(dir);
    EXPECT(d != NULL, "opendir");
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) n += strstr(e->d_name, ".tmp-") != NULL;
    closedir(d);
    return n;
}

static test_sample saves; /* the sanitizer build: every k-th save (sample.h) */

/* One save the way the window makes it, under a random file-size limit. A save the
   sample leaves out draws the same random numbers, so the actions stay the same. */
static void save(app_state *s, font_set *fonts, const char *dir, app_save_kind kind, int fmt,
                 long *saved, long *refused) {
    const int limited = rnd_below(2);
    const rlim_t limit = limited ? (rlim_t)rnd_below(fmt == 0 ? 400000 : 200000) : 0;
    if (!test_sample_next(&saves)) return;
    static const char *ext[3] = {"png", "svg", "pdf"};
    char path[600], err[700] = "";
    snprintf(path, sizeof path, "%s/figure.%s", dir, ext[fmt]);
    size_t before_len = 0;
    unsigned char *before = slurp(path, &before_len);
    view_state vs;
    app_figure_view(s, kind, &vs);
    struct rlimit old, lim;
    getrlimit(RLIMIT_FSIZE, &old);
    if (limited) {
        lim.rlim_cur = limit;
        lim.rlim_max = old.rlim_max;
        setrlimit(RLIMIT_FSIZE, &lim);
    }
    int rc = fmt == 0 ? export_png(path, &vs, s->png_scale, fonts, err, sizeof err)
                      : export_vector(path, &vs, fonts, err, sizeof err);
    if (limited) setrlimit(RLIMIT_FSIZE, &old);
    size_t len = 0;
    unsigned char *after = slurp(path, &len);
    if (rc == 0) {
        EXPECT(after != NULL, "%s: saved, but no file", path);
        if (fmt == 0) /* a single panel is cropped to its content */
            expect_whole_png(after, len, s->width * s->png_scale, s->height * s->png_scale,
                             vs.panel != VIEW_PANEL_ALL);
        else if (fmt == 1)
            EXPECT(len > 7 && memcmp(after + len - 7, "</svg>\n", 7) == 0, "SVG cut short");
        else
            EXPECT(len > 6 && strstr((const char *)after + len - 7, "%%EOF"), "PDF cut short");
        ++*saved;
    } else {
        char want[700];
        snprintf(want, sizeof want, "cannot write %s: ", path);
        EXPECT(limited, "a save without a limit failed: %s", err);
        EXPECT(strncmp(err, want, strlen(want)) == 0, "message \"%s\"", err);
        EXPECT((!before && !after) ||
                   (before && after && len == before_len && memcmp(before, after, len) == 0),
               "%s changed by a failed save", path);
        ++*refused;
    }
    EXPECT(temporaries(dir) == 0, "a temporary file left after a %s save",
           rc == 0 ? "good" : "failed");
    free(before);
    free(after);
}

int main(int argc, char **argv) {
    uint64_t seed = 1;
    long count = 400;
    const char *mhaviz = NULL, *model = NULL;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--seed") == 0)
            seed = strtoull(argv[i + 1], NULL, 10);
        else if (strcmp(argv[i], "--count") == 0)
            count = strtol(argv[i + 1], NULL, 10);
        else if (strcmp(argv[i], "--mhaviz") == 0)
            mhaviz = argv[i + 1];
        else if (strcmp(argv[i], "--model") == 0)
            model = argv[i + 1];
    }
    if (!model && getenv("MHAVIZ_TEST_MODEL") && *getenv("MHAVIZ_TEST_MODEL"))
        model = getenv("MHAVIZ_TEST_MODEL"); /* state_model_check.py's checkpoint */
    rng_state = seed;
    saves = test_sample_begin("save_soak's saves");
    signal(SIGXFSZ, SIG_IGN); /* past the limit a write fails, as on a full disk */
    char err[512];
    if (TTF_Init() != 0) return 1;
    font_set *fonts = font_set_open(NULL, err, sizeof err);
    EXPECT(fonts != NULL, "fonts: %s", err);
    app_state *s = app_state_create(font_measure, fonts);
    cli_options o;
    memset(&o, 0, sizeof o);
    o.theme = o.colormap = -1;
    o.model_path = model;
    o.mode = CLI_EXPORT; /* a model read at once, as the window's jobs layer would */
    tok_list toks = {0};
    EXPECT(s && tok_split(&toks, samples_get(0)->text, MHA_MAX_N, NULL, err, sizeof err) == 0,
           "start");
    mha_config cfg = {.h = 4, .d_model = 64, .seed = 1};
    EXPECT(app_state_init(s, &o, &toks, &cfg, err, sizeof err) == 0, "init: %s", err);
    app_action resize = {.kind = ACT_RESIZE, .x = 1000, .y = 700, .f = 1.0f};
    app_apply(s, &resize);
    EXPECT(mkdtemp(g_dir) != NULL, "mkdtemp");
    atexit(remove_dir);
    const char *dir = g_dir;
    s->read_text = text_file_read_regular; /* the window's: window.c */
    s->auto_contrast = 1;
    s->export_dir = dir;
    save_files *files = mhaviz ? save_files_create(mhaviz, dir, fonts) : NULL;
    EXPECT(!mhaviz || files, "save_files");

    static const int keys[] = {APP_KEY_UP, APP_KEY_DOWN, APP_KEY_LEFT, APP_KEY_RIGHT, APP_KEY_TAB,
                               'r', 'm', 'n', 'c', 't', '2', APP_KEY_ESCAPE, APP_KEY_PAGEDOWN, '=',
                               '-', 's',
                               /* with --mhaviz: more of the view a view file keeps, and
                                  a model's layer, overview, heads off and K/V regrouped */
                               'y', 'o', 'x', 'h', 'v', 'd', 'k', 'b', '.', 'j'};
    const int nkeys = (int)(sizeof keys / sizeof keys[0]) - (files ? 0 : 10);
    long saved = 0, refused = 0;
    for (step_no = 1; step_no <= count; step_no++) {
        if (files && rnd_below(8) == 0) { /* a text, a view file or a lesson's key */
            save_files_act(files, s, step_no);
            continue;
        }
        int pick = rnd_below(100);
        app_action a = {.kind = ACT_NONE};
        if (pick < 70) {
            int key = keys[rnd_below(nkeys)];
            int mods = key == '=' || key == '-' || key == 's' ? APP_MOD_CTRL : 0;
            /* Ctrl+Shift+S, a panel: not with --mhaviz's keys, whose states (a model's
               equation, presentation mode) can draw a panel past the figure's size */
            if (key == 's' && rnd_below(2) && !files) mods |= APP_MOD_SHIFT;
            if (key == 'j' && rnd_below(2)) mods |= APP_MOD_SHIFT; /* K/V shared back */
            if (key == APP_KEY_RIGHT && s->cfg.d_model >= 256) key = APP_KEY_LEFT;
            a = app_key_action(s, key, mods);
        } else if (pick < 80) {
            a.kind = ACT_PNG_SCALE;
        } else if (pick < 88) {
            a.kind = ACT_RESIZE;
            a.x = 800 + rnd_below(1200);
            a.y = 600 + rnd_below(800);
            a.f = 1.0f;
        } else {
            a.kind = ACT_SAVE;
        }
        app_apply(s, &a);
        app_layout(s); /* the window's frame: the page clamped to the pages there are */
        app_save_kind kind = app_take_save(s);
        if (kind != APP_SAVE_NONE) save(s, fonts, dir, kind, 0, &saved, &refused);
        if (rnd_below(25) == 0)
            save(s, fonts, dir, APP_SAVE_VIEW, 1 + rnd_below(2), &saved, &refused);
    }
    /* sampled, about a k-th of them */
    EXPECT(saved * saves.k > 10 && refused * saves.k > 10,
           "too few saves to mean much: %ld saved, %ld refused of %ld", saved, refused,
           saves.index);
    printf("save_soak: %ld actions from seed %llu: %ld saves whole, %ld refused with the earlier "
           "file intact (of %ld saves), no temporary file\n",
           count, (unsigned long long)seed, saved, refused, saves.index);
    if (files) save_files_finish(files, s, step_no);
    save_files_destroy(files);
    app_state_destroy(s);
    font_set_close(fonts);
    TTF_Quit();
    return 0;
}
