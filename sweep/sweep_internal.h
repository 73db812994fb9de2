/* Private to the sweep page (sweep/sweep_page.h is its API):
 *
 *   sweep_runs.c   each run's folder: session.json (GPU totals, times), gpu.csv streamed into
 *                  the run's VRAM, utilization and power series, summary.json's phases
 *   sweep_dirs.c   the rows of several session folders, parameters inferred from commands
 *   sweep_js.c     the page's CSS and script
 *   sweep_page.c   the page: table, bars, overlaid charts, phase table
 */
#ifndef RUNMON_REPORT_SWEEP_INTERNAL_H
#define RUNMON_REPORT_SWEEP_INTERNAL_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "report/report.h"
#include "sweep/sweep_page.h"

/* The overlaid series: the sum of the run's GPUs' memory used (MiB), the mean of their
 * utilization (%), the sum of their power (W), one value per sample of all GPUs. */
enum { SW_VRAM, SW_UTIL, SW_POWER, SW_COUNT };

struct sweep_run {
    const json_t *row;
    char *label;          /* the run's name in the legend: its parameters, else its id */
    const char *dir;      /* the row's session_dir, or NULL */
    double vram_total_mb; /* the largest total of its GPUs; 0: unknown */
    char gpu[160];        /* its GPUs' model, "2 x NAME" for several; "" unknown */
    int64_t span_ns;      /* from its start to its end (the x range it covers); 0: unknown */
    struct rm_ds_point *pts[SW_COUNT];
    size_t npts[SW_COUNT];
    json_t *phases; /* summary.json's phases array (a reference), or NULL */
};

/* Reads run's folder: the GPU total always; with series, the series and the phases. */
void rm_sweep_run_read(struct sweep_run *run, bool series);
void rm_sweep_run_free(struct sweep_run *run);

extern const char rm_sweep_css[];
extern const char rm_sweep_js[];

#endif
