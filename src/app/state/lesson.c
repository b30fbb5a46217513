/* lesson.c: the actions that put the lesson on screen: the padding mask, the
 * temperature, switching heads off (ablation), designed heads, and how the
 * attention is shown (contrast, numbers, the difference view, the step-through
 * of one head, the redundancy and cost panels). Recomputing is state.c's. */
#include <stdio.h>
#include <string.h>

#include "state_internal.h"

/* The temperature ladder: T divides the scores; 1 is the Transformer's own. */
static const float temps[] = {0.05f, 0.1f, 0.2f, 0.25f, 0.5f,  0.75f, 1.0f,
                              1.5f,  2.0f, 3.0f, 5.0f,  10.0f, 20.0f};
#define TEMP_COUNT ((int)(sizeof temps / sizeof temps[0]))

/* Stages of the step-through (0 shows the head whole). */

static void step_temperature(app_state *s, int dir) {
    float t = s->cfg.temperature > 0.0f ? s->cfg.temperature : 1.0f;
    int i = 0;
    while (i < TEMP_COUNT - 1 && temps[i] < t - 1e-6f) i++; /* first step >= t */
    if (dir > 0 && temps[i] <= t + 1e-6f) i++;
    if (dir < 0) i--;
    if (i < 0 || i >= TEMP_COUNT) {
        snprintf(s->status, sizeof s->status, "temperature %g is the %s (%g to %g)", (double)t,
                 dir > 0 ? "highest" : "lowest", (double)temps[0], (double)temps[TEMP_COUNT - 1]);
        return;
    }
    mha_config c = s->cfg;
    c.temperature = temps[i];
    app_change_cfg(s, c);
    if (s->cfg.temperature == temps[i])
        snprintf(s->status, sizeof s->status, "temperature T = %g: scores divided by %s%g (%s)",
                 (double)temps[i],
                 s->cfg.no_scale ? ""
                                 : "\xE2\x88\x9A"
                                   "d_k \xC2\xB7 ",
                 (double)temps[i],
                 temps[i] < 1.0f ? "sharper" : (temps[i] > 1.0f ? "flatter" : "as defined"));
}

static void toggle_pad(app_state *s) {
    mha_config c = s->cfg;
    int n = s->m->n_real;
    if (c.pad) {
        c.pad = 0;
    } else if (n >= MHA_MAX_N) {
        snprintf(s->status, sizeof s->status, "no room for padding: the text has %d tokens",
                 MHA_MAX_N);
        return;
    } else {
        c.pad = app_pad_length(n);
    }
    app_change_cfg(s, c);
    if (s->cfg.pad == c.pad && c.pad)
        snprintf(s->status, sizeof s->status,
                 "padded to %d with [PAD]: their keys are masked in every row", c.pad);
}

static void toggle_weights(app_state *s) {
    mha_config c = s->cfg;
    c.weights = c.weights == MHA_WEIGHTS_PATTERNS ? MHA_WEIGHTS_RANDOM : MHA_WEIGHTS_PATTERNS;
    app_change_cfg(s, c);
    if (s->cfg.weights != c.weights) return;
    if (c.weights == MHA_WEIGHTS_PATTERNS)
        snprintf(s->status, sizeof s->status,
                 "designed heads: each head's query and key weights built so it attends by "
                 "one rule (its title names it)");
    else
        snprintf(s->status, sizeof s->status, "random weights (Glorot), seed %llu",
                 (unsigned long long)s->cfg.seed);
}

static void toggle_ablate(app_state *s, int head) {
    if (head == 0) head = s->look.focus;
    if (head == 0) {
        snprintf(s->status, sizeof s->status,
                 "focus a head first (1\xE2\x80\xA6"
                 "9), or click the \xC3\x97 in its title");
        return;
    }
    if (head < 1 || head > s->cfg.h) {
        snprintf(s->status, sizeof s->status, "there is no head %d: h = %d", head, s->cfg.h);
        return;
    }
    mha_config c = s->cfg;
    int off = !mha_config_is_ablated(&c, head - 1);
    mha_config_set_ablated(&c, head - 1, off);
    app_change_cfg(s, c);
    if (mha_config_is_ablated(&s->cfg, head - 1) != off) return;
    snprintf(s->status, sizeof s->status,
             "head %d %s: %d of %d heads off, MultiHead changes by %.1f %% (D shows the "
             "difference)",
             head, off ? "off (its band of Concat is zero)" : "on again",
             mha_config_ablated_count(&s->cfg), s->cfg.h, 100.0 * mha_ablation_delta(s->m));
}

int app_lesson_apply(app_state *s, const app_action *a) {
    switch (a->kind) {
    case ACT_PAD: toggle_pad(s); return 1;
    case ACT_TEMP_UP: step_temperature(s, +1); return 1;
    case ACT_TEMP_DOWN: step_temperature(s, -1); return 1;
    case ACT_WEIGHTS: toggle_weights(s); return 1;
    case ACT_ABLATE: toggle_ablate(s, a->arg); return 1;
    case ACT_ABLATE_CLEAR: {
        if (!mha_config_ablated_count(&s->cfg)) {
            snprintf(s->status, sizeof s->status, "no head is off");
            return 1;
        }
        mha_config c = s->cfg;
        memset(c.ablate, 0, sizeof c.ablate);
        app_change_cfg(s, c);
        return 1;
    }
    case ACT_DIFF:
        s->look.diff = !s->look.diff;
        if (s->look.diff && !mha_config_ablated_count(&s->cfg))
            snprintf(s->status, sizeof s->status,
                     "difference view: all zero until a head is off (X, or its \xC3\x97)");
        return 1;
    case ACT_VALUES: s->look.values = !s->look.values; return 1;
    case ACT_CONTRAST: s->look.contrast = (s->look.contrast + 1) % 3; return 1;
    case ACT_STEP_NEXT:
    case ACT_STEP_PREV:
        if (!s->look.focus) {
            snprintf(s->status, sizeof s->status,
                     "the step-through is in the focus view: press 1\xE2\x80\xA6"
                     "9 first");
            return 1;
        }
        s->look.step = (s->look.step + (a->kind == ACT_STEP_NEXT ? 1 : app_stage_count(s))) %
                       (app_stage_count(s) + 1);
        return 1;
    case ACT_LESSON:
        s->lesson = !s->lesson;
        app_gpt_measure(s, s->lesson);
        return 1;
    default: return 0;
    }
}
