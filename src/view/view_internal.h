/* view_internal.h: what the files of src/view share with each other but not with
 * the program (its API is view.h), grouped by the defining file. Calls only go down:
 * render.c -> panels.c (-> lines.c), overlays.c, overview.c, next_panel.c -> heatmap.c,
 * colorbar.c -> labels.c, theme.c
 * (render.c also calls hit.c); layout.c -> labels.c; hit.c calls none of them (it
 * only uses the inline view_layer_ok and the overview's cells, view_overview_cell
 * of layout_overview.c, which calls nothing). */
#ifndef MHAVIZ_VIEW_INTERNAL_H
#define MHAVIZ_VIEW_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "view.h"

/* Everything the drawing code of one frame needs, built once by view_render. */
typedef struct {
    draw_list *dl;
    view_cache *cache;
    const view_layout *L;
    const view_state *s;
    view_measure_fn measure;
    void *ud;
    view_theme th;
} view_ctx;

/* --- the layer ------------------------------------------------------------------ */

/* 1 if the view can lay out and draw l: 1 <= n <= VIEW_MAX_N, 0 <= n_real <= n, and
 * h heads of d_k = d_model / h columns, or (a loaded model whose head_dim is not
 * d_model / h) any d_k with no tensor of h d_k columns given (the heads, (h, n, d_k),
 * are read by d_k alone). The tensors may each be NULL (not shown). */
static inline int view_layer_ok(const attn_layer *l) {
    return l && l->n >= 1 && l->n <= VIEW_MAX_N && l->n_real >= 0 && l->n_real <= l->n &&
           l->h >= 1 && l->h <= ATTN_LAYER_MAX_HEADS && l->d_model >= 1 &&
           ((l->d_model % l->h == 0 && l->d_k == l->d_model / l->h) ||
            (l->d_k >= 1 && !l->w_q && !l->w_k && !l->w_v && !l->w_o && !l->q && !l->k && !l->v &&
             !l->concat));
}

/* p + offset, or NULL when the tensor p is missing. */
static inline const float *view_at(const float *p, size_t offset) {
    return p ? p + offset : NULL;
}

/* --- theme.c ------------------------------------------------------------------ */

/* Outline of the hovered query row and cell in every head. */
rgba view_highlight_color(int theme);

/* --- labels.c ----------------------------------------------------------------- */

/* A token as shown on an axis: at most VIEW_LABEL_CHARS characters, else cut
 * (never inside a UTF-8 sequence) and ended with "…". */
#define VIEW_LABEL_CHARS 10
void view_token_label(char *buf, size_t len, const char *tok);

/* v written with Unicode subscript digits ("₁₂"). */
void view_subscript(char *buf, size_t len, int v);

/* Width in pixels of the UTF-8 run s at pixel size `size`. */
int view_text_width(view_measure_fn measure, void *ud, const char *s, int size, int bold);

/* Widest token label at pixel size `size`. */
int view_label_max_width(const view_state *s, int size, view_measure_fn measure, void *ud);

/* Copies s into buf, cut at a character boundary and ended with "…" so that it is
 * at most maxw pixels wide (empty when not even "…" fits). */
void view_fit_text(char *buf, size_t len, const char *s, int maxw, int size, int bold,
                   view_measure_fn measure, void *ud);

/* v in decimal, as snprintf's "%d" writes it (cut to len - 1 bytes); returns the
 * bytes written. */
int view_int_text(char *buf, size_t len, int v);

/* v with three significant digits ("%.3g"), a typographic minus, and 0 for |v| < 1e-9. */
void view_format_number(char *buf, size_t len, float v);

/* A head "could go alone" when removing it changes MultiHead by less than this
   (||head_i W^O_i|| / ||MultiHead||): the redundancy panel's words, the README's. */
#define VIEW_COULD_GO 0.10f
/* On a loaded model a head could go alone when removing it moves the next-token
   distribution by less than this KL, in bits, and keeps its most likely token. */
