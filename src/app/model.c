/* model.c: recomputing the state's model through the core when the
 * configuration or the text changes: padding that follows the text, the
 * timing, the derived numbers. On failure nothing changes and the status says
 * why. Below state.c and lesson.c, which both call it. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "state_internal.h"

static double clock_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1000.0 + (double)ts.tv_nsec / 1e6;
}

int app_pad_length(int n) {
    int extra = n / 4 < 2 ? 2 : n / 4;
    return n + extra > MHA_MAX_N ? MHA_MAX_N : n + extra;
}

/* Recomputes the model for cfg and toks. On success the state takes toks (when
 * they are not its own already); on failure nothing changes and status says why. */
int app_recompute(app_state *s, const mha_config *cfg_in, tok_list *toks) {
    char err[MHA_ERR_LEN];
    mha_config cfg_pad = *cfg_in, *cfg = &cfg_pad;
    if (cfg->pad && cfg->pad < toks->count) /* the text outgrew the padding: pad it anew */
        cfg->pad = app_pad_length(toks->count);
    double t0 = clock_ms();
    if (mha_model_compute(s->m, cfg, toks, err, sizeof err) != 0) {
        snprintf(s->status, sizeof s->status, "%s", err); /* the model is left as it was */
        return -1;
    }
    s->compute_ms = clock_ms() - t0;
    s->cfg = s->m->cfg;
    if (toks != &s->toks) {
        tok_free(&s->toks);
        s->toks = *toks;
        memset(toks, 0, sizeof *toks);
    }
    s->data_version++;
    if (s->focus > s->cfg.h) s->focus = 0;
    app_derive(s);
    return 0;
}

void app_change_cfg(app_state *s, mha_config next) {
    s->status[0] = '\0';
    if (app_recompute(s, &next, &s->toks) == 0) s->page = 0;
}
