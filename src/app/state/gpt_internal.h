/* gpt_internal.h: a loaded model in the state, shared by gpt.c (loading, the jobs,
 * the keys, the view) and gpt_edit.c (the heads removed as a list, and the tokens
 * the model writes): gpt_edit.c calls gpt.c, never the other way. */
#ifndef MHAVIZ_GPT_INTERNAL_H
#define MHAVIZ_GPT_INTERNAL_H

#include "gpt2.h"
#include "gpt_fill.h"
#include "model_eos.h"
#include "state_internal.h"

/* A change asked of the model, computed into the run not shown: the jobs
   layer's from app_gpt_job_take until app_gpt_job_done. */
struct app_gpt_job {
    app_gpt *g;
    gpt2_run *r;
    const gpt2_run *from; /* the run shown when it was taken: r is brought to it first
                             (gpt2_run_sync), then computes the change; NULL: r is it */
    char text[APP_EDIT_MAX];
    int more[GPT2_MAX_N], n_more; /* the tokens written after it */
    unsigned char *off;
    int layer, h, kv;
    int overview;    /* the overview's maps too */
    int effects;     /* the layer's heads measured on the next token too */
    unsigned long v; /* the g->want_v it computes */
    int rc, out;
    char err[256];
};

/* What a key removed or restored, said once the run shows it. */
typedef struct {
    int on; /* 1: a head's change waits to be said */
    int layer, head, off, top;
    double before;
    int blank; /* 1: top is the first blank's (an encoder's), -1: nothing to measure */
} gpt_say;

struct app_gpt {
    gpt2_model *m;
    gpt2_run runs[2]; /* runs[cur] is shown; the other is the job's while one is out */
    int cur;
    /* what the keys ask for: a run reaches it (app_gpt_job_run), then it is shown */
    char text[APP_EDIT_MAX];
    int more[GPT2_MAX_N]; /* the tokens written after text (W, write.c), as ids */
    int n_more;
    model_eos eos;        /* the tokens that end a text (W stops there) */
    int mark;             /* the token drawn to be written next, marked in the panel; -1 none */
    unsigned char *off;   /* (layers, h): heads removed */
    int layer;            /* 0-based */
    int h;                /* the model's own, or a re-split */
    int kv;               /* K/V heads regrouped to (J, Shift+J); 0: the model's own */
    int effects;          /* 1: the shown layer's heads measured on the next token (panels on) */
    int measuring;        /* the change asked for is that measure (a second job, after the view) */
    unsigned long want_v; /* counts the changes asked for */
    int pending;          /* want_v is not computed nor being computed */
    int orphan;           /* dropped by the state while its job was out: the jobs layer frees it */
    const gpt2_run *read; /* the run a job reads (app_gpt_read_begin), written by none; NULL */
    gpt_say say;
    app_gpt_job job;
    int overview_open;
    int next_k;        /* tokens the panel shows: 5 in the window, 10 in --panel next */
    char path[4096];   /* as it was opened (a view file's model = PATH) */
    char tok_desc[96]; /* its tokenizer in words, for the help (model_tok_describe) */
    view_overview ov;
    const float *attn[TF_MAX_LAYERS];
    view_next next;
    char next_label[VIEW_NEXT_MAX][GPT2_LABEL];
    char after[GPT2_LABEL];
    gpt_fill_text fill; /* an encoder's panel: "fill the blank" */
    char mark_label[GPT2_LABEL];
    model_source src;
};

/* The run shown. */
gpt2_run *gpt_shown(const app_gpt *g);
/* A change asked for: computed now, or by the jobs layer (a change not yet taken is
   replaced by this one). */
void gpt_want(app_state *s);
/* The next-token panel's mark of the token drawn to be written next. */
void gpt_mark_next(app_gpt *g);

#endif
