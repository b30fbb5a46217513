/* test_learn.c: the learner against an independent double-precision reference
 * written here from the model's formulas (plain loops): its loss, and every
 * parameter's gradient against centred finite differences of that reference; its
 * attention against the core's mha_forward; the tasks' rules; ablation, head
 * masses, determinism; and each task trained to its accuracy within a budget. */
#include <float.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "blas.h"
#include "check.h"
#include "layers.h"
#include "learn.h"
#include "mha.h"
#include "tok.h"

/* ------------------------------------------------------------------------------ */
/* helpers                                                                         */

static learn_model *make(learn_task_id task, int layers, int h, int d, int mlp, learn_act act,
                         int batch, uint64_t seed) {
    learn_config c = {0};
    c.task = task;
    c.layers = layers;
    c.h = h;
    c.d_model = d;
    c.mlp = mlp;
    c.act = act;
    c.batch = batch;
    c.seed = seed;
    char err[256] = "";
    learn_model *l = learn_create(&c, err, sizeof err);
    if (!l) fail_msg("learn_create: expected a learner, got NULL: %s", err);
    return l;
}

static size_t tensor_size(const learn_tensor *t) {
    return (size_t)t->shape[0] * (t->ndim == 2 ? (size_t)t->shape[1] : 1);
}

static int find_param(const learn_model *l, const char *name) {
    for (int i = 0; i < learn_param_count(l); i++) {
        learn_tensor t;
        learn_param(l, i, &t);
        if (strcmp(t.name, name) == 0) return i;
    }
    return -1;
}

/* splitmix64 of the test's own, for random parameters and batches */
static uint64_t test_rng(uint64_t *s) {
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}
static double test_uniform(uint64_t *s) {
    return (double)(test_rng(s) >> 11) * (1.0 / 9007199254740992.0) * 2.0 - 1.0;
}

/* Sets every parameter to a random value of the given spread (gains around 1),
 * so attention is far from uniform and every gradient is well above rounding. */
static void randomise_params(learn_model *l, double spread, uint64_t seed) {
    uint64_t s = seed;
    for (int i = 0; i < learn_param_count(l); i++) {
        learn_tensor t;
        learn_param(l, i, &t);
        int gain = strstr(t.name, ".gain") != NULL;
        for (size_t j = 0; j < tensor_size(&t); j++)
            t.data[j] = (float)((gain ? 1.0 : 0.0) + spread * test_uniform(&s));
    }
}

/* ------------------------------------------------------------------------------ */
/* the reference: the whole model in double, plain loops                           */

typedef struct {
    int V, C, T, d, h, L, mlp;
    learn_act act;
    int n_tensors;
    size_t off[64];
    char names[64][24];
    double *w; /* every parameter, in the learner's order */
} ref_model;

static void ref_load(ref_model *r, const learn_model *l) {
    const learn_config *c = learn_get_config(l);
    const learn_task_info *ti = learn_task(c->task);
    r->V = ti->vocab;
    r->C = ti->classes;
    r->T = ti->seq_len;
    r->d = c->d_model;
    r->h = c->h;
    r->L = c->layers;
    r->mlp = c->mlp;
    r->act = c->act;
    r->n_tensors = learn_param_count(l);
    size_t total = 0;
    for (int i = 0; i < r->n_tensors; i++) {
        learn_tensor t;
        learn_param(l, i, &t);
        r->off[i] = total;
        snprintf(r->names[i], sizeof r->names[i], "%s", t.name);
        total += tensor_size(&t);
    }
    r->w = calloc(total, sizeof(double));
    assert_non_null(r->w);
    for (int i = 0; i < r->n_tensors; i++) {
        learn_tensor t;
        learn_param(l, i, &t);
        for (size_t j = 0; j < tensor_size(&t); j++) r->w[r->off[i] + j] = t.data[j];
    }
}

static const double *ref_w(const ref_model *r, const char *name) {
    for (int i = 0; i < r->n_tensors; i++)
        if (strcmp(r->names[i], name) == 0) return r->w + r->off[i];
    fail_msg("reference: expected a parameter named %s, got none", name);
    return NULL;
}

static const double *ref_lw(const ref_model *r, int layer, const char *name) {
    char nm[32];
    snprintf(nm, sizeof nm, "layer%d.%s", layer + 1, name);
    return ref_w(r, nm);
}

/* y (T, d) = LayerNorm(x) with gain g and bias b, eps 1e-5, biased variance */
static void ref_layernorm(double *y, const double *x, const double *g, const double *b, int T,
                          int d) {
    for (int t = 0; t < T; t++) {
        double m = 0.0, v = 0.0;
        for (int i = 0; i < d; i++) m += x[t * d + i];
        m /= d;
        for (int i = 0; i < d; i++) v += (x[t * d + i] - m) * (x[t * d + i] - m);
        v /= d;
        for (int i = 0; i < d; i++)
            y[t * d + i] = (x[t * d + i] - m) / sqrt(v + 1e-5) * g[i] + b[i];
    }
}

/* y (T, n) = x (T, k) w (k, n) + bias (n, or NULL) */
static void ref_matmul(double *y, const double *x, const double *w, const double *bias, int T,
                       int k, int n) {
    for (int t = 0; t < T; t++)
        for (int j = 0; j < n; j++) {
            double acc = bias ? bias[j] : 0.0;
            for (int i = 0; i < k; i++) acc += x[t * k + i] * w[i * n + j];
            y[t * n + j] = acc;
        }
}

