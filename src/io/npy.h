/* npy.h: NumPy .npy files, format version 1.0, float32 little-endian, C order.
 * Writing goes to a temporary name beside the target and is renamed when complete. */
#ifndef MHAVIZ_NPY_H
#define MHAVIZ_NPY_H

#include <stddef.h>
#include <stdio.h>

#define NPY_MAX_DIMS 4

/* Writes data with the given shape (ndim <= 4) to path; every write, the flush,
 * the fsync, the close and the rename are checked. Returns 0, or -1 with "cannot write PATH:
 * reason" in err. */
int npy_write_f32(const char *path, const float *data, const int *shape, int ndim, char *err,
                  size_t errlen);

/* Reads a float32 C-order .npy file. On success returns 0, *data is malloc'd
 * (caller frees) and shape/ndim are filled; -1 with a message otherwise. */
int npy_read_f32(const char *path, float **data, int *shape, int *ndim, char *err, size_t errlen);

/* The same from an open, seekable stream (the fuzz target reads from memory);
 * path only names it in messages. Does not close fp. */
int npy_read_f32_stream(FILE *fp, const char *path, float **data, int *shape, int *ndim, char *err,
                        size_t errlen);

#endif
