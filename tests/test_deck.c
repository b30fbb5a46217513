/* test_deck: the slide-deck writer (src/app/modes/deck.c) with the real fonts.
 * A 3-page PDF from three view states with captions: pdfinfo says 3 pages of
 * 960 x 540 points (a slide's 13.33 x 7.5 in, the 1920 x 1080 layout scaled), pdftotext finds each
 * page's own heading and caption (and not another page's) and no window hint. SVG and PNG decks:
 * deck-01 ... deck-03 and nothing else in the folder, each PNG 1920 x 1080 (x --scale). Failures
 * leave nothing: a missing folder, a read-only folder (when not root), a page that cannot be
 * written in the middle of a deck, deck_close(ok = 0), and SIGTERM in the middle of a deck (the
 * cleanup handler removes every page written so far). A failed deck keeps the earlier one byte for
 * byte (a folder in a page's way, a rename that fails midway, a full disk, whose message names the
 * page), a 3-page deck replaces a 6-page one whole, and SIGTERM during the commit acts on a whole
 * deck and says it is written.
 * MHAVIZ_DECK_KEEP=DIR keeps a copy of the PNG deck's first page there. */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "caption_check.h"
#include "cleanup.h"
#include "deck.h"
#include "export.h"
#include "font.h"
#include "view_fixture.h"

static font_set *fonts;
static fx_model models[3];
static view_state states[3];
static view_caption caps[3];
static char root[256];

static const char *const HEADINGS[3] = {"X: the input, n \xC3\x97 d_model",
                                        "Q_i, K_i, V_i: one head's view",
                                        "Scores \xC3\xB7 \xE2\x88\x9A"
                                        "d_k, then softmax"};
static const char *const TEXTS[3] = {
    "Each token is a row of X \xE2\x88\x88 \xE2\x84\x9D^{n\xC3\x97"
    "d_model}.\nThe model computes "
    "every head from the same alpha input.",
    "Each head projects X with its own W_i^Q, W_i^K and W_i^V.\nThe bravo projections differ "
    "per head.",
    "Dividing by \xE2\x88\x9A"
    "d_k keeps the charlie scores from growing with d_k.\n*Softmax* "
    "turns each row into weights that sum to 1."};
static const char *const MARK[3] = {"alpha", "bravo", "charlie"}; /* one per page */

static int setup(void **st) {
    (void)st;
    if (TTF_Init() != 0) return -1;
    char err[256];
    fonts = font_set_open(NULL, err, sizeof err);
    if (!fonts) {
        fprintf(stderr, "fonts: %s\n", err);
        return -1;
    }
    const int hs[3] = {1, 2, 4};
    for (int i = 0; i < 3; i++) {
        fx_model_make(&models[i], 12, 32, hs[i], MHA_MASK_NONE);
        fx_state(&states[i], &models[i], 1920, 1080);
        caps[i] = (view_caption){
            "Multi-head attention, step by step", HEADINGS[i], TEXTS[i], i + 1, 3, 0, 1};
        states[i].caption = &caps[i];
    }
    snprintf(root, sizeof root, "/tmp/mhaviz-deck-XXXXXX");
    if (!mkdtemp(root)) return -1;
    return 0;
}

static int teardown(void **st) {
    (void)st;
    for (int i = 0; i < 3; i++) fx_model_free(&models[i]);
    font_set_close(fonts);
    TTF_Quit();
    char cmd[600];
    snprintf(cmd, sizeof cmd, "chmod -R u+w %s; rm -rf %s", root, root);
    return system(cmd) == 0 ? 0 : -1;
}

/* A fresh empty folder under root. */
static void fresh(char *dir, size_t len, const char *name) {
    snprintf(dir, len, "%s/%s", root, name);
    assert_int_equal(mkdir(dir, 0777), 0);
}

/* Names in dir (sorted, joined by ' '), and how many. */
static int listing(const char *dir, char *out, size_t len) {
    struct dirent **names;
    int n = scandir(dir, &names, NULL, alphasort), count = 0;
    out[0] = '\0';
    for (int i = 0; i < n; i++) {
        if (strcmp(names[i]->d_name, ".") && strcmp(names[i]->d_name, "..")) {
            size_t l = strlen(out);
            snprintf(out + l, len - l, "%s%s", count ? " " : "", names[i]->d_name);
            count++;
        }
        free(names[i]);
    }
    if (n >= 0) free(names);
    return count;
}