/* Mean cross-entropy over the targets of a batch (B, T), the model in double. */
static double ref_loss(const ref_model *r, const int *tokens, const int *targets, int B) {
    const int T = r->T, d = r->d, h = r->h, dk = d / h, C = r->C, ff = 4 * d;
    double *x = calloc((size_t)T * d, sizeof(double)), *xn = calloc((size_t)T * d, sizeof(double));
    double *q = calloc((size_t)T * d, sizeof(double)), *k = calloc((size_t)T * d, sizeof(double));
    double *v = calloc((size_t)T * d, sizeof(double)), *cc = calloc((size_t)T * d, sizeof(double));
    double *o = calloc((size_t)T * d, sizeof(double)), *f = calloc((size_t)T * ff, sizeof(double));
    double *lg = calloc((size_t)T * C, sizeof(double));
    assert_true(x && xn && q && k && v && cc && o && f && lg);
    const double *wte = ref_w(r, "wte"), *wpe = ref_w(r, "wpe");
    double total = 0.0;
    int count = 0;
    for (int b = 0; b < B; b++) {
        const int *tok = tokens + b * T, *tgt = targets + b * T;
        for (int t = 0; t < T; t++)
            for (int i = 0; i < d; i++) x[t * d + i] = wte[tok[t] * d + i] + wpe[t * d + i];
        for (int l = 0; l < r->L; l++) {
            ref_layernorm(xn, x, ref_lw(r, l, "ln1.gain"), ref_lw(r, l, "ln1.bias"), T, d);
            ref_matmul(q, xn, ref_lw(r, l, "W_Q"), NULL, T, d, d);
            ref_matmul(k, xn, ref_lw(r, l, "W_K"), NULL, T, d, d);
            ref_matmul(v, xn, ref_lw(r, l, "W_V"), NULL, T, d, d);
            for (int hd = 0; hd < h; hd++)
                for (int t = 0; t < T; t++) {
                    double s[64], max = -INFINITY, sum = 0.0;
                    for (int u = 0; u <= t; u++) { /* causal: keys 0 .. t */
                        double dot = 0.0;
                        for (int i = 0; i < dk; i++)
                            dot += q[t * d + hd * dk + i] * k[u * d + hd * dk + i];
                        s[u] = dot / sqrt((double)dk);
                        if (s[u] > max) max = s[u];
                    }
                    for (int u = 0; u <= t; u++) sum += (s[u] = exp(s[u] - max));
                    for (int i = 0; i < dk; i++) {
                        double acc = 0.0;
                        for (int u = 0; u <= t; u++) acc += s[u] / sum * v[u * d + hd * dk + i];
                        cc[t * d + hd * dk + i] = acc;
                    }
                }
            ref_matmul(o, cc, ref_lw(r, l, "W_O"), NULL, T, d, d);
            for (int i = 0; i < T * d; i++) x[i] += o[i];
            if (!r->mlp) continue;
            ref_layernorm(xn, x, ref_lw(r, l, "ln2.gain"), ref_lw(r, l, "ln2.bias"), T, d);
            ref_matmul(f, xn, ref_lw(r, l, "W_fc"), ref_lw(r, l, "b_fc"), T, d, ff);
            for (int i = 0; i < T * ff; i++)
                f[i] = r->act == LEARN_ACT_RELU ? (f[i] > 0.0 ? f[i] : 0.0)
                                                : 0.5 * f[i] * (1.0 + erf(f[i] / sqrt(2.0)));
            ref_matmul(o, f, ref_lw(r, l, "W_proj"), ref_lw(r, l, "b_proj"), T, ff, d);
            for (int i = 0; i < T * d; i++) x[i] += o[i];
        }
        ref_layernorm(xn, x, ref_w(r, "lnf.gain"), ref_w(r, "lnf.bias"), T, d);
        ref_matmul(lg, xn, ref_w(r, "W_U"), ref_w(r, "b_U"), T, d, C);
        for (int t = 0; t < T; t++) {
            if (tgt[t] < 0) continue;
            double max = -INFINITY, sum = 0.0;
            for (int c = 0; c < C; c++) max = fmax(max, lg[t * C + c]);
            for (int c = 0; c < C; c++) sum += exp(lg[t * C + c] - max);
            total += log(sum) + max - lg[t * C + tgt[t]];
            count++;
        }
    }
    free(x), free(xn), free(q), free(k), free(v), free(cc), free(o), free(f), free(lg);
    return total / count;
}

/* ------------------------------------------------------------------------------ */
/* gradients against finite differences of the reference                           */

typedef struct {
    learn_task_id task;
    int layers, h, d, mlp;
    learn_act act;
    int batch;
} grad_case;

/* Per tensor: rel = ||g - g_fd|| / ||g_fd|| <= 1e-4 (Euclidean norms), and every
 * element |g - g_fd| <= 1e-3 |g_fd| + 1e-4 max|g_fd| of that tensor. g_fd is the
 * centred difference (L(w + e) - L(w - e)) / 2e of the double reference, e = 1e-6
 * (its own error is O(e^2) ~ 1e-12, far below the float gradient's ~1e-6). */
static void check_gradients(const grad_case *gc) {
    learn_model *l = make(gc->task, gc->layers, gc->h, gc->d, gc->mlp, gc->act, gc->batch, 7);
    randomise_params(l, 0.3, 99);
    const learn_task_info *ti = learn_task(gc->task);
    const int T = ti->seq_len;
    int *tok = malloc(sizeof(int) * (size_t)gc->batch * T);
    int *tgt = malloc(sizeof(int) * (size_t)gc->batch * T);
    assert_true(tok && tgt);
    uint64_t rng = 5;
    for (int b = 0; b < gc->batch; b++)
        learn_task_sample(tok + b * T, tgt + b * T, gc->task, 0, &rng);

    float loss = learn_gradients(l, tok, tgt, gc->batch);
    ref_model r;
    ref_load(&r, l);
    double ref = ref_loss(&r, tok, tgt, gc->batch);
    CHECK_NEAR("loss against the double reference", ref, loss, 1e-5 * fabs(ref));

    const double eps = 1e-6;
    double worst = 0.0;
    const char *worst_name = "";
    /* last tensor first: a broken backward shows first where it breaks */
    for (int i = learn_param_count(l) - 1; i >= 0; i--) {
        learn_tensor t;
        learn_param(l, i, &t);
        size_t n = tensor_size(&t);
        double num = 0.0, den = 0.0, gmax = 0.0;
        double *fd = malloc(n * sizeof(double));
        assert_non_null(fd);
        for (size_t j = 0; j < n; j++) {
            double *w = r.w + r.off[i] + j, keep = *w;
            *w = keep + eps;
            double lp = ref_loss(&r, tok, tgt, gc->batch);
            *w = keep - eps;
            double lm = ref_loss(&r, tok, tgt, gc->batch);
            *w = keep;
            fd[j] = (lp - lm) / (2.0 * eps);
            gmax = fmax(gmax, fabs(fd[j]));
            num += (t.grad[j] - fd[j]) * (t.grad[j] - fd[j]);
            den += fd[j] * fd[j];
        }
        if (den == 0.0) {
            /* only a token never seen in the batch may have no gradient at all */
            for (size_t j = 0; j < n; j++) CHECK_NEAR(t.name, 0.0, t.grad[j], 0.0);
            free(fd);
            continue;
        }
        double rel = sqrt(num / den);
        if (rel > worst) worst = rel, worst_name = t.name;
        if (!(rel <= 1e-4))
            fail_msg("%s: expected ||g - g_fd|| / ||g_fd|| <= 1e-4, got %.3g", t.name, rel);
        for (size_t j = 0; j < n; j++) {
            double tol = 1e-3 * fabs(fd[j]) + 1e-4 * gmax;
            if (!(fabs(t.grad[j] - fd[j]) <= tol))
                fail_msg("%s[%zu]: expected %.9g, got %.9g (tol %.3g)", t.name, j, fd[j],
                         (double)t.grad[j], tol);
        }
        free(fd);
    }
    print_message("%s L=%d h=%d d=%d mlp=%d: loss %.6f (reference %.6f), worst tensor %s, "
                  "relative error %.2g\n",
                  learn_task(gc->task)->name, gc->layers, gc->h, gc->d, gc->mlp, (double)loss, ref,
                  worst_name, worst);
    free(r.w);
    free(tok);
    free(tgt);
    learn_destroy(l);
}

