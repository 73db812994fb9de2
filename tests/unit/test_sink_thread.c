/* Tests of the sink's thread (sink/sink.c) on a fake clock (tests/unit/fake_clock.h): a real
 * sink folder, a real CSV stream (monitor/stream.c) written by the test as a collector would,
 * the real thread; only "now" and the end of the thread's wait are the test's. So a round
 * comes exactly every flush period, a seal is taken at once, and a failed write (the stream's
 * file swapped for /dev/full: a real ENOSPC) raises sink_degraded at once and sink_recovered
 * at the next round with the outage's exact down_s. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/json.h"
#include "base/rm_time.h"
#include "fake_clock.h"
#include "monitor/port.h"
#include "monitor/stream.h"
#include "sink/sink.h"

#define S RM_NS_PER_SEC
#define T0 (1000 * S)                     /* the fake monotonic start */
#define R0 (1795000000LL * RM_NS_PER_SEC) /* its realtime: 2026-11-18T11:06:40Z */
#define ID "20261118T110640Z-test-1"

struct rig {
    struct fake_clock clk;
    char dir[64];
    pthread_mutex_t lock; /* the port's */
    struct rm_session sess;
    struct rm_latest latest;
    atomic_int stop, wpid;
    struct rm_port port;
    int claim;
    struct rm_sink *k;
    struct rm_stream s;
    int rows; /* rows written so far */
    /* The events, guarded by mu. */
    pthread_mutex_t mu;
    char ev[16][32];
    json_t *data[16];
    int nev;
};

static void on_event(void *owner, const char *name, json_t *data)
{
    struct rig *r = owner;
    pthread_mutex_lock(&r->mu);
    if (r->nev < 16) {
        snprintf(r->ev[r->nev], sizeof r->ev[0], "%s", name);
        r->data[r->nev++] = data;
        data = NULL;
    }
    pthread_mutex_unlock(&r->mu);
    json_decref(data);
}

static void no_health(void *owner, int c, enum rm_health h, const char *e, int n)
{
    (void)owner, (void)c, (void)h, (void)e, (void)n;
}

static const char *const cpu_cols[] = {
    "cpu",         "usr_pct",   "nice_pct", "sys_pct",      "iowait_pct",       "irq_pct",
    "softirq_pct", "steal_pct", "idle_pct", "mem_total_mb", "mem_available_mb", "mem_used_mb"};

/* A session of a new sink, its cpu stream attached, the sink's thread started at T0. */
static struct rig *rig_new(double rollover_mb)
{
    struct rig *r = calloc(1, sizeof *r);
    assert_non_null(r);
    fake_clock_init(&r->clk, T0, R0);
    pthread_mutex_init(&r->lock, NULL);
    pthread_mutex_init(&r->mu, NULL);
    strcpy(r->dir, "/tmp/runmon-sinkt-XXXXXX");
    assert_non_null(mkdtemp(r->dir));
    snprintf(r->sess.id, sizeof r->sess.id, "%s", ID);
    snprintf(r->sess.dir, sizeof r->sess.dir, "%s/%s", r->dir, ID);
    snprintf(r->sess.host, sizeof r->sess.host, "test");
    r->sess.pid = getpid();
    r->sess.started_ns = R0;
    r->sess.status = "running";
    r->sess.exit_code = -1;
    r->sess.interval_s = 1;
    r->port = (struct rm_port){.owner = r,
                               .event = on_event,
                               .set_health = no_health,
                               .lock = &r->lock,
                               .sess = &r->sess,
                               .latest = &r->latest,
                               .stop = &r->stop,
                               .workload_pid = &r->wpid,
                               .interval_s = 1,
                               .quiet = 1,
                               .clock = &r->clk.clock};
    assert_int_equal(rm_sink_begin_session(r->dir, &r->sess, &r->claim), 0);
    struct rm_sink_config cfg = {.dir = r->dir, .flush_s = 2, .rollover_mb = rollover_mb};
    char err[512];
    r->k = rm_sink_open(&cfg, &r->port, err, sizeof err);
    assert_non_null(r->k);
    assert_int_equal(rm_stream_open(&r->s, r->sess.dir, RM_STREAM_CPU), 0);
    r->s.clock = &r->clk.clock;
    rm_sink_attach(r->k, &r->s);
    assert_int_equal(rm_stream_header(&r->s, cpu_cols, 12), 0);
    assert_int_equal(rm_sink_start(r->k), 0);
    assert_true(fake_clock_settle_after(&r->clk, 0)); /* the thread waits for its round */
    return r;
}

