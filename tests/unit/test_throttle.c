/* Clock throttle reasons: the names (model/throttle.h), gpu.csv's columns read into samples
 * (summary/gpucsv.h), and the per-reason counts of a GPU's statistics added, merged and
 * round-tripped through a segment aggregate's JSON (summary/stats.h). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "model/throttle.h"
#include "summary/gpucsv.h"
#include "summary/stats.h"

static void names_and_fields(void **state)
{
    (void)state;
    const char *c = "clocks_event_reasons.sw_power_cap";
    assert_int_equal(rm_thr_column(c, strlen(c)), RM_THR_SW_POWER_CAP);
    c = "clocks_throttle_reasons.hw_thermal_slowdown"; /* before driver 535 */
    assert_int_equal(rm_thr_column(c, strlen(c)), RM_THR_HW_THERMAL);
    c = "clocks_event_reasons.active";
    assert_int_equal(rm_thr_column(c, strlen(c)), RM_THR_MASK_COLUMN);
    c = "clocks_event_reasons.supported";
    assert_int_equal(rm_thr_column(c, strlen(c)), -1);
    c = "clocks_event_reasons_counters.sw_power_cap";
    assert_int_equal(rm_thr_column(c, strlen(c)), -1);
    assert_int_equal(rm_thr_column("clocks_event_reasons.", 21), -1);
    assert_string_equal(rm_thr_name(RM_THR_SW_POWER_CAP), "sw_power_cap");
    assert_string_equal(rm_thr_name(RM_THR_REASONS), "?");
    assert_int_equal(rm_thr_flag(" Active", 7), 1);
    assert_int_equal(rm_thr_flag("Not Active", 10), 0);
    assert_int_equal(rm_thr_flag("[N/A]", 5), -1);
    assert_int_equal(rm_thr_flag("", 0), -1);
    unsigned m;
    assert_true(rm_thr_mask("0x0000000000000004", 18, &m));
    assert_int_equal(m, 1u << RM_THR_SW_POWER_CAP);
    assert_true(rm_thr_mask("0x00000000000001FF", 18, &m)); /* every reason this table has */
    assert_int_equal(m, 0x1ffu);
    assert_true(rm_thr_mask("0xFFFFFFFFFFFFFFFF", 18, &m)); /* bits past the table dropped */
    assert_int_equal(m, 0x1ffu);
    assert_false(rm_thr_mask("[Not Supported]", 15, &m));
    assert_false(rm_thr_mask("0x12zz", 6, &m));
    assert_false(rm_thr_mask("", 0, &m));
}

struct ctx {
    struct rm_gpucsv g;
    int rc[8];
    struct rm_gpu_sample s[8];
    int n;
};

static void row(void *p, const struct rm_csv_row *r)
{
    struct ctx *c = p;
    if (c->n < 8) {
        c->rc[c->n] = rm_gpucsv_row(&c->g, r, &c->s[c->n]);
        c->n++;
    }
}

static void gpucsv_columns(void **state)
{
    (void)state;
    static struct ctx c;
    memset(&c, 0, sizeof c);
    rm_gpucsv_init(&c.g, NULL);
    const char *text = /* as nvidia-smi prints them (captures of driver 595.71.05) */
        "timestamp, index, clocks.current.sm [MHz], clocks.max.sm [MHz], "
        "clocks_event_reasons.active, clocks_event_reasons.sw_power_cap, "
        "clocks_event_reasons.hw_slowdown\n"
        "2026/11/21 10:15:02.113, 0, 765 MHz, 2145 MHz, 0x0000000000000004, Active, Not Active\n"
        "2026/11/21 10:15:02.113, 1, 2055 MHz, 2145 MHz, 0x0000000000000000, Not Active, Active\n"
        "2026/11/21 10:15:02.113, 2, 2055 MHz, [N/A], [N/A], [N/A], [N/A]\n";
    struct rm_csv_reader *r = rm_csv_new(row, &c);
    rm_csv_feed(r, text, strlen(text));
    rm_csv_finish(r);
    rm_csv_free(r);
    assert_int_equal(c.n, 4);
    assert_int_equal(c.rc[1], 1);
    assert_true(c.s[1].valid & RM_SAMPLE_THR_KNOWN);
    assert_int_equal(c.s[1].thr_mask, 1u << RM_THR_SW_POWER_CAP);
    assert_true(c.s[1].valid & RM_SAMPLE_SMCLK_MAX);
    assert_true(c.s[1].smclk_max == 2145);
    assert_true(c.s[1].v[RM_GM_SMCLK] == 765);
    /* the mask and the flags together: either one active counts */
    assert_int_equal(c.s[2].thr_mask, 1u << RM_THR_HW_SLOWDOWN);
    /* nothing known: neither bit */
    assert_int_equal(c.rc[3], 1);
    assert_false(c.s[3].valid & (RM_SAMPLE_THR_KNOWN | RM_SAMPLE_SMCLK_MAX));
    assert_int_equal(c.s[3].thr_mask, 0);
}

static void stats_counts(void **state)
{
    (void)state;
    struct rm_gpu_stats a, b, c;
    rm_stats_init(&a);
    rm_stats_init(&b);
    rm_stats_add_clocks(&a, true, 1u << RM_THR_SW_POWER_CAP, 1980);
    rm_stats_add_clocks(&a, true, 0, NAN);
    rm_stats_add_clocks(&a, false, 0xff, NAN); /* not known: not counted */
    rm_stats_add_clocks(&b, true, 1u << RM_THR_SW_POWER_CAP | 1u << RM_THR_HW_SLOWDOWN, 1410);
    rm_stats_fold(&a, &b);
    assert_int_equal(a.thr_samples, 3);
    assert_int_equal(a.thr_active[RM_THR_SW_POWER_CAP], 2);
    assert_int_equal(a.thr_active[RM_THR_HW_SLOWDOWN], 1);
    assert_true(a.smclk_max == 1980);
    char err[128];
    json_t *j = rm_stats_to_json(&a);
    assert_int_equal(rm_stats_from_json(j, &c, err, sizeof err), 0);
    assert_int_equal(c.thr_samples, 3);
    assert_int_equal(c.thr_active[RM_THR_SW_POWER_CAP], 2);
    assert_true(c.smclk_max == 1980);
    /* reasons never active are left out */
    assert_null(
        json_object_get(json_object_get(json_object_get(j, "throttle"), "active"), "gpu_idle"));
    /* more active than samples: refused */
    json_object_set_new(json_object_get(json_object_get(j, "throttle"), "active"), "gpu_idle",
                        json_integer(4));
    assert_int_equal(rm_stats_from_json(j, &c, err, sizeof err), -1);
    json_decref(j);
    /* none recorded: no keys (aggregates from before them read back the same) */
    rm_stats_init(&b);
    j = rm_stats_to_json(&b);
    assert_null(json_object_get(j, "throttle"));
    assert_null(json_object_get(j, "sm_clock_max"));
    json_decref(j);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(names_and_fields),
        cmocka_unit_test(gpucsv_columns),
        cmocka_unit_test(stats_counts),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