static void test_gradients_attention_only(void **state) {
    (void)state;
    grad_case a = {LEARN_PAIR, 1, 2, 8, 0, LEARN_ACT_GELU, 3};
    check_gradients(&a);
    grad_case b = {LEARN_PREV, 2, 4, 8, 0, LEARN_ACT_GELU, 2};
    check_gradients(&b);
    grad_case c = {LEARN_SORT, 1, 1, 6, 0, LEARN_ACT_GELU, 4};
    check_gradients(&c);
}

static void test_gradients_mlp(void **state) {
    (void)state;
    grad_case a = {LEARN_PAIR, 2, 2, 8, 1, LEARN_ACT_GELU, 2};
    check_gradients(&a);
    grad_case b = {LEARN_FIRST, 1, 2, 4, 1, LEARN_ACT_RELU, 3};
    check_gradients(&b);
}

/* ------------------------------------------------------------------------------ */
/* the training forward is the app's MHA forward                                   */

/* For each layer of a trained learner, the core's mha_forward (causal mask, scaled)
 * on X = the layer's LayerNorm output and the layer's W^Q, W^K, W^V, W^O gives the
 * learner's q, k, v, scores, attn, concat and out within 1e-6 (1 + |value|). */
static void test_attention_equals_mha_forward(void **state) {
    (void)state;
    learn_model *l = make(LEARN_INDUCTION, 2, 4, 32, 1, LEARN_ACT_GELU, 8, 3);
    for (int s = 0; s < 30; s++) learn_step(l);
    const learn_config *c = learn_get_config(l);
    const int T = learn_task(c->task)->seq_len, d = c->d_model, h = c->h;
    learn_layer_tensors lt[LEARN_MAX_LAYERS];
    learn_example_tensors(l, lt, NULL);

    char text[256] = "";
    for (int t = 0; t < T; t++) strcat(text, "w ");
    tok_list toks = {0};
    char err[256];
    assert_int_equal(tok_split(&toks, text, 0, NULL, err, sizeof err), 0);
    mha_model *m = mha_model_create();
    assert_non_null(m);
    mha_config mc = {.h = h, .d_model = d, .seed = 1, .mask = MHA_MASK_CAUSAL};
    for (int layer = 0; layer < c->layers; layer++) {
        assert_int_equal(mha_model_set(m, &mc, &toks, err, sizeof err), 0);
        const char *wn[4] = {"W_Q", "W_K", "W_V", "W_O"};
        float *dst[4] = {m->w_q, m->w_k, m->w_v, m->w_o};
        for (int w = 0; w < 4; w++) {
            char nm[32];
            snprintf(nm, sizeof nm, "layer%d.%s", layer + 1, wn[w]);
            learn_tensor t;
            learn_param(l, find_param(l, nm), &t);
            memcpy(dst[w], t.data, sizeof(float) * (size_t)d * d);
        }
        memcpy(m->x, lt[layer].ln1, sizeof(float) * (size_t)T * d);
        mha_forward(m);
        const struct {
            const char *name;
            const float *app, *learn;
            size_t n;
        } pairs[] = {
            {"q", m->q, lt[layer].q, (size_t)T * d},
            {"k", m->k, lt[layer].k, (size_t)T * d},
            {"v", m->v, lt[layer].v, (size_t)T * d},
            {"scores", m->scores, lt[layer].scores, (size_t)h * T * T},
            {"attn", m->attn, lt[layer].attn, (size_t)h * T * T},
            {"concat", m->concat, lt[layer].concat, (size_t)T * d},
            {"out", m->out, lt[layer].out, (size_t)T * d},
        };
        for (size_t p = 0; p < sizeof pairs / sizeof pairs[0]; p++)
            for (size_t j = 0; j < pairs[p].n; j++) {
                float a = pairs[p].app[j], b = pairs[p].learn[j];
                if (isinf(a) || isinf(b)) {
                    CHECK_TRUE(pairs[p].name, a == b); /* masked: -inf in both */
                    continue;
                }
                CHECK_NEAR(pairs[p].name, a, b, 1e-6 * (1.0 + fabs(a)));
            }
    }
    mha_model_destroy(m);
    tok_free(&toks);
    learn_destroy(l);
}

/* ------------------------------------------------------------------------------ */
/* tasks                                                                           */

