/* test_safetensors.c: the safetensors reader (src/model/safetensors.c) on buffers
 * built here through st_parse: F16 and BF16 conversion against values worked out
 * by hand from the bit patterns (exact: every half and bfloat16 is a float), the
 * header's checks (length, JSON, duplicate keys, dtypes, shapes, offsets,
 * overflow) and the tiling rules, and config.json's checks (ckpt_config_parse). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "checkpoint.h"
#include "safetensors.h"

/* A file in memory: 8-byte little-endian length of json, json, data. */
static unsigned char *build(const char *json, const void *data, size_t data_len, size_t *len) {
    size_t h = strlen(json);
    *len = 8 + h + data_len;
    unsigned char *b = malloc(*len + 1);
    assert_non_null(b);
    for (int i = 0; i < 8; i++) b[i] = (unsigned char)((uint64_t)h >> (8 * i));
    memcpy(b + 8, json, h);
    if (data_len) memcpy(b + 8 + h, data, data_len);
    return b;
}

/* st_parse on json + data_len bytes of zeros: the return code, err kept. */
static int parse_rc(const char *json, size_t data_len, char *err, size_t errlen) {
    unsigned char *zeros = calloc(data_len + 1, 1);
    size_t len;
    unsigned char *b = build(json, zeros, data_len, &len);
    st_file f;
    int rc = st_parse(&f, b, len, err, errlen);
    if (rc != 0) {
        assert_int_equal(f.n, 0);
        assert_non_null(err);
        assert_true(err[0] != '\0');
        assert_null(strchr(err, '\n')); /* one line */
    }
    st_close(&f);
    free(b);
    free(zeros);
    return rc;
}

static int rc_of(const char *json, size_t data_len) {
    char err[512];
    return parse_rc(json, data_len, err, sizeof err);
}

static uint32_t fbits(float x) {
    uint32_t u;
    memcpy(&u, &x, 4);
    return u;
}

/* Converts n 16-bit patterns of dtype (F16 or BF16) through st_parse. */
static void convert16(const char *dtype, const uint16_t *in, int n, float *out) {
    char json[256];
    snprintf(json, sizeof json, "{\"x\":{\"dtype\":\"%s\",\"shape\":[%d],\"data_offsets\":[0,%d]}}",
             dtype, n, 2 * n);
    unsigned char data[128];
    for (int i = 0; i < n; i++) data[2 * i] = in[i] & 0xff, data[2 * i + 1] = in[i] >> 8;
    size_t len;
    unsigned char *b = build(json, data, 2 * (size_t)n, &len);
    st_file f;
    char err[256];
    assert_int_equal(st_parse(&f, b, len, err, sizeof err), 0);
    const st_tensor *t = st_find(&f, "x");
    assert_non_null(t);
    assert_int_equal(t->elems, n);
    st_read_f32(&f, t, out);
    st_close(&f);
    free(b);
}

static void test_f16_bits(void **state) {
    (void)state;
    /* each value from the definition: (-1)^s 2^(e-15) (1 + m/1024), subnormal
     * 2^-14 m/1024 */
    const uint16_t in[] = {0x3C00, 0x7BFF, 0x0001, 0x03FF, 0x0400, 0xC000, 0x3555,
                           0x0000, 0x8000, 0x7C00, 0xFC00, 0x8001, 0x3BFF, 0x0200};
    const float want[] = {1.0f,      65504.0f,        0x1p-24f,       1023 * 0x1p-24f, 0x1p-14f,
                          -2.0f,     0.333251953125f, 0.0f,           -0.0f,           INFINITY,
                          -INFINITY, -0x1p-24f,       0.99951171875f, 0x1p-15f};
    const int n = (int)(sizeof in / sizeof in[0]);
    float out[16];
    convert16("F16", in, n, out);
    for (int i = 0; i < n; i++) {
        if (fbits(out[i]) != fbits(want[i]))
            fail_msg("F16 0x%04x: got %a, want %a", in[i], (double)out[i], (double)want[i]);
    }
    /* NaNs: quiet and signalling stay NaN, the sign kept */
    const uint16_t nan_in[] = {0x7E00, 0x7C01, 0xFE00};
    convert16("F16", nan_in, 3, out);
    for (int i = 0; i < 3; i++) assert_true(isnan(out[i]));
    assert_true(signbit(out[2]));
    assert_int_equal(fbits(out[0]), 0x7FC00000u); /* the payload moved up 13 bits */
}

