/* The energy bar's terms and bounds (model/energy.h), on the worked example of docs/ENERGY.md:
 * readings 100, 100, 300, 300, 300 W at 0..4 s, a phase window [0.5, 3.5] s. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "model/energy.h"

#define SEC 1000000000LL
#define CLOSE(a, b) assert_true(fabs((a) - (b)) < 1e-9)

static const double p[] = {100, 100, 300, 300, 300};

/* The window [wa, wb] cut into the spacings of the readings above, as summary/spans.c does. */
static double window(int64_t wa, int64_t wb, struct rm_energy_bar *bar)
{
    double e = 0;
    for (int i = 0; i < 4; i++) {
        int64_t t0 = i * SEC, t1 = (i + 1) * SEC;
        int64_t a = wa > t0 ? wa : t0, b = wb < t1 ? wb : t1;
        if (b <= a) continue;
        double pa = p[i] + (p[i + 1] - p[i]) * (double)(a - t0) / SEC;
        double pb = p[i] + (p[i + 1] - p[i]) * (double)(b - t0) / SEC;
        double j = (pa + pb) / 2 * (double)(b - a) / SEC;
        e += j;
        rm_energy_piece_bar(t0, p[i], t1, p[i + 1], a, b, a == wa, b == wb, bar);
    }
    return e;
}

static void worked_example(void **state)
{
    (void)state;
    struct rm_energy_bar bar = {0};
    double e = window(SEC / 2, 7 * SEC / 2, &bar);
    CLOSE(e, 700);          /* 50 + 200 + 300 + 150 J */
    CLOSE(bar.tv_j, 100);   /* |300 - 100| x 1 s / 2 */
    CLOSE(bar.lag_j, -100); /* 0.5 s x (100 W at the start - 300 W at the end) */
    CLOSE(bar.edge_j, 0);   /* flat readings at both edges */
    CLOSE(bar.res_j, 0.015);
    CLOSE(bar.peak_w, 300);
    double lo, hi;
    rm_energy_bounds(e, &bar, 0.25, 0, &lo, &hi);
    /* u = 100 x (1 + 0.75) + 0 + 0.015 = 175.015; the lag widens the high side by 100 */
    CLOSE(lo, 700 - 175.015);
    CLOSE(hi, 700 + 100 + 175.015);
}

static void short_window(void **state)
{
    (void)state;
    struct rm_energy_bar bar = {0};
    double e = window(SEC + SEC / 5, SEC + 7 * SEC / 10, &bar); /* 0.5 s < the 1 s window */
    CLOSE(e, 95);                                               /* (140 + 240) / 2 x 0.5 s */
    CLOSE(bar.peak_w, 300);
    /* The general terms: lag 0.5 x (140 - 240) = -50, tv 200 x 0.5 / 2 = 50, two edges on the
     * 200 W/s ramp 0.5 x (1 x 200 / 2) = 50 each, res 0.0025. */
    CLOSE(bar.lag_j, -50);
    CLOSE(bar.tv_j, 50);
    CLOSE(bar.edge_j, 100);
    double lo, hi;
    rm_energy_bounds(e, &bar, 0.25, 0, &lo, &hi);
    CLOSE(hi, 95 + 50 + 50 * 1.75 + 100 + 0.0025);
    /* A short phase of one window: from 0, and at least 1 s (the sensor window) at the peak
     * reading (300 J), here less than the general high side. */
    rm_energy_bounds(e, &bar, 0.25, 1.0, &lo, &hi);
    CLOSE(lo, 0);
    CLOSE(hi, 332.5025);
    rm_energy_bounds(e, &bar, 0.25, 2.0, &lo, &hi);
    CLOSE(hi, 600);
}

static void edge_on_a_slope(void **state)
{
    (void)state;
    struct rm_energy_bar bar = {0};
    /* A window starting at 1.5 s, on the 100 -> 300 W ramp (200 W/s): lag 0.5 x 200 W,
     * edge 0.5 x (1 s x 200 W/s / 2) = 50 J. */
    window(3 * SEC / 2, 4 * SEC, &bar);
    CLOSE(bar.lag_j, 0.5 * 200 - 0.5 * 300);
    CLOSE(bar.edge_j, 50);
}

static void duty_table(void **state)
{
    (void)state;
    const char *src = NULL;
    assert_true(rm_sensor_duty("NVIDIA H100 80GB HBM3", &src) == 0.25);
    assert_non_null(strstr(src, "measured"));
    assert_true(rm_sensor_duty("NVIDIA H200", &src) == 0.25);
    assert_non_null(strstr(src, "assumed"));
    assert_true(rm_sensor_duty(NULL, &src) == 0.25);
    assert_non_null(strstr(src, "not measured"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(worked_example),
        cmocka_unit_test(short_window),
        cmocka_unit_test(edge_on_a_slope),
        cmocka_unit_test(duty_table),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
