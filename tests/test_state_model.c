#define _POSIX_C_SOURCE 200809L
/* test_state_model.c: a loaded GPT-2-family model in the state machine
 * (src/app/state/gpt.c): the layer shown, the overview and the next-token panel;
 * Y / Shift+Y and a click in the overview (ACT_LAYER); Up / Down re-split the
 * shown layer; X / Shift+X remove heads; the keys that only apply to the random
 * model refused with the numbers untouched; the text re-tokenized with the model's
 * own BPE and cut to n_positions; a model that cannot be opened leaves the one
 * shown; the model writes (W, `.`: the same tokens for the same seed, stopped by
 * write-length or any key). Keys are pressed through app_key_action, as the window does.
 *
 * The checkpoints come from tests/state_model_check.py (gpt2_gen.py, 3 layers x 4
 * heads, n_embd 32): MHAVIZ_TEST_MODEL (n_positions 64), MHAVIZ_TEST_MODEL_SHORT
 * (n_positions 16), MHAVIZ_TEST_TMP (a scratch folder) and, when PyTorch was there,
 * MHAVIZ_TEST_REF: tests/gpt2_ref.py's float64 numbers on REF_TEXT, compared here
 * within 1e-4. Without MHAVIZ_TEST_MODEL every test is skipped. */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "bpe.h"
#include "check.h"
#include "samples.h"
#include "state.h"
#include "state_fixture.h"
#include "state_internal.h"
#include "teach.h"
#include "view_fixture.h"

/* must equal TEXT in state_model_check.py */
#define REF_TEXT "The quick brown fox jumps over the lazy dog. The dog sleeps; the fox runs away."
#define N_LAYER 3
#define N_HEAD 4
#define N_EMBD 32

static const char *model_dir(void) {
    const char *p = getenv("MHAVIZ_TEST_MODEL");
    if (!p || !*p) skip();
    return p;
}

static const char *short_dir(void) {
    const char *p = getenv("MHAVIZ_TEST_MODEL_SHORT");
    if (!p || !*p) skip();
    return p;
}

static const char *ref_dir(void) {
    const char *p = getenv("MHAVIZ_TEST_REF");
    return p && *p ? p : NULL;
}

/* The options of `mhaviz --model PATH --text TEXT [--layer L] [-H H] [--ablate SPEC]
   [--panel P] --export`: a state loaded at once. *rc is app_state_init's return,
   err its message. */
static app_state *make_state_with(const char *path, const char *text, int layer, int h,
                                  const char *ablate, cli_panel panel, int *rc, char *err,
                                  size_t errlen) {
    cli_options o = fx_options();
    o.mode = CLI_EXPORT;
    o.text = text;
    o.model_path = path;
    o.train.layer = layer;
    o.cfg.h = h;
    o.model_ablate = ablate;
    o.panel = panel;
    return fx_app_state(&o, 4, 64, rc, err, errlen);
}

static app_state *make_state(const char *path, const char *text) {
    char err[512];
    int rc;
    app_state *s = make_state_with(path, text, 0, 0, NULL, CLI_PANEL_ALL, &rc, err, sizeof err);
    if (rc != 0) fail_msg("init: %s", err);
    CHECK_TRUE("a model is loaded", app_gpt_active(s));
    return s;
}

static int press(app_state *s, int key, int mods) {
    app_action a = app_key_action(s, key, mods);
    return app_apply(s, &a);
}

static int has(const char *hay, const char *needle) {
    return hay && strstr(hay, needle) != NULL;
}

static const attn_layer *layer_of(const app_state *s, view_state *vs) {
    app_view(s, vs);
    assert_non_null(vs->layer);
    return vs->layer;
}

/* The model's own tokenizer on text: how many tokens the whole text has. */
static int bpe_count(const char *dir, const char *text) {
    char v[4096], m[4096], err[512];
    snprintf(v, sizeof v, "%s/vocab.json", dir);
    snprintf(m, sizeof m, "%s/merges.txt", dir);
    bpe *b = NULL;
    if (bpe_load(&b, v, m, err, sizeof err) != 0) fail_msg("bpe_load: %s", err);
    const int n = bpe_encode(b, text, strlen(text), NULL, 0, NULL);
    bpe_free(b);
    assert_true(n > 0);
    return n;
}

/* A copy of the shown layer's attention, (h, n, n). */
static float *copy_attn(const attn_layer *L) {
    const size_t k = (size_t)L->h * L->n * L->n;
    float *c = malloc(k * sizeof *c);
    assert_non_null(c);
    memcpy(c, L->attn, k * sizeof *c);
    return c;
}

/* Every row a distribution over the keys it may see: sums to 1, zero above the diagonal. */
static void check_causal_rows(const char *where, const attn_layer *L) {
    const int n = L->n;
    double worst_sum = 0, worst_upper = 0;
    for (int i = 0; i < L->h; i++)
        for (int r = 0; r < n; r++) {
            const float *row = L->attn + ((size_t)i * n + r) * n;
            double sum = 0;
            for (int c = 0; c < n; c++) {
                if (!(row[c] >= 0.0f && row[c] <= 1.0f + 1e-6f))
                    fail_msg("%s: head %d row %d col %d: %g", where, i, r, c, row[c]);
                sum += row[c];
                if (c > r && fabs(row[c]) > worst_upper) worst_upper = fabs(row[c]);
            }
            if (fabs(sum - 1.0) > worst_sum) worst_sum = fabs(sum - 1.0);
        }
    if (worst_sum > 1e-5) fail_msg("%s: a row sums to 1 %+g", where, worst_sum);
    if (worst_upper != 0.0) fail_msg("%s: %g above the diagonal", where, worst_upper);
}

static double max_diff(const float *a, const float *b, size_t k) {
    double m = 0;
    for (size_t i = 0; i < k; i++) {
        const double d = fabs((double)a[i] - b[i]);
        if (d > m || d != d) m = d != d ? INFINITY : d;
    }
    return m;
}

/* max |a - b| where both are finite, INFINITY where one is not and they differ
   (the masked scores are -inf in both) */
static double max_diff_inf(const float *a, const float *b, size_t k) {
    double m = 0;
    for (size_t i = 0; i < k; i++) {
        if (!isfinite(a[i]) || !isfinite(b[i])) {
            if (a[i] != b[i]) return INFINITY;
            continue;
        }
        const double d = fabs((double)a[i] - b[i]);
        m = d > m ? d : m;
    }
    return m;
}

/* Reads a state_model_check.py matrix: the shape on the first line, then values. */
static double *read_ref(const char *name, int *dims, int want_dims) {
    const char *dir = ref_dir();
    if (!dir) return NULL;
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "r");
    if (!f) fail_msg("%s: %s", path, strerror(errno));
    size_t total = 1;
    for (int i = 0; i < want_dims; i++) {
        if (fscanf(f, "%d", &dims[i]) != 1 || dims[i] < 1) fail_msg("%s: bad shape", path);
        total *= (size_t)dims[i];
    }
    double *v = malloc(total * sizeof *v);
    assert_non_null(v);
    for (size_t i = 0; i < total; i++)
        if (fscanf(f, "%lf", &v[i]) != 1) fail_msg("%s: short at %zu", path, i);
    fclose(f);
    return v;
}

static int cmp_desc(const void *a, const void *b) {
    const double x = *(const double *)a, y = *(const double *)b;
    return x < y ? 1 : x > y ? -1 : 0;
}

/* The next-token panel's probabilities against the reference's k largest. */
static void check_next_ref(const char *where, const view_next *nx, const char *name) {
    int dims[1];
    double *p = read_ref(name, dims, 1);
    if (!p) return;
    qsort(p, (size_t)dims[0], sizeof *p, cmp_desc);
    for (int k = 0; k < nx->k; k++)
        if (fabs(p[k] - nx->p[k]) > 1e-4)
            fail_msg("%s: rank %d: p %.7f, reference %.7f", where, k + 1, nx->p[k], p[k]);
    free(p);
}

