/* A run log's metric and objective lines as statistics: see metrics.h. */
#include "summary/metrics.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "base/strhash.h"

void rm_metrics_init(struct rm_metrics *m)
{
    memset(m, 0, sizeof *m);
}

void rm_metrics_free(struct rm_metrics *m)
{
    for (size_t i = 0; i < m->n; i++)
        free(m->name[i]);
    free(m->name);
    free(m->run);
    free(m->hash);
    for (size_t p = 0; p < m->nphase; p++)
        free(m->phase[p].cell);
    free(m->phase);
    json_decref(m->objectives);
    memset(m, 0, sizeof *m);
}

size_t rm_metrics_find(const struct rm_metrics *m, const char *name)
{
    if (!m->hashcap) return RM_NO_METRIC;
    for (size_t j = rm_str_hash(name) & (m->hashcap - 1); m->hash[j];
         j = (j + 1) & (m->hashcap - 1))
        if (!strcmp(m->name[m->hash[j] - 1], name)) return m->hash[j] - 1;
    return RM_NO_METRIC;
}

static void rehash(struct rm_metrics *m)
{
    size_t cap = m->hashcap ? m->hashcap * 2 : 64;
    size_t *h = rm_xcalloc(cap, sizeof *h);
    for (size_t i = 0; i < m->n; i++) {
        size_t j = rm_str_hash(m->name[i]) & (cap - 1);
        while (h[j])
            j = (j + 1) & (cap - 1);
        h[j] = i + 1;
    }
    free(m->hash);
    m->hash = h;
    m->hashcap = cap;
}

/* The metric's index, made when new; RM_NO_METRIC past RM_MAX_METRICS. */
static size_t metric_id(struct rm_metrics *m, const char *name)
{
    size_t i = rm_metrics_find(m, name);
    if (i != RM_NO_METRIC || m->n >= RM_MAX_METRICS) return i;
    size_t ncap = m->cap;
    m->name = rm_xgrow(m->name, &ncap, m->n + 1, sizeof *m->name);
    m->run = rm_xgrow(m->run, &m->cap, m->n + 1, sizeof *m->run);
    m->name[m->n] = rm_xstrdup(name);
    rm_metric_stat_init(&m->run[m->n]);
    i = m->n++;
    if (m->n * 2 > m->hashcap)
        rehash(m);
    else {
        size_t j = rm_str_hash(name) & (m->hashcap - 1);
        while (m->hash[j])
            j = (j + 1) & (m->hashcap - 1);
        m->hash[j] = i + 1;
    }
    return i;
}

/* v as compact JSON text (escaped: no raw control byte), cut to fit dst. */
static void quote(char *dst, size_t cap, const json_t *v)
{
    char *t = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT | JSON_ENSURE_ASCII);
    const char *shown = t ? t : "?";
    size_t n = strlen(shown), keep = cap > 4 ? cap - 4 : 0;
    snprintf(dst, cap, "%.*s%s", (int)(n > keep ? keep : n), shown, n > keep ? "..." : "");
    free(t);
}

/* Why a line is bad, or NULL: values must be an object of 1 to RM_METRIC_LINE_MAX members,
 * step (when present) an integer >= 0. */
static const json_t *bad_line(const json_t *line)
{
    const json_t *vals = json_object_get(line, "values"), *step = json_object_get(line, "step");
    if (!json_is_object(vals) || json_object_size(vals) == 0 ||
        json_object_size(vals) > RM_METRIC_LINE_MAX)
        return vals ? vals : json_null();
    if (step && !(json_is_integer(step) && json_integer_value(step) >= 0)) return step;
    return NULL;
}

static bool good_value(const char *name, const json_t *v)
{
    return json_is_number(v) && isfinite(json_number_value(v)) &&
           rm_metric_name_check(name, NULL, 0) == 0;
}

bool rm_metrics_values(const json_t *line, uint64_t ordinal,
                       void (*fn)(void *ctx, const char *name, double v, int64_t step), void *ctx)
{
    if (bad_line(line)) return false;
    const json_t *st = json_object_get(line, "step");
    int64_t step = st ? (int64_t)json_integer_value(st) : (int64_t)ordinal;
    const char *k;
    json_t *v;
    json_object_foreach(json_object_get(line, "values"), k, v)
    {
        if (good_value(k, v)) fn(ctx, k, json_number_value(v), step);
    }
    return true;
}

