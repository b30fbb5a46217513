/* save_files.h: the save soak's files for mhaviz to read (save_soak.c --mhaviz):
 * texts typed and opened, view files and recorded lessons made through the window's
 * keys, each opened headless with the mhaviz binary and compared with what the
 * state draws. Fails the run (exit 1, one line) at the first file mhaviz refuses. */
#ifndef MHAVIZ_TEST_SAVE_FILES_H
#define MHAVIZ_TEST_SAVE_FILES_H

#include "font.h"
#include "state.h"

typedef struct save_files save_files;

/* Writes the text files to open into dir (which the caller removes, after
   save_files_destroy); mhaviz is the binary that reads the saves. NULL on failure. */
save_files *save_files_create(const char *mhaviz, const char *dir, font_set *fonts);

/* One random action of the kind the window saves after: a text typed or opened,
   Ctrl+Shift+V, or a lesson's Ctrl+R / A / caption; every file saved is checked. */
void save_files_act(save_files *f, app_state *s, long step);

/* Stops a recording under way (its lesson checked) and prints the counts. */
void save_files_finish(save_files *f, app_state *s, long step);

/* Removes the files it wrote; NULL is fine. */
void save_files_destroy(save_files *f);

#endif
