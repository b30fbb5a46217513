/* checkpoint.c: a checkpoint read into a transformer (checkpoint.h): config.json
 * to a model spec through its family (family.h), the family's names to slots of the
 * transformer's parameters, the weights converted into them. No family's name or
 * field is known here.
 *
 * The set of tensors is checked strictly, both ways: every tensor the config
 * implies must be there with exactly its shape, and any tensor we do not know is
 * an error, never skipped. A checkpoint with extra tensors (cross-attention, an
 * adapter, a value head, layers past n_layer) is a different model from the one
 * we would show: running it without them would draw attention patterns that the
 * real model does not have, with nothing to say so. Only a layer's buffers the
 * family names (GPT-2's causal masks h.N.attn.bias, h.N.attn.masked_bias:
 * constants, not weights) and, in a tied model, an lm_head.weight equal to the
 * token embedding (the unembedding stored twice) are ignored.
 *
 * Every shape is checked against config.json before the float32 block is
 * allocated: a config far larger than its weights (an XL config beside GPT-2
 * small's file) is then a shape mismatch, not "out of memory". The weights are
 * read tensor by tensor in file order (safetensors.c reads, never maps) into the
 * block, each value checked to be finite on the way, and the file is checked at
 * the end not to have changed while it was read: the peak is the float32 block. */
#define _DEFAULT_SOURCE /* realpath, PATH_MAX, O_CLOEXEC */
#include "checkpoint.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config_json.h"
#include "mem_avail.h"
#include "safetensors.h"
#include "weights_set.h"

#define CONFIG_MAX_BYTES (1u << 20) /* config.json is a few hundred bytes */

/* ------------------------------------------------------------------------------ */
/* the files                                                                       */

static int join(char *out, const char *dir, const char *file) {
    int n = snprintf(out, CKPT_PATH_MAX, "%s/%s", dir, file);
    return n < 0 || n >= CKPT_PATH_MAX ? -1 : 0;
}

/* A file that must be there and regular: 1 otherwise (it cannot be read). */
static int need_file(const char *path, char *err, size_t errlen) {
    struct stat st;
    if (stat(path, &st) != 0) return cj_fail(err, errlen, 1, path, "%s", strerror(errno));
    if (!S_ISREG(st.st_mode)) return cj_fail(err, errlen, 1, path, "not a regular file");
    return 0;
}

int ckpt_resolve(const char *path, ckpt_paths *p, char *err, size_t errlen) {
    memset(p, 0, sizeof *p);
    struct stat st;
    if (stat(path, &st) != 0) return cj_fail(err, errlen, 1, path, "%s", strerror(errno));
    size_t len = strlen(path);
    if (len >= CKPT_PATH_MAX) return cj_fail(err, errlen, 1, "model", "path too long");
    if (S_ISDIR(st.st_mode)) {
        memcpy(p->dir, path, len + 1);
        while (len > 1 && p->dir[len - 1] == '/') p->dir[--len] = '\0';
        if (join(p->weights, p->dir, "model.safetensors") != 0)
            return cj_fail(err, errlen, 1, path, "path too long");
        /* no model.safetensors: the shards' index, where there is one */
        struct stat ws;
        char index[CKPT_PATH_MAX];
        if (lstat(p->weights, &ws) != 0 &&
            join(index, p->dir, "model.safetensors.index.json") == 0 && lstat(index, &ws) == 0) {
            memcpy(p->weights, index, sizeof index);
            p->sharded = 1;
        }
    } else if (S_ISREG(st.st_mode)) {
        const char *ext = ".safetensors";
        size_t el = strlen(ext);
        if (len <= el || strcmp(path + len - el, ext) != 0)
            return cj_fail(err, errlen, 2, path, "not a folder or a .safetensors file");
        memcpy(p->weights, path, len + 1);
        const char *slash = strrchr(path, '/');
        if (!slash)
            snprintf(p->dir, sizeof p->dir, ".");
        else if (slash == path)
            snprintf(p->dir, sizeof p->dir, "/");
        else
            snprintf(p->dir, sizeof p->dir, "%.*s", (int)(slash - path), path);
    } else {
        return cj_fail(err, errlen, 1, path, "not a folder or a regular file");
    }
    if (join(p->config, p->dir, "config.json") != 0 || join(p->vocab, p->dir, "vocab.json") != 0 ||
        join(p->merges, p->dir, "merges.txt") != 0)
        return cj_fail(err, errlen, 1, path, "path too long");
    int rc;
    if ((rc = need_file(p->weights, err, errlen)) != 0 ||
        (rc = need_file(p->config, err, errlen)) != 0)
        return rc;
    /* tokenizer.json where there is one (a link or anything else there is read as it) */
    struct stat ts;
    if (join(p->tokenizer, p->dir, "tokenizer.json") != 0)
        return cj_fail(err, errlen, 1, path, "path too long");
    if (lstat(p->tokenizer, &ts) == 0) {
        if ((rc = need_file(p->tokenizer, err, errlen)) != 0) return rc;
    } else {
        p->tokenizer[0] = '\0';
        char txt[CKPT_PATH_MAX]; /* no vocab.json: BERT's vocab.txt, where there is one */
        if (lstat(p->vocab, &ts) != 0 && join(txt, p->dir, "vocab.txt") == 0 &&
            lstat(txt, &ts) == 0) {
            memcpy(p->vocab, txt, sizeof txt);
            p->merges[0] = '\0';
        }
        if ((rc = need_file(p->vocab, err, errlen)) != 0 ||
            (p->merges[0] && (rc = need_file(p->merges, err, errlen)) != 0))
            return rc;
    }
    /* the title's name: the folder's last component, "." and ".." resolved */
    char real[PATH_MAX];
    const char *base = realpath(p->dir, real) ? real : p->dir;
    const char *last = strrchr(base, '/');
    last = last && last[1] ? last + 1 : base;
    snprintf(p->name, sizeof p->name, "%.*s", (int)sizeof p->name - 1, last);
    return 0;
}

