/* The time of dmon's and pmon's samples with -o DT (monitor/smi_time.h): bursts split on
 * Date+Time, GPU order and repeated keys; ts the middle of the DT second's overlap with the
 * read window; the guard against a wrong zone or a DST fold; two samples never share a ts. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <pthread.h>

#include "monitor/gpu_collectors.h"
#include "monitor/smi_time.h"

static int events;
static char last_collector[32];

static void count_event(void *owner, const char *name, json_t *data)
{
    (void)owner;
    if (!strcmp(name, "gpu_time_fallback")) {
        events++;
        snprintf(last_collector, sizeof last_collector, "%s",
                 json_string_value(json_object_get(data, "collector")));
    }
    json_decref(data);
}

static struct rm_session sess;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_int stop;
static struct rm_port port = {.event = count_event, .lock = &lock, .sess = &sess, .stop = &stop};

static const char *const PMON_HDR =
    "#Date        Time         gpu         pid   type     fb   ccpm     sm    mem    command";

static void start(struct rm_smi_time *t, const char *tz)
{
    setenv("TZ", tz, 1);
    tzset();
    memset(&sess, 0, sizeof sess);
    events = 0;
    rm_smi_time_init(t, &port, RM_STREAM_APPS, RM_NS_PER_SEC);
    struct rm_dmon_line h;
    assert_int_equal(rm_dmon_classify(PMON_HDR, strlen(PMON_HDR), &h), RM_DMON_HEADER);
    rm_smi_time_header(t, &h);
    assert_true(rm_smi_time_dated(t));
}

/* One pmon row at arrival (UTC ns); returns whether it started a sample, its ts in *ts. */
static int feed(struct rm_smi_time *t, const char *line, int64_t arrival, int64_t *ts)
{
    struct rm_dmon_line l;
    assert_int_equal(rm_dmon_classify(line, strlen(line), &l), RM_DMON_DATA);
    return rm_smi_time_row(t, &l, arrival, ts);
}

/* 2026-11-23 05:00:38 UTC */
#define S38 1795410038000000000LL
#define MS 1000000LL

static void middle_of_the_overlap(void **state)
{
    (void)state;
    struct rm_smi_time t;
    start(&t, "UTC");
    int64_t ts;
    /* Read at .35 after a read at .25: printed in (.25, .35]. */
    rm_smi_time_window(&t, S38 + 250 * MS);
    assert_int_equal(
        feed(&t, " 20261123 05:00:38 0 653 C 1860 0 98 7 python3", S38 + 350 * MS, &ts), 1);
    assert_int_equal(ts, S38 + 300 * MS);
    /* The same sample's next GPU: same ts. */
    assert_int_equal(feed(&t, " 20261123 05:00:38 1 - - - - - - -", S38 + 350 * MS, &ts), 0);
    assert_int_equal(ts, S38 + 300 * MS);
    rm_smi_time_window(&t, S38 + 950 * MS); /* the next read: empty at .95 */
    /* A window across the second: only [39 s, arrival] of it is in the burst's second. */
    assert_int_equal(
        feed(&t, " 20261123 05:00:39 0 653 C 1860 0 98 7 python3", S38 + 1050 * MS, &ts), 1);
    assert_int_equal(ts, S38 + 1025 * MS);
    assert_int_equal(sess.collectors[RM_STREAM_APPS].arrival_ts_rows, 0);
    assert_int_equal(events, 0);
}

