/* test_npy_dump.c: .npy writing/reading (checked byte by byte against NumPy's
 * format 1.0 description with a parser written here) and --dump's folder of
 * files for a computed model: all or nothing (a file-size limit stands in for a
 * full disk), replacing an earlier dump as a whole, refusing folders it must not
 * replace. */
#define _XOPEN_SOURCE 700
#include <dirent.h>
#include <errno.h>
#include <float.h>
#include <ftw.h>
#include <math.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "check.h"
#include "dump.h"
#include "mha.h"
#include "npy.h"
#include "tok.h"

/* ------------------------------------------------------------------------------ */
/* temp folders and small file helpers                                              */

static int rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw) {
    (void)sb, (void)flag, (void)ftw;
    return remove(path);
}

/* every test's folders live under one base folder, removed by the group teardown
 * even when a test fails */
static char g_base[512];

static char *make_tmpdir(void) {
    char tmpl[600];
    snprintf(tmpl, sizeof tmpl, "%s/t-XXXXXX", g_base);
    char *dir = mkdtemp(tmpl);
    if (!dir) fail_msg("mkdtemp(%s): expected a folder, got %s", tmpl, strerror(errno));
    char *copy = malloc(strlen(dir) + 1);
    assert_non_null(copy);
    strcpy(copy, dir);
    return copy;
}

static void remove_tree(char *dir) {
    if (dir) nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
    free(dir);
}