#define VIEW_NEXT_KL_GO 0.10f

/* view_text_width with the frame's measurer. */
static inline int view_tw(const view_ctx *c, const char *s, int size, int bold) {
    return view_text_width(c->measure, c->ud, s, size, bold);
}

/* The first of forms (longest first) that fits w pixels at size, copied into out;
   when none does, the last one cut to fit (view_fit_text). */
void view_fit_first(const view_ctx *c, char *out, size_t len, const char *const *forms, int count,
                    int w, int size, int bold);

/* A head switched off: r veiled, and the longest of its notes that fits r
   ("off: its band of Concat is 0" ... "off"). */
void view_draw_off_veil(const view_ctx *c, view_rect r);

/* Draws s centred in r (left-aligned when wider than r). */
void view_text_center(const view_ctx *c, view_rect r, const char *s, int size, rgba col, int bold);

/* A title of `count` runs at levels lvl[i] (0 normal and bold, 1 superscript, -1
 * subscript; scripts at 72 % of size, raised by 30 % or lowered by 42 % of it):
 * its width, and drawing it with its top-left at (x, y). */
int view_script_runs_width(const view_ctx *c, const char *const *parts, const int *lvl, int count,
                           int size);
void view_draw_script_runs(const view_ctx *c, int x, int y, const char *const *parts,
                           const int *lvl, int count, int size, rgba col);

/* One line of caption markup (view_markup_runs: "d_k = d_model/h") in the same
 * proportions, normal weight unless *bold*: its width (-1 when it is not well
 * formed), and drawing it with its top-left at (x, y) (plain when not well formed). */
int view_markup_width(const view_ctx *c, const char *markup, int size);
void view_draw_markup(const view_ctx *c, int x, int y, const char *markup, int size, rgba col);

/* --- layout_heads.c ------------------------------------------------------------ */

/* Which tokens are labelled along a heatmap side of `extent` pixels holding n cells,
 * for labels lh pixels tall: every token (1) when each cell is taller than a label,
 * else every k-th from the first, the smallest k (2 ... 10) with which labels k
 * cells apart never touch, the first and last moved inside the side; 0: none fits. */
int view_label_stride(int extent, int n, int lh);
/* Top (rows) or left (rotated columns) of token i's label: centred on its cell,
 * moved inside [origin, origin + extent). */
int view_label_pos(int origin, int extent, int n, int lh, int i);

/* --- heatmap.c ---------------------------------------------------------------- */

/* Marks every cached image and colour scale unused; view_cache_end then drops
 * those this frame did not use (e.g. heads of another page), keeping an unused
 * image's pixel buffer one more frame for a recoloured image to take. */
void view_cache_begin(view_cache *c);
void view_cache_end(view_cache *c);

/* Mixes v into the hash h (for image keys). */
uint64_t view_key_mix(uint64_t h, uint64_t v);

typedef enum { VIEW_MAP_SEQ, VIEW_MAP_DIV } view_map_kind;

/* Colours a (rows, cols) matrix with row stride ld into at most (max_w, max_h)
 * pixels, out_w x out_h, and returns them (owned by the cache, NULL when out of
 * memory); out_key is the image's key for draw_image_cmd. Sequential maps show
 * data in [0, 1] with colormap cmap; diverging maps show data / scale in [-1, 1].
 * When the matrix has more cells than pixels, no row or column is ever dropped: a
 * pixel of a sequential map is the mean of the values it covers (box average); a
 * pixel of a signed matrix is the covered value of largest magnitude, sign kept,
 * since averaging signed values washes every block towards zero. */
const rgba *view_heat_image(view_cache *c, uint64_t key, const float *data, int rows, int cols,
                            int ld, int max_w, int max_h, view_map_kind kind, int cmap, float scale,
                            int *out_w, int *out_h, uint64_t *out_key);

/* How attention weights map to colours: the fixed scale 0..1, each row scaled to
 * its own maximum, or a logarithmic scale from 0.001 to 1. */
