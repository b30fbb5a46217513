/* init.c: deterministic weights (Glorot/Xavier uniform) and token embeddings
 * (N(0,1) from a hash of the token text), plus the sinusoidal positional encoding.
 * Uses only integer hashing and double arithmetic, so values are the same on every
 * machine; knows nothing of the forward pass. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "mha.h"

/* splitmix64: a tiny, well-mixed 64-bit generator (Steele, Lea, Flood 2014). */
static uint64_t splitmix64(uint64_t *state) {
    uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* uniform double in [0, 1) with 53 random bits */
static double uniform01(uint64_t *state) {
    return (double)(splitmix64(state) >> 11) * (1.0 / 9007199254740992.0);
}

static uint64_t fnv1a64(const char *s) {
    uint64_t h = 0xCBF29CE484222325ull;
    for (; *s; s++) {
        h ^= (unsigned char)*s;
        h *= 0x100000001B3ull;
    }
    return h;
}

static uint64_t stream_seed(uint64_t seed, uint64_t a, uint64_t b) {
    uint64_t st = seed;
    uint64_t z = splitmix64(&st) ^ (a * 0xD6E8FEB86659FD93ull);
    st = z;
    z = splitmix64(&st) ^ (b * 0xA0761D6478BD642Full);
    st = z;
    return splitmix64(&st);
}

void mha_weights_init(float *w, uint64_t seed, int d, int which) {
    MHA_EXPECT(d > 0 && which >= 0 && which < 4);
    uint64_t st = stream_seed(seed, (uint64_t)d, 0x5745494748540000ull + (uint64_t)which);
    double limit = sqrt(6.0 / (double)(d + d)); /* fan_in = fan_out = d_model */
    size_t count = (size_t)d * (size_t)d;
    for (size_t i = 0; i < count; i++) w[i] = (float)((2.0 * uniform01(&st) - 1.0) * limit);
}

uint64_t mha_token_key(const char *token) {
    return fnv1a64(token);
}

void mha_embed_token(float *e, const char *token, uint64_t seed, int d) {
    MHA_EXPECT(d > 0 && token != NULL);
    uint64_t st = stream_seed(seed, (uint64_t)d, fnv1a64(token));
    /* Box-Muller, two normals per pair of uniforms */
    for (int i = 0; i < d; i += 2) {
        double u1 = uniform01(&st), u2 = uniform01(&st);
        double r = sqrt(-2.0 * log(1.0 - u1)); /* 1 - u1 is in (0, 1] */
        double t = 6.283185307179586 * u2;     /* 2 pi */
        e[i] = (float)(r * cos(t));
        if (i + 1 < d) e[i + 1] = (float)(r * sin(t));
    }
}

void mha_add_positional(float *e, int pos, int d) {
    for (int i = 0; i < d; i += 2) {
        double freq = pow(10000.0, -(double)i / (double)d);
        e[i] += (float)sin(pos * freq);
        if (i + 1 < d) e[i + 1] += (float)cos(pos * freq);
    }
}
