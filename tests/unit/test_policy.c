#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "monitor/policy.h"

#define S 1000000000LL

static void backoff_doubles_to_thirty_seconds(void **state)
{
    (void)state;
    struct rm_backoff b = {0};
    int64_t want[] = {1 * S, 2 * S, 4 * S, 8 * S, 16 * S, 30 * S, 30 * S};
    for (size_t i = 0; i < sizeof want / sizeof *want; i++)
        assert_true(rm_backoff_failure(&b) == want[i]);
    assert_int_equal(b.consecutive, 7);
}

static void backoff_resets_after_a_healthy_minute(void **state)
{
    (void)state;
    struct rm_backoff b = {0};
    rm_backoff_failure(&b);
    rm_backoff_failure(&b);
    rm_backoff_row(&b, 100 * S); /* first good row */
    rm_backoff_row(&b, 159 * S); /* 59 s: not yet */
    assert_int_equal(b.consecutive, 2);
    assert_true(rm_backoff_failure(&b) == 4 * S); /* a failure inside the minute keeps doubling */
    rm_backoff_row(&b, 200 * S);
    rm_backoff_row(&b, 260 * S);
    assert_int_equal(b.consecutive, 0);
    assert_true(rm_backoff_failure(&b) == 1 * S);
}

static void stale_is_three_intervals_or_five_seconds(void **state)
{
    (void)state;
    assert_true(rm_stale_after_ns(S / 10) == 5 * S);
    assert_true(rm_stale_after_ns(2 * S) == 6 * S);
    assert_true(rm_stale_after_ns(10 * S) == 30 * S);
}

/* A GPU row's ts: its sample time unless further than max(3 intervals, 2 s) from its arrival
 * (inclusive: at exactly the guard the sample time is kept). */
static void sample_ts_guard(void **state)
{
    (void)state;
    assert_int_equal(rm_sample_ts_guard_ns(S / 10), 2 * S);
    assert_int_equal(rm_sample_ts_guard_ns(S), 3 * S);
    assert_int_equal(rm_sample_ts_guard_ns(5 * S), 15 * S);
    int fb = -1;
    assert_int_equal(rm_sample_ts_choose(100 * S - 30, 100 * S, 2 * S, &fb), 100 * S - 30);
    assert_int_equal(fb, 0);
    assert_int_equal(rm_sample_ts_choose(102 * S, 100 * S, 2 * S, &fb), 102 * S);
    assert_int_equal(fb, 0);
    assert_int_equal(rm_sample_ts_choose(98 * S - 1, 100 * S, 2 * S, &fb), 100 * S);
    assert_int_equal(fb, 1);
    assert_int_equal(rm_sample_ts_choose(100 * S + 3600 * S, 100 * S, 2 * S, &fb), 100 * S);
    assert_int_equal(fb, 1);
}

static void thresholds_fire_once_per_crossing(void **state)
{
    (void)state;
    enum rm_level lvl = RM_LEVEL_OK, crossed;
    double used[] = {10, 91, 92, 99, 99.5, 50, 95, NAN, 99};
    enum rm_level want[] = {RM_LEVEL_OK,       RM_LEVEL_WARNING, RM_LEVEL_OK,
                            RM_LEVEL_CRITICAL, RM_LEVEL_OK,      RM_LEVEL_OK,
                            RM_LEVEL_WARNING,  RM_LEVEL_OK,      RM_LEVEL_CRITICAL};
    for (size_t i = 0; i < sizeof used / sizeof *used; i++) {
        lvl = rm_threshold_step(lvl, used[i], 100, 90, 98, &crossed);
        assert_int_equal(crossed, want[i]);
    }
}

static void thresholds_ignore_missing_totals(void **state)
{
    (void)state;
    enum rm_level crossed;
    assert_int_equal(rm_threshold_step(RM_LEVEL_WARNING, 99, 0, 90, 98, &crossed),
                     RM_LEVEL_WARNING);
    assert_int_equal(crossed, RM_LEVEL_OK);
    assert_int_equal(rm_threshold_step(RM_LEVEL_OK, 99, NAN, 90, 98, &crossed), RM_LEVEL_OK);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(backoff_doubles_to_thirty_seconds),
        cmocka_unit_test(backoff_resets_after_a_healthy_minute),
        cmocka_unit_test(stale_is_three_intervals_or_five_seconds),
        cmocka_unit_test(sample_ts_guard),
        cmocka_unit_test(thresholds_fire_once_per_crossing),
        cmocka_unit_test(thresholds_ignore_missing_totals),
    };
    return cmocka_run_group_tests_name("policy", tests, NULL, NULL);
}