enum { VIEW_CONTRAST_FIXED = 0, VIEW_CONTRAST_ROW, VIEW_CONTRAST_LOG, VIEW_CONTRAST_COUNT };

/* An attention map (n, n) as at most (max_w, max_h) pixels under the state's
 * colormap and contrast, a pixel the largest weight of the cells it covers (max-
 * pooled: a sharp head stays visible at n = 1024); a pixel whose cells are all
 * masked (score -inf) shows the mask's ground (scores may be NULL: none is). Owned by the frame's
 * cache; NULL when out of memory or attn is NULL. */
const rgba *view_attn_image(const view_ctx *c, uint64_t key, const float *attn, const float *scores,
                            int n, int max_w, int max_h, int *out_w, int *out_h, uint64_t *out_key);

/* (colorbar.c) A horizontal colorbar in r with tick numbers under it: sequential
 * [0, 1] in the state's colormap, or diverging [-m, m]. Returns 0 (drawing
 * nothing) when r is too small for one. */
int view_colorbar(const view_ctx *c, view_rect r, view_map_kind kind, float m);

/* A signed matrix in box b: its heatmap (symmetric about zero), a frame, the shape
 * label (prefixed, saying when reduced) and a diverging colorbar. key names the
 * matrix; the state's data_version is mixed in. */
void view_draw_matrix(const view_ctx *c, const view_matrix_box *b, const float *data, int ld,
                      uint64_t key, const char *shape_prefix);
/* The same on the scale [-scale, scale] (scale <= 0: the matrix's own max |value|). */
void view_draw_matrix_scaled(const view_ctx *c, const view_matrix_box *b, const float *data, int ld,
                             uint64_t key, const char *shape_prefix, float scale);
/* Largest finite |value| of a (rows, cols) matrix with row stride ld (1 when all are 0),
 * kept in the frame's cache under key and the state's data_version, so a frame
 * that changes no number finds it again instead of reading the matrix. */
float view_matrix_max_abs(const view_ctx *c, uint64_t key, const float *a, int rows, int cols,
                          int ld);

/* --- masks.c ------------------------------------------------------------------ */

#define VIEW_MASK_LEGEND "masked: \xE2\x88\x92\xE2\x88\x9E \xE2\x86\x92 0"
/* The ground of a masked cell (under its hatching). */
rgba view_mask_ground(int theme);
/* Hatches the masked cells of an attention map drawn in map (causal staircase,
 * [PAD] key columns) and veils the [PAD] query rows. */
void view_draw_masks(const view_ctx *c, view_rect map);
/* The legend: a hatched swatch and "masked: −∞ → 0" at text size size. */
int view_mask_legend_width(const view_ctx *c, int size);
void view_draw_mask_legend(const view_ctx *c, int x, int y, int size);

/* --- cells.c ------------------------------------------------------------------ */

/* The text size for numbers in the cells of map (rows x cols) when the state asks
 * for them and they fit legibly, else 0. */
int view_cell_values_fit(const view_ctx *c, view_rect map, int rows, int cols);
/* The same for attention weights of an n x n map (written as ".42"). */
int view_weight_values_fit(const view_ctx *c, view_rect map, int n);
/* Black or white, whichever reads on a cell of colour bg. */
rgba view_ink_on(rgba bg);
/* Writes data's values in map's cells over the image px (px_w x px_h, one pixel
 * a cell; nothing when the image is reduced). */
void view_draw_cell_values(const view_ctx *c, view_rect map, const float *data, int rows, int cols,
                           int ld, const rgba *px, int px_w, int px_h);
/* The same for attention weights attn (n, n), written ".42": cells masked in
 * scores (-inf) are left to their hatching (scores may be NULL: none is). */
void view_draw_weight_values(const view_ctx *c, view_rect map, const float *attn, int n,
                             const float *scores, const rgba *px, int px_w, int px_h);

/* --- layout_steps.c, steps.c ------------------------------------------------------ */

