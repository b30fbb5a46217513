/* gpt2_effect.c: what removing one head does to a loaded model's own output, the
 * next-token distribution (gpt2.h, gpt2_run_effects): the measure "How alike are
 * the heads?" judges a model's heads by. The forwards are tf_infer_update's, from
 * the head's layer on; what the numbers mean on screen is the view's. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gpt2.h"

/* KL(p || q) in bits, q given by its logits (log q = logit - logsumexp, in double:
   a q that underflows to 0 in float is still finite here). */
static double kl_bits(const float *p, const float *logits_q, int vocab) {
    double top = -INFINITY;
    for (int t = 0; t < vocab; t++) top = logits_q[t] > top ? logits_q[t] : top;
    double z = 0.0;
    for (int t = 0; t < vocab; t++) z += exp((double)logits_q[t] - top);
    const double lse = top + log(z);
    double kl = 0.0;
    for (int t = 0; t < vocab; t++)
        if (p[t] > 0.0f) kl += (double)p[t] * (log((double)p[t]) - ((double)logits_q[t] - lse));
    kl /= log(2.0);
    return kl > 0.0 ? kl : 0.0; /* (rounding can leave -1e-9 for equal distributions) */
}

static int argmax(const float *p, int vocab) {
    int best = 0;
    for (int t = 1; t < vocab; t++)
        if (p[t] > p[best]) best = t;
    return best;
}

int gpt2_run_effects(gpt2_run *r, int layer) {
    const tf_config *c = &r->m->tf->cfg;
    if (r->n < 1 || layer < 0 || layer >= c->layers || !r->m->tf->spec.causal)
        return -1; /* no next token */
    const size_t offs = (size_t)c->layers * c->h;
    unsigned char *one = calloc(offs, 1);
    if (!one) return -1;
    /* head i alone removed: the forward from its layer on, against every head on */
    for (int i = 0; i < c->h; i++) {
        memset(one, 0, offs);
        one[(size_t)layer * c->h + i] = 1;
        tf_infer_update(r->inf, r->ids, r->n, one);
        r->e_kl[i] = (float)kl_bits(r->probs_full, r->inf->logits, c->vocab);
        r->e_top[i] = argmax(r->inf->probs, c->vocab);
    }
    /* back to the run's own heads removed: what the view and the panel show */
    tf_infer_update(r->inf, r->ids, r->n, r->any_off ? r->off : NULL);
    free(one);
    r->e_top_full = argmax(r->probs_full, c->vocab);
    r->e_layer = layer;
    return 0;
}
