#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/fileio.h"
#include "model/streams.h"
#include "monitor/stream.h"
#include "sink/manifest.h"

static json_t *seg(const char *sid, const char *file, const char *stream, int sealed,
                   json_int_t bytes, const char *last)
{
    return json_pack("{s:s,s:s,s:s,s:s,s:b,s:I,s:I,s:s,s:n}", "session_id", sid, "file", file,
                     "stream", stream, "state", sealed ? "sealed" : "active", "pruned", 0, "bytes",
                     bytes, "rows", (json_int_t)10, "last_row_at", last, "aggregate");
}

static json_int_t counter(json_t *m, const char *k)
{
    return json_integer_value(json_object_get(json_object_get(m, "counters"), k));
}

static void test_put_session_replaces(void **st)
{
    (void)st;
    json_t *m = rm_manifest_new();
    rm_manifest_put_session(m, json_pack("{s:s,s:s}", "session_id", "a", "status", "running"));
    rm_manifest_put_session(m, json_pack("{s:s,s:s}", "session_id", "b", "status", "running"));
    rm_manifest_put_session(m, json_pack("{s:s,s:s}", "session_id", "a", "status", "completed"));
    assert_int_equal(json_array_size(json_object_get(m, "sessions")), 2);
    assert_string_equal(
        json_string_value(json_object_get(rm_manifest_find_session(m, "a"), "status")),
        "completed");
    assert_null(rm_manifest_find_session(m, "c"));
    json_decref(m);
}

static void test_pruned_is_sticky(void **st)
{
    (void)st;
    json_t *m = rm_manifest_new();
    rm_manifest_put_segment(m, seg("a", "gpu-000001.csv", "gpu", 1, 100, "t1"));
    json_t *e = rm_manifest_find_segment(m, "a", "gpu-000001.csv");
    json_object_set_new(e, "pruned", json_true());
    json_object_set_new(e, "aggregate", json_pack("{s:s}", "format", "runmon-segment-stats"));
    /* The owner writes its (older) view again: pruned and the aggregate survive. */
    rm_manifest_put_segment(m, seg("a", "gpu-000001.csv", "gpu", 1, 100, "t1"));
    e = rm_manifest_find_segment(m, "a", "gpu-000001.csv");
    assert_true(json_is_true(json_object_get(e, "pruned")));
    assert_true(json_is_object(json_object_get(e, "aggregate")));
    assert_int_equal(json_array_size(json_object_get(m, "segments")), 1);
    /* Same file name in another session is another segment. */
    rm_manifest_put_segment(m, seg("b", "gpu-000001.csv", "gpu", 1, 50, "t2"));
    assert_int_equal(json_array_size(json_object_get(m, "segments")), 2);
    rm_manifest_update_counters(m);
    assert_int_equal(counter(m, "rollover_count"), 2);
    assert_int_equal(counter(m, "pruned_segment_count"), 1);
    assert_int_equal(counter(m, "pruned_bytes"), 100);
    assert_int_equal(counter(m, "final_retained_files"), 1);
    assert_int_equal(counter(m, "final_retained_bytes"), 50);
    json_decref(m);
}

static void test_prune_plan(void **st)
{
    (void)st;
    json_t *m = rm_manifest_new();
    /* Two sessions, interleaved in time; gpu and cpu streams; active files never pruned. */
    rm_manifest_put_segment(m, seg("a", "gpu-000001.csv", "gpu", 1, 10, "2026-01-01T00:00:01"));
    rm_manifest_put_segment(m, seg("b", "gpu-000001.csv", "gpu", 1, 10, "2026-01-01T00:00:02"));
    rm_manifest_put_segment(m, seg("a", "gpu-000002.csv", "gpu", 1, 10, "2026-01-01T00:00:03"));
    rm_manifest_put_segment(m, seg("b", "gpu-000002.csv", "gpu", 1, 10, "2026-01-01T00:00:04"));
    rm_manifest_put_segment(m, seg("a", "cpu-000001.csv", "cpu", 1, 10, "2026-01-01T00:00:00"));
    rm_manifest_put_segment(m, seg("a", "gpu.csv", "gpu", 0, 1000, "2026-01-01T00:00:00"));
    json_t *chosen = json_array();
    assert_int_equal(rm_manifest_plan_prune(m, 2, 0, chosen), 2);
    assert_string_equal(json_string_value(json_object_get(json_array_get(chosen, 0), "session_id")),
                        "a");
    assert_string_equal(json_string_value(json_object_get(json_array_get(chosen, 1), "session_id")),
                        "b");
    assert_string_equal(json_string_value(json_object_get(json_array_get(chosen, 1), "file")),
                        "gpu-000001.csv");
    /* Nothing more per stream; a byte budget then takes the oldest of any stream. */
    assert_int_equal(rm_manifest_plan_prune(m, 2, 0, chosen), 0);
    assert_int_equal(rm_manifest_plan_prune(m, 0, 1015, chosen), 2);
    assert_string_equal(json_string_value(json_object_get(json_array_get(chosen, 2), "file")),
                        "cpu-000001.csv");
    /* Even a budget below the active file never picks it. */
    assert_int_equal(rm_manifest_plan_prune(m, 0, 1, chosen), 1);
    assert_int_equal(rm_manifest_plan_prune(m, 0, 1, chosen), 0);
    assert_false(
        json_is_true(json_object_get(rm_manifest_find_segment(m, "a", "gpu.csv"), "pruned")));
    rm_manifest_update_counters(m);
    assert_int_equal(counter(m, "pruned_segment_count"), 5);
    assert_int_equal(counter(m, "final_retained_files"), 1);
    json_decref(chosen);
    json_decref(m);
}

