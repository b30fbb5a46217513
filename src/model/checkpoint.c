/* checkpoint.c: a GPT-2-family checkpoint read into a transformer (checkpoint.h).
 *
 * The set of tensors is checked strictly, both ways: every tensor the config
 * implies must be there with exactly its shape, and any tensor we do not know is
 * an error, never skipped. A checkpoint with extra tensors (cross-attention, an
 * adapter, a value head, layers past n_layer) is a different model from the one
 * we would show: running it without them would draw attention patterns that the
 * real model does not have, with nothing to say so. Only the causal-mask buffers
 * (h.N.attn.bias, h.N.attn.masked_bias: constants, not weights) and an
 * lm_head.weight equal to wte (the tied unembedding stored twice) are ignored.
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
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "safetensors.h"

#define CONFIG_MAX_BYTES (1u << 20) /* config.json is a few hundred bytes */
#define PREFIX "transformer."

static void one_line(char *s) {
    for (; *s; s++)
        if ((unsigned char)*s < 0x20 || *s == 0x7f) *s = '?';
}

/* "PATH: message" in err, one line; returns code. */
static int fail(char *err, size_t errlen, int code, const char *path, const char *fmt, ...) {
    if (!errlen) return code;
    int n = snprintf(err, errlen, "%s: ", path);
    if (n >= 0 && (size_t)n < errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err + n, errlen - (size_t)n, fmt, ap);
        va_end(ap);
    }
    one_line(err);
    return code;
}

/* ------------------------------------------------------------------------------ */
/* the files                                                                       */

static int join(char *out, const char *dir, const char *file) {
    int n = snprintf(out, CKPT_PATH_MAX, "%s/%s", dir, file);
    return n < 0 || n >= CKPT_PATH_MAX ? -1 : 0;
}

/* A file that must be there and regular: 1 otherwise (it cannot be read). */
static int need_file(const char *path, char *err, size_t errlen) {
    struct stat st;
    if (stat(path, &st) != 0) return fail(err, errlen, 1, path, "%s", strerror(errno));
    if (!S_ISREG(st.st_mode)) return fail(err, errlen, 1, path, "not a regular file");
    return 0;
}

