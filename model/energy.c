#include "model/energy.h"

#include <math.h>

int64_t rm_gap_threshold_ns(int64_t interval_ns)
{
    int64_t g;
    if (__builtin_mul_overflow(interval_ns, (int64_t)RM_GAP_INTERVALS, &g)) return INT64_MAX;
    return g;
}

int64_t rm_stream_period_ns(enum rm_input_kind kind, int64_t interval_ns)
{
    if (interval_ns <= 0 || kind == RM_INPUT_APPS_CSV) return 0;
    if (kind != RM_INPUT_DMON_TEXT && kind != RM_INPUT_DMON_CSV) return interval_ns;
    const int64_t sec = 1000000000;
    int64_t s = interval_ns / sec + (interval_ns % sec >= sec / 2); /* llround */
    return s < 1 ? sec : s > INT64_MAX / sec ? INT64_MAX / sec * sec : s * sec;
}

enum rm_span_kind rm_energy_span(int64_t t0, double p0, int64_t t1, double p1, int64_t gap_ns,
                                 double *joules, int64_t *dt_ns)
{
    int64_t dt;
    *joules = 0;
    if (__builtin_sub_overflow(t1, t0, &dt) || dt < 0) {
        *dt_ns = 0;
        return RM_SPAN_BACKWARDS;
    }
    *dt_ns = dt;
    if (gap_ns > 0 && dt > gap_ns) return RM_SPAN_GAP;
    double p;
    if (!isnan(p0) && !isnan(p1))
        p = (p0 + p1) / 2;
    else if (!isnan(p0))
        p = p0;
    else if (!isnan(p1))
        p = p1;
    else
        return RM_SPAN_BRIDGED;
    *joules = p * ((double)dt / 1e9);
    return RM_SPAN_BRIDGED;
}
