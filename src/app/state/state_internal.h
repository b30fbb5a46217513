/* state_internal.h: what the state machine's files share, not part of its API. */
#ifndef MHAVIZ_STATE_INTERNAL_H
#define MHAVIZ_STATE_INTERNAL_H

#include "checkpoint.h"
#include "gpt2.h"
#include "learn.h"
#include "request.h"
#include "state.h"
#include "train_loop.h"

/* Opens the text field with the current text, all of it selected. */
void app_edit_start(app_state *s);

/* Applies one ACT_EDIT_* action other than start and apply to the open field.
 * Returns 1 if the field changed, 0 if it is closed or the action is not one. */
int app_edit_apply(app_state *s, const app_action *a);

/* model.c: recomputes the model for cfg and toks; on success the state takes
 * toks (when they are not its own already). On failure nothing changes and
 * status says why; returns -1. */
int app_recompute(app_state *s, const mha_config *cfg, tok_list *toks);
/* Recomputes with cfg and the state's tokens (clearing the status first). */
void app_change_cfg(app_state *s, mha_config cfg);

/* model.c's estimate of a recompute, in ms: cfg (resolved) at n positions, the
 * rows of Q, K, V from `first` on computed again, new weights drawn or not. */
double app_cost_ms(const mha_config *cfg, int n, int first, int new_weights);

/* The padded length for a text of n tokens: n plus a quarter (at least 2), at most 512. */
int app_pad_length(int n);

/* Applies one of the lesson's actions (ACT_PAD ... ACT_LESSON). Returns 1 if the
 * picture changed, 0 if the action was refused (status says why) or is not one. */
int app_lesson_apply(app_state *s, const app_action *a);

/* Brings the derived numbers up to date with the model and the focused head
 * and points the view at them; 0, or -1 when out of memory (then the view
 * simply shows less). Called once after a change: at the end of app_apply, of
 * app_state_init and of a model's adoption, or by app_layout when a change came
 * some other way (app_derive_stale). */
int app_derive(app_state *s);
/* 1 when the numbers are not those of the model and head shown. */
int app_derive_stale(const app_state *s);
/* The layer shown, as pointers into the model (cheap), and the window's switch to
 * row maxima when a new model's fixed scale turns dark: where a model changes,
 * before the rest of the action reads the contrast. 0, or -1 out of memory. */
int app_derive_layer(app_state *s);
/* After the model or the focused head changed: derives now, or, while an action
 * is applied (s->applying), leaves it to the action's end, so that an action
 * derives once however many changes it makes (app_derive_layer meanwhile). */
void app_derive_after(app_state *s);
/* The stages of the step-through of the layer shown: 10 in a RoPE model, else 9
 * (view_steps_count). */
int app_stage_count(const app_state *s);
void app_derived_free(app_derived *d);
/* Fills the view's pointers to the derived numbers. */
void app_derived_view(const app_state *s, view_state *vs);
/* The layer's own numbers (each head's entropy, how alike the heads are and their
 * baseline, what they pass on) and the dark-field scan off the window's thread,
 * once the jobs layer is attached (async.c), for a loaded model and the built-in
 * one (not training mode's learner): app_derive leaves them asked for, and the view
 * says "computing…" where they go. app_numbers_wanted: the state's are asked for
 * and none is out. app_numbers_take hands the jobs layer a job for the numbers of
 * the data shown (NULL: none wanted, or one is out; the built-in model's layer is
 * copied there, as the window recomputes that model in place); app_numbers_run
 * computes it on a worker from the copy or the loaded model's run shown, which is
 * neither written nor freed until app_numbers_done; that shows them (and follows
 * the scan: the contrast) if they are still the state's data's, else drops them
 * (1: the picture changed). */
typedef struct app_numbers app_numbers;
int app_numbers_wanted(const app_state *s);
app_numbers *app_numbers_take(app_state *s);
void app_numbers_run(app_numbers *j);
int app_numbers_done(app_state *s, app_numbers *j);

/* Training mode (training.c). app_training_apply returns -1 for an action that
 * is not training's in the current mode, else whether the picture changed. */
int app_training_apply(app_state *s, const app_action *a);
/* The sweep of h's keys in training mode (H, and while its view shows), before
   app_training_apply: 1 taken, -1 not (training.c, over sweep_view.c). */