int ckpt_resolve(const char *path, ckpt_paths *p, char *err, size_t errlen) {
    memset(p, 0, sizeof *p);
    struct stat st;
    if (stat(path, &st) != 0) return fail(err, errlen, 1, path, "%s", strerror(errno));
    size_t len = strlen(path);
    if (len >= CKPT_PATH_MAX) return fail(err, errlen, 1, "model", "path too long");
    if (S_ISDIR(st.st_mode)) {
        memcpy(p->dir, path, len + 1);
        while (len > 1 && p->dir[len - 1] == '/') p->dir[--len] = '\0';
        if (join(p->weights, p->dir, "model.safetensors") != 0)
            return fail(err, errlen, 1, path, "path too long");
    } else if (S_ISREG(st.st_mode)) {
        const char *ext = ".safetensors";
        size_t el = strlen(ext);
        if (len <= el || strcmp(path + len - el, ext) != 0)
            return fail(err, errlen, 2, path, "not a folder or a .safetensors file");
        memcpy(p->weights, path, len + 1);
        const char *slash = strrchr(path, '/');
        if (!slash)
            snprintf(p->dir, sizeof p->dir, ".");
        else if (slash == path)
            snprintf(p->dir, sizeof p->dir, "/");
        else
            snprintf(p->dir, sizeof p->dir, "%.*s", (int)(slash - path), path);
    } else {
        return fail(err, errlen, 1, path, "not a folder or a regular file");
    }
    if (join(p->config, p->dir, "config.json") != 0 || join(p->vocab, p->dir, "vocab.json") != 0 ||
        join(p->merges, p->dir, "merges.txt") != 0)
        return fail(err, errlen, 1, path, "path too long");
    int rc;
    if ((rc = need_file(p->weights, err, errlen)) != 0 ||
        (rc = need_file(p->config, err, errlen)) != 0 ||
        (rc = need_file(p->vocab, err, errlen)) != 0 ||
        (rc = need_file(p->merges, err, errlen)) != 0)
        return rc;
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

/* A required integer field in [1, max]. */
static int get_int(json_t *root, const char *key, int max, int *out, const char *path, char *err,
                   size_t errlen) {
    json_t *v = json_object_get(root, key);
    if (!v) return fail(err, errlen, 2, path, "%s is missing", key);
    if (!json_is_integer(v)) return fail(err, errlen, 2, path, "%s is not an integer", key);
    json_int_t i = json_integer_value(v);
    if (i < 1)
        return fail(err, errlen, 2, path, "%s is %lld, must be at least 1", key, (long long)i);
    if (i > max)
        return fail(err, errlen, 2, path, "%s is %lld, this program supports at most %d", key,
                    (long long)i, max);
    *out = (int)i;
    return 0;
}

/* An optional boolean that must have the value GPT-2 has, if it is there. */
static int want_bool(json_t *root, const char *key, int want, const char *path, char *err,
                     size_t errlen) {
    json_t *v = json_object_get(root, key);
    if (!v) return 0;
    if (!json_is_boolean(v)) return fail(err, errlen, 2, path, "%s is not true or false", key);
    if (json_is_true(v) != want)
        return fail(err, errlen, 2, path, "%s = %s is not supported", key, want ? "false" : "true");
    return 0;
}

int ckpt_config_parse(ckpt_config *c, const char *text, size_t len, const char *path, char *err,
                      size_t errlen) {
    memset(c, 0, sizeof *c);
    json_error_t jerr;
    json_t *root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
    if (!root) {
        for (char *s = jerr.text; *s; s++)
            if ((unsigned char)*s >= 0x80) *s = '?';
        return fail(err, errlen, 2, path, "not valid JSON: %s (line %d)", jerr.text, jerr.line);
    }
    int rc = 0;
    if (!json_is_object(root)) {
        rc = fail(err, errlen, 2, path, "not a JSON object");
        goto out;
    }
    if ((rc = get_int(root, "n_layer", TF_MAX_LAYERS, &c->n_layer, path, err, errlen)) ||
        (rc = get_int(root, "n_head", TF_MAX_D_MODEL, &c->n_head, path, err, errlen)) ||
        (rc = get_int(root, "n_embd", TF_MAX_D_MODEL, &c->n_embd, path, err, errlen)) ||
        (rc = get_int(root, "n_positions", TF_MAX_CTX, &c->n_positions, path, err, errlen)) ||
        (rc = get_int(root, "vocab_size", TF_MAX_VOCAB, &c->vocab_size, path, err, errlen)))
        goto out;
    if (c->n_embd % c->n_head != 0) {
        rc =
            fail(err, errlen, 2, path, "n_head %d does not divide n_embd %d", c->n_head, c->n_embd);
        goto out;
    }
    json_t *v = json_object_get(root, "layer_norm_epsilon");
    if (!v) {
        rc = fail(err, errlen, 2, path, "layer_norm_epsilon is missing");
        goto out;
    }
    if (!json_is_number(v)) {
        rc = fail(err, errlen, 2, path, "layer_norm_epsilon is not a number");
        goto out;
    }
    double eps = json_number_value(v);
    if (!(eps > 0.0 && eps < 1.0) || !((float)eps > 0.0f)) {
        rc = fail(err, errlen, 2, path, "layer_norm_epsilon %g must be in (0, 1)", eps);
        goto out;
    }
    c->layer_norm_epsilon = (float)eps;
    /* the non-linearity: GPT-2's tanh form under either of its names */
    v = json_object_get(root, "activation_function");
    if (v) {
        const char *a = json_is_string(v) ? json_string_value(v) : NULL;
        if (!a) {
            rc = fail(err, errlen, 2, path, "activation_function is not a string");
            goto out;
        }
        if (strcmp(a, "gelu_new") != 0 && strcmp(a, "gelu_pytorch_tanh") != 0) {
            rc = fail(err, errlen, 2, path,
                      "activation_function \"%.40s\" is not supported (only gelu_new)", a);
            goto out;
        }
    }
    /* fields that would change the arithmetic, if set away from GPT-2's values */
    v = json_object_get(root, "n_inner");
    if (v && !json_is_null(v) &&
        (!json_is_integer(v) || json_integer_value(v) != 4 * (json_int_t)c->n_embd)) {
        rc = fail(err, errlen, 2, path, "n_inner must be null or 4 n_embd (%d)", 4 * c->n_embd);
        goto out;
    }
    if ((rc = want_bool(root, "scale_attn_weights", 1, path, err, errlen)) ||
        (rc = want_bool(root, "scale_attn_by_inverse_layer_idx", 0, path, err, errlen)) ||
        (rc = want_bool(root, "add_cross_attention", 0, path, err, errlen)))
        goto out;
    v = json_object_get(root, "model_type");
    if (v && (!json_is_string(v) || strcmp(json_string_value(v), "gpt2") != 0)) {
        rc = fail(err, errlen, 2, path, "model_type is not \"gpt2\"");
        goto out;
    }
out:
    json_decref(root);
    if (rc) memset(c, 0, sizeof *c);
    return rc;
}

int ckpt_config_read(ckpt_config *c, const char *path, char *err, size_t errlen) {
    memset(c, 0, sizeof *c);
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) return fail(err, errlen, 1, path, "%s", strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return fail(err, errlen, 1, path, "not a regular file");
    }
    if (st.st_size > (off_t)CONFIG_MAX_BYTES) {
        close(fd);
        return fail(err, errlen, 2, path, "%lld bytes: too large for a config (at most %u)",
                    (long long)st.st_size, CONFIG_MAX_BYTES);
    }
    char *buf = malloc((size_t)st.st_size + 1);
    if (!buf) {
        close(fd);
        return fail(err, errlen, 1, path, "out of memory");
    }
    size_t got = 0, want = (size_t)st.st_size;
    while (got < want) {
        ssize_t r = read(fd, buf + got, want - got);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) {
            int e = errno;
            free(buf);
            close(fd);
            return fail(err, errlen, 1, path, "read: %s", strerror(e));
        }
        if (r == 0) break; /* shrank since fstat: parse what is there */
        got += (size_t)r;
    }
    close(fd);
    int rc = ckpt_config_parse(c, buf, got, path, err, errlen);
    free(buf);
    return rc;
}

