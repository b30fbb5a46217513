/* deck.c: a slide deck of view states (deck.h), all or nothing. A PDF is one
 * atomic file (atomic_file.h) holding one page per deck_page. SVG and PNG pages are
 * written into a temporary folder beside the target, each registered for removal
 * on a signal (cleanup.h), and renamed into place together at deck_close. */
#define _POSIX_C_SOURCE 200809L
#include "deck.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "atomic_file.h"
#include "cairo_draw.h"
#include "cleanup.h"
#include "export.h"

enum { DECK_PDF, DECK_SVG, DECK_PNG };

struct deck {
    int kind, w, h, scale;
    font_set *fonts;
    char path[4096];
    char stem[4096]; /* the target without its extension */
    const char *ext; /* ".svg" / ".png" */
    int pages, failed;
    /* PDF */
    atomic_file af;
    cairo_pdf_doc *pdf;
    view_layout *L;
    view_cache *cache;
    draw_list dl;
    /* SVG, PNG */
    char dir[4096 + 32]; /* the temporary folder */
    int dir_handle;
    int page_handle[DECK_MAX_PAGES];
};

static void tmp_page(const deck *d, int k, char *out, size_t len) {
    snprintf(out, len, "%s/page-%02d%s", d->dir, k, d->ext);
}

void deck_page_path(const deck *d, int k, char *out, size_t len) {
    if (d->kind == DECK_PDF)
        snprintf(out, len, "%s", d->path);
    else
        snprintf(out, len, "%s-%02d%s", d->stem, k, d->ext);
}

int deck_pages(const deck *d) {
    return d ? d->pages : 0;
}

/* Removes every temporary file and the folder (SVG, PNG) or the PDF's. */
static void discard(deck *d) {
    if (d->kind == DECK_PDF) {
        if (d->pdf) cairo_pdf_doc_close(d->pdf, NULL, 0);
        d->pdf = NULL;
        if (d->af.created) atomic_abort(&d->af);
        return;
    }
    char p[4096 + 64];
    for (int k = 1; k <= d->pages; k++) {
        tmp_page(d, k, p, sizeof p);
        cleanup_hold();
        unlink(p);
        cleanup_forget(d->page_handle[k - 1]);
        cleanup_release();
    }
    if (d->dir[0]) {
        cleanup_hold();
        rmdir(d->dir);
        cleanup_forget(d->dir_handle);
        cleanup_release();
    }
}

static void deck_free(deck *d) {
    draw_list_free(&d->dl);
    view_cache_destroy(d->cache);
    free(d->L);
    free(d);
}

