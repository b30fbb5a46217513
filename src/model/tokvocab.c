/* tokvocab.c: vocab.txt and tokenizer_config.json made into the tokenizer.json that
 * Hugging Face's BertConverter builds of them, then read by tokjson.c (tokvocab.h):
 * WordPiece (unk_token, "##", 100 characters a word), BertNormalizer (clean_text;
 * handle_chinese_chars, strip_accents and lowercase from the config), BertPreTokenizer,
 * the special tokens as added tokens (not normalized), and [CLS] $A [SEP]. The lines
 * are split as Python's text mode splits them (\n, \r\n and \r all end a line), a token
 * twice keeps its last line's id (load_vocab's dict). No SDL, never exits. */
#include "tokvocab.h"

#include <errno.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tokjson_internal.h"

#define VOCAB_MAX_BYTES (64u << 20) /* bert-base-uncased's is 232 kB */

static int fail(char *err, size_t errlen, int code, const char *path, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
static int fail(char *err, size_t errlen, int code, const char *path, const char *fmt, ...) {
    if (err && errlen) {
        int n = snprintf(err, errlen, "%s: ", path);
        va_list ap;
        va_start(ap, fmt);
        if (n >= 0 && (size_t)n < errlen) vsnprintf(err + n, errlen - (size_t)n, fmt, ap);
        va_end(ap);
        for (char *s = err; *s; s++)
            if ((unsigned char)*s < 0x20) *s = '?';
    }
    return code;
}

/* vocab.txt's lines into an object {token: line index}: 0, or 2 with a message */
static int read_lines(json_t *vocab, const char *v, size_t len, int *n_lines, const char *path,
                      char *err, size_t errlen) {
    int line = 0;
    for (size_t at = 0; at < len; line++) {
        size_t end = at;
        while (end < len && v[end] != '\n' && v[end] != '\r') end++;
        if (line >= TJ_MAX_ID) return fail(err, errlen, 2, path, "more than %d lines", TJ_MAX_ID);
        if (memchr(v + at, '\0', end - at))
            return fail(err, errlen, 2, path, "line %d holds a NUL byte", line + 1);
        json_t *id = json_integer(line);
        /* jansson checks the key is UTF-8 */
        if (!id || json_object_setn_new(vocab, v + at, end - at, id) != 0)
            return fail(err, errlen, 2, path, "line %d is not UTF-8", line + 1);
        if (end == len) {
            line++;
            break;
        }
        at = end + (v[end] == '\r' && end + 1 < len && v[end + 1] == '\n') + 1;
    }
    *n_lines = line;
    return 0;
}

/* A special token's content from the config: a string, or {"content": ...} as
 * AddedToken is saved; def when absent. NULL when it is neither. */
static const char *special(json_t *cfg, const char *key, const char *def) {
    json_t *v = cfg ? json_object_get(cfg, key) : NULL;
    if (!v || json_is_null(v)) return def;
    if (json_is_object(v)) v = json_object_get(v, "content");
    return json_is_string(v) ? json_string_value(v) : NULL;
}

/* A boolean of the config (absent: def; null: -1 where allowed, as strip_accents). */
static int flag(json_t *cfg, const char *key, int def, int null_ok) {
    json_t *v = cfg ? json_object_get(cfg, key) : NULL;
    if (!v) return def;
    if (json_is_null(v)) return null_ok ? -1 : def;
    return json_is_boolean(v) ? json_is_true(v) : -2;
}

/* The tokenizer.json of vocab and the config into *out (vocab and cfg stay the
 * caller's): 0, or 1 / 2 with a message. */
static int build(json_t **out, json_t *vocab, json_t *cfg, const char *vpath, const char *cpath,
                 char *err, size_t errlen) {
    static const char *const keys[] = {"pad_token", "unk_token", "cls_token", "sep_token",
                                       "mask_token"};
    static const char *const defs[] = {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"};
    const int lower = flag(cfg, "do_lower_case", 1, 0);
    const int strip = flag(cfg, "strip_accents", -1, 1);
    const int chinese = flag(cfg, "tokenize_chinese_chars", 1, 0);
    if (lower < -1 || strip < -1 || chinese < -1)
        return fail(err, errlen, 2, cpath,
                    "do_lower_case, strip_accents or tokenize_chinese_chars is not true or false");
    const char *tok[5];
    for (int k = 0; k < 5; k++) {
        tok[k] = special(cfg, keys[k], defs[k]);
        if (!tok[k]) return fail(err, errlen, 2, cpath, "%s is not a string", keys[k]);
        /* BertTokenizerFast would add it after the vocabulary: not done here */
        if (!json_object_get(vocab, tok[k]))
            return fail(err, errlen, 2, vpath, "has no line %.40s (%s)", tok[k], keys[k]);
    }
    json_t *added = json_array();
    for (int k = 0; k < 5; k++) {
        json_t *id = json_object_get(vocab, tok[k]);
        json_array_append_new(added, json_pack("{s:O,s:s,s:b,s:b,s:b,s:b,s:b}", "id", id, "content",
                                               tok[k], "single_word", 0, "lstrip", 0, "rstrip", 0,
                                               "normalized", 0, "special", 1));
    }
    json_t *strip_v = strip < 0 ? json_null() : json_boolean(strip);
    json_t *cls = json_pack("{s:s,s:[O],s:[s]}", "id", tok[2], "ids",
                            json_object_get(vocab, tok[2]), "tokens", tok[2]);
    json_t *sep = json_pack("{s:s,s:[O],s:[s]}", "id", tok[3], "ids",
                            json_object_get(vocab, tok[3]), "tokens", tok[3]);
    json_t *specials = json_object();
    json_object_set_new(specials, tok[2], cls);
    json_object_set_new(specials, tok[3], sep);
    *out = json_pack(
        "{s:s,s:O,s:{s:s,s:b,s:b,s:O,s:b},s:{s:s},s:{s:s,s:s,s:s,s:i,s:O},"
        "s:{s:s,s:[{s:{s:s,s:i}},{s:{s:s,s:i}},{s:{s:s,s:i}}],s:[],s:O}}",
        "version", "1.0", "added_tokens", added, "normalizer", "type", "BertNormalizer",
        "clean_text", 1, "handle_chinese_chars", chinese, "strip_accents", strip_v, "lowercase",
        lower, "pre_tokenizer", "type", "BertPreTokenizer", "model", "type", "WordPiece",
        "unk_token", tok[1], "continuing_subword_prefix", "##", "max_input_chars_per_word", 100,
        "vocab", vocab, "post_processor", "type", "TemplateProcessing", "single", "SpecialToken",
        "id", tok[2], "type_id", 0, "Sequence", "id", "A", "type_id", 0, "SpecialToken", "id",
        tok[3], "type_id", 0, "pair", "special_tokens", specials);
    json_decref(added);
    json_decref(strip_v);
    json_decref(specials);
    return *out ? 0 : fail(err, errlen, 1, vpath, "out of memory");
}

int tokvocab_parse(tokjson **out, const char *vocab, size_t vlen, const char *config, size_t clen,
                   const char *vocab_path, const char *config_path, char *err, size_t errlen) {
    *out = NULL;
    const char *vp = vocab_path ? vocab_path : "vocab.txt";
    const char *cp = config_path ? config_path : "tokenizer_config.json";
    if (vlen > VOCAB_MAX_BYTES)
        return fail(err, errlen, 2, vp, "larger than %u MiB", VOCAB_MAX_BYTES >> 20);
    json_t *cfg = NULL, *v = json_object(), *j = NULL;
    int rc = v ? 0 : fail(err, errlen, 1, vp, "out of memory"), lines = 0;
    if (!rc && config) {
        json_error_t je;
        cfg = json_loadb(config, clen, JSON_REJECT_DUPLICATES, &je);
        if (!cfg || !json_is_object(cfg))
            rc = fail(err, errlen, 2, cp, "not a JSON object (%s, line %d)",
                      cfg ? "another value" : je.text, cfg ? 1 : je.line);
    }
    if (!rc) rc = read_lines(v, vocab, vlen, &lines, vp, err, errlen);
    if (!rc && lines == 0) rc = fail(err, errlen, 2, vp, "empty");
    if (!rc) rc = build(&j, v, cfg, vp, cp, err, errlen);
    char *text = rc ? NULL : json_dumps(j, JSON_COMPACT);
    if (!rc && !text) rc = fail(err, errlen, 1, vp, "out of memory");
    if (!rc) rc = tokjson_parse(out, text, strlen(text), vp, err, errlen);
    free(text);
    json_decref(j);
    json_decref(v);
    json_decref(cfg);
    return rc;
}

/* A whole file into *buf (malloc'd), at most cap bytes: 0, or 1 / 2 with a message. */
static int slurp(const char *path, char **buf, size_t *len, size_t cap, char *err, size_t errlen) {
    FILE *f = fopen(path, "rb");
    if (!f) return fail(err, errlen, 1, path, "%s", strerror(errno));
    size_t n = 0, room = 1 << 16;
    char *b = malloc(room);
    int rc = b ? 0 : fail(err, errlen, 1, path, "out of memory");
    while (!rc) {
        if (n == room) {
            char *nb = room > cap ? NULL : realloc(b, room * 2);
            if (!nb) {
                rc = room > cap ? fail(err, errlen, 2, path, "larger than %zu MiB", cap >> 20)
                                : fail(err, errlen, 1, path, "out of memory");
                break;
            }
            b = nb, room *= 2;
        }
        size_t got = fread(b + n, 1, room - n, f);
        n += got;
        if (got == 0) {
            if (ferror(f)) rc = fail(err, errlen, 1, path, "read error");
            break;
        }
    }
    fclose(f);
    if (rc) {
        free(b);
        return rc;
    }
    *buf = b, *len = n;
    return 0;
}

int tokvocab_load(tokjson **out, const char *vocab_path, const char *config_path, char *err,
                  size_t errlen) {
    *out = NULL;
    char *v = NULL, *c = NULL;
    size_t vl = 0, cl = 0;
    int rc = slurp(vocab_path, &v, &vl, VOCAB_MAX_BYTES, err, errlen);
    FILE *probe = rc || !config_path ? NULL : fopen(config_path, "rb");
    if (probe) {
        fclose(probe);
        rc = slurp(config_path, &c, &cl, 1u << 20, err, errlen);
    }
    if (!rc) rc = tokvocab_parse(out, v, vl, c, cl, vocab_path, config_path, err, errlen);
    free(v);
    free(c);
    return rc;
}
