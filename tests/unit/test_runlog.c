/* The RunLog C API and KEY=VALUE parsing: line shapes, typing, nesting, rounding, every
 * refused input, and write failures that must leave no partial line. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/rm_time.h"
#include "runlog/kvargs.h"
#include "runlog/runlog.h"

static char tmpdir[64];
static char path[128];

static int setup(void **state)
{
    (void)state;
    strcpy(tmpdir, "/tmp/rm-test-runlog.XXXXXX");
    if (!mkdtemp(tmpdir)) return -1;
    snprintf(path, sizeof path, "%s/run.jsonl", tmpdir);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    unlink(path);
    rmdir(tmpdir);
    return 0;
}

static char *slurp(const char *p, size_t *len)
{
    FILE *f = fopen(p, "rb");
    if (!f) {
        *len = 0;
        return strdup("");
    }
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = malloc((size_t)n + 1);
    assert_non_null(s);
    assert_int_equal(fread(s, 1, (size_t)n, f), (size_t)n);
    s[n] = '\0';
    fclose(f);
    *len = (size_t)n;
    return s;
}

/* All lines of the file, each parsed; the file must end with '\n' and hold only valid JSON
 * objects that carry ts, type, pid and t. */
static json_t *read_lines(const char *p)
{
    size_t len;
    char *s = slurp(p, &len);
    json_t *arr = json_array();
    if (len) assert_int_equal(s[len - 1], '\n');
    for (char *line = s, *nl; line < s + len; line = nl + 1) {
        nl = strchr(line, '\n');
        assert_non_null(nl);
        json_error_t err;
        json_t *j = json_loadb(line, (size_t)(nl - line), 0, &err);
        if (!j) fail_msg("invalid line: %.*s (%s)", (int)(nl - line), line, err.text);
        assert_true(json_is_string(json_object_get(j, "ts")));
        assert_int_equal(strlen(json_string_value(json_object_get(j, "ts"))), 29);
        assert_true(json_is_string(json_object_get(j, "type")));
        assert_true(json_is_integer(json_object_get(j, "pid")));
        assert_true(json_is_number(json_object_get(j, "t")));
        json_array_append_new(arr, j);
    }
    free(s);
    return arr;
}

static const char *str(json_t *line, const char *key)
{
    return json_string_value(json_object_get(line, key));
}

static void phase_line_has_spec_fields(void **state)
{
    (void)state;
    rm_runlog *log = rm_runlog_open(path);
    assert_non_null(log);
    json_t *extra = json_pack("{s:f, s:s}", "lr", 0.1, "model", "tiny\n\"q\"");
    int64_t before = rm_now_realtime_ns();
    assert_int_equal(rm_runlog_phase(log, "load", 1.5, extra), 0);
    int64_t after = rm_now_realtime_ns();
    json_decref(extra);
    assert_int_equal(rm_runlog_close(log), 0);

    size_t len;
    char *raw = slurp(path, &len);
    /* Numbers print as written (0.1, not 0.10000000000000001) and strings are escaped. */
    assert_non_null(strstr(raw, "\"lr\":0.1,"));
    assert_non_null(strstr(raw, "\"seconds\":1.5,"));
    assert_non_null(strstr(raw, "\"model\":\"tiny\\n\\\"q\\\"\""));
    assert_true(strncmp(raw, "{\"ts\":\"", 7) == 0);
    free(raw);

    json_t *lines = read_lines(path);
    assert_int_equal(json_array_size(lines), 1);
    json_t *l = json_array_get(lines, 0);
    assert_string_equal(str(l, "type"), "phase");
    assert_string_equal(str(l, "name"), "load");
    assert_int_equal(json_integer_value(json_object_get(l, "pid")), getpid());
    const char *ts = str(l, "ts");
    assert_string_equal(ts + 23, "+00:00");
    int64_t ns;
    assert_int_equal(rm_parse_ts(ts, strlen(ts), &ns), 0);
    assert_true(ns >= before / RM_NS_PER_MS * RM_NS_PER_MS && ns <= after);
    /* t is the same instant as ts. */
    double t = json_number_value(json_object_get(l, "t"));
    assert_true(fabs(t - (double)ns / 1e9) < 0.0005);
    json_decref(lines);
}

