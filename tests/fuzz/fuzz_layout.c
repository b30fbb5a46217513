/* fuzz_layout.c: view_layout_compute and view_hit_test over any output size,
 * zoom, ui scale, h, d_model and n, panel, focus, step and page, a loaded model's
 * overview and next-token panel (hits inside their grid and rows), with a fake
 * text measurer (as tests/view_fixture.h). Built twice:
 * - fuzz_layout: every value in the range the app can give the layout (sizes
 *   1..32768, zoom 0.8..3, ui scale 0.5..8, h dividing d_model 1..4096, n 1..512):
 *   no crash, no undefined behaviour, hit tests inside the matrix; with
 *   MHAVIZ_FUZZ_STRICT=1 also every rectangle inside a picture of at least
 *   800x600 window pixels (off in CI until the finding in crashes/ is fixed);
 * - fuzz_layout_edges (FUZZ_EDGES): values just outside those ranges too (sizes
 *   0 and negative, huge zoom, h = 0, h not dividing d_model, n = 0, 1025): the
 *   layout is a public function, so it must not crash or overflow there either.
 *   Its CI run stays off until the findings in tests/fuzz/crashes/ are fixed. */
#include <math.h>
#include <string.h>

#include "fuzz.h"
#include "view.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_TOKENS 600

/* ceil(0.55 * size) per code point, ceil(1.17 * size) per line, as view_fixture.h */
static void measure(void *ud, const char *text, int size, int bold, int *w, int *h) {
    (void)ud, (void)bold;
    long long cps = 0, sz = size;
    for (const unsigned char *p = (const unsigned char *)text; *p; p++) cps += (*p & 0xC0) != 0x80;
    /* in 64 bits and capped: any overflow the fuzzer finds is the layout's, not this */
    long long ww = cps * ((55 * sz + 99) / 100), hh = (117 * sz + 99) / 100;
    *w = (int)(ww < (1 << 28) ? ww : 1 << 28);
    *h = (int)(hh < (1 << 28) ? hh : 1 << 28);
}

#ifndef FUZZ_EDGES
static int inside(view_rect r, int w, int h) {
    return r.w <= 0 || r.h <= 0 || (r.x >= 0 && r.y >= 0 && r.x + r.w <= w && r.y + r.h <= h);
}
#endif

static const int ladder[] = {1,  2,   3,   4,   6,   8,   12,  16,   24,   32,   48,   64,
                             96, 128, 192, 256, 384, 512, 768, 1024, 1536, 2048, 3072, 4096};