static void test_f16_all_against_formula(void **state) {
    (void)state;
    /* every finite half against ldexp of its fields: an independent formula */
    static uint16_t in[64];
    float out[64];
    for (uint32_t base = 0; base < 0x10000; base += 64) {
        for (int i = 0; i < 64; i++) in[i] = (uint16_t)(base + (uint32_t)i);
        convert16("F16", in, 64, out);
        for (int i = 0; i < 64; i++) {
            unsigned h = in[i], e = (h >> 10) & 31, m = h & 1023;
            if (e == 31) continue;
            double v = e ? ldexp(1.0 + m / 1024.0, (int)e - 15) : ldexp(m / 1024.0, -14);
            if (h & 0x8000) v = -v;
            if ((double)out[i] != v || (signbit(out[i]) != 0) != ((h & 0x8000) != 0))
                fail_msg("F16 0x%04x: got %a, want %a", h, (double)out[i], v);
        }
    }
}

static void test_bf16_bits(void **state) {
    (void)state;
    const uint16_t in[] = {0x3F80, 0xC049, 0x7F80, 0xFF80, 0x0001, 0x8000, 0x4780, 0x3E80};
    const float want[] = {1.0f, -3.140625f, INFINITY, -INFINITY, 0x1p-133f, -0.0f, 65536.0f, 0.25f};
    const int n = (int)(sizeof in / sizeof in[0]);
    float out[16];
    convert16("BF16", in, n, out);
    for (int i = 0; i < n; i++)
        if (fbits(out[i]) != fbits(want[i]))
            fail_msg("BF16 0x%04x: got %a, want %a", in[i], (double)out[i], (double)want[i]);
    const uint16_t nan_in[] = {0x7FC0};
    convert16("BF16", nan_in, 1, out);
    assert_true(isnan(out[0]));
}

static void test_f32_unaligned_and_range(void **state) {
    (void)state;
    /* a header of odd length puts the data at an odd address: memcpy, not a cast */
    const float v[6] = {1.5f, -2.25f, 3.0f, 4.0f, 5.0f, 6.0f};
    size_t len;
    unsigned char *b = build("{\"a\":{\"dtype\":\"F32\",\"shape\":[2,3],\"data_offsets\":[0,24]}} ",
                             v, sizeof v, &len);
    st_file f;
    char err[256];
    assert_int_equal(st_parse(&f, b, len, err, sizeof err), 0);
    const st_tensor *t = st_find(&f, "a");
    assert_non_null(t);
    assert_int_equal(t->ndim, 2);
    assert_int_equal(t->shape[0], 2);
    assert_int_equal(t->shape[1], 3);
    assert_int_equal(t->dtype, ST_F32);
    float out[6] = {0};
    st_read_f32(&f, t, out);
    assert_memory_equal(out, v, sizeof v);
    float part[2] = {0};
    st_read_f32_range(&f, t, 2, 2, part);
    assert_true(part[0] == 3.0f && part[1] == 4.0f);
    st_release(&f, t); /* not our mapping: must leave the buffer alone */
    assert_memory_equal(b + len - sizeof v, v, sizeof v);
    assert_null(st_find(&f, "b"));
    st_close(&f);
    free(b);
}

static void test_header_length(void **state) {
    (void)state;
    char err[256];
    unsigned char b[16] = {0};
    st_file f;
    /* fewer than 8 bytes: short */
    assert_int_equal(st_parse(&f, b, 7, err, sizeof err), SAFETENSORS_CANNOT_READ);
    st_close(&f);
    /* a length past the end: short (a cut file) */
    b[0] = 9;
    memcpy(b + 8, "{}      ", 8);
    assert_int_equal(st_parse(&f, b, 16, err, sizeof err), SAFETENSORS_CANNOT_READ);
    st_close(&f);
    /* 2^64 - 1: over the bound, never added to 8 */
    memset(b, 0xff, 8);
    assert_int_equal(st_parse(&f, b, 16, err, sizeof err), SAFETENSORS_UNUSABLE);
    assert_non_null(strstr(err, "18446744073709551615"));
    st_close(&f);
    /* just over the bound */
    uint64_t h = (uint64_t)SAFETENSORS_MAX_HEADER + 1;
    for (int i = 0; i < 8; i++) b[i] = (unsigned char)(h >> (8 * i));
    assert_int_equal(st_parse(&f, b, 16, err, sizeof err), SAFETENSORS_UNUSABLE);
    st_close(&f);
    /* zero: empty JSON is not JSON */
    memset(b, 0, 8);
    assert_int_equal(st_parse(&f, b, 8, err, sizeof err), SAFETENSORS_UNUSABLE);
    st_close(&f);
    /* an empty header object and no data: a valid file of no tensors */
    assert_int_equal(rc_of("{}", 0), 0);
    assert_int_equal(rc_of("{}", 4), SAFETENSORS_UNUSABLE); /* bytes of no tensor */
}

