/* view.h: what the visualizer shows, as a pure function of its state.
 * view_layout_compute turns (output size, zoom, the layer's shape, text measurer)
 * into rectangles; view_render turns the layout and the layer's tensors (an
 * attn_layer, whatever made it) into a drawing list; view_hit_test maps a pointer
 * position back to what is under it. No SDL here, and no model: only layer.h. */
#ifndef MHAVIZ_VIEW_H
#define MHAVIZ_VIEW_H

#include "draw.h"
#include "layer.h"

/* The most positions the view lays out: a loaded model's longest context (1024,
   GPT-2's n_positions; the built-in views stop at the core's MHA_MAX_N, 512; src/app
   checks that both fit). The text field's limit is edit_limit, or MHA_MAX_N. */
#define VIEW_MAX_N 1024
#define VIEW_BUILTIN_MAX_N 512

/* Measures a UTF-8 run at pixel size `size`: width and line height in pixels. */
typedef void (*view_measure_fn)(void *ud, const char *text, int size, int bold, int *w, int *h);

typedef enum {
    VIEW_PANEL_ALL = 0,
    VIEW_PANEL_HEAD,
    VIEW_PANEL_EQUATION,
    VIEW_PANEL_STEPS, /* one head's computation, stage by stage (panel_head) */
    VIEW_PANEL_MODEL, /* a loaded model's overview: every layer x head (s->overview) */
    VIEW_PANEL_NEXT,  /* a loaded model's next-token panel alone (s->next) */
    VIEW_PANEL_LINES  /* the head view (lines.c): panel_head 0 every head overlaid, else head K */
} view_panel;

typedef enum {
    BTN_H_DOWN,
    BTN_H_UP,
    BTN_D_DOWN,
    BTN_D_UP,
    BTN_SAMPLE_PREV,
    BTN_SAMPLE_NEXT,
    BTN_TEXT,
    BTN_SEED,
    BTN_MASK,
    BTN_SCALE,
    BTN_CMAP,
    BTN_THEME,
    BTN_ZOOM_OUT,
    BTN_ZOOM_IN,
    BTN_SAVE,
    BTN_PNG_SCALE,
    BTN_HELP,
    BTN_PAGE_PREV,
    BTN_PAGE_NEXT,
    BTN_LAYER_PREV, /* a loaded model: the previous / next layer, the overview */
    BTN_LAYER_NEXT,
    BTN_OVERVIEW,
    BTN_WRITE,   /* a loaded model writes (W) at its pace, or stops */
    BTN_LESSONS, /* the built-in lessons (G) */
    /* controls.c's: the "More" panel's opener, training mode's own header buttons,
       and the panel's buttons (each sends its key: view_button_box.key) */
    BTN_MORE,
    BTN_TRAIN_GO,    /* L: pause / go on */
    BTN_TRAIN_SPEED, /* S */
    BTN_TRAIN_STEP,  /* . */
    BTN_TRAIN_SWEEP, /* H: the sweep of h, on / off */
    BTN_TRAIN_BACK,  /* Escape */
    BTN_MENU,        /* the panel's first button; VIEW_MENU_MAX of them */
    BTN_MENU_LAST = BTN_MENU + 31,
    BTN_COUNT
} view_button;

#define VIEW_MENU_MAX 32 /* buttons in the "More" panel */
#define VIEW_MENU_TITLE "More keys: a click does what the key does \xC2\xB7 Esc closes"

/* One button of the "More" panel: the key press it sends, and its labels, one per
   value of the setting it names ("Numbers: off (V)", "Numbers: on (V)") or one for
   an action; shown is the state's now. The panel's cells are as wide as the widest
   label of all, so they do not move as values change. */
typedef struct {
    int key, mods;
    const char *label[4];
    int shown;
} view_menu_item;

/* Training, as the view draws it (the window's trainer fills it; src/learn trains). */
#define VIEW_TRAIN_RUNS 32
typedef struct {
    const char *label; /* "pair h=2 d=32", "pair h=2 d=32 #3" when the settings repeat */
    int points;
    const float *step, *loss, *acc; /* (points) */
    int number;                     /* the session's run number: its colour for the session */
} view_train_run;

typedef struct {
    const char *task, *what; /* task name and its one-line rule */
    const char *task_widest; /* the longest task name (the toolbar keeps its place); NULL */
    const char *error;       /* why training could not start, or "" */
    int running;
    long step;
    float steps_per_s, loss, acc;
    int layers, layer, h; /* layer shown, 0-based */
    int runs;             /* this task's runs; the last is the current run */
    view_train_run run[VIEW_TRAIN_RUNS];
    int other_runs; /* runs of other tasks the session keeps (Tab shows them) */
    int rate;       /* the speed asked for: 0 full, > 0 slow motion, < 0 the class pace */
    int stop;       /* why it stopped by itself: 0 not, 1 converged, 2 the budget, 3 diverged */
    long stop_step, budget, patience;
    float stop_acc;
    float stop_loss; /* diverged: the loss that said so */
    int pruning_valid;
    long pruning_step;
    const float *ablated_acc; /* (layers, h) held-out accuracy without that head */
    int pruned;               /* heads that each cost under a point */
    float pruned_acc;         /* accuracy with all of those removed together */
    /* the replay: the moments of the current run (their steps, rising) and, when
       one is shown, which (step, the numbers and the bars above are its own) */
    int moments;
    const long *moment_step;
    int replay;     /* 1: moment `moment` (0-based) is shown, not the live run */
    int moment;     /* the moment shown */
    long live_step; /* the live run's step */
} view_train;

