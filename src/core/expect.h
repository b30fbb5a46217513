/* expect.h: the invariant check. A shape that cannot happen is a bug, not a runtime
 * error: MHA_EXPECT prints the file, the line and the condition, then aborts.
 * The bottom of the core: it calls nothing of the project. */
#ifndef MHAVIZ_EXPECT_H
#define MHAVIZ_EXPECT_H

/* Invariant check: a shape that cannot happen is a bug, not a runtime error. */
#define MHA_EXPECT(cond)                                                                           \
    do {                                                                                           \
        if (!(cond)) mha_fatal(__FILE__, __LINE__, #cond);                                         \
    } while (0)

/* Prints "mhaviz: internal error at FILE:LINE: WHAT" to stderr and aborts. */
void mha_fatal(const char *file, int line, const char *what);

#endif
