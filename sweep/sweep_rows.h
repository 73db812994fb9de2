/* The runs of a sweep: the sessions of one or more sinks that share a sweep name (or every
 * session), each with its parameters and its figures, ready for the sweep table
 * (sweep/sessions_out.h) and the sweep comparison page. Offline: the sinks' indexes and
 * each session's summary.json, read without a tree of their samples.
 *
 * A session's sweep and parameters: the index line's "sweep" and "params" (runmon record
 * --sweep/--param), over the run log's "params" lines as the summary read them
 * (summary.json "sweep"/"params"): an explicit --param beats the run log's on the same key,
 * --sweep beats the run log's sweep. When no loaded run has a parameter, the parameters are
 * inferred from the command lines (the words that differ between the runs: docs/FORMATS.md,
 * "The sweep table"). */
#ifndef RUNMON_REPORT_SWEEP_ROWS_H
#define RUNMON_REPORT_SWEEP_ROWS_H

#include <jansson.h>
#include <stddef.h>

struct rm_sweep {
    /* The held rows, oldest first (by started_at across sinks; the index's order in one).
     * Each an object with the keys of the sessions listing's held rows (session_id, status,
     * host, started_at, ended_at, duration_s, command, exit_code, signal, files, bytes,
     * unwritten when any), the figures of rm_session_rows_add_figures (has_summary,
     * gpu_util_mean_pct, peak_vram_mb, peak_vram_source, energy_wh), and:
     *   session_dir          the session folder (SINK/ID)
     *   sink                 the sink it came from, as given
     *   sweep                the sweep name, or null
     *   params               object: the parameters (inferred ones when params_inferred)
     *   rerun                0, or how many earlier rows have the same sweep and params
     *   gpu_name             the GPUs' model names, distinct ones joined by ", ", or null
     *   gpu_count            summary.json totals.gpu_count, or null
     *   workload_peak_vram_mb, device_peak_vram_mb   summary.json's two VRAM peaks, or null
     *   framework_peak_mb    summary.json framework_peak_mb.max, or null
     *   energy_wh_low, energy_wh_high   summary.json totals' bar of energy_wh, or null
     *   phase_seconds        object: each phase path's total_seconds (summary.json phases[])
     *   metrics              object: summary.json "metrics" (each metric's statistics), when it has
     * them run_objectives       summary.json "objectives" (the run log's), when it has them
     */
    json_t *rows;
    json_t *param_names; /* array of strings: the parameter columns, in order */
    int params_inferred; /* the parameters come from the command lines */
    int n_hosts;         /* distinct hosts among the rows */
    int marked;          /* a row's end could not write all its files (its "unwritten") */
    json_t *notes;       /* array of strings: sessions skipped or read in part, and why */
};

/* The runs of one sweep (or of every session when name is NULL) from one or more sinks,
 * which the command has opened (rm_sinks_open: recovery first, once per command). A session
 * found in two sinks is listed once (the first). 0, or -1 with err (a sink whose index cannot
 * be read); out is then empty. */
int rm_sweep_load(const char *const *sinks, size_t n_sinks, const char *sweep_name,
                  struct rm_sweep *out, char *err, size_t errsz);
void rm_sweep_free(struct rm_sweep *s);

/* The parameters a command line gives (the inference rule, for one command): an object of
 * the words that are options (--k v, --k=v, -k v, k=v; a flag without a value is true) and
 * positional words (arg0 the program, arg1...). A new reference. */
json_t *rm_sweep_command_params(const json_t *command);

/* Infers parameters from the rows' "command" arrays by that rule: the keys whose values are
 * not the same in every run (a missing key differs from any value), in order of first
 * appearance, become the columns. Sets each row's "params" and returns the new array of
 * column names (possibly empty). rm_sweep_load and the `report S1 S2 ...` rows use it. */
json_t *rm_sweep_infer_params(json_t *rows);

#endif
