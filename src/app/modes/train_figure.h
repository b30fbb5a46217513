/* train_figure.h: the figure of a trained model for --train ... --export. */
#ifndef MHAVIZ_TRAIN_FIGURE_H
#define MHAVIZ_TRAIN_FIGURE_H

#include <stddef.h>

#include "options.h"

/* Trains as o says and writes o->export_path. Returns 0, or 2 / 1 with a message. */
int app_train_export(const cli_options *o, char *err, size_t errlen);

#endif
