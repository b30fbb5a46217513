/* soak.c: applies many random actions (keys of the README's table, typed and
 * pasted text with valid and invalid UTF-8, pointer moves and clicks anywhere,
 * resizes from 1x1 to 4096x4096) to the app's state machine, lays out and draws
 * after each, and checks the invariants: h divides d_model, 1 <= n <= 512, every
 * tensor finite, attention rows sum to 1 with exactly 0 on masked keys, and the
 * layout inside the window. Fails with the step, the action and the broken
 * invariant. Usage: soak [--seed N] [--count N] [--jobs MS] (defaults 1, 20000 and
 * none). With --jobs the jobs layer is attached as the window attaches it
 * (recomputes estimated above MS ms, 0 for every one, go to a worker; the pin and
 * training run on the runner) and polled after every action, so the recompute, pin
 * and training paths run on their threads (the run to take under TSan). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "async.h"
#include "samples.h"
#include "state.h"
#include "view_fixture.h"

#include "soak_rng.h"

static long step_no;
static const app_state *soak_state; /* for messages */
static char last_action[160];

#define INVARIANT(cond, ...)                                                                       \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "soak: step %ld after %s (zoom %.2f, h %d, n %d, d %d): ", step_no,    \
                    last_action, (double)soak_state->look.zoom, soak_state->cfg.h,                 \
                    soak_state->m->n, soak_state->cfg.d_model);                                    \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fprintf(stderr, "\n");                                                                 \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

/* Random text: words, punctuation, CJK, and now and then bytes that are not UTF-8. */
static void random_text(char *buf, size_t len) {
    static const char *const parts[] = {
        "the ", "cat ",           "sat ",         "on ",    "mat",
        ". ",   "Z\xC3\xBCrich ", "\xE6\x9D\xB1", "don't ", "\xF0\x9F\x98\x80",
        "\xFF", "\xC3",           "\xE2\x82",     "  ",     "\t",
        "x"};
    size_t o = 0;
    int count = rnd_below(12) + (rnd_below(50) == 0 ? 600 : 0); /* sometimes past 512 tokens */
    for (int i = 0; i < count; i++) {
        const char *p = parts[rnd_below((int)(sizeof parts / sizeof parts[0]))];
        size_t l = strlen(p);
        if (o + l + 1 >= len) break;
        memcpy(buf + o, p, l);
        o += l;
    }
    buf[o] = '\0';
}

/* a key the key map knows (app_keys), or now and then one it does not */
static int random_key(void) {
    static const int unmapped[] = {'a', 'z', 'o', 'g', APP_KEY_F1 + 100};
    int n = 0;
    const int *k = app_keys(&n);
    if (rnd_below(10) == 0) return unmapped[rnd_below((int)(sizeof unmapped / sizeof unmapped[0]))];
    return k[rnd_below(n)];
}

static void random_action(app_state *s, char *text, size_t textlen) {
    app_action a = {.kind = ACT_NONE};
    int pick = rnd_below(100);
    if (pick < 55) {
        int key = random_key();
        int mods = rnd_below(4) == 0 ? APP_MOD_CTRL : 0;
        if (rnd_below(5) == 0) mods |= APP_MOD_SHIFT;
        /* keep the soak's shapes affordable under the sanitizers, and the app alive */
        if ((key == APP_KEY_RIGHT && s->cfg.d_model >= 384) || (key == 'q' && mods))
            key = APP_KEY_LEFT;
        a = app_key_action(s, key, mods);
        if (a.kind == ACT_ESCAPE && !s->editing && !s->help && !s->look.focus) a.kind = ACT_NONE;
        if (a.kind == ACT_EDIT_INSERT) { /* Ctrl+V: paste */
            random_text(text, textlen);
            a.text = text;
        }
        snprintf(last_action, sizeof last_action, "key %#x mods %d -> action %d", key, mods,
                 a.kind);
    } else if (pick < 70) {
        random_text(text, textlen);
        a.kind = rnd_below(4) ? ACT_EDIT_INSERT : ACT_EDIT_PREEDIT;
        a.text = text;
        snprintf(last_action, sizeof last_action, "text (%zu bytes)", strlen(text));
    } else if (pick < 85) {
        a.kind = ACT_HOVER;
        a.x = rnd_below(s->width + 40) - 20;
        a.y = rnd_below(s->height + 40) - 20;
        snprintf(last_action, sizeof last_action, "hover %d,%d", a.x, a.y);
    } else if (pick < 93) {
        a.kind = ACT_CLICK;
        a.x = rnd_below(s->width + 40) - 20;
        a.y = rnd_below(s->height + 40) - 20;
        snprintf(last_action, sizeof last_action, "click %d,%d", a.x, a.y);
    } else if (pick < 97) {
        a.kind = ACT_RESIZE;
        int big = rnd_below(3);
        a.x =
            big == 0 ? 1 + rnd_below(40) : (big == 1 ? 800 + rnd_below(3300) : 1 + rnd_below(4096));
        a.y =
            big == 0 ? 1 + rnd_below(40) : (big == 1 ? 600 + rnd_below(1500) : 1 + rnd_below(4096));
        a.f = 1.0f;
        snprintf(last_action, sizeof last_action, "resize %dx%d", a.x, a.y);
    } else {
        a.kind = (app_action_kind)(1 + rnd_below(ACT_COUNT - 1));
        a.arg = rnd_below(20) - 5;
        if (a.kind == ACT_QUIT) a.kind = ACT_NONE;
        if (a.kind == ACT_ESCAPE && !s->editing && !s->help && !s->look.focus) a.kind = ACT_NONE;
        if (a.kind == ACT_D_UP && s->cfg.d_model >= 384) a.kind = ACT_D_DOWN;
        if (a.kind == ACT_HOVER || a.kind == ACT_CLICK || a.kind == ACT_RESIZE) {
            a.x = rnd_below(3000) - 100;
            a.y = rnd_below(3000) - 100;
            a.f = 1.0f;
        }
        if (a.kind == ACT_EDIT_INSERT || a.kind == ACT_EDIT_PREEDIT) {
            random_text(text, textlen);
            a.text = text;
        }
        snprintf(last_action, sizeof last_action, "action %d arg %d", a.kind, a.arg);
    }
    app_apply(s, &a);
    app_take_save(s); /* saving is the window's; the soak only checks the request is taken */
}

