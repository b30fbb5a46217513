/* safetensors.c: the safetensors reader (safetensors.h). The file is mapped
 * read-only and never copied whole: st_parse checks the 8-byte header length, the
 * JSON header (jansson) and the tiling of the data section; st_read_f32 converts
 * one tensor (or a range of it) straight from the mapping into the caller's
 * float32 block, and st_release drops its pages again so that loading a large
 * file does not keep it all resident. */
#define _DEFAULT_SOURCE /* madvise, MADV_DONTNEED */
#include "safetensors.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* 64-bit integers in the header: offsets of files past 2 GiB need them. */
#if !JSON_INTEGER_IS_LONG_LONG
#error "jansson must be built with long long integers"
#endif

/* ------------------------------------------------------------------------------ */
/* errors                                                                          */

/* Every message is one line: a tensor name or jansson's excerpt of the input may
 * hold control characters (a JSON "\n" escape in a name), so they become '?'. */
static void one_line(char *s) {
    for (; *s; s++)
        if ((unsigned char)*s < 0x20 || *s == 0x7f) *s = '?';
}

static int fail(char *err, size_t errlen, int code, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    if (errlen) one_line(err);
    return code;
}

/* ------------------------------------------------------------------------------ */
/* dtypes                                                                          */

/* Every dtype the safetensors format defines, with its size: the ones we do not
 * convert still take their bytes in the tiling (GPT-2's attn.bias mask is often
 * BOOL or U8). */
static const struct {
    const char *name;
    st_dtype dtype;
    unsigned size;
} DTYPES[] = {
    {"F32", ST_F32, 4},   {"F16", ST_F16, 2},   {"BF16", ST_BF16, 2},     {"BOOL", ST_OTHER, 1},
    {"U8", ST_OTHER, 1},  {"I8", ST_OTHER, 1},  {"F8_E4M3", ST_OTHER, 1}, {"F8_E5M2", ST_OTHER, 1},
    {"I16", ST_OTHER, 2}, {"U16", ST_OTHER, 2}, {"I32", ST_OTHER, 4},     {"U32", ST_OTHER, 4},
    {"I64", ST_OTHER, 8}, {"U64", ST_OTHER, 8}, {"F64", ST_OTHER, 8},
};

/* IEEE half to single, by bits: normals rebias the exponent (15 -> 127),
 * subnormals (exponent 0) are normalised (value man 2^-24), inf and NaN keep
 * their mantissa (a NaN stays a NaN, quiet or not). Every half is exact in float. */
static inline uint32_t f16_bits_to_f32(uint16_t h) {
    const uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t exp = (h >> 10) & 0x1fu, man = h & 0x3ffu;
    if (exp == 0x1f) return sign | 0x7f800000u | man << 13;
    if (exp != 0) return sign | (exp + 112u) << 23 | man << 13;
    if (man == 0) return sign;
    int e = -1; /* shifts past the first, to bring the leading 1 to bit 10 */
    do {
        man <<= 1;
        e++;
    } while (!(man & 0x400u));
    return sign | (uint32_t)(112 - e) << 23 | (man & 0x3ffu) << 13;
}

