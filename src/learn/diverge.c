/* diverge.c: the divergence rule of diverge.h, a running mean over a ring of the
 * last WINDOW losses. */
#include "diverge.h"

#include <math.h>
#include <string.h>

void learn_diverge_begin(learn_diverge *d, float start) {
    memset(d, 0, sizeof *d);
    d->start = start > 0.0f && isfinite(start) ? start : 0.0f;
}

float learn_diverge_limit(const learn_diverge *d) {
    return LEARN_DIVERGE_FACTOR * d->start;
}

int learn_diverge_feed(learn_diverge *d, float loss, float *value) {
    if (!isfinite(loss)) {
        if (value) *value = loss;
        return 1;
    }
    if (d->start == 0.0f) d->start = loss > 0.0f ? loss : 0.0f;
    const int slot = (int)(d->steps % LEARN_DIVERGE_WINDOW);
    if (d->steps >= LEARN_DIVERGE_WINDOW) d->sum -= d->ring[slot];
    d->ring[slot] = loss;
    d->sum += loss;
    d->steps++;
    const long n = d->steps < LEARN_DIVERGE_WINDOW ? d->steps : LEARN_DIVERGE_WINDOW;
    const float mean = (float)(d->sum / (double)n);
    if (d->start > 0.0f && mean > learn_diverge_limit(d)) {
        if (value) *value = mean;
        return 1;
    }
    return 0;
}
