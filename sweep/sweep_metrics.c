/* The metric curves of one run of a sweep page: its run log's `metric` lines streamed into
 * two downsampled series per metric, by step and by time from the run's start.
 *
 * The summary keeps only each metric's statistics, so the page reads the run log itself; a run
 * logging at 10 kHz for an hour must not fill the page or the memory. Each series has
 * RM_SWEEP_METRIC_BUCKETS buckets over [0, width x buckets) keeping their minimum and maximum
 * (as report.h's buckets do for the GPU series); a point past the range doubles the width and
 * merges the buckets pairwise, so the range need not be known before the file is read. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/objective.h"
#include "summary/runlog_read.h"
#include "sweep/sweep_internal.h"

/* Steps start one apart, times a millisecond apart (the run log's precision). */
static const double first_width[SW_METRIC_AXES] = {1, 1e-3};
/* Beyond this no run log goes (10^15 steps or seconds): such a point is left out rather than
 * doubled toward. */
#define X_LIMIT 1e15

static void bucket_add(struct sweep_mbucket *b, double x, double v)
{
    if (!b->n || v < b->vmin) b->vmin = v, b->xmin = x;
    if (!b->n || v > b->vmax) b->vmax = v, b->xmax = x;
    b->n++;
}

static void bucket_merge(struct sweep_mbucket *into, const struct sweep_mbucket *b)
{
    if (!b->n) return;
    if (!into->n) {
        *into = *b;
        return;
    }
    if (b->vmin < into->vmin) into->vmin = b->vmin, into->xmin = b->xmin;
    if (b->vmax > into->vmax) into->vmax = b->vmax, into->xmax = b->xmax;
    into->n += b->n;
}

/* Doubles the buckets' width: bucket i becomes buckets 2i and 2i+1. */
static void widen(struct sweep_mseries *s)
{
    for (size_t i = 0; i < RM_SWEEP_METRIC_BUCKETS / 2; i++) {
        struct sweep_mbucket m = s->b[2 * i];
        bucket_merge(&m, &s->b[2 * i + 1]);
        s->b[i] = m;
    }
    memset(&s->b[RM_SWEEP_METRIC_BUCKETS / 2], 0,
           (RM_SWEEP_METRIC_BUCKETS - RM_SWEEP_METRIC_BUCKETS / 2) * sizeof s->b[0]);
    s->w *= 2;
}

static void series_add(struct sweep_mseries *s, double x, double v)
{
    if (!(x < X_LIMIT)) return; /* NaN too */
    if (x < 0) x = 0;
    while (x >= s->w * RM_SWEEP_METRIC_BUCKETS)
        widen(s);
    size_t k = (size_t)(x / s->w);
    if (k >= RM_SWEEP_METRIC_BUCKETS) k = RM_SWEEP_METRIC_BUCKETS - 1;
    bucket_add(&s->b[k], x, v);
    if (x > s->xmax) s->xmax = x;
}

size_t rm_sweep_mseries_points(const struct sweep_mseries *s, struct sweep_mpoint *out)
{
    size_t n = 0;
    for (size_t i = 0; i < RM_SWEEP_METRIC_BUCKETS; i++) {
        const struct sweep_mbucket *b = &s->b[i];
        if (!b->n) continue;
        bool lo_first = b->xmin <= b->xmax;
        out[n++] = lo_first ? (struct sweep_mpoint){b->xmin, b->vmin}
                            : (struct sweep_mpoint){b->xmax, b->vmax};
        if (b->xmin != b->xmax || b->vmin != b->vmax)
            out[n++] = lo_first ? (struct sweep_mpoint){b->xmax, b->vmax}
                                : (struct sweep_mpoint){b->xmin, b->vmin};
    }
    return n;
}

/* The run's metric of that name, made while fewer than RM_SWEEP_METRICS_PER_RUN exist; NULL
 * past them (counted). */
static struct sweep_metric *metric_of(struct sweep_run *run, const char *name)
{
    for (size_t i = 0; i < run->nmetrics; i++)
        if (!strcmp(run->metrics[i].name, name)) return &run->metrics[i];
    if (run->nmetrics == RM_SWEEP_METRICS_PER_RUN) {
        run->metrics_dropped++;
        return NULL;
    }
    struct sweep_metric *m = &run->metrics[run->nmetrics];
    memset(m, 0, sizeof *m);
    if (!(m->name = strdup(name))) abort();
    for (int a = 0; a < SW_METRIC_AXES; a++)
        m->by[a].w = first_width[a];
    run->nmetrics++;
    return m;
}

/* One metric line as read: its step and time (NAN when it has none) and its values, names
 * NUL-terminated copies. */
struct mline {
    double step, t;
    size_t nv;
    bool too_many; /* more than RM_METRIC_LINE_MAX values: a bad line, left out */
    struct {
        char name[RM_METRIC_NAME_MAX];
        double v;
    } val[RM_METRIC_LINE_MAX];
};

