/* cairo_draw.h: the vector backend. Replays a drawing list into a PDF with cairo
 * (text stays text, heatmaps stay crisp) and into an SVG written directly, with
 * <text> elements and one <g> per head. */
#ifndef MHAVIZ_CAIRO_DRAW_H
#define MHAVIZ_CAIRO_DRAW_H

#include <stddef.h>

#include "draw.h"
#include "font.h"

/* Writes dl to path as PDF (pdf = 1) or SVG (pdf = 0). Returns 0 or -1 with a message. */
int cairo_draw_file(const draw_list *dl, const char *path, int pdf, font_set *fonts, char *err,
                    size_t errlen);

#endif
