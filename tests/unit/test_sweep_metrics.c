/* The sweep page's metric reader (report/sweep_metrics.c, issue 39): a run log's `metric`
 * lines into per-metric series by step and by time, bounded whatever the lines; the fast
 * reader agrees with jansson on every line it takes; bad lines are left out. */
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

#include "model/objective.h"
#include "sweep/sweep_internal.h"

static char dir[64];

static void write_log(const char *text)
{
    char path[128];
    snprintf(path, sizeof path, "%s/runlog.jsonl", dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static void read_run(struct sweep_run *run, bool general)
{
    memset(run, 0, sizeof *run);
    run->dir = dir;
    run->general_only = general;
    rm_sweep_metrics_read(run, 1000.0);
}

static const struct sweep_metric *metric(const struct sweep_run *run, const char *name)
{
    for (size_t i = 0; i < run->nmetrics; i++)
        if (!strcmp(run->metrics[i].name, name)) return &run->metrics[i];
    return NULL;
}

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/rm-sweep-metrics.XXXXXX");
    assert_non_null(mkdtemp(dir));
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    char path[128];
    snprintf(path, sizeof path, "%s/runlog.jsonl", dir);
    unlink(path);
    rmdir(dir);
    return 0;
}

/* Each line as the writers write it, and in shapes only jansson reads (escapes, spaces,
 * nesting beside the values, a repeated field): both readers give the same series. */
static void test_fast_agrees(void **state)
{
    (void)state;
    char *text = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&text, &len);
    assert_non_null(m);
    fputs("{\"ts\":\"x\",\"type\":\"phase\",\"name\":\"metric\",\"seconds\":1.0,\"pid\":1,"
          "\"t\":1000.5}\n",
          m);
    for (int s = 0; s < 5000; s++)
        fprintf(m,
                "{\"ts\":\"x\",\"type\":\"metric\",\"step\":%d,\"values\":{\"loss\":%.6g,"
                "\"acc\":%d},\"pid\":7,\"t\":%.3f}\n",
                s, 2.0 / (1 + s), s % 13, 1000 + s / 100.0);
    fputs("{ \"type\" : \"metric\" , \"values\" : { \"loss\" : -1e-3 } , \"t\" : 1001 }\n", m);
    fputs("{\"type\":\"metric\",\"values\":{\"lo\\u0073s\":7},\"step\":9,\"t\":1002}\n", m);
    fputs("{\"type\":\"metric\",\"values\":{\"acc\":3},\"extra\":{\"a\":[1]},\"t\":1003}\n", m);
    fputs("{\"type\":\"metric\",\"step\":1,\"step\":2,\"values\":{\"acc\":4},\"t\":1004}\n", m);
    fputs("{\"type\":\"metric\",\"values\":{\"acc\":\"NaN\",\"loss\":true,\"e\":1e999}}\n", m);
    fclose(m);
    write_log(text);
    free(text);
    struct sweep_run a, b;
    read_run(&a, false);
    read_run(&b, true);
    assert_int_equal(a.nmetrics, 2);
    assert_int_equal(b.nmetrics, 2);
    assert_int_equal(a.metric_lines, b.metric_lines);
    for (size_t i = 0; i < a.nmetrics; i++) {
        const struct sweep_metric *y = metric(&b, a.metrics[i].name);
        assert_non_null(y);
        assert_int_equal(a.metrics[i].count, y->count);
        assert_memory_equal(a.metrics[i].by, y->by, sizeof y->by);
    }
    rm_sweep_metrics_free(&a);
    rm_sweep_metrics_free(&b);
}

/* 5,000 steps in at most 200 points, in step order, holding the smallest and largest value;
 * by time from the run's start (t0 1000 s): the last line at 49.99 s. */
static void test_bounded(void **state)
{
    (void)state;
    char *text = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&text, &len);
    for (int s = 0; s < 5000; s++)
        fprintf(m, "{\"type\":\"metric\",\"step\":%d,\"values\":{\"loss\":%d},\"t\":%.3f}\n", s,
                s == 1234   ? -50
                : s == 4321 ? 900
                            : s % 10,
                1000 + s / 100.0);
    fclose(m);
    write_log(text);
    free(text);
    struct sweep_run r;
    read_run(&r, false);
    const struct sweep_metric *loss = metric(&r, "loss");
    assert_non_null(loss);
    assert_int_equal(loss->count, 5000);
    struct sweep_mpoint pts[2 * RM_SWEEP_METRIC_BUCKETS];
    for (int a = 0; a < SW_METRIC_AXES; a++) {
        size_t n = rm_sweep_mseries_points(&loss->by[a], pts);
        assert_true(n > RM_SWEEP_METRIC_BUCKETS / 2 && n <= 2 * RM_SWEEP_METRIC_BUCKETS);
        double lo = INFINITY, hi = -INFINITY;
        for (size_t k = 0; k < n; k++) {
            if (k) assert_true(pts[k].x >= pts[k - 1].x);
            lo = fmin(lo, pts[k].v);
            hi = fmax(hi, pts[k].v);
        }
        assert_true(lo == -50 && hi == 900);
    }
    assert_true(loss->by[SW_BY_STEP].xmax == 4999);
    assert_true(fabs(loss->by[SW_BY_TIME].xmax - 49.99) < 1e-6);
    rm_sweep_metrics_free(&r);
}

/* Bad lines: not JSON, a torn last line, more values than a line may carry, names that are
 * no metric names, strings and booleans as values; a line without a step takes its order. */
static void test_bad_lines(void **state)
{
    (void)state;
    char *text = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&text, &len);
    fputs("{\"type\":\"metric\",\"step\":0,\"values\":{\"loss\":NaN}}\n", m);
    fputs("{\"type\":\"metric\",\"values\":{\"a/b\":1,\"k\\u001b\":2,\"\":3,\"ok\":4}}\n", m);
    fputs("{\"type\":\"metric\",\"values\":{\"ok\":5}}\n", m);
    fputs("{\"type\":\"metric\",\"values\":{", m);
    for (int i = 0; i < RM_METRIC_LINE_MAX + 1; i++)
        fprintf(m, "%s\"m%d\":%d", i ? "," : "", i, i);
    fputs("}}\n", m);
    fputs("{\"type\":\"metric\",\"step\":3,\"values\":{\"torn\":1}", m);
    fclose(m);
    write_log(text);
    free(text);
    struct sweep_run r;
    read_run(&r, false);
    assert_int_equal(r.nmetrics, 1);
    const struct sweep_metric *ok = metric(&r, "ok");
    assert_non_null(ok);
    assert_int_equal(ok->count, 2);
    /* Steps 0 and 1: the order of the two metric lines read. */
    assert_true(ok->by[SW_BY_STEP].xmax == 1);
    rm_sweep_metrics_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fast_agrees),
        cmocka_unit_test(test_bounded),
        cmocka_unit_test(test_bad_lines),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
