/* Tests of monitor/collector.c, the supervisor of the nvidia-smi children, on a fake clock
 * (tests/unit/fake_clock.h): real children (sh, fed through a FIFO the test writes to), real
 * pipes, a real epoll loop on its own thread; only "now" and the end of the loop's waits are
 * the test's. So a silent child is declared stale exactly at its deadline, restarts back off
 * 1, 2, 4 ... 30 s to the nanosecond, and down_s is exact, without sleeping through any of
 * it. */
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

#include "base/rm_time.h"
#include "fake_clock.h"
#include "monitor/collector.h"
#include "monitor/port.h"

#define S RM_NS_PER_SEC
#define T0 (1000 * S)                     /* the fake monotonic start */
#define R0 (1795000000LL * RM_NS_PER_SEC) /* its realtime (2026-11-18) */
#define STALE (5 * S)

struct event {
    char name[40];
    json_t *data;
    uint64_t waits; /* the clock's wait count when it was recorded */
};

/* Everything one test drives: the clock, the port, one collector on its thread. */
struct rig {
    struct fake_clock clk;
    pthread_mutex_t lock; /* the port's */
    struct rm_session sess;
    struct rm_latest latest;
    atomic_int stop, wpid;
    struct rm_port port;
    struct rm_collector col;
    rm_wakeup wake;
    pthread_t th;
    char dir[64], fifo[96], mark[96];
    int fifo_fd;
    /* What the collector reported, guarded by mu. */
    pthread_mutex_t mu;
    pthread_cond_t cv;
    struct event ev[64];
    int nev;
    int lines;
    int64_t line_ts[16];
    uint64_t line_waits;
    enum rm_health health;
    int failures;
};

static void on_event(void *owner, const char *name, json_t *data)
{
    struct rig *r = owner;
    uint64_t w = fake_clock_waits(&r->clk);
    pthread_mutex_lock(&r->mu);
    if (r->nev < 64) {
        snprintf(r->ev[r->nev].name, sizeof r->ev[r->nev].name, "%s", name);
        r->ev[r->nev].data = data;
        r->ev[r->nev++].waits = w;
        data = NULL;
    }
    pthread_cond_broadcast(&r->cv);
    pthread_mutex_unlock(&r->mu);
    json_decref(data);
}

static void on_health(void *owner, int collector, enum rm_health h, const char *last_error,
                      int count_failure)
{
    struct rig *r = owner;
    (void)collector, (void)last_error;
    pthread_mutex_lock(&r->mu);
    r->health = h;
    r->failures += count_failure;
    pthread_mutex_unlock(&r->mu);
}

/* A line beginning "row" is data; anything else is not. */
static enum rm_line_kind on_line(void *ctx, char *line, size_t len, int64_t ts_ns)
{
    struct rig *r = ctx;
    (void)len;
    if (strncmp(line, "row", 3)) return RM_LINE_NONDATA;
    uint64_t w = fake_clock_waits(&r->clk);
    pthread_mutex_lock(&r->mu);
    if (r->lines < 16) r->line_ts[r->lines] = ts_ns;
    r->lines++;
    r->line_waits = w;
    pthread_cond_broadcast(&r->cv);
    pthread_mutex_unlock(&r->mu);
    return RM_LINE_DATA;
}

static void poke(void *arg)
{
    rm_wakeup_signal(arg);
}

static void *run(void *arg)
{
    struct rig *r = arg;
    rm_collectors_run(&r->col, 1, &r->wake);
    return NULL;
}

/* A rig whose child runs the shell script `script` with $1 the FIFO and $2 a marker file. */
static struct rig *rig_new(const char *script)
{
    struct rig *r = calloc(1, sizeof *r);
    assert_non_null(r);
    fake_clock_init(&r->clk, T0, R0);
    pthread_mutex_init(&r->lock, NULL);
    pthread_mutex_init(&r->mu, NULL);
    pthread_cond_init(&r->cv, NULL);
    strcpy(r->dir, "/tmp/runmon-coll-XXXXXX");
    assert_non_null(mkdtemp(r->dir));
    snprintf(r->fifo, sizeof r->fifo, "%s/fifo", r->dir);
    snprintf(r->mark, sizeof r->mark, "%s/mark", r->dir);
    assert_int_equal(mkfifo(r->fifo, 0600), 0);
    /* Read-write: never blocks, and rows written while no child reads wait in the pipe. */
    r->fifo_fd = open(r->fifo, O_RDWR | O_CLOEXEC);
    assert_true(r->fifo_fd >= 0);
    r->port = (struct rm_port){.owner = r,
                               .event = on_event,
                               .set_health = on_health,
                               .lock = &r->lock,
                               .sess = &r->sess,
                               .latest = &r->latest,
                               .stop = &r->stop,
                               .workload_pid = &r->wpid,
                               .interval_s = 1,
                               .quiet = 1,
                               .clock = &r->clk.clock};
    rm_child_init(&r->col.child);
    r->col.epfd = r->col.watched[0] = r->col.watched[1] = r->col.watched[2] = -1;
    r->col.name = "gpu";
    r->col.id = RM_STREAM_GPU;
    r->col.stale_ns = STALE;
    r->col.port = &r->port;
    r->col.on_line = on_line;
    r->col.ctx = r;
    const char *argv[] = {"/bin/sh", "-c", script, "sh", r->fifo, r->mark, NULL};
    memcpy(r->col.argv, argv, sizeof argv);
    assert_int_equal(rm_wakeup_open(&r->wake), 0);
    r->clk.poke = poke;
    r->clk.poke_arg = &r->wake;
    return r;
}

