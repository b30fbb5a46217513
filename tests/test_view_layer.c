/* test_view_layer.c: the view draws an attn_layer, whatever made it. A layer built
 * here by hand (fixed small tensors, no model: Q, K, V, the heads, Concat, W^O and
 * MultiHead all NULL, as a trained layer may come) is laid out, drawn and hit-tested
 * in every panel, focus, step and mode without touching a missing tensor (ASan
 * builds make any such read fatal); what is missing is not drawn, and a cell's
 * tooltip shows the layer's own scaled score and weight, checked against the
 * numbers put in here; a Qwen3-shaped layer's focus view draws its Q, K and V by head. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "view_fixture.h"
#include "view_internal.h"

#define N 6      /* positions: five tokens and one [PAD] */
#define N_REAL 5 /* the text */
#define H 2      /* heads */
#define D 4      /* d_model; d_k = 2 */

typedef struct {
    attn_layer L;
    float scores[H * N * N], attn[H * N * N];
    float x[N * D], w_o[D * D]; /* for the variant that has them */
    const char *tokens[N];
    const char *notes[H];
} hand_layer;

/* Causal, padded, head 2 off; scores 0.125 (1 + 16 i + 4 r + c) - 1.5 where a key
 * is visible (so no score equals its weight), -inf where masked; each row's
 * weights uniform over its visible keys. */
static void hand_make(hand_layer *hl) {
    static const char *const words[N] = {"alpha", "beta", "gamma", "delta", "epsilon", "[PAD]"};
    memset(hl, 0, sizeof *hl);
    attn_layer *L = &hl->L;
    L->n = N, L->n_real = N_REAL, L->h = H, L->d_model = D, L->d_k = D / H;
    L->layers = 1;
    L->mask = ATTN_MASK_CAUSAL;
    L->scaled = 1;
    L->temperature = 1.0f;
    L->scale = attn_scale(L->d_k, 1, 1.0f);
    L->seed = 42;
    for (int i = 0; i < N; i++) hl->tokens[i] = words[i];
    hl->notes[0] = "left-leaning";
    hl->notes[1] = NULL;
    L->tokens = hl->tokens;
    L->head_note = hl->notes;
    L->off[0] = UINT64_C(1) << 1; /* head 2 */
    for (int i = 0; i < H; i++)
        for (int r = 0; r < N; r++) {
            const int visible =
                (r < N_REAL - 1 ? r : N_REAL - 1) + 1; /* keys 0 .. min(r, n_real-1) */
            for (int c = 0; c < N; c++) {
                const size_t at = ((size_t)i * N + r) * N + c;
                const int seen = c <= r && c < N_REAL;
                hl->scores[at] = seen ? 0.125f * (float)(1 + 16 * i + 4 * r + c) - 1.5f : -INFINITY;
                hl->attn[at] = seen ? 1.0f / (float)visible : 0.0f;
            }
        }
    L->scores = hl->scores;
    L->attn = hl->attn;
}

/* Whether some text command of dl contains needle. */
static int has_text(const draw_list *dl, const char *needle) {
    for (int i = 0; i < dl->count; i++)
        if (dl->cmds[i].kind == DC_TEXT && strstr(draw_cmd_text(dl, &dl->cmds[i]), needle))
            return 1;
    return 0;
}

/* Whether some text command starting inside r contains needle. */
static int text_in(const draw_list *dl, view_rect r, const char *needle) {
    for (int i = 0; i < dl->count; i++) {
        const draw_cmd *c = &dl->cmds[i];
        if (c->kind == DC_TEXT && c->x >= r.x && c->x < r.x + r.w && c->y >= r.y &&
            c->y < r.y + r.h && strstr(draw_cmd_text(dl, c), needle))
            return 1;
    }
    return 0;
}

