/* The I/O stream (issue 23): the /proc parsers (monitor/io_parse.c), the sampler on a fake
 * /proc and /sys tree that changes between samples (monitor/io_sampler.c), and io.csv rows
 * into rates (summary/iocsv.c): newer kernels' extra columns, devices that vanish, counters
 * that go back, a process whose io file cannot be read. */
#include <fcntl.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "monitor/io_parse.h"
#include "monitor/io_sampler.h"
#include "monitor/port.h"
#include "summary/iocsv.h"

#define S(x) x, strlen(x)

/* ---- parsers ------------------------------------------------------------------------ */

static void diskstats_columns(void **state)
{
    (void)state;
    const char *text =
        /* kernel 6.x: 20 columns after the name */
        "   8       0 sda 100 5 2048 30 200 9 4096 60 0 70 90 0 0 0 0 4 1\n"
        /* 2.6.25 to 4.18: 11 counters */
        "   8       1 sda1 1 0 8 1 2 0 16 2 0 3 3\n"
        /* a future kernel's extra columns */
        " 259       0 nvme0n1 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23\n"
        /* bad: too few counters, a letter, 2^64, a name of 40 characters */
        "   8      16 sdb 1 2 3\n"
        "   8      32 sdc 1 2 x 4 5 6 7 8 9 10 11\n"
        "   8      48 sdd 1 2 18446744073709551616 4 5 6 7 8 9 10 11\n"
        "   8      64 aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa 1 2 3 4 5 6 7 8 9 10 11\n"
        "\n"
        " 253       0 dm-0 0 0 18446744073709551615 0 0 0 0 0 0 0 0";
    struct rm_disk_stat d[8];
    int n, bad;
    int valid = rm_parse_diskstats(text, strlen(text), d, 8, &n, &bad);
    assert_int_equal(valid, 4);
    assert_int_equal(n, 4);
    assert_int_equal(bad, 4);
    assert_string_equal(d[0].name, "sda");
    assert_true(d[0].read_sectors == 2048 && d[0].write_sectors == 4096 && d[0].io_ms == 70);
    assert_true(d[0].major == 8 && d[0].minor == 0);
    assert_string_equal(d[1].name, "sda1");
    assert_true(d[1].read_sectors == 8 && d[1].io_ms == 3);
    assert_string_equal(d[2].name, "nvme0n1");
    assert_true(d[2].read_sectors == 3 && d[2].write_sectors == 7 && d[2].io_ms == 10);
    assert_true(d[3].read_sectors == UINT64_MAX); /* no line end: still read */
    /* max bounds what is stored, not what is counted */
    assert_int_equal(rm_parse_diskstats(text, strlen(text), d, 1, &n, &bad), 4);
    assert_int_equal(n, 1);
}

static void net_dev_lines(void **state)
{
    (void)state;
    const char *text =
        "Inter-|   Receive                                                |  Transmit\n"
        " face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets "
        "errs drop fifo colls carrier compressed\n"
        "    lo: 1051094224  551197    0    0    0     0          0         0 1051094224  "
        "551197    0    0    0     0       0          0\n"
        "  eth0:381117217   36641    0    0    0     0          0         0  3173866   34403    "
        "0    0    0     0       0          0\n"
        "  bad0: 1 2 3\n";
    struct rm_net_stat d[4];
    int n, bad;
    assert_int_equal(rm_parse_net_dev(text, strlen(text), d, 4, &n, &bad), 2);
    assert_int_equal(bad, 1);
    assert_string_equal(d[0].name, "lo");
    assert_true(d[0].rx_bytes == 1051094224 && d[0].tx_bytes == 1051094224);
    assert_string_equal(d[1].name, "eth0"); /* no blank after the colon */
    assert_true(d[1].rx_bytes == 381117217 && d[1].tx_bytes == 3173866);
}

