/* fuzz_npy_write.c: the .npy writer with any shape (0..5 dims, negative ones
 * too) and data, through a real file on a tmpfs when there is one. A shape that
 * can exist must read back exactly (shape and bytes); one that cannot must be
 * refused with nothing left in the folder. */
#define _GNU_SOURCE
#include <dirent.h>
#include <string.h>
#include <unistd.h>

#include "fuzz.h"
#include "npy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char g_dir[256];

static void remove_dir(void) {
    rmdir(g_dir); /* empty: every input's file is unlinked */
}

static int entries(void) {
    DIR *d = opendir(g_dir);
    FUZZ_EXPECT(d != NULL, "opendir %s", g_dir);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) n += e->d_name[0] != '.';
    closedir(d);
    return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (!g_dir[0]) { /* one folder for the whole run; /dev/shm keeps fsync cheap */
        const char *base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
        snprintf(g_dir, sizeof g_dir, "%s/mhaviz-fuzz-npy-XXXXXX", base);
        FUZZ_EXPECT(mkdtemp(g_dir) != NULL, "mkdtemp");
        atexit(remove_dir);
    }
    const uint8_t *p = data;
    size_t n = size;
    int ndim = (int)(fuzz_byte(&p, &n) % 6); /* 5 is one too many */
    int shape[5];
    long long count = 1;
    for (int i = 0; i < ndim; i++) {
        shape[i] = (int16_t)fuzz_u16(&p, &n) % 40; /* -39 .. 39 */
        count *= shape[i] < 0 ? 1 : shape[i];
    }
    int valid = ndim <= NPY_MAX_DIMS;
    for (int i = 0; i < ndim; i++) valid &= shape[i] >= 0;
    if (valid && (size_t)count > n / sizeof(float)) return 0; /* not enough data given */
    float *vals = malloc(valid && count ? (size_t)count * sizeof(float) : 1);
    FUZZ_EXPECT(vals != NULL, "malloc");
    if (valid) memcpy(vals, p, (size_t)count * sizeof(float));
    char path[300], err[512] = "";
    snprintf(path, sizeof path, "%s/x.npy", g_dir);
    int rc = npy_write_f32(path, vals, shape, ndim, err, sizeof err);
    if (!valid) {
        FUZZ_EXPECT(rc == -1 && err[0] && entries() == 0, "bad shape accepted (ndim %d)", ndim);
    } else {
        FUZZ_EXPECT(rc == 0, "write: %s", err);
        FUZZ_EXPECT(entries() == 1, "%d files after a write", entries());
        float *back = NULL;
        int bshape[NPY_MAX_DIMS], bndim = -1;
        rc = npy_read_f32(path, &back, bshape, &bndim, err, sizeof err);
        FUZZ_EXPECT(rc == 0 && bndim == ndim, "read back: %s (ndim %d of %d)", err, bndim, ndim);
        for (int i = 0; i < ndim; i++)
            FUZZ_EXPECT(bshape[i] == shape[i], "dim %d: %d read, %d written", i, bshape[i],
                        shape[i]);
        FUZZ_EXPECT(memcmp(back, vals, (size_t)count * sizeof(float)) == 0, "data differs");
        free(back);
        unlink(path);
    }
    free(vals);
    return 0;
}