/* The shown layer's attention against a reference (h, n, n). */
static void check_attn_ref(const char *where, const attn_layer *L, const char *name) {
    int dims[3];
    double *a = read_ref(name, dims, 3);
    if (!a) return;
    CHECK_INT("reference heads", dims[0], L->h);
    CHECK_INT("reference n", dims[1], L->n);
    const size_t k = (size_t)dims[0] * dims[1] * dims[2];
    double worst = 0;
    for (size_t i = 0; i < k; i++) worst = fmax(worst, fabs(a[i] - L->attn[i]));
    if (!(worst <= 1e-4)) fail_msg("%s: max |attn - reference| = %g", where, worst);
    free(a);
}

/* --- loading ------------------------------------------------------------------------- */

static void test_load(void **st) {
    (void)st;
    const char *dir = model_dir();
    app_state *s = make_state(dir, REF_TEXT);
    view_state vs;
    const attn_layer *L = layer_of(s, &vs);
    CHECK_INT("h = n_head", N_HEAD, L->h);
    CHECK_INT("d_model = n_embd", N_EMBD, L->d_model);
    CHECK_INT("d_k", N_EMBD / N_HEAD, L->d_k);
    CHECK_INT("layer 1 shown", 0, L->layer);
    CHECK_INT("layers = n_layer", N_LAYER, L->layers);
    CHECK_INT("causal", ATTN_MASK_CAUSAL, L->mask);
    CHECK_INT("n = the model's BPE tokens", bpe_count(dir, REF_TEXT), L->n);
    CHECK_INT("no padding", L->n, L->n_real);
    CHECK_NEAR("scale 1/sqrt(d_k)", 1.0 / sqrt(N_EMBD / N_HEAD), L->scale, 1e-6);
    CHECK_INT("no head off", 0, (int)L->off[0]);
    CHECK_INT("no re-split", 0, vs.resplit);
    for (int i = 0; i < L->n; i++) CHECK_TRUE("a label per token", L->tokens && L->tokens[i]);
    check_causal_rows("layer 1", L);

    assert_non_null(vs.overview);
    const view_overview *ov = vs.overview; /* reassigned once the overview opens */
    CHECK_INT("overview layers", N_LAYER, ov->layers);
    CHECK_INT("overview h", N_HEAD, ov->h);
    CHECK_INT("overview n", L->n, ov->n);
    CHECK_INT("overview's layer", 0, ov->layer);
    CHECK_TRUE("overview named after the folder", has(dir, ov->name));
    CHECK_INT("overview closed", 0, vs.overview_open);
    /* closed, its maps are not computed (every layer's attention, computed again) */
    for (int l = 0; l < N_LAYER; l++) CHECK_TRUE("no layer's maps", ov->attn[l] == NULL);
    CHECK_TRUE("O opens the overview", press(s, 'o', 0));
    L = layer_of(s, &vs);
    ov = vs.overview;
    CHECK_INT("maps of n x n: n is under the pooled side", L->n, ov->map_n);
    for (int l = 0; l < N_LAYER; l++) CHECK_TRUE("each layer's heads", ov->attn[l] != NULL);
    CHECK_NEAR("the overview's layer 1 is the layer shown", 0,
               max_diff(ov->attn[0], L->attn, (size_t)N_HEAD * L->n * L->n), 1e-6);
    for (int k = 0; k < N_LAYER * N_HEAD; k++) CHECK_INT("no head off", 0, ov->off[k]);

    assert_non_null(vs.next);
    const view_next *nx = vs.next;
    CHECK_INT("five next tokens", 5, nx->k);
    double sum = 0;
    for (int k = 0; k < nx->k; k++) {
        CHECK_TRUE("p in (0, 1]", nx->p[k] > 0 && nx->p[k] <= 1);
        if (k) CHECK_TRUE("descending", nx->p[k] <= nx->p[k - 1]);
        CHECK_TRUE("no comparison without heads removed", nx->p_full[k] < 0);
        CHECK_TRUE("a label", nx->token[k] && nx->token[k][0]);
        sum += nx->p[k];
    }
    CHECK_TRUE("sum <= 1", sum <= 1.0 + 1e-6);
    CHECK_INT("not cut", 0, nx->cut);
    CHECK_TRUE("after the last token",
               nx->after && L->tokens && strcmp(nx->after, L->tokens[L->n - 1]) == 0);

    /* independent numbers: the ids' count, the panel's top 5 */
    int dims[1];
    double *ids = read_ref("ids.txt", dims, 1);
    if (ids) CHECK_INT("bpe_ref's token count", dims[0], L->n);
    free(ids);
    check_next_ref("next tokens", nx, "probs.txt");
    app_state_destroy(s);
}

/* --- layers: Y, Shift+Y, a click in the overview --------------------------------------- */

static void test_layer_keys(void **st) {
    (void)st;
    app_state *s = make_state(model_dir(), REF_TEXT);
    view_state vs;
    static const struct {
        int mods, want;
    } steps[] = {{0, 1},
                 {0, 2},
                 {0, 0},
                 {APP_MOD_SHIFT, 2},
                 {APP_MOD_SHIFT, 1},
                 {APP_MOD_SHIFT, 0},
                 {APP_MOD_SHIFT, 2},
                 {0, 0}};
    CHECK_TRUE("O opens the overview (its maps computed)", press(s, 'o', 0));
    for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++) {
        const unsigned long v0 = s->data_version;
        CHECK_TRUE("Y redraws", press(s, 'y', steps[i].mods));
        const attn_layer *L = layer_of(s, &vs);
        CHECK_INT("Y: the layer", steps[i].want, L->layer);
        CHECK_INT("the overview marks it", steps[i].want, vs.overview->layer);
        CHECK_INT("its own heads", N_HEAD, L->h);
        CHECK_INT("layers", N_LAYER, L->layers);
        CHECK_TRUE("data changed", s->data_version != v0);
        char want[64];
        snprintf(want, sizeof want, "layer %d of %d", steps[i].want + 1, N_LAYER);
        CHECK_TRUE("status names the layer", has(s->status, want));
        CHECK_NEAR("the layer shown is the overview's", 0,
                   max_diff(vs.overview->attn[steps[i].want], L->attn, (size_t)L->h * L->n * L->n),
                   1e-6);
        check_causal_rows("layer rows", L);
        if (steps[i].want == 1) check_attn_ref("layer 2 against gpt2_ref", L, "attn_l2.txt");
    }

    /* the overview (open since the start), and a click in it (no head: test_focus
       clicks one) */
    app_view(s, &vs);
    CHECK_INT("overview open", 1, vs.overview_open);
    CHECK_STR("the help's tokenizer: GPT-2's files",
              "GPT-2's byte-level BPE (vocab.json, merges.txt)", vs.overview->tokenizer);
    app_action a = {.kind = ACT_LAYER, .arg = 2, .x = 0};
    CHECK_TRUE("click redraws", app_apply(s, &a));
    const attn_layer *L = layer_of(s, &vs);
    CHECK_INT("clicked layer", 2, L->layer);
    CHECK_INT("no head clicked: none focused", 0, s->look.focus);
    CHECK_INT("the overview closes", 0, vs.overview_open);
    CHECK_INT("overview marks the layer", 2, vs.overview->layer);
    CHECK_TRUE("status names the layer", has(s->status, "layer 3 of 3"));
    press(s, 'o', 0);
    press(s, 'o', 0);
    app_view(s, &vs);
    CHECK_INT("O twice: closed", 0, vs.overview_open);
    app_state_destroy(s);
}

/* --- Up / Down: the shown layer re-split ---------------------------------------------- */

static int next_divisor(int h, int d, int dir) {
    for (int k = h + dir; k >= 1 && k <= d; k += dir)
        if (d % k == 0) return k;
    return 0;
}