/* ------------------------------------------------------------------------------ */
/* config.json                                                                     */

/* The families the loader knows, by model_type. */
static const ckpt_family *const families[] = {
    &ckpt_family_gpt2,       &ckpt_family_llama,   &ckpt_family_mistral, &ckpt_family_qwen2,
    &ckpt_family_qwen3,      &ckpt_family_gemma,   &ckpt_family_phi3,    &ckpt_family_bert,
    &ckpt_family_distilbert, &ckpt_family_roberta, &ckpt_family_albert};

/* The family of config.json's root: 0, or 2 with a message. */
static int family_of(const ckpt_family **out, json_t *root, const char *path, char *err,
                     size_t errlen) {
    json_t *v = json_object_get(root, "model_type");
    *out = &ckpt_family_gpt2; /* GPT-2's own config.json may not say */
    if (!v) return 0;
    if (!json_is_string(v)) return cj_fail(err, errlen, 2, path, "model_type is not a string");
    const char *t = json_string_value(v);
    for (size_t i = 0; i < sizeof families / sizeof families[0]; i++)
        if (strcmp(families[i]->type, t) == 0) {
            *out = families[i];
            return 0;
        }
    return cj_fail(err, errlen, 2, path,
                   "model_type \"%.40s\" is not supported (gpt2, llama, mistral, qwen2, qwen3, "
                   "gemma, phi3, bert, distilbert, roberta, albert)",
                   t);
}

int ckpt_config_parse(ckpt_config *c, const char *text, size_t len, const char *path, char *err,
                      size_t errlen) {
    memset(c, 0, sizeof *c);
    json_error_t jerr;
    json_t *root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
    if (!root) {
        for (char *s = jerr.text; *s; s++)
            if ((unsigned char)*s >= 0x80) *s = '?';
        return cj_fail(err, errlen, 2, path, "not valid JSON: %s (line %d)", jerr.text, jerr.line);
    }
    int rc = 0;
    char e[256];
    if (!json_is_object(root))
        rc = cj_fail(err, errlen, 2, path, "not a JSON object");
    else if ((rc = family_of(&c->family, root, path, err, errlen)) == 0 &&
             (rc = c->family->spec_of(&c->spec, root, path, err, errlen)) == 0 &&
             tf_spec_check(&c->spec, e, sizeof e) != 0)
        rc = cj_fail(err, errlen, 2, path, "%s", e + strlen("transformer: "));
    json_decref(root);
    if (rc) memset(c, 0, sizeof *c);
    return rc;
}

int ckpt_config_read(ckpt_config *c, const char *path, char *err, size_t errlen) {
    memset(c, 0, sizeof *c);
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) return cj_fail(err, errlen, 1, path, "%s", strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return cj_fail(err, errlen, 1, path, "not a regular file");
    }
    if (st.st_size > (off_t)CONFIG_MAX_BYTES) {
        close(fd);
        return cj_fail(err, errlen, 2, path, "%lld bytes: too large for a config (at most %u)",
                       (long long)st.st_size, CONFIG_MAX_BYTES);
    }
    char *buf = malloc((size_t)st.st_size + 1);
    if (!buf) {
        close(fd);
        return cj_fail(err, errlen, 1, path, "out of memory");
    }
    size_t got = 0, want = (size_t)st.st_size;
    while (got < want) {
        ssize_t r = read(fd, buf + got, want - got);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) {
            int e = errno;
            free(buf);
            close(fd);
            return cj_fail(err, errlen, 1, path, "read: %s", strerror(e));
        }
        if (r == 0) break; /* shrank since fstat: parse what is there */
        got += (size_t)r;
    }
    close(fd);
    int rc = ckpt_config_parse(c, buf, got, path, err, errlen);
    free(buf);
    return rc;
}

/* ------------------------------------------------------------------------------ */
/* the weights                                                                     */

/* What one expected tensor is: its name without the prefix, its shape in the file,
 * how it is stored and where it goes (dst NULL until the parameters are allocated):
 * the parameter is (rows, cols) as the transformer keeps it ((in, out); rows 0 for a
 * vector), each third's for CK_SPLIT3. */
