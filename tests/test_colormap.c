/* test_colormap.c: the colormaps against matplotlib's published endpoint colours,
 * clamping and NaN, lightness (CIE L* from relative luminance, computed here)
 * monotonic for the sequential maps, the diverging map near-white at 0 and
 * symmetric in lightness, the signed map of greys readable in greyscale print,
 * the head colours apart under simulated colour blindness and visible against
 * each theme's background, the frames' contrast, and the name lookups. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "colormap.h"
#include "view_fixture.h"
#include "view_internal.h"

static unsigned hex_of(rgba c) {
    return ((unsigned)c.r << 16) | ((unsigned)c.g << 8) | c.b;
}

#define EXPECT_RGB(what, want_hex, got_rgba)                                                       \
    do {                                                                                           \
        rgba g_ = (got_rgba);                                                                      \
        EXPECT(hex_of(g_) == (unsigned)(want_hex) && g_.a == 255,                                  \
               "%s: expected #%06x alpha 255, got #%06x alpha %d", (what), (unsigned)(want_hex),   \
               hex_of(g_), g_.a);                                                                  \
    } while (0)

#define EXPECT_SAME(what, want, got)                                                               \
    do {                                                                                           \
        rgba w_ = (want), g_ = (got);                                                              \
        EXPECT(memcmp(&w_, &g_, sizeof w_) == 0, "%s: expected #%06x/%d, got #%06x/%d", (what),    \
               hex_of(w_), w_.a, hex_of(g_), g_.a);                                                \
    } while (0)

/* sRGB channel to linear light */
static double lin(unsigned char v) {
    double c = v / 255.0;
    return c <= 0.04045 ? c / 12.92 : pow((c + 0.055) / 1.055, 2.4);
}

/* relative luminance Y (Rec. 709 / sRGB primaries) */
static double luminance(rgba c) {
    return 0.2126 * lin(c.r) + 0.7152 * lin(c.g) + 0.0722 * lin(c.b);
}

/* CIE L* (0..100) from Y */
static double lstar(rgba c) {
    double y = luminance(c);
    double f = y > 216.0 / 24389.0 ? cbrt(y) : (24389.0 / 27.0 * y + 16.0) / 116.0;
    return 116.0 * f - 16.0;
}

static void test_endpoints(void **state) {
    (void)state;
    fx_reset();
    /* matplotlib: viridis(0), viridis(1), magma(0), magma(1), cividis(0), cividis(1) */
    EXPECT_RGB("viridis 0", 0x440154, cmap_seq(CMAP_VIRIDIS, 0.0f));
    EXPECT_RGB("viridis 1", 0xfde725, cmap_seq(CMAP_VIRIDIS, 1.0f));
    EXPECT_RGB("magma 0", 0x000004, cmap_seq(CMAP_MAGMA, 0.0f));
    EXPECT_RGB("magma 1", 0xfcfdbf, cmap_seq(CMAP_MAGMA, 1.0f));
    EXPECT_RGB("cividis 0", 0x00224e, cmap_seq(CMAP_CIVIDIS, 0.0f));
    EXPECT_RGB("cividis 1", 0xfee838, cmap_seq(CMAP_CIVIDIS, 1.0f));
    /* matplotlib Greys: white at 0, black at 1 */
    EXPECT_RGB("greys 0", 0xffffff, cmap_seq(CMAP_GREYS, 0.0f));
    EXPECT_RGB("greys 1", 0x000000, cmap_seq(CMAP_GREYS, 1.0f));
    /* viridis(0.5) is #21918c in matplotlib */
    EXPECT_RGB("viridis 0.5", 0x21918c, cmap_seq(CMAP_VIRIDIS, 0.5f));
    /* the diverging map ends in ColorBrewer RdBu's darkest blue and red */
    EXPECT_RGB("diverging -1", 0x053061, cmap_div(-1.0f));
    EXPECT_RGB("diverging +1", 0x67001f, cmap_div(1.0f));
    fx_finish("endpoints");
}

