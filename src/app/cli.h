/* cli.h: the mhaviz command line, parsed with getopt_long into one options struct
 * (options.h). Parsing only checks syntax and ranges; main resolves the text and
 * the config. Only main (and the tests) include this: the layers below take the
 * parsed options, never the parser. */
#ifndef MHAVIZ_CLI_H
#define MHAVIZ_CLI_H

#include <stddef.h>

#include "options.h"

/* Parses argv into opts. Returns 0 on success, or 2 (usage) with a one-line
 * message in err (without the "mhaviz: " prefix). Can be called any number of
 * times in one process: each call restarts getopt from scratch. */
int cli_parse(cli_options *opts, int argc, char **argv, char *err, size_t errlen);

/* Parses a whole decimal integer in [lo, hi]: no sign tricks, no trailing junk,
 * no overflow. Returns 0 and *out, or -1. */
int cli_parse_int(const char *s, long lo, long hi, long *out);

/* Parses a decimal number in [lo, hi]: digits with at most one '.', which must be
 * followed by a digit ("0.5", ".5", "20"); no sign, exponent, spaces, nan or inf.
 * Returns 0 and *out, or -1. */
int cli_parse_float(const char *s, double lo, double hi, double *out);

/* The --help text. */
const char *cli_usage(void);

#endif
