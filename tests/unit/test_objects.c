/* The table of the run's and phases' objects (model/objects.c) is complete and its outputs'
 * places agree, and summary/ writes each object from its rows: every row has a key (or a
 * path "a.b") and a unit and belongs to an object; an object's rows are together, its keys
 * its own and the rows of one path's member together; the text lines, each object's table by
 * phase and the report's phase columns have their figures at places 1, 2, ... with no hole
 * and no place taken twice; each object has an engine that gives every row a value (the
 * host's objects, cpu and proc, from the host's stats); the run's copy goes where its object
 * says (the document or "totals"), a row written beside it after it. A row left half filled
 * (the first step of adding a figure) fails here, not as a shifted column in some output. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/json.h"
#include "model/objective.h"
#include "model/objects.h"
#include "summary/iocsv.h"
#include "summary/objects.h"
#include "summary/sample.h"
#include "summary/stallcsv.h"

static void test_every_object_is_complete(void **state)
{
    (void)state;
    for (int o = 0; o < RM_OBJ_COUNT; o++) {
        assert_non_null(rm_objects[o].key);
        assert_true(rm_objects[o].key[0] != '\0');
        for (int p = 0; p < o; p++)
            assert_string_not_equal(rm_objects[p].key, rm_objects[o].key);
        const struct rm_obj_engine *e = rm_obj_engine(o);
        assert_non_null(e);
        assert_non_null(e->figure);
        if (rm_objects[o].host) {
            /* fed by the host's stats that build.c merges: no aggregate of its own */
            assert_null(e->agg_new), assert_null(e->agg_merge), assert_null(e->run);
            assert_null(e->phase), assert_null(e->acc_new), assert_null(e->own_json);
        } else {
            assert_non_null(e->agg_new), assert_non_null(e->agg_free);
            assert_non_null(e->agg_merge), assert_non_null(e->run), assert_non_null(e->phase);
            assert_non_null(e->acc_new), assert_non_null(e->acc_merge);
            assert_non_null(e->acc_free);
        }
        /* "totals" is no object's key: the objects in it sit beside its own members */
        assert_string_not_equal(rm_objects[o].key, "totals");
        /* a phase table needs a title, and a title a table */
        assert_int_equal(rm_objects[o].text.phase_title != NULL, rm_obj_phases_at(o, 1) >= 0);
        /* text lines need the lead, and the lead lines */
        assert_int_equal(rm_objects[o].text.lead != NULL, rm_obj_text_at(o, 1, 1) >= 0);
    }
}

static void test_every_row_is_complete(void **state)
{
    (void)state;
    int last_obj = -1;
    bool done[RM_OBJ_COUNT] = {false};
    for (int f = 0; f < RM_OF_COUNT; f++) {
        const struct rm_obj_figure *r = &rm_obj_figures[f];
        assert_true(r->obj >= 0 && r->obj < RM_OBJ_COUNT);
        assert_non_null(r->key);
        assert_non_null(r->unit);
        assert_true(r->key[0] != '\0');
        assert_true(r->dec >= 0 && r->dec <= 6);
        /* an object's rows are together, in the document's order */
        if (r->obj != last_obj) {
            assert_false(done[r->obj]);
            if (last_obj >= 0) done[last_obj] = true;
            last_obj = r->obj;
        }
        for (int g = 0; g < f; g++)
            if (rm_obj_figures[g].obj == r->obj)
                assert_string_not_equal(rm_obj_figures[g].key, r->key);
        /* an array is the run's (its devices), never a phase's, and no text cell */
        if (r->kind == RM_OK_JSON) {
            assert_true(r->run_only);
            assert_int_equal(r->shown, 0);
            assert_non_null(rm_obj_engine(r->obj)->own_json);
        }
        assert_int_equal(r->shown & ~(unsigned)(RM_OF_IN_TEXT | RM_OF_IN_PHASES | RM_OF_IN_REPORT),
                         0);
        /* a place without its flag, or a flag without its place */
        assert_int_equal((r->shown & RM_OF_IN_TEXT) != 0, r->text.line > 0 && r->text.pos > 0);
        if (r->shown & RM_OF_IN_TEXT) assert_true(r->text.pre && r->text.post);
        assert_int_equal((r->shown & RM_OF_IN_PHASES) != 0,
                         r->phases.col > 0 && r->phases.head && r->phases.width > 0);
        assert_int_equal((r->shown & RM_OF_IN_REPORT) != 0, r->report.col > 0 && r->report.head);
        /* a phase's table and the report's phase table show what every phase row has */
        if (r->shown & (RM_OF_IN_PHASES | RM_OF_IN_REPORT)) assert_false(r->run_only);
    }
}