/* Whether an image is drawn into r exactly. */
static int image_in(const draw_list *dl, view_rect r) {
    for (int i = 0; i < dl->count; i++) {
        const draw_cmd *c = &dl->cmds[i];
        if (c->kind == DC_IMAGE && c->x == r.x && c->y == r.y && c->w == r.w && c->h == r.h)
            return 1;
    }
    return 0;
}

/* Lays s out and draws it; then, for the first pointer position found over each
 * kind of thing the hit test names (a grid every 5 px over the window), draws it
 * again with the pointer there, so each tooltip and outline is drawn once. */
static void sweep(view_state *s, view_layout *L, view_cache *cache, draw_list *dl) {
    view_layout_compute(L, s, fx_measure, NULL);
    view_render(dl, cache, L, s, fx_measure, NULL);
    int seen[16][5] = {{0}};
    for (int y = 0; y < s->height; y += 5)
        for (int x = 0; x < s->width; x += 5) {
            view_hit hit = view_hit_test(L, s, x, y);
            if (hit.kind == HIT_NONE || hit.kind == HIT_BUTTON) continue;
            const int which =
                hit.kind == HIT_QKV && hit.which >= 0 && hit.which < 4 ? hit.which : 4;
            EXPECT(hit.kind != HIT_HEAD_CELL || (hit.head >= 0 && hit.head < H && hit.row >= 0 &&
                                                 hit.row < N && hit.col >= 0 && hit.col < N),
                   "(%d, %d): expected a cell inside the layer, got head %d (%d, %d)", x, y,
                   hit.head, hit.row, hit.col);
            if (seen[hit.kind][which]++) continue;
            s->hover_x = x, s->hover_y = y;
            view_render(dl, cache, L, s, fx_measure, NULL);
        }
    s->hover_x = s->hover_y = -1;
}

/* Mode k of 24 of the every-mode sweep: values, contrast and theme vary; then the
 * focused head and its nine stages, the lesson, the difference, a figure, the
 * presentation, the three single-panel figures, the text field, help, a notice,
 * the view compared with itself (pinned, laid out into PL) and a page past the
 * last. */
static void set_mode(view_state *s, int mode, view_state *pinned, view_layout *PL) {
    s->look.values = mode & 1;
    s->look.contrast = mode % 3;
    s->look.theme = (mode >> 2) & 1;
    if (mode >= 2 && mode < 12) { /* the focused head, and its nine stages */
        s->look.focus = 1 + (mode & 1);
        s->look.step = mode - 2;
    }
    if (mode == 12) s->lesson = 1;
    if (mode == 13) s->look.diff = 1;
    if (mode == 14) s->figure = 1;
    if (mode == 15) s->look.present = 1;
    if (mode == 16) s->panel = VIEW_PANEL_HEAD, s->panel_head = 1, s->figure = 1;
    if (mode == 17) s->panel = VIEW_PANEL_EQUATION, s->figure = 1;
    if (mode == 18) s->panel = VIEW_PANEL_STEPS, s->panel_head = 2, s->figure = 1;
    if (mode == 19) s->editing = 1, s->edit_text = "alpha beta", s->edit_tokens = 2;
    if (mode == 20) s->help = 1;
    if (mode == 21) s->toast = "saved";
    if (mode == 22) { /* compared with itself */
        *pinned = *s;
        s->pinned = pinned;
        s->pinned_layout = PL;
    }
    if (mode == 23) s->look.page = 3; /* past the last page */
}

