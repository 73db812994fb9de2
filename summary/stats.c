#include "summary/stats.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "model/energy.h"

void rm_stat_add(struct rm_stat *s, double v)
{
    if (s->n == 0 || v < s->min) s->min = v;
    if (s->n == 0 || v > s->max) s->max = v;
    s->n++;
    s->sum += v;
}

void rm_stat_merge(struct rm_stat *a, const struct rm_stat *b)
{
    if (b->n == 0) return;
    if (a->n == 0) {
        *a = *b;
        return;
    }
    a->n += b->n;
    a->sum += b->sum;
    if (b->min < a->min) a->min = b->min;
    if (b->max > a->max) a->max = b->max;
}

double rm_stat_mean(const struct rm_stat *s)
{
    return s->n ? s->sum / (double)s->n : NAN;
}

static json_t *real_or_null(double v)
{
    return isfinite(v) ? json_real(v) : json_null();
}

json_t *rm_stat_to_json(const struct rm_stat *s)
{
    return json_pack("{s:I,s:o,s:o,s:o}", "n", (json_int_t)s->n, "sum", real_or_null(s->sum), "min",
                     s->n ? json_real(s->min) : json_null(), "max",
                     s->n ? json_real(s->max) : json_null());
}

static int num(const json_t *j, double *out)
{
    if (!json_is_number(j)) return -1;
    *out = json_number_value(j);
    return 0;
}

int rm_stat_from_json(const json_t *j, struct rm_stat *s)
{
    memset(s, 0, sizeof *s);
    json_t *n = json_object_get(j, "n");
    if (!json_is_integer(n) || json_integer_value(n) < 0 || num(json_object_get(j, "sum"), &s->sum))
        return -1;
    s->n = (uint64_t)json_integer_value(n);
    if (s->n &&
        (num(json_object_get(j, "min"), &s->min) || num(json_object_get(j, "max"), &s->max)))
        return -1;
    return 0;
}

void rm_stats_init(struct rm_gpu_stats *s)
{
    memset(s, 0, sizeof *s);
    s->first_ns = s->last_ns = RM_NO_TIME;
    s->first_power = s->last_power = NAN;
}

/* Nanosecond sums saturate: hostile inputs may jump centuries back and forth. */
static void add_sat(int64_t *a, int64_t b)
{
    if (__builtin_add_overflow(*a, b, a)) *a = INT64_MAX;
}

/* Energy and coverage of one spacing between consecutive samples (model/energy.h). */
static void bridge(struct rm_gpu_stats *s, int64_t t0, double p0, int64_t t1, double p1,
                   int64_t gap_ns)
{
    double j;
    int64_t dt;
    switch (rm_energy_span(t0, p0, t1, p1, gap_ns, &j, &dt)) {
    case RM_SPAN_BACKWARDS:
        s->backwards++;
        return;
    case RM_SPAN_GAP:
        s->gaps++;
        add_sat(&s->gap_ns, dt);
        return;
    case RM_SPAN_BRIDGED:
        add_sat(&s->covered_ns, dt);
        s->energy_j += j;
        if (!isnan(p0) && !isnan(p1)) s->bar.tv_j += fabs(p1 - p0) * ((double)dt / 1e9) / 2;
        if (!isnan(p0) || !isnan(p1))
            s->bar.res_j += RM_POWER_RESOLUTION_W / 2 * ((double)dt / 1e9);
        if (p0 > s->bar.peak_w) s->bar.peak_w = p0; /* NaN compares false */
        if (p1 > s->bar.peak_w) s->bar.peak_w = p1;
        return;
    }
}

static void add_values(struct rm_gpu_stats *s, const double v[RM_GM_COUNT], uint32_t valid)
{
    s->samples++;
    for (int m = 0; m < RM_GM_COUNT; m++)
        if (valid & (1u << m)) rm_stat_add(&s->m[m], v[m]);
    if (valid & (1u << RM_GM_UTIL)) {
        double u = v[RM_GM_UTIL];
        int b = u <= 0 ? 0 : u >= 100 ? 100 : (int)lround(u);
        s->util_hist[b]++;
        if (u == 0) s->idle_samples++;
    }
}

