/* replay.c: the moments of a run behind replay.h. Each moment is one block
 * (its numbers, its bars, its tensors), and a lazy one's parameters beside it
 * until its bars are measured; the archive's list of them is guarded by a
 * mutex, held while the worker links a moment in, thins the list or stores
 * bars and while the UI copies a moment out, never while a moment is measured. */
#define _POSIX_C_SOURCE 200809L
#include "replay.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "train_loop.h"

typedef struct {
    long step;
    float loss, acc, pruned_acc;
    int pruned;
    int measured;   /* 1: the bars below are the moment's */
    float *ablated; /* (layers, h), in the block after the struct */
    float *tensors; /* replay_tensor_floats(cfg) */
    float *params;  /* lazy and not yet measured: l's parameters at step, else NULL */
} moment;

struct train_replay {
    pthread_mutex_t lock;
    int run;
    int have_cfg;
    learn_config cfg; /* the run's, resolved */
    int T;
    int tokens[TRAIN_MAX_T];
    int lazy;            /* bars measured when asked (the moments keep parameters) */
    size_t param_floats; /* of the run's learner */
    int n, cap;          /* moments kept; at most this many for the run's shape */
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

static void moment_free(moment *m) {
    if (!m) return;
    free(m->params);
    free(m);
}

static void drop_all(train_replay *r) {
    for (int i = 0; i < r->n; i++) moment_free(r->m[i]);
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

size_t replay_param_floats(const learn_model *l) {
    size_t n = 0;
    for (int i = 0; i < learn_param_count(l); i++) {
        learn_tensor t;
        learn_param(l, i, &t);
        n += (size_t)t.shape[0] * (size_t)(t.ndim == 2 ? t.shape[1] : 1);
    }
    return n;
}

/* l's parameters into p (replay_param_floats), or out of p into l. */
static void params_out(float *p, const learn_model *l) {
    for (int i = 0; i < learn_param_count(l); i++) {
        learn_tensor t;
        learn_param(l, i, &t);
        const size_t n = (size_t)t.shape[0] * (size_t)(t.ndim == 2 ? t.shape[1] : 1);
        memcpy(p, t.data, n * sizeof(float));
        p += n;
    }
}

static void params_in(learn_model *l, const float *p) {
    for (int i = 0; i < learn_param_count(l); i++) {
        learn_tensor t;
        learn_param(l, i, &t);
        const size_t n = (size_t)t.shape[0] * (size_t)(t.ndim == 2 ? t.shape[1] : 1);
        memcpy(t.data, p, n * sizeof(float));
        p += n;
    }
}

/* The run's shape, example, bound and way of measuring, from l (under the lock). */
static void setup(train_replay *r, learn_model *l, long steps) {
    r->cfg = *learn_get_config(l);
    r->T = learn_task(r->cfg.task)->seq_len;
    const int *tok, *tgt;
    learn_example(l, &tok, &tgt);
    memcpy(r->tokens, tok, sizeof(int) * (size_t)r->T);
    r->param_floats = replay_param_floats(l);
    const size_t eager = sizeof(float) * replay_tensor_floats(&r->cfg); /* as ever */
    const size_t lazy = eager + sizeof(float) * r->param_floats;
    const int count = replay_count_for(steps > 0 ? steps : 0);
    const size_t need = (size_t)(count > 4 ? count : 4);
    r->lazy = REPLAY_MAX_BYTES / lazy >= need;
    const size_t fit = REPLAY_MAX_BYTES / (r->lazy ? lazy : eager);
    r->cap = fit < 4 ? 4 : fit > TRAIN_REPLAY_MAX ? TRAIN_REPLAY_MAX : (int)fit;
    r->have_cfg = 1;
}

void replay_plan(train_replay *r, learn_model *l, long steps) {
    pthread_mutex_lock(&r->lock);
    setup(r, l, steps);
    pthread_mutex_unlock(&r->lock);
}

int replay_lazy(train_replay *r) {
    pthread_mutex_lock(&r->lock);
    const int lazy = r->have_cfg && r->lazy;
    pthread_mutex_unlock(&r->lock);
    return lazy;
}

/* 1 if the run is measured lazily: the shape fixed from l first when it is not. */
static int lazy_for(train_replay *r, learn_model *l) {
    pthread_mutex_lock(&r->lock);
    if (!r->have_cfg) setup(r, l, 0);
    const int lazy = r->lazy;
    pthread_mutex_unlock(&r->lock);
    return lazy;
}

/* A moment of l's shape with its tensors (and, when lazy, its parameters), its
   bars to be filled; NULL when out of memory. */
static moment *moment_new(learn_model *l, float loss, int lazy) {
    const learn_config *c = learn_get_config(l);
    const size_t nh = (size_t)c->layers * (size_t)c->h, nt = replay_tensor_floats(c);
    moment *m = malloc(sizeof *m + sizeof(float) * (nh + nt));
    if (!m) return NULL;
    m->params = NULL;
    if (lazy) {
        m->params = malloc(sizeof(float) * replay_param_floats(l));
        if (!m->params) {
            free(m);
            return NULL;
        }
        params_out(m->params, l);
    }
    m->step = learn_steps_done(l);
    m->loss = loss;
    m->measured = 0;
    m->pruned = 0;
    m->pruned_acc = 0.0f;
    m->ablated = (float *)(m + 1);
    m->tensors = m->ablated + nh;
    memset(m->ablated, 0, sizeof(float) * nh);
    replay_copy_tensors(m->tensors, l);
    return m;
}

int replay_thin_index(const long *steps, int n, long next) {
    if (n < 2) return -1;
    int best = -1;
    double best_gap = INFINITY;
    for (int i = 1; i < n; i++) {
        const double right = log1p((double)(i + 1 < n ? steps[i + 1] : next));
        const double gap = right - log1p((double)steps[i - 1]);
        if (gap < best_gap) best_gap = gap, best = i; /* ties: the earlier goes */
    }
    return best;
}

/* Links m in (it is the archive's after): past the bound, the moment that
   replay_thin_index picks goes first. */
static void link_in(train_replay *r, moment *m) {
    pthread_mutex_lock(&r->lock);
    if (r->n == r->cap) {
        long steps[TRAIN_REPLAY_MAX];
        for (int i = 0; i < r->n; i++) steps[i] = r->m[i]->step;
        const int drop = replay_thin_index(steps, r->n, m->step);
        if (drop > 0) {
            moment_free(r->m[drop]);
            memmove(&r->m[drop], &r->m[drop + 1], sizeof r->m[0] * (size_t)(r->n - drop - 1));
            r->n--;
        }
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

int replay_take(train_replay *r, learn_model *l, float loss, float acc, int (*stop)(void *ud),
                void *ud) {
    if (have_step(r, l)) return 1;
    const int lazy = lazy_for(r, l);
    moment *m = moment_new(l, loss, lazy);
    if (!m) return -1;
    if (lazy) { /* the bars wait; the accuracy is the pass's first number */
        if (isnan(acc)) learn_eval(l, NULL, &acc, NULL);
        m->acc = acc;
    } else {
        if (train_ablate(l, &m->acc, m->ablated, &m->pruned, &m->pruned_acc, stop, ud) != 0) {
            moment_free(m);
            return -1;
        }
        m->measured = 1;
    }
    link_in(r, m);
    return 0;
}

/* Gives m the bars (under the lock); its parameters go. */
static void set_bars(moment *m, int nh, float acc, const float *ablated, int pruned,
                     float pruned_acc) {
    memcpy(m->ablated, ablated, sizeof(float) * (size_t)nh);
    m->acc = acc;
    m->pruned = pruned;
    m->pruned_acc = pruned_acc;
    m->measured = 1;
    free(m->params);
    m->params = NULL;
}

int replay_take_measured(train_replay *r, learn_model *l, float loss, float acc,
                         const float *ablated, int pruned, float pruned_acc) {
    const learn_config *c = learn_get_config(l);
    const int nh = c->layers * c->h;
    pthread_mutex_lock(&r->lock);
    moment *newest = r->n > 0 ? r->m[r->n - 1] : NULL;
    if (newest && newest->step == learn_steps_done(l)) {
        if (!newest->measured) set_bars(newest, nh, acc, ablated, pruned, pruned_acc);
        pthread_mutex_unlock(&r->lock);
        return 1;
    }
    if (!r->have_cfg) setup(r, l, 0);
    pthread_mutex_unlock(&r->lock);
    moment *m = moment_new(l, loss, 0); /* measured: no copy needed */
    if (!m) return -1;
    set_bars(m, nh, acc, ablated, pruned, pruned_acc);
    link_in(r, m);
    return 0;
}

/* The moment at step (under the lock), or NULL. */
static moment *find(train_replay *r, long step) {
    for (int i = 0; i < r->n; i++)
        if (r->m[i]->step == step) return r->m[i];
    return NULL;
}

int replay_measured(train_replay *r, long step) {
    if (!r) return -1;
    pthread_mutex_lock(&r->lock);
    const moment *m = find(r, step);
    const int rc = m ? m->measured : -1;
    pthread_mutex_unlock(&r->lock);
    return rc;
}

/* 1 if l is of the archive's run: its shape and held-out set (the seed). */
static int same_run(const train_replay *r, const learn_model *l) {
    const learn_config *c = learn_get_config(l);
    return r->have_cfg && c->task == r->cfg.task && c->layers == r->cfg.layers &&
           c->h == r->cfg.h && c->d_model == r->cfg.d_model && c->mlp == r->cfg.mlp &&
           c->act == r->cfg.act && c->batch == r->cfg.batch && c->seed == r->cfg.seed &&
           c->heldout == r->cfg.heldout && replay_param_floats(l) == r->param_floats;
}

int replay_measure(train_replay *r, long step, learn_model *l, int (*stop)(void *ud), void *ud) {
    if (!r || !l) return -1;
    pthread_mutex_lock(&r->lock);
    moment *m = find(r, step);
    if (m && m->measured) {
        pthread_mutex_unlock(&r->lock);
        return 0;
    }
    if (!m || !m->params || !same_run(r, l)) {
        pthread_mutex_unlock(&r->lock);
        return -1;
    }
    /* the moment's copy is taken out: the lock is free during the pass, and a
       thinning meanwhile cannot free what the pass reads */
    float *params = m->params;
    m->params = NULL;
    const int nh = r->cfg.layers * r->cfg.h, run = r->run;
    const size_t np = r->param_floats;
    pthread_mutex_unlock(&r->lock);
    float *own = malloc(sizeof(float) * np);
    float *ablated = malloc(sizeof(float) * (size_t)nh);
    int rc = -1, pruned = 0;
    float acc = 0.0f, pruned_acc = 0.0f;
    if (own && ablated) {
        params_out(own, l);
        params_in(l, params);
        rc = train_ablate(l, &acc, ablated, &pruned, &pruned_acc, stop, ud);
        params_in(l, own); /* l's own weights back, whatever the pass said */
    }
    pthread_mutex_lock(&r->lock);
    m = r->run == run ? find(r, step) : NULL; /* still kept? */
    if (m && !m->measured) {
        if (rc == 0) {
            set_bars(m, nh, acc, ablated, pruned, pruned_acc);
            free(params);
        } else {
            m->params = params; /* it waits, as before */
        }
        params = NULL;
    }
    pthread_mutex_unlock(&r->lock);
    free(params);
    free(own);
    free(ablated);
    return rc == 0 ? 0 : -1;
}

int replay_page_index(int j, int n, int K) {
    if (K < 2 || n < 1) return 0;
    return (int)((double)j * (n - 1) / (K - 1) + 0.5);
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
    const moment *m = find(r, step);
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
        out->pruning_valid = m->measured; /* else they wait for replay_measure */
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
