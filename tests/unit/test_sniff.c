/* rm_sniff_text: what a file without data rows is (issue 25), and rm_stream_period_ns: the
 * period each stream's gaps are judged against. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "model/energy.h"
#include "summary/sniff.h"

static enum rm_sniff sniff(const char *s)
{
    return rm_sniff_text(s, strlen(s));
}

static void nvidia_smi_output_is_recognised(void **state)
{
    (void)state;
    assert_int_equal(sniff("timestamp, index, utilization.gpu [%], memory.used [MiB]\n"),
                     RM_SNIFF_NVSMI);
    assert_int_equal(sniff("2026/11/21 10:15:02.113, 45 %, 300.12 W\n"), RM_SNIFF_NVSMI);
    assert_int_equal(sniff("# gpu    pwr  gtemp\n# Idx      W      C\n"), RM_SNIFF_NVSMI);
    assert_int_equal(sniff("    0    100     52      -\n"), RM_SNIFF_NVSMI);
    assert_int_equal(sniff("Failed to initialize NVML: Driver/library version mismatch\n"),
                     RM_SNIFF_NVSMI);
    assert_int_equal(sniff("ts,cpu_user_pct,cpu_sys_pct\n"), RM_SNIFF_NVSMI);
    /* a terminal colour code in an error line is still text */
    assert_int_equal(sniff("No devices were found\x1b[0m on this GPU\n"), RM_SNIFF_NVSMI);
}

static void other_files_are_not(void **state)
{
    (void)state;
    assert_int_equal(sniff(""), RM_SNIFF_EMPTY);
    assert_int_equal(sniff(" \n\t\n"), RM_SNIFF_EMPTY);
    assert_int_equal(sniff("It was a bright cold day in April, and the clocks were striking "
                           "thirteen.\nWinston Smith, his chin nuzzled into his breast.\n"),
                     RM_SNIFF_TEXT);
    assert_int_equal(sniff("Hello, World, Again\n"), RM_SNIFF_TEXT);
    const char elf[] = "\x7f"
                       "ELF\x02\x01\x01\0\0\0";
    assert_int_equal(rm_sniff_text(elf, sizeof elf - 1), RM_SNIFF_BINARY);
    assert_int_equal(sniff("abc\xff\xfe def\n"), RM_SNIFF_BINARY);      /* not UTF-8 */
    assert_int_equal(sniff("\x01\x02\x03\x04 a b\n"), RM_SNIFF_BINARY); /* mostly controls */
    /* UTF-8 text, and a sequence cut by the end of the head, are text */
    assert_int_equal(sniff("Caf\xc3\xa9 cr\xc3\xa8me \xc3"), RM_SNIFF_TEXT);
}

static void each_stream_has_its_period(void **state)
{
    (void)state;
    const int64_t ms = 1000000, s = 1000000000;
    assert_int_equal(rm_stream_period_ns(RM_INPUT_GPU_CSV, 200 * ms), 200 * ms);
    assert_int_equal(rm_stream_period_ns(RM_INPUT_CPU_CSV, 200 * ms), 200 * ms);
    assert_int_equal(rm_stream_period_ns(RM_INPUT_DMON_CSV, 200 * ms), 1 * s);
    assert_int_equal(rm_stream_period_ns(RM_INPUT_DMON_TEXT, 1499 * ms), 1 * s);
    assert_int_equal(rm_stream_period_ns(RM_INPUT_DMON_TEXT, 1500 * ms), 2 * s);
    assert_int_equal(rm_stream_period_ns(RM_INPUT_DMON_CSV, 5 * s), 5 * s);
    assert_int_equal(rm_stream_period_ns(RM_INPUT_APPS_CSV, 200 * ms), 0);
    assert_int_equal(rm_stream_period_ns(RM_INPUT_GPU_CSV, 0), 0);
    assert_int_equal(rm_stream_period_ns(RM_INPUT_DMON_CSV, 0), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(nvidia_smi_output_is_recognised),
        cmocka_unit_test(other_files_are_not),
        cmocka_unit_test(each_stream_has_its_period),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