static void seconds_are_rounded_to_the_millisecond(void **state)
{
    (void)state;
    rm_runlog *log = rm_runlog_open(path);
    const double in[] = {1.23449, 1.2346, 0.0004, 0.0005, 2.0, 1e-9, 3600.1234};
    const double want[] = {1.234, 1.235, 0.0, 0.001, 2.0, 0.0, 3600.123};
    for (size_t i = 0; i < sizeof in / sizeof in[0]; i++)
        assert_int_equal(rm_runlog_phase(log, "p", in[i], NULL), 0);
    rm_runlog_close(log);
    json_t *lines = read_lines(path);
    for (size_t i = 0; i < sizeof in / sizeof in[0]; i++) {
        json_t *s = json_object_get(json_array_get(lines, i), "seconds");
        assert_true(json_is_real(s)); /* always a float, even 2.0 */
        assert_true(json_real_value(s) == want[i]);
    }
    json_decref(lines);
    size_t len;
    char *raw = slurp(path, &len);
    assert_non_null(strstr(raw, "\"seconds\":2.0,"));
    assert_non_null(strstr(raw, "\"seconds\":3600.123,"));
    free(raw);
}

static void bad_seconds_and_names_write_nothing(void **state)
{
    (void)state;
    rm_runlog *log = rm_runlog_open(path);
    assert_int_equal(rm_runlog_phase(log, "p", NAN, NULL), -1);
    assert_int_equal(errno, EINVAL);
    assert_int_equal(rm_runlog_phase(log, "p", INFINITY, NULL), -1);
    assert_int_equal(rm_runlog_phase(log, "p", -0.5, NULL), -1);
    assert_non_null(strstr(rm_runlog_errmsg(), "seconds"));
    assert_int_equal(rm_runlog_phase(log, "", 1, NULL), -1);
    assert_int_equal(rm_runlog_phase(log, "a\tb", 1, NULL), -1);
    assert_non_null(strstr(rm_runlog_errmsg(), "control character"));
    assert_int_equal(rm_runlog_phase(log, "a\x7f", 1, NULL), -1);
    assert_int_equal(rm_runlog_phase(log, "\xc2\x85", 1, NULL), -1); /* C1 NEL */
    assert_int_equal(rm_runlog_phase(log, "bad\xff", 1, NULL), -1);
    assert_non_null(strstr(rm_runlog_errmsg(), "UTF-8"));
    assert_int_equal(rm_runlog_event(log, "\xc0\xaf", NULL), -1);     /* overlong '/' */
    assert_int_equal(rm_runlog_event(log, "\xed\xa0\x80", NULL), -1); /* surrogate */
    assert_int_equal(rm_runlog_enter(log, "a/b", NULL), -1);
    json_t *reserved = json_pack("{s:i}", "ts", 1);
    assert_int_equal(rm_runlog_phase(log, "p", 1, reserved), -1);
    assert_non_null(strstr(rm_runlog_errmsg(), "reserved"));
    assert_int_equal(rm_runlog_check_extra("phase", reserved), -1);
    assert_int_equal(rm_runlog_check_extra("event", reserved), 0); /* inside data: fine */
    json_decref(reserved);
    json_t *badkey = json_pack("{s:i}", "k\n", 1);
    assert_int_equal(rm_runlog_event(log, "e", badkey), -1);
    json_decref(badkey);
    json_t *notobj = json_integer(3);
    assert_int_equal(rm_runlog_event(log, "e", notobj), -1);
    json_decref(notobj);
    /* UTF-8 names are fine. */
    assert_int_equal(rm_runlog_event(log, "\xc3\xa9t\xc3\xa9 \xf0\x9f\x9a\x80", NULL), 0);
    rm_runlog_close(log);
    json_t *lines = read_lines(path);
    assert_int_equal(json_array_size(lines), 1);
    assert_string_equal(str(json_array_get(lines, 0), "event"),
                        "\xc3\xa9t\xc3\xa9 \xf0\x9f\x9a\x80");
    json_decref(lines);
}

