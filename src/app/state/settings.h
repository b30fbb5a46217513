/* settings.h: a view as a set of named settings (the view file's lines,
 * "name = value"), independent of how the state holds them. A view file or a
 * lesson step sets some; capture reads all of them from a state; apply makes a
 * state show them, checking everything before changing anything. The names and
 * values are the README's "View files" section. */
#ifndef MHAVIZ_SETTINGS_H
#define MHAVIZ_SETTINGS_H

#include <stddef.h>

#include "state.h"

typedef struct app_settings app_settings; /* opaque: which settings are set, values */

#define APP_VIEW_FILE_MAX (1u << 20) /* a view file larger than 1 MiB is refused */

app_settings *app_settings_create(void); /* none set; NULL on out-of-memory */
void app_settings_free(app_settings *st);
app_settings *app_settings_clone(const app_settings *st);
/* Sets one setting from its text; base_dir resolves text-file. 0, or -1 with
   "what is wrong" in err (no FILE:LINE: the caller adds it). */
int app_settings_set(app_settings *st, const char *name, const char *value, const char *base_dir,
                     char *err, size_t errlen);
void app_settings_merge(app_settings *dst, const app_settings *src); /* src's set ones win */
int app_settings_count(const app_settings *st);                      /* how many are set */
int app_settings_equal(const app_settings *a, const app_settings *b);
/* The defaults: exactly what `mhaviz` with no option opens (every setting set). */
void app_settings_defaults(app_settings *st);
/* Every setting of what s shows (every setting set). */
void app_settings_capture(const app_state *s, app_settings *st);
/* "name = value\n" lines for each setting set in st that differs from base (NULL: all
   set ones), in a fixed order. Returns bytes needed (like snprintf). */
size_t app_settings_write(const app_settings *st, const app_settings *base, char *buf, size_t len);
/* Makes s show st: every setting st sets is applied, the others kept. 0, or -1 with err
   (then s is unchanged: check everything before changing anything). */
int app_settings_apply(app_state *s, const app_settings *st, char *err, size_t errlen);
/* Reads / writes (atomically) a view file. read: err is "FILE:LINE: what"; rc 1 unreadable,
   2 unusable. */
int app_view_file_read(const char *path, app_settings *st, char *err, size_t errlen);
int app_view_file_write(const char *path, const app_settings *st, char *err, size_t errlen);

/* Additions (beyond the shared contract). */
/* 1 if the setting called name is set in st (name as in the file). */
int app_settings_has(const app_settings *st, const char *name);
/* Where the settings were read, for apply's messages: file names them all, and
   the setting called name was on line (apply's error then starts "FILE:LINE: "; a
   lesson reader calls these after each app_settings_set). */
void app_settings_origin(app_settings *st, const char *file);
void app_settings_line(app_settings *st, const char *name, int line);
/* The canonical value of the setting called name into buf ("" when it is not set
   or not a name); returns buf. */
char *app_settings_get(const app_settings *st, const char *name, char *buf, size_t len);
/* Unsets the setting called name (nothing if it is not set or not a name). */
void app_settings_unset(app_settings *st, const char *name);
/* With one of -H and -d given (nonzero), the file's other one into the one that is
   0, so the two are checked together before the view opens. */
void app_settings_shape(const app_settings *st, int *h, int *d_model);
/* "FILE:LINE: name = " for the setting called name as read from a file (just
   "name = " when it was not), into buf; returns buf. */
char *app_settings_where(const app_settings *st, const char *name, char *buf, size_t len);
/* Parses a whole view file's text (len bytes, any content): file names the file in
   err ("FILE:LINE: what"); base_dir resolves text-file. 0, or 2 with err. */
int app_view_file_parse(const char *text, size_t len, const char *file, const char *base_dir,
                        app_settings *st, char *err, size_t errlen);
/* The window's Ctrl+Shift+V: the view shown, captured, written atomically into the
   export folder as mhaviz-hH-dD-YYYYmmdd-HHMMSS.view (its name in path); the notice
   says where, a failure is the status line's. 0, or -1. */
int app_view_file_save(app_state *s, char *path, size_t pathlen);
/* Opens a view file in s (a file dropped on the window): applied whole, or not at
   all with the reason ("FILE:LINE: what") on the status line and the view kept. 0, or -1. */
int app_view_file_open(app_state *s, const char *path);
/* The settings the long option (getopt's name, "heads") sets, as their names in a
   view file, into names (at most max); returns how many. */
int app_settings_of_option(const char *option, const char **names, int max);

#endif