static void test_tasks_follow_their_rules(void **state) {
    (void)state;
    CHECK_INT("unknown task", -1, learn_task_find("nope"));
    CHECK_TRUE("task out of range", learn_task(LEARN_TASK_COUNT) == NULL);
    for (int id = 0; id < LEARN_TASK_COUNT; id++) {
        const learn_task_info *ti = learn_task((learn_task_id)id);
        CHECK_INT(ti->name, id, learn_task_find(ti->name));
        for (int s = 0; s < ti->vocab; s++) CHECK_TRUE("symbol", ti->symbols[s][0] != '\0');
        for (int s = 0; s < ti->classes; s++) CHECK_TRUE("class", ti->class_name[s][0] != '\0');
        const int T = ti->seq_len;
        uint64_t rng = 11;
        for (int n = 0; n < 300; n++) {
            int tok[64], tgt[64], held = n % 2;
            learn_task_sample(tok, tgt, (learn_task_id)id, held, &rng);
            CHECK_INT("held-out split", held, learn_task_is_heldout(tok, T));
            int ntgt = 0;
            for (int i = 0; i < T; i++) {
                CHECK_TRUE("token in vocabulary", tok[i] >= 0 && tok[i] < ti->vocab);
                CHECK_TRUE("target in classes", tgt[i] >= -1 && tgt[i] < ti->classes);
                ntgt += tgt[i] >= 0;
            }
            CHECK_TRUE("some targets", ntgt > 0);
            switch (id) {
            case LEARN_PREV:
                for (int i = 1; i < T; i++) CHECK_INT("prev", tok[i - 1], tgt[i]);
                CHECK_INT("prev at 0", -1, tgt[0]);
                break;
            case LEARN_FIRST:
                for (int i = 1; i < T; i++) CHECK_INT("first", tok[0], tgt[i]);
                break;
            case LEARN_PAIR:
                CHECK_INT("pair vocabulary", 5, ti->vocab);
                for (int i = 1; i < T; i++) {
                    CHECK_INT("pair", 5 * tok[0] + tok[i - 1], tgt[i]);
                    char want[8];
                    snprintf(want, sizeof want, "%s,%s", ti->symbols[tok[0]],
                             ti->symbols[tok[i - 1]]);
                    CHECK_STR("pair class name", want, ti->class_name[tgt[i]]);
                }
                break;
            case LEARN_SORT: { /* 6 digits then the same sorted; input is 11 long */
                CHECK_INT("sort length", 11, T);
                int cnt[3] = {0, 0, 0}, seq[12];
                for (int i = 0; i < 6; i++) cnt[tok[i]]++;
                for (int i = 0, p = 0; i < 3; i++)
                    for (int j = 0; j < cnt[i]; j++) seq[6 + p++] = i;
                for (int i = 0; i < 11; i++) {
                    if (i >= 6) CHECK_INT("sorted copy in the input", seq[i], tok[i]);
                    CHECK_INT("sort target", i >= 5 ? seq[i + 1] : -1, tgt[i]);
                }
                break;
            }
            case LEARN_CARDS: { /* 16 cards with distinct keys, then 8 questions */
                CHECK_INT("cards length", 24, T);
                CHECK_INT("cards vocabulary: 128 cards, 32 questions", 160, ti->vocab);
                CHECK_INT("cards classes", 16, ti->classes);
                int seen[32] = {0};
                for (int i = 0; i < 16; i++) {
                    CHECK_TRUE("a card", tok[i] < 128);
                    CHECK_INT("no target at a card", -1, tgt[i]);
                    CHECK_INT("keys distinct", 0, seen[tok[i] / 4]);
                    seen[tok[i] / 4] = 1;
                    char want[32];
                    snprintf(want, sizeof want, "%d=%d", tok[i] / 4, tok[i] % 4);
                    CHECK_STR("card label key=value", want, ti->symbols[tok[i]]);
                }
                for (int i = 16; i < 24; i++) {
                    CHECK_TRUE("a question", tok[i] >= 128);
                    const int key = tok[i] - 128;
                    int c = -1;
                    for (int k = 0; k < 16; k++)
                        if (tok[k] / 4 == key) c = k;
                    CHECK_TRUE("the asked key is on a card", c >= 0);
                    if (c < 0) continue;
                    CHECK_INT("cards target", 4 * (tok[c] % 4) + tok[0] % 4, tgt[i]);
                    char want[32];
                    snprintf(want, sizeof want, "%d,%d", tok[c] % 4, tok[0] % 4);
                    CHECK_STR("cards class name", want, ti->class_name[tgt[i]]);
                }
                break;
            }
            default: { /* a target at i is the token after the previous occurrence */
                int first_t = -1, last_t = -1;
                for (int i = 0; i < T; i++) {
                    if (tgt[i] < 0) continue;
                    if (first_t < 0) first_t = i;
                    last_t = i;
                    int j = i - 1;
                    while (j >= 0 && tok[j] != tok[i]) j--;
                    CHECK_TRUE("induction: a previous occurrence", j >= 0);
                    CHECK_INT("induction target", tok[j + 1], tgt[i]);
                }
                int b = last_t - first_t + 1, p = first_t - b;
                CHECK_TRUE("block of 8 to 10", b >= 8 && b <= 10);
                CHECK_TRUE("prefix of 1 to 4", p >= 1 && p <= 4);
                for (int i = 0; i < b; i++) {
                    CHECK_INT("second copy", tok[p + i], tok[p + b + i]);
                    for (int j = 0; j < i; j++) CHECK_TRUE("distinct", tok[p + i] != tok[p + j]);
                }
                break;
            }
            }
        }
    }
}

/* The same seed gives the same losses and bitwise the same weights; another
 * seed does not. */
static void test_determinism(void **state) {
    (void)state;
    learn_model *a = make(LEARN_PAIR, 2, 2, 16, 1, LEARN_ACT_GELU, 8, 21);
    learn_model *b = make(LEARN_PAIR, 2, 2, 16, 1, LEARN_ACT_GELU, 8, 21);
    learn_model *c = make(LEARN_PAIR, 2, 2, 16, 1, LEARN_ACT_GELU, 8, 22);
    for (int s = 0; s < 20; s++) {
        float la = learn_step(a), lb = learn_step(b);
        learn_step(c);
        CHECK_TRUE("same loss", memcmp(&la, &lb, sizeof la) == 0);
    }
    CHECK_INT("steps", 20, learn_steps_done(a));
    int differs = 0;
    for (int i = 0; i < learn_param_count(a); i++) {
        learn_tensor ta, tb, tc;
        learn_param(a, i, &ta);
        learn_param(b, i, &tb);
        learn_param(c, i, &tc);
        CHECK_TRUE(ta.name, memcmp(ta.data, tb.data, tensor_size(&ta) * sizeof(float)) == 0);
        differs |= memcmp(ta.data, tc.data, tensor_size(&ta) * sizeof(float)) != 0;
    }
    CHECK_TRUE("another seed, other weights", differs);
    learn_destroy(a);
    learn_destroy(b);
    learn_destroy(c);
}