/* The output of a command (at most len bytes). */
static void run(char *out, size_t len, const char *fmt, ...) {
    char cmd[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    size_t n = fread(out, 1, len - 1, p);
    out[n] = '\0';
    assert_int_equal(pclose(p), 0);
}

static int write_deck(const char *path, int scale, char *err, size_t errlen) {
    deck *d = deck_open(path, 1920, 1080, scale, fonts, err, errlen);
    if (!d) return -1;
    for (int i = 0; i < 3; i++)
        if (deck_page(d, &states[i], err, errlen)) {
            deck_close(d, 0, NULL, 0);
            return -1;
        }
    return deck_close(d, 1, err, errlen);
}

static void test_pdf(void **st) {
    (void)st;
    char dir[512], path[600], err[512], out[8192];
    fresh(dir, sizeof dir, "pdf");
    snprintf(path, sizeof path, "%s/deck.pdf", dir);
    if (write_deck(path, 1, err, sizeof err)) fail_msg("%s", err);
    assert_int_equal(listing(dir, out, sizeof out), 1);
    assert_string_equal(out, "deck.pdf");
    run(out, sizeof out, "pdfinfo '%s'", path);
    const char *pages = strstr(out, "Pages:"), *size = strstr(out, "Page size:");
    int n = 0;
    double pw = 0, ph = 0;
    if (!pages || sscanf(pages, "Pages: %d", &n) != 1 || n != 3)
        fail_msg("pdfinfo: expected 3 pages in:\n%s", out);
    /* a slide's size, 13.333 x 7.5 in, whatever the layout's 1920 x 1080 pixels */
    if (!size || sscanf(size, "Page size: %lf x %lf", &pw, &ph) != 2 || pw != 960 || ph != 540)
        fail_msg("pdfinfo: expected 960 x 540 pts (a 16:9 slide) in:\n%s", out);
    for (int k = 1; k <= 3; k++) {
        run(out, sizeof out, "pdftotext -f %d -l %d '%s' -", k, k, path);
        char want[64];
        snprintf(want, sizeof want, "step %d of 3", k);
        if (!strstr(out, want)) fail_msg("page %d: no \"%s\" in:\n%s", k, want, out);
        for (int j = 0; j < 3; j++) {
            const int has = strstr(out, MARK[j]) != NULL;
            if (has != (j == k - 1))
                fail_msg("page %d: \"%s\" expected %s:\n%s", k, MARK[j], has ? "absent" : "present",
                         out);
        }
        if (strstr(out, "F5")) fail_msg("page %d: a window hint in a deck:\n%s", k, out);
        if (!strstr(out, "Multi-head attention, step by step"))
            fail_msg("page %d: no title:\n%s", k, out);
    }
}

static void png_size(const char *path, unsigned *w, unsigned *h) {
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    unsigned char b[24];
    assert_int_equal(fread(b, 1, 24, f), 24);
    fclose(f);
    assert_memory_equal(b + 1, "PNG", 3);
    *w = (unsigned)b[16] << 24 | (unsigned)b[17] << 16 | (unsigned)b[18] << 8 | b[19];
    *h = (unsigned)b[20] << 24 | (unsigned)b[21] << 16 | (unsigned)b[22] << 8 | b[23];
}

static void test_svg_png(void **st) {
    (void)st;
    char dir[512], path[600], err[512], out[8192];
    fresh(dir, sizeof dir, "svg");
    snprintf(path, sizeof path, "%s/deck.svg", dir);
    if (write_deck(path, 1, err, sizeof err)) fail_msg("%s", err);
    assert_int_equal(listing(dir, out, sizeof out), 3);
    assert_string_equal(out, "deck-01.svg deck-02.svg deck-03.svg");
    for (int k = 1; k <= 3; k++) {
        char p[700], body[1 << 16];
        snprintf(p, sizeof p, "%s/deck-%02d.svg", dir, k);
        run(body, sizeof body, "grep -o '%s' '%s' | head -1", MARK[k - 1], p);
        if (!strstr(body, MARK[k - 1])) fail_msg("%s: no \"%s\"", p, MARK[k - 1]);
    }
    fresh(dir, sizeof dir, "png");
    snprintf(path, sizeof path, "%s/deck.png", dir);
    if (write_deck(path, 1, err, sizeof err)) fail_msg("%s", err);
    assert_int_equal(listing(dir, out, sizeof out), 3);
    assert_string_equal(out, "deck-01.png deck-02.png deck-03.png");
    for (int k = 1; k <= 3; k++) {
        char p[700];
        unsigned w, h;
        snprintf(p, sizeof p, "%s/deck-%02d.png", dir, k);
        png_size(p, &w, &h);
        assert_int_equal(w, 1920);
        assert_int_equal(h, 1080);
    }
    const char *keep = getenv("MHAVIZ_DECK_KEEP");
    if (keep && *keep) {
        char cmd[1400];
        snprintf(cmd, sizeof cmd, "cp %s/deck-0*.png '%s'/", dir, keep);
        assert_int_equal(system(cmd), 0);
    }
    /* --scale 2: twice the pixels, a name without a folder part */
    fresh(dir, sizeof dir, "png2");
    snprintf(path, sizeof path, "%s/slides.png", dir);
    if (write_deck(path, 2, err, sizeof err)) fail_msg("%s", err);
    assert_int_equal(listing(dir, out, sizeof out), 3);
    assert_string_equal(out, "slides-01.png slides-02.png slides-03.png");
    unsigned w, h;
    snprintf(path, sizeof path, "%s/slides-02.png", dir);
    png_size(path, &w, &h);
    assert_int_equal(w, 3840);
    assert_int_equal(h, 2160);
}

static void test_failures(void **st) {
    (void)st;
    char dir[512], path[600], err[512], out[8192];
    static const char *const ext[3] = {"pdf", "svg", "png"};
    /* a folder that does not exist; a name that is not a deck */
    for (int e = 0; e < 3; e++) {
        snprintf(path, sizeof path, "%s/missing/deck.%s", root, ext[e]);
        assert_null(deck_open(path, 1920, 1080, 1, fonts, err, sizeof err));
        if (!strstr(err, "cannot write")) fail_msg("%s", err);
    }
    snprintf(path, sizeof path, "%s/deck.jpg", root);
    assert_null(deck_open(path, 1920, 1080, 1, fonts, err, sizeof err));
    /* a read-only folder (root writes anyway: then only the others) */
    if (geteuid() != 0) {
        fresh(dir, sizeof dir, "ro");
        assert_int_equal(chmod(dir, 0555), 0);
        for (int e = 0; e < 3; e++) {
            snprintf(path, sizeof path, "%s/deck.%s", dir, ext[e]);
            assert_int_not_equal(write_deck(path, 1, err, sizeof err), 0);
            assert_int_equal(listing(dir, out, sizeof out), 0);
        }
    }
    /* closed without ok, after two pages; a deck of no page */
    for (int e = 0; e < 3; e++) {
        char name[32];
        snprintf(name, sizeof name, "abort-%s", ext[e]);
        fresh(dir, sizeof dir, name);
        snprintf(path, sizeof path, "%s/deck.%s", dir, ext[e]);
        deck *d = deck_open(path, 1920, 1080, 1, fonts, err, sizeof err);
        assert_non_null(d);
        assert_int_equal(deck_page(d, &states[0], err, sizeof err), 0);
        assert_int_equal(deck_page(d, &states[1], err, sizeof err), 0);
        assert_int_equal(deck_pages(d), 2);
        assert_int_equal(deck_close(d, 0, err, sizeof err), 0);
        assert_int_equal(listing(dir, out, sizeof out), 0);
        d = deck_open(path, 1920, 1080, 1, fonts, err, sizeof err);
        assert_non_null(d);
        assert_int_not_equal(deck_close(d, 1, err, sizeof err), 0);
        assert_int_equal(listing(dir, out, sizeof out), 0);
    }
    /* page 2 cannot be written (its temporary folder was taken away): the deck fails
       and nothing stays */
    for (int e = 1; e < 3; e++) {
        char name[32], cmd[700];
        snprintf(name, sizeof name, "midway-%s", ext[e]);
        fresh(dir, sizeof dir, name);
        snprintf(path, sizeof path, "%s/deck.%s", dir, ext[e]);
        deck *d = deck_open(path, 1280, 720, 1, fonts, err, sizeof err);
        assert_non_null(d);
        assert_int_equal(deck_page(d, &states[0], err, sizeof err), 0);
        assert_int_equal(listing(dir, out, sizeof out), 1); /* the pages' temporary folder */
        if (strncmp(out, ".deck.deck-", 11)) fail_msg("temporary folder: %s", out);
        snprintf(cmd, sizeof cmd, "rm -rf '%s'/.deck.deck-*", dir);
        assert_int_equal(system(cmd), 0);
        assert_int_not_equal(deck_page(d, &states[1], err, sizeof err), 0);
        if (!strstr(err, "cannot write")) fail_msg("%s", err);
        assert_int_not_equal(deck_page(d, &states[2], err, sizeof err), 0);
        assert_int_not_equal(deck_close(d, 1, err, sizeof err), 0);
        assert_int_equal(listing(dir, out, sizeof out), 0);
    }
}

/* SIGTERM after two pages of each kind: the child dies with 128 + 15 and leaves
   nothing (cleanup.h removes the pages, then their folder). */
static void test_signal(void **st) {
    (void)st;
    static const char *const ext[3] = {"pdf", "svg", "png"};
    for (int e = 0; e < 3; e++) {
        char dir[512], path[600], out[8192], name[32];
        snprintf(name, sizeof name, "signal-%s", ext[e]);
        fresh(dir, sizeof dir, name);
        snprintf(path, sizeof path, "%s/deck.%s", dir, ext[e]);
        fflush(NULL);
        pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
            char err[512];
            cleanup_install_signals();
            deck *d = deck_open(path, 1280, 720, 1, fonts, err, sizeof err);
            if (!d || deck_page(d, &states[0], err, sizeof err) ||
                deck_page(d, &states[1], err, sizeof err))
                _exit(3);
            kill(getpid(), SIGTERM);
            _exit(4); /* not reached */
        }
        int status = 0;
        assert_int_equal(waitpid(pid, &status, 0), pid);
        assert_true(WIFEXITED(status));
        assert_int_equal(WEXITSTATUS(status), 128 + SIGTERM);
        if (listing(dir, out, sizeof out) != 0) fail_msg("%s: left behind: %s", ext[e], out);
    }
}

