/* What the runs of a sweep page achieved: their metric curves overlaid (by step and by time),
 * and the parallel coordinates of their parameters, objectives and costs (sweep_page.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model/figures.h"
#include "sweep/sweep_internal.h"
#include "sweep/sweep_judge.h"

static void esc(FILE *o, const char *s)
{
    rm_html_escape_str(o, s ? s : "");
}

/* ---- scales ---------------------------------------------------------------------------- */

/* A round step (1, 2, 2.5, 5 x 10^k) so that span / step is at most n. */
static double round_step(double span, int n)
{
    if (!(span > 0)) return 1;
    double raw = span / n, e = pow(10, floor(log10(raw)));
    static const double f[] = {1, 2, 2.5, 5, 10};
    for (size_t i = 0; i < sizeof f / sizeof f[0]; i++)
        if (raw <= f[i] * e * 1.0000001) return f[i] * e;
    return 10 * e;
}

/* A value range [lo, hi] with round ends holding [vmin, vmax], in round steps (about four).
 * A metric's scale starts where its values do (an accuracy of 0.85-0.87 fills the chart). */
static void round_range(double vmin, double vmax, double *lo, double *hi, double *step)
{
    bool positive = vmin >= 0;
    if (!(vmax > vmin)) {
        double d = vmin != 0 ? fabs(vmin) / 2 : 1;
        vmin -= d, vmax += d;
    }
    *step = round_step(vmax - vmin, 4);
    *lo = floor(vmin / *step + 1e-9) * *step;
    *hi = ceil(vmax / *step - 1e-9) * *step;
    if (positive && *lo < 0) *lo = 0; /* values of 0 and more keep a scale from 0 */
    if (!(*hi > *lo)) *hi = *lo + *step;
}

/* A value as an axis shows it: short, with the decimals its step needs. */
static void axis_num(char *buf, size_t cap, double v, double step)
{
    double a = fabs(v);
    if (fabs(v) < step * 1e-6) v = 0, a = 0;
    if (a >= 1e6)
        snprintf(buf, cap, "%gM", v / 1e6);
    else if (a >= 1e4)
        snprintf(buf, cap, "%gk", v / 1e3);
    else if (a != 0 && a < 1e-3)
        snprintf(buf, cap, "%.2g", v);
    else {
        int dec = 0; /* the fewest decimals that write the step exactly (0.25: 2) */
        while (dec < 6 && fabs(step * pow(10, dec) - round(step * pow(10, dec))) > 1e-6)
            dec++;
        snprintf(buf, cap, "%.*f", dec, v);
    }
}

/* ---- metric curves -------------------------------------------------------------------- */

static bool charted(const char *const *names, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(names[i], name)) return true;
    return false;
}

size_t rm_sweep_pick_metrics(const struct sweep_run *runs, size_t n, const char *const *first,
                             size_t nfirst, const char **out, size_t cap)
{
    size_t k = 0;
    for (size_t i = 0; i < nfirst && k < cap; i++)
        for (size_t r = 0; r < n; r++) {
            bool has = false;
            for (size_t m = 0; m < runs[r].nmetrics && !has; m++)
                has = !strcmp(runs[r].metrics[m].name, first[i]) && runs[r].metrics[m].count;
            if (has && !charted(out, k, first[i])) {
                out[k++] = first[i];
                break;
            }
        }
    for (size_t r = 0; r < n; r++)
        for (size_t m = 0; m < runs[r].nmetrics && k < cap; m++)
            if (runs[r].metrics[m].count && !charted(out, k, runs[r].metrics[m].name))
                out[k++] = runs[r].metrics[m].name;
    return k;
}

static const struct sweep_metric *run_metric(const struct sweep_run *run, const char *name)
{
    for (size_t m = 0; m < run->nmetrics; m++)
        if (!strcmp(run->metrics[m].name, name)) return &run->metrics[m];
    return NULL;
}

/* The x axis' labels under a chart of x in [0, span]. */
static void x_labels(FILE *o, int axis, double span)
{
    fputs("<div class=\"xa\">", o);
    double step = axis == SW_BY_TIME ? rm_sweep_nice_step(span, 6) : round_step(span, 6);
    if (axis == SW_BY_STEP && step < 1) step = 1;
    rm_sweep_x_ticks(o, span, step, axis == SW_BY_TIME ? rm_sweep_elapsed : axis_num);
    fputs("</div>", o);
}

/* One chart of metric name by step or by time: every run's curve, x from 0 to the largest x
 * of any run, y over a round range of all runs' values. */