static inline float bits_float(uint32_t u) {
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* ------------------------------------------------------------------------------ */
/* the header                                                                      */

static int json_u64(const json_t *v, uint64_t *out) {
    if (!json_is_integer(v)) return -1;
    json_int_t i = json_integer_value(v);
    if (i < 0) return -1;
    *out = (uint64_t)i;
    return 0;
}

/* Reads one tensor's entry {"dtype", "shape", "data_offsets"} into t (name set by
 * the caller); a key beyond those three is refused: a header with more than we
 * understand is not one we can vouch for. */
static int parse_entry(st_tensor *t, json_t *v, char *err, size_t errlen) {
    const char *nm = t->name;
    if (!json_is_object(v)) return fail(err, errlen, 2, "tensor %s: entry is not an object", nm);
    const char *key;
    json_t *val;
    json_object_foreach(v, key, val) {
        if (strcmp(key, "dtype") && strcmp(key, "shape") && strcmp(key, "data_offsets"))
            return fail(err, errlen, 2, "tensor %s: unknown key \"%s\"", nm, key);
    }
    json_t *dt = json_object_get(v, "dtype"), *sh = json_object_get(v, "shape");
    json_t *off = json_object_get(v, "data_offsets");
    if (!dt || !sh || !off)
        return fail(err, errlen, 2, "tensor %s: needs dtype, shape and data_offsets", nm);
    if (!json_is_string(dt)) return fail(err, errlen, 2, "tensor %s: dtype is not a string", nm);
    const char *dts = json_string_value(dt);
    size_t k = 0;
    while (k < sizeof DTYPES / sizeof DTYPES[0] && strcmp(DTYPES[k].name, dts)) k++;
    if (k == sizeof DTYPES / sizeof DTYPES[0])
        return fail(err, errlen, 2, "tensor %s: unknown dtype \"%.20s\"", nm, dts);
    t->dtype = DTYPES[k].dtype;
    t->elem_size = DTYPES[k].size;
    snprintf(t->dtype_name, sizeof t->dtype_name, "%s", DTYPES[k].name);

    if (!json_is_array(sh)) return fail(err, errlen, 2, "tensor %s: shape is not an array", nm);
    size_t nd = json_array_size(sh);
    if (nd > SAFETENSORS_MAX_DIMS)
        return fail(err, errlen, 2, "tensor %s: %zu dimensions (at most %d)", nm, nd,
                    SAFETENSORS_MAX_DIMS);
    t->ndim = (int)nd;
    uint64_t elems = 1;
    for (size_t i = 0; i < nd; i++) {
        uint64_t dim;
        if (json_u64(json_array_get(sh, i), &dim) != 0)
            return fail(err, errlen, 2, "tensor %s: shape[%zu] is not an integer >= 0", nm, i);
        t->shape[i] = (int64_t)dim;
        if (__builtin_mul_overflow(elems, dim, &elems))
            return fail(err, errlen, 2, "tensor %s: the shape's product overflows", nm);
    }
    t->elems = elems;
    uint64_t bytes;
    if (__builtin_mul_overflow(elems, (uint64_t)t->elem_size, &bytes))
        return fail(err, errlen, 2, "tensor %s: its size in bytes overflows", nm);

    if (!json_is_array(off) || json_array_size(off) != 2 ||
        json_u64(json_array_get(off, 0), &t->begin) != 0 ||
        json_u64(json_array_get(off, 1), &t->end) != 0)
        return fail(err, errlen, 2, "tensor %s: data_offsets is not [begin, end] (integers >= 0)",
                    nm);
    if (t->begin > t->end)
        return fail(err, errlen, 2, "tensor %s: data_offsets begin %llu past end %llu", nm,
                    (unsigned long long)t->begin, (unsigned long long)t->end);
    if (t->end - t->begin != bytes)
        return fail(
            err, errlen, 2, "tensor %s: data_offsets hold %llu bytes, but %s of this shape is %llu",
            nm, (unsigned long long)(t->end - t->begin), t->dtype_name, (unsigned long long)bytes);
    return 0;
}

/* "__metadata__": a map of strings, read by nothing here. */
static int check_metadata(json_t *v, char *err, size_t errlen) {
    if (!json_is_object(v)) return fail(err, errlen, 2, "__metadata__ is not an object");
    const char *key;
    json_t *val;
    json_object_foreach(v, key, val) {
        if (!json_is_string(val))
            return fail(err, errlen, 2, "__metadata__ \"%s\" is not a string", key);
    }
    return 0;
}

static int by_begin(const void *a, const void *b) {
    const st_tensor *x = *(const st_tensor *const *)a, *y = *(const st_tensor *const *)b;
    if (x->begin != y->begin) return x->begin < y->begin ? -1 : 1;
    if (x->end != y->end) return x->end < y->end ? -1 : 1; /* empty ones first */
    return strcmp(x->name, y->name);
}

static int by_name(const void *a, const void *b) {
    return strcmp(((const st_tensor *)a)->name, ((const st_tensor *)b)->name);
}

/* The tensors must tile [0, data_len) exactly: sorted by begin, the first at 0,
 * each where the one before ended, the last at the end of the file. A gap or an
 * overlap means the header and the data disagree (or two names share bytes,
 * which safetensors never writes); bytes after the last are unaccounted for. */
static int check_tiling(st_file *f, uint64_t data_len, char *err, size_t errlen) {
    if (f->n == 0) {
        if (data_len != 0)
            return fail(err, errlen, 2, "no tensors, but %llu bytes of data",
                        (unsigned long long)data_len);
        return 0;
    }
    st_tensor **o = malloc((size_t)f->n * sizeof *o);
    if (!o) return fail(err, errlen, 1, "out of memory for %d tensors", f->n);
    for (int i = 0; i < f->n; i++) o[i] = &f->t[i];
    qsort(o, (size_t)f->n, sizeof *o, by_begin);
    uint64_t at = 0;
    int rc = 0;
    for (int i = 0; i < f->n && rc == 0; i++) {
        if (o[i]->begin < at)
            rc = fail(err, errlen, 2, "tensors %s and %s overlap (data_offsets)", o[i - 1]->name,
                      o[i]->name);
        else if (o[i]->begin > at)
            rc = fail(err, errlen, 2, "%llu bytes of data before tensor %s belong to no tensor",
                      (unsigned long long)(o[i]->begin - at), o[i]->name);
        at = o[i]->end;
    }
    if (rc == 0 && at > data_len) /* a cut file: the short-file class */
        rc = fail(err, errlen, 1,
                  "short file: tensor %s ends at byte %llu of data, the file has %llu",
                  o[f->n - 1]->name, (unsigned long long)at, (unsigned long long)data_len);
    else if (rc == 0 && at < data_len)
        rc = fail(err, errlen, 2, "%llu bytes after the last tensor belong to no tensor",
                  (unsigned long long)(data_len - at));
    free(o);
    return rc;
}

static void free_tensors(st_file *f) {
    for (int i = 0; i < f->n; i++) free(f->t[i].name);
    free(f->t);
    f->t = NULL;
    f->n = 0;
}

int st_parse(st_file *f, const unsigned char *buf, size_t len, char *err, size_t errlen) {
    memset(f, 0, sizeof *f);
    f->fd = -1; /* not our mapping: st_close and st_release leave buf alone */
    if (errlen) err[0] = '\0';
    if (len < 8)
        return fail(err, errlen, 1, "short file: %zu bytes, no room for the header length", len);
    uint64_t hlen = 0;
    for (int i = 7; i >= 0; i--) hlen = hlen << 8 | buf[i];
    /* the bound first: 8 + hlen can then not wrap, whatever the 8 bytes say */
    if (hlen > SAFETENSORS_MAX_HEADER)
        return fail(err, errlen, 2, "header length %llu is over the %u bytes allowed",
                    (unsigned long long)hlen, SAFETENSORS_MAX_HEADER);
    if (hlen > len - 8)
        return fail(err, errlen, 1, "short file: header length %llu, but only %zu bytes follow",
                    (unsigned long long)hlen, len - 8);
    json_error_t jerr;
    json_t *root = json_loadb((const char *)buf + 8, (size_t)hlen, JSON_REJECT_DUPLICATES, &jerr);
    if (!root) {
        for (char *c = jerr.text; *c; c++)
            if ((unsigned char)*c >= 0x80) *c = '?'; /* the excerpt may cut a UTF-8 sequence */
        return fail(err, errlen, 2, "header is not valid JSON: %s (byte %d of the header)",
                    jerr.text, jerr.position);
    }
    int rc = 0;
    if (!json_is_object(root)) {
        rc = fail(err, errlen, 2, "header is not a JSON object");
        goto out;
    }
    size_t count = json_object_size(root);
    if (json_object_get(root, "__metadata__")) count--;
    f->t = calloc(count ? count : 1, sizeof *f->t);
    if (!f->t) {
        rc = fail(err, errlen, 1, "out of memory for %zu tensors", count);
        goto out;
    }
    const char *key;
    json_t *val;
    json_object_foreach(root, key, val) {
        if (strcmp(key, "__metadata__") == 0) {
            if ((rc = check_metadata(val, err, errlen)) != 0) goto out;
            continue;
        }
        st_tensor *t = &f->t[f->n];
        if (!(t->name = strdup(key))) {
            rc = fail(err, errlen, 1, "out of memory");
            goto out;
        }
        f->n++;
        if ((rc = parse_entry(t, val, err, errlen)) != 0) goto out;
    }
    f->map = buf;
    f->map_len = len;
    f->data_off = (size_t)(8 + hlen);
    if ((rc = check_tiling(f, (uint64_t)(len - f->data_off), err, errlen)) != 0) goto out;
    qsort(f->t, (size_t)f->n, sizeof *f->t, by_name);
out:
    json_decref(root);
    if (rc != 0) {
        free_tensors(f);
        f->map = NULL;
        f->map_len = 0;
        f->data_off = 0;
    }
    return rc;
}

/* ------------------------------------------------------------------------------ */
/* the file                                                                        */

int st_open(st_file *f, const char *path, char *err, size_t errlen) {
    memset(f, 0, sizeof *f);
    f->fd = -1;
    /* O_NONBLOCK: a FIFO in the file's place must not hang the open; it is then
     * refused as not a regular file */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) return fail(err, errlen, 1, "cannot open: %s", strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0) {
        int e = errno;
        close(fd);
        return fail(err, errlen, 1, "cannot stat: %s", strerror(e));
    }
    if (!S_ISREG(st.st_mode)) {
        close(fd);
        return fail(err, errlen, 1, "not a regular file");
    }
    if (st.st_size < 8) {
        close(fd);
        return fail(err, errlen, 1, "short file: %lld bytes, no room for the header length",
                    (long long)st.st_size);
    }
    size_t len = (size_t)st.st_size;
    void *map = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0);
    if (map == MAP_FAILED) {
        int e = errno;
        close(fd);
        return fail(err, errlen, 1, "cannot map: %s", strerror(e));
    }
    int rc = st_parse(f, map, len, err, errlen);
    if (rc != 0) {
        munmap(map, len);
        close(fd);
        return rc;
    }
    f->fd = fd; /* from here st_close unmaps and closes */
    /* the tensors are read in file order, each once */
    madvise(map, len, MADV_SEQUENTIAL);
    return 0;
}

