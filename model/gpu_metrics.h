/* The ONE table of per-GPU metrics: what each is called in nvidia-smi --query-gpu (with its
 * aliases), in dmon's header, in runmon's JSON, its unit, and its Prometheus family. The
 * summary's readers, the live collectors and the Prometheus export all map columns through it, and
 * keep a valid bitmask (bit m set = metric m present in this sample), so "not supported" is never a
 * 0 (nvtop's rule).
 */
#ifndef RUNMON_MODEL_GPU_METRICS_H
#define RUNMON_MODEL_GPU_METRICS_H

#include <stddef.h>
#include <stdint.h>

enum rm_gpu_metric {
    RM_GM_UTIL,       /* utilization.gpu / dmon sm, % */
    RM_GM_MEMUTIL,    /* utilization.memory / dmon mem, % (memory controller, not VRAM) */
    RM_GM_VRAM_USED,  /* memory.used / dmon fb, MiB */
    RM_GM_VRAM_TOTAL, /* memory.total, MiB */
    RM_GM_POWER,      /* power.draw / dmon pwr, W */
    RM_GM_TEMP,       /* temperature.gpu / dmon gtemp or temp, C */
    RM_GM_SMCLK,      /* clocks.current.sm / dmon pclk, MHz */
    RM_GM_MEMCLK,     /* clocks.current.memory / dmon mclk, MHz */
    RM_GM_COUNT
};

#define RM_GM_BIT(m) (1u << (m))

struct rm_gpu_metric_def {
    const char *key;            /* runmon's own name (segment aggregates in manifest.json) */
    const char *query_field;    /* the --query-gpu field */
    const char *query_alias;    /* another spelling nvidia-smi accepts, or NULL */
    const char *dmon_column[2]; /* dmon header names (the first a driver prints), or NULL */
    const char *unit;           /* nvidia-smi's unit */
    struct {                    /* its Prometheus gauge, per GPU (report/prom.c), or name NULL: */
        const char *name;       /* the family, in a base unit */
        const char *help;
        double scale; /* unit -> the family's base unit */
    } prom;
};
extern const struct rm_gpu_metric_def rm_gpu_metrics[RM_GM_COUNT];

/* The per-GPU Prometheus families that are no metric of the table: the energy counter (power
 * integrated; report/prom.c's exposition and record/export_push.c's push) and its error bar. */
#define RM_PROM_GPU_ENERGY "runmon_gpu_energy_joules_total"
#define RM_PROM_GPU_ENERGY_LOW "runmon_gpu_energy_low_joules"
#define RM_PROM_GPU_ENERGY_HIGH "runmon_gpu_energy_high_joules"
/* The GPU memory of each process of the workload (apps.csv's latest sample, per GPU and
 * process: report/prom.c), and its HELP line. */
#define RM_PROM_GPU_PROCESS_MEMORY "runmon_gpu_process_memory_bytes"
#define RM_PROM_GPU_PROCESS_MEMORY_HELP                                                            \
    "GPU memory held by a process of the recorded command's tree (nvidia-smi pmon fb)."

/* The metric a --query-gpu column name feeds (aliases included; s need not be terminated),
 * or -1. */
int rm_gpu_metric_by_query_field(const char *s, size_t len);

/* The metric a dmon column name feeds, or -1. */
int rm_gpu_metric_by_dmon_column(const char *s, size_t len);

#endif
