#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/json.h"
#include "sink/index.h"
#include "sink/manifest.h"
#include "sink/names.h"

/* A scratch sink directory per test. */
static int setup(void **st)
{
    char *dir = strdup("/tmp/runmon-index-XXXXXX");
    assert_non_null(mkdtemp(dir));
    *st = dir;
    return 0;
}

static int teardown(void **st)
{
    char cmd[256];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", (char *)*st);
    assert_int_equal(system(cmd), 0);
    free(*st);
    return 0;
}

/* A session document with one active segment of `bytes` bytes. */
static json_t *doc(const char *id, const char *status, json_int_t bytes)
{
    json_t *d = rm_manifest_new();
    rm_manifest_put_session(d, json_pack("{s:s,s:s,s:s,s:i,s:s}", "session_id", id, "status",
                                         status, "host", "h", "pid", 1, "started_at", id));
    json_t *seg = rm_manifest_segment_entry(id, "gpu.csv", 0, 0, 1, (uint64_t)bytes, 0, 0);
    json_object_set_new(seg, "aggregate", json_null());
    rm_manifest_put_segment(d, seg);
    return d;
}

static void append(const char *dir, const char *id, const char *status, json_int_t bytes,
                   int supersedes, json_t *tot)
{
    json_t *d = doc(id, status, bytes);
    json_t *l = rm_index_line(d, supersedes ? "ended" : "created");
    assert_int_equal(rm_index_append(dir, l, supersedes, tot), 0);
    json_decref(l);
    json_decref(d);
}

struct seen {
    char text[1024];
};

static int collect(void *ctx, const struct rm_index_rec *r)
{
    struct seen *s = ctx;
    size_t n = strlen(s->text);
    snprintf(s->text + n, sizeof s->text - n, "%s:%s:%lld ", r->session_id, r->status, r->bytes);
    return 0;
}

static const char *listing(const char *dir, struct seen *s)
{
    char err[512];
    s->text[0] = '\0';
    assert_int_equal(rm_index_each(dir, collect, s, err, sizeof err), 0);
    return s->text;
}

static long lines_of(const char *dir)
{
    char path[512];
    snprintf(path, sizeof path, "%s/index.jsonl", dir);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    long n = 0;
    for (int c; (c = fgetc(f)) != EOF;)
        n += c == '\n';
    fclose(f);
    return n;
}

/* Each session once, in the order of its first line, with its newest line's content. */
static void test_newest_line_in_first_order(void **st)
{
    const char *dir = *st;
    struct seen s;
    char err[512];
    assert_int_equal(rm_index_each(dir, collect, &s, err, sizeof err), 1); /* no index */
    json_t *tot = rm_totals_new();
    append(dir, "a", "running", 0, 0, tot);
    append(dir, "b", "running", 0, 0, tot);
    append(dir, "c", "running", 0, 0, tot);
    append(dir, "b", "completed", 20, 1, tot);
    append(dir, "a", "failed", 10, 1, tot);
    append(dir, "a", "failed", 11, 1, tot); /* pruned later: newer bytes */
    assert_string_equal(listing(dir, &s), "a:failed:11 b:completed:20 c:running:0 ");
    json_t *ix = json_object_get(tot, "index");
    assert_int_equal(json_integer_value(json_object_get(ix, "lines")), 6);
    assert_int_equal(json_integer_value(json_object_get(ix, "dead")), 3);
    json_decref(tot);
}

/* A torn last line (a writer died mid-write) is not read, and the next append cuts it. */
static void test_torn_line(void **st)
{
    const char *dir = *st;
    struct seen s;
    append(dir, "a", "running", 0, 0, NULL);
    char path[512];
    snprintf(path, sizeof path, "%s/index.jsonl", dir);
    FILE *f = fopen(path, "a");
    fputs("{\"event\":\"ended\",\"session_id\":\"a\",\"status\":\"comp", f);
    fclose(f);
    assert_string_equal(listing(dir, &s), "a:running:0 ");
    append(dir, "b", "running", 0, 0, NULL);
    assert_string_equal(listing(dir, &s), "a:running:0 b:running:0 ");
    assert_int_equal(lines_of(dir), 3);
}