static void rig_free(struct rig *r)
{
    rm_stream_close(&r->s);
    r->sess.status = "completed";
    r->sess.exit_code = 0;
    rm_sink_close(r->k, 0);
    rm_sink_end_session(r->claim, r->sess.dir);
    for (int i = 0; i < r->nev; i++)
        json_decref(r->data[i]);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", r->dir);
    assert_int_equal(system(cmd), 0);
    fake_clock_fini(&r->clk);
    free(r);
}

/* n rows stamped now, then the flush a collector makes after them. Returns its result. */
static int write_rows(struct rig *r, int n)
{
    for (int i = 0; i < n; i++, r->rows++) {
        rm_stream_begin_row(&r->s, rm_clock_real(&r->clk.clock));
        rm_stream_field_str(&r->s, "all");
        for (int c = 1; c < 12; c++) {
            char v[32];
            snprintf(v, sizeof v, "%d.%02d", r->rows % 100, c);
            rm_stream_field_str(&r->s, v);
        }
        rm_stream_end_row(&r->s);
    }
    return rm_stream_flush(&r->s);
}

/* The segment entry for file in the session's state.json (a new reference), or NULL. */
static json_t *segment(struct rig *r, const char *file)
{
    char path[256];
    snprintf(path, sizeof path, "%s/%s/state.json", r->dir, ID);
    json_t *doc = json_load_file(path, 0, NULL);
    assert_non_null(doc);
    size_t i;
    json_t *e, *found = NULL;
    json_array_foreach(json_object_get(doc, "segments"), i, e)
    {
        if (!strcmp(rm_jget_str(e, "file"), file)) found = json_incref(e);
    }
    json_decref(doc);
    return found;
}

static long long segment_rows(struct rig *r, const char *file)
{
    json_t *e = segment(r, file);
    long long n = e ? (long long)json_integer_value(json_object_get(e, "rows")) : -1;
    json_decref(e);
    return n;
}

static int count(struct rig *r, const char *name)
{
    int n = 0;
    pthread_mutex_lock(&r->mu);
    for (int i = 0; i < r->nev; i++)
        n += !strcmp(r->ev[i], name);
    pthread_mutex_unlock(&r->mu);
    return n;
}

static void advance(struct rig *r, int64_t to)
{
    assert_true(fake_clock_advance(&r->clk, to));
}

static off_t size_of(struct rig *r, const char *file)
{
    char path[256];
    struct stat st;
    snprintf(path, sizeof path, "%s/%s/%s", r->dir, ID, file);
    return stat(path, &st) == 0 ? st.st_size : -1;
}

/* The session's state (rows and bytes of the active file) is written at each round, a round
 * every flush period exactly: not 1 ns before. */
static void rounds_every_flush_period(void **state)
{
    (void)state;
    struct rig *r = rig_new(0);
    assert_int_equal(write_rows(r, 3), 0);
    assert_true(segment_rows(r, "cpu.csv") <= 0); /* written at the open, before any row */
    advance(r, T0 + 2 * S - 1);
    assert_true(segment_rows(r, "cpu.csv") <= 0);
    advance(r, T0 + 2 * S);
    assert_int_equal(segment_rows(r, "cpu.csv"), 3);
    json_t *e = segment(r, "cpu.csv");
    assert_int_equal(json_integer_value(json_object_get(e, "bytes")), size_of(r, "cpu.csv"));
    assert_string_equal(rm_jget_str(e, "first_row_at"), "2026-11-18T11:06:40.000+00:00");
    json_decref(e);

    assert_int_equal(write_rows(r, 2), 0);
    advance(r, T0 + 4 * S - 1);
    assert_int_equal(segment_rows(r, "cpu.csv"), 3);
    advance(r, T0 + 4 * S);
    assert_int_equal(segment_rows(r, "cpu.csv"), 5);
    assert_int_equal(r->nev, 0);
    rig_free(r);
}

