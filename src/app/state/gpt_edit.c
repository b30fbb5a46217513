/* gpt_edit.c: a loaded model's edits that come as data, not keys: the heads removed
 * as a list (a view file's model-ablate, `--ablate`), and what the model writes
 * (write.c): the run shown read, a token drawn marked, a token appended to the text. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpt_internal.h"

int app_gpt_shown_run(app_state *s, const gpt2_model **m, gpt2_run **run, int *h) {
    app_gpt *g = s->gpt;
    if (!g || s->gpt_wanted || s->gpt_loading || app_gpt_busy(s)) return -1;
    *m = g->m;
    *run = gpt_shown(g);
    *h = g->h;
    return 0;
}

int app_gpt_off_list(const app_state *s, char *buf, size_t len) {
    const app_gpt *g = s->gpt;
    if (len) buf[0] = '\0';
    if (s->gpt_wanted || s->gpt_loading || !g) { /* asked for: what it will remove */
        if (!s->gpt_wanted && !s->gpt_loading) return 0;
        snprintf(buf, len, "%s", s->gpt_want.ablate);
        return 1;
    }
    const tf_config *c = &g->m->tf->cfg;
    size_t at = 0;
    for (int l = 0; l < c->layers; l++)
        for (int h = 0; h < c->h; h++)
            if (g->off[(size_t)l * c->h + h] && at < len) { /* asked: shown once computed */
                const int w = snprintf(buf + at, len - at, "%s%d:%d", at ? "," : "", l + 1, h + 1);
                at += w > 0 ? (size_t)w : 0;
            }
    return 1;
}

int app_gpt_check_off(const app_gpt *g, const char *spec, char *err, size_t errlen) {
    const tf_config *c = &g->m->tf->cfg;
    for (const char *p = spec; *p;) {
        int l = 0, h = 0, used = 0;
        if (sscanf(p, "%d:%d%n", &l, &h, &used) != 2) break; /* the reader checked the form */
        if (l > c->layers || h > c->h) {
            snprintf(err, errlen,
                     "model-ablate = %.200s: %s has no head %d:%d (%d layers of %d heads)", spec,
                     g->m->paths.name, l, h, c->layers, c->h);
            return -1;
        }
        p += used;
        if (*p == ',') p++;
    }
    return 0;
}

void app_gpt_set_off(app_state *s, const char *spec) {
    app_gpt *g = s->gpt;
    if (!g) return;
    char now[APP_ABLATE_MAX];
    app_gpt_off_list(s, now, sizeof now);
    if (strcmp(now, spec) == 0) return; /* no recompute when the same heads are off */
    const tf_config *c = &g->m->tf->cfg;
    memset(g->off, 0, (size_t)c->layers * c->h);
    for (const char *p = spec; *p;) { /* checked: app_gpt_check_off */
        int l = 0, h = 0, used = 0;
        if (sscanf(p, "%d:%d%n", &l, &h, &used) != 2) break;
        if (l >= 1 && l <= c->layers && h >= 1 && h <= c->h)
            g->off[(size_t)(l - 1) * c->h + h - 1] = 1;
        p += used;
        if (*p == ',') p++;
    }
    g->say.on = 0;
    gpt_want(s);
}

/* ---- the K/V heads regrouped as data (a view file's model-kv, `--kv-heads`) ------------ */

int app_gpt_kv(const app_state *s) {
    if (s->gpt_wanted || s->gpt_loading || !s->gpt) /* asked for: what it will share */
        return s->gpt_wanted || s->gpt_loading ? s->gpt_want.kv : 0;
    return s->gpt->kv;
}

int app_gpt_check_kv(const app_gpt *g, int kv, int h, char *err, size_t errlen) {
    const int own = g->m->tf->spec.h_kv, own_h = g->m->tf->cfg.h;
    if (kv && (kv > own || own % kv != 0)) {
        snprintf(err, errlen, "model-kv = %d: must divide %s's %d K/V heads", kv, g->m->paths.name,
                 own);
        return -1;
    }
    if (kv && kv != own && h && h != own_h) {
        snprintf(err, errlen,
                 "model-kv = %d with model-h = %d: heads sharing K/V heads are not re-split", kv,
                 h);
        return -1;
    }
    return 0;
}

/* ---- the model writes (write.c): the run shown, read, and a token appended ------------- */

const float *app_gpt_logits(const app_state *s, int *vocab) {
    const app_gpt *g = s->gpt;
    if (!g || gpt_shown(g)->n < 1) return NULL;
    *vocab = g->m->tf->cfg.vocab;
    return gpt_shown(g)->inf->logits;
}

float app_gpt_prob(const app_state *s, int id) {
    return s->gpt ? gpt2_run_probs(gpt_shown(s->gpt))[id] : 0.0f;
}

int app_gpt_room(const app_state *s) {
    const app_gpt *g = s->gpt;
    if (!g) return 0;
    const gpt2_run *r = gpt_shown(g);
    const int room = r->inf->cap - r->n_text;
    return g->n_more < GPT2_MAX_N && room > 0 ? room : 0;
}

int app_gpt_written(const app_state *s) {
    return s->gpt ? s->gpt->n_more : 0;
}

int app_gpt_ends(const app_state *s, int id) {
    return s->gpt && model_eos_is(&s->gpt->eos, id);
}

void app_gpt_token_label(const app_state *s, int id, char *buf, size_t len) {
    if (len) buf[0] = '\0';
    if (s->gpt) model_tok_label(s->gpt->m->tok, id, buf, len);
}

int app_gpt_marked(const app_state *s) {
    return s->gpt ? s->gpt->mark : -1;
}

void app_gpt_mark(app_state *s, int id) {
    app_gpt *g = s->gpt;
    if (!g) return;
    g->mark = id;
    gpt_mark_next(g);
    s->layout_valid = 0;
    s->dirty = 1;
}

int app_gpt_append(app_state *s, int id) {
    app_gpt *g = s->gpt;
    if (!g || g->n_more >= GPT2_MAX_N) return -1;
    g->more[g->n_more++] = id;
    /* the text shown, edited and saved: the text's bytes, then the written tokens'
       (a NUL byte left out), as UTF-8 (app_write_text); read back, it may split into
       other tokens */
    static unsigned char raw[sizeof s->custom]; /* the state machine runs on one thread */
    size_t at = strlen(g->text);
    if (at > sizeof raw) at = sizeof raw;
    memcpy(raw, g->text, at);
    for (int i = 0; i < g->n_more; i++) {
        size_t len = 0;
        const unsigned char *b = model_tok_bytes(g->m->tok, g->more[i], &len);
        for (size_t k = 0; b && k < len && at < sizeof raw; k++)
            if (b[k]) raw[at++] = b[k];
    }
    app_write_text(s->custom, sizeof s->custom, raw, at);
    s->sample = 0;
    gpt_want(s);
    return 0;
}