/* Lays the step-through of s's head out in area: one stage large when s->step is
 * one (s->focus set), else all nine in a grid (the --panel steps:K figure). */
void view_steps_layout(view_steps *S, const view_layout *L, const view_state *s, view_rect area,
                       view_measure_fn measure, void *ud);
/* Moves every rectangle of S by (dx, dy). */
void view_steps_translate(view_steps *S, int dx, int dy);
/* Stage k's (1-based) title for head (0-based), variant 0 long or 1 short, as markup:
 * "_{1}" a subscript, "^{T}" a superscript (view_steps_runs splits it). */
void view_steps_title(char *buf, size_t len, const attn_layer *layer, int head, int k, int variant);
/* What stage k does for head, in a sentence or two a student reads (plain text). */
void view_steps_note(char *buf, size_t len, const attn_layer *layer, int head, int k);
/* Splits markup into at most max runs of at most 47 bytes, lvl[i] 0 normal, 1 raised,
 * -1 lowered (view_draw_script_runs' levels); returns how many. */
int view_steps_runs(const char *markup, char parts[][48], int *lvl, int max);
/* 1 when stage k shows the same numbers as stage k - 1 at this setting: 4 unscaled
 * at temperature 1, 5 with no mask. */
int view_steps_same(const attn_layer *layer, int k);
/* Draws it for head (0-based); S->current (1-based, 0: the grid) is drawn large.
 * `current` is ignored (the layout knows it). */
void view_draw_steps(const view_ctx *c, const view_steps *S, int head, int current);

/* --- layout_lesson.c, lesson_panels.c ---------------------------------------------- */

/* Places the redundancy matrix and the cost panel under the equation, if room. */
void view_lesson_layout(view_layout *L, const view_state *s, view_measure_fn measure, void *ud);
/* Places them on a page of their own (presenting, where they gave way to the heads), in
 * a, the room the heads' grid takes on the heads' pages: a column (the matrix above the
 * cost) or a row (the matrix beside it), whichever gives the matrix more room. */
void view_lesson_page_layout(view_layout *L, const view_state *s, view_measure_fn measure, void *ud,
                             view_rect a);
/* Draws them. */
void view_draw_lesson(const view_ctx *c);

/* --- layout_caption.c, caption.c: a lesson's caption band ------------------------ */

/* Lays out the caption band of s (s->caption, the whole picture only) into C and
 * where the rest of the view goes (C->figure); C->shown 0 and the whole window
 * when there is none. */
void view_caption_layout(view_caption_box *C, const view_state *s, view_measure_fn measure,
                         void *ud);
/* Draws it. */
void view_draw_caption(const view_ctx *c);

/* --- layout_train.c, train_panels.c ------------------------------------------------ */

/* Training mode's panels in area a (beside the heads). */
void view_train_layout(view_layout *L, const view_state *s, view_rect a);
void view_draw_train(const view_ctx *c);
/* sweep_panel.c: the sweep of h in the training panels' place (s->sweep). */
void view_draw_sweep(const view_ctx *c);

/* --- panels.c ----------------------------------------------------------------- */

/* Header buttons and value captions (buttons not in figures); the page buttons. */
void view_draw_header(const view_ctx *c);
/* The formula strip's runs on its panel. */
void view_draw_formula(const view_ctx *c);
/* The heads grid (or the focused head), its colorbar and page note; hover
 * outlines the query row in every head and the cell in the hovered head. */
void view_draw_heads(const view_ctx *c, const view_hit *hover);
/* The focus view's caption and Q_i, K_i, V_i, head_i. */
void view_draw_focus(const view_ctx *c);
/* The focus view's matrix `which` (0 Q, 1 K, 2 V, 3 head) of head `head` (0-based): its
   first number (row 0, the head's column 0), *ld floats a row, and *sub the index its
   name carries (0-based: the head, or for K and V the K/V head it reads where they come
   from the layer's Q, K and V by head); NULL where the layer has none. */
