#include "monitor/policy.h"

#include <math.h>

int64_t rm_backoff_failure(struct rm_backoff *b)
{
    b->consecutive++;
    if (b->delay_ns <= 0)
        b->delay_ns = RM_BACKOFF_FIRST_NS;
    else if (b->delay_ns < RM_BACKOFF_MAX_NS)
        b->delay_ns *= 2;
    if (b->delay_ns > RM_BACKOFF_MAX_NS) b->delay_ns = RM_BACKOFF_MAX_NS;
    b->healthy_since_ns = 0;
    return b->delay_ns;
}

void rm_backoff_row(struct rm_backoff *b, int64_t now_ns)
{
    if (b->consecutive == 0) return;
    if (b->healthy_since_ns == 0) {
        b->healthy_since_ns = now_ns;
        return;
    }
    if (now_ns - b->healthy_since_ns >= RM_BACKOFF_RESET_NS) {
        b->consecutive = 0;
        b->delay_ns = 0;
        b->healthy_since_ns = 0;
    }
}

int64_t rm_stale_after_ns(int64_t interval_ns)
{
    int64_t three = 3 * interval_ns, floor_ns = 5000000000LL;
    return three > floor_ns ? three : floor_ns;
}

int64_t rm_sample_ts_guard_ns(int64_t interval_ns)
{
    int64_t three = 3 * interval_ns, floor_ns = 2000000000LL;
    return three > floor_ns ? three : floor_ns;
}

int64_t rm_sample_ts_choose(int64_t sample_ns, int64_t arrival_ns, int64_t guard_ns, int *fell_back)
{
    int64_t d = sample_ns - arrival_ns;
    *fell_back = d > guard_ns || d < -guard_ns;
    return *fell_back ? arrival_ns : sample_ns;
}

enum rm_level rm_threshold_step(enum rm_level prev, double used_mb, double total_mb,
                                double warn_pct, double crit_pct, enum rm_level *crossed)
{
    *crossed = RM_LEVEL_OK;
    if (!isfinite(used_mb) || !isfinite(total_mb) || total_mb <= 0) return prev;
    double pct = used_mb / total_mb * 100.0;
    enum rm_level now = RM_LEVEL_OK;
    if (pct >= crit_pct)
        now = RM_LEVEL_CRITICAL;
    else if (pct >= warn_pct)
        now = RM_LEVEL_WARNING;
    if (now > prev) *crossed = now;
    return now;
}
