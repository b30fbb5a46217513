/* test_backends.c: the backends against hostile drawing lists, headless.
 * - Banded PNG rendering (sdl_band_*): the same list drawn in bands of 1, 2, 7,
 *   64 rows and in one band gives identical pixels; heatmap images are sampled at
 *   each pixel's centre (checked against a formula written here) and blended as
 *   "source over".
 * - SVG and PDF (cairo_draw_stream) for text with every C0 control, U+FFFE,
 *   U+FFFF, surrogates, overlong forms, stray and cut bytes, markup characters:
 *   the SVG text is what this test writes by hand, the file is valid UTF-8 with no
 *   character XML forbids and xmllint accepts it; pdftotext reads the PDF.
 * - A full device (/dev/full): SVG and PDF writing report "No space left on device". */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cairo_draw.h"
#include "check.h"
#include "font.h"
#include "sdl_draw.h"

static font_set *g_fonts;

static int group_setup(void **state) {
    (void)state;
    if (TTF_Init() != 0) return -1;
    char err[256];
    g_fonts = font_set_open(NULL, err, sizeof err);
    if (!g_fonts) fprintf(stderr, "font_set_open: %s\n", err);
    return g_fonts ? 0 : -1;
}

static int group_teardown(void **state) {
    (void)state;
    font_set_close(g_fonts);
    TTF_Quit();
    return 0;
}

/* --- bands ------------------------------------------------------------------------ */

#define BW 301
#define BH 257
#define IW 7
#define IH 5

static rgba g_img[IW * IH]; /* opaque except column 3 (alpha 128) and column 5 (alpha 0) */

static rgba img_px(int x, int y) {
    rgba p = {(unsigned char)(20 + 30 * x), (unsigned char)(200 - 35 * y),
              (unsigned char)(x * y * 9), 255};
    if (x == 3) p.a = 128;
    if (x == 5) p.a = 0;
    return p;
}

/* A list with every kind of command, several crossing band edges or the canvas. */
static void band_list(draw_list *dl) {
    for (int y = 0; y < IH; y++)
        for (int x = 0; x < IW; x++) g_img[y * IW + x] = img_px(x, y);
    draw_list_init(dl);
    draw_list_clear(dl, BW, BH, (rgba){250, 250, 245, 255});
    draw_fill(dl, (view_rect){-20, 30, 120, 90}, (rgba){30, 60, 200, 255});
    draw_fill(dl, (view_rect){50, 100, 200, 40}, (rgba){200, 30, 30, 128});
    draw_frame(dl, (view_rect){10, 5, 280, 245}, (rgba){0, 0, 0, 255}, 3);
    draw_line(dl, 0, 0, 300, 256, (rgba){0, 120, 0, 255}, 1);      /* diagonal */
    draw_line(dl, 290, 10, 20, 240, (rgba){120, 0, 120, 255}, 1);  /* the other way */
    draw_line(dl, 150, -10, 150, 300, (rgba){90, 90, 90, 255}, 4); /* off both ends */
    draw_line(dl, -5, 128, 310, 128, (rgba){10, 10, 10, 200}, 2);
    draw_image_cmd(dl, (view_rect){120, 20, 101, 173}, IW, IH, g_img, 1); /* odd scale */
    draw_image_cmd(dl, (view_rect){-30, 200, 90, 100}, IW, IH, g_img, 1); /* past 2 edges */
    draw_text(dl, 20, 60, "band edges: \xC3\xA9\xE6\x9D\xB1", 40, (rgba){0, 0, 0, 255}, 0, 0);
    draw_text(dl, 260, 250, "turned text", 30, (rgba){160, 0, 0, 255}, 1, 1);
    draw_text(dl, 40, 230, "near the bottom", 50, (rgba){0, 0, 160, 255}, 0, 0);
}

