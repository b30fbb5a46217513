/* train_loop.c: the training loop and the ablation pass of train_loop.h. */
#include "train_loop.h"

#include <stdlib.h>
#include <string.h>

void train_loop_begin(train_loop *tl, learn_model *l, long stop_at, train_point *first) {
    memset(tl, 0, sizeof *tl);
    tl->l = l;
    tl->stop_at = stop_at;
    if (first) {
        first->step = learn_steps_done(l);
        learn_eval(l, NULL, &first->acc, &first->loss);
    }
}

int train_loop_done(const train_loop *tl) {
    return tl->stop_at && learn_steps_done(tl->l) >= tl->stop_at;
}

int train_loop_step(train_loop *tl, train_point *pt) {
    tl->last_loss = learn_step(tl->l);
    tl->loss_sum += tl->last_loss;
    tl->since++;
    const long done = learn_steps_done(tl->l);
    if (done % TRAIN_CURVE_EVERY != 0 && !(tl->stop_at && done >= tl->stop_at)) return 0;
    pt->step = done;
    pt->loss = (float)(tl->loss_sum / tl->since);
    learn_eval(tl->l, NULL, &pt->acc, NULL);
    tl->loss_sum = 0.0;
    tl->since = 0;
    return 1;
}

int train_ablate(learn_model *l, float *full, float *ablated_acc, int *pruned, float *pruned_acc,
                 int (*stop)(void *ud), void *ud) {
    const learn_config *c = learn_get_config(l);
    const int nh = c->layers * c->h;
    float acc_full = 0.0f;
    learn_eval(l, NULL, &acc_full, NULL);
    if (full) *full = acc_full;
    unsigned char *one = calloc((size_t)nh, 1), *cheap = calloc((size_t)nh, 1);
    int rc = one && cheap ? 0 : -1, count = 0;
    for (int k = 0; k < nh && rc == 0; k++) {
        if (stop && stop(ud)) {
            rc = -1;
            break;
        }
        one[k] = 1; /* this head alone removed */
        learn_eval(l, one, &ablated_acc[k], NULL);
        one[k] = 0;
        if (acc_full - ablated_acc[k] < 0.01f) cheap[k] = 1, count++;
    }
    if (rc == 0 && pruned) *pruned = count;
    if (rc == 0 && pruned_acc) learn_eval(l, cheap, pruned_acc, NULL); /* all of those at once */
    free(one);
    free(cheap);
    return rc;
}
