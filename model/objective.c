/* Metric names, objectives, costs and targets: see objective.h. */
#include "model/objective.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/decimal.h"
#include "base/termsafe.h"

__attribute__((format(printf, 3, 4))) static int fail(char *err, size_t errsz, const char *fmt, ...)
{
    if (err && errsz) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errsz, fmt, ap);
        va_end(ap);
    }
    return -1;
}

/* The text as a terminal may show it (a bad name is quoted back to the user). */
static const char *shown(const char *s, char *buf, size_t bufsz)
{
    rm_term_escape(buf, bufsz, s);
    return buf;
}

/* Valid UTF-8 without control characters: termsafe's escaping leaves such text as it is and
 * lengthens anything else, so the escaped length tells. */
static bool clean_text(const char *s, size_t len)
{
    char tmp[1];
    return rm_term_escape_n(tmp, sizeof tmp, s, len) == len;
}

int rm_metric_name_check(const char *name, char *err, size_t errsz)
{
    char q[96];
    if (!name || !*name) return fail(err, errsz, "empty metric name");
    size_t len = strlen(name);
    if (len >= RM_METRIC_NAME_MAX)
        return fail(err, errsz, "metric name '%.40s...' is longer than %d bytes",
                    shown(name, q, sizeof q), RM_METRIC_NAME_MAX - 1);
    if (!clean_text(name, len))
        return fail(err, errsz,
                    "metric name '%s' is not UTF-8 text (control characters or invalid bytes)",
                    shown(name, q, sizeof q));
    size_t bad = strcspn(name, RM_METRIC_NAME_BAD_CHARS);
    if (bad < len)
        return fail(err, errsz, "metric name '%s' contains '%c' (none of %s may appear)",
                    shown(name, q, sizeof q), name[bad], RM_METRIC_NAME_BAD_CHARS);
    if (name[0] == ' ' || name[len - 1] == ' ')
        return fail(err, errsz, "metric name '%s' starts or ends with a space",
                    shown(name, q, sizeof q));
    return 0;
}

const char *rm_goal_name(enum rm_goal goal)
{
    return goal == RM_GOAL_MAX ? "max" : "min";
}

const char *rm_pick_name(enum rm_pick pick)
{
    return pick == RM_PICK_BEST ? "best" : "last";
}

/* Copies the metric part [s, s + n) into out after checking it. */
static int take_metric(const char *s, size_t n, char out[RM_METRIC_NAME_MAX], char *err,
                       size_t errsz)
{
    char name[RM_METRIC_NAME_MAX + 1];
    if (n > RM_METRIC_NAME_MAX) n = RM_METRIC_NAME_MAX; /* long enough to be refused */
    memcpy(name, s, n);
    name[n] = '\0';
    if (rm_metric_name_check(name, err, errsz) < 0) return -1;
    memcpy(out, name, n + 1);
    return 0;
}

int rm_objective_parse(const char *spec, struct rm_objective *out, char *err, size_t errsz)
{
    char q[96];
    if (!spec) spec = "";
    const char *c1 = strchr(spec, ':');
    if (!c1)
        return fail(err, errsz, "objective '%s': expected METRIC:min|max[:last|best]",
                    shown(spec, q, sizeof q));
    struct rm_objective o;
    memset(&o, 0, sizeof o);
    char why[160];
    if (take_metric(spec, (size_t)(c1 - spec), o.metric, why, sizeof why) < 0)
        return fail(err, errsz, "objective '%s': %s", shown(spec, q, sizeof q), why);
    const char *goal = c1 + 1, *c2 = strchr(goal, ':');
    size_t gl = c2 ? (size_t)(c2 - goal) : strlen(goal);
    if (gl == 3 && !memcmp(goal, "min", 3))
        o.goal = RM_GOAL_MIN;
    else if (gl == 3 && !memcmp(goal, "max", 3))
        o.goal = RM_GOAL_MAX;
    else
        return fail(err, errsz, "objective '%s': the goal must be min or max",
                    shown(spec, q, sizeof q));
    o.pick = RM_PICK_LAST;
    if (c2) {
        if (!strcmp(c2 + 1, "best"))
            o.pick = RM_PICK_BEST;
        else if (strcmp(c2 + 1, "last"))
            return fail(err, errsz, "objective '%s': the pick must be last or best",
                        shown(spec, q, sizeof q));
    }
    *out = o;
    return 0;
}

const char *rm_objective_format(const struct rm_objective *o, char *buf, size_t bufsz)
{
    snprintf(buf, bufsz, "%s:%s%s", o->metric, rm_goal_name(o->goal),
             o->pick == RM_PICK_BEST ? ":best" : "");
    return buf;
}

bool rm_goal_better(enum rm_goal goal, double a, double b)
{
    if (isnan(a)) return false;
    if (isnan(b)) return true;
    return goal == RM_GOAL_MAX ? a > b : a < b;
}

void rm_metric_stat_init(struct rm_metric_stat *s)
{
    s->last = s->min = s->max = NAN;
    s->count = 0;
    s->first_step = s->last_step = -1;
    s->first_t = s->last_t = NAN;
}

void rm_metric_stat_add(struct rm_metric_stat *s, double v, int64_t step, double t)
{
    if (s->count == 0) {
        s->min = s->max = v;
        s->first_step = step;
        s->first_t = t;
    } else {
        if (v < s->min) s->min = v;
        if (v > s->max) s->max = v;
    }
    s->last = v;
    s->last_step = step;
    s->last_t = t;
    s->count++;
}

