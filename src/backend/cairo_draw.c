/* cairo_draw.c: vector output of the drawing list. PDF goes through cairo, with
 * text as real (selectable) text in the same font files the screen uses and
 * heatmaps as images drawn with nearest-neighbour filtering. SVG is written
 * directly, so text stays <text> and each head is a <g id="head-K">; heatmaps are
 * cell rectangles, or an embedded PNG shown pixelated when they have many cells. */
#include "cairo_draw.h"

#include <cairo-ft.h>
#include <cairo-pdf.h>
#include <cairo.h>
#include <errno.h>
#include <ft2build.h>
#include FT_FREETYPE_H
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SVG_MAX_CELL_RECTS 100000 /* above this an image is embedded as PNG */
#define M_PI_2_MHAVIZ 1.57079632679489661923

/* --- text that any XML parser and cairo accept ---------------------------------- */

/* Length of the valid UTF-8 sequence at p (1..4), decoding it into *cp, or 0 when
 * p does not start one (a stray continuation byte, an overlong form, a surrogate,
 * a code point past U+10FFFF, a cut sequence). */
static int utf8_decode(const unsigned char *p, unsigned *cp) {
    if (p[0] < 0x80) {
        *cp = p[0];
        return 1;
    }
    int len = p[0] >= 0xF0 ? 4 : p[0] >= 0xE0 ? 3 : p[0] >= 0xC0 ? 2 : 0;
    if (!len || p[0] > 0xF4) return 0;
    unsigned v = p[0] & (0x7F >> len);
    for (int i = 1; i < len; i++) {
        if ((p[i] & 0xC0) != 0x80) return 0; /* also stops at the terminating '\0' */
        v = v << 6 | (p[i] & 0x3F);
    }
    static const unsigned min[5] = {0, 0, 0x80, 0x800, 0x10000};
    if (v < min[len] || v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF)) return 0;
    *cp = v;
    return len;
}

/* A character both outputs take: XML 1.0's Char production (tab, newline,
 * carriage return and [U+20, U+D7FF], [U+E000, U+FFFD], [U+10000, U+10FFFF])
 * without the noncharacters U+FDD0..U+FDEF and U+xFFFE, U+xFFFF of every plane,
 * which cairo refuses: one of them in a PDF's text stops all drawing after it. */
static int text_char_ok(unsigned cp) {
    if (cp >= 0xFDD0 && cp <= 0xFDEF) return 0;
    if ((cp & 0xFFFE) == 0xFFFE) return 0;
    return cp == 0x9 || cp == 0xA || cp == 0xD || (cp >= 0x20 && cp <= 0xD7FF) ||
           (cp >= 0xE000 && cp <= 0xFFFD) || (cp >= 0x10000 && cp <= 0x10FFFF);
}

/* A malloc'd copy of s in which every character text_char_ok refuses (C0
 * controls but tab, newline and CR; noncharacters such as U+FFFE and U+FFFF) and
 * every byte that is not part of valid UTF-8 is U+FFFD, one per character or
 * byte. NULL when out of memory. */
static char *xml_text(const char *s) {
    size_t len = strlen(s);
    char *out = malloc(3 * len + 1);
    if (!out) return NULL;
    const unsigned char *p = (const unsigned char *)s;
    char *o = out;
    while (*p) {
        unsigned cp = 0;
        int n = utf8_decode(p, &cp);
        if (n && text_char_ok(cp)) {
            memcpy(o, p, (size_t)n);
            o += n;
            p += n;
        } else {
            memcpy(o, "\xEF\xBF\xBD", 3); /* U+FFFD REPLACEMENT CHARACTER */
            o += 3;
            p += n ? n : 1;
        }
    }
    *o = '\0';
    return out;
}

/* --- PDF through cairo ---------------------------------------------------------- */

typedef struct {
    FT_Library ft;
    struct {
        char path[1024];
        FT_Face face;
        cairo_font_face_t *cf;
    } faces[8];
    int count;
} face_cache;