static int group_setup(void **state) {
    (void)state;
    const char *tmp = getenv("TMPDIR");
    snprintf(g_base, sizeof g_base, "%s/mhaviz-test-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    return mkdtemp(g_base) ? 0 : -1;
}

static int group_teardown(void **state) {
    (void)state;
    if (g_base[0]) nftw(g_base, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
    return 0;
}

/* whole file into memory; *len set; NULL if it cannot be read */
static unsigned char *slurp(const char *path, size_t *len) {
    FILE *fp = fopen(path, "rb");
    if (!fp) return NULL;
    fseek(fp, 0, SEEK_END);
    long sz = ftell(fp);
    fseek(fp, 0, SEEK_SET);
    unsigned char *buf = malloc((size_t)sz + 1);
    assert_non_null(buf);
    if (fread(buf, 1, (size_t)sz, fp) != (size_t)sz) {
        free(buf);
        fclose(fp);
        return NULL;
    }
    buf[sz] = '\0';
    fclose(fp);
    *len = (size_t)sz;
    return buf;
}

static void write_bytes(const char *path, const void *data, size_t len) {
    FILE *fp = fopen(path, "wb");
    if (!fp) fail_msg("fopen(%s): expected success, got %s", path, strerror(errno));
    CHECK_INT("fwrite", len, fwrite(data, 1, len, fp));
    fclose(fp);
}

/* number of entries in dir other than . and ..; names joined into list */
static int list_dir(const char *dir, char *list, size_t listlen) {
    DIR *d = opendir(dir);
    if (!d) return -1;
    int n = 0;
    if (list) list[0] = '\0';
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
        n++;
        if (list && strlen(list) + strlen(e->d_name) + 2 < listlen) {
            strcat(list, e->d_name);
            strcat(list, " ");
        }
    }
    closedir(d);
    return n;
}

/* ------------------------------------------------------------------------------ */
/* an independent .npy 1.0 parser, following NumPy's format documentation:
 *   "\x93NUMPY", major 1, minor 0, uint16 little-endian HEADER_LEN, then an ASCII
 *   dict literal padded with spaces and ended by '\n' so that 10 + HEADER_LEN is a
 *   multiple of 64, then the raw data.                                              */

typedef struct {
    int ndim;
    int shape[8];
    size_t count;
    const float *data; /* points into the file buffer */
    unsigned char *file;
} npy_view;

/* NumPy's repr of a shape tuple: () (5,) (2, 3) */
static void shape_repr(char *out, size_t outlen, const int *shape, int ndim) {
    int o = snprintf(out, outlen, "(");
    for (int i = 0; i < ndim; i++)
        o += snprintf(out + o, outlen - (size_t)o, "%s%d", i ? ", " : "", shape[i]);
    snprintf(out + o, outlen - (size_t)o, "%s)", ndim == 1 ? "," : "");
}

static void parse_npy(const char *path, npy_view *v) {
    size_t len = 0;
    memset(v, 0, sizeof *v);
    v->file = slurp(path, &len);
    if (!v->file) fail_msg("%s: expected a readable file, got %s", path, strerror(errno));
    const unsigned char *f = v->file;
    if (len < 10 || memcmp(f, "\x93NUMPY", 6) != 0)
        fail_msg("%s: expected magic \\x93NUMPY, got something else", path);
    CHECK_INT("npy major version", 1, f[6]);
    CHECK_INT("npy minor version", 0, f[7]);
    size_t hlen = (size_t)f[8] | ((size_t)f[9] << 8);
    CHECK_INT("npy (10 + HEADER_LEN) % 64", 0, (10 + hlen) % 64);
    if (10 + hlen > len)
        fail_msg("%s: expected header within the file, got HEADER_LEN %zu > %zu", path, hlen, len);
    CHECK_INT("npy header's last byte", '\n', f[10 + hlen - 1]);
    const char *h = (const char *)f + 10;
    for (size_t i = 0; i < hlen; i++)
        if (h[i] < 0x20 && h[i] != '\n')
            fail_msg("%s: expected ASCII header, got byte 0x%02x", path, (unsigned char)h[i]);
    /* the dict, then spaces only, then '\n' */
    const char *close = memchr(h, '}', hlen);
    if (h[0] != '{' || !close) fail_msg("%s: expected a {...} dict header, got none", path);
    for (const char *p = close + 1; p < h + hlen - 1; p++)
        if (*p != ' ') fail_msg("%s: expected space padding after the dict, got 0x%02x", path, *p);
    char dict[1024];
    size_t dl = (size_t)(close - h) + 1;
    if (dl >= sizeof dict) fail_msg("%s: expected a short dict, got %zu bytes", path, dl);
    memcpy(dict, h, dl);
    dict[dl] = '\0';
    if (!strstr(dict, "'descr': '<f4'"))
        fail_msg("%s: expected 'descr': '<f4', got %s", path, dict);
    if (!strstr(dict, "'fortran_order': False"))
        fail_msg("%s: expected 'fortran_order': False, got %s", path, dict);
    const char *sp = strstr(dict, "'shape': (");
    if (!sp) fail_msg("%s: expected 'shape': (...), got %s", path, dict);
    sp += strlen("'shape': (");
    v->count = 1;
    while (*sp && *sp != ')') {
        char *end;
        long x = strtol(sp, &end, 10);
        if (end == sp) fail_msg("%s: expected a number in the shape, got '%s'", path, sp);
        if (v->ndim >= 8) fail_msg("%s: expected at most 8 dims", path);
        v->shape[v->ndim++] = (int)x;
        v->count *= (size_t)x;
        sp = end;
        while (*sp == ',' || *sp == ' ') sp++;
    }
    /* the whole dict must be exactly what NumPy itself writes */
    char repr[128], want[256];
    shape_repr(repr, sizeof repr, v->shape, v->ndim);
    snprintf(want, sizeof want, "{'descr': '<f4', 'fortran_order': False, 'shape': %s, }", repr);
    CHECK_STR("npy header dict", want, dict);
    CHECK_INT("npy data bytes", v->count * sizeof(float), len - 10 - hlen);
    v->data = (const float *)(f + 10 + hlen); /* 64-aligned offset in a malloc'd buffer */
}

static void npy_view_free(npy_view *v) {
    free(v->file);
    v->file = NULL;
}

/* ------------------------------------------------------------------------------ */
/* .npy round trips                                                                 */

static void fill_pattern(float *a, size_t count, unsigned seed) {
    static const float special[] = {0.0f,     -0.0f,     1.0f,    -1.0f,
                                    FLT_MAX,  -FLT_MAX,  FLT_MIN, 1e-45f /* denormal */,
                                    INFINITY, -INFINITY, NAN,     3.14159274f};
    for (size_t i = 0; i < count; i++)
        a[i] = i < sizeof special / sizeof special[0] && seed == 0
                   ? special[i]
                   : (float)((double)((i * 2654435761u + seed) % 100003) / 1000.0 - 50.0);
}

static void test_npy_roundtrip(void **state) {
    (void)state;
    char *dir = make_tmpdir();
    static const struct {
        int ndim;
        int shape[4];
    } S[] = {
        {1, {5}},        {1, {1}},       {2, {2, 3}},      {2, {1, 1}},
        {2, {300, 257}}, {3, {3, 4, 5}}, {3, {8, 12, 12}}, {4, {2, 3, 4, 5}},
        {2, {0, 3}},     {1, {12}},      {3, {1, 1, 1}},   {0, {0}},
    };
    for (size_t si = 0; si < sizeof S / sizeof S[0]; si++) {
        size_t count = 1;
        for (int i = 0; i < S[si].ndim; i++) count *= (size_t)S[si].shape[i];
        float *a = malloc((count ? count : 1) * sizeof(float));
        assert_non_null(a);
        fill_pattern(a, count, (unsigned)si);
        char path[600], err[512] = "", what[96];
        snprintf(path, sizeof path, "%s/a%zu.npy", dir, si);
        snprintf(what, sizeof what, "npy_write_f32 shape #%zu (ndim %d)", si, S[si].ndim);
        int rc = npy_write_f32(path, a, S[si].shape, S[si].ndim, err, sizeof err);
        if (rc != 0) fail_msg("%s: expected 0, got %d (%s)", what, rc, err);

        /* bytes against the format description */
        npy_view v;
        parse_npy(path, &v);
        CHECK_INT("parsed ndim", S[si].ndim, v.ndim);
        for (int i = 0; i < S[si].ndim; i++) CHECK_INT("parsed shape", S[si].shape[i], v.shape[i]);
        if (count && memcmp(v.data, a, count * sizeof(float)) != 0)
            fail_msg("%s: expected the data bytes written, got different bytes", what);
        npy_view_free(&v);

        /* and through npy_read_f32 */
        float *back = NULL;
        int shape[NPY_MAX_DIMS] = {-1, -1, -1, -1}, ndim = -1;
        rc = npy_read_f32(path, &back, shape, &ndim, err, sizeof err);
        if (rc != 0) fail_msg("npy_read_f32 #%zu: expected 0, got %d (%s)", si, rc, err);
        CHECK_INT("npy_read_f32 ndim", S[si].ndim, ndim);
        for (int i = 0; i < S[si].ndim; i++)
            CHECK_INT("npy_read_f32 shape", S[si].shape[i], shape[i]);
        if (count && memcmp(back, a, count * sizeof(float)) != 0)
            fail_msg("npy_read_f32 #%zu: expected the values written, got different bytes", si);
        free(back);
        free(a);
    }
    /* nothing but the files we wrote (no temporaries left behind) */
    char names[8192];
    CHECK_INT("files in the folder after writing", (long long)(sizeof S / sizeof S[0]),
              list_dir(dir, names, sizeof names));
    CHECK_TRUE("no .tmp- files left", strstr(names, ".tmp-") == NULL);
    remove_tree(dir);
}

static void test_npy_header_exact(void **state) {
    (void)state;
    /* The header NumPy writes for float32 (2, 3): 10 + 118 = 128 bytes. */
    char *dir = make_tmpdir();
    char path[600], err[512] = "";
    snprintf(path, sizeof path, "%s/h.npy", dir);
    const float a[6] = {1, 2, 3, 4, 5, 6};
    const int shape[2] = {2, 3};
    CHECK_INT("npy_write_f32 (2,3)", 0, npy_write_f32(path, a, shape, 2, err, sizeof err));
    size_t len = 0;
    unsigned char *f = slurp(path, &len);
    assert_non_null(f);
    const char *dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }";
    CHECK_INT("file size", 128 + 24, len);
    CHECK_INT("byte 0", 0x93, f[0]);
    CHECK_TRUE("bytes 1..5 are NUMPY", memcmp(f + 1, "NUMPY", 5) == 0);
    CHECK_INT("major", 1, f[6]);
    CHECK_INT("minor", 0, f[7]);
    CHECK_INT("HEADER_LEN low byte", 118, f[8]);
    CHECK_INT("HEADER_LEN high byte", 0, f[9]);
    CHECK_TRUE("dict at offset 10", memcmp(f + 10, dict, strlen(dict)) == 0);
    for (size_t i = 10 + strlen(dict); i < 127; i++) CHECK_INT("padding byte", ' ', f[i]);
    CHECK_INT("byte 127", '\n', f[127]);
    /* data little-endian: 1.0f is 00 00 80 3f */
    const unsigned char one[4] = {0x00, 0x00, 0x80, 0x3f};
    CHECK_TRUE("first value is 1.0f little-endian", memcmp(f + 128, one, 4) == 0);
    free(f);
    remove_tree(dir);
}