static int inside(view_rect r, int w, int h) {
    return r.w <= 0 || r.h <= 0 || (r.x >= 0 && r.y >= 0 && r.x + r.w <= w && r.y + r.h <= h);
}

static void check_model(const app_state *s) {
    const mha_model *m = s->m;
    const int n = m->n, d = m->cfg.d_model, h = m->cfg.h;
    INVARIANT(h >= 1 && d % h == 0, "h = %d does not divide d_model = %d", h, d);
    INVARIANT(n >= 1 && n <= MHA_MAX_N, "n = %d", n);
    INVARIANT(m->n_real == s->toks.count && n >= m->n_real, "n = %d, n_real = %d, %d tokens", n,
              m->n_real, s->toks.count);
    for (int i = 0; i < MHA_ABLATE_WORDS * 64; i++)
        if (mha_config_is_ablated(&m->cfg, i)) {
            INVARIANT(i < h, "head %d ablated with h = %d", i + 1, h);
            for (int r = 0; r < n; r++)
                for (int k = 0; k < m->d_k; k++) {
                    float v = m->concat[(size_t)r * d + (size_t)i * m->d_k + k];
                    INVARIANT(v == 0.0f, "ablated head %d has Concat[%d, %d] = %g", i + 1, r,
                              i * m->d_k + k, (double)v);
                }
        }
    INVARIANT(s->look.focus >= 0 && s->look.focus <= h, "focus %d with h = %d", s->look.focus, h);
    const float *t[] = {m->x, m->q, m->k, m->v, m->concat, m->out};
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
        for (size_t j = 0; j < (size_t)n * d; j++)
            INVARIANT(isfinite(t[i][j]), "tensor %zu element %zu is %g", i, j, (double)t[i][j]);
    for (int i = 0; i < h; i++)
        for (int r = 0; r < n; r++) {
            const float *row = m->attn + ((size_t)i * n + r) * n;
            double sum = 0.0;
            for (int c = 0; c < n; c++) {
                INVARIANT(isfinite(row[c]) && row[c] >= 0.0f, "attn[%d,%d,%d] = %g", i, r, c,
                          (double)row[c]);
                if ((m->cfg.mask == MHA_MASK_CAUSAL && c > r) || c >= m->n_real)
                    INVARIANT(row[c] == 0.0f, "masked attn[%d,%d,%d] = %g", i, r, c,
                              (double)row[c]);
                sum += row[c];
            }
            INVARIANT(fabs(sum - 1.0) < 1e-4, "row %d of head %d sums to %.7f", r, i, sum);
        }
}

