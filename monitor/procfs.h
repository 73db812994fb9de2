/* The /proc sampler: machine CPU times (/proc/stat), host memory (/proc/meminfo) and the
 * recorded command's process tree (/proc/PID/stat, /proc/PID/task/TID/children).
 *
 * Every path is relative to one root directory (RUNMON_PROC_ROOT, default /proc, read by
 * the caller) so tests can point the module at a fixture tree.
 *
 * Cost: built to run every 0.1 s for hours. /proc/stat and /proc/meminfo stay open and are
 * re-read with pread() from offset 0 (seq_file regenerates them at offset 0); per-process
 * files are opened relative to a kept root fd; numbers are parsed by hand; no stdio and no
 * allocation per sample once the tables have grown to the machine's size.
 *
 * One struct rm_procfs belongs to one thread at a time; the pure parsers are reentrant.
 */
#ifndef RUNMON_PROCFS_H
#define RUNMON_PROCFS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Jiffies (USER_HZ ticks) from one /proc/stat cpu line. guest and guest_nice are already
 * counted inside user and nice by the kernel; they are kept for reference only and never
 * added to any total. Columns an older kernel does not print are 0. */
struct rm_cpu_times {
    uint64_t user, nice, system, idle, iowait, irq, softirq, steal, guest, guest_nice;
};

/* Percentages of the time between two samples; they sum to 100 (up to rounding). */
struct rm_cpu_pct {
    double usr, nice, sys, iowait, irq, softirq, steal, idle;
};

/* Host memory in KiB (the unit /proc/meminfo calls kB). */
struct rm_mem {
    uint64_t total_kib;
    uint64_t avail_kib;  /* MemAvailable, or the estimate below; never above total_kib */
    int avail_estimated; /* 1: no MemAvailable (kernel < 3.14): MemFree + Buffers + Cached */
};

/* The fields of /proc/PID/stat the tree sampler uses. */
struct rm_pid_stat {
    int32_t pid, ppid;
    char state;
    uint64_t utime, stime; /* ticks */
    int64_t num_threads;
    uint64_t starttime; /* ticks after boot: tells a reused pid from the old process */
    uint64_t rss_pages; /* resident pages, as statm's second field */
};

/* One sample of the process tree rooted at the recorded command. */
struct rm_tree_sample {
    int nprocs;         /* the root and all its descendants; 0 if the root is gone */
    uint64_t rss_bytes; /* summed resident set size */
    uint64_t ticks;     /* ticks the tree used since the previous sample (monitor/procfs_tree.c) */
    double cpu_pct;     /* percent of one core since the previous sample; NAN on the first
                         * sample for this root, when the root is gone, or if no time passed */
};

struct rm_procfs;

/* Opens the sampler on a /proc-like tree (root: "/proc" or a fixture directory). Checks that
 * ROOT/stat and ROOT/meminfo can be read and parsed; on failure returns NULL with a message
 * in err (errsz bytes, may be 0). */
struct rm_procfs *rm_procfs_open(const char *root, char *err, size_t errsz);
void rm_procfs_close(struct rm_procfs *p);

/* Raw /proc/stat read. all gets the "cpu" line; percpu/cpu_ids (max entries, may be
 * NULL/0 to skip per-CPU parsing) get the "cpuN" lines in the kernel's order, *n how many
 * were stored. Offline CPUs have no line, so ids can have gaps. Returns 0, or -1 on a read
 * error or unparsable content. */
int rm_procfs_read_cpu(struct rm_procfs *p, struct rm_cpu_times *all, struct rm_cpu_times *percpu,
                       int *cpu_ids, int max, int *n);

/* Percentages between two samples. Each field's delta saturates at 0 when the counter went
 * backwards (iowait does on NO_HZ kernels); total = sum of the 8 deltas (guest excluded).
 * When total is 0 (no tick elapsed: a tickless idle CPU, or every counter went backwards)
 * the result is idle = 100 and every other field 0, as sysstat reports a tickless CPU, and
 * the function returns 1; otherwise it returns 0. */
int rm_cpu_pct_between(const struct rm_cpu_times *prev, const struct rm_cpu_times *cur,
                       struct rm_cpu_pct *out);

/* Stateful /proc/stat sample: reads the counters and computes percentages against the
 * previous call on this handle. all gets the whole-machine figures. Per-CPU (percpu and
 * cpu_ids non-NULL, max > 0): CPUs are matched by number, not position, so hot-plug is
 * safe; a CPU present now and in the previous sample is reported, one that just came online
 * is reported from the next sample on, an offline one is absent. *n = rows stored (at most
 * max). Returns 0 with figures, 1 on the first call (nothing to compare with; *n = 0),
 * -1 on error (the previous sample is kept). */
int rm_procfs_cpu_sample(struct rm_procfs *p, struct rm_cpu_pct *all, struct rm_cpu_pct *percpu,
                         int *cpu_ids, int max, int *n);

/* Host memory. Returns 0, or -1 if meminfo cannot be read or lacks MemTotal (or both
 * MemAvailable and MemFree). */