/* The length of path's first step ("usr_pct" of "usr_pct.mean"; all of a plain key). */
static size_t first_step(const char *path)
{
    const char *d = strchr(path, '.');
    return d ? (size_t)(d - path) : strlen(path);
}

/* A key is a plain member or a path of non-empty steps; a path's rows are together in their
 * object (written in order, the member made at the first), and no plain key of the object is
 * a path's first step (the one would overwrite the other). */
static void test_keys_and_paths(void **state)
{
    (void)state;
    for (int f = 0; f < RM_OF_COUNT; f++) {
        const struct rm_obj_figure *r = &rm_obj_figures[f];
        size_t n = strlen(r->key);
        assert_true(n > 0 && r->key[0] != '.' && r->key[n - 1] != '.' && !strstr(r->key, ".."));
        size_t step = first_step(r->key);
        for (int g = 0; g < f; g++) {
            const struct rm_obj_figure *q = &rm_obj_figures[g];
            if (q->obj != r->obj || q->beside != r->beside) continue;
            bool same = first_step(q->key) == step && !strncmp(q->key, r->key, step);
            if (!same) continue;
            /* a plain key and a path through it, or a path's rows apart */
            assert_true(strchr(q->key, '.') && strchr(r->key, '.'));
            assert_int_equal(rm_obj_figures[f - 1].obj, r->obj);
            assert_true(first_step(rm_obj_figures[f - 1].key) == step &&
                        !strncmp(rm_obj_figures[f - 1].key, r->key, step));
        }
        /* a row beside its object is the run's, a number, and no object's key */
        if (r->beside) {
            assert_true(r->run_only);
            assert_int_not_equal(r->kind, RM_OK_JSON);
            for (int o = 0; o < RM_OBJ_COUNT; o++)
                assert_string_not_equal(rm_objects[o].key, r->key);
        }
    }
}

/* Places 1..n each taken once: a hole or a double fails. */
static void test_places_have_no_hole(void **state)
{
    (void)state;
    for (int o = 0; o < RM_OBJ_COUNT; o++) {
        int lines = 0, cols = 0, texts = 0, places = 0;
        for (int f = 0; f < RM_OF_COUNT; f++) {
            const struct rm_obj_figure *r = &rm_obj_figures[f];
            if (r->obj != o) continue;
            if (r->shown & RM_OF_IN_TEXT) {
                texts++;
                if (r->text.line > lines) lines = r->text.line;
                int same = 0;
                for (int g = 0; g < RM_OF_COUNT; g++)
                    same += rm_obj_figures[g].obj == o &&
                            (rm_obj_figures[g].shown & RM_OF_IN_TEXT) &&
                            rm_obj_figures[g].text.line == r->text.line &&
                            rm_obj_figures[g].text.pos == r->text.pos;
                assert_int_equal(same, 1);
            }
            if (r->shown & RM_OF_IN_PHASES) cols++;
        }
        for (int l = 1; l <= lines; l++)
            for (int p = 1; rm_obj_text_at(o, l, p) >= 0; p++)
                places++;
        assert_int_equal(places, texts); /* every text figure reached from place 1 of its line */
        for (int c = 1; c <= cols; c++)
            assert_true(rm_obj_phases_at(o, c) >= 0);
        assert_int_equal(rm_obj_phases_at(o, cols + 1), -1);
    }
    int report = 0;
    for (int f = 0; f < RM_OF_COUNT; f++)
        report += (rm_obj_figures[f].shown & RM_OF_IN_REPORT) != 0;
    assert_true(report <= RM_OBJ_REPORT_MAX);
    for (int c = 1; c <= report; c++)
        assert_true(rm_obj_report_at(c) >= 0);
    assert_int_equal(rm_obj_report_at(report + 1), -1);
}

/* The leaves of JSON object o as paths, in order: "usr_pct.mean" for member mean of member
 * usr_pct (an array is a leaf). */
static size_t leaf_paths(const json_t *o, const char *pre, char out[][64], size_t n, size_t cap)
{
    const char *k;
    const json_t *v;
    json_object_foreach((json_t *)o, k, v)
    {
        char path[64];
        snprintf(path, sizeof path, "%s%s%s", pre, *pre ? "." : "", k);
        if (json_is_object(v)) {
            n = leaf_paths(v, path, out, n, cap);
        } else {
            assert_true(n < cap);
            memcpy(out[n++], path, sizeof path);
        }
    }
    return n;
}

