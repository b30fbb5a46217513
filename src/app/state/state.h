/* state.h: the app's state and the actions that change it, with no SDL. The
 * window turns events into actions (app_key_action, or an action built from a
 * mouse or window event); app_apply changes the state and says why when it
 * cannot; the frame lays the state out (app_layout) and draws the one view it
 * laid out (app_layout_view); app_view fills one for saves and tests. Every
 * key of the README's table is an action, so every key is a unit test. */
#ifndef MHAVIZ_STATE_H
#define MHAVIZ_STATE_H

#include <stddef.h>

#include "mha.h"
#include "options.h"
#include "tok.h"
#include "view.h"

#define APP_EDIT_MAX 8192
#define APP_MSG_LEN 4400
#define APP_NOTICE_MS 6000.0 /* how long a status message or notice stays */
#define APP_DEFAULT_W 1600   /* window and export size, layout pixels */
#define APP_DEFAULT_H 900
#define APP_DEFAULT_PNG_SCALE 2 /* Ctrl+S multiplies the window's pixels by this */
#define APP_ZOOM_MIN 0.8f
#define APP_ZOOM_MAX 3.0f

typedef enum {
    ACT_NONE = 0,
    ACT_H_UP,
    ACT_H_DOWN,
    ACT_D_UP,
    ACT_D_DOWN,
    ACT_SAMPLE_NEXT,
    ACT_SAMPLE_PREV,
    ACT_SEED,
    ACT_MASK,
    ACT_SCALE,
    ACT_CMAP,
    ACT_THEME,
    ACT_ZOOM_IN,
    ACT_ZOOM_OUT,
    ACT_ZOOM_RESET,
    ACT_PAGE_PREV,
    ACT_PAGE_NEXT,
    ACT_PINNED_PAGE_PREV, /* Shift+PgUp / PgDn: the pinned pane's page (compare) */
    ACT_PINNED_PAGE_NEXT,
    ACT_FOCUS, /* arg: 1-based head */
    ACT_HELP,
    ACT_FULLSCREEN,
    ACT_PRESENT, /* presentation mode on / off: no controls, the data as large as it goes */
    ACT_ESCAPE,  /* closes what is open (help, text field, focus); never quits */
    ACT_QUIT,
    ACT_SAVE,       /* Ctrl+S: the whole view as PNG */
    ACT_SAVE_PANEL, /* Ctrl+Shift+S: the focused head, or the equation */
    ACT_PNG_SCALE,  /* cycles the Ctrl+S multiplier 1..4 */
    ACT_EDIT_START,
    ACT_EDIT_APPLY,
    ACT_EDIT_CANCEL,
    ACT_EDIT_INSERT,    /* text: UTF-8 typed or pasted */
    ACT_EDIT_PREEDIT,   /* text: IME composition in progress */
    ACT_EDIT_BACKSPACE, /* the selection, or the character before the cursor */
    ACT_EDIT_DELETE,    /* the selection, or the character after the cursor */
    ACT_EDIT_CLEAR,
    ACT_EDIT_LEFT, /* cursor one character left; arg 1: one word */
    ACT_EDIT_RIGHT,
    ACT_EDIT_HOME,
    ACT_EDIT_END,
    ACT_EDIT_CURSOR, /* arg: byte offset to put the cursor at (a click in the text) */
    ACT_EDIT_OPEN,   /* Ctrl+O in the field: the text of the file the field names */
    ACT_HOVER,       /* x, y: pointer in output pixels */
    ACT_LEAVE,       /* pointer left the window */
    ACT_CLICK,       /* x, y: left button in output pixels */
    ACT_RESIZE,      /* x, y: output pixels; f: output pixels per window pixel */
    /* the lesson: masks, temperature, ablation, designed heads, how to look */
    ACT_PAD,     /* padding with [PAD] tokens on / off */
    ACT_TEMP_UP, /* temperature to the next step of the ladder */
    ACT_TEMP_DOWN,
    ACT_WEIGHTS,      /* random weights / designed heads */
    ACT_ABLATE,       /* arg: 1-based head, or 0 for the focused one: off / on again */
    ACT_ABLATE_CLEAR, /* every head on again */
    ACT_KV_FEWER,     /* J: a loaded model's query heads share fewer K/V heads */
    ACT_KV_MORE,      /* Shift+J: more, up to its own */
    ACT_DIFF,         /* MultiHead / its difference from the unablated MultiHead */
    ACT_VALUES,       /* numbers in the cells where they fit */
    ACT_CONTRAST,     /* attention scale: fixed 0..1, row maximum, logarithmic */
    ACT_STEP_NEXT,    /* focus view: the next stage of the head's computation */
    ACT_STEP_PREV,
    ACT_LESSON,      /* the redundancy and cost panels on / off */
    ACT_TRAIN,       /* training mode: start, pause, resume (training.c) */
    ACT_TRAIN_LAYER, /* training mode: the next layer's heads */
    ACT_COMPARE,     /* pins the view to compare it with the live one; unpins */
    ACT_LAYER,       /* a loaded model: open layer arg (0-based), head x (1-based) focused */
    ACT_OVERVIEW,    /* a loaded model: the overview of every layer x head on / off */
    /* a lesson (teach.c): presenting, the built-in list, recording */
    ACT_LESSON_NEXT,  /* Space, PgDn, Right */
    ACT_LESSON_PREV,  /* Backspace, PgUp, Left */
    ACT_LESSON_FIRST, /* Home */
    ACT_LESSON_LAST,  /* End */
    ACT_LESSON_DIGIT, /* arg: 0..9, typed for a jump */
    ACT_LESSON_JUMP,  /* Enter after digits */
    ACT_LESSON_RESET, /* F5: the step as written again */
    ACT_LESSON_LEAVE, /* Escape: the lesson ends, its view stays */
    ACT_LESSON_LIST,  /* G: the built-in lessons (arg > 0 with the list open: open lesson arg) */
    ACT_RECORD,       /* Ctrl+R: recording a lesson on / off */
    ACT_RECORD_STEP,  /* A while recording: the view as a step, then its caption */
    /* Ctrl+Shift+V: the view as a view file in the export folder (view_file.c) */
    ACT_SAVE_VIEW_FILE,
    ACT_TRAIN_SPEED, /* training mode: full speed, slow motion, paused, in turn (S) */
    ACT_MENU,        /* the "More" panel, a button for every key, open / closed */
    ACT_REPLAY_LIVE, /* training mode: from a moment of the replay back to live (End) */
    ACT_HEAD_VIEW,   /* the heads as heatmaps / as lines (the head view), grid and focus (H) */
    ACT_TRAIN_SWEEP, /* training mode: the sweep of h on / off (H; sweep_view.c) */
    ACT_WRITE,       /* a loaded model writes, token after token, or stops (W; write.c) */
    ACT_WRITE_STOP,  /* any key while it writes: it stops (the key does nothing else) */
    ACT_WRITE_PACE,  /* the writing's pace: the next of the ladder (S with a loaded model) */
    ACT_COUNT
} app_action_kind;

