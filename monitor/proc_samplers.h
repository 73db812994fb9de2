/* The samplers that read /proc on the recorder's tick, as one table: record/recorder.c opens
 * every row this run wants, hands their files to the sink, runs them on the one tick
 * (monitor/ticker.h) and stops them, and never names a sampler or a stream. A new sampler
 * exports its row from its own file (declared in its header) and takes one line in
 * proc_samplers.c; an option of its own is a field of struct rm_proc_opts. */
#ifndef RUNMON_MONITOR_PROC_SAMPLERS_H
#define RUNMON_MONITOR_PROC_SAMPLERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "monitor/port.h"
#include "monitor/stream.h"
#include "monitor/ticker.h"

/* record's options for the /proc samplers (cli/cmd_record.c sets them; the recorder passes
 * them on as they are). */
struct rm_proc_opts {
    int per_cpu;           /* --per-cpu: also a cpu.csv row per CPU */
    int no_io;             /* --no-io: no I/O sampler (io.csv) */
    int no_stall;          /* --no-stall: no stall sampler (stall.csv) */
    int io_net_lo;         /* --io-net-lo: io.csv also has the loopback interface */
    double io_interval_s;  /* --io-interval: the I/O sampler's own period (default 1 s) */
    const char *proc_root; /* RUNMON_PROC_ROOT, default /proc */
    const char *sys_root;  /* RUNMON_SYS_ROOT (tests), default /sys: which disks are whole */
};

struct rm_procfs;

/* The workload's tree as this run of the set walked it, so that one walk a tick serves every
 * row at that slot: the first row that samples the workload (proc.csv's, first in the table)
 * publishes its walk here; a later row reads the members from that handle
 * (rm_procfs_tree_members) when walked == run, and walks on its own otherwise (a slot the
 * publisher did not share). The set owns it; the rows get it in rm_proc_start. */
struct rm_proc_tick {
    uint64_t run;                   /* runs of the set so far: the slot's number */
    uint64_t walked;                /* the run at which procfs last sampled the workload */
    const struct rm_procfs *procfs; /* whose walk */
    int status;                     /* rm_workload_sample's return then (monitor/workload.h) */
};

/* What every /proc sampler starts from. */
struct rm_proc_start {
    const struct rm_port *port; /* port->sess->dir is the session folder */
    const struct rm_proc_opts *o;
    bool with_command;         /* a command runs: its process tree is sampled */
    struct rm_proc_tick *tick; /* the set's (rm_proc_set_open sets it; NULL: none) */
};

#define RM_PROC_MAX_OUTS 4 /* files one sampler writes */

struct rm_proc_sampler {
    const char *name;
    unsigned streams; /* a bit per RM_STREAM_* it writes: those are off when it is not wanted */
    size_t ctx_size;  /* the context open fills, zeroed by the caller */
    bool batch;       /* its files batch their writes at the interval (rm_stream_batch) */
    /* Whether this run wants it (an option may switch it off); NULL: always. */
    bool (*wanted)(const struct rm_proc_start *st);
    /* Opens what it reads and its files. 0, or -1 with the reason in err (fatal: the
     * session does not start). stop runs after a failure too. */
    int (*open)(void *ctx, const struct rm_proc_start *st, char *err, size_t errsz);
    /* The files it opened, for the sink: how many were put in out (at most RM_PROC_MAX_OUTS). */
    int (*outs)(void *ctx, struct rm_stream **out);
    /* The tick: begin takes the baseline and starts the schedule on grid_mono (every
     * sampler's slots are on the same grid, so that slots that coincide cost one wakeup);
     * due is the next slot (CLOCK_MONOTONIC ns); tick, called at or after it, samples and
     * moves to the next slot. */
    void (*begin)(void *ctx, int64_t grid_mono);
    int64_t (*due)(const void *ctx);
    void (*tick)(void *ctx, int64_t now);
    void (*stop)(void *ctx); /* once the ticking thread has stopped: closes what open opened */
};

extern const struct rm_proc_sampler *const rm_proc_samplers[];
extern const int rm_proc_nsamplers;

/* The streams st switches off (a bit per RM_STREAM_*): rows whose wanted() says no. */
unsigned rm_proc_samplers_off(const struct rm_proc_start *st);

/* The samplers of one run, opened. */
#define RM_PROC_SET_MAX 8
struct rm_proc_set {
    const struct rm_proc_sampler *row[RM_PROC_SET_MAX];
    void *ctx[RM_PROC_SET_MAX];
    int n;      /* rows tried (stop closes each) */
    int opened; /* of which opened: their files go to the sink */
    struct rm_proc_tick tick;
};

/* Opens each row st wants, in the table's order (its files appear in the session folder in
 * that order). 0, or -1 with the reason in err at the first that fails; the files of those
 * opened before it are still the set's, and rm_proc_set_stop closes what was opened. */
int rm_proc_set_open(struct rm_proc_set *set, const struct rm_proc_start *st, char *err,
                     size_t errsz);
/* Every file the set's opened samplers write, for the sink. Returns how many (at most max). */
int rm_proc_set_streams(const struct rm_proc_set *set, struct rm_stream **out, int max);
/* Baselines now, before the command exists; returns the tick that runs the set (the earlier
 * of its samplers' slots, each one that is due). */
struct rm_ticker rm_proc_set_begin(struct rm_proc_set *set);
/* Stops each sampler (the ticking thread has stopped) and frees the set. */
void rm_proc_set_stop(struct rm_proc_set *set);

#endif