static void test_resplit(void **st) {
    (void)st;
    app_state *s = make_state(model_dir(), REF_TEXT);
    view_state vs;
    const attn_layer *L = layer_of(s, &vs);
    const int n = L->n;
    float *native = copy_attn(L);
    float *out = malloc((size_t)n * N_EMBD * sizeof *out);
    assert_non_null(out);
    memcpy(out, L->out, (size_t)n * N_EMBD * sizeof *out);
    float p0[VIEW_NEXT_MAX];
    memcpy(p0, vs.next->p, sizeof p0);

    int h = N_HEAD, ups = 0;
    while (next_divisor(h, N_EMBD, +1)) {
        CHECK_TRUE("Up redraws", press(s, APP_KEY_UP, 0));
        h = next_divisor(h, N_EMBD, +1);
        ups++;
        L = layer_of(s, &vs);
        CHECK_INT("Up: the next divisor of d_model", h, L->h);
        CHECK_INT("d_k", N_EMBD / h, L->d_k);
        CHECK_INT("d_model stays", N_EMBD, L->d_model);
        CHECK_INT("n stays", n, L->n);
        CHECK_INT("re-split", 1, vs.resplit);
        CHECK_INT("the overview keeps the trained heads", N_HEAD, vs.overview->h);
        CHECK_NEAR("scale 1/sqrt(d_k)", 1.0 / sqrt(N_EMBD / h), L->scale, 1e-6);
        char want[96];
        snprintf(want, sizeof want, "re-split: trained with %d heads, shown as %d", N_HEAD, h);
        CHECK_TRUE("status says it", has(s->status, want));
        check_causal_rows("re-split rows", L);
        CHECK_NEAR("the next tokens stay (the stream is the model's)", 0,
                   max_diff(p0, vs.next->p, (size_t)vs.next->k), 0);
        if (h == 8) check_attn_ref("re-split at 8 against gpt2_ref", L, "resplit8_l1.txt");
    }
    CHECK_INT("reached h = d_model", N_EMBD, h);
    press(s, APP_KEY_UP, 0);
    L = layer_of(s, &vs);
    CHECK_INT("Up at h = d_model refused", N_EMBD, L->h);
    CHECK_TRUE("status says why", has(s->status, "no more heads"));

    /* Y keeps the re-split on the next layer */
    press(s, 'y', 0);
    L = layer_of(s, &vs);
    CHECK_INT("layer 2", 1, L->layer);
    CHECK_INT("still re-split", N_EMBD, L->h);
    check_causal_rows("layer 2 re-split", L);
    press(s, 'y', APP_MOD_SHIFT);

    while (ups-- > 0) {
        const int want = next_divisor(h, N_EMBD, -1);
        press(s, APP_KEY_DOWN, 0);
        h = want;
        L = layer_of(s, &vs);
        CHECK_INT("Down: the previous divisor", want, L->h);
    }
    CHECK_INT("back at the model's own heads", N_HEAD, L->h);
    CHECK_INT("no re-split", 0, vs.resplit);
    CHECK_TRUE("status says so", has(s->status, "layer 1 at its own 4 heads"));
    CHECK_NEAR("the same attention as before", 0, max_diff(native, L->attn, (size_t)N_HEAD * n * n),
               1e-6);
    CHECK_NEAR("the same output as before", 0, max_diff(out, L->out, (size_t)n * N_EMBD), 1e-6);

    press(s, APP_KEY_DOWN, 0);
    L = layer_of(s, &vs);
    CHECK_INT("Down to 2", 2, L->h);
    CHECK_INT("re-split", 1, vs.resplit);
    CHECK_TRUE("fewer heads said", has(s->status, "trained with 4 heads, shown as 2"));
    press(s, APP_KEY_DOWN, 0);
    L = layer_of(s, &vs);
    CHECK_INT("Down to 1", 1, L->h);
    check_causal_rows("one head", L);
    press(s, APP_KEY_DOWN, 0);
    L = layer_of(s, &vs);
    CHECK_INT("Down at h = 1 refused", 1, L->h);
    CHECK_TRUE("status says why", has(s->status, "no fewer heads"));
    press(s, APP_KEY_UP, 0);
    press(s, APP_KEY_UP, 0);
    L = layer_of(s, &vs);
    CHECK_INT("Up twice: 4 again", N_HEAD, L->h);
    CHECK_INT("no re-split", 0, vs.resplit);
    CHECK_NEAR("the same attention again", 0, max_diff(native, L->attn, (size_t)N_HEAD * n * n),
               1e-6);
    free(native);
    free(out);
    app_state_destroy(s);
}

/* --- X / Shift+X: heads removed --------------------------------------------------------- */

typedef struct {
    float p[VIEW_NEXT_MAX];
    char token[VIEW_NEXT_MAX][64];
    float *ov[N_LAYER];
    int n;
} snapshot;

/* The overview open: its maps are computed only then (gpt2_run_overview). */
static void open_overview(app_state *s) {
    view_state vs;
    app_view(s, &vs);
    if (!vs.overview_open) press(s, 'o', 0);
}

static void snap(app_state *s, snapshot *z) {
    open_overview(s);
    view_state vs;
    const attn_layer *L = layer_of(s, &vs);
    z->n = L->n;
    memcpy(z->p, vs.next->p, sizeof z->p);
    for (int k = 0; k < vs.next->k; k++)
        snprintf(z->token[k], sizeof z->token[k], "%s", vs.next->token[k]);
    const size_t hnn = (size_t)N_HEAD * L->n * L->n;
    for (int l = 0; l < N_LAYER; l++) {
        z->ov[l] = malloc(hnn * sizeof(float));
        assert_non_null(z->ov[l]);
        memcpy(z->ov[l], vs.overview->attn[l], hnn * sizeof(float));
    }
}

static void snap_free(snapshot *z) {
    for (int l = 0; l < N_LAYER; l++) free(z->ov[l]);
}

/* the overview's layer l against the snapshot's: 1 if bitwise equal */
static int layer_same(app_state *s, const snapshot *z, int l) {
    open_overview(s);
    view_state vs;
    app_view(s, &vs);
    return memcmp(z->ov[l], vs.overview->attn[l], (size_t)N_HEAD * z->n * z->n * sizeof(float)) ==
           0;
}

static int p_same(const app_state *s, const snapshot *z) {
    view_state vs;
    app_view(s, &vs);
    for (int k = 0; k < vs.next->k; k++)
        if (vs.next->p[k] != z->p[k] || strcmp(vs.next->token[k], z->token[k]) != 0) return 0;
    return 1;
}

/* After a removal: p_full holds the old probability of each token the old panel showed. */
static void check_p_full(const app_state *s, const snapshot *z) {
    view_state vs;
    app_view(s, &vs);
    const view_next *nx = vs.next;
    for (int k = 0; k < nx->k; k++) {
        CHECK_TRUE("p_full given", nx->p_full[k] >= 0);
        for (int j = 0; j < nx->k; j++)
            if (strcmp(nx->token[k], z->token[j]) == 0)
                CHECK_NEAR("p_full: the probability with every head on", z->p[j], nx->p_full[k],
                           1e-7);
        if (k) CHECK_TRUE("still descending", nx->p[k] <= nx->p[k - 1]);
    }
}

static void edit_to(app_state *s, const char *text);

