/* draw.h: the drawing list, the only thing the backends see. The view appends
 * rectangles, lines, text runs and heatmap images; the SDL backend replays them on
 * screen or into a PNG, the cairo backend into SVG or PDF. No SDL here. */
#ifndef MHAVIZ_DRAW_H
#define MHAVIZ_DRAW_H

#include <stddef.h>
#include <stdint.h>

#include "colormap.h"

typedef struct {
    int x, y, w, h;
} view_rect;

typedef enum {
    DC_FILL,  /* filled rectangle */
    DC_FRAME, /* rectangle outline, thickness inside the rect */
    DC_LINE,  /* from (x, y) to (x + w, y + h) */
    DC_TEXT,  /* a UTF-8 run with its top-left at (x, y); rotated 90 degrees
                 counter-clockwise when rot is set, then (x, y) is the bottom-left */
    DC_IMAGE, /* image img scaled into the rect with nearest-neighbour sampling */
    DC_GROUP, /* starts group `group` named by text (0 ends it): SVG <g> per head */
} draw_kind;

typedef struct {
    draw_kind kind;
    int x, y, w, h;
    rgba color;
    int thick;   /* lines and frames, pixels */
    int size;    /* text pixel height (font size) */
    int bold;    /* text */
    int rot;     /* text: 1 = rotated 90 degrees counter-clockwise */
    size_t text; /* text: offset into the list's text arena */
    int img;     /* image index */
    int group;   /* DC_GROUP id, 0 ends the group; its name is draw_cmd_text */
} draw_cmd;

/* A heatmap image: w x h RGBA pixels, row-major. `key` changes whenever the
 * pixels change, so a backend re-uploads a texture only then. */
typedef struct {
    int w, h;
    const rgba *px;
    uint64_t key;
} draw_image;

typedef struct {
    draw_cmd *cmds;
    int count, cap;
    char *arena;
    size_t arena_len, arena_cap;
    draw_image *images;
    int image_count, image_cap;
    rgba background;
    int width, height; /* output pixels */
} draw_list;

void draw_list_init(draw_list *dl);
void draw_list_free(draw_list *dl);
/* Empties the list for a new frame, keeping its memory. */
void draw_list_clear(draw_list *dl, int width, int height, rgba background);

void draw_fill(draw_list *dl, view_rect r, rgba c);
void draw_frame(draw_list *dl, view_rect r, rgba c, int thick);
void draw_line(draw_list *dl, int x0, int y0, int x1, int y1, rgba c, int thick);
void draw_text(draw_list *dl, int x, int y, const char *s, int size, rgba c, int bold, int rot);
/* Registers an image (the pixels must outlive the list's use) and draws it into r. */
void draw_image_cmd(draw_list *dl, view_rect r, int w, int h, const rgba *px, uint64_t key);
/* Opens group id (1-based) named name (e.g. "head-3"); draw_group_end closes it. */
void draw_group_begin(draw_list *dl, int id, const char *name);
void draw_group_end(draw_list *dl);
/* Gives command cmd (a text run or a group) the text name; 0, or -1 when out of memory. */
int draw_rename(draw_list *dl, int cmd, const char *name);

static inline const char *draw_cmd_text(const draw_list *dl, const draw_cmd *c) {
    return dl->arena + c->text;
}

#endif
