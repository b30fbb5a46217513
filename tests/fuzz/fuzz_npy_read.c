/* fuzz_npy_read.c: the .npy reader on any bytes (read from memory). It must
 * accept only data that is in the input, refuse everything else with a message,
 * and never allocate more than the input holds. */
#define _GNU_SOURCE /* fmemopen */
#include <string.h>

#include "fuzz.h"
#include "npy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size == 0 || size > 1 << 20) return 0;
    FILE *fp = fmemopen((void *)data, size, "rb");
    FUZZ_EXPECT(fp != NULL, "fmemopen");
    float *out = (float *)&size; /* must be replaced: NULL or the data */
    int shape[NPY_MAX_DIMS] = {0}, ndim = -1;
    char err[512] = "";
    int rc = npy_read_f32_stream(fp, "input", &out, shape, &ndim, err, sizeof err);
    fclose(fp);
    if (rc == 0) {
        FUZZ_EXPECT(ndim >= 0 && ndim <= NPY_MAX_DIMS && out != NULL, "ndim %d", ndim);
        size_t count = 1;
        for (int i = 0; i < ndim; i++) {
            FUZZ_EXPECT(shape[i] >= 0, "dim %d = %d", i, shape[i]);
            count *= (size_t)shape[i];
        }
        FUZZ_EXPECT(count * sizeof(float) <= size, "%zu floats from %zu bytes", count, size);
        volatile float sum = 0.0f;
        for (size_t i = 0; i < count; i++) sum += out[i]; /* every value is readable */
        (void)sum;
        free(out);
    } else {
        FUZZ_EXPECT(rc == -1 && out == NULL && err[0] && !strchr(err, '\n'), "refusal: '%s'", err);
    }
    return 0;
}
