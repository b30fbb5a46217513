/* regroup.c: K/V heads regrouped by mean-pooling their projections (regroup.h). */
#include "regroup.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* dst (rows, h_kv hd) = for each new head g the mean of src's heads g r .. g r + r - 1
   (src (rows, h_kv r hd), row-major): columns of W^K (d rows) or a bias (1 row). */
static void pool_columns(float *dst, const float *src, int rows, int h_kv, int r, int hd) {
    const int w_src = h_kv * r * hd, w_dst = h_kv * hd;
    for (int row = 0; row < rows; row++)
        for (int g = 0; g < h_kv; g++)
            for (int c = 0; c < hd; c++) {
                double sum = 0.0;
                for (int j = 0; j < r; j++)
                    sum += src[(size_t)row * w_src + (size_t)(g * r + j) * hd + c];
                dst[(size_t)row * w_dst + (size_t)g * hd + c] = (float)(sum / r);
            }
}

transformer *tf_regroup_kv(const transformer *tf, int h_kv, char *err, size_t errlen) {
    const model_spec *s = &tf->spec;
    if (h_kv < 1 || s->h_kv % h_kv != 0) {
        snprintf(err, errlen, "%d K/V heads do not divide the model's %d", h_kv, s->h_kv);
        return NULL;
    }
    const int d = s->d_model, hd = s->head_dim, r = s->h_kv / h_kv, kvd = h_kv * hd;
    const int bias = tf->p.layer[0].b_k != NULL;
    const size_t per = 2 * ((size_t)d * kvd + (bias ? (size_t)kvd : 0)); /* W^K, W^V, b */
    /* one block: the transformer's struct, then each layer's pooled projections */
    const size_t head = (sizeof(transformer) + sizeof(float) - 1) / sizeof(float);
    float *block = malloc((head + per * (size_t)s->layers) * sizeof(float));
    if (!block) {
        snprintf(err, errlen, "out of memory for %d K/V heads", h_kv);
        return NULL;
    }
    transformer *out = (transformer *)(void *)block;
    *out = *tf;
    out->spec.h_kv = h_kv;
    float *p = block + head;
    for (int i = 0; i < s->layers; i++) {
        const tf_layer_params *src = &tf->p.layer[i];
        tf_layer_params *dst = &out->p.layer[i];
        dst->w_k = p, p += (size_t)d * kvd;
        dst->w_v = p, p += (size_t)d * kvd;
        pool_columns(dst->w_k, src->w_k, d, h_kv, r, hd);
        pool_columns(dst->w_v, src->w_v, d, h_kv, r, hd);
        if (bias && src->b_k && src->b_v) {
            dst->b_k = p, p += kvd;
            dst->b_v = p, p += kvd;
            pool_columns(dst->b_k, src->b_k, 1, h_kv, r, hd);
            pool_columns(dst->b_v, src->b_v, 1, h_kv, r, hd);
        }
    }
    return out;
}

void tf_regroup_free(transformer *r) {
    free(r);
}