void rm_stats_add(struct rm_gpu_stats *s, int64_t t_ns, const double v[RM_GM_COUNT], uint32_t valid,
                  int64_t gap_ns)
{
    add_values(s, v, valid);
    if (t_ns == RM_NO_TIME) return;
    double p = (valid & (1u << RM_GM_POWER)) ? v[RM_GM_POWER] : NAN;
    if (s->last_ns == RM_NO_TIME) {
        s->first_ns = t_ns;
        s->first_power = p;
    } else {
        bridge(s, s->last_ns, s->last_power, t_ns, p, gap_ns);
    }
    s->last_ns = t_ns;
    s->last_power = p;
}

void rm_stats_add_point(struct rm_gpu_stats *s, int64_t t_ns, const double v[RM_GM_COUNT],
                        uint32_t valid)
{
    add_values(s, v, valid);
    if (t_ns == RM_NO_TIME) return;
    double p = (valid & (1u << RM_GM_POWER)) ? v[RM_GM_POWER] : NAN;
    if (s->first_ns == RM_NO_TIME) {
        s->first_ns = t_ns;
        s->first_power = p;
    }
    s->last_ns = t_ns;
    s->last_power = p;
}

void rm_stats_add_clocks(struct rm_gpu_stats *s, bool thr_known, unsigned thr_mask,
                         double smclk_max)
{
    if (thr_known) {
        s->thr_samples++;
        for (int k = 0; k < RM_THR_REASONS; k++)
            s->thr_active[k] += thr_mask >> k & 1;
    }
    if (smclk_max > s->smclk_max) s->smclk_max = smclk_max; /* NaN compares false */
}

void rm_stats_add_span(struct rm_gpu_stats *s, enum rm_span_kind kind, int64_t ns, double joules,
                       const struct rm_energy_bar *bar)
{
    if (kind == RM_SPAN_GAP) {
        s->gaps++;
        add_sat(&s->gap_ns, ns);
    } else if (kind == RM_SPAN_BRIDGED) {
        add_sat(&s->covered_ns, ns);
        s->energy_j += joules;
        if (bar) rm_energy_bar_add(&s->bar, bar);
    }
}

void rm_stats_merge(struct rm_gpu_stats *a, const struct rm_gpu_stats *b, int64_t gap_ns)
{
    if (a->last_ns != RM_NO_TIME && b->first_ns != RM_NO_TIME)
        bridge(a, a->last_ns, a->last_power, b->first_ns, b->first_power, gap_ns);
    rm_stats_fold(a, b);
}

void rm_stats_fold(struct rm_gpu_stats *a, const struct rm_gpu_stats *b)
{
    a->samples += b->samples;
    for (int m = 0; m < RM_GM_COUNT; m++)
        rm_stat_merge(&a->m[m], &b->m[m]);
    for (int i = 0; i < RM_UTIL_BUCKETS; i++)
        a->util_hist[i] += b->util_hist[i];
    a->idle_samples += b->idle_samples;
    a->energy_j += b->energy_j;
    rm_energy_bar_add(&a->bar, &b->bar);
    add_sat(&a->covered_ns, b->covered_ns);
    a->gaps += b->gaps;
    add_sat(&a->gap_ns, b->gap_ns);
    a->backwards += b->backwards;
    a->thr_samples += b->thr_samples;
    for (int k = 0; k < RM_THR_REASONS; k++)
        a->thr_active[k] += b->thr_active[k];
    if (b->smclk_max > a->smclk_max) a->smclk_max = b->smclk_max;
    if (b->power_limit_w > a->power_limit_w) a->power_limit_w = b->power_limit_w;
    if (b->first_ns != RM_NO_TIME) {
        if (a->first_ns == RM_NO_TIME) {
            a->first_ns = b->first_ns;
            a->first_power = b->first_power;
        }
        a->last_ns = b->last_ns;
        a->last_power = b->last_power;
    }
}