int app_training_sweep(app_state *s, const app_action *a);
/* 1 while training mode is shown and steps are taken (the window then redraws
 * ten times a second). */
int app_training_running(const app_state *s);
/* A view file's training settings: the configuration the next start uses, the
   steps its run stops at (0 never) and the layer shown (0-based); 1 in training
   mode. app_training_set enters training mode with them (on: a new run unless the
   same one is shown already) or leaves it (paused); 0, or -1 out of memory. */
int app_training_get(const app_state *s, learn_config *cfg, long *steps, int *layer);
int app_training_set(app_state *s, int on, const learn_config *cfg, long steps, int layer);
/* cfg moved to task: a d_model at the old task's own (learn_task_d_model) moves to
   the new task's, one chosen is kept; h then the largest that divides it, at most h. */
void app_training_task_shape(learn_config *cfg, learn_task_id task);
/* Points the view at the trained heads and the curves (training mode only),
 * as app_training_refresh last made them. */
void app_training_view(const app_state *s, view_state *vs);
/* Makes what app_training_view points at from the latest snapshot. */
void app_training_refresh(app_state *s);
void app_training_free(app_training *t);
/* The replay shows the moment at step (the jobs layer copies it at the next poll):
   a page of --train --export --moments. 0, or -1 when the run has no moment there. */
int app_training_replay_at(app_state *s, long step);

/* gpt.c: a loaded model. app_gpt_load reads q's model and runs its text (any
 * thread: it touches no state); NULL with *rc 1 / 2 and a message. app_gpt_adopt
 * shows it (NULL: the model shown stays and the status says err); app_gpt_open
 * is the two at once. app_gpt_apply returns -1 for an action not the model's. */
app_gpt *app_gpt_load(const app_gpt_request *q, ckpt_progress_fn progress, void *ud, int *rc,
                      char *err, size_t errlen);
void app_gpt_adopt(app_state *s, app_gpt *g, const char *err);
/* err as the status line: a message too long loses the start of its path, never
   its reason. */
void app_gpt_say(app_state *s, const char *err);
int app_gpt_open(app_state *s, const app_gpt_request *q, char *err, size_t errlen);
int app_gpt_active(const app_state *s);
/* The heads shown (the model's own or a re-split), 0 without a model. */
int app_gpt_heads(const app_state *s);
/* The heads the model was trained with, 0 without a model. */
int app_gpt_own_heads(const app_state *s);
/* Tokens text has for the model's tokenizer; the most a run keeps. 0 without a model. */
int app_gpt_count(const app_state *s, const char *text);
int app_gpt_limit(const app_state *s);
int app_gpt_apply(app_state *s, const app_action *a);
int app_gpt_text(app_state *s, const char *text, int sample);
/* The model's changes off the window's thread (async.c): the keys change what is
 * asked (a text, heads removed, the layer, the split); app_gpt_job_take hands the
 * newest change not yet computed to the jobs layer (NULL: none, or one is out),
 * app_gpt_job_run computes it on a worker into the run not shown (touching
 * nothing else), app_gpt_job_done shows it, or drops it when a newer change came
 * meanwhile (0: nothing changed, 1: the status line, 2: the run shown, whose
 * picture the caller derives). app_gpt_busy: a change asked or out. */
typedef struct app_gpt_job app_gpt_job;
app_gpt_job *app_gpt_job_take(app_state *s);
void app_gpt_job_run(app_gpt_job *j);
int app_gpt_job_done(app_state *s, app_gpt_job *j);
int app_gpt_busy(const app_state *s);
int app_gpt_layer(const app_state *s, attn_layer *L);
/* A job reads the run shown (the layer's numbers): until app_gpt_read_end no change
   is computed into it and the model is not freed (one let go meanwhile is freed
   then). Returns the model read (NULL without one); app_gpt_read_end(NULL) is fine. */
app_gpt *app_gpt_read_begin(app_state *s);
void app_gpt_read_end(app_gpt *g);
void app_gpt_view(const app_state *s, view_state *vs);
void app_gpt_export_panel(app_state *s, view_panel panel);
/* on: the shown layer's own heads are measured on the next token (gpt2_run_effects)
   whenever its text or layer changes, computed now or asked of the jobs layer; off:
   not (the panel that shows them is hidden). */
void app_gpt_measure(app_state *s, int on);
void app_gpt_free(app_gpt *g);
/* A view file's model settings: the path opened (or asked for), the layer shown
   (0-based), the heads (0: its own) and the overview; 0 without a model. */