static void test_npy_errors(void **state) {
    (void)state;
    char *dir = make_tmpdir();
    char path[600], err[512];
    float one = 1.0f;
    int shape[1] = {1};

    /* writing into a missing folder */
    snprintf(path, sizeof path, "%s/missing/x.npy", dir);
    err[0] = '\0';
    CHECK_INT("npy_write_f32 into a missing folder", -1,
              npy_write_f32(path, &one, shape, 1, err, sizeof err));
    CHECK_TRUE("message starts 'cannot write'", strncmp(err, "cannot write", 12) == 0);
    CHECK_INT("entries after a failed write", 0, list_dir(dir, NULL, 0));

    float *data = (float *)&one;
    int sh[NPY_MAX_DIMS], nd = 0;

    /* reading: missing file */
    snprintf(path, sizeof path, "%s/none.npy", dir);
    err[0] = '\0';
    CHECK_INT("npy_read_f32 missing file", -1, npy_read_f32(path, &data, sh, &nd, err, sizeof err));
    CHECK_MSG("npy_read_f32 missing file", err);
    CHECK_TRUE("data NULL after failure", data == NULL);

    /* not an npy file */
    snprintf(path, sizeof path, "%s/text.npy", dir);
    write_bytes(path, "hello, world\n", 13);
    err[0] = '\0';
    CHECK_INT("npy_read_f32 text file", -1, npy_read_f32(path, &data, sh, &nd, err, sizeof err));
    CHECK_MSG("npy_read_f32 text file", err);

    /* float64 and Fortran order are refused */
    static const char f8[] = "\x93NUMPY\x01\x00\x76\x00{'descr': '<f8', 'fortran_order': False, "
                             "'shape': (1,), }";
    static const char fo[] = "\x93NUMPY\x01\x00\x76\x00{'descr': '<f4', 'fortran_order': True, "
                             "'shape': (1,), }";
    const char *hdrs[2] = {f8, fo};
    const size_t hl[2] = {sizeof f8 - 1, sizeof fo - 1};
    for (int k = 0; k < 2; k++) {
        unsigned char buf[128 + 8];
        memset(buf, ' ', sizeof buf);
        memcpy(buf, hdrs[k], hl[k]);
        buf[127] = '\n';
        memset(buf + 128, 0, 8);
        snprintf(path, sizeof path, "%s/bad%d.npy", dir, k);
        write_bytes(path, buf, sizeof buf);
        err[0] = '\0';
        CHECK_INT("npy_read_f32 f8/Fortran", -1,
                  npy_read_f32(path, &data, sh, &nd, err, sizeof err));
        CHECK_MSG("npy_read_f32 f8/Fortran", err);
    }

    /* truncated data */
    float a[12] = {0};
    int s2[2] = {3, 4};
    snprintf(path, sizeof path, "%s/trunc.npy", dir);
    CHECK_INT("write (3,4)", 0, npy_write_f32(path, a, s2, 2, err, sizeof err));
    CHECK_INT("truncate", 0, truncate(path, 128 + 40)); /* header 128, data cut short */
    err[0] = '\0';
    CHECK_INT("npy_read_f32 truncated", -1, npy_read_f32(path, &data, sh, &nd, err, sizeof err));
    CHECK_MSG("npy_read_f32 truncated", err);
    CHECK_TRUE("data NULL after truncated", data == NULL);
    remove_tree(dir);
}

/* ------------------------------------------------------------------------------ */
/* hostile headers: npy_read_f32 must refuse a shape it cannot trust and never      */
/* allocate from it. The test binary is linked with -Wl,--wrap=malloc (see          */
/* tests/CMakeLists.txt), so every malloc in mhaviz's own code passes through here  */
/* and the largest request is recorded.                                             */

void *__real_malloc(size_t size);
void *__wrap_malloc(size_t size);
static size_t g_malloc_max; /* largest malloc request since the last reset */

void *__wrap_malloc(size_t size) {
    if (size > g_malloc_max) g_malloc_max = size;
    return __real_malloc(size);
}

/* A .npy 1.0 file whose dict has the given shape text, padded as NumPy pads it,
 * followed by data_bytes bytes of data (zeros). Returns the file's size. */
static size_t write_npy_with_shape(const char *path, const char *shape_text, size_t data_bytes) {
    char dict[256];
    int dl = snprintf(dict, sizeof dict, "{'descr': '<f4', 'fortran_order': False, 'shape': %s, }",
                      shape_text);
    size_t hlen = (size_t)dl + 1;
    hlen += (64 - (10 + hlen) % 64) % 64;
    size_t len = 10 + hlen + data_bytes;
    unsigned char *buf = calloc(1, len);
    assert_non_null(buf);
    memcpy(buf, "\x93NUMPY\x01\x00", 8);
    buf[8] = (unsigned char)(hlen & 0xFF);
    buf[9] = (unsigned char)(hlen >> 8);
    memset(buf + 10, ' ', hlen);
    memcpy(buf + 10, dict, (size_t)dl);
    buf[10 + hlen - 1] = '\n';
    write_bytes(path, buf, len);
    free(buf);
    return len;
}