struct run_ctx {
    struct rm_metrics *m;
    double t;
};

static void run_value(void *ctx, const char *name, double v, int64_t step)
{
    struct run_ctx *c = ctx;
    size_t i = metric_id(c->m, name);
    if (i == RM_NO_METRIC)
        c->m->past_names++;
    else
        rm_metric_stat_add(&c->m->run[i], v, step, c->t);
}

/* The first bad value of a good line, counted, and kept as {"NAME":value}. */
static void count_bad_values(struct rm_metrics *m, const json_t *line)
{
    const char *k;
    json_t *v;
    json_object_foreach(json_object_get(line, "values"), k, v)
    {
        if (good_value(k, v)) continue;
        if (!m->bad_values++) {
            json_t *o = json_object();
            json_object_set(o, k, v);
            quote(m->bad_value_first, sizeof m->bad_value_first, o);
            json_decref(o);
        }
    }
}

void rm_metrics_line(struct rm_metrics *m, const json_t *line, int64_t t)
{
    uint64_t ordinal = m->lines++;
    const json_t *bad = bad_line(line);
    if (bad) {
        if (!m->bad_lines++) quote(m->bad_line_first, sizeof m->bad_line_first, bad);
        return;
    }
    count_bad_values(m, line);
    struct run_ctx c = {m, (double)t / 1e9};
    rm_metrics_values(line, ordinal, run_value, &c);
}

void rm_metrics_good_line(struct rm_metrics *m, size_t n, const char *const *names,
                          const double *vals, int64_t step, int64_t t)
{
    uint64_t ordinal = m->lines++;
    struct run_ctx c = {m, (double)t / 1e9};
    for (size_t i = 0; i < n; i++)
        run_value(&c, names[i], vals[i], step >= 0 ? step : (int64_t)ordinal);
}

/* The objectives of a line as [{"metric","goal","pick"}], or NULL when one is bad (*bad
 * then points at it). */
static json_t *objectives_of(const json_t *line, const json_t **bad)
{
    const json_t *list = json_object_get(line, "objectives");
    size_t n = json_array_size(list);
    if (!json_is_array(list) || n == 0 || n > RM_OBJECTIVES_MAX) {
        *bad = list ? list : json_null();
        return NULL;
    }
    json_t *out = json_array();
    size_t i;
    json_t *o;
    json_array_foreach(list, i, o)
    {
        const char *metric = json_string_value(json_object_get(o, "metric"));
        const char *goal = json_string_value(json_object_get(o, "goal"));
        const json_t *pv = json_object_get(o, "pick");
        const char *pick = pv ? json_string_value(pv) : "last";
        if (!metric || rm_metric_name_check(metric, NULL, 0) < 0 || !goal ||
            (strcmp(goal, "min") && strcmp(goal, "max")) || !pick ||
            (strcmp(pick, "last") && strcmp(pick, "best"))) {
            *bad = o;
            json_decref(out);
            return NULL;
        }
        json_array_append_new(
            out, json_pack("{s:s,s:s,s:s}", "metric", metric, "goal", goal, "pick", pick));
    }
    return out;
}

void rm_metrics_objective_line(struct rm_metrics *m, const json_t *line)
{
    const json_t *bad = NULL;
    json_t *list = objectives_of(line, &bad);
    if (!list) {
        if (!m->bad_objectives++) quote(m->bad_objective_first, sizeof m->bad_objective_first, bad);
        return;
    }
    json_decref(m->objectives);
    m->objectives = list;
}

void rm_metrics_phases(struct rm_metrics *m, size_t nphases)
{
    if (nphases <= m->nphase) return;
    m->phase = rm_xrealloc(m->phase, nphases * sizeof *m->phase);
    memset(m->phase + m->nphase, 0, (nphases - m->nphase) * sizeof *m->phase);
    m->nphase = nphases;
}

/* Phase p's cell of metric, made when new (NULL past the cells' cap). A phase holds a few
 * metrics: a linear search. */
static struct rm_metric_stat *cell(struct rm_metrics *m, size_t p, size_t metric)
{
    struct rm_phase_metrics *pm = &m->phase[p];
    for (size_t i = 0; i < pm->n; i++)
        if (pm->cell[i].metric == metric) return &pm->cell[i].st;
    if (m->cells >= RM_MAX_PHASE_METRIC_CELLS) return NULL;
    pm->cell = rm_xgrow(pm->cell, &pm->cap, pm->n + 1, sizeof *pm->cell);
    struct rm_phase_metric *c = &pm->cell[pm->n++];
    c->metric = metric;
    rm_metric_stat_init(&c->st);
    m->cells++;
    return &c->st;
}