static void test_clamp_and_nan(void **state) {
    (void)state;
    fx_reset();
    static const float below[] = {-1e-6f, -0.5f, -1.0f, -1e30f, -INFINITY};
    static const float above[] = {1.0f + 1e-6f, 1.5f, 2.0f, 1e30f, INFINITY};
    for (int i = 0; i < CMAP_COUNT; i++) {
        snprintf(fx_where, sizeof fx_where, "%s", cmap_name(i) ? cmap_name(i) : "?");
        rgba lo = cmap_seq(i, 0.0f), hi = cmap_seq(i, 1.0f);
        for (int k = 0; k < 5; k++) {
            char what[64];
            snprintf(what, sizeof what, "t = %g clamps to 0", (double)below[k]);
            EXPECT_SAME(what, lo, cmap_seq(i, below[k]));
            snprintf(what, sizeof what, "t = %g clamps to 1", (double)above[k]);
            EXPECT_SAME(what, hi, cmap_seq(i, above[k]));
        }
        EXPECT_SAME("NaN gives the t = 0 colour", lo, cmap_seq(i, NAN));
        EXPECT_SAME("-NaN gives the t = 0 colour", lo, cmap_seq(i, -NAN));
    }
    snprintf(fx_where, sizeof fx_where, "diverging");
    EXPECT_SAME("t = -2 clamps to -1", cmap_div(-1.0f), cmap_div(-2.0f));
    EXPECT_SAME("t = -inf clamps to -1", cmap_div(-1.0f), cmap_div(-INFINITY));
    EXPECT_SAME("t = 3 clamps to 1", cmap_div(1.0f), cmap_div(3.0f));
    EXPECT_SAME("t = +inf clamps to 1", cmap_div(1.0f), cmap_div(INFINITY));
    /* not stated by the header, but a NaN must not look like an extreme: the 0 colour */
    EXPECT_SAME("NaN gives the 0 colour", cmap_div(0.0f), cmap_div(NAN));
    fx_finish("clamp and NaN");
}

/* Lightness along a sequential map sampled at 256 points: monotonic within
 * TOL_L L* units per step (sRGB interpolation between anchors may wobble a little). */
#define TOL_L 0.5
static void test_monotonic_lightness(void **state) {
    (void)state;
    fx_reset();
    static const struct {
        int map;
        int dir; /* +1 lighter with t, -1 darker */
    } maps[] = {{CMAP_VIRIDIS, +1}, {CMAP_CIVIDIS, +1}, {CMAP_MAGMA, +1}, {CMAP_GREYS, -1}};
    for (int m = 0; m < 4; m++) {
        snprintf(fx_where, sizeof fx_where, "%s", cmap_name(maps[m].map));
        double prev = lstar(cmap_seq(maps[m].map, 0.0f));
        double first = prev;
        for (int i = 1; i < 256; i++) {
            float t = (float)i / 255.0f;
            double l = lstar(cmap_seq(maps[m].map, t));
            EXPECT(maps[m].dir * (l - prev) >= -TOL_L,
                   "t = %.4f: expected L* %s than at the previous sample %.3f (tol %.2f), got %.3f",
                   (double)t, maps[m].dir > 0 ? "no lower" : "no higher", prev, TOL_L, l);
            prev = l;
        }
        EXPECT(maps[m].dir * (prev - first) > 50.0,
               "expected an L* range over 50 from t = 0 (%.1f) to t = 1, got %.1f", first, prev);
    }
    fx_finish("monotonic lightness");
}

/* Diverging map: near-white at 0, L*(-t) within TOL_SYM of L*(t) (RdBu itself
 * differs by up to ~4 L* between its blue and red anchors), darker away from 0. */
#define TOL_SYM 5.0
static void test_diverging(void **state) {
    (void)state;
    fx_reset();
    rgba z = cmap_div(0.0f);
    EXPECT(z.r >= 240 && z.g >= 240 && z.b >= 240,
           "0: expected near-white (every channel >= 240), got #%06x", hex_of(z));
    EXPECT(lstar(z) >= 95.0, "0: expected L* >= 95, got %.2f", lstar(z));
    EXPECT(abs((int)z.r - (int)z.b) <= 8 && abs((int)z.r - (int)z.g) <= 8,
           "0: expected a neutral grey-white, got #%06x", hex_of(z));
    double prev_neg = lstar(z), prev_pos = lstar(z);
    for (int i = 1; i <= 128; i++) {
        float t = (float)i / 128.0f;
        double ln = lstar(cmap_div(-t)), lp = lstar(cmap_div(t));
        snprintf(fx_where, sizeof fx_where, "t = %.4f", (double)t);
        EXPECT(fabs(ln - lp) <= TOL_SYM,
               "expected L*(-t) = %.2f within %.1f of L*(t), got L*(t) = %.2f", ln, TOL_SYM, lp);
        EXPECT(ln <= prev_neg + TOL_L, "negative side: expected L* no higher than %.3f, got %.3f",
               prev_neg, ln);
        EXPECT(lp <= prev_pos + TOL_L, "positive side: expected L* no higher than %.3f, got %.3f",
               prev_pos, lp);
        prev_neg = ln, prev_pos = lp;
        /* blue below zero, red above */
        rgba cn = cmap_div(-t), cp = cmap_div(t);
        EXPECT(cn.b >= cn.r, "negative side: expected blue >= red, got #%06x", hex_of(cn));
        EXPECT(cp.r >= cp.b, "positive side: expected red >= blue, got #%06x", hex_of(cp));
    }
    fx_finish("diverging");
}

