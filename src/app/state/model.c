/* model.c: recomputing the state's model through the core when the
 * configuration or the text changes: padding that follows the text, the
 * timing, the derived numbers, and the estimate of a recompute's cost that
 * records a large one as a request (request.c) once a jobs layer is attached. On
 * failure nothing changes and the status says why. Below state.c and lesson.c,
 * which both call it. */
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

unsigned long app_forward_key(const mha_config *cfg, int n) {
    unsigned long k = 1469598103UL;
    const long parts[] = {n,         cfg->d_model,  cfg->h,
                          cfg->mask, cfg->no_scale, mha_config_ablated_count(cfg) > 0};
    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++)
        k = (k ^ (unsigned long)parts[i]) * 1099511628211UL;
    return k ? k : 1;
}

int app_pad_length(int n) {
    int extra = n / 4 < 2 ? 2 : n / 4;
    return n + extra > MHA_MAX_N ? MHA_MAX_N : n + extra;
}

/* About how long recomputing s->m for cfg (resolved) and toks takes, in ms,
 * from what the core keeps (mha.h) and what it must do again: new weights are
 * 4 d^2 random draws (about 3 ns each here, with the memory's first touch);
 * the rows of Q, K, V from the first changed token on (all of them with new
 * weights) 6 n d^2 FLOPs; the attention 4 n^2 d and the product by W^O 2 n d^2
 * (twice with heads off) at about 50 GFLOP/s; the h n^2 scores and weights
 * about 3 ns an entry. Measured here: an h step at (n 7, d_model 4096) 11 ms
 * (estimate 5), a d_model step to 4096 216 ms (220), an h step at (512, 1024)
 * 55 ms (56), at (512, 512) 21 ms (29). */
static double cost_ms(const app_state *s, const mha_config *cfg, const tok_list *toks) {
    const mha_config *was = &s->m->cfg;
    const int n = cfg->pad ? cfg->pad : toks->count;
    const int new_weights = was->d_model != cfg->d_model || was->seed != cfg->seed ||
                            was->weights != cfg->weights ||
                            (cfg->weights == MHA_WEIGHTS_PATTERNS && was->h != cfg->h);
    int first = 0; /* the first row whose token changed */
    if (!new_weights) {
        const int same = toks->count < s->toks.count ? toks->count : s->toks.count;
        while (first < same && strcmp(toks->tokens[first], s->toks.tokens[first]) == 0) first++;
        if (first == toks->count && s->m->n == n) first = n; /* the same text */
    }
    return app_cost_ms(cfg, n, first, new_weights);
}

double app_cost_ms(const mha_config *cfg, int n_in, int first, int new_weights) {
    const double d = cfg->d_model, h = cfg->h, n = n_in;
    const double flops = 6.0 * (n - first) * d * d + 4.0 * n * n * d +
                         2.0 * n * d * d * (mha_config_ablated_count(cfg) ? 2.0 : 1.0);
    const double draws = new_weights ? 4.0 * d * d : 0.0;
    return draws * 3e-6 + flops / 50e6 + h * n * n * 3e-6;
}

/* Recomputes the model for cfg and toks. On success the state takes toks (when
 * they are not its own already); on failure nothing changes and status says why. */
int app_recompute(app_state *s, const mha_config *cfg_in, tok_list *toks) {
    char err[MHA_ERR_LEN];
    mha_config cfg_pad = *cfg_in, *cfg = &cfg_pad;
    if (cfg->pad && cfg->pad < toks->count) /* the text outgrew the padding: pad it anew */
        cfg->pad = app_pad_length(toks->count);
    if (s->req.attached) { /* a large recompute, or any while one runs: in the background */
        mha_config_resolve(cfg);
        if (mha_config_check(cfg, toks->count, err, sizeof err) != 0) {
            snprintf(s->status, sizeof s->status, "%s", err); /* refused up front */
            return -1;
        }
        if (app_request_busy(s) || cost_ms(s, cfg, toks) > s->req.threshold_ms)
            return app_request_ask(s, cfg, toks);
    }
    double t0 = clock_ms();
    if (mha_model_compute(s->m, cfg, toks, err, sizeof err) != 0) {
        snprintf(s->status, sizeof s->status, "%s", err); /* the model is left as it was */
        return -1;
    }
    s->compute_ms = clock_ms() - t0;
    s->req.recomputes++;
    s->cfg = s->m->cfg;
    if (toks != &s->toks) {
        tok_free(&s->toks);
        s->toks = *toks;
        memset(toks, 0, sizeof *toks);
    }
    s->data_version++;
    if (s->look.focus > s->cfg.h) s->look.focus = 0;
    app_derive_after(s);
    return 0;
}

void app_change_cfg(app_state *s, mha_config next) {
    s->status[0] = '\0';
    if (app_recompute(s, &next, app_request_want(s)) == 0)
        s->look.page = 0; /* the text asked for */
}
