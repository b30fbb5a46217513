/* dump.c: writes a computed model to a folder as NumPy files (see dump.h). */
#define _POSIX_C_SOURCE 200809L
#include "dump.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
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
        {"out.npy", m->out, n, d, 0},       {"out_full.npy", m->out_full, n, d, 0},
    };
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++)
        if (write_tensor(dir, files[i].name, files[i].data, files[i].a, files[i].b, files[i].c, err,
                         errlen) != 0)
            return -1;

    char path[4200];
    atomic_file af;
    snprintf(path, sizeof path, "%s/tokens.txt", dir);
    if (atomic_open(&af, path, err, errlen) != 0) return -1;
    for (int t = 0; t < n; t++) fprintf(af.fp, "%s\n", mha_token(m, toks, t));
    if (atomic_commit(&af, err, errlen) != 0) return -1;

    snprintf(path, sizeof path, "%s/meta.json", dir);
    if (atomic_open(&af, path, err, errlen) != 0) return -1;
    const int patterns = m->cfg.weights == MHA_WEIGHTS_PATTERNS;
    fprintf(af.fp,
            "{\n  \"n\": %d,\n  \"n_real\": %d,\n  \"d_model\": %d,\n  \"h\": %d,\n"
            "  \"d_k\": %d,\n  \"d_v\": %d,\n  \"seed\": %llu,\n  \"mask\": \"%s\",\n",
            n, m->n_real, d, h, dk, dk, (unsigned long long)m->cfg.seed,
            m->cfg.mask == MHA_MASK_CAUSAL ? "causal" : "none");
    if (m->cfg.pad)
        fprintf(af.fp, "  \"pad\": %d,\n", m->cfg.pad);
    else
        fprintf(af.fp, "  \"pad\": null,\n");
    /* the temperature with the fewest digits that read back as the same float */
    char temp[32];
    for (int prec = 1; prec <= 9; prec++) {
        snprintf(temp, sizeof temp, "%.*g", prec, (double)m->cfg.temperature);
        if (strtof(temp, NULL) == m->cfg.temperature && !strchr(temp, 'e')) break;
    }
    fprintf(af.fp, "  \"scale\": %s,\n  \"temperature\": %s,\n  \"ablated\": [",
            m->cfg.no_scale ? "false" : "true", temp);
    for (int i = 0, first = 1; i < h; i++)
        if (mha_config_is_ablated(&m->cfg, i))
            fprintf(af.fp, first ? "%d" : ", %d", i + 1), first = 0;
    fprintf(af.fp, "],\n  \"head_patterns\": ");
    if (patterns) {
        fprintf(af.fp, "[");
        for (int i = 0; i < h; i++)
            fprintf(af.fp, "%s\"%s\"", i ? ", " : "", mha_head_pattern_name(m, i));
        fprintf(af.fp, "],\n");
    } else {
        fprintf(af.fp, "null,\n");
    }
    fprintf(af.fp,
            "  \"weights\": {\"mode\": \"%s\", \"init\": \"glorot_uniform\", \"limit\": %.9g, "
            "\"shape\": [%d, %d], \"files\": [\"W_Q.npy\", \"W_K.npy\", \"W_V.npy\", "
            "\"W_O.npy\"], \"head_split\": \"head i uses columns [i*d_k, (i+1)*d_k) of W_Q, "
            "W_K, W_V and rows [i*d_v, (i+1)*d_v) of W_O\"%s}\n}\n",
            patterns ? "patterns" : "random", (double)sqrtf(3.0f / (float)d), d, d,
            patterns ? ", \"designed\": \"the W_Q and W_K columns of every head with a pattern "
                       "other than none are constructed; all else is glorot_uniform\""
                     : "");
    return atomic_commit(&af, err, errlen);
}