typedef struct {
    char name[128];
    int ndim;
    int64_t shape[2];
    ck_layout how;
    int64_t rows, cols;
    int64_t part[3]; /* CK_LINEAR_ROWS: each part's columns (its rows in the file) */
    float *dst[3];
    const st_tensor *t; /* found in the file */
} slot;

/* Where role r (of layer i, for a layer's) goes in p (NULL: not yet allocated) and
 * its (rows, cols); 0 when the spec has no such tensor. */
static int role_target(const model_spec *s, const tf_params *p, int i, ck_role r, float *dst[3],
                       int64_t *rows, int64_t *cols) {
    const int64_t d = s->d_model, ff = s->d_ff, qd = spec_q_dim(s), kvd = spec_kv_dim(s);
    const int64_t e = spec_emb_dim(s);
    const int lnb = spec_norm_bias(s), ln2 = ff > 0;
    const tf_layer_params *l = p ? &p->layer[i] : NULL;
    dst[0] = dst[1] = dst[2] = NULL;
#define T(cond, ptr, r_, c_)                                                                       \
    do {                                                                                           \
        if (!(cond)) return 0;                                                                     \
        dst[0] = p ? (ptr) : NULL;                                                                 \
        *rows = (r_), *cols = (c_);                                                                \
        return 1;                                                                                  \
    } while (0)
    switch (r) {
    case CK_WTE: T(1, p->wte, s->vocab, e);
    case CK_WPE: T(s->pos == SPEC_POS_LEARNED, p->wpe, spec_pos_rows(s), e);
    case CK_WTT: T(s->token_types > 0, p->wtt, s->token_types, e);
    case CK_EMB_LN_G: T(s->post_ln, p->emb_ln_g, 0, e);
    case CK_EMB_LN_B: T(s->post_ln && lnb, p->emb_ln_b, 0, e);
    case CK_EMB_MAP: T(s->d_embed > 0, p->emb_map, e, d);
    case CK_EMB_MAP_B: T(s->d_embed > 0, p->emb_map_b, 0, d);
    case CK_MLM_DENSE: T(s->mlm, p->mlm_dense, d, e);
    case CK_MLM_DENSE_B: T(s->mlm, p->mlm_dense_b, 0, e);
    case CK_MLM_LN_G: T(s->mlm, p->mlm_ln_g, 0, e);
    case CK_MLM_LN_B: T(s->mlm, p->mlm_ln_b, 0, e);
    case CK_MLM_DEC: T(s->mlm && !s->mlm_tied, p->mlm_dec, s->vocab, e);
    case CK_MLM_BIAS: T(s->mlm, p->mlm_bias, 0, s->vocab);
    case CK_LNF_G: T(!s->post_ln, p->lnf_g, 0, d);
    case CK_LNF_B: T(!s->post_ln && lnb, p->lnf_b, 0, d);
    case CK_LM_HEAD: T(s->head == SPEC_HEAD_LINEAR, p->lm_head, s->vocab, d);
    case CK_LN1_G: T(1, l->ln1_g, 0, d);
    case CK_LN1_B: T(lnb, l->ln1_b, 0, d);
    case CK_QKV:
    case CK_QKV_B:
        if (qd != d || kvd != d) return 0;
        if (p) {
            dst[0] = r == CK_QKV ? l->w_q : l->b_q;
            dst[1] = r == CK_QKV ? l->w_k : l->b_k;
            dst[2] = r == CK_QKV ? l->w_v : l->b_v;
        }
        *rows = r == CK_QKV ? d : 0, *cols = d;
        return r == CK_QKV || s->qkv_bias;
    case CK_Q: T(1, l->w_q, d, qd);
    case CK_K: T(1, l->w_k, d, kvd);
    case CK_V: T(1, l->w_v, d, kvd);
    case CK_Q_B: T(s->qkv_bias, l->b_q, 0, qd);
    case CK_K_B: T(s->qkv_bias, l->b_k, 0, kvd);
    case CK_V_B: T(s->qkv_bias, l->b_v, 0, kvd);
    case CK_O: T(1, l->w_o, qd, d);
    case CK_O_B: T(s->o_bias, l->b_o, 0, d);
    case CK_Q_NORM: T(s->qk_norm, l->q_norm, 0, s->head_dim);
    case CK_K_NORM: T(s->qk_norm, l->k_norm, 0, s->head_dim);
    case CK_LN2_G: T(ln2, l->ln2_g, 0, d);
    case CK_LN2_B: T(ln2 && lnb, l->ln2_b, 0, d);
    case CK_GATE: T(ln2 && spec_gated(s), l->w_gate, d, ff);
    case CK_GATE_UP: return 0; /* CK_LINEAR_ROWS only: rows_target */
    case CK_FC: T(ln2, l->w_fc, d, ff);
    case CK_FC_B: T(ln2 && s->mlp_bias, l->b_fc, 0, ff);
    case CK_PROJ: T(ln2, l->w_proj, ff, d);
    case CK_PROJ_B: T(ln2 && s->mlp_bias, l->b_proj, 0, d);
    }
#undef T
    return 0;
}

