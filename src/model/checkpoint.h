/* checkpoint.h: a checkpoint in Hugging Face's layout, read into a transformer
 * (src/learn/transformer.h) for inference. PATH is a folder holding config.json,
 * model.safetensors and a tokenizer (tokenizer.json, or vocab.json and merges.txt),
 * or a .safetensors file with the others beside it. config.json's model_type picks the family
 * (family.h: GPT-2's, and the Llama family's for the loader alone), whose function fills the model
 * spec (every field read, never assumed) and whose table names the tensors; every tensor's shape is
 * checked against the spec. Names with or without the family's prefix ("transformer.", "model."); a
 * layer's buffers (GPT-2's attn.bias / attn.masked_bias) and a tied lm_head.weight equal to the
 * token embedding are ignored. Errors: 0, or 1 (cannot read) / 2 (not a model we can use) with one
 * line in err, "PATH: what is wrong" naming the file at fault (the caller adds "mhaviz: "). */
#ifndef MHAVIZ_CHECKPOINT_H
#define MHAVIZ_CHECKPOINT_H

#include <stddef.h>

#include "family.h"
#include "transformer.h"

#define CKPT_PATH_MAX 4096

typedef struct {
    char dir[CKPT_PATH_MAX];       /* the folder */
    char weights[CKPT_PATH_MAX];   /* .../model.safetensors (or the file given) */
    char config[CKPT_PATH_MAX];    /* .../config.json */
    char vocab[CKPT_PATH_MAX];     /* .../vocab.json, or BERT's .../vocab.txt */
    char merges[CKPT_PATH_MAX];    /* .../merges.txt; "" beside vocab.txt */
    char tokenizer[CKPT_PATH_MAX]; /* .../tokenizer.json where the folder has one, else "" */
    int sharded;    /* 1: weights is model.safetensors.index.json, naming the shards */
    char name[256]; /* what the title calls it: the folder's last name ("gpt2") */
} ckpt_paths;

/* Finds the files for PATH; checks they exist and are regular files: the weights
 * (a folder's model.safetensors, or where it has none its model.safetensors.index.json
 * and the shards it names, weights_set.h),
 * config.json, and the tokenizer: tokenizer.json where the folder has one (then
 * vocab.json and merges.txt are not needed), else vocab.json and merges.txt, or
 * where there is no vocab.json, BERT's vocab.txt (its tokenizer_config.json read
 * beside it, tokvocab.h). */
int ckpt_resolve(const char *path, ckpt_paths *p, char *err, size_t errlen);

/* config.json read once: its family (by model_type; absent: gpt2) and the model
 * spec the family's function fills from it (family.h), checked against the
 * transformer's limits (tf_spec_check). */
typedef struct {
    const ckpt_family *family;
    model_spec spec;
} ckpt_config;

/* Parses config.json's text (len bytes); path names it in err. */
int ckpt_config_parse(ckpt_config *c, const char *text, size_t len, const char *path, char *err,
                      size_t errlen);
int ckpt_config_read(ckpt_config *c, const char *path, char *err, size_t errlen);

/* Progress of a load, 0..1; return nonzero to stop it (then 1 with "cancelled"). */
typedef int (*ckpt_progress_fn)(void *ud, double fraction);

/* Reads the weights of the model cfg describes (ckpt_config_read of p->config):
 * *out a new transformer (tf_create_spec, freed with tf_destroy) holding float32
 * copies of every tensor, named and laid out as cfg's family says. progress may be
 * NULL. */
int ckpt_load(const ckpt_paths *p, const ckpt_config *cfg, transformer **out,
              ckpt_progress_fn progress, void *ud, char *err, size_t errlen);

#endif