/* At the rollover size the stream seals itself after the first row that reaches it, and the
 * sink takes the sealed segment at once (no wait for the period): its entry, with the clock's
 * sealed_at, rows, bytes and the summary's aggregate. */
static void seals_at_the_rollover_size(void **state)
{
    (void)state;
    struct rig *r = rig_new(2000.0 / 1048576.0); /* 2000 bytes */
    advance(r, T0 + S / 2);
    off_t before = 0;
    int sealed_rows = 0;
    for (;;) {
        uint64_t w = fake_clock_waits(&r->clk);
        before = size_of(r, "cpu.csv");
        assert_int_equal(write_rows(r, 1), 0);
        if (size_of(r, "cpu-000001.csv") >= 0) {
            sealed_rows = r->rows;
            assert_true(fake_clock_settle_after(&r->clk, w)); /* woken by the seal */
            break;
        }
        assert_true(r->rows < 100);
    }
    off_t sealed = size_of(r, "cpu-000001.csv");
    assert_true(sealed >= 2000 && before < 2000);
    json_t *e = segment(r, "cpu-000001.csv");
    assert_non_null(e);
    assert_string_equal(rm_jget_str(e, "state"), "sealed");
    assert_int_equal(json_integer_value(json_object_get(e, "rows")), sealed_rows);
    assert_int_equal(json_integer_value(json_object_get(e, "bytes")), sealed);
    assert_string_equal(rm_jget_str(e, "sealed_at"), "2026-11-18T11:06:40.500+00:00");
    assert_true(json_is_object(json_object_get(e, "aggregate")));
    json_decref(e);
    /* The new active file has its header and no row yet. */
    assert_int_equal(size_of(r, "cpu.csv"), (off_t)r->s.header_len);
    assert_int_equal(write_rows(r, 1), 0);
    assert_true(size_of(r, "cpu.csv") > 0);
    rig_free(r);
}

/* A stream attached while the sink's thread already runs (as the recorder attaches the GPU
 * streams): its slot is taken whole, its file is synced through the descriptor handed over at
 * the attach, and its rows are in the next round's state.json. */
static void stream_attached_while_running(void **state)
{
    (void)state;
    struct rig *r = rig_new(0);
    advance(r, T0 + S / 2);
    struct rm_stream p;
    assert_int_equal(rm_stream_open(&p, r->sess.dir, RM_STREAM_PROC), 0);
    p.clock = &r->clk.clock;
    rm_sink_attach(r->k, &p);
    static const char *const cols[] = {"pid", "name"};
    assert_int_equal(rm_stream_header(&p, cols, 2), 0);
    for (int i = 0; i < 3; i++) {
        rm_stream_begin_row(&p, rm_clock_real(&r->clk.clock));
        rm_stream_field_str(&p, "42");
        rm_stream_field_str(&p, "python");
        rm_stream_end_row(&p);
    }
    assert_int_equal(rm_stream_flush(&p), 0);
    advance(r, T0 + 2 * S);
    assert_int_equal(segment_rows(r, "proc.csv"), 3);
    json_t *e = segment(r, "proc.csv");
    assert_int_equal(json_integer_value(json_object_get(e, "bytes")), size_of(r, "proc.csv"));
    json_decref(e);
    assert_int_equal(segment_rows(r, "cpu.csv"), 0); /* the other stream's slot is intact */
    rm_stream_close(&p);
    rig_free(r);
}

static json_t *nth_event(struct rig *r, const char *name, int nth)
{
    json_t *d = NULL;
    pthread_mutex_lock(&r->mu);
    for (int i = 0, seen = 0; i < r->nev && !d; i++)
        if (!strcmp(r->ev[i], name) && ++seen == nth) d = r->data[i];
    pthread_mutex_unlock(&r->mu);
    assert_non_null(d);
    return d;
}