typedef struct {
    app_action_kind kind;
    int x, y;         /* pointer or size */
    int arg;          /* ACT_FOCUS: head */
    float f;          /* ACT_RESIZE: ui scale */
    const char *text; /* ACT_EDIT_INSERT, ACT_EDIT_PREEDIT */
} app_action;

/* Keys as the state machine sees them: printable ASCII keys are their lower-case
 * character ('c', '1', '=', '/'); the rest are named here. */
enum {
    APP_KEY_UP = 0x10000,
    APP_KEY_DOWN,
    APP_KEY_LEFT,
    APP_KEY_RIGHT,
    APP_KEY_TAB,
    APP_KEY_RETURN,
    APP_KEY_ESCAPE,
    APP_KEY_BACKSPACE,
    APP_KEY_PAGEUP,
    APP_KEY_PAGEDOWN,
    APP_KEY_F1,
    APP_KEY_F11,
    APP_KEY_HOME,
    APP_KEY_END,
    APP_KEY_DELETE,
    APP_KEY_F5,
};
enum { APP_MOD_SHIFT = 1, APP_MOD_CTRL = 2 };

typedef enum {
    APP_SAVE_NONE = 0,
    APP_SAVE_VIEW,   /* the whole view */
    APP_SAVE_PANEL,  /* the focused head, or the equation with no head focused */
    APP_SAVE_EXPORT, /* as --panel and --background say */
    /* Ctrl+Shift+V: the view as a view file (the window calls app_view_file_save) */
    APP_SAVE_VIEW_FILE,
} app_save_kind;

