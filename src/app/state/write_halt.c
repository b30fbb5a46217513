/* write_halt.c: the writing stopped from below: gpt.c stops it when its model or
 * text is replaced, and turns its own mark off itself (write.c's app_write_stop also
 * unmarks, through gpt.c); and the text W leaves, as valid UTF-8. A leaf: it calls
 * nothing in the state's other files, so gpt.c and write.c do not call each other. */
#include <string.h>

#include "bpe.h"
#include "state_internal.h"
#include "write_internal.h"

void app_write_halt(app_state *s) {
    app_writer *w = s->writer;
    if (!w) return;
    w->on = 0;
    w->queued = 0;
    w->picked = 0;
    s->layout_valid = 0;
    s->dirty = 1;
}

/* 1 when the n (< 4) bytes at p begin a character that more bytes would end. */
static int begun(const unsigned char *p, size_t n) {
    static const unsigned char second[] = {0x80, 0x90, 0xA0}; /* E0, ED, F0, F4 differ */
    for (size_t k = 0; k < sizeof second; k++) {
        unsigned char c[4] = {0x80, 0x80, 0x80, 0x80};
        memcpy(c, p, n);
        if (n < 2) c[1] = second[k];
        if (bpe_utf8_char(c, 4, NULL, NULL) > n) return 1;
    }
    return 0;
}

void app_write_text(char *out, size_t size, const unsigned char *raw, size_t n) {
    size_t o = 0;
    for (size_t i = 0; i < n;) {
        size_t sub = 1;
        const size_t len = bpe_utf8_char(raw + i, n - i, &sub, NULL);
        if (!len && sub == n - i && sub < 4 && begun(raw + i, sub)) break; /* not ended yet */
        const char *put = len ? (const char *)raw + i : "\xEF\xBF\xBD";
        const size_t put_len = len ? len : 3;
        if (o + put_len >= size) break;
        memcpy(out + o, put, put_len);
        o += put_len;
        i += len ? len : sub;
    }
    out[o] = '\0';
}
