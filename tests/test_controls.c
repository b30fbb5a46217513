/* test_controls.c: the live h and d_model steps. controls_step_h must walk exactly
 * the divisors of d (computed here by trial division) in both directions and say
 * why at the ends; controls_step_d must move strictly along the ladder to values
 * h divides, and say why when there is none. A seeded random walk of 2000 mixed
 * steps must never leave 1 <= h <= d <= 4096 with h dividing d. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "controls.h"
#include "view_fixture.h"

/* divisors of d in increasing order, by trial division */
static int divisors(int d, int *out) {
    int c = 0;
    for (int k = 1; k <= d; k++)
        if (d % k == 0) out[c++] = k;
    return c;
}

/* d values: the whole ladder, and some that are not on it (custom --d-model) */
static int test_ds(int *out) {
    int c = 0;
    for (int i = 0; i < controls_ladder_count(); i++) out[c++] = controls_ladder_value(i);
    static const int extra[] = {1, 2, 7, 60, 97, 100, 360, 1000, 2310, 3840, 4095};
    for (int i = 0; i < (int)(sizeof extra / sizeof extra[0]); i++) out[c++] = extra[i];
    return c;
}

static void test_ladder(void **state) {
    (void)state;
    fx_reset();
    int n = controls_ladder_count();
    EXPECT(n >= 2, "ladder: expected at least 2 values, got %d", n);
    EXPECT_INT("ladder[0]", 8, controls_ladder_value(0));
    EXPECT_INT("ladder[last] = MHA_MAX_D_MODEL", MHA_MAX_D_MODEL, controls_ladder_value(n - 1));
    for (int i = 1; i < n; i++)
        EXPECT(controls_ladder_value(i) > controls_ladder_value(i - 1),
               "ladder: expected strictly increasing, got [%d] = %d after %d", i,
               controls_ladder_value(i), controls_ladder_value(i - 1));
    EXPECT_INT("ladder value out of range (-1)", 0, controls_ladder_value(-1));
    EXPECT_INT("ladder value out of range (count)", 0, controls_ladder_value(n));
    fx_finish("ladder");
}

static void test_step_h_walks_divisors(void **state) {
    (void)state;
    fx_reset();
    int ds[64], divs[4096];
    int nd = test_ds(ds);
    for (int t = 0; t < nd; t++) {
        const int d = ds[t];
        const int nv = divisors(d, divs);
        snprintf(fx_where, sizeof fx_where, "d = %d", d);
        /* up from 1 */
        int h = 1;
        for (int i = 1; i < nv; i++) {
            char why[256] = "";
            int next = controls_step_h(h, d, +1, why, sizeof why);
            EXPECT(next == divs[i], "step up from h = %d: expected the next divisor %d, got %d", h,
                   divs[i], next);
            h = divs[i];
        }
        char why[256] = "";
        int end = controls_step_h(d, d, +1, why, sizeof why);
        EXPECT_INT("step up from h = d returns 0", 0, end);
        EXPECT(why[0] != '\0', "step up from h = d = %d: expected a non-empty message, got \"\"",
               d);
        /* down from d */
        h = d;
        for (int i = nv - 2; i >= 0; i--) {
            char w2[256] = "";
            int next = controls_step_h(h, d, -1, w2, sizeof w2);
            EXPECT(next == divs[i],
                   "step down from h = %d: expected the previous divisor %d, got %d", h, divs[i],
                   next);
            h = divs[i];
        }
        why[0] = '\0';
        end = controls_step_h(1, d, -1, why, sizeof why);
        EXPECT_INT("step down from h = 1 returns 0", 0, end);
        EXPECT(why[0] != '\0',
               "step down from h = 1 (d = %d): expected a non-empty message, got \"\"", d);
    }
    fx_finish("step h");
}

