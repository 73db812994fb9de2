/* Objectives, the best of each, the Pareto front and the time to a target: see sweep_judge.h. */
#include "sweep/sweep_judge.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/json.h"
#include "base/rm_time.h"
#include "base/termsafe.h"
#include "model/figures.h"
#include "model/objective.h"
#include "model/pareto.h"
#include "summary/csvread.h"

struct judge {
    struct rm_objective obj[RM_OBJECTIVES_MAX];
    size_t n;
    enum rm_cost cost;
    bool has_target;
    struct rm_target target;
};

static int parse_opts(const struct rm_judge_opts *o, struct judge *j, char *err, size_t errsz)
{
    memset(j, 0, sizeof *j);
    if (o->n_objectives > RM_OBJECTIVES_MAX) {
        snprintf(err, errsz, "at most %d --objective", RM_OBJECTIVES_MAX);
        return -1;
    }
    char why[400];
    for (size_t i = 0; i < o->n_objectives; i++) {
        if (rm_objective_parse(o->objectives[i], &j->obj[i], why, sizeof why) < 0) {
            snprintf(err, errsz, "--objective: %s", why);
            return -1;
        }
    }
    j->n = o->n_objectives;
    if (o->cost && rm_cost_parse(o->cost, &j->cost, why, sizeof why) < 0) {
        snprintf(err, errsz, "--cost: %s", why);
        return -1;
    }
    if (o->target) {
        if (rm_target_parse(o->target, &j->target, why, sizeof why) < 0) {
            snprintf(err, errsz, "--target: %s", why);
            return -1;
        }
        j->has_target = true;
    }
    return 0;
}

int rm_judge_check(const struct rm_judge_opts *o, char *err, size_t errsz)
{
    struct judge j;
    return parse_opts(o, &j, err, errsz);
}

int rm_judge_opt(struct rm_judge_opts *o, int opt_kind, const char *arg, const char *cmd)
{
    switch (opt_kind) {
    case RM_JUDGE_OBJECTIVE:
        if (o->n_objectives == RM_OBJECTIVES_MAX) {
            fprintf(stderr, "runmon %s: at most %d --objective\n", cmd, RM_OBJECTIVES_MAX);
            return 2;
        }
        o->objectives[o->n_objectives++] = arg;
        break;
    case RM_JUDGE_COST:
        o->cost = arg;
        break;
    case RM_JUDGE_TARGET:
        o->target = arg;
        break;
    }
    return 0;
}

int rm_judge_opts_done(const struct rm_judge_opts *o, const char *cmd)
{
    char err[600];
    if (rm_judge_check(o, err, sizeof err) == 0) return 0;
    fprintf(stderr, "runmon %s: ", cmd);
    rm_fput_safe(stderr, err);
    fputc('\n', stderr);
    return 2;
}

/* The run logs' objectives when none was given: each distinct one, in order of first
 * appearance over the rows. */
static void run_log_objectives(const json_t *rows, struct judge *j)
{
    size_t i, k;
    const json_t *e, *o;
    json_array_foreach(rows, i, e) json_array_foreach(json_object_get(e, "run_objectives"), k, o)
    {
        char spec[RM_METRIC_NAME_MAX + 16];
        snprintf(spec, sizeof spec, "%s:%s:%s", rm_jget_str(o, "metric"), rm_jget_str(o, "goal"),
                 rm_jget_str(o, "pick"));
        struct rm_objective x;
        if (j->n >= RM_OBJECTIVES_MAX || rm_objective_parse(spec, &x, NULL, 0) < 0) continue;
        bool dup = false;
        for (size_t m = 0; m < j->n; m++)
            dup |= !strcmp(j->obj[m].metric, x.metric) && j->obj[m].goal == x.goal &&
                   j->obj[m].pick == x.pick;
        if (!dup) j->obj[j->n++] = x;
    }
}

static bool any_logged(const json_t *rows, const char *metric)
{
    size_t i;
    const json_t *e;
    json_array_foreach(rows, i,
                       e) if (json_object_get(json_object_get(e, "metrics"), metric)) return true;
    return false;
}

