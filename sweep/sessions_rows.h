/* The rows of `runmon sessions`: one per session of a sink's index, as the listing shows it
 * (sweep/sessions_out.h formats them). Each session is read from its newest index line, a
 * dead recorder's session settled as recovery would end it, a running one's files and bytes
 * taken from its state.json. A row is either the index record itself (the plain listing,
 * streamed: no JSON tree per row) or, when rows must be held (sorting, the sweep table), a
 * JSON object whose keys are the JSON listing's; the sweep's figures are added from each
 * session's summary.json. */
#ifndef RUNMON_REPORT_SESSIONS_ROWS_H
#define RUNMON_REPORT_SESSIONS_ROWS_H

#include <jansson.h>
#include <stddef.h>

#include "sink/index.h"

/* One session's row: rec (the streamed listing) or obj (a held row), never both. */
struct rm_session_row {
    const struct rm_index_rec *rec; /* the session's newest index line */
    double duration_s;              /* rec: from start to end (to now while running); -1 unknown */
    long long files, bytes;         /* rec: a running session's from its state.json */
    const json_t *obj;              /* a held row (rm_session_row_json, figures added) */
    const char *command_error;      /* rec: the command never ran (session.json's command_error:
                                       "command not found"), else NULL */
};

/* Called once per session, in the index's order. */
typedef void (*rm_session_row_fn)(void *ctx, const struct rm_session_row *row);

/* Walks the index of the sink dir (opened: rm_sink_open_index) and calls fn for each session
 * whose name may be used (a note on stderr for one that may not). *marked is set when a
 * session's end could not write all its files. 0, or -1 with err (an unreadable index). */
int rm_session_rows_each(const char *dir, rm_session_row_fn fn, void *ctx, int *marked, char *err,
                         size_t errsz);

/* The row of a streamed record as a JSON object, keys in the JSON listing's order:
 * session_id, status, host, started_at, ended_at, duration_s, command, exit_code, signal,
 * files, bytes, and unwritten when there is any. A new reference, or NULL. */
json_t *rm_session_row_json(const struct rm_session_row *row);

/* Adds each row's figures from DIR/ID/summary.json: has_summary, gpu_util_mean_pct,
 * peak_vram_mb (summary.json's workload_peak_vram_mb when not null, else its peak_vram_mb),
 * peak_vram_source ("workload", "gpu" or null), energy_wh (totals.energy_wh); null where the
 * session has no summary.json (running, interrupted) or no such figure. */
void rm_session_rows_add_figures(const char *dir, json_t *rows);
/* The members of DIR/ID/summary.json that the figures come from, and the extra ones named
 * (at most 16), read without a tree of the rest (base/jsonpick.h); NULL when there is none. */
json_t *rm_session_summary_pick(const char *dir, const char *id, const char *const *extra,
                                size_t n_extra);
/* Sets row's figures (as rm_session_rows_add_figures) from picked (NULL: no summary.json). */
void rm_session_row_set_figures(json_t *row, const json_t *picked);

/* The --sort fields: start (oldest first), duration, util, vram, energy (largest first,
 * missing last), status (by name). NULL-terminated. */
extern const char *const rm_session_sort_fields[];
/* The field's own spelling when it is one of them, else NULL. */
const char *rm_session_sort_field(const char *name);
/* True when sorting by field needs the figures of summary.json. */
int rm_session_sort_needs_figures(const char *field);
/* Sorts the held rows by field; ties keep the index's order. */
void rm_session_rows_sort(json_t *rows, const char *field);

#endif
