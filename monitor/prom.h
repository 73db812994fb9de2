/* The Prometheus textfile export (`runmon record --prom-textfile PATH`).
 *
 * The collector threads keep the latest values (struct rm_latest, in struct rm_recorder,
 * under rec->lock): one fixed slot per GPU and one for the CPU and the command's tree, updated
 * in place, so no row allocates. The main thread copies them under the lock every flush
 * period, renders the text exposition format (version 0.0.4, what node_exporter's textfile
 * collector reads) into one reused buffer and replaces PATH atomically.
 *
 * Missing values are left out, never written as 0; a collector that is not healthy has its
 * sample metrics removed (runmon_collector_up says 0), as do GPUs whose latest row is stale.
 */
#ifndef RUNMON_PROM_H
#define RUNMON_PROM_H

#include <stddef.h>
#include <stdint.h>

#include "monitor/phase_follow.h"

#define RM_PROM_MAX_GPUS 64 /* = RM_MAX_GPUS */

/* The gpu.csv fields the export uses. */
enum rm_prom_gpu_field {
    RM_PG_UTIL,      /* utilization.gpu, % */
    RM_PG_MEM_UTIL,  /* utilization.memory, % */
    RM_PG_MEM_USED,  /* memory.used, MiB */
    RM_PG_MEM_TOTAL, /* memory.total, MiB */
    RM_PG_POWER,     /* power.draw, W */
    RM_PG_TEMP,      /* temperature.gpu, C */
    RM_PG_SM_CLOCK,  /* clocks.current.sm, MHz */
    RM_PG_MEM_CLOCK, /* clocks.current.memory, MHz */
    RM_PG_COUNT
};

/* The latest row of one GPU. Values are in nvidia-smi's units; NaN = missing. */
struct rm_latest_gpu {
    int valid;     /* a row has been seen */
    int64_t ts_ns; /* CLOCK_REALTIME when it was received */
    double v[RM_PG_COUNT];
    char uuid[96];
    /* Energy: trapezoids of power over time between consecutive rows with a power value. */
    int energy_valid; /* a power value has been seen */
    double energy_j;
    double last_power_w;
    int64_t last_power_ts_ns; /* 0: no previous power value to bridge from */
};

struct rm_latest {
    struct rm_latest_gpu gpu[RM_PROM_MAX_GPUS];
    int cpu_valid;
    int64_t cpu_ts_ns;
    double cpu_busy_ratio, cpu_iowait_ratio;
    double mem_used_bytes, mem_total_bytes; /* NaN when /proc/meminfo could not be read */
    int proc_valid;
    int64_t proc_ts_ns;
    double proc_rss_bytes, proc_cpu_ratio; /* cpu NaN on the first sample of the tree */
};

/* The field a --query-gpu column name feeds (aliases included), or -1. */
int rm_prom_gpu_field(const char *name);

/* Folds one GPU row into its slot. v[] holds RM_PG_COUNT values (NaN = missing); uuid may be
 * NULL or empty (kept as is then). Power is integrated into energy_j with the trapezoid rule
 * when the previous power value is at most max_gap_ns old; a longer gap (or a missing value
 * in between) is not bridged. No allocation. */
void rm_latest_gpu_update(struct rm_latest_gpu *g, int64_t ts_ns, const double *v, const char *uuid,
                          size_t uuid_len, int64_t max_gap_ns);

/* Collector health as the export sees it (the order of RM_COL_*: gpu, dmon, cpu, proc). */
enum rm_prom_health { RM_PROM_UP, RM_PROM_DOWN, RM_PROM_DISABLED };
#define RM_PROM_NCOLLECTORS 4

/* Everything one exposition is rendered from: a consistent copy. */
struct rm_prom_input {
    const char *host, *session, *driver_version, *status;
    const struct rm_latest *latest;
    int ngpus_inventory;
    const char *inventory_uuid[RM_PROM_MAX_GPUS]; /* by GPU index; NULL if unknown */
    enum rm_prom_health collector[RM_PROM_NCOLLECTORS];
    const char *phase; /* the current phase path, NULL or "" when none is open */
    int64_t now_ns;    /* CLOCK_REALTIME */
    int64_t stale_ns;  /* a GPU row older than this is left out (0: never) */
    int have_command;  /* process metrics only with a command */
};

/* Renders the exposition into buf. Returns its length, or -1 when it did not fit (cap). */
long rm_prom_render(char *buf, size_t cap, const struct rm_prom_input *in);

/* Appends v escaped as a label value (backslash, double quote, newline) to buf at *len.
 * Returns 0, or -1 when it does not fit. */
int rm_prom_escape(char *buf, size_t cap, size_t *len, const char *v);

struct rm_recorder;

/* The exporter the recorder's main thread runs. */
struct rm_prom {
    struct rm_recorder *rec;
    const char *path;
    char *buf;
    size_t cap;
    int64_t period_ns, next_mono_ns;
    struct rm_phase_follow phases;
    struct rm_latest snap;
    int warned;
};

/* 0, or -1 (out of memory). Does nothing when rec->opts.prom_textfile is NULL. */
int rm_prom_open(struct rm_prom *p, struct rm_recorder *rec);
/* Milliseconds until the next write is due, at most cap_ms (cap_ms when not exporting). */
int rm_prom_timeout_ms(const struct rm_prom *p, int cap_ms);
/* Writes the file when a period has passed. */
void rm_prom_poll(struct rm_prom *p);
/* Writes the file now (the final one) and frees everything. */
void rm_prom_close(struct rm_prom *p);

#endif