/* A CK_LINEAR_ROWS tensor's parts: Q, K, V (CK_QKV) or gate, up (CK_GATE_UP), each
   (d, part) as the transformer keeps it; 0 when the spec has no such tensor. */
static int rows_target(const model_spec *s, const tf_params *p, int i, ck_role r, slot *x) {
    const tf_layer_params *l = p ? &p->layer[i] : NULL;
    x->rows = s->d_model;
    if (r == CK_QKV) {
        x->part[0] = spec_q_dim(s), x->part[1] = x->part[2] = spec_kv_dim(s);
        if (l) x->dst[0] = l->w_q, x->dst[1] = l->w_k, x->dst[2] = l->w_v;
    } else if (r == CK_GATE_UP && s->d_ff > 0 && spec_gated(s)) {
        x->part[0] = x->part[1] = s->d_ff;
        if (l) x->dst[0] = l->w_gate, x->dst[1] = l->w_fc;
    } else {
        return 0;
    }
    x->cols = x->part[0] + x->part[1] + x->part[2];
    return 1;
}

/* Slot *n from a table entry, its name given, when the spec has the tensor. */
static void add(slot *sl, int *n, const ck_name *e, const char *name, const model_spec *s,
                const tf_params *p, int layer) {
    slot x = {.how = e->how};
    if (e->how == CK_LINEAR_ROWS ? !rows_target(s, p, layer, e->role, &x)
                                 : !role_target(s, p, layer, e->role, x.dst, &x.rows, &x.cols))
        return;
    snprintf(x.name, sizeof x.name, "%s", name);
    const int64_t third = e->how == CK_SPLIT3 ? 3 : 1;
    x.ndim = x.rows ? 2 : 1;
    const int linear = e->how == CK_LINEAR || e->how == CK_LINEAR_ROWS;
    x.shape[0] = x.rows ? (linear ? x.cols : x.rows) : third * x.cols;
    x.shape[1] = x.rows ? (linear ? x.rows : third * x.cols) : 0;
    x.t = sl[*n].t; /* kept across the second call */
    sl[(*n)++] = x;
}

/* The slots of spec s in family f's names: the model's own tensors first, then each
 * layer's, as many in every layer (*per_layer, after *n_global). With p (the
 * allocated parameters) also where each goes: called first with p NULL, to check
 * the file against the config before anything large is allocated, then again with
 * p on the same slots. Returns the count. */
static int build_slots(const ckpt_family *f, const model_spec *s, const tf_params *p, slot *sl,
                       int *n_global, int *per_layer) {
    int n = 0;
    char nm[128];
    for (int k = 0; k < f->n_names; k++)
        if (f->names[k].role < CK_LN1_G) add(sl, &n, &f->names[k], f->names[k].name, s, p, 0);
    *n_global = n;
    for (int i = 0; i < spec_stored_layers(s); i++)
        for (int k = 0; k < f->n_names; k++)
            if (f->names[k].role >= CK_LN1_G) {
                snprintf(nm, sizeof nm, "%s%d.%s", f->layer, i, f->names[k].name);
                add(sl, &n, &f->names[k], nm, s, p, i);
            }
    *per_layer = (n - *n_global) / spec_stored_layers(s);
    return n;
}

/* The slot of a name without the prefix: a layer's found among that layer's slots.
 * -1: not a weight we know; -2: a buffer of a layer we have (ignored). */
static int slot_of(const ckpt_family *f, const char *nm, const slot *s, int n_global, int per_layer,
                   int layers) {
    const size_t ll = strlen(f->layer);
    if (strncmp(nm, f->layer, ll) == 0) {
        const char *q = nm + ll;
        if (q[0] < '0' || q[0] > '9' || (q[0] == '0' && q[1] >= '0' && q[1] <= '9')) return -1;
        long i = 0;
        while (*q >= '0' && *q <= '9' && i < 1000) i = i * 10 + (*q++ - '0');
        if (*q != '.' || i >= layers) return -1;
        q++;
        for (const char *const *b = f->buffers; b && *b; b++)
            if (strcmp(q, *b) == 0) return -2;
        for (int k = 0; k < per_layer; k++) {
            int j = n_global + (int)i * per_layer + k;
            if (strcmp(s[j].name, nm) == 0) return j;
        }
        return -1;
    }
    for (int j = 0; j < n_global; j++)
        if (strcmp(s[j].name, nm) == 0) return j;
    return -1;
}

static void shape_str(char *out, size_t len, int ndim, const int64_t *shape) {
    size_t at = 0;
    at += (size_t)snprintf(out, len, "[");
    for (int i = 0; i < ndim && at < len; i++)
        at += (size_t)snprintf(out + at, len - at, "%s%lld", i ? ", " : "", (long long)shape[i]);
    if (at < len) snprintf(out + at, len - at, "]");
}

