/* weights_set.c: one checkpoint's safetensors files as one set (weights_set.h). */
#define _DEFAULT_SOURCE
#include "weights_set.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "config_json.h"
#include "shard_index.h"

static int by_name(const void *a, const void *b) {
    return strcmp((*(const st_tensor *const *)a)->name, (*(const st_tensor *const *)b)->name);
}

/* The index's bytes: 0, or 1 / 2 with a message; *out malloc'd. */
static int read_index(const char *path, char **out, size_t *len, char *err, size_t errlen) {
    *out = NULL;
    FILE *fp = fopen(path, "rb");
    if (!fp) return cj_fail(err, errlen, 1, path, "%s", strerror(errno));
    struct stat st;
    if (fstat(fileno(fp), &st) != 0 || !S_ISREG(st.st_mode)) {
        fclose(fp);
        return cj_fail(err, errlen, 1, path, "not a regular file");
    }
    if (st.st_size > (off_t)SHARD_INDEX_MAX_BYTES) {
        fclose(fp);
        return cj_fail(err, errlen, 2, path, "%lld bytes: too large for a shard index",
                       (long long)st.st_size);
    }
    char *buf = malloc((size_t)st.st_size + 1);
    if (!buf) {
        fclose(fp);
        return cj_fail(err, errlen, 1, path, "out of memory");
    }
    *len = fread(buf, 1, (size_t)st.st_size, fp);
    const int bad = ferror(fp);
    fclose(fp);
    if (bad) {
        free(buf);
        return cj_fail(err, errlen, 1, path, "read error");
    }
    *out = buf;
    return 0;
}

/* Room for n files, their paths set from the index's folder. */
static int alloc_files(weights_set *w, int n) {
    w->f = calloc((size_t)n, sizeof *w->f);
    w->path = calloc((size_t)n, sizeof *w->path);
    if (!w->f || !w->path) return -1;
    for (int i = 0; i < n; i++) w->f[i].fd = -1;
    return 0;
}

/* Every file's tensors in one array sorted by name. */
static int gather(weights_set *w, char *err, size_t errlen) {
    size_t nt = 0;
    for (int i = 0; i < w->n; i++) nt += (size_t)w->f[i].n;
    w->t = calloc(nt + 1, sizeof *w->t);
    w->file = calloc(nt + 1, sizeof *w->file);
    if (!w->t || !w->file) return cj_fail(err, errlen, 1, w->path[0], "out of memory");
    for (int i = 0; i < w->n; i++)
        for (int k = 0; k < w->f[i].n; k++) w->t[w->nt++] = &w->f[i].t[k];
    qsort(w->t, (size_t)w->nt, sizeof *w->t, by_name);
    /* the file of each, found back from where its tensor lives */
    for (int j = 0; j < w->nt; j++)
        for (int i = 0; i < w->n; i++)
            if (w->t[j] >= w->f[i].t && w->t[j] < w->f[i].t + w->f[i].n) w->file[j] = i;
    return 0;
}

/* The shards against the index, both ways. */
static int agree(const weights_set *w, const shard_index *x, const char *index, char *err,
                 size_t errlen) {
    for (int k = 0; k < x->n; k++)
        if (!st_find(&w->f[x->of[k]], x->tensor[k]))
            return cj_fail(err, errlen, 2, index,
                           "weight_map puts %.80s in %.80s, which does "
                           "not hold it",
                           x->tensor[k], x->shard[x->of[k]]);
    for (int i = 0; i < w->n; i++)
        for (int j = 0; j < w->f[i].n; j++) {
            const char *nm = w->f[i].t[j].name;
            int k = 0;
            while (k < x->n && strcmp(x->tensor[k], nm) != 0) k++;
            if (k == x->n || x->of[k] != i)
                return cj_fail(err, errlen, 2, index,
                               "tensor %.80s of %.80s is not in weight_map%s", nm, x->shard[i],
                               k == x->n ? "" : " under that file");
        }
    return 0;
}

static int open_shards(weights_set *w, const char *index, char *err, size_t errlen) {
    char *text = NULL;
    size_t len = 0;
    int rc = read_index(index, &text, &len, err, errlen);
    shard_index x = {0};
    if (rc == 0) rc = shard_index_parse(&x, text, len, index, err, errlen);
    free(text);
    if (rc) return rc;
    const char *slash = strrchr(index, '/');
    const int dl = slash ? (int)(slash - index) + 1 : 0;
    if (alloc_files(w, x.n_shards) != 0) rc = cj_fail(err, errlen, 1, index, "out of memory");
    for (int i = 0; i < x.n_shards && rc == 0; i++, w->n++) {
        const size_t pl = (size_t)dl + strlen(x.shard[i]) + 1;
        if (!(w->path[i] = malloc(pl))) {
            rc = cj_fail(err, errlen, 1, index, "out of memory");
            break;
        }
        snprintf(w->path[i], pl, "%.*s%s", dl, index, x.shard[i]);
        char e[512];
        if ((rc = st_open(&w->f[i], w->path[i], e, sizeof e)) != 0)
            cj_fail(err, errlen, rc, w->path[i], "%s", e);
    }
    if (rc == 0) rc = agree(w, &x, index, err, errlen);
    shard_index_free(&x);
    return rc;
}

int ws_open(weights_set *w, const char *path, int sharded, char *err, size_t errlen) {
    memset(w, 0, sizeof *w);
    int rc;
    if (sharded) {
        rc = open_shards(w, path, err, errlen);
    } else if (alloc_files(w, 1) != 0 || !(w->path[0] = strdup(path))) {
        rc = cj_fail(err, errlen, 1, path, "out of memory");
    } else {
        char e[512];
        w->n = 1;
        if ((rc = st_open(&w->f[0], path, e, sizeof e)) != 0)
            cj_fail(err, errlen, rc, path, "%s", e);
    }
    if (rc == 0) rc = gather(w, err, errlen);
    if (rc) ws_close(w);
    return rc;
}

const st_tensor *ws_find(const weights_set *w, const char *name, int *file) {
    size_t lo = 0, hi = (size_t)w->nt;
    while (lo < hi) {
        const size_t mid = (lo + hi) / 2;
        const int c = strcmp(w->t[mid]->name, name);
        if (c == 0) {
            if (file) *file = w->file[mid];
            return w->t[mid];
        }
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

int ws_verify(const weights_set *w, char *err, size_t errlen) {
    char e[512];
    for (int i = 0; i < w->n; i++) {
        const int rc = st_verify(&w->f[i], e, sizeof e);
        if (rc) return cj_fail(err, errlen, rc, w->path[i], "%s", e);
    }
    return 0;
}

void ws_close(weights_set *w) {
    for (int i = 0; i < w->n; i++) st_close(&w->f[i]);
    if (w->path)
        for (int i = 0; i < w->n; i++) free(w->path[i]);
    free(w->path);
    free(w->f);
    free(w->t);
    free(w->file);
    memset(w, 0, sizeof *w);
}
