/* Allocation that cannot fail quietly.
 *
 * runmon's convention (docs/ARCHITECTURE.md, "Errors"): the readers and writers of a finished
 * session (summary, report, sink index) grow their tables with these, and running out of
 * memory there ends the process with a message (abort() keeps a core
 * for the bug it most likely is). The recorder's per-sample paths
 * allocate nothing: their buffers are sized at start, and a row that does not fit is dropped
 * and counted, so the workload never pays for the monitor's memory.
 */
#ifndef RUNMON_BASE_ALLOC_H
#define RUNMON_BASE_ALLOC_H

#include <stddef.h>

/* realloc, calloc and strdup that abort with "runmon: out of memory" instead of returning
 * NULL (calloc of 0 elements returns a valid pointer). */
void *rm_xrealloc(void *p, size_t n);
void *rm_xcalloc(size_t n, size_t size);
char *rm_xstrdup(const char *s);

/* A copy of the n bytes at p in new memory. Aborts like rm_xrealloc. */
void *rm_xmemdup(const void *p, size_t n);

/* Grows an array p of *cap elements of elem bytes to hold at least need, doubling; returns
 * the (possibly moved) array. Aborts like rm_xrealloc. */
void *rm_xgrow(void *p, size_t *cap, size_t need, size_t elem);

#endif
