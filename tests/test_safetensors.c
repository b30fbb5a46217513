/* test_safetensors.c: the safetensors reader (src/model/safetensors.c) on buffers
 * built here through st_parse: F16 and BF16 conversion against values worked out
 * by hand from the bit patterns (exact: every half and bfloat16 is a float), the
 * header's checks (length, JSON, duplicate keys, dtypes, shapes, offsets,
 * overflow) and the tiling rules, and config.json's checks (ckpt_config_parse).
 * NaN and infinities refused with the element named, across the reader's chunks;
 * and a real file (st_open) cut short, grown or replaced while it is read. */
#define _DEFAULT_SOURCE /* mkstemp, ftruncate */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

/* Converts n 16-bit patterns of dtype (F16 or BF16) through st_parse: the reader's
 * code (2 when a value is NaN or infinite, every value still converted: they are
 * one chunk), its message in err. */
static int convert16(const char *dtype, const uint16_t *in, int n, float *out, char *err,
                     size_t errlen) {
    char json[256];
    snprintf(json, sizeof json, "{\"x\":{\"dtype\":\"%s\",\"shape\":[%d],\"data_offsets\":[0,%d]}}",
             dtype, n, 2 * n);
    unsigned char data[128];
    for (int i = 0; i < n; i++) data[2 * i] = in[i] & 0xff, data[2 * i + 1] = in[i] >> 8;
    size_t len;
    unsigned char *b = build(json, data, 2 * (size_t)n, &len);
    st_file f;
    assert_int_equal(st_parse(&f, b, len, err, errlen), 0);
    const st_tensor *t = st_find(&f, "x");
    assert_non_null(t);
    assert_int_equal(t->elems, n);
    err[0] = '\0';
    int rc = st_read_f32(&f, t, out, err, errlen);
    st_close(&f);
    free(b);
    return rc;
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
    char err[256];
    /* converted, and refused: the first infinity named */
    assert_int_equal(convert16("F16", in, n, out, err, sizeof err), SAFETENSORS_UNUSABLE);
    assert_string_equal(err, "tensor x holds Inf at element 9");
    for (int i = 0; i < n; i++) {
        if (fbits(out[i]) != fbits(want[i]))
            fail_msg("F16 0x%04x: got %a, want %a", in[i], (double)out[i], (double)want[i]);
    }
    assert_int_equal(convert16("F16", in, 9, out, err, sizeof err), 0); /* the finite ones */
    /* NaNs: quiet and signalling stay NaN, the sign kept */
    const uint16_t nan_in[] = {0x3C00, 0x7E00, 0x7C01, 0xFE00};
    assert_int_equal(convert16("F16", nan_in, 4, out, err, sizeof err), SAFETENSORS_UNUSABLE);
    assert_string_equal(err, "tensor x holds NaN at element 1");
    memmove(out, out + 1, 3 * sizeof *out);
    for (int i = 0; i < 3; i++) assert_true(isnan(out[i]));
    assert_true(signbit(out[2]));
    assert_int_equal(fbits(out[0]), 0x7FC00000u); /* the payload moved up 13 bits */
}

