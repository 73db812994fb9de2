/* io.csv (the I/O sampler, docs/FORMATS.md) -> rates per run and per phase: disk read/write
 * and network rx/tx MB/s, pressure stall % (cpu, io, memory; some and full), the command's
 * process tree read/write MB and MB/s.
 *
 * The file holds cumulative counters: a rate is the growth of a counter between two rows of
 * the same device (kind and name) over the time between them. A counter that went back (a
 * wrap, a device removed and added again, a new process tree) starts a new baseline: that
 * interval adds nothing and is counted in `resets`; no rate is ever negative. An interval
 * is shared out to the phases by how much of it their windows cover.
 */
#ifndef RUNMON_SUMMARY_IOCSV_H
#define RUNMON_SUMMARY_IOCSV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "summary/csvread.h"
#include "summary/sample.h"

enum rm_io_col {
    RM_IOC_TS,
    RM_IOC_KIND,
    RM_IOC_NAME,
    RM_IOC_READ,
    RM_IOC_WRITE,
    RM_IOC_BUSY,
    RM_IOC_RX,
    RM_IOC_TX,
    RM_IOC_SOME,
    RM_IOC_FULL,
    RM_IOC_PROCS,
    RM_IOC_UNREADABLE,
    RM_IOC_COUNT
};

/* The columns of an io.csv, found by name in its header (new ones may follow). */
struct rm_iocsv {
    bool mapped;
    size_t ncols;
    int col[RM_IOC_COUNT]; /* -1 when absent */
};

enum rm_io_kind { RM_IO_DISK, RM_IO_NET, RM_IO_PRESSURE, RM_IO_TREE, RM_IO_KIND_COUNT };

/* One row: its counters (at most three per kind), in column order of its kind. */
struct rm_io_row {
    int64_t t_ns;
    enum rm_io_kind kind;
    struct rm_strref name;
    uint64_t v[3];  /* disk: read, write, busy_ms; net: rx, tx; pressure: some_us, full_us;
                       tree: read, write */
    unsigned valid; /* bit i: v[i] was given */
    long long procs, unreadable; /* tree rows; -1 when not given */
};

void rm_iocsv_init(struct rm_iocsv *p);
/* 1 with *out for a data row, 0 for a header, or -(1 + enum rm_skip) (an unknown kind, or a
 * counter that is not a whole number, is garbage). */
int rm_iocsv_row(struct rm_iocsv *p, const struct rm_csv_row *row, struct rm_io_row *out);

/* The figures a run or a phase has: byte and stall sums with the time they cover. */
enum rm_io_value {
    RM_IOV_DISK_READ,
    RM_IOV_DISK_WRITE,
    RM_IOV_NET_RX,
    RM_IOV_NET_TX,
    RM_IOV_CPU_SOME,
    RM_IOV_CPU_FULL,
    RM_IOV_IO_SOME,
    RM_IOV_IO_FULL,
    RM_IOV_MEM_SOME,
    RM_IOV_MEM_FULL,
    RM_IOV_TREE_READ,
    RM_IOV_TREE_WRITE,
    RM_IOV_COUNT
};
/* Values that share their covered time: disks, interfaces, each pressure file, the tree. */
enum rm_io_group {
    RM_IOG_DISK,
    RM_IOG_NET,
    RM_IOG_CPU,
    RM_IOG_IO,
    RM_IOG_MEM,
    RM_IOG_TREE,
    RM_IOG_COUNT
};

struct rm_io_acc {
    double v[RM_IOV_COUNT];      /* bytes, or stalled microseconds */
    int64_t dt_ns[RM_IOG_COUNT]; /* time covered */
    uint32_t seen;               /* bit v: some interval gave value v */
};
void rm_io_acc_merge(struct rm_io_acc *a, const struct rm_io_acc *b);

/* One device or interface over the run. */
struct rm_io_dev_total {
    enum rm_io_kind kind;
    char name[64];
    double sum[3]; /* read, write, busy ms (disk); rx, tx (net) */
    int64_t dt_ns;
    uint64_t resets;
};

/* Per (kind, name): the last counters, to make the next interval. */
struct rm_io_key {
    enum rm_io_kind kind;
    char name[64];
    int64_t t_ns;
    uint64_t v[3];
    unsigned valid;
    int dev; /* its row in devs[], or -1 */
    /* Its first row, when that was a baseline: the interval before it is the one from the
     * previous file's last row of this key (a sealed segment's), which rm_io_merge_next adds. */
    bool first_open;
    int64_t first_t;
    uint64_t first_v[3];
    unsigned first_valid;
};

struct rm_io_agg {
    struct rm_io_acc run;
    struct rm_io_acc **ph; /* [phase], NULL until the phase has an interval */
    size_t nph;
    struct rm_io_dev_total *devs;
    size_t ndevs, capdevs;
    struct rm_io_key *keys;
    size_t nkeys, capkeys;
    int64_t group_t[RM_IOG_COUNT];   /* the row time that last added a group's covered time */
    int64_t sample_t, prev_sample_t; /* the latest row time, and the one before it */
    uint64_t resets, rows;
    long long procs_max, unreadable_max;
};

void rm_io_init(struct rm_io_agg *a, size_t nphases);
void rm_io_free(struct rm_io_agg *a);
/* What one row adds: the growth of its counters since its device's previous row. */
struct rm_io_interval {
    int group; /* enum rm_io_group */
    int64_t t0, t1;
    bool new_time; /* the first interval of its group ending at t1: its time counts */
    int vals[2];   /* enum rm_io_value of d[0], d[1] */
    double d[2];
    unsigned valid; /* bit i: d[i] holds a growth */
};
/* The shortest interval a pressure share is measured over: the I/O sampler's shortest period.
 * Row times are in milliseconds and the kernel's stall totals lag its clock, so a shorter one
 * (the last row of a run that ended at once) can read above 100 %: it gives no figure. */
#define RM_IO_MIN_SHARE_NS 100000000LL

/* One row into the run's figures. 1 with *iv when it made an interval (the caller shares it
 * out to the phases its time overlaps: rm_io_add_phase), else 0. */
int rm_io_add(struct rm_io_agg *a, const struct rm_io_row *row, struct rm_io_interval *iv);
/* ns of iv's time falls in phase p: that share of its growth and, once per group and row
 * time, that time. */
void rm_io_add_phase(struct rm_io_agg *a, size_t p, const struct rm_io_interval *iv, int64_t ns);
/* Folds src (another file of the same session) into dst. */
void rm_io_merge(struct rm_io_agg *dst, const struct rm_io_agg *src);
/* rm_io_merge of the file that follows those merged into dst (the next segment of one stream):
 * first the interval from each device's last row in dst to its first row in src, as one file
 * would have it (given to interval, when not NULL, to share out to the phases); then dst keeps
 * src's last rows for the next file. */
void rm_io_merge_next(struct rm_io_agg *dst, const struct rm_io_agg *src,
                      void (*interval)(void *ctx, const struct rm_io_interval *iv), void *ctx);
/* Phase p's figures, or NULL when no interval ended in it. */
const struct rm_io_acc *rm_io_phase(const struct rm_io_agg *a, size_t p);

/* A value as a rate: bytes -> MB/s (10^6 bytes), stalled us -> % of the time (at most 100);
 * NaN when the value was never given. */
double rm_io_rate(const struct rm_io_acc *a, enum rm_io_value v);

/* Its engine (summary/objects.h) writes summary.json's "io" objects: rm_obj_engine_io. */

#endif
