/* notice.c: the state's messages: a notice (a success such as a saved file) or
 * an error in the status line, each replacing the other, and when the next one
 * goes. The clock itself moves in state.c (app_tick). */
#include <stdio.h>

#include "state_internal.h"
#include "teach.h"

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

int app_next_timeout_ms(const app_state *s) {
    if (app_training_running(s)) return 100; /* new snapshots ten times a second */
    double next = -1.0;
    if (s->notice[0]) next = s->notice_until;
    if (s->status[0] && (next < 0.0 || s->status_until < next)) next = s->status_until;
    const int lesson = app_teach_timeout_ms(s); /* a lesson's stages or sweep */
    if (next < 0.0) return lesson;
    double left = next - s->now_ms;
    const int ms = left > 0.0 ? (int)(left + 0.999) : 0;
    return lesson >= 0 && lesson < ms ? lesson : ms;
}