/* link(), wrapped (tests/CMakeLists.txt: --wrap=link): fails with EPERM, as on a
   filesystem without hard links, while links_fail is set. */
static int links_fail;
int __real_link(const char *from, const char *to);
int __wrap_link(const char *from, const char *to) {
    struct stat sb;
    if (links_fail && lstat(from, &sb) == 0) { /* a missing file is ENOENT there too */
        errno = EPERM;
        return -1;
    }
    return __real_link(from, to);
}

static int links_back(void **st) {
    (void)st;
    links_fail = 0;
    return 0;
}

/* A deck of n pages (states[0], [1], [2], [0] ...) at w x h pixels. */
static int write_n(const char *path, int n, int w, char *err, size_t errlen) {
    deck *d = deck_open(path, w, 360, 1, fonts, err, errlen);
    if (!d) return -1;
    for (int i = 0; i < n; i++)
        if (deck_page(d, &states[i % 3], err, errlen)) {
            deck_close(d, 0, NULL, 0);
            return -1;
        }
    return deck_close(d, 1, err, errlen);
}

/* The bytes of a file (malloc'd, *len of them), or NULL when there is none. */
static unsigned char *slurp(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    unsigned char *buf = NULL;
    size_t n = 0, cap = 0, r;
    do {
        if (n == cap) buf = realloc(buf, cap = cap ? 2 * cap : 1 << 16);
        assert_non_null(buf);
        r = fread(buf + n, 1, cap - n, f);
        n += r;
    } while (r > 0);
    fclose(f);
    *len = n;
    return buf;
}

