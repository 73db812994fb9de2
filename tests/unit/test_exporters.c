/* The exporter list (record/exporters.c) and its snapshot (record/snapshot.c), with a test
 * exporter: due times honoured, fds polled, one snapshot per wakeup that is consistent while
 * a worker thread updates the values, events fanned out until close, close called once with
 * the final snapshot; and the Prometheus textfile through the real table. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "base/rm_time.h"
#include "record/exporters.h"

#define MS 1000000LL
#define T0 (1000 * 1000 * MS) /* a CLOCK_MONOTONIC time of the tests' own */

/* ---- a session to export: a real port over a session and latest values ---------------- */

static struct rm_session sess;
static struct rm_latest latest;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_int stop, wpid;
static int port_events;

static void port_event(void *owner, const char *name, json_t *data)
{
    (void)owner;
    (void)name;
    port_events++;
    json_decref(data);
}

static void port_set_health(void *owner, int c, enum rm_health h, const char *e, int count)
{
    (void)owner;
    (void)c;
    (void)h;
    (void)e;
    (void)count;
}

static struct rm_port port = {.event = port_event,
                              .set_health = port_set_health,
                              .lock = &lock,
                              .sess = &sess,
                              .latest = &latest,
                              .stop = &stop,
                              .workload_pid = &wpid,
                              .interval_s = 1.0,
                              .quiet = 1};

static struct rm_record_opts opts;
static char dir[64];

static int setup(void **state)
{
    (void)state;
    memset(&sess, 0, sizeof sess);
    memset(&latest, 0, sizeof latest);
    memset(&opts, 0, sizeof opts);
    opts.quiet = 1;
    opts.flush_s = 2;
    snprintf(dir, sizeof dir, "/tmp/runmon-test-exporters.XXXXXX");
    assert_non_null(mkdtemp(dir));
    snprintf(sess.id, sizeof sess.id, "sess-1");
    snprintf(sess.dir, sizeof sess.dir, "%s", dir);
    snprintf(sess.host, sizeof sess.host, "node1");
    sess.status = "running";
    sess.warn_pct = 90;
    sess.crit_pct = 98;
    for (int c = 0; c < RM_STREAM_COUNT; c++)
        sess.collectors[c].name = rm_stream_defs[c].name;
    port_events = 0;
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    assert_int_equal(system(cmd), 0);
    return 0;
}

static struct rm_exporter_env env_at(int64_t now)
{
    return (struct rm_exporter_env){.opts = &opts, .port = &port, .dir = dir, .now_mono_ns = now};
}

/* ---- the test exporter ------------------------------------------------------------------ */

struct tex {
    int64_t period_ns, next;
    int efd; /* -1: no fd */
    int polls, readable_polls, closes, events, final_seen;
    const struct rm_snapshot *last_snap;
    double seen_util; /* GPU 0's utilization in the last snapshot */
    char closed_status[32];
};

static int tex_want_fd;
static int tex_open(void *self, const struct rm_exporter_env *env, char *err, size_t errsz)
{
    struct tex *t = self;
    (void)err;
    (void)errsz;
    t->period_ns = 100 * MS;
    t->next = env->now_mono_ns + t->period_ns;
    t->efd = tex_want_fd ? eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK) : -1;
    return 0;
}

static int64_t tex_due(const void *self)
{
    const struct tex *t = self;
    return t->efd >= 0 ? RM_EXPORTER_NEVER : t->next;
}

static int tex_fd(const void *self)
{
    return ((const struct tex *)self)->efd;
}

static struct tex *last_tex[4];
static int ntex;

static void tex_poll(void *self, struct rm_tick *tk)
{
    struct tex *t = self;
    t->polls++;
    if (tk->readable) {
        uint64_t v;
        assert_int_equal(read(t->efd, &v, sizeof v), (ssize_t)sizeof v);
        t->readable_polls++;
    }
    if (tk->now_mono_ns >= t->next) t->next += t->period_ns;
    t->last_snap = rm_tick_snapshot(tk);
    t->seen_util = t->last_snap->latest.gpu[0].v[RM_GM_UTIL];
}

static void tex_event(void *self, const char *name, const json_t *data)
{
    (void)name;
    (void)data;
    ((struct tex *)self)->events++;
}

