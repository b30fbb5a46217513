/* samples.h: the built-in token sequences from assets/samples.tsv, compiled into
 * the binary so it runs from the build folder or installed alike. */
#ifndef MHAVIZ_SAMPLES_H
#define MHAVIZ_SAMPLES_H

typedef struct {
    const char *name; /* short label, e.g. "coreference" */
    const char *text; /* UTF-8 sentence */
} sample;

/* Number of built-in samples (at least 6). */
int samples_count(void);

/* Sample i, 0-based; NULL when out of range. Strings live for the whole program. */
const sample *samples_get(int i);

#endif