typedef struct {
    unsigned char *bytes[7]; /* page k's (1..6), NULL where there is none */
    size_t len[7];
} deck_copy;

static void copy_deck(const char *dir, const char *ext, deck_copy *c) {
    for (int k = 1; k <= 6; k++) {
        char p[700];
        snprintf(p, sizeof p, "%s/deck-%02d.%s", dir, k, ext);
        c->bytes[k] = slurp(p, &c->len[k]);
    }
}

/* The first page of c that is not on disk byte for byte (pages c holds none of
   are skipped), or 0 when every one is. */
static int differs(const char *dir, const char *ext, const deck_copy *c) {
    for (int k = 1; k <= 6; k++) {
        if (!c->bytes[k]) continue;
        char p[700];
        size_t len = 0;
        snprintf(p, sizeof p, "%s/deck-%02d.%s", dir, k, ext);
        unsigned char *now = slurp(p, &len);
        const int same = now && len == c->len[k] && !memcmp(now, c->bytes[k], len);
        free(now);
        if (!same) return k;
    }
    return 0;
}

static void same_deck(const char *dir, const char *ext, const deck_copy *c) {
    const int k = differs(dir, ext, c);
    if (k) fail_msg("%s/deck-%02d.%s: not the earlier page", dir, k, ext);
}