/* Lines that are not a session of the sink's form are skipped; a bad header is an error. */
static void test_bad_lines_and_header(void **st)
{
    const char *dir = *st;
    struct seen s;
    char err[512], path[512];
    append(dir, "a", "running", 0, 0, NULL);
    snprintf(path, sizeof path, "%s/index.jsonl", dir);
    FILE *f = fopen(path, "a");
    fputs("not json at all\n{\"session_id\":\"../x\",\"status\":\"completed\"}\n", f);
    fclose(f);
    assert_string_equal(listing(dir, &s), "a:running:0 ");
    f = fopen(path, "w");
    fputs("{\"format\": \"runmon-sink-ind\n", f);
    fclose(f);
    assert_int_equal(rm_index_each(dir, collect, &s, err, sizeof err), -1);
    assert_non_null(strstr(err, "not a runmon sink index"));
}

/* Compaction: one line per session, same listing, counters reset; not before the minimum. */
static void test_compaction(void **st)
{
    const char *dir = *st;
    struct seen s;
    json_t *tot = rm_totals_new();
    char id[32];
    for (int i = 0; i < 40; i++) {
        snprintf(id, sizeof id, "s%02d", i);
        append(dir, id, "running", 0, 0, tot);
        append(dir, id, "completed", i, 1, tot);
    }
    assert_int_equal(rm_index_maybe_compact(dir, tot), 0); /* 40 dead: under the minimum */
    for (int i = 40; i < 70; i++) {
        snprintf(id, sizeof id, "s%02d", i);
        append(dir, id, "running", 0, 0, tot);
        append(dir, id, "completed", i, 1, tot);
    }
    char before[1024];
    snprintf(before, sizeof before, "%s", listing(dir, &s));
    assert_int_equal(lines_of(dir), 141);
    assert_int_equal(rm_index_maybe_compact(dir, tot), 1);
    assert_int_equal(lines_of(dir), 71);
    assert_string_equal(listing(dir, &s), before);
    json_t *ix = json_object_get(tot, "index");
    assert_int_equal(json_integer_value(json_object_get(ix, "lines")), 70);
    assert_int_equal(json_integer_value(json_object_get(ix, "dead")), 0);
    assert_int_equal(rm_index_maybe_compact(dir, tot), 0);
    json_decref(tot);
}