void ckpt_tf_config(const ckpt_config *c, tf_config *out) {
    memset(out, 0, sizeof *out);
    out->vocab = c->vocab_size;
    out->ctx = c->n_positions;
    out->classes = c->vocab_size;
    out->layers = c->n_layer;
    out->h = c->n_head;
    out->d_model = c->n_embd;
    out->mlp = 1;
    out->d_ff = 4 * c->n_embd;
    out->act = TF_ACT_GELU_TANH;
    out->attn_bias = 1;
    out->tied = 1;
    out->ln_eps = c->layer_norm_epsilon;
}

/* ------------------------------------------------------------------------------ */
/* the weights                                                                     */

/* What one expected tensor is: its name without the prefix, its shape and where
 * it goes. split: c_attn's (d, 3d) or (3d), cut by columns into three. */
typedef struct {
    char name[48];
    int ndim;
    int64_t shape[2];
    float *dst[3]; /* NULL until the parameters are allocated */
    int split;
    const st_tensor *t; /* found in the file */
} slot;

enum { SLOTS_PER_LAYER = 12 };

/* Sets slot *n (its found tensor t left as it is) and counts it. */
static void add(slot *s, int *n, const char *name, int ndim, int64_t r, int64_t c, int split,
                float *a, float *b, float *v) {
    slot *x = &s[(*n)++];
    snprintf(x->name, sizeof x->name, "%s", name);
    x->ndim = ndim;
    x->shape[0] = r;
    x->shape[1] = c;
    x->dst[0] = a;
    x->dst[1] = b;
    x->dst[2] = v;
    x->split = split;
}

/* The slots of config c: names and shapes, and with p (the allocated parameters)
 * where each goes. Called first with p NULL, to check the file against the config
 * before anything large is allocated, then again with p on the same slots. */
