/* What a run achieved: the metrics it logged (the run log's "metric" lines), the objectives
 * a sweep is judged by (`--objective acc:max[:best]`, the run log's "objective" lines), the
 * cost they are weighed against (`--cost`) and the target a run may reach
 * (`--target loss<=0.3`). Pure functions, no I/O: the run-log writer, the summary, the sweep
 * table and the comparison page share them.
 *
 * A metric name (a key of a metric line's "values", the metric of an objective or a target)
 * is 1 to RM_METRIC_NAME_MAX - 1 bytes of UTF-8 without control characters (as a phase name),
 * and without any of  / : = < > ,  (they separate a phase path, an objective's fields, a
 * KEY=VALUE argument, a target's comparison and a list), nor space at either end.
 */
#ifndef RUNMON_MODEL_OBJECTIVE_H
#define RUNMON_MODEL_OBJECTIVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define RM_METRIC_NAME_MAX 128
#define RM_METRIC_NAME_BAD_CHARS "/:=<>,"
/* The most values one metric line carries, and objectives one objective line (or a command
 * line) names. */
#define RM_METRIC_LINE_MAX 256
#define RM_OBJECTIVES_MAX 64

/* 0 when name is a valid metric name; else -1 and a one-line reason in err (errsz > 0). */
int rm_metric_name_check(const char *name, char *err, size_t errsz);

enum rm_goal { RM_GOAL_MIN, RM_GOAL_MAX };
enum rm_pick { RM_PICK_LAST, RM_PICK_BEST };

struct rm_objective {
    char metric[RM_METRIC_NAME_MAX];
    enum rm_goal goal;
    enum rm_pick pick;
};

/* "min" / "max", "last" / "best". */
const char *rm_goal_name(enum rm_goal goal);
const char *rm_pick_name(enum rm_pick pick);

/* Parses "METRIC:min|max[:last|best]" (pick defaults to last). 0, or -1 with a one-line
 * message in err that names the spec. */
int rm_objective_parse(const char *spec, struct rm_objective *out, char *err, size_t errsz);

/* The spec's text again ("acc:max", "loss:min:best"; ":last" is left out) into buf. */
const char *rm_objective_format(const struct rm_objective *o, char *buf, size_t bufsz);

/* Whether a is strictly better than b for goal (NaN is never better, and anything finite is
 * better than NaN). */
bool rm_goal_better(enum rm_goal goal, double a, double b);

/* The statistics the summary keeps of one metric (over the run, or over a phase's windows):
 * never its points, so a metric at 10 kHz for an hour costs the same as one line. */
struct rm_metric_stat {
    double last, min, max;
    uint64_t count;
    int64_t first_step, last_step; /* the lines' "step"; -1 when the line had none */
    double first_t, last_t;        /* epoch seconds of the first and the last line */
};

/* An empty statistic (count 0, values NaN, steps -1). */
void rm_metric_stat_init(struct rm_metric_stat *s);

/* Adds one value (finite) seen at step (-1: none) and time t (epoch seconds), in order. */
void rm_metric_stat_add(struct rm_metric_stat *s, double v, int64_t step, double t);

/* a and b of the same metric over different lines merged into a: the last value is the
 * one seen later (b's on a tie), the first step the one seen earlier. */
void rm_metric_stat_merge(struct rm_metric_stat *a, const struct rm_metric_stat *b);

/* The statistics' keys in summary.json's "metrics" objects, in their order, and each one's
 * value as a double (a step of -1 or a time unknown: NaN, written as null). Every output
 * that shows a metric's statistics walks this table. */
enum rm_metric_field {
    RM_MF_LAST,
    RM_MF_MIN,
    RM_MF_MAX,
    RM_MF_COUNT,
    RM_MF_FIRST_STEP,
    RM_MF_LAST_STEP,
    RM_MF_FIRST_T,
    RM_MF_LAST_T,
    RM_MF_FIELDS
};
struct rm_metric_field_def {
    const char *key;
    char kind;            /* 'v' a value (full precision), 'i' an integer, 't' epoch seconds (ms) */
    struct {              /* its cell in `runmon summary`'s Metrics table (col 0: not shown) */
        int col;          /* from 1, after NAME */
        int pos;          /* its place in the cell, from 1: a cell joins its fields with "-" */
        const char *head; /* the column's header (the cell's first field's) */
        int width;        /* right-aligned in that width; 0: as it is (the last column) */
    } text;
};
/* The field at place pos of the Metrics table's column col, or -1. */
int rm_metric_field_text_at(int col, int pos);
extern const struct rm_metric_field_def rm_metric_fields[RM_MF_FIELDS];
double rm_metric_field_value(const struct rm_metric_stat *s, enum rm_metric_field f);

/* The objective's value of a metric: its last value, or with pick best its min or max by the
 * goal. NaN when the metric has no value (count 0 or NULL). */
double rm_objective_value(const struct rm_objective *o, const struct rm_metric_stat *s);

/* The cost an objective is weighed against (`--cost`; energy by default). */
enum rm_cost { RM_COST_ENERGY, RM_COST_DURATION, RM_COST_VRAM, RM_COST_GPU_HOURS };

/* "energy", "duration", "vram", "gpu_hours". */
const char *rm_cost_name(enum rm_cost cost);
/* The unit the sweep table gives it in: "Wh", "s", "MiB", "GPU-h". */
const char *rm_cost_unit(enum rm_cost cost);
/* Parses a cost's name. 0, or -1 with a message listing the names in err. */
int rm_cost_parse(const char *s, enum rm_cost *out, char *err, size_t errsz);

/* A target: METRIC<=VALUE (le) or METRIC>=VALUE, VALUE finite. */
struct rm_target {
    char metric[RM_METRIC_NAME_MAX];
    bool le;
    double value;
};

/* Parses "loss<=0.3" / "acc>=0.9" (spaces around the parts allowed). 0, or -1 with a message
 * in err. */
int rm_target_parse(const char *spec, struct rm_target *out, char *err, size_t errsz);

/* The spec's text again ("loss<=0.3", the value with %g) into buf. */
const char *rm_target_format(const struct rm_target *t, char *buf, size_t bufsz);

/* Whether value v meets the target (NaN never does). */
bool rm_target_met(const struct rm_target *t, double v);

#endif