static cairo_font_face_t *face_get(face_cache *fc, const char *path) {
    for (int i = 0; i < fc->count; i++)
        if (strcmp(fc->faces[i].path, path) == 0) return fc->faces[i].cf;
    if (fc->count == 8) return NULL;
    FT_Face face;
    if (FT_New_Face(fc->ft, path, 0, &face) != 0) return NULL;
    cairo_font_face_t *cf = cairo_ft_font_face_create_for_ft_face(face, 0);
    int i = fc->count++;
    snprintf(fc->faces[i].path, sizeof fc->faces[i].path, "%s", path);
    fc->faces[i].face = face;
    fc->faces[i].cf = cf;
    return cf;
}

static void face_cache_free(face_cache *fc) {
    for (int i = 0; i < fc->count; i++) {
        cairo_font_face_destroy(fc->faces[i].cf);
        FT_Done_Face(fc->faces[i].face);
    }
    if (fc->ft) FT_Done_FreeType(fc->ft);
}

typedef struct {
    cairo_t *cr;
    face_cache *fc;
    int size;
    double x;
    double baseline;
} pdf_text_acc;

static void pdf_run(void *ud, const char *path, int synthetic_bold, const char *run, int width) {
    pdf_text_acc *a = ud;
    cairo_font_face_t *cf = face_get(a->fc, path);
    if (cf) {
        cairo_set_font_face(a->cr, cf);
        cairo_set_font_size(a->cr, a->size);
        cairo_move_to(a->cr, a->x, a->baseline);
        cairo_show_text(a->cr, run);
        if (synthetic_bold) { /* --font without a bold face: overstrike slightly */
            cairo_move_to(a->cr, a->x + a->size * 0.04, a->baseline);
            cairo_show_text(a->cr, run);
        }
    }
    a->x += width;
}

static void set_rgba(cairo_t *cr, rgba c) {
    cairo_set_source_rgba(cr, c.r / 255.0, c.g / 255.0, c.b / 255.0, c.a / 255.0);
}

/* The image as a cairo surface (premultiplied ARGB32), or NULL. */
static cairo_surface_t *image_surface(const draw_image *img) {
    cairo_surface_t *s = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, img->w, img->h);
    if (cairo_surface_status(s) != CAIRO_STATUS_SUCCESS) {
        cairo_surface_destroy(s);
        return NULL;
    }
    cairo_surface_flush(s);
    unsigned char *data = cairo_image_surface_get_data(s);
    int stride = cairo_image_surface_get_stride(s);
    for (int y = 0; y < img->h; y++) {
        uint32_t *row = (uint32_t *)(data + (size_t)y * stride);
        for (int x = 0; x < img->w; x++) {
            rgba p = img->px[(size_t)y * img->w + x];
            unsigned a = p.a;
            row[x] = a << 24 | (unsigned)(p.r * a / 255) << 16 | (unsigned)(p.g * a / 255) << 8 |
                     (unsigned)(p.b * a / 255);
        }
    }
    cairo_surface_mark_dirty(s);
    return s;
}

static void pdf_image(cairo_t *cr, const draw_image *img, const draw_cmd *c) {
    cairo_surface_t *s = image_surface(img);
    if (!s) return;
    cairo_save(cr);
    cairo_rectangle(cr, c->x, c->y, c->w, c->h);
    cairo_clip(cr);
    cairo_translate(cr, c->x, c->y);
    cairo_scale(cr, (double)c->w / img->w, (double)c->h / img->h);
    cairo_set_source_surface(cr, s, 0, 0);
    cairo_pattern_set_filter(cairo_get_source(cr), CAIRO_FILTER_NEAREST);
    cairo_paint(cr);
    cairo_restore(cr);
    cairo_surface_destroy(s);
}

/* The output file, every write checked: err keeps the first failure's errno. */
typedef struct {
    FILE *f;
    int err;
} out_file;

