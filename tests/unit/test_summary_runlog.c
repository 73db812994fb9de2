/* Run-log phases: enter/exit matched by (pid, path), unterminated phases, window lookup. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "summary/runlog_read.h"
#include "summary/stats.h"

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

#define TS(s) "{\"ts\":\"2026-11-21T10:00:" s ".000+00:00\",\"pid\":1,"

/* Metric lines: statistics per metric in the run log's order, a line without a step taking
 * its order among the metric lines; bad values and bad lines ignored, counted and quoted. */
static void metric_lines(void **state)
{
    (void)state;
    struct rm_phase_index r;
    rm_runlog_init(&r);
    feed(&r, TS("00") "\"type\":\"metric\",\"step\":10,\"values\":{\"loss\":2.5,\"acc\":0.1}}");
    feed(&r, TS("01") "\"type\":\"metric\",\"values\":{\"loss\":0.5}}"); /* step: its order, 1 */
    feed(&r, TS("02") "\"type\":\"metric\",\"step\":30,\"values\":{\"loss\":1,\"acc\":0.7,"
                      "\"bad\":\"NaN\",\"a\\u0001b\":3,\"x/y\":1,\"n\":null}}");
    feed(&r, TS("03") "\"type\":\"metric\",\"step\":-1,\"values\":{\"loss\":9}}");
    feed(&r, TS("03") "\"type\":\"metric\",\"step\":1.5,\"values\":{\"loss\":9}}");
    feed(&r, TS("03") "\"type\":\"metric\",\"values\":{}}");
    feed(&r, TS("03") "\"type\":\"metric\",\"values\":[1]}");
    feed(&r, TS("03") "\"type\":\"metric\"}");
    feed(&r, TS("03") "\"type\":\"metric\",\"values\":{\"loss\":NaN}}"); /* not JSON */
    /* 1,000 keys in one line: ignored whole. */
    char *big = malloc(20000);
    int n = snprintf(big, 20000, TS("04") "\"type\":\"metric\",\"values\":{");
    for (int i = 0; i < 1000; i++)
        n += snprintf(big + n, 20000 - (size_t)n, "%s\"k%d\":1", i ? "," : "", i);
    snprintf(big + n, 20000 - (size_t)n, "}}");
    feed(&r, big);
    free(big);
    const struct rm_metrics *m = &r.metrics;
    assert_int_equal(m->lines, 9);
    assert_int_equal(m->n, 2);
    assert_int_equal(m->bad_lines, 6);
    assert_int_equal(m->bad_values, 4);
    assert_int_equal(r.garbage, 1);
    assert_string_equal(m->bad_value_first, "{\"bad\":\"NaN\"}");
    assert_string_equal(m->bad_line_first, "-1");
    size_t loss = rm_metrics_find(m, "loss"), acc = rm_metrics_find(m, "acc");
    assert_int_equal(loss, 0);
    assert_int_equal(acc, 1);
    const struct rm_metric_stat *l = &m->run[loss];
    assert_int_equal(l->count, 3);
    assert_true(l->last == 1 && l->min == 0.5 && l->max == 2.5);
    assert_int_equal(l->first_step, 10);
    assert_int_equal(l->last_step, 30);
    assert_int_equal(m->run[acc].count, 2);
    json_t *notes = json_array();
    rm_metrics_notes(m, notes);
    assert_int_equal(json_array_size(notes), 2);
    json_decref(notes);
    /* Quoted as JSON text: the control byte of a name is escaped, never raw. */
    rm_runlog_free(&r);
    rm_runlog_init(&r);
    feed(&r, TS("00") "\"type\":\"metric\",\"values\":{\"a\\u001bb\":1}}");
    assert_string_equal(r.metrics.bad_value_first, "{\"a\\u001Bb\":1}");
    rm_runlog_free(&r);
}

