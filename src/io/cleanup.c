/* cleanup.c: the table of temporary paths and the SIGINT/SIGTERM handler that
 * removes them (see cleanup.h). The handler calls only async-signal-safe functions. */
#define _GNU_SOURCE /* gettid, tgkill */
#include "cleanup.h"

#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

enum { SLOT_FREE = 0, SLOT_FILE, SLOT_DIR };

static struct {
    volatile sig_atomic_t kind; /* SLOT_*; set after path is complete */
    char path[CLEANUP_PATH];
} slots[CLEANUP_MAX];

static pid_t main_tid;                    /* the thread that installed the handlers */
static _Thread_local sigset_t held_saved; /* the mask the outermost cleanup_hold replaced */
static _Thread_local int holding;         /* sections open on this thread */
static char done_note[CLEANUP_PATH];
static volatile sig_atomic_t done_set; /* done_note is complete */

int cleanup_add(const char *path, int is_dir) {
    size_t len = strlen(path);
    if (len >= CLEANUP_PATH) return CLEANUP_NONE;
    for (int i = 0; i < CLEANUP_MAX; i++) {
        if (slots[i].kind != SLOT_FREE) continue;
        done_set = 0; /* new work: what was done is not all there is to say */
        memcpy(slots[i].path, path, len + 1);
        /* the handler runs on this thread: the path must be in memory before the
           kind says the slot is in use */
        atomic_signal_fence(memory_order_seq_cst);
        slots[i].kind = is_dir ? SLOT_DIR : SLOT_FILE;
        return i;
    }
    return CLEANUP_NONE;
}

void cleanup_forget(int handle) {
    if (handle < 0 || handle >= CLEANUP_MAX) return;
    slots[handle].kind = SLOT_FREE;
    atomic_signal_fence(memory_order_seq_cst);
}

static void signal_set(sigset_t *set) {
    sigemptyset(set);
    sigaddset(set, SIGINT);
    sigaddset(set, SIGTERM);
    sigaddset(set, SIGHUP);
}

void cleanup_hold(void) {
    if (holding++) return;
    sigset_t set;
    signal_set(&set);
    pthread_sigmask(SIG_BLOCK, &set, &held_saved);
}

void cleanup_release(void) {
    if (holding <= 0 || --holding) return;
    pthread_sigmask(SIG_SETMASK, &held_saved, NULL); /* a pending signal acts here */
}

void cleanup_done(const char *what) {
    done_set = 0;
    atomic_signal_fence(memory_order_seq_cst);
    snprintf(done_note, sizeof done_note, "%s", what);
    atomic_signal_fence(memory_order_seq_cst);
    done_set = 1;
}

static void say(const char *s) {
    size_t len = strlen(s); /* strlen is async-signal-safe since POSIX.1-2016 */
    while (len > 0) {
        ssize_t w = write(STDERR_FILENO, s, len);
        if (w <= 0) return;
        s += w;
        len -= (size_t)w;
    }
}

static void on_signal(int sig) {
    if (gettid() != main_tid) {          /* an OpenBLAS worker: let the main thread act, so a */
        tgkill(getpid(), main_tid, sig); /* held section there holds for it too */
        return;
    }
    for (int i = 0; i < CLEANUP_MAX; i++)
        if (slots[i].kind == SLOT_FILE) unlink(slots[i].path);
    /* folders: a temporary folder inside a created parent goes first; repeat until
       a pass removes nothing, whatever order they were registered in */
    for (int removed = 1; removed;) {
        removed = 0;
        for (int i = 0; i < CLEANUP_MAX; i++)
            if (slots[i].kind == SLOT_DIR && rmdir(slots[i].path) == 0) {
                slots[i].kind = SLOT_FREE;
                removed = 1;
            }
    }
    say(sig == SIGINT    ? "mhaviz: interrupted (SIGINT); "
        : sig == SIGTERM ? "mhaviz: terminated (SIGTERM); "
                         : "mhaviz: hung up (SIGHUP); ");
    say(done_set ? done_note : "temporary files removed");
    say("\n");
    _exit(128 + sig);
}

void cleanup_install_signals(void) {
    main_tid = gettid();
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    signal_set(&sa.sa_mask); /* one signal at a time */
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL); /* the terminal closed */
}