static void test_json(void **state) {
    (void)state;
    char err[512];
    assert_int_equal(rc_of("{\"a\":", 0), 2);
    assert_int_equal(rc_of("[]", 0), 2);
    assert_int_equal(rc_of("\"a\"", 0), 2);
    /* duplicate keys: the second would silently win in most parsers */
    assert_int_equal(parse_rc("{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]},"
                              "\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}",
                              4, err, sizeof err),
                     2);
    assert_non_null(strstr(err, "duplicate"));
    /* trailing garbage after the object */
    assert_int_equal(rc_of("{} x", 0), 2);
    /* trailing spaces pad headers to 8 bytes: fine */
    assert_int_equal(rc_of("{}      ", 0), 0);
    /* a newline escaped in a name still gives a one-line message (parse_rc checks) */
    assert_int_equal(
        parse_rc("{\"a\\nb\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,4]}}", 4, err,
                 sizeof err),
        2);
    assert_non_null(strstr(err, "a?b"));
    /* metadata: an object of strings, skipped */
    assert_int_equal(rc_of("{\"__metadata__\":{\"format\":\"pt\"},"
                           "\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}",
                           4),
                     0);
    assert_int_equal(rc_of("{\"__metadata__\":{\"format\":1}}", 0), 2);
    assert_int_equal(rc_of("{\"__metadata__\":[]}", 0), 2);
    /* entry keys */
    assert_int_equal(rc_of("{\"a\":{\"dtype\":\"F32\",\"shape\":[1]}}", 4), 2);
    assert_int_equal(
        rc_of("{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4],\"x\":1}}", 4), 2);
    assert_int_equal(rc_of("{\"a\":[]}", 0), 2);
}

static void test_dtypes(void **state) {
    (void)state;
    char err[512];
    assert_int_equal(parse_rc("{\"a\":{\"dtype\":\"Q4\",\"shape\":[1],\"data_offsets\":[0,1]}}", 1,
                              err, sizeof err),
                     2);
    assert_non_null(strstr(err, "Q4"));
    assert_int_equal(rc_of("{\"a\":{\"dtype\":32,\"shape\":[1],\"data_offsets\":[0,4]}}", 4), 2);
    assert_int_equal(rc_of("{\"a\":{\"dtype\":\"f32\",\"shape\":[1],\"data_offsets\":[0,4]}}", 4),
                     2); /* names are case-sensitive */
    /* dtypes we do not convert still tile with their sizes */
    unsigned char data[8 + 3 + 2] = {0};
    size_t len;
    unsigned char *b = build("{\"m\":{\"dtype\":\"I64\",\"shape\":[1],\"data_offsets\":[0,8]},"
                             "\"k\":{\"dtype\":\"BOOL\",\"shape\":[3],\"data_offsets\":[8,11]},"
                             "\"h\":{\"dtype\":\"U16\",\"shape\":[],\"data_offsets\":[11,13]}}",
                             data, sizeof data, &len);
    st_file f;
    assert_int_equal(st_parse(&f, b, len, err, sizeof err), 0);
    assert_int_equal(f.n, 3);
    const st_tensor *t = st_find(&f, "m");
    assert_non_null(t);
    assert_int_equal(t->dtype, ST_OTHER);
    assert_string_equal(t->dtype_name, "I64");
    assert_int_equal(t->elem_size, 8);
    t = st_find(&f, "h");
    assert_int_equal(t->ndim, 0);
    assert_int_equal(t->elems, 1); /* a scalar */
    float sentinel = 42.0f;
    st_read_f32(&f, st_find(&f, "k"), &sentinel); /* never converted */
    assert_true(sentinel == 42.0f);
    st_close(&f);
    free(b);
    /* a wrong size for the dtype: I64 [1] in 4 bytes */
    assert_int_equal(rc_of("{\"m\":{\"dtype\":\"I64\",\"shape\":[1],\"data_offsets\":[0,4]}}", 4),
                     2);
}