static void tex_close(void *self, const struct rm_snapshot *snap)
{
    struct tex *t = self;
    t->closes++;
    t->final_seen = snap->final;
    snprintf(t->closed_status, sizeof t->closed_status, "%s", snap->status);
    if (t->efd >= 0) close(t->efd);
    /* The list frees self: keep what the test checks afterwards. */
    static struct tex after[4];
    for (int i = 0; i < ntex; i++)
        if (last_tex[i] == t) {
            after[i] = *t;
            last_tex[i] = &after[i];
        }
}

static int tex_open_track(void *self, const struct rm_exporter_env *env, char *err, size_t n)
{
    last_tex[ntex++] = self;
    return tex_open(self, env, err, n);
}

static const struct rm_exporter_ops tex_ops = {.name = "test",
                                               .size = sizeof(struct tex),
                                               .open = tex_open_track,
                                               .due = tex_due,
                                               .fd = tex_fd,
                                               .poll = tex_poll,
                                               .event = tex_event,
                                               .close = tex_close};

static int never(const struct rm_record_opts *o)
{
    (void)o;
    return 0;
}
static int opened_unwanted;
static int unwanted_open(void *self, const struct rm_exporter_env *env, char *err, size_t n)
{
    (void)self;
    (void)env;
    (void)err;
    (void)n;
    opened_unwanted++;
    return 0;
}
static const struct rm_exporter_ops unwanted_ops = {
    .name = "unwanted", .size = 8, .wanted = never, .open = unwanted_open};

static int failing_open(void *self, const struct rm_exporter_env *env, char *err, size_t n)
{
    (void)self;
    (void)env;
    snprintf(err, n, "--failing: cannot");
    return -1;
}
static int failing_closes;
static void failing_close(void *self, const struct rm_snapshot *snap)
{
    (void)self;
    (void)snap;
    failing_closes++;
}
static const struct rm_exporter_ops failing_ops = {
    .name = "failing", .size = 8, .open = failing_open, .close = failing_close};

static void open_list(struct rm_exporters *l, const struct rm_exporter_ops *const *ops, int n,
                      int64_t now)
{
    char err[256] = "";
    struct rm_exporter_env env = env_at(now);
    ntex = 0;
    memset(l, 0, sizeof *l);
    assert_int_equal(rm_exporters_open_ops(l, ops, n, &env, NULL, err, sizeof err), 0);
}

/* ---- the tests ---------------------------------------------------------------------------- */

/* An exporter is polled when its due time comes and not before; the main loop's wait ends by
 * then; an exporter that is never due is polled for its fd only. */
static void test_due_time_honoured(void **state)
{
    (void)state;
    struct rm_exporters l;
    const struct rm_exporter_ops *ops[] = {&tex_ops};
    tex_want_fd = 0;
    open_list(&l, ops, 1, T0);
    struct tex *t = last_tex[0];
    assert_int_equal(rm_exporters_count(&l), 1);
    assert_int_equal(rm_exporters_timeout_ms(&l, T0, 1000), 101); /* never just before it */
    assert_int_equal(rm_exporters_timeout_ms(&l, T0 + 40 * MS, 1000), 61);
    assert_int_equal(rm_exporters_timeout_ms(&l, T0 + 40 * MS, 20), 20); /* the cap */
    struct pollfd p[RM_EXPORTERS_MAX];
    assert_int_equal(rm_exporters_pollfds(&l, p, RM_EXPORTERS_MAX), 0);
    rm_exporters_poll(&l, T0 + 40 * MS, p, 0);
    rm_exporters_poll(&l, T0 + 100 * MS - 1, p, 0);
    assert_int_equal(t->polls, 0);
    assert_int_equal(rm_exporters_timeout_ms(&l, T0 + 100 * MS, 1000), 0);
    rm_exporters_poll(&l, T0 + 100 * MS, p, 0);
    assert_int_equal(t->polls, 1);
    rm_exporters_poll(&l, T0 + 150 * MS, p, 0); /* the next is due at 200 ms */
    assert_int_equal(t->polls, 1);
    rm_exporters_poll(&l, T0 + 200 * MS, p, 0);
    assert_int_equal(t->polls, 2);
    rm_exporters_close(&l, T0 + 300 * MS);
    rm_exporters_fini(&l);
    assert_int_equal(last_tex[0]->closes, 1);
}