static int build_slots(const tf_config *c, const tf_params *p, slot *s) {
    const int64_t d = c->d_model, ff = c->d_ff;
    int n = 0;
    char nm[48];
#define P(x) (p ? p->x : NULL)
    add(s, &n, "wte.weight", 2, c->vocab, d, 0, P(wte), NULL, NULL);
    add(s, &n, "wpe.weight", 2, c->ctx, d, 0, P(wpe), NULL, NULL);
    for (int i = 0; i < c->layers; i++) {
#define L(x) (snprintf(nm, sizeof nm, "h.%d.%s", i, (x)), nm)
#define W(x) (p ? p->layer[i].x : NULL)
        add(s, &n, L("ln_1.weight"), 1, d, 0, 0, W(ln1_g), NULL, NULL);
        add(s, &n, L("ln_1.bias"), 1, d, 0, 0, W(ln1_b), NULL, NULL);
        add(s, &n, L("attn.c_attn.weight"), 2, d, 3 * d, 1, W(w_q), W(w_k), W(w_v));
        add(s, &n, L("attn.c_attn.bias"), 1, 3 * d, 0, 1, W(b_q), W(b_k), W(b_v));
        add(s, &n, L("attn.c_proj.weight"), 2, d, d, 0, W(w_o), NULL, NULL);
        add(s, &n, L("attn.c_proj.bias"), 1, d, 0, 0, W(b_o), NULL, NULL);
        add(s, &n, L("ln_2.weight"), 1, d, 0, 0, W(ln2_g), NULL, NULL);
        add(s, &n, L("ln_2.bias"), 1, d, 0, 0, W(ln2_b), NULL, NULL);
        add(s, &n, L("mlp.c_fc.weight"), 2, d, ff, 0, W(w_fc), NULL, NULL);
        add(s, &n, L("mlp.c_fc.bias"), 1, ff, 0, 0, W(b_fc), NULL, NULL);
        add(s, &n, L("mlp.c_proj.weight"), 2, ff, d, 0, W(w_proj), NULL, NULL);
        add(s, &n, L("mlp.c_proj.bias"), 1, d, 0, 0, W(b_proj), NULL, NULL);
#undef W
#undef L
    }
    add(s, &n, "ln_f.weight", 1, d, 0, 0, P(lnf_g), NULL, NULL);
    add(s, &n, "ln_f.bias", 1, d, 0, 0, P(lnf_b), NULL, NULL);
#undef P
    return n;
}

/* The slot of a stripped name: 2 + 12 i + k for layer i, a binary search
 * otherwise being overkill for four names. -1: not a weight we know; -2: a mask
 * buffer of a layer we have (ignored). */