const float *view_focus_matrix(const attn_layer *layer, int head, int which, int *ld, int *sub);
/* Concat x W^O = MultiHead: title, head bands, three matrices, the symbols; where
 * the layer lacks Concat or W^O, view_draw_eq_note in their place. */
void view_draw_equation(const view_ctx *c);

/* --- eq_note.c ------------------------------------------------------------------ */

/* In the place of Concat or W^O (or both), where the layer lacks it, a note saying
 * why it is not drawn. */
void view_draw_eq_note(const view_ctx *c);
/* text in muted lines of size from (x, y), each at most w wide, while they end above
 * y1 (the last line may reach half a line past it). */
void view_draw_note_lines(const view_ctx *c, int x, int y, int w, int y1, const char *text,
                          int size);

/* --- steps_missing.c ------------------------------------------------------------- */

/* Stage kind (view_steps_kind's, 1-based) of head's step-through where the layer
 * lacks a tensor it draws: the index of its first box not drawn (the ones after it
 * neither), with why into buf; -1 when every box is drawn. */
int view_steps_missing(const attn_layer *layer, int head, int kind, char *buf, size_t len);
/* The status line, cut to its width. */
void view_draw_status(const view_ctx *c);

/* --- pointer.c ----------------------------------------------------------------- */

/* Presentation mode: what the pointer is on, outlined thick (the row or column in
 * every head and the cell; over the equation, the rows and columns a value comes
 * from). Nothing for HIT_NONE, HIT_BUTTON and HIT_HEAD_TITLE. */
void view_draw_pointer(const view_ctx *c, const view_hit *hit);

/* --- overlays.c --------------------------------------------------------------- */

/* The tooltip for what the pointer is over (nothing for HIT_NONE, HIT_BUTTON and
 * HIT_HEAD_TITLE). */
void view_draw_tooltip(const view_ctx *c, const view_hit *hit);
/* The text field, over the header. */
void view_draw_editor(const view_ctx *c);
/* Every shortcut, in a box over a dimmed frame. */
void view_draw_help(const view_ctx *c);
/* The "More" panel: its buttons over what is under them (overlays.c). */
void view_draw_menu(const view_ctx *c);
/* The state's toast, near the bottom. */
void view_draw_toast(const view_ctx *c);

/* Caption above the attention colorbar: panels.c draws it, layout.c reserves its width. */
#define VIEW_ATTN_CAPTION "attention weight: softmax of each row, fixed scale 0 to 1"

/* --- layout_compare.c, compare.c: the pinned view beside the live one ---------- */

/* Moves every rectangle of L by (dx, dy). */
void view_layout_translate(view_layout *L, int dx, int dy);
/* The compare view's layout (s->pinned set): the banner, both panes, the live
 * pane's layout in window coordinates and the pinned pane's in s->pinned_layout
 * (in the pane's coordinates). */
void view_compare_layout(view_layout *L, const view_state *s, view_measure_fn measure, void *ud);
/* The pinned view as its pane of size `pane` shows it: a figure in the live
 * view's style (layout and drawing both start from it). */
void view_compare_pinned(const view_state *s, view_rect pane, view_state *p);
/* Draws the banner and the pinned pane (laid out by view_compare_layout); hit is
 * what the pointer is over in the live pane. */
void view_draw_compare(const view_ctx *c, const view_hit *hit);

/* --- a loaded model: layout_overview.c, layout_next.c, overview.c, next_panel.c -- */

/* The most layers and heads per layer the overview lays out (gpt2-xl: 48 x 25). */
#define VIEW_OV_MAX_LAYERS 256
#define VIEW_OV_MAX_HEADS 256

/* 1 if the view can lay out and draw o: 1..VIEW_OV_MAX_LAYERS layers of 1..
 * VIEW_OV_MAX_HEADS heads, 1 <= n <= VIEW_MAX_N, attn given (a layer's maps may be
 * NULL: not drawn). */
