/* cleanup.h: temporary files and folders that must not outlive an interrupted run.
 * Writers register a temporary path while it exists and forget it once it is
 * renamed into place or removed. After cleanup_install_signals, SIGINT, SIGTERM or
 * SIGHUP removes every registered path (files first, then the folders), says so
 * on stderr and exits 128 + the signal (130, 143, 129). The handler does only
 * async-signal-safe calls (unlink, rmdir, write, _exit), so it acts at once, even
 * inside a library call (a matrix product, zlib, cairo) that no flag would reach.
 * One process, one table: the program is single-threaded apart from OpenBLAS's
 * workers, and a signal that lands on one of them is passed to the main thread. */
#ifndef MHAVIZ_CLEANUP_H
#define MHAVIZ_CLEANUP_H

#include <signal.h>

#define CLEANUP_MAX 64    /* registered paths at once */
#define CLEANUP_PATH 4224 /* bytes of a registered path, '\0' included */
#define CLEANUP_NONE (-1) /* the handle of a path that was not registered */

/* Registers path (a file, or a folder when is_dir) for removal on a signal.
 * Returns a handle, or CLEANUP_NONE when the table is full or the path too long
 * (the caller still works; only an interrupt would leave that path behind). */
int cleanup_add(const char *path, int is_dir);

/* Forgets a handle (the path was renamed into place or removed). CLEANUP_NONE is
 * fine. */
void cleanup_forget(int handle);

/* Critical sections: between cleanup_hold and cleanup_release, the three signals
 * wait, so a step such as "create a file and register it" or "rename it into
 * place and forget it" is never cut in half. A signal that arrived meanwhile acts
 * at the outermost cleanup_release. Sections nest (a deck's commit holds around
 * atomic_commit's own). */
void cleanup_hold(void);
void cleanup_release(void);

/* Records what is already in place for good (at most CLEANUP_PATH bytes), for a
 * signal that acts after it: the handler then says "mhaviz: terminated (SIGTERM);
 * WHAT" (still removing any temporary path) instead of claiming that only
 * temporary files existed. Call it inside the held section that put it in place;
 * the next cleanup_add (new work begins) forgets it. */
void cleanup_done(const char *what);

/* Installs the SIGINT, SIGTERM and SIGHUP handlers (for the headless modes: the
 * window leaves them to SDL, which turns the first two into a quit). SIGINT is
 * caught even when the shell started mhaviz with it ignored (a background job of
 * a script): an interrupted export or dump leaves nothing behind, so stopping is
 * always safe. */
void cleanup_install_signals(void);

#endif
