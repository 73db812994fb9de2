/* What the C micro-benchmarks share: the process's CPU clock and a port (monitor/port.h) that
 * drops what a sampler reports, so a bench times the sample alone. Linked into each of them by
 * bench/run.sh's build_bench. */
#ifndef RUNMON_BENCH_COMMON_H
#define RUNMON_BENCH_COMMON_H

#include <stdint.h>

#include "monitor/port.h"

/* CPU time of this process (all threads), in nanoseconds. */
int64_t bench_cpu_ns(void);

/* A port's event and set_health that drop what they are given. */
void bench_no_event(void *owner, const char *name, json_t *data);
void bench_no_health(void *owner, int c, enum rm_health h, const char *e, int n);

#endif