static void test_fd_polled(void **state)
{
    (void)state;
    struct rm_exporters l;
    const struct rm_exporter_ops *ops[] = {&tex_ops};
    tex_want_fd = 1;
    open_list(&l, ops, 1, T0);
    struct tex *t = last_tex[0];
    assert_int_equal(rm_exporters_timeout_ms(&l, T0, 1000), 1000); /* never due */
    struct pollfd p[RM_EXPORTERS_MAX];
    assert_int_equal(rm_exporters_pollfds(&l, p, RM_EXPORTERS_MAX), 1);
    assert_int_equal(p[0].fd, t->efd);
    assert_int_equal(p[0].events, POLLIN);
    assert_int_equal(poll(p, 1, 0), 0);
    rm_exporters_poll(&l, T0 + 5000 * MS, p, 1);
    assert_int_equal(t->polls, 0); /* not readable, never due */
    uint64_t one = 1;
    assert_int_equal(write(t->efd, &one, sizeof one), (ssize_t)sizeof one);
    assert_int_equal(rm_exporters_pollfds(&l, p, RM_EXPORTERS_MAX), 1);
    assert_int_equal(poll(p, 1, 0), 1);
    rm_exporters_poll(&l, T0 + 5000 * MS, p, 1);
    assert_int_equal(t->polls, 1);
    assert_int_equal(t->readable_polls, 1);
    rm_exporters_close(&l, T0);
    rm_exporters_fini(&l);
    tex_want_fd = 0;
}

/* A worker updating the values while the main thread snapshots them. Every update keeps one
 * invariant across the fields the snapshot copies: GPU utilizations, the CPU ratio, the
 * collectors' health and the status all say the same k. */
static atomic_int writer_stop;
static const char *const statuses[] = {"even", "odd"};

static void *writer(void *arg)
{
    (void)arg;
    for (long k = 1; !atomic_load(&writer_stop); k++) {
        pthread_mutex_lock(&lock);
        for (int i = 0; i < RM_MAX_GPUS; i++) {
            latest.gpu[i].valid = 1;
            for (int m = 0; m < RM_GM_COUNT; m++)
                latest.gpu[i].v[m] = (double)k;
        }
        latest.cpu_busy_ratio = (double)k;
        latest.proc_rss_bytes = (double)k;
        for (int c = 0; c < RM_STREAM_COUNT; c++)
            sess.collectors[c].health = k % 2 ? RM_HEALTH_DEGRADED : RM_HEALTH_HEALTHY;
        sess.status = statuses[k % 2];
        pthread_mutex_unlock(&lock);
    }
    return NULL;
}

static void test_snapshot_consistent_under_updates(void **state)
{
    (void)state;
    struct rm_exporters l;
    const struct rm_exporter_ops *ops[] = {&tex_ops, &tex_ops};
    open_list(&l, ops, 2, T0);
    atomic_store(&writer_stop, 0);
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, writer, NULL), 0);
    struct pollfd p[1];
    double prev = 0;
    int moved = 0;
    for (int i = 1; i <= 3000; i++) {
        int64_t now = T0 + (int64_t)i * 100 * MS; /* both due at every wakeup */
        rm_exporters_poll(&l, now, p, 0);
        struct tex *a = last_tex[0], *b = last_tex[1];
        assert_int_equal(a->polls, i);
        assert_int_equal(b->polls, i);
        /* One snapshot for the wakeup, shared: the same copy, the same k. */
        assert_ptr_equal(a->last_snap, b->last_snap);
        assert_true(a->seen_util == b->seen_util);
        const struct rm_snapshot *s = a->last_snap;
        double k = s->latest.gpu[0].v[RM_GM_UTIL];
        for (int g = 0; g < RM_MAX_GPUS; g++)
            for (int m = 0; m < RM_GM_COUNT; m++)
                if (s->latest.gpu[g].v[m] != k) fail_msg("GPU %d metric %d torn", g, m);
        assert_true(s->latest.cpu_busy_ratio == k);
        assert_true(s->latest.proc_rss_bytes == k);
        long ki = (long)k;
        if (ki > 0) {
            for (int c = 0; c < RM_STREAM_COUNT; c++)
                assert_int_equal(s->health[c], ki % 2 ? RM_HEALTH_DEGRADED : RM_HEALTH_HEALTHY);
            assert_string_equal(s->status, statuses[ki % 2]);
        }
        assert_int_equal(s->final, 0);
        assert_true(s->mono_ns == now);
        assert_true(k >= prev);
        moved += k > prev;
        prev = k;
        if (i % 100 == 0) usleep(100); /* let the writer run on one core too */
    }
    atomic_store(&writer_stop, 1);
    pthread_join(th, NULL);
    assert_true(moved > 1); /* the values did change between wakeups */
    rm_exporters_close(&l, T0);
    rm_exporters_fini(&l);
}