static void metric_chart(FILE *o, const struct sweep_run *runs, size_t n, const char *name,
                         int axis, struct sweep_mpoint *pts)
{
    double span = 0, vmin = INFINITY, vmax = -INFINITY;
    for (size_t r = 0; r < n; r++) {
        const struct sweep_metric *m = run_metric(&runs[r], name);
        if (!m) continue;
        const struct sweep_mseries *s = &m->by[axis];
        for (size_t b = 0; b < RM_SWEEP_METRIC_BUCKETS; b++)
            if (s->b[b].n) {
                vmin = fmin(vmin, s->b[b].vmin);
                vmax = fmax(vmax, s->b[b].vmax);
                span = fmax(span, s->xmax);
            }
    }
    fprintf(o, "<div class=\"mcol\"><p class=\"note\">by %s</p>",
            axis == SW_BY_STEP ? "step" : "time since the run's start");
    if (!isfinite(vmin)) {
        fputs("<p class=\"note nomline\">No line has a time.</p></div>", o);
        return;
    }
    double lo, hi, step;
    round_range(vmin, vmax, &lo, &hi, &step);
    fputs("<div class=\"plot\"><div class=\"ya\">", o);
    int ticks = (int)lround((hi - lo) / step);
    for (int k = ticks; k >= 0; k--) {
        char lab[32];
        axis_num(lab, sizeof lab, lo + k * step, step);
        fprintf(o, "<span style=\"top:%.2f%%\">%s</span>", 100.0 * (ticks - k) / ticks, lab);
    }
    fprintf(o,
            "</div><svg class=\"chart mchart\" viewBox=\"0 0 1000 100\" "
            "preserveAspectRatio=\"none\" data-metric-axis=\"%s\" data-max-x=\"%.10g\"><g "
            "class=\"grid\">",
            axis == SW_BY_STEP ? "step" : "time", span);
    for (int k = 0; k <= ticks; k++) {
        double y = 100.0 * k / ticks;
        fprintf(o, "<line x1=\"0\" x2=\"1000\" y1=\"%.2f\" y2=\"%.2f\"/>", y, y);
    }
    fputs("</g>", o);
    for (size_t r = 0; r < n; r++) {
        const struct sweep_metric *m = run_metric(&runs[r], name);
        size_t np = m ? rm_sweep_mseries_points(&m->by[axis], pts) : 0;
        if (!np) continue;
        const char *d = rm_sweep_dashes[(r / RM_SWEEP_COLORS) % RM_SWEEP_DASHES];
        fprintf(o, "<polyline data-run=\"%zu\" stroke=\"%s\"%s%s%s points=\"", r,
                rm_sweep_palette[r % RM_SWEEP_COLORS], *d ? " stroke-dasharray=\"" : "", d,
                *d ? "\"" : "");
        for (size_t k = 0; k < np; k++) {
            double x = span > 0 ? 1000 * pts[k].x / span : 0;
            double y = 100 - 100 * (pts[k].v - lo) / (hi - lo);
            fprintf(o, "%s%.1f,%.2f", k ? " " : "", x, y);
        }
        /* One point is a line too short to see: a dash of 4 units. */
        if (np == 1) {
            double x = span > 0 ? 1000 * pts[0].x / span : 0;
            fprintf(o, " %.1f,%.2f", x > 996 ? x - 4 : x + 4,
                    100 - 100 * (pts[0].v - lo) / (hi - lo));
        }
        fputs("\"/>", o);
    }
    fputs("</svg>", o);
    x_labels(o, axis, span);
    fputs("</div></div>", o);
}

bool rm_sweep_metrics_any(const struct sweep_run *runs, size_t n)
{
    for (size_t r = 0; r < n; r++)
        for (size_t m = 0; m < runs[r].nmetrics; m++)
            if (runs[r].metrics[m].count) return true;
    return false;
}

void rm_sweep_write_metric_charts(FILE *o, const struct sweep_run *runs, size_t n,
                                  const char *const *first, size_t nfirst)
{
    const char *names[RM_SWEEP_MAX_METRIC_CHARTS];
    size_t nn = rm_sweep_pick_metrics(runs, n, first, nfirst, names, RM_SWEEP_MAX_METRIC_CHARTS);
    if (!nn) return;
    struct sweep_mpoint *pts = malloc(2 * RM_SWEEP_METRIC_BUCKETS * sizeof *pts);
    if (!pts) abort();
    fprintf(o,
            "<p class=\"note\" id=\"metrics-note\">Metrics: each run's <code>metric</code> "
            "lines (runmon.metric, runmon log metric), %d buckets a run and axis keeping their "
            "lowest and highest value; the objectives' metrics first, at most %d charts.</p>\n",
            RM_SWEEP_METRIC_BUCKETS, RM_SWEEP_MAX_METRIC_CHARTS);
    for (size_t i = 0; i < nn; i++) {
        fprintf(o, "<section class=\"panel metric\" id=\"m-%zu\" data-metric=\"", i);
        esc(o, names[i]);
        fputs("\"><h3>", o);
        esc(o, names[i]);
        fputs(" <span class=\"unit\">(metric)</span></h3><div class=\"mrow\">", o);
        for (int a = 0; a < SW_METRIC_AXES; a++)
            metric_chart(o, runs, n, names[i], a, pts);
        fputs("</div></section>\n", o);
    }
    free(pts);
}