json_t *rm_stats_to_json(const struct rm_gpu_stats *s)
{
    json_t *o = json_object(), *m = json_object(), *h = json_array();
    for (int i = 0; i < RM_GM_COUNT; i++)
        json_object_set_new(m, rm_gpu_metrics[i].key, rm_stat_to_json(&s->m[i]));
    /* Sparse [value, count] pairs: a histogram is mostly zeros. */
    for (int i = 0; i < RM_UTIL_BUCKETS; i++)
        if (s->util_hist[i])
            json_array_append_new(h, json_pack("[i,I]", i, (json_int_t)s->util_hist[i]));
    json_object_set_new(o, "samples", json_integer((json_int_t)s->samples));
    json_object_set_new(o, "metrics", m);
    json_object_set_new(o, "util_hist", h);
    json_object_set_new(o, "idle_samples", json_integer((json_int_t)s->idle_samples));
    json_object_set_new(o, "energy_j", real_or_null(s->energy_j));
    json_object_set_new(o, "bar",
                        json_pack("{s:o,s:o,s:o,s:o,s:o}", "tv_j", real_or_null(s->bar.tv_j),
                                  "lag_j", real_or_null(s->bar.lag_j), "edge_j",
                                  real_or_null(s->bar.edge_j), "res_j", real_or_null(s->bar.res_j),
                                  "peak_w", real_or_null(s->bar.peak_w)));
    json_object_set_new(o, "covered_ns", json_integer(s->covered_ns));
    json_object_set_new(o, "gaps", json_integer((json_int_t)s->gaps));
    json_object_set_new(o, "gap_ns", json_integer(s->gap_ns));
    json_object_set_new(o, "backwards", json_integer((json_int_t)s->backwards));
    bool timed = s->first_ns != RM_NO_TIME;
    json_object_set_new(o, "first_ns", timed ? json_integer(s->first_ns) : json_null());
    json_object_set_new(o, "last_ns", timed ? json_integer(s->last_ns) : json_null());
    json_object_set_new(o, "first_power", real_or_null(s->first_power));
    json_object_set_new(o, "last_power", real_or_null(s->last_power));
    /* Only when recorded: aggregates written before they existed read back the same. */
    if (s->thr_samples) {
        json_t *t = json_object();
        for (int k = 0; k < RM_THR_REASONS; k++) /* the sink keeps one per phase partial */
            if (s->thr_active[k])
                json_object_set_new(t, rm_thr_name(k), json_integer((json_int_t)s->thr_active[k]));
        json_object_set_new(
            o, "throttle",
            json_pack("{s:I,s:o}", "samples", (json_int_t)s->thr_samples, "active", t));
    }
    if (s->smclk_max > 0) json_object_set_new(o, "sm_clock_max", json_real(s->smclk_max));
    if (s->power_limit_w > 0) json_object_set_new(o, "power_limit", json_real(s->power_limit_w));
    return o;
}

static int get_u64(const json_t *o, const char *k, uint64_t *out)
{
    json_t *v = json_object_get(o, k);
    if (!json_is_integer(v) || json_integer_value(v) < 0) return -1;
    *out = (uint64_t)json_integer_value(v);
    return 0;
}

static int get_i64(const json_t *o, const char *k, int64_t *out)
{
    json_t *v = json_object_get(o, k);
    if (!json_is_integer(v)) return -1;
    *out = json_integer_value(v);
    return 0;
}