static void test_ablate(void **st) {
    (void)st;
    app_state *s = make_state(model_dir(), REF_TEXT);
    view_state vs;
    snapshot z;
    snap(s, &z);

    /* X on layer 1: with no head focused it says so; head 2 by the action's arg
       (test_focus presses X on a focused head) */
    press(s, 'x', 0);
    CHECK_TRUE("no focus: says so", has(s->status, "focus a head first"));
    CHECK_TRUE("nothing removed", p_same(s, &z));
    app_action a = {.kind = ACT_ABLATE, .arg = 2};
    CHECK_TRUE("X redraws", app_apply(s, &a));
    const attn_layer *L = layer_of(s, &vs);
    CHECK_TRUE("head 2's bit set", (L->off[0] & 2u) != 0);
    CHECK_INT("only head 2's", 2, (int)L->off[0]);
    CHECK_INT("the overview marks it", 1, vs.overview->off[0 * N_HEAD + 1]);
    CHECK_TRUE("status says it", has(s->status, "head 2 of layer 1 removed"));
    CHECK_TRUE("the next tokens change", !p_same(s, &z));
    check_p_full(s, &z);
    CHECK_TRUE("layer 1's own attention stays", layer_same(s, &z, 0));
    CHECK_TRUE("layer 2 is recomputed", !layer_same(s, &z, 1));
    CHECK_TRUE("layer 3 is recomputed", !layer_same(s, &z, 2));
    for (int r = 0; r < L->n; r++)
        for (int c = 0; c < L->d_k; c++)
            CHECK_NEAR("Concat's band of head 2 is zero", 0,
                       L->concat[(size_t)r * L->d_model + L->d_k + c], 0);
    check_next_ref("head 2 of layer 1 removed", vs.next, "off_l1h2.txt");

    /* Shift+X: exactly the first numbers again */
    CHECK_TRUE("Shift+X redraws", press(s, 'x', APP_MOD_SHIFT));
    L = layer_of(s, &vs);
    CHECK_INT("no head off", 0, (int)L->off[0]);
    CHECK_TRUE("status says it", has(s->status, "every head on again"));
    CHECK_TRUE("the first probabilities, exactly", p_same(s, &z));
    for (int k = 0; k < vs.next->k; k++) CHECK_TRUE("no comparison", vs.next->p_full[k] < 0);
    for (int l = 0; l < N_LAYER; l++) CHECK_TRUE("every layer as at first", layer_same(s, &z, l));

    /* a head of layer 2: layers 1 and 2 stay, layer 3 changes; X again brings it back */
    press(s, 'y', 0);
    a.arg = 3;
    CHECK_TRUE("X on head 3 of layer 2", app_apply(s, &a));
    L = layer_of(s, &vs);
    CHECK_INT("head 3's bit", 4, (int)L->off[0]);
    CHECK_INT("layer 2 shown", 1, L->layer);
    CHECK_INT("the overview marks it", 1, vs.overview->off[1 * N_HEAD + 2]);
    CHECK_TRUE("status says it", has(s->status, "head 3 of layer 2 removed"));
    CHECK_TRUE("layer 1 stays", layer_same(s, &z, 0));
    CHECK_TRUE("layer 2 stays", layer_same(s, &z, 1));
    CHECK_TRUE("layer 3 changes", !layer_same(s, &z, 2));
    CHECK_TRUE("the next tokens change", !p_same(s, &z));
    check_p_full(s, &z);
    /* the off bits belong to their layer: layer 1 shows none */
    press(s, 'y', APP_MOD_SHIFT);
    L = layer_of(s, &vs);
    CHECK_INT("layer 1: no head off", 0, (int)L->off[0]);
    press(s, 'y', 0);
    CHECK_TRUE("X again: back", app_apply(s, &a));
    L = layer_of(s, &vs);
    CHECK_INT("no head off", 0, (int)L->off[0]);
    CHECK_TRUE("status says back", has(s->status, "head 3 of layer 2 back"));
    CHECK_TRUE("the first probabilities", p_same(s, &z));
    CHECK_TRUE("layer 3 as at first", layer_same(s, &z, 2));

    /* re-split: X and Shift+X are refused and nothing changes */
    app_apply(s, &a); /* head 3 of layer 2 off again */
    snapshot y;
    snap(s, &y);
    press(s, APP_KEY_UP, 0);
    L = layer_of(s, &vs);
    CHECK_INT("re-split at 8", 8, L->h);
    s->status[0] = '\0';
    a.arg = 1;
    app_apply(s, &a);
    CHECK_TRUE("X refused in a re-split", has(s->status, "back to h = 4"));
    CHECK_TRUE("the probabilities stay", p_same(s, &y));
    for (int l = 0; l < N_LAYER; l++) CHECK_TRUE("every layer stays", layer_same(s, &y, l));
    app_view(s, &vs);
    for (int k = 0; k < N_LAYER * N_HEAD; k++)
        CHECK_INT("the overview's removed heads stay", k == 1 * N_HEAD + 2, vs.overview->off[k]);
    s->status[0] = '\0';
    press(s, 'x', APP_MOD_SHIFT);
    CHECK_TRUE("Shift+X refused in a re-split", has(s->status, "back to h = 4"));
    CHECK_TRUE("the probabilities stay", p_same(s, &y));
    press(s, APP_KEY_DOWN, 0);
    press(s, 'x', APP_MOD_SHIFT);
    CHECK_TRUE("Shift+X at h = 4", p_same(s, &z));

    /* a new text: the removed heads stay removed, a re-split stays */
    a.arg = 1; /* head 1 of layer 2 */
    app_apply(s, &a);
    const char *text = "the fox runs";
    edit_to(s, text);
    L = layer_of(s, &vs);
    CHECK_INT("the new text's tokens", bpe_count(model_dir(), text), L->n);
    CHECK_INT("head 1 of layer 2 still off", 1, (int)L->off[0]);
    CHECK_INT("the overview still marks it", 1, vs.overview->off[1 * N_HEAD + 0]);
    for (int k = 0; k < vs.next->k; k++) CHECK_TRUE("p_full given", vs.next->p_full[k] >= 0);
    press(s, APP_KEY_UP, 0);
    edit_to(s, REF_TEXT);
    L = layer_of(s, &vs);
    CHECK_INT("the re-split stays", 8, L->h);
    CHECK_INT("re-split", 1, vs.resplit);
    CHECK_INT("n", z.n, L->n);
    check_causal_rows("re-split on a new text", L);
    press(s, APP_KEY_DOWN, 0);
    press(s, 'x', APP_MOD_SHIFT);
    CHECK_TRUE("the first numbers again", p_same(s, &z));
    for (int l = 0; l < N_LAYER; l++) CHECK_TRUE("every layer as at first", layer_same(s, &z, l));
    snap_free(&y);
    snap_free(&z);
    app_state_destroy(s);
}

/* --- keys of the random model: refused, nothing changes ----------------------------------- */

static void test_refused_keys(void **st) {
    (void)st;
    app_state *s = make_state(model_dir(), REF_TEXT);
    static const struct {
        int key;
        const char *why;
    } keys[] = {{APP_KEY_RIGHT, "d_model"},
                {APP_KEY_LEFT, "d_model"},
                {'r', "weights"},
                {'m', "causal mask"},
                {'n', "scaled by 1/\xE2\x88\x9A"},
                {'[', "at temperature 1"},
                {']', "at temperature 1"},
                {'e', "padding"}};
    view_state vs;
    const attn_layer *L = layer_of(s, &vs);
    const int n = L->n;
    float *attn = copy_attn(L);
    const size_t nd = (size_t)n * N_EMBD;
    float *out = malloc(nd * sizeof *out), *q = malloc(nd * sizeof *q);
    assert_true(out && q);
    memcpy(out, L->out, nd * sizeof *out);
    memcpy(q, L->q, nd * sizeof *q);
    snapshot z;
    snap(s, &z);
    const mha_config cfg = s->cfg;
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        s->status[0] = '\0';
        const unsigned long v0 = s->data_version;
        press(s, keys[i].key, 0);
        if (!has(s->status, keys[i].why))
            fail_msg("key %zu: status \"%s\" lacks \"%s\"", i, s->status, keys[i].why);
        CHECK_TRUE("the status names the model", has(s->status, vs.overview->name));
        L = layer_of(s, &vs);
        CHECK_INT("h", N_HEAD, L->h);
        CHECK_INT("d_model", N_EMBD, L->d_model);
        CHECK_INT("n", n, L->n);
        CHECK_INT("causal", ATTN_MASK_CAUSAL, L->mask);
        CHECK_INT("no padding", n, L->n_real);
        CHECK_NEAR("scale", 1.0 / sqrt(N_EMBD / N_HEAD), L->scale, 1e-7);
        CHECK_INT("data unchanged", (int)v0, (int)s->data_version);
        CHECK_TRUE("attention bitwise", memcmp(attn, L->attn, (size_t)N_HEAD * n * n * 4) == 0);
        CHECK_TRUE("output bitwise", memcmp(out, L->out, nd * sizeof *out) == 0);
        CHECK_TRUE("Q bitwise", memcmp(q, L->q, nd * sizeof *q) == 0);
        CHECK_TRUE("next tokens", p_same(s, &z));
        for (int l = 0; l < N_LAYER; l++) CHECK_TRUE("every layer", layer_same(s, &z, l));
        CHECK_INT("random model's h untouched", cfg.h, s->cfg.h);
        CHECK_INT("random model's d untouched", cfg.d_model, s->cfg.d_model);
        CHECK_INT("random model's seed untouched", (int)cfg.seed, (int)s->cfg.seed);
        CHECK_INT("random model's mask untouched", cfg.mask, s->cfg.mask);
        CHECK_INT("random model's pad untouched", cfg.pad, s->cfg.pad);
    }
    free(attn);
    free(out);
    free(q);
    snap_free(&z);
    app_state_destroy(s);
}