typedef struct app_derived app_derived;

/* How a loaded model writes (write.c; the settings table's sample-temperature,
   top-k, top-p, sample-seed, write-length and write-pace rows): the sampler of
   sampler.h, as --generate's. */
typedef struct {
    float temperature; /* on the logits (not the attention's score temperature); 0: argmax */
    int top_k;         /* 0: every token */
    float top_p;       /* 1: every token top-k keeps */
    uint64_t seed;     /* the random numbers' (splitmix64) start, from 1 */
    int length;        /* tokens W writes before it stops */
    int pace_ms;       /* one token every that many ms at most */
} app_write_opts;
typedef struct app_writer app_writer;
#define APP_WRITE_LENGTH 20    /* write-length's default */
#define APP_WRITE_PACE_MS 1000 /* write-pace's: one token a second, a pace a class follows */
#define APP_WRITE_PACE_MIN 50
#define APP_WRITE_PACE_MAX 10000
#define APP_WRITE_LENGTH_MAX 4096
/* The defaults (the settings table's), with what the options give over them
   (--sample-temperature, --top-k, --top-p, -s; o NULL: none): --generate's sampler
   and the window's write key alike (write.c). */
app_write_opts app_write_opts_of(const cli_options *o);

/* How often the key path did its work (MHAVIZ_STATS prints them, tests read them):
   the derivations app_derive made, the views app_view filled, the actions applied,
   and the times a derivation computed the layer's own numbers (each head's entropy,
   how alike the heads are, what they pass on: new data only, never a focus alone). */
typedef struct {
    unsigned long derives, views, actions, layer_numbers;
} app_counts;
typedef struct app_pin app_pin;
typedef struct app_training app_training;
typedef struct app_async app_async;
typedef struct app_gpt app_gpt;

#define APP_ABLATE_MAX 8192 /* "LAYER:HEAD,..." of every head of the largest model */

/* A model to open (gpt.c): the path, the text, the layer shown (0-based), the
   heads (0: its own), the heads to remove ("LAYER:HEAD,..." or ""), the K/V heads
   regrouped to (0: its own). */
typedef struct {
    char path[4096];
    char text[APP_EDIT_MAX];
    int layer, h;
    char ablate[APP_ABLATE_MAX];
    int kv;
} app_gpt_request;

#define APP_QUEUE_MAX 64 /* keys that wait for the model being computed */

/* The recompute the state asks for, as plain data (request.c): the state
 * decides what to compute; the jobs layer above it (async.c), once attached,
 * takes the request, computes it on a worker and hands the model back
 * (app_model_adopt). With no jobs layer attached every recompute is done at once. */
typedef struct {
    int attached;        /* a jobs layer computes the large recomputes (async.h) */
    double threshold_ms; /* a recompute estimated above this goes to it */
    int pending;         /* s->cfg, s->sample and want ask for more than what runs */
    int running;         /* the jobs layer computes running_cfg with running_n tokens */
    mha_config running_cfg;
    int running_n;
    tok_list want;                   /* the text asked for, while busy */
    int shown_sample;                /* the sample of the text shown, while busy */
    app_action queue[APP_QUEUE_MAX]; /* keys that wait for the model, in order */
    int queued, replaying;
    unsigned long recomputes; /* in the foreground or the background */
    char line[512];           /* the progress sign, made by app_refresh */
} app_request;