static void pressure_and_pid_io(void **state)
{
    (void)state;
    struct rm_pressure p;
    const char *both = "some avg10=0.06 avg60=0.25 avg300=0.48 total=164611282\n"
                       "full avg10=0.00 avg60=0.10 avg300=0.33 total=42462523\n";
    assert_int_equal(rm_parse_pressure(both, strlen(both), &p), 0);
    assert_true(p.have_some && p.have_full);
    assert_true(p.some_us == 164611282 && p.full_us == 42462523);
    const char *some = "some avg10=0.00 avg60=0.00 avg300=0.00 total=7";
    assert_int_equal(rm_parse_pressure(some, strlen(some), &p), 0);
    assert_true(p.have_some && !p.have_full && p.some_us == 7);
    assert_int_equal(rm_parse_pressure(S("full avg10=0 total=5\n"), &p), -1);
    assert_int_equal(rm_parse_pressure(S("some total=x\n"), &p), -1);
    assert_int_equal(rm_parse_pressure(S(""), &p), -1);

    struct rm_pid_io io;
    const char *pidio = "rchar: 6976\nwchar: 5\nsyscr: 10\nsyscw: 0\nread_bytes: 4096\n"
                        "write_bytes: 8192\ncancelled_write_bytes: 0\n";
    assert_int_equal(rm_parse_pid_io(pidio, strlen(pidio), &io), 0);
    assert_true(io.rchar == 6976 && io.wchar == 5 && io.read_bytes == 4096 &&
                io.write_bytes == 8192);
    assert_int_equal(rm_parse_pid_io(S("rchar: 1\nread_bytes: 2\n"), &io), -1);
    assert_int_equal(rm_parse_pid_io(S("read_bytes: -2\nwrite_bytes: 1\n"), &io), -1);
}

/* ---- the summary's reader ----------------------------------------------------------- */

struct ctx {
    struct rm_iocsv p;
    struct rm_io_agg a;
    size_t phases[1];
    size_t nphases;
    int rows, skipped, headers;
};

static void row(void *p, const struct rm_csv_row *r)
{
    struct ctx *c = p;
    struct rm_io_row io;
    int rc = rm_iocsv_row(&c->p, r, &io);
    if (rc == 0) c->headers++;
    if (rc < 0) c->skipped++;
    if (rc != 1) return;
    c->rows++;
    struct rm_io_interval iv;
    if (rm_io_add(&c->a, &io, &iv) && c->nphases) rm_io_add_phase(&c->a, 0, &iv, iv.t1 - iv.t0);
}

static void parse(struct ctx *c, const char *text, size_t nphases)
{
    memset(c, 0, sizeof *c);
    rm_iocsv_init(&c->p);
    rm_io_init(&c->a, 1);
    c->nphases = nphases;
    struct rm_csv_reader *r = rm_csv_new(row, c);
    rm_csv_feed(r, text, strlen(text));
    rm_csv_finish(r);
    rm_csv_free(r);
}

#define HDR                                                                                        \
    "ts,kind,name,read_bytes,write_bytes,busy_ms,rx_bytes,tx_bytes,some_us,full_us,procs,"         \
    "unreadable\n"
#define T0 "2026-11-23T05:00:00.000+00:00"
#define T1 "2026-11-23T05:00:01.000+00:00"
#define T2 "2026-11-23T05:00:02.000+00:00"
#define T3 "2026-11-23T05:00:03.000+00:00"

