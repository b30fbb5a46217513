/* checkpoint.h: a GPT-2-family checkpoint in Hugging Face's layout, read into a
 * transformer (src/learn/transformer.h) for inference. PATH is a folder holding
 * config.json, model.safetensors, vocab.json and merges.txt, or a .safetensors
 * file with the other three beside it. config.json gives n_layer, n_head,
 * n_embd, n_positions, vocab_size and layer_norm_epsilon (read, never assumed);
 * every tensor's shape is checked against it. Tensor names with or without the
 * "transformer." prefix; attn.bias / attn.masked_bias buffers and a tied
 * lm_head.weight (equal to wte) are ignored. Conv1D weights are (in, out):
 * c_attn.weight (d, 3d) is W_Q | W_K | W_V by columns.
 * Errors: 0, or 1 (cannot read) / 2 (not a model we can use) with one line in err,
 * "PATH: what is wrong" naming the file at fault (the caller adds "mhaviz: "). */
#ifndef MHAVIZ_CHECKPOINT_H
#define MHAVIZ_CHECKPOINT_H

#include <stddef.h>

#include "transformer.h"

#define CKPT_PATH_MAX 4096

typedef struct {
    char dir[CKPT_PATH_MAX];     /* the folder */
    char weights[CKPT_PATH_MAX]; /* .../model.safetensors (or the file given) */
    char config[CKPT_PATH_MAX];  /* .../config.json */
    char vocab[CKPT_PATH_MAX];   /* .../vocab.json */
    char merges[CKPT_PATH_MAX];  /* .../merges.txt */
    char name[256];              /* what the title calls it: the folder's last name ("gpt2") */
} ckpt_paths;

/* Finds the four files for PATH; checks they exist and are regular files. */
int ckpt_resolve(const char *path, ckpt_paths *p, char *err, size_t errlen);

/* config.json's fields (checked: positive, n_head divides n_embd, within the
 * transformer's limits, activation_function gelu_new or absent). */
typedef struct {
    int n_layer, n_head, n_embd, n_positions, vocab_size;
    float layer_norm_epsilon;
} ckpt_config;

/* Parses config.json's text (len bytes); path names it in err. */
int ckpt_config_parse(ckpt_config *c, const char *text, size_t len, const char *path, char *err,
                      size_t errlen);
int ckpt_config_read(ckpt_config *c, const char *path, char *err, size_t errlen);

/* The transformer config of a checkpoint: attn_bias, tied, MLP 4 d with
 * GELU-tanh, classes = vocab. */
void ckpt_tf_config(const ckpt_config *c, tf_config *out);

/* Progress of a load, 0..1; return nonzero to stop it (then 1 with "cancelled"). */
typedef int (*ckpt_progress_fn)(void *ud, double fraction);

/* Reads config and weights: *out a new transformer (tf_create batch 0, freed with
 * tf_destroy) holding float32 copies of every tensor. progress may be NULL. */
int ckpt_load(const ckpt_paths *p, transformer **out, ckpt_progress_fn progress, void *ud,
              char *err, size_t errlen);

#endif
