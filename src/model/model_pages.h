/* model_pages.h: where the README's models are downloaded from, by the name of
 * their folder: so that a missing folder (a lesson's `model = models/gpt2`, or
 * --model) is answered with the files to fetch. Names only: nothing is fetched. */
#ifndef MHAVIZ_MODEL_PAGES_H
#define MHAVIZ_MODEL_PAGES_H

#include <stddef.h>

/* "download FILES from PAGE into it" for a folder path whose last part is one
   of the README's models (gpt2, bert-base-uncased, …), into out; 0, or -1 (out
   "") for a name it does not know. */
int model_fetch_hint(char *out, size_t outlen, const char *path);

/* After a failed open of path (err its message): where path is missing and named
   as one of the README's models, ": download ... into it" added to err. */
void model_fetch_say(char *err, size_t errlen, const char *path);

#endif