int app_gpt_settings(const app_state *s, const char **path, int *layer, int *h, int *overview);
/* Checks a layer and a re-split against the model shown: 0, or -1 with why. */
int app_gpt_check_view(const app_state *s, int layer, int h, char *err, size_t errlen);
int app_gpt_check(const app_gpt *g, int layer, int h, char *err, size_t errlen);
/* Shows layer at h heads (0: its own) sharing kv K/V heads (0: its own), with the
   overview open or not (checked first: app_gpt_check, app_gpt_check_kv); one recompute. */
void app_gpt_set_view(app_state *s, int layer, int h, int kv, int overview);
/* Closes the model shown: the random model's view again. */
void app_gpt_close(app_state *s);
/* The model shown, its run and its heads, for a dump of the view (a lesson's
   step): 0, or -1 when no model is shown or one is asked for or computed. */
int app_gpt_shown_run(app_state *s, const gpt2_model **m, gpt2_run **run, int *h);
/* A loaded model's heads removed (X), "LAYER:HEAD,..." 1-based, layer by layer
   ("" none; a model asked for: the ones it will remove) into buf; 0 when no model
   is shown or asked for. */
int app_gpt_off_list(const app_state *s, char *buf, size_t len);
/* 0 when every head of spec (a view file's model-ablate, its form checked) is one of
   g's, else -1 with "model-ablate = SPEC: ..." in err. */
int app_gpt_check_off(const app_gpt *g, const char *spec, char *err, size_t errlen);
/* Removes exactly spec's heads (the others back) and recomputes: apply's X. */
void app_gpt_set_off(app_state *s, const char *spec);
/* A loaded model's K/V heads regrouped (J; a view file's model-kv): to how many (0: its
   own; a model asked for: what it will share); app_gpt_check_kv: 0 when kv (0 own)
   divides g's K/V heads and goes with the heads h (0: its own; a re-split does not
   share), else -1 with "model-kv = ..." in err. */
int app_gpt_kv(const app_state *s);
int app_gpt_check_kv(const app_gpt *g, int kv, int h, char *err, size_t errlen);
/* The model writes (write.c reads the run shown through these): its next-token
   logits (NULL: none; vocab floats), a token's probability and label, the tokens
   that still fit, those written after the text, the end-of-text id (-1: none);
   app_gpt_mark marks the token drawn in the next-token panel (-1: none), and
   app_gpt_append appends one to the text and asks for the run with it (0, or -1
   when no more fit). */
const float *app_gpt_logits(const app_state *s, int *vocab);
float app_gpt_prob(const app_state *s, int id);
void app_gpt_token_label(const app_state *s, int id, char *buf, size_t len);
int app_gpt_room(const app_state *s);
int app_gpt_written(const app_state *s);
int app_gpt_ends(const app_state *s, int id); /* 1: id ends a text (model_eos.h, as --generate) */
void app_gpt_mark(app_state *s, int id);
int app_gpt_marked(const app_state *s); /* the token marked, -1 none */
int app_gpt_append(app_state *s, int id);

/* write.c: W, `.` and S with a loaded model, and the writing's clock. app_write_apply
   returns -1 for an action not its own; app_write_tick takes a step when one is due
   (1: the picture changed); app_write_timeout_ms: ms until then, -1 none. */
int app_write_apply(app_state *s, const app_action *a);
int app_write_tick(app_state *s, double now_ms);
int app_write_timeout_ms(const app_state *s);
int app_write_on(const app_state *s); /* 1 while it writes (any key stops it) */
void app_write_stop(app_state *s, const char *why);
/* write_halt.c: the writing stops (no status, the mark left to the caller: gpt.c
   replacing its model or text clears its own) */
void app_write_halt(app_state *s);
/* A lesson's `do = write N`: N tokens, once its model is shown (0: none, and the
   writing under way stops); app_write_finish
   writes them at once (no jobs layer: a deck's page, --lesson --step K). */
void app_write_start(app_state *s, int n);
void app_write_finish(app_state *s);
void app_write_view(const app_state *s, view_state *vs);
void app_write_free(app_writer *w);
/* The n bytes of a text and the tokens written after it as the text W leaves (into
   out, size bytes, NUL-terminated, cut at a character): valid UTF-8, each maximal
   ill-formed part one U+FFFD (as the tokenizer and Python's 'replace' read them), and
   a character the bytes have only begun left out (the next token may end it). */
