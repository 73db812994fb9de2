/* The table of the run's and phases' objects (model/objects.c) is complete and its outputs'
 * places agree, and summary/ writes each object from its rows: every row has a key and a
 * unit and belongs to an object; an object's rows are together and its keys its own; the
 * text lines, each object's table by phase and the report's phase columns have their figures
 * at places 1, 2, ... with no hole and no place taken twice; each object has an engine that
 * gives every row a value. A row left half filled (the first step of adding a figure) fails
 * here, not as a shifted column in some output. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <string.h>

#include "model/objective.h"
#include "model/objects.h"
#include "summary/iocsv.h"
#include "summary/objects.h"
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
        assert_non_null(e->agg_new), assert_non_null(e->agg_free), assert_non_null(e->agg_merge);
        assert_non_null(e->run), assert_non_null(e->phase), assert_non_null(e->figure);
        assert_non_null(e->acc_new), assert_non_null(e->acc_merge), assert_non_null(e->acc_free);
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
        assert_true(r->key[0] != '\0' && !strchr(r->key, '.'));
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

/* The document's object: every row's key in table order, the run-only ones with the run's
 * aggregate only, and each value the engine's (an empty aggregate: unknown, so null, but for
 * the counts). */
static void test_json_walks_the_rows(void **state)
{
    (void)state;
    for (int o = 0; o < RM_OBJ_COUNT; o++) {
        const struct rm_obj_engine *e = rm_obj_engine(o);
        void *agg = e->agg_new(2);
        json_t *run = rm_obj_json(o, e->run(agg), agg),
               *ph = rm_obj_json(o, e->phase(agg, 0), NULL);
        void *iter = json_object_iter(run), *piter = json_object_iter(ph);
        for (int f = 0; f < RM_OF_COUNT; f++) {
            const struct rm_obj_figure *r = &rm_obj_figures[f];
            if (r->obj != o) continue;
            assert_non_null(iter);
            assert_string_equal(json_object_iter_key(iter), r->key);
            iter = json_object_iter_next(run, iter);
            if (r->run_only) {
                assert_null(json_object_get(ph, r->key));
            } else {
                assert_non_null(piter);
                assert_string_equal(json_object_iter_key(piter), r->key);
                piter = json_object_iter_next(ph, piter);
            }
        }
        assert_null(iter);
        assert_null(piter);
        json_decref(run);
        json_decref(ph);
        e->agg_free(agg);
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
        cmocka_unit_test(test_places_have_no_hole),
        cmocka_unit_test(test_json_walks_the_rows),
        cmocka_unit_test(test_stall_values_through_the_table),
        cmocka_unit_test(test_metric_text_columns),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
