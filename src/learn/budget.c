/* budget.c: learn_create's bytes counted from the configuration (budget.h). The
 * counts follow transformer.c's params_point and acts_point and learn.c's
 * learn_create; tests/train_safe_check.py compares them with the peak resident
 * memory of real runs. And a training step's flops and estimated seconds. */
#include "budget.h"

#include <stdio.h>

double learn_config_bytes(const learn_config *c) {
    const learn_task_info *t = learn_task(c->task);
    if (!t) return 0.0;
    const double d = c->d_model, ff = 4.0 * c->d_model, L = c->layers, T = t->seq_len;
    const double V = t->vocab, C = t->classes, B = c->batch, h = c->h;
    /* parameters: embeddings, per block LayerNorm and the four d x d matrices (and
       the MLP), final LayerNorm, unembedding */
    double block = 2 * d + 4 * d * d;
    if (c->mlp) block += 2 * d + d * ff + ff + ff * d + d;
    const double params = V * d + T * d + L * block + 2 * d + d * C + C;
    /* activations at (B, T): the residual in, per block 7 rows of d, 2 of
       LayerNorm statistics and the (h, T, T) scores and softmax (with the MLP 2
       rows of d, 2 of statistics, 2 of d_ff), the final LayerNorm, logits, probs */
    const double bt = B * T, bhtt = B * h * T * T;
    double layer = 7 * bt * d + 2 * bt + 2 * bhtt;
    if (c->mlp) layer += 2 * bt * d + 2 * bt + 2 * bt * ff;
    const double acts = bt * d + L * layer + bt * d + 2 * bt + 2 * bt * C;
    /* the backward's gradients: the same for one layer (transformer.c's stream_grad) */
    const double grads = bt * d + layer + bt * d + 2 * bt + 2 * bt * C;
    const double ints = 2.0 * (B + c->heldout) * T;
    /* a split step (learn_config_shards) holds a second gradient block */
    const double per_param = 4 + (learn_config_shards(c, t->vocab, t->classes, t->seq_len) > 1);
    return 4.0 * (per_param * params + acts + grads) + 4.0 * ints;
}

int learn_config_check_memory(const learn_config *c, char *err, size_t errlen) {
    const double bytes = learn_config_bytes(c);
    if (bytes <= (double)LEARN_MAX_BYTES) return 0;
    const learn_task_info *t = learn_task(c->task);
    snprintf(err, errlen,
             "--train %s: needs about %.1f GiB (d_model %d, h %d, %d layer%s%s, batch %d, T %d), "
             "more than the bound of %.0f GiB; use a smaller --batch, -H or -d",
             t->name, bytes / (1024.0 * 1024.0 * 1024.0), c->d_model, c->h, c->layers,
             c->layers > 1 ? "s" : "", c->mlp ? ", MLP" : "", c->batch, t->seq_len,
             (double)LEARN_MAX_BYTES / (1024.0 * 1024.0 * 1024.0));
    return -1;
}

double learn_config_step_flops(const learn_config *c) {
    const learn_task_info *t = learn_task(c->task);
    if (!t) return 0.0;
    const double d = c->d_model, T = t->seq_len, C = t->classes, B = c->batch;
    /* a block: Q, K, V and W^O (4 products of (T, d) by (d, d)), the scores and
       the weighted sum (2 of (T, d) by (d, T) summed over heads), the MLP's two
       (T, d) by (d, 4d) and back; 2 flops a multiply-add */
    double block = 8 * T * d * d + 4 * T * T * d;
    if (c->mlp) block += 16 * T * d * d;
    const double forward = c->layers * block + 2 * T * d * C;
    return 3.0 * B * forward;
}

double learn_config_step_seconds(const learn_config *c) {
    return learn_config_step_flops(c) / LEARN_STEP_FLOPS_PER_S + LEARN_STEP_OVERHEAD_S;
}
