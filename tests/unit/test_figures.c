/* The figures tables (model/figures.c) are complete and their outputs' places agree: every row
 * has a key and a unit, a statistic of a real metric or a computation of its own; keys are
 * each one figure's; each text column and the report's GPU table have their figures at
 * places 1, 2, ... with no hole and no place taken twice. A row left half filled (the first
 * step of adding a figure) fails here, not as a shifted column in some output. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <string.h>

#include "model/figures.h"
#include "model/gpu_metrics.h"
#include "sweep/sessions_rows.h"

static void test_every_row_is_complete(void **state)
{
    (void)state;
    for (int k = 0; k < RM_FIG_COUNT; k++) {
        const struct rm_figure *f = &rm_figures[k];
        assert_non_null(f->key);
        assert_non_null(f->unit);
        assert_true(f->key[0] != '\0');
        /* "a" or "a.b", each part short enough for the writers' key buffers */
        const char *dot = strchr(f->key, '.');
        assert_true(dot ? dot > f->key && dot - f->key < 64 && !strchr(dot + 1, '.') &&
                              dot[1] != '\0'
                        : strlen(f->key) < 64);
        if (f->stat == RM_FIG_OWN)
            assert_int_equal(f->metric, -1);
        else
            assert_true(f->metric >= 0 && f->metric < RM_GM_COUNT);
        if (f->stat == RM_FIG_P50 || f->stat == RM_FIG_P95) /* the one metric with a histogram */
            assert_int_equal(f->metric, RM_GM_UTIL);
        assert_true(f->dec >= 0 && f->dec <= 6);
        assert_true(f->shown & RM_FIG_IN_JSON);
        assert_int_equal(f->shown & ~(unsigned)(RM_FIG_IN_JSON | RM_FIG_IN_TEXT | RM_FIG_IN_CSV |
                                                RM_FIG_IN_REPORT),
                         0);
        /* a place only for an output that shows it */
        assert_int_equal(f->text.col != RM_FIG_COL_NONE, (f->shown & RM_FIG_IN_TEXT) != 0);
        assert_int_equal(f->report.at > 0, (f->shown & RM_FIG_IN_REPORT) != 0);
        if (f->shown & RM_FIG_IN_REPORT) {
            assert_non_null(f->report.head);
            assert_true(f->report.div > 0);
        }
        for (int j = 0; j < k; j++)
            assert_string_not_equal(rm_figures[j].key, f->key);
    }
}

/* Counts the rows at each place; each place from 1 to the count must have exactly one. */
static void test_text_columns_have_no_hole(void **state)
{
    (void)state;
    for (int col = RM_FIG_COL_NONE + 1; col < RM_FIG_COL_COUNT; col++) {
        assert_non_null(rm_fig_text_cols[col].head);
        assert_non_null(rm_fig_text_cols[col].sub);
        assert_true(rm_fig_text_cols[col].width > 0);
        int n = 0;
        for (int k = 0; k < RM_FIG_COUNT; k++)
            n += (rm_figures[k].shown & RM_FIG_IN_TEXT) && rm_figures[k].text.col == col;
        assert_true(n > 0); /* a column with no figure would print nothing */
        for (int pos = 1; pos <= n; pos++) {
            int once = 0;
            for (int k = 0; k < RM_FIG_COUNT; k++)
                once += (rm_figures[k].shown & RM_FIG_IN_TEXT) && rm_figures[k].text.col == col &&
                        rm_figures[k].text.pos == pos;
            assert_int_equal(once, 1);
            assert_true(rm_fig_text_at(col, pos) >= 0);
        }
        assert_int_equal(rm_fig_text_at(col, n + 1), -1);
    }
}

static void test_report_columns_have_no_hole(void **state)
{
    (void)state;
    int n = 0;
    for (int k = 0; k < RM_FIG_COUNT; k++)
        n += (rm_figures[k].shown & RM_FIG_IN_REPORT) != 0;
    assert_true(n > 0);
    for (int at = 1; at <= n; at++) {
        int once = 0;
        for (int k = 0; k < RM_FIG_COUNT; k++)
            once += (rm_figures[k].shown & RM_FIG_IN_REPORT) && rm_figures[k].report.at == at;
        assert_int_equal(once, 1);
        assert_int_equal(rm_figures[rm_fig_report_at(at)].report.at, at);
    }
    assert_int_equal(rm_fig_report_at(n + 1), -1);
}

/* A part of a JSON object comes before its siblings' rows end: the writer makes "a" on its
 * first "a.b", so the members of one object must be rows next to each other. */
static void test_members_of_an_object_are_together(void **state)
{
    (void)state;
    for (int k = 1; k < RM_FIG_COUNT; k++) {
        const char *dot = strchr(rm_figures[k].key, '.');
        if (!dot) continue;
        size_t n = (size_t)(dot - rm_figures[k].key) + 1;
        if (!strncmp(rm_figures[k - 1].key, rm_figures[k].key, n)) continue;
        for (int j = 0; j < k - 1; j++) /* its object's first row: no earlier row names it */
            assert_false(!strncmp(rm_figures[j].key, rm_figures[k].key, n));
    }
}

/* The headline rows: each has a key and a unit, and no two the same key. */
static void test_every_run_row_is_complete(void **state)
{
    (void)state;
    for (int k = 0; k < RM_RUN_FIG_COUNT; k++) {
        const struct rm_run_figure *f = &rm_run_figures[k];
        assert_non_null(f->key);
        assert_non_null(f->unit);
        assert_true(f->key[0] != '\0' && !strchr(f->key, '.'));
        assert_true(f->dec >= 0 && f->dec <= 6);
        for (int j = 0; j < k; j++)
            assert_string_not_equal(rm_run_figures[j].key, f->key);
    }
}