deck *deck_open(const char *path, int w, int h, int scale, font_set *fonts, char *err,
                size_t errlen) {
    const char *dot = path ? strrchr(path, '.') : NULL;
    const char *slash = path ? strrchr(path, '/') : NULL;
    if (!path || !dot || (slash && dot < slash) ||
        (strcmp(dot, ".pdf") && strcmp(dot, ".svg") && strcmp(dot, ".png"))) {
        snprintf(err, errlen, "cannot write %s: a deck is a .pdf, .svg or .png file",
                 path ? path : "(none)");
        return NULL;
    }
    if (strlen(path) >= 4000) {
        snprintf(err, errlen, "cannot write %s: the path is too long", path);
        return NULL;
    }
    if (w < 1 || h < 1) {
        snprintf(err, errlen, "cannot write %s: pages of %dx%d pixels", path, w, h);
        return NULL;
    }
    deck *d = calloc(1, sizeof *d);
    if (!d) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    draw_list_init(&d->dl);
    d->kind = !strcmp(dot, ".pdf") ? DECK_PDF : !strcmp(dot, ".svg") ? DECK_SVG : DECK_PNG;
    d->w = w, d->h = h, d->scale = scale < 1 ? 1 : scale;
    d->fonts = fonts;
    d->ext = dot;
    snprintf(d->path, sizeof d->path, "%s", path);
    snprintf(d->stem, sizeof d->stem, "%.*s", (int)(dot - path), path);
    d->ext = d->path + (dot - path);
    d->dir_handle = CLEANUP_NONE;
    if (d->kind == DECK_PDF) {
        d->L = calloc(1, sizeof *d->L);
        d->cache = view_cache_create();
        if (!d->L || !d->cache) {
            snprintf(err, errlen, "out of memory");
            deck_free(d);
            return NULL;
        }
        if (atomic_open(&d->af, path, err, errlen) != 0) {
            deck_free(d);
            return NULL;
        }
        char why[256];
        d->pdf = cairo_pdf_doc_open(d->af.fp, w, h, NULL, why, sizeof why);
        if (!d->pdf) {
            snprintf(err, errlen, "cannot write %s: %s", path, why);
            atomic_abort(&d->af);
            deck_free(d);
            return NULL;
        }
        return d;
    }
    /* the pages' folder beside the target: ".NAME.deck-XXXXXX" */
    const char *base = slash ? slash + 1 : path;
    snprintf(d->dir, sizeof d->dir, "%.*s.%.*s.deck-XXXXXX", slash ? (int)(base - path) : 0, path,
             (int)(dot - base), base);
    cleanup_hold();
    int rc = atomic_mkdtemp(d->dir);
    const int e = errno;
    if (rc == 0) d->dir_handle = cleanup_add(d->dir, 1);
    cleanup_release();
    if (rc != 0) {
        snprintf(err, errlen, "cannot write %s: %s", path, strerror(e));
        d->dir[0] = '\0';
        deck_free(d);
        return NULL;
    }
    return d;
}

static void name_page(char *err, size_t errlen, const char *tmp, const char *page);

int deck_page(deck *d, const view_state *vs_in, char *err, size_t errlen) {
    if (d->failed) {
        snprintf(err, errlen, "cannot write %s: an earlier page failed", d->path);
        return -1;
    }
    if (d->pages >= DECK_MAX_PAGES) {
        snprintf(err, errlen, "cannot write %s: a deck has at most %d pages", d->path,
                 DECK_MAX_PAGES);
        d->failed = 1;
        return -1;
    }
    view_state vs = *vs_in;
    view_caption cap;
    vs.width = d->w;
    vs.height = d->h;
    vs.look.present = 1;
    vs.figure = 1;
    vs.one_page = 1; /* a step is one page: nothing goes to a page of its own */
    vs.panel = VIEW_PANEL_ALL;
    vs.hover_x = vs.hover_y = -1;
    vs.editing = vs.help = 0;
    vs.status = vs.toast = NULL;
    if (vs.caption) { /* a page shows the step as written: no window hints */
        cap = *vs.caption;
        cap.explored = cap.recording = 0;
        vs.caption = &cap;
    }
    const int k = d->pages + 1;
    if (d->kind == DECK_PDF) {
        view_layout_compute(d->L, &vs, font_measure, d->fonts);
        view_render(&d->dl, d->cache, d->L, &vs, font_measure, d->fonts);
        char why[256];
        if (cairo_pdf_doc_page(d->pdf, &d->dl, d->fonts, why, sizeof why) != 0) {
            snprintf(err, errlen, "cannot write %s: %s", d->path, why);
            d->failed = 1;
            return -1;
        }
        d->pages = k;
        return 0;
    }
    char p[4096 + 64];
    tmp_page(d, k, p, sizeof p);
    const int rc = d->kind == DECK_PNG ? export_png(p, &vs, d->scale, d->fonts, err, errlen)
                                       : export_vector(p, &vs, d->fonts, err, errlen);
    if (rc != 0) {
        char page[4096 + 16];
        deck_page_path(d, k, page, sizeof page);
        name_page(err, errlen, p, page);
        d->failed = 1;
        return -1;
    }
    /* the page is in the folder: registered before anything can interrupt */
    cleanup_hold();
    d->page_handle[k - 1] = cleanup_add(p, 0);
    d->pages = k;
    cleanup_release();
    return 0;
}

static int commit_pages(deck *d, char *err, size_t errlen);