/* ---- objectives and costs ------------------------------------------------------------- */

static double row_num(const json_t *row, const char *key)
{
    const json_t *v = json_object_get(row, key);
    return json_is_number(v) ? json_number_value(v) : NAN;
}

/* The objectives of the runs' objective lines (summary.json "objectives", else those the page
 * read in the run log), each metric once (the first run's word wins), in order of first
 * appearance. */
static size_t logged_objectives(const struct sweep_run *runs, size_t n, struct rm_objective *out,
                                size_t cap)
{
    size_t k = 0;
    for (size_t r = 0; r < n && k < cap; r++) {
        size_t i;
        json_t *o;
        const json_t *obs = json_array_size(runs[r].summary_objectives) ? runs[r].summary_objectives
                                                                        : runs[r].log_objectives;
        json_array_foreach(obs, i, o)
        {
            const char *m = json_string_value(json_object_get(o, "metric"));
            const char *g = json_string_value(json_object_get(o, "goal"));
            const char *pk = json_string_value(json_object_get(o, "pick"));
            char spec[RM_METRIC_NAME_MAX + 16], err[64];
            struct rm_objective ob;
            if (!m || !g) continue;
            snprintf(spec, sizeof spec, "%s:%s%s%s", m, g, pk ? ":" : "", pk ? pk : "");
            if (rm_objective_parse(spec, &ob, err, sizeof err)) continue;
            bool dup = false;
            for (size_t j = 0; j < k && !dup; j++)
                dup = !strcmp(out[j].metric, ob.metric);
            if (!dup && k < cap) out[k++] = ob;
        }
    }
    return k;
}

/* Run r's statistics of metric name from its summary.json "metrics", else (a summary written
 * before metrics) from the run log the page read; count 0: none. */
static void metric_stat(const struct sweep_run *run, const char *name, struct rm_metric_stat *s)
{
    rm_metric_stat_init(s);
    const json_t *m = json_object_get(run->summary_metrics, name);
    if (!json_is_object(m)) {
        for (size_t i = 0; i < run->nmetrics && !run->summary_metrics; i++)
            if (!strcmp(run->metrics[i].name, name)) {
                s->count = run->metrics[i].count;
                s->last = run->metrics[i].last;
                s->min = run->metrics[i].min;
                s->max = run->metrics[i].max;
            }
        return;
    }
    const json_t *c = json_object_get(m, "count");
    s->count = json_is_integer(c) && json_integer_value(c) > 0 ? (uint64_t)json_integer_value(c)
               : json_is_number(json_object_get(m, rm_metric_fields[RM_MF_LAST].key)) ? 1
                                                                                      : 0;
    s->last = row_num(m, rm_metric_fields[RM_MF_LAST].key);
    s->min = row_num(m, "min");
    s->max = row_num(m, "max");
}

/* The metrics the runs logged, for a message: "loss, acc" (at most a few, then "..."). */
static void logged_names(const struct sweep_run *runs, size_t n, char *buf, size_t cap)
{
    size_t len = 0;
    json_t *seen = json_object();
    buf[0] = '\0';
    for (size_t r = 0; r < n; r++) {
        const char *k;
        json_t *v;
        json_t *names = json_object();
        json_object_update(names, runs[r].summary_metrics);
        for (size_t i = 0; i < runs[r].nmetrics && !runs[r].summary_metrics; i++)
            json_object_set_new(names, runs[r].metrics[i].name, json_true());
        json_object_foreach(names, k, v)
        {
            if (json_object_get(seen, k)) continue;
            json_object_set_new(seen, k, json_true());
            int w = snprintf(buf + len, cap - len, "%s%s", len ? ", " : "", k);
            if (w < 0 || (size_t)w >= cap - len) {
                snprintf(buf + (cap > 5 ? cap - 5 : 0), cap > 5 ? 5 : cap, "...");
                json_decref(names);
                json_decref(seen);
                return;
            }
            len += (size_t)w;
        }
        json_decref(names);
    }
    json_decref(seen);
    if (!len) snprintf(buf, cap, "none");
}

/* Rows judged by sweep/sweep_judge.h (report --objective/--cost, or the run logs'
 * objectives): each carries "objectives" [{objective, value, front, ...}] and "cost" {name,
 * value, low, high}; the page shows what the table says. */
static bool rows_judged(const struct sweep_run *runs, size_t n)
{
    for (size_t r = 0; r < n; r++)
        if (json_array_size(json_object_get(runs[r].row, "objectives"))) return true;
    return false;
}

