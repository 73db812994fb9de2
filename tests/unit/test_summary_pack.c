/* Packed statistics (summary/pack.h): a phase's figures come back bit for bit. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "summary/pack.h"

#define SEC 1000000000LL

static void one_sample_round_trip(void **state)
{
    (void)state;
    struct rm_gpu_stats s, back;
    rm_stats_init(&s);
    double v[RM_GM_COUNT] = {87, 40, 30000, 81559, 312.5, 61, 1980, 2619};
    rm_stats_add_point(&s, 5 * SEC, v, (1u << RM_GM_COUNT) - 1);
    rm_stats_add_span(&s, RM_SPAN_BRIDGED, SEC / 10, 31.25, NULL);
    uint8_t *blob = rm_pack_gpu_stats(&s, 1);
    assert_non_null(blob);
    memset(&back, 0x5a, sizeof back);
    rm_unpack_gpu_stats(blob, &back, 1);
    assert_memory_equal(&back, &s, sizeof s);
    free(blob);
}

/* Several GPUs in one blob, odd values (NaN, -0.0, the largest counts) included; an empty
 * host and a NULL blob. */
static void round_trip_bit_for_bit(void **state)
{
    (void)state;
    struct rm_gpu_stats s[3], back[3];
    for (int g = 0; g < 3; g++) {
        rm_stats_init(&s[g]);
        for (int k = 0; k < 50 * g; k++) {
            double v[RM_GM_COUNT] = {k % 101, -0.0, k * 1.5, NAN, k * 0.01, 1e300, 255, 256};
            rm_stats_add(&s[g], (int64_t)k * SEC, v, (1u << RM_GM_COUNT) - 1, 3 * SEC);
        }
    }
    s[2].util_hist[100] = UINT64_MAX;
    s[2].gaps = 255;
    s[2].backwards = 256;
    uint8_t *blob = rm_pack_gpu_stats(s, 3);
    rm_unpack_gpu_stats(blob, back, 3);
    assert_memory_equal(back, s, sizeof s);
    free(blob);
    rm_unpack_gpu_stats(NULL, back, 1);
    struct rm_gpu_stats fresh;
    rm_stats_init(&fresh);
    assert_memory_equal(&back[0], &fresh, sizeof fresh);
    assert_null(rm_pack_gpu_stats(s, 0));

    struct rm_host_stats h, hb;
    memset(&h, 0, sizeof h);
    struct rm_host_sample hs = {.t_ns = SEC, .valid = 0x7f};
    for (int m = 0; m < RM_HM_COUNT; m++)
        hs.v[m] = m * 3.25;
    rm_host_stats_add(&h, &hs, false);
    blob = rm_pack_host_stats(&h);
    memset(&hb, 0x5a, sizeof hb);
    rm_unpack_host_stats(blob, &hb);
    assert_memory_equal(&hb, &h, sizeof h);
    free(blob);
    rm_unpack_host_stats(NULL, &hb);
    memset(&h, 0, sizeof h);
    assert_memory_equal(&hb, &h, sizeof h);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(one_sample_round_trip),
        cmocka_unit_test(round_trip_bit_for_bit),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
