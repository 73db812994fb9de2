/* The stall sampler's /proc parsers (monitor/stall_sampler.c): a thread's schedstat, the
 * fields of its stat line the sampler uses, and a process's cgroup v2 path. Buffer in, values
 * out, no NUL terminator needed, no allocation (fuzzing entry points: fuzz/fuzz_stall.c). */
#ifndef RUNMON_MONITOR_STALL_PARSE_H
#define RUNMON_MONITOR_STALL_PARSE_H

#include <stddef.h>
#include <stdint.h>

/* /proc/PID/task/TID/schedstat: "RUN_NS WAIT_NS TIMESLICES": the time on a CPU and the time
 * runnable but waiting on a run queue, in ns. 0, or -1 when the two numbers are not there. */
int rm_parse_schedstat(const char *buf, size_t len, uint64_t *run_ns, uint64_t *wait_ns);

/* The fields of one /proc/PID/task/TID/stat line the stall sampler uses. */
struct rm_task_stat {
    char state;           /* 'R', 'S', 'D', ... */
    uint64_t blkio_ticks; /* delayacct_blkio_ticks (field 42), USER_HZ ticks */
    int have_blkio;       /* the line reaches field 42 */
};
/* Fields are counted from the last ')' (the name may hold spaces and ')'). 0, or -1 when the
 * state is missing. */
int rm_parse_task_stat(const char *buf, size_t len, struct rm_task_stat *out);

/* /proc/PID/cgroup: the path of the "0::" line (cgroup v2) into out (cap bytes, NUL ended).
 * Returns its length, or -1 when there is no such line or it does not fit. */
int rm_parse_cgroup_v2(const char *buf, size_t len, char *out, size_t cap);

#endif
