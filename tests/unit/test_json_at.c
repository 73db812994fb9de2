/* rm_json_at: a summary figure's key read as a path ("vram_mb.peak"), as model/figures.h
 * writes them; NULL where a step is missing or crosses a value that is not an object.
 * rm_json_set_at: the same paths written, a member made at its first use, in order. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdlib.h>

#include "base/json.h"
#include "model/figures.h"

static void paths_step_into_members(void **state)
{
    (void)state;
    json_t *g =
        json_pack("{s:{s:f,s:f},s:f}", "vram_mb", "peak", 512.0, "total", 1024.0, "energy_wh", 0.5);
    assert_true(json_real_value(rm_json_at(g, RM_FIG_KEY(VRAM_PEAK))) == 512.0);
    assert_true(json_real_value(rm_json_at(g, RM_FIG_KEY(VRAM_TOTAL))) == 1024.0);
    assert_true(json_real_value(rm_json_at(g, RM_FIG_KEY(ENERGY))) == 0.5);
    assert_ptr_equal(rm_json_at(g, "vram_mb"), json_object_get(g, "vram_mb"));
    assert_ptr_equal(rm_json_at(g, ""), g); /* no step: the object itself */
    json_decref(g);
}

static void missing_steps_give_null(void **state)
{
    (void)state;
    json_t *g = json_pack("{s:f,s:{}}", "energy_wh", 0.5, "vram_mb");
    assert_null(rm_json_at(g, RM_FIG_KEY(VRAM_PEAK)));    /* no member peak */
    assert_null(rm_json_at(g, "energy_wh.low"));          /* a number has no members */
    assert_null(rm_json_at(g, "gaps.count"));             /* no member gaps */
    assert_null(rm_json_at(NULL, RM_FIG_KEY(VRAM_PEAK))); /* no object */
    json_decref(g);
}

static void paths_are_written_in_order(void **state)
{
    (void)state;
    json_t *o = json_object();
    rm_json_set_at(o, "samples", json_integer(2));
    rm_json_set_at(o, "usr_pct.mean", json_real(1.5));
    rm_json_set_at(o, "usr_pct.max", json_real(3));
    rm_json_set_at(o, "a.b.c", json_true());
    char *text = json_dumps(o, JSON_COMPACT);
    assert_string_equal(
        text, "{\"samples\":2,\"usr_pct\":{\"mean\":1.5,\"max\":3.0},\"a\":{\"b\":{\"c\":true}}}");
    free(text);
    assert_true(json_real_value(rm_json_at(o, "usr_pct.max")) == 3);
    rm_json_set_at(o, "samples.n", json_integer(1)); /* a number in the way: replaced */
    assert_int_equal(json_integer_value(rm_json_at(o, "samples.n")), 1);
    json_decref(o);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(paths_step_into_members),
        cmocka_unit_test(missing_steps_give_null),
        cmocka_unit_test(paths_are_written_in_order),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