/* --- the text: the model's tokenizer, cut to n_positions ------------------------------------ */

/* --- the shown layer after an edit: its kept rows and the new ones ------------------ */

/* The layer shown by s against the same layer of a state opened on its text (every
   row computed): X, scores, attention, Concat and head_i within 1e-6. */
static void check_shown_as_fresh(app_state *s, const char *text, int layer, const char *off,
                                 const char *where) {
    int rc = 0;
    char err[256];
    app_state *f =
        make_state_with(model_dir(), text, layer + 1, 0, off, CLI_PANEL_ALL, &rc, err, sizeof err);
    if (!f) fail_msg("%s: a fresh state: %s", where, err);
    view_state va, vb;
    const attn_layer *a = layer_of(s, &va), *b = layer_of(f, &vb);
    CHECK_INT("the same layer", b->layer, a->layer);
    CHECK_INT("the same n", b->n, a->n);
    const size_t hnn = (size_t)a->h * a->n * a->n, nd = (size_t)a->n * a->d_model;
    const double e[5] = {max_diff(a->x, b->x, nd), max_diff_inf(a->scores, b->scores, hnn),
                         max_diff(a->attn, b->attn, hnn), max_diff(a->concat, b->concat, nd),
                         max_diff(a->heads, b->heads, nd)};
    static const char *const names[5] = {"X", "scores", "attn", "Concat", "head_i"};
    for (int k = 0; k < 5; k++)
        if (!(e[k] <= 1e-6))
            fail_msg("%s: %s off the fresh state's by %.3g (n = %d)", where, names[k], e[k], a->n);
    app_state_destroy(f);
}

/* Typing at the end keeps the shown layer's rows before the new tokens and computes
   the new ones (gpt2.c's show_rows); a deletion at the end, a change in the middle and
   a head removed after the shown layer too. Each against a state opened on the text. */
static void test_shown_rows(void **st) {
    (void)st;
    static const char *const texts[] = {
        "Heads attend to previous tokens",
        "Heads attend to previous tokens, and to tokens that repeat",
        "Heads attend to previous tokens, and to tokens that repeat: heads attend",
        "Heads attend to previous tokens, and",
        "Tails attend to previous tokens, and",
    };
    app_state *s = make_state(model_dir(), texts[0]);
    press(s, 'y', 0); /* layer 2: rows kept only where layers 1 and 2 were not recomputed */
    for (size_t i = 1; i < sizeof texts / sizeof texts[0]; i++) {
        edit_to(s, texts[i]);
        check_shown_as_fresh(s, texts[i], 1, NULL, texts[i]);
    }
    /* head 2 of layer 3 removed (after the layer shown), then a token typed */
    press(s, 'y', 0);
    press(s, '2', 0);
    press(s, 'x', 0);
    press(s, APP_KEY_ESCAPE, 0);
    press(s, 'y', 0);
    press(s, 'y', 0); /* layer 2 again (3 layers: 3, 1, 2) */
    static const char more[] = "Tails attend to previous tokens, and to tokens";
    edit_to(s, more);
    check_shown_as_fresh(s, more, 1, "3:2", "a head removed in layer 3, then typing");
    app_state_destroy(s);
}

static void edit_to(app_state *s, const char *text) {
    CHECK_TRUE("Return opens the field", press(s, APP_KEY_RETURN, 0));
    CHECK_INT("editing", 1, s->editing);
    app_action a = {.kind = ACT_EDIT_CLEAR};
    app_apply(s, &a);
    a = (app_action){.kind = ACT_EDIT_INSERT, .text = text};
    app_apply(s, &a);
    press(s, APP_KEY_RETURN, 0);
}

static void test_text(void **st) {
    (void)st;
    const char *dir = model_dir();
    app_state *s = make_state(dir, REF_TEXT);
    view_state vs;

    /* Tab: the next sample, through the model's tokenizer */
    CHECK_TRUE("Tab redraws", press(s, APP_KEY_TAB, 0));
    CHECK_TRUE("a sample", s->sample >= 1);
    const attn_layer *L = layer_of(s, &vs);
    const char *smp = samples_get(s->sample - 1)->text;
    int want = bpe_count(dir, smp);
    CHECK_INT("n: the sample's BPE tokens", want < 64 ? want : 64, L->n);
    CHECK_INT("still h = 4", N_HEAD, L->h);
    CHECK_INT("the overview's n", L->n, vs.overview->n);
    check_causal_rows("the sample", L);

    /* every sample in turn, and back to the first: cut where it is over 64 tokens */
    for (int i = 1; i <= samples_count(); i++) {
        s->status[0] = '\0';
        press(s, APP_KEY_TAB, 0);
        L = layer_of(s, &vs);
        const int total = bpe_count(dir, samples_get(s->sample - 1)->text);
        char where[64];
        snprintf(where, sizeof where, "sample %d", s->sample);
        if (L->n != (total < 64 ? total : 64))
            fail_msg("%s: n %d, its BPE tokens %d (n_positions 64)", where, L->n, total);
        CHECK_INT("cut when over 64", total > 64, vs.next->cut);
        if (total > 64 && !has(s->status, "text cut to its first 64"))
            fail_msg("%s: cut, status \"%s\"", where, s->status);
        check_causal_rows(where, L);
    }
    CHECK_TRUE("a sample", s->sample >= 1);

    /* the text field */
    press(s, 'y', 0); /* the layer shown stays across a new text */
    const char *text = "Heads attend to previous tokens, and to tokens that repeat.";
    edit_to(s, text);
    CHECK_INT("field closed", 0, s->editing);
    L = layer_of(s, &vs);
    CHECK_INT("custom text", 0, s->sample);
    CHECK_STR("kept as custom", text, s->custom);
    CHECK_INT("n: the text's BPE tokens", bpe_count(dir, text), L->n);
    CHECK_INT("layer 2 still shown", 1, L->layer);
    CHECK_INT("not cut", 0, vs.next->cut);
    check_causal_rows("custom text", L);

    /* an empty text is refused: the model and its text stay */
    const int n0 = L->n;
    s->status[0] = '\0';
    edit_to(s, "");
    L = layer_of(s, &vs);
    CHECK_INT("empty text: n stays", n0, L->n);
    CHECK_STR("custom stays", text, s->custom);
    CHECK_TRUE("status says why", s->status[0] != '\0');
    if (s->editing) press(s, APP_KEY_ESCAPE, 0);

    /* a text longer than n_positions: cut, and said */
    char lng[1024];
    snprintf(lng, sizeof lng, "%s %s %s", REF_TEXT, REF_TEXT, REF_TEXT);
    const int total = bpe_count(dir, lng);
    CHECK_TRUE("the long text is over 64 tokens", total > 64);
    edit_to(s, lng);
    L = layer_of(s, &vs);
    CHECK_INT("cut to n_positions (64)", 64, L->n);
    char msg[128];
    snprintf(msg, sizeof msg, "text cut to its first 64 of %d tokens", total);
    if (!has(s->status, msg)) fail_msg("status \"%s\" lacks \"%s\"", s->status, msg);
    CHECK_INT("the panel says cut", 1, vs.next->cut);
    CHECK_STR("the whole text kept as custom", lng, s->custom);
    app_state_destroy(s);

    const char *sdir = short_dir();
    s = make_state(sdir, REF_TEXT);
    L = layer_of(s, &vs);
    CHECK_INT("cut to n_positions at the start", 16, L->n);
    CHECK_INT("the panel says cut", 1, vs.next->cut);
    edit_to(s, lng);
    L = layer_of(s, &vs);
    CHECK_INT("cut to n_positions", 16, L->n);
    snprintf(msg, sizeof msg, "text cut to its first 16 of %d tokens", bpe_count(sdir, lng));
    if (!has(s->status, msg)) fail_msg("status \"%s\" lacks \"%s\"", s->status, msg);
    CHECK_TRUE("status says how many positions", has(s->status, "holds 16 positions"));
    CHECK_INT("the panel says cut", 1, vs.next->cut);
    check_causal_rows("cut text", L);
    edit_to(s, "fox");
    L = layer_of(s, &vs);
    CHECK_INT("a short text", bpe_count(sdir, "fox"), L->n);
    CHECK_INT("not cut", 0, vs.next->cut);
    app_state_destroy(s);
}

