/* npy.c: minimal reader/writer for NumPy's .npy format 1.0 (float32, C order), as
 * NumPy's format documentation describes it: magic, version, a little-endian
 * uint16 header length, and an ASCII dict header padded with spaces to a multiple
 * of 64 bytes and ended by '\n'. Little-endian hosts only (checked). */
#include "npy.h"

#include <errno.h>
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
    if (fread(pre, 1, 10, fp) != 10 || memcmp(pre, "\x93NUMPY", 6) != 0 || pre[6] != 1) {
        snprintf(err, errlen, "%s: not a .npy 1.0 file", path);
        fclose(fp);
        return -1;
    }
    size_t hlen = pre[8] | ((size_t)pre[9] << 8);
    if (hlen >= sizeof hdr || fread(hdr, 1, hlen, fp) != hlen) {
        snprintf(err, errlen, "%s: bad header", path);
        fclose(fp);
        return -1;
    }
    hdr[hlen] = '\0';
    if (!strstr(hdr, "'descr': '<f4'") || !strstr(hdr, "'fortran_order': False")) {
        snprintf(err, errlen, "%s: not float32 C order", path);
        fclose(fp);
        return -1;
    }
    const char *p = strstr(hdr, "'shape': (");
    if (!p) {
        snprintf(err, errlen, "%s: no shape", path);
        fclose(fp);
        return -1;
    }
    p += strlen("'shape': (");
    size_t count = 1;
    while (*p && *p != ')') {
        if (*ndim == NPY_MAX_DIMS) {
            snprintf(err, errlen, "%s: more than %d dimensions", path, NPY_MAX_DIMS);
            fclose(fp);
            return -1;
        }
        char *end = NULL;
        long v = strtol(p, &end, 10);
        if (end == p) break;
        shape[(*ndim)++] = (int)v;
        count *= (size_t)v;
        p = end;
        while (*p == ',' || *p == ' ') p++;
    }
    *data = malloc(count ? count * sizeof(float) : 1);
    if (!*data || fread(*data, sizeof(float), count, fp) != count) {
        snprintf(err, errlen, "%s: short data", path);
        free(*data);
        *data = NULL;
        fclose(fp);
        return -1;
    }
    fclose(fp);
    return 0;
}