void rm_metric_stat_merge(struct rm_metric_stat *a, const struct rm_metric_stat *b)
{
    if (b->count == 0) return;
    if (a->count == 0) {
        *a = *b;
        return;
    }
    if (b->min < a->min) a->min = b->min;
    if (b->max > a->max) a->max = b->max;
    if (!(b->first_t >= a->first_t)) { /* b seen first (or a's time unknown) */
        a->first_step = b->first_step;
        a->first_t = b->first_t;
    }
    if (!(b->last_t < a->last_t)) {
        a->last = b->last;
        a->last_step = b->last_step;
        a->last_t = b->last_t;
    }
    a->count += b->count;
}

const struct rm_metric_field_def rm_metric_fields[RM_MF_FIELDS] = {
    [RM_MF_LAST] = {"last", 'v', {1, 1, "LAST", 12}},
    [RM_MF_MIN] = {"min", 'v', {2, 1, "MIN", 12}},
    [RM_MF_MAX] = {"max", 'v', {3, 1, "MAX", 12}},
    [RM_MF_COUNT] = {"count", 'i', {4, 1, "COUNT", 9}},
    [RM_MF_FIRST_STEP] = {"first_step", 'i', {5, 1, "STEPS", 0}},
    [RM_MF_LAST_STEP] = {"last_step", 'i', {5, 2, NULL, 0}},
    [RM_MF_FIRST_T] = {"first_t", 't', {0, 0, NULL, 0}},
    [RM_MF_LAST_T] = {"last_t", 't', {0, 0, NULL, 0}},
};

int rm_metric_field_text_at(int col, int pos)
{
    for (int f = 0; f < RM_MF_FIELDS; f++)
        if (col > 0 && rm_metric_fields[f].text.col == col && rm_metric_fields[f].text.pos == pos)
            return f;
    return -1;
}

double rm_metric_field_value(const struct rm_metric_stat *s, enum rm_metric_field f)
{
    switch (f) {
    case RM_MF_LAST:
        return s->last;
    case RM_MF_MIN:
        return s->min;
    case RM_MF_MAX:
        return s->max;
    case RM_MF_COUNT:
        return (double)s->count;
    case RM_MF_FIRST_STEP:
        return s->first_step < 0 ? NAN : (double)s->first_step;
    case RM_MF_LAST_STEP:
        return s->last_step < 0 ? NAN : (double)s->last_step;
    case RM_MF_FIRST_T:
        return s->first_t;
    case RM_MF_LAST_T:
        return s->last_t;
    case RM_MF_FIELDS:
        break;
    }
    return NAN;
}

double rm_objective_value(const struct rm_objective *o, const struct rm_metric_stat *s)
{
    if (!s || s->count == 0) return NAN;
    if (o->pick == RM_PICK_LAST) return s->last;
    return o->goal == RM_GOAL_MAX ? s->max : s->min;
}

static const char *const cost_names[] = {"energy", "duration", "vram", "gpu_hours"};
static const char *const cost_units[] = {"Wh", "s", "MiB", "GPU-h"};
#define COST_COUNT (sizeof cost_names / sizeof *cost_names)

const char *rm_cost_name(enum rm_cost cost)
{
    return (size_t)cost < COST_COUNT ? cost_names[cost] : "?";
}

const char *rm_cost_unit(enum rm_cost cost)
{
    return (size_t)cost < COST_COUNT ? cost_units[cost] : "?";
}

int rm_cost_parse(const char *s, enum rm_cost *out, char *err, size_t errsz)
{
    for (size_t i = 0; s && i < COST_COUNT; i++)
        if (!strcmp(s, cost_names[i])) {
            *out = (enum rm_cost)i;
            return 0;
        }
    char q[96];
    return fail(err, errsz, "cost '%s': expected duration, energy, vram or gpu_hours",
                shown(s ? s : "", q, sizeof q));
}

/* [s, e) without spaces at either end. */
static void trim(const char **s, const char **e)
{
    while (*s < *e && **s == ' ')
        (*s)++;
    while (*e > *s && (*e)[-1] == ' ')
        (*e)--;
}

int rm_target_parse(const char *spec, struct rm_target *out, char *err, size_t errsz)
{
    char q[96];
    if (!spec) spec = "";
    const char *le = strstr(spec, "<="), *ge = strstr(spec, ">=");
    const char *op = le && (!ge || le < ge) ? le : ge;
    if (!op)
        return fail(err, errsz, "target '%s': expected METRIC<=VALUE or METRIC>=VALUE",
                    shown(spec, q, sizeof q));
    struct rm_target t;
    memset(&t, 0, sizeof t);
    t.le = op == le;
    const char *ms = spec, *me = op;
    trim(&ms, &me);
    char why[160];
    if (take_metric(ms, (size_t)(me - ms), t.metric, why, sizeof why) < 0)
        return fail(err, errsz, "target '%s': %s", shown(spec, q, sizeof q), why);
    const char *vs = op + 2, *ve = vs + strlen(vs);
    trim(&vs, &ve);
    size_t n = (size_t)(ve - vs);
    if (n == 0 || rm_parse_decimal(vs, n, &t.value) != n || !isfinite(t.value))
        return fail(err, errsz, "target '%s': the value must be a finite decimal number",
                    shown(spec, q, sizeof q));
    *out = t;
    return 0;
}

const char *rm_target_format(const struct rm_target *t, char *buf, size_t bufsz)
{
    snprintf(buf, bufsz, "%s%s%.15g", t->metric, t->le ? "<=" : ">=", t->value);
    return buf;
}

bool rm_target_met(const struct rm_target *t, double v)
{
    if (isnan(v)) return false;
    return t->le ? v <= t->value : v >= t->value;
}