static enum rm_front front_of(const json_t *o)
{
    const char *f = json_string_value(json_object_get(o, "front"));
    return !f                         ? RM_FRONT_NO
           : !strcmp(f, "on")         ? RM_FRONT_ON
           : !strcmp(f, "within_bar") ? RM_FRONT_WITHIN_BAR
                                      : RM_FRONT_NO;
}

static void from_judged_rows(struct sweep_result *res, const struct sweep_run *runs, size_t n)
{
    for (size_t r = 0; r < n && !res->nobj; r++) {
        size_t i;
        json_t *o;
        json_array_foreach(json_object_get(runs[r].row, "objectives"), i, o)
        {
            char err[64];
            const char *spec = json_string_value(json_object_get(o, "objective"));
            if (spec && res->nobj < RM_SWEEP_MAX_OBJECTIVES &&
                !rm_objective_parse(spec, &res->obj[res->nobj], err, sizeof err))
                res->nobj++;
        }
        const char *cost =
            json_string_value(json_object_get(json_object_get(runs[r].row, "cost"), "name"));
        char err[64];
        if (cost && rm_cost_parse(cost, &res->cost, err, sizeof err)) res->cost = RM_COST_ENERGY;
    }
    res->val = calloc(n * (res->nobj ? res->nobj : 1), sizeof *res->val);
    res->front = calloc(n * (res->nobj ? res->nobj : 1), sizeof *res->front);
    res->pts = calloc(n, sizeof *res->pts);
    if (!res->val || !res->front || !res->pts) abort();
    /* VRAM in GiB, as the page's bars give it. */
    double div = res->cost == RM_COST_VRAM ? 1024 : 1;
    for (size_t r = 0; r < n; r++) {
        const json_t *row = runs[r].row, *c = json_object_get(row, "cost");
        res->pts[r] = (struct rm_pareto_point){NAN, row_num(c, "value") / div,
                                               row_num(c, "low") / div, row_num(c, "high") / div};
        const json_t *obs = json_object_get(row, "objectives");
        for (size_t k = 0; k < res->nobj; k++) {
            const json_t *o = json_array_get(obs, k);
            res->val[r * res->nobj + k] = row_num(o, "value");
            res->front[r * res->nobj + k] = front_of(o);
        }
    }
}

int rm_sweep_result_init(struct sweep_result *res, const struct sweep_run *runs, size_t n,
                         const struct rm_sweep_page_opts *opts, char *err, size_t errsz)
{
    memset(res, 0, sizeof *res);
    if (!opts->n_objectives && rows_judged(runs, n)) {
        from_judged_rows(res, runs, n);
        return 0;
    }
    res->cost = opts->cost;
    if (opts->n_objectives) {
        for (size_t i = 0; i < opts->n_objectives && res->nobj < RM_SWEEP_MAX_OBJECTIVES; i++)
            res->obj[res->nobj++] = opts->objectives[i];
    } else {
        res->nobj = logged_objectives(runs, n, res->obj, RM_SWEEP_MAX_OBJECTIVES);
    }
    res->val = calloc(n * (res->nobj ? res->nobj : 1), sizeof *res->val);
    res->front = calloc(n * (res->nobj ? res->nobj : 1), sizeof *res->front);
    res->pts = calloc(n, sizeof *res->pts);
    if (!res->val || !res->front || !res->pts) abort();
    for (size_t r = 0; r < n; r++) {
        const json_t *row = runs[r].row;
        struct rm_pareto_point *pt = &res->pts[r];
        *pt = rm_judge_cost(row, res->cost);
        if (res->cost == RM_COST_VRAM) pt->cost /= 1024; /* GiB, as the page's bars give it */
    }
    for (size_t k = 0; k < res->nobj; k++) {
        bool any = false;
        for (size_t r = 0; r < n; r++) {
            struct rm_metric_stat st;
            metric_stat(&runs[r], res->obj[k].metric, &st);
            res->val[r * res->nobj + k] = rm_objective_value(&res->obj[k], &st);
            any |= st.count > 0;
        }
        /* An objective asked for that no run logged is a mistake in the command line. */
        if (!any && opts->n_objectives) {
            char names[512];
            logged_names(runs, n, names, sizeof names);
            snprintf(err, errsz,
                     "objective '%s': no run logged the metric '%s' (the runs' metrics: %s)",
                     res->obj[k].metric, res->obj[k].metric, names);
            rm_sweep_result_free(res);
            return 2;
        }
        struct rm_pareto_point *pp = malloc(n * sizeof *pp);
        enum rm_front *f = malloc(n * sizeof *f);
        if (!pp || !f) abort();
        for (size_t r = 0; r < n; r++) {
            pp[r] = res->pts[r];
            pp[r].objective = res->val[r * res->nobj + k];
        }
        rm_pareto_front(pp, n, res->obj[k].goal, f);
        for (size_t r = 0; r < n; r++)
            res->front[r * res->nobj + k] = f[r];
        free(pp);
        free(f);
    }
    return 0;
}