/* An empty accumulator and aggregate of object o (freed by free_empty). */
static void *empty_agg(int o, size_t nph)
{
    if (rm_objects[o].host) return calloc(1, sizeof(struct rm_host_stats));
    return rm_obj_engine(o)->agg_new(nph);
}

static void free_empty(int o, void *agg)
{
    if (rm_objects[o].host)
        free(agg);
    else
        rm_obj_engine(o)->agg_free(agg);
}

/* The document's object: every row's key (or path) in table order, the run-only ones with the
 * run's aggregate only, a row beside its object in what holds the run's copy right after it,
 * and each value the engine's (an empty aggregate: unknown, so null, but for the counts). */
static void test_json_walks_the_rows(void **state)
{
    (void)state;
    for (int o = 0; o < RM_OBJ_COUNT; o++) {
        const struct rm_obj_engine *e = rm_obj_engine(o);
        bool host = rm_objects[o].host;
        void *agg = empty_agg(o, 2);
        const void *run_acc = host ? agg : e->run(agg), *ph_acc = host ? agg : e->phase(agg, 0);
        json_t *in = json_object();
        rm_obj_put(in, o, run_acc, agg);
        json_t *run = json_object_get(in, rm_objects[o].key), *ph = rm_obj_json(o, ph_acc, NULL);
        char rp[64][64], pp[64][64], bp[64][64];
        size_t nr = leaf_paths(run, "", rp, 0, 64), np = leaf_paths(ph, "", pp, 0, 64),
               nb = leaf_paths(in, "", bp, 0, 64);
        size_t ir = 0, ip = 0, ib = nr; /* in's leaves: the object's, then those beside it */
        json_t *row = json_pack("{s:O}", rm_objects[o].key, ph); /* a phase row's */
        assert_string_equal(json_object_iter_key(json_object_iter(in)), rm_objects[o].key);
        for (int f = 0; f < RM_OF_COUNT; f++) {
            const struct rm_obj_figure *r = &rm_obj_figures[f];
            if (r->obj != o) continue;
            assert_non_null(rm_obj_at(in, f)); /* read back where it was written */
            if (r->beside) {
                assert_true(ib < nb);
                assert_string_equal(bp[ib++], r->key);
                assert_null(rm_json_at(run, r->key));
                continue;
            }
            assert_true(ir < nr);
            assert_string_equal(rp[ir++], r->key);
            if (r->run_only) {
                assert_null(rm_json_at(ph, r->key));
            } else {
                assert_true(ip < np);
                assert_string_equal(pp[ip++], r->key);
                assert_non_null(rm_obj_at(row, f));
            }
        }
        assert_int_equal(ir, nr);
        assert_int_equal(ip, np);
        assert_int_equal(ib, nb);
        json_decref(in);
        json_decref(ph);
        json_decref(row);
        free_empty(o, agg);
    }
}

/* Each row's value is the engine's computation: a stall row's figures through the table. */
static void test_stall_values_through_the_table(void **state)
{
    (void)state;
    struct rm_stall_acc a = {.samples = 4,
                             .blocked_samples = 2,
                             .thread_samples = 8,
                             .run_ns = 1e8,
                             .wait_ns = 1e8,
                             .dt_ns = 4e8};
    const struct rm_obj_engine *e = rm_obj_engine(RM_OBJ_STALL);
    assert_true(fabs(e->figure(&a, NULL, RM_OF_STALL_WAIT_SHARE) - 0.5) < 1e-12);
    assert_true(fabs(e->figure(&a, NULL, RM_OF_STALL_THREADS_MEAN) - 2) < 1e-12);
    assert_true(fabs(e->figure(&a, NULL, RM_OF_STALL_BLOCKED_SHARE) - 0.5) < 1e-12);
    assert_true(isnan(e->figure(&a, NULL, RM_OF_STALL_BLKIO_S))); /* no delayacct */
    json_t *j = rm_obj_json(RM_OBJ_STALL, &a, NULL);
    assert_true(json_real_value(json_object_get(j, RM_OBJ_KEY(STALL_WAIT_SHARE))) == 0.5);
    assert_true(json_real_value(json_object_get(j, RM_OBJ_KEY(STALL_SECONDS))) == 0.4);
    assert_true(json_is_null(json_object_get(j, RM_OBJ_KEY(STALL_BLKIO_S))));
    json_decref(j);
}