const st_tensor *st_find(const st_file *f, const char *name) {
    if (!f->t || f->n == 0) return NULL;
    st_tensor key;
    memset(&key, 0, sizeof key);
    key.name = (char *)name;
    return bsearch(&key, f->t, (size_t)f->n, sizeof *f->t, by_name);
}

void st_read_f32_range(const st_file *f, const st_tensor *t, uint64_t first, uint64_t count,
                       float *dst) {
    if (count == 0 || first > t->elems || count > t->elems - first) return;
    const unsigned char *src = f->map + f->data_off + t->begin + first * t->elem_size;
    switch (t->dtype) {
    case ST_F32:
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
        memcpy(dst, src, (size_t)count * sizeof(float)); /* the file's order is ours */
#else
        for (uint64_t i = 0; i < count; i++, src += 4)
            dst[i] = bits_float((uint32_t)src[0] | (uint32_t)src[1] << 8 | (uint32_t)src[2] << 16 |
                                (uint32_t)src[3] << 24);
#endif
        break;
    case ST_F16:
        for (uint64_t i = 0; i < count; i++, src += 2)
            dst[i] = bits_float(f16_bits_to_f32((uint16_t)(src[0] | src[1] << 8)));
        break;
    case ST_BF16: /* bfloat16 is a float's upper 16 bits */
        for (uint64_t i = 0; i < count; i++, src += 2)
            dst[i] = bits_float(((uint32_t)src[0] | (uint32_t)src[1] << 8) << 16);
        break;
    case ST_OTHER: break;
    }
}

