/* cli_lesson.c: --lesson FILE and --step K: a lesson in the window (presented
 * from its first step), one step's view with --export or --dump, or every step
 * as a deck with --export (teach.c, lesson_file.c, modes/lesson_mode.c). The
 * file itself is read by main before any mode starts. */
#include <stdio.h>
#include <string.h>

#include "cli_internal.h"
#define LESSON_MAX_STEPS 999 /* lesson_file.h's: the cli library has no state */

int cli_lesson_option(cli_options *o, cli_flags *f, int opt, const char *arg, char *err,
                      size_t errlen) {
    (void)f;
    long v = 0;
    switch (opt) {
    case OPT_LESSON:
        if (!arg[0]) return cli_fail(err, errlen, "--lesson: needs a file name");
        o->lesson_path = arg;
        return 0;
    case OPT_STEP:
        if (cli_parse_int(arg, 1, LESSON_MAX_STEPS, &v) != 0)
            return cli_fail(err, errlen, "--step '%s': must be a whole number between 1 and %d",
                            arg, LESSON_MAX_STEPS);
        o->lesson_step = (int)v;
        return 0;
    default: return CLI_NOT_MINE;
    }
}

int cli_lesson_check(const cli_options *o, char *err, size_t errlen) {
    if (o->lesson_step && !o->lesson_path)
        return cli_fail(err, errlen, "--step %d: only with --lesson FILE", o->lesson_step);
    if (!o->lesson_path) return 0;
    if (o->model_path) return cli_fail(err, errlen, "--lesson and --model: give one or the other");
    if (o->mode == CLI_TRAIN)
        return cli_fail(err, errlen, "--lesson and --train: a lesson's steps train (train = TASK)");
    if (o->state_file)
        return cli_fail(err, errlen, "--lesson and --state: a lesson's steps are views already");
    if (o->compare)
        return cli_fail(err, errlen, "--lesson and --compare: a lesson's steps pin their own");
    if (o->mode == CLI_DUMP && !o->lesson_step)
        return cli_fail(err, errlen, "--lesson with --dump: give --step K (the step to dump)");
    if (o->mode == CLI_WINDOW && o->lesson_step)
        return cli_fail(err, errlen,
                        "--step %d: only with --export or --dump (the window starts at step 1)",
                        o->lesson_step);
    return 0;
}
