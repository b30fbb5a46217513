/* safetensors.c: the safetensors reader (safetensors.h). st_parse checks the
 * 8-byte header length, the JSON header (jansson) and the tiling of the data
 * section; st_read_f32 converts one tensor (or a range of it) into the caller's
 * float32 block, refusing NaN and infinities on the way.
 *
 * Read, not mapped. A mapping faults with SIGBUS on any page past the end of a
 * file another process cut short while we read it, and the load runs on a worker
 * thread beside the window and OpenBLAS: a SIGBUS guard would be a process-wide
 * handler jumping out of a copy on one thread, and "map, then check the length"
 * comes after the fault. pread turns the cut into a short read we can say. It
 * costs no extra pass: every value is converted to float32 anyway, so F32 is read
 * straight into the caller's block and F16 / BF16 through one small buffer, in
 * chunks small enough to be checked for NaN while they are still in the cache.
 * The file's pages stay in the page cache instead of the process. */
#define _DEFAULT_SOURCE /* pread, posix_fadvise, st_mtim */
#include "safetensors.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define LITTLE_ENDIAN_HOST 1
#else
#define LITTLE_ENDIAN_HOST 0
#endif

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

static inline float bits_float(uint32_t u) {
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

static inline uint32_t float_bits(float f) {
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

/* IEEE half to single, by bits and without a branch, so that a chunk's loop is
 * vectorised: the 15 bits of exponent and mantissa shifted into place and the
 * exponent rebiased (15 -> 127); exponent 31 (inf, NaN: the mantissa kept, a NaN
 * stays a NaN) rebiased once more to 255; exponent 0 (zero, subnormals: man 2^-24)
 * renormalised by subtracting 2^-14 from 2^-14 (1 + man/1024), which is exact. A
 * mask picks each lane's case. Every half is exact in float. */
static inline uint32_t f16_bits_to_f32(uint16_t h) {
    uint32_t o = (uint32_t)(h & 0x7fffu) << 13;
    const uint32_t e = o & 0x0f800000u;
    const uint32_t inf_nan = 0u - (uint32_t)(e == 0x0f800000u), sub = 0u - (uint32_t)(e == 0);
    o += (112u << 23) + (inf_nan & (112u << 23));
    const uint32_t renorm = float_bits(bits_float(o + (1u << 23)) - bits_float(113u << 23));
    o = (renorm & sub) | (o & ~sub);
    return o | (uint32_t)(h & 0x8000u) << 16;
}

/* The values converted at a time: 64 Ki (256 KiB of float32), within the cache,
 * so that the NaN check reads what was just written. */
#define CHUNK_ELEMS ((uint64_t)1 << 16)

/* Converts n values of dtype dt at src into dst; for F32 src may be dst (read in
 * place). Returns the index of the first NaN or infinity, or n. The check is an OR
 * over the chunk (no branch a value), the index looked for only when it is set. */
static uint64_t convert(st_dtype dt, const unsigned char *src, uint64_t n, float *dst) {
    unsigned bad = 0;
    switch (dt) {
    case ST_F32:
#if LITTLE_ENDIAN_HOST
        if ((const void *)src != (const void *)dst)
            memcpy(dst, src, (size_t)n * sizeof(float)); /* the file's order is ours */
#else
        for (uint64_t i = 0; i < n; i++, src += 4)
            dst[i] = bits_float((uint32_t)src[0] | (uint32_t)src[1] << 8 | (uint32_t)src[2] << 16 |
                                (uint32_t)src[3] << 24);
#endif
        for (uint64_t i = 0; i < n; i++) {
            uint32_t u;
            memcpy(&u, &dst[i], sizeof u);
            bad |= (u & 0x7f800000u) == 0x7f800000u; /* exponent all ones: Inf or NaN */
        }
        break;
    case ST_F16:
        for (uint64_t i = 0; i < n; i++, src += 2) {
            const uint16_t h = (uint16_t)(src[0] | src[1] << 8);
            bad |= (h & 0x7c00u) == 0x7c00u;
            dst[i] = bits_float(f16_bits_to_f32(h));
        }
        break;
    case ST_BF16: /* bfloat16 is a float's upper 16 bits */
        for (uint64_t i = 0; i < n; i++, src += 2) {
            const uint32_t u = ((uint32_t)src[0] | (uint32_t)src[1] << 8) << 16;
            bad |= (u & 0x7f800000u) == 0x7f800000u;
            dst[i] = bits_float(u);
        }
        break;
    case ST_OTHER: return n;
    }
    if (!bad) return n;
    uint64_t i = 0;
    while (i < n && isfinite(dst[i])) i++;
    return i;
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

static int parse_header(st_file *f, const unsigned char *json, uint64_t hlen, uint64_t len,
                        char *err, size_t errlen);

/* The header length in the first 8 bytes of a file of len bytes (len >= 8). */
static int header_length(const unsigned char *b8, uint64_t len, uint64_t *hlen, char *err,
                         size_t errlen) {
    *hlen = 0;
    for (int i = 7; i >= 0; i--) *hlen = *hlen << 8 | b8[i];
    /* the bound first: 8 + hlen can then not wrap, whatever the 8 bytes say */
    if (*hlen > SAFETENSORS_MAX_HEADER)
        return fail(err, errlen, 2, "header length %llu is over the %u bytes allowed",
                    (unsigned long long)*hlen, SAFETENSORS_MAX_HEADER);
    if (*hlen > len - 8)
        return fail(err, errlen, 1, "short file: header length %llu, but only %llu bytes follow",
                    (unsigned long long)*hlen, (unsigned long long)(len - 8));
    return 0;
}

int st_parse(st_file *f, const unsigned char *buf, size_t len, char *err, size_t errlen) {
    memset(f, 0, sizeof *f);
    f->fd = -1; /* not our file: st_close leaves buf alone */
    if (errlen) err[0] = '\0';
    if (len < 8)
        return fail(err, errlen, 1, "short file: %zu bytes, no room for the header length", len);
    uint64_t hlen;
    int rc = header_length(buf, len, &hlen, err, errlen);
    if (rc == 0) rc = parse_header(f, buf + 8, hlen, len, err, errlen);
    if (rc == 0) f->mem = buf;
    return rc;
}

/* The JSON header (hlen bytes at json) of a file of len bytes: f's tensors, the
 * tiling checked against the len - 8 - hlen bytes of data. */
static int parse_header(st_file *f, const unsigned char *json, uint64_t hlen, uint64_t len,
                        char *err, size_t errlen) {
    json_error_t jerr;
    json_t *root = json_loadb((const char *)json, (size_t)hlen, JSON_REJECT_DUPLICATES, &jerr);
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
    f->len = len;
    f->data_off = (size_t)(8 + hlen);
    if ((rc = check_tiling(f, len - f->data_off, err, errlen)) != 0) goto out;
    qsort(f->t, (size_t)f->n, sizeof *f->t, by_name);
out:
    json_decref(root);
    if (rc != 0) {
        free_tensors(f);
        f->len = 0;
        f->data_off = 0;
    }
    return rc;
}

/* ------------------------------------------------------------------------------ */
/* the file                                                                        */

/* Reads len bytes at off into buf: 1 when the file ends first (it was cut since
 * its length was taken) or a read fails. */
static int read_at(int fd, void *buf, size_t len, uint64_t off, char *err, size_t errlen) {
    unsigned char *p = buf;
    while (len > 0) {
        ssize_t r = pread(fd, p, len, (off_t)off);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) return fail(err, errlen, 1, "read: %s", strerror(errno));
        if (r == 0) return fail(err, errlen, 1, "the file changed while it was read");
        p += r, len -= (size_t)r, off += (uint64_t)r;
    }
    return 0;
}

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
    const uint64_t len = (uint64_t)st.st_size;
    unsigned char b8[8], *json = NULL;
    uint64_t hlen = 0;
    int rc = read_at(fd, b8, 8, 0, err, errlen);
    if (rc == 0) rc = header_length(b8, len, &hlen, err, errlen);
    if (rc == 0 && !(json = malloc((size_t)hlen + 1)))
        rc = fail(err, errlen, 1, "out of memory for a header of %llu bytes",
                  (unsigned long long)hlen);
    if (rc == 0) rc = read_at(fd, json, (size_t)hlen, 8, err, errlen);
    if (rc == 0) rc = parse_header(f, json, hlen, len, err, errlen);
    free(json);
    if (rc == 0 && !(f->chunk = malloc(CHUNK_ELEMS * 2)))
        rc = fail(err, errlen, 1, "out of memory");
    if (rc != 0) {
        st_close(f);
        close(fd);
        return rc;
    }
    f->fd = fd; /* from here st_close closes it */
    f->mtime_s = (int64_t)st.st_mtim.tv_sec;
    f->mtime_ns = (int64_t)st.st_mtim.tv_nsec;
    /* the tensors are read in file order, each once: a larger read-ahead */
    posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
    return 0;
}

const st_tensor *st_find(const st_file *f, const char *name) {
    if (!f->t || f->n == 0) return NULL;
    st_tensor key;
    memset(&key, 0, sizeof key);
    key.name = (char *)name;
    return bsearch(&key, f->t, (size_t)f->n, sizeof *f->t, by_name);
}

int st_read_f32_range(const st_file *f, const st_tensor *t, uint64_t first, uint64_t count,
                      float *dst, char *err, size_t errlen) {
    if (count == 0 || first > t->elems || count > t->elems - first || t->dtype == ST_OTHER)
        return 0;
    const uint64_t es = t->elem_size, at = f->data_off + t->begin + first * es;
    /* F32 is read straight into dst (and, on a big-endian machine, each value's
     * bytes turned in place: a value is read whole before it is written) */
    const int in_place = t->dtype == ST_F32;
    for (uint64_t done = 0; done < count;) {
        const uint64_t m = count - done < CHUNK_ELEMS ? count - done : CHUNK_ELEMS;
        const unsigned char *src;
        if (f->mem) {
            src = f->mem + at + done * es;
        } else {
            unsigned char *into = in_place ? (unsigned char *)(dst + done) : f->chunk;
            int rc = read_at(f->fd, into, (size_t)(m * es), at + done * es, err, errlen);
            if (rc) return rc;
            src = into;
        }
        const uint64_t bad = convert(t->dtype, src, m, dst + done);
        if (bad < m) {
            const float v = dst[done + bad];
            const char *what = isnan(v) ? "NaN" : v > 0 ? "Inf" : "-Inf";
            return fail(err, errlen, 2, "tensor %s holds %s at element %llu", t->name, what,
                        (unsigned long long)(first + done + bad));
        }
        done += m;
    }
    return 0;
}

int st_read_f32(const st_file *f, const st_tensor *t, float *dst, char *err, size_t errlen) {
    return st_read_f32_range(f, t, 0, t->elems, dst, err, errlen);
}

int st_verify(const st_file *f, char *err, size_t errlen) {
    if (f->fd < 0) return 0;
    struct stat st;
    if (fstat(f->fd, &st) != 0) return fail(err, errlen, 1, "cannot stat: %s", strerror(errno));
    if ((uint64_t)st.st_size != f->len || (int64_t)st.st_mtim.tv_sec != f->mtime_s ||
        (int64_t)st.st_mtim.tv_nsec != f->mtime_ns)
        return fail(err, errlen, 1, "the file changed while it was read");
    return 0;
}

void st_close(st_file *f) {
    free_tensors(f);
    free(f->chunk);
    if (f->fd >= 0) close(f->fd);
    memset(f, 0, sizeof *f);
    f->fd = -1;
}
