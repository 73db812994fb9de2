/* The latest values of a recording: one fixed slot per GPU and one for the CPU and the
 * command's tree, updated in place by the worker threads (under the port's lock), so no row
 * allocates. The exporters copy them under the same lock (record/snapshot.h) and render the copy.
 */
#ifndef RUNMON_MONITOR_LATEST_H
#define RUNMON_MONITOR_LATEST_H

#include <stddef.h>
#include <stdint.h>

#include "model/energy.h"
#include "model/gpu_metrics.h"
#include "model/session.h"

/* The latest row of one GPU. Values are in nvidia-smi's units; NaN = missing. */
struct rm_latest_gpu {
    int valid;     /* a row has been seen */
    int64_t ts_ns; /* CLOCK_REALTIME when it was received */
    double v[RM_GM_COUNT];
    char uuid[96];
    /* Energy over the rows so far, by the one rule of model/energy.h. */
    int energy_valid; /* a power value has been seen */
    double energy_j;
    struct rm_energy_bar bar; /* its error bar's terms (model/energy.h) */
    double first_power_w;     /* the first power seen (the run's start edge) */
    double last_power_w;      /* NaN when the previous row had none */
    int64_t last_row_ts_ns;   /* 0: no previous row to bridge from */
};

#define RM_LATEST_MAX_PROCS 64

/* One process of the workload in the latest per-process sample (apps.csv). */
struct rm_latest_proc {
    int gpu;
    int pid;
    char name[64];
    double vram_mb; /* NaN when pmon printed "-" */
};

struct rm_latest {
    struct rm_latest_gpu gpu[RM_MAX_GPUS];
    /* The workload's processes in the latest pmon sample, and when it was received. */
    int nprocs;
    int64_t procs_ts_ns;
    struct rm_latest_proc procs[RM_LATEST_MAX_PROCS];
    int cpu_valid;
    int64_t cpu_ts_ns;
    double cpu_busy_ratio, cpu_iowait_ratio;
    double mem_used_bytes, mem_total_bytes; /* NaN when /proc/meminfo could not be read */
    int proc_valid;
    int64_t proc_ts_ns;
    double proc_rss_bytes, proc_cpu_ratio; /* cpu NaN on the first sample of the tree */
    /* The I/O sampler's rates over its last interval (bytes per second; NaN when unknown). */
    int io_valid;
    int64_t io_ts_ns;
    double disk_read_bps, disk_write_bps; /* summed over whole disks */
    double net_rx_bps, net_tx_bps;        /* summed over the interfaces io.csv has */
    double psi_some[3], psi_full[3];      /* cpu, io, memory: share of the time stalled, 0-1 */
    double tree_read_bps, tree_write_bps; /* the command's process tree */
};

/* Folds one GPU row into its slot. v[] holds RM_GM_COUNT values (NaN = missing); uuid may be
 * NULL or empty (kept as is then). Energy integrates from the previous row with
 * rm_energy_span (gap_ns: the gap threshold). No allocation. */
void rm_latest_gpu_update(struct rm_latest_gpu *g, int64_t ts_ns, const double *v, const char *uuid,
                          size_t uuid_len, int64_t gap_ns);

#endif
