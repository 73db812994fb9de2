/* A test rig for the nvidia-smi collectors (monitor/collector.c and what runs under it): one
 * collector on its own thread, on a fake clock (fake_clock.h), its child a real shell script
 * fed through a FIFO the test writes to ($1 the FIFO, $2 a marker file for "the first
 * start"), its port recording events and health. Header-only: each test binary is one file.
 */
#ifndef RUNMON_TESTS_COLLECTOR_RIG_H
#define RUNMON_TESTS_COLLECTOR_RIG_H

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
#include "monitor/ticker.h"

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
    /* With rig_tick: the collectors' tick, a slot every tick_ns after T0 (slots: how many ran),
     * and the collector's read_due answering read_now. */
    struct rm_ticker tick;
    int64_t tick_ns, next_slot;
    atomic_int slots, read_now;
    /* The line handler under test (NULL: the rig's own rule), and its flush. */
    enum rm_line_kind (*inner)(void *ctx, char *line, size_t len, int64_t ts_ns);
    void (*inner_flush)(void *ctx);
    void *inner_ctx;
};

static inline void rig_on_event(void *owner, const char *name, json_t *data)
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

static inline void rig_on_health(void *owner, int collector, enum rm_health h,
                                 const char *last_error, int count_failure)
{
    struct rig *r = owner;
    (void)collector, (void)last_error;
    pthread_mutex_lock(&r->mu);
    r->health = h;
    r->failures += count_failure;
    pthread_mutex_unlock(&r->mu);
}

/* The handler the rig's collector runs: inner when set, else a line beginning "row" is data;
 * each data line is counted, with its receipt time. */
static inline enum rm_line_kind rig_on_line(void *ctx, char *line, size_t len, int64_t ts_ns)
{
    struct rig *r = ctx;
    enum rm_line_kind k = r->inner                  ? r->inner(r->inner_ctx, line, len, ts_ns)
                          : strncmp(line, "row", 3) ? RM_LINE_NONDATA
                                                    : RM_LINE_DATA;
    if (k != RM_LINE_DATA) return k;
    uint64_t w = fake_clock_waits(&r->clk);
    pthread_mutex_lock(&r->mu);
    if (r->lines < 16) r->line_ts[r->lines] = ts_ns;
    r->lines++;
    r->line_waits = w;
    pthread_cond_broadcast(&r->cv);
    pthread_mutex_unlock(&r->mu);
    return RM_LINE_DATA;
}

static inline void rig_on_flush(void *ctx)
{
    struct rig *r = ctx;
    if (r->inner_flush) r->inner_flush(r->inner_ctx);
}

static inline void rig_poke(void *arg)
{
    rm_wakeup_signal(arg);
}

static inline void *rig_run(void *arg)
{
    struct rig *r = arg;
    rm_collectors_run(&r->col, 1, &r->wake, r->tick_ns ? &r->tick : NULL);
    return NULL;
}

static inline int64_t rig_slot_due(void *ctx)
{
    return ((struct rig *)ctx)->next_slot;
}

static inline void rig_slot_run(void *ctx, int64_t now)
{
    struct rig *r = ctx;
    atomic_fetch_add(&r->slots, 1);
    while (r->next_slot <= now)
        r->next_slot += r->tick_ns;
}

static inline int rig_read_due(void *ctx)
{
    return atomic_load(&((struct rig *)ctx)->read_now);
}

/* Gives the rig's collector a tick (slots every tick_ns from T0) and a read_due that answers
 * r->read_now (1 to begin with). Before rig_start. */
static inline void rig_tick(struct rig *r, int64_t tick_ns)
{
    r->tick_ns = tick_ns;
    r->next_slot = T0 + tick_ns;
    r->tick = (struct rm_ticker){.due = rig_slot_due, .run = rig_slot_run, .ctx = r};
    atomic_store(&r->read_now, 1);
    r->col.read_due = rig_read_due;
}

/* A rig whose child runs the shell script `script` with $1 the FIFO and $2 a marker file. */
static inline struct rig *rig_new(const char *script)
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
                               .event = rig_on_event,
                               .set_health = rig_on_health,
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
    r->col.on_line = rig_on_line;
    r->col.on_flush = rig_on_flush;
    r->col.ctx = r;
    const char *argv[] = {"/bin/sh", "-c", script, "sh", r->fifo, r->mark, NULL};
    memcpy(r->col.argv, argv, sizeof argv);
    assert_int_equal(rm_wakeup_open(&r->wake), 0);
    r->clk.poke = rig_poke;
    r->clk.poke_arg = &r->wake;
    return r;
}

/* Starts the collector's thread (set inner, inner_flush and inner_ctx before). */
static inline void rig_start(struct rig *r)
{
    assert_int_equal(pthread_create(&r->th, NULL, rig_run, r), 0);
}

static inline void rig_free(struct rig *r)
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
static inline int count(struct rig *r, const char *name)
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
static inline json_t *await_event(struct rig *r, const char *name, int nth)
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
static inline void await_line(struct rig *r, int nth)
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

static inline void say(struct rig *r, const char *line)
{
    assert_int_equal(write(r->fifo_fd, line, strlen(line)), (ssize_t)strlen(line));
}

static inline void advance(struct rig *r, int64_t to)
{
    assert_true(fake_clock_advance(&r->clk, to));
}

static inline double num(const json_t *d, const char *k)
{
    const json_t *v = json_object_get(d, k);
    assert_true(json_is_number(v));
    return json_number_value(v);
}

static inline const char *str(const json_t *d, const char *k)
{
    const char *s = json_string_value(json_object_get(d, k));
    assert_non_null(s);
    return s;
}

#endif
