/* nvidia-smi's own per-process outputs -> the rows apps.csv gives (summary/apps.h), so that
 * a file from another tool is summarised as processes, as runmon's apps.csv is:
 *
 * - `nvidia-smi pmon` text: two '#' lines (column names, units), then a row per process per
 *   GPU per sample and a row of "-" for a GPU without processes. Columns are found by name
 *   (layouts differ: fb ccpm first on some drivers, last on others; -o DT adds Date and
 *   Time); the command is the rest of the row (it may hold spaces, or be missing when the
 *   row was cut). Without Date and Time, a sample ends where a GPU's idle row or a process
 *   comes again (Windows reprints the header inside a sample, so a header marks nothing).
 * - `--query-compute-apps` CSV: a row per compute process, none for an idle GPU. The header
 *   names what was printed (`used_memory` prints as `used_gpu_memory [MiB]`).
 * - `--query-accounted-apps` CSV: a row per process over its whole life (accounting mode):
 *   its peak memory and the share of its time a kernel ran, not a sample in time.
 *
 * None of them says which process is the workload's: every row is in_workload unknown.
 */
#ifndef RUNMON_SUMMARY_SMI_APPS_H
#define RUNMON_SUMMARY_SMI_APPS_H

#include <stdbool.h>
#include <stddef.h>

#include "base/rm_time.h"
#include "model/dmon_text.h"
#include "summary/apps.h"
#include "summary/csvread.h"

struct rm_pmon_map {
    bool mapped;
    int ncols; /* in the header, the command included */
    int col_gpu, col_pid, col_fb, col_sm, col_cmd, col_date, col_time;
    struct rm_tzcache tz;
    struct rm_dmon_line line; /* the current line's tokens (a row's strings point into it) */
};

void rm_pmon_map_init(struct rm_pmon_map *m);
/* One line of pmon text: 1 with *out for a row, 0 for a header, units or blank line, or
 * -(1 + enum rm_skip). out's strings point into line. */
int rm_pmon_text_line(struct rm_pmon_map *m, const char *line, size_t len, bool torn,
                      struct rm_app_row *out);

enum rm_smi_apps_col {
    RM_SAC_TIMESTAMP,
    RM_SAC_UUID,
    RM_SAC_BUS,
    RM_SAC_GPU_NAME,
    RM_SAC_PID,
    RM_SAC_PROCESS,
    RM_SAC_MEM,  /* used_gpu_memory, or accounted max_memory_usage */
    RM_SAC_UTIL, /* accounted gpu_utilization */
    RM_SAC_COUNT
};

struct rm_smi_apps_csv {
    bool mapped, accounted;
    size_t ncols;
    int col[RM_SAC_COUNT]; /* -1 when absent */
    struct rm_tzcache tz;
    /* GPUs numbered in the order they first appear (these outputs have no index): by uuid,
     * else bus id, else name. */
    char gpu_key[RM_APPS_MAX_GPUS][64];
    int ngpus;
    bool too_many; /* a GPU past RM_APPS_MAX_GPUS was met (its rows skipped) */
};

void rm_smi_apps_csv_init(struct rm_smi_apps_csv *p);
/* One row of a --query-compute-apps or --query-accounted-apps CSV: as rm_appscsv_row. */
int rm_smi_apps_csv_row(struct rm_smi_apps_csv *p, const struct rm_csv_row *row,
                        struct rm_app_row *out);

/* Which of the two a CSV header row is: 1 compute-apps, 2 accounted-apps, 0 neither. It
 * names pid, and process_name or used_gpu_memory (compute), or max_memory_usage,
 * gpu_utilization or mem_utilization (accounted); units in brackets are ignored. */
int rm_smi_apps_header_kind(const char *const *f, const size_t *len, size_t n);

#endif