static void test_hand_layer_every_mode(void **st) {
    (void)st;
    fx_reset();
    static hand_layer hl;
    view_cache *cache = view_cache_create();
    assert_non_null(cache);
    draw_list dl;
    draw_list_init(&dl);
    static view_layout L, PL;
    static const int sizes[][2] = {{1280, 800}, {640, 480}, {1080, 1920}};
    /* variants: 0 the weights and scores only, 1 no scores, 2 no weights, 3 no
       tokens and no notes, 4 also X and W^O */
    for (int variant = 0; variant < 5; variant++)
        for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++)
            for (int mode = 0; mode < 24; mode++) {
                hand_make(&hl);
                if (variant == 1) hl.L.scores = NULL;
                if (variant == 2) hl.L.attn = NULL;
                if (variant == 3) hl.L.tokens = NULL, hl.L.head_note = NULL;
                if (variant == 4) {
                    for (int i = 0; i < N * D; i++) hl.x[i] = 0.25f * (float)(i % 7) - 0.5f;
                    for (int i = 0; i < D * D; i++) hl.w_o[i] = 0.125f * (float)(i % 5) - 0.25f;
                    hl.L.x = hl.x, hl.L.w_o = hl.w_o;
                }
                view_state s;
                memset(&s, 0, sizeof s);
                s.width = sizes[si][0], s.height = sizes[si][1];
                s.layer = &hl.L;
                s.sample_name = "hand-built";
                s.hover_x = s.hover_y = -1;
                s.data_version = 1 + (unsigned long)mode + 100 * (unsigned long)variant;
                view_state pinned;
                set_mode(&s, mode, &pinned, &PL);
                snprintf(fx_where, sizeof fx_where, "variant %d, %dx%d mode %d", variant, s.width,
                         s.height, mode);
                sweep(&s, &L, cache, &dl);
                /* what the layer lacks is not drawn; what it has is */
                if (L.concat.map.w > 0 && !s.pinned) {
                    EXPECT(!image_in(&dl, L.concat.map) && !image_in(&dl, L.out.map),
                           "%s: expected no Concat or MultiHead image (the layer has none)",
                           fx_where);
                    EXPECT(image_in(&dl, L.w_o.map) == (variant == 4),
                           "%s: expected W^O drawn exactly when the layer has it", fx_where);
                }
                for (int q = 0; q < 4 && L.focus; q++)
                    EXPECT(!image_in(&dl, L.qkv[q].map),
                           "%s: expected no image for focus matrix %d (the layer has none)",
                           fx_where, q);
                if (s.panel == VIEW_PANEL_ALL && !s.look.focus && !s.pinned && L.shown_heads > 0)
                    EXPECT(
                        image_in(&dl, L.heads[0].map) == (variant != 2),
                        "%s: expected the first head's weights drawn exactly when there are some",
                        fx_where);
            }
    draw_list_free(&dl);
    view_cache_destroy(cache);
    fx_finish("hand-built layer, every mode");
}

/* The pointer at the centre of cell (r, c) of grid slot `slot`. */
static void point_at(const view_layout *L, int slot, int r, int c, int *x, int *y) {
    const view_rect m = L->heads[slot].map;
    *x = m.x + (int)((2L * c + 1) * m.w / (2 * N));
    *y = m.y + (int)((2L * r + 1) * m.h / (2 * N));
}

