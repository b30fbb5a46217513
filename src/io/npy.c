/* npy.c: minimal reader/writer for NumPy's .npy format 1.0 (float32, C order), as
 * NumPy's format documentation describes it: magic, version, a little-endian
 * uint16 header length, and an ASCII dict header padded with spaces to a multiple
 * of 64 bytes and ended by '\n'. Little-endian hosts only (checked). */
#include "npy.h"

#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "atomic_file.h"

static int host_is_little_endian(void) {
    const uint16_t one = 1;
    return *(const unsigned char *)&one == 1;
}

int npy_write_f32(const char *path, const float *data, const int *shape, int ndim, char *err,
                  size_t errlen) {
    if (!host_is_little_endian()) {
        snprintf(err, errlen, "cannot write %s: big-endian host not supported", path);
        return -1;
    }
    char dict[256];
    int o = snprintf(dict, sizeof dict, "{'descr': '<f4', 'fortran_order': False, 'shape': (");
    size_t count = 1;
    for (int i = 0; i < ndim; i++) {
        o += snprintf(dict + o, sizeof dict - (size_t)o, "%d%s", shape[i],
                      ndim == 1 ? "," : (i + 1 < ndim ? ", " : ""));
        count *= (size_t)shape[i];
    }
    o += snprintf(dict + o, sizeof dict - (size_t)o, "), }");
    /* pad: 10 preamble bytes + header (dict, spaces, '\n') is a multiple of 64 */
    size_t hlen = (size_t)o + 1;
    size_t pad = (64 - (10 + hlen) % 64) % 64;
    hlen += pad;
    unsigned char pre[10] = {0x93,
                             'N',
                             'U',
                             'M',
                             'P',
                             'Y',
                             1,
                             0,
                             (unsigned char)(hlen & 0xFF),
                             (unsigned char)(hlen >> 8)};

    atomic_file af;
    if (atomic_open(&af, path, err, errlen) != 0) return -1;
    fwrite(pre, 1, sizeof pre, af.fp);
    fwrite(dict, 1, (size_t)o, af.fp);
    for (size_t i = 0; i < pad; i++) fputc(' ', af.fp);
    fputc('\n', af.fp);
    fwrite(data, sizeof(float), count, af.fp);
    return atomic_commit(&af, err, errlen);
}

/* Parses the dims of the header's shape tuple, which p points just inside of
 * ("3, 4)" or "5,)" or ")"), into shape and ndim. Every dim must be digits only
 * and at most INT_MAX. *count is the product of the dims, and *overflow is set
 * when count * sizeof(float) does not fit in size_t (never when a dim is 0).
 * Returns 0, or -1 with the reason in err. */
static int parse_shape(const char *p, int *shape, int *ndim, size_t *count, int *overflow,
                       char *err, size_t errlen) {
    int zero_dim = 0;
    *count = 1;
    *overflow = 0;
    while (*p != ')') {
        if (*ndim == NPY_MAX_DIMS) {
            snprintf(err, errlen, "shape has more than %d dimensions", NPY_MAX_DIMS);
            return -1;
        }
        if (*p < '0' || *p > '9') {
            snprintf(err, errlen, "bad shape: a dim is not a non-negative integer");
            return -1;
        }
        long long v = 0;
        while (*p >= '0' && *p <= '9' && v <= INT_MAX) v = v * 10 + (*p++ - '0');
        if (v > INT_MAX) {
            snprintf(err, errlen, "bad shape: a dim is larger than %d", INT_MAX);
            return -1;
        }
        shape[(*ndim)++] = (int)v;
        if (v == 0) zero_dim = 1;
        if (v != 0 && *count > SIZE_MAX / sizeof(float) / (size_t)v) *overflow = 1;
        *count *= (size_t)v;
        if (*p == ',') {
            p++;
            while (*p == ' ') p++;
        } else if (*p != ')') {
            snprintf(err, errlen, "bad shape: not a tuple of integers");
            return -1;
        }
    }
    if (zero_dim) { /* no data, whatever the other dims multiply to */
        *count = 0;
        *overflow = 0;
    }
    return 0;
}

int npy_read_f32(const char *path, float **data, int *shape, int *ndim, char *err, size_t errlen) {
    *data = NULL;
    *ndim = 0;
    FILE *fp = fopen(path, "rb");
    if (!fp) {
        snprintf(err, errlen, "cannot read %s: %s", path, strerror(errno));
        return -1;
    }
    unsigned char pre[10];
    char hdr[1024];
    char why[160];
    if (fread(pre, 1, 10, fp) != 10 || memcmp(pre, "\x93NUMPY", 6) != 0 || pre[6] != 1) {
        snprintf(err, errlen, "%s: not a .npy 1.0 file", path);
        goto fail;
    }
    size_t hlen = pre[8] | ((size_t)pre[9] << 8);
    if (hlen >= sizeof hdr || fread(hdr, 1, hlen, fp) != hlen) {
        snprintf(err, errlen, "%s: bad header", path);
        goto fail;
    }
    hdr[hlen] = '\0';
    if (!strstr(hdr, "'descr': '<f4'") || !strstr(hdr, "'fortran_order': False")) {
        snprintf(err, errlen, "%s: not float32 C order", path);
        goto fail;
    }
    const char *p = strstr(hdr, "'shape': (");
    if (!p) {
        snprintf(err, errlen, "%s: no shape", path);
        goto fail;
    }
    /* The shape is untrusted: it must parse, its byte count must fit in size_t and
     * the data must be in the file. Only then is anything allocated. */
    size_t count = 0;
    int overflow = 0;
    if (parse_shape(p + strlen("'shape': ("), shape, ndim, &count, &overflow, why, sizeof why) !=
        0) {
        snprintf(err, errlen, "%s: %s", path, why);
        goto fail;
    }
    long data_start = ftell(fp), file_end = -1;
    if (data_start >= 0 && fseek(fp, 0, SEEK_END) == 0) file_end = ftell(fp);
    if (file_end < data_start || fseek(fp, data_start, SEEK_SET) != 0) {
        snprintf(err, errlen, "cannot read %s: cannot seek in it", path);
        goto fail;
    }
    size_t have = (size_t)(file_end - data_start);
    if (overflow) {
        snprintf(err, errlen, "%s: bad shape: its size overflows (the file has %zu bytes of data)",
                 path, have);
        goto fail;
    }
    if (count * sizeof(float) > have) {
        snprintf(err, errlen, "%s: shape needs %zu bytes of data, the file has %zu", path,
                 count * sizeof(float), have);
        goto fail;
    }
    *data = malloc(count ? count * sizeof(float) : 1);
    if (!*data || fread(*data, sizeof(float), count, fp) != count) {
        snprintf(err, errlen, "%s: short data", path);
        goto fail;
    }
    fclose(fp);
    return 0;

fail:
    free(*data);
    *data = NULL;
    *ndim = 0;
    fclose(fp);
    return -1;
}
