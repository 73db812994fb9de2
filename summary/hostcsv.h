/* cpu.csv and proc.csv rows (and Python monitors' cpu_metrics.csv) -> host samples.
 * Columns by name only; a file without a recognisable header gives no data. */
#ifndef RUNMON_SUMMARY_HOSTCSV_H
#define RUNMON_SUMMARY_HOSTCSV_H

#include "base/rm_time.h"
#include "summary/csvread.h"
#include "summary/sample.h"

#define RM_HOSTCSV_MAX_COLS 256

struct rm_hostcsv {
    bool mapped;
    size_t ncols;
    signed char metric[RM_HOSTCSV_MAX_COLS]; /* enum rm_host_metric or -1 */
    int ts_col, stamp_col, cpu_col, avail_col;
    struct rm_tzcache tz;
};

void rm_hostcsv_init(struct rm_hostcsv *h);
/* 1 = sample, 0 = header, -(1 + enum rm_skip) = skipped. */
int rm_hostcsv_row(struct rm_hostcsv *h, const struct rm_csv_row *row, struct rm_host_sample *out);

#endif
