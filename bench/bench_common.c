/* The micro-benchmarks' shared helpers: see bench_common.h. */
#include "bench/bench_common.h"

#include <time.h>

#include "base/rm_time.h"

int64_t bench_cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (int64_t)ts.tv_sec * RM_NS_PER_SEC + ts.tv_nsec;
}

void bench_no_event(void *owner, const char *name, json_t *data)
{
    (void)owner, (void)name;
    json_decref(data);
}

void bench_no_health(void *owner, int c, enum rm_health h, const char *e, int n)
{
    (void)owner, (void)c, (void)h, (void)e, (void)n;
}
