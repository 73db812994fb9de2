/* The smallest period of a name sequence (summary/period.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "summary/period.h"

static void periods(void **state)
{
    (void)state;
    const uint32_t one_shot[] = {0, 0, 0, 0, 0, 0, 0, 1}; /* 7 GTX 1080 Ti, 1 GTX 1080 */
    assert_int_equal(rm_smallest_period(one_shot, 8), 8);
    const uint32_t loop[] = {0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1};
    assert_int_equal(rm_smallest_period(loop, 12), 4);
    const uint32_t cut[] = {0, 1, 0, 1, 0}; /* the last sample cut short */
    assert_int_equal(rm_smallest_period(cut, 5), 2);
    const uint32_t same[] = {3, 3, 3};
    assert_int_equal(rm_smallest_period(same, 3), 1);
    assert_int_equal(rm_smallest_period(same, 0), 0);
    const uint32_t aab[] = {0, 0, 1, 0, 0};
    assert_int_equal(rm_smallest_period(aab, 5), 3);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(periods)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