void rm_sweep_result_free(struct sweep_result *res)
{
    free(res->val);
    free(res->front);
    free(res->pts);
    memset(res, 0, sizeof *res);
}

/* The cost's name on an axis and its unit on the page (VRAM in GiB as the bars give it). */
static const char *cost_title(enum rm_cost c)
{
    return c == RM_COST_ENERGY     ? "energy"
           : c == RM_COST_DURATION ? "duration"
           : c == RM_COST_VRAM     ? "peak VRAM"
                                   : "GPU hours";
}

static const char *cost_unit(enum rm_cost c)
{
    return c == RM_COST_VRAM ? "GiB" : rm_cost_unit(c);
}

/* ---- the Pareto charts -------------------------------------------------------------------- */

static const char *run_color(size_t r, bool drawn)
{
    return drawn ? rm_sweep_palette[r % RM_SWEEP_COLORS] : "#4e79a7";
}

static const char *front_word(enum rm_front f)
{
    return f == RM_FRONT_ON           ? "on the front"
           : f == RM_FRONT_WITHIN_BAR ? "on the front within its error bar"
                                      : "not on the front";
}

/* A number in a tooltip: 4 significant digits. */
static void tip_num(FILE *o, double v)
{
    if (isfinite(v))
        fprintf(o, "%.4g", v);
    else
        fputs("&#8211;", o);
}