/* Greyscale print keeps only lightness. The diverging map gives -t and +t the
 * same lightness (that is its design, checked above), so in grey a value and its
 * negation are the same: greys must not use it. Its signed map is grey (R = G =
 * B), and L* rises strictly and evenly with t (every value its own grey, the sign
 * read as darker or lighter than the middle), from at most 15 to at least 93. */
static void test_signed_greys(void **state) {
    (void)state;
    fx_reset();
    snprintf(fx_where, sizeof fx_where, "diverging map in grey");
    EXPECT(fabs(lstar(cmap_div(-0.8f)) - lstar(cmap_div(0.8f))) < TOL_SYM,
           "premise: expected -0.8 and +0.8 alike in L*, got %.1f and %.1f", lstar(cmap_div(-0.8f)),
           lstar(cmap_div(0.8f)));
    for (int i = 0; i < 4; i++)
        if (i != CMAP_GREYS) {
            snprintf(fx_where, sizeof fx_where, "%s", cmap_name(i));
            EXPECT_SAME("signed map beside a colour map: the diverging map", cmap_div(0.37f),
                        cmap_signed(i, 0.37f));
        }
    snprintf(fx_where, sizeof fx_where, "greys, signed");
    double prev = -1.0;
    for (int i = 0; i <= 200; i++) {
        float tt = (float)i / 100.0f - 1.0f;
        rgba c = cmap_signed(CMAP_GREYS, tt);
        EXPECT(c.r == c.g && c.g == c.b && c.a == 255, "t = %.2f: expected grey, got #%06x",
               (double)tt, hex_of(c));
        double l = lstar(c);
        /* even in L*: 54 + 42 t, within a byte's rounding (0.4 L*) */
        EXPECT(fabs(l - (54.0 + 42.0 * tt)) < 0.5, "t = %.2f: expected L* %.2f, got %.2f",
               (double)tt, 54.0 + 42.0 * tt, l);
        if (i > 0 && i % 4 == 0) /* two values 0.04 apart stay two greys */
            EXPECT(l > prev + 1.0, "t = %.2f: expected L* above %.2f + 1, got %.2f", (double)tt,
                   prev, l);
        if (i % 4 == 0) prev = l;
    }
    EXPECT(lstar(cmap_signed(CMAP_GREYS, -1.0f)) <= 15.0 &&
               lstar(cmap_signed(CMAP_GREYS, 1.0f)) >= 93.0,
           "expected L* from <= 15 to >= 93, got %.1f to %.1f",
           lstar(cmap_signed(CMAP_GREYS, -1.0f)), lstar(cmap_signed(CMAP_GREYS, 1.0f)));
    EXPECT_SAME("NaN is 0", cmap_signed(CMAP_GREYS, 0.0f), cmap_signed(CMAP_GREYS, NAN));
    EXPECT_SAME("clamped below", cmap_signed(CMAP_GREYS, -1.0f), cmap_signed(CMAP_GREYS, -7.0f));
    fx_finish("signed greys");
}

/* CIE Lab of a colour as seen with a colour vision deficiency: linear RGB times
 * a simulation matrix (Machado, Oliveira and Fernandes 2009, severity 1.0). */
static void lab_seen(rgba c, const double m[3][3], double out[3]) {
    double l[3] = {lin(c.r), lin(c.g), lin(c.b)}, s[3];
    for (int i = 0; i < 3; i++) {
        s[i] = m[i][0] * l[0] + m[i][1] * l[1] + m[i][2] * l[2];
        s[i] = s[i] < 0 ? 0 : (s[i] > 1 ? 1 : s[i]);
    }
    double xyz[3] = {0.4124 * s[0] + 0.3576 * s[1] + 0.1805 * s[2],
                     0.2126 * s[0] + 0.7152 * s[1] + 0.0722 * s[2],
                     0.0193 * s[0] + 0.1192 * s[1] + 0.9505 * s[2]};
    const double wn[3] = {0.9505, 1.0, 1.089};
    double f[3];
    for (int i = 0; i < 3; i++) {
        double v = xyz[i] / wn[i];
        f[i] = v > 216.0 / 24389.0 ? cbrt(v) : (24389.0 / 27.0 * v + 16.0) / 116.0;
    }
    out[0] = 116 * f[1] - 16, out[1] = 500 * (f[0] - f[1]), out[2] = 200 * (f[1] - f[2]);
}

static double contrast(rgba a, rgba b) {
    double la = luminance(a), lb = luminance(b);
    return la > lb ? (la + 0.05) / (lb + 0.05) : (lb + 0.05) / (la + 0.05);
}

