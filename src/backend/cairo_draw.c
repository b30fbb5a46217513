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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SVG_MAX_CELL_RECTS 100000 /* above this an image is embedded as PNG */
#define M_PI_2_MHAVIZ 1.57079632679489661923

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

static int write_pdf(const draw_list *dl, const char *path, font_set *fonts, char *err,
                     size_t errlen) {
    cairo_surface_t *surf = cairo_pdf_surface_create(path, dl->width, dl->height);
    if (cairo_surface_status(surf) != CAIRO_STATUS_SUCCESS) {
        snprintf(err, errlen, "cannot write %s: %s", path,
                 cairo_status_to_string(cairo_surface_status(surf)));
        cairo_surface_destroy(surf);
        return -1;
    }
    cairo_pdf_surface_set_metadata(surf, CAIRO_PDF_METADATA_CREATOR, "mhaviz");
    cairo_pdf_surface_set_metadata(surf, CAIRO_PDF_METADATA_TITLE, "multi-head attention");
    cairo_t *cr = cairo_create(surf);
    face_cache fc;
    memset(&fc, 0, sizeof fc);
    FT_Init_FreeType(&fc.ft);
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
            const char *s = draw_cmd_text(dl, c);
            int asc = font_ascent(fonts, c->size, c->bold);
            set_rgba(cr, c->color);
            pdf_text_acc a = {cr, &fc, c->size, 0, asc};
            cairo_save(cr);
            cairo_translate(cr, c->x, c->y);
            if (c->rot) cairo_rotate(cr, -M_PI_2_MHAVIZ);
            font_runs(fonts, s, c->size, c->bold, pdf_run, &a);
            cairo_restore(cr);
            break;
        }
        case DC_IMAGE: pdf_image(cr, &dl->images[c->img], c); break;
        case DC_GROUP: break;
        }
    }
    cairo_destroy(cr);
    cairo_surface_finish(surf);
    cairo_status_t st = cairo_surface_status(surf);
    cairo_surface_destroy(surf);
    face_cache_free(&fc);
    if (st != CAIRO_STATUS_SUCCESS) {
        snprintf(err, errlen, "cannot write %s: %s", path, cairo_status_to_string(st));
        return -1;
    }
    return 0;
}

/* --- SVG, written directly ------------------------------------------------------ */

static void svg_color(FILE *f, const char *attr, rgba c) {
    fprintf(f, " %s=\"#%02x%02x%02x\"", attr, c.r, c.g, c.b);
    if (c.a != 255) fprintf(f, " %s-opacity=\"%.3f\"", attr, c.a / 255.0);
}

static void svg_escape(FILE *f, const char *s) {
    for (; *s; s++) {
        switch (*s) {
        case '&': fputs("&amp;", f); break;
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '"': fputs("&quot;", f); break;
        case '\'': fputs("&apos;", f); break;
        default:
            if ((unsigned char)*s >= 0x20 || *s == '\t') fputc(*s, f);
        }
    }
}

typedef struct {
    FILE *f;
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
            for (int k = 18; k >= 0; k -= 6) fputc(b64_tbl[v >> k & 63], o->f);
            o->npend = 0;
        }
    }
    return CAIRO_STATUS_SUCCESS;
}

/* Writes the last one or two bytes with '=' padding. */
static void b64_flush(b64_out *o) {
    if (!o->npend) return;
    unsigned v = (unsigned)o->pend[0] << 16 | (o->npend > 1 ? (unsigned)o->pend[1] << 8 : 0);
    fputc(b64_tbl[v >> 18 & 63], o->f);
    fputc(b64_tbl[v >> 12 & 63], o->f);
    fputc(o->npend > 1 ? b64_tbl[v >> 6 & 63] : '=', o->f);
    fputc('=', o->f);
    o->npend = 0;
}