static void test_npy_hostile_shapes(void **state) {
    (void)state;
    char *dir = make_tmpdir();
    /* each shape must be refused whatever data follows; 24 bytes of data is the
     * count a wrapped product of some of these shapes would claim, or more */
    static const struct {
        const char *shape;
        size_t data_bytes;
        const char *why;
    } H[] = {
        {"(-1,)", 16, "a negative dim"},
        {"(-2, -3)", 24, "two negative dims whose product is 6"},
        {"(2, -3)", 24, "a negative dim beside a positive one"},
        {"(4611686018427387904,)", 16, "one dim of 2^62"},
        {"(4611686018427387904, 4)", 16, "2^62 x 4 floats: bytes wrap to 0"},
        {"(4294967296, 4294967296)", 16, "2^32 x 2^32: the count wraps to 0"},
        {"(65536, 65536, 65536, 65536)", 16, "four dims whose product is 2^64"},
        {"(2147483647, 2147483647, 2147483647)", 16, "three INT_MAX dims: 2^93 bytes"},
        {"(2147483648,)", 16, "a dim past INT_MAX"},
        {"(99999999999999999999999,)", 16, "a dim past LONG_MAX"},
        {"(1000, 1000)", 16, "a shape larger than the data (4e6 bytes, 16 present)"},
        {"(3, 4)", 44, "a shape one float larger than the data"},
        {"(5, 0, -1)", 0, "a negative dim beside a zero"},
        {"(1, x)", 16, "a dim that is not a number"},
        {"(2, 3", 24, "a shape that is not closed"},
    };
    for (size_t i = 0; i < sizeof H / sizeof H[0]; i++) {
        char path[700], err[512] = "", what[160];
        snprintf(path, sizeof path, "%s/hostile%zu.npy", dir, i);
        size_t file_bytes = write_npy_with_shape(path, H[i].shape, H[i].data_bytes);
        float *data = (float *)&g_malloc_max; /* must come back NULL */
        int shape[NPY_MAX_DIMS] = {0}, ndim = -1;
        g_malloc_max = 0;
        int rc = npy_read_f32(path, &data, shape, &ndim, err, sizeof err);
        snprintf(what, sizeof what, "npy_read_f32 shape %s (%s)", H[i].shape, H[i].why);
        if (rc != -1)
            fail_msg("%s: expected -1, got %d with ndim %d shape[0] %d", what, rc, ndim, shape[0]);
        CHECK_MSG(what, err);
        CHECK_TRUE("data NULL after a refused shape", data == NULL);
        /* never an allocation sized by the hostile shape: at most the file itself */
        if (g_malloc_max > file_bytes)
            fail_msg("%s: expected no malloc above the file's %zu bytes, got one of %zu", what,
                     file_bytes, g_malloc_max);
        /* the message says the shape is at fault, not a failed read */
        if (!strstr(err, "shape"))
            fail_msg("%s: expected a message naming the shape, got \"%s\"", what, err);
    }

    /* the check is not too strict: exact data, and a zero-size shape, still read */
    char path[700], err[512] = "";
    snprintf(path, sizeof path, "%s/exact.npy", dir);
    write_npy_with_shape(path, "(3, 4)", 48);
    float *data = NULL;
    int shape[NPY_MAX_DIMS] = {0}, ndim = -1;
    int rc = npy_read_f32(path, &data, shape, &ndim, err, sizeof err);
    if (rc != 0) fail_msg("npy_read_f32 (3, 4) with 48 bytes: expected 0, got %d (%s)", rc, err);
    CHECK_INT("ndim of (3, 4)", 2, ndim);
    CHECK_INT("shape[1] of (3, 4)", 4, shape[1]);
    free(data);
    snprintf(path, sizeof path, "%s/empty.npy", dir);
    write_npy_with_shape(path, "(0, 4294967296)", 0);
    data = NULL;
    rc = npy_read_f32(path, &data, shape, &ndim, err, sizeof err);
    CHECK_INT("npy_read_f32 (0, 2^32): a dim past INT_MAX is refused even beside 0", -1, rc);
    snprintf(path, sizeof path, "%s/zero.npy", dir);
    write_npy_with_shape(path, "(0, 7)", 0);
    data = NULL;
    rc = npy_read_f32(path, &data, shape, &ndim, err, sizeof err);
    if (rc != 0) fail_msg("npy_read_f32 (0, 7) with no data: expected 0, got %d (%s)", rc, err);
    CHECK_INT("shape[1] of (0, 7)", 7, shape[1]);
    free(data);
    remove_tree(dir);
}

/* ------------------------------------------------------------------------------ */
/* dump_write                                                                       */

typedef struct {
    const char *text;
    mha_config cfg;
} dcase;

/* dump_write of m computed for t, described by mha_layer_fill as --dump does. */
static int dump_model(const char *dir, const mha_model *m, const tok_list *t, char *err,
                      size_t errlen) {
    static mha_layer_text text;
    attn_layer L;
    mha_layer_fill(&L, &text, m, t);
    return dump_write_layer(dir, &L, err, errlen);
}

static void check_tensor(const char *dir, const char *name, const float *want, int a, int b,
                         int c) {
    char path[1200];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    npy_view v;
    parse_npy(path, &v);
    int nd = c > 0 ? 3 : 2;
    char what[96];
    snprintf(what, sizeof what, "%s ndim", name);
    CHECK_INT(what, nd, v.ndim);
    snprintf(what, sizeof what, "%s shape[0]", name);
    CHECK_INT(what, a, v.shape[0]);
    snprintf(what, sizeof what, "%s shape[1]", name);
    CHECK_INT(what, b, v.shape[1]);
    if (nd == 3) {
        snprintf(what, sizeof what, "%s shape[2]", name);
        CHECK_INT(what, c, v.shape[2]);
    }
    size_t count = (size_t)a * b * (c > 0 ? c : 1);
    for (size_t i = 0; i < count; i++)
        if (memcmp(&v.data[i], &want[i], sizeof(float)) != 0)
            fail_msg("%s[%zu]: expected %.9g (the model's value), got %.9g", name, i,
                     (double)want[i], (double)v.data[i]);
    npy_view_free(&v);
}