static void test_init_and_config(void **state) {
    (void)state;
    learn_model *l = make(LEARN_SORT, 0, 0, 0, 0, LEARN_ACT_GELU, 0, 0);
    const learn_config *c = learn_get_config(l);
    CHECK_INT("default layers", 1, c->layers);
    CHECK_INT("default h", 4, c->h);
    CHECK_INT("default d_model", 32, c->d_model);
    CHECK_INT("default batch", 32, c->batch);
    CHECK_NEAR("default lr", 3e-3, c->lr, 1e-9);
    /* N(0, 0.02) matrices: the sample std over all of W_Q (1024 values) */
    learn_tensor t;
    learn_param(l, find_param(l, "layer1.W_Q"), &t);
    double s1 = 0.0, s2 = 0.0;
    for (size_t j = 0; j < tensor_size(&t); j++) s1 += t.data[j], s2 += t.data[j] * t.data[j];
    double n = (double)tensor_size(&t), sd = sqrt(s2 / n - (s1 / n) * (s1 / n));
    CHECK_NEAR("init std", 0.02, sd, 0.002);
    learn_param(l, find_param(l, "lnf.gain"), &t);
    CHECK_NEAR("gain", 1.0, t.data[0], 0.0);
    learn_param(l, find_param(l, "b_U"), &t);
    CHECK_NEAR("bias", 0.0, t.data[0], 0.0);
    learn_destroy(l);
    CHECK_INT("induction defaults to 2 layers", 2, learn_task(LEARN_INDUCTION)->default_layers);

    learn_config bad[] = {
        {.task = LEARN_PREV, .layers = 3},     {.task = LEARN_PREV, .h = 3, .d_model = 32},
        {.task = LEARN_PREV, .d_model = 1024}, {.task = LEARN_PREV, .batch = 5000},
        {.task = LEARN_PREV, .lr = -1.0f},     {.task = (learn_task_id)9},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char err[256] = "";
        CHECK_TRUE("bad config", learn_create(&bad[i], err, sizeof err) == NULL);
        CHECK_MSG("bad config message", err);
    }
}

/* ------------------------------------------------------------------------------ */
/* no allocation after learn_create                                                */

/* malloc and calloc of the statically linked code (the learner, not OpenBLAS or
 * cmocka, which are shared libraries) are counted: the link wraps them. */
void *__real_malloc(size_t size);
void *__wrap_malloc(size_t size);
void *__real_calloc(size_t count, size_t size);
void *__wrap_calloc(size_t count, size_t size);
static long g_allocs;

void *__wrap_malloc(size_t size) {
    g_allocs++;
    return __real_malloc(size);
}

void *__wrap_calloc(size_t count, size_t size) {
    g_allocs++;
    return __real_calloc(count, size);
}

/* Steps, evaluation, ablation, masses and snapshots allocate nothing; learn_create
 * does (which shows the counter counts). */
/* cards starts N(0, 0.1) (its init_std), the other tasks N(0, 0.02) */
static void test_cards_init(void **state) {
    (void)state;
    CHECK_NEAR("cards init_std", 0.1, learn_task(LEARN_CARDS)->init_std, 1e-7);
    learn_model *l = make(LEARN_CARDS, 0, 4, 16, 0, LEARN_ACT_GELU, 0, 7);
    learn_tensor t;
    double s1 = 0.0, s2 = 0.0, n = 0.0;
    const char *names[] = {"layer1.W_Q", "layer1.W_K", "layer1.W_V", "layer1.W_O", "wte"};
    for (int k = 0; k < 5; k++) { /* 4 x 256 + 160 x 16 = 3584 values */
        learn_param(l, find_param(l, names[k]), &t);
        for (size_t j = 0; j < tensor_size(&t); j++) s1 += t.data[j], s2 += t.data[j] * t.data[j];
        n += (double)tensor_size(&t);
    }
    CHECK_NEAR("cards init std", 0.1, sqrt(s2 / n - (s1 / n) * (s1 / n)), 0.005);
    learn_destroy(l);
}

/* The exact GELU (normal_cdf in layers.c, vectorised; AVX2 where there is one) against
 * the double-precision x Phi(x) from erfc, and its derivative Phi(x) + x phi(x), over
 * [-12, 12] on a length that leaves a scalar tail: within 3e-7 (times |x| above 1 for
 * the forward; erff's own loop was within 1.3e-7). */
static void gelu_exact_on(int lanes) {
    enum { N = 100003 };
    float *x = malloc(N * sizeof(float)), *y = malloc(N * sizeof(float));
    float *g = malloc(N * sizeof(float)), *dx = malloc(N * sizeof(float));
    CHECK_TRUE("gelu buffers", x && y && g && dx);
    for (int i = 0; i < N; i++) x[i] = (float)(-12.0 + 24.0 * i / (N - 1)), g[i] = 1.0f;
    act_forward(y, x, N, TF_ACT_GELU);
    act_backward(dx, x, y, g, N, TF_ACT_GELU);
    double worst_f = 0.0, worst_b = 0.0;
    for (int i = 0; i < N; i++) {
        const double v = x[i], cdf = 0.5 * erfc(-v / sqrt(2.0));
        const double pdf = exp(-0.5 * v * v) / sqrt(2.0 * 3.14159265358979323846);
        worst_f = fmax(worst_f, fabs(y[i] - v * cdf) / fmax(1.0, fabs(v)));
        worst_b = fmax(worst_b, fabs(dx[i] - (cdf + v * pdf)));
    }
    CHECK_NEAR(lanes == 16  ? "GELU forward (16 lanes), worst error"
               : lanes == 8 ? "GELU forward (8 lanes), worst error"
                            : "GELU forward (plain C), worst error",
               0.0, worst_f, 3e-7);
    CHECK_NEAR("GELU derivative, worst error", 0.0, worst_b, 3e-7);
    /* the backward takes Phi(x) from the forward's output over x: around 0 (where that
       division loses Phi), at denormals and far out on the left, on the vector lanes and
       the scalar tail (19 values: 16 in lanes, 3 in the tail) */
    const float special[] = {0.0f,    -0.0f,  1e-38f,  -1e-38f, 1e-30f,  -1e-30f, 1e-21f,
                             -1e-21f, 1e-19f, -1e-19f, 1e-10f,  -1e-10f, 1e-5f,   -1e-5f,
                             -13.0f,  -15.0f, -20.0f,  3e-20f,  -3e-20f};
    enum { NS = sizeof special / sizeof special[0] };
    act_forward(y, special, NS, TF_ACT_GELU);
    act_backward(dx, special, y, g, NS, TF_ACT_GELU);
    worst_b = 0.0;
    for (int i = 0; i < NS; i++) {
        const double v = special[i], cdf = 0.5 * erfc(-v / sqrt(2.0));
        const double pdf = exp(-0.5 * v * v) / sqrt(2.0 * 3.14159265358979323846);
        const double e = fabs(dx[i] - (cdf + v * pdf));
        worst_b = isnan(e) ? INFINITY : fmax(worst_b, e); /* fmax would drop a NaN */
    }
    CHECK_NEAR("GELU derivative near 0 and far left, worst error", 0.0, worst_b, 3e-7);
    free(x), free(y), free(g), free(dx);
}