static void test_shapes_and_overflow(void **state) {
    (void)state;
    char err[512];
    /* negative, fractional, string, null entries */
    assert_int_equal(rc_of("{\"a\":{\"dtype\":\"F32\",\"shape\":[-1],\"data_offsets\":[0,4]}}", 4),
                     2);
    assert_int_equal(rc_of("{\"a\":{\"dtype\":\"F32\",\"shape\":[1.0],\"data_offsets\":[0,4]}}", 4),
                     2);
    assert_int_equal(
        rc_of("{\"a\":{\"dtype\":\"F32\",\"shape\":[\"1\"],\"data_offsets\":[0,4]}}", 4), 2);
    assert_int_equal(rc_of("{\"a\":{\"dtype\":\"F32\",\"shape\":1,\"data_offsets\":[0,4]}}", 4), 2);
    /* 2^32 x 2^32 elements: the product wraps to 0 in 64 bits */
    assert_int_equal(parse_rc("{\"a\":{\"dtype\":\"F32\",\"shape\":[4294967296,4294967296],"
                              "\"data_offsets\":[0,0]}}",
                              0, err, sizeof err),
                     2);
    assert_non_null(strstr(err, "overflow"));
    /* 2^62 elements of 4 bytes: the byte count wraps to 0 */
    assert_int_equal(parse_rc("{\"a\":{\"dtype\":\"F32\",\"shape\":[4611686018427387904],"
                              "\"data_offsets\":[0,0]}}",
                              0, err, sizeof err),
                     2);
    assert_non_null(strstr(err, "overflow"));
    /* an integer past int64 is not valid JSON for jansson */
    assert_int_equal(rc_of("{\"a\":{\"dtype\":\"F32\",\"shape\":[18446744073709551616],"
                           "\"data_offsets\":[0,4]}}",
                           4),
                     2);
    /* a huge end far past the file: the size disagrees with the shape first */
    assert_int_equal(rc_of("{\"a\":{\"dtype\":\"F32\",\"shape\":[1],"
                           "\"data_offsets\":[0,9223372036854775807]}}",
                           4),
                     2);
    /* a shape that agrees with a huge end: a short file */
    assert_int_equal(rc_of("{\"a\":{\"dtype\":\"U8\",\"shape\":[9223372036854775807],"
                           "\"data_offsets\":[0,9223372036854775807]}}",
                           4),
                     1);
    /* nine dimensions */
    assert_int_equal(rc_of("{\"a\":{\"dtype\":\"F32\",\"shape\":[1,1,1,1,1,1,1,1,1],"
                           "\"data_offsets\":[0,4]}}",
                           4),
                     2);
    /* a zero dimension: no bytes, fine */
    assert_int_equal(rc_of("{\"a\":{\"dtype\":\"F32\",\"shape\":[0,5],\"data_offsets\":[0,0]}}", 0),
                     0);
    /* offsets: not two, negative, begin past end */
    assert_int_equal(rc_of("{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0]}}", 4), 2);
    assert_int_equal(rc_of("{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[-4,0]}}", 4),
                     2);
    assert_int_equal(rc_of("{\"a\":{\"dtype\":\"F32\",\"shape\":[0],\"data_offsets\":[4,0]}}", 4),
                     2);
}

#define T(name, b, e, n)                                                                           \
    "\"" name "\":{\"dtype\":\"F32\",\"shape\":[" #n "],\"data_offsets\":[" #b "," #e "]}"

static void test_tiling(void **state) {
    (void)state;
    char err[512];
    /* in any order in the JSON, tiling [0, 24) */
    assert_int_equal(rc_of("{" T("b", 8, 24, 4) "," T("a", 0, 8, 2) "}", 24), 0);
    /* a gap of 4 bytes between them */
    assert_int_equal(parse_rc("{" T("a", 0, 8, 2) "," T("b", 12, 28, 4) "}", 28, err, sizeof err),
                     2);
    assert_non_null(strstr(err, "no tensor"));
    /* overlapping by 4 */
    assert_int_equal(parse_rc("{" T("a", 0, 8, 2) "," T("b", 4, 20, 4) "}", 20, err, sizeof err),
                     2);
    assert_non_null(strstr(err, "overlap"));
    /* the same bytes twice */
    assert_int_equal(rc_of("{" T("a", 0, 8, 2) "," T("b", 0, 8, 2) "}", 8), 2);
    /* the first not at 0 */
    assert_int_equal(rc_of("{" T("a", 4, 12, 2) "}", 12), 2);
    /* bytes after the last */
    assert_int_equal(rc_of("{" T("a", 0, 8, 2) "}", 12), 2);
    /* the last past the end: a cut file */
    assert_int_equal(rc_of("{" T("a", 0, 8, 2) "," T("b", 8, 24, 4) "}", 20), 1);
    /* empty tensors anywhere */
    assert_int_equal(rc_of("{" T("a", 0, 8, 2) "," T("e", 8, 8, 0) "," T("b", 8, 24, 4) "}", 24),
                     0);
}

