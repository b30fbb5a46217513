/* cli_state.c: --state FILE beside other options. Each option that sets what a
 * view file can set is named in that setting's row of the table of settings
 * (settings.c), and those settings are taken from the option, not the file:
 * `--state lesson.view -H 8` is the file's view at h = 8. */
#include <getopt.h>
#include <stddef.h>

#include "cli_internal.h"
#include "settings.h"

void cli_state_given(cli_options *o, const unsigned char *seen, const struct option *opts) {
    const int room = (int)(sizeof o->state_given / sizeof o->state_given[0]);
    o->state_given_count = 0;
    for (int i = 0; opts[i].name; i++) {
        if (!seen[opts[i].val]) continue;
        o->state_given_count += app_settings_of_option(
            opts[i].name, o->state_given + o->state_given_count, room - o->state_given_count);
    }
}
