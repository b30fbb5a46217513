/* train_source.c: the trained model as a model source (train_source.h): the
 * attn_layer of layer i from the snapshot's copy of the held-out example's
 * tensors. Taking the snapshot and training are the trainer's (trainer.c). */
#include "train_source.h"

#include <stdio.h>
#include <string.h>

static int layer_count(const void *self) {
    const train_source *ts = self;
    return ts->tv && ts->tv->active ? ts->tv->cfg.layers : 0;
}

static int layer(const void *self, int i, attn_layer *L) {
    const train_source *ts = self;
    const train_view *tv = ts->tv;
    if (i < 0 || i >= layer_count(self) || !tv->layer[i].attn) return -1;
    const train_layer *t = &tv->layer[i];
    /* as the learner trains: causal, scaled */
    attn_layer_init(L, tv->T, tv->T, tv->cfg.h, tv->cfg.d_model, ATTN_MASK_CAUSAL, 1, 1.0f);
    L->layer = i;
    L->layers = tv->cfg.layers;
    L->seed = tv->cfg.seed;
    L->tokens = ts->labels;
    L->x = t->x; /* the block's LayerNorm of its input */
    L->x_what = i == 0 ? "LayerNorm of embedding + position" : "LayerNorm of layer 1's output";
    L->w_o = t->w_o;
    L->q = t->q, L->k = t->k, L->v = t->v;
    L->scores = t->scores;
    L->attn = t->attn;
    L->concat = t->concat;
    L->out = L->out_full = t->out; /* no head is switched off here */
    return 0;
}

static void describe(const void *self, char *buf, size_t len) {
    const train_source *ts = self;
    const train_view *tv = ts->tv;
    if (!layer_count(self)) {
        snprintf(buf, len, "nothing trained yet");
        return;
    }
    snprintf(buf, len, "trained on %s, step %ld, h = %d, d_model = %d, %d layer%s",
             learn_task(tv->cfg.task)->name, tv->step, tv->cfg.h, tv->cfg.d_model, tv->cfg.layers,
             tv->cfg.layers > 1 ? "s" : "");
}

void train_source_init(model_source *src, train_source *ts, const train_view *tv) {
    memset(ts, 0, sizeof *ts);
    ts->tv = tv;
    if (tv && tv->active) {
        const learn_task_info *info = learn_task(tv->cfg.task);
        for (int i = 0; i < tv->T && i < TRAIN_MAX_T; i++)
            ts->labels[i] = info->symbols[tv->tokens[i]];
    }
    *src = (model_source){layer_count, layer, describe, ts};
}