static void test_tooltip_reads_the_layer(void **st) {
    (void)st;
    fx_reset();
    static hand_layer hl;
    hand_make(&hl);
    view_cache *cache = view_cache_create();
    assert_non_null(cache);
    draw_list dl;
    draw_list_init(&dl);
    static view_layout L;
    view_state s;
    memset(&s, 0, sizeof s);
    s.width = 1280, s.height = 800;
    s.layer = &hl.L;
    s.sample_name = "hand-built";
    s.hover_x = s.hover_y = -1;
    s.data_version = 1;
    view_layout_compute(&L, &s, fx_measure, NULL);
    EXPECT_INT("both heads on one page", H, L.shown_heads);
    /* every visible cell of both heads: its tooltip's score is scores[i][r][c] */
    for (int i = 0; i < H && i < L.shown_heads; i++)
        for (int r = 0; r < N; r++)
            for (int c = 0; c < N; c++) {
                int x, y;
                point_at(&L, i, r, c, &x, &y);
                view_hit hit = view_hit_test(&L, &s, x, y);
                snprintf(fx_where, sizeof fx_where, "head %d cell (%d, %d)", i + 1, r, c);
                EXPECT(hit.kind == HIT_HEAD_CELL && hit.head == i && hit.row == r && hit.col == c,
                       "%s: expected that cell hit, got kind %d head %d (%d, %d)", fx_where,
                       hit.kind, hit.head, hit.row, hit.col);
                s.hover_x = x, s.hover_y = y;
                view_render(&dl, cache, &L, &s, fx_measure, NULL);
                const size_t at = ((size_t)i * N + r) * N + c;
                char want[64], weight[64];
                snprintf(weight, sizeof weight, "weight %.3f", (double)hl.attn[at]);
                EXPECT(has_text(&dl, weight), "%s: expected the tooltip line \"%s\"", fx_where,
                       weight);
                if (c <= r && c < N_REAL) {
                    /* the number put in, written out here (not read back from the layer) */
                    const double score = 0.125 * (1 + 16 * i + 4 * r + c) - 1.5;
                    snprintf(want, sizeof want, "scaled score %.3f", score);
                    EXPECT(has_text(&dl, want), "%s: expected the tooltip line \"%s\"", fx_where,
                           want);
                } else {
                    EXPECT(has_text(&dl, "scaled score \xE2\x88\x92\xE2\x88\x9E"),
                           "%s: expected a masked score shown as -inf", fx_where);
                }
                /* the tokens are the layer's own, [PAD] too */
                char names[128];
                snprintf(names, sizeof names, "query \xE2\x80\x9C%s\xE2\x80\x9D", hl.tokens[r]);
                EXPECT(has_text(&dl, names), "%s: expected \"%s\" in the tooltip", fx_where, names);
            }
    draw_list_free(&dl);
    view_cache_destroy(cache);
    fx_finish("tooltip reads the layer");
}

/* The tooltip of an unscaled layer and of one without scores; the heads' titles
 * carry the layer's notes and off set. */
static void test_tooltip_variants(void **st) {
    (void)st;
    fx_reset();
    static hand_layer hl;
    hand_make(&hl);
    view_cache *cache = view_cache_create();
    assert_non_null(cache);
    draw_list dl;
    draw_list_init(&dl);
    static view_layout L;
    view_state s;
    memset(&s, 0, sizeof s);
    s.width = 1280, s.height = 800;
    s.layer = &hl.L;
    s.sample_name = "hand-built";
    s.data_version = 1;
    view_layout_compute(&L, &s, fx_measure, NULL);
    /* an unscaled layer says so */
    hl.L.scaled = 0;
    int x, y;
    point_at(&L, 0, 2, 1, &x, &y);
    s.hover_x = x, s.hover_y = y;
    view_render(&dl, cache, &L, &s, fx_measure, NULL);
    snprintf(fx_where, sizeof fx_where, "unscaled layer");
    char unscaled[64];
    snprintf(unscaled, sizeof unscaled, "unscaled score %.3f", 0.125 * (1 + 4 * 2 + 1) - 1.5);
    EXPECT(has_text(&dl, unscaled), "%s: expected \"%s\"", fx_where, unscaled);
    hl.L.scaled = 1;
    /* without scores the weight is still told, the score line is not shown */
    hl.L.scores = NULL;
    view_render(&dl, cache, &L, &s, fx_measure, NULL);
    snprintf(fx_where, sizeof fx_where, "layer without scores");
    EXPECT(has_text(&dl, "weight 0.333") && !has_text(&dl, "score"),
           "%s: expected the weight and no score line", fx_where);
    hl.L.scores = hl.scores;
    /* the head's note and its off state are the layer's */
    s.hover_x = s.hover_y = -1;
    view_render(&dl, cache, &L, &s, fx_measure, NULL);
    snprintf(fx_where, sizeof fx_where, "head titles");
    EXPECT(text_in(&dl, L.heads[0].title, "left-leaning") && !text_in(&dl, L.heads[0].title, "off"),
           "%s: expected head 1's note in its title, and head 1 on", fx_where);
    EXPECT(text_in(&dl, L.heads[1].title, "off") && !text_in(&dl, L.heads[1].title, "left"),
           "%s: expected head 2 said to be off, with no note", fx_where);
    draw_list_free(&dl);
    view_cache_destroy(cache);
    fx_finish("tooltip variants");
}

