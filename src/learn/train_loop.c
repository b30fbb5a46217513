/* train_loop.c: the training loop and the ablation pass of train_loop.h. */
#include "train_loop.h"

#include <math.h>
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

int train_loop_dense_point(long step) {
    return step <= 50 || (step <= 500 && step % 5 == 0) || step % TRAIN_CURVE_EVERY == 0;
}

void train_loop_point(train_loop *tl, train_point *pt) {
    pt->step = learn_steps_done(tl->l);
    pt->loss = tl->since ? (float)(tl->loss_sum / tl->since) : NAN;
    learn_eval(tl->l, NULL, &pt->acc, NULL);
    tl->loss_sum = 0.0;
    tl->since = 0;
}

int train_loop_step(train_loop *tl, train_point *pt) {
    tl->last_loss = learn_step(tl->l);
    tl->loss_sum += tl->last_loss;
    tl->since++;
    const long done = learn_steps_done(tl->l);
    const int due = tl->dense ? train_loop_dense_point(done) : done % TRAIN_CURVE_EVERY == 0;
    if (!due && !(tl->stop_at && done >= tl->stop_at)) return 0;
    train_loop_point(tl, pt);
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

/* --- the curve a run keeps ---------------------------------------------------- */

double train_curve_u(double step) {
    return log1p(step > 0.0 ? step : 0.0);
}

static double u_at(const train_curve *c, int i) {
    return train_curve_u((double)c->step[i]);
}

static void put(train_curve *c, int i, const train_point *pt) {
    c->step[i] = (float)pt->step;
    c->loss[i] = pt->loss;
    c->acc[i] = pt->acc;
}

/* Keeps the first point, then every point at least gap past the last kept, and
   the newest. */
static void thin(train_curve *c) {
    int k = 1;
    for (int i = 1; i < c->n - 1; i++) {
        if (u_at(c, i) - u_at(c, k - 1) < (double)c->gap) continue;
        c->step[k] = c->step[i], c->loss[k] = c->loss[i], c->acc[k] = c->acc[i];
        k++;
    }
    if (c->n > 1) { /* the newest */
        c->step[k] = c->step[c->n - 1], c->loss[k] = c->loss[c->n - 1];
        c->acc[k] = c->acc[c->n - 1];
        k++;
    }
    c->n = k;
}

void train_curve_add(train_curve *c, const train_point *pt) {
    if (c->n < 2) { /* the first point stays, the second is the newest */
        put(c, c->n++, pt);
        return;
    }
    /* the newest so far stays when it is far enough from the kept one before it;
       else the new point takes its place */
    const int keep = u_at(c, c->n - 1) - u_at(c, c->n - 2) >= (double)c->gap;
    if (!keep) {
        put(c, c->n - 1, pt);
        return;
    }
    put(c, c->n++, pt);
    if (c->n < TRAIN_CURVE_POINTS) return;
    const double span = u_at(c, c->n - 1) - u_at(c, 0);
    const float first = (float)(2.0 * span / TRAIN_CURVE_POINTS);
    do { /* until a quarter of the budget is free */
        c->gap = c->gap > 0.0f ? fmaxf(2.0f * c->gap, first) : first;
        thin(c);
    } while (c->n > TRAIN_CURVE_POINTS * 3 / 4);
}

/* --- the stop rule ---------------------------------------------------------------- */

void train_plateau_begin(train_plateau *p) {
    memset(p, 0, sizeof *p);
    p->from = -1;
}

void train_plateau_restart(train_plateau *p) {
    p->from = -1;
}

int train_plateau_add(train_plateau *p, long step, float acc) {
    if (!p->started) {
        p->started = 1;
        p->base = p->best = acc;
    }
    p->best = fmaxf(p->best, acc);
    const float lo = fminf(p->lo, acc), hi = fmaxf(p->hi, acc);
    if (p->from >= 0 && hi - lo <= TRAIN_STOP_TOL) { /* the streak holds its band */
        p->lo = lo, p->hi = hi;
    } else { /* out of the band (or none yet): a streak begins here */
        p->from = step;
        p->lo = p->hi = acc;
    }
    return step - p->from >= TRAIN_STOP_PATIENCE && p->hi >= p->best - TRAIN_STOP_TOL &&
           p->best >= p->base + TRAIN_STOP_LEARNED;
}
