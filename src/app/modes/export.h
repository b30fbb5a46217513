/* export.h: writing the view to files, shared by the window (Ctrl+S) and the
 * headless --export. PNG goes through the SDL backend, SVG and PDF through cairo;
 * all are written under a temporary name and renamed when complete. */
#ifndef MHAVIZ_EXPORT_H
#define MHAVIZ_EXPORT_H

#include <stddef.h>

#include "font.h"
#include "view.h"

/* "DIR/mhaviz-h<h>-d<d>-<YYYYmmdd-HHMMSS>.<ext>" (DIR defaults to "."). */
int export_default_name(char *out, size_t len, const char *dir, int h, int d, const char *ext,
                        char *err, size_t errlen);

#define EXPORT_PNG_MAX_SIDE 32768     /* pixels: --size 8192 x --scale 4 */
#define EXPORT_BAND_BYTES (16u << 20) /* the PNG is drawn this many bytes at a time */

/* Lays out and renders vs at (vs->width, vs->height) x scale pixels into a PNG,
 * a band of rows at a time (memory: EXPORT_BAND_BYTES, the drawing list and the
 * text of one band), every write checked. A side past EXPORT_PNG_MAX_SIDE is
 * refused with a message naming the limit. Returns 0, or -1 with "cannot write
 * PATH: reason". */
int export_png(const char *path, const view_state *vs, int scale, font_set *fonts, char *err,
               size_t errlen);

/* Lays out vs at its size and writes an SVG or PDF (by the path's extension),
 * every write checked. Returns 0, or -1 with "cannot write PATH: reason". */
int export_vector(const char *path, const view_state *vs, font_set *fonts, char *err,
                  size_t errlen);

/* Writes a drawing list made by the caller (a figure of its own, such as the sweep's
 * plot) as PNG (alpha: with its transparency), SVG or PDF by the path's extension,
 * every write checked. Returns 0, or -1 with "cannot write PATH: reason". */
int export_draw_list(const char *path, const draw_list *dl, int alpha, font_set *fonts, char *err,
                     size_t errlen);

#endif