static void rates_from_counters(void **state)
{
    (void)state;
    struct ctx c;
    parse(&c,
          HDR T0 ",disk,sda,1000000,0,0,,,,,,\n" T0 ",disk,sdb,0,0,0,,,,,,\n" T0
                 ",net,eth0,,,,500,0,,,,\n" T0 ",pressure,io,,,,,,1000,500,,\n" T0
                 ",pressure,cpu,,,,,,0,,,\n" T1 ",disk,sda,3000000,1000000,500,,,,,,\n" T1
                 ",disk,sdb,1000000,0,100,,,,,,\n" T1 ",net,eth0,,,,2000500,1000000,,,,\n" T1
                 ",pressure,io,,,,,,251000,100500,,\n" T1 ",pressure,cpu,,,,,,10000,,,\n" T1
                 ",tree,77,4000000,2000000,,,,,,3,1\n" T2 ",disk,sda,5000000,1000000,500,,,,,,\n" T2
                 ",tree,77,6000000,2000000,,,,,,2,0\n",
          1);
    assert_int_equal(c.rows, 13);
    assert_int_equal(c.skipped, 0);
    const struct rm_io_acc *a = &c.a.run;
    /* Disks: (2 MB + 1 MB) in the first second, 2 MB in the second: 5 MB over 2 s. */
    assert_true(fabs(rm_io_rate(a, RM_IOV_DISK_READ) - 2.5) < 1e-9);
    assert_true(fabs(rm_io_rate(a, RM_IOV_DISK_WRITE) - 0.5) < 1e-9);
    assert_true(fabs(rm_io_rate(a, RM_IOV_NET_RX) - 2.0) < 1e-9);
    assert_true(fabs(rm_io_rate(a, RM_IOV_NET_TX) - 1.0) < 1e-9);
    /* 250 ms of 1 s stalled: 25 %; full 10 %; cpu has no full line: NaN, not 0. */
    assert_true(fabs(rm_io_rate(a, RM_IOV_IO_SOME) - 25.0) < 1e-9);
    assert_true(fabs(rm_io_rate(a, RM_IOV_IO_FULL) - 10.0) < 1e-9);
    assert_true(fabs(rm_io_rate(a, RM_IOV_CPU_SOME) - 1.0) < 1e-9);
    assert_true(isnan(rm_io_rate(a, RM_IOV_CPU_FULL)));
    assert_true(isnan(rm_io_rate(a, RM_IOV_MEM_SOME)));
    /* The tree's first row counts whole (its counters start at 0 with the command), over the
     * time since the previous row: 4 MB in 1 s, then 2 MB in 1 s. */
    assert_true(fabs(a->v[RM_IOV_TREE_READ] - 6e6) < 1e-3);
    assert_true(fabs(rm_io_rate(a, RM_IOV_TREE_READ) - 3.0) < 1e-9);
    assert_int_equal(c.a.procs_max, 3);
    assert_int_equal(c.a.unreadable_max, 1);
    /* Every interval ended in the one phase. */
    assert_non_null(rm_io_phase(&c.a, 0));
    assert_true(fabs(rm_io_rate(rm_io_phase(&c.a, 0), RM_IOV_DISK_READ) - 2.5) < 1e-9);
    /* What the held-back rules read (the phase's io object): io "some" 25 %. */
    assert_true(fabs(rm_io_rate(rm_io_phase(&c.a, 0), RM_IOV_IO_SOME) - 25.0) < 1e-9);
    /* Per device: sda 4 MB read over 2 s, busy 500 ms of 2 s. */
    assert_int_equal(c.a.ndevs, 3);
    assert_string_equal(c.a.devs[0].name, "sda");
    assert_true(c.a.devs[0].sum[0] == 4e6 && c.a.devs[0].sum[2] == 500 &&
                c.a.devs[0].dt_ns == 2000000000);
    rm_io_free(&c.a);

    parse(&c, HDR T1 ",disk,sda,5,5,5,,,,,,\n", 0);
    assert_true(isnan(rm_io_rate(&c.a.run, RM_IOV_DISK_READ))); /* one row: no interval */
    assert_null(rm_io_phase(&c.a, 0));
    rm_io_free(&c.a);
}

/* Counters that go back (a wrap, a device removed and added again), devices that vanish,
 * rows out of order, unknown kinds and garbage: never a negative rate. */
