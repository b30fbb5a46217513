/* bpe_driver.c: src/model/bpe.c for tests/bpe_check.py and tests/bpe_real_check.py.
 *   bpe_driver VOCAB MERGES [-l] [-b]     texts on stdin, each as "LEN\n" then LEN
 *                                         bytes; per text one line
 *                                           "REPLACED COUNT ID ID ..."
 *                                         then with -l "L\tLABEL\tLABEL..." (labels
 *                                         cut to 256 bytes with the NUL, or N with
 *                                         --label-size N, 1..4096) and with
 *                                         -b "B HEX" (the tokens' bytes, joined)
 *   bpe_driver VOCAB MERGES --bench N     stdin is one text: encodes it N times and
 *                                         prints "TOKENS tokens, MS ms per encode"
 * A load error prints "mhaviz: ERR" on stderr and exits with bpe_load's 1 or 2.
 * Every text is also encoded with no room (the count alone) and with half the room,
 * which must agree with the full encode (exit 3 otherwise). */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bpe.h"

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

static int encode_one(const bpe *b, const char *text, size_t len, int labels, int bytes) {
    static char buf[4096];
    int replaced = -1, r2 = -1;
    int total = bpe_encode(b, text, len, NULL, 0, &replaced);
    if (total < 0) {
        fprintf(stderr, "bpe_driver: bpe_encode failed\n");
        return 3;
    }
    int *ids = malloc(((size_t)total + 1) * sizeof *ids);
    int *half = malloc(((size_t)total / 2 + 1) * sizeof *half);
    if (!ids || !half) return 3;
    int again = bpe_encode(b, text, len, ids, total, &r2);
    int cut = bpe_encode(b, text, len, half, total / 2, NULL);
    if (again != total || cut != total || r2 != replaced ||
        memcmp(ids, half, (size_t)(total / 2) * sizeof *ids) != 0) {
        fprintf(stderr, "bpe_driver: counts disagree: %d %d %d\n", total, again, cut);
        return 3;
    }
    printf("%d %d", replaced, total);
    for (int i = 0; i < total; i++) printf(" %d", ids[i]);
    printf("\n");
    if (labels) {
        printf("L");
        for (int i = 0; i < total; i++) {
            bpe_token_label(b, ids[i], buf, (size_t)labels);
            printf("\t%s", buf);
        }
        printf("\n");
    }
    if (bytes) {
        printf("B ");
        for (int i = 0; i < total; i++) {
            size_t n;
            const unsigned char *t = bpe_token_bytes(b, ids[i], &n);
            for (size_t k = 0; k < n; k++) printf("%02x", t[k]);
        }
        printf("\n");
    }
    free(ids);
    free(half);
    return 0;
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: bpe_driver VOCAB MERGES [-l] [-b] | --bench N\n");
        return 2;
    }
    int labels = 0, bytes = 0, bench = 0;
    for (int i = 3; i < argc; i++) {
        if (!strcmp(argv[i], "-l"))
            labels = 256;
        else if (!strcmp(argv[i], "--label-size") && i + 1 < argc) {
            labels = atoi(argv[++i]);
            labels = labels < 1 ? 1 : labels > 4096 ? 4096 : labels;
        } else if (!strcmp(argv[i], "-b"))
            bytes = 1;
        else if (!strcmp(argv[i], "--bench") && i + 1 < argc)
            bench = atoi(argv[++i]);
        else {
            fprintf(stderr, "bpe_driver: unknown option %s\n", argv[i]);
            return 2;
        }
    }
    bpe *b;
    char err[512];
    int rc = bpe_load(&b, argv[1], argv[2], err, sizeof err);
    if (rc) {
        fprintf(stderr, "mhaviz: %s\n", err);
        return rc;
    }
    size_t len;
    char *in = read_all(stdin, &len);
    if (!in) return 3;
    if (bench > 0) {
        int n = bpe_encode(b, in, len, NULL, 0, NULL);
        int *ids = malloc(((size_t)(n > 0 ? n : 0) + 1) * sizeof *ids);
        double t0 = now_ms();
        for (int i = 0; i < bench; i++) bpe_encode(b, in, len, ids, n, NULL);
        double ms = (now_ms() - t0) / bench;
        printf("%zu bytes, %d tokens, %.4f ms per encode\n", len, n, ms);
        free(ids);
    } else {
        size_t at = 0;
        while (at < len && !rc) {
            char *nl = memchr(in + at, '\n', len - at);
            if (!nl) break;
            size_t n = strtoul(in + at, NULL, 10);
            at = (size_t)(nl - in) + 1;
            if (n > len - at) {
                fprintf(stderr, "bpe_driver: text runs past the input\n");
                rc = 3;
                break;
            }
            rc = encode_one(b, in + at, n, labels, bytes);
            at += n;
        }
    }
    free(in);
    bpe_free(b);
    return rc;
}
