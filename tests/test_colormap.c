/* test_colormap.c: the colormaps against matplotlib's published endpoint colours,
 * clamping and NaN, lightness (CIE L* from relative luminance, computed here)
 * monotonic for the sequential maps, the diverging map near-white at 0 and
 * symmetric in lightness, and the name lookups. */
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
        cmocka_unit_test(test_names),
    };
    return cmocka_run_group_tests_name("colormap", tests, NULL, NULL);
}
