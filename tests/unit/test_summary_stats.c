/* Streaming statistics: merging segments equals one pass; JSON round trip; quantiles. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "summary/stats.h"

#define SEC 1000000000LL

static void add(struct rm_gpu_stats *s, int64_t t, double util, double power, uint32_t valid)
{
    double v[RM_GM_COUNT] = {0};
    v[RM_GM_UTIL] = util;
    v[RM_GM_POWER] = power;
    rm_stats_add(s, t, v, valid, 3 * SEC);
}

static void energy_and_gaps(void **state)
{
    (void)state;
    struct rm_gpu_stats s;
    rm_stats_init(&s);
    uint32_t both = (1u << RM_GM_UTIL) | (1u << RM_GM_POWER);
    add(&s, 0, 0, 100, both);
    add(&s, 1 * SEC, 50, 200, both);            /* +150 J */
    add(&s, 2 * SEC, 100, 0, 1u << RM_GM_UTIL); /* power missing: rectangle of 200 J */
    add(&s, 10 * SEC, 100, 300, both);          /* 8 s > 3 s: a gap, not bridged */
    add(&s, 11 * SEC, 100, 300, both);          /* +300 J */
    assert_true(fabs(s.energy_j - 650) < 1e-9);
    assert_int_equal(s.gaps, 1);
    assert_int_equal(s.gap_ns, 8 * SEC);
    assert_int_equal(s.covered_ns, 3 * SEC);
    assert_int_equal(s.idle_samples, 1);
    assert_int_equal(s.m[RM_GM_POWER].n, 4);
    assert_true(rm_hist_quantile(s.util_hist, RM_UTIL_BUCKETS, 0.5) == 100);
    assert_true(rm_hist_quantile(s.util_hist, RM_UTIL_BUCKETS, 0.2) == 0);
    assert_true(isnan(rm_hist_quantile((uint64_t[RM_UTIL_BUCKETS]){0}, RM_UTIL_BUCKETS, 0.5)));
}

static void merge_equals_one_pass(void **state)
{
    (void)state;
    struct rm_gpu_stats whole, a, b;
    rm_stats_init(&whole);
    rm_stats_init(&a);
    rm_stats_init(&b);
    uint32_t both = (1u << RM_GM_UTIL) | (1u << RM_GM_POWER);
    for (int i = 0; i < 20; i++) {
        int64_t t = i < 12 ? i * SEC : (i + 5) * SEC; /* a gap between 11 and 17 */
        double u = (i * 37) % 101, p = 100 + i * 3;
        add(&whole, t, u, p, both);
        add(i < 8 ? &a : &b, t, u, p, both); /* the split falls inside bridged time */
    }
    rm_stats_merge(&a, &b, 3 * SEC);
    assert_true(fabs(a.energy_j - whole.energy_j) < 1e-6);
    assert_int_equal(a.covered_ns, whole.covered_ns);
    assert_int_equal(a.gaps, whole.gaps);
    assert_int_equal(a.samples, whole.samples);
    assert_memory_equal(a.util_hist, whole.util_hist, sizeof a.util_hist);
    assert_true(a.m[RM_GM_UTIL].max == whole.m[RM_GM_UTIL].max);
}

static void json_round_trip(void **state)
{
    (void)state;
    struct rm_gpu_stats s, r;
    rm_stats_init(&s);
    uint32_t both = (1u << RM_GM_UTIL) | (1u << RM_GM_POWER);
    add(&s, 5 * SEC, 12, 99.5, both);
    add(&s, 6 * SEC, 0, 100.25, both);
    s.power_limit_w = 700; /* a sealed segment keeps its GPU's power limit (issue 36) */
    json_t *j = rm_stats_to_json(&s);
    char *txt = json_dumps(j, 0);
    json_t *back = json_loads(txt, 0, NULL);
    char err[128];
    assert_int_equal(rm_stats_from_json(back, &r, err, sizeof err), 0);
    assert_true(r.energy_j == s.energy_j && r.samples == 2 && r.first_ns == 5 * SEC);
    assert_true(r.last_power == 100.25 && r.m[RM_GM_POWER].sum == s.m[RM_GM_POWER].sum);
    assert_memory_equal(r.util_hist, s.util_hist, sizeof r.util_hist);
    assert_true(r.power_limit_w == 700);
    /* Empty metrics stay empty (null min/max), and garbage is refused. */
    assert_int_equal(r.m[RM_GM_TEMP].n, 0);
    json_t *bad = json_pack("{s:s}", "samples", "x");
    assert_int_equal(rm_stats_from_json(bad, &r, err, sizeof err), -1);
    json_decref(bad);
    free(txt);
    json_decref(j);
    json_decref(back);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(energy_and_gaps),
        cmocka_unit_test(merge_equals_one_pass),
        cmocka_unit_test(json_round_trip),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