static void free_copy(deck_copy *c) {
    for (int k = 1; k <= 6; k++) free(c->bytes[k]);
    memset(c, 0, sizeof *c);
}

/* A failed deck keeps the earlier one byte for byte, and a shorter deck replaces a
   longer one whole: (1) a folder where page 3 goes fails before any page moves
   (issue 34: pages 1 and 2 were unlinked); (2) a page that vanishes from the
   temporary folder makes the rename of page 2 fail after page 1 is in place: page
   1 is put back; (3) 3 pages over 6 leave 3 pages and nothing else, but (4) a
   failed 3-page deck leaves all 6. Each with hard links and, as on a FAT
   filesystem, without (link() fails with EPERM: the earlier pages are moved
   aside instead). */
static void test_keep_earlier(void **st) {
    (void)st;
    static const char *const ext[2] = {"svg", "png"};
    for (int e = 0; e < 4; e++) {
        char dir[512], path[600], err[512], out[8192], p3[700], name[32], cmd[800];
        deck_copy old = {0};
        links_fail = e >= 2;
        snprintf(name, sizeof name, "keep-%s%s", ext[e % 2], links_fail ? "-nolinks" : "");
        fresh(dir, sizeof dir, name);
        snprintf(path, sizeof path, "%s/deck.%s", dir, ext[e % 2]);
        if (write_n(path, 6, 640, err, sizeof err)) fail_msg("%s", err);
        copy_deck(dir, ext[e % 2], &old);
        /* (1) */
        snprintf(p3, sizeof p3, "%s/deck-03.%s", dir, ext[e % 2]);
        assert_int_equal(unlink(p3), 0);
        assert_int_equal(mkdir(p3, 0777), 0);
        free(old.bytes[3]), old.bytes[3] = NULL;
        assert_int_not_equal(write_n(path, 6, 700, err, sizeof err), 0);
        if (!strstr(err, "deck-03.") || !strstr(err, "Is a directory") || strstr(err, ".deck-"))
            fail_msg("%s", err);
        same_deck(dir, ext[e % 2], &old);
        assert_int_equal(listing(dir, out, sizeof out), 6); /* no temporary folder either */
        assert_int_equal(rmdir(p3), 0);
        free_copy(&old);
        /* (2) and (4) */
        if (write_n(path, 6, 640, err, sizeof err)) fail_msg("%s", err);
        copy_deck(dir, ext[e % 2], &old);
        deck *d = deck_open(path, 700, 360, 1, fonts, err, sizeof err);
        assert_non_null(d);
        for (int i = 0; i < 3; i++) assert_int_equal(deck_page(d, &states[i], err, sizeof err), 0);
        snprintf(cmd, sizeof cmd, "rm '%s'/.deck.deck-*/page-02.%s", dir, ext[e % 2]);
        assert_int_equal(system(cmd), 0);
        assert_int_not_equal(deck_close(d, 1, err, sizeof err), 0);
        if (!strstr(err, "deck-02.") || strstr(err, ".deck-")) fail_msg("%s", err);
        same_deck(dir, ext[e % 2], &old);
        assert_int_equal(listing(dir, out, sizeof out), 6);
        /* (3) */
        if (write_n(path, 3, 700, err, sizeof err)) fail_msg("%s", err);
        assert_int_equal(listing(dir, out, sizeof out), 3);
        snprintf(cmd, sizeof cmd, "deck-01.%s deck-02.%s deck-03.%s", ext[e % 2], ext[e % 2],
                 ext[e % 2]);
        assert_string_equal(out, cmd);
        size_t len;
        unsigned char *now = slurp(p3, &len);
        assert_non_null(now);
        assert_false(len == old.len[3] && !memcmp(now, old.bytes[3], len)); /* the new page */
        free(now);
        free_copy(&old);
    }
    links_fail = 0;
}

/* A full disk (a 64 KiB tmpfs; root only): the message names the deck's page, not
   the temporary file, and an earlier one-page deck stays byte for byte. */
