/* fuzz_model.c: the checkpoint's two parsers on any bytes: st_parse (a
 * safetensors file in memory) and ckpt_config_parse (config.json). The first
 * byte selects: 0 mod 3 the safetensors parser on the rest, 1 the config parser,
 * 2 both (the rest cut at the second byte's share). An accepted file must have
 * every tensor inside the buffer, the tensors tiling the data exactly, sizes that
 * agree with shapes and dtypes, and convert without reading outside it (or be
 * refused for a NaN or an infinity, naming the element); a refusal
 * must be 1 or 2 with one line of message. An accepted config must satisfy the
 * limits the transformer is created with (tf_config_check). */
#include <string.h>

#include "checkpoint.h"
#include "fuzz.h"
#include "safetensors.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fuzz_st(const uint8_t *data, size_t size) {
    st_file f;
    char err[512] = "";
    int rc = st_parse(&f, data, size, err, sizeof err);
    if (rc != 0) {
        FUZZ_EXPECT((rc == 1 || rc == 2) && f.n == 0 && f.t == NULL, "rc %d n %d", rc, f.n);
        FUZZ_EXPECT(err[0] && !strchr(err, '\n'), "refusal: '%s'", err);
        st_close(&f);
        return;
    }
    FUZZ_EXPECT(f.data_off >= 8 && f.data_off <= size, "data_off %zu of %zu", f.data_off, size);
    const uint64_t data_len = size - f.data_off;
    uint64_t covered = 0;
    for (int i = 0; i < f.n; i++) {
        const st_tensor *t = &f.t[i];
        FUZZ_EXPECT(t->begin <= t->end && t->end <= data_len, "%s [%llu, %llu) of %llu", t->name,
                    (unsigned long long)t->begin, (unsigned long long)t->end,
                    (unsigned long long)data_len);
        FUZZ_EXPECT(t->ndim >= 0 && t->ndim <= SAFETENSORS_MAX_DIMS, "ndim %d", t->ndim);
        uint64_t elems = 1;
        for (int k = 0; k < t->ndim; k++) {
            FUZZ_EXPECT(t->shape[k] >= 0, "dim %d", k);
            elems *= (uint64_t)t->shape[k]; /* cannot wrap: the parser checked */
        }
        FUZZ_EXPECT(elems == t->elems && elems * t->elem_size == t->end - t->begin,
                    "%s: %llu elems of %u bytes in %llu", t->name, (unsigned long long)elems,
                    t->elem_size, (unsigned long long)(t->end - t->begin));
        FUZZ_EXPECT(st_find(&f, t->name) == t, "st_find(%s)", t->name);
        if (i > 0) FUZZ_EXPECT(strcmp(f.t[i - 1].name, t->name) < 0, "not sorted by name");
        covered += t->end - t->begin;
        if (t->dtype != ST_OTHER && t->elems <= (1u << 16)) {
            float *out = malloc((size_t)t->elems * sizeof *out + 1);
            FUZZ_EXPECT(out != NULL, "malloc");
            char e2[256] = "";
            int r = st_read_f32(&f, t, out, e2, sizeof e2); /* ASan sees a read outside */
            FUZZ_EXPECT(r == 0 || (r == 2 && strstr(e2, " at element ")), "read %d '%s'", r, e2);
            free(out);
        }
    }
    /* tiling: no overlap and no gap means the sizes add up to the data */
    FUZZ_EXPECT(covered == data_len, "tensors cover %llu of %llu bytes",
                (unsigned long long)covered, (unsigned long long)data_len);
    st_close(&f);
}

static void fuzz_config(const uint8_t *data, size_t size) {
    ckpt_config c;
    char err[512] = "";
    int rc = ckpt_config_parse(&c, (const char *)data, size, "config.json", err, sizeof err);
    if (rc != 0) {
        FUZZ_EXPECT(rc == 2 && strncmp(err, "config.json: ", 13) == 0 && !strchr(err, '\n'),
                    "rc %d refusal '%s'", rc, err);
        return;
    }
    char e2[256];
    FUZZ_EXPECT(tf_spec_check(&c.spec, e2, sizeof e2) == 0, "accepted config fails: %s", e2);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1 || size > 1 << 20) return 0;
    const unsigned sel = data[0] % 3;
    data++, size--;
    if (sel == 0) {
        fuzz_st(data, size);
    } else if (sel == 1) {
        fuzz_config(data, size);
    } else if (size >= 1) {
        size_t cut = (size_t)data[0] * (size - 1) / 255;
        fuzz_st(data + 1, cut);
        fuzz_config(data + 1 + cut, size - 1 - cut);
    }
    return 0;
}
