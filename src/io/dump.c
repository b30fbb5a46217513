/* dump.c: writes a computed model to a folder as NumPy files (see dump.h). */
#define _POSIX_C_SOURCE 200809L
#include "dump.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "atomic_file.h"
#include "npy.h"

int dump_mkdirs(const char *dir, char *err, size_t errlen) {
    char path[4096];
    if (strlen(dir) == 0 || strlen(dir) >= sizeof path) {
        snprintf(err, errlen, "--dump: bad folder name");
        return -1;
    }
    strcpy(path, dir);
    for (char *p = path + 1;; p++) {
        if (*p == '/' || *p == '\0') {
            char saved = *p;
            *p = '\0';
            struct stat st;
            if (stat(path, &st) == 0) {
                if (!S_ISDIR(st.st_mode)) {
                    snprintf(err, errlen, "cannot write %s: %s exists and is not a folder", dir,
                             path);
                    return -1;
                }
            } else if (mkdir(path, 0777) != 0 && errno != EEXIST) {
                snprintf(err, errlen, "cannot write %s: %s", dir, strerror(errno));
                return -1;
            }
            *p = saved;
            if (saved == '\0') break;
        }
    }
    return 0;
}

static int write_tensor(const char *dir, const char *name, const float *data, int a, int b, int c,
                        char *err, size_t errlen) {
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    int shape[3] = {a, b, c};
    return npy_write_f32(path, data, shape, c > 0 ? 3 : 2, err, errlen);
}

int dump_write(const char *dir, const mha_model *m, const tok_list *toks, char *err,
               size_t errlen) {
    if (dump_mkdirs(dir, err, errlen) != 0) return -1;
    const int n = m->n, d = m->cfg.d_model, h = m->cfg.h, dk = m->d_k;
    struct {
        const char *name;
        const float *data;
        int a, b, c;
    } files[] = {
        {"X.npy", m->x, n, d, 0},           {"W_Q.npy", m->w_q, d, d, 0},
        {"W_K.npy", m->w_k, d, d, 0},       {"W_V.npy", m->w_v, d, d, 0},
        {"W_O.npy", m->w_o, d, d, 0},       {"Q.npy", m->q, n, d, 0},
        {"K.npy", m->k, n, d, 0},           {"V.npy", m->v, n, d, 0},
        {"scores.npy", m->scores, h, n, n}, {"attn.npy", m->attn, h, n, n},
        {"heads.npy", m->heads, h, n, dk},  {"concat.npy", m->concat, n, d, 0},
        {"out.npy", m->out, n, d, 0},
    };
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++)
        if (write_tensor(dir, files[i].name, files[i].data, files[i].a, files[i].b, files[i].c, err,
                         errlen) != 0)
            return -1;

    char path[4200];
    atomic_file af;
    snprintf(path, sizeof path, "%s/tokens.txt", dir);
    if (atomic_open(&af, path, err, errlen) != 0) return -1;
    for (int t = 0; t < toks->count; t++) fprintf(af.fp, "%s\n", toks->tokens[t]);
    if (atomic_commit(&af, err, errlen) != 0) return -1;

    snprintf(path, sizeof path, "%s/meta.json", dir);
    if (atomic_open(&af, path, err, errlen) != 0) return -1;
    fprintf(af.fp,
            "{\n  \"n\": %d,\n  \"d_model\": %d,\n  \"h\": %d,\n  \"d_k\": %d,\n  \"d_v\": %d,\n"
            "  \"seed\": %llu,\n  \"mask\": \"%s\",\n  \"scale\": %s,\n"
            "  \"weights\": {\"init\": \"glorot_uniform\", \"limit\": %.9g, "
            "\"shape\": [%d, %d], \"files\": [\"W_Q.npy\", \"W_K.npy\", \"W_V.npy\", "
            "\"W_O.npy\"], \"head_split\": \"head i uses columns [i*d_k, (i+1)*d_k) of W_Q, "
            "W_K, W_V and rows [i*d_v, (i+1)*d_v) of W_O\"}\n}\n",
            n, d, h, dk, dk, (unsigned long long)m->cfg.seed,
            m->cfg.mask == MHA_MASK_CAUSAL ? "causal" : "none", m->cfg.no_scale ? "false" : "true",
            (double)sqrtf(3.0f / (float)d), d, d);
    return atomic_commit(&af, err, errlen);
}