static void check_dump(const char *dir, const mha_model *m, const tok_list *t) {
    const int n = m->n, d = m->cfg.d_model, h = m->cfg.h, dk = d / h;
    check_tensor(dir, "X.npy", m->x, n, d, 0);
    check_tensor(dir, "W_Q.npy", m->w_q, d, d, 0);
    check_tensor(dir, "W_K.npy", m->w_k, d, d, 0);
    check_tensor(dir, "W_V.npy", m->w_v, d, d, 0);
    check_tensor(dir, "W_O.npy", m->w_o, d, d, 0);
    check_tensor(dir, "Q.npy", m->q, n, d, 0);
    check_tensor(dir, "K.npy", m->k, n, d, 0);
    check_tensor(dir, "V.npy", m->v, n, d, 0);
    check_tensor(dir, "scores.npy", m->scores, h, n, n);
    check_tensor(dir, "attn.npy", m->attn, h, n, n);
    check_tensor(dir, "heads.npy", m->heads, h, n, dk);
    check_tensor(dir, "concat.npy", m->concat, n, d, 0);
    check_tensor(dir, "out.npy", m->out, n, d, 0);
    check_tensor(dir, "out_full.npy", m->out_full, n, d, 0);

    /* tokens.txt: one token a line, each line ended by '\n' */
    char path[1200];
    size_t len = 0;
    snprintf(path, sizeof path, "%s/tokens.txt", dir);
    char *txt = (char *)slurp(path, &len);
    if (!txt) fail_msg("%s: expected a file, got none", path);
    CHECK_TRUE("tokens.txt ends with a newline", len > 0 && txt[len - 1] == '\n');
    char *p = txt;
    for (int i = 0; i < n; i++) { /* the text's tokens, then [PAD] up to n */
        char *nl = strchr(p, '\n');
        if (!nl) fail_msg("tokens.txt: expected %d lines, got %d", n, i);
        *nl = '\0';
        char what[64];
        snprintf(what, sizeof what, "tokens.txt line %d", i + 1);
        CHECK_STR(what, i < t->count ? t->tokens[i] : "[PAD]", p);
        p = nl + 1;
    }
    CHECK_STR("tokens.txt after the last token", "", p);
    free(txt);

    /* meta.json: the numbers */
    snprintf(path, sizeof path, "%s/meta.json", dir);
    char *js = (char *)slurp(path, &len);
    if (!js) fail_msg("%s: expected a file, got none", path);
    char want[160];
    const struct {
        const char *key;
        long long val;
    } nums[] = {{"n", n}, {"n_real", t->count}, {"d_model", d}, {"h", h}, {"d_k", dk}, {"d_v", dk}};
    for (size_t i = 0; i < sizeof nums / sizeof nums[0]; i++) {
        snprintf(want, sizeof want, "\"%s\": %lld", nums[i].key, nums[i].val);
        const char *at = strstr(js, want);
        if (!at || (at[strlen(want)] >= '0' && at[strlen(want)] <= '9'))
            fail_msg("meta.json: expected %s, got:\n%s", want, js);
    }
    snprintf(want, sizeof want, "\"seed\": %llu", (unsigned long long)m->cfg.seed);
    if (!strstr(js, want)) fail_msg("meta.json: expected %s, got:\n%s", want, js);
    snprintf(want, sizeof want, "\"mask\": \"%s\"",
             m->cfg.mask == MHA_MASK_CAUSAL ? "causal" : "none");
    if (!strstr(js, want)) fail_msg("meta.json: expected %s, got:\n%s", want, js);
    snprintf(want, sizeof want, "\"scale\": %s", m->cfg.no_scale ? "false" : "true");
    if (!strstr(js, want)) fail_msg("meta.json: expected %s, got:\n%s", want, js);
    if (m->cfg.pad)
        snprintf(want, sizeof want, "\"pad\": %d,", m->cfg.pad);
    else
        snprintf(want, sizeof want, "\"pad\": null,");
    if (!strstr(js, want)) fail_msg("meta.json: expected %s, got:\n%s", want, js);
    const char *temp = strstr(js, "\"temperature\": ");
    if (!temp) fail_msg("meta.json: expected \"temperature\", got:\n%s", js);
    CHECK_TRUE("meta.json temperature reads back as the model's float",
               strtof(temp + strlen("\"temperature\": "), NULL) == m->cfg.temperature);
    char list[600] = "\"ablated\": [";
    for (int i = 0, first = 1; i < h; i++)
        if (mha_config_is_ablated(&m->cfg, i)) {
            size_t at = strlen(list);
            snprintf(list + at, sizeof list - at, first ? "%d" : ", %d", i + 1);
            first = 0;
        }
    strcat(list, "]");
    if (!strstr(js, list)) fail_msg("meta.json: expected %s, got:\n%s", list, js);
    if (m->cfg.weights == MHA_WEIGHTS_PATTERNS) {
        snprintf(list, sizeof list, "\"head_patterns\": [");
        for (int i = 0; i < h; i++) {
            size_t at = strlen(list);
            snprintf(list + at, sizeof list - at, "%s\"%s\"", i ? ", " : "",
                     mha_pattern_name(mha_head_pattern(&m->cfg, i)));
        }
        strcat(list, "]");
        if (!strstr(js, list)) fail_msg("meta.json: expected %s, got:\n%s", list, js);
        if (!strstr(js, "\"mode\": \"patterns\""))
            fail_msg("meta.json: expected \"mode\": \"patterns\", got:\n%s", js);
    } else {
        if (!strstr(js, "\"head_patterns\": null,"))
            fail_msg("meta.json: expected \"head_patterns\": null, got:\n%s", js);
        if (!strstr(js, "\"mode\": \"random\""))
            fail_msg("meta.json: expected \"mode\": \"random\", got:\n%s", js);
    }
    const char *lim = strstr(js, "\"limit\": ");
    if (!lim) fail_msg("meta.json: expected \"limit\", got:\n%s", js);
    double limit = strtod(lim + strlen("\"limit\": "), NULL);
    CHECK_NEAR("meta.json limit = sqrt(6 / (2 d_model))", sqrt(6.0 / (2.0 * d)), limit,
               1e-6 * sqrt(6.0 / (2.0 * d)));
    CHECK_TRUE("meta.json is an object", js[0] == '{' && strrchr(js, '}') != NULL);
    free(js);

    /* exactly the listed files, no temporaries */
    char names[4096];
    int entries = list_dir(dir, names, sizeof names);
    if (entries != 16) fail_msg("%s: expected 16 files, got %d: %s", dir, entries, names);
    CHECK_TRUE("no .tmp- files left", strstr(names, ".tmp-") == NULL);
}