/* --- a model that cannot be opened: the one shown stays ------------------------------------ */

static void test_open_bad(void **st) {
    (void)st;
    const char *dir = model_dir();
    app_state *s = make_state(dir, REF_TEXT);
    CHECK_INT("no jobs layer", 0, s->req.attached);
    press(s, 'y', 0);
    view_state vs;
    const attn_layer *L = layer_of(s, &vs);
    const int n = L->n;
    float *attn = copy_attn(L);
    const void *gpt = s->gpt;
    char name[256];
    snprintf(name, sizeof name, "%s", vs.overview->name);

    const char *tmp = getenv("MHAVIZ_TEST_TMP");
    char missing[4096], broken[4096], path[4200];
    snprintf(missing, sizeof missing, "%s/no-such-model", tmp ? tmp : "/nonexistent");
    snprintf(broken, sizeof broken, "%s/broken-config", tmp ? tmp : "/tmp");
    const char *bad[] = {missing, broken};
    if (tmp) { /* a folder whose config.json is not JSON */
        mkdir(broken, 0700);
        snprintf(path, sizeof path, "%s/config.json", broken);
        FILE *f = fopen(path, "w");
        assert_non_null(f);
        fputs("{\"n_layer\": 2, \"n_head\": ", f);
        fclose(f);
        static const char *const files[] = {"model.safetensors", "vocab.json", "merges.txt"};
        for (int i = 0; i < 3; i++) { /* the rest of it whole */
            char from[4200];
            snprintf(from, sizeof from, "%s/%s", dir, files[i]);
            snprintf(path, sizeof path, "%s/%s", broken, files[i]);
            if (symlink(from, path) != 0 && errno != EEXIST)
                fail_msg("%s: %s", path, strerror(errno));
        }
    }
    for (int i = 0; i < (tmp ? 2 : 1); i++) {
        s->status[0] = '\0';
        app_open_model(s, bad[i]);
        CHECK_TRUE("the same model", s->gpt == gpt);
        app_layout(s);
        L = layer_of(s, &vs);
        CHECK_STR("the same name", name, vs.overview->name);
        CHECK_INT("the same layer", 1, L->layer);
        CHECK_INT("the same n", n, L->n);
        CHECK_INT("the same h", N_HEAD, L->h);
        CHECK_TRUE("the same attention", memcmp(attn, L->attn, (size_t)N_HEAD * n * n * 4) == 0);
        const char *file = i == 0 ? "no-such-model" : "config.json";
        if (!has(s->status, file)) fail_msg("status \"%s\" does not name %s", s->status, file);
        /* and it stays to be read, as every error does, then goes */
        const double t0 = s->now_ms;
        app_tick(s, t0 + 1000.0);
        if (!has(s->status, file))
            fail_msg("a second later the status is \"%s\", not the error naming %s", s->status,
                     file);
        app_tick(s, t0 + APP_NOTICE_MS + 1.0);
        CHECK_STR("the error gone after APP_NOTICE_MS", "", s->status);
    }

    /* a good one replaces it: its first layer at its own heads */
    press(s, APP_KEY_UP, 0);
    app_open_model(s, short_dir());
    CHECK_TRUE("a model", app_gpt_active(s));
    /* the window lays the state out before it draws: app_layout derives the new
       model's layer (until then app_view's layer points into the model freed) */
    app_layout(s);
    L = layer_of(s, &vs);
    CHECK_TRUE("named after its folder", has(short_dir(), vs.overview->name));
    CHECK_INT("layer 1", 0, L->layer);
    CHECK_INT("its own heads", N_HEAD, L->h);
    CHECK_INT("no re-split", 0, vs.resplit);
    CHECK_INT("the text cut to its 16 positions", 16, L->n);
    check_causal_rows("the new model", L);
    free(attn);
    app_state_destroy(s);
}

/* --- the command line's --layer, -H, --ablate and --panel with --model ------------------- */