/* A failed write (ENOSPC) raises sink_degraded at once; the outage lasts from it to the first
 * write that lands after it, and sink_recovered says so in down_s at the first round that
 * sees no new failure: the next one, or the one after when the stream failed again since the
 * last round (a failure and a recovery between two rounds still count). */
static void failing_write_degraded_then_recovered(void **state)
{
    (void)state;
    struct rig *r = rig_new(0);
    assert_int_equal(write_rows(r, 1), 0);
    int saved = dup(r->s.fd), full = open("/dev/full", O_WRONLY | O_CLOEXEC);
    assert_true(saved >= 0 && full >= 0);

    /* Episode 1: fails at T0 + 0.5 s, writes again at T0 + 1.75 s. */
    assert_true(dup2(full, r->s.fd) >= 0);
    advance(r, T0 + S / 2);
    uint64_t w = fake_clock_waits(&r->clk);
    assert_int_equal(write_rows(r, 2), -1);
    assert_true(fake_clock_settle_after(&r->clk, w)); /* the first failure woke the sink */
    assert_int_equal(count(r, "sink_degraded"), 1);
    json_t *d = nth_event(r, "sink_degraded", 1);
    assert_string_equal(rm_jget_str(d, "stream"), "cpu");
    assert_string_equal(rm_jget_str(d, "error"), strerror(ENOSPC));
    assert_int_equal(json_integer_value(json_object_get(d, "rows_dropped")), 2);
    advance(r, T0 + S + 3 * S / 4);
    assert_true(dup2(saved, r->s.fd) >= 0);
    assert_int_equal(write_rows(r, 1), 0);
    /* The next round is due a period after the failure's, at T0 + 2.5 s. */
    advance(r, T0 + 2 * S + S / 2 - 1);
    assert_int_equal(count(r, "sink_recovered"), 0);
    advance(r, T0 + 2 * S + S / 2);
    assert_int_equal(count(r, "sink_recovered"), 1);
    d = nth_event(r, "sink_recovered", 1);
    assert_true(json_real_value(json_object_get(d, "down_s")) == 1.25);
    assert_int_equal(json_integer_value(json_object_get(d, "rows_dropped")), 2);

    /* Episode 2: fails at T0 + 3 s and again at T0 + 3.5 s, then lands at T0 + 3.5 s. */
    assert_true(dup2(full, r->s.fd) >= 0);
    advance(r, T0 + 3 * S);
    w = fake_clock_waits(&r->clk);
    assert_int_equal(write_rows(r, 1), -1);
    assert_true(fake_clock_settle_after(&r->clk, w));
    assert_int_equal(count(r, "sink_degraded"), 2);
    advance(r, T0 + 3 * S + S / 2);
    assert_int_equal(write_rows(r, 3), -1); /* still failing: no wake, no event */
    assert_true(dup2(saved, r->s.fd) >= 0);
    assert_int_equal(write_rows(r, 1), 0);
    advance(r, T0 + 5 * S); /* its round: a failure since the last one, still degraded */
    assert_int_equal(count(r, "sink_recovered"), 1);
    advance(r, T0 + 7 * S - 1);
    assert_int_equal(count(r, "sink_recovered"), 1);
    advance(r, T0 + 7 * S);
    assert_int_equal(count(r, "sink_recovered"), 2);
    d = nth_event(r, "sink_recovered", 2);
    assert_true(json_real_value(json_object_get(d, "down_s")) == 0.5);
    assert_int_equal(json_integer_value(json_object_get(d, "rows_dropped")), 4);
    assert_int_equal(count(r, "sink_degraded"), 2);
    close(saved);
    close(full);
    rig_free(r);
}

int main(void)
{
    json_object_seed(1);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(rounds_every_flush_period),
        cmocka_unit_test(seals_at_the_rollover_size),
        cmocka_unit_test(stream_attached_while_running),
        cmocka_unit_test(failing_write_degraded_then_recovered),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
