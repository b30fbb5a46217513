/* tf_driver.c: runs the transformer module (src/learn/transformer.h) for
 * tf_check.py and writes what it did as .npy: every parameter (all drawn at random,
 * biases and gains too, so a dropped term shows), a batch, its logits, loss and
 * every gradient; then the trace of sequence 0, with no head off and with
 * OFF_LAYER's head OFF_HEAD off, and the attn_layer filled for layer index 1.
 * usage: tf_driver OUT LAYERS H D_MODEL VOCAB CTX T B MLP ACT(gelu|relu|tanh) BIAS TIED EPS
 *                  SEED OFF_LAYER OFF_HEAD */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dump.h"
#include "layers.h"
#include "npy.h"
#include "rng.h"
#include "transformer.h"

static char g_dir[2048], g_err[512];
static int g_rc;

static void put(const char *name, const float *data, int d0, int d1, int d2) {
    char path[4096];
    int shape[3] = {d0, d1, d2};
    const int ndim = d2 ? 3 : d1 ? 2 : 1;
    snprintf(path, sizeof path, "%s/%s.npy", g_dir, name);
    if (!g_rc && npy_write_f32(path, data, shape, ndim, g_err, sizeof g_err) != 0) g_rc = 1;
}

static void put_trace(const tf_trace *t, const char *tag) {
    const tf_config *c = &t->tf->cfg;
    const int n = t->n, d = c->d_model, h = c->h;
    char nm[64];
    for (int i = 0; i < c->layers; i++) {
        const tf_layer_acts *la = &t->a.layer[i];
#define PUT(field, ...)                                                                            \
    (snprintf(nm, sizeof nm, "%s_L%d_%s", tag, i + 1, #field), put(nm, __VA_ARGS__))
        PUT(ln1, la->ln1, n, d, 0);
        PUT(q, la->q, n, d, 0);
        PUT(k, la->k, n, d, 0);
        PUT(v, la->v, n, d, 0);
        PUT(scores, la->scores, h, n, n);
        PUT(attn, la->attn, h, n, n);
        PUT(concat, la->concat, n, d, 0);
        PUT(out, la->attproj, n, d, 0);
        PUT(out_full, t->out_full + (size_t)i * n * d, n, d, 0);
#undef PUT
    }
    snprintf(nm, sizeof nm, "%s_logits", tag);
    put(nm, t->a.logits, n, c->classes, 0);
}

/* The attn_layer for layer index 1 (the second layer) and its numbers. */
static void put_attn_layer(const tf_trace *t, const char *tag) {
    attn_layer L;
    tf_trace_layer(&L, t, 1, NULL);
    const int n = L.n, d = L.d_model, h = L.h;
    const float meta[] = {(float)L.layer,
                          (float)L.layers,
                          (float)L.n,
                          (float)L.h,
                          (float)L.d_k,
                          L.scale,
                          (float)L.mask,
                          (float)L.scaled,
                          L.temperature,
                          (float)attn_layer_off_count(&L),
                          (float)(L.out == L.out_full)};
    char nm[64];
#define PUT(field, ...) (snprintf(nm, sizeof nm, "%s_%s", tag, #field), put(nm, __VA_ARGS__))
    PUT(meta, meta, (int)(sizeof meta / sizeof meta[0]), 0, 0);
    PUT(x, L.x, n, d, 0);
    PUT(q, L.q, n, d, 0);
    PUT(k, L.k, n, d, 0);
    PUT(v, L.v, n, d, 0);
    PUT(scores, L.scores, h, n, n);
    PUT(attn, L.attn, h, n, n);
    PUT(concat, L.concat, n, d, 0);
    PUT(w_o, L.w_o, d, d, 0);
    PUT(out, L.out, n, d, 0);
    PUT(out_full, L.out_full, n, d, 0);
#undef PUT
}

/* Every parameter at random: gains near 1, the rest N(0, 0.2^2). */
static void randomise(transformer *tf, uint64_t *rng) {
    for (int i = 0; i < tf->n_tensors; i++) {
        const tf_tensor *x = &tf->tensors[i];
        const size_t n = (size_t)x->shape[0] * (x->ndim == 2 ? (size_t)x->shape[1] : 1);
        const int gain = strstr(x->name, ".gain") != NULL;
        for (size_t j = 0; j < n; j++) x->data[j] = (float)(gain + 0.2 * rng_normal(rng));
    }
}

/* Forward, loss and backward on the batch as the trainer's learn_gradients does
 * them; writes the batch, logits, loss, parameters and gradients. */
static void put_gradients(transformer *tf, const int *tok, const int *tgt, const float *ftok,
                          const float *ftgt, int B, int T) {
    const tf_config *rc = &tf->cfg;
    const int N = B * T;
    tf_forward(tf, &tf->a, tok, B, T, NULL);
    int count = 0;
    const float loss =
        (float)(crossentropy_forward(tf->a.probs, tf->a.logits, tgt, N, rc->classes, &count) /
                count);
    memset(tf->grads, 0, tf->n_params * sizeof(float));
    crossentropy_backward(tf->da.logits, tf->a.probs, tgt, N, rc->classes, 1.0f / (float)count);
    tf_backward(tf, tok, B, T);
    put("tokens", ftok, B, T, 0);
    put("targets", ftgt, B, T, 0);
    put("logits", tf->a.logits, B * T, rc->classes, 0);
    put("loss", &loss, 1, 0, 0);
    for (int i = 0; i < tf->n_tensors && !g_rc; i++) {
        const tf_tensor *x = &tf->tensors[i];
        char nm[64];
        snprintf(nm, sizeof nm, "param_%s", x->name);
        put(nm, x->data, x->shape[0], x->ndim == 2 ? x->shape[1] : 0, 0);
        snprintf(nm, sizeof nm, "grad_%s", x->name);
        put(nm, x->grad, x->shape[0], x->ndim == 2 ? x->shape[1] : 0, 0);
    }
}

int main(int argc, char **argv) {
    if (argc != 17) {
        fprintf(stderr, "usage: tf_driver OUT LAYERS H D_MODEL VOCAB CTX T B MLP ACT BIAS TIED "
                        "EPS SEED OFF_LAYER OFF_HEAD\n");
        return 2;
    }
    snprintf(g_dir, sizeof g_dir, "%s", argv[1]);
    tf_config c = {.layers = atoi(argv[2]),
                   .h = atoi(argv[3]),
                   .d_model = atoi(argv[4]),
                   .vocab = atoi(argv[5]),
                   .ctx = atoi(argv[6]),
                   .mlp = atoi(argv[9]),
                   .act = strcmp(argv[10], "relu") == 0   ? TF_ACT_RELU
                          : strcmp(argv[10], "tanh") == 0 ? TF_ACT_GELU_TANH
                                                          : TF_ACT_GELU,
                   .attn_bias = atoi(argv[11]),
                   .tied = atoi(argv[12]),
                   .ln_eps = (float)atof(argv[13])};
    const int T = atoi(argv[7]), B = atoi(argv[8]), off_layer = atoi(argv[15]),
              off_head = atoi(argv[16]);
    uint64_t rng = rng_stream(strtoull(argv[14], NULL, 10), 9);
    transformer *tf = tf_create(&c, B, T, g_err, sizeof g_err);
    if (!tf || dump_mkdirs(g_dir, g_err, sizeof g_err) != 0) {
        fprintf(stderr, "tf_driver: %s\n", g_err);
        tf_destroy(tf);
        return 1;
    }
    const tf_config *rc = &tf->cfg;
    randomise(tf, &rng);
    int *tok = malloc(sizeof(int) * (size_t)B * T), *tgt = malloc(sizeof(int) * (size_t)B * T);
    float *ftok = malloc(sizeof(float) * (size_t)B * T),
          *ftgt = malloc(sizeof(float) * (size_t)B * T);
    unsigned char *off = calloc((size_t)rc->layers * rc->h, 1);
    tf_trace *tr = tf_trace_create(tf, T);
    if (!tok || !tgt || !ftok || !ftgt || !off || !tr) {
        fprintf(stderr, "tf_driver: out of memory\n");
        return 1;
    }
    for (int i = 0; i < B * T; i++) {
        tok[i] = rng_below(&rng, rc->vocab);
        tgt[i] = i % 5 == 3 ? -1 : rng_below(&rng, rc->classes); /* some rows not scored */
        ftok[i] = (float)tok[i], ftgt[i] = (float)tgt[i];
    }

    put_gradients(tf, tok, tgt, ftok, ftgt, B, T);

    /* the trace of sequence 0: every head on, then one off */
    tf_trace_run(tr, tok, NULL);
    put_trace(tr, "trace");
    if (rc->layers >= 2) put_attn_layer(tr, "al");
    off[(size_t)off_layer * rc->h + off_head] = 1;
    tf_trace_run(tr, tok, off);
    put_trace(tr, "off");
    if (rc->layers >= 2) put_attn_layer(tr, "aloff");

    if (g_rc) fprintf(stderr, "tf_driver: %s\n", g_err);
    free(tok), free(tgt), free(ftok), free(ftgt), free(off);
    tf_trace_destroy(tr);
    tf_destroy(tf);
    return g_rc;
}