static void test_init_options(void **st) {
    (void)st;
    const char *dir = model_dir();
    char err[512];
    int rc;
    view_state vs;
    app_state *s =
        make_state_with(dir, REF_TEXT, 3, 8, "1:2,3:4", CLI_PANEL_ALL, &rc, err, sizeof err);
    if (rc != 0) fail_msg("init: %s", err);
    const attn_layer *L = layer_of(s, &vs);
    CHECK_INT("--layer 3", 2, L->layer);
    CHECK_INT("-H 8: re-split", 8, L->h);
    CHECK_INT("re-split", 1, vs.resplit);
    check_causal_rows("--layer 3 -H 8", L);
    for (int k = 0; k < N_LAYER * N_HEAD; k++)
        CHECK_INT("--ablate 1:2,3:4", k == 0 * N_HEAD + 1 || k == 2 * N_HEAD + 3,
                  vs.overview->off[k]);
    for (int k = 0; k < vs.next->k; k++) CHECK_TRUE("p_full given", vs.next->p_full[k] >= 0);
    app_state_destroy(s);

    /* --ablate 1:2 as in test_ablate's X: the same probabilities */
    s = make_state_with(dir, REF_TEXT, 0, 0, "1:2", CLI_PANEL_ALL, &rc, err, sizeof err);
    if (rc != 0) fail_msg("init: %s", err);
    app_view(s, &vs);
    check_next_ref("--ablate 1:2", vs.next, "off_l1h2.txt");
    float p[VIEW_NEXT_MAX];
    memcpy(p, vs.next->p, sizeof p);
    app_state *t = make_state(dir, REF_TEXT);
    app_action a = {.kind = ACT_ABLATE, .arg = 2};
    app_apply(t, &a);
    view_state vt;
    app_view(t, &vt);
    CHECK_NEAR("--ablate 1:2 = X on head 2 of layer 1", 0,
               max_diff(p, vt.next->p, (size_t)vt.next->k), 0);
    app_state_destroy(t);
    app_state_destroy(s);

    /* the panels of --export: the overview, ten next tokens */
    s = make_state_with(dir, REF_TEXT, 0, 0, NULL, CLI_PANEL_MODEL, &rc, err, sizeof err);
    if (rc != 0) fail_msg("init: %s", err);
    app_view(s, &vs);
    CHECK_INT("--panel model: the overview open", 1, vs.overview_open);
    CHECK_INT("five next tokens", 5, vs.next->k);
    app_state_destroy(s);
    s = make_state_with(dir, REF_TEXT, 0, 0, NULL, CLI_PANEL_NEXT, &rc, err, sizeof err);
    if (rc != 0) fail_msg("init: %s", err);
    app_view(s, &vs);
    CHECK_INT("--panel next: ten tokens", VIEW_NEXT_MAX, vs.next->k);
    double sum = 0;
    for (int k = 0; k < vs.next->k; k++) {
        if (k) CHECK_TRUE("descending", vs.next->p[k] <= vs.next->p[k - 1]);
        sum += vs.next->p[k];
    }
    CHECK_TRUE("sum <= 1", sum <= 1.0 + 1e-6);
    check_next_ref("ten next tokens", vs.next, "probs.txt");
    app_state_destroy(s);

    /* bad values: rc 2 and the option named */
    static const struct {
        int layer, h;
        const char *ablate, *want;
    } bad[] = {{4, 0, NULL, "--layer 4"}, {0, 5, NULL, "-H 5"},      {0, 64, NULL, "-H 64"},
               {0, 0, "4:1", "--ablate"}, {0, 0, "1:5", "--ablate"}, {0, 0, "x", "--ablate"}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        err[0] = '\0';
        s = make_state_with(dir, REF_TEXT, bad[i].layer, bad[i].h, bad[i].ablate, CLI_PANEL_ALL,
                            &rc, err, sizeof err);
        if (rc != 2) fail_msg("bad option %zu: rc %d (%s)", i, rc, err);
        if (!has(err, bad[i].want))
            fail_msg("bad option %zu: \"%s\" lacks %s", i, err, bad[i].want);
        CHECK_TRUE("no model", !app_gpt_active(s));
        app_state_destroy(s);
    }
    /* a folder that is not a model: rc 1, the file named */
    s = make_state_with("/nonexistent-model", REF_TEXT, 0, 0, NULL, CLI_PANEL_ALL, &rc, err,
                        sizeof err);
    CHECK_INT("a missing folder: rc 1", 1, rc);
    CHECK_TRUE("the path named", has(err, "/nonexistent-model"));
    app_state_destroy(s);
}

/* --- a head focused: 1-9, a click in the overview, X on the focused head ------------------ */

/* The derived share of head `head` (0-based) in the output, against Concat's band of
   that head times W^O's rows of it (layer.h's layout), computed here. */
static void check_share(const char *where, const view_state *vs, int head) {
    const attn_layer *L = vs->layer;
    if (!vs->step_share) fail_msg("%s: no derived share of head %d", where, head + 1);
    const int n = L->n, d = L->d_model, dk = L->d_k;
    double worst = 0;
    for (int r = 0; r < n; r++)
        for (int j = 0; j < d; j++) {
            double sum = 0;
            for (int c = 0; c < dk; c++)
                sum += (double)L->concat[(size_t)r * d + head * dk + c] *
                       L->w_o[(size_t)(head * dk + c) * d + j];
            worst = fmax(worst, fabs(sum - vs->step_share[(size_t)r * d + j]));
        }
    if (!(worst <= 1e-4)) fail_msg("%s: max |share - Concat_i W^O_i| = %g", where, worst);
}

static void test_focus(void **st) {
    (void)st;
    app_state *s = make_state(model_dir(), REF_TEXT);
    view_state vs;
    snapshot z;
    snap(s, &z);
    CHECK_TRUE("2 redraws", press(s, '2', 0));
    CHECK_INT("head 2 focused", 2, s->look.focus);
    const attn_layer *L = layer_of(s, &vs);
    CHECK_INT("the view's focus", 2, vs.look.focus);
    check_share("head 2 of layer 1", &vs, 1);
    CHECK_TRUE("X on the focused head", press(s, 'x', 0));
    L = layer_of(s, &vs);
    CHECK_INT("head 2's bit", 2, (int)L->off[0]);
    CHECK_TRUE("status says it", has(s->status, "head 2 of layer 1 removed"));
    CHECK_TRUE("X again", press(s, 'x', 0));
    CHECK_TRUE("status says back", has(s->status, "head 2 of layer 1 back"));
    CHECK_TRUE("the first probabilities", p_same(s, &z));

    /* a click in the overview: that layer, that head focused */
    press(s, 'o', 0);
    app_action a = {.kind = ACT_LAYER, .arg = 2, .x = 3};
    CHECK_TRUE("click redraws", app_apply(s, &a));
    L = layer_of(s, &vs);
    CHECK_INT("clicked layer", 2, L->layer);
    CHECK_INT("clicked head focused", 3, s->look.focus);
    CHECK_INT("the overview closes", 0, vs.overview_open);
    check_share("head 3 of layer 3", &vs, 2);
    a = (app_action){.kind = ACT_LAYER, .arg = 1, .x = 0};
    app_apply(s, &a);
    L = layer_of(s, &vs);
    CHECK_INT("layer 2", 1, L->layer);
    CHECK_INT("no head clicked: the focus stays", 3, s->look.focus);

    /* a re-split's heads can be focused; back at 4 heads a focus above 4 goes */
    press(s, APP_KEY_UP, 0);
    press(s, '7', 0);
    CHECK_INT("head 7 of 8 focused", 7, s->look.focus);
    L = layer_of(s, &vs);
    CHECK_INT("re-split at 8", 8, L->h);
    check_share("head 7 of the re-split", &vs, 6);
    press(s, APP_KEY_DOWN, 0);
    CHECK_INT("no head 7 of 4: focus gone", 0, s->look.focus);
    s->status[0] = '\0';
    press(s, '5', 0);
    CHECK_INT("no head 5 of 4: refused", 0, s->look.focus);
    CHECK_TRUE("status says why", has(s->status, "no head 5"));
    snap_free(&z);
    app_state_destroy(s);

    /* a model with more heads than the random model's 4 (the window's default h, as
       GPT-2 small's 12): every one of them can be focused */
    const char *wide = getenv("MHAVIZ_TEST_MODEL_WIDE");
    if (!wide || !*wide) return;
    s = make_state(wide, REF_TEXT);
    L = layer_of(s, &vs);
    CHECK_INT("8 heads", 8, L->h);
    press(s, '6', 0);
    CHECK_INT("head 6 of 8 focused", 6, s->look.focus);
    L = layer_of(s, &vs);
    check_share("head 6 of 8", &vs, 5);
    app_action x = {.kind = ACT_ABLATE, .arg = 0};
    app_apply(s, &x);
    L = layer_of(s, &vs);
    CHECK_INT("X removes the focused head 6", 1u << 5, (int)L->off[0]);
    app_state_destroy(s);
}

/* --- the text field's count: the model's own tokens --------------------------------------- */

static void test_field_count(void **st) {
    (void)st;
    const char *dir = model_dir();
    app_state *s = make_state(dir, REF_TEXT);
    press(s, APP_KEY_RETURN, 0);
    CHECK_INT("editing", 1, s->editing);
    CHECK_INT("the field counts the text's BPE tokens", bpe_count(dir, REF_TEXT), s->edit_tokens);
    app_action a = {.kind = ACT_EDIT_INSERT, .text = "naïve café, Übergröße"};
    app_apply(s, &a);
    CHECK_INT("the new text's BPE tokens", bpe_count(dir, "naïve café, Übergröße"), s->edit_tokens);
    press(s, APP_KEY_ESCAPE, 0);
    app_state_destroy(s);
}

/* --- the model writes (write.c): W, `.` and any key ------------------------------------- */

/* Ticks the state's clock (no jobs layer: each token computed at once) until it stops
   writing; returns the ticks taken. */
