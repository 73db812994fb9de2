/* Missing-value spellings and the fast number parser. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "model/values.h"

#define MISSING(s) rm_value_is_missing(s, strlen(s))

static void every_missing_spelling(void **state)
{
    (void)state;
    const char *m[] = {"[N/A]",
                       "N/A",
                       "[Not Supported]",
                       "[Unknown Error]",
                       "[GPU is lost]",
                       "[Requested functionality has been deprecated]",
                       "[Function Not Found]",
                       "",
                       "  ",
                       "-",
                       " - ",
                       "[Insufficient Permissions]",
                       " [N/A] "};
    for (size_t i = 0; i < sizeof m / sizeof m[0]; i++) {
        assert_true(MISSING(m[i]));
        double v = 42;
        assert_int_equal(rm_value_parse(m[i], strlen(m[i]), &v), RM_VALUE_MISSING);
        assert_true(v == 42); /* untouched, never 0 */
    }
    assert_false(MISSING("0"));
    assert_false(MISSING("-1"));
    assert_false(MISSING("[N/A"));
    assert_false(MISSING("NA/"));
}

static void numbers_with_units(void **state)
{
    (void)state;
    struct {
        const char *s;
        double v;
    } ok[] = {{"53 %", 53},
              {"123.00 W", 123},
              {"80257 MiB", 80257},
              {"1980 MHz", 1980},
              {" 69.85 W ", 69.85},
              {"-3.5", -3.5},
              {"0", 0},
              {"1e3", 1000},
              {"2619", 2619},
              {"12.5MB/s", 12.5},
              {"0.1", 0.1},
              {"+7", 7},
              {"143771 MiB", 143771},
              {"1.25e-2", 0.0125}};
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        double v = -1;
        assert_int_equal(rm_value_parse(ok[i].s, strlen(ok[i].s), &v), RM_VALUE_OK);
        assert_true(v == ok[i].v);
    }
    const char *bad[] = {"abc", "12 34", "1.2.3", "W", "nan", "inf", "1e400", "12 W x", "."};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        double v;
        assert_int_equal(rm_value_parse(bad[i], strlen(bad[i]), &v), RM_VALUE_BAD);
    }
}

/* The fast parser agrees with strtod (in the C locale) on random decimals. */
static void decimal_matches_strtod(void **state)
{
    (void)state;
    srand(7);
    char buf[64];
    for (int i = 0; i < 100000; i++) {
        int digits = rand() % 8, frac = rand() % 6;
        int n = snprintf(buf, sizeof buf, "%s%d", rand() % 5 ? "" : "-", rand() % 1000000);
        (void)digits;
        if (frac) n += snprintf(buf + n, sizeof buf - (size_t)n, ".%0*d", frac, rand() % 100000);
        double a, b = strtod(buf, NULL);
        assert_int_equal(rm_parse_decimal(buf, (size_t)n, &a), (size_t)n);
        assert_true(a == b);
    }
}

static void header_units_cut(void **state)
{
    (void)state;
    assert_int_equal(rm_header_name_len("memory.used [MiB]", 17), 11);
    assert_int_equal(rm_header_name_len("temperature.gpu", 15), 15);
    assert_int_equal(rm_header_name_len("fan.speed [%] ", 14), 9);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_missing_spelling),
        cmocka_unit_test(numbers_with_units),
        cmocka_unit_test(decimal_matches_strtod),
        cmocka_unit_test(header_units_cut),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