/* A layer the view cannot lay out (d_k not d_model / h beside a tensor of h d_k
 * columns, n past the limit, no heads, ...) draws none of its tensors and hits
 * nothing but the buttons. (d_k not d_model / h with no such tensor is a loaded
 * model's head_dim: drawn, test_model_open.) */
static void test_inconsistent_layer(void **st) {
    (void)st;
    fx_reset();
    static hand_layer hl;
    view_cache *cache = view_cache_create();
    assert_non_null(cache);
    draw_list dl;
    draw_list_init(&dl);
    static view_layout L;
    for (int k = 0; k < 5; k++) {
        hand_make(&hl);
        if (k == 0) hl.L.d_k = 3, hl.L.q = hl.scores; /* Q would be read as (n, h 3) */
        if (k == 1) hl.L.n = VIEW_MAX_N + 1;
        if (k == 2) hl.L.h = 0;
        if (k == 3) hl.L.n_real = N + 1;
        if (k == 4) hl.L.d_model = 5, hl.L.q = hl.scores;
        view_state s;
        memset(&s, 0, sizeof s);
        s.width = 800, s.height = 600;
        s.layer = &hl.L;
        s.hover_x = s.hover_y = -1;
        view_layout_compute(&L, &s, fx_measure, NULL);
        view_render(&dl, cache, &L, &s, fx_measure, NULL);
        snprintf(fx_where, sizeof fx_where, "inconsistent layer %d", k);
        int images = 0;
        for (int i = 0; i < dl.count; i++) images += dl.cmds[i].kind == DC_IMAGE;
        EXPECT_INT("nothing of the layer drawn", 0, images);
        for (int y = 0; y < s.height; y += 7)
            for (int x = 0; x < s.width; x += 7) {
                view_hit hit = view_hit_test(&L, &s, x, y);
                EXPECT(hit.kind == HIT_NONE || hit.kind == HIT_BUTTON,
                       "%s (%d, %d): expected nothing to hit, got kind %d", fx_where, x, y,
                       hit.kind);
            }
    }
    draw_list_free(&dl);
    view_cache_destroy(cache);
    fx_finish("inconsistent layer");
}

/* Whether some fill command lies inside r (a head band; not a panel behind it). */
static int fill_inside(const draw_list *dl, view_rect r) {
    for (int i = 0; i < dl->count; i++) {
        const draw_cmd *c = &dl->cmds[i];
        if (c->kind == DC_FILL && c->w > 0 && c->h > 0 && c->x >= r.x && c->y >= r.y &&
            c->x + c->w <= r.x + r.w && c->y + c->h <= r.y + r.h)
            return 1;
    }
    return 0;
}

/* A layer without Concat or W^O (the hand layer; a loaded model whose h head_dim is
 * not d_model, where Concat is n x h d_k) draws no head bands over empty frames: a
 * note in their place says why, and MultiHead, where the layer has it, is drawn. */
