#include "model/objects.h"

#include <stddef.h>

const struct rm_object rm_objects[RM_OBJ_COUNT] = {
    /* the host's, in "totals": its CPU line under Totals; the phase table's CPU usr % column
     * and the host memory line, which mix objects, read their figures by key */
    [RM_OBJ_CPU] = {"cpu", true, true, {"  CPU % (means)", NULL}},
    [RM_OBJ_PROC] = {"proc", true, true, {NULL, NULL}},
    [RM_OBJ_IO] = {"io",
                   false,
                   false,
                   {"  I/O  ", "\nI/O by phase (MB/s; pressure: some % of the time; tree: MB "
                               "read/written)\n"}},
    /* the text and the report show its findings ("held back by"), not its figures */
    [RM_OBJ_STALL] = {"stall", false, false, {NULL, NULL}},
};

#define REAL(d) .kind = RM_OK_REAL, .dec = (d)
#define INT .kind = RM_OK_INT, .dec = 0
#define OWN_JSON .kind = RM_OK_JSON, .dec = 0
#define TEXT(l, p, pre, post, d) .text = {(l), (p), (pre), (post), (d), false}
#define TEXT_IF_POSITIVE(l, p, pre, post) .text = {(l), (p), (pre), (post), 0, true}
#define PHASES(c, h, w, d) .phases = {(c), (h), (w), (d)}
#define REPORT(c, h, d) .report = {(c), (h), (d)}

enum { T = RM_OF_IN_TEXT, P = RM_OF_IN_PHASES, R = RM_OF_IN_REPORT };

/* cpu.csv's and proc.csv's figures are statistics of the host's samples (summary/hostcsv.c's
 * engine): a percentage's mean and max over the samples, a peak their max. io.csv's rates
 * are over the time its rows cover (summary/iocsv.c); its pressure is the share of that time
 * some (or all) tasks stalled, at most 100 %. stall.csv's figures (summary/stallcsv.c) are
 * weighted by the share of a row's interval in the run or the phase; the text and the report
 * show its findings ("held back by"), not its figures. */