/* every loop this processor can run: AVX-512F, AVX2 + FMA, plain C */
static void test_gelu_exact(void **state) {
    (void)state;
    int ran = 0;
    for (int cap = 16; cap >= 1; cap /= 2) {
        const int lanes = act_gelu_lanes(cap);
        if (lanes != cap) continue; /* not on this processor */
        printf("GELU on %d lane%s\n", lanes, lanes == 1 ? "" : "s");
        gelu_exact_on(lanes);
        ran++;
    }
    act_gelu_lanes(0);
    CHECK_TRUE("the plain loop at least", ran >= 1);
}

/* A learner of the bench's shape (learn_create_shape: T 64, 2 layers with the MLP, h 8)
 * gives the same gradients on one worker and on two: the attention's examples are
 * split over the workers but each is computed alone, and every other product is a
 * band of rows; within 1e-6 relative of the largest gradient (the bands may round the
 * last bit differently), and bit for bit on a second run with the same count. */
static void test_shape_learner_threads(void **state) {
    (void)state;
    learn_config c = {.task = LEARN_PREV, .layers = 2, .h = 8, .d_model = 64, .mlp = 1, .batch = 8};
    char err[256] = "";
    enum { T = 64, B = 8 };
    int tok[B * T], tgt[B * T];
    uint64_t x = 12345;
    for (int i = 0; i < B * T; i++) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        tok[i] = (int)((x >> 33) % 16);
        tgt[i] = i % T == 0 ? -1 : tok[i - 1];
    }
    float *g[3] = {NULL, NULL, NULL};
    size_t n = 0;
    const int threads[3] = {1, 2, 2};
    for (int r = 0; r < 3; r++) {
        learn_model *l = learn_create_shape(&c, 16, 16, T, err, sizeof err);
        CHECK_TRUE("learn_create_shape", l != NULL);
        mm_set_threads(threads[r]);
        learn_gradients(l, tok, tgt, B);
        mm_set_threads(0);
        n = 0;
        for (int i = 0; i < learn_param_count(l); i++) {
            learn_tensor t;
            learn_param(l, i, &t);
            n += tensor_size(&t);
        }
        g[r] = malloc(n * sizeof(float));
        CHECK_TRUE("gradient copy", g[r] != NULL);
        size_t o = 0;
        for (int i = 0; i < learn_param_count(l); i++) {
            learn_tensor t;
            learn_param(l, i, &t);
            memcpy(g[r] + o, t.grad, tensor_size(&t) * sizeof(float));
            o += tensor_size(&t);
        }
        learn_destroy(l);
    }
    double big = 0.0, diff = 0.0;
    for (size_t i = 0; i < n; i++)
        big = fmax(big, fabs(g[0][i])), diff = fmax(diff, fabs(g[0][i] - g[1][i]));
    CHECK_NEAR("gradients on 1 and 2 workers", 0.0, diff / big, 1e-6);
    CHECK_TRUE("gradients on 2 workers twice: bit for bit",
               memcmp(g[1], g[2], n * sizeof(float)) == 0);
    CHECK_TRUE("a shape learner refuses T 0",
               learn_create_shape(&c, 16, 16, 0, err, sizeof err) == NULL);
    for (int r = 0; r < 3; r++) free(g[r]);
}

/* Every gradient of l, in the tensors' order, into a new block of *n floats. */
static float *gradients_copy(const learn_model *l, size_t *n) {
    *n = 0;
    for (int i = 0; i < learn_param_count(l); i++) {
        learn_tensor t;
        learn_param(l, i, &t);
        *n += tensor_size(&t);
    }
    float *g = malloc(*n * sizeof(float));
    if (!g) return NULL;
    size_t o = 0;
    for (int i = 0; i < learn_param_count(l); i++) {
        learn_tensor t;
        learn_param(l, i, &t);
        memcpy(g + o, t.grad, tensor_size(&t) * sizeof(float));
        o += tensor_size(&t);
    }
    return g;
}

/* A step of at least LEARN_SHARD_MIN_FLOPS runs its batch as two halves side by
 * side: (1) the tasks at the README's sizes stay one pass (their trained numbers
 * are the ones published), the bench's big step splits; (2) the split does not
 * depend on the workers: one and two give the same gradient and loss bit for bit;
 * (3) the halves add up to the whole batch's gradient: an unsplit learner (batch 5,
 * under the bar) run on each half alone, its mean gradients weighted by each half's
 * target count, within 1e-5 of the largest gradient (float sums in another order);
 * an odd batch, so the halves differ (5 and 4). PyTorch checks a split learner too
 * (torch_check.py, "sort-L2-mlp-d128-split"). */
