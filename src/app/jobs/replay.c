/* replay.c: the moments of a run behind replay.h. Each moment is one block
 * (its numbers, its bars, its tensors); the archive's list of them is guarded by
 * a mutex, held while the worker links a moment in or thins the list and while
 * the UI copies a moment out, never while a moment is measured. */
#define _POSIX_C_SOURCE 200809L
#include "replay.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "train_loop.h"

typedef struct {
    long step;
    float loss, acc, pruned_acc;
    int pruned;
    float *ablated; /* (layers, h), in the block after the struct */
    float *tensors; /* replay_tensor_floats(cfg) */
} moment;

struct train_replay {
    pthread_mutex_t lock;
    int run;
    int have_cfg;
    learn_config cfg; /* the run's, resolved */
    int T;
    int tokens[TRAIN_MAX_T];
    int n, cap; /* moments kept; at most this many for the run's shape */
    moment *m[TRAIN_REPLAY_MAX];
};

long replay_next_step(long step) {
    if (step < 0) return 0;
    const long grown = (long)((double)step * 1.3 + 0.5);
    return grown > step + 1 ? grown : step + 1;
}

int replay_on_schedule(long step) {
    long s = 0;
    while (s < step) s = replay_next_step(s);
    return s == step;
}

int replay_count_for(long steps) {
    int n = 0;
    long s = 0;
    for (; s <= steps; s = replay_next_step(s)) n++;
    if (!replay_on_schedule(steps)) n++; /* the last step */
    return n;
}

train_replay *replay_create(void) {
    train_replay *r = calloc(1, sizeof *r);
    if (!r) return NULL;
    if (pthread_mutex_init(&r->lock, NULL) != 0) {
        free(r);
        return NULL;
    }
    return r;
}

static void drop_all(train_replay *r) {
    for (int i = 0; i < r->n; i++) free(r->m[i]);
    r->n = 0;
}

void replay_destroy(train_replay *r) {
    if (!r) return;
    drop_all(r);
    pthread_mutex_destroy(&r->lock);
    free(r);
}

void replay_clear(train_replay *r, int run) {
    pthread_mutex_lock(&r->lock);
    drop_all(r);
    r->run = run;
    r->have_cfg = 0;
    pthread_mutex_unlock(&r->lock);
}

int replay_run(const train_replay *r) {
    return r ? r->run : 0;
}

size_t replay_tensor_floats(const learn_config *c) {
    const size_t T = (size_t)learn_task(c->task)->seq_len, d = (size_t)c->d_model;
    const size_t td = T * d, htt = (size_t)c->h * T * T;
    return (6 * td + 2 * htt + d * d) * (size_t)c->layers;
}

void replay_point_layers(train_layer *layer, const float *block, const learn_config *c) {
    const size_t T = (size_t)learn_task(c->task)->seq_len, d = (size_t)c->d_model;
    const size_t td = T * d, htt = (size_t)c->h * T * T;
    const float *p = block;
    memset(layer, 0, sizeof(train_layer) * LEARN_MAX_LAYERS);
    for (int i = 0; i < c->layers; i++) {
        train_layer *o = &layer[i];
        o->x = p, p += td;
        o->q = p, p += td;
        o->k = p, p += td;
        o->v = p, p += td;
        o->scores = p, p += htt;
        o->attn = p, p += htt;
        o->concat = p, p += td;
        o->w_o = p, p += d * d;
        o->out = p, p += td;
    }
}

void replay_copy_tensors(float *block, learn_model *l) {
    const learn_config *c = learn_get_config(l);
    const size_t T = (size_t)learn_task(c->task)->seq_len, d = (size_t)c->d_model;
    const size_t td = T * d, htt = (size_t)c->h * T * T;
    learn_layer_tensors lt[LEARN_MAX_LAYERS];
    learn_example_tensors(l, lt, NULL);
    float *p = block;
#define TAKE(src, count) (memcpy(p, (src), (count) * sizeof(float)), p += (count))
    for (int i = 0; i < c->layers; i++) {
        TAKE(lt[i].ln1, td);
        TAKE(lt[i].q, td);
        TAKE(lt[i].k, td);
        TAKE(lt[i].v, td);
        TAKE(lt[i].scores, htt);
        TAKE(lt[i].attn, htt);
        TAKE(lt[i].concat, td);
        TAKE(lt[i].w_o, d * d);
        TAKE(lt[i].out, td);
    }
#undef TAKE
}

/* A moment of l's shape with its tensors, its bars to be filled; NULL when out
   of memory. */
