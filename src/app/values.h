/* values.h: the grammar of option values the command line and the view files
 * share: whole and decimal numbers, fixed words, and --compare's SPEC. Pure
 * functions with no state, below the state machine, so a view file reads exactly
 * what the command line reads. */
#ifndef MHAVIZ_VALUES_H
#define MHAVIZ_VALUES_H

#include <stddef.h>

#include "mha.h"
#include "options.h"

/* Parses a whole decimal integer in [lo, hi]: no sign tricks, no trailing junk,
 * no overflow. Returns 0 and *out, or -1. */
int cli_parse_int(const char *s, long lo, long hi, long *out);

/* Parses a decimal number in [lo, hi]: digits with at most one '.', which must be
 * followed by a digit ("0.5", ".5", "20"); no sign, exponent, spaces, nan or inf.
 * Returns 0 and *out, or -1. */
int cli_parse_float(const char *s, double lo, double hi, double *out);

/* One of a fixed set of words and the value it stands for; a list ends with a
 * NULL word. */
typedef struct {
    const char *word;
    int value;
} cli_word;

/* Finds s among words (exactly, case included). Returns 0 and *out, or -1. */
int cli_parse_word(const char *s, const cli_word *words, int *out);

/* The words of --mask, --weights and scale= (no_scale: on 0, off 1). */
extern const cli_word cli_mask_words[], cli_weights_words[], cli_scale_words[];

/* --compare SPEC: key=value items separated by commas, each key once, the keys
 * h, d_model, seed, mask, scale, temperature, weights, pad. Returns 0 with the
 * CLI_CMP_* bits in *set and their values in *cfg (the rest zero), or 2 with a
 * message in err ("--compare: ..."). */
int cli_parse_compare_spec(const char *s, unsigned *set, mha_config *cfg, char *err, size_t errlen);

#endif