static void test_full_disk(void **st) {
    (void)st;
    char dir[512], path[600], err[512], out[8192], cmd[700];
    fresh(dir, sizeof dir, "full");
    snprintf(cmd, sizeof cmd, "mount -t tmpfs -o size=64k tmpfs '%s' 2>/dev/null", dir);
    if (geteuid() != 0 || system(cmd) != 0) {
        printf("skipped: a full disk needs mount -t tmpfs (root)\n");
        skip();
    }
    snprintf(path, sizeof path, "%s/deck.png", dir);
    deck_copy old = {0};
    const int first = write_n(path, 1, 640, err, sizeof err);
    copy_deck(dir, "png", &old);
    const int rc = write_n(path, 6, 640, err, sizeof err);
    const int named =
        strstr(err, "/deck-0") && !strstr(err, ".deck-") && strstr(err, "No space left on device");
    const int changed = differs(dir, "png", &old), left = listing(dir, out, sizeof out);
    snprintf(cmd, sizeof cmd, "umount '%s'", dir);
    assert_int_equal(system(cmd), 0);
    free_copy(&old);
    if (first != 0) fail_msg("a 1-page deck did not fit in 64 KiB");
    if (rc == 0) fail_msg("a 6-page deck fit in 64 KiB");
    if (!named) fail_msg("%s", err);
    if (changed) fail_msg("deck-%02d.png: not the earlier page", changed);
    if (left != 1) fail_msg("left: %s", out);
}

/* SIGTERM that arrives while the pages are renamed into place (blocked here
   around deck_close, as the commit itself holds signals) acts once the deck is
   whole, and says so: exit 143, "... deck-03.svg are written in full", not
   "temporary files removed" (issue 34), every page in place, no temporary
   folder. */
static void test_signal_at_commit(void **st) {
    (void)st;
    char dir[512], path[600], out[8192], log[600];
    fresh(dir, sizeof dir, "signal-commit");
    snprintf(path, sizeof path, "%s/deck.svg", dir);
    snprintf(log, sizeof log, "%s/../signal-commit.log", dir);
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        char err[512];
        FILE *f = freopen(log, "w", stderr);
        cleanup_install_signals();
        deck *d = deck_open(path, 640, 360, 1, fonts, err, sizeof err);
        for (int i = 0; d && i < 3; i++)
            if (deck_page(d, &states[i], err, sizeof err)) _exit(3);
        sigset_t term, was;
        sigemptyset(&term);
        sigaddset(&term, SIGTERM);
        sigprocmask(SIG_BLOCK, &term, &was);
        kill(getpid(), SIGTERM); /* pending while the pages move in */
        if (!f || !d || deck_close(d, 1, err, sizeof err)) _exit(3);
        sigprocmask(SIG_SETMASK, &was, NULL);
        _exit(4); /* not reached */
    }
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 128 + SIGTERM);
    assert_int_equal(listing(dir, out, sizeof out), 3);
    assert_string_equal(out, "deck-01.svg deck-02.svg deck-03.svg");
    size_t len;
    char *said = (char *)slurp(log, &len);
    assert_non_null(said);
    said[len ? len - 1 : 0] = '\0';
    if (!strstr(said, "mhaviz: terminated (SIGTERM); ") ||
        !strstr(said, "deck-03.svg are written in full") || strstr(said, "temporary files removed"))
        fail_msg("said: %s", said);
    free(said);
}

#ifndef MHAVIZ_SOURCE_DIR
#define MHAVIZ_SOURCE_DIR "."
#endif

static int font_line(int size) {
    int w = 0, h = 0;
    font_measure(fonts, "Ag", size, 0, &w, &h);
    return h >= size ? h : size + size / 4;
}

/* Long captions and every lesson file's captions laid out with the real fonts at
   1920x1080 and 1600x900: caption_check holds (inside, above the floor, the view
   above the band). With MHAVIZ_DECK_KEEP, a PNG deck of them is kept there. */