/* Head colours: the first eight pairwise apart (Lab distance >= 20) for normal
 * vision, deuteranopia and protanopia; neighbours (heads i, i + 1) apart for every
 * h up to 64; each at least 3:1 against its theme's background; and the frames
 * (the theme's grid colour) at least 3:1 against the background too. */
static void test_head_colours(void **state) {
    (void)state;
    fx_reset();
    static const double normal[3][3] = {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
    static const double deut[3][3] = {{0.367322, 0.860646, -0.227968},
                                      {0.280085, 0.672501, 0.047413},
                                      {-0.011820, 0.042940, 0.968881}};
    static const double prot[3][3] = {{0.152286, 1.052583, -0.204868},
                                      {0.114503, 0.786281, 0.099216},
                                      {-0.003882, -0.048116, 1.051998}};
    const double(*sims[3])[3] = {normal, deut, prot};
    static const char *sim_name[3] = {"normal vision", "deuteranopia", "protanopia"};
    for (int theme = 0; theme < 2; theme++) {
        view_theme th = view_theme_get(theme);
        snprintf(fx_where, sizeof fx_where, "%s theme", theme ? "dark" : "light");
        EXPECT(contrast(th.grid, th.bg) >= 3.0,
               "frames: expected >= 3:1 against the background, got %.2f:1",
               contrast(th.grid, th.bg));
        for (int i = 0; i < 64; i++) {
            rgba a = view_head_color(i, theme);
            EXPECT(contrast(a, th.bg) >= 3.0,
                   "head %d #%06x: expected >= 3:1 against the background, got %.2f:1", i + 1,
                   hex_of(a), contrast(a, th.bg));
            for (int s = 0; s < 3; s++)
                for (int j = i + 1; j < 64; j++) {
                    if (!(j < 8 || j == i + 1)) continue;
                    double la[3], lb[3];
                    lab_seen(a, sims[s], la);
                    lab_seen(view_head_color(j, theme), sims[s], lb);
                    double dd =
                        sqrt((la[0] - lb[0]) * (la[0] - lb[0]) + (la[1] - lb[1]) * (la[1] - lb[1]) +
                             (la[2] - lb[2]) * (la[2] - lb[2]));
                    EXPECT(dd >= 20.0, "%s: heads %d and %d: expected Lab distance >= 20, got %.1f",
                           sim_name[s], i + 1, j + 1, dd);
                }
        }
    }
    fx_finish("head colours");
}

static void test_names(void **state) {
    (void)state;
    fx_reset();
    static const char *want[CMAP_COUNT] = {"viridis", "magma", "cividis", "greys"};
    const char *list = cmap_names_list();
    EXPECT(list != NULL, "cmap_names_list: expected a string, got NULL");
    for (int i = 0; i < CMAP_COUNT; i++) {
        snprintf(fx_where, sizeof fx_where, "map %d", i);
        const char *name = cmap_name(i);
        EXPECT(name != NULL && strcmp(name, want[i]) == 0, "cmap_name: expected \"%s\", got \"%s\"",
               want[i], name ? name : "(null)");
        if (name) EXPECT_INT("cmap_find(cmap_name(i))", i, cmap_find(name));
        EXPECT(list && strstr(list, want[i]) != NULL,
               "cmap_names_list \"%s\": expected to contain %s", list ? list : "(null)", want[i]);
    }
    snprintf(fx_where, sizeof fx_where, "lookups");
    EXPECT(cmap_name(-1) == NULL, "cmap_name(-1): expected NULL, got \"%s\"",
           cmap_name(-1) ? cmap_name(-1) : "(null)");
    EXPECT(cmap_name(CMAP_COUNT) == NULL, "cmap_name(CMAP_COUNT): expected NULL, got \"%s\"",
           cmap_name(CMAP_COUNT) ? cmap_name(CMAP_COUNT) : "(null)");
    EXPECT_INT("cmap_find(\"jet\")", -1, cmap_find("jet"));
    EXPECT_INT("cmap_find(\"\")", -1, cmap_find(""));
    EXPECT_INT("cmap_find(\"viridisx\")", -1, cmap_find("viridisx"));
    EXPECT_INT("cmap_find(\"virid\")", -1, cmap_find("virid"));
    fx_finish("names");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_endpoints),
        cmocka_unit_test(test_clamp_and_nan),
        cmocka_unit_test(test_monotonic_lightness),
        cmocka_unit_test(test_diverging),
        cmocka_unit_test(test_signed_greys),
        cmocka_unit_test(test_head_colours),
        cmocka_unit_test(test_names),
    };
    return cmocka_run_group_tests_name("colormap", tests, NULL, NULL);
}
