/* sweep.h: --train TASK --sweep h: one training run per divisor h of d_model, at the
 * same budget and seeds, side by side on the workers; a table of the final held-out
 * accuracy against h on stdout, sweep.json with --dump DIR, the plot with --export. */
#ifndef MHAVIZ_SWEEP_H
#define MHAVIZ_SWEEP_H

#include <stddef.h>

#include "options.h"

#define SWEEP_DEFAULT_SEEDS 3

/* Runs the sweep o asks for (o->train.sweep set). Returns 0, or 2 (bad value) /
 * 1 (runtime) with a one-line message in err; nothing is written on a failure. */
int app_sweep(const cli_options *o, char *err, size_t errlen);

#endif
