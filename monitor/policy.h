/* Pure decision logic of the recorder, kept apart from processes and files so it can be
 * tested exhaustively: restart backoff and GPU-memory threshold crossings. */
#ifndef RUNMON_POLICY_H
#define RUNMON_POLICY_H

#include <stdint.h>

/* Restart backoff: 1 s after the first failure, doubling to 30 s; reset once the collector
 * has been healthy for a whole minute (s6's throttling, with a memory of recent trouble). */
#define RM_BACKOFF_FIRST_NS (1000000000LL)
#define RM_BACKOFF_MAX_NS (30000000000LL)
#define RM_BACKOFF_RESET_NS (60000000000LL)

struct rm_backoff {
    int consecutive;          /* failures since the last reset */
    int64_t delay_ns;         /* the delay given for the last failure */
    int64_t healthy_since_ns; /* monotonic time of the first good row after a restart; 0 none */
};

/* A failure happened: returns the delay before the next start. */
int64_t rm_backoff_failure(struct rm_backoff *b);
/* A valid row arrived at now_ns (monotonic). Resets the backoff after a healthy minute. */
void rm_backoff_row(struct rm_backoff *b, int64_t now_ns);

/* How long a collector may go without a valid row before it counts as hung:
 * max(3 x its interval, 5 s). */
int64_t rm_stale_after_ns(int64_t interval_ns);

/* A GPU row's ts (issue 24): nvidia-smi's own `timestamp` (when the sample was taken),
 * converted to UTC with the local zone's rules, unless it is further than this from the
 * time the row arrived (a DST fold, a wrong zone, a clock step): max(3 x the interval, 2 s). */
int64_t rm_sample_ts_guard_ns(int64_t interval_ns);
/* The ts of a row taken at sample_ns (its converted timestamp) that arrived at arrival_ns:
 * sample_ns when within guard_ns of arrival_ns, else arrival_ns with *fell_back set to 1. */
int64_t rm_sample_ts_choose(int64_t sample_ns, int64_t arrival_ns, int64_t guard_ns,
                            int *fell_back);

/* Memory-use levels of one GPU. */
enum rm_level { RM_LEVEL_OK = 0, RM_LEVEL_WARNING = 1, RM_LEVEL_CRITICAL = 2 };

/* Given the GPU's previous level and its memory use now, returns the new level and sets
 * *crossed to the level that was newly entered upwards (an event is due once per crossing,
 * not per sample), or RM_LEVEL_OK when no event is due. Falling below a threshold re-arms
 * it. A missing reading (NaN used or total, total <= 0) keeps the previous level. */
enum rm_level rm_threshold_step(enum rm_level prev, double used_mb, double total_mb,
                                double warn_pct, double crit_pct, enum rm_level *crossed);

#endif