static void test_step_d_ladder(void **state) {
    (void)state;
    fx_reset();
    const int nl = controls_ladder_count();
    int ds[64];
    int nd = test_ds(ds);
    int hs[128], nh = 0;
    for (int h = 1; h <= 64; h++) hs[nh++] = h;
    static const int big_h[] = {96, 97, 100, 128, 192, 256, 360, 512, 1024, 2048, 3072, 3840, 4096};
    for (int i = 0; i < (int)(sizeof big_h / sizeof big_h[0]); i++) hs[nh++] = big_h[i];
    for (int hi = 0; hi < nh; hi++) {
        const int h = hs[hi];
        for (int t = 0; t < nd; t++) {
            const int d = ds[t];
            if (d % h != 0) continue; /* only valid states */
            snprintf(fx_where, sizeof fx_where, "h = %d, d = %d", h, d);
            for (int dir = -1; dir <= 1; dir += 2) {
                /* expected: nearest ladder value beyond d in that direction that h divides */
                int want = 0;
                if (dir > 0) {
                    for (int i = 0; i < nl && !want; i++)
                        if (controls_ladder_value(i) > d && controls_ladder_value(i) % h == 0)
                            want = controls_ladder_value(i);
                } else {
                    for (int i = nl - 1; i >= 0 && !want; i--)
                        if (controls_ladder_value(i) < d && controls_ladder_value(i) % h == 0)
                            want = controls_ladder_value(i);
                }
                char why[256] = "";
                int got = controls_step_d(h, d, dir, why, sizeof why);
                EXPECT(got == want, "step d %s: expected %d, got %d", dir > 0 ? "up" : "down", want,
                       got);
                if (got) {
                    int on = 0;
                    for (int i = 0; i < nl; i++) on |= controls_ladder_value(i) == got;
                    EXPECT(on, "step d %s: expected a ladder value, got %d",
                           dir > 0 ? "up" : "down", got);
                    EXPECT(got % h == 0, "step d %s: expected a multiple of h = %d, got %d",
                           dir > 0 ? "up" : "down", h, got);
                    EXPECT(dir > 0 ? got > d
                           : got<d, "step d %s from %d: expected strictly %s, got %d", dir> 0
                               ? "up"
                               : "down",
                           d, dir > 0 ? "larger" : "smaller", got);
                } else {
                    EXPECT(why[0] != '\0',
                           "step d %s returned 0: expected a non-empty message, got \"\"",
                           dir > 0 ? "up" : "down");
                    /* at the top of the ladder the reason is the top, not h (issue 20) */
                    const int top = controls_ladder_value(nl - 1);
                    if (dir > 0)
                        EXPECT((d >= top) == (strstr(why, "is the largest") != NULL),
                               "step d up from %d (h %d): expected %s, got \"%s\"", d, h,
                               d >= top ? "'is the largest'" : "the h reason", why);
                }
            }
        }
    }
    /* walking d up then down with a fixed h visits the same values */
    for (int h = 1; h <= 64; h++) {
        snprintf(fx_where, sizeof fx_where, "walk with h = %d", h);
        int d = 0;
        for (int i = 0; i < nl && !d; i++)
            if (controls_ladder_value(i) % h == 0) d = controls_ladder_value(i);
        if (!d) continue;
        int up[64], nu = 0;
        up[nu++] = d;
        char why[256];
        for (int next; (next = controls_step_d(h, d, +1, why, sizeof why)) != 0 && nu < 64;) {
            EXPECT(next > d, "walk up: expected strictly increasing, got %d after %d", next, d);
            d = next;
            up[nu++] = d;
        }
        int top = 0;
        for (int i = 0; i < nl; i++)
            if (controls_ladder_value(i) % h == 0) top = controls_ladder_value(i);
        EXPECT_INT("walk up ends at the largest ladder value h divides", top, up[nu - 1]);
        for (int i = nu - 2; i >= 0; i--) {
            int next = controls_step_d(h, d, -1, why, sizeof why);
            EXPECT(next == up[i],
                   "walk down: expected %d (the value before %d on the way up), got %d", up[i], d,
                   next);
            d = next ? next : up[i];
        }
        EXPECT_INT("walk down past the smallest returns 0", 0,
                   controls_step_d(h, d, -1, why, sizeof why));
    }
    fx_finish("step d");
}

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static uint32_t rng(void) {
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (uint32_t)(rng_state >> 32);
}

static void test_random_walk(void **state) {
    (void)state;
    fx_reset();
    static const int starts[][2] = {{4, 64}, {1, 8}, {5, 100}, {64, 4096}, {1, 1}, {3, 3840}};
    for (int st = 0; st < (int)(sizeof starts / sizeof starts[0]); st++) {
        int h = starts[st][0], d = starts[st][1];
        rng_state = 0x9E3779B97F4A7C15ull + (uint64_t)st;
        for (int step = 0; step < 2000; step++) {
            int op = (int)(rng() % 4);
            char why[256] = "";
            int ph = h, pd = d, got;
            if (op < 2) {
                got = controls_step_h(h, d, op == 0 ? +1 : -1, why, sizeof why);
                if (got) h = got;
            } else {
                got = controls_step_d(h, d, op == 2 ? +1 : -1, why, sizeof why);
                if (got) d = got;
            }
            snprintf(fx_where, sizeof fx_where,
                     "start (h %d, d %d), step %d: %s %s from (h %d, d %d)", starts[st][0],
                     starts[st][1], step, op < 2 ? "h" : "d", op % 2 ? "down" : "up", ph, pd);
            if (!got)
                EXPECT(why[0] != '\0', "step refused: expected a non-empty message, got \"\"");
            EXPECT(h >= 1 && h <= d && d <= MHA_MAX_D_MODEL && d % h == 0,
                   "expected 1 <= h <= d <= %d and h | d, got h = %d, d = %d", MHA_MAX_D_MODEL, h,
                   d);
        }
    }
    fx_finish("random walk");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ladder),
        cmocka_unit_test(test_step_h_walks_divisors),
        cmocka_unit_test(test_step_d_ladder),
        cmocka_unit_test(test_random_walk),
    };
    return cmocka_run_group_tests_name("controls", tests, NULL, NULL);
}