static cairo_status_t pdf_write(void *closure, const unsigned char *data, unsigned int len) {
    out_file *o = closure;
    if (o->err) return CAIRO_STATUS_WRITE_ERROR;
    if (fwrite(data, 1, len, o->f) != len) {
        o->err = errno ? errno : EIO;
        return CAIRO_STATUS_WRITE_ERROR;
    }
    return CAIRO_STATUS_SUCCESS;
}

/* Replays dl onto cr (one page). */
static void pdf_replay(cairo_t *cr, face_cache *fc, const draw_list *dl, font_set *fonts) {
    if (dl->background.a) {
        set_rgba(cr, dl->background);
        cairo_paint(cr);
    }
    for (int i = 0; i < dl->count; i++) {
        const draw_cmd *c = &dl->cmds[i];
        switch (c->kind) {
        case DC_FILL:
            set_rgba(cr, c->color);
            cairo_rectangle(cr, c->x, c->y, c->w, c->h);
            cairo_fill(cr);
            break;
        case DC_FRAME: {
            double t = c->thick > 0 ? c->thick : 1;
            set_rgba(cr, c->color);
            cairo_set_line_width(cr, t);
            cairo_rectangle(cr, c->x + t / 2, c->y + t / 2, c->w - t, c->h - t);
            cairo_stroke(cr);
            break;
        }
        case DC_LINE: {
            double t = c->thick > 0 ? c->thick : 1;
            set_rgba(cr, c->color);
            cairo_set_line_width(cr, t);
            double off = ((int)t % 2) ? 0.5 : 0.0;
            double ox = c->w == 0 ? off : 0, oy = c->h == 0 ? off : 0;
            cairo_move_to(cr, c->x + ox, c->y + oy);
            cairo_line_to(cr, c->x + c->w + ox, c->y + c->h + oy);
            cairo_stroke(cr);
            break;
        }
        case DC_TEXT: {
            char *s = xml_text(draw_cmd_text(dl, c));
            if (!s) break;
            int asc = font_ascent(fonts, c->size, c->bold);
            set_rgba(cr, c->color);
            pdf_text_acc a = {cr, fc, c->size, 0, asc};
            cairo_save(cr);
            cairo_translate(cr, c->x, c->y);
            if (c->rot) cairo_rotate(cr, -M_PI_2_MHAVIZ);
            font_runs(fonts, s, c->size, c->bold, pdf_run, &a);
            cairo_restore(cr);
            free(s);
            break;
        }
        case DC_IMAGE: pdf_image(cr, &dl->images[c->img], c); break;
        case DC_GROUP: break;
        }
    }
}

static int write_pdf(const draw_list *dl, out_file *o, font_set *fonts, char *why, size_t whylen) {
    cairo_surface_t *surf =
        cairo_pdf_surface_create_for_stream(pdf_write, o, dl->width, dl->height);
    if (cairo_surface_status(surf) != CAIRO_STATUS_SUCCESS) {
        snprintf(why, whylen, "%s", cairo_status_to_string(cairo_surface_status(surf)));
        cairo_surface_destroy(surf);
        return -1;
    }
    cairo_pdf_surface_set_metadata(surf, CAIRO_PDF_METADATA_CREATOR, "mhaviz");
    cairo_pdf_surface_set_metadata(surf, CAIRO_PDF_METADATA_TITLE, "multi-head attention");
    cairo_t *cr = cairo_create(surf);
    face_cache fc;
    memset(&fc, 0, sizeof fc);
    FT_Init_FreeType(&fc.ft);
    pdf_replay(cr, &fc, dl, fonts);
    /* a drawing error stops all drawing after it: the page would be incomplete */
    cairo_status_t st = cairo_status(cr);
    cairo_destroy(cr);
    cairo_surface_finish(surf);
    if (st == CAIRO_STATUS_SUCCESS) st = cairo_surface_status(surf);
    cairo_surface_destroy(surf);
    face_cache_free(&fc);
    if (o->err) {
        snprintf(why, whylen, "%s", strerror(o->err));
        return -1;
    }
    if (st != CAIRO_STATUS_SUCCESS) {
        snprintf(why, whylen, "%s", cairo_status_to_string(st));
        return -1;
    }
    return 0;
}