static void test_dump_files(void **state) {
    (void)state;
    static const dcase C[] = {
        {"The animal didn't cross the street because it was too tired.",
         {.h = 4, .d_model = 64, .seed = 1}},
        {"Caf\xc3\xa9 cr\xc3\xa8me \xc3\xa0 Z\xc3\xbcrich, then "
         "\xe6\x9d\xb1\xe4\xba\xac\xe3\x81\xa7.",
         {.h = 3, .d_model = 6, .seed = 2, .mask = MHA_MASK_CAUSAL}},
        {"one", {.h = 1, .d_model = 1, .seed = 99, .no_scale = 1}},
        {"the dog chased the cat and the cat chased the dog",
         {.h = 8,
          .d_model = 48,
          .seed = UINT64_C(9223372036854775807),
          .mask = MHA_MASK_CAUSAL,
          .no_scale = 1}},
        /* padding, temperature, ablation, designed heads (one too small: d_k 8) */
        {"the dog chased the cat",
         {.h = 6,
          .d_model = 48,
          .seed = 3,
          .pad = 9,
          .temperature = 0.05f,
          .weights = MHA_WEIGHTS_PATTERNS,
          .ablate = {0x22}}},
        {"a b a",
         {.h = 2,
          .d_model = 8,
          .seed = 4,
          .pad = 3,
          .temperature = 20.0f,
          .mask = MHA_MASK_CAUSAL,
          .ablate = {0x3}}},
    };
    char *base = make_tmpdir();
    char dir[800];
    snprintf(dir, sizeof dir, "%s/a/b/c", base); /* missing parents are created */
    mha_model *m = mha_model_create();
    assert_non_null(m);
    for (size_t ci = 0; ci < sizeof C / sizeof C[0]; ci++) {
        tok_list t = {0};
        char err[512] = "";
        CHECK_INT("tok_split", 0, tok_split(&t, C[ci].text, 512, NULL, err, sizeof err));
        int rc = mha_model_compute(m, &C[ci].cfg, &t, err, sizeof err);
        if (rc != 0) fail_msg("mha_model_compute: expected 0, got %d (%s)", rc, err);
        /* the same folder each time: later dumps replace earlier files */
        rc = dump_model(dir, m, &t, err, sizeof err);
        if (rc != 0) fail_msg("dump_write #%zu: expected 0, got %d (%s)", ci, rc, err);
        check_dump(dir, m, &t);
        tok_free(&t);
    }
    mha_model_destroy(m);
    remove_tree(base);
}

/* A layer without one of the tensors (a trained layer with no W^Q, say) is refused
 * before anything is written: no folder, and the message names what is missing. */
static void test_dump_missing_tensor(void **state) {
    (void)state;
    char *base = make_tmpdir();
    char dir[800], err[512] = "";
    snprintf(dir, sizeof dir, "%s/d", base);
    tok_list t = {0};
    CHECK_INT("tok_split", 0, tok_split(&t, "a b c", 0, NULL, err, sizeof err));
    mha_model *m = mha_model_create();
    assert_non_null(m);
    mha_config cfg = {0};
    CHECK_INT("mha_model_compute", 0, mha_model_compute(m, &cfg, &t, err, sizeof err));
    static mha_layer_text text;
    attn_layer L;
    mha_layer_fill(&L, &text, m, &t);
    L.w_q = NULL;
    CHECK_INT("dump_write of a layer without W_Q", -1, dump_write_layer(dir, &L, err, sizeof err));
    CHECK_TRUE("the message names W_Q", strstr(err, "W_Q") != NULL);
    struct stat st;
    CHECK_TRUE("nothing written", stat(dir, &st) != 0 && errno == ENOENT);
    char names[1024];
    CHECK_INT("no temporary folder either", 0, list_dir(base, names, sizeof names));
    mha_model_destroy(m);
    tok_free(&t);
    remove_tree(base);
}

static void test_dump_onto_file(void **state) {
    (void)state;
    char *base = make_tmpdir();
    char file[700], sub[800], err[512];
    snprintf(file, sizeof file, "%s/taken", base);
    write_bytes(file, "keep me\n", 8);

    tok_list t = {0};
    CHECK_INT("tok_split", 0, tok_split(&t, "a b c", 0, NULL, err, sizeof err));
    mha_model *m = mha_model_create();
    assert_non_null(m);
    mha_config cfg = {0};
    CHECK_INT("mha_model_compute", 0, mha_model_compute(m, &cfg, &t, err, sizeof err));

    const char *targets[2] = {file, sub};
    snprintf(sub, sizeof sub, "%s/taken/deeper", base);
    for (int k = 0; k < 2; k++) {
        err[0] = '\0';
        char what[64];
        snprintf(what, sizeof what, "dump_write onto a file (#%d)", k);
        CHECK_INT(what, -1, dump_model(targets[k], m, &t, err, sizeof err));
        CHECK_MSG(what, err);
        CHECK_TRUE("message is one line", strchr(err, '\n') == NULL);
        size_t len = 0;
        char *back = (char *)slurp(file, &len);
        if (!back) fail_msg("%s: expected the file to stay, got it gone", file);
        CHECK_STR("file content after the failed dump", "keep me\n", back);
        free(back);
        char names[1024];
        int entries = list_dir(base, names, sizeof names);
        if (entries != 1)
            fail_msg("%s: expected only 'taken', got %d entries: %s", base, entries, names);
        struct stat st;
        CHECK_INT("stat(taken)", 0, stat(file, &st));
        CHECK_TRUE("taken is still a regular file", S_ISREG(st.st_mode));
    }

    /* dump_mkdirs directly */
    char dir[900];
    snprintf(dir, sizeof dir, "%s/x/y/z/", base); /* trailing slash */
    err[0] = '\0';
    CHECK_INT("dump_mkdirs nested with trailing slash", 0, dump_mkdirs(dir, err, sizeof err));
    snprintf(dir, sizeof dir, "%s/x/y/z", base);
    struct stat st;
    CHECK_INT("stat nested folder", 0, stat(dir, &st));
    CHECK_TRUE("nested is a folder", S_ISDIR(st.st_mode));
    CHECK_INT("dump_mkdirs existing", 0, dump_mkdirs(dir, err, sizeof err));
    err[0] = '\0';
    CHECK_INT("dump_mkdirs(\"\")", -1, dump_mkdirs("", err, sizeof err));
    CHECK_MSG("dump_mkdirs(\"\")", err);
    err[0] = '\0';
    CHECK_INT("dump_mkdirs onto a file", -1, dump_mkdirs(file, err, sizeof err));
    CHECK_MSG("dump_mkdirs onto a file", err);

    mha_model_destroy(m);
    tok_free(&t);
    remove_tree(base);
}

