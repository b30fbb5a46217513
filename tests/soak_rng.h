/* soak_rng.h: the seeded random stream the soak drivers share (splitmix64), so a
 * seed names the same run of actions in every driver. One stream per program. */
#ifndef MHAVIZ_TEST_SOAK_RNG_H
#define MHAVIZ_TEST_SOAK_RNG_H

#include <stdint.h>

static uint64_t rng_state;

static inline uint64_t rnd(void) { /* splitmix64 */
    uint64_t z = (rng_state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* Uniform in [0, n), n > 0. */
static inline int rnd_below(int n) {
    return (int)(rnd() % (uint64_t)n);
}

#endif
