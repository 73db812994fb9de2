/* The stall sampler's cost-saving paths (monitor/stall_sampler.c) on the real /proc, this
 * process as the workload: a process whose thread count did not change is not listed again,
 * a thread that ended while another started (the same count) is dropped, not counted
 * unreadable, and the new one found at the next sample; a thread started alone is found at
 * once. And in a set, the stall row reads the tree proc.csv's row walked at the same slot
 * instead of walking it again. */
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
/* cmocka needs the four above it */
#include <cmocka.h>

#include "base/rm_time.h"
#include "monitor/port.h"
#include "monitor/proc_samplers.h"
#include "monitor/stall_sampler.h"

static void on_event(void *owner, const char *name, json_t *data)
{
    (void)owner, (void)name;
    json_decref(data);
}

static void on_health(void *owner, int c, enum rm_health h, const char *e, int n)
{
    (void)owner, (void)c, (void)h, (void)e, (void)n;
}

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct rm_session sess;
static atomic_int stop_flag, wpid;
static struct rm_port port = {.event = on_event,
                              .set_health = on_health,
                              .lock = &lock,
                              .sess = &sess,
                              .stop = &stop_flag,
                              .workload_pid = &wpid,
                              .interval_s = 1};

/* A thread that sleeps until its pipe is closed, telling its tid first. */
struct sleeper {
    pthread_t t;
    int hold[2], told[2];
    int32_t tid;
};

static void *sleep_on_pipe(void *arg)
{
    struct sleeper *s = arg;
    int32_t tid = (int32_t)syscall(SYS_gettid);
    if (write(s->told[1], &tid, sizeof tid) != sizeof tid) return NULL;
    char c;
    while (read(s->hold[0], &c, 1) < 0)
        ;
    return NULL;
}

static void start_sleeper(struct sleeper *s)
{
    assert_int_equal(pipe(s->hold), 0);
    assert_int_equal(pipe(s->told), 0);
    assert_int_equal(pthread_create(&s->t, NULL, sleep_on_pipe, s), 0);
    assert_int_equal(read(s->told[0], &s->tid, sizeof s->tid), sizeof s->tid);
}

static void end_sleeper(struct sleeper *s)
{
    close(s->hold[1]);
    pthread_join(s->t, NULL);
    close(s->hold[0]);
    close(s->told[0]);
    close(s->told[1]);
}

/* Whether the last sample read thread tid; *known: whether it came without a listing. */
static int sampled(const struct rm_stall_sampler *s, int32_t tid, int *known)
{
    for (size_t i = 0; i < s->ncur; i++)
        if (s->cur[i].tid == tid) {
            for (size_t k = 0; k < s->ncur; k++) /* tids holds this sample's, sorted */
                if (s->tids[k].tid == tid) *known = s->tids[k].known;
            return 1;
        }
    return 0;
}

/* The last row's column col (1: interval_ms, ... 13: unreadable) of stall.csv. */
static long last_field(const char *dir, int col)
{
    char path[160], line[512] = "", last[512] = "";
    snprintf(path, sizeof path, "%s/stall.csv", dir);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    while (fgets(line, sizeof line, f))
        memcpy(last, line, sizeof last);
    fclose(f);
    char *p = last;
    for (int i = 0; i < col; i++) {
        p = strchr(p, ',');
        assert_non_null(p);
        p++;
    }
    return strtol(p, NULL, 10);
}

static void known_threads_are_not_listed(void **state)
{
    (void)state;
    char dir[] = "/tmp/runmon-test-stall.XXXXXX";
    assert_non_null(mkdtemp(dir));
    snprintf(sess.dir, sizeof sess.dir, "%s", dir);
    atomic_store(&wpid, getpid());
    struct sleeper a, b, c;
    start_sleeper(&a);
    start_sleeper(&b);
    static struct rm_stall_sampler s;
    memset(&s, 0, sizeof s);
    char err[256];
    assert_int_equal(rm_stall_sampler_open(&s, &port, "/proc", "/sys", err, sizeof err), 0);
    rm_stall_sampler_sample(&s, rm_now_monotonic_ns()); /* listed: the first sample */
    int known = -1;
    assert_true(sampled(&s, a.tid, &known));
    assert_int_equal(known, 0);
    size_t threads = s.ncur;
    rm_stall_sampler_sample(&s, rm_now_monotonic_ns()); /* the same threads: not listed */
    assert_true(sampled(&s, a.tid, &known));
    assert_int_equal(known, 1);
    assert_int_equal(s.ncur, threads);
    int fds = s.nfds;

    /* One ends, another starts: the same count. The ended one is dropped (its files closed),
     * not unreadable; the new one is read at the next sample, listed. */
    end_sleeper(&a);
    start_sleeper(&c);
    rm_stall_sampler_sample(&s, rm_now_monotonic_ns());
    assert_false(sampled(&s, a.tid, &known));
    assert_int_equal(last_field(dir, 13), 0);
    assert_true(s.nfds < fds);
    rm_stall_sampler_sample(&s, rm_now_monotonic_ns());
    assert_true(sampled(&s, c.tid, &known));
    assert_int_equal(known, 0);
    assert_int_equal(s.ncur, threads);
    assert_int_equal(last_field(dir, 3), (long)threads);
    assert_int_equal(last_field(dir, 13), 0);

    /* A thread started alone changes the count: read at once. */
    struct sleeper d;
    start_sleeper(&d);
    rm_stall_sampler_sample(&s, rm_now_monotonic_ns());
    assert_true(sampled(&s, d.tid, &known));
    assert_int_equal(s.ncur, threads + 1);
    rm_stall_sampler_stop(&s);
    end_sleeper(&b);
    end_sleeper(&c);
    end_sleeper(&d);
    char cmd[160];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
}

/* In a set, the stall row reads the tree the proc.csv row walked at the same slot: its own
 * handle never samples while the slots are shared (only the stop's last row walks it). */
static void the_set_walks_the_tree_once_a_tick(void **state)
{
    (void)state;
    char dir[] = "/tmp/runmon-test-stall.XXXXXX";
    assert_non_null(mkdtemp(dir));
    snprintf(sess.dir, sizeof sess.dir, "%s", dir);
    atomic_store(&wpid, getpid());
    struct rm_proc_opts o = {
        .no_io = 1, .io_interval_s = 1, .proc_root = "/proc", .sys_root = "/sys"};
    struct rm_proc_start st = {.port = &port, .o = &o, .with_command = true};
    struct rm_proc_set set = {0};
    char err[256] = "";
    port.interval_s = 0.1;
    assert_int_equal(rm_proc_set_open(&set, &st, err, sizeof err), 0);
    struct rm_stall_sampler *s = NULL;
    for (int i = 0; i < set.n; i++)
        if (set.row[i] == &rm_stall_sampler_row) s = set.ctx[i];
    assert_non_null(s);
    struct rm_ticker t = rm_proc_set_begin(&set);
    for (int k = 0; k < 3; k++) {
        int64_t due = t.due(t.ctx);
        while (rm_now_monotonic_ns() < due)
            usleep(1000);
        t.run(t.ctx, rm_now_monotonic_ns());
    }
    assert_int_equal(set.tick.walked, set.tick.run);
    assert_true(s->ncur >= 1); /* this process's threads, read */
    assert_int_equal(rm_procfs_tree_members(s->tree, NULL, 0), 0);
    assert_true(last_field(dir, 2) >= 1); /* procs */
    rm_proc_set_stop(&set);
    port.interval_s = 1;
    char cmd[160];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(known_threads_are_not_listed),
        cmocka_unit_test(the_set_walks_the_tree_once_a_tick),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
