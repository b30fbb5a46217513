/* safetensors.h: a reader of Hugging Face's safetensors files, our own. An 8-byte
 * little-endian header length N (at most SAFETENSORS_MAX_HEADER), N bytes of JSON
 * (parsed with jansson: length-bounded, duplicate keys rejected, 64-bit integers),
 * then the data. The header maps each tensor's name to {"dtype", "shape",
 * "data_offsets": [begin, end]} (offsets into the data, after the header);
 * "__metadata__" is a map of strings and is skipped. Converted dtypes: F32, F16,
 * BF16 (to float32); the other dtypes safetensors defines (BOOL, U8, I64, F64, ...)
 * are listed as ST_OTHER so that their bytes still count in the tiling, and are
 * never converted (the checkpoint refuses them unless the tensor is one it
 * ignores); a dtype outside that list is an error. Every size is computed with
 * overflow checks; the tensors' offsets must tile the data exactly (no gap, no
 * overlap, nothing after the last).
 *
 * The file is read with pread, never mapped: a file cut short by another process
 * while it is read is then a short read, said as "the file changed while it was
 * read", where a mapping would raise SIGBUS. A value that is NaN or infinite is
 * refused as it is converted, naming the tensor and the element.
 *
 * Errors: 0, or SAFETENSORS_CANNOT_READ (1: missing, unreadable, not a regular
 * file, short: under 8 bytes, the header or the last tensor running past the end,
 * as a cut download does; a read error; the file changed while it was read) /
 * SAFETENSORS_UNUSABLE (2: read, but not a file we can use; also a header length
 * over SAFETENSORS_MAX_HEADER, checked first so that 8 + N never wraps; a NaN or
 * infinite value), with one line in err that does not name the file (the caller
 * puts "PATH: " before it). */
#ifndef MHAVIZ_SAFETENSORS_H
#define MHAVIZ_SAFETENSORS_H

#include <stddef.h>
#include <stdint.h>

#define SAFETENSORS_MAX_HEADER (100u << 20) /* 100 MiB of JSON header */
#define SAFETENSORS_MAX_DIMS 8
#define SAFETENSORS_CANNOT_READ 1
#define SAFETENSORS_UNUSABLE 2

typedef enum { ST_F32 = 0, ST_F16 = 1, ST_BF16 = 2, ST_OTHER = 3 } st_dtype;

typedef struct {
    char *name; /* as in the header */
    st_dtype dtype;
    char dtype_name[12]; /* as in the header ("F32", "BOOL", ...) */
    unsigned elem_size;  /* bytes per element */
    int ndim;
    int64_t shape[SAFETENSORS_MAX_DIMS];
    uint64_t elems;      /* product of shape (1 for a scalar) */
    uint64_t begin, end; /* data_offsets: bytes into the data section */
} st_tensor;

typedef struct {
    int fd;                    /* st_open's file, or -1 (st_parse's buffer) */
    const unsigned char *mem;  /* st_parse's buffer, the whole file; NULL for a file */
    uint64_t len;              /* the file's bytes when it was opened */
    int64_t mtime_s, mtime_ns; /* its modification time then (st_verify) */
    unsigned char *chunk;      /* st_open's: the raw bytes of F16 / BF16 on their way */
    size_t data_off;           /* 8 + N */
    st_tensor *t;              /* sorted by name */
    int n;
} st_file;

/* Opens and checks the file: 0, 1 or 2 (above), err filled on failure; *f is
 * then empty (st_close is still fine). */
int st_open(st_file *f, const char *path, char *err, size_t errlen);

/* The checks of st_open on bytes in memory (the header length, the JSON and the
 * tiling against the file's length, len): what the fuzzer drives. f->mem points
 * into buf, which must outlive f; free with st_close (which leaves buf alone). */
int st_parse(st_file *f, const unsigned char *buf, size_t len, char *err, size_t errlen);

/* The tensor called name, or NULL. */
const st_tensor *st_find(const st_file *f, const char *name);

/* Reads tensor t (elems values) converted to float32 into dst: 0, or 1 (a read
 * error; the file ended early: "the file changed while it was read") or 2 (a value
 * is NaN or infinite: "tensor NAME holds NaN at element K", K counted from the
 * tensor's first element in the file's order), with err filled. On an error dst
 * is written only in part. t must be F32, F16 or BF16 (ST_OTHER: nothing is
 * written, 0). */
int st_read_f32(const st_file *f, const st_tensor *t, float *dst, char *err, size_t errlen);

/* The same for elements [first, first + count) of t (first + count <= elems): the
 * strided copies, such as c_attn's split into W_Q | W_K | W_V by columns. */
int st_read_f32_range(const st_file *f, const st_tensor *t, uint64_t first, uint64_t count,
                      float *dst, char *err, size_t errlen);

/* After the reads: 0 when the file still has the length and modification time it
 * had when opened, else 1 with "the file changed while it was read" (it grew, or
 * was written in place, while it was read). A buffer (st_parse) never changes. A
 * file renamed over the path meanwhile is not a change: the file opened is read. */
int st_verify(const st_file *f, char *err, size_t errlen);

void st_close(st_file *f);

#endif
