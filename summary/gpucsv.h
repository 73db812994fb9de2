/* `nvidia-smi --query-gpu` CSV rows -> GPU samples.
 *
 * Columns are found by name when the file has a header (units such as " [MiB]" ignored);
 * a header may appear again mid-file (a restarted nvidia-smi appending) and is re-read.
 * Without one, the field list comes from the caller (session.json's gpu_fields) or else the
 * legacy list below, with a leading runmon `ts` column recognised by its value.
 */
#ifndef RUNMON_SUMMARY_GPUCSV_H
#define RUNMON_SUMMARY_GPUCSV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/rm_time.h"
#include "summary/csvread.h"
#include "summary/sample.h"

#define RM_GPUCSV_LEGACY_FIELDS                                                                    \
    "timestamp,utilization.gpu,utilization.memory,memory.used,memory.total,power.draw,"            \
    "temperature.gpu,clocks.current.sm,clocks.current.memory"

enum rm_col_role {
    RM_COL_IGNORE,
    RM_COL_TS,        /* runmon receipt time, UTC */
    RM_COL_TIMESTAMP, /* nvidia-smi's local time */
    RM_COL_INDEX,
    RM_COL_UUID,
    RM_COL_NAME,
    RM_COL_PCI,
    RM_COL_METRIC,
    RM_COL_THR_MASK,   /* clocks_event_reasons.active */
    RM_COL_THR_REASON, /* clocks_event_reasons.<reason>: metric holds the reason */
    RM_COL_SMCLK_MAX,  /* clocks.max.sm */
    RM_COL_PLIMIT,     /* enforced.power.limit (metric 1) or power.limit (metric 0) */
};

#define RM_GPUCSV_MAX_COLS 512

struct rm_gpucsv {
    bool mapped, assumed, has_ts;
    size_t ncols;
    unsigned char role[RM_GPUCSV_MAX_COLS];
    unsigned char metric[RM_GPUCSV_MAX_COLS];
    const char *fields;     /* comma-separated list for headerless files, NULL = legacy */
    const char *fields_src; /* where fields came from (NULL: "session.json gpu_fields") */
    size_t misfit;          /* while no row fit: the field count of the first that did not */
    uint64_t fit_rows;      /* data rows that the assumed list fit */
    char note[768];         /* what was assumed (and whether it fit), for data_quality */
    char first[64];         /* the header's first field, to spot the header repeated */
    size_t first_len;
    struct rm_ts_cache tc; /* rows of one sample share their time text: parse it once */
};

/* fields: comma-separated --query-gpu list used for a file without header (NULL: legacy). */
void rm_gpucsv_init(struct rm_gpucsv *g, const char *fields);

/* Returns 1 with *out filled for a data row, 0 for a header, or -(1 + enum rm_skip). String
 * refs in out point into row. */
int rm_gpucsv_row(struct rm_gpucsv *g, const struct rm_csv_row *row, struct rm_gpu_sample *out);

/* Whether a and b map the columns the same way (a file's chunks must agree). */
bool rm_gpucsv_same_map(const struct rm_gpucsv *a, const struct rm_gpucsv *b);

/* Maps a header/field name (unit suffix already cut) to a role and metric; returns the role. */
int rm_gpucsv_name_role(const char *name, size_t len, int *metric);

#endif