/* The training plots' step axis: its right end (the furthest step of the
   task's runs, at least 10), and the step under x in a plot's rect r. */
double view_train_xmax(const view_train *t);
double view_train_step_at(view_rect r, int x, double xmax);
/* Training mode's sweep of h (H), as the view draws it in place of the curves: the
   final held-out accuracy against h, d_k under each, the mean and range over the
   seeds done so far (the state computes them; the view only draws). */
#define VIEW_SWEEP_MAX_H 16
#define VIEW_SWEEP_MAX_SEEDS 3
typedef struct view_sweep {
    const char *task;
    int d_model, layers, mlp, classes; /* classes: the chance line is 1 / classes */
    long steps;
    int nh, seeds;
    unsigned long long seed0;
    int h[VIEW_SWEEP_MAX_H];
    int seeds_done[VIEW_SWEEP_MAX_H]; /* runs finished at that h */
    float mean[VIEW_SWEEP_MAX_H], lo[VIEW_SWEEP_MAX_H], hi[VIEW_SWEEP_MAX_H]; /* over those */
    int done[VIEW_SWEEP_MAX_H][VIEW_SWEEP_MAX_SEEDS];
    int diverged[VIEW_SWEEP_MAX_H][VIEW_SWEEP_MAX_SEEDS];
    float acc[VIEW_SWEEP_MAX_H][VIEW_SWEEP_MAX_SEEDS];
    int runs, runs_done;
    int running;      /* the sweep is at work (or about to start) */
    int cur_a, cur_s; /* the run under way (its h index and seed index), -1: none */
    long cur_step;
    int sel_a, sel_s; /* the run whose heads show, -1: none yet */
    const char *error;
} view_sweep;

/* A loaded model, as the view draws it (src/app fills it from src/model). */
typedef struct {
    const char *name;          /* "gpt2" */
    int layers, h, n;          /* the model's own heads per layer; positions */
    const float *const *attn;  /* (layers) each (h, map_n, map_n), the trained heads; a
                                  layer's NULL: not computed yet */
    const char *const *tokens; /* (n) labels */
    int layer;                 /* the layer open in the layer view, 0-based */
    const unsigned char *off;  /* (layers, h) 1: that head is removed; may be NULL */
    int computed_from;         /* the last change computed layers [computed_from, layers), in
                                  the state's compute_ms */
    int encoder;               /* 1: an encoder (BERT's kind): no mask, attention both ways */
    int h_kv, h_kv_shown;      /* K/V heads as trained and as computed (regrouped where
                                  fewer); 0: not said */
    int map_n;                 /* the side of each map: n, or fewer (max-pooled); 0: n */
    const char *tokenizer;     /* its tokenizer in words, "WordPiece (vocab.txt)"; NULL: not said */
} view_overview;

/* The next-token panel: the model's most likely next tokens after the text. */
#define VIEW_NEXT_MAX 10
typedef struct {
    int k;                            /* shown, <= VIEW_NEXT_MAX */
    const char *token[VIEW_NEXT_MAX]; /* labels */
    float p[VIEW_NEXT_MAX];           /* probabilities, descending */
    float p_full[VIEW_NEXT_MAX];      /* the same tokens with every head on; < 0: no heads
                                         are removed (nothing to compare) */
    const char *after;                /* the last token's label ("after ␣the") */
    int cut;                          /* the text was cut to n tokens */
    /* an encoder's "fill the blank" in the same panel: */
    const char *title;                /* NULL: "What comes next after …"; else this title */
    const char *group[VIEW_NEXT_MAX]; /* non-NULL: a heading over row i (the blank it fills) */
    const char *note;       /* NULL, or a line under the rows; with k = 0 the panel is the title
                               and this line alone ("type [MASK] in the text …") */
    int marked;             /* a token is drawn to be written next (the model writes) */
    int mark;               /* its row, -1: not among the rows shown */
    const char *mark_label; /* its label and probability (a note under the rows) */
    float mark_p;
    int full_kv; /* > 0: K/V heads are regrouped and p_full is the model as trained, with
                    full_kv K/V heads and every head on */
} view_next;

/* A lesson's caption (presenting a lesson in the window, or a deck page): the
 * heading and the text lines in the caption markup (view_markup_check), "step k of
 * N" and a progress strip. Laid out as a band the figure leaves room for. */
typedef struct {
    const char *title;   /* the lesson's title (plain text); NULL or "": none */
    const char *heading; /* the step's heading (markup); NULL or "": none */
    const char *text;    /* the caption's lines (markup), separated by '\n'; may be NULL */
    int step, steps;     /* step k of N, 1-based; steps 0: no "step k of N", no strip */
    int recording;       /* the window is recording a lesson ("recording" in the band) */
    int explored;        /* the view differs from the step as written: the band says
                            "F5: back to step k" (window only: never in a figure/deck) */
} view_caption;