static int convertible(const st_tensor *t) {
    return t->dtype == ST_F32 || t->dtype == ST_F16 || t->dtype == ST_BF16;
}

/* lm_head.weight against wte (already converted), in chunks: 1 when equal bit for
 * bit after conversion (else the model is not tied), 0 when not; -1 when it cannot
 * be read (the reader's code in *rc, its message in e). */
static int lm_head_equal(const st_file *f, const st_tensor *t, const float *wte, uint64_t n,
                         int *rc, char *e, size_t elen) {
    enum { CHUNK = 1 << 14 };
    float *buf = malloc(CHUNK * sizeof *buf);
    if (!buf) {
        *rc = 1;
        snprintf(e, elen, "out of memory");
        return -1;
    }
    int eq = 1;
    for (uint64_t at = 0; at < n && eq == 1; at += CHUNK) {
        uint64_t m = n - at < CHUNK ? n - at : CHUNK;
        if ((*rc = st_read_f32_range(f, t, at, m, buf, e, elen)) != 0)
            eq = -1;
        else
            eq = memcmp(buf, wte + at, (size_t)m * sizeof *buf) == 0;
    }
    free(buf);
    return eq;
}

/* A (R, 3C) tensor read a block of rows at a time: row r's thirds go to row r of
 * dst[0], dst[1], dst[2] (R, C) each (c_attn's W_Q | W_K | W_V). 0, or the reader's
 * code with its message in e. */
static int read_split_rows(const st_file *f, const st_tensor *t, uint64_t R, uint64_t C,
                           float *const dst[3], char *e, size_t elen) {
    enum { ROWS = 64 };
    float *buf = malloc((size_t)(ROWS * 3 * C) * sizeof *buf);
    if (!buf) {
        snprintf(e, elen, "out of memory");
        return 1;
    }
    int rc = 0;
    for (uint64_t r0 = 0; r0 < R && rc == 0; r0 += ROWS) {
        const uint64_t m = R - r0 < ROWS ? R - r0 : ROWS;
        rc = st_read_f32_range(f, t, r0 * 3 * C, m * 3 * C, buf, e, elen);
        for (uint64_t r = 0; r < m && rc == 0; r++)
            for (int q = 0; q < 3; q++)
                memcpy(dst[q] + (r0 + r) * C, buf + (r * 3 + (uint64_t)q) * C,
                       (size_t)C * sizeof *buf);
    }
    free(buf);
    return rc;
}

/* An nn.Linear weight (out, in) = (C, R), from element base of t, into dst (R, C),
 * its transpose, a block of the file's rows at a time. 0, or the reader's code with its message in
 * e. */
static int read_transposed(const st_file *f, const st_tensor *t, uint64_t base, uint64_t R,
                           uint64_t C, float *dst, char *e, size_t elen) {
    enum { ROWS = 64 };
    float *buf = malloc((size_t)(ROWS * R) * sizeof *buf);
    if (!buf) {
        snprintf(e, elen, "out of memory");
        return 1;
    }
    int rc = 0;
    for (uint64_t o0 = 0; o0 < C && rc == 0; o0 += ROWS) {
        const uint64_t m = C - o0 < ROWS ? C - o0 : ROWS;
        rc = st_read_f32_range(f, t, base + o0 * R, m * R, buf, e, elen);
        for (uint64_t i = 0; i < R && rc == 0; i++)
            for (uint64_t o = 0; o < m; o++) dst[i * C + o0 + o] = buf[o * R + i];
    }
    free(buf);
    return rc;
}

/* Tensor t into its slot's destinations: 0, or the reader's code (1: the file
 * changed or a read failed, 2: a value is not finite) with its message in e. */
static int read_slot(const st_file *f, const st_tensor *t, const slot *sl, char *e, size_t elen) {
    const uint64_t R = (uint64_t)sl->rows, C = (uint64_t)sl->cols;
    if (sl->how == CK_LINEAR) return read_transposed(f, t, 0, R, C, sl->dst[0], e, elen);
    if (sl->how == CK_LINEAR_ROWS) {
        int rc = 0;
        for (uint64_t q = 0, at = 0; q < 3 && sl->part[q] && rc == 0; at += (uint64_t)sl->part[q++])
            rc = read_transposed(f, t, at * R, R, (uint64_t)sl->part[q], sl->dst[q], e, elen);
        return rc;
    }
    if (sl->how == CK_AS_IS) return st_read_f32(f, t, sl->dst[0], e, elen);
    if (sl->ndim == 2) return read_split_rows(f, t, R, C, sl->dst, e, elen);
    int rc = 0; /* b_Q | b_K | b_V */
    for (int q = 0; q < 3 && rc == 0; q++)
        rc = st_read_f32_range(f, t, (uint64_t)q * C, C, sl->dst[q], e, elen);
    return rc;
}

/* The float32 block is written once, whole, right away: most of a large load's
 * time is the kernel faulting in and zeroing its 4 KiB pages one by one, and
 * transparent huge pages (where the system gives them on request) cut the faults
 * by 512. Only a hint: nothing changes if it is refused. */