static void test_config(void **state) {
    (void)state;
    char err[512];
    ckpt_config c;
    const char *ok = "{\"n_layer\":2,\"n_head\":3,\"n_embd\":15,\"n_positions\":16,"
                     "\"vocab_size\":50,\"layer_norm_epsilon\":1e-6,"
                     "\"activation_function\":\"gelu_new\",\"model_type\":\"gpt2\","
                     "\"n_inner\":null}";
    assert_int_equal(ckpt_config_parse(&c, ok, strlen(ok), "cfg.json", err, sizeof err), 0);
    assert_int_equal(c.n_layer, 2);
    assert_int_equal(c.n_head, 3);
    assert_int_equal(c.n_embd, 15);
    assert_int_equal(c.n_positions, 16);
    assert_int_equal(c.vocab_size, 50);
    assert_true(c.layer_norm_epsilon == 1e-6f);
    tf_config tc;
    ckpt_tf_config(&c, &tc);
    assert_int_equal(tc.d_ff, 60);
    assert_int_equal(tc.act, TF_ACT_GELU_TANH);
    assert_true(tc.tied && tc.attn_bias && tc.mlp);
    static const struct {
        const char *json, *needle;
    } bad[] = {
        {"{\"n_layer\":2,\"n_embd\":15,\"n_positions\":16,\"vocab_size\":50,"
         "\"layer_norm_epsilon\":1e-6}",
         "n_head is missing"},
        {"{\"n_layer\":2,\"n_head\":\"3\",\"n_embd\":15,\"n_positions\":16,\"vocab_size\":50,"
         "\"layer_norm_epsilon\":1e-6}",
         "n_head is not an integer"},
        {"{\"n_layer\":2,\"n_head\":4,\"n_embd\":15,\"n_positions\":16,\"vocab_size\":50,"
         "\"layer_norm_epsilon\":1e-6}",
         "does not divide"},
        {"{\"n_layer\":2,\"n_head\":3,\"n_embd\":15,\"n_positions\":2048,\"vocab_size\":50,"
         "\"layer_norm_epsilon\":1e-6}",
         "n_positions"},
        {"{\"n_layer\":0,\"n_head\":3,\"n_embd\":15,\"n_positions\":16,\"vocab_size\":50,"
         "\"layer_norm_epsilon\":1e-6}",
         "n_layer"},
        {"{\"n_layer\":2,\"n_head\":3,\"n_embd\":15,\"n_positions\":16,\"vocab_size\":50}",
         "layer_norm_epsilon is missing"},
        {"{\"n_layer\":2,\"n_head\":3,\"n_embd\":15,\"n_positions\":16,\"vocab_size\":50,"
         "\"layer_norm_epsilon\":-1}",
         "layer_norm_epsilon"},
        {"{\"n_layer\":2,\"n_head\":3,\"n_embd\":15,\"n_positions\":16,\"vocab_size\":50,"
         "\"layer_norm_epsilon\":1e-6,\"activation_function\":\"relu\"}",
         "activation_function"},
        {"{\"n_layer\":2,\"n_head\":3,\"n_embd\":15,\"n_positions\":16,\"vocab_size\":50,"
         "\"layer_norm_epsilon\":1e-6,\"n_layer\":3}",
         "duplicate"},
        {"{\"n_layer\":2,\"n_head\":3,\"n_embd\":15,\"n_positions\":16,\"vocab_size\":50,"
         "\"layer_norm_epsilon\":1e-6,\"scale_attn_weights\":false}",
         "scale_attn_weights"},
        {"{\"n_layer\":99999999999999999999}", "not valid JSON"},
        {"[1]", "not a JSON object"},
        {"not json", "not valid JSON"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int rc = ckpt_config_parse(&c, bad[i].json, strlen(bad[i].json), "dir/config.json", err,
                                   sizeof err);
        if (rc != 2 || strncmp(err, "dir/config.json: ", 17) != 0 || !strstr(err, bad[i].needle))
            fail_msg("case %zu: rc %d, err '%s', want '%s'", i, rc, err, bad[i].needle);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_f16_bits),      cmocka_unit_test(test_f16_all_against_formula),
        cmocka_unit_test(test_bf16_bits),     cmocka_unit_test(test_f32_unaligned_and_range),
        cmocka_unit_test(test_header_length), cmocka_unit_test(test_json),
        cmocka_unit_test(test_dtypes),        cmocka_unit_test(test_shapes_and_overflow),
        cmocka_unit_test(test_tiling),        cmocka_unit_test(test_config),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