const struct rm_obj_figure rm_obj_figures[RM_OF_COUNT] = {
    [RM_OF_CPU_SAMPLES] = {RM_OBJ_CPU, "samples", "", INT, false, 0},
    [RM_OF_CPU_USR_MEAN] = {RM_OBJ_CPU, "usr_pct.mean", "%", REAL(3), false, T,
                            TEXT(1, 1, "  usr ", "", 1)},
    [RM_OF_CPU_USR_MAX] = {RM_OBJ_CPU, "usr_pct.max", "%", REAL(3), false, 0},
    [RM_OF_CPU_SYS_MEAN] = {RM_OBJ_CPU, "sys_pct.mean", "%", REAL(3), false, T,
                            TEXT(1, 2, "  sys ", "", 1)},
    [RM_OF_CPU_SYS_MAX] = {RM_OBJ_CPU, "sys_pct.max", "%", REAL(3), false, 0},
    [RM_OF_CPU_IOWAIT_MEAN] = {RM_OBJ_CPU, "iowait_pct.mean", "%", REAL(3), false, T,
                               TEXT(1, 3, "  iowait ", "", 1)},
    [RM_OF_CPU_IOWAIT_MAX] = {RM_OBJ_CPU, "iowait_pct.max", "%", REAL(3), false, 0},
    [RM_OF_CPU_STEAL_MEAN] = {RM_OBJ_CPU, "steal_pct.mean", "%", REAL(3), false, T,
                              TEXT(1, 4, "  steal ", "", 1)},
    [RM_OF_CPU_STEAL_MAX] = {RM_OBJ_CPU, "steal_pct.max", "%", REAL(3), false, 0},
    [RM_OF_CPU_IDLE_MEAN] = {RM_OBJ_CPU, "idle_pct.mean", "%", REAL(3), false, T,
                             TEXT(1, 5, "  idle ", "", 1)},
    [RM_OF_CPU_IDLE_MAX] = {RM_OBJ_CPU, "idle_pct.max", "%", REAL(3), false, 0},
    [RM_OF_CPU_MEM_USED_PEAK] = {RM_OBJ_CPU, "mem_used_peak_mb", "MiB", REAL(3), false, 0},
    [RM_OF_CPU_MEM_TOTAL] = {RM_OBJ_CPU, "mem_total_mb", "MiB", REAL(3), false, 0},
    /* the run's, beside "cpu" in "totals" (the same peak as the run's mem_used_peak_mb) */
    [RM_OF_CPU_HOST_MEM_PEAK] = {RM_OBJ_CPU, "host_mem_peak_mb", "MiB", REAL(3), true, 0,
                                 .beside = true},
    [RM_OF_PROC_SAMPLES] = {RM_OBJ_PROC, "samples", "", INT, false, 0},
    [RM_OF_PROC_RSS_PEAK] = {RM_OBJ_PROC, "rss_peak_mb", "MiB", REAL(3), false, R,
                             REPORT(1, "RSS peak MiB", 1)},
    [RM_OF_PROC_CPU_MEAN] = {RM_OBJ_PROC, "cpu_pct.mean", "%", REAL(3), false, 0},
    [RM_OF_PROC_CPU_MAX] = {RM_OBJ_PROC, "cpu_pct.max", "%", REAL(3), false, 0},
    [RM_OF_PROC_NPROCS_MAX] = {RM_OBJ_PROC, "nprocs_max", "", REAL(0), false, 0},
    [RM_OF_IO_DISK_READ_MB_S] = {RM_OBJ_IO, "disk_read_mb_s", "MB/s", REAL(3), false, T | P | R,
                                 TEXT(1, 1, "disk read ", "", 2), PHASES(1, "DISK R", 7, 2),
                                 REPORT(2, "disk read MB/s", 2)},
    [RM_OF_IO_DISK_WRITE_MB_S] = {RM_OBJ_IO, "disk_write_mb_s", "MB/s", REAL(3), false, T | P | R,
                                  TEXT(1, 2, " write ", " MB/s", 2), PHASES(2, "DISK W", 7, 2),
                                  REPORT(3, "disk write MB/s", 2)},
    [RM_OF_IO_NET_RX_MB_S] = {RM_OBJ_IO, "net_rx_mb_s", "MB/s", REAL(3), false, T | P | R,
                              TEXT(1, 3, "   network rx ", "", 2), PHASES(3, "NET RX", 7, 2),
                              REPORT(4, "net rx MB/s", 2)},
    [RM_OF_IO_NET_TX_MB_S] = {RM_OBJ_IO, "net_tx_mb_s", "MB/s", REAL(3), false, T | P | R,
                              TEXT(1, 4, " tx ", " MB/s", 2), PHASES(4, "NET TX", 7, 2),
                              REPORT(5, "net tx MB/s", 2)},
    [RM_OF_IO_CPU_SOME_PCT] = {RM_OBJ_IO, "cpu_some_pct", "%", REAL(3), false, T | P,
                               TEXT(2, 1, "pressure (some/full % of the time)  cpu ", "", 1),
                               PHASES(5, "CPU", 5, 1)},
    [RM_OF_IO_CPU_FULL_PCT] = {RM_OBJ_IO, "cpu_full_pct", "%", REAL(3), false, T,
                               TEXT(2, 2, "/", "", 1)},
    [RM_OF_IO_IO_SOME_PCT] = {RM_OBJ_IO, "io_some_pct", "%", REAL(3), false, T | P | R,
                              TEXT(2, 3, "  io ", "", 1), PHASES(6, "IO", 5, 1),
                              REPORT(6, "io stall %", 1)},
    [RM_OF_IO_IO_FULL_PCT] = {RM_OBJ_IO, "io_full_pct", "%", REAL(3), false, T,
                              TEXT(2, 4, "/", "", 1)},
    [RM_OF_IO_MEMORY_SOME_PCT] = {RM_OBJ_IO, "memory_some_pct", "%", REAL(3), false, T | P,
                                  TEXT(2, 5, "  memory ", "", 1), PHASES(7, "MEM", 5, 1)},
    [RM_OF_IO_MEMORY_FULL_PCT] = {RM_OBJ_IO, "memory_full_pct", "%", REAL(3), false, T,
                                  TEXT(2, 6, "/", "", 1)},
    [RM_OF_IO_TREE_READ_MB_S] = {RM_OBJ_IO, "tree_read_mb_s", "MB/s", REAL(3), false, T,
                                 TEXT(3, 2, "", " MB/s)", 2)},
    [RM_OF_IO_TREE_WRITE_MB_S] = {RM_OBJ_IO, "tree_write_mb_s", "MB/s", REAL(3), false, T,
                                  TEXT(3, 4, "", " MB/s)", 2)},
    [RM_OF_IO_TREE_READ_MB] = {RM_OBJ_IO, "tree_read_mb", "MB", REAL(3), false, T | P,
                               TEXT(3, 1, "process tree: read ", " MB (", 1),
                               PHASES(8, "TREE R", 8, 1)},
    [RM_OF_IO_TREE_WRITE_MB] = {RM_OBJ_IO, "tree_write_mb", "MB", REAL(3), false, T | P,
                                TEXT(3, 3, "  write ", " MB (", 1), PHASES(9, "TREE W", 8, 1)},
    /* the run's devices, each with its own totals (docs/FORMATS.md) */
    [RM_OF_IO_DISKS] = {RM_OBJ_IO, "disks", "", OWN_JSON, true, 0},
    [RM_OF_IO_INTERFACES] = {RM_OBJ_IO, "interfaces", "", OWN_JSON, true, 0},
    [RM_OF_IO_TREE_PROCS_MAX] = {RM_OBJ_IO, "tree_procs_max", "", INT, true, 0},
    [RM_OF_IO_TREE_UNREADABLE_MAX] = {RM_OBJ_IO, "tree_unreadable_max", "", INT, true, T,
                                      TEXT_IF_POSITIVE(3, 5, "  (up to ",
                                                       " processes unreadable)")},
    [RM_OF_IO_RESETS] = {RM_OBJ_IO, "resets", "", INT, true, T,
                         TEXT_IF_POSITIVE(4, 1, "",
                                          " counters went back (a wrap or a device that came "
                                          "back): those intervals are left out")},
    [RM_OF_IO_ROWS] = {RM_OBJ_IO, "rows", "", INT, true, 0},
    [RM_OF_STALL_SAMPLES] = {RM_OBJ_STALL, "samples", "", REAL(1), false, 0},
    [RM_OF_STALL_SECONDS] = {RM_OBJ_STALL, "seconds", "s", REAL(3), false, 0},
    [RM_OF_STALL_THREADS_MEAN] = {RM_OBJ_STALL, "threads_mean", "", REAL(2), false, 0},
    [RM_OF_STALL_WAIT_SHARE] = {RM_OBJ_STALL, "run_queue_wait_share", "", REAL(4), false, 0},
    [RM_OF_STALL_WAIT_S] = {RM_OBJ_STALL, "run_queue_wait_s", "s", REAL(3), false, 0},
    [RM_OF_STALL_WAITING_THREADS] = {RM_OBJ_STALL, "waiting_threads_mean", "", REAL(3), false, 0},
    [RM_OF_STALL_BLOCKED_SHARE] = {RM_OBJ_STALL, "io_blocked_share", "", REAL(4), false, 0},
    [RM_OF_STALL_BLKIO_S] = {RM_OBJ_STALL, "blkio_delay_s", "s", REAL(3), false, 0},
    [RM_OF_STALL_CG_CPU_PCT] = {RM_OBJ_STALL, "cgroup_cpu_some_pct", "%", REAL(2), false, 0},
    [RM_OF_STALL_CG_IO_PCT] = {RM_OBJ_STALL, "cgroup_io_some_pct", "%", REAL(2), false, 0},
    [RM_OF_STALL_CG_MEMORY_PCT] = {RM_OBJ_STALL, "cgroup_memory_some_pct", "%", REAL(2), false, 0},
};

int rm_obj_text_at(int obj, int line, int pos)
{
    for (int f = 0; f < RM_OF_COUNT; f++) {
        const struct rm_obj_figure *r = &rm_obj_figures[f];
        if (r->obj == obj && (r->shown & RM_OF_IN_TEXT) && r->text.line == line &&
            r->text.pos == pos)
            return f;
    }
    return -1;
}

int rm_obj_phases_at(int obj, int col)
{
    for (int f = 0; f < RM_OF_COUNT; f++) {
        const struct rm_obj_figure *r = &rm_obj_figures[f];
        if (r->obj == obj && (r->shown & RM_OF_IN_PHASES) && r->phases.col == col) return f;
    }
    return -1;
}

int rm_obj_report_at(int col)
{
    for (int f = 0; f < RM_OF_COUNT; f++) {
        const struct rm_obj_figure *r = &rm_obj_figures[f];
        if ((r->shown & RM_OF_IN_REPORT) && r->report.col == col) return f;
    }
    return -1;
}