static void huge_pages(void *p, size_t len) {
#ifdef MADV_HUGEPAGE
    const uintptr_t page = (uintptr_t)2 << 20;
    uintptr_t lo = ((uintptr_t)p + page - 1) & ~(page - 1), hi = ((uintptr_t)p + len) & ~(page - 1);
    if (hi > lo) madvise((void *)lo, hi - lo, MADV_HUGEPAGE);
#else
    (void)p, (void)len;
#endif
}

/* A tensor to read: where it is and which slot it goes to. */
typedef struct {
    const st_tensor *t;
    int file, slot;
} to_read;

/* File order: shard by shard, each front to back. */
static int by_begin(const void *a, const void *b) {
    const to_read *x = a, *y = b;
    if (x->file != y->file) return x->file < y->file ? -1 : 1;
    return x->t->begin < y->t->begin ? -1 : x->t->begin > y->t->begin;
}

/* One load: the file, the slots, and each file tensor's slot (which: -2 ignored,
 * -3 a tied lm_head) */
typedef struct {
    const ckpt_family *fam;
    const model_spec *spec;
    const char *W; /* the weights' path (a sharded model's index), for messages */
    weights_set w;
    slot *s;
    int ns, n_global, per_layer;
    int *which;
    to_read *order;
    const st_tensor *lm_head; /* a tied model's copy of the token embedding */
    int lm_head_file;
    const char *pre; /* the prefix the names have: the family's, or "" */
    int *copy_of;    /* (w.nt) a copy's original's slot (family's copies), or -1 */
} load;

/* Whether name is one the family keeps outside its prefix (encoders' heads). */
static int is_outside(const ckpt_family *f, const char *nm) {
    for (const char *const *o = f->outside; o && *o; o++)
        if (strncmp(nm, *o, strlen(*o)) == 0) return 1;
    return 0;
}

static int in_list(const char *const *list, const char *nm) {
    for (; list && *list; list++)
        if (strcmp(nm, *list) == 0) return 1;
    return 0;
}

/* nm without the prefix P (when it has it and is not outside), BERT's old
 * LayerNorm.gamma / .beta as .weight / .bias where the family accepts them, into
 * out (len bytes). */
static void bare_name(char *out, size_t len, const ckpt_family *f, const char *nm, const char *P) {
    const size_t pl = strlen(P);
    if (!is_outside(f, nm) && strncmp(nm, P, pl) == 0) nm += pl;
    snprintf(out, len, "%s", nm);
    if (!f->gamma_beta) return;
    const size_t n = strlen(out);
    static const char *const from[] = {"LayerNorm.gamma", "LayerNorm.beta"};
    static const char *const to[] = {"LayerNorm.weight", "LayerNorm.bias"};
    for (int k = 0; k < 2; k++) {
        const size_t fl = strlen(from[k]);
        if (n >= fl && strcmp(out + n - fl, from[k]) == 0 && n - fl + strlen(to[k]) < len)
            snprintf(out + n - fl, len - (n - fl), "%s", to[k]);
    }
}

/* The slot of a file's bare name, as slot_of; a copy's name (family's copies) gives
 * its original's slot, with *copy set when the original is in the file too. */
static int slot_or_copy(const load *L, const char *bare, int *copy) {
    *copy = 0;
    int j = slot_of(L->fam, bare, L->s, L->n_global, L->per_layer, spec_stored_layers(L->spec));
    if (j != -1) return j;
    for (const char *const *c = L->fam->copies; c && c[0] && c[1]; c += 2) {
        if (strcmp(bare, c[0]) != 0) continue;
        j = slot_of(L->fam, c[1], L->s, L->n_global, L->per_layer, spec_stored_layers(L->spec));
        if (j < 0) return -1;
        char orig[160];
        for (int i = 0; i < L->w.nt && !*copy; i++) {
            bare_name(orig, sizeof orig, L->fam, L->w.t[i]->name, L->fam->prefix);
            *copy = strcmp(orig, c[1]) == 0;
        }
        return j;
    }
    return -1;
}

/* Each file tensor to its slot: the prefix (on every name or on none: lm_head.weight
 * sits outside it in Hugging Face's *ForCausalLM, so it is apart), duplicates,
 * unknown names. 0, or 2 with a message. */