void app_write_text(char *out, size_t size, const unsigned char *raw, size_t n);

/* compare.c: B pins the view (or unpins it); 1 if the picture changed. */
int app_compare_toggle(app_state *s);
/* Points the view at the pinned view and the settings that differ (if pinned). */
void app_compare_view(const app_state *s, view_state *vs);
void app_pin_free(app_pin *p);
/* Pins the view --compare describes: this one with the settings it names.
 * Returns 0, or -1 with "--compare: why" in err. */
int app_compare_start(app_state *s, const cli_options *o, char *err, size_t errlen);
/* Brings the pinned view's own view state (from live, the live view) and the
 * settings that differ up to date with the state (app_refresh calls it);
 * app_compare_view only points at them. */
void app_compare_refresh(app_state *s, const view_state *live);
/* The pages of heads the pinned pane's last layout has (0: none laid out), and
 * its h in *h when h is not NULL. */
int app_compare_pages(const app_state *s, int *h);
/* 1 and the pinned view's configuration in *cfg, its text in *toks and its sample
   in *sample (NULL: not wanted) when a view is pinned, else 0. */
int app_compare_pinned(const app_state *s, mha_config *cfg, const tok_list **toks, int *sample);
/* Pins cfg (resolved) with toks and sample (NULL: the live text), replacing any pin:
   0, or -1 with why in err (then the pin shown stays). */
int app_compare_pin(app_state *s, const mha_config *cfg, const tok_list *toks, int sample,
                    char *err, size_t errlen);
/* Frees the pins unpinned while their model was being computed (destroy). */
void app_pins_dropped_free(app_state *s);

/* request.c: the recompute the state asks for (s->req), as the state machine
 * sees it. While busy, s->cfg and s->sample are what was asked for and s->m,
 * s->toks the model shown with its text; app_request_want is the text asked for
 * (s->toks when not busy) and app_request_shown_sample the sample shown. */
int app_request_shown_sample(const app_state *s);
tok_list *app_request_want(app_state *s);
/* Asks for cfg (resolved and checked) with toks: s->toks or the text asked for
 * is copied, another list is taken (left empty). Sets s->cfg; 0, or -1 out of
 * memory (status says so). */
int app_request_ask(app_state *s, const mha_config *cfg, tok_list *toks);
/* After each action: a message that measured the model shown (X's "MultiHead
 * changes by ...") is dropped when the model it is about is still being computed. */
void app_request_after(app_state *s, const app_action *a);
/* 1 if the action must wait for the model being computed (it is kept and
 * applied once that model is shown: adopt.c). */
int app_request_defer(app_state *s, const app_action *a);
/* Makes the progress sign into s->req.line (app_refresh calls it). */
void app_request_line(app_state *s);
/* The progress sign while busy ("computing h = 16, ..."), as app_refresh last
 * made it, else NULL. */
const char *app_request_status(const app_state *s);

/* actions.c: the actions grouped by what they change; each returns 1 if the
 * picture changed (the caller then lays it out anew), 0 if not, -1 for an
 * action not of its group. */
int app_apply_model(app_state *s, const app_action *a);  /* h, d_model, sample, seed, ... */
int app_apply_look(app_state *s, const app_action *a);   /* theme, zoom, pages, focus, ... */
int app_apply_text(app_state *s, const app_action *a);   /* the text field */
int app_apply_lesson(app_state *s, const app_action *a); /* the lesson, compare, resize */
/* The pointer moved to x, y (-1, -1: it left): 1 if what is under it changed. */
int app_hover(app_state *s, int x, int y);
/* A click at x, y: the action it means in *then (ACT_NONE for none, to be
 * applied by the caller); returns 1 if the click itself changed the picture. */
int app_click(app_state *s, int x, int y, app_action *then);
/* keymap.c: the "More" panel's buttons for the mode shown, into vs (app_view). */
void app_menu_view(const app_state *s, view_state *vs);
/* actions.c: in training mode, an action that is for the attention view changes
   nothing and the status line says so, naming its key: 1 then, else 0. */
int app_training_refuse(app_state *s, const app_action *a);
/* Tokenises text and recomputes; sample is 1-based, 0 for custom text. */
int app_load_text(app_state *s, const char *text, int sample);

#endif
