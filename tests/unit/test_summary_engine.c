/* The engine: pre-aggregated segments (what a sink manifest will hold) summarize exactly
 * like the raw rows, and a bare file works without any session folder. */
#include <math.h>
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

static json_t *phase_gpus(json_t *j, size_t phase)
{
    return json_object_get(json_array_get(json_object_get(j, "phases"), phase), "gpus");
}

static double gnum(json_t *gpus, size_t i, const char *k)
{
    json_t *v = json_object_get(json_array_get(gpus, i), k);
    assert_true(json_is_number(v));
    return json_number_value(v);
}

static json_t *summarize(const char *f1, const char *f2, const char *runlog)
{
    struct rm_summary_opts opts = {.interval_s = 1};
    struct rm_summary *s = rm_summary_new(&opts);
    assert_int_equal(rm_summary_add_file(s, RM_INPUT_GPU_CSV, f1), 0);
    if (f2) assert_int_equal(rm_summary_add_file(s, RM_INPUT_GPU_CSV, f2), 0);
    assert_int_equal(rm_summary_add_runlog(s, runlog), 0);
    json_t *j;
    char err[256];
    assert_int_equal(rm_summary_build(s, &j, err, sizeof err), 0);
    rm_summary_free(s);
    return j;
}

/* A phase's energy is the integral of the power line inside its own windows, clipped at
 * their edges, also where the files split inside a spacing; a window between two samples
 * gets its share, and time between the windows is never bridged. */
static void phase_energy_inside_windows(void **state)
{
    (void)state;
    char dir[] = "/tmp/rm-engine-XXXXXX", whole[64], s1[64], s2[64], rl[64];
    assert_non_null(mkdtemp(dir));
    snprintf(whole, sizeof whole, "%s/whole.csv", dir);
    snprintf(s1, sizeof s1, "%s/s1.csv", dir);
    snprintf(s2, sizeof s2, "%s/s2.csv", dir);
    snprintf(rl, sizeof rl, "%s/runlog.jsonl", dir);
    write_file(whole, 1, 9);
    write_file(s1, 1, 5); /* split inside the spacing 10:00:01 -> 10:00:02 */
    write_file(s2, 5, 9);
    FILE *f = fopen(rl, "w");
    assert_non_null(f);
    /* p: [0.5, 1.5) and [1.75, 1.8), a window between the samples at 1 and 2. */
    fputs("{\"ts\": \"2026-11-21T10:00:01.500+00:00\", \"type\": \"phase\", \"pid\": 1, "
          "\"name\": \"p\", \"path\": \"p\", \"seconds\": 1.0}\n"
          "{\"ts\": \"2026-11-21T10:00:01.800+00:00\", \"type\": \"phase\", \"pid\": 1, "
          "\"name\": \"p\", \"path\": \"p\", \"seconds\": 0.05}\n"
          "{\"ts\": \"2026-11-21T10:00:01.790+00:00\", \"type\": \"phase\", \"pid\": 1, "
          "\"name\": \"q\", \"path\": \"q\", \"seconds\": 0.02}\n",
          f);
    fclose(f);
    json_t *a = summarize(whole, NULL, rl), *b = summarize(s1, s2, rl);
    /* GPU0 (100, 200, 100 W at 0, 1, 2 s): [0.5,1] 87.5 J, [1,1.5] 87.5 J, [1.75,1.8]
     * (125 -> 120 W) 6.125 J = 181.125 J over 1.05 s. GPU1: 50 W x 1.05 s. */
    json_t *pa = phase_gpus(a, 0), *pb = phase_gpus(b, 0);
    assert_true(fabs(gnum(pa, 0, "energy_wh") - 181.125 / 3600) < 1e-6);
    assert_true(fabs(gnum(pa, 0, "sampled_seconds") - 1.05) < 1e-9);
    assert_true(fabs(gnum(pa, 1, "energy_wh") - 52.5 / 3600) < 1e-6);
    for (size_t i = 0; i < 2; i++) {
        assert_true(gnum(pa, i, "energy_wh") == gnum(pb, i, "energy_wh"));
        assert_true(gnum(pa, i, "sampled_seconds") == gnum(pb, i, "sampled_seconds"));
        assert_true(gnum(pa, i, "samples") == gnum(pb, i, "samples"));
    }
    /* q = [1.77, 1.79): no sample inside, its interpolated share (123 -> 121 W) x 0.02 s. */
    json_t *qa = phase_gpus(a, 1), *qb = phase_gpus(b, 1);
    assert_int_equal(json_array_size(qa), 2);
    assert_true(gnum(qa, 0, "samples") == 0);
    assert_true(fabs(gnum(qa, 0, "energy_wh") - 122.0 * 0.02 / 3600) < 1e-6);
    assert_true(fabs(gnum(qa, 0, "sampled_seconds") - 0.02) < 1e-9);
    assert_true(gnum(qa, 0, "energy_wh") == gnum(qb, 0, "energy_wh"));
    json_decref(a);
    json_decref(b);
    remove(whole);
    remove(s1);
    remove(s2);
    remove(rl);
    remove(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(segments_equal_rows),
        cmocka_unit_test(phase_energy_inside_windows),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