/* "OPTION SPEC: no run logged metric 'M' (the runs' metrics: a, b)". */
static int no_metric(const json_t *rows, const char *opt, const char *spec, const char *metric,
                     char *err, size_t errsz)
{
    json_t *names = json_array();
    size_t i;
    const json_t *e;
    json_array_foreach(rows, i, e)
    {
        const char *k;
        json_t *v;
        json_object_foreach(json_object_get(e, "metrics"), k, v)
        {
            bool seen = false;
            size_t m;
            const json_t *n;
            json_array_foreach(names, m, n) seen |= !strcmp(json_string_value(n), k);
            if (!seen) json_array_append_new(names, rm_jstr(k));
        }
    }
    char list[600] = "", q[200], mq[200];
    size_t used = 0, m;
    const json_t *n;
    json_array_foreach(names, m, n)
    {
        char one[200];
        rm_term_escape(one, sizeof one, json_string_value(n));
        int w = snprintf(list + used, sizeof list - used, "%s%s", m ? ", " : "", one);
        if (w < 0 || (size_t)w >= sizeof list - used) break;
        used += (size_t)w;
    }
    rm_term_escape(q, sizeof q, spec);
    rm_term_escape(mq, sizeof mq, metric);
    snprintf(err, errsz, "%s %s: no run logged metric '%s' (%s%s)", opt, q, mq,
             json_array_size(names) ? "the runs' metrics: " : "the runs logged no metrics", list);
    json_decref(names);
    return -1;
}

static struct rm_metric_stat stat_of(const json_t *row, const char *metric)
{
    struct rm_metric_stat s;
    rm_metric_stat_init(&s);
    const json_t *m = json_object_get(json_object_get(row, "metrics"), metric);
    const json_t *c = json_object_get(m, "count");
    if (!json_is_integer(c) || json_integer_value(c) <= 0) return s;
    s.count = (uint64_t)json_integer_value(c);
    const json_t *v;
    s.last = json_is_number(v = json_object_get(m, rm_metric_fields[RM_MF_LAST].key))
                 ? json_number_value(v)
                 : NAN;
    s.min = json_is_number(v = json_object_get(m, "min")) ? json_number_value(v) : NAN;
    s.max = json_is_number(v = json_object_get(m, "max")) ? json_number_value(v) : NAN;
    return s;
}

static double num(const json_t *row, const char *key)
{
    const json_t *v = json_object_get(row, key);
    return json_is_number(v) ? json_number_value(v) : NAN;
}

struct rm_pareto_point rm_judge_cost(const json_t *row, enum rm_cost c)
{
    struct rm_pareto_point p = {NAN, NAN, NAN, NAN};
    switch (c) {
    case RM_COST_ENERGY:
        p.cost = num(row, RM_SWEEP_KEY(ENERGY));
        p.cost_lo = num(row, RM_FIG_KEY(ENERGY_LOW));
        p.cost_hi = num(row, RM_FIG_KEY(ENERGY_HIGH));
        break;
    case RM_COST_DURATION:
        p.cost = num(row, RM_SWEEP_KEY(DURATION));
        break;
    case RM_COST_VRAM:
        p.cost = num(row, RM_SWEEP_KEY(PEAK_VRAM));
        break;
    case RM_COST_GPU_HOURS: /* unknown without the summary's GPU count, never 1 assumed */
        p.cost = num(row, RM_SWEEP_KEY(DURATION)) * num(row, "gpu_count") / 3600.0;
        break;
    }
    return p;
}

static json_t *jnum_or_null(double v)
{
    return isfinite(v) ? json_real(v) : json_null();
}

/* ---- the time to the target: the run log's metric lines, in order ---- */

struct scan {
    const struct rm_target *t;
    int64_t at; /* the first line meeting it, epoch ns; INT64_MIN: none yet */
};

static void target_line(void *ctx, const char *s, size_t len, bool torn)
{
    struct scan *c = ctx;
    if (c->at != INT64_MIN || torn || !memmem(s, len, "metric", 6)) return;
    json_t *line = json_loadb(s, len, 0, NULL);
    const json_t *ts = json_object_get(line, "ts");
    const json_t *v = json_object_get(json_object_get(line, "values"), c->t->metric);
    int64_t t;
    if (!strcmp(rm_jget_str(line, "type"), "metric") && json_is_number(v) &&
        rm_target_met(c->t, json_number_value(v)) && json_is_string(ts) &&
        rm_parse_ts(json_string_value(ts), json_string_length(ts), &t) == 0)
        c->at = t;
    json_decref(line);
}