typedef struct {
    /* what is computed */
    mha_config cfg; /* resolved: the model's (while a recompute runs: the one asked for) */
    tok_list toks;
    int sample; /* 1-based built-in sample; 0 = custom text */
    char custom[APP_EDIT_MAX];
    mha_model *m;
    unsigned long data_version; /* changes whenever the model's numbers change */
    double compute_ms, frame_ms;
    int timings; /* the status line shows compute_ms and frame_ms: developers' numbers */
    /* The forward's own time at the setting shown, measured on the jobs layer's
       worker once a setting (async.c): every row projected, the same way whatever
       change led there. forward_key is the setting it is for (app_forward_key of
       the model shown); 0: not measured yet. */
    double forward_ms;
    unsigned long forward_key;

    /* how it is shown */
    int width, height; /* output pixels */
    float ui_scale;    /* output pixels per window pixel */
    view_look look;    /* theme, colormap, contrast, focus, page, zoom ...: the view's whole */
    float zoom_base;   /* the zoom this window size starts at, and Ctrl+0 returns to */
    int help, fullscreen;
    int menu;        /* the "More" panel open: a button for every key (keymap.c's list) */
    int pinned_page; /* the pinned pane's page of heads, 0-based (Shift+PgUp/PgDn) */
    int png_scale;
    int lesson;              /* the redundancy and cost panels shown */
    const char *export_dir;  /* Ctrl+S folder, NULL = current */
    view_panel export_panel; /* --panel, for APP_SAVE_EXPORT */
    int export_panel_head;   /* 1-based, with VIEW_PANEL_HEAD */
    int transparent;         /* --background transparent */

    /* the window: a text whose fixed scale turns dark switches to row maxima (derive.c) */
    int auto_contrast;
    int dark_field;             /* the layer shown last: a row's largest under 0.25 on average */
    unsigned long dark_version; /* the data_version dark_field is for (0: none yet) */

    /* the text field */
    int editing;
    char edit[APP_EDIT_MAX];
    char preedit[256];
    int edit_cursor;   /* byte offset in edit, always at a character boundary */
    int edit_selected; /* the whole text is selected: typing replaces it */
    int edit_tokens;   /* tokens the text has now (the field shows n / 512) */
    /* reads a text file for Ctrl+O and a dropped file (the window's: text_file_read,
       0 / 1 / 2 with "FILE: why"); NULL: the state cannot open files */
    int (*read_text)(const char *path, char **out, char *err, size_t errlen);

    /* messages: status is the state's answer to the last action (why it could not
       be taken, or what changed); notice is a success such as a saved file's path.
       Each goes after APP_NOTICE_MS or when the other replaces it, so an error
       and a success are never shown together. */
    char status[256];
    char notice[APP_MSG_LEN];
    double status_until, notice_until, now_ms;

    /* the pointer and the layout it is tested against */
    int hover_x, hover_y;
    view_hit hover;
    view_layout *L;
    int layout_valid;
    view_measure_fn measure;
    void *measure_ud;

    /* numbers the view draws that the core does not keep (derive.c), for the
       model at derived_version */
    app_derived *derived;

    /* compare (compare.c): the pinned view shown beside the live one; NULL none */
    app_pin *pin;
    app_pin *pins_dropped; /* unpinned while the jobs layer computes them: freed when done */

    /* large recomputes on a worker thread, once the window turns it on (async.h):
       while one runs, cfg and sample are what was asked for, m and toks what is shown.
       req is what the state asks for; async is the jobs layer that computes it while
       attached (its owner's, app_async_enable / app_async_disable: the state never
       calls it) */
    app_request req;
    app_async *async;

    /* a loaded GPT-2-family model (gpt.c): the view shows its layers; NULL none.
       gpt_want asks the jobs layer to load one (gpt_wanted set; taken: gpt_loading,
       with gpt_permille of it read, written by the jobs layer on this thread) */
    app_gpt *gpt;
    app_gpt_request gpt_want;
    int gpt_wanted, gpt_loading, gpt_permille;

    /* the model writes (write.c): its settings, and the writing under way (NULL none) */
    app_write_opts write;
    app_writer *writer;

    /* training mode (training.c): a small model trained on a worker thread */
    app_training *training;
    int train_mode;
    struct app_sweep *sweep; /* its sweep of h (H; sweep_view.c), NULL until the first */

    /* a lesson presented or recorded (teach.c); NULL none */
    struct app_teach *teach;

    /* counted by app_derive, app_view and app_apply; a pointer, so that app_view,
       which only reads the state, counts too */
    app_counts *counts;
    int applying; /* app_apply under way (a click's action inside it: 2): it derives at its end */

    /* the view the last layout was made from (app_layout), which the frame draws */
    view_state *frame;

    int quit;
    int dirty; /* the picture must be redrawn */
    app_save_kind save_request;
} app_state;