int rm_procfs_read_mem(struct rm_procfs *p, struct rm_mem *out);

/* used = total - available, in KiB (0 if available exceeds total). */
static inline uint64_t rm_mem_used_kib(const struct rm_mem *m)
{
    return m->total_kib > m->avail_kib ? m->total_kib - m->avail_kib : 0;
}
static inline double rm_kib_to_mib(uint64_t kib)
{
    return (double)kib / 1024.0;
}

/* Samples the tree rooted at root (its pid). Keeps the members' stat files open between
 * samples (at most 256 fds, and at most a quarter of RLIMIT_NOFILE). mono_ns: CLOCK_MONOTONIC time
 * of the sample (rm_now_monotonic_ns()), used for cpu_pct. Processes that vanish during the walk
 * are skipped silently. Returns 0, 1 if the root process is gone (out: 0 processes, cpu_pct NAN),
 * -1 on an internal error (out of memory). */
int rm_procfs_tree_sample(struct rm_procfs *p, pid_t root, int64_t mono_ns,
                          struct rm_tree_sample *out);
/* The same, told that root did not run yet at born_after_ns (CLOCK_MONOTONIC; -1: unknown):
 * the first sample of a new root then counts every tick of its tree as spent since
 * born_after_ns (a process starts at 0 ticks), so no interval of the command is lost. Without
 * it the first sample of a root only sets the baseline (cpu_pct NAN). */
int rm_procfs_tree_sample_since(struct rm_procfs *p, pid_t root, int64_t mono_ns,
                                int64_t born_after_ns, struct rm_tree_sample *out);

/* The same over a set of processes: root's tree (root <= 0: none) and the pids listed (a
 * cgroup's members, in any order, repeats allowed), less the recorder's own processes (self,
 * and its children other than root: the nvidia-smi collectors). Members' stat files stay
 * open as for a tree, but the set is re-read every sample (the list changes without a pid
 * being allocated). An empty set is a sample of 0 processes. Returns 0, or -1 (out of
 * memory). rm_procfs_tree_members lists the members afterwards. */
#define RM_PROCFS_SET_KEY (-1)
int rm_procfs_set_sample(struct rm_procfs *p, pid_t root, const int32_t *pids, size_t n,
                         int32_t self, int64_t mono_ns, int64_t born_after_ns,
                         struct rm_tree_sample *out);

/* One member of the tree, as the last sample found it. */
struct rm_tree_member {
    int32_t pid, ppid;
    uint64_t starttime;  /* tells a reused pid from the old process */
    int64_t num_threads; /* its threads at the sample (the stall sampler lists them only when
                          * this differs from the threads it knows) */
};
/* The members of the last tree sample that found its root, sorted by pid (none after a
 * sample that found the root gone). Copies at most max into out; returns how many there are. */
size_t rm_procfs_tree_members(const struct rm_procfs *p, struct rm_tree_member *out, size_t max);

/* How the tree is discovered; the default suits production, the others are for tests and
 * benchmarks. */
enum rm_walk {
    RM_WALK_AUTO,  /* children files (a scan if the kernel has none); skip the walk while no
                    * pid was allocated and no member exited or changed parent */
    RM_WALK_EVERY, /* walk the children files on every sample */
    RM_WALK_SCAN,  /* scan /proc/[0-9]* (the fallback) on every sample */
};
void rm_procfs_set_walk(struct rm_procfs *p, enum rm_walk mode);

/* Pure parsers, buffer in and struct out, no NUL terminator needed (fuzzing entry points). */

/* /proc/stat: returns the number of cpuN lines seen (may exceed max; the first max are
 * stored in percpu/cpu_ids and *n says how many), or -1 if the text does not start with a
 * valid "cpu " line or a cpu line is malformed. percpu may be NULL (then only the
 * aggregate line is parsed and 0 is returned). Parsing stops at the first non-cpu line. */
int rm_parse_proc_stat(const char *buf, size_t len, struct rm_cpu_times *all,
                       struct rm_cpu_times *percpu, int *cpu_ids, int max, int *n);

/* /proc/meminfo. Returns 0 or -1 (see rm_procfs_read_mem). */
int rm_parse_meminfo(const char *buf, size_t len, struct rm_mem *out);

/* One /proc/PID/stat line; comm may hold spaces and ')', so fields are counted from the last
 * ')'. Returns 0 or -1 when fields are missing or not numbers. */
int rm_parse_pid_stat(const char *buf, size_t len, struct rm_pid_stat *out);

/* CSV number formatting without stdio. buf needs RM_FMT_BUFSZ bytes; no NUL is written;
 * the length is returned. rm_fmt_fixed2 rounds half away from zero to two decimals and
 * writes nothing (returns 0) for NaN or infinities, i.e. an empty CSV field. */
#define RM_FMT_BUFSZ 32
size_t rm_fmt_u64(uint64_t v, char *buf);
size_t rm_fmt_fixed2(double v, char *buf);

#endif