static void bad_rows_and_resets(void **state)
{
    (void)state;
    struct ctx c;
    parse(&c,
          HDR T0 ",disk,sda,4000000,4000000,0,,,,,,\n" T0 ",disk,sdb,1000,0,0,,,,,,\n" T1
                 ",disk,sda,1000,4000001,0,,,,,,\n" /* read went back: a reset */
          T2 ",disk,sda,2001000,4000001,0,,,,,,\n"  /* sdb is gone */
          T1 ",disk,sda,9999999,0,0,,,,,,\n"        /* out of order */
          T3 ",disk,sdb,0,0,0,,,,,,\n"              /* sdb back with counters from 0 */
          T3 ",weird,x,1,2,3,,,,,,\n" T3 ",disk,sda,-5,0,0,,,,,,\n" T3
                 ",disk,sda,1.5,0,0,,,,,,\n" T3 ",disk,,1,1,1,,,,,,\n" T3 ",disk,sda,1,2\n",
          1);
    assert_int_equal(c.skipped, 5);
    assert_int_equal(c.a.resets, 2);
    assert_int_equal(c.a.devs[0].resets, 1);
    assert_int_equal(c.a.devs[1].resets, 1);
    const struct rm_io_acc *a = &c.a.run;
    /* Only sda's T1 -> T2 interval counts: 2 MB in 1 s. */
    assert_true(fabs(rm_io_rate(a, RM_IOV_DISK_READ) - 2.0) < 1e-9);
    assert_true(rm_io_rate(a, RM_IOV_DISK_WRITE) == 0);
    for (int v = 0; v < RM_IOV_COUNT; v++)
        assert_true(isnan(rm_io_rate(a, v)) || rm_io_rate(a, v) >= 0);
    rm_io_free(&c.a);
}

static void merge_files(void **state)
{
    (void)state;
    struct ctx c1, c2;
    parse(&c1, HDR T0 ",disk,sda,0,0,0,,,,,,\n" T1 ",disk,sda,1000000,0,0,,,,,,\n", 1);
    parse(&c2,
          HDR T2 ",disk,sda,0,0,0,,,,,,\n" T3 ",disk,sda,3000000,0,0,,,,,,\n" T3
                 ",net,eth0,,,,1,1,,,,\n",
          1);
    struct rm_io_agg m;
    rm_io_init(&m, 1);
    rm_io_merge(&m, &c1.a);
    rm_io_merge(&m, &c2.a);
    assert_true(fabs(rm_io_rate(&m.run, RM_IOV_DISK_READ) - 2.0) < 1e-9);
    assert_int_equal(m.ndevs, 2);
    assert_true(m.devs[0].sum[0] == 4e6);
    assert_true(fabs(rm_io_rate(rm_io_phase(&m, 0), RM_IOV_DISK_READ) - 2.0) < 1e-9);
    rm_io_free(&m);
    rm_io_free(&c1.a);
    rm_io_free(&c2.a);
}

/* ---- the sampler on a fake /proc and /sys ------------------------------------------- */

struct rig {
    char dir[64];
    pthread_mutex_t lock;
    struct rm_session sess;
    struct rm_latest latest;
    atomic_int stop, wpid;
    struct rm_port port;
    int events;
    char last_event[64];
    enum rm_health health;
};

static void on_event(void *owner, const char *name, json_t *data)
{
    struct rig *r = owner;
    r->events++;
    snprintf(r->last_event, sizeof r->last_event, "%s", name);
    json_decref(data);
}

static void on_health(void *owner, int collector, enum rm_health h, const char *e, int count)
{
    struct rig *r = owner;
    (void)collector, (void)e, (void)count;
    r->health = h;
}

