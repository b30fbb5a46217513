/* temporary until the window lands */
#include <stdio.h>
#include "app.h"
int app_window(const cli_options *o, const tok_list *toks, const mha_config *cfg, char *err,
               size_t errlen) {
    (void)o; (void)toks; (void)cfg; (void)err; (void)errlen;
    return 0;
}
int app_export(const cli_options *o, const tok_list *toks, const mha_config *cfg, char *err,
               size_t errlen) {
    (void)o; (void)toks; (void)cfg;
    snprintf(err, errlen, "export not built yet");
    return 1;
}
