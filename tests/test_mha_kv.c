/* test_mha_kv.c: the random model's heads sharing K/V heads (mha_config.kv_heads):
 * with h = 4 on 2 K/V heads, every head of a group holds the same K and V columns, the
 * mean of the group's heads' K and V as the model with one K/V head per head computes
 * them (K = X W^K is linear, so pooling W^K's columns pools K); Q, X and W^Q are
 * untouched; the attention of the shared heads changes; one K/V head for all (1) and
 * back to 0 (one each) give the first numbers exactly; a kv_heads that does not
 * divide h is refused by mha_config_check. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "mha.h"
#include "tok.h"

enum { H = 4, D = 32, DK = D / H };

static void compute(mha_model *m, const mha_config *cfg, const tok_list *t) {
    char err[MHA_ERR_LEN] = "";
    if (mha_model_compute(m, cfg, t, err, sizeof err) != 0) fail_msg("compute: %s", err);
}

/* max |a_block(i) - mean of base's blocks of group g| over the rows */
static double group_error(const float *a, const float *base, int n, int head, int kv) {
    const int r = H / kv, g = head / r;
    double worst = 0.0;
    for (int row = 0; row < n; row++)
        for (int c = 0; c < DK; c++) {
            double mean = 0.0;
            for (int j = 0; j < r; j++)
                mean += base[(size_t)row * D + (size_t)(g * r + j) * DK + c];
            mean /= r;
            worst = fmax(worst, fabs(a[(size_t)row * D + (size_t)head * DK + c] - mean));
        }
    return worst;
}

static void test_shared_kv(void **st) {
    (void)st;
    tok_list t = {0};
    char err[128];
    assert_int_equal(
        tok_split(&t, "the cat sat on the mat because it was warm", 0, NULL, err, sizeof err), 0);
    mha_model *m0 = mha_model_create(), *m = mha_model_create();
    assert_non_null(m0);
    assert_non_null(m);
    mha_config c0 = {.h = H, .d_model = D, .seed = 5, .mask = MHA_MASK_CAUSAL};
    compute(m0, &c0, &t);
    const int n = m0->n;
    for (int kv = 2; kv >= 1; kv--) {
        mha_config c = c0;
        c.kv_heads = kv;
        compute(m, &c, &t);
        for (int i = 0; i < H; i++) {
            assert_true(group_error(m->k, m0->k, n, i, kv) < 1e-5);
            assert_true(group_error(m->v, m0->v, n, i, kv) < 1e-5);
        }
        assert_memory_equal(m->q, m0->q, (size_t)n * D * sizeof(float));
        assert_memory_equal(m->w_q, m0->w_q, (size_t)D * D * sizeof(float));
        assert_memory_equal(m->x, m0->x, (size_t)n * D * sizeof(float));
        double diff = 0.0;
        for (size_t k = 0; k < (size_t)H * n * n; k++)
            diff = fmax(diff, fabs(m->attn[k] - m0->attn[k]));
        assert_true(diff > 1e-3); /* sharing K changes where the heads look */
    }
    /* back to one K/V head each: the first numbers exactly */
    compute(m, &c0, &t);
    assert_memory_equal(m->k, m0->k, (size_t)n * D * sizeof(float));
    assert_memory_equal(m->attn, m0->attn, (size_t)H * n * n * sizeof(float));
    mha_config bad = c0;
    bad.kv_heads = 3;
    assert_int_equal(mha_config_check(&bad, n, err, sizeof err), -1);
    assert_non_null(strstr(err, "must divide"));
    mha_model_destroy(m0);
    mha_model_destroy(m);
    tok_free(&t);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_shared_kv),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
