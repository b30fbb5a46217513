/* controls.c: h and d_model stepping for the live controls (see controls.h).
 * h always divides d_model after any step, so no state can become invalid. */
#include "controls.h"

#include <stdio.h>

static const int ladder[] = {8,   16,  24,  32,  48,   64,   96,   128,  192,
                             256, 384, 512, 768, 1024, 1536, 2048, 3072, 4096};

int controls_ladder_count(void) {
    return (int)(sizeof ladder / sizeof ladder[0]);
}

int controls_ladder_value(int i) {
    return i >= 0 && i < controls_ladder_count() ? ladder[i] : 0;
}

int controls_step_h(int h, int d, int dir, char *why, size_t len) {
    if (dir > 0) {
        for (int k = h + 1; k <= d; k++)
            if (d % k == 0) return k;
        snprintf(why, len, "h = %d is the most heads d_model = %d allows (d_k = 1)", h, d);
    } else {
        for (int k = h - 1; k >= 1; k--)
            if (d % k == 0) return k;
        snprintf(why, len, "h = 1 is the fewest heads");
    }
    return 0;
}

int controls_step_d(int h, int d, int dir, char *why, size_t len) {
    int count = controls_ladder_count();
    if (dir > 0) {
        for (int i = 0; i < count; i++)
            if (ladder[i] > d && ladder[i] % h == 0) return ladder[i];
        if (d >= ladder[count - 1]) /* the top of the ladder: nothing to do with h */
            snprintf(why, len, "d_model = %d is the largest this app computes", ladder[count - 1]);
        else
            snprintf(why, len, "no larger d_model (up to %d) is divisible by h = %d",
                     ladder[count - 1], h);
    } else {
        for (int i = count - 1; i >= 0; i--)
            if (ladder[i] < d && ladder[i] % h == 0 && ladder[i] >= h) return ladder[i];
        snprintf(why, len, "no smaller d_model on the ladder is divisible by h = %d; lower h first",
                 h);
    }
    return 0;
}