/* The whole picture drawn in bands of `rows` rows, as ARGB words. */
static Uint32 *render_bands(const draw_list *dl, int rows) {
    char err[256] = "";
    sdl_band *b = sdl_band_create(dl->width, rows, g_fonts, err, sizeof err);
    if (!b)
        fail_msg("sdl_band_create(%d, %d): expected a band, got NULL (%s)", dl->width, rows, err);
    Uint32 *out = malloc((size_t)dl->width * dl->height * 4);
    assert_non_null(out);
    for (int y0 = 0; y0 < dl->height; y0 += rows) {
        SDL_Surface *s = sdl_band_draw(b, dl, y0);
        CHECK_INT("band surface width", dl->width, s->w);
        CHECK_INT("band surface height", rows, s->h);
        for (int y = 0; y < rows && y0 + y < dl->height; y++)
            memcpy(out + (size_t)(y0 + y) * dl->width, (Uint8 *)s->pixels + (size_t)y * s->pitch,
                   (size_t)dl->width * 4);
    }
    sdl_band_destroy(b);
    return out;
}

static void test_bands_agree(void **state) {
    (void)state;
    draw_list dl;
    band_list(&dl);
    Uint32 *one = render_bands(&dl, BH);
    /* not a blank picture: the text and the shapes are there */
    int dark = 0;
    for (int i = 0; i < BW * BH; i++) dark += (one[i] & 0xFF) < 60;
    CHECK_TRUE("the one-band picture has dark pixels", dark > 500);
    const int rows[] = {1, 2, 7, 64, 100};
    for (size_t k = 0; k < sizeof rows / sizeof rows[0]; k++) {
        Uint32 *banded = render_bands(&dl, rows[k]);
        for (int i = 0; i < BW * BH; i++)
            if (banded[i] != one[i])
                fail_msg("bands of %d rows, pixel (%d, %d): expected 0x%08x (one band), got "
                         "0x%08x",
                         rows[k], i % BW, i / BW, one[i], banded[i]);
        free(banded);
    }
    free(one);
    draw_list_free(&dl);
}

/* Nearest-neighbour sampling at pixel centres, and "source over" blending. */
static void test_band_image_sampling(void **state) {
    (void)state;
    draw_list dl;
    draw_list_init(&dl);
    for (int y = 0; y < IH; y++)
        for (int x = 0; x < IW; x++) g_img[y * IW + x] = img_px(x, y);
    const rgba bg = {40, 90, 160, 255};
    draw_list_clear(&dl, 240, 200, bg);
    const view_rect r = {13, 9, 211, 177};
    draw_image_cmd(&dl, r, IW, IH, g_img, 7);
    Uint32 *px = render_bands(&dl, 3);
    for (int y = r.y; y < r.y + r.h; y++)
        for (int x = r.x; x < r.x + r.w; x++) {
            /* the source pixel under the centre of (x, y) */
            int sx = (int)floor((x - r.x + 0.5) * IW / r.w);
            int sy = (int)floor((y - r.y + 0.5) * IH / r.h);
            rgba s = img_px(sx, sy);
            double a = s.a / 255.0;
            int want[3] = {(int)lround(s.r * a + bg.r * (1 - a)),
                           (int)lround(s.g * a + bg.g * (1 - a)),
                           (int)lround(s.b * a + bg.b * (1 - a))};
            Uint32 p = px[y * 240 + x];
            int got[3] = {(int)(p >> 16 & 255), (int)(p >> 8 & 255), (int)(p & 255)};
            for (int c = 0; c < 3; c++)
                if (abs(got[c] - want[c]) > 1)
                    fail_msg("image pixel (%d, %d) channel %d (source (%d, %d), alpha %d): "
                             "expected %d +- 1, got %d",
                             x, y, c, sx, sy, s.a, want[c], got[c]);
        }
    /* outside the rectangle: the background */
    CHECK_INT("pixel left of the image", 0xFF285AA0u, px[100 * 240 + 12]);
    CHECK_INT("pixel below the image", 0xFF285AA0u, px[186 * 240 + 100]);
    free(px);
    draw_list_free(&dl);
}

/* --- SVG and PDF ---------------------------------------------------------------- */

/* Each input and its character data in the SVG, written by hand from XML 1.0's
 * Char production less Unicode's noncharacters (U+FDD0..U+FDEF, U+xFFFE,
 * U+xFFFF) and the rule "one U+FFFD per bad character or byte". */