static void test_shards(void **state) {
    (void)state;
    const char *const small_tasks[] = {"prev", "first", "pair", "sort", "induction", "cards"};
    for (size_t k = 0; k < sizeof small_tasks / sizeof small_tasks[0]; k++) {
        learn_config c = {.task = (learn_task_id)learn_task_find(small_tasks[k])};
        if (c.task == LEARN_CARDS) c.d_model = 16, c.h = 16;
        learn_config_resolve(&c);
        const learn_task_info *t = learn_task(c.task);
        CHECK_INT(small_tasks[k], 1, learn_config_shards(&c, t->vocab, t->classes, t->seq_len));
    }
    learn_config big = {
        .task = LEARN_PREV, .layers = 2, .h = 8, .d_model = 128, .mlp = 1, .batch = 32};
    learn_config_resolve(&big);
    CHECK_INT("the bench's big step", 2, learn_config_shards(&big, 16, 16, 64));

    enum { T = 64, B = 9 };
    int tok[B * T], tgt[B * T];
    uint64_t x = 777;
    for (int i = 0; i < B * T; i++) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        tok[i] = (int)((x >> 33) % 16);
        tgt[i] = i % T == 0 || (x >> 20) % 5 == 0 ? -1 : tok[i - 1]; /* some rows untargeted */
    }
    char err[256] = "";
    learn_config c = {
        .task = LEARN_PREV, .layers = 2, .h = 8, .d_model = 128, .mlp = 1, .batch = B, .seed = 5};
    float *g[2] = {NULL, NULL}, loss[2] = {0, 0};
    size_t n = 0;
    for (int r = 0; r < 2; r++) {
        learn_model *l = learn_create_shape(&c, 16, 16, T, err, sizeof err);
        CHECK_TRUE("learn_create_shape", l != NULL);
        CHECK_INT("B 9 at d_model 128, T 64 splits", 2, learn_shards(l));
        mm_set_threads(r + 1);
        loss[r] = learn_gradients(l, tok, tgt, B);
        mm_set_threads(0);
        g[r] = gradients_copy(l, &n);
        CHECK_TRUE("gradient copy", g[r] != NULL);
        learn_destroy(l);
    }
    CHECK_TRUE("split gradients on 1 and 2 workers: bit for bit",
               memcmp(g[0], g[1], n * sizeof(float)) == 0);
    CHECK_TRUE("split loss on 1 and 2 workers: bit for bit", loss[0] == loss[1]);

    learn_config half = c;
    half.batch = 5;
    const int hb[2] = {5, 4}, h0[2] = {0, 5};
    double *want = calloc(n, sizeof(double)), lsum = 0.0;
    CHECK_TRUE("reference block", want != NULL);
    int total = 0;
    for (int i = 0; i < B * T; i++) total += tgt[i] >= 0;
    for (int s = 0; s < 2; s++) {
        learn_model *l = learn_create_shape(&half, 16, 16, T, err, sizeof err);
        CHECK_TRUE("learn_create_shape", l != NULL);
        CHECK_INT("B 5 stays one pass", 1, learn_shards(l));
        int count = 0;
        for (int i = h0[s] * T; i < (h0[s] + hb[s]) * T; i++) count += tgt[i] >= 0;
        lsum += (double)count * learn_gradients(l, tok + h0[s] * T, tgt + h0[s] * T, hb[s]);
        size_t m = 0;
        float *gh = gradients_copy(l, &m);
        CHECK_TRUE("same parameter count", gh != NULL && m == n);
        for (size_t i = 0; i < n; i++) want[i] += (double)count / total * gh[i];
        free(gh);
        learn_destroy(l);
    }
    double biggest = 0.0, diff = 0.0;
    for (size_t i = 0; i < n; i++)
        biggest = fmax(biggest, fabs(want[i])), diff = fmax(diff, fabs(want[i] - g[0][i]));
    CHECK_NEAR("split gradient against the halves' weighted sum", 0.0, diff / biggest, 1e-5);
    CHECK_NEAR("split loss against the halves' weighted mean", lsum / total, loss[0],
               1e-6 * (lsum / total));
    free(want);
    free(g[0]);
    free(g[1]);
}

static void test_no_allocation_after_create(void **state) {
    (void)state;
    g_allocs = 0;
    learn_model *l = make(LEARN_INDUCTION, 2, 4, 16, 1, LEARN_ACT_GELU, 8, 2);
    CHECK_TRUE("learn_create allocates", g_allocs > 0);
    unsigned char ablate[8] = {0, 1, 0, 0, 1, 0, 0, 0};
    float acc, loss, mp[8], mf[8], mi[8], attn[2 * 4 * 24 * 24];
    learn_layer_tensors lt[2];
    g_allocs = 0;
    for (int s = 0; s < 10; s++) learn_step(l);
    learn_eval(l, NULL, &acc, &loss);
    learn_eval(l, ablate, &acc, &loss);
    learn_head_masses(l, mp, mf, mi);
    learn_snapshot(l, attn);
    learn_example_tensors(l, lt, NULL);
    CHECK_INT("allocations after learn_create", 0, g_allocs);
    learn_destroy(l);
}

/* ------------------------------------------------------------------------------ */
/* evaluation: ablation and head masses                                            */

/* Ablating head i (its band of Concat zeroed) gives the same accuracy and loss as
 * zeroing rows [i d_k, (i+1) d_k) of W^O, a different route to the same model. */
static void test_ablation_equals_zeroed_wo_rows(void **state) {
    (void)state;
    learn_model *l = make(LEARN_PAIR, 2, 4, 16, 0, LEARN_ACT_GELU, 16, 4);
    for (int s = 0; s < 150; s++) learn_step(l);
    const int h = 4, d = 16, dk = 4;
    float base;
    learn_eval(l, NULL, &base, NULL);
    int any_drop = 0;
    for (int layer = 0; layer < 2; layer++)
        for (int i = 0; i < h; i++) {
            unsigned char ablate[2 * 4] = {0};
            ablate[layer * h + i] = 1;
            float acc_a, loss_a, acc_w, loss_w;
            learn_eval(l, ablate, &acc_a, &loss_a);
            char nm[32];
            snprintf(nm, sizeof nm, "layer%d.W_O", layer + 1);
            learn_tensor t;
            learn_param(l, find_param(l, nm), &t);
            float keep[4 * 16];
            memcpy(keep, t.data + (size_t)i * dk * d, sizeof keep);
            memset(t.data + (size_t)i * dk * d, 0, sizeof keep);
            learn_eval(l, NULL, &acc_w, &loss_w);
            memcpy(t.data + (size_t)i * dk * d, keep, sizeof keep);
            CHECK_NEAR("ablated accuracy", acc_w, acc_a, 1e-6);
            CHECK_NEAR("ablated loss", loss_w, loss_a, 1e-5 * loss_w);
            any_drop |= acc_a < base - 0.01f;
        }
    CHECK_TRUE("some head matters", any_drop);
    unsigned char all[2 * 4] = {1, 1, 1, 1, 1, 1, 1, 1};
    float acc_all;
    learn_eval(l, all, &acc_all, NULL);
    CHECK_TRUE("no heads, near chance (1/25)", acc_all < 0.2f);
    learn_destroy(l);
}