/* Totals: running contributions, finishing, sealed segments and retention across sessions. */
static void test_totals_retention(void **st)
{
    const char *dir = *st;
    json_t *t = rm_totals_new();
    json_t *d = doc("a", "running", 100);
    rm_totals_set_running(t, "a", "h", 1, rm_totals_contribution(d));
    for (int i = 1; i <= 3; i++) {
        char file[32], last[32];
        snprintf(file, sizeof file, "gpu-%06d.csv", i);
        snprintf(last, sizeof last, "2026-01-01T00:00:0%d", i);
        json_t *seg = rm_manifest_segment_entry("b", file, 0, 1, 1, 50, 0, 0);
        json_object_set_new(seg, "last_row_at", json_string(last));
        rm_totals_add_sealed(t, seg);
        rm_totals_add_sealed(t, seg); /* idempotent */
        json_decref(seg);
    }
    assert_int_equal(rm_totals_save(dir, t), 0);
    json_t *c = json_object_get(t, "counters");
    assert_int_equal(json_integer_value(json_object_get(c, "rollover_count")), 3);
    assert_int_equal(json_integer_value(json_object_get(c, "final_retained_files")), 4);
    assert_int_equal(json_integer_value(json_object_get(c, "final_retained_bytes")), 250);
    json_t *chosen = rm_totals_plan_prune(t, 1, 0);
    assert_int_equal(json_array_size(chosen), 2);
    assert_string_equal(rm_jget_str(json_array_get(chosen, 0), "file"), "gpu-000001.csv");
    /* chosen, not yet deleted: still on disk, so still retained, and not listed again */
    assert_int_equal(json_array_size(json_object_get(t, "pruning")), 2);
    json_t *again = rm_manifest_segment_entry("b", "gpu-000001.csv", 0, 1, 1, 50, 0, 0);
    rm_totals_add_sealed(t, again);
    json_decref(again);
    assert_int_equal(rm_totals_save(dir, t), 0);
    assert_int_equal(json_integer_value(json_object_get(c, "final_retained_files")), 4);
    for (size_t i = 0; i < json_array_size(chosen); i++)
        rm_totals_pruned(t, "b", rm_jget_str(json_array_get(chosen, i), "file"));
    assert_null(json_object_get(t, "pruning"));
    json_decref(chosen);
    chosen = rm_totals_plan_prune(t, 0, 120); /* 100 active + 50: the last sealed goes */
    assert_int_equal(json_array_size(chosen), 1);
    rm_totals_pruned(t, "b", rm_jget_str(json_array_get(chosen, 0), "file"));
    json_decref(chosen);
    rm_totals_finish(t, "a", rm_totals_contribution(d));
    assert_int_equal(rm_totals_save(dir, t), 0);
    json_decref(t);
    assert_int_equal(rm_totals_load(dir, &t), 0);
    c = json_object_get(t, "counters");
    assert_int_equal(json_integer_value(json_object_get(c, "pruned_segment_count")), 3);
    assert_int_equal(json_integer_value(json_object_get(c, "pruned_bytes")), 150);
    assert_int_equal(json_integer_value(json_object_get(c, "final_retained_files")), 1);
    assert_int_equal(json_integer_value(json_object_get(c, "final_retained_bytes")), 100);
    assert_int_equal(json_object_size(json_object_get(t, "running")), 0);
    json_decref(t);
    json_decref(d);
}

/* A session's newest whole line, read back from the end: not a torn last line, not past
 * `from`, found across read blocks (64 KiB) and behind a line longer than one. */
static void test_newest_backwards(void **st)
{
    const char *dir = *st;
    append(dir, "a", "running", 0, 0, NULL);
    int64_t from = rm_index_size(dir);
    append(dir, "b", "running", 0, 0, NULL);
    append(dir, "a", "completed", 7, 1, NULL);
    for (int i = 0; i < 300; i++) { /* 300 lines of others after it (75 KB) */
        char id[32];
        snprintf(id, sizeof id, "x%d", i);
        append(dir, id, "running", 0, 0, NULL);
    }
    char *big = malloc(100001); /* and one line of 100 KB */
    memset(big, 'w', 100000);
    big[100000] = '\0';
    json_t *bl = json_pack("{s:s,s:s,s:s,s:[s]}", "event", "created", "session_id", "long",
                           "status", "running", "command", big);
    assert_int_equal(rm_index_append(dir, bl, 0, NULL), 0);
    json_decref(bl);
    free(big);
    append(dir, "x1", "completed", 0, 1, NULL);
    char path[512];
    snprintf(path, sizeof path, "%s/index.jsonl", dir);
    FILE *f = fopen(path, "a");
    fputs("{\"event\":\"ended\",\"session_id\":\"b\",\"status\":\"fail", f); /* torn */
    fclose(f);
    json_t *l = rm_index_newest(dir, "a", 0);
    assert_non_null(l);
    assert_string_equal(rm_jget_str(l, "status"), "completed");
    json_decref(l);
    l = rm_index_newest(dir, "b", from);
    assert_non_null(l);
    assert_string_equal(rm_jget_str(l, "status"), "running"); /* its torn line is not it */
    json_decref(l);
    assert_null(rm_index_newest(dir, "zz", 0));
    l = rm_index_newest(dir, "x0", 0);
    assert_non_null(l);
    json_decref(l);
    l = rm_index_newest(dir, "long", 0);
    assert_non_null(l);
    assert_int_equal(strlen(json_string_value(json_array_get(json_object_get(l, "command"), 0))),
                     100000);
    json_decref(l);
    /* the torn line is cut, and named */
    char id[64];
    assert_int_equal(rm_index_cut_torn(dir, id, sizeof id), 1);
    assert_string_equal(id, "b");
    assert_int_equal(rm_index_cut_torn(dir, id, sizeof id), 0);
    assert_int_equal(lines_of(dir), 306);
}

