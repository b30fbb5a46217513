/* model_eos.h: the tokens that end a text for a loaded model, as Hugging Face's
 * generate() takes them: where the folder has a generation_config.json, its
 * eos_token_id (an integer or a list of them; absent or null: none); else
 * config.json's, and where config.json has no eos_token_id key, the default of the
 * family's config class (gpt2 50256, llama and mistral 2, gemma 1, phi3 32000;
 * qwen2 and qwen3 none). No SDL, never exits. */
#ifndef MHAVIZ_MODEL_EOS_H
#define MHAVIZ_MODEL_EOS_H

#include <stddef.h>

#define MODEL_EOS_MAX 16

typedef struct {
    int ids[MODEL_EOS_MAX]; /* the end tokens, in the file's order */
    int count;              /* 0: none (the text never ends by itself) */
    const char *from;       /* "generation_config.json", "config.json" or "the default" */
} model_eos;

/* Reads the end tokens of the checkpoint in folder dir (config is its config.json,
 * model_type its family) for a vocabulary of vocab ids. A default id past the
 * vocabulary is dropped (the model can never write it); a file's is an error.
 * 0, or 1 (a file cannot be read) / 2 (eos_token_id is not an id of the
 * vocabulary, or not an integer or a list of them) with "PATH: what is wrong" in err. */
int model_eos_read(model_eos *e, const char *dir, const char *config, const char *model_type,
                   int vocab, char *err, size_t errlen);

/* 1 when id is one of e's end tokens. */
int model_eos_is(const model_eos *e, int id);

#endif
