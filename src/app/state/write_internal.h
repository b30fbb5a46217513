/* write_internal.h: the writer's state, shared by write.c (W, `.`, S) and
 * write_halt.c (what the model's own file may call: stopping without the mark, and
 * the text W leaves). Private to those two files. */
#ifndef MHAVIZ_WRITE_INTERNAL_H
#define MHAVIZ_WRITE_INTERNAL_H

#include <stdint.h>

#include "sampler.h"

struct app_writer {
    int on;         /* W: writing, a token every pace_ms */
    int written;    /* tokens this W wrote ... */
    int length;     /* ... of so many (write-length, or a lesson's `do = write N`) */
    int start;      /* a lesson's `do = write N` waiting for its model: N */
    int queued;     /* `.` presses waiting for the run being computed */
    int picked;     /* a token is drawn and marked, not yet appended */
    int pick;       /* its id */
    uint64_t rng;   /* the random numbers' state before the draw ... */
    uint64_t after; /* ... and after it */
    uint64_t seed;  /* the seed rng started from */
    double next_ms; /* the next token goes in then */
    sampler smp;
};

#endif