/* The session's facts and the run log's phases are in the snapshot. */
static void test_snapshot_facts_and_phases(void **state)
{
    (void)state;
    char runlog[128];
    snprintf(runlog, sizeof runlog, "%s/runlog.jsonl", dir);
    FILE *f = fopen(runlog, "w");
    assert_non_null(f);
    fprintf(f,
            "{\"type\":\"phase_enter\",\"pid\":%d,\"path\":\"train\"}\n"
            "{\"type\":\"phase_enter\",\"pid\":%d,\"path\":\"train/eval\"}\n"
            "{\"type\":\"phase_exit\",\"pid\":%d,\"path\":\"train/eval\",\"seconds\":1.5}\n",
            (int)getpid(), (int)getpid(), (int)getpid());
    fclose(f);
    sess.ngpus = 2;
    sess.gpus[0].index = 0;
    snprintf(sess.gpus[0].uuid, sizeof sess.gpus[0].uuid, "GPU-a");
    sess.gpus[1].index = 3;
    snprintf(sess.gpus[1].uuid, sizeof sess.gpus[1].uuid, "GPU-d");
    snprintf(sess.driver_version, sizeof sess.driver_version, "590.48.01");
    static char cmd0[] = "true";
    static char *const argv[] = {cmd0, NULL};
    opts.command = argv;

    struct rm_exporters l;
    const struct rm_exporter_ops *ops[] = {&tex_ops};
    char err[256];
    struct rm_exporter_env env = env_at(T0);
    ntex = 0;
    memset(&l, 0, sizeof l);
    assert_int_equal(rm_exporters_open_ops(&l, ops, 1, &env, runlog, err, sizeof err), 0);
    rm_exporters_poll(&l, T0 + 100 * MS, NULL, 0);
    const struct rm_snapshot *s = last_tex[0]->last_snap;
    assert_string_equal(s->host, "node1");
    assert_string_equal(s->session, "sess-1");
    assert_string_equal(s->dir, dir);
    assert_string_equal(s->driver_version, "590.48.01");
    assert_string_equal(s->status, "running");
    assert_int_equal(s->have_command, 1);
    assert_int_equal(s->ngpus, 2);
    assert_string_equal(s->gpu_uuid[0], "GPU-a");
    assert_null(s->gpu_uuid[1]);
    assert_string_equal(s->gpu_uuid[3], "GPU-d");
    assert_true(s->interval_s == 1.0);
    assert_true(s->stale_ns == 5000 * MS); /* max(3 intervals, 5 s) */
    assert_true(s->warn_pct == 90 && s->crit_pct == 98);
    assert_string_equal(s->collector[RM_STREAM_GPU], "gpu");
    assert_string_equal(s->phase, "train");
    assert_int_equal(s->ndone, 1);
    assert_string_equal(s->done[0].path, "train/eval");
    assert_int_equal(s->done[0].count, 1);
    rm_exporters_close(&l, T0);
    rm_exporters_fini(&l);
}

/* Events reach an exporter until its close; close comes once, with the final snapshot, and
 * the list can be closed again safely. */
static void test_close_once_with_final(void **state)
{
    (void)state;
    struct rm_exporters l;
    const struct rm_exporter_ops *ops[] = {&tex_ops, &unwanted_ops};
    opened_unwanted = 0;
    open_list(&l, ops, 2, T0);
    assert_int_equal(rm_exporters_count(&l), 1); /* its option check said no */
    assert_int_equal(opened_unwanted, 0);
    json_t *d = json_object();
    rm_exporters_event(&l, "collector_degraded", d);
    rm_exporters_event(&l, "warning", d);
    assert_int_equal(last_tex[0]->events, 2);
    pthread_mutex_lock(&lock);
    sess.status = "completed";
    pthread_mutex_unlock(&lock);
    rm_exporters_close(&l, T0 + MS);
    assert_int_equal(last_tex[0]->closes, 1);
    assert_int_equal(last_tex[0]->final_seen, 1);
    assert_string_equal(last_tex[0]->closed_status, "completed");
    rm_exporters_event(&l, "warning", d); /* a worker's late event: nobody gets it */
    assert_int_equal(last_tex[0]->events, 2);
    rm_exporters_close(&l, T0 + 2 * MS);
    assert_int_equal(last_tex[0]->closes, 1);
    assert_int_equal(rm_exporters_count(&l), 0);
    rm_exporters_fini(&l);
    json_decref(d);
}

