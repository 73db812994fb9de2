/* The stall stream (issue 38): its /proc parsers (monitor/stall_parse.c) on the kernel's own
 * lines and damaged ones, and stall.csv rows into the figures (summary/stallcsv.c): columns
 * found by name, empty fields unknown, an interval shared out by weight. */
#include <jansson.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "monitor/stall_parse.h"
#include "summary/csvread.h"
#include "summary/objects.h"
#include "summary/stallcsv.h"

#define S(x) x, strlen(x)

static void schedstat(void **state)
{
    (void)state;
    uint64_t run = 0, wait = 0;
    assert_int_equal(rm_parse_schedstat(S("114446174 4040001 52\n"), &run, &wait), 0);
    assert_true(run == 114446174 && wait == 4040001);
    assert_int_equal(rm_parse_schedstat(S("0 0 0\n"), &run, &wait), 0);
    assert_true(run == 0 && wait == 0);
    assert_int_equal(rm_parse_schedstat(S("12\n"), &run, &wait), -1); /* one number */
    assert_int_equal(rm_parse_schedstat(S(""), &run, &wait), -1);
    assert_int_equal(rm_parse_schedstat(S("x 1 2"), &run, &wait), -1);
    assert_int_equal(rm_parse_schedstat(S("99999999999999999999 1 2"), &run, &wait), -1);
}

static void task_stat(void **state)
{
    (void)state;
    struct rm_task_stat st;
    /* a name with spaces and ')', field 42 = 17 */
    const char *line = "123 (a) b (c)) D 1 123 123 0 -1 4194560 10 0 0 0 5 6 0 0 20 0 1 0 100 "
                       "1000 50 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 0 0 0 17 0 0\n";
    assert_int_equal(rm_parse_task_stat(S(line), &st), 0);
    assert_int_equal(st.state, 'D');
    assert_int_equal(st.have_blkio, 1);
    assert_true(st.blkio_ticks == 17);
    /* an old kernel's line that stops before field 42: the state alone */
    assert_int_equal(rm_parse_task_stat(S("7 (sh) R 1 7 7 0 -1\n"), &st), 0);
    assert_int_equal(st.state, 'R');
    assert_int_equal(st.have_blkio, 0);
    assert_int_equal(rm_parse_task_stat(S("7 (sh)"), &st), -1);
    assert_int_equal(rm_parse_task_stat(S("7 sh R 1"), &st), -1);
    assert_int_equal(rm_parse_task_stat(S("7 (sh)  R"), &st), -1);
}

static void cgroup_v2(void **state)
{
    (void)state;
    char out[64];
    const char *hybrid = "9:name=systemd:/\n4:memory:/x\n0::/user.slice/job-1\n";
    assert_int_equal(rm_parse_cgroup_v2(S(hybrid), out, sizeof out), 17);
    assert_string_equal(out, "/user.slice/job-1");
    assert_int_equal(rm_parse_cgroup_v2(S("0::/"), out, sizeof out), 1);
    assert_string_equal(out, "/");
    assert_int_equal(rm_parse_cgroup_v2(S("4:memory:/x\n"), out, sizeof out), -1); /* v1 only */
    assert_int_equal(rm_parse_cgroup_v2(S("0::\n"), out, sizeof out), -1);
    assert_int_equal(rm_parse_cgroup_v2(S("0::/aaaaaaaa"), out, 4), -1); /* does not fit */
}

struct rows {
    struct rm_stallcsv p;
    struct rm_stall_acc run, half;
    int data, headers, bad;
};

static void on_row(void *ctx, const struct rm_csv_row *row)
{
    struct rows *r = ctx;
    struct rm_stall_row s;
    int rc = rm_stallcsv_row(&r->p, row, &s);
    if (rc == 1) {
        r->data++;
        rm_stall_acc_add(&r->run, &s, 1);
        rm_stall_acc_add(&r->half, &s, 0.5);
    } else if (rc == 0) {
        r->headers++;
    } else {
        r->bad++;
    }
}

static void rows_to_figures(void **state)
{
    (void)state;
    /* two intervals of 200 ms: 100 ms run and 100 ms waiting in the first, a blocked thread
     * in the second; blkio in one; the cgroup's io pressure 50 ms of 200 in both; then a row
     * of garbage and one of another length; a future column at the end */
    const char *csv =
        "ts,interval_ms,procs,threads,runnable,blocked,run_ns,wait_ns,blkio_ms,cgroup,"
        "cpu_some_us,io_some_us,memory_some_us,unreadable,future\n"
        "2026-01-01T00:00:00.200+00:00,200,1,2,1,0,100000000,100000000,,/a,,50000,,0,x\n"
        "2026-01-01T00:00:00.400+00:00,200,1,2,0,1,0,0,150,/a,,50000,,0,x\n"
        "2026-01-01T00:00:00.600+00:00,200,1,2,0,1,zz,0,,/a,,,,0,x\n"
        "2026-01-01T00:00:00.800+00:00,200,1\n";
    struct rows r;
    memset(&r, 0, sizeof r);
    rm_stallcsv_init(&r.p);
    struct rm_csv_reader *rd = rm_csv_new(on_row, &r);
    assert_non_null(rd);
    assert_int_equal(rm_csv_feed(rd, csv, strlen(csv)), 0);
    assert_int_equal(rm_csv_finish(rd), 0);
    rm_csv_free(rd);
    assert_int_equal(r.headers, 1);
    assert_int_equal(r.data, 2);
    assert_int_equal(r.bad, 2);
    assert_true(fabs(rm_stall_wait_share(&r.run) - 0.5) < 1e-9);
    assert_true(fabs(rm_stall_waiting_threads(&r.run) - 0.25) < 1e-9); /* 0.1 s in 0.4 s */
    assert_true(fabs(rm_stall_blocked_share(&r.run) - 0.5) < 1e-9);
    assert_true(fabs(rm_stall_blkio_s(&r.run) - 0.15) < 1e-9);
    assert_true(fabs(rm_stall_cgroup_pct(&r.run, 1) - 25) < 1e-9);
    assert_true(isnan(rm_stall_cgroup_pct(&r.run, 0))); /* never given */
    /* half of each interval: the same shares */
    assert_true(fabs(rm_stall_blocked_share(&r.half) - 0.5) < 1e-9);
    assert_true(fabs(rm_stall_cgroup_pct(&r.half, 1) - 25) < 1e-9);
    json_t *j = rm_obj_json(RM_OBJ_STALL, &r.run, NULL);
    assert_true(json_real_value(json_object_get(j, "run_queue_wait_share")) == 0.5);
    assert_true(json_real_value(json_object_get(j, "io_blocked_share")) == 0.5);
    assert_true(json_is_null(json_object_get(j, "cgroup_cpu_some_pct")));
    json_decref(j);
    /* nothing at all: every figure unknown */
    j = rm_obj_json(RM_OBJ_STALL, NULL, NULL);
    assert_true(json_is_null(json_object_get(j, "run_queue_wait_share")));
    assert_true(json_is_null(json_object_get(j, "io_blocked_share")));
    json_decref(j);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(schedstat),
        cmocka_unit_test(task_stat),
        cmocka_unit_test(cgroup_v2),
        cmocka_unit_test(rows_to_figures),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
