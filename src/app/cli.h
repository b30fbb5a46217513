/* cli.h: the mhaviz command line, parsed with getopt_long into one options struct
 * (options.h). Parsing only checks syntax and ranges; main resolves the text and
 * the config. Only main (and the tests) include this: the layers below take the
 * parsed options, never the parser. */
#ifndef MHAVIZ_CLI_H
#define MHAVIZ_CLI_H

#include <stddef.h>

#include "options.h"
#include "values.h"

/* Parses argv into opts. Returns 0 on success, or 2 (usage) with a one-line
 * message in err (without the "mhaviz: " prefix). Can be called any number of
 * times in one process: each call restarts getopt from scratch. */
int cli_parse(cli_options *opts, int argc, char **argv, char *err, size_t errlen);

/* The --help text. */
const char *cli_usage(void);

#endif
