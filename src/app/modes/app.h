/* app.h: the modes main dispatches to. Each returns 0, or 1/2 with a one-line
 * message in err (without the "mhaviz: " prefix). */
#ifndef MHAVIZ_APP_H
#define MHAVIZ_APP_H

#include <stddef.h>

#include "gpt2.h"
#include "mha.h"
#include "options.h"
#include "tok.h"

/* Opens the visualizer window and runs until the user quits. The window and the
 * export take the tokens main resolved (*toks is left empty). */
int app_window(const cli_options *o, tok_list *toks, const mha_config *cfg, char *err,
               size_t errlen);

/* Renders the view headless to o->export_path (.png, .svg, .pdf). */
int app_export(const cli_options *o, tok_list *toks, const mha_config *cfg, char *err,
               size_t errlen);

/* --model PATH --dump OUT: every layer of a loaded model (model_dump.c); with
 * --generate N the text is written on first (printed, and generated.json). */
int app_model_dump(const cli_options *o, char *err, size_t errlen);

/* The same files of a model already run (a lesson's step: lesson_mode.c), the
 * layers at h heads (0: the model's own); the run's shown layer is changed. */
int app_model_dump_run(const char *dir, const gpt2_model *m, gpt2_run *run, int h, char *err,
                       size_t errlen);

/* Times the forward pass (and, where built, layout and drawing); prints a table. */
int app_bench(const cli_options *o, char *err, size_t errlen);

#endif
