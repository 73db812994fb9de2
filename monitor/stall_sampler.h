/* The stall sampler (issue 38): the workload's own stalls, every sampling interval, on the
 * recorder's tick. Over the threads of the recorded command's process tree
 * (/proc/PID/task/TID): the growth of schedstat's run and run-queue wait times, how many
 * threads are runnable and how many blocked in D state, the growth of delayacct_blkio_ticks
 * where kernel.task_delayacct is on; and the pressure stall totals of the cgroup v2 the
 * command runs in (its "0::" line), when that is not the root cgroup (the host's). Rows go
 * to stall.csv as each interval's growth (docs/FORMATS.md).
 *
 * Cost: the threads' schedstat and stat files stay open between samples (pread from 0), up
 * to a budget of fds. The tree is the one the proc.csv sampler walked at the same slot
 * (struct rm_proc_tick), not walked again; a process's task directory is listed only when its
 * thread count (stat's num_threads) differs from the threads the previous sample read, or one
 * of those is gone. A thread asleep at the previous sample whose schedstat did not move has
 * its stat left unread. No allocation per sample once the tables have grown to the tree's
 * size.
 */
#ifndef RUNMON_MONITOR_STALL_SAMPLER_H
#define RUNMON_MONITOR_STALL_SAMPLER_H

#include <limits.h>
#include <stdint.h>

#include "monitor/procfs.h"
#include "monitor/stream.h"
#include "monitor/workload.h"

struct rm_port;
struct rm_proc_sampler;
struct rm_proc_tick;

/* One thread of the tree, as the previous sample left it. */
struct rm_stall_task {
    int32_t tid, pid;
    int sched_fd, stat_fd; /* -1: past the fd budget, opened and closed per sample */
    uint64_t run_ns, wait_ns, blkio;
    char state; /* at the previous sample; 0: not read */
};

struct rm_stall_tid {
    int32_t tid, pid;
    int known; /* from the previous sample, its process's task directory not listed */
};

struct rm_stall_sampler {
    const struct rm_port *port;
    struct rm_stream out;
    int rootfd;                         /* the /proc root */
    struct rm_procfs *tree;             /* the tree walk (the same as proc.csv's) */
    struct rm_workload_reader workload; /* the workload's pids through tree (monitor/workload.h) */
    struct rm_proc_tick *tick;          /* the set's walk this slot (NULL: walk on its own) */
    int64_t interval_ns, start_mono, slot, prev_mono;
    int begun;
    int delayacct;        /* kernel.task_delayacct was on at open */
    int32_t root;         /* the workload's root of the previous sample (0: none yet; a cgroup's:
                             RM_PROCFS_SET_KEY) */
    uint64_t begin_ticks; /* when the schedule began, in ticks after boot (as starttime) */
    struct rm_tree_member *members;
    size_t cap_members;
    size_t *known; /* per member: its threads in cur */
    size_t cap_known;
    struct rm_stall_task *cur, *next; /* sorted by tid */
    size_t ncur, cap_tasks;
    struct rm_stall_tid *tids;
    size_t cap_tids;
    int nfds, max_fds;
    /* The workload's cgroup v2 (empty: none, or the root cgroup) and its pressure files. */
    char cg_mount[PATH_MAX];
    char cgroup[PATH_MAX];
    int cg_fd[3];
    uint64_t cg_prev[3];
    int cg_have[3]; /* cg_prev holds a total */
    char buf[4096];
    _Alignas(8) char dents[8192]; /* getdents64 records are 8-byte aligned */
};

/* Opens stall.csv in the session's folder and what it reads. 0, or -1 with the reason in err
 * (stall.csv cannot be written). proc_root and sys_root: "/proc" and "/sys", or a test's. */
int rm_stall_sampler_open(struct rm_stall_sampler *s, const struct rm_port *port,
                          const char *proc_root, const char *sys_root, char *err, size_t errsz);
/* One sample now (the tick's body; the bench calls it directly). mono: CLOCK_MONOTONIC ns. */
void rm_stall_sampler_sample(struct rm_stall_sampler *s, int64_t mono);
void rm_stall_sampler_stop(struct rm_stall_sampler *s);

/* Its row of the /proc samplers' table: stall.csv, when a command runs. */
extern const struct rm_proc_sampler rm_stall_sampler_row;

#endif