/* --- a PDF of many pages (a slide deck) ------------------------------------------ */

struct cairo_pdf_doc {
    out_file o;
    cairo_surface_t *surf;
    cairo_t *cr;
    face_cache fc;
    double w, h; /* the layout's size of the pages so far */
};

/* A slide's page for a width x height layout: CAIRO_SLIDE_W_PT wide, in proportion. */
static double slide_scale(int width) {
    return CAIRO_SLIDE_W_PT / (width > 0 ? width : 1);
}

cairo_pdf_doc *cairo_pdf_doc_open(FILE *f, int width, int height, const char *title, char *why,
                                  size_t whylen) {
    cairo_pdf_doc *d = calloc(1, sizeof *d);
    if (!d) {
        snprintf(why, whylen, "out of memory");
        return NULL;
    }
    d->o.f = f;
    d->w = width;
    d->h = height;
    const double k = slide_scale(width);
    d->surf = cairo_pdf_surface_create_for_stream(pdf_write, &d->o, width * k, height * k);
    if (cairo_surface_status(d->surf) != CAIRO_STATUS_SUCCESS) {
        snprintf(why, whylen, "%s", cairo_status_to_string(cairo_surface_status(d->surf)));
        cairo_surface_destroy(d->surf);
        free(d);
        return NULL;
    }
    cairo_pdf_surface_set_metadata(d->surf, CAIRO_PDF_METADATA_CREATOR, "mhaviz");
    cairo_pdf_surface_set_metadata(d->surf, CAIRO_PDF_METADATA_TITLE,
                                   title && title[0] ? title : "multi-head attention");
    d->cr = cairo_create(d->surf);
    FT_Init_FreeType(&d->fc.ft);
    return d;
}

int cairo_pdf_doc_page(cairo_pdf_doc *d, const draw_list *dl, font_set *fonts, char *why,
                       size_t whylen) {
    const double k = slide_scale(dl->width);
    if (dl->width != (int)d->w || dl->height != (int)d->h) {
        cairo_pdf_surface_set_size(d->surf, dl->width * k, dl->height * k);
        d->w = dl->width, d->h = dl->height;
    }
    cairo_save(d->cr);
    cairo_scale(d->cr, k, k);
    pdf_replay(d->cr, &d->fc, dl, fonts);
    cairo_restore(d->cr);
    cairo_show_page(d->cr);
    cairo_status_t st = cairo_status(d->cr);
    if (d->o.err) {
        snprintf(why, whylen, "%s", strerror(d->o.err));
        return -1;
    }
    if (st != CAIRO_STATUS_SUCCESS) {
        snprintf(why, whylen, "%s", cairo_status_to_string(st));
        return -1;
    }
    return 0;
}

int cairo_pdf_doc_close(cairo_pdf_doc *d, char *why, size_t whylen) {
    if (!d) return 0;
    cairo_status_t st = cairo_status(d->cr);
    cairo_destroy(d->cr);
    cairo_surface_finish(d->surf);
    if (st == CAIRO_STATUS_SUCCESS) st = cairo_surface_status(d->surf);
    cairo_surface_destroy(d->surf);
    face_cache_free(&d->fc);
    const int err = d->o.err;
    free(d);
    if (err) {
        if (why) snprintf(why, whylen, "%s", strerror(err));
        return -1;
    }
    if (st != CAIRO_STATUS_SUCCESS) {
        if (why) snprintf(why, whylen, "%s", cairo_status_to_string(st));
        return -1;
    }
    return 0;
}

/* --- SVG, written directly ------------------------------------------------------ */

