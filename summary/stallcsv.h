/* stall.csv (the stall sampler, docs/FORMATS.md) -> the workload's own stalls per run and per
 * phase: run-queue wait (its share of the time its threads were runnable, and in threads on
 * average), the share of samples with a thread blocked on I/O, the blkio delay, its cgroup's
 * pressure stall %.
 *
 * Each row holds one interval's growth, so rows add up alone: a row's interval (interval_ms
 * before its ts) is shared out to the phases by how much of it their windows cover.
 */
#ifndef RUNMON_SUMMARY_STALLCSV_H
#define RUNMON_SUMMARY_STALLCSV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "summary/csvread.h"
#include "summary/sample.h"

enum rm_stall_col {
    RM_STC_TS,
    RM_STC_INTERVAL,
    RM_STC_THREADS,
    RM_STC_BLOCKED,
    RM_STC_RUN,
    RM_STC_WAIT,
    RM_STC_BLKIO,
    RM_STC_CPU_SOME,
    RM_STC_IO_SOME,
    RM_STC_MEM_SOME,
    RM_STC_COUNT
};

/* The columns of a stall.csv, found by name in its header (new ones may follow). */
struct rm_stallcsv {
    bool mapped;
    size_t ncols;
    int col[RM_STC_COUNT]; /* -1 when absent */
};

/* One row: its time, its interval, and its numbers (NaN where empty). */
struct rm_stall_row {
    int64_t t_ns, dt_ns;
    double v[RM_STC_COUNT]; /* by column; ts and interval unused */
};

void rm_stallcsv_init(struct rm_stallcsv *p);
/* 1 with *out for a data row, 0 for a header, or -(1 + enum rm_skip). */
int rm_stallcsv_row(struct rm_stallcsv *p, const struct rm_csv_row *row, struct rm_stall_row *out);

/* What a run or a phase adds up; weights are the share of a row's interval that fell in it. */
struct rm_stall_acc {
    double samples, blocked_samples, thread_samples;
    double run_ns, wait_ns, dt_ns;
    double blkio_ms, blkio_dt_ns; /* where delayacct was on */
    double cg_us[3], cg_dt_ns[3]; /* cgroup cpu, io, memory pressure "some" */
};
void rm_stall_acc_add(struct rm_stall_acc *a, const struct rm_stall_row *r, double w);
void rm_stall_acc_merge(struct rm_stall_acc *a, const struct rm_stall_acc *b);

/* The figures (NaN when unknown): run-queue wait over run + wait; wait seconds per second
 * (threads waiting on average); samples with a thread in D state over samples; blkio delay
 * seconds; the cgroup's pressure some %, by resource (0 cpu, 1 io, 2 memory). */
double rm_stall_wait_share(const struct rm_stall_acc *a);
double rm_stall_waiting_threads(const struct rm_stall_acc *a);
double rm_stall_blocked_share(const struct rm_stall_acc *a);
double rm_stall_blkio_s(const struct rm_stall_acc *a);
double rm_stall_cgroup_pct(const struct rm_stall_acc *a, int resource);

/* Per run and per phase. */
struct rm_stall_agg {
    struct rm_stall_acc run;
    struct rm_stall_acc *ph; /* [nph] */
    size_t nph;
};
void rm_stall_init(struct rm_stall_agg *a, size_t nphases);
void rm_stall_free(struct rm_stall_agg *a);
void rm_stall_merge(struct rm_stall_agg *dst, const struct rm_stall_agg *src);

/* Its engine (summary/objects.h) writes summary.json's "stall" objects: rm_obj_engine_stall. */

#endif