static int write_until_stopped(app_state *s, double *now) {
    int ticks = 0;
    while (app_write_on(s) && ticks < 1000) {
        *now += 50.0;
        app_tick(s, *now);
        ticks++;
    }
    return ticks;
}

/* The text W leaves: UTF-8 as Python's incremental decoder ('replace', not final)
   gives it for these bytes (checked with /usr/bin/python3 when written). */
static void check_write_text(void) {
    static const struct {
        const char *raw, *want;
    } cases[] = {
        {"ab", "ab"},
        {"a\xE2\x82", "a"}, /* begun: the next token may end it */
        {"a\xE2\x82"
         "b",
         "a\xEF\xBF\xBD"
         "b"}, /* one maximal part, one U+FFFD */
        {"\x81", "\xEF\xBF\xBD"},
        {"\xED\xA0\x80", "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD"},
        {"\xF0\x9F\x98", ""},
        {"\xF0\x9F\x98\x80", "\xF0\x9F\x98\x80"},
        {"\xF5", "\xEF\xBF\xBD"},
        {"x\xC3", "x"},
    };
    char out[64];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        app_write_text(out, sizeof out, (const unsigned char *)cases[i].raw, strlen(cases[i].raw));
        if (strcmp(out, cases[i].want) != 0) fail_msg("app_write_text case %zu", i);
    }
    app_write_text(out, 3, (const unsigned char *)"abcd", 4);
    CHECK_STR("cut to the room", "ab", out);
}

static void test_write(void **st) {
    (void)st;
    check_write_text();
    const char *dir = model_dir();
    const char *prompt = "The quick brown fox";
    /* `.` three times: three tokens after the text, one a press, none marked after */
    app_state *s = make_state(dir, prompt);
    s->write.seed = 7;
    const int n0 = layer_of(s, &(view_state){0})->n;
    for (int i = 0; i < 3; i++) press(s, '.', 0);
    view_state vs;
    CHECK_INT("`.` x3: three written", 3, app_gpt_written(s));
    CHECK_INT("`.` x3: n", n0 + 3, layer_of(s, &vs)->n);
    CHECK_INT("nothing marked after `.`", 0, vs.next->marked);
    CHECK_TRUE("the text grew", strlen(s->custom) > strlen(prompt));
    char dots[APP_EDIT_MAX];
    snprintf(dots, sizeof dots, "%s", s->custom);
    app_state_destroy(s);

    /* W with write-length 3: the same three (the same seed), a token drawn and marked
       before it goes in, then it stops by itself */
    s = make_state(dir, prompt);
    s->write.seed = 7;
    s->write.length = 3;
    s->write.pace_ms = 100;
    double now = 1000.0;
    app_tick(s, now);
    press(s, 'w', 0);
    CHECK_INT("W: writing", 1, app_write_on(s));
    CHECK_INT("W: a token drawn and marked", 1, layer_of(s, &vs) && vs.next->marked);
    CHECK_INT("W: none written yet", 0, app_gpt_written(s));
    const int ticks = write_until_stopped(s, &now);
    CHECK_TRUE("W stops by itself", ticks < 1000);
    CHECK_INT("W: write-length tokens", 3, app_gpt_written(s));
    CHECK_STR("W writes what `.` x3 wrote", dots, s->custom);
    CHECK_TRUE("the status says why it stopped", has(s->status, "write-length"));

    /* W again, then any key: it stops, and the key does nothing else */
    press(s, 'w', 0);
    CHECK_INT("W again: writing", 1, app_write_on(s));
    now += 150.0;
    app_tick(s, now); /* the first token goes in */
    const int written = app_gpt_written(s);
    CHECK_INT("one more written", 4, written);
    app_action a = app_key_action(s, 'x', 0);
    CHECK_INT("x while it writes: stop", ACT_WRITE_STOP, a.kind);
    app_apply(s, &a);
    CHECK_INT("stopped", 0, app_write_on(s));
    for (int i = 0; i < 5; i++) app_tick(s, now += 500.0);
    CHECK_INT("nothing written after the key", written, app_gpt_written(s));

    /* `.` with a head focused is the focus view's stage step, as before */
    press(s, '1', 0);
    press(s, '.', 0);
    CHECK_INT("`.` focused: stage 1", 1, s->look.step);
    CHECK_INT("`.` focused: nothing written", written, app_gpt_written(s));

    /* S: the pace steps, and a new text drops the written tokens */
    const int pace = s->write.pace_ms;
    press(s, 's', 0);
    CHECK_TRUE("S changes the pace", s->write.pace_ms != pace);
    edit_to(s, prompt);
    CHECK_INT("a new text: none written", 0, app_gpt_written(s));
    app_state_destroy(s);

    /* n_positions 16: W stops when the model holds no more tokens */
    s = make_state(short_dir(), prompt);
    const int n_prompt = layer_of(s, &vs)->n;
    s->write.length = 100;
    press(s, 'w', 0);
    write_until_stopped(s, &now);
    CHECK_INT("stopped at the context", 0, app_write_on(s));
    CHECK_INT("16 positions: the rest written", 16 - n_prompt, app_gpt_written(s));
    CHECK_INT("n", 16, layer_of(s, &vs)->n);
    CHECK_TRUE("the status says why", has(s->status, "no more tokens"));
    app_state_destroy(s);

    /* a lesson's `do = write 3` (a deck's page, --lesson --step: written at once) */
    const char *tmp = getenv("MHAVIZ_TEST_TMP");
    if (!tmp || !*tmp) return;
    char path[4096], err[512];
    snprintf(path, sizeof path, "%s/write.lesson", tmp);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fprintf(f, "title = t\nstep = writes\nmodel = %s\ntext = %s\nsample-seed = 7\ndo = write 3\n",
            dir, prompt);
    fclose(f);
    s = make_state(dir, REF_TEXT);
    if (app_teach_open(s, path, err, sizeof err) != 0) fail_msg("the lesson: %s", err);
    app_teach_finish(s);
    CHECK_INT("do = write 3: three written", 3, app_gpt_written(s));
    CHECK_STR("do = write 3 writes what `.` x3 wrote", dots, s->custom);
    app_state_destroy(s);
}

/* test_state_model [--only NAMES | --skip NAMES]: NAMES a comma-separated list. */
static int listed(const char *names, const char *name) {
    const size_t len = strlen(name);
    for (const char *p = names; *p;) {
        const char *end = strchr(p, ',');
        const size_t n = end ? (size_t)(end - p) : strlen(p);
        if (n == len && strncmp(p, name, n) == 0) return 1;
        if (!end) break;
        p = end + 1;
    }
    return 0;
}

int main(int argc, char **argv) {
    const struct CMUnitTest all[] = {
        cmocka_unit_test(test_load),         cmocka_unit_test(test_layer_keys),
        cmocka_unit_test(test_resplit),      cmocka_unit_test(test_ablate),
        cmocka_unit_test(test_refused_keys), cmocka_unit_test(test_text),
        cmocka_unit_test(test_shown_rows),   cmocka_unit_test(test_open_bad),
        cmocka_unit_test(test_focus),        cmocka_unit_test(test_field_count),
        cmocka_unit_test(test_init_options), cmocka_unit_test(test_write),
    };
    const size_t count = sizeof all / sizeof all[0];
    const int only = argc == 3 && strcmp(argv[1], "--only") == 0;
    const int skip = argc == 3 && strcmp(argv[1], "--skip") == 0;
    if (argc != 1 && !only && !skip) {
        fprintf(stderr, "usage: test_state_model [--only NAMES | --skip NAMES]\n");
        return 2;
    }
    struct CMUnitTest tests[sizeof all / sizeof all[0]];
    size_t k = 0;
    for (size_t i = 0; i < count; i++)
        if (argc == 1 || listed(argv[2], all[i].name) == only) tests[k++] = all[i];
    return _cmocka_run_group_tests("test_state_model", tests, k, NULL, NULL);
}