static void put(const struct rig *r, const char *rel, const char *text)
{
    char path[256];
    snprintf(path, sizeof path, "%s/%s", r->dir, rel);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static void mk(const struct rig *r, const char *rel)
{
    char path[256];
    snprintf(path, sizeof path, "%s/%s", r->dir, rel);
    assert_int_equal(mkdir(path, 0755), 0);
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    static char buf[65536];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

#define STAT "cpu  1 0 1 100 0 0 0 0 0 0\ncpu0 1 0 1 100 0 0 0 0 0 0\n"
#define MEMINFO "MemTotal: 1000 kB\nMemFree: 500 kB\nMemAvailable: 600 kB\n"
#define PIDSTAT(pid, ppid)                                                                         \
    pid " (w) S " ppid " 1 1 0 -1 0 0 0 0 0 5 5 0 0 20 0 1 0 100 1000 10 0 0 0 0 0 0 0 0 0 0 0 "   \
        "0 0 0 0 0 0 0 0 0\n"

static void sampler_on_a_fake_tree(void **state)
{
    (void)state;
    struct rig r;
    memset(&r, 0, sizeof r);
    snprintf(r.dir, sizeof r.dir, "/tmp/runmon-test-io.XXXXXX");
    assert_non_null(mkdtemp(r.dir));
    pthread_mutex_init(&r.lock, NULL);
    snprintf(r.sess.dir, sizeof r.sess.dir, "%s/out", r.dir);
    mk(&r, "out");
    mk(&r, "proc");
    mk(&r, "proc/net");
    mk(&r, "proc/pressure");
    mk(&r, "sys");
    mk(&r, "sys/class");
    mk(&r, "sys/class/block");
    mk(&r, "sys/class/block/sda1");
    put(&r, "sys/class/block/sda1/partition", "1\n");
    mk(&r, "sys/class/block/dm-0");
    mk(&r, "sys/class/block/dm-0/slaves");
    mk(&r, "sys/class/block/dm-0/slaves/sda1");
    put(&r, "proc/stat", STAT);
    put(&r, "proc/meminfo", MEMINFO);
    /* The tree: 4242 and its child 4243, whose io file cannot be read (a directory here;
     * another user's process for EACCES). */
    mk(&r, "proc/4242");
    mk(&r, "proc/4242/task");
    mk(&r, "proc/4242/task/4242");
    put(&r, "proc/4242/task/4242/children", "4243 ");
    put(&r, "proc/4242/stat", PIDSTAT("4242", "1"));
    put(&r, "proc/4242/io", "read_bytes: 1000\nwrite_bytes: 10\n");
    mk(&r, "proc/4243");
    mk(&r, "proc/4243/task");
    mk(&r, "proc/4243/task/4243");
    put(&r, "proc/4243/task/4243/children", "");
    put(&r, "proc/4243/stat", PIDSTAT("4243", "4242"));
    mk(&r, "proc/4243/io");
    put(&r, "proc/diskstats",
        "   8 0 sda 1 0 8 1 2 0 16 2 0 3 3 0 0 0 0 0 0 0 0 0\n" /* extra columns */
        "   8 1 sda1 1 0 8 1 2 0 16 2 0 3 3\n"                  /* a partition */
        " 253 0 dm-0 1 0 8 1 2 0 16 2 0 3 3\n"                  /* stacked on sda1 */
        "   7 0 loop0 0 0 0 0 0 0 0 0 0 0 0\n"                  /* never used */
        "   8 16 sdb 1 0 80 1 2 0 16 2 0 3 3\n");
    put(&r, "proc/net/dev",
        "Inter-|\n face |\n    lo: 5 0 0 0 0 0 0 0 5 0 0 0 0 0 0 0\n"
        "  eth0: 7 0 0 0 0 0 0 0 9 0 0 0 0 0 0 0\n");
    put(&r, "proc/pressure/io",
        "some avg10=0 avg60=0 avg300=0 total=100\n"
        "full avg10=0 avg60=0 avg300=0 total=50\n");
    r.port = (struct rm_port){.owner = &r,
                              .event = on_event,
                              .set_health = on_health,
                              .lock = &r.lock,
                              .sess = &r.sess,
                              .latest = &r.latest,
                              .stop = &r.stop,
                              .workload_pid = &r.wpid,
                              .interval_s = 1};
    char proc[96], sys[96], err[256];
    snprintf(proc, sizeof proc, "%s/proc", r.dir);
    snprintf(sys, sizeof sys, "%s/sys", r.dir);
    struct rm_io_opts o = {
        .interval_s = 1, .with_lo = 0, .with_tree = 1, .proc_root = proc, .sys_root = sys};
    struct rm_io_sampler *s = calloc(1, sizeof *s);
    assert_int_equal(rm_io_sampler_open(s, &r.port, &o, err, sizeof err), 0);
    assert_string_equal(r.last_event, "io_part_unavailable"); /* cpu and memory pressure */
    atomic_store(&r.wpid, 4242);
    rm_io_sampler_sample(s, 1000000000);
    usleep(5000); /* io.csv's times have ms: samples a ms apart or more, as the thread's are */
    /* Second sample: sda's counters went back, sdb vanished, a garbage line, 4242 read more. */
    put(&r, "proc/diskstats", "   8 0 sda 1 0 4 1 2 0 16 2 0 3 3\n   8 32 sdc x\n");
    put(&r, "proc/4242/io", "read_bytes: 3000\nwrite_bytes: 10\n");
    rm_io_sampler_sample(s, 2000000000);
    assert_int_equal(r.sess.collectors[RM_STREAM_IO].nonconforming_lines, 1);
    /* The child exits and is reaped by 4242 (its bytes now in 4242's counter); then 4242's
     * io file cannot be read either: its last values stand. */
    put(&r, "proc/4242/task/4242/children", "");
    usleep(5000);
    rm_io_sampler_sample(s, 3000000000);
    char path[128];
    snprintf(path, sizeof path, "%s/4242/io", proc);
    unlink(path);
    mkdir(path, 0755);
    usleep(5000);
    rm_io_sampler_sample(s, 4000000000);
    rm_io_sampler_stop(s);
    free(s);
    snprintf(path, sizeof path, "%s/out/io.csv", r.dir);
    const char *csv = slurp(path);
    /* Header, then sda and sdb (not the partition, the stacked device or the idle loop),
     * eth0 (not lo), io pressure, the tree: 1000 bytes read, one process unreadable. */
    assert_non_null(strstr(csv, "ts,kind,name,read_bytes,write_bytes,busy_ms,rx_bytes,"
                                "tx_bytes,some_us,full_us,procs,unreadable\n"));
    assert_non_null(strstr(csv, ",disk,sda,4096,8192,3,,,,,,\n"));
    assert_non_null(strstr(csv, ",disk,sdb,40960,8192,3,,,,,,\n"));
    assert_null(strstr(csv, "sda1"));
    assert_null(strstr(csv, "dm-0"));
    assert_null(strstr(csv, "loop0"));
    assert_null(strstr(csv, ",net,lo,"));
    assert_non_null(strstr(csv, ",net,eth0,,,,7,9,,,,\n"));
    assert_non_null(strstr(csv, ",pressure,io,,,,,,100,50,,\n"));
    assert_non_null(strstr(csv, ",tree,4242,1000,10,,,,,,2,1\n"));
    assert_non_null(strstr(csv, ",disk,sda,2048,8192,3,,,,,,\n")); /* as read: it went back */
    assert_non_null(strstr(csv, ",tree,4242,3000,10,,,,,,2,1\n"));
    assert_non_null(strstr(csv, ",tree,4242,3000,10,,,,,,1,0\n"));
    assert_non_null(strstr(csv, ",tree,4242,3000,10,,,,,,1,1\n")); /* never back */
    /* Read back: the reset is counted, no rate is negative. */
    struct ctx c;
    parse(&c, csv, 0);
    assert_int_equal(c.skipped, 0);
    assert_int_equal(c.a.resets, 1);
    for (int v = 0; v < RM_IOV_COUNT; v++)
        assert_true(isnan(rm_io_rate(&c.a.run, v)) || rm_io_rate(&c.a.run, v) >= 0);
    rm_io_free(&c.a);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", r.dir);
    assert_int_equal(system(cmd), 0);
}

/* Occurrences of needle in hay. */
static int count_of(const char *hay, const char *needle)
{
    int n = 0;
    for (const char *p = hay; (p = strstr(p, needle)); p++)
        n++;
    return n;
}

/* Whether a device is a whole disk is asked of sysfs once per device set: a partition table
 * rewritten (or a disk added) changes /proc/diskstats' names, and then every device is asked
 * again; between changes no sample looks at sysfs. */
static void disk_list_rescanned_when_the_set_changes(void **state)
{
    (void)state;
    struct rig r;
    memset(&r, 0, sizeof r);
    snprintf(r.dir, sizeof r.dir, "/tmp/runmon-test-io.XXXXXX");
    assert_non_null(mkdtemp(r.dir));
    pthread_mutex_init(&r.lock, NULL);
    snprintf(r.sess.dir, sizeof r.sess.dir, "%s/out", r.dir);
    mk(&r, "out");
    mk(&r, "proc");
    mk(&r, "sys");
    mk(&r, "sys/class");
    mk(&r, "sys/class/block");
    put(&r, "proc/diskstats", "   8 0 sda 1 0 8 1 2 0 16 2 0 3 3\n");
    r.port = (struct rm_port){.owner = &r,
                              .event = on_event,
                              .set_health = on_health,
                              .lock = &r.lock,
                              .sess = &r.sess,
                              .latest = &r.latest,
                              .stop = &r.stop,
                              .workload_pid = &r.wpid,
                              .interval_s = 1};
    char proc[96], sys[96], err[256];
    snprintf(proc, sizeof proc, "%s/proc", r.dir);
    snprintf(sys, sizeof sys, "%s/sys", r.dir);
    struct rm_io_opts o = {.interval_s = 1, .proc_root = proc, .sys_root = sys};
    struct rm_io_sampler *s = calloc(1, sizeof *s);
    assert_int_equal(rm_io_sampler_open(s, &r.port, &o, err, sizeof err), 0);
    rm_io_sampler_sample(s, 1000000000); /* sda: sysfs knows nothing of it, a whole disk */
    /* sysfs now says sda is a partition, the set is the same: not asked, sda stays. */
    mk(&r, "sys/class/block/sda");
    put(&r, "sys/class/block/sda/partition", "1\n");
    usleep(5000);
    rm_io_sampler_sample(s, 2000000000);
    /* A disk added: the set changed, sda is asked again (a partition now, left out). */
    put(&r, "proc/diskstats",
        "   8 0 sda 1 0 8 1 2 0 16 2 0 3 3\n   8 16 sdb 1 0 80 1 2 0 16 2 0 3 3\n");
    usleep(5000);
    rm_io_sampler_sample(s, 3000000000);
    rm_io_sampler_stop(s);
    free(s);
    char path[128];
    snprintf(path, sizeof path, "%s/out/io.csv", r.dir);
    const char *csv = slurp(path);
    assert_int_equal(count_of(csv, ",disk,sda,"), 2);
    assert_int_equal(count_of(csv, ",disk,sdb,"), 1);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", r.dir);
    assert_int_equal(system(cmd), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(diskstats_columns),
        cmocka_unit_test(net_dev_lines),
        cmocka_unit_test(pressure_and_pid_io),
        cmocka_unit_test(rates_from_counters),
        cmocka_unit_test(bad_rows_and_resets),
        cmocka_unit_test(merge_files),
        cmocka_unit_test(sampler_on_a_fake_tree),
        cmocka_unit_test(disk_list_rescanned_when_the_set_changes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