static void rig_start(struct rig *r)
{
    assert_int_equal(pthread_create(&r->th, NULL, run, r), 0);
}

static void rig_free(struct rig *r)
{
    atomic_store(&r->stop, 1);
    rm_wakeup_signal(&r->wake);
    pthread_join(r->th, NULL);
    rm_wakeup_close(&r->wake);
    close(r->fifo_fd);
    for (int i = 0; i < r->nev; i++)
        json_decref(r->ev[i].data);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", r->dir);
    assert_int_equal(system(cmd), 0);
    fake_clock_fini(&r->clk);
    free(r);
}

/* The number of events named name so far. */
static int count(struct rig *r, const char *name)
{
    int n = 0;
    pthread_mutex_lock(&r->mu);
    for (int i = 0; i < r->nev; i++)
        n += !strcmp(r->ev[i].name, name);
    pthread_mutex_unlock(&r->mu);
    return n;
}

/* Waits for the nth (1-based) event named name, then until the loop waits again after it;
 * returns its data (borrowed). */
static json_t *await_event(struct rig *r, const char *name, int nth)
{
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += FAKE_CLOCK_PATIENCE_S;
    const struct event *found = NULL;
    pthread_mutex_lock(&r->mu);
    for (;;) {
        int seen = 0;
        for (int i = 0; i < r->nev && !found; i++)
            if (!strcmp(r->ev[i].name, name) && ++seen == nth) found = &r->ev[i];
        if (found || pthread_cond_timedwait(&r->cv, &r->mu, &until) == ETIMEDOUT) break;
    }
    pthread_mutex_unlock(&r->mu);
    if (!found) fail_msg("no %s event #%d", name, nth);
    assert_true(fake_clock_settle_after(&r->clk, found->waits));
    return found->data;
}

/* Waits for the nth data line, then until the loop waits again after it. */
static void await_line(struct rig *r, int nth)
{
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += FAKE_CLOCK_PATIENCE_S;
    pthread_mutex_lock(&r->mu);
    while (r->lines < nth)
        if (pthread_cond_timedwait(&r->cv, &r->mu, &until) == ETIMEDOUT) break;
    int got = r->lines;
    uint64_t w = r->line_waits;
    pthread_mutex_unlock(&r->mu);
    if (got < nth) fail_msg("line %d never came", nth);
    assert_true(fake_clock_settle_after(&r->clk, w));
}

static void say(struct rig *r, const char *line)
{
    assert_int_equal(write(r->fifo_fd, line, strlen(line)), (ssize_t)strlen(line));
}

static void advance(struct rig *r, int64_t to)
{
    assert_true(fake_clock_advance(&r->clk, to));
}

static double num(const json_t *d, const char *k)
{
    const json_t *v = json_object_get(d, k);
    assert_true(json_is_number(v));
    return json_number_value(v);
}

static const char *str(const json_t *d, const char *k)
{
    const char *s = json_string_value(json_object_get(d, k));
    assert_non_null(s);
    return s;
}

/* Prints one row when it starts the first time, then relays the FIFO's lines. */
#define FIRST_ROW_THEN_FIFO "[ -e \"$2\" ] || { : >\"$2\"; echo row; }; exec cat \"$1\""

/* A child that goes silent is stale exactly stale_ns after its last row (not 1 ns sooner),
 * restarts 1 s later (not 1 ns sooner), and its first row after that is collector_recovered
 * with the whole outage as down_s; a second stale failure within the minute backs off 2 s. */
