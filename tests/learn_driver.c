/* learn_driver.c: runs the learner for torch_check.py and writes what it did as
 * .npy: for each of K steps the parameters before it, the batch, the loss and
 * every gradient, then the parameters after the last AdamW update. The numbers
 * are checked in Python against PyTorch autograd and torch.optim.AdamW.
 * usage: learn_driver OUT TASK LAYERS H D_MODEL MLP ACT(gelu|relu) BATCH SEED WARM K */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dump.h"
#include "learn.h"
#include "npy.h"

static int write_params(const learn_model *l, const char *dir, int k, int grads, char *err,
                        size_t errlen) {
    for (int i = 0; i < learn_param_count(l); i++) {
        learn_tensor t;
        learn_param(l, i, &t);
        char path[4096];
        snprintf(path, sizeof path, "%s/k%d_%s_%s.npy", dir, k, grads ? "grad" : "param", t.name);
        if (npy_write_f32(path, grads ? t.grad : t.data, t.shape, t.ndim, err, errlen) != 0)
            return -1;
    }
    return 0;
}

int main(int argc, char **argv) {
    if (argc != 12) {
        fprintf(stderr,
                "usage: learn_driver OUT TASK LAYERS H D_MODEL MLP ACT BATCH SEED WARM K\n");
        return 2;
    }
    const char *dir = argv[1];
    learn_config c = {0};
    c.task = (learn_task_id)learn_task_find(argv[2]);
    c.layers = atoi(argv[3]);
    c.h = atoi(argv[4]);
    c.d_model = atoi(argv[5]);
    c.mlp = atoi(argv[6]);
    c.act = strcmp(argv[7], "relu") == 0 ? LEARN_ACT_RELU : LEARN_ACT_GELU;
    c.batch = atoi(argv[8]);
    c.seed = strtoull(argv[9], NULL, 10);
    int warm = atoi(argv[10]), steps = atoi(argv[11]);
    char err[512];
    if ((int)c.task < 0) {
        fprintf(stderr, "learn_driver: unknown task %s\n", argv[2]);
        return 2;
    }
    learn_model *l = learn_create(&c, err, sizeof err);
    if (!l || dump_mkdirs(dir, err, sizeof err) != 0) {
        fprintf(stderr, "learn_driver: %s\n", err);
        learn_destroy(l);
        return 1;
    }
    for (int s = 0; s < warm; s++) learn_step(l);
    printf("shards %d\n", learn_shards(l)); /* torch_check: a split run is one */

    const learn_task_info *ti = learn_task(c.task);
    const int T = ti->seq_len, B = c.batch;
    int *tok = malloc(sizeof(int) * (size_t)B * T), *tgt = malloc(sizeof(int) * (size_t)B * T);
    float *ftok = malloc(sizeof(float) * (size_t)B * T),
          *ftgt = malloc(sizeof(float) * (size_t)B * T);
    int rc = !tok || !tgt || !ftok || !ftgt;
    uint64_t rng = c.seed * 7919u + 13u;
    for (int k = 1; k <= steps && rc == 0; k++) {
        for (int b = 0; b < B; b++) learn_task_sample(tok + b * T, tgt + b * T, c.task, 0, &rng);
        for (int i = 0; i < B * T; i++) ftok[i] = (float)tok[i], ftgt[i] = (float)tgt[i];
        rc = write_params(l, dir, k, 0, err, sizeof err) != 0;
        float loss = learn_gradients(l, tok, tgt, B);
        learn_update(l);
        char path[4096];
        int shape[2] = {B, T}, one = 1;
        snprintf(path, sizeof path, "%s/k%d_tokens.npy", dir, k);
        rc = rc || npy_write_f32(path, ftok, shape, 2, err, sizeof err) != 0;
        snprintf(path, sizeof path, "%s/k%d_targets.npy", dir, k);
        rc = rc || npy_write_f32(path, ftgt, shape, 2, err, sizeof err) != 0;
        snprintf(path, sizeof path, "%s/k%d_loss.npy", dir, k);
        rc = rc || npy_write_f32(path, &loss, &one, 1, err, sizeof err) != 0;
        rc = rc || write_params(l, dir, k, 1, err, sizeof err) != 0;
    }
    if (rc == 0) rc = write_params(l, dir, steps + 1, 0, err, sizeof err) != 0;
    if (rc) fprintf(stderr, "learn_driver: %s\n", err);
    free(tok), free(tgt), free(ftok), free(ftgt);
    learn_destroy(l);
    return rc;
}
