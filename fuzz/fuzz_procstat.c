/* libFuzzer target for the /proc parsers: /proc/stat, /proc/meminfo and /proc/PID/stat.
 * Every input goes through all three (and the percentage and formatting code behind them).
 * Build and run (or `make fuzz`):
 *   clang -std=c11 -D_GNU_SOURCE -I. -g -O1 -fsanitize=fuzzer,address,undefined \
 *     fuzz/fuzz_procstat.c monitor/procfs*.c runlog/rm_time.c -o /tmp/fz
 *   /tmp/fz -max_total_time=60
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "monitor/procfs.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *s = (const char *)data;
    struct rm_cpu_times all, pc[4];
    int ids[4], n;
    int seen = rm_parse_proc_stat(s, size, &all, pc, ids, 4, &n);
    if (seen >= 0) {
        struct rm_cpu_pct pct;
        char buf[RM_FMT_BUFSZ];
        for (int i = 0; i < n; i++) {
            rm_cpu_pct_between(&all, &pc[i], &pct);
            rm_fmt_fixed2(pct.usr, buf);
            rm_fmt_fixed2(pct.idle, buf);
        }
        rm_fmt_u64(all.user, buf);
    }
    /* The aggregate-only path stops early: must agree with the full parse. */
    struct rm_cpu_times all2;
    int r2 = rm_parse_proc_stat(s, size, &all2, NULL, NULL, 0, NULL);
    if (seen >= 0 && (r2 != 0 || memcmp(&all, &all2, sizeof(all)))) __builtin_trap();
    struct rm_mem m;
    if (rm_parse_meminfo(s, size, &m) == 0 && m.avail_kib > m.total_kib) __builtin_trap();
    struct rm_pid_stat ps;
    rm_parse_pid_stat(s, size, &ps);
    return 0;
}