static json_t *target_of(const json_t *row, const struct rm_target *t)
{
    char spec[RM_METRIC_NAME_MAX + 40], path[4200];
    json_t *o = json_pack("{s:s}", "target", rm_target_format(t, spec, sizeof spec));
    struct scan c = {t, INT64_MIN};
    snprintf(path, sizeof path, "%s/runlog.jsonl", rm_jget_str(row, "session_dir"));
    char err[256];
    rm_read_lines(path, 1u << 20, target_line, &c, NULL, NULL, err, sizeof err);
    const char *st = rm_jget_str(row, "started_at");
    int64_t start;
    if (c.at == INT64_MIN || rm_parse_ts(st, strlen(st), &start) < 0) {
        json_object_set_new(o, "reached", json_false());
        json_object_set_new(o, "seconds", json_null());
        json_object_set_new(o, RM_SWEEP_KEY(ENERGY), json_null());
        return o;
    }
    double secs = fmax(0.0, (double)(c.at - start) / 1e9), dur = num(row, RM_SWEEP_KEY(DURATION));
    double e = num(row, RM_SWEEP_KEY(ENERGY));
    double share = dur > 0 ? fmin(1.0, secs / dur) : NAN;
    json_object_set_new(o, "reached", json_true());
    json_object_set_new(o, "seconds", json_real(round(secs * 1000) / 1000));
    json_object_set_new(o, RM_SWEEP_KEY(ENERGY), jnum_or_null(e * share));
    return o;
}

/* ---- the rows judged ---- */

static void judge_objective(json_t *rows, const struct judge *j, size_t k)
{
    size_t nr = json_array_size(rows), i;
    struct rm_pareto_point *pts = calloc(nr ? nr : 1, sizeof *pts);
    enum rm_front *front = calloc(nr ? nr : 1, sizeof *front);
    if (!pts || !front) abort();
    const struct rm_objective *o = &j->obj[k];
    double best = NAN;
    json_t *e;
    json_array_foreach(rows, i, e)
    {
        struct rm_metric_stat s = stat_of(e, o->metric);
        pts[i] = rm_judge_cost(e, j->cost);
        pts[i].objective = rm_objective_value(o, &s);
        if (rm_goal_better(o->goal, pts[i].objective, best)) best = pts[i].objective;
    }
    rm_pareto_front(pts, nr, o->goal, front);
    char spec[RM_METRIC_NAME_MAX + 16];
    json_array_foreach(rows, i, e)
    {
        json_t *list = json_object_get(e, "objectives");
        if (!list) json_object_set_new(e, "objectives", list = json_array());
        json_array_append_new(list, json_pack("{s:s,s:s,s:s,s:s,s:o,s:b,s:s}", "objective",
                                              rm_objective_format(o, spec, sizeof spec), "metric",
                                              o->metric, "goal", rm_goal_name(o->goal), "pick",
                                              rm_pick_name(o->pick), "value",
                                              jnum_or_null(pts[i].objective), "best",
                                              !isnan(best) && pts[i].objective == best, "front",
                                              rm_front_name(front[i])));
    }
    free(pts);
    free(front);
}

int rm_judge_rows(json_t *rows, const struct rm_judge_opts *o, json_t **doc, char *err,
                  size_t errsz)
{
    *doc = NULL;
    struct judge j;
    if (parse_opts(o, &j, err, errsz) < 0) return -1;
    char spec[RM_METRIC_NAME_MAX + 40];
    for (size_t k = 0; k < j.n; k++)
        if (!any_logged(rows, j.obj[k].metric))
            return no_metric(rows, "--objective", o->objectives[k], j.obj[k].metric, err, errsz);
    if (j.has_target && !any_logged(rows, j.target.metric))
        return no_metric(rows, "--target", o->target, j.target.metric, err, errsz);
    if (j.n == 0) run_log_objectives(rows, &j);
    if (j.n == 0 && !j.has_target) return 0;
    json_t *specs = json_array();
    for (size_t k = 0; k < j.n; k++) {
        judge_objective(rows, &j, k);
        json_array_append_new(specs, rm_jstr(rm_objective_format(&j.obj[k], spec, sizeof spec)));
    }
    size_t i;
    json_t *e;
    json_array_foreach(rows, i, e)
    {
        struct rm_pareto_point p = rm_judge_cost(e, j.cost);
        json_object_set_new(e, "cost",
                            json_pack("{s:s,s:s,s:o,s:o,s:o}", "name", rm_cost_name(j.cost), "unit",
                                      rm_cost_unit(j.cost), "value", jnum_or_null(p.cost), "low",
                                      jnum_or_null(p.cost_lo), "high", jnum_or_null(p.cost_hi)));
        if (j.has_target) json_object_set_new(e, "target", target_of(e, &j.target));
    }
    *doc = json_pack("{s:o,s:s,s:o}", "objectives", specs, "cost", rm_cost_name(j.cost), "target",
                     j.has_target ? rm_jstr(rm_target_format(&j.target, spec, sizeof spec))
                                  : json_null());
    return 0;
}
