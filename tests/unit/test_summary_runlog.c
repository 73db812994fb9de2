/* Run-log phases: enter/exit matched by (pid, path), unterminated phases, window lookup. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "summary/runlog_read.h"

#define SEC 1000000000LL

static void feed(struct rm_phase_index *r, const char *s)
{
    rm_runlog_line(r, s, strlen(s), false);
}

static void hit(void *ctx, size_t phase)
{
    ((int *)ctx)[phase]++;
}

static void phases_by_pid_and_path(void **state)
{
    (void)state;
    struct rm_phase_index r;
    rm_runlog_init(&r);
    feed(&r, "{\"ts\":\"2026-11-21T10:00:00.000+00:00\",\"type\":\"phase_enter\",\"pid\":1,\"t\":0,"
             "\"name\":\"a\",\"path\":\"a\",\"depth\":0}");
    feed(&r, "{\"ts\":\"2026-11-21T10:00:01.000+00:00\",\"type\":\"phase_enter\",\"pid\":2,\"t\":0,"
             "\"name\":\"a\",\"path\":\"a\",\"depth\":0}");
    feed(&r, "{\"ts\":\"2026-11-21T10:00:03.000+00:00\",\"type\":\"phase_exit\",\"pid\":1,\"t\":0,"
             "\"name\":\"a\",\"path\":\"a\",\"depth\":0,\"seconds\":3.0,\"status\":\"error\"}");
    feed(&r, "{\"ts\":\"2026-11-21T10:00:05.000+00:00\",\"type\":\"phase\",\"pid\":1,\"t\":0,"
             "\"name\":\"b\",\"seconds\":1.0}");
    feed(&r, "{\"ts\":\"2026-11-21T10:00:06.000+00:00\",\"type\":\"event\",\"pid\":1,\"t\":0,"
             "\"event\":\"x\",\"data\":{\"peak_bytes\":1048576}}");
    feed(&r, "not json");
    rm_runlog_line(&r, "{\"ts\":", 6, true);
    /* A year no int64 nanosecond count holds is a bad time, not an overflow. */
    feed(&r, "{\"ts\":\"9999-01-01T00:00:00.000+00:00\",\"type\":\"event\",\"event\":\"x\"}");
    feed(&r, "{\"t\":1e300,\"type\":\"event\",\"event\":\"x\"}");
    assert_int_equal(r.bad_time, 2);
    assert_int_equal(r.nphases, 2);
    assert_int_equal(r.garbage, 1);
    assert_int_equal(r.torn, 1);
    assert_true(r.has_jax && r.jax_peak_bytes == 1048576);
    /* pid 2's "a" never exits: closed at the session end, 10:00:08. */
    int64_t t0 = r.first_ns;
    rm_runlog_finish(&r, t0 + 8 * SEC, NULL, NULL);
    assert_int_equal(r.phases[0].count, 2);
    assert_int_equal(r.phases[0].error, 1);
    assert_int_equal(r.phases[0].unterminated, 1);
    assert_true(r.phases[0].total_s == 3.0 + 7.0);
    int hits[2] = {0};
    rm_runlog_windows_at(&r, t0 + 2 * SEC, hit, hits); /* both windows of "a" */
    assert_int_equal(hits[0], 2);
    assert_int_equal(hits[1], 0);
    memset(hits, 0, sizeof hits);
    rm_runlog_windows_at(&r, t0 + 4 * SEC + SEC / 2, hit, hits); /* "b" = [4, 5) and a(pid 2) */
    assert_int_equal(hits[0], 1);
    assert_int_equal(hits[1], 1);
    memset(hits, 0, sizeof hits);
    rm_runlog_windows_at(&r, t0 + 5 * SEC, hit, hits); /* half-open: b has ended */
    assert_int_equal(hits[1], 0);
    rm_runlog_free(&r);
}

/* params lines (runmon.params): merged, a later key winning, the last sweep kept; a line whose
 * params is not an object, or whose sweep is not a string, counted and its value kept as JSON
 * text; the same through the fast reader and the JSON tree. */
static void params_lines(void **state)
{
    (void)state;
    for (int general = 0; general < 2; general++) {
        struct rm_phase_index r;
        rm_runlog_init(&r);
        r.general_only = general;
        feed(&r, "{\"ts\":\"2026-11-21T10:00:00.000+00:00\",\"type\":\"params\",\"params\":"
                 "{\"lr\":0.1,\"opt\":\"adam\"},\"sweep\":\"s1\",\"pid\":1,\"t\":0}");
        feed(&r, "{\"ts\":\"2026-11-21T10:00:01.000+00:00\",\"type\":\"params\",\"params\":5,"
                 "\"pid\":1,\"t\":0}");
        feed(&r, "{\"ts\":\"2026-11-21T10:00:01.000+00:00\",\"type\":\"params\",\"params\":"
                 "\"\\u001b[2J\",\"pid\":1,\"t\":0}");
        feed(&r, "{\"ts\":\"2026-11-21T10:00:02.000+00:00\",\"type\":\"params\",\"params\":"
                 "{\"lr\":0.01},\"sweep\":7,\"pid\":1,\"t\":0}");
        feed(&r, "{\"ts\":\"2026-11-21T10:00:02.000+00:00\",\"type\":\"params\",\"pid\":1,"
                 "\"t\":0}");
        assert_int_equal(r.bad_params, 4);
        assert_string_equal(r.bad_params_first, "5");
        assert_true(json_real_value(json_object_get(r.params, "lr")) == 0.01);
        assert_string_equal(json_string_value(json_object_get(r.params, "opt")), "adam");
        assert_string_equal(r.sweep, "s1");
        assert_int_equal(r.garbage, 0);
        rm_runlog_free(&r);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(phases_by_pid_and_path),
        cmocka_unit_test(params_lines),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
