/* view_internal.h: what the files of src/view share among themselves and not with
 * the rest of the program (the API is view.h). Grouped by the file that defines
 * each function; calls go one way: render -> panels, overlays -> heatmap, labels,
 * theme; layout -> labels; hit.c needs none of them. */
#ifndef MHAVIZ_VIEW_INTERNAL_H
#define MHAVIZ_VIEW_INTERNAL_H

#include <stddef.h>

#include "view.h"

/* Everything the drawing code of one frame needs, built once by view_render. */
typedef struct {
    draw_list *dl;
    view_cache *cache;
    const view_layout *L;
    const view_state *s;
    view_measure_fn measure;
    void *ud;
    view_theme th;
} view_ctx;

/* --- theme.c ------------------------------------------------------------------ */

/* Outline of the hovered query row and cell in every head. */
rgba view_highlight_color(int theme);

/* --- labels.c ----------------------------------------------------------------- */

/* A token as shown on an axis: at most VIEW_LABEL_CHARS characters, else cut
 * (never inside a UTF-8 sequence) and ended with "…". */
#define VIEW_LABEL_CHARS 10
void view_token_label(char *buf, size_t len, const char *tok);

/* v written with Unicode subscript digits ("₁₂"). */
void view_subscript(char *buf, size_t len, int v);

/* Width in pixels of the UTF-8 run s at pixel size `size`. */
int view_text_width(view_measure_fn measure, void *ud, const char *s, int size, int bold);

/* Widest token label at pixel size `size`. */
int view_label_max_width(const view_state *s, int size, view_measure_fn measure, void *ud);

/* Copies s into buf, cut at a character boundary and ended with "…" so that it is
 * at most maxw pixels wide (empty when not even "…" fits). */
void view_fit_text(char *buf, size_t len, const char *s, int maxw, int size, int bold,
                   view_measure_fn measure, void *ud);

/* v with three significant digits ("%.3g"), a typographic minus, and 0 for |v| < 1e-9. */
void view_format_number(char *buf, size_t len, float v);

/* view_text_width with the frame's measurer. */
static inline int view_tw(const view_ctx *c, const char *s, int size, int bold) {
    return view_text_width(c->measure, c->ud, s, size, bold);
}

/* Draws s centred in r (left-aligned when wider than r). */
void view_text_center(const view_ctx *c, view_rect r, const char *s, int size, rgba col, int bold);

/* A title of `count` runs at levels lvl[i] (0 normal and bold, 1 superscript, -1
 * subscript; scripts at 72 % of size, raised by 30 % or lowered by 42 % of it):
 * its width, and drawing it with its top-left at (x, y). */
int view_script_runs_width(const view_ctx *c, const char *const *parts, const int *lvl, int count,
                           int size);
void view_draw_script_runs(const view_ctx *c, int x, int y, const char *const *parts,
                           const int *lvl, int count, int size, rgba col);

/* Caption above the attention colorbar (the layout reserves its width). */
#define VIEW_ATTN_CAPTION "attention weight: softmax of each row, fixed scale 0 to 1"

#endif
