/* dmon output -> GPU samples, from dmon's own text (`--dmon FILE`) or from a session's
 * dmon.csv (a `ts` column followed by dmon's column names). Columns are found by name. */
#ifndef RUNMON_SUMMARY_DMON_READ_H
#define RUNMON_SUMMARY_DMON_READ_H

#include "base/rm_time.h"
#include "model/dmon_text.h"
#include "summary/csvread.h"
#include "summary/sample.h"

struct rm_dmon_map {
    bool mapped;
    size_t ncols;
    signed char metric[RM_DMON_MAX_FIELDS]; /* -1: not a metric */
    int gpu_col, ts_col, date_col, time_col;
    struct rm_tzcache tz;
    struct rm_dmon_line line; /* the current text line's tokens (samples point into it) */
    bool blank;               /* the last text line was blank (not counted as skipped) */
};

void rm_dmon_map_init(struct rm_dmon_map *m);
/* Whether a and b map the columns the same way (a file's chunks must agree). */
bool rm_dmon_map_same(const struct rm_dmon_map *a, const struct rm_dmon_map *b);
/* Takes a header: names[0..n). */
void rm_dmon_map_header(struct rm_dmon_map *m, const struct rm_strref *names, size_t n);
/* Returns 1 with *out filled, or -(1 + enum rm_skip). */
int rm_dmon_map_row(struct rm_dmon_map *m, const struct rm_strref *f, size_t n,
                    struct rm_gpu_sample *out);
/* One line of dmon text: 1 = sample, 0 = header/units/blank, -(1 + enum rm_skip) = skipped. */
int rm_dmon_text_line(struct rm_dmon_map *m, const char *line, size_t len, bool torn,
                      struct rm_gpu_sample *out);
/* One row of dmon.csv, same returns. */
int rm_dmon_csv_row(struct rm_dmon_map *m, const struct rm_csv_row *row, struct rm_gpu_sample *out);

#endif