static int pick_size(unsigned v) {
#ifdef FUZZ_EDGES
    static const int edges[] = {0, -1, -32768, 1, 32768, 32769, 65536, 1 << 20, 2147483647};
    if ((v & 7) == 0) return edges[(v >> 3) % (sizeof edges / sizeof edges[0])];
#endif
    return 1 + (int)(v % 32768);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static const char *words[MAX_TOKENS];
    if (!words[0]) {
        static const char *const base[] = {
            "The",          "transformer",          "attends", ",", "Z\xC3\xBCrich",
            "\xE6\x9D\xB1", "internationalization", "x"};
        for (int i = 0; i < MAX_TOKENS; i++) words[i] = base[(i * 7 + 3) % 8];
    }
    const uint8_t *p = data;
    size_t left = size;
    view_state s;
    memset(&s, 0, sizeof s);
    s.width = pick_size(fuzz_u16(&p, &left) | fuzz_byte(&p, &left) << 16);
    s.height = pick_size(fuzz_u16(&p, &left) | fuzz_byte(&p, &left) << 16);
    unsigned zb = fuzz_byte(&p, &left), ub = fuzz_byte(&p, &left);
    s.look.zoom = 0.8f + 2.2f * (float)zb / 255.0f;
    s.ui_scale = 0.5f + 7.5f * (float)ub / 255.0f;
    int d = ladder[fuzz_byte(&p, &left) % (sizeof ladder / sizeof ladder[0])];
    int h = ladder[fuzz_byte(&p, &left) % (sizeof ladder / sizeof ladder[0])];
    while (d % h) h /= 2; /* h divides d: both are 2^k or 3 * 2^k */
    if (d % h) h = 1;
    int n = 1 + (int)(fuzz_u16(&p, &left) % 512);
#ifdef FUZZ_EDGES
    unsigned e = fuzz_byte(&p, &left);
    static const float zooms[] = {0.0f, -1.0f, 0.79f, 3.01f, 100.0f, 1e6f, 1e30f};
    if (e & 1) s.look.zoom = zooms[(e >> 4) % 7];
    if (e & 2) s.ui_scale = zooms[(e >> 5) % 7];
    if (e & 4) h = (e & 8) ? 0 : h + 1; /* h = 0, or one that need not divide d_model */
    if ((e & 0xC0) == 0x40) n = (e & 0x20) ? 0 : VIEW_MAX_N + 1;
    if ((e & 0xC0) == 0x80) d = (e & 0x20) ? 0 : 4097;
#endif
    unsigned flags = fuzz_byte(&p, &left);
    /* the layout reads only the layer's shape: no tensors */
    attn_layer layer;
    memset(&layer, 0, sizeof layer);
    layer.h = h;
    layer.d_model = d;
    layer.mask = flags & 1 ? ATTN_MASK_CAUSAL : ATTN_MASK_NONE;
    layer.scaled = !((flags >> 1) & 1);
    layer.n = n;
    layer.n_real = n;
    layer.d_k = h ? d / h : 0;
    layer.tokens = words;
    s.layer = &layer;
    s.sample_name = "fuzz";
    s.look.theme = (flags >> 2) & 1;
    s.figure = (flags >> 3) & 1;
    s.help = (flags >> 4) & 1;
    s.lesson = (flags >> 5) & 1;
    s.look.values = (flags >> 6) & 1;
    s.panel = (view_panel)(fuzz_byte(&p, &left) % 6);
    s.look.focus = h ? (int)(fuzz_u16(&p, &left) % (unsigned)(h + 1)) : 0;
    s.panel_head = h ? 1 + (int)(fuzz_byte(&p, &left) % (unsigned)h) : 1;
    s.look.step = (int)(fuzz_byte(&p, &left) % (VIEW_STEPS + 1));
    s.look.page = (int)(fuzz_u16(&p, &left) % 1024);
    s.hover_x = s.hover_y = -1;
    /* compare: the same view pinned beside it, with up to 8 settings named */
    static view_state pinned;
    static view_layout pinned_layout;
    static const char *const what[] = {"h = 1", "d_k = 64", "causal mask", "T = 0.25",
                                       "a much longer setting name than any chip has"};
    if (flags & 0x80) {
        pinned = s;
        s.pinned = &pinned;
        s.pinned_layout = &pinned_layout;
        s.compare_count = (int)(fuzz_byte(&p, &left) % (VIEW_COMPARE_MAX + 1));
        for (int i = 0; i < s.compare_count; i++)
            for (int k = 0; k < 2; k++) s.compare_what[i][k] = what[fuzz_byte(&p, &left) % 5];
    }

    /* a loaded model: the overview (open, or --panel model) of up to 64 x 32 heads
       and the next-token panel of 0..11 rows (11: one more than it shows); the
       layout reads their shapes and the probabilities only */
    static const float *maps[300];
    static view_overview ov;
    static view_next next;
    unsigned mflags = fuzz_byte(&p, &left);
    if (mflags & 1) {
        ov = (view_overview){"gpt2",
                             1 + fuzz_byte(&p, &left) % 64,
                             1 + fuzz_byte(&p, &left) % 32,
                             n,
                             maps,
                             words,
                             (int)fuzz_byte(&p, &left) % 70 - 2,
                             NULL,
                             0,
                             (int)(mflags >> 3) & 1,
                             0,
                             0,
                             0,
                             NULL};
#ifdef FUZZ_EDGES
        if (mflags & 8) ov.layers = (mflags & 16) ? 0 : 257;
        if (mflags & 32) ov.h = (mflags & 64) ? -1 : 300;
#endif
        s.overview = &ov;
        s.overview_open = (mflags >> 1) & 1;
        s.resplit = (mflags >> 7) & 1;
    }
    if (mflags & 4) {
        memset(&next, 0, sizeof next);
        next.k = (int)(fuzz_byte(&p, &left) % 12);
        for (int i = 0; i < VIEW_NEXT_MAX; i++) {
            next.token[i] = words[i];
            next.p[i] = (float)fuzz_byte(&p, &left) / 255.0f;
            next.p_full[i] = (float)fuzz_byte(&p, &left) / 127.0f - 1.0f;
#ifdef FUZZ_EDGES
            if (next.p[i] > 0.99f) next.p[i] = NAN;
            if (next.p_full[i] > 0.99f) next.p_full[i] = INFINITY;
#endif
        }
        next.after = words[0];
        next.cut = (int)(mflags >> 6) & 1;
        if (mflags & 8) { /* an encoder's fill panel: its title, headings and note */
            next.title = words[1];
            for (int i = 0; i < VIEW_NEXT_MAX; i += 1 + (int)(mflags >> 5) % 4)
                next.group[i] = words[2];
            next.note = (mflags & 16) ? words[3] : NULL;
        }
        s.next = &next;
    }

    static int verbose = -1;
    if (verbose < 0) verbose = getenv("MHAVIZ_FUZZ_VERBOSE") != NULL;
    if (verbose)
        fprintf(stderr,
                "layout %dx%d zoom %g ui %g d_model %d h %d n %d mask %d panel %d focus %d "
                "panel_head %d step %d page %d figure %d help %d lesson %d values %d\n",
                s.width, s.height, (double)s.look.zoom, (double)s.ui_scale, d, h, n,
                (int)layer.mask, s.panel, s.look.focus, s.panel_head, s.look.step, s.look.page,
                s.figure, s.help, s.lesson, s.look.values);
    static view_layout L;
    view_layout_compute(&L, &s, measure, NULL);
    /* the pointer anywhere, also outside */
    for (int i = 0; i < 4; i++) {
        int x = (int)(fuzz_u16(&p, &left) % 40000) - 1000;
        int y = (int)(fuzz_u16(&p, &left) % 40000) - 1000;
        view_hit hit = view_hit_test(&L, &s, x, y);
        if (hit.kind == HIT_HEAD_CELL)
            FUZZ_EXPECT(hit.row >= 0 && hit.row < n && hit.col >= 0 && hit.col < n,
                        "cell (%d, %d) of %d", hit.row, hit.col, n);
        if (hit.kind == HIT_OVERVIEW)
            FUZZ_EXPECT(s.overview && hit.row >= 0 && hit.row < ov.layers && hit.head >= 0 &&
                            hit.head < ov.h,
                        "overview cell (layer %d, head %d) of %d x %d", hit.row, hit.head,
                        ov.layers, ov.h);
        if (hit.kind == HIT_NEXT)
            FUZZ_EXPECT(s.next && hit.row >= 0 && hit.row < next.k, "next row %d of %d", hit.row,
                        next.k);
    }
#ifndef FUZZ_EDGES
    const int w = s.width, ht = s.height;
    /* the window's promise: from 800x600 window pixels, at any zoom. Checked only
       with MHAVIZ_FUZZ_STRICT=1 until the layout keeps it (tests/fuzz/crashes/) */
    static int strict = -1;
    if (strict < 0) strict = getenv("MHAVIZ_FUZZ_STRICT") != NULL;
    if (strict && w >= 800.0f * s.ui_scale && ht >= 600.0f * s.ui_scale) {
        FUZZ_EXPECT(inside(L.status, w, ht), "status line outside %dx%d", w, ht);
        FUZZ_EXPECT(inside(L.formula, w, ht), "formula strip outside %dx%d", w, ht);
        for (int b = 0; b < BTN_COUNT; b++)
            if (L.buttons[b].present)
                FUZZ_EXPECT(inside(L.buttons[b].r, w, ht), "button %d outside %dx%d", b, w, ht);
        for (int i = 0; i < L.shown_heads && i < VIEW_MAX_VISIBLE; i++)
            FUZZ_EXPECT(inside(L.heads[i].map, w, ht), "head %d (%d, %d, %d x %d) outside %dx%d", i,
                        L.heads[i].map.x, L.heads[i].map.y, L.heads[i].map.w, L.heads[i].map.h, w,
                        ht);
    }
    FUZZ_EXPECT(L.shown_heads >= 0 && L.shown_heads <= VIEW_MAX_VISIBLE, "shown %d", L.shown_heads);
#endif
    return 0;
}