static void pareto_chart(FILE *o, const struct sweep_run *runs, size_t n, bool drawn,
                         const struct sweep_result *res, size_t k)
{
    const struct rm_objective *ob = &res->obj[k];
    double cmin = INFINITY, cmax = -INFINITY, vmin = INFINITY, vmax = -INFINITY;
    size_t shown = 0;
    for (size_t r = 0; r < n; r++) {
        const struct rm_pareto_point *pt = &res->pts[r];
        double v = res->val[r * res->nobj + k];
        if (!isfinite(v) || !isfinite(pt->cost)) continue;
        shown++;
        vmin = fmin(vmin, v), vmax = fmax(vmax, v);
        cmin = fmin(cmin, isfinite(pt->cost_lo) ? fmin(pt->cost_lo, pt->cost) : pt->cost);
        cmax = fmax(cmax, isfinite(pt->cost_hi) ? fmax(pt->cost_hi, pt->cost) : pt->cost);
    }
    char ospec[RM_METRIC_NAME_MAX + 16];
    rm_objective_format(ob, ospec, sizeof ospec);
    fprintf(o, "<section class=\"panel pareto\" id=\"pareto-%zu\" data-objective=\"", k);
    esc(o, ob->metric);
    fputs("\"><h3>", o);
    esc(o, ob->metric);
    fprintf(o,
            " <span class=\"unit\">(%s, %s value)</span> against %s <span class=\"unit\">(%s)"
            "</span></h3>",
            ob->goal == RM_GOAL_MAX ? "higher is better" : "lower is better",
            ob->pick == RM_PICK_BEST ? "best" : "last", cost_title(res->cost),
            cost_unit(res->cost));
    if (!shown) {
        fputs("<p class=\"note nopoints\">No run has both a value of this objective and a cost."
              "</p></section>\n",
              o);
        return;
    }
    double ylo, yhi, ystep, xlo, xhi, xstep;
    round_range(vmin, vmax, &ylo, &yhi, &ystep);
    round_range(cmin, cmax, &xlo, &xhi, &xstep);
    fputs("<div class=\"plot\"><div class=\"ya\">", o);
    int yt = (int)lround((yhi - ylo) / ystep), xt = (int)lround((xhi - xlo) / xstep);
    for (int t = yt; t >= 0; t--) {
        char lab[32];
        axis_num(lab, sizeof lab, ylo + t * ystep, ystep);
        fprintf(o, "<span style=\"top:%.2f%%\">%s</span>", 100.0 * (yt - t) / yt, lab);
    }
    fputs("</div><div class=\"pa\"><svg class=\"pf\" viewBox=\"0 0 1000 100\" "
          "preserveAspectRatio=\"none\" aria-hidden=\"true\"><g class=\"grid\">",
          o);
    for (int t = 0; t <= yt; t++)
        fprintf(o, "<line x1=\"0\" x2=\"1000\" y1=\"%.2f\" y2=\"%.2f\"/>", 100.0 * t / yt,
                100.0 * t / yt);
    fputs("</g>", o);
    /* The front: its runs by cost, joined as a staircase (each step holds until a run that is
     * better costs more). */
    size_t *ord = malloc(n * sizeof *ord), nf = 0;
    if (!ord) abort();
    for (size_t r = 0; r < n; r++)
        if (res->front[r * res->nobj + k] == RM_FRONT_ON) {
            size_t j = nf++;
            while (j > 0 && res->pts[ord[j - 1]].cost > res->pts[r].cost)
                ord[j] = ord[j - 1], j--;
            ord[j] = r;
        }
#define PX(c) (1000 * ((c)-xlo) / (xhi - xlo))
#define PY(v) (100 - 100 * ((v)-ylo) / (yhi - ylo))
    if (nf) {
        fputs("<polyline class=\"front\" points=\"", o);
        for (size_t j = 0; j < nf; j++) {
            double x = PX(res->pts[ord[j]].cost), y = PY(res->val[ord[j] * res->nobj + k]);
            if (j) fprintf(o, " %.1f,%.2f ", x, PY(res->val[ord[j - 1] * res->nobj + k]));
            fprintf(o, "%.1f,%.2f", x, y);
        }
        fputs("\"/>", o);
    }
    fputs("</svg>", o);
    free(ord);
    for (size_t r = 0; r < n; r++) {
        const struct rm_pareto_point *pt = &res->pts[r];
        double v = res->val[r * res->nobj + k];
        if (!isfinite(v) || !isfinite(pt->cost)) continue;
        double x = 100 * (pt->cost - xlo) / (xhi - xlo), y = PY(v);
        if (isfinite(pt->cost_lo) && isfinite(pt->cost_hi) && pt->cost_hi > pt->cost_lo)
            fprintf(o,
                    "<span class=\"eb\" data-run=\"%zu\" style=\"left:%.2f%%;width:%.2f%%;"
                    "top:%.2f%%\"></span>",
                    r, 100 * (pt->cost_lo - xlo) / (xhi - xlo),
                    100 * (pt->cost_hi - pt->cost_lo) / (xhi - xlo), y);
        enum rm_front f = res->front[r * res->nobj + k];
        fprintf(o,
                "<button type=\"button\" class=\"pt %s\" data-run=\"%zu\" style=\"left:%.2f%%;"
                "top:%.2f%%;background:%s\" title=\"",
                f == RM_FRONT_ON           ? "on"
                : f == RM_FRONT_WITHIN_BAR ? "within"
                                           : "no",
                r, x, y, run_color(r, drawn));
        fprintf(o, "%zu &#183; ", r + 1);
        esc(o, runs[r].label);
        fputs(": ", o);
        esc(o, ob->metric);
        fputc(' ', o);
        tip_num(o, v);
        fprintf(o, ", %s ", cost_title(res->cost));
        tip_num(o, pt->cost);
        if (isfinite(pt->cost_lo) && isfinite(pt->cost_hi)) {
            fputs(" (", o);
            tip_num(o, pt->cost_lo);
            fputs("&#8211;", o);
            tip_num(o, pt->cost_hi);
            fputc(')', o);
        }
        fprintf(o, " %s, %s\"></button>", cost_unit(res->cost), front_word(f));
    }
#undef PX
#undef PY
    fputs("<span class=\"ptip\" hidden></span></div><div class=\"xa\">", o);
    for (int t = 0; t <= xt; t++) {
        char lab[40];
        axis_num(lab, sizeof lab, xlo + t * xstep, xstep);
        double x = 100.0 * t / xt;
        fprintf(o, "<span style=\"left:%.2f%%\"%s>%s%s%s</span>", x,
                t == xt  ? " class=\"end\""
                : t == 0 ? " class=\"start\""
                         : "",
                lab, t == xt ? " " : "", t == xt ? cost_unit(res->cost) : "");
    }
    fputs("</div></div><p class=\"note pkey\"><span class=\"pk on\"></span> on the front "
          "(no run is better for less) <span class=\"pk within\"></span> on the front within its "
          "error bar (beaten only by runs inside its bar) <span class=\"pk no\"></span> beaten; "
          "the line joins the front. Hover or tap a point for its run; points closer than 8 px "
          "are nudged apart.</p></section>\n",
          o);
}

void rm_sweep_write_pareto(FILE *o, const struct sweep_run *runs, size_t n, bool drawn,
                           const struct sweep_result *res)
{
    if (!res->nobj) {
        fputs("<p class=\"note\" id=\"nopareto\">No objective: no Pareto chart. Name one with "
              "<code>--objective METRIC:max</code> (or <code>:min</code>), or log it from the "
              "run (<code>runmon log objective acc:max</code>, "
              "<code>runmon.objective(...)</code>).</p>\n",
              o);
        return;
    }
    for (size_t k = 0; k < res->nobj; k++)
        pareto_chart(o, runs, n, drawn, res, k);
}

/* ---- parallel coordinates ----------------------------------------------------------------- */

/* One axis: a parameter (numbers on a linear scale, anything else as categories in order of
 * first appearance), an objective or a cost. y of each run in 0..100 (0 the top), NAN when the
 * run has no value. */