static int match_names(load *L, char *err, size_t errlen) {
    const char *P = L->fam->prefix;
    const size_t pl = strlen(P);
    const int tied = L->spec->head == SPEC_HEAD_TIED;
    int with = 0, without = 0;
    for (int i = 0; i < L->w.nt; i++) {
        const char *nm = L->w.t[i]->name;
        if (strcmp(nm, "lm_head.weight") == 0 || is_outside(L->fam, nm)) continue;
        if (strncmp(nm, P, pl) == 0)
            with++;
        else
            without++;
    }
    /* the same tensor under both names is a duplicate (said first, as it is the
     * more telling); any other mixture is a file we will not guess about */
    for (int i = 0; i < L->w.nt; i++) {
        const char *nm = L->w.t[i]->name;
        if (strncmp(nm, P, pl) == 0 && ws_find(&L->w, nm + pl, NULL))
            return cj_fail(err, errlen, 2, L->W, "tensor %s appears twice (as %s and %s)", nm + pl,
                           nm, nm + pl);
    }
    char bare[160];
    for (int i = 0; i < L->w.nt; i++) {
        const st_tensor *t = L->w.t[i];
        const char *nm = t->name;
        L->copy_of[i] = -1;
        if (tied && strcmp(nm, "lm_head.weight") == 0) {
            L->which[i] = -3;
            L->lm_head = t;
            L->lm_head_file = L->w.file[i];
            continue;
        }
        bare_name(bare, sizeof bare, L->fam, nm, P);
        if (in_list(L->fam->ignored, bare)) {
            L->which[i] = -2; /* not the model's weights: never read */
            continue;
        }
        int copy, j = slot_or_copy(L, bare, &copy);
        if (j == -2 || copy) {
            L->which[i] = -2; /* a buffer, or a copy compared once the original is read */
            if (copy) L->copy_of[i] = j;
            continue;
        }
        if (j < 0)
            return cj_fail(err, errlen, 2, L->W,
                           "unexpected tensor %s (not in a %s model of this config)", nm,
                           L->fam->title);
        if (L->s[j].t) return cj_fail(err, errlen, 2, L->W, "tensor %s appears twice", nm);
        L->s[j].t = t;
        L->which[i] = j;
    }
    L->pre = with ? P : "";
    /* after the names: an unknown one is said as such, not as a mixture */
    if (with && without)
        return cj_fail(err, errlen, 2, L->W,
                       "tensor names mix the \"%s\" prefix (%d tensors) and none (%d)", P, with,
                       without);
    return 0;
}

/* Every slot found, with its shape and a dtype we convert; a tied lm_head shaped as
 * the token embedding. 0, or 2 with a message. */
static int check_slots(const load *L, char *err, size_t errlen) {
    for (int j = 0; j < L->ns; j++) {
        const st_tensor *t = L->s[j].t;
        if (!t)
            return cj_fail(
                err, errlen, 2, L->W, "missing tensor %s%s",
                strcmp(L->s[j].name, "lm_head.weight") && !is_outside(L->fam, L->s[j].name) ? L->pre
                                                                                            : "",
                L->s[j].name);
        int same = t->ndim == L->s[j].ndim;
        for (int k = 0; same && k < t->ndim; k++) same = t->shape[k] == L->s[j].shape[k];
        if (!same) {
            char got[128], want[64];
            shape_str(got, sizeof got, t->ndim, t->shape);
            shape_str(want, sizeof want, L->s[j].ndim, L->s[j].shape);
            return cj_fail(err, errlen, 2, L->W, "tensor %s has shape %s, config.json makes it %s",
                           t->name, got, want);
        }
        if (!convertible(t))
            return cj_fail(err, errlen, 2, L->W,
                           "tensor %s has dtype %s: only F32, F16 and BF16 are supported", t->name,
                           t->dtype_name);
    }
    const st_tensor *h = L->lm_head;
    if (!h) return 0;
    int same = h->ndim == 2 && h->shape[0] == L->spec->vocab && h->shape[1] == L->spec->d_model;
    if (same && !convertible(h))
        return cj_fail(err, errlen, 2, L->W,
                       "tensor lm_head.weight has dtype %s: only F32, F16 and BF16 are supported",
                       h->dtype_name);
    if (!same) return cj_fail(err, errlen, 2, L->W, "lm_head.weight %s", L->fam->untied);
    return 0;
}

/* Each copy of a tied weight (family's copies) against its original as read: the
 * same shape and, converted, the same values. 0, or the reader's code with a
 * message. */
static int check_copies(load *L, char *err, size_t errlen) {
    char e[512];
    for (int i = 0; i < L->w.nt; i++) {
        if (L->copy_of[i] < 0) continue;
        const st_tensor *t = L->w.t[i];
        const slot *o = &L->s[L->copy_of[i]];
        int same = t->ndim == o->ndim && o->how == CK_AS_IS && convertible(t);
        for (int k = 0; same && k < t->ndim; k++) same = t->shape[k] == o->shape[k];
        int rc = 0;
        int eq =
            same ? lm_head_equal(&L->w.f[L->w.file[i]], t, o->dst[0], t->elems, &rc, e, sizeof e)
                 : 0;
        if (eq < 0) return cj_fail(err, errlen, rc, L->w.path[L->w.file[i]], "%s", e);
        if (!eq)
            return cj_fail(err, errlen, 2, L->W, "tensor %s differs from %s%s, which it copies",
                           t->name, is_outside(L->fam, o->name) ? "" : L->pre, o->name);
    }
    return 0;
}

/* The weights into tf's block, in file order (sequential reads), a tied lm_head last
 * as it is compared with the converted token embedding; then the file checked not
 * to have changed. 0, or the reader's code with a message. */
