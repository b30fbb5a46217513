/* teach.h: a lesson in the state machine (teach.c): presenting one (the keys a
 * clicker sends, jumps, F5 back to the step as written, Escape to leave), the
 * list of built-in lessons (G), and recording one (Ctrl+R, A). keymap.c asks
 * app_teach_key first; state.c hands every action to app_teach_apply first and
 * moves its clock with app_teach_tick. */
#ifndef MHAVIZ_TEACH_H
#define MHAVIZ_TEACH_H

#include <stddef.h>

#include "lesson_file.h"
#include "state.h"

typedef struct app_teach app_teach;

/* Opens the lesson at path and shows its first step. 0, or 1 / 2 (as
   lesson_read) with "FILE:LINE: what" in err and the view kept. */
int app_teach_open(app_state *s, const char *path, char *err, size_t errlen);

/* Shows step k (1-based) of the open lesson: its view, then its actions.
   0, or -1 with the status saying why (the view kept). */
int app_teach_goto(app_state *s, int k);

/* Steps from..to (1-based) of L, read from file: 0 when every model folder their views
   name is there, else 2 with "FILE:LINE: model: PATH: why" for the first that names a
   missing one (a README model's folder: which files to download, and from where). A
   lesson step is refused before it changes anything, and a deck before its first page. */
int app_teach_models_check(const lesson *L, int from, int to, const char *file, char *err,
                           size_t errlen);

/* The key the lesson takes in this state into *a (1), or 0: the key acts as usual. */
int app_teach_key(const app_state *s, int key, int mods, app_action *a);

/* Applies a lesson action (ACT_LESSON_*, ACT_RECORD*) or an action the lesson
   or the recorder must see first (Enter in the caption field). Returns -1 when
   it is not the lesson's, else 1 if the picture changed, 0 if not. */
int app_teach_apply(app_state *s, const app_action *a);

/* Moves the timed actions (stages, sweep) to now; 1 if the picture changed. */
int app_teach_tick(app_state *s, double now_ms);
/* Milliseconds until the next timed action, or -1 for none. */
int app_teach_timeout_ms(const app_state *s);

/* Runs the current step's timed actions to their end at once (a deck page shows
   where they end). */
void app_teach_finish(app_state *s);

/* The open lesson (NULL none), the step shown (1-based) and how many. */
const lesson *app_teach_lesson(const app_state *s, int *k, int *n);
/* Why the last app_teach_goto failed: "FILE:LINE: what". */
const char *app_teach_why(const app_state *s);
/* The file being recorded (NULL when not recording), and its steps so far. */
const char *app_teach_recording(const app_state *s, int *steps);

/* Points the view at the caption (after the view's own caption type exists). */
void app_teach_view(const app_state *s, view_state *vs);

/* The folder of the built-in lessons (examples/lessons in the source, or the
   installed share/mhaviz/lessons), or NULL when none is found. */
const char *app_teach_builtin_dir(void);

void app_teach_free(app_teach *t);

#endif
