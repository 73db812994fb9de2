/* rm_sweep_page_build on rows built by hand (the sweep table's JSON rows, no session folder):
 * the table, labels, bars and the drawn/undrawn rule; markup in every outside string is text;
 * and rm_sweep_infer_params' columns. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "sweep/sweep_page.h"
#include "sweep/sweep_rows.h"

static json_t *row(int i, double lr, const char *opt, int rerun)
{
    json_t *r = json_pack("{s:s, s:s, s:s, s:f, s:i, s:f, s:f, s:s, s:f, s:{s:f, s:s}, s:i}",
                          "session_id", "20261126T000000Z-h-1", "status", "completed", "host", "h",
                          "duration_s", 10.0 + i, "exit_code", 0, "gpu_util_mean_pct", 50.0 + i,
                          "peak_vram_mb", 1024.0 * (i + 1), "peak_vram_source", "gpu", "energy_wh",
                          0.5 * (i + 1), "params", "lr", lr, "opt", opt, "rerun", rerun);
    assert_non_null(r);
    return r;
}

static char *build(json_t *rows, json_t *names, size_t *len)
{
    struct rm_sweep_page_opts o = {.name = "s<1>", .param_names = names, .n_hosts = 1};
    char *html = NULL, err[256] = "";
    assert_int_equal(rm_sweep_page_build(rows, &o, &html, len, err, sizeof err), 0);
    assert_non_null(html);
    assert_int_equal(strlen(html), *len);
    return html;
}

static size_t count(const char *s, const char *needle)
{
    size_t n = 0;
    for (const char *p = s; (p = strstr(p, needle)); p += strlen(needle))
        n++;
    return n;
}

static void test_three_rows(void **state)
{
    (void)state;
    json_t *rows = json_array(), *names = json_pack("[s,s]", "lr", "opt");
    json_array_append_new(rows, row(0, 0.1, "adam", 0));
    json_array_append_new(rows, row(1, 0.01, "sgd", 0));
    json_array_append_new(rows, row(2, 0.01, "sgd", 1));
    size_t len;
    char *h = build(rows, names, &len);
    assert_non_null(strstr(h, "<h1>runmon sweep &#8212; s&lt;1&gt;</h1>"));
    assert_int_equal(count(h, "<th class=\"t\" data-type=\"param\">"), 2);
    assert_non_null(strstr(h, "<td class=\"t\" data-v=\"0.01\">0.01</td>"));
    /* Labels: the parameters in column order, a re-run marked. */
    assert_non_null(strstr(h, "<span class=\"bn\">1 &#183; lr=0.1 opt=adam</span>"));
    assert_non_null(strstr(h, "<span class=\"bn\">3 &#183; lr=0.01 opt=sgd (re-run)</span>"));
    assert_int_equal(count(h, "<tr data-run=\"2\" class=\"rerun\">"), 1);
    /* Four bar panels, a bar per run; energy against the largest (1.5 Wh). */
    assert_int_equal(count(h, "<section class=\"panel bars\""), 4);
    assert_int_equal(count(h, "<div class=\"br\""), 12);
    assert_non_null(strstr(h, "<i style=\"width:33.3%;background:#4e79a7\"></i></span><span "
                              "class=\"bv\">0.500 Wh</span>"));
    /* No session folder: no series, a note; no phase table. */
    assert_non_null(strstr(h, "id=\"noseries\""));
    assert_null(strstr(h, "<svg class=\"chart\""));
    assert_null(strstr(h, "id=\"t-phases\""));
    assert_int_equal(count(h, "<script>"), 1);
    free(h);
    json_decref(rows);
    json_decref(names);
}

static void test_missing_and_hostile(void **state)
{
    (void)state;
    json_t *rows = json_array(), *names = json_pack("[s]", "<b>k");
    json_t *r = json_pack("{s:s, s:s, s:{s:s}, s:n}", "session_id", "id<script>", "host", "h\"'",
                          "params", "<b>k", "<img src=x>\x01", "energy_wh");
    json_array_append_new(rows, r);
    size_t len;
    char *h = build(rows, names, &len);
    assert_null(strstr(h, "<img"));
    assert_null(strstr(h, "<b>"));
    assert_null(strstr(h, "id<script>"));
    assert_non_null(strstr(h, "&lt;img src=x&gt; "));
    /* Missing figures are a dash with an empty data-v, never 0. */
    assert_non_null(strstr(h, "<td data-v=\"\">&#8211;</td>"));
    assert_non_null(strstr(h, "<span class=\"bv\">&#8211;</span>"));
    free(h);
    json_decref(rows);
    json_decref(names);
}

static void test_over_fifty(void **state)
{
    (void)state;
    json_t *rows = json_array(), *names = json_pack("[s,s]", "lr", "opt");
    for (int i = 0; i < 51; i++)
        json_array_append_new(rows, row(i, 0.1 / (i + 1), "adam", 0));
    size_t len;
    char *h = build(rows, names, &len);
    assert_non_null(strstr(h, "<p class=\"note\" id=\"nodraw\">51 runs:"));
    assert_null(strstr(h, "id=\"legend\""));
    assert_int_equal(count(h, "<div class=\"br\""), 4 * 51);
    free(h);
    json_decref(rows);
    /* 50: drawn (no note; these rows have no folder, so no series either). */
    rows = json_array();
    for (int i = 0; i < 50; i++)
        json_array_append_new(rows, row(i, 0.1 / (i + 1), "adam", 0));
    h = build(rows, names, &len);
    assert_null(strstr(h, "id=\"nodraw\""));
    free(h);
    json_decref(rows);
    json_decref(names);
}