/* With a held-out set of one example, the head masses are the means, over its
 * target rows, of learn_snapshot's weights on i-1 and on 0 (rows i >= 2, where the
 * two keys differ) and on the key after the previous occurrence (found here by its
 * own loop). */
static void test_masses_from_snapshot(void **state) {
    (void)state;
    learn_config c = {
        .task = LEARN_INDUCTION, .h = 2, .d_model = 16, .batch = 8, .seed = 5, .heldout = 1};
    char err[256];
    learn_model *l = learn_create(&c, err, sizeof err);
    assert_non_null(l);
    for (int s = 0; s < 50; s++) learn_step(l);
    const int T = 24, h = 2, L = 2;
    float attn[2 * 2 * 24 * 24], mp[4], mf[4], mi[4];
    learn_snapshot(l, attn);
    learn_head_masses(l, mp, mf, mi);
    const int *tok, *tgt;
    learn_example(l, &tok, &tgt);
    for (int k = 0; k < L * h; k++) {
        const float *a = attn + (size_t)k * T * T;
        double sp = 0, sf = 0, si = 0;
        int rows = 0, irows = 0;
        for (int r = 0; r < T; r++) {
            if (tgt[r] < 0) continue;
            double row_sum = 0.0;
            for (int j = 0; j < T; j++) row_sum += a[r * T + j];
            CHECK_NEAR("snapshot row sums to 1", 1.0, row_sum, 1e-5);
            if (r >= 2) {
                rows++;
                sp += a[r * T + r - 1];
                sf += a[r * T];
            }
            for (int j = r - 1; j >= 0; j--)
                if (tok[j] == tok[r]) {
                    si += a[r * T + j + 1];
                    irows++;
                    break;
                }
        }
        CHECK_NEAR("mass_prev", sp / rows, mp[k], 1e-5);
        CHECK_NEAR("mass_first", sf / rows, mf[k], 1e-5);
        CHECK_NEAR("mass_induction", si / irows, mi[k], 1e-5);
    }
    learn_destroy(l);
}

/* ------------------------------------------------------------------------------ */
/* every task trains to its accuracy within its budget                              */

typedef struct {
    learn_task_id task;
    int layers, h;
    uint64_t seed;
    int min_steps; /* trained at least this long before the head pattern is read */
    int budget;    /* steps; the reference runs reach the goal in under a third of it */
    float goal;    /* held-out accuracy */
    int pattern;   /* 1: a head >= 0.9 on i-1; 2: a head >= 0.9 on 0;
                      3: one head >= 0.6 on i-1 and another >= 0.6 on 0 */
} train_case;

static void check_training(const train_case *tc) {
    learn_model *l = make(tc->task, tc->layers, tc->h, 32, 0, LEARN_ACT_GELU, 32, tc->seed);
    float acc = 0.0f;
    int steps = 0;
    while (steps < tc->budget) {
        for (int s = 0; s < 50; s++) learn_step(l);
        steps += 50;
        learn_eval(l, NULL, &acc, NULL);
        if (acc >= tc->goal && steps >= tc->min_steps) break;
    }
    const char *name = learn_task(tc->task)->name;
    if (!(acc >= tc->goal))
        fail_msg("%s: expected held-out accuracy >= %.2f within %d steps, got %.4f", name,
                 (double)tc->goal, tc->budget, (double)acc);
    float mp[64], mf[64], mi[64];
    int kp = 0, kf = 0; /* the heads with the most weight on i-1 and on 0 */
    learn_head_masses(l, mp, mf, mi);
    for (int k = 1; k < tc->layers * tc->h; k++) {
        if (mp[k] > mp[kp]) kp = k;
        if (mf[k] > mf[kf]) kf = k;
    }
    if (tc->pattern == 1 && !(mp[kp] >= 0.9f))
        fail_msg("%s: expected a head with >= 0.9 on i-1, got %.3f", name, (double)mp[kp]);
    if (tc->pattern == 2 && !(mf[kf] >= 0.9f))
        fail_msg("%s: expected a head with >= 0.9 on token 0, got %.3f", name, (double)mf[kf]);
    if (tc->pattern == 3 && !(kp != kf && mp[kp] >= 0.6f && mf[kf] >= 0.6f))
        fail_msg("%s: expected one head >= 0.6 on i-1 and another >= 0.6 on 0, got head %d "
                 "%.3f and head %d %.3f",
                 name, kp + 1, (double)mp[kp], kf + 1, (double)mf[kf]);
    print_message("%s: %.4f after %d steps; head %d has %.2f on i-1, head %d %.2f on 0\n", name,
                  (double)acc, steps, kp + 1, (double)mp[kp], kf + 1, (double)mf[kf]);
    learn_destroy(l);
}

static void test_train_prev_first(void **state) {
    (void)state;
    train_case a = {LEARN_PREV, 1, 4, 1, 200, 500, 0.99f, 1};
    check_training(&a);
    train_case b = {LEARN_FIRST, 1, 2, 1, 200, 500, 0.99f, 2};
    check_training(&b);
}

static void test_train_pair_sort(void **state) {
    (void)state;
    train_case a = {LEARN_PAIR, 1, 2, 1, 300, 600, 0.99f, 3};
    check_training(&a);
    train_case b = {LEARN_SORT, 1, 4, 1, 0, 1000, 0.99f, 0};
    check_training(&b);
}

static void test_train_induction(void **state) {
    (void)state;
    train_case a = {LEARN_INDUCTION, 2, 4, 1, 0, 1500, 0.99f, 0};
    check_training(&a);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gradients_attention_only),
        cmocka_unit_test(test_gradients_mlp),
        cmocka_unit_test(test_attention_equals_mha_forward),
        cmocka_unit_test(test_tasks_follow_their_rules),
        cmocka_unit_test(test_determinism),
        cmocka_unit_test(test_init_and_config),
        cmocka_unit_test(test_cards_init),
        cmocka_unit_test(test_gelu_exact),
        cmocka_unit_test(test_shape_learner_threads),
        cmocka_unit_test(test_shards),
        cmocka_unit_test(test_no_allocation_after_create),
        cmocka_unit_test(test_ablation_equals_zeroed_wo_rows),
        cmocka_unit_test(test_masses_from_snapshot),
        cmocka_unit_test(test_train_prev_first),
        cmocka_unit_test(test_train_pair_sort),
        cmocka_unit_test(test_train_induction),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