static void test_f16_all_against_formula(void **state) {
    (void)state;
    /* every finite half against ldexp of its fields: an independent formula */
    static uint16_t in[64];
    float out[64];
    char err[256];
    for (uint32_t base = 0; base < 0x10000; base += 64) {
        for (int i = 0; i < 64; i++) in[i] = (uint16_t)(base + (uint32_t)i);
        const int inf_nan = ((base >> 10) & 31) == 31; /* a block of 64 shares its exponent */
        assert_int_equal(convert16("F16", in, 64, out, err, sizeof err),
                         inf_nan ? SAFETENSORS_UNUSABLE : 0);
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
    char err[256];
    assert_int_equal(convert16("BF16", in, n, out, err, sizeof err), SAFETENSORS_UNUSABLE);
    assert_string_equal(err, "tensor x holds Inf at element 2");
    for (int i = 0; i < n; i++)
        if (fbits(out[i]) != fbits(want[i]))
            fail_msg("BF16 0x%04x: got %a, want %a", in[i], (double)out[i], (double)want[i]);
    const uint16_t ninf_in[] = {0x3F80, 0xFF80};
    assert_int_equal(convert16("BF16", ninf_in, 2, out, err, sizeof err), SAFETENSORS_UNUSABLE);
    assert_string_equal(err, "tensor x holds -Inf at element 1");
    const uint16_t nan_in[] = {0x7FC0};
    assert_int_equal(convert16("BF16", nan_in, 1, out, err, sizeof err), SAFETENSORS_UNUSABLE);
    assert_string_equal(err, "tensor x holds NaN at element 0");
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
    assert_int_equal(st_read_f32(&f, t, out, err, sizeof err), 0);
    assert_memory_equal(out, v, sizeof v);
    float part[2] = {0};
    assert_int_equal(st_read_f32_range(&f, t, 2, 2, part, err, sizeof err), 0);
    assert_true(part[0] == 3.0f && part[1] == 4.0f);
    assert_int_equal(st_verify(&f, err, sizeof err), 0); /* a buffer never changes */
    assert_null(st_find(&f, "b"));
    st_close(&f);
    free(b);
}

/* n F32 values 0, 1, 2, ... as one tensor "w": the file's bytes (*len of them). */
static unsigned char *f32_file(int n, size_t *len) {
    char json[128];
    snprintf(json, sizeof json,
             "{\"w\":{\"dtype\":\"F32\",\"shape\":[%d],\"data_offsets\":[0,%d]}}", n, 4 * n);
    float *v = malloc((size_t)n * sizeof *v);
    assert_non_null(v);
    for (int i = 0; i < n; i++) v[i] = (float)i;
    unsigned char *b = build(json, v, (size_t)n * sizeof *v, len);
    free(v);
    return b;
}

static void test_f32_nonfinite_across_chunks(void **state) {
    (void)state;
    /* 200000 values: past the reader's chunk of 65536, so the element is counted
     * from the tensor's start, not the chunk's */
    const int n = 200000;
    size_t len;
    unsigned char *b = f32_file(n, &len);
    const uint32_t nan = 0x7fc00001u, ninf = 0xff800000u;
    memcpy(b + len - 4 * (size_t)(n - 150001), &nan, 4);
    st_file f;
    char err[256];
    assert_int_equal(st_parse(&f, b, len, err, sizeof err), 0);
    const st_tensor *t = st_find(&f, "w");
    float *out = malloc((size_t)n * sizeof *out);
    assert_non_null(out);
    assert_int_equal(st_read_f32(&f, t, out, err, sizeof err), SAFETENSORS_UNUSABLE);
    assert_string_equal(err, "tensor w holds NaN at element 150001");
    assert_int_equal(st_read_f32_range(&f, t, 100000, 60000, out, err, sizeof err),
                     SAFETENSORS_UNUSABLE);
    assert_string_equal(err, "tensor w holds NaN at element 150001");
    assert_int_equal(st_read_f32_range(&f, t, 0, 150001, out, err, sizeof err), 0);
    assert_true(out[150000] == 150000.0f);
    st_close(&f);
    memcpy(b + len - 4 * (size_t)(n - 150001), &ninf, 4);
    assert_int_equal(st_parse(&f, b, len, err, sizeof err), 0);
    assert_int_equal(st_read_f32(&f, st_find(&f, "w"), out, err, sizeof err), SAFETENSORS_UNUSABLE);
    assert_string_equal(err, "tensor w holds -Inf at element 150001");
    st_close(&f);
    free(out);
    free(b);
}

/* Writes len bytes of b to a new temporary file; its path in path (64 bytes). */
static void temp_file(char *path, const unsigned char *b, size_t len) {
    snprintf(path, 64, "/tmp/test_safetensors_XXXXXX");
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_true(write(fd, b, len) == (ssize_t)len);
    close(fd);
}

static void test_file_changed_while_read(void **state) {
    (void)state;
    const int n = 300000; /* 1.2 MB: several reads */
    size_t len;
    unsigned char *b = f32_file(n, &len);
    float *out = malloc((size_t)n * sizeof *out);
    assert_non_null(out);
    char path[64], other[64], err[256];
    st_file f;

    /* cut short after the open (a mapping would raise SIGBUS here) */
    temp_file(path, b, len);
    assert_int_equal(st_open(&f, path, err, sizeof err), 0);
    assert_int_equal(truncate(path, (off_t)(len / 2)), 0);
    assert_int_equal(st_read_f32(&f, st_find(&f, "w"), out, err, sizeof err),
                     SAFETENSORS_CANNOT_READ);
    assert_string_equal(err, "the file changed while it was read");
    st_close(&f);
    /* cut short before the open: the short-file message */
    assert_int_equal(st_open(&f, path, err, sizeof err), SAFETENSORS_CANNOT_READ);
    assert_non_null(strstr(err, "short file"));
    st_close(&f);
    unlink(path);

    /* grown after the open: every value read, then the change found */
    temp_file(path, b, len);
    assert_int_equal(st_open(&f, path, err, sizeof err), 0);
    assert_int_equal(truncate(path, (off_t)len + 4096), 0);
    assert_int_equal(st_read_f32(&f, st_find(&f, "w"), out, err, sizeof err), 0);
    assert_true(out[n - 1] == (float)(n - 1));
    assert_int_equal(st_verify(&f, err, sizeof err), SAFETENSORS_CANNOT_READ);
    assert_string_equal(err, "the file changed while it was read");
    st_close(&f);
    unlink(path);

    /* another file renamed over it: the file opened is the one read, whole */
    temp_file(path, b, len);
    assert_int_equal(st_open(&f, path, err, sizeof err), 0);
    unsigned char *c = f32_file(10, &len);
    temp_file(other, c, len);
    free(c);
    assert_int_equal(rename(other, path), 0);
    assert_int_equal(st_read_f32(&f, st_find(&f, "w"), out, err, sizeof err), 0);
    assert_true(out[n - 1] == (float)(n - 1));
    assert_int_equal(st_verify(&f, err, sizeof err), 0);
    st_close(&f);
    unlink(path);
    free(out);
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
    assert_int_equal(st_read_f32(&f, st_find(&f, "k"), &sentinel, err, sizeof err), 0);
    /* never converted */
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
    assert_ptr_equal(c.family, &ckpt_family_gpt2);
    assert_int_equal(c.spec.layers, 2);
    assert_int_equal(c.spec.h, 3);
    assert_int_equal(c.spec.h_kv, 3);
    assert_int_equal(c.spec.head_dim, 5);
    assert_int_equal(c.spec.d_model, 15);
    assert_int_equal(c.spec.ctx, 16);
    assert_int_equal(c.spec.vocab, 50);
    assert_true(c.spec.norm_eps == 1e-6f);
    assert_int_equal(c.spec.d_ff, 60);
    assert_int_equal(c.spec.mlp, SPEC_MLP_GELU_TANH);
    assert_int_equal(c.spec.norm, SPEC_LAYERNORM);
    assert_int_equal(c.spec.pos, SPEC_POS_LEARNED);
    assert_true(c.spec.head == SPEC_HEAD_TIED && c.spec.qkv_bias && c.spec.o_bias &&
                c.spec.mlp_bias && c.spec.causal && !c.spec.post_ln);
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
        cmocka_unit_test(test_f16_bits),
        cmocka_unit_test(test_f16_all_against_formula),
        cmocka_unit_test(test_bf16_bits),
        cmocka_unit_test(test_f32_unaligned_and_range),
        cmocka_unit_test(test_header_length),
        cmocka_unit_test(test_json),
        cmocka_unit_test(test_dtypes),
        cmocka_unit_test(test_shapes_and_overflow),
        cmocka_unit_test(test_tiling),
        cmocka_unit_test(test_config),
        cmocka_unit_test(test_f32_nonfinite_across_chunks),
        cmocka_unit_test(test_file_changed_while_read),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
