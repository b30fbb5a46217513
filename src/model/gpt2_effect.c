/* gpt2_effect.c: what removing one head does to a loaded model's own output, the
 * next-token distribution, or an encoder's first blank (gpt2.h, gpt2_run_effects):
 * the measure "How alike are the heads?" judges a model's heads by. The forwards are
 * tf_infer_update's, from the head's layer on, and the blank's the masked-LM head's
 * (fill.h); what the numbers mean on screen is the view's. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gpt2.h"

/* log sum_t exp(logits[t]), in double, from the largest logit. */
static double log_sum_exp(const float *logits, int vocab) {
    double top = -INFINITY;
    for (int t = 0; t < vocab; t++) top = logits[t] > top ? logits[t] : top;
    double z = 0.0;
    for (int t = 0; t < vocab; t++) z += exp((double)logits[t] - top);
    return top + log(z);
}

/* KL(p || q) in bits, q given by its logits (log q = logit - logsumexp, in double:
   a q that underflows to 0 in float is still finite here). */
static double kl_bits(const float *p, const float *logits_q, int vocab) {
    const double lse = log_sum_exp(logits_q, vocab);
    double kl = 0.0;
    for (int t = 0; t < vocab; t++)
        if (p[t] > 0.0f) kl += (double)p[t] * (log((double)p[t]) - ((double)logits_q[t] - lse));
    kl /= log(2.0);
    return kl > 0.0 ? kl : 0.0; /* (rounding can leave -1e-9 for equal distributions) */
}

/* The same, p given by its log-probabilities (an encoder's blank, every head on). */
static double kl_bits_lp(const float *lp, const float *logits_q, int vocab) {
    const double lse = log_sum_exp(logits_q, vocab);
    double kl = 0.0;
    for (int t = 0; t < vocab; t++) {
        const double p = exp((double)lp[t]);
        if (p > 0.0) kl += p * ((double)lp[t] - ((double)logits_q[t] - lse));
    }
    kl /= log(2.0);
    return kl > 0.0 ? kl : 0.0;
}

static int argmax(const float *p, int vocab) {
    int best = 0;
    for (int t = 1; t < vocab; t++)
        if (p[t] > p[best]) best = t;
    return best;
}

int gpt2_run_fills(const gpt2_run *r) { /* here, not in gpt2.c: gpt2.c calls this file */
    if (!r->fill) return 0;
    const int m = r->n_mask < GPT2_FILL_MAX ? r->n_mask : GPT2_FILL_MAX;
    return m < r->fill->cap ? m : r->fill->cap;
}

int gpt2_run_measurable(const gpt2_run *r) {
    return r->n >= 1 && (r->m->tf->spec.causal || gpt2_run_fills(r) >= 1);
}

int gpt2_run_effects(gpt2_run *r, int layer) {
    const tf_config *c = &r->m->tf->cfg;
    if (!gpt2_run_measurable(r) || layer < 0 || layer >= c->layers)
        return -1;                            /* no next token, no blank */
    const int blank = !r->m->tf->spec.causal; /* an encoder: its first blank */
    const size_t offs = (size_t)c->layers * c->h;
    unsigned char *one = calloc(offs, 1);
    if (!one) return -1;
    /* head i alone removed: the forward from its layer on, against every head on */
    for (int i = 0; i < c->h; i++) {
        memset(one, 0, offs);
        one[(size_t)layer * c->h + i] = 1;
        tf_infer_update(r->inf, r->ids, r->n, one);
        if (blank) { /* the masked-LM head on the first blank: its logits, its top token */
            float p;
            tf_fill_run(r->fill, r->inf, r->mask_pos, 1, 1, &r->e_top[i], &p);
            r->e_kl[i] = (float)kl_bits_lp(r->fill_lp_full, r->fill->logits, c->vocab);
        } else {
            r->e_kl[i] = (float)kl_bits(r->probs_full, r->inf->logits, c->vocab);
            r->e_top[i] = argmax(r->inf->probs, c->vocab);
        }
    }
    /* back to the run's own heads removed: what the view and the panel show (an
       encoder's blanks filled again, so that their logits are the run's) */
    tf_infer_update(r->inf, r->ids, r->n, r->any_off ? r->off : NULL);
    free(one);
    if (blank) {
        tf_fill_run(r->fill, r->inf, r->mask_pos, gpt2_run_fills(r), GPT2_TOP, &r->fill_ids[0][0],
                    &r->fill_p[0][0]);
        r->e_top_full = argmax(r->fill_lp_full, c->vocab); /* row 0: the first blank's */
    } else {
        r->e_top_full = argmax(r->probs_full, c->vocab);
    }
    r->e_layer = layer;
    return 0;
}
