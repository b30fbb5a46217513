/* caption_check.h: the properties every laid-out caption band must have, shared by
 * test_caption (the fake measurer) and test_deck (the real fonts): the band inside
 * the window; every run inside the band and right of nothing on its line; the
 * sizes at or above the floor (36 / 28 px at 1920 x 1080, in proportion); the rest
 * of the view inside the room the band leaves; nothing cut. And a reader of the
 * lesson files' captions (examples/lessons/NAME.lesson), to lay each one out. */
#ifndef MHAVIZ_TEST_CAPTION_CHECK_H
#define MHAVIZ_TEST_CAPTION_CHECK_H

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "view.h"

static inline int cc_inside(view_rect in, view_rect r) {
    return r.x >= in.x && r.y >= in.y && r.x + r.w <= in.x + in.w && r.y + r.h <= in.y + in.h;
}

static inline int cc_empty(view_rect r) {
    return r.w <= 0 || r.h <= 0;
}

/* 0, or -1 with what is wrong in why. line_h: the measurer's line height. */
static inline int caption_check(const view_layout *L, const view_state *s, int (*line_h)(int),
                                char *why, size_t len) {
    const view_caption_box *C = &L->caption;
    const view_rect win = {0, 0, s->width, s->height};
    int hf, tf;
    view_caption_sizes(s->width, s->height, NULL, NULL, &hf, &tf);
#define CC_FAIL(...)                                                                               \
    do {                                                                                           \
        snprintf(why, len, __VA_ARGS__);                                                           \
        return -1;                                                                                 \
    } while (0)
    if (!C->shown) CC_FAIL("no caption band");
    if (C->cut) CC_FAIL("the caption was cut (%d runs, %d lines)", C->run_count, C->lines);
    if (!cc_inside(win, C->band))
        CC_FAIL("band %d,%d %dx%d outside the window", C->band.x, C->band.y, C->band.w, C->band.h);
    if (C->heading_size < hf || C->text_size < tf)
        CC_FAIL("sizes %d / %d under the floor %d / %d", C->heading_size, C->text_size, hf, tf);
    const view_rect parts[] = {C->strip, C->meta, C->step_label, C->title, C->hint, C->rec};
    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++)
        if (!cc_empty(parts[i]) && !cc_inside(C->band, parts[i]))
            CC_FAIL("band part %zu at %d,%d %dx%d outside the band", i, parts[i].x, parts[i].y,
                    parts[i].w, parts[i].h);
    for (int i = 0; i < C->run_count; i++) {
        const view_caption_run *r = &C->run[i];
        const view_rect box = {r->x, r->y, r->w, line_h(r->size)};
        if (!cc_inside(C->band, box))
            CC_FAIL("run %d \"%s\" at %d,%d %dx%d outside the band %d,%d %dx%d", i, r->text, box.x,
                    box.y, box.w, box.h, C->band.x, C->band.y, C->band.w, C->band.h);
        const int floor = r->heading ? hf : tf;
        const int want = r->level ? floor * 72 / 100 : floor;
        if (r->size < want) CC_FAIL("run \"%s\" at %d px, under %d", r->text, r->size, want);
        if (r->heading && !r->bold) CC_FAIL("heading run \"%s\" not bold", r->text);
        for (int j = 0; j < i; j++) { /* runs on one line never overlap */
            const view_caption_run *q = &C->run[j];
            if (q->line == r->line && q->x < r->x + r->w && r->x < q->x + q->w)
                CC_FAIL("runs \"%s\" and \"%s\" overlap on line %d", q->text, r->text, r->line);
        }
    }
    /* the figure: the rest of the view in the room the band leaves */
    const view_rect fig = C->figure;
    if (C->side ? fig.x + fig.w > C->band.x : fig.y + fig.h > C->band.y)
        CC_FAIL("figure room %d,%d %dx%d reaches the band", fig.x, fig.y, fig.w, fig.h);
    const view_rect rects[] = {L->header,  L->formula, L->main,      L->heads_area,
                               L->eq_area, L->status,  L->attn_cbar, L->concat.map,
                               L->w_o.map, L->out.map, L->page_note, L->lesson_area};
    for (size_t i = 0; i < sizeof rects / sizeof rects[0]; i++)
        if (!cc_empty(rects[i]) && !cc_inside(fig, rects[i]))
            CC_FAIL("view rect %zu at %d,%d %dx%d outside the figure's room %d,%d %dx%d", i,
                    rects[i].x, rects[i].y, rects[i].w, rects[i].h, fig.x, fig.y, fig.w, fig.h);
    for (int i = 0; i < L->shown_heads; i++)
        if (!cc_inside(fig, L->heads[i].map) || !cc_inside(fig, L->heads[i].title))
            CC_FAIL("head %d outside the figure's room", i + 1);
    return 0;
#undef CC_FAIL
}

/* The captions of the lesson files in dir: heading and text (lines joined by
 * '\n') of every step, at most max. Returns how many (0 when the folder is missing). */
typedef struct {
    char file[128];
    char title[256];
    char heading[512];
    char text[4096];
} cc_step;

/* The lessons' folder: MHAVIZ_LESSONS_DIR when set, else def. */
static inline const char *cc_lessons_dir(const char *def) {
    const char *e = getenv("MHAVIZ_LESSONS_DIR");
    return e && *e ? e : def;
}

static inline int cc_lessons(const char *dir, cc_step *out, int max) {
    DIR *d = opendir(dir);
    if (!d) return 0;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) && n < max) {
        const size_t l = strlen(e->d_name);
        if (l < 8 || strcmp(e->d_name + l - 7, ".lesson")) continue;
        char path[1024], line[4096], title[256] = "";
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        FILE *f = fopen(path, "r");
        if (!f) continue;
        cc_step *cur = NULL;
        while (fgets(line, sizeof line, f)) {
            line[strcspn(line, "\r\n")] = '\0';
            if (!strncmp(line, "title = ", 8)) snprintf(title, sizeof title, "%.255s", line + 8);
            if (!strncmp(line, "step = ", 7) && n < max) {
                cur = &out[n++];
                memset(cur, 0, sizeof *cur);
                snprintf(cur->file, sizeof cur->file, "%s", e->d_name);
                snprintf(cur->title, sizeof cur->title, "%.255s", title);
                snprintf(cur->heading, sizeof cur->heading, "%.511s", line + 7);
            } else if (cur && line[0] == '|') {
                const char *t = line[1] == ' ' ? line + 2 : line + 1;
                const size_t have = strlen(cur->text);
                snprintf(cur->text + have, sizeof cur->text - have, "%s%s", have ? "\n" : "", t);
            }
        }
        fclose(f);
    }
    closedir(d);
    return n;
}

#endif