static void test_equation_without_product(void **st) {
    (void)st;
    fx_reset();
    static hand_layer hl;
    view_cache *cache = view_cache_create();
    assert_non_null(cache);
    draw_list dl;
    draw_list_init(&dl);
    static view_layout L;
    for (int k = 0; k < 2; k++) {
        hand_make(&hl);
        if (k == 1) { /* head_dim 3: h d_k = 6, d_model 4; MultiHead (n, d_model) given */
            hl.L.d_k = 3;
            hl.L.scale = attn_scale(3, 1, 1.0f);
            for (int i = 0; i < N * D; i++) hl.x[i] = 0.25f * (float)(i % 7) - 0.5f;
            hl.L.out = hl.L.out_full = hl.x;
        }
        view_state s;
        memset(&s, 0, sizeof s);
        s.width = 1200, s.height = 700;
        s.layer = &hl.L;
        s.hover_x = s.hover_y = -1;
        view_layout_compute(&L, &s, fx_measure, NULL);
        view_render(&dl, cache, &L, &s, fx_measure, NULL);
        snprintf(fx_where, sizeof fx_where, "equation without Concat, variant %d", k);
        EXPECT(L.concat.map.w > 0, "%s: expected the equation laid out", fx_where);
        EXPECT(!fill_inside(&dl, L.concat_band) && !fill_inside(&dl, L.wo_band),
               "%s: expected no head bands beside matrices not drawn", fx_where);
        EXPECT(has_text(&dl, "not drawn"), "%s: expected the note saying why", fx_where);
        if (k == 0)
            EXPECT(has_text(&dl, "does not keep"), "%s: expected the source named", fx_where);
        if (k == 1) {
            EXPECT(has_text(&dl, "6 \xE2\x89\xA0") && has_text(&dl, "= 4),"),
                   "%s: expected h d_k = 6 against d_model = 4 in the note", fx_where);
            EXPECT(image_in(&dl, L.out.map), "%s: expected MultiHead drawn", fx_where);
        }
    }
    draw_list_free(&dl);
    view_cache_destroy(cache);
    fx_finish("equation without product");
}

/* Whether the texts of dl, one space between, hold needle (a note wraps its lines). */
static int has_words(const draw_list *dl, const char *needle) {
    static char all[1 << 16];
    size_t at = 0;
    for (int i = 0; i < dl->count; i++)
        if (dl->cmds[i].kind == DC_TEXT)
            at += (size_t)snprintf(all + at, at < sizeof all ? sizeof all - at : 0, "%s ",
                                   draw_cmd_text(dl, &dl->cmds[i]));
    return at < sizeof all && strstr(all, needle) != NULL;
}

/* Whether some image or text command starts inside r. */
static int drawn_in(const draw_list *dl, view_rect r) {
    for (int i = 0; i < dl->count; i++) {
        const draw_cmd *c = &dl->cmds[i];
        if ((c->kind == DC_IMAGE || (c->kind == DC_TEXT && draw_cmd_text(dl, c)[0])) &&
            c->x >= r.x && c->x < r.x + r.w && c->y >= r.y && c->y < r.y + r.h)
            return 1;
    }
    return 0;
}

/* Every stage of the step-through draws its matrices or says why not, in their place,
 * never an empty frame: the hand layer (no Q, K, V, heads, Concat or W^O: "not kept"),
 * a loaded model's shape whose h head_dim (2 x 3) is not d_model (4) (Q and Concat n x
 * 6, W^O 6 x 4), and one whose two heads share one K/V head (Q and Concat d_model
 * wide, no K or V), in the figure's grid and one stage at a time, for both heads. */
