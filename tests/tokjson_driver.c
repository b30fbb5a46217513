/* tokjson_driver.c: src/model/tokjson.c for tests/tokjson_check.py and
 * tests/tokjson_real_check.py.
 *   tokjson_driver FILE [-s] [-o] [-l]   texts on stdin, each as "LEN\n" then LEN bytes;
 *                                       per text one line "REPLACED COUNT ID ID ...",
 *                                       then with -o "O S-E S-E ..." (byte offsets) and
 *                                       with -l "L\tLABEL\tLABEL..."; -s adds the
 *                                       post-processor's special tokens
 *   tokjson_driver FILE --bench N       stdin is one text: encodes it N times and prints
 *                                       "TOKENS tokens, MS ms per encode"
 * FILE ending in .txt is a vocab.txt read by tokvocab.c, with the tokenizer_config.json
 * beside it when there is one. A load error prints "mhaviz: ERR" on stderr and exits with
 * tokjson_load's 1 or 2. Every text is also encoded with no room (the count alone) and with half
 * the room, which must agree with the full encode (exit 3 otherwise). */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tokjson.h"
#include "tokvocab.h"

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static char *read_all(FILE *f, size_t *len) {
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    for (size_t got; buf && (got = fread(buf + n, 1, cap - n, f)) > 0;) {
        n += got;
        if (n == cap) {
            char *nb = realloc(buf, cap *= 2);
            if (!nb) free(buf);
            buf = nb;
        }
    }
    *len = n;
    return buf;
}

static int encode_one(const tokjson *t, const char *text, size_t len, int special, int offs,
                      int labels) {
    static char buf[512];
    int replaced = -1, r2 = -1;
    int total = tokjson_encode(t, text, len, special, NULL, NULL, NULL, 0, &replaced);
    if (total < 0) {
        fprintf(stderr, "tokjson_driver: tokjson_encode failed\n");
        return 3;
    }
    size_t sz = (size_t)total + 1;
    int *ids = malloc(sz * sizeof *ids), *half = malloc(sz * sizeof *half);
    int *st = malloc(sz * sizeof *st), *en = malloc(sz * sizeof *en);
    if (!ids || !half || !st || !en) return 3;
    int again = tokjson_encode(t, text, len, special, ids, st, en, total, &r2);
    int cut = tokjson_encode(t, text, len, special, half, NULL, NULL, total / 2, NULL);
    if (again != total || cut != total || r2 != replaced ||
        memcmp(ids, half, (size_t)(total / 2) * sizeof *ids) != 0) {
        fprintf(stderr, "tokjson_driver: counts disagree: %d %d %d\n", total, again, cut);
        return 3;
    }
    printf("%d %d", replaced, total);
    for (int i = 0; i < total; i++) printf(" %d", ids[i]);
    printf("\n");
    if (offs) {
        printf("O");
        for (int i = 0; i < total; i++) printf(" %d-%d", st[i], en[i]);
        printf("\n");
    }
    if (labels) {
        printf("L");
        for (int i = 0; i < total; i++) {
            tokjson_token_label(t, ids[i], buf, sizeof buf);
            printf("\t%s", buf);
        }
        printf("\n");
    }
    free(ids), free(half), free(st), free(en);
    return 0;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: tokjson_driver FILE [-s] [-o] [-l] | FILE --bench N\n");
        return 2;
    }
    int special = 0, offs = 0, labels = 0, bench = 0;
    for (int i = 2; i < argc; i++) {
        if (strcmp(argv[i], "-s") == 0)
            special = 1;
        else if (strcmp(argv[i], "-o") == 0)
            offs = 1;
        else if (strcmp(argv[i], "-l") == 0)
            labels = 1;
        else if (strcmp(argv[i], "--bench") == 0 && i + 1 < argc)
            bench = atoi(argv[++i]);
        else {
            fprintf(stderr, "tokjson_driver: unknown option %s\n", argv[i]);
            return 2;
        }
    }
    char err[512];
    tokjson *t;
    double t0 = now_ms();
    const size_t al = strlen(argv[1]);
    int rc;
    if (al > 4 && strcmp(argv[1] + al - 4, ".txt") == 0) {
        char cfg[4096];
        const char *slash = strrchr(argv[1], '/');
        snprintf(cfg, sizeof cfg, "%.*stokenizer_config.json",
                 slash ? (int)(slash - argv[1] + 1) : 0, argv[1]);
        rc = tokvocab_load(&t, argv[1], cfg, err, sizeof err);
    } else {
        rc = tokjson_load(&t, argv[1], err, sizeof err);
    }
    if (rc) {
        fprintf(stderr, "mhaviz: %s\n", err);
        return rc;
    }
    double load_ms = now_ms() - t0;
    size_t len;
    char *in = read_all(stdin, &len);
    if (!in) return 3;
    if (bench > 0) {
        int n = 0;
        double t1 = now_ms();
        for (int i = 0; i < bench; i++)
            n = tokjson_encode(t, in, len, 0, NULL, NULL, NULL, 0, NULL);
        printf("%d tokens, %.1f ms per encode, load %.0f ms\n", n, (now_ms() - t1) / bench,
               load_ms);
    } else {
        for (size_t at = 0; at < len && !rc;) {
            char *nl = memchr(in + at, '\n', len - at);
            if (!nl) break;
            size_t n = strtoul(in + at, NULL, 10);
            at = (size_t)(nl - in) + 1;
            if (n > len - at) n = len - at;
            rc = encode_one(t, in + at, n, special, offs, labels);
            at += n;
        }
    }
    fflush(stdout);
    free(in);
    tokjson_free(t);
    return rc;
}
