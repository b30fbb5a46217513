/* sampler.h: the next token drawn from a model's logits, as --generate and the
 * window's write key do it, in steps a test can replay (tests/generate_check.py):
 *   1. temperature T = 0: the most likely token (the lowest id on a tie), and no
 *      random number is drawn. Otherwise q_i = exp((logit_i - max logit) / T), in
 *      double precision.
 *   2. the ids ordered by q, largest first (the lower id first on a tie);
 *   3. top-k (k > 0): the first k kept;
 *   4. top-p (0 < p < 1): the shortest prefix of those whose sum reaches p times
 *      their sum kept;
 *   5. one random number u = (splitmix64(state) >> 11) * 2^-53 in [0, 1), the
 *      state starting at the seed (splitmix64: state += 0x9E3779B97F4A7C15, then
 *      the mix of Steele, Lea and Flood 2014, as src/learn/rng.h); the token is
 *      the first kept whose running sum of q exceeds u times the kept sum (the
 *      last kept when rounding leaves none).
 * No SDL, no files. */
#ifndef MHAVIZ_SAMPLER_H
#define MHAVIZ_SAMPLER_H

#include <stdint.h>

typedef struct {
    float temperature; /* on the logits; 0: the most likely token */
    int top_k;         /* 0: every token */
    float top_p;       /* 0 or 1: every token kept by top-k */
} sampler_opts;

typedef struct {
    double q; /* exp((logit - max) / T) */
    int id;
} sampler_entry;

typedef struct {
    int vocab;
    sampler_entry *e; /* (vocab): the ids, most likely first once sorted */
} sampler;

/* 0, or -1 on out of memory. */
int sampler_init(sampler *s, int vocab);
void sampler_free(sampler *s); /* a zeroed sampler is fine */

/* The token drawn from logits (vocab floats) with o and the random state *rng
 * (advanced by one draw unless the temperature is 0). *p_sample: the token's
 * probability in the distribution it was drawn from (after temperature, top-k,
 * top-p); *u: the random number drawn (-1 when none). */
int sampler_pick(sampler *s, const float *logits, const sampler_opts *o, uint64_t *rng,
                 double *p_sample, double *u);

#endif