static void test_steps_never_empty(void **st) {
    (void)st;
    fx_reset();
    static hand_layer hl;
    static float q[N * D], heads[H * N * 3], concat[N * D];
    for (int i = 0; i < N * D; i++) q[i] = concat[i] = 0.1f * (float)(i % 9) - 0.4f;
    for (int i = 0; i < H * N * 3; i++) heads[i] = 0.2f * (float)(i % 5) - 0.4f;
    view_cache *cache = view_cache_create();
    assert_non_null(cache);
    draw_list dl;
    draw_list_init(&dl);
    static view_layout L;
    static const char *const says[3][2] = {
        {"this layer's source does not keep", "does not keep"},
        {"Q is 6 \xC3\x97 6 (h \xC2\xB7 d\xE2\x82\x96 = 2 \xC2\xB7 3)",
         "Concat is 6 \xC3\x97 6 (h \xC2\xB7 d\xE2\x82\x96 = 2 \xC2\xB7 3 \xE2\x89\xA0 "
         "d_model = 4)"},
        {"reads K/V head 1, shared by heads 1\xE2\x80\x93"
         "2",
         "K and V are not drawn here"}};
    for (int v = 0; v < 3; v++) {
        hand_make(&hl);
        for (int i = 0; i < N * D; i++) hl.x[i] = 0.25f * (float)(i % 7) - 0.5f;
        for (int i = 0; i < D * D; i++) hl.w_o[i] = 0.1f * (float)(i % 5) - 0.2f;
        if (v > 0) hl.L.x = hl.x, hl.L.out = hl.L.out_full = hl.x, hl.L.heads = heads;
        if (v == 1) hl.L.d_k = 3, hl.L.scale = attn_scale(3, 1, 1.0f);
        if (v == 2) hl.L.h_kv = 1, hl.L.q = q, hl.L.concat = concat, hl.L.w_o = hl.w_o;
        for (int head = 1; head <= H; head++)
            for (int step = 0; step <= 9; step++) { /* 0: the grid, else that stage alone */
                view_state s;
                memset(&s, 0, sizeof s);
                s.width = 1400, s.height = 800;
                s.layer = &hl.L;
                s.hover_x = s.hover_y = -1;
                if (step == 0)
                    s.panel = VIEW_PANEL_STEPS, s.panel_head = head, s.figure = 1;
                else
                    s.look.focus = head, s.look.step = step;
                view_layout_compute(&L, &s, fx_measure, NULL);
                view_render(&dl, cache, &L, &s, fx_measure, NULL);
                const view_steps *S = &L.steps;
                snprintf(fx_where, sizeof fx_where, "variant %d, head %d, %s %d", v, head,
                         step ? "stage" : "grid", step);
                EXPECT(S->shown && S->count == 9, "%s: expected the nine stages laid out",
                       fx_where);
                for (int k = 0; step == 0 && k < S->count; k++) {
                    const view_rect c = S->cell[k], t = S->title[k];
                    const int top = t.y + t.h;
                    EXPECT(drawn_in(&dl, (view_rect){c.x, top, c.w, c.y + c.h - top}),
                           "%s: stage %d's cell is empty", fx_where, k + 1);
                }
                if (step > 0) {
                    view_rect r = S->big[0].map;
                    for (int b = 1; b < S->bigs; b++) /* across every box of the stage */
                        r.w = S->big[b].map.x + S->big[b].map.w - r.x;
                    EXPECT(drawn_in(&dl, r), "%s: the stage's matrices neither drawn nor said",
                           fx_where);
                }
                if (step == 0)
                    for (int w = 0; w < 2; w++)
                        EXPECT(has_words(&dl, says[v][w]), "%s: expected \"%s\"", fx_where,
                               says[v][w]);
            }
    }
    draw_list_free(&dl);
    view_cache_destroy(cache);
    fx_finish("steps never empty");
}

/* The image drawn into r exactly, or NULL. */
static const draw_image *image_at(const draw_list *dl, view_rect r) {
    for (int i = 0; i < dl->count; i++) {
        const draw_cmd *c = &dl->cmds[i];
        if (c->kind == DC_IMAGE && c->x == r.x && c->y == r.y && c->w == r.w && c->h == r.h)
            return &dl->images[c->img];
    }
    return NULL;
}

/* A Qwen3-shaped layer in the focus view: head_dim 3 with d_model 4 and 2 heads (h d_k
 * = 6), both heads reading one K/V head, so the layer's d_model-wide Q, K and V are
 * NULL and only its Q, K and V by head are kept. Q_i, K_g, V_g and head_i are drawn,
 * K and V named by the K/V head; both heads show the same K and V and different Qs;
 * a K cell's tooltip gives that K/V head's number. */