static moment *moment_new(learn_model *l, float loss) {
    const learn_config *c = learn_get_config(l);
    const size_t nh = (size_t)c->layers * (size_t)c->h, nt = replay_tensor_floats(c);
    moment *m = malloc(sizeof *m + sizeof(float) * (nh + nt));
    if (!m) return NULL;
    m->step = learn_steps_done(l);
    m->loss = loss;
    m->ablated = (float *)(m + 1);
    m->tensors = m->ablated + nh;
    replay_copy_tensors(m->tensors, l);
    return m;
}

/* Links m in (it is the archive's after): the run's shape and example with the
   first; past the bound, every second moment but the first goes. */
static void link_in(train_replay *r, moment *m, learn_model *l) {
    pthread_mutex_lock(&r->lock);
    if (!r->have_cfg) {
        r->cfg = *learn_get_config(l);
        r->T = learn_task(r->cfg.task)->seq_len;
        const int *tok, *tgt;
        learn_example(l, &tok, &tgt);
        memcpy(r->tokens, tok, sizeof(int) * (size_t)r->T);
        const size_t bytes = sizeof(float) * replay_tensor_floats(&r->cfg);
        const size_t fit = bytes ? REPLAY_MAX_BYTES / bytes : TRAIN_REPLAY_MAX;
        r->cap = fit < 4 ? 4 : fit > TRAIN_REPLAY_MAX ? TRAIN_REPLAY_MAX : (int)fit;
        r->have_cfg = 1;
    }
    if (r->n == r->cap) { /* thinned: 0, 2, 4, ... kept, and the newest */
        int k = 1;
        for (int i = 1; i < r->n; i++) {
            if (i % 2 == 0 || i == r->n - 1)
                r->m[k++] = r->m[i];
            else
                free(r->m[i]);
        }
        r->n = k;
    }
    r->m[r->n++] = m;
    pthread_mutex_unlock(&r->lock);
}

/* 1 when the newest moment is at l's step already (read by the only writer). */
static int have_step(train_replay *r, learn_model *l) {
    pthread_mutex_lock(&r->lock);
    const int have = r->n > 0 && r->m[r->n - 1]->step == learn_steps_done(l);
    pthread_mutex_unlock(&r->lock);
    return have;
}

int replay_take(train_replay *r, learn_model *l, float loss, int (*stop)(void *ud), void *ud) {
    if (have_step(r, l)) return 1;
    moment *m = moment_new(l, loss);
    if (!m) return -1;
    if (train_ablate(l, &m->acc, m->ablated, &m->pruned, &m->pruned_acc, stop, ud) != 0) {
        free(m);
        return -1;
    }
    link_in(r, m, l);
    return 0;
}

int replay_take_measured(train_replay *r, learn_model *l, float loss, float acc,
                         const float *ablated, int pruned, float pruned_acc) {
    if (have_step(r, l)) return 1;
    moment *m = moment_new(l, loss);
    if (!m) return -1;
    const learn_config *c = learn_get_config(l);
    memcpy(m->ablated, ablated, sizeof(float) * (size_t)(c->layers * c->h));
    m->acc = acc;
    m->pruned = pruned;
    m->pruned_acc = pruned_acc;
    link_in(r, m, l);
    return 0;
}

int replay_steps(train_replay *r, long *steps, int max) {
    if (!r) return 0;
    pthread_mutex_lock(&r->lock);
    const int n = r->n;
    for (int i = 0; i < n && i < max; i++) steps[i] = r->m[i]->step;
    pthread_mutex_unlock(&r->lock);
    return n;
}

int replay_copy(train_replay *r, long step, train_view *out) {
    if (!r) return -1;
    pthread_mutex_lock(&r->lock);
    const moment *m = NULL;
    for (int i = 0; i < r->n && !m; i++)
        if (r->m[i]->step == step) m = r->m[i];
    int rc = -1;
    const size_t nt = m ? replay_tensor_floats(&r->cfg) : 0;
    if (m && nt > out->mem_cap) {
        float *p = realloc(out->mem_, nt * sizeof *p);
        if (p) out->mem_ = p, out->mem_cap = nt;
    }
    if (m && nt <= out->mem_cap) {
        memcpy(out->mem_, m->tensors, nt * sizeof(float));
        out->active = 1;
        out->running = 0;
        out->cfg = r->cfg;
        out->T = r->T;
        memcpy(out->tokens, r->tokens, sizeof r->tokens);
        out->step = m->step;
        out->loss = m->loss;
        out->acc = m->acc;
        out->runs = 0;
        out->pruning_valid = 1;
        out->pruning_step = m->step;
        memcpy(out->ablated_acc, m->ablated, sizeof(float) * (size_t)(r->cfg.layers * r->cfg.h));
        out->pruned = m->pruned;
        out->pruned_acc = m->pruned_acc;
        out->error[0] = '\0';
        replay_point_layers(out->layer, out->mem_, &r->cfg);
        rc = 0;
    }
    pthread_mutex_unlock(&r->lock);
    return rc;
}