static void two_bursts_in_one_read(void **state)
{
    (void)state;
    struct rm_smi_time t;
    start(&t, "UTC");
    int64_t a, b, c;
    rm_smi_time_window(&t, S38 + 900 * MS);
    /* Two bursts of different seconds: each its own sample and time. */
    assert_int_equal(feed(&t, " 20261123 05:00:38 0 653 C 2000 0 98 7 sleep", S38 + 1100 * MS, &a),
                     1);
    assert_int_equal(feed(&t, " 20261123 05:00:39 0 653 C 2000 0 98 7 sleep", S38 + 1100 * MS, &b),
                     1);
    assert_int_equal(a, S38 + 950 * MS);
    assert_int_equal(b, S38 + 1050 * MS);
    /* Two bursts of the same second (a period under a second): the repeated key starts the
     * second one, 1 ms after the first. */
    assert_int_equal(feed(&t, " 20261123 05:00:39 0 653 C 2000 0 98 7 sleep", S38 + 1100 * MS, &c),
                     1);
    assert_int_equal(c, b + MS);
    /* A lower GPU index starts one too, even with a new pid. */
    assert_int_equal(feed(&t, " 20261123 05:00:39 1 - - - - - - -", S38 + 1100 * MS, &a), 0);
    assert_int_equal(feed(&t, " 20261123 05:00:39 0 700 C 10 0 1 1 x", S38 + 1100 * MS, &a), 1);
    assert_int_equal(a, c + MS);
    /* The clock stepped back a minute: that sample's own time, not 1 ms after the last. */
    rm_smi_time_window(&t, S38 - 60 * RM_NS_PER_SEC);
    assert_int_equal(feed(&t, " 20261123 04:59:38 0 653 C 2000 0 98 7 sleep",
                          S38 - 60 * RM_NS_PER_SEC + 200 * MS, &a),
                     1);
    assert_int_equal(a, S38 - 60 * RM_NS_PER_SEC + 100 * MS);
}

static void wrong_zone_falls_back(void **state)
{
    (void)state;
    struct rm_smi_time t;
    start(&t, "America/New_York");
    int64_t ts;
    /* nvidia-smi printed Tokyo's 14:00:38 (05:00:38 UTC); read as New York time it is 14 h
     * later than the arrival: the arrival it is, every row counted, one event. */
    int64_t arrival = S38 + 20 * MS;
    assert_int_equal(feed(&t, " 20261123 14:00:38 0 653 C 2000 0 98 7 sleep", arrival, &ts), 1);
    assert_int_equal(ts, arrival);
    assert_int_equal(feed(&t, " 20261123 14:00:38 1 - - - - - - -", arrival + MS, &ts), 0);
    assert_int_equal(ts, arrival);
    assert_int_equal(
        feed(&t, " 20261123 14:00:39 0 653 C 2000 0 98 7 sleep", arrival + 1000 * MS, &ts), 1);
    assert_int_equal(ts, arrival + 1000 * MS);
    assert_int_equal(sess.collectors[RM_STREAM_APPS].arrival_ts_rows, 3);
    assert_int_equal(events, 1);
    assert_string_equal(last_collector, "apps");
}

/* One reading of 2026-11-01 01:30:00 in New York (it happens twice: 05:30 UTC in EDT, 06:30
 * UTC in EST) at arrival, in a fresh state: 1 when it fell back to the arrival, else 0 (then
 * its ts is the middle of [DT, arrival]). */
static int fold_fell_back(int64_t occurrence)
{
    struct rm_smi_time t;
    start(&t, "America/New_York");
    int64_t ts, arrival = occurrence + 100 * MS;
    rm_smi_time_window(&t, occurrence - 100 * MS);
    assert_int_equal(feed(&t, " 20261101 01:30:00 0 653 C 2000 0 98 7 sleep", arrival, &ts), 1);
    int fell = (int)sess.collectors[RM_STREAM_APPS].arrival_ts_rows;
    assert_int_equal(ts, fell ? arrival : occurrence + 50 * MS);
    assert_int_equal(events, fell);
    return fell;
}

static void dst_fold_falls_back(void **state)
{
    (void)state;
    /* The local time is read as one of its two instants; printed at the other, it is an hour
     * off its arrival: that sample falls back to the arrival, the other keeps its own time. */
    int64_t edt = 1793511000000000000LL; /* 2026-11-01T05:30:00Z */
    int64_t est = edt + 3600 * RM_NS_PER_SEC;
    assert_int_equal(fold_fell_back(edt) + fold_fell_back(est), 1);
}