static inline int view_overview_ok(const view_overview *o) {
    return o && o->attn && o->layers >= 1 && o->layers <= VIEW_OV_MAX_LAYERS && o->h >= 1 &&
           o->h <= VIEW_OV_MAX_HEADS && o->n >= 1 && o->n <= VIEW_MAX_N;
}

/* The side of o's maps: map_n, or n when they are not pooled (map_n 0). */
static inline int view_overview_side(const view_overview *o) {
    return o->map_n > 0 && o->map_n < o->n ? o->map_n : o->n;
}

/* 1 if the next-token panel has something to show: 1 <= k <= VIEW_NEXT_MAX rows, or
 * no row and a note. */
static inline int view_next_ok(const view_next *x) {
    return x && ((x->k >= 1 && x->k <= VIEW_NEXT_MAX) || (x->k == 0 && x->note && *x->note));
}

/* The overview takes the place of the layer view: exported alone (VIEW_PANEL_MODEL)
 * or opened in the window (overview_open). */
static inline int view_overview_mode(const view_state *s) {
    return view_overview_ok(s->overview) &&
           (s->panel == VIEW_PANEL_MODEL || (s->panel == VIEW_PANEL_ALL && s->overview_open));
}

/* 1 if head (layer, head) of o is removed. */
static inline int view_overview_off(const view_overview *o, int layer, int head) {
    return o->off && o->off[(size_t)layer * o->h + head];
}

/* Variant v (0 longest, 2 shortest) of the overview's title: the model's name, its
 * layers x heads, the tokens, and (not in figures) that a click opens a layer. */
void view_overview_title(char *buf, size_t len, const view_state *s, int v);
/* Lays the overview out in area (title, labels, grid, colorbar, notes). */
void view_overview_layout(view_layout *L, const view_state *s, view_measure_fn measure, void *ud,
                          view_rect area);
/* The next-token panel in area's width, its rows from the top as many as fit in
 * area's height (L->next.k of them; shown when at least one does), its height what
 * they need. compact: at the data's text size, else a size up. */
void view_next_layout(view_layout *L, const view_state *s, view_measure_fn measure, void *ud,
                      view_rect area, int compact);
/* The width the next-token panel asks for at the layout's sizes. */
int view_next_width(const view_layout *L, const view_state *s, view_measure_fn measure, void *ud,
                    int compact);
/* The overview; hit outlines the hovered cell (may be NULL). */
void view_draw_overview(const view_ctx *c, const view_hit *hit);
void view_draw_next(const view_ctx *c);

/* --- layout_lines.c, lines.c: the head view ------------------------------------- */

/* Weights below it get no line (the legend says so). */
extern const float view_lines_floor;
/* The head view's boxes in the tiles the heads grid laid out (L->lines_shown 0 when
 * the view is not on), and its legend. Called by view_layout_compute. */
void view_lines_layout(view_layout *L, const view_state *s, view_measure_fn measure, void *ud);
/* Token i's row centre, and the top of its label of line height lh, in B. */
int view_lines_row_y(const view_lines_box *B, int n, int i);
int view_lines_label_y(const view_lines_box *B, int n, int lh, int i);
/* Draws the head view in place of a heatmap: tile slot's lines of head and its
 * labels; a hovered query (HIT_LINES_Q) or key (HIT_LINES_K) keeps only its
 * own lines, the rest dimmed. panels.c draws the tile's title first. */
void view_draw_lines_tile(const view_ctx *c, int slot, int head, const view_hit *hover);
/* Every head overlaid in one tile (L->lines_all, its own title), and the legend. */
void view_draw_lines_rest(const view_ctx *c, const view_hit *hover);
/* The alpha of a line of weight w (0 when under the floor), dimmed or not. */
int view_lines_alpha(float w, int dimmed);

/* --- body.c ------------------------------------------------------------------- */

/* The panels of one view in the order they stack (no background, no overlays);
 * hit is what the pointer is over. */
void view_draw_body(const view_ctx *c, const view_hit *hit);

#endif