/* An exporter that cannot open stops the session's start with its reason; those opened
 * before it are still closed once; it is never closed. */
static void test_open_failure(void **state)
{
    (void)state;
    struct rm_exporters l;
    const struct rm_exporter_ops *ops[] = {&tex_ops, &failing_ops, &tex_ops};
    char err[256] = "";
    struct rm_exporter_env env = env_at(T0);
    ntex = 0;
    failing_closes = 0;
    memset(&l, 0, sizeof l);
    assert_int_equal(rm_exporters_open_ops(&l, ops, 3, &env, NULL, err, sizeof err), -1);
    assert_string_equal(err, "--failing: cannot");
    assert_int_equal(ntex, 1);
    rm_exporters_close(&l, T0);
    rm_exporters_fini(&l);
    assert_int_equal(last_tex[0]->closes, 1);
    assert_int_equal(failing_closes, 0);
}

/* The real table: with no option, nothing is open (the recorder's loop does no exporter
 * work); --prom-textfile opens the textfile, written when due and, at the close, with the
 * final status only. */
static void read_file(const char *path, char *out, size_t cap)
{
    int fd = open(path, O_RDONLY);
    assert_true(fd >= 0);
    ssize_t n = read(fd, out, cap - 1);
    assert_true(n > 0);
    out[n] = '\0';
    close(fd);
}

static void test_table_prom_textfile(void **state)
{
    (void)state;
    struct rm_exporters l;
    char err[256] = "";
    memset(&l, 0, sizeof l);
    assert_int_equal(rm_exporters_open(&l, &opts, &port, err, sizeof err), 0);
    assert_int_equal(rm_exporters_count(&l), 0);
    assert_int_equal(rm_exporters_timeout_ms(&l, T0, 1000), 1000);
    rm_exporters_close(&l, T0);
    rm_exporters_fini(&l);

    char path[128], text[65536];
    snprintf(path, sizeof path, "%s/runmon.prom", dir);
    opts.prom_textfile = path;
    opts.flush_s = 0.5;
    memset(&l, 0, sizeof l);
    assert_int_equal(rm_exporters_open(&l, &opts, &port, err, sizeof err), 0);
    assert_int_equal(rm_exporters_count(&l), 1);
    int ms = rm_exporters_timeout_ms(&l, rm_now_monotonic_ns(), 1000);
    assert_true(ms > 0 && ms <= 501);
    assert_int_equal(access(path, F_OK), -1);
    double v[RM_GM_COUNT];
    for (int m = 0; m < RM_GM_COUNT; m++)
        v[m] = NAN;
    v[RM_GM_UTIL] = 53;
    pthread_mutex_lock(&lock);
    rm_latest_gpu_update(&latest.gpu[0], rm_now_realtime_ns(), v, "GPU-a", 5, 0);
    pthread_mutex_unlock(&lock);
    rm_exporters_poll(&l, rm_now_monotonic_ns() + 600 * MS, NULL, 0);
    read_file(path, text, sizeof text);
    assert_non_null(strstr(text, "runmon_session_info{host=\"node1\",session=\"sess-1\""));
    assert_non_null(strstr(text, "status=\"running\"} 1"));
    assert_non_null(strstr(text, "runmon_gpu_utilization_ratio{gpu=\"0\",uuid=\"GPU-a\""));
    pthread_mutex_lock(&lock);
    sess.status = "completed";
    pthread_mutex_unlock(&lock);
    rm_exporters_close(&l, rm_now_monotonic_ns());
    rm_exporters_fini(&l);
    read_file(path, text, sizeof text);
    assert_non_null(strstr(text, "status=\"completed\"} 1"));
    assert_null(strstr(text, "runmon_gpu_utilization_ratio"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_due_time_honoured, setup, teardown),
        cmocka_unit_test_setup_teardown(test_fd_polled, setup, teardown),
        cmocka_unit_test_setup_teardown(test_snapshot_consistent_under_updates, setup, teardown),
        cmocka_unit_test_setup_teardown(test_snapshot_facts_and_phases, setup, teardown),
        cmocka_unit_test_setup_teardown(test_close_once_with_final, setup, teardown),
        cmocka_unit_test_setup_teardown(test_open_failure, setup, teardown),
        cmocka_unit_test_setup_teardown(test_table_prom_textfile, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
