/* state_fixture.h: the app_state the state tests start from, as `mhaviz` makes it
 * from its options: app_state_create with the fake measurer (view_fixture.h), then
 * app_state_init on the options' text (o->text, else sample o->sample, 1-based, 0 the
 * first) split into tokens, with the built-in model at h heads and d_model d (seed 1).
 * A test sets the options it is about and adds its own steps after. Include it after
 * <cmocka.h>. */
#ifndef MHAVIZ_TEST_STATE_FIXTURE_H
#define MHAVIZ_TEST_STATE_FIXTURE_H

#include <stddef.h>
#include <string.h>

#include "check.h"
#include "samples.h"
#include "state.h"
#include "view_fixture.h"

/* The options of a plain `mhaviz` run: zero, theme and colormap -1 (their defaults). */
static inline cli_options fx_options(void) {
    cli_options o;
    memset(&o, 0, sizeof o);
    o.theme = -1;
    o.colormap = -1;
    return o;
}

/* The state made from o with the built-in model at h and d. rc NULL: a failed init
 * fails the test with its message; else *rc is app_state_init's status and err
 * (errlen bytes) its message. On success the state has taken the tokens whole. */
static inline app_state *fx_app_state(const cli_options *o, int h, int d, int *rc, char *err,
                                      size_t errlen) {
    app_state *s = app_state_create(fx_measure, NULL);
    assert_non_null(s);
    char own[512];
    if (!err) err = own, errlen = sizeof own;
    const char *text = o->text ? o->text : samples_get((o->sample ? o->sample : 1) - 1)->text;
    tok_list toks = {0};
    assert_int_equal(tok_split(&toks, text, MHA_MAX_N, NULL, err, errlen), 0);
    const mha_config cfg = {.h = h, .d_model = d, .seed = 1};
    const int status = app_state_init(s, o, &toks, &cfg, err, errlen);
    if (status == 0) CHECK_INT("init leaves the caller's tokens empty", 0, toks.count);
    tok_free(&toks);
    if (rc)
        *rc = status;
    else if (status != 0)
        fail_msg("init: %s", err);
    return s;
}

#endif