void st_read_f32(const st_file *f, const st_tensor *t, float *dst) {
    st_read_f32_range(f, t, 0, t->elems, dst);
}

void st_release(const st_file *f, const st_tensor *t) {
    /* only a mapping of our own: madvise(MADV_DONTNEED) on a caller's buffer
     * (st_parse's) would zero its anonymous pages */
    if (f->fd < 0 || !f->map || t->end == t->begin) return;
    const uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    const uintptr_t base = (uintptr_t)f->map;
    uintptr_t lo = (base + f->data_off + t->begin) & ~(page - 1);
    uintptr_t hi = (base + f->data_off + t->end + page - 1) & ~(page - 1);
    const uintptr_t top = (base + f->map_len + page - 1) & ~(page - 1);
    if (lo < base) lo = base; /* the map itself is page-aligned */
    if (hi > top) hi = top;
    /* a page shared with the next tensor is dropped too: read-only file pages are
     * only unmapped, the next read faults them back in from the page cache */
    if (hi > lo) madvise((void *)lo, hi - lo, MADV_DONTNEED);
}

void st_close(st_file *f) {
    free_tensors(f);
    if (f->fd >= 0) {
        if (f->map) munmap((void *)f->map, f->map_len);
        close(f->fd);
    }
    memset(f, 0, sizeof *f);
    f->fd = -1;
}
