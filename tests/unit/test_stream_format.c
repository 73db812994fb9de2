/* rm_format_fixed: the recorder's number formatting must write exactly what
 * printf("%.*f") writes (the CSV files are the same whatever formats them). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include <math.h>
#include <stdlib.h>

#include "monitor/stream.h"

static void check(double v, int decimals)
{
    char got[RM_FIXED_BUFSZ], want[RM_FIXED_BUFSZ] = "";
    size_t n = rm_format_fixed(got, v, decimals);
    got[n] = '\0';
    if (isfinite(v)) snprintf(want, sizeof want, "%.*f", decimals, v);
    if (strcmp(got, want) != 0)
        fail_msg("%.17g with %d decimals: got '%s', want '%s'", v, decimals, got, want);
}

static void edge_cases_match_printf(void **state)
{
    (void)state;
    /* Exact ties (half to even in printf), signed zeros, values that print as 0 with a sign,
     * the fast path's limit and beyond, and no output for NaN and infinities. */
    const double v[] = {0.0,   -0.0,   -0.001, 0.005,        0.015,        0.125,
                        0.375, 2.675,  1e-9,   -1e-9,        1.5,          2.5,
                        -2.5,  99.995, 100.0,  1073741823.5, 1073741824.0, 5e8 + 0.25,
                        1e15,  -1e20,  1e300,  NAN,          INFINITY,     -INFINITY};
    for (size_t i = 0; i < sizeof v / sizeof *v; i++)
        for (int d = 0; d <= 7; d++)
            check(v[i], d);
}

static void random_values_match_printf(void **state)
{
    (void)state;
    srand48(13);
    for (int i = 0; i < 300000; i++) {
        double v;
        switch (i % 4) {
        case 0:
            v = (double)(lrand48() % 2000000) / 1000.0 - 1000.0;
            break; /* MiB, W */
        case 1:
            v = drand48() * 100.0;
            break; /* percentages */
        case 2:
            v = (double)(lrand48() % 100000) / 8.0;
            break; /* exact ties */
        default:
            v = (drand48() - 0.5) * 2e9;
            break;
        }
        for (int d = 0; d <= 4; d++)
            check(v, d);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(edge_cases_match_printf),
        cmocka_unit_test(random_values_match_printf),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
