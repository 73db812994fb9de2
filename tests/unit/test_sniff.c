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

/* Issue 36: Markdown is neither runmon's nor nvidia-smi's, though it has '#' lines, names
 * GPUs and holds lines of numbers further down. */
static void markdown_is_text(void **state)
{
    (void)state;
    assert_int_equal(sniff("# runmon file formats\nEverything runmon writes, described.\n"),
                     RM_SNIFF_TEXT);
    assert_int_equal(sniff("# runmon\nrunmon records what the GPUs and CPUs did beside a GPU\n"
                           "workload, and answers afterwards: how busy were the GPUs.\n"),
                     RM_SNIFF_TEXT);
    /* a heading that names a gpu column is still no dmon header */
    assert_int_equal(sniff("# (nvidia-smi dmon -d takes whole seconds) while the gpu query\n"),
                     RM_SNIFF_TEXT);
    /* a comment or list item naming a GPU is no nvidia-smi error */
    assert_int_equal(sniff("/* One large GPU file in chunks */\n"), RM_SNIFF_TEXT);
    assert_int_equal(sniff("- GPU memory, per process\n"), RM_SNIFF_TEXT);
    /* numbers only after the first 5 lines that are not blank */
    assert_int_equal(sniff("a\n\nb\nc\nd\ne\n1, 2, 3\n"), RM_SNIFF_TEXT);
    /* nvidia-smi's own outputs still are */
    assert_int_equal(sniff("#Date       Time        gpu    pwr\n"), RM_SNIFF_NVSMI);
    assert_int_equal(sniff("# gpu         pid   type     sm    mem\n"), RM_SNIFF_NVSMI);
    assert_int_equal(sniff("\xef\xbb\xbfpid, process_name, used_gpu_memory [MiB]\n"),
                     RM_SNIFF_NVSMI);
    assert_int_equal(sniff("Mon Nov 23 04:35:42 2026\n+----+\n| NVIDIA-SMI 580.159.04 |\n"),
                     RM_SNIFF_NVSMI);
    assert_int_equal(sniff("==============NVSMI LOG==============\n"), RM_SNIFF_NVSMI);
    assert_int_equal(sniff("100.5\n101.5\n"), RM_SNIFF_NVSMI); /* one field, noheader */
    assert_int_equal(sniff("torn 3 MiB\n0, 45 %, 300.12 W\n"), RM_SNIFF_NVSMI);
}

/* Issue 36: nvidia-smi's per-process outputs are told by their header. */
static void per_process_outputs_by_header(void **state)
{
    (void)state;
    const char *pmon = "# gpu         pid   type     fb   ccpm     sm    mem    command\n"
                       "# Idx           #    C/G     MB     MB      %      %    name\n"
                       "    0        653     C   1860      0     99      7    python3\n";
    assert_int_equal(rm_sniff_apps_kind(pmon, strlen(pmon)), RM_INPUT_PMON_TEXT);
    const char *dt = "#Date        Time         gpu         pid   type     sm    command\n";
    assert_int_equal(rm_sniff_apps_kind(dt, strlen(dt)), RM_INPUT_PMON_TEXT);
    const char *dmon = "# gpu    pwr  gtemp\n# Idx      W      C\n    0    100     52\n";
    assert_int_equal(rm_sniff_apps_kind(dmon, strlen(dmon)), -1);
    const char *ca = "timestamp, gpu_uuid, pid, process_name, used_gpu_memory [MiB]\n";
    assert_int_equal(rm_sniff_apps_kind(ca, strlen(ca)), RM_INPUT_COMPUTE_APPS);
    const char *ca2 = "\npid, used_memory\n653, 1860 MiB\n";
    assert_int_equal(rm_sniff_apps_kind(ca2, strlen(ca2)), RM_INPUT_COMPUTE_APPS);
    const char *acc = "gpu_name, pid, time [ms], gpu_utilization [%], mem_utilization [%], "
                      "max_memory_usage [MiB]\n";
    assert_int_equal(rm_sniff_apps_kind(acc, strlen(acc)), RM_INPUT_ACCOUNTED_APPS);
    const char *gpu = "timestamp, index, utilization.gpu [%], memory.used [MiB]\n";
    assert_int_equal(rm_sniff_apps_kind(gpu, strlen(gpu)), -1);
    const char *apps = "ts,gpu,uuid,pid,process,vram_mb,sm_pct,in_workload\n";
    assert_int_equal(rm_sniff_apps_kind(apps, strlen(apps)), -1); /* runmon's own apps.csv */
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
    assert_int_equal(rm_stream_period_ns(RM_INPUT_PMON_TEXT, 200 * ms), 0);
    assert_int_equal(rm_stream_period_ns(RM_INPUT_GPU_CSV, 0), 0);
    assert_int_equal(rm_stream_period_ns(RM_INPUT_DMON_CSV, 0), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(nvidia_smi_output_is_recognised),
        cmocka_unit_test(other_files_are_not),
        cmocka_unit_test(markdown_is_text),
        cmocka_unit_test(per_process_outputs_by_header),
        cmocka_unit_test(each_stream_has_its_period),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
