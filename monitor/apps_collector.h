/* The per-process GPU collector: `nvidia-smi pmon -s mu -d SEC` -> apps.csv.
 *
 * pmon prints, once a second or slower, a row per process per GPU and a row of "-" for a GPU
 * without processes, so an idle GPU (a "-" row) and a stalled collector (no rows at all) stay
 * apart. Columns are found by header name (layouts differ by driver: fb ccpm first or last);
 * the command is the rest of the row and may hold spaces. Each process is marked in_workload
 * when its pid is in the recorded command's process tree (walking ppid links in /proc), 0 when
 * not, and left empty when unknown: a pid that does not exist in our pid namespace, or whose
 * name is not the one pmon printed (a container seeing the host's pids), is never guessed.
 *
 * apps.csv: ts,gpu,uuid,pid,process,vram_mb,sm_pct,in_workload (docs/FORMATS.md). All rows of
 * one pmon sample carry the same ts: pmon runs with -o DT, and the ts is the sample's own time
 * (monitor/smi_time.h); without Date and Time columns, the receipt time of its first row.
 */
#ifndef RUNMON_MONITOR_APPS_COLLECTOR_H
#define RUNMON_MONITOR_APPS_COLLECTOR_H

#include <stdint.h>
#include <sys/types.h>

#include "monitor/collector.h"
#include "monitor/port.h"
#include "monitor/smi_collectors.h"
#include "monitor/smi_time.h"
#include "monitor/stream.h"

#define RM_APPS_CACHE 64

struct rm_apps_pid {
    pid_t pid;
    uint64_t starttime;
    int in_workload; /* 1, 0 */
};

struct rm_apps_ctx {
    const struct rm_port *port;
    struct rm_stream out;
    int proc_fd; /* the /proc root (RUNMON_PROC_ROOT), -1 when it cannot be opened */
    int have_header;
    int ncols; /* columns in pmon's header, the command included */
    int col_gpu, col_pid, col_fb, col_sm, col_cmd;
    int64_t sample_ts, last_row_ts;
    struct rm_smi_time clk;                  /* the samples' ts with -o DT */
    struct rm_apps_pid cache[RM_APPS_CACHE]; /* known answers, by pid and start time */
    int ncache, next_evict;
    /* The workload's processes of the sample being received, published at each flush. */
    struct rm_latest_proc pending[RM_LATEST_MAX_PROCS];
    int npending;
    char psec[16]; /* the child's -d */
};

/* Opens apps.csv in the session folder and the /proc root; period_ns: pmon's -d. 0, or -1
 * with errno. */
int rm_apps_ctx_init(struct rm_apps_ctx *a, const struct rm_port *port, const char *proc_root,
                     int64_t period_ns);
void rm_apps_ctx_fini(struct rm_apps_ctx *a);

/* Its row of rm_smi_collectors (apps.csv; off with record --no-apps). */
extern const struct rm_smi_collector rm_apps_collector;
enum rm_line_kind rm_apps_on_line(void *ctx, char *line, size_t len, int64_t ts_ns);
void rm_apps_on_flush(void *ctx);
/* collector.h's on_window: the read window of the sample times (monitor/smi_time.h). */
void rm_apps_on_window(void *ctx, int64_t since_real);

/* Whether pid is root or a descendant of it, looking in the /proc tree at proc_fd: 1 yes,
 * 0 no, -1 unknown (no such pid here, or its name does not start like name, when name is
 * given). Exposed for tests. */
int rm_pid_in_tree(int proc_fd, pid_t pid, pid_t root, const char *name, size_t name_len,
                   uint64_t *starttime);

#endif
