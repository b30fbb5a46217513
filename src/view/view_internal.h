/* view_internal.h: helpers shared by layout.c and render.c, not part of the API. */
#ifndef MHAVIZ_VIEW_INTERNAL_H
#define MHAVIZ_VIEW_INTERNAL_H

#include <stddef.h>

#include "view.h"

/* A token as shown on an axis: at most VIEW_LABEL_CHARS characters, else cut
 * (never inside a UTF-8 sequence) and ended with "…". */
#define VIEW_LABEL_CHARS 10
void view_token_label(char *buf, size_t len, const char *tok);

/* Widest token label at pixel size `size`. */
int view_label_max_width(const view_state *s, int size, view_measure_fn measure, void *ud);

/* v written with Unicode subscript digits ("₁₂"). */
void view_subscript(char *buf, size_t len, int v);

/* --- theme.c -------------------------------------------------------------- */

/* Outline of the hovered query row and cell in every head. */
rgba view_highlight_color(int theme);

/* Caption above the attention colorbar (the layout reserves its width). */
#define VIEW_ATTN_CAPTION "attention weight: softmax of each row, fixed scale 0 to 1"

#endif
