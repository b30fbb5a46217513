/* rng.h: the learner's random numbers: splitmix64 (Steele, Lea, Flood 2014), a
 * uniform integer below n and N(0, 1) by Box-Muller. The state is the caller's
 * uint64_t, so two learners never share a stream. Private to src/learn. */
#ifndef MHAVIZ_LEARN_RNG_H
#define MHAVIZ_LEARN_RNG_H

#include <math.h>
#include <stdint.h>

static inline uint64_t rng_next(uint64_t *state) {
    uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* uniform double in [0, 1) with 53 random bits */
static inline double rng_uniform(uint64_t *state) {
    return (double)(rng_next(state) >> 11) * (1.0 / 9007199254740992.0);
}

/* uniform integer in [0, n), n >= 1 (the modulo bias is below 2^-50 for our n) */
static inline int rng_below(uint64_t *state, int n) {
    return (int)(rng_next(state) % (uint64_t)n);
}

/* N(0, 1): one Box-Muller draw from two uniforms */
static inline double rng_normal(uint64_t *state) {
    double u1 = rng_uniform(state), u2 = rng_uniform(state);
    return sqrt(-2.0 * log(1.0 - u1)) * cos(6.283185307179586 * u2); /* 1 - u1 in (0, 1] */
}

/* A stream seed made from a user seed and a stream number, so the weights, the
 * training batches and the held-out set never share a stream. */
static inline uint64_t rng_stream(uint64_t seed, uint64_t stream) {
    uint64_t st = seed ^ (stream * 0xD6E8FEB86659FD93ull);
    rng_next(&st);
    return rng_next(&st);
}

#endif
