/* top_keys.c: using the mhaviz core as a library. Computes multi-head attention
 * for a sentence and prints, for every head, the key each token attends to most.
 *   usage: top_keys ["your sentence"] [h] [d_model]                           */
#include <stdio.h>
#include <stdlib.h>

#include "mha.h"
#include "samples.h"
#include "tok.h"

int main(int argc, char **argv) {
    const char *text = argc > 1 ? argv[1] : samples_get(1)->text;
    mha_config cfg = {0}; /* zero: defaults, h = 4, d_model = 64, seed = 1 */
    if (argc > 2) cfg.h = atoi(argv[2]);
    if (argc > 3) cfg.d_model = atoi(argv[3]);

    char err[MHA_ERR_LEN];
    tok_list toks = {0};
    if (tok_split(&toks, text, MHA_MAX_N, NULL, err, sizeof err) != 0) {
        fprintf(stderr, "top_keys: %s\n", err);
        return 1;
    }
    mha_model *m = mha_model_create();
    if (!m || mha_model_compute(m, &cfg, &toks, err, sizeof err) != 0) {
        fprintf(stderr, "top_keys: %s\n", m ? err : "out of memory");
        mha_model_destroy(m);
        tok_free(&toks);
        return 1;
    }
    const int n = m->n;
    printf("%d tokens, h=%d, d_model=%d, d_k=%d\n", n, m->cfg.h, m->cfg.d_model, m->d_k);
    for (int i = 0; i < m->cfg.h; i++) {
        printf("head %d\n", i + 1);
        const float *a = m->attn + (size_t)i * n * n; /* (n, n) rows are queries */
        for (int q = 0; q < n; q++) {
            int best = 0;
            for (int k = 1; k < n; k++)
                if (a[q * n + k] > a[q * n + best]) best = k;
            printf("  %-12s -> %-12s %.3f\n", toks.tokens[q], toks.tokens[best], a[q * n + best]);
        }
    }
    mha_model_destroy(m);
    tok_free(&toks);
    return 0;
}