/* The caption markup: X_ident subscript (letters and digits), X^ident superscript
 * (or ^-1), _{...} and ^{...} groups (one level: inside, _ ^ are literal), *bold*,
 * and the escapes \_ \^ \{ \} \* \\. 0 when markup is well formed, else -1 with
 * "column C: what is wrong" in err (C 1-based, in characters). */
int view_markup_check(const char *markup, char *err, size_t errlen);

/* One run of the markup: text at a level (0 normal, 1 superscript, -1 subscript),
 * bold or not. Plain text is split at spaces: every space is a run of its own
 * (where lines wrap); scripts never split. */
#define VIEW_MARKUP_RUN_TEXT 96
typedef struct {
    char text[VIEW_MARKUP_RUN_TEXT]; /* UTF-8, escapes resolved */
    int level, bold;
} view_markup_run;

/* The runs of markup (at most max; a longer plain stretch continues in the next
 * run). Returns how many, or -1 with err as view_markup_check (broken markup, or
 * more than max runs). */
int view_markup_runs(const char *markup, view_markup_run *runs, int max, char *err, size_t errlen);

/* Settings a compare banner names at most. */
#define VIEW_COMPARE_MAX 8

/* How the data are looked at: the settings a reader changes without changing the
 * numbers, zero meaning the default for each. The state holds one and hands it to
 * the view whole (view_state.look). */
typedef struct {
    int theme;     /* 0 light, 1 dark */
    int cmap;      /* sequential colormap for attention; 0 viridis */
    int contrast;  /* attention scale: 0 fixed 0..1, 1 row max, 2 log */
    int values;    /* numbers in the cells where they fit */
    int diff;      /* MultiHead drawn as out - out_full */
    int step;      /* focus view: stage of the step-through, 0 none (all at once) */
    int head_view; /* VIEW_HEAD_LINES: heads drawn as lines (key H), in the grid and the
                      focus view; 0 heatmaps */
    int present;   /* presentation mode: no controls, no status line */
    int focus;     /* focused head, 1-based; 0 none */
    int page;      /* page of the heads grid, 0-based */
    float zoom;    /* user text/UI zoom, 1 = 100%; 0 = 1 */
} view_look;

