/* learn.h: train a tiny transformer on toy tasks, in C, so its heads can be watched
 * while they specialise. Token + learned position embeddings, 1 or 2 pre-LayerNorm
 * blocks of causal multi-head attention (the core's W^Q, W^K, W^V, W^O layout and
 * attention kernel) with an optional MLP, final LayerNorm, unembedding, cross-entropy
 * on the task's target positions. The model is transformer.h's (forward and backward
 * by hand); this trainer adds the tasks and AdamW. No SDL, no files,
 * no globals: a window can drive one learner from a worker thread. */
#ifndef MHAVIZ_LEARN_H
#define MHAVIZ_LEARN_H

#include <stddef.h>
#include <stdint.h>

#define LEARN_MAX_LAYERS 2
#define LEARN_MAX_D_MODEL 512
#define LEARN_MAX_BATCH 1024
#define LEARN_MAX_HELDOUT 4096

#define LEARN_DEFAULT_BATCH 32
#define LEARN_DEFAULT_LR 3e-3f
#define LEARN_DEFAULT_HELDOUT 256
#define LEARN_WEIGHT_DECAY 0.01f
#define LEARN_INIT_STD 0.02f

/* ------------------------------------------------------------------------------ */
/* tasks                                                                           */

typedef enum {
    LEARN_PREV = 0,  /* target at i: the token at i-1 */
    LEARN_FIRST,     /* target at i: the token at 0 */
    LEARN_PAIR,      /* target at i: (token at 0, token at i-1), one of 25 classes */
    LEARN_SORT,      /* 6 digits from {0,1,2}, then the same sorted (minGPT's demo) */
    LEARN_INDUCTION, /* a block of distinct symbols repeated: copy from the first copy */
    LEARN_CARDS,     /* 16 cards key=value, 8 questions: (asked card's value, card 0's value) */
    LEARN_TASK_COUNT
} learn_task_id;

typedef struct {
    const char *name;              /* "prev", as on the command line */
    const char *what;              /* one line: the rule and what the heads should show */
    int vocab;                     /* input symbols */
    int classes;                   /* output classes */
    int seq_len;                   /* T, tokens per example */
    int default_layers;            /* 2 for induction, 1 otherwise */
    int default_steps;             /* a budget that reaches the task's accuracy */
    const char *const *symbols;    /* (vocab) input symbol strings, for token labels */
    const char *const *class_name; /* (classes) output class strings ("A,B" for pair) */
    float init_std;                /* N(0, init_std^2) for matrices and embeddings; 0: 0.02 */
    int default_d_model;           /* d_model when none is asked for; 0: 32 */
} learn_task_info;

/* The task's description, or NULL for an id out of range. */
const learn_task_info *learn_task(learn_task_id id);

/* The task's d_model when none is asked for: 16 for cards (where both too few
 * heads and too many, small heads lose: its sweep of h tells the story), 32 for the
 * others; 32 for an id out of range. */
int learn_task_d_model(learn_task_id id);

/* The id named name ("prev", "first", "pair", "sort", "induction", "cards"), or -1. */
int learn_task_find(const char *name);

/* Draws one example: tokens (T) in [0, vocab), targets (T) in [0, classes) at the
 * task's target positions and -1 elsewhere. Advances *rng. Every example is either
 * held-out or training by a hash of its tokens (learn_task_is_heldout); heldout
 * selects which kind is drawn, so no held-out example is ever trained on. */
void learn_task_sample(int *tokens, int *targets, learn_task_id id, int heldout, uint64_t *rng);

/* 1 if the example with these tokens (T) belongs to the held-out quarter. */
int learn_task_is_heldout(const int *tokens, int seq_len);

/* ------------------------------------------------------------------------------ */
/* the learner                                                                     */

typedef enum { LEARN_ACT_GELU = 0, LEARN_ACT_RELU = 1 } learn_act;

/* Zero means "default" in every field (see learn_config_resolve). */
typedef struct {
    learn_task_id task;
    int layers;    /* 1 or 2; 0: the task's default */
    int h;         /* heads, divides d_model; 0: 4 */
    int d_model;   /* model width, 1..512; 0: the task's (16 for cards, else 32) */
    int mlp;       /* 1: an MLP block (4 d_model wide) after each attention block */
    learn_act act; /* the MLP's non-linearity: GELU (exact, erf) or ReLU */
    int batch;     /* examples per step, 1..1024; 0: 32 */
    float lr;      /* AdamW learning rate; 0: 3e-3 */
    uint64_t seed; /* weights, training batches, held-out set; 0: 1 */
    int heldout;   /* held-out examples, 1..4096; 0: 256 */
} learn_config;

void learn_config_resolve(learn_config *cfg);

/* Checks a resolved cfg. Returns 0, or -1 with a one-line message naming the
 * command-line option in err. */
int learn_config_check(const learn_config *cfg, char *err, size_t errlen);

typedef struct learn_model learn_model;

/* Allocates everything the learner will ever use (parameters, gradients, AdamW
 * moments, activations, the held-out set) and initialises the weights:
 * N(0, 0.02) for every matrix and embedding (the task's init_std when it names
 * one: cards' 0.1), LayerNorm gains 1, biases 0.
 * Returns NULL with a message in err on a bad config or out of memory. */