static int read_weights(load *L, const transformer *tf, ckpt_progress_fn progress, void *ud,
                        char *err, size_t errlen) {
    char e[512];
    uint64_t total = 0, done = 0;
    int no = 0, rc;
    for (int i = 0; i < L->w.nt; i++)
        if (L->which[i] >= 0) {
            L->order[no++] = (to_read){L->w.t[i], L->w.file[i], L->which[i]};
            total += L->w.t[i]->end - L->w.t[i]->begin;
        }
    qsort(L->order, (size_t)no, sizeof *L->order, by_begin);
    if (L->lm_head) total += L->lm_head->end - L->lm_head->begin;
    if (progress && progress(ud, 0.0)) return cj_fail(err, errlen, 1, L->W, "cancelled");
    for (int k = 0; k < no; k++) {
        const to_read *o = &L->order[k];
        const st_tensor *t = o->t;
        if ((rc = read_slot(&L->w.f[o->file], t, &L->s[o->slot], e, sizeof e)) != 0)
            return cj_fail(err, errlen, rc, L->w.path[o->file], "%s", e);
        done += t->end - t->begin;
        if (progress && progress(ud, total ? (double)done / (double)total : 1.0))
            return cj_fail(err, errlen, 1, L->W, "cancelled");
    }
    if (L->lm_head) {
        int eq = lm_head_equal(&L->w.f[L->lm_head_file], L->lm_head, tf->p.wte, L->lm_head->elems,
                               &rc, e, sizeof e);
        if (eq < 0) return cj_fail(err, errlen, rc, L->w.path[L->lm_head_file], "%s", e);
        if (!eq) return cj_fail(err, errlen, 2, L->W, "lm_head.weight %s", L->fam->untied);
        if (progress && progress(ud, 1.0)) return cj_fail(err, errlen, 1, L->W, "cancelled");
    }
    if ((rc = check_copies(L, err, errlen)) != 0) return rc;
    /* grown or written in place while it was read: the values may be a mixture */
    if ((rc = ws_verify(&L->w, err, errlen)) != 0) return rc;
    return 0;
}

/* Whether the float32 copy of every tensor fits in the memory available (a BF16 or
   F16 file doubles): 0, or 1 saying how much it needs, before anything is allocated. */
static int fits(const load *L, const char *path, char *err, size_t errlen) {
    uint64_t need = 0;
    for (int j = 0; j < L->ns; j++) need += L->s[j].t->elems * sizeof(float);
    const uint64_t avail = mem_available(), mb = 1u << 20;
    if (need <= avail) return 0;
    return cj_fail(err, errlen, 1, path,
                   "the model needs %llu MB of memory as float32, and %llu MB are available",
                   (unsigned long long)((need + mb - 1) / mb), (unsigned long long)(avail / mb));
}

int ckpt_load(const ckpt_paths *p, const ckpt_config *cfg, transformer **out,
              ckpt_progress_fn progress, void *ud, char *err, size_t errlen) {
    *out = NULL;
    model_spec spec = cfg->spec;
    load L = {.fam = cfg->family, .spec = &spec, .W = p->weights};
    char e[512];
    int rc = ws_open(&L.w, p->weights, p->sharded, err, errlen);
    if (rc) return rc;
    /* an encoder's masked-LM head is read when the file has it */
    spec.mlm = L.fam->mlm_probe && ws_find(&L.w, L.fam->mlm_probe, NULL) != NULL;
    transformer *tf = NULL;
    /* at most every name of the table in every layer */
    const int most = L.fam->n_names * (spec_stored_layers(&spec) + 1);
    L.s = calloc((size_t)most, sizeof *L.s);
    L.which = calloc((size_t)L.w.nt + 1, sizeof *L.which);
    L.order = calloc((size_t)L.w.nt + 1, sizeof *L.order);
    L.copy_of = calloc((size_t)L.w.nt + 1, sizeof *L.copy_of);
    if (!L.s || !L.which || !L.order || !L.copy_of) {
        rc = cj_fail(err, errlen, 1, L.W, "out of memory");
        goto out;
    }
    L.ns = build_slots(L.fam, L.spec, NULL, L.s, &L.n_global, &L.per_layer);
    if ((rc = match_names(&L, err, errlen)) || (rc = check_slots(&L, err, errlen))) goto out;
    /* the file matches the config: now the float32 block, if it fits */
    if ((rc = fits(&L, p->config, err, errlen)) != 0) goto out;
    tf = tf_create_spec(L.spec, e, sizeof e);
    if (!tf) {
        rc = cj_fail(err, errlen, 1, p->config, "%s", e);
        goto out;
    }
    huge_pages(tf->params, tf->n_params * sizeof(float));
    build_slots(L.fam, L.spec, &tf->p, L.s, &L.n_global, &L.per_layer);
    rc = read_weights(&L, tf, progress, ud, err, errlen);
out:
    free(L.s);
    free(L.which);
    free(L.order);
    free(L.copy_of);
    ws_close(&L.w);
    if (rc) {
        tf_destroy(tf);
        return rc;
    }
    *out = tf;
    return 0;
}