static void test_no_rows(void **state)
{
    (void)state;
    json_t *rows = json_array();
    struct rm_sweep_page_opts o = {0};
    char *html = (char *)1, err[256] = "";
    size_t len = 1;
    assert_int_equal(rm_sweep_page_build(rows, &o, &html, &len, err, sizeof err), 2);
    assert_null(html);
    assert_int_equal(len, 0);
    assert_string_equal(err, "no runs to compare");
    json_decref(rows);
}

static void test_infer(void **state)
{
    (void)state;
    json_t *rows = json_pack("[{s:[s,s,s,s,s,s]}, {s:[s,s,s,s,s,s]}, {s:[s,s,s,s,s]}]", "command",
                             "python3", "train.py", "--lr", "0.1", "--seed", "1", "command",
                             "python3", "train.py", "--lr", "0.01", "--seed", "1", "command",
                             "python3", "train.py", "--lr=0.001", "--seed", "1");
    json_t *names = rm_sweep_infer_params(rows);
    assert_int_equal(json_array_size(names), 1);
    assert_string_equal(json_string_value(json_array_get(names, 0)), "lr");
    json_t *p = json_object_get(json_array_get(rows, 2), "params");
    assert_true(json_is_real(json_object_get(p, "lr")));
    assert_true(json_real_value(json_object_get(p, "lr")) == 0.001);
    assert_null(json_object_get(p, "seed"));
    json_decref(names);
    json_decref(rows);
}

/* Rows judged as the sweep table judges them (sweep/sweep_judge.h): a Pareto chart of the
 * rows' objective against their cost, their front marks as given, parallel coordinates of the
 * parameters, the objective and the costs; no rows judged and no objective: a note. */
static void test_judged_rows(void **state)
{
    (void)state;
    json_t *rows = json_array(), *names = json_pack("[s,s]", "lr", "opt");
    static const char *const front[] = {"on", "within_bar", "no"};
    for (int i = 0; i < 3; i++) {
        json_t *r = row(i, 0.1 / (i + 1), i ? "sgd" : "adam", 0);
        json_object_set_new(r, "objectives",
                            json_pack("[{s:s, s:s, s:s, s:s, s:f, s:b, s:s}]", "objective",
                                      "acc:max", "metric", "acc", "goal", "max", "pick", "last",
                                      "value", 0.9 - 0.1 * i, "best", i == 0, "front", front[i]));
        json_object_set_new(r, "cost",
                            json_pack("{s:s, s:s, s:f, s:f, s:f}", "name", "energy", "unit", "Wh",
                                      "value", 0.5 * (i + 1), "low", 0.4 * (i + 1), "high",
                                      0.6 * (i + 1)));
        json_array_append_new(rows, r);
    }
    size_t len;
    char *h = build(rows, names, &len);
    assert_int_equal(count(h, "<section class=\"panel pareto\" id=\"pareto-0\" "
                              "data-objective=\"acc\">"),
                     1);
    assert_int_equal(count(h, "<button type=\"button\" class=\"pt on\""), 1);
    assert_int_equal(count(h, "<button type=\"button\" class=\"pt within\""), 1);
    assert_int_equal(count(h, "<button type=\"button\" class=\"pt no\""), 1);
    assert_int_equal(count(h, "<span class=\"eb\""), 3);
    assert_non_null(strstr(h, "title=\"1 &#183; lr=0.1 opt=adam: acc 0.9, energy 0.5 "
                              "(0.4&#8211;0.6) Wh, on the front\""));
    /* Axes: lr, opt (categories), the objective, then the costs; a line per run. */
    assert_int_equal(count(h, "<span class=\"pn\""), 6);
    assert_non_null(strstr(h, ">acc (max)</span>"));
    assert_int_equal(count(h, "<path data-run="), 3);
    assert_non_null(strstr(h, "<span class=\"pv c\" style=\"left:25.000%;top:0.00%\">adam"));
    assert_null(strstr(h, "id=\"nopareto\""));
    free(h);
    /* The same rows unjudged: no objective anywhere, a note instead of a chart. */
    size_t i;
    json_t *r;
    json_array_foreach(rows, i, r)
    {
        json_object_del(r, "objectives");
        json_object_del(r, "cost");
    }
    h = build(rows, names, &len);
    assert_non_null(strstr(h, "<p class=\"note\" id=\"nopareto\">No objective: no Pareto chart."));
    assert_null(strstr(h, "class=\"panel pareto\""));
    assert_int_equal(count(h, "<path data-run="), 3);
    free(h);
    json_decref(rows);
    json_decref(names);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_three_rows), cmocka_unit_test(test_missing_and_hostile),
        cmocka_unit_test(test_over_fifty), cmocka_unit_test(test_no_rows),
        cmocka_unit_test(test_infer),      cmocka_unit_test(test_judged_rows),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