#define FFFD "\xEF\xBF\xBD"
static const struct {
    const char *in, *svg;
} TEXTS[] = {
    {"a\x01"
     "b\x1F"
     "c",
     "a" FFFD "b" FFFD "c"},
    {"tab\tnl\ncr\r.", "tab&#9;nl&#10;cr&#13;."},
    {"del\x7F.", "del\x7F."},                                              /* allowed in XML 1.0 */
    {"x\xEF\xBF\xBEy\xEF\xBF\xBFz", "x" FFFD "y" FFFD "z"},                /* U+FFFE, U+FFFF */
    {"\xEF\xBF\xBD\xEF\xBF\xBC", FFFD "\xEF\xBF\xBC"},                     /* U+FFFD, U+FFFC */
    {"s\xED\xA0\x80t\xED\xBF\xBF", "s" FFFD FFFD FFFD "t" FFFD FFFD FFFD}, /* surrogates */
    {"o\xC0\x80p\xE0\x80\xAFq\xF0\x80\x80\x80",
     "o" FFFD FFFD "p" FFFD FFFD FFFD "q" FFFD FFFD FFFD FFFD},
    {"max\xF4\x8F\xBF\xBF!", "max" FFFD "!"}, /* U+10FFFF, a noncharacter */
    {"n\xEF\xB7\x90"
     "c\xF0\x9F\xBF\xBE",
     "n" FFFD "c" FFFD},                                                  /* U+FDD0, U+1FFFE */
    {"ok\xF0\x9F\x98\x80\xEF\xB7\xB0", "ok\xF0\x9F\x98\x80\xEF\xB7\xB0"}, /* U+1F600, U+FDF0 */
    {"big\xF4\x90\x80\x80\xF5\x80", "big" FFFD FFFD FFFD FFFD FFFD FFFD}, /* past U+10FFFF */
    {"\x80stray\xBF", FFFD "stray" FFFD},
    {"cut\xE2\x82", "cut" FFFD FFFD},
    {"<&>\"'", "&lt;&amp;&gt;&quot;&apos;"},
    {"Z\xC3\xBCrich \xE6\x9D\xB1\xE4\xBA\xAC", "Z\xC3\xBCrich \xE6\x9D\xB1\xE4\xBA\xAC"},
};
#define NTEXTS (sizeof TEXTS / sizeof TEXTS[0])

static void text_list(draw_list *dl) {
    draw_list_init(dl);
    draw_list_clear(dl, 400, 40 * (int)NTEXTS + 40, (rgba){255, 255, 255, 255});
    draw_group_begin(dl, 1, "head-1\x01<\xEF\xBF\xBE>");
    for (size_t i = 0; i < NTEXTS; i++)
        draw_text(dl, 10, 10 + 40 * (int)i, TEXTS[i].in, 16, (rgba){0, 0, 0, 255}, 0, (int)i % 2);
    draw_group_end(dl);
}

static char *slurp_file(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)n + 1);
    assert_non_null(buf);
    *len = fread(buf, 1, (size_t)n, f);
    buf[*len] = '\0';
    fclose(f);
    return buf;
}

/* Strict UTF-8 and XML 1.0 Char, decoded here independently of cairo_draw.c:
 * returns the offset of the first bad byte, or -1 when all is well. */
static long first_bad_xml(const unsigned char *s, size_t len) {
    size_t i = 0;
    while (i < len) {
        unsigned c = s[i], cp;
        size_t n;
        if (c < 0x80)
            cp = c, n = 1;
        else if (c >= 0xC2 && c <= 0xDF)
            cp = c & 0x1F, n = 2;
        else if (c >= 0xE0 && c <= 0xEF)
            cp = c & 0x0F, n = 3;
        else if (c >= 0xF0 && c <= 0xF4)
            cp = c & 0x07, n = 4;
        else
            return (long)i;
        if (i + n > len) return (long)i;
        for (size_t k = 1; k < n; k++) {
            if ((s[i + k] & 0xC0) != 0x80) return (long)i;
            cp = cp << 6 | (s[i + k] & 0x3F);
        }
        if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10FFFF))) return (long)i;
        int ok = cp == 9 || cp == 10 || cp == 13 || (cp >= 0x20 && cp <= 0xD7FF) ||
                 (cp >= 0xE000 && cp <= 0xFFFD) || cp >= 0x10000;
        if ((cp >= 0xFDD0 && cp <= 0xFDEF) || (cp & 0xFFFE) == 0xFFFE) ok = 0; /* nonchars */
        if (!ok) return (long)i;
        i += n;
    }
    return -1;
}