/* Everything the picture depends on. Zero is a sensible default for the flags. */
typedef struct view_state {
    int width, height;       /* output pixels */
    float ui_scale;          /* device pixels per layout pixel (high-DPI, export --scale); 0 = 1 */
    view_look look;          /* theme, colormap, contrast, focus, page, zoom ... */
    float zoom_base;         /* the zoom the window starts at (Ctrl+0; view_zoom_for_size):
                                heatmaps fill the room at it and grow in proportion to
                                zoom / zoom_base above it; 0 = 1 */
    int text_floor;          /* the layout's own (0 from callers): the smallest text, px, of
                                the presentation it lays out (view_text_floor) */
    const attn_layer *layer; /* the layer drawn (its tensors, shape and text); NULL: none yet */
    int text_replaced;       /* the text's invalid UTF-8 was replaced by U+FFFD */
    const char *sample_name; /* or "custom" */
    int sample_index, sample_count; /* 1-based index, 0 for custom text */
    int lesson;                     /* redundancy and cost panels */

    /* 1 - JS of unrelated heads (attn_alike_baseline): the least and most pair's; hi <= 0:
       not measured */
    float alike_base_lo, alike_base_hi;
    /* a loaded model's layer at its own heads: what removing head i alone does to the
       model's next token (gpt2_run_effects), or NULL: then the panel judges by MultiHead */
    const float *head_next_kl; /* (h) KL(every head on || head i removed), bits */
    const int *head_next_top;  /* (h) the most likely next token without head i */
    int next_top_full;         /* ... with every head on */
    /* or, with head_next_kl NULL on a loaded model's own heads: why not (yet) */
    /* (NO_BLANK: an encoder whose text has no blank filled: MultiHead's measure, said so) */
    enum {
        VIEW_MEASURE_NONE,
        VIEW_MEASURE_PENDING,
        VIEW_MEASURE_TOO_LONG,
        VIEW_MEASURE_NO_BLANK
    } next_measure;
    int next_is_blank;    /* 1: head_next_kl is on an encoder's first blank, not the next token */
    int next_measure_cap; /* TOO_LONG: the most tokens measured at this layer */

    /* numbers derived from the layer for the lesson (may be NULL: not shown) */
    int numbers_pending;           /* the layer's own numbers below are being computed:
                                      "computing…" where they go, none claimed meanwhile */
    const float *head_entropy;     /* (h) mean row entropy in bits */
    const float *head_divergence;  /* (h, h) mean Jensen-Shannon divergence in bits */
    int divergence_step;           /* it averages every divergence_step-th query row */
    const float *head_pass_cos;    /* (h, h) cosine of head_i W^O_i and head_j W^O_j */
    const float *head_change;      /* (h) ||head_i W^O_i|| / ||MultiHead||: removing head i */
    int contrib_step;              /* both over every contrib_step-th row */
    const float *out_diff;         /* (n, d_model) MultiHead - unablated MultiHead */
    const float *step_raw;         /* (n, n) Q_i K_i^T of the focused head */
    const float *step_scaled;      /* (n, n) that times the layer's scale, before the mask */
    const float *step_share;       /* (n, d_model) head_i W^O_i */
    const view_train *train;       /* training mode: layer holds the trained heads of one layer */
    const view_sweep *sweep;       /* training mode's sweep of h: drawn in place of the curves */
    const view_overview *overview; /* a loaded model; NULL: none */
    int overview_open;             /* the overview fills the main area (every layer x head) */
    const view_next *next;         /* the next-token panel beside the layer view; NULL: none */
    int write;                     /* a loaded model writes (W): 1 ready, 2 writing; 0 none */
    int write_pace_ms;             /* one token every that many ms (the button says it) */
    int resplit;                   /* the layer's heads are a re-split: trained with
                                      overview->h heads, shown as layer->h */
    int pinned_pane;               /* the pinned pane of compare: a paged grid's note says
                                      Shift+PgUp/PgDn, and figures keep it */
    int one_page;                  /* a deck's page: the step is one page, so side panels
                                      that find no room presenting get no page of their own */
    view_panel panel;              /* export: all, one head (focus), or the equation */
    int panel_head;                /* 1-based head for VIEW_PANEL_HEAD */
    int hover_x, hover_y;          /* pointer, output pixels; negative: outside */
    int editing;                   /* text field open */
    const char *edit_text;         /* its contents (UTF-8) */
    const char *edit_preedit;      /* IME composition, may be NULL */
    int edit_cursor;               /* byte offset of the cursor in edit_text */
    int edit_selected;             /* the whole text is selected */
    int edit_tokens;               /* tokens the text has now */
    int edit_limit;                /* tokens kept (a loaded model's positions); 0: 512 */
    const char *edit_prompt;       /* the field's prompt, no token count (a lesson's caption); NULL:
                                      the sentence's */
    int help;                      /* help overlay open */
    int menu;                      /* the "More" panel of every key's button open */
    view_menu_item menu_items[VIEW_MENU_MAX]; /* its buttons (the state's keymap.c) */
    int menu_count;
    const char *status; /* message for the status line, may be NULL */
    const char *toast;  /* transient notice (e.g. saved file path), may be NULL */
    double compute_ms, frame_ms;
    int timings;                /* the status line gives compute_ms and frame_ms (MHAVIZ_STATS) */
    double forward_ms;          /* the forward's own time at this setting; < 0: not measured yet */
    int transparent;            /* export: no background fill */
    int figure;                 /* export: no buttons, no timings (labels stay true) */
    int png_scale;              /* Ctrl+S pixel multiplier shown on its button; 0 = 2 */
    unsigned long data_version; /* changes whenever the layer's numbers change */
    /* compare: the pinned view beside this one (above it in a portrait window), under
       a banner naming the settings that differ. The layout puts this view in its
       pane and lays the pinned pane out into pinned_layout (the caller's memory),
       which drawing then reads. compare_what[i] is one differing setting as each side has it
       ("h = 1", "h = 8"). NULL: no compare. */
    const struct view_state *pinned;
    struct view_layout *pinned_layout;
    int compare_count;
    const char *compare_what[VIEW_COMPARE_MAX][2];
    const view_caption *caption; /* a lesson's caption band; NULL: none (nothing changes) */
} view_state;

enum { VIEW_HEAD_HEATMAP = 0, VIEW_HEAD_LINES = 1 };

#define VIEW_MAX_VISIBLE 64 /* heads on one page of the grid */
/* The zoom steps of Ctrl+= and Ctrl+-, 80 % to 300 % */
#define VIEW_ZOOM_STEPS                                                                            \
    { 0.8f, 0.9f, 1.0f, 1.1f, 1.25f, 1.5f, 1.75f, 2.0f, 2.5f, 3.0f }
#define VIEW_MAX_RUNS 96
#define VIEW_MAX_HDR 8

typedef struct {
    view_rect r;
    int present;
    char label[64];
    int key, mods; /* the key press a click sends (APP_KEY_* or a character; 0: the
                      button's own action), with its modifiers */
} view_button_box;

typedef struct {
    int x, y;      /* top-left of the run's line box */
    int size;      /* pixel size */
    int w;         /* measured width */
    char text[64]; /* as long as a header caption or button label can be */
} view_run;

typedef struct {
    view_rect map;   /* the heatmap */
    view_rect title; /* "head 3" */
} view_head_box;

/* The head view of one tile (layout_lines.c): queries in a column on the left,
 * keys on the right, a line from query i to key j as opaque as the weight. Token
 * i's row is centred at y0 + (2 i + 1) * pitch_total / (2 n) (pitch_total the
 * columns' height); every stride-th token is labelled (all when stride is 1). */
typedef struct {
    view_rect box;          /* the whole tile: the columns and the lines between */
    view_rect qcol, kcol;   /* the label columns, query labels right-aligned in qcol */
    int x0, x1;             /* the lines run from x0 (query side) to x1 (key side) */
    int y0, span;           /* the rows' top and their total height */
    int label_size, stride; /* labels' pixel size; every stride-th labelled, 0 none */
    int thick;              /* line width in pixels */
} view_lines_box;

typedef struct {
    view_rect map;   /* heatmap */
    view_rect shape; /* "12 × 64" under it */
    view_rect cbar;  /* diverging colorbar */
    int rows, cols;  /* matrix shape */
} view_matrix_box;