static void test_save_load(void **st)
{
    (void)st;
    char dir[] = "/tmp/test_manifest.XXXXXX";
    assert_non_null(mkdtemp(dir));
    json_t *m = NULL;
    char err[512];
    assert_int_equal(rm_manifest_load(dir, &m, err, sizeof err), 1);
    m = rm_manifest_new();
    rm_manifest_put_session(m, json_pack("{s:s,s:{s:{s:i},s:i}}", "session_id", "a", "sink",
                                         "rows_dropped", "gpu", 7, "write_errors", 2));
    rm_manifest_put_segment(m, seg("a", "gpu.csv", "gpu", 0, 42, "x"));
    int lk = rm_manifest_lock(dir);
    assert_true(lk >= 0);
    assert_int_equal(rm_manifest_save(dir, m), 0);
    rm_manifest_unlock(lk);
    json_decref(m);
    assert_int_equal(rm_manifest_load(dir, &m, err, sizeof err), 0);
    assert_string_equal(json_string_value(json_object_get(m, "format")), RM_MANIFEST_FORMAT);
    assert_int_equal(counter(m, "rows_dropped"), 7);
    assert_int_equal(counter(m, "write_errors"), 2);
    assert_int_equal(counter(m, "final_retained_bytes"), 42);
    assert_true(json_is_string(json_object_get(m, "updated_at")));
    json_decref(m);
    /* Corrupt, and valid JSON that is not a manifest. */
    char path[600];
    snprintf(path, sizeof path, "%s/manifest.json", dir);
    FILE *f = fopen(path, "w");
    fputs("{\"format\": \"runmon-sink-man", f);
    fclose(f);
    assert_int_equal(rm_manifest_load(dir, &m, err, sizeof err), -1);
    assert_non_null(strstr(err, "manifest.json"));
    f = fopen(path, "w");
    fputs("{\"format\": \"other\", \"sessions\": [], \"segments\": []}", f);
    fclose(f);
    assert_int_equal(rm_manifest_load(dir, &m, err, sizeof err), -1);
    unlink(path);
    snprintf(path, sizeof path, "%s/.manifest.lock", dir);
    unlink(path);
    rmdir(dir);
}

static void test_segment_names(void **st)
{
    (void)st;
    int k = -1, sealed = -1;
    assert_true(rm_segment_parse_name("gpu.csv", &k, &sealed));
    assert_int_equal(k, 0);
    assert_int_equal(sealed, 0);
    assert_true(rm_segment_parse_name("dmon-000012.csv", &k, &sealed));
    assert_int_equal(k, 1);
    assert_int_equal(sealed, 1);
    assert_true(rm_segment_parse_name("proc-1.csv", &k, &sealed));
    assert_int_equal(k, 3);
    assert_false(rm_segment_parse_name("gpu-.csv", &k, &sealed));
    assert_false(rm_segment_parse_name("gpu-12a.csv", &k, &sealed));
    assert_false(rm_segment_parse_name("summary.json", &k, &sealed));
    assert_false(rm_segment_parse_name("gpu.csv.tmp", &k, &sealed));
}

static void test_trim_torn(void **st)
{
    (void)st;
    char path[] = "/tmp/test_trim.XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, "a,b\n1,2\n3,", 10), 10);
    assert_int_equal(rm_file_trim_torn(fd), 2);
    assert_int_equal(lseek(fd, 0, SEEK_END), 8);
    assert_int_equal(rm_file_trim_torn(fd), 0); /* whole lines: untouched */
    assert_int_equal(ftruncate(fd, 0), 0);
    assert_int_equal(pwrite(fd, "no newline", 10, 0), 10);
    assert_int_equal(rm_file_trim_torn(fd), 10);
    close(fd);
    unlink(path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_put_session_replaces), cmocka_unit_test(test_pruned_is_sticky),
        cmocka_unit_test(test_prune_plan),           cmocka_unit_test(test_save_load),
        cmocka_unit_test(test_segment_names),        cmocka_unit_test(test_trim_torn),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
