/* sampler.c: the next token drawn from logits, step by step as sampler.h says. */
#include "sampler.h"

#include <math.h>
#include <stdlib.h>

int sampler_init(sampler *s, int vocab) {
    s->vocab = vocab;
    s->e = malloc((size_t)vocab * sizeof *s->e);
    return s->e ? 0 : -1;
}

void sampler_free(sampler *s) {
    free(s->e);
    s->e = NULL;
}

static uint64_t splitmix64(uint64_t *state) {
    uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* qsort's order: q largest first, the lower id first on a tie */
static int by_q(const void *a, const void *b) {
    const sampler_entry *x = a, *y = b;
    if (x->q != y->q) return x->q > y->q ? -1 : 1;
    return (x->id > y->id) - (x->id < y->id);
}

int sampler_pick(sampler *s, const float *logits, const sampler_opts *o, uint64_t *rng,
                 double *p_sample, double *u) {
    const int v = s->vocab;
    int best = 0;
    for (int i = 1; i < v; i++)
        if (logits[i] > logits[best]) best = i;
    *u = -1.0;
    *p_sample = 1.0;
    if (!(o->temperature > 0.0f)) return best; /* step 1: the most likely */
    const double t = o->temperature, top = logits[best];
    for (int i = 0; i < v; i++) s->e[i] = (sampler_entry){exp(((double)logits[i] - top) / t), i};
    qsort(s->e, (size_t)v, sizeof *s->e, by_q);             /* step 2 */
    int kept = o->top_k > 0 && o->top_k < v ? o->top_k : v; /* step 3 */
    double sum = 0.0;
    for (int i = 0; i < kept; i++) sum += s->e[i].q;
    if (o->top_p > 0.0f && o->top_p < 1.0f) { /* step 4 */
        const double want = (double)o->top_p * sum;
        double run = 0.0;
        int k = 0;
        while (k < kept && run < want) run += s->e[k++].q;
        kept = k;
        sum = run;
    }
    *u = (double)(splitmix64(rng) >> 11) * (1.0 / 9007199254740992.0); /* step 5 */
    const double target = *u * sum;
    double run = 0.0;
    int pick = kept - 1;
    for (int k = 0; k < kept; k++) {
        run += s->e[k].q;
        if (run > target) {
            pick = k;
            break;
        }
    }
    *p_sample = s->e[pick].q / sum;
    return s->e[pick].id;
}