static void bad_date_is_not_a_row(void **state)
{
    (void)state;
    struct rm_smi_time t;
    start(&t, "UTC");
    int64_t ts;
    assert_int_equal(feed(&t, " 2026112 05:00:38 0 653 C 2000 0 98 7 sleep", S38, &ts), -1);
    assert_int_equal(feed(&t, " 20261123 25:00:38 0 653 C 2000 0 98 7 sleep", S38, &ts), 1);
    assert_int_equal(ts, S38); /* not a time: the arrival, counted */
    assert_int_equal(sess.collectors[RM_STREAM_APPS].arrival_ts_rows, 1);
}

/* dmon.csv of the lines fed to a fresh dmon collector (each read at arrival), into out. */
static void dmon_csv(const char *const *lines, size_t n, int64_t arrival, char *out, size_t cap)
{
    char dir[] = "/tmp/runmon-test-smi-time.XXXXXX";
    assert_non_null(mkdtemp(dir));
    snprintf(sess.dir, sizeof sess.dir, "%s", dir);
    struct rm_dmon_ctx *d = calloc(1, sizeof *d);
    rm_dmon_ctx_init(d, &port, RM_NS_PER_SEC);
    assert_int_equal(rm_stream_open(&d->out, dir, RM_STREAM_DMON), 0);
    rm_dmon_on_window(d, arrival - 100 * MS);
    for (size_t i = 0; i < n; i++) {
        char line[256];
        snprintf(line, sizeof line, "%s", lines[i]);
        rm_dmon_on_line(d, line, strlen(line), arrival);
    }
    rm_dmon_on_flush(d);
    rm_stream_close(&d->out);
    free(d);
    char path[128];
    snprintf(path, sizeof path, "%s/dmon.csv", dir);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    size_t got = fread(out, 1, cap - 1, f);
    out[got] = '\0';
    fclose(f);
    snprintf(path, sizeof path, "rm -rf '%s'", dir);
    assert_int_equal(system(path), 0);
}

static void dmon_rows_without_date_and_time(void **state)
{
    (void)state;
    struct rm_smi_time t;
    start(&t, "UTC");
    char out[1024];
    /* -o DT: the two columns become the ts (the middle of (.9, 1.0] in 05:00:38). */
    const char *const dt[] = {"#   Date     Time   gpu    pwr", "#YYYYMMDD HH:MM:SS   Idx      W",
                              "20261123 05:00:38     0    630", "20261123 05:00:38     1    628"};
    dmon_csv(dt, 4, S38 + 1000 * MS, out, sizeof out);
    assert_string_equal(out, "ts,gpu,pwr\n2026-11-23T05:00:38.950+00:00,0,630\n"
                             "2026-11-23T05:00:38.950+00:00,1,628\n");
    /* -o D alone: the Date column is left out, the rows keep their arrival. */
    const char *const d_only[] = {"#   Date   gpu    pwr", "#YYYYMMDD   Idx      W",
                                  "20261123     0    630"};
    dmon_csv(d_only, 3, S38 + 1000 * MS, out, sizeof out);
    assert_string_equal(out, "ts,gpu,pwr\n2026-11-23T05:00:39.000+00:00,0,630\n");
    /* Without -o: as before. */
    const char *const plain[] = {"# gpu    pwr", "# Idx      W", "    0    630"};
    dmon_csv(plain, 3, S38 + 1000 * MS, out, sizeof out);
    assert_string_equal(out, "ts,gpu,pwr\n2026-11-23T05:00:39.000+00:00,0,630\n");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(middle_of_the_overlap), cmocka_unit_test(two_bursts_in_one_read),
        cmocka_unit_test(wrong_zone_falls_back), cmocka_unit_test(dst_fold_falls_back),
        cmocka_unit_test(bad_date_is_not_a_row), cmocka_unit_test(dmon_rows_without_date_and_time),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