static void mline_value(struct mline *ml, const char *name, size_t len, double v)
{
    if (ml->nv == RM_METRIC_LINE_MAX) {
        ml->too_many = true;
        return;
    }
    if (!isfinite(v) || len >= RM_METRIC_NAME_MAX) return; /* no metric the page can name */
    memcpy(ml->val[ml->nv].name, name, len);
    ml->val[ml->nv].name[len] = '\0';
    ml->val[ml->nv++].v = v;
}

/* ---- the fast reader: the lines runmon's writers write, without a JSON tree ---------------- */

static const char *skip_ws(const char *p, const char *e)
{
    while (p < e && (*p == ' ' || *p == '\t' || *p == '\r'))
        p++;
    return p;
}

/* A string without escapes (the caller sent lines with a backslash to jansson): its bytes
 * [*s, *s + *n); the position after it, or NULL. */
static const char *str_tok(const char *p, const char *e, const char **s, size_t *n)
{
    if (p >= e || *p != '"') return NULL;
    const char *q = memchr(p + 1, '"', (size_t)(e - p - 1));
    if (!q) return NULL;
    *s = p + 1;
    *n = (size_t)(q - p - 1);
    return q + 1;
}

/* A JSON number that is finite as a double; NULL otherwise (jansson decides then). */
static const char *num_tok(const char *p, const char *e, double *v)
{
    const char *q = p;
    if (q < e && *q == '-') q++;
    if (q >= e || *q < '0' || *q > '9') return NULL;
    while (q < e && ((*q >= '0' && *q <= '9') || *q == '.' || *q == 'e' || *q == 'E' || *q == '+' ||
                     *q == '-'))
        q++;
    char buf[64], *end;
    if ((size_t)(q - p) >= sizeof buf) return NULL;
    memcpy(buf, p, (size_t)(q - p));
    buf[q - p] = '\0';
    *v = strtod(buf, &end);
    return *end || !isfinite(*v) ? NULL : q;
}

/* A scalar value skipped (a string, number, true, false, null); NULL for anything else. */
static const char *skip_scalar(const char *p, const char *e, bool *is_num, double *v)
{
    const char *s;
    size_t n;
    *is_num = false;
    if (p < e && *p == '"') return str_tok(p, e, &s, &n);
    static const char *const words[] = {"true", "false", "null"};
    for (size_t i = 0; i < 3; i++) {
        size_t wl = strlen(words[i]);
        if ((size_t)(e - p) >= wl && !memcmp(p, words[i], wl)) return p + wl;
    }
    const char *q = num_tok(p, e, v);
    *is_num = q != NULL;
    return q;
}

static bool key_is(const char *k, size_t n, const char *name)
{
    return n == strlen(name) && !memcmp(k, name, n);
}

/* The "values" object's members. */
static const char *fast_values(const char *p, const char *e, struct mline *ml)
{
    p = skip_ws(p, e);
    if (p >= e || *p++ != '{') return NULL;
    p = skip_ws(p, e);
    if (p < e && *p == '}') return p + 1;
    for (;;) {
        const char *k;
        size_t kn;
        bool num;
        double v;
        if (!(p = str_tok(skip_ws(p, e), e, &k, &kn))) return NULL;
        p = skip_ws(p, e);
        if (p >= e || *p++ != ':') return NULL;
        if (!(p = skip_scalar(skip_ws(p, e), e, &num, &v))) return NULL;
        if (num) mline_value(ml, k, kn, v);
        p = skip_ws(p, e);
        if (p < e && *p == ',') {
            p++;
            continue;
        }
        return p < e && *p == '}' ? p + 1 : NULL;
    }
}

/* 1: a metric line read into ml; 0: not a metric line; -1: a shape left to jansson (escapes,
 * nesting, a number a double cannot hold, a repeated field, anything malformed). */
static int fast_line(const char *line, size_t len, struct mline *ml)
{
    if (memchr(line, '\\', len)) return -1;
    const char *p = skip_ws(line, line + len), *e = line + len;
    if (p >= e || *p++ != '{') return -1;
    unsigned seen = 0; /* bits: type, step, t, values */
    bool metric = false;
    for (;;) {
        const char *k, *s = NULL;
        size_t kn, sn = 0;
        bool num;
        double v;
        if (!(p = str_tok(skip_ws(p, e), e, &k, &kn))) return -1;
        p = skip_ws(p, e);
        if (p >= e || *p++ != ':') return -1;
        p = skip_ws(p, e);
        unsigned bit = key_is(k, kn, "type")     ? 1
                       : key_is(k, kn, "step")   ? 2
                       : key_is(k, kn, "t")      ? 4
                       : key_is(k, kn, "values") ? 8
                                                 : 0;
        if (bit & seen) return -1;
        seen |= bit;
        if (bit == 8) {
            p = fast_values(p, e, ml);
        } else if (bit == 1 && p < e && *p == '"') {
            p = str_tok(p, e, &s, &sn);
            metric = p && key_is(s, sn, "metric");
        } else {
            p = skip_scalar(p, e, &num, &v);
            if (bit == 2 && num && v >= 0) ml->step = v;
            if (bit == 4 && num) ml->t = v;
        }
        if (!p) return -1;
        p = skip_ws(p, e);
        if (p < e && *p == ',') {
            p++;
            continue;
        }
        if (p >= e || *p++ != '}' || skip_ws(p, e) != e) return -1;
        return metric && (seen & 8) ? 1 : 0;
    }
}