/* The stages of one head's computation, each a titled cell with its matrices
 * (three for Q_i, K_i, V_i; four for RoPE's Q_i and K_i before and after). Stage k
 * (1-based) is cells[k - 1]. Nine stages, ten in a RoPE model (view_steps_count):
 * its rotation is stage 3, after Q, K, V and before S. */
#define VIEW_STEPS 10
typedef struct {
    int shown;                  /* 0: no step-through in this layout */
    int count;                  /* stages: view_steps_count of the layer */
    view_rect caption;          /* the current stage's formula, large */
    view_rect cell[VIEW_STEPS]; /* whole cell, framed when current */
    view_rect title[VIEW_STEPS];
    view_matrix_box box[VIEW_STEPS][4];
    int boxes[VIEW_STEPS];
    /* (layout_steps.c) the titles' variant and size; the stage drawn large, 1-based
       (the window's step-through and its saved panel; 0: the nine in a grid) */
    int title_variant[VIEW_STEPS], title_size[VIEW_STEPS], caption_size;
    int head, current;
    view_rect chip[VIEW_STEPS]; /* the strip of stages, one chip each */
    char chip_text[VIEW_STEPS][40];
    int chip_size;
    view_rect hint; /* ", and . step" (on screen only, else empty) */
#define VIEW_STEP_NOTES 6
    view_rect note[VIEW_STEP_NOTES]; /* what the stage does, wrapped */
    char note_text[VIEW_STEP_NOTES][200];
    int notes, note_size;
    view_rect legend;       /* the mask legend (a masked stage) */
    view_matrix_box big[4]; /* the stage's matrices, large */
    int bigs;
    int label_size, label_line, label_stride; /* token labels; stride 0: none */
    int row_labels, col_labels, row_label_w;
    int stacked; /* Q, K, V one under another (each with its row labels) */
    int grid_label_stride[VIEW_STEPS], grid_label_w[VIEW_STEPS]; /* the grid's n x n cells'
                                                                    labels (label_size) */
} view_steps;

/* The compare banner: one side's name and the settings it differs in, as chips. */
typedef struct {
    view_rect name;                   /* "Pinned" / "Live" */
    view_rect chip[VIEW_COMPARE_MAX]; /* one differing setting each */
    int chips;                        /* shown (those that fit) */
} view_compare_side;

/* A loaded model's overview (s->overview_open, or VIEW_PANEL_MODEL): every layer x
 * head as a small attention map on a regular grid, rows = layers, columns = heads;
 * a tall model's layers wrap into blocks side by side, each with its own labels.
 * Cell (layer l, head k) is view_overview_cell; the labels are
 * view_overview_layer_label and view_overview_head_label (empty when dropped so
 * that none overlap). */
typedef struct {
    int shown;            /* 0: no overview in this layout */
    int layers, heads;    /* the grid's rows and columns */
    int blocks, rows;     /* the layers wrap into blocks side by side, rows layers each:
                             layer l is row l % rows of block l / rows */
    int block_dx;         /* from one block's first cell to the next one's */
    view_rect title;      /* "gpt2 · 12 layers × 12 heads · ..." */
    view_rect grid;       /* the cells, from the first to the last */
    int x0, y0;           /* top-left of cell (0, 0) */
    int cell, step;       /* a cell's side; from one cell to the next (cell + gap) */
    int label_size;       /* layer and head labels, pixel size */
    int label_line;       /* their line height */
    int head_label_w;     /* the widest head number's width */
    int over;             /* how far the first and last layers' labels reach past the grid
                             (rows shorter than a label) */
    int row_label_w;      /* room left of the grid for "layer 12" */
    int layer_stride;     /* every k-th layer is labelled (and the open one) */
    int head_stride;      /* every k-th head number is drawn (and the first) */
    int open;             /* the open layer, 0-based; -1 none */
    view_rect open_frame; /* the accent frame around the open layer's row and label */
    int frame_thick;
    view_rect cbar; /* attention colorbar */
    view_rect note; /* the removed heads' legend and the downsampling note */
} view_overview_box;

/* The next-token panel: a title, one row per token (its label, a bar as long as
 * its probability on a 0 to 100 % track, the percentage), notes under them. */
typedef struct {
    int shown;
    int k;                          /* rows */
    view_rect area;                 /* the whole panel */
    view_rect title;                /* "What comes next after ␣the" */
    view_rect row[VIEW_NEXT_MAX];   /* a token's whole row (hit test) */
    view_rect label[VIEW_NEXT_MAX]; /* its label, right-aligned in it */
    view_rect track[VIEW_NEXT_MAX]; /* 0 to 100 % */
    view_rect bar[VIEW_NEXT_MAX];   /* p: track.w * p wide */
    view_rect full[VIEW_NEXT_MAX];  /* p_full, thin and pale, under the bar; empty when < 0 */
    view_rect pct[VIEW_NEXT_MAX];   /* "23.4 %" */
    view_rect group[VIEW_NEXT_MAX]; /* the heading over row i; empty where none */
    view_rect note;                 /* view_next's note; empty when none */
    view_rect caption;      /* "thin bar and (… %): every head on"; empty when no p_full */
    view_rect cut_note;     /* "text cut to n tokens"; empty unless cut */
    view_rect mark_note;    /* "drawn: ␣the (12.3 %)": the model writes it next; empty none */
    view_rect trained_note; /* "the model as trained: 12 heads a layer"; empty unless re-split */
    int size, title_size, small_size; /* rows, title, the pale numbers and the notes */
} view_next_box;