static void kv_values_are_typed(void **state)
{
    (void)state;
    struct {
        const char *arg, *key, *json;
    } cases[] = {
        {"n=5", "n", "5"},
        {"n=-12", "n", "-12"},
        {"x=0.1", "x", "0.1"},
        {"x=1e3", "x", "1000.0"},
        {"x=-2.5E-1", "x", "-0.25"},
        {"b=true", "b", "true"},
        {"b=false", "b", "false"},
        {"z=null", "z", "null"},
        {"s=abc", "s", "\"abc\""},
        {"s=", "s", "\"\""},
        {"s=007", "s", "\"007\""},
        {"s=+1", "s", "\"+1\""},
        {"s=.5", "s", "\".5\""},
        {"s=1.", "s", "\"1.\""},
        {"s=0x10", "s", "\"0x10\""},
        {"s=nan", "s", "\"nan\""},
        {"s=inf", "s", "\"inf\""},
        {"s=1e999", "s", "\"1e999\""},
        {"s=True", "s", "\"True\""},
        {"s= 1", "s", "\" 1\""},
        {"s=99999999999999999999", "s", "\"99999999999999999999\""},
        {"s=a=b", "s", "\"a=b\""},
        {"s=line\nbreak", "s", "\"line\\nbreak\""},
        {"j:=[1,\"a\",{\"b\":null}]", "j", "[1,\"a\",{\"b\":null}]"},
        {"j:=\"x\"", "j", "\"x\""},
        {"j:=2.5", "j", "2.5"},
        {"j:= {} ", "j", "{}"},
        {"\xc3\xa9=1", "\xc3\xa9", "1"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *k;
        json_t *v;
        if (rm_kv_parse(cases[i].arg, &k, &v) != 0)
            fail_msg("%s: %s", cases[i].arg, rm_runlog_errmsg());
        assert_string_equal(k, cases[i].key);
        char *got = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT | JSON_REAL_PRECISION(15));
        json_t *want = json_loads(cases[i].json, JSON_DECODE_ANY, NULL);
        assert_non_null(want);
        if (!json_equal(v, want) || json_typeof(v) != json_typeof(want))
            fail_msg("%s: got %s, want %s", cases[i].arg, got, cases[i].json);
        free(got);
        free(k);
        json_decref(v);
        json_decref(want);
    }
}