/* Creates an empty state whose layouts measure text with measure(ud); NULL on
 * out-of-memory. app_state_destroy(NULL) is fine. */
app_state *app_state_create(view_measure_fn measure, void *ud);
void app_state_destroy(app_state *s);

/* The one place options become the initial state, for the window, export and
 * bench alike: size (1600x900 unless --size), theme, colormap, PNG multiplier,
 * zoom, sample or text, page, and the model computed for cfg. Takes ownership of
 * *toks (left empty). Returns 0, or 1 with a message in err (2 when an export's
 * --page names a page its figure does not have). */
int app_state_init(app_state *s, const cli_options *o, tok_list *toks, const mha_config *cfg,
                   char *err, size_t errlen);

/* Applies one action. Returns 1 when the picture must be redrawn. When the
 * action cannot be taken the state is unchanged and status says why. */
int app_apply(app_state *s, const app_action *a);

/* Asks for the model at path (a checkpoint's folder or .safetensors) on the
 * current text, loaded by the jobs layer (the window: dropped on it); the model
 * shown stays until it is read, and stays when it cannot be. */
void app_open_model(app_state *s, const char *path);

/* Shows the text of the file at path (s->read_text reads it) as the custom text,
 * closing the text field; when it cannot be read or is not text the view stays
 * and the status line says why. Returns 0 or -1. */
int app_open_text_file(app_state *s, const char *path);

/* Shorthand for app_apply with a bare action of this kind. */
int app_do(app_state *s, app_action_kind kind);

/* The action a key press means in the current state (ACT_NONE for none).
 * key is a character or an APP_KEY_*, mods a mask of APP_MOD_*. */
app_action app_key_action(const app_state *s, int key, int mods);

/* The keys app_key_action gives a meaning in some state (count of them in *count). */
const int *app_keys(int *count);

/* Moves the clock: a message whose time has passed goes. Returns 1 if the
 * picture changed. */
int app_tick(app_state *s, double now_ms);
/* Milliseconds until the next timed change (a message expiring), or -1 for none. */
int app_next_timeout_ms(const app_state *s);

/* Shows msg as a notice (e.g. "saved ...") or, when error is set, as the status
 * line's error; either replaces the other and goes after APP_NOTICE_MS. */
void app_notify(app_state *s, const char *msg, int error);

/* Lays out the state at its size, clamps the page to the pages there are, and
 * returns the layout (owned by the state, valid until the next action). */
const view_layout *app_layout(app_state *s);

/* The view app_layout last laid out: what the frame draws, made once a frame
 * (a view_state owned by the state, valid until the next app_layout). */
const view_state *app_layout_view(const app_state *s);

/* The view of the state: what the window draws. */
void app_view(const app_state *s, view_state *vs);

/* A loaded model's text cut to the positions it holds: 1 and the one line that says
 * so in buf (headless modes print it as a note); else 0. */
int app_model_cut(const app_state *s, char *buf, size_t len);
/* The view as a saved figure: no pointer, overlays, notices or buttons; the
 * panel and background as kind says. */
void app_figure_view(const app_state *s, app_save_kind kind, view_state *vs);

/* The counts of the state's work so far (app_counts). */
app_counts app_state_counts(const app_state *s);

/* Takes the pending save request (APP_SAVE_NONE if none), clearing it. */
app_save_kind app_take_save(app_state *s);

/* The setting a forward's time depends on: n (padding included), d_model, h, the
   mask, the scaling and whether any head is off (one more product by W^O). Never 0. */
unsigned long app_forward_key(const mha_config *cfg, int n);

#endif