/* Objective lines: the last good one kept, bad ones counted. */
static void objective_lines(void **state)
{
    (void)state;
    struct rm_phase_index r;
    rm_runlog_init(&r);
    feed(&r, TS("00") "\"type\":\"objective\",\"objectives\":[{\"metric\":\"acc\",\"goal\":"
                      "\"max\"}]}");
    feed(&r, TS("01") "\"type\":\"objective\",\"objectives\":[{\"metric\":\"acc\",\"goal\":"
                      "\"up\"}]}");
    feed(&r, TS("02") "\"type\":\"objective\",\"objectives\":[]}");
    assert_int_equal(r.metrics.bad_objectives, 2);
    char *t = json_dumps(r.metrics.objectives, JSON_COMPACT);
    assert_string_equal(t, "[{\"metric\":\"acc\",\"goal\":\"max\",\"pick\":\"last\"}]");
    free(t);
    rm_runlog_free(&r);
}

/* Per phase: the metric lines read again once the windows are known, each value in every
 * phase whose window holds it (nested phases both), a phase once per line. */
static void metrics_per_phase(void **state)
{
    (void)state;
    char path[] = "/tmp/rm-test-metrics.XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    FILE *f = fdopen(fd, "w");
    fputs(TS("00") "\"type\":\"phase_enter\",\"name\":\"train\",\"path\":\"train\",\"depth\":0}"
                   "\n" TS("01") "\"type\":\"metric\",\"values\":{\"loss\":3}}\n" TS(
                       "02") "\"type\":\"phase_enter\",\"name\":\"e\",\"path\":\"train/"
                             "e\",\"depth\":1}\n" TS("03") "\"type\":\"metric\",\"step\":7,"
                                                           "\"values\":{\"loss\":2,\"acc\":0.5}}"
                                                           "\n" TS("04") "\"type\":\"phase_exit\","
                                                                         "\"name\":\"e\",\"path\":"
                                                                         "\"train/e\",\"depth\":1,"
                                                                         "\"seconds\":2.0,"
                                                                         "\"status\":\"ok\"}\n"
          /* a second window of train/e overlapping the first: the line counts once */
          TS("05") "\"type\":\"phase\",\"name\":\"train/e\",\"seconds\":3.0}\n" TS(
              "06") "\"type\":\"phase_exit\",\"name\":\"train\",\"path\":\"train\",\"depth\":0,"
                    "\"seconds\":6.0,\"status\":\"ok\"}\n" TS(
                        "07") "\"type\":\"metric\",\"values\":{\"loss\":1}}\n",
          f);
    fclose(f);
    struct rm_phase_index r;
    rm_runlog_init(&r);
    char err[256];
    assert_int_equal(rm_runlog_read_file(&r, path, err, sizeof err), 0);
    rm_runlog_finish(&r, RM_NO_TIME, NULL, NULL);
    assert_int_equal(rm_runlog_phase_metrics(&r, err, sizeof err), 0);
    unlink(path);
    const struct rm_metrics *m = &r.metrics;
    assert_int_equal(m->run[0].count, 3);
    assert_int_equal(m->run[0].last_step, 2); /* the third metric line, no step */
    size_t train = rm_runlog_phase_of(&r, "train"), e = rm_runlog_phase_of(&r, "train/e");
    json_t *tj = rm_metrics_phase_json(m, train), *ej = rm_metrics_phase_json(m, e);
    assert_non_null(tj);
    assert_non_null(ej);
    char *t = json_dumps(tj, JSON_COMPACT | JSON_SORT_KEYS);
    assert_non_null(strstr(t, "\"loss\":{\"count\":2,\"first_step\":0,"));
    assert_non_null(strstr(t, "\"last\":2.0,\"last_step\":7,"));
    free(t);
    t = json_dumps(ej, JSON_COMPACT | JSON_SORT_KEYS);
    assert_non_null(strstr(t, "\"loss\":{\"count\":1,\"first_step\":7,"));
    assert_non_null(strstr(t, "\"acc\":{\"count\":1,"));
    free(t);
    json_decref(tj);
    json_decref(ej);
    rm_runlog_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(phases_by_pid_and_path), cmocka_unit_test(params_lines),
        cmocka_unit_test(metric_lines),           cmocka_unit_test(objective_lines),
        cmocka_unit_test(metrics_per_phase),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