static void svg_image(FILE *f, const draw_image *img, const draw_cmd *c) {
    double sx = (double)c->w / img->w, sy = (double)c->h / img->h;
    if ((long)img->w * img->h <= SVG_MAX_CELL_RECTS) {
        /* cell rectangles; a horizontal run of equal colours is one rectangle */
        fprintf(f, "<g shape-rendering=\"crispEdges\">\n");
        for (int y = 0; y < img->h; y++) {
            int x = 0;
            while (x < img->w) {
                rgba p = img->px[(size_t)y * img->w + x];
                int e = x + 1;
                while (e < img->w && memcmp(&img->px[(size_t)y * img->w + e], &p, sizeof p) == 0)
                    e++;
                fprintf(f, "<rect x=\"%.3f\" y=\"%.3f\" width=\"%.3f\" height=\"%.3f\"",
                        c->x + x * sx, c->y + y * sy, (e - x) * sx, sy);
                svg_color(f, "fill", p);
                fputs("/>\n", f);
                x = e;
            }
        }
        fprintf(f, "</g>\n");
        return;
    }
    cairo_surface_t *s = image_surface(img);
    if (!s) return;
    fprintf(f,
            "<image x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" preserveAspectRatio=\"none\" "
            "style=\"image-rendering:pixelated;image-rendering:crisp-edges\" "
            "href=\"data:image/png;base64,",
            c->x, c->y, c->w, c->h);
    b64_out o = {f, {0, 0, 0}, 0};
    cairo_surface_write_to_png_stream(s, png_to_b64, &o);
    b64_flush(&o);
    fputs("\"/>\n", f);
    cairo_surface_destroy(s);
}

static int write_svg(const draw_list *dl, const char *path, font_set *fonts, char *err,
                     size_t errlen) {
    FILE *f = fopen(path, "w");
    if (!f) {
        snprintf(err, errlen, "cannot write %s: %s", path, strerror(errno));
        return -1;
    }
    fprintf(f,
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
            fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\"", c->x, c->y, c->w,
                    c->h);
            svg_color(f, "fill", c->color);
            fputs("/>\n", f);
            break;
        case DC_FRAME: {
            double t = c->thick > 0 ? c->thick : 1;
            fprintf(f,
                    "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"none\" "
                    "stroke-width=\"%.0f\"",
                    c->x + t / 2, c->y + t / 2, c->w - t, c->h - t, t);
            svg_color(f, "stroke", c->color);
            fputs("/>\n", f);
            break;
        }
        case DC_LINE: {
            double t = c->thick > 0 ? c->thick : 1;
            double off = ((int)t % 2) ? 0.5 : 0.0;
            double ox = c->w == 0 ? off : 0, oy = c->h == 0 ? off : 0;
            fprintf(f,
                    "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke-width=\"%.0f\"",
                    c->x + ox, c->y + oy, c->x + c->w + ox, c->y + c->h + oy, t);
            svg_color(f, "stroke", c->color);
            fputs("/>\n", f);
            break;
        }
        case DC_TEXT: {
            int asc = font_ascent(fonts, c->size, c->bold);
            if (c->rot)
                fprintf(f, "<text transform=\"translate(%d %d) rotate(-90)\" x=\"0\" y=\"%d\"",
                        c->x, c->y, asc);
            else
                fprintf(f, "<text x=\"%d\" y=\"%d\"", c->x, c->y + asc);
            fprintf(f, " font-size=\"%d\"%s", c->size, c->bold ? " font-weight=\"bold\"" : "");
            svg_color(f, "fill", c->color);
            fputs(">", f);
            svg_escape(f, draw_cmd_text(dl, c));
            fputs("</text>\n", f);
            break;
        }
        case DC_IMAGE: svg_image(f, &dl->images[c->img], c); break;
        case DC_GROUP:
            if (c->group > 0) {
                fprintf(f, "<g id=\"");
                svg_escape(f, draw_cmd_text(dl, c));
                fprintf(f, "\" class=\"head\">\n");
                depth++;
            } else if (depth > 0) {
                fputs("</g>\n", f);
                depth--;
            }
            break;
        }
    }
    while (depth-- > 0) fputs("</g>\n", f);
    fputs("</svg>\n", f);
    int bad = ferror(f);
    if (fclose(f) != 0) bad = 1;
    if (bad) {
        snprintf(err, errlen, "cannot write %s: %s", path, strerror(errno ? errno : EIO));
        return -1;
    }
    return 0;
}

int cairo_draw_file(const draw_list *dl, const char *path, int pdf, font_set *fonts, char *err,
                    size_t errlen) {
    return pdf ? write_pdf(dl, path, fonts, err, errlen) : write_svg(dl, path, fonts, err, errlen);
}