static int slot_of(const char *nm, const slot *s, int n, int layers) {
    if (strncmp(nm, "h.", 2) == 0) {
        const char *q = nm + 2;
        if (q[0] < '0' || q[0] > '9' || (q[0] == '0' && q[1] >= '0' && q[1] <= '9')) return -1;
        long i = 0;
        while (*q >= '0' && *q <= '9' && i < 1000) i = i * 10 + (*q++ - '0');
        if (*q != '.' || i >= layers) return -1;
        q++;
        if (strcmp(q, "attn.bias") == 0 || strcmp(q, "attn.masked_bias") == 0) return -2;
        for (int k = 0; k < SLOTS_PER_LAYER; k++) {
            int j = 2 + (int)i * SLOTS_PER_LAYER + k;
            if (strcmp(s[j].name, nm) == 0) return j;
        }
        return -1;
    }
    for (int j = 0; j < n; j++)
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

/* c_attn.weight (d, 3d) read a block of rows at a time: row r's thirds go to row r
 * of W_Q, W_K and W_V. 0, or the reader's code with its message in e. */
static int read_split_rows(const st_file *f, const st_tensor *t, uint64_t d, float *const dst[3],
                           char *e, size_t elen) {
    enum { ROWS = 64 };
    float *buf = malloc((size_t)(ROWS * 3 * d) * sizeof *buf);
    if (!buf) {
        snprintf(e, elen, "out of memory");
        return 1;
    }
    int rc = 0;
    for (uint64_t r0 = 0; r0 < d && rc == 0; r0 += ROWS) {
        const uint64_t m = d - r0 < ROWS ? d - r0 : ROWS;
        rc = st_read_f32_range(f, t, r0 * 3 * d, m * 3 * d, buf, e, elen);
        for (uint64_t r = 0; r < m && rc == 0; r++)
            for (int q = 0; q < 3; q++)
                memcpy(dst[q] + (r0 + r) * d, buf + (r * 3 + (uint64_t)q) * d,
                       (size_t)d * sizeof *buf);
    }
    free(buf);
    return rc;
}

/* Tensor t into its slot's destinations: 0, or the reader's code (1: the file
 * changed or a read failed, 2: a value is not finite) with its message in e. */
static int read_slot(const st_file *f, const st_tensor *t, const slot *sl, uint64_t d, char *e,
                     size_t elen) {
    if (!sl->split) return st_read_f32(f, t, sl->dst[0], e, elen);
    if (sl->ndim == 2) return read_split_rows(f, t, d, sl->dst, e, elen);
    int rc = 0; /* b_Q | b_K | b_V */
    for (int q = 0; q < 3 && rc == 0; q++)
        rc = st_read_f32_range(f, t, (uint64_t)q * d, d, sl->dst[q], e, elen);
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

static int by_begin(const void *a, const void *b) {
    const st_tensor *x = *(const st_tensor *const *)a, *y = *(const st_tensor *const *)b;
    return x->begin < y->begin ? -1 : x->begin > y->begin;
}

int ckpt_load(const ckpt_paths *p, transformer **out, ckpt_progress_fn progress, void *ud,
              char *err, size_t errlen) {
    *out = NULL;
    ckpt_config cc;
    int rc = ckpt_config_read(&cc, p->config, err, errlen);
    if (rc) return rc;
    st_file f;
    char e[512];
    if ((rc = st_open(&f, p->weights, e, sizeof e)) != 0)
        return fail(err, errlen, rc, p->weights, "%s", e);
    const char *W = p->weights;
    tf_config tc;
    ckpt_tf_config(&cc, &tc);
    transformer *tf = NULL;
    slot *s = NULL;
    int *which = NULL; /* per file tensor: its slot, -2 ignored, -3 lm_head */
    const st_tensor **order = NULL;
    const st_tensor *lm_head = NULL;

    tf_config_resolve(&tc);
    const int nslots = 4 + SLOTS_PER_LAYER * tc.layers;
    s = calloc((size_t)nslots, sizeof *s);
    which = calloc((size_t)f.n + 1, sizeof *which);
    order = calloc((size_t)f.n + 1, sizeof *order);
    if (!s || !which || !order) {
        rc = fail(err, errlen, 1, W, "out of memory");
        goto out;
    }
    const int ns = build_slots(&tc, NULL, s);
    /* the prefix: every name with it or every name without (lm_head.weight sits
     * outside "transformer." in Hugging Face's GPT2LMHeadModel, so it is apart) */
    int with = 0, without = 0;
    for (int i = 0; i < f.n; i++) {
        const char *nm = f.t[i].name;
        if (strcmp(nm, "lm_head.weight") == 0) continue;
        if (strncmp(nm, PREFIX, strlen(PREFIX)) == 0)
            with++;
        else
            without++;
    }
    const char *pre = with ? PREFIX : "";
    /* the same tensor under both names is a duplicate (said first, as it is the
     * more telling); any other mixture is a file we will not guess about */
    for (int i = 0; i < f.n; i++) {
        const char *nm = f.t[i].name;
        if (strncmp(nm, PREFIX, strlen(PREFIX)) == 0 && st_find(&f, nm + strlen(PREFIX))) {
            rc = fail(err, errlen, 2, W, "tensor %s appears twice (as %s and %s)",
                      nm + strlen(PREFIX), nm, nm + strlen(PREFIX));
            goto out;
        }
    }
    for (int i = 0; i < f.n; i++) {
        const st_tensor *t = &f.t[i];
        const char *nm = t->name;
        if (strcmp(nm, "lm_head.weight") == 0) {
            which[i] = -3;
            lm_head = t;
            continue;
        }
        const int has = strncmp(nm, PREFIX, strlen(PREFIX)) == 0;
        const char *bare = has ? nm + strlen(PREFIX) : nm;
        int j = slot_of(bare, s, ns, tc.layers);
        if (j == -2) {
            which[i] = -2; /* a mask buffer: any dtype, any shape, never read */
            continue;
        }
        if (j < 0) {
            rc = fail(err, errlen, 2, W,
                      "unexpected tensor %s (not in a GPT-2 model of this config)", nm);
            goto out;
        }
        if (s[j].t) {
            rc = fail(err, errlen, 2, W, "tensor %s appears twice", nm);
            goto out;
        }
        s[j].t = t;
        which[i] = j;
    }
    /* after the names: an unknown one is said as such, not as a mixture */
    if (with && without) {
        rc = fail(err, errlen, 2, W,
                  "tensor names mix the \"" PREFIX "\" prefix (%d tensors) and none (%d)", with,
                  without);
        goto out;
    }
    for (int j = 0; j < ns; j++) {
        if (!s[j].t) {
            rc = fail(err, errlen, 2, W, "missing tensor %s%s", pre, s[j].name);
            goto out;
        }
        const st_tensor *t = s[j].t;
        int same = t->ndim == s[j].ndim;
        for (int k = 0; same && k < t->ndim; k++) same = t->shape[k] == s[j].shape[k];
        if (!same) {
            char got[128], want[64];
            shape_str(got, sizeof got, t->ndim, t->shape);
            shape_str(want, sizeof want, s[j].ndim, s[j].shape);
            rc = fail(err, errlen, 2, W, "tensor %s has shape %s, config.json makes it %s", t->name,
                      got, want);
            goto out;
        }
        if (!convertible(t)) {
            rc = fail(err, errlen, 2, W,
                      "tensor %s has dtype %s: only F32, F16 and BF16 are supported", t->name,
                      t->dtype_name);
            goto out;
        }
    }
    if (lm_head) {
        int same =
            lm_head->ndim == 2 && lm_head->shape[0] == tc.vocab && lm_head->shape[1] == tc.d_model;
        if (same && !convertible(lm_head)) {
            rc = fail(err, errlen, 2, W,
                      "tensor lm_head.weight has dtype %s: only F32, F16 and BF16 are supported",
                      lm_head->dtype_name);
            goto out;
        }
        if (!same) {
            rc = fail(err, errlen, 2, W,
                      "lm_head.weight differs from wte: untied models are not supported");
            goto out;
        }
    }

    /* the file matches the config: now the float32 block */
    tf = tf_create(&tc, 0, 0, e, sizeof e);
    if (!tf) {
        rc = fail(err, errlen, 1, p->config, "%s", e);
        goto out;
    }
    huge_pages(tf->params, tf->n_params * sizeof(float));
    build_slots(&tf->cfg, &tf->p, s);

    /* convert in file order (sequential reads), lm_head last as it is compared
     * with the converted wte */
    uint64_t total = 0, done = 0;
    int no = 0;
    for (int i = 0; i < f.n; i++)
        if (which[i] >= 0) {
            order[no++] = &f.t[i];
            total += f.t[i].end - f.t[i].begin;
        }
    qsort(order, (size_t)no, sizeof *order, by_begin);
    if (lm_head) total += lm_head->end - lm_head->begin;
    if (progress && progress(ud, 0.0)) {
        rc = fail(err, errlen, 1, W, "cancelled");
        goto out;
    }
    for (int k = 0; k < no; k++) {
        const st_tensor *t = order[k];
        if ((rc = read_slot(&f, t, &s[which[t - f.t]], (uint64_t)tc.d_model, e, sizeof e)) != 0) {
            rc = fail(err, errlen, rc, W, "%s", e);
            goto out;
        }
        done += t->end - t->begin;
        if (progress && progress(ud, total ? (double)done / (double)total : 1.0)) {
            rc = fail(err, errlen, 1, W, "cancelled");
            goto out;
        }
    }
    if (lm_head) {
        int eq = lm_head_equal(&f, lm_head, tf->p.wte, lm_head->elems, &rc, e, sizeof e);
        if (eq < 0) {
            rc = fail(err, errlen, rc, W, "%s", e);
            goto out;
        }
        if (!eq) {
            rc = fail(err, errlen, 2, W,
                      "lm_head.weight differs from wte: untied models are not supported");
            goto out;
        }
        done += lm_head->end - lm_head->begin;
        if (progress && progress(ud, 1.0)) {
            rc = fail(err, errlen, 1, W, "cancelled");
            goto out;
        }
    }
    /* grown or written in place while it was read: the values may be a mixture */
    if ((rc = st_verify(&f, e, sizeof e)) != 0) {
        rc = fail(err, errlen, rc, W, "%s", e);
        goto out;
    }
out:
    free(s);
    free(which);
    free(order);
    st_close(&f);
    if (rc) {
        tf_destroy(tf);
        return rc;
    }
    *out = tf;
    return 0;
}