/* ------------------------------------------------------------------------------ */
/* all or nothing                                                                   */

/* A file-size limit makes every write past it fail with EFBIG, as a full disk
 * fails with ENOSPC, without root. */
static struct rlimit g_fsize;
static void limit_file_size(rlim_t bytes) {
    signal(SIGXFSZ, SIG_IGN); /* the write fails instead of the process dying */
    getrlimit(RLIMIT_FSIZE, &g_fsize);
    struct rlimit r = {bytes, g_fsize.rlim_max};
    setrlimit(RLIMIT_FSIZE, &r);
}
static void unlimit_file_size(void) {
    setrlimit(RLIMIT_FSIZE, &g_fsize);
}

/* "name:size:first bytes" of every entry under dir, sorted, for before/after */
static void tree_sig(const char *dir, char *out, size_t len) {
    char cmd[1200];
    snprintf(cmd, sizeof cmd,
             "cd '%s' && find . -mindepth 1 | sort | while read f; do "
             "if [ -d \"$f\" ]; then echo \"$f/\"; else echo \"$f:$(cksum < \"$f\")\"; fi; done",
             dir);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    size_t n = fread(out, 1, len - 1, p);
    out[n] = '\0';
    pclose(p);
}

static mha_model *small_model(tok_list *t, int d, int h) {
    char err[512];
    CHECK_INT("tok_split", 0, tok_split(t, "the cat sat on the mat", 0, NULL, err, sizeof err));
    mha_model *m = mha_model_create();
    assert_non_null(m);
    mha_config cfg = {.h = h, .d_model = d, .seed = 5};
    CHECK_INT("mha_model_compute", 0, mha_model_compute(m, &cfg, t, err, sizeof err));
    return m;
}

static void test_npy_write_full(void **state) {
    (void)state;
    char *dir = make_tmpdir();
    char path[700], err[512] = "";
    snprintf(path, sizeof path, "%s/big.npy", dir);
    static float data[4096];
    int shape[2] = {64, 64};
    limit_file_size(8192);
    int rc = npy_write_f32(path, data, shape, 2, err, sizeof err);
    unlimit_file_size();
    CHECK_INT("npy_write_f32 past the file-size limit", -1, rc);
    if (!strstr(err, strerror(EFBIG)) || strncmp(err, "cannot write ", 13) != 0 ||
        !strstr(err, path))
        fail_msg("message: expected \"cannot write %s: %s\", got \"%s\"", path, strerror(EFBIG),
                 err);
    CHECK_INT("entries after the failed write (no file, no temporary)", 0, list_dir(dir, NULL, 0));
    /* a shape that cannot exist is refused before anything is made */
    int bad[2] = {-1, 4};
    CHECK_INT("npy_write_f32 negative dim", -1, npy_write_f32(path, data, bad, 2, err, sizeof err));
    CHECK_INT("npy_write_f32 ndim 5", -1, npy_write_f32(path, data, shape, 5, err, sizeof err));
    CHECK_INT("entries after refused shapes", 0, list_dir(dir, NULL, 0));
    remove_tree(dir);
}

static void test_dump_all_or_nothing(void **state) {
    (void)state;
    char *base = make_tmpdir();
    char dir[800], err[512];
    tok_list t = {0};
    mha_model *big = small_model(&t, 128, 8); /* W_Q alone is 64 KiB */
    tok_list t2 = {0};
    mha_model *small = small_model(&t2, 8, 2);

    /* a new folder (with missing parents): nothing is left, not even the parents */
    snprintf(dir, sizeof dir, "%s/p/q/out", base);
    limit_file_size(20000);
    err[0] = '\0';
    int rc = dump_model(dir, big, &t, err, sizeof err);
    unlimit_file_size();
    CHECK_INT("dump_write past the file-size limit", -1, rc);
    if (!strstr(err, strerror(EFBIG)) || !strstr(err, "/p/q/out/W_Q.npy"))
        fail_msg("message: expected \"cannot write %s/W_Q.npy: %s\", got \"%s\"", dir,
                 strerror(EFBIG), err);
    char names[4096];
    int entries = list_dir(base, names, sizeof names);
    if (entries != 0) fail_msg("%s after the failed dump: expected nothing, got %s", base, names);

    /* over an earlier dump: the earlier one stays byte for byte */
    snprintf(dir, sizeof dir, "%s/out", base);
    CHECK_INT("the earlier dump", 0, dump_model(dir, small, &t2, err, sizeof err));
    char before[8192], after[8192];
    tree_sig(base, before, sizeof before);
    limit_file_size(20000);
    rc = dump_model(dir, big, &t, err, sizeof err);
    unlimit_file_size();
    CHECK_INT("dump_write over an earlier dump past the limit", -1, rc);
    tree_sig(base, after, sizeof after);
    CHECK_STR("the folder after the failed dump (the earlier one, byte for byte)", before, after);

    mha_model_destroy(big);
    mha_model_destroy(small);
    tok_free(&t);
    tok_free(&t2);
    remove_tree(base);
}