/* The host's objects from the host's stats: every row its statistic (a row without its case
 * in summary/hostcsv.c's switch is NaN here), the run's copies in "totals" with the host
 * memory peak beside "cpu", and what holds each object's run copy. */
static void test_host_values_through_the_table(void **state)
{
    (void)state;
    struct rm_host_stats h = {.cpu_samples = 2, .proc_samples = 2};
    for (int m = 0; m < RM_HM_COUNT; m++) /* metric m: 10 + m and 20 + m */
        rm_stat_add(&h.m[m], 10 + m), rm_stat_add(&h.m[m], 20 + m);
    for (int f = 0; f < RM_OF_COUNT; f++)
        if (rm_objects[rm_obj_figures[f].obj].host)
            assert_true(isfinite(rm_obj_engine(rm_obj_figures[f].obj)->figure(&h, &h, f)));
    const struct rm_obj_engine *e = rm_obj_engine(RM_OBJ_CPU);
    assert_true(e->figure(&h, &h, RM_OF_CPU_USR_MEAN) == 15);
    assert_true(e->figure(&h, &h, RM_OF_CPU_USR_MAX) == 20);
    assert_true(e->figure(&h, &h, RM_OF_CPU_IDLE_MEAN) == 19);
    assert_true(e->figure(&h, &h, RM_OF_CPU_HOST_MEM_PEAK) == 25);
    assert_true(e->figure(&h, NULL, RM_OF_CPU_SAMPLES) == 2);
    e = rm_obj_engine(RM_OBJ_PROC);
    assert_true(e->figure(&h, &h, RM_OF_PROC_RSS_PEAK) == 27);
    assert_true(e->figure(&h, &h, RM_OF_PROC_CPU_MEAN) == 23);
    assert_true(isnan(e->figure(NULL, NULL, RM_OF_PROC_CPU_MEAN))); /* nothing seen */

    json_t *doc = json_object(), *totals = json_object();
    json_object_set_new(doc, "totals", totals);
    for (int o = 0; o < RM_OBJ_COUNT; o++)
        if (rm_objects[o].in_totals) rm_obj_put(totals, o, &h, &h);
    void *it = json_object_iter(totals);
    assert_string_equal(json_object_iter_key(it), "cpu");
    assert_string_equal(json_object_iter_key(it = json_object_iter_next(totals, it)),
                        RM_OBJ_KEY(CPU_HOST_MEM_PEAK));
    assert_string_equal(json_object_iter_key(json_object_iter_next(totals, it)), "proc");
    assert_true(rm_obj_holder(doc, RM_OBJ_CPU) == totals);
    assert_true(rm_obj_holder(doc, RM_OBJ_IO) == doc);
    const json_t *in = rm_obj_holder(doc, RM_OBJ_PROC);
    assert_true(json_real_value(rm_json_at(totals, "cpu.usr_pct.mean")) == 15);
    assert_true(json_real_value(rm_obj_at(in, RM_OF_CPU_USR_MAX)) == 20);
    assert_true(json_integer_value(rm_obj_at(in, RM_OF_CPU_SAMPLES)) == 2);
    assert_true(json_real_value(rm_obj_at(in, RM_OF_CPU_HOST_MEM_PEAK)) == 25);
    assert_true(json_real_value(rm_obj_at(in, RM_OF_PROC_NPROCS_MAX)) == 29);
    json_decref(doc);
}

/* The Metrics text table's fields: places 1, 2, ... of each column, a header on the first. */
static void test_metric_text_columns(void **state)
{
    (void)state;
    int shown = 0, reached = 0;
    for (int f = 0; f < RM_MF_FIELDS; f++)
        shown += rm_metric_fields[f].text.col > 0;
    for (int c = 1; rm_metric_field_text_at(c, 1) >= 0; c++) {
        assert_non_null(rm_metric_fields[rm_metric_field_text_at(c, 1)].text.head);
        for (int p = 1; rm_metric_field_text_at(c, p) >= 0; p++)
            reached++;
    }
    assert_int_equal(reached, shown);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_object_is_complete),
        cmocka_unit_test(test_every_row_is_complete),
        cmocka_unit_test(test_keys_and_paths),
        cmocka_unit_test(test_places_have_no_hole),
        cmocka_unit_test(test_json_walks_the_rows),
        cmocka_unit_test(test_stall_values_through_the_table),
        cmocka_unit_test(test_host_values_through_the_table),
        cmocka_unit_test(test_metric_text_columns),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