static void test_real_layout(void **st) {
    (void)st;
    static cc_step steps[512];
    int n = cc_lessons(cc_lessons_dir(MHAVIZ_SOURCE_DIR "/examples/lessons"), steps, 500);
    static const char *const extra[][2] = {
        {"Scores \xC3\xB7 \xE2\x88\x9A"
         "d_k: why scaling keeps the softmax from saturating as "
         "heads grow wider",
         "The scores Q_i K_i^T are divided by \xE2\x88\x9A"
         "d_k so that their spread does not "
         "grow with the width of a head.\nWithout it, *softmax* saturates: one key takes almost "
         "all the weight and the gradients vanish.\nhead_i = softmax(Q_i K_i^T / \xE2\x88\x9A"
         "d_k) V_i, and MultiHead = Concat W^O brings the heads back to d_model columns.\n"
         "Each token is a row of X \xE2\x88\x88 \xE2\x84\x9D^{n\xC3\x97"
         "d_model}, and every "
         "head sees all of X."},
        {"Why many heads: one head compromises, two split the job",
         "Trained on pair at h = 1, the single head must attend to the previous token and "
         "to the pair's partner at once.\nAt h = 2 each head takes one of the two relations."},
    };
    for (size_t i = 0; i < sizeof extra / sizeof extra[0] && n < 512; i++, n++) {
        memset(&steps[n], 0, sizeof steps[n]);
        snprintf(steps[n].file, sizeof steps[n].file, "long caption %zu", i + 1);
        snprintf(steps[n].title, sizeof steps[n].title, "Masks, scaling and cost");
        snprintf(steps[n].heading, sizeof steps[n].heading, "%s", extra[i][0]);
        snprintf(steps[n].text, sizeof steps[n].text, "%s", extra[i][1]);
    }
    static view_layout L;
    const int sizes[2][2] = {{1920, 1080}, {1600, 900}};
    const char *keep = getenv("MHAVIZ_DECK_KEEP");
    deck *d = NULL;
    char err[512], why[512];
    if (keep && *keep) {
        char path[600];
        snprintf(path, sizeof path, "%s/captions.png", keep);
        d = deck_open(path, 1920, 1080, 1, fonts, err, sizeof err);
        assert_non_null(d);
    }
    int floor_hits = 0;
    for (int i = 0; i < n; i++) {
        view_caption cap = {steps[i].title, steps[i].heading, steps[i].text, i + 1, n, 0, 0};
        for (int z = 0; z < 2; z++) {
            view_state s = states[2];
            s.width = sizes[z][0];
            s.height = sizes[z][1];
            s.zoom_base = s.look.zoom = view_zoom_for_size(s.width, s.height);
            s.look.present = s.figure = 1;
            s.caption = &cap;
            view_layout_compute(&L, &s, font_measure, fonts);
            if (caption_check(&L, &s, font_line, why, sizeof why))
                fail_msg("%s \"%s\" at %dx%d: %s", steps[i].file, steps[i].heading, s.width,
                         s.height, why);
            floor_hits += L.caption.at_floor;
            if (z == 0 && d && deck_page(d, &s, err, sizeof err)) fail_msg("%s", err);
        }
    }
    if (d) {
        assert_int_equal(deck_close(d, 1, err, sizeof err), 0);
        /* the window's look: controls, the status line, the hints (dark theme) */
        char path[600];
        view_caption cap = {steps[0].title, steps[0].heading, steps[0].text, 4, 9, 1, 1};
        view_state s = states[1];
        s.width = 1600, s.height = 900, s.look.theme = 1, s.caption = &cap,
        s.status = "status line";
        s.zoom_base = s.look.zoom = view_zoom_for_size(s.width, s.height);
        snprintf(path, sizeof path, "%s/window.png", keep);
        if (export_png(path, &s, 1, fonts, err, sizeof err)) fail_msg("%s", err);
        s.width = 2560, s.height = 1080, s.look.theme = 0, s.look.present = s.figure = 1;
        s.zoom_base = s.look.zoom = view_zoom_for_size(s.width, s.height);
        snprintf(path, sizeof path, "%s/wide.png", keep);
        if (export_png(path, &s, 1, fonts, err, sizeof err)) fail_msg("%s", err);
        s.width = 1280, s.height = 720;
        s.zoom_base = s.look.zoom = view_zoom_for_size(s.width, s.height);
        snprintf(path, sizeof path, "%s/small.png", keep);
        if (export_png(path, &s, 1, fonts, err, sizeof err)) fail_msg("%s", err);
    }
    printf("real fonts: %d captions laid out at 1920x1080 and 1600x900, %d at the floor\n", n,
           floor_hits);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pdf),
        cmocka_unit_test(test_svg_png),
        cmocka_unit_test(test_failures),
        cmocka_unit_test(test_signal),
        cmocka_unit_test_teardown(test_keep_earlier, links_back),
        cmocka_unit_test(test_full_disk),
        cmocka_unit_test(test_signal_at_commit),
        cmocka_unit_test(test_real_layout),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
