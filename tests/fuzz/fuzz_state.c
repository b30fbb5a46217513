/* fuzz_state.c: the app's state machine driven by a byte stream: each action is
 * a key of the README's table (with Ctrl and Shift), typed or pasted bytes (any,
 * not only UTF-8), a pointer move or click anywhere, a resize from 1x1 to
 * 4096x4096 or any action kind with any argument. After each: h divides d_model,
 * 1 <= n <= 512, the focus, zoom and PNG multiplier in range, numbers finite, the
 * text field's cursor inside its text and, when the text is valid UTF-8, at a
 * character boundary. */
#include <math.h>
#include <string.h>

#include "fuzz.h"
#include "samples.h"
#include "state.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void measure(void *ud, const char *text, int size, int bold, int *w, int *h) {
    (void)ud, (void)bold;
    long long cps = 0, sz = size;
    for (const unsigned char *p = (const unsigned char *)text; *p; p++) cps += (*p & 0xC0) != 0x80;
    /* in 64 bits and capped: any overflow the fuzzer finds is the layout's, not this */
    long long ww = cps * ((55 * sz + 99) / 100), hh = (117 * sz + 99) / 100;
    *w = (int)(ww < (1 << 28) ? ww : 1 << 28);
    *h = (int)(hh < (1 << 28) ? hh : 1 << 28);
}

/* the keys the key map knows (app_keys), then a few it does not */
static int fuzz_key(unsigned byte) {
    static const int unmapped[] = {'a', 'z', 'o', 'g'};
    int n = 0;
    const int *k = app_keys(&n);
    unsigned i = byte % (unsigned)(n + 4);
    return i < (unsigned)n ? k[i] : unmapped[i - (unsigned)n];
}

/* Whether byte offset at of text falls inside a UTF-8 character: after the lead
 * byte of a complete, valid sequence that reaches past it. Bytes that are not
 * valid UTF-8 (the field takes any) are characters of their own. */
static int inside_char(const char *text, int at) {
    const unsigned char *t = (const unsigned char *)text;
    for (int back = 1; back <= 3 && at - back >= 0; back++) {
        if ((t[at - back] & 0xC0) == 0x80) continue; /* a continuation: look further back */
        int lead = at - back;
        int len = t[lead] >= 0xF0 ? 4 : t[lead] >= 0xE0 ? 3 : t[lead] >= 0xC0 ? 2 : 1;
        if (back >= len) return 0;
        char seq[5] = {0};
        for (int k = 0; k < len; k++) {
            if (!t[lead + k]) return 0; /* cut short by the end of the text */
            seq[k] = (char)t[lead + k];
        }
        return fuzz_valid_utf8((const unsigned char *)seq);
    }
    return 0;
}

