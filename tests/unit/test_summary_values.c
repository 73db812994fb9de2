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
#include "summary/fastvalue.h"

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

/* The inline parser's word path gives the byte-by-byte path's answer (and rm_value_parse's
 * value wherever it answers) on every string of up to 5 bytes of an alphabet of digits,
 * points, blanks, unit letters, signs, an exponent and a byte above 0x7f, and on random
 * strings of up to 14 bytes of it. */
static void fast_value_words_match_bytes(void **state)
{
    (void)state;
    static const char alpha[] = "0159. \tWM%/e-\x80";
    const size_t na = sizeof alpha - 1;
    char buf[16];
    size_t checked = 0, answered = 0;
    for (size_t len = 1; len <= 5; len++) {
        size_t total = 1;
        for (size_t k = 0; k < len; k++)
            total *= na;
        for (size_t code = 0; code < total; code++) {
            size_t c = code;
            for (size_t k = 0; k < len; k++, c /= na)
                buf[k] = alpha[c % na];
            double a = -1, b = -1, p = -1;
            int ra = rm_fast_value(buf, len, &a), rb = rm_fast_value_bytewise(buf, len, &b);
            assert_int_equal(ra, rb);
            if (ra) {
                assert_memory_equal(&a, &b, sizeof a);
                assert_int_equal(rm_value_parse(buf, len, &p), RM_VALUE_OK);
                assert_memory_equal(&a, &p, sizeof a);
                answered++;
            }
            checked++;
        }
    }
    srand(11);
    for (int i = 0; i < 300000; i++) {
        size_t len = 1 + (size_t)rand() % 14;
        /* Mostly digits, so that long numbers and fractions come up. */
        for (size_t k = 0; k < len; k++)
            buf[k] = rand() % 3 ? (char)('0' + rand() % 10) : alpha[(size_t)rand() % na];
        double a = -1, b = -1;
        int ra = rm_fast_value(buf, len, &a), rb = rm_fast_value_bytewise(buf, len, &b);
        assert_int_equal(ra, rb);
        if (ra) assert_memory_equal(&a, &b, sizeof a);
        checked++;
        answered += (size_t)ra;
    }
    assert_true(answered > checked / 50); /* the comparison saw numbers, not only rejects */
    const char *typical[] = {"0 %",  "39",    "3665 MiB", "81559 MiB", "126.35 W",    "1980 MHz",
                             "75.2", "0.000", "100 %",    "1234567",   "12345678 KiB"};
    for (size_t i = 0; i < sizeof typical / sizeof typical[0]; i++) {
        double a, p;
        assert_int_equal(rm_fast_value(typical[i], strlen(typical[i]), &a), 1);
        assert_int_equal(rm_value_parse(typical[i], strlen(typical[i]), &p), RM_VALUE_OK);
        assert_memory_equal(&a, &p, sizeof a);
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
        cmocka_unit_test(every_missing_spelling), cmocka_unit_test(numbers_with_units),
        cmocka_unit_test(decimal_matches_strtod), cmocka_unit_test(fast_value_words_match_bytes),
        cmocka_unit_test(header_units_cut),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