/* The caption band (s->caption): the progress strip (steps segments, step filled),
 * a line of "step k of N" with the lesson's title (and, in the window only, the
 * recording mark and "F5: back to step k"), the heading large and bold, the
 * caption's lines wrapped at word boundaries. Every run has its own place. */
#define VIEW_CAPTION_RUNS 256
typedef struct {
    int x, y;    /* top-left of the run's line box */
    int size, w; /* pixel size (scripts at 72 %), measured width */
    int level, bold;
    int heading; /* 1: the heading's, 0: the text's */
    int line;    /* the line it is on (heading and text counted together), 0-based */
    char text[VIEW_MARKUP_RUN_TEXT];
} view_caption_run;

typedef struct {
    int shown;
    int side;         /* beside the figure (a wide window); 0: under it */
    view_rect band;   /* the caption's panel */
    view_rect figure; /* what the rest of the view was laid out in */
    view_rect strip;  /* the progress strip, step of steps segments filled */
    int step, steps, seg_gap;
    view_rect meta; /* the line of "step k of N", the title and the hints */
    view_rect step_label, title, hint, rec;
    char step_text[48], title_text[160], hint_text[48], rec_text[24];
    int heading_size, text_size, meta_size;
    int at_floor; /* the sizes were lowered to the floor (and no further) */
    int cut;      /* something did not fit (runs past VIEW_CAPTION_RUNS, or no room) */
    int broken;   /* the markup was broken: drawn as plain text */
    int lines, run_count;
    view_caption_run run[VIEW_CAPTION_RUNS];
} view_caption_box;

/* Segment i (0-based) of the caption's progress strip. */
static inline view_rect view_caption_segment(const view_caption_box *C, int i) {
    const int n = C->steps > 0 ? C->steps : 1;
    const int x0 = C->strip.x + (int)((long)(C->strip.w + C->seg_gap) * i / n);
    const int x1 = C->strip.x + (int)((long)(C->strip.w + C->seg_gap) * (i + 1) / n) - C->seg_gap;
    return (view_rect){x0, C->strip.y, x1 > x0 ? x1 - x0 : 1, C->strip.h};
}

/* The caption's sizes at a window of (width, height) output pixels: the heading
 * and the text at their preferred size and their floor (36 and 28 px at 1920 x
 * 1080, in proportion to min(width / 1920, height / 1080)). */
void view_caption_sizes(int width, int height, int *heading, int *text, int *heading_floor,
                        int *text_floor);