struct pc_axis {
    char name[RM_METRIC_NAME_MAX + 32];
    const char *unit;
    double *y;
    double lo, hi, step; /* numbers */
    json_t *cats;        /* categories (strings), or NULL */
};

static void pc_numeric(struct pc_axis *a, const double *v, size_t n)
{
    double vmin = INFINITY, vmax = -INFINITY;
    for (size_t r = 0; r < n; r++)
        if (isfinite(v[r])) vmin = fmin(vmin, v[r]), vmax = fmax(vmax, v[r]);
    if (!isfinite(vmin)) {
        for (size_t r = 0; r < n; r++)
            a->y[r] = NAN;
        a->lo = 0, a->hi = 1, a->step = 1;
        return;
    }
    round_range(vmin, vmax, &a->lo, &a->hi, &a->step);
    for (size_t r = 0; r < n; r++)
        a->y[r] = isfinite(v[r]) ? 100 - 100 * (v[r] - a->lo) / (a->hi - a->lo) : NAN;
}

static void pc_param(struct pc_axis *a, const struct sweep_run *runs, size_t n, const char *key)
{
    double *v = malloc(n * sizeof *v);
    if (!v) abort();
    bool text = false;
    for (size_t r = 0; r < n; r++) {
        const json_t *pv = json_object_get(json_object_get(runs[r].row, "params"), key);
        v[r] = json_is_number(pv) ? json_number_value(pv) : NAN;
        text |= pv && !json_is_null(pv) && !json_is_number(pv);
    }
    snprintf(a->name, sizeof a->name, "%s", key);
    if (!text) {
        pc_numeric(a, v, n);
        free(v);
        return;
    }
    /* Categories, spread from the top in order of first appearance. */
    a->cats = json_array();
    size_t *idx = malloc(n * sizeof *idx);
    if (!idx) abort();
    for (size_t r = 0; r < n; r++) {
        const json_t *pv = json_object_get(json_object_get(runs[r].row, "params"), key);
        idx[r] = SIZE_MAX;
        if (!pv || json_is_null(pv)) continue;
        char val[256];
        if (json_is_string(pv))
            snprintf(val, sizeof val, "%s", json_string_value(pv));
        else {
            char *d = json_dumps(pv, JSON_ENCODE_ANY | JSON_COMPACT);
            snprintf(val, sizeof val, "%s", d ? d : "?");
            free(d);
        }
        size_t c, nc = json_array_size(a->cats);
        for (c = 0; c < nc; c++)
            if (!strcmp(json_string_value(json_array_get(a->cats, c)), val)) break;
        if (c == nc) json_array_append_new(a->cats, json_string(val));
        idx[r] = c;
    }
    size_t nc = json_array_size(a->cats);
    for (size_t r = 0; r < n; r++)
        a->y[r] = idx[r] == SIZE_MAX ? NAN
                  : nc > 1           ? 100.0 * (double)idx[r] / (double)(nc - 1)
                                     : 50;
    free(idx);
    free(v);
}

/* Axis labels of a category axis: each category where there are few, the ends otherwise. */
#define PC_MAX_CAT_LABELS 8

static void pc_labels(FILE *o, const struct pc_axis *a, double x)
{
    if (a->cats) {
        size_t nc = json_array_size(a->cats);
        for (size_t c = 0; c < nc; c++) {
            if (nc > PC_MAX_CAT_LABELS && c != 0 && c != nc - 1) continue;
            double y = nc > 1 ? 100.0 * (double)c / (double)(nc - 1) : 50;
            fprintf(o, "<span class=\"pv c\" style=\"left:%.3f%%;top:%.2f%%\">", x, y);
            esc(o, json_string_value(json_array_get(a->cats, c)));
            fputs("</span>", o);
        }
        return;
    }
    char hi[32], lo[32];
    axis_num(hi, sizeof hi, a->hi, a->step);
    axis_num(lo, sizeof lo, a->lo, a->step);
    fprintf(o,
            "<span class=\"pv hi\" style=\"left:%.3f%%\">%s</span><span class=\"pv lo\" "
            "style=\"left:%.3f%%\">%s</span>",
            x, hi, x, lo);
}

#define PC_SLOT_PX 110

