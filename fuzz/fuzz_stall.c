/* libFuzzer: the stall stream's parsers (issue 38). Every input goes through the /proc parsers
 * (a thread's schedstat and stat, a process's cgroup) and, as stall.csv, through the summary's
 * reader and figures: shares stay within 0..1, percentages within 0..100, nothing negative. */
#include <jansson.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "monitor/stall_parse.h"
#include "summary/csvread.h"
#include "summary/objects.h"
#include "summary/stallcsv.h"

struct ctx {
    struct rm_stallcsv p;
    struct rm_stall_agg a;
};

static void row(void *v, const struct rm_csv_row *r)
{
    struct ctx *c = v;
    struct rm_stall_row s;
    if (rm_stallcsv_row(&c->p, r, &s) == 1) {
        rm_stall_acc_add(&c->a.run, &s, 1);
        rm_stall_acc_add(&c->a.ph[0], &s, 0.5);
    }
}

static int share(double v)
{
    return isnan(v) || (v >= 0 && v <= 1);
}

/* libFuzzer calls it; declared here for -Wmissing-prototypes. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *s = (const char *)data;
    uint64_t run, wait;
    rm_parse_schedstat(s, size, &run, &wait);
    struct rm_task_stat st;
    if (rm_parse_task_stat(s, size, &st) == 0 && (st.state == ' ' || st.state == '\n'))
        __builtin_trap();
    char cg[64];
    int n = rm_parse_cgroup_v2(s, size, cg, sizeof cg);
    if (n >= (int)sizeof cg || (n >= 0 && cg[n])) __builtin_trap();

    static struct ctx c;
    static const char header[] =
        "ts,interval_ms,procs,threads,runnable,blocked,run_ns,wait_ns,"
        "blkio_ms,cgroup,cpu_some_us,io_some_us,memory_some_us,unreadable\n";
    rm_stallcsv_init(&c.p);
    rm_stall_init(&c.a, 1);
    struct rm_csv_reader *r = rm_csv_new(row, &c);
    if (!r) return 0;
    if (size & 1) rm_csv_feed(r, header, sizeof header - 1); /* with and without a header */
    rm_csv_feed(r, s, size);
    rm_csv_finish(r);
    rm_csv_free(r);
    const struct rm_stall_acc *accs[2] = {&c.a.run, &c.a.ph[0]};
    for (int i = 0; i < 2; i++) {
        const struct rm_stall_acc *a = accs[i];
        if (!share(rm_stall_wait_share(a)) || !share(rm_stall_blocked_share(a))) __builtin_trap();
        if (rm_stall_waiting_threads(a) < 0 || rm_stall_blkio_s(a) < 0) __builtin_trap();
        for (int k = 0; k < 3; k++) {
            double p = rm_stall_cgroup_pct(a, k);
            if (p < 0 || p > 100) __builtin_trap();
        }
        json_decref(rm_obj_json(RM_OBJ_STALL, a, NULL));
    }
    rm_stall_free(&c.a);
    return 0;
}