static void test_svg_any_text(void **state) {
    (void)state;
    draw_list dl;
    text_list(&dl);
    char path[] = "/tmp/mhaviz-test-svg-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    FILE *f = fdopen(fd, "wb");
    char why[256] = "";
    int rc = cairo_draw_stream(&dl, f, 0, g_fonts, why, sizeof why);
    fclose(f);
    if (rc != 0) fail_msg("cairo_draw_stream (SVG): expected 0, got %d (%s)", rc, why);
    size_t len = 0;
    char *svg = slurp_file(path, &len);
    assert_non_null(svg);
    long bad = first_bad_xml((const unsigned char *)svg, len);
    if (bad >= 0)
        fail_msg("SVG byte %ld: expected valid UTF-8 holding only XML 1.0 characters, got 0x%02x",
                 bad, (unsigned char)svg[bad]);
    /* each text element's character data is the hand-written expectation */
    const char *p = svg;
    for (size_t i = 0; i < NTEXTS; i++) {
        p = strstr(p, "<text ");
        if (!p) fail_msg("SVG: expected %zu <text> elements, got %zu", NTEXTS, i);
        p = strchr(p, '>') + 1;
        const char *end = strstr(p, "</text>");
        assert_non_null(end);
        if ((size_t)(end - p) != strlen(TEXTS[i].svg) || memcmp(p, TEXTS[i].svg, (size_t)(end - p)))
            fail_msg("SVG text %zu: expected \"%s\", got \"%.*s\"", i, TEXTS[i].svg, (int)(end - p),
                     p);
    }
    CHECK_TRUE("the group id escaped",
               strstr(svg, "id=\"head-1" FFFD "&lt;" FFFD "&gt;\"") != NULL);
    char cmd[200];
    snprintf(cmd, sizeof cmd, "xmllint --noout %s", path);
    CHECK_INT("xmllint --noout on the SVG", 0, system(cmd));
    free(svg);
    unlink(path);
    draw_list_free(&dl);
}

static void test_pdf_any_text(void **state) {
    (void)state;
    draw_list dl;
    text_list(&dl);
    char path[] = "/tmp/mhaviz-test-pdf-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    FILE *f = fdopen(fd, "wb");
    char why[256] = "";
    int rc = cairo_draw_stream(&dl, f, 1, g_fonts, why, sizeof why);
    fclose(f);
    if (rc != 0) fail_msg("cairo_draw_stream (PDF): expected 0, got %d (%s)", rc, why);
    size_t len = 0;
    char *pdf = slurp_file(path, &len);
    assert_non_null(pdf);
    CHECK_TRUE("PDF starts with %PDF-", len > 5 && memcmp(pdf, "%PDF-", 5) == 0);
    CHECK_TRUE("PDF ends with %%EOF", len > 6 && strstr(pdf + len - 7, "%%EOF") != NULL);
    char cmd[200];
    /* the last text is there: a refused character stops cairo drawing */
    snprintf(cmd, sizeof cmd, "pdftotext %s - | grep -q 'Z\xC3\xBCrich'", path);
    CHECK_INT("pdftotext finds the last text", 0, system(cmd));
    free(pdf);
    unlink(path);
    draw_list_free(&dl);
}

static void test_full_device(void **state) {
    (void)state;
    draw_list dl;
    band_list(&dl);
    for (int pdf = 0; pdf < 2; pdf++) {
        FILE *f = fopen("/dev/full", "wb");
        assert_non_null(f);
        setvbuf(f, NULL, _IONBF, 0); /* every write reaches the device and fails there */
        char why[256] = "";
        int rc = cairo_draw_stream(&dl, f, pdf, g_fonts, why, sizeof why);
        fclose(f);
        const char *what = pdf ? "PDF onto /dev/full" : "SVG onto /dev/full";
        CHECK_INT(what, -1, rc);
        if (!strstr(why, strerror(ENOSPC)))
            fail_msg("%s: expected \"%s\", got \"%s\"", what, strerror(ENOSPC), why);
    }
    draw_list_free(&dl);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bands_agree),  cmocka_unit_test(test_band_image_sampling),
        cmocka_unit_test(test_svg_any_text), cmocka_unit_test(test_pdf_any_text),
        cmocka_unit_test(test_full_device),
    };
    return cmocka_run_group_tests_name("backends", tests, group_setup, group_teardown);
}