static void check(const app_state *s) {
    const mha_model *m = s->m;
    FUZZ_EXPECT(!s->quit, "quit");
    FUZZ_EXPECT(m->cfg.h >= 1 && m->cfg.d_model % m->cfg.h == 0, "h %d, d_model %d", m->cfg.h,
                m->cfg.d_model);
    FUZZ_EXPECT(m->n >= 1 && m->n <= MHA_MAX_N && m->n_real == s->toks.count, "n %d, n_real %d",
                m->n, m->n_real);
    FUZZ_EXPECT(s->look.focus >= 0 && s->look.focus <= m->cfg.h, "focus %d", s->look.focus);
    FUZZ_EXPECT(s->look.zoom >= APP_ZOOM_MIN - 1e-4f && s->look.zoom <= APP_ZOOM_MAX + 1e-4f,
                "zoom %g", (double)s->look.zoom);
    FUZZ_EXPECT(s->png_scale >= 1 && s->png_scale <= 4, "png scale %d", s->png_scale);
    FUZZ_EXPECT(isfinite(m->attn[0]) && isfinite(m->out[0]), "numbers not finite");
    size_t len = strlen(s->edit);
    FUZZ_EXPECT(len < APP_EDIT_MAX && s->edit_cursor >= 0 && (size_t)s->edit_cursor <= len,
                "cursor %d in %zu bytes", s->edit_cursor, len);
    /* inserting bytes that are not UTF-8 can join with their neighbours into a valid
       character around the cursor: checked for valid text only, unless
       MHAVIZ_FUZZ_STRICT=1 (tests/fuzz/crashes/) */
    static int strict = -1;
    if (strict < 0) strict = getenv("MHAVIZ_FUZZ_STRICT") != NULL;
    if (!strict && !fuzz_valid_utf8((const unsigned char *)s->edit)) return;
    if (inside_char(s->edit, s->edit_cursor)) {
        fprintf(stderr, "edit (%zu bytes):", len);
        for (size_t i = 0; i < len; i++) fprintf(stderr, " %02x", (unsigned char)s->edit[i]);
        fprintf(stderr, "\n");
    }
    FUZZ_EXPECT(!inside_char(s->edit, s->edit_cursor), "cursor %d inside a character",
                s->edit_cursor);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size > 2048) return 0;
    app_state *s = app_state_create(measure, NULL);
    FUZZ_EXPECT(s != NULL, "create");
    cli_options o;
    memset(&o, 0, sizeof o);
    o.theme = o.colormap = -1;
    tok_list toks = {0};
    char err[256];
    FUZZ_EXPECT(tok_split(&toks, samples_get(0)->text, MHA_MAX_N, NULL, err, sizeof err) == 0, "%s",
                err);
    mha_config cfg = {.h = 4, .d_model = 64, .seed = 1};
    FUZZ_EXPECT(app_state_init(s, &o, &toks, &cfg, err, sizeof err) == 0, "init: %s", err);
    const uint8_t *p = data;
    size_t left = size;
    char text[256];
    double now = 0.0;
    for (int step = 0; step < 64 && left > 0; step++) {
        app_action a = {.kind = ACT_NONE};
        unsigned op = fuzz_byte(&p, &left);
        switch (op % 8) {
        case 0:
        case 1:
        case 2: {
            int key = fuzz_key(fuzz_byte(&p, &left));
            a = app_key_action(s, key, (int)(op >> 3) & 3);
            break;
        }
        case 3: { /* typed or pasted bytes, any of them */
            size_t k = fuzz_byte(&p, &left) % sizeof text;
            if (k > left) k = left;
            memcpy(text, p, k);
            text[k] = '\0';
            p += k, left -= k;
            a.kind = (op >> 3) & 1 ? ACT_EDIT_PREEDIT : ACT_EDIT_INSERT;
            a.text = text;
            break;
        }
        case 4:
        case 5:
            a.kind = op % 8 == 4 ? ACT_HOVER : ACT_CLICK;
            a.x = (int)fuzz_u16(&p, &left) % 5000 - 500;
            a.y = (int)fuzz_u16(&p, &left) % 5000 - 500;
            break;
        case 6:
            a.kind = ACT_RESIZE;
            a.x = 1 + (int)(fuzz_u16(&p, &left) % 4096);
            a.y = 1 + (int)(fuzz_u16(&p, &left) % 4096);
            a.f = (op >> 3) & 1 ? 2.0f : 1.0f;
            break;
        default:
            a.kind = (app_action_kind)(1 + fuzz_byte(&p, &left) % (ACT_COUNT - 1));
            a.arg = (int)(int8_t)fuzz_byte(&p, &left);
            a.x = (int)fuzz_u16(&p, &left) % 4096;
            a.y = (int)fuzz_u16(&p, &left) % 4096;
            a.f = 1.0f;
            if (a.kind == ACT_EDIT_INSERT || a.kind == ACT_EDIT_PREEDIT) a.text = "x\xC3";
            break;
        }
        /* the window's own limits: it never quits here, and keeps shapes affordable */
        if (a.kind == ACT_QUIT) a.kind = ACT_NONE;
        if (a.kind == ACT_D_UP && s->cfg.d_model >= 256) a.kind = ACT_D_DOWN;
        if (a.kind == ACT_RESIZE && a.x < 1) a.x = 1;
        if (getenv("MHAVIZ_FUZZ_VERBOSE"))
            fprintf(stderr, "action %d x %d y %d arg %d text %s\n", a.kind, a.x, a.y, a.arg,
                    a.text ? "yes" : "no");
        app_apply(s, &a);
        app_take_save(s);
        now += fuzz_byte(&p, &left) * 50.0;
        app_tick(s, now);
        app_layout(s);
        check(s);
    }
    app_state_destroy(s);
    return 0;
}