static void check_layout(const view_layout *L, const app_state *s) {
    const int w = s->width, h = s->height;
    /* the layout is only promised from 800x600 (the window's minimum size), and
       when comparing, for panes of that size (a 1600x600 or 800x1200 window) */
    if (w < 800 || h < 600) return;
    if (L->compare && (L->compare_pane[1].w < 800 || L->compare_pane[1].h < 600)) return;
    INVARIANT(inside(L->status, w, h), "status line outside %dx%d", w, h);
    INVARIANT(inside(L->formula, w, h), "formula strip outside %dx%d", w, h);
    for (int b = 0; b < BTN_COUNT; b++)
        if (L->buttons[b].present)
            INVARIANT(inside(L->buttons[b].r, w, h), "button %d outside %dx%d", b, w, h);
    for (int i = 0; i < L->shown_heads && i < VIEW_MAX_VISIBLE; i++)
        INVARIANT(inside(L->heads[i].map, w, h), "head %d outside %dx%d", i, w, h);
    INVARIANT(inside(L->concat.map, w, h) && inside(L->w_o.map, w, h) && inside(L->out.map, w, h),
              "equation outside %dx%d (Concat %d,%d %dx%d, W^O %d,%d %dx%d, MultiHead %d,%d "
              "%dx%d; compare %d, present %d, lesson %d, focus %d, step %d)",
              w, h, L->concat.map.x, L->concat.map.y, L->concat.map.w, L->concat.map.h,
              L->w_o.map.x, L->w_o.map.y, L->w_o.map.w, L->w_o.map.h, L->out.map.x, L->out.map.y,
              L->out.map.w, L->out.map.h, s->pin != NULL, s->look.present, s->lesson, s->look.focus,
              s->look.step);
    INVARIANT(L->pages < 1 || (s->look.page >= 0 && s->look.page < L->pages), "page %d of %d",
              s->look.page, L->pages);
}

int main(int argc, char **argv) {
    uint64_t seed = 1;
    long count = 20000;
    double jobs_ms = -2.0; /* no jobs layer */
    for (int i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--seed") == 0)
            seed = strtoull(argv[i + 1], NULL, 10);
        else if (strcmp(argv[i], "--count") == 0)
            count = strtol(argv[i + 1], NULL, 10);
        else if (strcmp(argv[i], "--jobs") == 0)
            jobs_ms = strtod(argv[i + 1], NULL);
    }
    rng_state = seed;
    app_state *s = app_state_create(fx_measure, NULL);
    cli_options o;
    memset(&o, 0, sizeof o);
    o.theme = o.colormap = -1;
    tok_list toks = {0};
    int total;
    char err[256];
    if (!s || tok_split(&toks, samples_get(0)->text, MHA_MAX_N, &total, err, sizeof err) != 0)
        return 1;
    mha_config cfg = {.h = 4, .d_model = 64, .seed = 1};
    if (app_state_init(s, &o, &toks, &cfg, err, sizeof err) != 0) {
        fprintf(stderr, "soak: %s\n", err);
        return 1;
    }
    if (jobs_ms >= 0.0 && app_async_enable(s, NULL, NULL, jobs_ms) != 0) {
        fprintf(stderr, "soak: cannot attach the jobs layer\n");
        return 1;
    }
    soak_state = s;
    view_cache *cache = view_cache_create();
    draw_list dl;
    draw_list_init(&dl);
    static char text[16384];
    double now = 0.0;
    for (step_no = 1; step_no <= count; step_no++) {
        random_action(s, text, sizeof text);
        if (jobs_ms >= 0.0) app_async_poll(s); /* as the window does after every event */
        now += rnd_below(3000);
        app_tick(s, now);
        INVARIANT(!s->quit, "the app quit");
        check_model(s);
        const view_layout *L = app_layout(s);
        check_layout(L, s);
        if (step_no % 7 == 0 && s->width <= 4096 && s->height <= 4096) {
            view_state vs;
            app_view(s, &vs);
            view_render(&dl, cache, L, &vs, fx_measure, NULL);
            for (int i = 0; i < dl.count; i++)
                INVARIANT((dl.cmds[i].w >= 0 && dl.cmds[i].h >= 0) || dl.cmds[i].kind == DC_LINE ||
                              dl.cmds[i].kind == DC_TEXT || dl.cmds[i].kind == DC_GROUP,
                          "drawing command %d (kind %d) has size %dx%d", i, dl.cmds[i].kind,
                          dl.cmds[i].w, dl.cmds[i].h);
        }
        s->dirty = 0;
    }
    draw_list_free(&dl);
    view_cache_destroy(cache);
    printf(
        "soak: %ld actions from seed %llu, every invariant held (n = %d, h = %d, d_model = %d)\n",
        count, (unsigned long long)seed, s->m->n, s->cfg.h, s->cfg.d_model);
    if (jobs_ms >= 0.0) {
        printf("soak: the jobs layer ran %lu recomputes\n", app_async_recomputes(s));
        app_async_disable(s); /* waits for what runs */
    }
    app_state_destroy(s);
    return 0;
}