static void outf(out_file *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void outf(out_file *o, const char *fmt, ...) {
    if (o->err) return;
    va_list ap;
    va_start(ap, fmt);
    if (vfprintf(o->f, fmt, ap) < 0) o->err = errno ? errno : EIO;
    va_end(ap);
}

static void outs(out_file *o, const char *s) {
    if (!o->err && fputs(s, o->f) == EOF) o->err = errno ? errno : EIO;
}

static void outc(out_file *o, char c) {
    if (!o->err && fputc(c, o->f) == EOF) o->err = errno ? errno : EIO;
}

static void svg_color(out_file *o, const char *attr, rgba c) {
    outf(o, " %s=\"#%02x%02x%02x\"", attr, c.r, c.g, c.b);
    if (c.a != 255) outf(o, " %s-opacity=\"%.3f\"", attr, c.a / 255.0);
}

/* Text as character data or an attribute value: markup characters escaped, and
 * what XML forbids replaced by U+FFFD (see xml_text). */
static void svg_escape(out_file *o, const char *text) {
    char *s = xml_text(text);
    if (!s) {
        o->err = o->err ? o->err : ENOMEM;
        return;
    }
    for (const char *p = s; *p; p++) {
        switch (*p) {
        case '&': outs(o, "&amp;"); break;
        case '<': outs(o, "&lt;"); break;
        case '>': outs(o, "&gt;"); break;
        case '"': outs(o, "&quot;"); break;
        case '\'': outs(o, "&apos;"); break;
        case '\t': outs(o, "&#9;"); break; /* kept as characters, not as white space */
        case '\n': outs(o, "&#10;"); break;
        case '\r': outs(o, "&#13;"); break;
        default: outc(o, *p);
        }
    }
    free(s);
}

typedef struct {
    out_file *o;
    unsigned char pend[3]; /* bytes waiting for a full triple */
    int npend;
} b64_out;

static const char b64_tbl[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/* cairo PNG stream callback: writes data as base64, three bytes at a time. */
static cairo_status_t png_to_b64(void *closure, const unsigned char *data, unsigned int len) {
    b64_out *o = closure;
    for (unsigned i = 0; i < len; i++) {
        o->pend[o->npend++] = data[i];
        if (o->npend == 3) {
            unsigned v = (unsigned)o->pend[0] << 16 | (unsigned)o->pend[1] << 8 | o->pend[2];
            for (int k = 18; k >= 0; k -= 6) outc(o->o, b64_tbl[v >> k & 63]);
            o->npend = 0;
        }
    }
    return o->o->err ? CAIRO_STATUS_WRITE_ERROR : CAIRO_STATUS_SUCCESS;
}

/* Writes the last one or two bytes with '=' padding. */
static void b64_flush(b64_out *o) {
    if (!o->npend) return;
    unsigned v = (unsigned)o->pend[0] << 16 | (o->npend > 1 ? (unsigned)o->pend[1] << 8 : 0);
    outc(o->o, b64_tbl[v >> 18 & 63]);
    outc(o->o, b64_tbl[v >> 12 & 63]);
    outc(o->o, o->npend > 1 ? b64_tbl[v >> 6 & 63] : '=');
    outc(o->o, '=');
    o->npend = 0;
}

static void svg_image(out_file *f, const draw_image *img, const draw_cmd *c) {
    double sx = (double)c->w / img->w, sy = (double)c->h / img->h;
    if ((long)img->w * img->h <= SVG_MAX_CELL_RECTS) {
        /* cell rectangles; a horizontal run of equal colours is one rectangle */
        outf(f, "<g shape-rendering=\"crispEdges\">\n");
        for (int y = 0; y < img->h; y++) {
            int x = 0;
            while (x < img->w) {
                rgba p = img->px[(size_t)y * img->w + x];
                int e = x + 1;
                while (e < img->w && memcmp(&img->px[(size_t)y * img->w + e], &p, sizeof p) == 0)
                    e++;
                outf(f, "<rect x=\"%.3f\" y=\"%.3f\" width=\"%.3f\" height=\"%.3f\"", c->x + x * sx,
                     c->y + y * sy, (e - x) * sx, sy);
                svg_color(f, "fill", p);
                outs(f, "/>\n");
                x = e;
            }
        }
        outf(f, "</g>\n");
        return;
    }
    cairo_surface_t *s = image_surface(img);
    if (!s) return;
    outf(f,
         "<image x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" preserveAspectRatio=\"none\" "
         "style=\"image-rendering:pixelated;image-rendering:crisp-edges\" "
         "href=\"data:image/png;base64,",
         c->x, c->y, c->w, c->h);
    b64_out o = {f, {0, 0, 0}, 0};
    if (cairo_surface_write_to_png_stream(s, png_to_b64, &o) != CAIRO_STATUS_SUCCESS && !f->err)
        f->err = EIO;
    b64_flush(&o);
    outs(f, "\"/>\n");
    cairo_surface_destroy(s);
}

static int write_svg(const draw_list *dl, out_file *f, font_set *fonts, char *why, size_t whylen) {
    outf(f,
         "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
         "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"%d\" "
         "height=\"%d\" viewBox=\"0 0 %d %d\" font-family=\"DejaVu Sans, Verdana, sans-serif\" "
         "xml:space=\"preserve\" style=\"white-space:pre\">\n"
         "<title>mhaviz: multi-head attention</title>\n",
         dl->width, dl->height, dl->width, dl->height);
    int depth = 0;
    for (int i = 0; i < dl->count; i++) {
        const draw_cmd *c = &dl->cmds[i];
        switch (c->kind) {
        case DC_FILL:
            outf(f, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\"", c->x, c->y, c->w, c->h);
            svg_color(f, "fill", c->color);
            outs(f, "/>\n");
            break;
        case DC_FRAME: {
            double t = c->thick > 0 ? c->thick : 1;
            outf(f,
                 "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"none\" "
                 "stroke-width=\"%.0f\"",
                 c->x + t / 2, c->y + t / 2, c->w - t, c->h - t, t);
            svg_color(f, "stroke", c->color);
            outs(f, "/>\n");
            break;
        }
        case DC_LINE: {
            double t = c->thick > 0 ? c->thick : 1;
            double off = ((int)t % 2) ? 0.5 : 0.0;
            double ox = c->w == 0 ? off : 0, oy = c->h == 0 ? off : 0;
            outf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke-width=\"%.0f\"",
                 c->x + ox, c->y + oy, c->x + c->w + ox, c->y + c->h + oy, t);
            svg_color(f, "stroke", c->color);
            outs(f, "/>\n");
            break;
        }
        case DC_TEXT: {
            int asc = font_ascent(fonts, c->size, c->bold);
            if (c->rot)
                outf(f, "<text transform=\"translate(%d %d) rotate(-90)\" x=\"0\" y=\"%d\"", c->x,
                     c->y, asc);
            else
                outf(f, "<text x=\"%d\" y=\"%d\"", c->x, c->y + asc);
            outf(f, " font-size=\"%d\"%s", c->size, c->bold ? " font-weight=\"bold\"" : "");
            svg_color(f, "fill", c->color);
            outs(f, ">");
            svg_escape(f, draw_cmd_text(dl, c));
            outs(f, "</text>\n");
            break;
        }
        case DC_IMAGE: svg_image(f, &dl->images[c->img], c); break;
        case DC_GROUP:
            if (c->group > 0) {
                outf(f, "<g id=\"");
                svg_escape(f, draw_cmd_text(dl, c));
                outf(f, "\" class=\"head\">\n");
                depth++;
            } else if (depth > 0) {
                outs(f, "</g>\n");
                depth--;
            }
            break;
        }
    }
    while (depth-- > 0) outs(f, "</g>\n");
    outs(f, "</svg>\n");
    if (f->err) {
        snprintf(why, whylen, "%s", strerror(f->err));
        return -1;
    }
    return 0;
}

int cairo_draw_stream(const draw_list *dl, FILE *f, int pdf, font_set *fonts, char *why,
                      size_t whylen) {
    out_file o = {f, 0};
    return pdf ? write_pdf(dl, &o, fonts, why, whylen) : write_svg(dl, &o, fonts, why, whylen);
}