int deck_close(deck *d, int ok, char *err, size_t errlen) {
    if (!d) return 0;
    int rc = 0;
    if (ok && (d->failed || d->pages == 0)) {
        snprintf(err, errlen, "cannot write %s: %s", d->path,
                 d->failed ? "a page failed" : "a deck of no page");
        ok = 0;
        rc = -1;
    }
    if (!ok) {
        discard(d);
        deck_free(d);
        return rc;
    }
    if (d->kind == DECK_PDF) {
        char why[256];
        const int bad = cairo_pdf_doc_close(d->pdf, why, sizeof why);
        d->pdf = NULL;
        if (bad) {
            snprintf(err, errlen, "cannot write %s: %s", d->path, why);
            atomic_abort(&d->af);
            deck_free(d);
            return -1;
        }
        cleanup_hold(); /* a signal after the rename says the deck is written */
        rc = atomic_commit(&d->af, err, errlen);
        if (rc == 0) {
            char note[CLEANUP_PATH];
            snprintf(note, sizeof note, "%.4000s is written in full", d->path);
            cleanup_done(note);
        }
        cleanup_release();
        deck_free(d);
        return rc;
    }
    /* every page into place at once, the earlier deck kept aside until then */
    cleanup_hold();
    rc = commit_pages(d, err, errlen);
    cleanup_release(); /* a signal that came meanwhile acts here, on a whole deck */
    deck_free(d);
    return rc;
}

/* err with the temporary file's name tmp replaced by the page's, so a message
   names what the user asked for (a full disk, a failed write). */
static void name_page(char *err, size_t errlen, const char *tmp, const char *page) {
    const char *at = strstr(err, tmp);
    if (!at) return;
    char was[1024];
    snprintf(was, sizeof was, "%s", err);
    at = was + (at - err);
    snprintf(err, errlen, "%.*s%s%s", (int)(at - was), was, page, at + strlen(tmp));
}

/* Where the earlier page k waits, linked aside, while the new pages go in. */
static void old_page(const deck *d, int k, char *out, size_t len) {
    snprintf(out, len, "%s/old-%02d%s", d->dir, k, d->ext);
}

/* The pages of an earlier deck past the new one's last: PATH-NN files that
   follow it without a gap (a folder or another kind of file ends the run). */
static int earlier_last(const deck *d) {
    char to[4096 + 16];
    struct stat sb;
    int last = d->pages;
    while (last < DECK_MAX_PAGES) {
        deck_page_path(d, last + 1, to, sizeof to);
        if (lstat(to, &sb) != 0 || !S_ISREG(sb.st_mode)) break;
        last++;
    }
    return last;
}

/* How an earlier page is kept aside while the new ones go in: not (there was
   none), hard-linked (it stays in place too), or moved (where links fail). */
enum { KEPT_NONE, KEPT_LINKED, KEPT_MOVED };

/* 1 if link() failed with errnum because the filesystem has no hard links. */
static int no_links(int errnum) {
    return errnum == EPERM || errnum == ENOTSUP || errnum == EOPNOTSUPP || errnum == ENOSYS ||
           errnum == EMLINK;
}

static int put_back(deck *d, const unsigned char *kept, int moved, int removed, int last);

/* Puts the new pages in place of the earlier deck, whole or not at all; called
 * with the signals held, so no signal lands between two renames. 1: every target
 * is checked (a folder in the way fails before anything changes); 2: each earlier
 * page, 1 to the earlier deck's last, is hard-linked aside into the pages'
 * folder (its bytes stay where they are; where the filesystem has no hard links it
 * is renamed there instead); 3: the new pages are renamed in; 4: the earlier
 * deck's pages past the new last are removed. A failure at any step puts every
 * earlier page back from the pages' folder (byte for byte: the same file) and
 * removes the new ones. Then what was kept aside and the folder go. 0, or -1
 * with "cannot write PAGE: why". */