/* The sweep table's and listing's rows (issue 37): each has a key, a source that exists (a
 * headline figure, a figure of the totals, its own computation), an error bar of two totals
 * figures or none, an output; the sweep table's columns are at 1, 2, ... with a header, a
 * best end and no hole; a --sort name is one of sessions' fields. */
static void test_every_sweep_row_is_complete(void **state)
{
    (void)state;
    for (int k = 0; k < RM_SWEEP_FIG_COUNT; k++) {
        const struct rm_sweep_figure *f = &rm_sweep_figures[k];
        assert_non_null(f->key);
        assert_true(f->key[0] != '\0');
        for (int j = 0; j < k; j++)
            assert_string_not_equal(rm_sweep_figures[j].key, f->key);
        if (f->from == RM_SWEEP_RUN)
            assert_true(f->fig >= 0 && f->fig < RM_RUN_FIG_COUNT);
        else if (f->from == RM_SWEEP_TOTALS)
            assert_true(f->fig >= 0 && f->fig < RM_FIG_COUNT);
        else
            assert_int_equal(f->fig, -1);
        if (f->member) assert_int_equal(f->from, RM_SWEEP_RUN);
        if (f->src_key) assert_int_equal(f->from, RM_SWEEP_OWN);
        assert_int_equal(f->low < 0, f->high < 0);
        if (f->low >= 0) {
            assert_int_equal(f->from, RM_SWEEP_TOTALS);
            assert_true(f->low < RM_FIG_COUNT && f->high < RM_FIG_COUNT);
        }
        assert_true(f->in != 0);
        assert_int_equal(f->in & ~(unsigned)(RM_SWEEP_IN_LISTING | RM_SWEEP_IN_TABLE), 0);
        assert_int_equal(f->table.at > 0, (f->in & RM_SWEEP_IN_TABLE) != 0);
        if (f->in & RM_SWEEP_IN_TABLE) {
            assert_non_null(f->table.head);
            assert_true(f->table.best == -1 || f->table.best == 1);
        }
        if (f->sort) assert_non_null(rm_session_sort_field(f->sort));
    }
    int n = 0;
    for (int k = 0; k < RM_SWEEP_FIG_COUNT; k++)
        n += (rm_sweep_figures[k].in & RM_SWEEP_IN_TABLE) != 0;
    for (int at = 1; at <= n; at++) {
        int once = 0;
        for (int k = 0; k < RM_SWEEP_FIG_COUNT; k++)
            once +=
                (rm_sweep_figures[k].in & RM_SWEEP_IN_TABLE) && rm_sweep_figures[k].table.at == at;
        assert_int_equal(once, 1);
        assert_int_equal(rm_sweep_figures[rm_sweep_fig_at(at)].table.at, at);
    }
    assert_int_equal(rm_sweep_fig_at(n + 1), -1);
}

/* Every row sets its key on a row (a row of its own computation crashes here while its
 * computation is missing), null when the session has no summary.json, and the value of the
 * summary figure it names when it has one. */
static void test_every_sweep_row_sets_its_key(void **state)
{
    (void)state;
    json_t *sum = json_pack("{s:f,s:f,s:f,s:{s:f},s:{s:f,s:f,s:f}}", "gpu_util_mean_pct", 41.5,
                            "peak_vram_mb", 2048.0, "workload_peak_vram_mb", 1024.0,
                            "framework_peak_mb", "max", 900.0, "totals", "energy_wh", 3.25,
                            "energy_wh_low", 3.0, "energy_wh_high", 3.5);
    for (int k = 0; k < RM_SWEEP_FIG_COUNT; k++) {
        const struct rm_sweep_figure *f = &rm_sweep_figures[k];
        if (f->from == RM_SWEEP_INDEX) continue;
        json_t *none = json_object(), *row = json_object();
        rm_session_row_set_figure(none, k, NULL);
        assert_true(json_is_null(json_object_get(none, f->key)));
        rm_session_row_set_figure(row, k, sum);
        assert_true(json_is_number(json_object_get(row, f->key)));
        if (f->from != RM_SWEEP_OWN)
            assert_true(
                json_equal(json_object_get(row, f->key), (json_t *)rm_session_figure_in(sum, k)));
        json_decref(none);
        json_decref(row);
    }
    json_t *row = json_object();
    rm_session_row_set_figures(row, sum);
    assert_true(json_number_value(json_object_get(row, RM_SWEEP_KEY(ENERGY))) == 3.25);
    assert_true(json_number_value(json_object_get(row, RM_SWEEP_KEY(PEAK_VRAM))) == 1024.0);
    assert_string_equal(json_string_value(json_object_get(row, "peak_vram_source")), "workload");
    rm_session_row_set_bars(row, sum);
    assert_true(json_number_value(json_object_get(row, "energy_wh_low")) == 3.0);
    json_decref(row);
    json_decref(sum);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_row_is_complete),
        cmocka_unit_test(test_text_columns_have_no_hole),
        cmocka_unit_test(test_report_columns_have_no_hole),
        cmocka_unit_test(test_members_of_an_object_are_together),
        cmocka_unit_test(test_every_run_row_is_complete),
        cmocka_unit_test(test_every_sweep_row_is_complete),
        cmocka_unit_test(test_every_sweep_row_sets_its_key),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
