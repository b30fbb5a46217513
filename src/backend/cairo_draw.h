/* cairo_draw.h: the vector backend. Replays a drawing list into a PDF with cairo
 * (text stays text, heatmaps stay crisp) and into an SVG written directly, with
 * <text> elements and one <g> per head. */
#ifndef MHAVIZ_CAIRO_DRAW_H
#define MHAVIZ_CAIRO_DRAW_H

#include <stddef.h>
#include <stdio.h>

#include "draw.h"
#include "font.h"

/* Writes dl to f as PDF (pdf = 1) or SVG (pdf = 0), checking every write. Text
 * is made valid for XML and cairo first: every character XML 1.0 forbids, every
 * Unicode noncharacter and every byte that is not valid UTF-8 becomes U+FFFD.
 * Returns 0, or -1 with the reason in why (strerror of the first failed write,
 * or cairo's status). */
int cairo_draw_stream(const draw_list *dl, FILE *f, int pdf, font_set *fonts, char *why,
                      size_t whylen);

/* A PDF of many pages written to f (a slide deck): open it, add pages, close it.
 * Each page is a slide's size: CAIRO_SLIDE_W_PT (13.33 in) wide and as tall as the
 * layout's width x height asks (16:9: 960 x 540 pt, 13.33 x 7.5 in), the layout
 * scaled to it, so a deck opens at the size of a presentation program's slide and
 * its text keeps its share of the page; every write is checked as
 * cairo_draw_stream's. open returns NULL and
 * page / close -1 with the reason in why; close finishes the file (without
 * closing f) and frees d, also after a failure. */
#define CAIRO_SLIDE_W_PT 960.0 /* 13.333 in: a 16:9 slide is 13.333 x 7.5 in */
typedef struct cairo_pdf_doc cairo_pdf_doc;
cairo_pdf_doc *cairo_pdf_doc_open(FILE *f, int width, int height, const char *title, char *why,
                                  size_t whylen);
int cairo_pdf_doc_page(cairo_pdf_doc *d, const draw_list *dl, font_set *fonts, char *why,
                       size_t whylen);
int cairo_pdf_doc_close(cairo_pdf_doc *d, char *why, size_t whylen);

#endif