static void stale_at_deadline_restart_recovered(void **state)
{
    (void)state;
    struct rig *r = rig_new(FIRST_ROW_THEN_FIFO);
    rig_start(r);
    await_line(r, 1);
    assert_int_equal(r->line_ts[0], R0); /* the receipt time is the clock's */

    advance(r, T0 + STALE - 1);
    assert_int_equal(count(r, "collector_degraded"), 0);
    assert_int_equal(r->col.running, 1);
    advance(r, T0 + STALE);
    json_t *d = await_event(r, "collector_degraded", 1);
    assert_string_equal(str(d, "collector"), "gpu");
    assert_true(!strncmp(str(d, "reason"), "no valid row for 5.0 s", 22));
    assert_int_equal(num(d, "consecutive_failures"), 1);
    assert_true(num(d, "retry_in_s") == 1.0);
    assert_int_equal(r->health, RM_HEALTH_DEGRADED);
    assert_int_equal(r->failures, 1);
    assert_int_equal(r->col.running, 0);

    advance(r, T0 + STALE + S - 1);
    assert_int_equal(r->col.running, 0);
    advance(r, T0 + STALE + S); /* restarted: this child waits on the FIFO */
    assert_int_equal(r->col.running, 1);
    advance(r, T0 + 8 * S + S / 4);
    assert_int_equal(count(r, "collector_recovered"), 0);
    say(r, "row 2\n");
    d = await_event(r, "collector_recovered", 1);
    assert_true(num(d, "down_s") == 3.25); /* from the failure at T0+5 s to this row */
    assert_true(!strncmp(str(d, "last_error"), "no valid row for 5.0 s", 22));
    assert_int_equal(r->health, RM_HEALTH_HEALTHY);
    say(r, "row 3\n");
    await_line(r, 3);
    assert_int_equal(count(r, "collector_recovered"), 1); /* once per outage */
    assert_int_equal(r->line_ts[2], R0 + 8 * S + S / 4);

    /* Silent again from T0+8.25 s: stale at T0+13.25 s; within the minute, so 2 s. */
    advance(r, T0 + 13 * S + S / 4 - 1);
    assert_int_equal(count(r, "collector_degraded"), 1);
    advance(r, T0 + 13 * S + S / 4);
    d = await_event(r, "collector_degraded", 2);
    assert_int_equal(num(d, "consecutive_failures"), 2);
    assert_true(num(d, "retry_in_s") == 2.0);
    rig_free(r);
}

/* A child that fails at once: restarts 1, 2, 4, 8, 16 s apart, then every 30 s, each exactly
 * then; each failure quotes the child's first stderr line and its exit status. */
static void backoff_doubles_to_thirty_seconds(void **state)
{
    (void)state;
    struct rig *r = rig_new("echo 'NVIDIA-SMI has failed' >&2; exit 9");
    rig_start(r);
    static const int delay_s[] = {1, 2, 4, 8, 16, 30, 30};
    int64_t t = T0;
    for (int k = 0; k < 7; k++) {
        json_t *d = await_event(r, "collector_degraded", k + 1);
        assert_int_equal(num(d, "consecutive_failures"), k + 1);
        assert_true(num(d, "retry_in_s") == delay_s[k]);
        assert_string_equal(str(d, "reason"),
                            "nvidia-smi exited: NVIDIA-SMI has failed (exited with status 9)");
        int64_t next = t + delay_s[k] * S;
        advance(r, next - 1);
        assert_int_equal(r->col.running, 0);
        assert_int_equal(count(r, "collector_degraded"), k + 1);
        advance(r, next);
        t = next;
    }
    await_event(r, "collector_degraded", 8);
    assert_int_equal(r->failures, 8);
    assert_int_equal(count(r, "collector_recovered"), 0);
    rig_free(r);
}

/* A healthy minute (of rows) resets the backoff: the next failure waits 1 s again. */
static void backoff_resets_after_a_healthy_minute(void **state)
{
    (void)state;
    /* Fails the first time; then relays the FIFO until it reads "quit". */
    struct rig *r = rig_new("[ -e \"$2\" ] || { : >\"$2\"; exit 4; }; "
                            "while read -r l; do [ \"$l\" = quit ] && exit 5; echo \"$l\"; "
                            "done <\"$1\"");
    rig_start(r);
    json_t *d = await_event(r, "collector_degraded", 1);
    assert_true(num(d, "retry_in_s") == 1.0);
    advance(r, T0 + S);
    say(r, "row\n");
    await_event(r, "collector_recovered", 1);
    /* A row every 4 s (under the 5 s deadline) until a minute after the first good one. */
    int n = 1;
    for (int64_t t = T0 + 5 * S; t <= T0 + 61 * S; t += 4 * S) {
        advance(r, t);
        say(r, "row\n");
        await_line(r, ++n);
    }
    assert_int_equal(count(r, "collector_degraded"), 1);
    say(r, "quit\n");
    d = await_event(r, "collector_degraded", 2);
    assert_int_equal(num(d, "consecutive_failures"), 1);
    assert_true(num(d, "retry_in_s") == 1.0);
    rig_free(r);
}

/* No nvidia-smi at all: collector_unavailable once, never a restart. */
static void missing_program_is_unavailable(void **state)
{
    (void)state;
    struct rig *r = rig_new("");
    r->col.argv[0] = "/nonexistent/nvidia-smi";
    rig_start(r);
    json_t *d = await_event(r, "collector_unavailable", 1);
    assert_string_equal(str(d, "collector"), "gpu");
    assert_int_equal(r->health, RM_HEALTH_UNAVAILABLE);
    advance(r, T0 + 3600 * S);
    assert_int_equal(count(r, "collector_unavailable"), 1);
    assert_int_equal(count(r, "collector_degraded"), 0);
    assert_int_equal(r->failures, 0);
    rig_free(r);
}

int main(void)
{
    json_object_seed(1);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(stale_at_deadline_restart_recovered),
        cmocka_unit_test(backoff_doubles_to_thirty_seconds),
        cmocka_unit_test(backoff_resets_after_a_healthy_minute),
        cmocka_unit_test(missing_program_is_unavailable),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