static int commit_pages(deck *d, char *err, size_t errlen) {
    char to[4096 + 16], from[4096 + 64];
    unsigned char kept[DECK_MAX_PAGES + 1] = {0};
    struct stat sb;
    const int last = earlier_last(d);
    int e = 0, bad = 0, moved = 0, removed = d->pages;
    for (int k = 1; k <= d->pages && !e; k++) { /* 1 */
        deck_page_path(d, k, to, sizeof to);
        if (lstat(to, &sb) == 0 && S_ISDIR(sb.st_mode)) e = EISDIR, bad = k;
    }
    for (int k = 1; k <= last && !e; k++) { /* 2 */
        deck_page_path(d, k, to, sizeof to);
        old_page(d, k, from, sizeof from);
        if (link(to, from) == 0)
            kept[k] = KEPT_LINKED;
        else if (errno == ENOENT)
            continue;
        else if (!no_links(errno))
            e = errno, bad = k;
        else if (rename(to, from) == 0) /* a filesystem without hard links (FAT) */
            kept[k] = KEPT_MOVED;
        else if (errno != ENOENT)
            e = errno, bad = k;
    }
    for (int k = 1; k <= d->pages && !e; k++) { /* 3 */
        tmp_page(d, k, from, sizeof from);
        deck_page_path(d, k, to, sizeof to);
        if (rename(from, to) != 0)
            e = errno, bad = k;
        else
            moved = k;
    }
    for (int k = d->pages + 1; k <= last && !e; k++) { /* 4 */
        deck_page_path(d, k, to, sizeof to);
        if (kept[k] != KEPT_MOVED && unlink(to) != 0) /* a moved one is gone already */
            e = errno, bad = k;
        else
            removed = k;
    }
    int lost = 0;
    if (e) {
        lost = put_back(d, kept, moved, removed, last);
        for (int k = moved + 1; k <= d->pages; k++) {
            tmp_page(d, k, from, sizeof from);
            unlink(from);
        }
    } else {
        for (int k = 1; k <= last; k++) /* the earlier deck's last links */
            if (kept[k]) old_page(d, k, from, sizeof from), unlink(from);
    }
    for (int k = 1; k <= d->pages; k++) cleanup_forget(d->page_handle[k - 1]);
    if (!lost) rmdir(d->dir);
    cleanup_forget(d->dir_handle);
    if (!e) {
        char note[CLEANUP_PATH];
        deck_page_path(d, d->pages, to, sizeof to);
        deck_page_path(d, 1, from, sizeof from);
        snprintf(note, sizeof note, "%.2000s%s%.2000s %s written in full", from,
                 d->pages > 1 ? " to " : "", d->pages > 1 ? to : "", d->pages > 1 ? "are" : "is");
        cleanup_done(note);
        return 0;
    }
    deck_page_path(d, bad, to, sizeof to);
    if (lost)
        snprintf(err, errlen, "cannot write %s: %s; %d earlier page%s could not be put back: %s",
                 to, strerror(e), lost, lost > 1 ? "s are" : " is", d->dir);
    else if (bad > d->pages)
        snprintf(err, errlen, "cannot write %s: cannot remove the earlier deck's %s: %s", d->path,
                 to, strerror(e));
    else
        snprintf(err, errlen, "cannot write %s: %s", to, strerror(e));
    return -1;
}

/* Undoes commit_pages after a failure: the new pages 1..moved are replaced by
   the earlier ones kept aside (or removed where there was none), the removed
   pages past the new last (to removed) and every page moved aside come back, and
   the other links go.
   Returns how many earlier pages could not be put back (kept in d->dir). */
static int put_back(deck *d, const unsigned char *kept, int moved, int removed, int last) {
    char to[4096 + 16], old[4096 + 64];
    int lost = 0;
    for (int k = 1; k <= last; k++) {
        deck_page_path(d, k, to, sizeof to);
        old_page(d, k, old, sizeof old);
        const int replaced = k <= moved || (k > d->pages && k <= removed);
        if (kept[k] == KEPT_MOVED || (replaced && kept[k])) {
            if (rename(old, to) != 0) lost++;
        } else if (replaced) {
            unlink(to);
        } else if (kept[k]) {
            unlink(old);
        }
    }
    return lost;
}
