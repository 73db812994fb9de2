/* The /proc samplers' table (monitor/proc_samplers.c): every row complete, the streams of
 * the rows an option turns off, and a set opened on the real /proc: its files in the table's
 * order, a tick that runs what is due, and a stop that closes what opened. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
/* cmocka needs the four above it */
#include <cmocka.h>

#include "base/rm_time.h"
#include "model/streams.h"
#include "monitor/proc_samplers.h"

static void every_row_is_complete(void **state)
{
    (void)state;
    unsigned seen = 0;
    assert_true(rm_proc_nsamplers >= 2);
    assert_true(rm_proc_nsamplers <= RM_PROC_SET_MAX);
    for (int i = 0; i < rm_proc_nsamplers; i++) {
        const struct rm_proc_sampler *r = rm_proc_samplers[i];
        assert_non_null(r->name);
        assert_true(r->streams != 0);
        assert_int_equal(seen & r->streams, 0); /* no stream written by two rows */
        seen |= r->streams;
        assert_true(r->ctx_size > 0);
        assert_non_null(r->open);
        assert_non_null(r->outs);
        assert_non_null(r->begin);
        assert_non_null(r->due);
        assert_non_null(r->tick);
        assert_non_null(r->stop);
    }
    assert_true(seen & 1u << RM_STREAM_CPU);
    assert_true(seen & 1u << RM_STREAM_PROC);
    assert_true(seen & 1u << RM_STREAM_IO);
    assert_true(seen & 1u << RM_STREAM_STALL);
}

static void no_io_turns_off_io_only(void **state)
{
    (void)state;
    struct rm_proc_opts o = {0};
    struct rm_proc_start cmd = {.o = &o, .with_command = true};
    assert_int_equal(rm_proc_samplers_off(&cmd), 0);
    o.no_io = 1;
    assert_int_equal(rm_proc_samplers_off(&cmd), 1u << RM_STREAM_IO);
    /* without a command the stall stream is off by its row of the stream table
     * (RM_NEEDS_COMMAND), not by the sampler's: its health says disabled either way */
    o.no_io = 0;
    assert_int_equal(rm_proc_samplers_off(&(struct rm_proc_start){.o = &o}), 0);
    o.no_stall = 1;
    assert_int_equal(rm_proc_samplers_off(&cmd), 1u << RM_STREAM_STALL);
}

static void on_event(void *owner, const char *name, json_t *data)
{
    (void)owner, (void)name;
    json_decref(data);
}

static void on_health(void *owner, int c, enum rm_health h, const char *e, int n)
{
    (void)owner, (void)c, (void)h, (void)e, (void)n;
}

/* The set st wants on the real /proc: the names of its files, in order. */
static void open_tick_stop(int no_io, int with_command, const char *want_files)
{
    char dir[] = "/tmp/runmon-test-procs.XXXXXX";
    assert_non_null(mkdtemp(dir));
    pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    static struct rm_session sess;
    memset(&sess, 0, sizeof sess);
    snprintf(sess.dir, sizeof sess.dir, "%s", dir);
    atomic_int stop = 0, wpid = with_command ? getpid() : 0;
    struct rm_port port = {.event = on_event,
                           .set_health = on_health,
                           .lock = &lock,
                           .sess = &sess,
                           .stop = &stop,
                           .workload_pid = &wpid,
                           .interval_s = 0.1};
    struct rm_proc_opts o = {
        .no_io = no_io, .io_interval_s = 0.2, .proc_root = "/proc", .sys_root = "/sys"};
    struct rm_proc_start st = {.port = &port, .o = &o, .with_command = with_command};
    struct rm_proc_set set = {0};
    char err[256] = "";
    assert_int_equal(rm_proc_set_open(&set, &st, err, sizeof err), 0);
    struct rm_stream *out[RM_PROC_SET_MAX * RM_PROC_MAX_OUTS];
    int n = rm_proc_set_streams(&set, out, RM_PROC_SET_MAX * RM_PROC_MAX_OUTS);
    char files[128] = "";
    for (int i = 0; i < n; i++) {
        const char *name = out[i]->name;
        strcat(files, i ? " " : "");
        strcat(files, name);
    }
    assert_string_equal(files, want_files);
    struct rm_ticker t = rm_proc_set_begin(&set);
    int64_t first = t.due(t.ctx);
    assert_true(first > rm_now_monotonic_ns() - 1000000000LL);
    for (int k = 0; k < 4; k++) { /* four slots of 0.1 s: the io sampler's 0.2 s twice */
        int64_t due = t.due(t.ctx);
        while (rm_now_monotonic_ns() < due)
            usleep(1000);
        t.run(t.ctx, rm_now_monotonic_ns());
        assert_true(t.due(t.ctx) > due);
    }
    rm_proc_set_stop(&set);
    assert_int_equal(set.n, 0);
    char path[128];
    struct stat sb;
    snprintf(path, sizeof path, "%s/cpu.csv", dir);
    assert_int_equal(stat(path, &sb), 0);
    assert_true(sb.st_size > 100); /* the header and the samples, flushed at the stop */
    if (with_command) { /* this process is the workload: a row a slot but the baseline's */
        snprintf(path, sizeof path, "%s/stall.csv", dir);
        FILE *f = fopen(path, "r");
        assert_non_null(f);
        int lines = 0;
        for (int c; (c = fgetc(f)) != EOF;)
            lines += c == '\n';
        fclose(f);
        assert_true(lines >= 4); /* the header, three ticks and the stop's row */
    }
    char cmd[160];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
}

static void a_set_opens_ticks_and_stops(void **state)
{
    (void)state;
    open_tick_stop(0, 1, "cpu proc io stall");
    open_tick_stop(0, 0, "cpu io");
    open_tick_stop(1, 1, "cpu proc stall");
}

/* A sampler that cannot open (no /proc there): -1 with the reason, no file for the sink, and
 * the stop frees what the table tried (ASan finds a leak or a double close). */
static void a_failed_open_is_stopped(void **state)
{
    (void)state;
    pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    static struct rm_session sess;
    snprintf(sess.dir, sizeof sess.dir, "/tmp");
    atomic_int stop = 0, wpid = 0;
    struct rm_port port = {.event = on_event,
                           .set_health = on_health,
                           .lock = &lock,
                           .sess = &sess,
                           .stop = &stop,
                           .workload_pid = &wpid,
                           .interval_s = 1};
    struct rm_proc_opts o = {
        .io_interval_s = 1, .proc_root = "/nonexistent-proc", .sys_root = "/sys"};
    struct rm_proc_start st = {.port = &port, .o = &o};
    struct rm_proc_set set = {0};
    char err[256] = "";
    assert_int_equal(rm_proc_set_open(&set, &st, err, sizeof err), -1);
    assert_non_null(strstr(err, "/nonexistent-proc"));
    struct rm_stream *out[RM_PROC_SET_MAX * RM_PROC_MAX_OUTS];
    assert_int_equal(rm_proc_set_streams(&set, out, RM_PROC_SET_MAX * RM_PROC_MAX_OUTS), 0);
    rm_proc_set_stop(&set);
    assert_int_equal(set.n, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_row_is_complete),
        cmocka_unit_test(no_io_turns_off_io_only),
        cmocka_unit_test(a_set_opens_ticks_and_stops),
        cmocka_unit_test(a_failed_open_is_stopped),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
