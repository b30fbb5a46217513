/* mem_avail.c: the memory a load may still take (mem_avail.h). */
#define _DEFAULT_SOURCE
#include "mem_avail.h"

#include <stdio.h>
#include <string.h>
#include <sys/resource.h>

/* "KEY: N kB" of a /proc file, in bytes; 0 when absent. */
static uint64_t proc_kb(const char *path, const char *key) {
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    char line[256];
    unsigned long long kb = 0;
    const size_t kl = strlen(key);
    while (fgets(line, sizeof line, f))
        if (strncmp(line, key, kl) == 0 && sscanf(line + kl, " %llu", &kb) == 1) break;
    fclose(f);
    return (uint64_t)kb * 1024u;
}

uint64_t mem_available(void) {
    uint64_t avail = proc_kb("/proc/meminfo", "MemAvailable:");
    if (avail == 0) avail = UINT64_MAX;
    struct rlimit rl;
    if (getrlimit(RLIMIT_AS, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY) {
        const uint64_t used = proc_kb("/proc/self/status", "VmSize:");
        const uint64_t left = (uint64_t)rl.rlim_cur > used ? (uint64_t)rl.rlim_cur - used : 0;
        if (left < avail) avail = left;
    }
    return avail;
}
