/* cli_state.c: --state FILE beside other options. Each option that sets what a
 * view file can set names those settings here, and they are taken from the
 * option, not the file: `--state lesson.view -H 8` is the file's view at h = 8. */
#include <stddef.h>

#include "cli_internal.h"

/* Option (getopt's answer) and the view-file settings it sets. */
static const struct {
    int opt;
    const char *names[3];
} given[] = {
    {'H', {"h", "train-h", "model-h"}},
    {'d', {"d_model", "train-d_model", NULL}},
    {'s', {"seed", "train-seed", NULL}},
    {'t', {"sample", NULL, NULL}}, /* the text: sample, text and text-file are one */
    {OPT_SAMPLE, {"sample", NULL, NULL}},
    {OPT_TEXT_FILE, {"sample", NULL, NULL}},
    {OPT_MASK, {"mask", NULL, NULL}},
    {OPT_NO_SCALE, {"scale", NULL, NULL}},
    {OPT_TEMPERATURE, {"temperature", NULL, NULL}},
    {OPT_PAD, {"pad", NULL, NULL}},
    {OPT_ABLATE, {"ablate", NULL, NULL}},
    {OPT_WEIGHTS, {"weights", NULL, NULL}},
    {OPT_COMPARE, {"compare", "pinned-sample", "pinned-ablate"}},
    {OPT_PAGE, {"page", NULL, NULL}},
    {OPT_PINNED_PAGE, {"pinned-page", NULL, NULL}},
    {OPT_VALUES, {"values", NULL, NULL}},
    {OPT_CONTRAST, {"contrast", NULL, NULL}},
    {OPT_DIFF, {"diff", NULL, NULL}},
    {OPT_PRESENT, {"present", NULL, NULL}},
    {OPT_THEME, {"theme", NULL, NULL}},
    {OPT_COLORMAP, {"colormap", NULL, NULL}},
    {OPT_MODEL, {"model", NULL, NULL}},
    {OPT_LAYER, {"layer", "train-layer", NULL}},
};

void cli_state_given(cli_options *o, const unsigned char *seen) {
    o->state_given_count = 0;
    for (size_t i = 0; i < sizeof given / sizeof given[0]; i++) {
        if (!seen[given[i].opt]) continue;
        for (int k = 0; k < 3 && given[i].names[k]; k++)
            if (o->state_given_count < (int)(sizeof o->state_given / sizeof o->state_given[0]))
                o->state_given[o->state_given_count++] = given[i].names[k];
    }
}
