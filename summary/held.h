/* "Held back by": what kept a phase's GPUs from being busy, as documented rules over the
 * phase's figures (docs/FORMATS.md, "Held back by"). A rule fires only on figures that were
 * recorded: a figure that is NaN (not recorded) never fires one, and a phase where no rule
 * fires gets no finding at all.
 *
 * rm_held_rules is the pure part (figures in, findings out); rm_held_phase reads the figures
 * from a phase row of the summary document and adds the findings to it.
 */
#ifndef RUNMON_SUMMARY_HELD_H
#define RUNMON_SUMMARY_HELD_H

#include <jansson.h>
#include <stddef.h>

#include "model/throttle.h"

/* The thresholds, as the docs state them. */
#define RM_HELD_BUSY_LOW_PCT 50.0      /* GPU busy (utilization.gpu mean) below this: low */
#define RM_HELD_CPU_SATURATED_PCT 90.0 /* workload tree CPU mean, % of one core, at least */
#define RM_HELD_HOST_BUSY_PCT 90.0     /* or the host's CPUs busy (not idle nor iowait), mean, */
#define RM_HELD_CPU_COMPETING_PCT 10.0 /* while the workload itself used at least this */
#define RM_HELD_IO_PRESSURE_PCT 10.0   /* io pressure (PSI some), % of time, at least */
#define RM_HELD_THROTTLE_SHARE 0.2     /* a cap reason active in at least this share */
#define RM_HELD_CLOCK_RATIO 0.9        /* SM clock mean below this share of its maximum */
#define RM_HELD_IDLE_SHARE 0.5         /* samples with utilization 0, at least */
#define RM_HELD_MEM_USED_RATIO 0.95    /* host memory used at peak over total, at least */
#define RM_HELD_MEM_PRESSURE_PCT 10.0  /* memory pressure (PSI some), % of time, at least */
/* The workload's own stalls (stall.csv, issue 38). */
#define RM_HELD_WAIT_SHARE 0.25      /* run-queue wait over run + wait, at least */
#define RM_HELD_WAITING_THREADS 0.25 /* and run-queue wait seconds per second of the phase */
#define RM_HELD_BLOCKED_SHARE 0.3    /* samples with a thread in D state, at least */
#define RM_HELD_BLKIO_SHARE 0.3      /* or blkio delay seconds per second, at least */
#define RM_HELD_CG_PRESSURE_PCT 10.0 /* or its cgroup's io pressure (some), at least */

enum rm_held_rule {
    RM_HELD_INPUT_BOUND,
    RM_HELD_POWER_CAPPED,
    RM_HELD_THERMAL_CAPPED,
    RM_HELD_IDLE_GPU,
    RM_HELD_HOST_MEMORY,
    RM_HELD_CPU_STARVED,    /* its threads waited for a CPU */
    RM_HELD_IO_BOUND,       /* its threads blocked on I/O */
    RM_HELD_STALLS_UNKNOWN, /* the host was busy, the workload's own stalls not recorded */
    RM_HELD_RULES
};

/* The rule's id in JSON ("input_bound", ...). */
const char *rm_held_rule_id(enum rm_held_rule r);

/* One GPU's figures in the phase; NaN where not recorded. */
struct rm_held_gpu {
    int index;                        /* -1: unknown */
    double util_mean;                 /* % */
    double idle_share;                /* 0..1, samples with utilization 0 */
    double smclk_mean, smclk_max;     /* MHz */
    const char *smclk_max_source;     /* "clocks.max.sm" or "highest seen in the session" */
    double thr_share[RM_THR_REASONS]; /* 0..1, samples with the reason active */
};

/* The phase's figures; NaN where not recorded. */
struct rm_held_in {
    double proc_cpu_pct;      /* the workload's process tree, mean, % of one core */
    double cores;             /* CPUs of the host */
    double host_cpu_busy_pct; /* 100 - idle - iowait, mean over the host's CPUs */
    double mem_used_peak_mb;  /* host */
    double mem_total_mb;
    double io_pressure_pct;  /* PSI io "some", mean % (the io stream) */
    double mem_pressure_pct; /* PSI memory "some", mean % (the io stream) */
    const struct rm_held_gpu *gpu;
    size_t ngpu;
    /* The workload's own stalls (the stall stream); have_stall false: not recorded. */
    bool have_stall;
    double wait_share;      /* run-queue wait over run + wait, 0..1 */
    double waiting_threads; /* run-queue wait seconds per second */
    double blocked_share;   /* samples with a thread in D state, 0..1 */
    double blkio_per_s;     /* blkio delay seconds per second (NaN without delayacct) */
    double cg_io_pct;       /* its cgroup's io pressure some % (NaN without one) */
    double cg_mem_pct;      /* its cgroup's memory pressure some % */
};

#define RM_HELD_MAX_FIGURES 10
#define RM_HELD_MAX_GPUS 64 /* GPUs listed in one finding (more are counted) */

struct rm_held_figure {
    const char *name;
    double value;
    const char *text; /* set: the figure is this string, not value */
};

/* One finding of a phase: a rule, the GPUs it applies to, its figures (a GPU's figures are the
 * first listed GPU's, or the highest GPU busy of those listed). */
struct rm_held_finding {
    enum rm_held_rule rule;
    int gpu; /* the first GPU's index; -1: the host's (or an unknown index) */
    int gpus[RM_HELD_MAX_GPUS];
    size_t ngpus; /* may exceed RM_HELD_MAX_GPUS: only the first are listed */
    char text[320];
    size_t nfig;
    struct rm_held_figure fig[RM_HELD_MAX_FIGURES];
};

/* The findings of in's figures into out (at most max): one per rule that fires, listing the
 * GPUs it applies to, the host's after the GPUs'; returns how many there are (may exceed
 * max: the rest were not written). */
size_t rm_held_rules(const struct rm_held_in *in, struct rm_held_finding *out, size_t max);

/* {"rule","gpu","gpus","text","figures":{...}}; "gpu" (the first of "gpus") is null and
 * "gpus" empty for the host's. */
json_t *rm_held_finding_json(const struct rm_held_finding *f);

/* Reads the figures of a phase row ("gpus", "proc", "cpu") and of the document's whole-run
 * "gpus" (each GPU's highest SM clock, when the phase has no clocks.max.sm) and adds
 * "held_back_by" to the row when a rule fires; nothing when none does. */
void rm_held_phase(json_t *row, const json_t *doc);

#endif
