/* What the readers hand to the summary engine: one GPU sample or one host sample per row,
 * plus the reasons a row can be skipped. */
#ifndef RUNMON_SUMMARY_SAMPLE_H
#define RUNMON_SUMMARY_SAMPLE_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "summary/stats.h"

enum rm_skip {
    RM_SKIP_NOT_DATA,        /* header repeat, units line, notice, blank, unknown layout */
    RM_SKIP_TORN,            /* last line of the file without a line end */
    RM_SKIP_BAD_FIELD_COUNT, /* not as many fields as the header */
    RM_SKIP_BAD_TIME,        /* a time column that does not parse */
    RM_SKIP_GARBAGE,         /* a value that is neither a number nor a missing spelling */
    RM_SKIP_LONG_LINE,       /* a line over the reader's limit */
    RM_SKIP_PER_CPU,         /* cpu.csv per-CPU rows (only "all" rows make the totals) */
    RM_SKIP_COUNT
};
extern const char *const rm_skip_names[RM_SKIP_COUNT];

struct rm_strref {
    const char *s;
    size_t len;
};

/* Bits of rm_gpu_sample.valid past the metrics': thr_mask, smclk_max hold a value. */
#define RM_SAMPLE_THR_KNOWN (1u << 31)
#define RM_SAMPLE_SMCLK_MAX (1u << 30)
#define RM_SAMPLE_PLIMIT (1u << 29)

struct rm_gpu_sample {
    int64_t t_ns;          /* RM_NO_TIME when the row has no usable time */
    double v[RM_GM_COUNT]; /* v[m] is set only where bit m of valid is: read no other */
    uint32_t valid;        /* bit m set: v[m] holds a value; and the RM_SAMPLE_* bits */
    unsigned thr_mask;     /* throttle reasons active (model/throttle.h), by bit */
    double smclk_max;      /* clocks.max.sm, MHz */
    double power_limit;    /* enforced.power.limit, else power.limit, W */
    struct rm_strref index, uuid, name, pci;
};

enum rm_host_metric {
    RM_HM_USR,
    RM_HM_SYS,
    RM_HM_IOWAIT,
    RM_HM_STEAL,
    RM_HM_IDLE,
    RM_HM_MEM_USED,  /* MiB */
    RM_HM_MEM_TOTAL, /* MiB */
    RM_HM_PROC_RSS,  /* MiB, whole process tree */
    RM_HM_PROC_CPU,  /* % of one core */
    RM_HM_PROC_NPROCS,
    RM_HM_COUNT
};
extern const char *const rm_host_metric_names[RM_HM_COUNT];

struct rm_host_sample {
    int64_t t_ns;
    double v[RM_HM_COUNT];
    uint32_t valid;
};

/* Host aggregates, mergeable and serializable like struct rm_gpu_stats. */
struct rm_host_stats {
    uint64_t cpu_samples, proc_samples;
    struct rm_stat m[RM_HM_COUNT];
};
void rm_host_stats_add(struct rm_host_stats *h, const struct rm_host_sample *s, bool proc);
void rm_host_stats_merge(struct rm_host_stats *a, const struct rm_host_stats *b);
struct json_t;
struct json_t *rm_host_stats_to_json(const struct rm_host_stats *h);
int rm_host_stats_from_json(const struct json_t *j, struct rm_host_stats *h);

/* The time in string member key of a JSON object (session.json's started_at, ...), or
 * RM_NO_TIME when absent or not a time. */
int64_t rm_json_time(const json_t *obj, const char *key);

#endif
