/* shown_numbers.h: a layer's own numbers as the view shows them (entropy, how alike
 * and its baseline, what heads pass on), read from app_view, and the check that the
 * view claims none while they are computed; for the tests of the numbers job
 * (test_state_numbers, test_numbers_builtin). Include after cmocka.h and check.h. */
#ifndef MHAVIZ_TEST_SHOWN_NUMBERS_H
#define MHAVIZ_TEST_SHOWN_NUMBERS_H

#include <string.h>

#include "state.h"

#define SHOWN_MAX_H 16

typedef struct {
    int layer, n, has;
    float entropy[SHOWN_MAX_H], divergence[SHOWN_MAX_H * SHOWN_MAX_H], base[2],
        cos[SHOWN_MAX_H * SHOWN_MAX_H], change[SHOWN_MAX_H];
} shown_numbers;

/* The numbers of the layer the view shows, which must have h heads (h <= SHOWN_MAX_H);
   z->has 0 when the view shows none. Unused entries are 0, so two can be memcmp'd. */
static void numbers_of(const app_state *s, shown_numbers *z, int h) {
    view_state vs;
    app_view(s, &vs);
    assert_non_null(vs.layer);
    CHECK_INT("the layer's heads", h, vs.layer->h);
    assert_true(h <= SHOWN_MAX_H);
    memset(z, 0, sizeof *z);
    z->layer = vs.layer->layer;
    z->n = vs.layer->n;
    z->has = vs.head_entropy != NULL;
    if (!z->has) return;
    assert_non_null(vs.head_divergence);
    assert_non_null(vs.head_pass_cos);
    assert_non_null(vs.head_change);
    memcpy(z->entropy, vs.head_entropy, (size_t)h * sizeof *z->entropy);
    memcpy(z->divergence, vs.head_divergence, (size_t)h * h * sizeof *z->divergence);
    memcpy(z->cos, vs.head_pass_cos, (size_t)h * h * sizeof *z->cos);
    memcpy(z->change, vs.head_change, (size_t)h * sizeof *z->change);
    z->base[0] = vs.alike_base_lo;
    z->base[1] = vs.alike_base_hi;
}

/* Nothing claimed while they are computed, and the view says so. */
static void check_pending(const char *where, const app_state *s) {
    view_state vs;
    app_view(s, &vs);
    if (vs.head_entropy || vs.head_divergence || vs.head_pass_cos || vs.head_change ||
        vs.alike_base_hi != 0.0f)
        fail_msg("%s: numbers claimed before they are computed", where);
    if (!vs.numbers_pending) fail_msg("%s: the view does not say they are computed", where);
}

#endif