learn_model *learn_create(const learn_config *cfg, char *err, size_t errlen);
void learn_destroy(learn_model *l); /* NULL is fine */

/* A learner as learn_create makes it (the same model, initialisation and AdamW)
 * but of the caller's shape: vocab input symbols, classes outputs, sequences of
 * seq_len tokens (1..1024), and no held-out set. For --bench's training step at
 * sizes no task has: drive it with learn_gradients and learn_update on batches
 * of (cfg.batch, seq_len); learn_step and the evaluations are not for it. */
learn_model *learn_create_shape(const learn_config *cfg, int vocab, int classes, int seq_len,
                                char *err, size_t errlen);

/* The resolved configuration. */
const learn_config *learn_get_config(const learn_model *l);
/* AdamW steps taken so far. */
long learn_steps_done(const learn_model *l);

/* One training step: draws a fresh batch, forward, backward, one AdamW update.
 * Returns the batch's mean cross-entropy over target positions (before the
 * update). Allocates nothing. */
float learn_step(learn_model *l);

/* Forward and backward on a given batch, tokens and targets (batch, T) as in
 * learn_task_sample, 1 <= batch <= cfg.batch: fills every parameter's gradient
 * (see learn_param) and returns the mean loss. No update. For tests. */
float learn_gradients(learn_model *l, const int *tokens, const int *targets, int batch);

/* FLOPs of one training step of cfg (resolved) on sequences of T tokens, vocab in,
 * classes out: forward and backward of every product, the attention's on the
 * visible half of each (T, T). */
double learn_step_flops(const learn_config *cfg, int vocab, int classes, int T);

/* A step of at least this many FLOPs (about 10 ms on one core) splits its batch
 * into two halves, each run forward and backward on its own activations' rows and
 * gradient block, side by side on two workers (mm_parallel), then summed: a batch
 * of B runs as (B + 1) / 2 and B / 2. The split depends on the configuration only,
 * never on the threads there are, so a run gives the same numbers on 1 or 2
 * workers. Below it a step is one pass (the tasks' default sizes all are). */
#define LEARN_SHARD_MIN_FLOPS 1.0e9
/* 2 when a learner of cfg splits its batches (learn_create then holds a second
 * gradient block), else 1. */
int learn_config_shards(const learn_config *cfg, int vocab, int classes, int T);
int learn_shards(const learn_model *l);

/* One AdamW update from the gradients in place (as learn_step does). */
void learn_update(learn_model *l);

/* Held-out accuracy (0..1, over every target position of the held-out set) and
 * mean loss with the heads flagged in ablate removed: ablate is (layers, h), 1
 * zeroes that head's band of Concat before W^O; NULL removes none. */
void learn_eval(learn_model *l, const unsigned char *ablate, float *acc, float *loss);

/* Per-head attention masses over the held-out target rows, each (layers, h):
 * mass_prev the mean weight on key i-1 and mass_first on key 0, both over the
 * rows i >= 2 (in row 1 the two are one key, which would count for both);
 * mass_induction on the key after the previous occurrence of the current token,
 * over the rows where there is one (0 if there is none anywhere). */
void learn_head_masses(learn_model *l, float *mass_prev, float *mass_first, float *mass_induction);

/* The held-out example shown in the window: the first of the held-out set.
 * tokens and targets are (T); valid while the learner lives. */
void learn_example(const learn_model *l, const int **tokens, const int **targets);

/* Runs the forward pass on the held-out example and copies its attention maps,
 * (layers, h, T, T) row-major, into attn. */
void learn_snapshot(learn_model *l, float *attn);

/* The held-out example's tensors in one layer, pointers into the learner valid
 * until its next call. Rows are the example's T positions. */
typedef struct {
    const float *x;      /* (T, d) residual stream into the block */
    const float *ln1;    /* (T, d) its LayerNorm: the X the heads see */
    const float *q;      /* (T, d) X W^Q; head i is columns [i d_k, (i+1) d_k) */
    const float *k;      /* (T, d) X W^K */
    const float *v;      /* (T, d) X W^V */
    const float *scores; /* (h, T, T) Q_i K_i^T / sqrt(d_k), -inf above the diagonal */
    const float *attn;   /* (h, T, T) row-wise softmax */
    const float *concat; /* (T, d) Concat(head_1 .. head_h) */
    const float *out;    /* (T, d) Concat W^O */
    const float *w_o;    /* (d, d) the block's W^O (a parameter, not a copy) */
    const float *resid;  /* (T, d) residual stream after the block (and its MLP) */
} learn_layer_tensors;

/* Runs the forward pass on the held-out example and points layers[0 .. layers-1]
 * at its tensors; *logits (T, classes) if logits is not NULL. */
void learn_example_tensors(learn_model *l, learn_layer_tensors *layers, const float **logits);

/* Parameters, in the order of the flat block, for dumps and tests. */
typedef struct {
    const char *name; /* "wte", "layer1.W_Q", "lnf.gain", ... */
    int ndim;         /* 1 or 2 */
    int shape[2];
    float *data; /* the parameter, row-major */
    float *grad; /* its gradient from the last learn_gradients / learn_step */
} learn_tensor;

int learn_param_count(const learn_model *l);
/* Fills t for parameter i, 0 <= i < learn_param_count(l). */
void learn_param(const learn_model *l, int i, learn_tensor *t);

#endif
