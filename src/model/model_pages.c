/* model_pages.c: the README's download tables as data (the folder's name, the
 * Hugging Face page, the files), for the message a missing folder gets. */
#define _POSIX_C_SOURCE 200809L
#include "model_pages.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

typedef struct {
    const char *name;  /* the folder's name, as the README's examples name it */
    const char *page;  /* huggingface.co/... */
    const char *files; /* what to download into it */
} model_page;

#define GPT2_FILES "config.json, model.safetensors, vocab.json and merges.txt"
#define BERT_FILES "config.json, model.safetensors, vocab.txt and tokenizer_config.json"
#define JSON_FILES "config.json, model.safetensors and tokenizer.json"

static const model_page pages[] = {
    {"gpt2", "huggingface.co/openai-community/gpt2", GPT2_FILES},
    {"distilgpt2", "huggingface.co/distilbert/distilgpt2", GPT2_FILES},
    {"gpt2-medium", "huggingface.co/openai-community/gpt2-medium", GPT2_FILES},
    {"gpt2-large", "huggingface.co/openai-community/gpt2-large", GPT2_FILES},
    {"gpt2-xl", "huggingface.co/openai-community/gpt2-xl", GPT2_FILES},
    {"bert-base-uncased", "huggingface.co/google-bert/bert-base-uncased", BERT_FILES},
    {"distilbert-base-uncased", "huggingface.co/distilbert/distilbert-base-uncased", BERT_FILES},
    {"roberta-base", "huggingface.co/FacebookAI/roberta-base", JSON_FILES},
    {"albert-base-v2", "huggingface.co/albert/albert-base-v2", JSON_FILES},
    {"SmolLM2-135M", "huggingface.co/HuggingFaceTB/SmolLM2-135M", JSON_FILES},
    {"Qwen2.5-0.5B", "huggingface.co/Qwen/Qwen2.5-0.5B", JSON_FILES},
    {"TinyLlama-1.1B", "huggingface.co/TinyLlama/TinyLlama-1.1B-Chat-v1.0", JSON_FILES},
    {"Llama-3.2-1B", "huggingface.co/meta-llama/Llama-3.2-1B", JSON_FILES},
};

int model_fetch_hint(char *out, size_t outlen, const char *path) {
    if (outlen) out[0] = '\0';
    size_t len = strlen(path);
    while (len > 1 && path[len - 1] == '/') len--; /* "models/gpt2/" names gpt2 */
    size_t start = len;
    while (start > 0 && path[start - 1] != '/') start--;
    for (size_t i = 0; i < sizeof pages / sizeof pages[0]; i++)
        if (strlen(pages[i].name) == len - start &&
            strncmp(path + start, pages[i].name, len - start) == 0) {
            snprintf(out, outlen, "download %s from %s into it", pages[i].files, pages[i].page);
            return 0;
        }
    return -1;
}

void model_fetch_say(char *err, size_t errlen, const char *path) {
    struct stat st;
    char hint[256]; /* a README model not downloaded yet: where its files are */
    const size_t at = strlen(err);
    if (stat(path, &st) != 0 && errno == ENOENT && model_fetch_hint(hint, sizeof hint, path) == 0)
        snprintf(err + at, errlen - at, ": %s", hint);
}