/* Retention deletes sealed segments only: an active file's name is refused (and counted). */
static void test_unlink_only_sealed(void **st)
{
    const char *dir = *st;
    char path[512];
    snprintf(path, sizeof path, "%s/s1", dir);
    assert_int_equal(mkdir(path, 0755), 0);
    const char *files[] = {"gpu.csv", "gpu-000001.csv"};
    for (int i = 0; i < 2; i++) {
        snprintf(path, sizeof path, "%s/s1/%s", dir, files[i]);
        FILE *f = fopen(path, "w");
        assert_non_null(f);
        fclose(f);
    }
    long before = rm_sink_ignored_entries();
    assert_int_equal(rm_sink_unlink_segment(dir, "s1", "gpu.csv"), -1);
    assert_int_equal(errno, EINVAL);
    assert_int_equal(rm_sink_ignored_entries(), before + 1);
    snprintf(path, sizeof path, "%s/s1/gpu.csv", dir);
    assert_int_equal(access(path, F_OK), 0);
    assert_int_equal(rm_sink_unlink_segment(dir, "s1", "gpu-000001.csv"), 0);
    snprintf(path, sizeof path, "%s/s1/gpu-000001.csv", dir);
    assert_int_not_equal(access(path, F_OK), 0);
}

/* The confinement rule: a segment entry's name must fit its state. */
static void test_confine_state_names(void **st)
{
    const char *dir = *st;
    json_t *m = rm_manifest_new();
    json_t *segs = json_object_get(m, "segments");
    struct {
        const char *file, *state;
        int kept;
    } cases[] = {{"gpu.csv", "active", 1},    {"gpu-000001.csv", "sealed", 1},
                 {"gpu.csv", "sealed", 0},    {"gpu-000002.csv", "active", 0},
                 {"gpu-000003.csv", NULL, 1}, {"cpu.csv", NULL, 0},
                 {"gpu-.csv", "sealed", 0},   {"../gpu-000004.csv", "sealed", 0}};
    size_t n = sizeof cases / sizeof *cases, kept = 0;
    for (size_t i = 0; i < n; i++) {
        json_t *e = json_pack("{s:s,s:s,s:s}", "session_id", "s1", "file", cases[i].file, "stream",
                              strncmp(cases[i].file, "cpu", 3) ? "gpu" : "cpu");
        if (cases[i].state) json_object_set_new(e, "state", json_string(cases[i].state));
        json_array_append_new(segs, e);
        kept += (size_t)cases[i].kept;
    }
    assert_int_equal(rm_manifest_confine(m, dir, "test"), (int)(n - kept));
    assert_int_equal(json_array_size(segs), kept);
    json_decref(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_newest_line_in_first_order, setup, teardown),
        cmocka_unit_test_setup_teardown(test_torn_line, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bad_lines_and_header, setup, teardown),
        cmocka_unit_test_setup_teardown(test_compaction, setup, teardown),
        cmocka_unit_test_setup_teardown(test_totals_retention, setup, teardown),
        cmocka_unit_test_setup_teardown(test_newest_backwards, setup, teardown),
        cmocka_unit_test_setup_teardown(test_unlink_only_sealed, setup, teardown),
        cmocka_unit_test_setup_teardown(test_confine_state_names, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
