/* The engine: pre-aggregated segments (what a sink manifest will hold) summarize exactly
 * like the raw rows, and a bare file works without any session folder. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "summary/summary.h"

static const char *rows[] = {
    "ts,index,utilization.gpu,power.draw,memory.used\n",
    "2026-11-21T10:00:00.000+00:00,0,10,100,5\n",
    "2026-11-21T10:00:00.000+00:00,1,0,50,6\n",
    "2026-11-21T10:00:01.000+00:00,0,20,200,7\n",
    "2026-11-21T10:00:01.000+00:00,1,0,50,6\n",
    "2026-11-21T10:00:02.000+00:00,0,30,100,5\n",
    "2026-11-21T10:00:02.000+00:00,1,[N/A],50,6\n",
    "2026-11-21T10:00:09.000+00:00,0,40,300,9\n",
    "2026-11-21T10:00:09.000+00:00,1,0,50,6\n",
};

static void write_file(const char *path, size_t from, size_t to)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(rows[0], f);
    for (size_t i = from; i < to; i++)
        fputs(rows[i], f);
    fclose(f);
}

static double num(json_t *o, const char *a, size_t i, const char *b)
{
    json_t *v = json_object_get(json_array_get(json_object_get(o, a), i), b);
    assert_true(json_is_number(v));
    return json_number_value(v);
}

static void segments_equal_rows(void **state)
{
    (void)state;
    char dir[] = "/tmp/rm-engine-XXXXXX", whole[64], s1[64], s2[64], err[256];
    assert_non_null(mkdtemp(dir));
    snprintf(whole, sizeof whole, "%s/whole.csv", dir);
    snprintf(s1, sizeof s1, "%s/s1.csv", dir);
    snprintf(s2, sizeof s2, "%s/s2.csv", dir);
    write_file(whole, 1, 9);
    write_file(s1, 1, 5); /* split inside bridged time: 10:00:01 -> 10:00:02 */
    write_file(s2, 5, 9);
    struct rm_summary_opts opts = {.interval_s = 1};

    struct rm_summary *a = rm_summary_new(&opts);
    rm_summary_add_file(a, RM_INPUT_GPU_CSV, whole);
    json_t *ja;
    assert_int_equal(rm_summary_build(a, &ja, err, sizeof err), 0);

    json_t *g1 = rm_summary_segment_from_file(RM_INPUT_GPU_CSV, s1, 1, err, sizeof err);
    json_t *g2 = rm_summary_segment_from_file(RM_INPUT_GPU_CSV, s2, 1, err, sizeof err);
    assert_non_null(g1);
    assert_non_null(g2);
    /* Through text, as a manifest would store them. */
    char *t1 = json_dumps(g1, JSON_REAL_PRECISION(17)),
         *t2 = json_dumps(g2, JSON_REAL_PRECISION(17));
    json_t *l1 = json_loads(t1, 0, NULL), *l2 = json_loads(t2, 0, NULL);
    struct rm_summary *b = rm_summary_new(&opts);
    assert_int_equal(rm_summary_add_segment(b, l1, err, sizeof err), 0);
    assert_int_equal(rm_summary_add_segment(b, l2, err, sizeof err), 0);
    json_t *jb;
    assert_int_equal(rm_summary_build(b, &jb, err, sizeof err), 0);

    /* GPU0: 150 + 150 J bridged, 7 s gap left out = 300 J. */
    assert_true(num(ja, "gpus", 0, "energy_wh") == 300.0 / 3600 ||
                num(ja, "gpus", 0, "energy_wh") == 0.083333);
    for (size_t i = 0; i < 2; i++) {
        assert_true(num(ja, "gpus", i, "energy_wh") == num(jb, "gpus", i, "energy_wh"));
        assert_true(num(ja, "gpus", i, "idle_share") == num(jb, "gpus", i, "idle_share"));
        assert_true(num(ja, "gpus", i, "samples") == num(jb, "gpus", i, "samples"));
        assert_true(num(ja, "gpus", i, "sampled_seconds") == num(jb, "gpus", i, "sampled_seconds"));
    }
    json_t *ta = json_object_get(json_object_get(ja, "totals"), "power_w");
    json_t *tb = json_object_get(json_object_get(jb, "totals"), "power_w");
    assert_true(json_equal(ta, tb));
    assert_true(json_number_value(json_object_get(jb, "gpu_util_mean_pct")) == 14.286); /* 100/7 */

    /* A garbage segment is refused with a reason. */
    json_t *bad = json_pack("{s:s}", "kind", "nope");
    assert_int_equal(rm_summary_add_segment(b, bad, err, sizeof err), -1);
    assert_non_null(strstr(err, "segment"));

    json_decref(bad);
    free(t1);
    free(t2);
    json_decref(l1);
    json_decref(l2);
    json_decref(g1);
    json_decref(g2);
    json_decref(ja);
    json_decref(jb);
    rm_summary_free(a);
    rm_summary_free(b);
    remove(whole);
    remove(s1);
    remove(s2);
    remove(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(segments_equal_rows),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