typedef struct view_layout {
    /* sizes in output pixels: the data (titles, labels, the equation) at the zoom, and
       the controls (header buttons, status line, help) at ui_zoom, which stays below
       the zoom when the controls would otherwise take more than a third of the window */
    int font, font_small, font_title, line, pad, gap;
    int ui_font, ui_small, ui_line, ui_pad;
    float ui_zoom;
    float data_zoom; /* the zoom the data is shown at: below the state's zoom when the
                        window cannot hold one head at its base-zoom size any larger */
    view_rect header, formula, main, status;
    view_button_box buttons[BTN_COUNT];
    view_rect menu; /* the "More" panel (its buttons are buttons[BTN_MENU...]) */
    int menu_font;  /* their text size: the controls', smaller when the panel must */
    view_run hdr_runs[VIEW_MAX_HDR]; /* value captions between buttons ("h = 4") */
    int hdr_count;

    /* formula strip: text runs with real sub- and superscripts */
    view_run runs[VIEW_MAX_RUNS];
    int run_count;

    /* heads grid (or the focused head) */
    view_rect heads_area;
    int first_head, shown_heads, per_page, pages, page; /* 0-based first head */
    int grid_cols, grid_rows;
    view_head_box heads[VIEW_MAX_VISIBLE];
    int title_short; /* titles are the number alone ("12"): "head 64" would not fit */
    int label_size;  /* token label pixel size */
    int show_row_labels, show_col_labels;
    int label_stride;             /* every k-th token is labelled when cells are small */
    int label_line;               /* line height of a label */
    int row_label_w, col_label_h; /* space reserved for labels */
    view_rect attn_cbar;          /* sequential colorbar for attention */
    view_rect page_note;          /* "heads 1–16 of 64 · PgUp/PgDn" */

    /* focus view: Q_i, K_i, V_i, head_i beside the big head */
    int focus; /* 1-based focused head, 0 none */
    view_rect focus_caption;
    view_matrix_box qkv[4];

    /* the step-through of one head: nine stages from X to its share of MultiHead */
    view_steps steps;

    /* training mode: the curves and the pruning bars beside the heads */
    view_rect train_title, train_acc, train_loss, train_legend, train_bars, train_note;
    view_rect train_strip; /* the replay's strip of moments, under the loss plot */

    /* under the equation: how alike the heads are, and what the layer costs */
    int lesson_shown;
    int panels_page;       /* presenting, the panels gave way to the heads: the 1-based page of
                              their own, after the heads' pages (counted in pages); 0 none */
    view_rect lesson_area; /* a column beside the equation for them; empty: under it */
    int cost_font;         /* the cost's text size when it differs from font_small; 0 not */
    view_rect redund_title, redund_map, redund_cbar, redund_note, cost;
    /* the lesson on but its panels gave way to the heads: a line saying so under the
       equation; in the focus view, that the equation has no room (empty: none) */
    view_rect lesson_note;
    char lesson_note_text[64];
    int lesson_note_size;

    /* the equation Concat × W^O = MultiHead */
    view_rect eq_area, eq_title;
    view_matrix_box concat, w_o, out;
    view_rect times_sym, equals_sym;
    view_rect concat_band, wo_band; /* head bands: above Concat's columns, left of W^O's rows */
    int eq_arrange; /* VIEW_EQ_ROW, VIEW_EQ_WRAP (MultiHead under W^O) or VIEW_EQ_COLUMN */
    /* the equation's own text when it gave way to the heads (a zoom above the base, the
       focus view): the controls' sizes, smaller than the data's; eq_font 0: the data's */
    int eq_font, eq_font_small, eq_font_title, eq_line, eq_pad;
    /* the split of the layer view the layout chose (compare lays both panes out with
       the live one's): heads above (stacked) or left, their share in percent (0: none
       chosen), the lesson's panels' place, and whether the captions moved under the
       equation (a figure's bare layout) */
    int split_stacked, split_frac, split_lesson, split_bare;
    /* a bare layout's strip kept under the equation's part for the captions and the
       formula, when they fit neither under Concat nor under the whole equation (empty:
       none kept) */
    view_rect foot;

    /* compare (s->pinned): everything above is the live pane's, in window
       coordinates; the banner spans the window over both panes */
    int compare;
    int compare_stacked;       /* portrait: pinned above live */
    view_rect compare_banner;  /* the strip naming what differs */
    view_rect compare_pane[2]; /* 0 pinned, 1 live */
    view_rect compare_line;    /* between the panes */
    view_compare_side compare_side[2];
    int compare_font;       /* banner text size */
    view_rect compare_same; /* "nothing differs yet ..." when compare_count is 0 */

    /* a loaded model: its overview (in place of the heads and the equation) and the
       next-token panel (beside them, or alone for VIEW_PANEL_NEXT) */
    view_overview_box overview;
    view_next_box next;

    /* a lesson's caption (s->caption): its band; the rest is laid out in caption.figure */
    view_caption_box caption;

    /* the head view (s->head_view, VIEW_PANEL_LINES): one box per shown head's tile
       (one box for every head overlaid: lines_all), the legend in the colorbar's place */
    int lines_shown, lines_all;
    view_lines_box lines[VIEW_MAX_VISIBLE];
#define VIEW_LINES_LEGEND_LINES 2
    view_rect lines_legend[VIEW_LINES_LEGEND_LINES];
    char lines_legend_text[VIEW_LINES_LEGEND_LINES][160];
    int lines_legend_size;
} view_layout;

/* Cell (layer, head) of the overview; empty outside the grid or when not shown. */
view_rect view_overview_cell(const view_layout *L, int layer, int head);
/* Where "layer l" (1-based in the text) is written left of its row, and head k's
   number above its column in block b; empty when that label is dropped (no room). */
view_rect view_overview_layer_label(const view_layout *L, int layer);
view_rect view_overview_head_label(const view_layout *L, int block, int head);

enum { VIEW_EQ_ROW = 0, VIEW_EQ_WRAP, VIEW_EQ_COLUMN };

/* The zoom a window of (width, height) layout pixels starts at, and Ctrl+0 returns
 * to: the window as a scaled 1920x1080, min(width / 1920, height / 1080), down to a
 * zoom step, at least 100 % (3840x2160 gives 200 %). Heatmaps are sized at it. */
float view_zoom_for_size(int width, int height);

/* The text floors of a projected page (README, "Text floors"): a lesson's caption is
 * never under 1/VIEW_CAPTION_FLOOR_DIV of the window's or page's height, and on a deck
 * page the view's own text (formula strip, titles, labels, numbers, the side panels)
 * never under 1/VIEW_TEXT_FLOOR_DIV of it (sub- and superscripts 0.72 of their text).
 * VIEW_SMALLEST_TEXT is the view's smallest text at ui_scale 1 (px). view_text_floor:
 * the view's text floor, px, on a page of width x height (its height, or 3/4 of its
 * width on a page taller than 4:3). */
#define VIEW_CAPTION_FLOOR_DIV 40
#define VIEW_TEXT_FLOOR_DIV 54
#define VIEW_SMALLEST_TEXT 14
int view_text_floor(int width, int height);

/* The step-through's stages for layer: 10 where it holds Q and K before and after
 * RoPE (the rotation is stage 3), else 9. */
int view_steps_count(const attn_layer *layer);
/* What stage k (1-based) of layer's step-through is: the stage it is without RoPE
 * (1 X ... 9 head_i W^O_i), or VIEW_STAGE_ROPE. */
#define VIEW_STAGE_ROPE 10
int view_steps_kind(const attn_layer *layer, int k);

