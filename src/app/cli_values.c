/* cli_values.c: the value parsers every option group shares (numbers, sizes, words)
 * and the one way a group refuses a value (cli_fail). What each option accepts is
 * the group's. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_internal.h"

int cli_parse_size(const char *s, int *w, int *h) {
    char buf[32];
    const char *x = strchr(s, 'x');
    if (!x || (size_t)(x - s) >= sizeof buf) return -1;
    memcpy(buf, s, (size_t)(x - s));
    buf[x - s] = '\0';
    long a = 0, b = 0;
    if (cli_parse_int(buf, 200, 8192, &a) != 0 || cli_parse_int(x + 1, 200, 8192, &b) != 0)
        return -1;
    *w = (int)a;
    *h = (int)b;
    return 0;
}

void cli_one_line(char *err) {
    for (unsigned char *p = (unsigned char *)err; *p; p++)
        if (*p < 0x20 || *p == 0x7F) *p = '?';
}

int cli_fail(char *err, size_t errlen, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    cli_one_line(err);
    return 2;
}

int cli_set_mode(cli_options *o, cli_mode m, const char *opt, char *err, size_t errlen) {
    /* --dump with --export: both only with --train, which check_combinations asks */
    if ((o->mode == CLI_DUMP && m == CLI_EXPORT) || (o->mode == CLI_EXPORT && m == CLI_DUMP)) {
        o->mode = CLI_EXPORT;
        return 0;
    }
    if (o->mode != CLI_WINDOW && o->mode != m)
        return cli_fail(err, errlen, "%s: cannot be combined with another output option", opt);
    o->mode = m;
    return 0;
}
