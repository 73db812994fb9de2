/* The I/O sampler (issue 23): per whole disk read/write bytes and busy time
 * (/proc/diskstats), per network interface rx/tx bytes (/proc/net/dev), pressure stall
 * information (/proc/pressure/{cpu,io,memory}) and the command's process tree read/write
 * bytes (/proc/PID/io), every --io-interval (default 1 s) on its own absolute schedule, so
 * the CPU sampler's short interval never pays for it; it runs on the recorder's tick. Rows go to
 * io.csv as cumulative counters (docs/FORMATS.md).
 */
#ifndef RUNMON_IO_SAMPLER_H
#define RUNMON_IO_SAMPLER_H

#include <limits.h>
#include <pthread.h>
#include <stdint.h>

#include "monitor/io_parse.h"
#include "monitor/procfs.h"
#include "monitor/stream.h"
#include "monitor/workload.h"

struct rm_port;
struct rm_proc_sampler;

#define RM_IO_MAX_DEVS 256
#define RM_IO_DEFAULT_INTERVAL_S 1.0

struct rm_io_opts {
    double interval_s;                /* --io-interval */
    int with_lo;                      /* --io-net-lo: also the loopback interface */
    int with_tree;                    /* a command runs: sample its process tree */
    const char *proc_root, *sys_root; /* "/proc", "/sys", or a test's fixture trees */
};

/* What the sampler knows of a device name: whether its rows count as a whole disk. */
struct rm_io_dev {
    char name[RM_IO_NAME_MAX];
    int whole; /* 1: a whole disk; 0: a partition, or a device stacked on others (dm, md) */
};

/* The tree's read/write bytes per member between two samples. */
struct rm_io_pid {
    int32_t pid, ppid;
    uint64_t starttime;
    uint64_t read_bytes, write_bytes;
    int have; /* its io file was read at least once */
};

/* A device's counters at the previous sample, for the live rates (monitor/latest.h). */
struct rm_io_prev {
    char kind; /* 'd' disk, 'n' net */
    char name[RM_IO_NAME_MAX];
    uint64_t v[2];
};

struct rm_io_sampler {
    const struct rm_port *port;
    struct rm_io_opts o;
    struct rm_stream io;
    int rootfd; /* the /proc root */
    int disk_fd, net_fd, psi_fd[3];
    struct rm_procfs *tree;             /* NULL without a command */
    struct rm_workload_reader workload; /* the workload's pids through tree (monitor/workload.h) */
    int64_t interval_ns;
    int begun;                /* the baseline row is taken: stop takes the last one */
    int64_t start_mono, slot; /* the schedule: slot k is due at start_mono + k x interval_ns */
    int degraded;             /* the last sample failed to read a file that had opened */
    uint64_t bad_lines, unreadable;
    char buf[65536];
    struct rm_disk_stat disks[RM_IO_MAX_DEVS];
    struct rm_net_stat nets[RM_IO_MAX_DEVS];
    struct rm_io_dev devs[RM_IO_MAX_DEVS];
    int ndevs;
    uint64_t devset; /* the device set those are of (a hash of diskstats' names) */
    /* The tree: members of the last sample (sorted by pid) and what exited members left. */
    struct rm_tree_member *members;
    struct rm_io_pid *pids, *next;
    size_t npids, cap;
    int32_t root;
    uint64_t gone_read, gone_write;
    uint64_t last_read, last_write; /* the tree's last row: its counters never go back */
    /* Live rates: the previous sample's counters and the growth summed in this one. */
    struct rm_io_prev prev[2 * RM_IO_MAX_DEVS];
    int nprev;
    uint64_t psi_prev[3][2];
    int psi_have[3]; /* bit 0: some, bit 1: full known at the previous sample */
    uint64_t tree_prev[2];
    int32_t tree_prev_root;
    int64_t prev_mono;
    double grow[4]; /* disk read, write, net rx, tx in this sample */
    double psi_grow[3][2];
    int psi_now[3];
    double tree_grow[2];
    int tree_now;
};

/* Opens the /proc files and io.csv in the session's folder. A missing /proc/pressure (a
 * kernel without PSI) is no error: the run log says so once ("io_part_unavailable"). 0, or
 * -1 with a message in err (io.csv cannot be written). */
int rm_io_sampler_open(struct rm_io_sampler *s, const struct rm_port *port,
                       const struct rm_io_opts *o, char *err, size_t errsz);
/* It has no thread of its own: a tick runs it (monitor/ticker.h), beside the CPU sample. begin
 * takes the baseline row now and starts the schedule on start_mono's grid (the CPU sampler's, so
 * that slots that coincide cost one wakeup); due is the next slot (CLOCK_MONOTONIC); tick,
 * called at or after it, samples and moves to the next slot (skipping missed ones).
 * rm_io_sampler_stop, once the ticking thread has stopped, takes the last row. */
void rm_io_sampler_begin(struct rm_io_sampler *s, int64_t start_mono);
int64_t rm_io_sampler_due(const struct rm_io_sampler *s);
void rm_io_sampler_tick(struct rm_io_sampler *s, int64_t now);
/* Takes the last row (after begin) and closes the files, once the ticking thread stopped. */
void rm_io_sampler_stop(struct rm_io_sampler *s);
/* One sample now (the thread's body; tests call it directly). mono: CLOCK_MONOTONIC ns. */
void rm_io_sampler_sample(struct rm_io_sampler *s, int64_t mono);

/* Its row of the /proc samplers' table (monitor/proc_samplers.h): io.csv, off with --no-io. */
extern const struct rm_proc_sampler rm_io_sampler_row;

#endif
