/* Streaming, mergeable, serializable statistics.
 *
 * Every aggregate here is fixed-size (memory does not grow with the input), can be merged
 * with another covering a later stretch of time, and round-trips through JSON, so the
 * recorder can store one per sealed segment in a manifest and the summary can combine them
 * without the raw rows. Quantiles come from a 101-bucket histogram of integer percentages.
 */
#ifndef RUNMON_SUMMARY_STATS_H
#define RUNMON_SUMMARY_STATS_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model/energy.h"
#include "model/gpu_metrics.h"
#include "model/throttle.h"

#define RM_NO_TIME INT64_MIN

struct rm_stat {
    uint64_t n;
    double sum, min, max;
};

void rm_stat_add(struct rm_stat *s, double v);
void rm_stat_merge(struct rm_stat *a, const struct rm_stat *b);
/* {"n","sum","min","max"}; min/max are null when n == 0. */
json_t *rm_stat_to_json(const struct rm_stat *s);
int rm_stat_from_json(const json_t *j, struct rm_stat *s);

#define RM_UTIL_BUCKETS 101

struct rm_gpu_stats {
    uint64_t samples;
    struct rm_stat m[RM_GM_COUNT];
    uint64_t util_hist[RM_UTIL_BUCKETS]; /* utilization rounded to an integer, clamped 0..100 */
    uint64_t idle_samples;               /* utilization == 0 */
    double energy_j;                     /* by the one energy rule, model/energy.h */
    struct rm_energy_bar bar;            /* the terms of energy_j's error bar */
    int64_t covered_ns;                  /* time spanned by bridged spacings */
    uint64_t gaps; /* spacings longer than the gap threshold: left out, never bridged */
    int64_t gap_ns;
    uint64_t backwards;        /* spacings < 0 (clock stepped back): neither bridged nor a gap */
    int64_t first_ns, last_ns; /* RM_NO_TIME if no timed sample */
    double first_power, last_power; /* NaN when that sample had no power */
    /* 32-bit: a phase row holds one of these per GPU, thousands of rows (4e9 samples is 13
     * years of one GPU at 0.1 s). */
    uint32_t thr_samples;                /* samples that said which throttle reasons were on */
    uint32_t thr_active[RM_THR_REASONS]; /* of those, the samples with reason k active */
    double smclk_max;                    /* the largest clocks.max.sm; 0: none recorded */
    double power_limit_w; /* the largest enforced.power.limit (else power.limit); 0: none */
};

void rm_stats_init(struct rm_gpu_stats *s);
/* Adds one sample. t_ns may be RM_NO_TIME (then no energy or coverage is counted); v[m] is
 * used when bit m of valid is set. gap_ns: spacings above it are gaps (0 = never a gap). */
void rm_stats_add(struct rm_gpu_stats *s, int64_t t_ns, const double v[RM_GM_COUNT], uint32_t valid,
                  int64_t gap_ns);
/* Adds one sample's values and times without bridging from the previous sample: for a phase,
 * whose energy and sampled time come only from the parts of spacings inside its windows
 * (rm_stats_add_span), never from time between its windows. */
void rm_stats_add_point(struct rm_gpu_stats *s, int64_t t_ns, const double v[RM_GM_COUNT],
                        uint32_t valid);
/* Counts one sample's throttle reasons (thr_known: it said which were active) and its
 * clocks.max.sm (NaN: not recorded). */
void rm_stats_add_clocks(struct rm_gpu_stats *s, bool thr_known, unsigned thr_mask,
                         double smclk_max);
/* Counts a (part of a) spacing: bridged (ns covered, joules of energy and its bar's terms, bar
 * may be NULL) or a gap (ns unknown). */
void rm_stats_add_span(struct rm_gpu_stats *s, enum rm_span_kind kind, int64_t ns, double joules,
                       const struct rm_energy_bar *bar);
/* Folds b (a later stretch of the same GPU) into a, bridging a's last sample to b's first
 * unless that spacing is a gap. */
void rm_stats_merge(struct rm_gpu_stats *a, const struct rm_gpu_stats *b, int64_t gap_ns);
/* rm_stats_merge without the bridge from a's last sample to b's first (phases: the spacing
 * between them is counted by the caller, clipped to the phase's windows). */
void rm_stats_fold(struct rm_gpu_stats *a, const struct rm_gpu_stats *b);
json_t *rm_stats_to_json(const struct rm_gpu_stats *s);
/* Returns 0, or -1 with a message in err when j is not what rm_stats_to_json writes. */
int rm_stats_from_json(const json_t *j, struct rm_gpu_stats *s, char *err, size_t errsz);

/* Nearest-rank quantile (the smallest bucket whose cumulative count reaches ceil(q*n)),
 * NaN when empty. */
double rm_hist_quantile(const uint64_t *hist, size_t nbuckets, double q);

/* Mean of a stat, NaN when empty. */
double rm_stat_mean(const struct rm_stat *s);

#endif
