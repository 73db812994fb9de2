/* `runmon report --sweep`: one self-contained HTML page that compares the runs of a sweep.
 *
 * The input is the sweep table's held rows (a JSON array of objects with the keys of
 * `sessions --summary --format json`: session_id, status, host, duration_s, exit_code,
 * gpu_util_mean_pct, peak_vram_mb, peak_vram_source, energy_wh, ..., and session_dir, params,
 * rerun where known). Each run's folder (session_dir) gives what the rows do not hold: the
 * GPU's total memory and the series (session.json, gpu.csv) and the phases (summary.json).
 *
 * The page: the sweep table (sortable by a click on a header), bars per run (workload peak VRAM
 * against the GPU's total, energy, duration, mean utilization), the runs' VRAM, utilization and
 * power overlaid on one time axis measured from each run's start (a legend that hides a run on
 * a click), and per phase path the time, VRAM peak and energy of each run. Up to
 * RM_SWEEP_MAX_DRAWN runs are drawn: each has its own pair of a colour (RM_SWEEP_COLORS) and a
 * dash style (RM_SWEEP_DASHES); more runs get the table and the bars only. Each run's series is
 * downsampled while streaming (report.h's min/max buckets, RM_SWEEP_BUCKETS per run: at most
 * twice that many points a run and series), so the page's size and the time to build it do not
 * grow with the samples. docs/FORMATS.md ("sweep report") has the layout.
 */
#ifndef RUNMON_REPORT_SWEEP_PAGE_H
#define RUNMON_REPORT_SWEEP_PAGE_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "model/objective.h"

#define RM_SWEEP_COLORS 10
#define RM_SWEEP_DASHES 5
#define RM_SWEEP_MAX_DRAWN (RM_SWEEP_COLORS * RM_SWEEP_DASHES)
#define RM_SWEEP_BUCKETS 300
/* Phase paths shown in the phase table: those with the most time over all runs. */
#define RM_SWEEP_MAX_PHASES 40

struct rm_sweep_page_opts {
    const char *name;          /* the sweep's name, or NULL (several session paths) */
    const json_t *param_names; /* array of strings: the parameter columns, in order; NULL: none */
    bool params_inferred;      /* the columns are command-line arguments that differ */
    size_t n_hosts;            /* distinct hosts: a host column when > 1 */
    /* The Pareto charts' and the parallel coordinates' objectives, in order. None: the rows'
     * own when sweep/sweep_judge.h judged them (`runmon report --objective/--cost`, or the run
     * logs' objectives: each row's "objectives" and "cost"), else the runs' objective lines
     * (summary.json "objectives"); none there either: no Pareto chart, a note says how to get
     * one. */
    const struct rm_objective *objectives;
    size_t n_objectives;
    enum rm_cost cost; /* what the objectives are weighed against (`--cost`; energy: 0) */
};

/* Builds the page of rows (see above) into a malloc'd buffer. Returns 0; 2 when there is no
 * row or an objective names a metric no run logged (err says why, with the metrics logged);
 * 1 on a runtime failure. */
int rm_sweep_page_build(const json_t *rows, const struct rm_sweep_page_opts *opts, char **html,
                        size_t *len, char *err, size_t errsz);

/* The rows of several session folders dirs[0..n) (the `report S1 S2 ...` form): each row as
 * the sweep table's, from session.json and summary.json, with session_dir; params from
 * session.json's "params" (record --param) over summary.json's (the run log's params lines).
 * *param_names gets the parameter columns: the union of the stored params' keys in order of first
 * appearance, else, when no run stored any, the command-line arguments that differ between the runs
 * (rm_sweep_infer_params), and *inferred says which. A new array, or NULL with err (a folder that
 * cannot be read). */
json_t *rm_sweep_rows_from_dirs(const char *const *dirs, size_t n, json_t **param_names,
                                bool *inferred, size_t *n_hosts, char *err, size_t errsz);

#endif
