/* The metrics of a run log: its "metric" lines kept as statistics (model/objective.h's
 * struct rm_metric_stat: last, min, max, count, first and last step and time), per metric
 * over the run and, once the phase windows are known, per phase; and its "objective" lines.
 * Never the points: a metric at 10 kHz for an hour costs what one line costs.
 *
 * A metric line is {"type":"metric","step"?:N,"values":{NAME:number,...},...}: "values" an
 * object of 1 to RM_METRIC_LINE_MAX members, "step" (when present) an integer >= 0; a line
 * without a step takes its order among the metric lines (0, 1, ...) as its step. A value
 * whose name is not a metric name (model/objective.h) or that is not a number is ignored and
 * counted; a line whose values or step are bad is ignored whole and counted; the first of
 * each is kept, as JSON text, for data_quality.notes. At most RM_MAX_METRICS names per run
 * and RM_MAX_PHASE_METRIC_CELLS (phase, metric) pairs are kept; values past them are
 * counted.
 */
#ifndef RUNMON_SUMMARY_METRICS_H
#define RUNMON_SUMMARY_METRICS_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model/objective.h"

#define RM_MAX_METRICS 1000
#define RM_MAX_PHASE_METRIC_CELLS 200000
#define RM_NO_METRIC ((size_t)-1)

struct rm_phase_metric {
    size_t metric;
    struct rm_metric_stat st;
};

/* One phase's metrics, in order of first value. */
struct rm_phase_metrics {
    struct rm_phase_metric *cell;
    size_t n, cap;
};

struct rm_metrics {
    char **name; /* by metric, in order of first appearance */
    struct rm_metric_stat *run;
    size_t n, cap;
    size_t *hash; /* open addressing by name, 0 = empty, else index + 1 */
    size_t hashcap;
    struct rm_phase_metrics *phase; /* by phase index (after rm_metrics_phases) */
    size_t nphase;
    uint64_t cells;

    uint64_t lines;                  /* metric lines (with a time) */
    uint64_t bad_lines, bad_values;  /* ignored whole / one value at a time */
    uint64_t past_names, past_cells; /* values past RM_MAX_METRICS / the cells' cap */
    char bad_line_first[128], bad_value_first[128];
    json_t *objectives; /* the last good objective line's list, or NULL */
    uint64_t bad_objectives;
    char bad_objective_first[128];
};

void rm_metrics_init(struct rm_metrics *m);
void rm_metrics_free(struct rm_metrics *m);

/* A metric line (its JSON tree) at time t (epoch ns), in the run log's order: its values
 * into the run's statistics. */
void rm_metrics_line(struct rm_metrics *m, const json_t *line, int64_t t);

/* A good metric line (every value good: the fast reader's) at time t: n values, step -1
 * when it has none. The same as rm_metrics_line on its tree. */
void rm_metrics_good_line(struct rm_metrics *m, size_t n, const char *const *names,
                          const double *vals, int64_t step, int64_t t);

/* An objective line: kept when good (a later one replaces it), else counted. */
void rm_metrics_objective_line(struct rm_metrics *m, const json_t *line);

/* Calls fn for each good value of a metric line whose order among the metric lines is
 * ordinal (its step when it has none); false, calling nothing, for a bad line. */
bool rm_metrics_values(const json_t *line, uint64_t ordinal,
                       void (*fn)(void *ctx, const char *name, double v, int64_t step), void *ctx);

/* The index of metric name, or RM_NO_METRIC. */
size_t rm_metrics_find(const struct rm_metrics *m, const char *name);

/* Makes room for nphases phases' metrics (before rm_metrics_phase_add). */
void rm_metrics_phases(struct rm_metrics *m, size_t nphases);

/* Adds value v of metric (an index) at step and time t (epoch s) to phase's statistics. */
void rm_metrics_phase_add(struct rm_metrics *m, size_t phase, size_t metric, double v, int64_t step,
                          double t);

/* Phase from's metrics merged into phase into's (a folded row). */
void rm_metrics_phase_fold(struct rm_metrics *m, size_t into, size_t from);

/* {"NAME": {"last", "min", "max", "count", "first_step", "last_step", "first_t", "last_t"}}
 * of the run, or of a phase (NULL: it has none). */
json_t *rm_metrics_json(const struct rm_metrics *m);
json_t *rm_metrics_phase_json(const struct rm_metrics *m, size_t phase);

/* Appends data_quality.notes' lines for what was ignored. */
void rm_metrics_notes(const struct rm_metrics *m, json_t *notes);

#endif
