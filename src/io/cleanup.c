/* cleanup.c: the table of temporary paths and the SIGINT/SIGTERM handler that
 * removes them (see cleanup.h). The handler calls only async-signal-safe functions. */
#define _GNU_SOURCE /* gettid, tgkill */
#include "cleanup.h"

#include <stdatomic.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

enum { SLOT_FREE = 0, SLOT_FILE, SLOT_DIR };

static struct {
    volatile sig_atomic_t kind; /* SLOT_*; set after path is complete */
    char path[CLEANUP_PATH];
} slots[CLEANUP_MAX];

static pid_t main_tid;      /* the thread that installed the handlers */
static sigset_t held_saved; /* the mask cleanup_hold replaced */
static int holding;

int cleanup_add(const char *path, int is_dir) {
    size_t len = strlen(path);
    if (len >= CLEANUP_PATH) return CLEANUP_NONE;
    for (int i = 0; i < CLEANUP_MAX; i++) {
        if (slots[i].kind != SLOT_FREE) continue;
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
    sigset_t set;
    signal_set(&set);
    pthread_sigmask(SIG_BLOCK, &set, &held_saved);
    holding = 1;
}

void cleanup_release(void) {
    if (!holding) return;
    holding = 0;
    pthread_sigmask(SIG_SETMASK, &held_saved, NULL); /* a pending signal acts here */
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
    say(sig == SIGINT    ? "mhaviz: interrupted (SIGINT); temporary files removed\n"
        : sig == SIGTERM ? "mhaviz: terminated (SIGTERM); temporary files removed\n"
                         : "mhaviz: hung up (SIGHUP); temporary files removed\n");
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