void rm_sweep_write_pcoords(FILE *o, const struct sweep_run *runs, size_t n, bool drawn,
                            const json_t *param_names, const struct sweep_result *res)
{
    const struct { /* the row keys come from model/figures.h's table, so not static */
        const char *title, *key, *unit;
        double div;
    } costs[] = {{"duration", RM_SWEEP_KEY(DURATION), "s", 1},
                 {"peak VRAM", RM_SWEEP_KEY(PEAK_VRAM), "GiB", 1024},
                 {"energy", RM_SWEEP_KEY(ENERGY), "Wh", 1}};
    size_t np = json_array_size(param_names), nc = sizeof costs / sizeof costs[0];
    size_t na = np + res->nobj + nc;
    struct pc_axis *ax = calloc(na, sizeof *ax);
    double *v = malloc(n * sizeof *v);
    if (!ax || !v) abort();
    for (size_t a = 0; a < na; a++)
        if (!(ax[a].y = malloc(n * sizeof *ax[a].y))) abort();
    for (size_t a = 0; a < np; a++)
        pc_param(&ax[a], runs, n, json_string_value(json_array_get(param_names, a)));
    for (size_t k = 0; k < res->nobj; k++) {
        struct pc_axis *a = &ax[np + k];
        snprintf(a->name, sizeof a->name, "%s (%s)", res->obj[k].metric,
                 res->obj[k].goal == RM_GOAL_MAX ? "max" : "min");
        for (size_t r = 0; r < n; r++)
            v[r] = res->val[r * res->nobj + k];
        pc_numeric(a, v, n);
    }
    for (size_t c = 0; c < nc; c++) {
        struct pc_axis *a = &ax[np + res->nobj + c];
        snprintf(a->name, sizeof a->name, "%s", costs[c].title);
        a->unit = costs[c].unit;
        for (size_t r = 0; r < n; r++)
            v[r] = row_num(runs[r].row, costs[c].key) / costs[c].div;
        pc_numeric(a, v, n);
    }
    fprintf(o,
            "<section class=\"panel\" id=\"pcoords\"><h3>Parallel coordinates <span "
            "class=\"unit\">(a line per run: its parameters, objectives and costs)</span></h3>"
            "<p class=\"note\">Drag along an axis to keep the runs in that range (on several "
            "axes: the runs in all ranges); tap an axis to clear its range. <span "
            "id=\"pc-count\">%zu of %zu runs</span>.</p><div class=\"tw\"><div class=\"pcw\" "
            "style=\"min-width:%zupx\" data-axes=\"%zu\"><div class=\"pch\">",
            n, n, na * PC_SLOT_PX, na);
    for (size_t a = 0; a < na; a++) {
        fprintf(o, "<span class=\"pn\" style=\"left:%.3f%%\" title=\"",
                100 * (a + 0.5) / (double)na);
        esc(o, ax[a].name);
        fputs("\">", o);
        esc(o, ax[a].name);
        if (ax[a].unit) fprintf(o, " <small>%s</small>", ax[a].unit);
        fputs("</span>", o);
    }
    fputs("</div><div class=\"pcp\"><svg class=\"pcs\" viewBox=\"0 0 1000 100\" "
          "preserveAspectRatio=\"none\"><g class=\"axes\">",
          o);
    for (size_t a = 0; a < na; a++) {
        double x = 1000 * (a + 0.5) / (double)na;
        fprintf(o, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"0\" y2=\"100\"/>", x, x);
    }
    fputs("</g>", o);
    for (size_t r = 0; r < n; r++) {
        const char *d = drawn ? rm_sweep_dashes[(r / RM_SWEEP_COLORS) % RM_SWEEP_DASHES] : "";
        fprintf(o, "<path data-run=\"%zu\" stroke=\"%s\"%s%s%s data-y=\"", r, run_color(r, drawn),
                *d ? " stroke-dasharray=\"" : "", d, *d ? "\"" : "");
        for (size_t a = 0; a < na; a++) {
            if (isfinite(ax[a].y[r]))
                fprintf(o, "%s%.2f", a ? " " : "", ax[a].y[r]);
            else
                fputs(a ? " -" : "-", o);
        }
        fputs("\" d=\"", o);
        bool pen = false; /* a missing value lifts the pen: the line breaks there */
        for (size_t a = 0; a < na; a++) {
            if (!isfinite(ax[a].y[r])) {
                pen = false;
                continue;
            }
            bool next = a + 1 < na && isfinite(ax[a + 1].y[r]);
            if (!pen && !next) continue; /* a lone value: no segment */
            fprintf(o, "%s%.1f %.2f", pen ? "L" : "M", 1000 * (a + 0.5) / (double)na, ax[a].y[r]);
            pen = true;
        }
        fputs("\"><title>", o);
        fprintf(o, "%zu &#183; ", r + 1);
        esc(o, runs[r].label);
        fputs("</title></path>", o);
    }
    fputs("</svg>", o);
    for (size_t a = 0; a < na; a++) {
        double x = 100 * (a + 0.5) / (double)na;
        fprintf(o,
                "<div class=\"pax\" data-axis=\"%zu\" style=\"left:%.3f%%\"><span class=\"brush\" "
                "hidden></span></div>",
                a, x);
        pc_labels(o, &ax[a], x);
    }
    fputs("</div></div></div></section>\n", o);
    for (size_t a = 0; a < na; a++) {
        free(ax[a].y);
        json_decref(ax[a].cats);
    }
    free(ax);
    free(v);
}