static void test_focus_own_shapes(void **st) {
    (void)st;
    fx_reset();
    static hand_layer hl;
    static float q[N * H * 3], kv[N * 3], heads[H * N * 3];
    for (int i = 0; i < N * H * 3; i++) q[i] = 0.1f * (float)(i % 11) - 0.5f;
    for (int i = 0; i < N * 3; i++) kv[i] = 0.15f * (float)(i % 7) - 0.45f;
    for (int i = 0; i < H * N * 3; i++) heads[i] = 0.2f * (float)(i % 5) - 0.4f;
    hand_make(&hl);
    hl.L.d_k = 3, hl.L.scale = attn_scale(3, 1, 1.0f), hl.L.h_kv = 1;
    hl.L.heads = heads, hl.L.q_heads = q, hl.L.k_heads = hl.L.v_heads = kv;
    view_cache *cache = view_cache_create();
    assert_non_null(cache);
    draw_list dl;
    draw_list_init(&dl);
    static view_layout L;
    static rgba k_px[2][64 * 64], q_px[2][64 * 64];
    int k_n[2] = {0, 0}, q_n[2] = {0, 0};
    for (int head = 1; head <= H; head++) {
        view_state s;
        memset(&s, 0, sizeof s);
        s.width = 1280, s.height = 800;
        s.layer = &hl.L;
        s.hover_x = s.hover_y = -1;
        s.look.focus = head;
        snprintf(fx_where, sizeof fx_where, "head %d in focus", head);
        view_layout_compute(&L, &s, fx_measure, NULL);
        view_render(&dl, cache, &L, &s, fx_measure, NULL);
        static const char *const names[4] = {"Q", "K", "V", "head"};
        for (int i = 0; i < 4; i++)
            EXPECT(image_in(&dl, L.qkv[i].map), "%s: %s not drawn", fx_where, names[i]);
        const draw_image *k = image_at(&dl, L.qkv[1].map), *qi = image_at(&dl, L.qkv[0].map);
        if (k && qi && k->w * k->h <= 64 * 64 && qi->w * qi->h <= 64 * 64) {
            k_n[head - 1] = k->w * k->h, q_n[head - 1] = qi->w * qi->h;
            memcpy(k_px[head - 1], k->px, (size_t)k_n[head - 1] * sizeof(rgba));
            memcpy(q_px[head - 1], qi->px, (size_t)q_n[head - 1] * sizeof(rgba));
        }
        /* the tooltip of K's first cell: K/V head 1's first number, named K_1 */
        const view_rect m = L.qkv[1].map;
        s.hover_x = m.x + 1, s.hover_y = m.y + 1;
        view_render(&dl, cache, &L, &s, fx_measure, NULL);
        char v[32], want[64];
        view_format_number(v, sizeof v, kv[0]);
        snprintf(want, sizeof want, "K\xE2\x82\x81[1, 1] = %s", v);
        EXPECT(has_text(&dl, want), "%s: expected the tooltip \"%s\"", fx_where, want);
    }
    EXPECT(k_n[0] > 0 && k_n[0] == k_n[1] &&
               memcmp(k_px[0], k_px[1], (size_t)k_n[0] * sizeof(rgba)) == 0,
           "heads 1 and 2 read one K/V head: expected the same K drawn for both");
    EXPECT(q_n[0] > 0 && q_n[0] == q_n[1] &&
               memcmp(q_px[0], q_px[1], (size_t)q_n[0] * sizeof(rgba)) != 0,
           "expected each head's own Q");
    draw_list_free(&dl);
    view_cache_destroy(cache);
    fx_finish("focus view on a layer's own shapes");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hand_layer_every_mode),
        cmocka_unit_test(test_tooltip_reads_the_layer),
        cmocka_unit_test(test_tooltip_variants),
        cmocka_unit_test(test_inconsistent_layer),
        cmocka_unit_test(test_equation_without_product),
        cmocka_unit_test(test_steps_never_empty),
        cmocka_unit_test(test_focus_own_shapes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
