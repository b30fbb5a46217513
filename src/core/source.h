/* source.h: a model source, whatever made the model: how many layers it has, layer
 * i on the current sequence as an attn_layer, and one line that says what it is.
 * The random/designed model is a source of one layer (mha_source, mha_layer.c), a
 * trained model one of L layers (train_source.c, from the window's trainer's
 * snapshot); a loaded checkpoint will be another. The view
 * sees only the attn_layer a source fills. */
#ifndef MHAVIZ_SOURCE_H
#define MHAVIZ_SOURCE_H

#include <stddef.h>

#include "layer.h"

typedef struct model_source {
    /* layers the model has (>= 1) */
    int (*layer_count)(const void *self);
    /* fills *L with layer i (0-based, < layer_count), pointers into the source's own
       buffers, valid until the source next changes; returns 0, or -1 when the
       layer cannot be shown (L is then left as it was) */
    int (*layer)(const void *self, int i, attn_layer *L);
    /* one line: "random weights, seed 1" or "trained on pair, step 200" */
    void (*describe)(const void *self, char *buf, size_t len);
    const void *self;
} model_source;

/* Convenience wrappers: 0 layers and -1 for a source with no functions. */
static inline int model_source_layers(const model_source *s) {
    return s && s->layer_count ? s->layer_count(s->self) : 0;
}
static inline int model_source_layer(const model_source *s, int i, attn_layer *L) {
    if (!s || !s->layer || i < 0 || i >= model_source_layers(s)) return -1;
    return s->layer(s->self, i, L);
}

#endif