/* The throttle counts and clocks.max.sm of rm_stats_to_json (absent: none recorded). */
static const char *clocks_from_json(const json_t *j, struct rm_gpu_stats *s)
{
    json_t *t = json_object_get(j, "throttle"), *c = json_object_get(j, "sm_clock_max");
    if (t) {
        json_t *a = json_object_get(t, "active");
        uint64_t n;
        if (get_u64(t, "samples", &n) || n > UINT32_MAX || !json_is_object(a))
            return "bad throttle counts";
        s->thr_samples = (uint32_t)n;
        for (int k = 0; k < RM_THR_REASONS; k++) {
            json_t *v = json_object_get(a, rm_thr_name(k));
            if (!v) continue;
            if (!json_is_integer(v) || json_integer_value(v) < 0 ||
                (uint64_t)json_integer_value(v) > s->thr_samples)
                return "bad throttle counts";
            s->thr_active[k] = (uint32_t)json_integer_value(v);
        }
    }
    if (c && (!json_is_number(c) || !(json_number_value(c) > 0))) return "bad sm_clock_max";
    if (c) s->smclk_max = json_number_value(c);
    json_t *l = json_object_get(j, "power_limit");
    if (l && (!json_is_number(l) || !(json_number_value(l) > 0))) return "bad power_limit";
    if (l) s->power_limit_w = json_number_value(l);
    return NULL;
}

int rm_stats_from_json(const json_t *j, struct rm_gpu_stats *s, char *err, size_t errsz)
{
    rm_stats_init(s);
    const char *bad = NULL;
    json_t *m = json_object_get(j, "metrics"), *h = json_object_get(j, "util_hist");
    if (!json_is_object(j))
        bad = "not an object";
    else if (get_u64(j, "samples", &s->samples) || get_u64(j, "idle_samples", &s->idle_samples) ||
             get_u64(j, "gaps", &s->gaps) || get_u64(j, "backwards", &s->backwards) ||
             get_i64(j, "covered_ns", &s->covered_ns) || get_i64(j, "gap_ns", &s->gap_ns) ||
             num(json_object_get(j, "energy_j"), &s->energy_j))
        bad = "a counter is missing or not a number";
    else if (!json_is_object(m) || !json_is_array(h))
        bad = "metrics or util_hist missing";
    for (int i = 0; !bad && i < RM_GM_COUNT; i++)
        if (rm_stat_from_json(json_object_get(m, rm_gpu_metrics[i].key), &s->m[i]))
            bad = "bad metric";
    size_t k;
    json_t *pair;
    if (!bad) json_array_foreach(h, k, pair)
        {
            json_t *b = json_array_get(pair, 0), *c = json_array_get(pair, 1);
            if (!json_is_integer(b) || !json_is_integer(c) || json_integer_value(b) < 0 ||
                json_integer_value(b) >= RM_UTIL_BUCKETS || json_integer_value(c) < 0) {
                bad = "bad util_hist entry";
                break;
            }
            s->util_hist[json_integer_value(b)] += (uint64_t)json_integer_value(c);
        }
    if (!bad) {
        json_t *f = json_object_get(j, "first_ns"), *l = json_object_get(j, "last_ns");
        if (json_is_integer(f) && json_is_integer(l)) {
            s->first_ns = json_integer_value(f);
            s->last_ns = json_integer_value(l);
        }
        /* The bar's terms: absent in stats written before they existed (then 0). */
        json_t *b = json_object_get(j, "bar");
        num(json_object_get(b, "tv_j"), &s->bar.tv_j);
        num(json_object_get(b, "lag_j"), &s->bar.lag_j);
        num(json_object_get(b, "edge_j"), &s->bar.edge_j);
        num(json_object_get(b, "res_j"), &s->bar.res_j);
        num(json_object_get(b, "peak_w"), &s->bar.peak_w);
        num(json_object_get(j, "first_power"), &s->first_power);
        num(json_object_get(j, "last_power"), &s->last_power);
        bad = clocks_from_json(j, s);
    }
    if (bad) {
        snprintf(err, errsz, "gpu stats: %s", bad);
        rm_stats_init(s);
        return -1;
    }
    return 0;
}

double rm_hist_quantile(const uint64_t *hist, size_t nb, double q)
{
    uint64_t n = 0;
    for (size_t i = 0; i < nb; i++)
        n += hist[i];
    if (n == 0) return NAN;
    uint64_t rank = (uint64_t)ceil(q * (double)n);
    if (rank < 1) rank = 1;
    uint64_t c = 0;
    for (size_t i = 0; i < nb; i++) {
        c += hist[i];
        if (c >= rank) return (double)i;
    }
    return (double)(nb - 1);
}
