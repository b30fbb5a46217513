/* model_generate.h: --model PATH --generate N: the model writes N tokens after
 * its text (model_generate.c), for model_dump.c, which opens the model and
 * writes the dump of the final text; and a token as JSON, for both. */
#ifndef MHAVIZ_MODEL_GENERATE_H
#define MHAVIZ_MODEL_GENERATE_H

#include <jansson.h>
#include <stddef.h>
#include <stdio.h>

#include "gpt2.h"
#include "options.h"

/* Samples o->model_generate tokens (sampler.h, with o's temperature, top-k, top-p
 * and seed -s) one after the other onto run's text, each step incremental; stops
 * early at an end token (model_eos.h: generation_config.json's or config.json's
 * eos_token_id, or the family's default) or when the run holds no more. Writes the new
 * text's bytes to out (then a newline), and *json (the caller frees it):
 * generated.json's text, each step's token id, its probability, its probability
 * in the distribution drawn from, the random number and the top 10. 0, or 1 / 2
 * with a message in err (2: an eos_token_id that is no token id). */
int app_model_generate(gpt2_run *run, const cli_options *o, FILE *out, char **json, char *err,
                       size_t errlen);

/* A token's text for JSON (generated.json here, tokens.json and next.json in
   model_dump.c): its bytes when valid UTF-8, else its label. */
json_t *model_token_json(const gpt2_model *m, int id);

#endif