/* ---- the general reader ---------------------------------------------------------------- */

/* An objective line's objectives appended to the run's (the Pareto chart's objectives when
 * neither the command line nor summary.json names any). */
static void objective_line(struct sweep_run *run, const json_t *j)
{
    const json_t *obs = json_object_get(j, "objectives");
    if (!json_is_array(obs)) return;
    if (!run->log_objectives) run->log_objectives = json_array();
    if (json_array_size(run->log_objectives) < RM_OBJECTIVES_MAX)
        json_array_extend(run->log_objectives, (json_t *)obs);
}

static int tree_line(struct sweep_run *run, const char *line, size_t len, struct mline *ml)
{
    json_t *j = json_loadb(line, len, JSON_DECODE_INT_AS_REAL, NULL);
    const json_t *type = json_object_get(j, "type"), *vals = json_object_get(j, "values");
    if (json_is_string(type) && !strcmp(json_string_value(type), "objective"))
        objective_line(run, j);
    if (!json_is_string(type) || strcmp(json_string_value(type), "metric") ||
        !json_is_object(vals)) {
        json_decref(j);
        return 0;
    }
    const json_t *st = json_object_get(j, "step"), *t = json_object_get(j, "t");
    if (json_is_number(st) && json_number_value(st) >= 0) ml->step = json_number_value(st);
    if (json_is_number(t)) ml->t = json_number_value(t);
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)vals, k, v)
    {
        if (json_is_number(v)) mline_value(ml, k, strlen(k), json_number_value(v));
        if (ml->too_many) break;
    }
    json_decref(j);
    return 1;
}

/* A line of the run log: a `metric` line's finite values added under valid names, anything
 * else ignored (the summary counts and quotes bad lines; the page only draws them). */
static void metric_line(struct sweep_run *run, const char *line, size_t len, double t0_s,
                        struct mline *ml)
{
    /* Most lines of a run log that has metrics are metric lines; the others need no parse. */
    if (!memmem(line, len, "\"metric\"", 8)) return;
    ml->step = ml->t = NAN;
    ml->nv = 0;
    ml->too_many = false;
    int rc = run->general_only ? -1 : fast_line(line, len, ml);
    if (rc < 0) {
        ml->step = ml->t = NAN;
        ml->nv = 0;
        ml->too_many = false;
        rc = tree_line(run, line, len, ml);
    }
    if (rc != 1 || ml->too_many) return;
    /* Without a step: the line's order among the run's metric lines. */
    double step = isfinite(ml->step) ? ml->step : (double)run->metric_lines;
    double x_t = isfinite(ml->t) && isfinite(t0_s) ? ml->t - t0_s : NAN;
    run->metric_lines++;
    for (size_t i = 0; i < ml->nv; i++) {
        char err[8];
        if (rm_metric_name_check(ml->val[i].name, err, sizeof err)) continue;
        struct sweep_metric *m = metric_of(run, ml->val[i].name);
        if (!m) continue;
        double v = ml->val[i].v;
        m->last = v;
        if (!m->count || v < m->min) m->min = v;
        if (!m->count || v > m->max) m->max = v;
        series_add(&m->by[SW_BY_STEP], step, ml->val[i].v);
        if (isfinite(x_t)) series_add(&m->by[SW_BY_TIME], x_t, ml->val[i].v);
        m->count++;
    }
}

void rm_sweep_metrics_read(struct sweep_run *run, double t0_s)
{
    if (!run->dir) return;
    char path[4096];
    snprintf(path, sizeof path, "%s/runlog.jsonl", run->dir);
    FILE *f = fopen(path, "r");
    if (!f) return;
    if (!run->metrics && !(run->metrics = calloc(RM_SWEEP_METRICS_PER_RUN, sizeof *run->metrics)))
        abort();
    struct mline *ml = malloc(sizeof *ml);
    if (!ml) abort();
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    while ((n = getline(&line, &cap, f)) > 0) {
        /* A last line without "\n" is torn (being written): skipped, as the summary does. */
        if (line[n - 1] != '\n' || (size_t)n > RM_RUNLOG_MAX_LINE) continue;
        metric_line(run, line, (size_t)n - 1, t0_s, ml);
    }
    free(ml);
    free(line);
    fclose(f);
}

void rm_sweep_metrics_free(struct sweep_run *run)
{
    for (size_t i = 0; i < run->nmetrics; i++)
        free(run->metrics[i].name);
    free(run->metrics);
    run->metrics = NULL;
    json_decref(run->log_objectives);
    run->log_objectives = NULL;
    run->nmetrics = 0;
}