static void kv_bad_arguments_are_refused(void **state)
{
    (void)state;
    struct {
        const char *arg, *msg;
    } cases[] = {
        {"novalue", "has no '='"},
        {"=1", "empty key"},
        {":=1", "empty key"},
        {"a\x01=1", "control character"},
        {"\xff=1", "UTF-8"},
        {"k=\xff", "UTF-8"},
        {"k:={", "invalid JSON for key 'k'"},
        {"k:=", "invalid JSON"},
        {"k:=NaN", "invalid JSON"},
        {"k:=1e999", "invalid JSON"},
        {"k:=[1,]", "invalid JSON"},
        {"k:={\"a\":1,\"a\":2}", "invalid JSON"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *k = (char *)"untouched";
        json_t *v = NULL;
        errno = 0;
        assert_int_equal(rm_kv_parse(cases[i].arg, &k, &v), -1);
        assert_int_equal(errno, EINVAL);
        if (!strstr(rm_runlog_errmsg(), cases[i].msg))
            fail_msg("%s: message '%s' lacks '%s'", cases[i].arg, rm_runlog_errmsg(), cases[i].msg);
        assert_null(v);
    }
    const char *args[] = {"a=1", "b", "c=2"};
    assert_null(rm_kv_object(3, args));
    /* A later duplicate replaces the earlier value. */
    const char *dup[] = {"a=1", "a=x"};
    json_t *o = rm_kv_object(2, dup);
    assert_string_equal(json_string_value(json_object_get(o, "a")), "x");
    json_decref(o);
}

static void seconds_text_is_checked(void **state)
{
    (void)state;
    double d;
    assert_int_equal(rm_parse_seconds("1.25", &d), 0);
    assert_true(d == 1.25);
    assert_int_equal(rm_parse_seconds("0", &d), 0);
    assert_int_equal(rm_parse_seconds("2e1", &d), 0);
    assert_true(d == 20);
    const char *bad[] = {"",    "-1",  "-0.001",    "abc",   "1s",   " 1", "nan",
                         "NaN", "inf", "-Infinity", "1e999", "0x10", "+1", "1,5"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        if (rm_parse_seconds(bad[i], &d) != -1) fail_msg("'%s' accepted", bad[i]);
    assert_int_equal(rm_parse_seconds("-1", &d), -1);
    assert_non_null(strstr(rm_runlog_errmsg(), "negative"));
    assert_int_equal(rm_parse_seconds("NaN", &d), -1);
    assert_non_null(strstr(rm_runlog_errmsg(), "finite"));
}

static void nested_phases_have_paths_and_depths(void **state)
{
    (void)state;
    rm_runlog *log = rm_runlog_open(path);
    assert_int_equal(rm_runlog_set_prefix(log, "sweep/run3"), 0);
    assert_int_equal(rm_runlog_enter(log, "train", NULL), 0);
    char *p = rm_runlog_current_path(log);
    assert_string_equal(p, "sweep/run3/train");
    free(p);
    json_t *e = json_pack("{s:i}", "epoch", 1);
    assert_int_equal(rm_runlog_enter(log, "forward", e), 0);
    json_decref(e);
    assert_int_equal(rm_runlog_depth(log), 2);
    /* Exiting anything but the innermost phase is refused and writes nothing. */
    assert_int_equal(rm_runlog_exit(log, "train", RM_RUNLOG_OK, NULL), -1);
    assert_int_equal(errno, EINVAL);
    usleep(20000);
    assert_int_equal(rm_runlog_exit(log, "forward", RM_RUNLOG_ERROR, NULL), 0);
    assert_int_equal(rm_runlog_exit(log, NULL, RM_RUNLOG_OK, NULL), 0);
    assert_int_equal(rm_runlog_exit(log, NULL, RM_RUNLOG_OK, NULL), -1);
    assert_int_equal(errno, ENOENT);
    assert_int_equal(rm_runlog_set_prefix(log, NULL), 0);
    assert_int_equal(rm_runlog_enter(log, "top", NULL), 0);
    assert_int_equal(rm_runlog_exit(log, "top", RM_RUNLOG_OK, NULL), 0);
    /* Bad prefixes. */
    assert_int_equal(rm_runlog_set_prefix(log, "a//b"), -1);
    assert_int_equal(rm_runlog_set_prefix(log, "/a"), -1);
    assert_int_equal(rm_runlog_set_prefix(log, "a/"), -1);
    assert_int_equal(rm_runlog_set_prefix(log, "a/\x01"), -1);
    rm_runlog_close(log);

    json_t *lines = read_lines(path);
    assert_int_equal(json_array_size(lines), 6);
    const char *types[] = {"phase_enter", "phase_enter", "phase_exit",
                           "phase_exit",  "phase_enter", "phase_exit"};
    const char *paths[] = {"sweep/run3/train",
                           "sweep/run3/train/forward",
                           "sweep/run3/train/forward",
                           "sweep/run3/train",
                           "top",
                           "top"};
    const int depths[] = {2, 3, 3, 2, 0, 0};
    for (size_t i = 0; i < 6; i++) {
        json_t *l = json_array_get(lines, i);
        assert_string_equal(str(l, "type"), types[i]);
        assert_string_equal(str(l, "path"), paths[i]);
        assert_int_equal(json_integer_value(json_object_get(l, "depth")), depths[i]);
    }
    json_t *fwd_exit = json_array_get(lines, 2);
    assert_string_equal(str(fwd_exit, "status"), "error");
    assert_string_equal(str(fwd_exit, "name"), "forward");
    double secs = json_real_value(json_object_get(fwd_exit, "seconds"));
    assert_true(secs >= 0.02 && secs < 5);
    assert_true(secs * 1000 == round(secs * 1000));
    assert_int_equal(json_integer_value(json_object_get(json_array_get(lines, 1), "epoch")), 1);
    assert_string_equal(str(json_array_get(lines, 3), "status"), "ok");
    json_decref(lines);
}

static void events_carry_data_only_when_given(void **state)
{
    (void)state;
    rm_runlog *log = rm_runlog_open(path);
    const char *kv[] = {"gpu=0", "reason=no data for 5 s", "cfg:={\"a\":[1,2]}"};
    assert_int_equal(rm_runlog_event_kv(log, "collector_degraded", 3, kv), 0);
    assert_int_equal(rm_runlog_event(log, "bare", NULL), 0);
    json_t *empty = json_object();
    assert_int_equal(rm_runlog_event(log, "empty", empty), 0);
    json_decref(empty);
    const char *bad[] = {"x"};
    assert_int_equal(rm_runlog_event_kv(log, "bad", 1, bad), -1);
    const char *pkv[] = {"bs=32"};
    assert_int_equal(rm_runlog_phase_kv(log, "eval", 0.25, 1, pkv), 0);
    rm_runlog_close(log);
    json_t *lines = read_lines(path);
    assert_int_equal(json_array_size(lines), 4);
    json_t *d = json_object_get(json_array_get(lines, 0), "data");
    assert_int_equal(json_integer_value(json_object_get(d, "gpu")), 0);
    assert_string_equal(json_string_value(json_object_get(d, "reason")), "no data for 5 s");
    assert_int_equal(json_array_size(json_object_get(json_object_get(d, "cfg"), "a")), 2);
    assert_null(json_object_get(json_array_get(lines, 1), "data"));
    assert_null(json_object_get(json_array_get(lines, 2), "data"));
    assert_int_equal(json_integer_value(json_object_get(json_array_get(lines, 3), "bs")), 32);
    json_decref(lines);
}

static void open_failure_is_reported(void **state)
{
    (void)state;
    assert_null(rm_runlog_open("/nonexistent-dir/run.jsonl"));
    assert_int_equal(errno, ENOENT);
    assert_non_null(strstr(rm_runlog_errmsg(), "/nonexistent-dir/run.jsonl"));
    assert_null(rm_runlog_open(""));
    assert_int_equal(errno, EINVAL);
    assert_null(rm_runlog_open(tmpdir)); /* a directory */
    assert_int_equal(errno, EISDIR);
}

static void dev_full_reports_enospc(void **state)
{
    (void)state;
    rm_runlog *log = rm_runlog_open("/dev/full");
    assert_non_null(log);
    assert_int_equal(rm_runlog_event(log, "x", NULL), -1);
    assert_int_equal(errno, ENOSPC);
    assert_non_null(strstr(rm_runlog_errmsg(), "No space left"));
    rm_runlog_close(log);
}

static void removed_file_is_reported(void **state)
{
    (void)state;
    rm_runlog *log = rm_runlog_open(path);
    assert_int_equal(rm_runlog_event(log, "a", NULL), 0);
    unlink(path);
    assert_int_equal(rm_runlog_event(log, "b", NULL), -1);
    assert_int_equal(errno, ENOENT);
    assert_non_null(strstr(rm_runlog_errmsg(), "removed"));
    rm_runlog_close(log);
}

/* Under RLIMIT_FSIZE Linux writes the part of a line that fits: the partial line must be cut
 * back and the call must fail with EFBIG, every time, leaving only whole lines. */
static void file_size_limit_leaves_no_partial_line(void **state)
{
    (void)state;
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        signal(SIGXFSZ, SIG_IGN);
        struct rlimit rl = {1000, 1000};
        if (setrlimit(RLIMIT_FSIZE, &rl) < 0) _exit(10);
        rm_runlog *log = rm_runlog_open(path);
        int ok = 0, efbig = 0;
        for (int i = 0; i < 30; i++) {
            if (rm_runlog_event_kv(log, "tick", 1, (const char *[]){"pad=xxxxxxxxxxxxxxxxxx"}) == 0)
                ok++;
            else if (errno == EFBIG && strstr(rm_runlog_errmsg(), "partial line removed"))
                efbig++;
        }
        rm_runlog_close(log);
        _exit(ok > 0 && efbig > 0 && ok + efbig == 30 ? 0 : 11);
    }
    int ws;
    waitpid(pid, &ws, 0);
    assert_true(WIFEXITED(ws));
    assert_int_equal(WEXITSTATUS(ws), 0);
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    assert_true(st.st_size > 0 && st.st_size <= 1000);
    json_t *lines = read_lines(path); /* fails on any partial line */
    assert_true(json_array_size(lines) > 0);
    json_decref(lines);
}

struct thread_arg {
    rm_runlog *log;
    int id;
};

static void *thread_writer(void *p)
{
    struct thread_arg *a = p;
    for (int i = 0; i < 500; i++) {
        json_t *d = json_pack("{s:i, s:i}", "thread", a->id, "seq", i);
        if (rm_runlog_event(a->log, "tick", d) != 0) fail_msg("%s", rm_runlog_errmsg());
        json_decref(d);
    }
    return NULL;
}

static void threads_share_one_handle(void **state)
{
    (void)state;
    rm_runlog *log = rm_runlog_open(path);
    pthread_t th[4];
    struct thread_arg args[4];
    for (int i = 0; i < 4; i++) {
        args[i] = (struct thread_arg){log, i};
        pthread_create(&th[i], NULL, thread_writer, &args[i]);
    }
    for (int i = 0; i < 4; i++)
        pthread_join(th[i], NULL);
    rm_runlog_close(log);
    json_t *lines = read_lines(path);
    assert_int_equal(json_array_size(lines), 2000);
    int seen[4] = {0};
    size_t i;
    json_t *l;
    json_array_foreach(lines, i, l)
    {
        json_t *d = json_object_get(l, "data");
        int t = (int)json_integer_value(json_object_get(d, "thread"));
        assert_int_equal(json_integer_value(json_object_get(d, "seq")), seen[t]++);
    }
    json_decref(lines);
}

/* Metric lines: step only when given, values in order as the shortest round-trip text, the
 * contract's field order; every refused input writes nothing. */
static void metric_lines(void **state)
{
    (void)state;
    rm_runlog *log = rm_runlog_open(path);
    assert_non_null(log);
    const char *names[] = {"loss", "acc", "top-1 acc"};
    const double v[] = {0.41, 1.0, 1e-300};
    assert_int_equal(rm_runlog_metric(log, 120, 3, names, v), 0);
    assert_int_equal(rm_runlog_metric(log, RM_RUNLOG_NO_STEP, 1, names, v), 0);
    const char *kv[] = {"loss=0.5", "acc=-2e-3"};
    assert_int_equal(rm_runlog_metric_kv(log, 0, 2, kv), 0);
    const char *objs[] = {"acc:max", "loss:min:best"};
    assert_int_equal(rm_runlog_objective(log, 2, objs), 0);

    size_t len;
    char *raw = slurp(path, &len);
    assert_non_null(strstr(raw, "\"type\":\"metric\",\"step\":120,\"values\":{\"loss\":0.41,"
                                "\"acc\":1.0,\"top-1 acc\":1e-300},\"pid\":"));
    assert_non_null(strstr(raw, "\"type\":\"metric\",\"values\":{\"loss\":0.41},\"pid\":"));
    assert_non_null(strstr(raw, "\"step\":0,\"values\":{\"loss\":0.5,\"acc\":-0.002}"));
    assert_non_null(strstr(raw, "\"type\":\"objective\",\"objectives\":[{\"metric\":\"acc\","
                                "\"goal\":\"max\",\"pick\":\"last\"},{\"metric\":\"loss\","
                                "\"goal\":\"min\",\"pick\":\"best\"}],\"pid\":"));
    free(raw);
    json_t *lines = read_lines(path);
    assert_int_equal(json_array_size(lines), 4);
    json_decref(lines);

    /* Refused: nothing written, errno EINVAL, a message that names the problem. */
    raw = slurp(path, &len);
    const double nan_v[] = {NAN}, inf_v[] = {INFINITY}, one[] = {1, 2};
    const char *bad_name[] = {"a/b"}, *ctl_name[] = {"a\x1b[31m"}, *twice[] = {"x", "x"};
    assert_int_equal(rm_runlog_metric(log, 1, 1, names, nan_v), -1);
    assert_int_equal(errno, EINVAL);
    assert_non_null(strstr(rm_runlog_errmsg(), "finite"));
    assert_int_equal(rm_runlog_metric(log, 1, 1, names, inf_v), -1);
    assert_int_equal(rm_runlog_metric(log, 1, 1, bad_name, one), -1);
    assert_int_equal(rm_runlog_metric(log, 1, 1, ctl_name, one), -1);
    assert_null(strchr(rm_runlog_errmsg(), '\x1b')); /* quoted escaped, never raw */
    assert_int_equal(rm_runlog_metric(log, 1, 2, twice, one), -1);
    assert_non_null(strstr(rm_runlog_errmsg(), "twice"));
    assert_int_equal(rm_runlog_metric(log, -5, 1, names, one), -1);
    assert_int_equal(rm_runlog_metric(log, 1, 0, names, one), -1);
    static const char *many[1000];
    static double many_v[1000];
    static char many_s[1000][16];
    for (int i = 0; i < 1000; i++) {
        snprintf(many_s[i], sizeof many_s[i], "k%d", i);
        many[i] = many_s[i];
    }
    assert_int_equal(rm_runlog_metric(log, 1, 1000, many, many_v), -1);
    assert_non_null(strstr(rm_runlog_errmsg(), "1 to 256 values, not 1000"));
    assert_int_equal(rm_runlog_metric(log, 1, 256, many, many_v), 0); /* the limit itself */
    free(raw);
    raw = slurp(path, &len);
    const char *bad_kv[][1] = {{"loss=nan"}, {"loss=NaN"},   {"loss=inf"}, {"loss=1e999"},
                               {"loss=abc"}, {"loss=\"1\""}, {"loss"},     {"=1"},
                               {"loss= 1"},  {"loss=0x10"}};
    for (size_t i = 0; i < sizeof bad_kv / sizeof *bad_kv; i++) {
        assert_int_equal(rm_runlog_check_metric_kv(1, 1, bad_kv[i]), -1);
        assert_int_equal(rm_runlog_metric_kv(log, 1, 1, bad_kv[i]), -1);
    }
    const char *esc_kv[] = {"loss=\x1b]0;x\x07"};
    assert_int_equal(rm_runlog_metric_kv(log, 1, 1, esc_kv), -1);
    assert_null(strchr(rm_runlog_errmsg(), '\x1b'));
    assert_non_null(strstr(rm_runlog_errmsg(), "\\x1b"));
    const char *bad_obj[] = {"acc"};
    assert_int_equal(rm_runlog_objective(log, 1, bad_obj), -1);
    assert_int_equal(rm_runlog_objective(log, 0, bad_obj), -1);
    size_t len2;
    char *raw2 = slurp(path, &len2);
    assert_int_equal(len2, len);
    assert_memory_equal(raw, raw2, len);
    free(raw);
    free(raw2);
    assert_int_equal(rm_runlog_close(log), 0);
}

int main(void)
{
    json_object_seed(0);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(phase_line_has_spec_fields, setup, teardown),
        cmocka_unit_test_setup_teardown(metric_lines, setup, teardown),
        cmocka_unit_test_setup_teardown(seconds_are_rounded_to_the_millisecond, setup, teardown),
        cmocka_unit_test_setup_teardown(bad_seconds_and_names_write_nothing, setup, teardown),
        cmocka_unit_test(kv_values_are_typed),
        cmocka_unit_test(kv_bad_arguments_are_refused),
        cmocka_unit_test(seconds_text_is_checked),
        cmocka_unit_test_setup_teardown(nested_phases_have_paths_and_depths, setup, teardown),
        cmocka_unit_test_setup_teardown(events_carry_data_only_when_given, setup, teardown),
        cmocka_unit_test_setup_teardown(open_failure_is_reported, setup, teardown),
        cmocka_unit_test(dev_full_reports_enospc),
        cmocka_unit_test_setup_teardown(removed_file_is_reported, setup, teardown),
        cmocka_unit_test_setup_teardown(file_size_limit_leaves_no_partial_line, setup, teardown),
        cmocka_unit_test_setup_teardown(threads_share_one_handle, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
