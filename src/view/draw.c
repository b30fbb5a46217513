/* draw.c: appending to the drawing list (see draw.h). Growth by doubling; an
 * allocation failure drops the command rather than crash (the frame is then
 * incomplete, never corrupt). */
#include "draw.h"

#include <stdlib.h>
#include <string.h>

void draw_list_init(draw_list *dl) {
    memset(dl, 0, sizeof *dl);
}

void draw_list_free(draw_list *dl) {
    if (!dl) return;
    free(dl->cmds);
    free(dl->arena);
    free(dl->images);
    memset(dl, 0, sizeof *dl);
}

void draw_list_clear(draw_list *dl, int width, int height, rgba background) {
    dl->count = 0;
    dl->arena_len = 0;
    dl->image_count = 0;
    dl->width = width;
    dl->height = height;
    dl->background = background;
}

static draw_cmd *push(draw_list *dl, draw_kind kind) {
    if (dl->count == dl->cap) {
        int ncap = dl->cap ? dl->cap * 2 : 256;
        draw_cmd *n = realloc(dl->cmds, (size_t)ncap * sizeof *n);
        if (!n) return NULL;
        dl->cmds = n;
        dl->cap = ncap;
    }
    draw_cmd *c = &dl->cmds[dl->count++];
    memset(c, 0, sizeof *c);
    c->kind = kind;
    return c;
}

void draw_fill(draw_list *dl, view_rect r, rgba col) {
    if (r.w <= 0 || r.h <= 0) return;
    draw_cmd *c = push(dl, DC_FILL);
    if (!c) return;
    c->x = r.x, c->y = r.y, c->w = r.w, c->h = r.h, c->color = col;
}

void draw_frame(draw_list *dl, view_rect r, rgba col, int thick) {
    if (r.w <= 0 || r.h <= 0) return;
    draw_cmd *c = push(dl, DC_FRAME);
    if (!c) return;
    c->x = r.x, c->y = r.y, c->w = r.w, c->h = r.h, c->color = col, c->thick = thick;
}

void draw_line(draw_list *dl, int x0, int y0, int x1, int y1, rgba col, int thick) {
    draw_cmd *c = push(dl, DC_LINE);
    if (!c) return;
    c->x = x0, c->y = y0, c->w = x1 - x0, c->h = y1 - y0, c->color = col, c->thick = thick;
}

static int arena_add(draw_list *dl, const char *s, size_t *off) {
    size_t len = strlen(s) + 1;
    if (dl->arena_len + len > dl->arena_cap) {
        size_t ncap = dl->arena_cap ? dl->arena_cap * 2 : 8192;
        while (ncap < dl->arena_len + len) ncap *= 2;
        char *n = realloc(dl->arena, ncap);
        if (!n) return -1;
        dl->arena = n;
        dl->arena_cap = ncap;
    }
    memcpy(dl->arena + dl->arena_len, s, len);
    *off = dl->arena_len;
    dl->arena_len += len;
    return 0;
}

void draw_text(draw_list *dl, int x, int y, const char *s, int size, rgba col, int bold, int rot) {
    size_t off = 0;
    if (!s || !*s || arena_add(dl, s, &off) != 0) return;
    draw_cmd *c = push(dl, DC_TEXT);
    if (!c) return;
    c->text = off;
    c->x = x, c->y = y, c->size = size, c->color = col, c->bold = bold, c->rot = rot;
}

void draw_image_cmd(draw_list *dl, view_rect r, int w, int h, const rgba *px, uint64_t key) {
    if (r.w <= 0 || r.h <= 0 || w <= 0 || h <= 0 || !px) return;
    if (dl->image_count == dl->image_cap) {
        int ncap = dl->image_cap ? dl->image_cap * 2 : 64;
        draw_image *n = realloc(dl->images, (size_t)ncap * sizeof *n);
        if (!n) return;
        dl->images = n;
        dl->image_cap = ncap;
    }
    draw_cmd *c = push(dl, DC_IMAGE);
    if (!c) return;
    dl->images[dl->image_count] = (draw_image){w, h, px, key};
    c->img = dl->image_count++;
    c->x = r.x, c->y = r.y, c->w = r.w, c->h = r.h;
}

void draw_group_begin(draw_list *dl, int id, const char *name) {
    size_t off = 0;
    if (arena_add(dl, name ? name : "", &off) != 0) return;
    draw_cmd *c = push(dl, DC_GROUP);
    if (!c) return;
    c->group = id;
    c->text = off;
}

void draw_group_end(draw_list *dl) {
    size_t off = 0;
    if (arena_add(dl, "", &off) != 0) return;
    draw_cmd *c = push(dl, DC_GROUP);
    if (c) c->group = 0, c->text = off;
}

int draw_rename(draw_list *dl, int cmd, const char *name) {
    size_t off;
    if (cmd < 0 || cmd >= dl->count || arena_add(dl, name, &off) != 0) return -1;
    dl->cmds[cmd].text = off;
    return 0;
}