void rm_metrics_phase_add(struct rm_metrics *m, size_t phase, size_t metric, double v, int64_t step,
                          double t)
{
    if (phase >= m->nphase) return;
    struct rm_metric_stat *st = cell(m, phase, metric);
    if (st)
        rm_metric_stat_add(st, v, step, t);
    else
        m->past_cells++;
}

void rm_metrics_phase_fold(struct rm_metrics *m, size_t into, size_t from)
{
    if (into >= m->nphase || from >= m->nphase) return;
    const struct rm_phase_metrics *f = &m->phase[from];
    for (size_t i = 0; i < f->n; i++) {
        struct rm_metric_stat *st = cell(m, into, f->cell[i].metric);
        if (st) rm_metric_stat_merge(st, &f->cell[i].st);
    }
}

static json_t *stat_json(const struct rm_metric_stat *st)
{
    json_t *o = json_object();
    for (int f = 0; f < RM_MF_FIELDS; f++) {
        double v = rm_metric_field_value(st, (enum rm_metric_field)f);
        json_t *j;
        if (!isfinite(v))
            j = json_null();
        else if (rm_metric_fields[f].kind == 'i')
            j = json_integer((json_int_t)v);
        else if (rm_metric_fields[f].kind == 't')
            j = json_real(round(v * 1000.0) / 1000.0);
        else
            j = json_real(v);
        json_object_set_new(o, rm_metric_fields[f].key, j);
    }
    return o;
}

json_t *rm_metrics_json(const struct rm_metrics *m)
{
    json_t *o = json_object();
    for (size_t i = 0; i < m->n; i++)
        if (m->run[i].count) json_object_set_new(o, m->name[i], stat_json(&m->run[i]));
    return o;
}

json_t *rm_metrics_phase_json(const struct rm_metrics *m, size_t phase)
{
    if (phase >= m->nphase || m->phase[phase].n == 0) return NULL;
    const struct rm_phase_metrics *pm = &m->phase[phase];
    json_t *o = json_object();
    for (size_t i = 0; i < pm->n; i++)
        json_object_set_new(o, m->name[pm->cell[i].metric], stat_json(&pm->cell[i].st));
    return o;
}

__attribute__((format(printf, 2, 3))) static void note(json_t *notes, const char *fmt, ...)
{
    char b[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(b, sizeof b, fmt, ap);
    va_end(ap);
    json_array_append_new(notes, json_string(b));
}

static const char *plural(uint64_t n)
{
    return n > 1 ? "s" : "";
}

void rm_metrics_notes(const struct rm_metrics *m, json_t *notes)
{
    if (m->bad_lines)
        note(notes,
             "runlog: %llu metric line%s ignored: values must be an object of 1 to %d metrics "
             "and step an integer >= 0 (first: %s)",
             (unsigned long long)m->bad_lines, plural(m->bad_lines), RM_METRIC_LINE_MAX,
             m->bad_line_first);
    if (m->bad_values)
        note(notes,
             "runlog: %llu metric value%s ignored: a metric needs a name (UTF-8 without control "
             "characters, none of %s) and a finite number (first: %s)",
             (unsigned long long)m->bad_values, plural(m->bad_values), RM_METRIC_NAME_BAD_CHARS,
             m->bad_value_first);
    if (m->bad_objectives)
        note(notes,
             "runlog: %llu objective line%s ignored: objectives must be 1 to %d of "
             "{\"metric\",\"goal\":\"min\"|\"max\",\"pick\":\"last\"|\"best\"} (first: %s)",
             (unsigned long long)m->bad_objectives, plural(m->bad_objectives), RM_OBJECTIVES_MAX,
             m->bad_objective_first);
    if (m->past_names)
        note(notes, "metrics: %llu value%s of metrics past the first %d names ignored",
             (unsigned long long)m->past_names, plural(m->past_names), RM_MAX_METRICS);
    if (m->past_cells)
        note(notes,
             "metrics: %llu phase value%s past %d (phase, metric) pairs left out of the phases' "
             "metrics",
             (unsigned long long)m->past_cells, plural(m->past_cells), RM_MAX_PHASE_METRIC_CELLS);
}
