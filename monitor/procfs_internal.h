/* Shared between monitor/procfs.c (handle, CPU, memory) and monitor/procfs_tree.c. */
#ifndef RUNMON_PROCFS_INTERNAL_H
#define RUNMON_PROCFS_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "monitor/procfs.h"

/* What the per-pid table remembers between two tree samples. */
struct rm_tree_ent {
    int32_t pid, ppid;
    int fd;  /* its stat file kept open (pread from 0), or -1 */
    int cfd; /* its task/PID/children file kept open (single-threaded members), or -1 */
    uint64_t starttime;
    uint64_t ticks;
    int64_t num_threads; /* at the sample (stat's field 20) */
};

struct rm_procfs {
    int rootfd; /* the root directory: base of every openat, and scanned with getdents64 */
    int stat_fd, meminfo_fd, loadavg_fd; /* loadavg_fd -1 if the root has none */
    long clk_tck, page_size;

    char *statbuf;
    size_t statcap;
    char membuf[8192];

    /* CPU: the previous sample, per-CPU arrays swapped between samples. */
    int cpu_cap;
    struct rm_cpu_times *pc_cur, *pc_prev;
    int *ids_cur, *ids_prev;
    int pc_prev_n; /* per-CPU rows in the previous sample; -1 if it had none */
    int have_prev;
    struct rm_cpu_times prev_all;

    /* Tree: this sample's members (also the BFS queue), a set of their pids, and the
     * previous sample's per-pid ticks sorted by pid. */
    int32_t tree_root;
    int tree_have_prev;
    int64_t tree_prev_ns;
    struct rm_pid_stat *cur;
    int *cur_fd;  /* stat fd of cur[i] or -1; owned by cur until the sample ends */
    int *cur_cfd; /* children fd opened for cur[i] in this walk, or -1 (likewise) */
    size_t cur_n, cur_cap;
    size_t nfds, max_fds; /* cached stat and children fds, and their limit (a share of
                             RLIMIT_NOFILE) */
    uint64_t last_pid;    /* /proc/loadavg's last allocated pid at the previous walk */
    int last_pid_valid;
    enum rm_walk walk_mode;
    struct rm_tree_ent *prev, *next;
    size_t prev_n;
    int32_t *set_keys;
    uint32_t *set_gen;
    size_t set_mask;
    uint32_t gen;
    int use_scan; /* no children files on this kernel */
    struct rm_pid_stat *scan;
    size_t scan_n, scan_cap;

    char pidbuf[2048]; /* one /proc/PID/stat line (< 1.2 KiB on any kernel) */
    char *cbuf;        /* a children file; grows for a process with very many children */
    size_t ccap;
    char dents[16384]; /* getdents64 records */
};

/* Reads the file at path relative to the root into buf (cap bytes). Returns the byte count
 * (cap means "maybe more"), or -1 with errno. */
ssize_t rm_procfs_slurp(struct rm_procfs *p, const char *path, char *buf, size_t cap);

#endif
