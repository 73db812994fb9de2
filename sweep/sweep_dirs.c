/* The rows of `runmon report S1 S2 ...`: one per session folder, as the sweep table holds them,
 * and parameter columns inferred from the commands where no run stored any
 * (rm_sweep_infer_params, sweep/sweep_rows.h). */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/jsonpick.h"
#include "model/figures.h"
#include "sweep/sessions_rows.h"
#include "sweep/sweep_internal.h"
#include "sweep/sweep_rows.h"

/* ---- rows -------------------------------------------------------------------------------- */

static void copy_key(json_t *row, const json_t *from, const char *key)
{
    json_t *v = json_object_get(from, key);
    json_object_set(row, key, v ? v : json_null());
}

static json_t *dir_row(const char *dir, char *err, size_t errsz)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/session.json", dir);
    json_t *ses = json_load_file(path, 0, NULL);
    if (!json_is_object(ses)) {
        snprintf(err, errsz, "%s: no session.json (is it a session folder?)", dir);
        json_decref(ses);
        return NULL;
    }
    const char *keys[RM_SWEEP_FIG_COUNT + 6] = {
        "session", "params", "sweep", "workload_vram_basis", "metrics", "objectives"};
    size_t n_keys = 6 + rm_session_figure_members(keys + 6, RM_SWEEP_FIG_COUNT);
    snprintf(path, sizeof path, "%s/summary.json", dir);
    json_t *sum = access(path, R_OK) == 0 ? rm_json_pick_file(path, keys, n_keys) : NULL;
    json_t *row = json_object();
    json_object_set_new(row, "session_dir", json_string(dir));
    copy_key(row, ses, "session_id");
    copy_key(row, ses, "status");
    copy_key(row, ses, "host");
    copy_key(row, ses, "started_at");
    copy_key(row, ses, "ended_at");
    copy_key(row, json_object_get(sum, "session"), "duration_s");
    copy_key(row, ses, "command");
    copy_key(row, ses, "exit_code");
    copy_key(row, ses, "signal");
    rm_session_row_set_figures(row, sum);
    rm_session_row_set_bars(row, sum);
    /* the GPUs a run's GPU-hours count, as the sweep's rows carry them (sweep_rows.c) */
    const json_t *gc = json_object_get(json_object_get(sum, "totals"), "gpu_count");
    json_object_set_new(row, "gpu_count",
                        json_is_number(gc) ? json_copy((json_t *)gc) : json_null());
    if (json_is_string(json_object_get(sum, "workload_vram_basis"))) /* assumed, unattributed */
        copy_key(row, sum, "workload_vram_basis");
    /* record --sweep/--param (session.json) over the run log's params lines (the summary's). */
    if (json_is_string(json_object_get(ses, "sweep")))
        copy_key(row, ses, "sweep");
    else if (json_is_string(json_object_get(sum, "sweep")))
        copy_key(row, sum, "sweep");
    json_t *sp = json_object_get(ses, "params"), *rp = json_object_get(sum, "params");
    if (json_is_object(rp) || json_is_object(sp)) {
        json_t *params = json_is_object(rp) ? json_deep_copy(rp) : json_object();
        if (json_is_object(sp)) json_object_update(params, sp);
        json_object_set_new(row, "params", params);
    }
    /* The run log's metrics and objectives (sweep/sweep_judge.h). */
    if (json_is_object(json_object_get(sum, "metrics"))) copy_key(row, sum, "metrics");
    if (json_is_array(json_object_get(sum, "objectives")))
        json_object_set(row, "run_objectives", json_object_get(sum, "objectives"));
    json_decref(sum);
    json_decref(ses);
    return row;
}

json_t *rm_sweep_rows_from_dirs(const char *const *dirs, size_t n, json_t **param_names,
                                bool *inferred, size_t *n_hosts, char *err, size_t errsz)
{
    json_t *rows = json_array(), *names = json_array(), *hosts = json_object();
    for (size_t i = 0; i < n; i++) {
        json_t *row = dir_row(dirs[i], err, errsz);
        if (!row) {
            json_decref(rows);
            json_decref(names);
            json_decref(hosts);
            return NULL;
        }
        const char *h = json_string_value(json_object_get(row, "host"));
        json_object_set_new(hosts, h ? h : "", json_true());
        const char *k;
        json_t *v;
        json_object_foreach(json_object_get(row, "params"), k, v)
        {
            bool listed = false;
            size_t j;
            json_t *x;
            json_array_foreach(names, j, x) listed |= !strcmp(json_string_value(x), k);
            if (!listed) json_array_append_new(names, json_string(k));
        }
        json_array_append_new(rows, row);
    }
    *inferred = !json_array_size(names);
    if (*inferred) {
        json_decref(names);
        names = rm_sweep_infer_params(rows);
    }
    *param_names = names;
    *n_hosts = json_object_size(hosts);
    json_decref(hosts);
    return rows;
}
