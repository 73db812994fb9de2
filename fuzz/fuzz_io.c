/* libFuzzer: the I/O stream's parsers. Every input goes through the /proc parsers
 * (/proc/diskstats, /proc/net/dev, /proc/pressure/{cpu,io,memory}, /proc/PID/io) and, as io.csv,
 * through the summary's reader and rates, which must never be negative. */
#include <jansson.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "monitor/io_parse.h"
#include "summary/csvread.h"
#include "summary/iocsv.h"
#include "summary/objects.h"

struct ctx {
    struct rm_iocsv p;
    struct rm_io_agg a;
};

static void row(void *v, const struct rm_csv_row *r)
{
    struct ctx *c = v;
    struct rm_io_row io;
    struct rm_io_interval iv;
    if (rm_iocsv_row(&c->p, r, &io) == 1 && rm_io_add(&c->a, &io, &iv))
        rm_io_add_phase(&c->a, 0, &iv, (iv.t1 - iv.t0) / 2); /* half of it in the phase */
}

/* libFuzzer calls it; declared here for -Wmissing-prototypes. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *s = (const char *)data;
    static struct rm_disk_stat disks[8];
    static struct rm_net_stat nets[8];
    int n, bad;
    if (rm_parse_diskstats(s, size, disks, 8, &n, &bad) < n || n > 8) __builtin_trap();
    if (rm_parse_net_dev(s, size, nets, 8, &n, &bad) < n || n > 8) __builtin_trap();
    struct rm_pressure p;
    if (rm_parse_pressure(s, size, &p) == 0 && !p.have_some) __builtin_trap();
    struct rm_pid_io io;
    rm_parse_pid_io(s, size, &io);

    static struct ctx c;
    static const char header[] = "ts,kind,name,read_bytes,write_bytes,busy_ms,rx_bytes,tx_bytes,"
                                 "some_us,full_us,procs,unreadable\n";
    rm_iocsv_init(&c.p);
    rm_io_init(&c.a, 1);
    struct rm_csv_reader *r = rm_csv_new(row, &c);
    if (!r) return 0;
    if (size & 1) rm_csv_feed(r, header, sizeof header - 1); /* with and without a header */
    rm_csv_feed(r, s, size);
    rm_csv_finish(r);
    rm_csv_free(r);
    struct rm_io_agg m;
    rm_io_init(&m, 1);
    rm_io_merge(&m, &c.a);
    rm_io_merge_next(&m, &c.a, NULL, NULL); /* the same rows again as the next segment */
    for (int v = 0; v < RM_IOV_COUNT; v++) {
        double run = rm_io_rate(&m.run, v), ph = rm_io_rate(rm_io_phase(&m, 0), v);
        if (run < 0 || ph < 0) __builtin_trap();
        if (v >= RM_IOV_CPU_SOME && v <= RM_IOV_MEM_FULL && (run > 100 || ph > 100))
            __builtin_trap(); /* a share of time */
    }
    json_decref(rm_obj_json(RM_OBJ_IO, &m.run, &m));
    json_decref(rm_obj_json(RM_OBJ_IO, rm_io_phase(&m, 0), NULL));
    rm_io_free(&m);
    rm_io_free(&c.a);
    return 0;
}
