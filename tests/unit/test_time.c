#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "base/rm_time.h"

static void format_matches_python_isoformat(void **state)
{
    (void)state;
    char buf[RM_TS_BUFSZ];
    /* python3 -c 'import datetime as d; print(d.datetime.fromtimestamp(1763720102.113999,
     *   tz=d.timezone.utc).isoformat(timespec="milliseconds"))' -> 2025-11-21T10:15:02.113+00:00 */
    size_t n = rm_format_ts(1763720102113999000LL, buf);
    assert_string_equal(buf, "2025-11-21T10:15:02.113+00:00");
    assert_int_equal(n, 29);
    rm_format_ts(0, buf);
    assert_string_equal(buf, "1970-01-01T00:00:00.000+00:00");
    rm_format_ts(951782400000000000LL, buf); /* leap day 2000 */
    assert_string_equal(buf, "2000-02-29T00:00:00.000+00:00");
    rm_format_ts(-1, buf); /* truncates towards the past, as Python does */
    assert_string_equal(buf, "1969-12-31T23:59:59.999+00:00");
}

static void parse_round_trips_and_accepts_nvidia_smi_form(void **state)
{
    (void)state;
    int64_t ns;
    const char *s = "2026-11-21T10:15:02.113+00:00";
    assert_int_equal(rm_parse_ts(s, strlen(s), &ns), 0);
    char buf[RM_TS_BUFSZ];
    rm_format_ts(ns, buf);
    assert_string_equal(buf, s);
    s = "2026/11/21 10:15:02.113";
    int64_t ns2;
    assert_int_equal(rm_parse_ts(s, strlen(s), &ns2), 0);
    assert_true(ns == ns2);
    s = "2026-11-21T12:15:02.113+02:00";
    assert_int_equal(rm_parse_ts(s, strlen(s), &ns2), 0);
    assert_true(ns == ns2);
    s = "2026-11-21T10:15:02Z";
    assert_int_equal(rm_parse_ts(s, strlen(s), &ns2), 0);
    assert_true(ns2 == ns - 113 * RM_NS_PER_MS);
}

static void parse_rejects_garbage(void **state)
{
    (void)state;
    int64_t ns;
    const char *bad[] = {"",
                         "2026-11-21",
                         "2026-13-01T00:00:00",
                         "2026-02-30T00:00:00",
                         "2025-02-29T00:00:00",
                         "2026-11-21T24:00:00",
                         "2026-11-21T10:15:02.",
                         "2026-11-21T10:15:02+0",
                         "2026-11-21T10:15:02 trailing",
                         "2026/11-21 10:15:02"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        assert_int_equal(rm_parse_ts(bad[i], strlen(bad[i]), &ns), -1);
    assert_int_equal(rm_parse_ts("2024-02-29T00:00:00", 19, &ns), 0);
}

static void seconds_round_to_milliseconds(void **state)
{
    (void)state;
    assert_true(rm_ns_to_seconds_ms(1234567890LL) == 1.235);
    assert_true(rm_ns_to_seconds_ms(0) == 0.0);
    assert_true(rm_ns_to_seconds_ms(1499999) == 0.001);
}

static void days_from_civil_matches_known_dates(void **state)
{
    (void)state;
    assert_true(rm_days_from_civil(1970, 1, 1) == 0);
    assert_true(rm_days_from_civil(2000, 3, 1) == 11017);
    assert_true(rm_days_from_civil(1969, 12, 31) == -1);
}

static void monotonic_sleep_reaches_deadline(void **state)
{
    (void)state;
    int64_t start = rm_now_monotonic_ns();
    assert_int_equal(rm_sleep_until_mono(start + 20 * RM_NS_PER_MS, NULL), 0);
    assert_true(rm_now_monotonic_ns() >= start + 20 * RM_NS_PER_MS);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(format_matches_python_isoformat),
        cmocka_unit_test(parse_round_trips_and_accepts_nvidia_smi_form),
        cmocka_unit_test(parse_rejects_garbage),
        cmocka_unit_test(seconds_round_to_milliseconds),
        cmocka_unit_test(days_from_civil_matches_known_dates),
        cmocka_unit_test(monotonic_sleep_reaches_deadline),
    };
    return cmocka_run_group_tests_name("time", tests, NULL, NULL);
}
