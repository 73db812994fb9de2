/* What each run of a sweep achieved for what it cost: the objectives (`--objective
 * METRIC:min|max[:last|best]`, else the run logs' objective lines) read from each run's
 * summary.json "metrics", the best value of each marked, the Pareto front of each objective
 * against the cost (`--cost`, energy by default: model/pareto.h), and with `--target` the time
 * and energy each run took to reach it. docs/FORMATS.md, "The sweep table".
 *
 * Each row gains (only when there is an objective or a target):
 *   objectives  [{"objective": "acc:max", "metric", "goal", "pick", "value" (null: the run
 *               logged none), "best" (true for the best value, ties all), "front": "on" |
 *               "within_bar" | "no"}], one per objective, in order
 *   cost        {"name", "unit", "value", "low", "high"} (low and high: the energy's error
 *               bar; the other costs have none: null)
 *   target      {"target": "loss<=0.3", "reached", "seconds" (from the session's start to the
 *               first metric line meeting it), energy_wh (RM_SWEEP_KEY(ENERGY): the run's energy x
 *               seconds / duration, its mean power over that time)}, with --target
 * The time to the target comes from the run's runlog.jsonl (its metric lines, read in order).
 */
#ifndef RUNMON_SWEEP_JUDGE_H
#define RUNMON_SWEEP_JUDGE_H

#include <jansson.h>
#include <stddef.h>

#include "model/objective.h"
#include "model/pareto.h"

struct rm_judge_opts {
    const char **objectives; /* --objective specs (room for RM_OBJECTIVES_MAX), or none */
    size_t n_objectives;
    const char *cost;   /* --cost NAME, or NULL: energy */
    const char *target; /* --target METRIC<=V|>=V, or NULL */
};

/* The commands' getopt values of --objective, --cost and --target (above their own). */
enum rm_judge_opt_kind { RM_JUDGE_OBJECTIVE = 0x4a00, RM_JUDGE_COST, RM_JUDGE_TARGET };

/* Takes one of those options' argument into o (`runmon CMD` in the message): 0, or 2 with
 * the message printed (too many --objective). The specs are parsed later, all at once, by
 * rm_judge_opts_done, so the commands' other messages keep their order. */
int rm_judge_opt(struct rm_judge_opts *o, int opt_kind, const char *arg, const char *cmd);

/* After the options: rm_judge_check, its message printed as `runmon CMD: ...`: 0, or 2. */
int rm_judge_opts_done(const struct rm_judge_opts *o, const char *cmd);

/* Checks the options alone (before anything is read): 0, or -1 with err. */
int rm_judge_check(const struct rm_judge_opts *o, char *err, size_t errsz);

/* A row's cost (its "duration_s", energy figures, peak VRAM in MiB, "gpu_count"), with the
 * energy's error bar (NaN ends for the others); NaN where the row lacks what it needs. The
 * one rule for the sweep table, `report`'s judged rows and the comparison page. */
struct rm_pareto_point rm_judge_cost(const json_t *row, enum rm_cost c);

/* Judges rows (sweep/sweep_rows.h's, each with "metrics" and "run_objectives" from its
 * summary.json) in place; *doc gets the table's {"objectives": [specs], "cost", "target"}
 * (NULL when there is nothing to judge). 0, or -1 with err: a bad option, or an objective or
 * target naming a metric no run logged (err lists those they did). */
int rm_judge_rows(json_t *rows, const struct rm_judge_opts *o, json_t **doc, char *err,
                  size_t errsz);

#endif
