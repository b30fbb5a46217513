/* notice.c: the state's messages: a notice (a success such as a saved file) or
 * an error in the status line, each replacing the other, and when the next one
 * goes. The clock itself moves in state.c (app_tick, app_next_timeout_ms). */
#include <stdio.h>

#include "state_internal.h"

void app_notify(app_state *s, const char *msg, int error) {
    if (error) {
        snprintf(s->status, sizeof s->status, "%.250s", msg);
        s->status_until = s->now_ms + APP_NOTICE_MS;
        s->notice[0] = '\0';
    } else {
        snprintf(s->notice, sizeof s->notice, "%s", msg);
        s->notice_until = s->now_ms + APP_NOTICE_MS;
        s->status[0] = '\0';
    }
    s->dirty = 1;
}
