#include "model/energy.h"

#include <math.h>
#include <stddef.h>
#include <string.h>

const char *const rm_power_fields[RM_POWER_FIELD_COUNT] = {
    "power.draw", "power.draw.instant", "power.draw.average", "enforced.power.limit"};

int64_t rm_gap_threshold_ns(int64_t interval_ns)
{
    int64_t g;
    if (__builtin_mul_overflow(interval_ns, (int64_t)RM_GAP_INTERVALS, &g)) return INT64_MAX;
    return g;
}

int64_t rm_stream_period_ns(enum rm_input_kind kind, int64_t interval_ns)
{
    /* pmon and the per-process queries sample at their own spacing. */
    if (interval_ns <= 0 || rm_input_defs[kind].stream == RM_STREAM_APPS) return 0;
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

void rm_energy_bar_add(struct rm_energy_bar *a, const struct rm_energy_bar *b)
{
    a->tv_j += b->tv_j;
    a->lag_j += b->lag_j;
    a->edge_j += b->edge_j;
    a->res_j += b->res_j;
    if (b->peak_w > a->peak_w) a->peak_w = b->peak_w;
}

/* Power at t on the line between the samples; a missing end takes the other's value. */
static double line_at(int64_t t0, double p0, int64_t t1, double p1, int64_t t)
{
    if (isnan(p0)) return p1;
    if (isnan(p1) || t1 <= t0) return p0;
    return p0 + (p1 - p0) * ((double)(t - t0) / (double)(t1 - t0));
}

void rm_energy_piece_bar(int64_t t0, double p0, int64_t t1, double p1, int64_t a, int64_t b,
                         bool starts, bool ends, struct rm_energy_bar *out)
{
    if ((isnan(p0) && isnan(p1)) || b <= a || t1 <= t0) return;
    const double w = (double)RM_SENSOR_WINDOW_NS / 1e9, len = (double)(b - a) / 1e9;
    double hi = isnan(p0) ? p1 : isnan(p1) ? p0 : fmax(p0, p1);
    if (hi > out->peak_w) out->peak_w = hi;
    double dp = isnan(p0) || isnan(p1) ? 0 : fabs(p1 - p0);
    double slope = dp / ((double)(t1 - t0) / 1e9);
    out->tv_j += dp * len / 2; /* linear in the length: pieces add up to their spacing's */
    out->res_j += RM_POWER_RESOLUTION_W / 2 * len;
    if (starts) {
        out->lag_j += w / 2 * line_at(t0, p0, t1, p1, a);
        out->edge_j += w / 2 * (w * slope / 2);
    }
    if (ends) {
        out->lag_j -= w / 2 * line_at(t0, p0, t1, p1, b);
        out->edge_j += w / 2 * (w * slope / 2);
    }
}

/* Duty cycle by GPU name: the sensor's share of the runtime (docs/ENERGY.md, table 1). The
 * first entry whose name part the GPU's name holds wins. */
static const struct {
    const char *name_part;
    double duty;
    const char *source;
} duty_table[] = {
    {"A100", 0.25, "measured: Yang, Adamek, Armour, SC24 (arXiv 2312.02741)"},
    {"H100", 0.25, "measured: Yang, Adamek, Armour, SC24 (arXiv 2312.02741)"},
    {"H200", 0.25, "assumed: Hopper, as the H100 measured by Yang et al. (arXiv 2312.02741)"},
    {"H800", 0.25, "assumed: Hopper, as the H100 measured by Yang et al. (arXiv 2312.02741)"},
};

double rm_sensor_duty(const char *gpu_name, const char **source)
{
    for (size_t i = 0; gpu_name && i < sizeof duty_table / sizeof duty_table[0]; i++)
        if (strstr(gpu_name, duty_table[i].name_part)) {
            if (source) *source = duty_table[i].source;
            return duty_table[i].duty;
        }
    if (source) *source = "assumed: not measured for this GPU; the A100/H100 figure";
    return 0.25;
}

void rm_energy_bounds(double e_j, const struct rm_energy_bar *bar, double duty, double short_s,
                      double *low_j, double *high_j)
{
    double d = duty > 0 && duty <= 1 ? duty : 0.25;
    double u = bar->tv_j * (1 + (1 - d)) + bar->edge_j + bar->res_j;
    double lo = e_j - fmax(bar->lag_j, 0) - u, hi = e_j + fmax(-bar->lag_j, 0) + u;
    if (short_s > 0) {
        /* The readings cannot tell a short window's energy from its neighbours': at most a
         * sensor window at the peak reading for each. */
        lo = 0;
        if (short_s * bar->peak_w > hi) hi = short_s * bar->peak_w;
    }
    *low_j = lo > 0 ? lo : 0;
    *high_j = hi > *low_j ? hi : *low_j;
}