/* Computes the layout. Pure: depends only on its arguments. */
void view_layout_compute(view_layout *L, const view_state *s, view_measure_fn measure, void *ud);

/* The layout as one line of JSON: sizes, pages, zoom and every rectangle named
 * (["kind", "name", x, y, w, h]), for tests that drive the window. Returns its
 * length, or -1 when buf is too small. */
int view_layout_json(char *buf, size_t len, const view_layout *L, const view_state *s);

/* The text field, laid out: the text wrapped into lines at word boundaries (at
 * a character boundary when one word is wider than the field), scrolled so the
 * cursor's line shows. The IME composition is shown at the cursor. */
#define VIEW_EDIT_MAX_LINES 48
typedef struct {
    view_rect box;                      /* the field's panel */
    int prompt_x, prompt_y;             /* the one-line prompt */
    int text_x, text_y;                 /* first visible line's top-left */
    int size, line;                     /* text pixel size, line height */
    int first_line, shown, total_lines; /* lines [first_line, first_line + shown) of total */
    int start[VIEW_EDIT_MAX_LINES + 1]; /* byte offsets in the shown text (view_edit_text); */
    int end[VIEW_EDIT_MAX_LINES];       /* line i draws [start[i], end[i]) and owns the
                                           bytes up to start[i + 1] (the spaces after it) */
    int cursor_line, cursor_x;          /* shown line of the cursor (-1 none), its x in pixels */
    int count_x, count_y;               /* "n / 512 tokens" */
} view_editor;

/* The text as the field shows it: edit_text with the IME composition inserted
 * at the cursor, whitespace shown as spaces. Returns its length in bytes. */
int view_edit_text(char *buf, size_t len, const view_state *s);

/* Lays out the text field of s (s->editing) for layout L. */
void view_editor_layout(view_editor *E, const view_state *s, const view_layout *L,
                        view_measure_fn measure, void *ud);

/* Byte offset in s->edit_text nearest to the pointer (x, y), at a character
 * boundary; -1 when (x, y) is outside the field's panel. */
int view_editor_offset(const view_editor *E, const view_state *s, int x, int y,
                       view_measure_fn measure, void *ud);

/* What is under a pointer. */
typedef enum {
    HIT_NONE,
    HIT_BUTTON,
    HIT_HEAD_CELL, /* head, row (query), col (key) */
    HIT_HEAD_TITLE,
    HIT_ROW_LABEL, /* row (query) */
    HIT_COL_LABEL, /* col (key) */
    HIT_CONCAT,    /* row, col, head */
    HIT_W_O,       /* row, col, head (of the row) */
    HIT_OUT,       /* row, col */
    HIT_QKV,       /* which (0 Q, 1 K, 2 V, 3 head), row, col */
    HIT_HEAD_OFF,  /* the x in a head's title that switches it off / on: head */
    HIT_OVERVIEW,  /* a small heatmap of the model overview: row = layer, head */
    HIT_NEXT,      /* a row of the next-token panel: row */
    HIT_LINES_Q,   /* the head view: a query token (row) in head's tile (-1: overlaid) */
    HIT_LINES_K,   /* the head view: a key token (col) in head's tile */
} view_hit_kind;

typedef struct {
    view_hit_kind kind;
    int button;
    int head; /* 0-based */
    int row, col;
    int which;
} view_hit;

view_hit view_hit_test(const view_layout *L, const view_state *s, int x, int y);
/* The sweep of h (sweep_panel.c): the run whose point or square is at (x, y), its h
   index *a and seed index *sd: 1, else 0 (a sweep drawn with L). */
int view_sweep_hit(const view_layout *L, const view_sweep *w, int x, int y, int *a, int *sd);

/* The box of the x that switches head slot i of the grid off / on (in its title,
 * at the right end; empty when the title is too small, in a figure or presenting). */
view_rect view_head_off_box(const view_layout *L, const view_state *s, int slot);

/* Cache of coloured heatmap pixels, so unchanged matrices are not recoloured. */
typedef struct view_cache view_cache;
view_cache *view_cache_create(void);
void view_cache_destroy(view_cache *c);

/* Appends the whole picture for s and L to dl. Coloured pixels live in cache
 * until the next call. */
void view_render(draw_list *dl, view_cache *cache, const view_layout *L, const view_state *s,
                 view_measure_fn measure, void *ud);

/* What a figure's drawing list covers (its background aside), text measured with
 * measure; the whole canvas when it draws nothing. */
view_rect view_figure_bounds(const draw_list *dl, view_measure_fn measure, void *ud);
/* Moves the list so that content sits `margin` pixels from each edge of a canvas
 * just large enough, which becomes the list's size: a single panel, cropped. */
void view_figure_crop(draw_list *dl, view_rect content, int margin);

/* Theme colours. */
typedef struct {
    rgba bg, panel, text, muted, grid, accent_text, button, button_text, tooltip_bg, overlay;
} view_theme;
view_theme view_theme_get(int theme);
/* Accent colour of head i (0-based), distinct for neighbours. */
rgba view_head_color(int i, int theme);

/* Formats "12 × 64". */
void view_shape_label(char *buf, size_t len, int rows, int cols);

#endif