/* The dump's folder gets 0777 & ~umask and its files 0666 & ~umask, as a folder
 * and files made by mkdir and open would: the folder it makes, the missing parents
 * it makes, and the folder that replaces an earlier dump. Under umask 022 and 077. */
static void test_dump_modes(void **state) {
    (void)state;
    static const mode_t masks[] = {022, 077};
    char *base = make_tmpdir();
    tok_list t = {0};
    mha_model *m = small_model(&t, 16, 4);
    const mode_t saved = umask(022);
    for (size_t mi = 0; mi < sizeof masks / sizeof masks[0]; mi++) {
        const mode_t mask = masks[mi];
        char parent[800], dir[900], path[1000], err[512] = "", what[1200];
        snprintf(parent, sizeof parent, "%s/p%03o", base, (unsigned)mask);
        snprintf(dir, sizeof dir, "%s/out", parent);
        umask(mask);
        for (int pass = 0; pass < 2; pass++) { /* a new folder, then over that dump */
            int rc = dump_model(dir, m, &t, err, sizeof err);
            if (rc != 0)
                fail_msg("dump_write under umask %03o: expected 0, got %d (%s)", (unsigned)mask, rc,
                         err);
            struct stat st;
            CHECK_INT("stat the dump", 0, stat(dir, &st));
            snprintf(what, sizeof what, "mode of %s (umask %03o, pass %d)", dir, (unsigned)mask,
                     pass);
            CHECK_INT(what, (int)(0777 & ~mask), (int)(st.st_mode & 07777));
            CHECK_INT("stat the parent", 0, stat(parent, &st));
            snprintf(what, sizeof what, "mode of the parent it made %s (umask %03o)", parent,
                     (unsigned)mask);
            CHECK_INT(what, (int)(0777 & ~mask), (int)(st.st_mode & 07777));
            snprintf(path, sizeof path, "%s/attn.npy", dir);
            CHECK_INT("stat attn.npy", 0, stat(path, &st));
            snprintf(what, sizeof what, "mode of %s (umask %03o)", path, (unsigned)mask);
            CHECK_INT(what, (int)(0666 & ~mask), (int)(st.st_mode & 07777));
        }
    }
    umask(saved);
    mha_model_destroy(m);
    tok_free(&t);
    remove_tree(base);
}

static void test_dump_replaces(void **state) {
    (void)state;
    char *base = make_tmpdir();
    char dir[800], path[900], err[512];
    tok_list t = {0};
    mha_model *m = small_model(&t, 16, 4);
    snprintf(dir, sizeof dir, "%s/out", base);

    /* an empty folder and an earlier dump, with a temporary file an old run left,
       are replaced as a whole: exactly the 16 files afterwards */
    CHECK_INT("mkdir", 0, mkdir(dir, 0777));
    CHECK_INT("dump into an empty folder", 0, dump_model(dir, m, &t, err, sizeof err));
    snprintf(path, sizeof path, "%s/X.npy.tmp-AbC123", dir);
    write_bytes(path, "left over", 9);
    snprintf(path, sizeof path, "%s/attn.npy", dir);
    write_bytes(path, "stale", 5);
    CHECK_INT("dump over an earlier dump", 0, dump_model(dir, m, &t, err, sizeof err));
    check_dump(dir, m, &t);
    char names[4096];
    int entries = list_dir(base, names, sizeof names);
    if (entries != 1) fail_msg("%s: expected only 'out', got %s", base, names);

    /* a folder with a file a dump does not write is refused and left alone */
    snprintf(path, sizeof path, "%s/notes.txt", dir);
    write_bytes(path, "mine", 4);
    char before[8192], after[8192];
    tree_sig(base, before, sizeof before);
    err[0] = '\0';
    CHECK_INT("dump over a folder with notes.txt", -1, dump_model(dir, m, &t, err, sizeof err));
    if (!strstr(err, "notes.txt"))
        fail_msg("message: expected it to name notes.txt, got \"%s\"", err);
    /* ".", "..", "/" and a folder holding the current one name no folder to replace */
    char cwd[1024];
    assert_non_null(getcwd(cwd, sizeof cwd));
    CHECK_INT("chdir", 0, chdir(dir));
    const char *refused[] = {".", "./", "..", "/", "../out", "../out/"};
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
        err[0] = '\0';
        char what[64];
        snprintf(what, sizeof what, "dump_write(\"%s\")", refused[i]);
        CHECK_INT(what, -1, dump_model(refused[i], m, &t, err, sizeof err));
        CHECK_MSG(what, err);
    }
    CHECK_INT("chdir back", 0, chdir(cwd));
    tree_sig(base, after, sizeof after);
    CHECK_STR("the folders after refused dumps", before, after);

    /* a symbolic link to a dump folder: the folder is replaced, the link stays */
    snprintf(path, sizeof path, "%s/notes.txt", dir);
    unlink(path);
    char link[900];
    snprintf(link, sizeof link, "%s/link", base);
    CHECK_INT("symlink", 0, symlink("out", link));
    CHECK_INT("dump through a link", 0, dump_model(link, m, &t, err, sizeof err));
    struct stat st;
    CHECK_INT("lstat(link)", 0, lstat(link, &st));
    CHECK_TRUE("the link is still a link", S_ISLNK(st.st_mode));
    check_dump(dir, m, &t);

    mha_model_destroy(m);
    tok_free(&t);
    remove_tree(base);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_npy_roundtrip),       cmocka_unit_test(test_npy_header_exact),
        cmocka_unit_test(test_npy_errors),          cmocka_unit_test(test_npy_hostile_shapes),
        cmocka_unit_test(test_dump_files),          cmocka_unit_test(test_dump_onto_file),
        cmocka_unit_test(test_dump_missing_tensor), cmocka_unit_test(test_npy_write_full),
        cmocka_unit_test(test_dump_all_or_nothing), cmocka_unit_test(test_dump_replaces),
        cmocka_unit_test(test_dump_modes),
    };
    return cmocka_run_group_tests_name("npy_dump", tests, group_setup, group_teardown);
}
