/* mem_avail.h: how much memory a load may still take, asked before a large block is
 * allocated: the system's MemAvailable (/proc/meminfo) and, where an address-space
 * limit is set (RLIMIT_AS), what is left of it beside the process's own VmSize. */
#ifndef MHAVIZ_MEM_AVAIL_H
#define MHAVIZ_MEM_AVAIL_H

#include <stdint.h>

/* Bytes available, the smaller of the two; UINT64_MAX when neither can be read. */
uint64_t mem_available(void);

#endif
