/* The sweep page: the sweep table, bars per run, the runs' series overlaid on one time axis
 * from each run's start, and the phases of each run (see sweep_page.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/json.h"
#include "model/figures.h"
#include "sweep/sweep_internal.h"

/* Ten colours told apart on white (Tableau 10), then five dash styles: run i draws in colour
 * i % 10 with dash i / 10, so 50 runs have 50 different lines. */
const char *const rm_sweep_palette[RM_SWEEP_COLORS] = {
    "#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f",
    "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#5d6d7e",
};
const char *const rm_sweep_dashes[RM_SWEEP_DASHES] = {"", "7 3", "2 2", "9 3 2 3", "4 4"};

struct page {
    FILE *o;
    const json_t *rows;
    const struct rm_sweep_page_opts *opts;
    struct sweep_run *runs;
    size_t n;
    bool drawn;              /* the series and phases are on the page (n <= RM_SWEEP_MAX_DRAWN) */
    struct sweep_result res; /* the objectives, costs and fronts */
};

static void esc(FILE *o, const char *s)
{
    rm_html_escape_str(o, s ? s : "");
}

static const char *str_of(const json_t *row, const char *key)
{
    const json_t *v = json_object_get(row, key);
    return json_is_string(v) ? json_string_value(v) : NULL;
}

/* A number of the row, or NAN. */
static double num_of(const json_t *row, const char *key)
{
    const json_t *v = json_object_get(row, key);
    return json_is_number(v) ? json_number_value(v) : NAN;
}

/* A parameter's value as text: numbers as written (%.15g), strings as they are. */
static void value_text(const json_t *v, char *buf, size_t cap)
{
    if (json_is_string(v))
        snprintf(buf, cap, "%s", json_string_value(v));
    else if (json_is_integer(v))
        snprintf(buf, cap, "%lld", (long long)json_integer_value(v));
    else if (json_is_real(v))
        snprintf(buf, cap, "%.15g", json_real_value(v));
    else if (json_is_boolean(v))
        snprintf(buf, cap, "%s", json_is_true(v) ? "true" : "false");
    else
        buf[0] = '\0';
}

static bool rerun_of(const json_t *row)
{
    const json_t *v = json_object_get(row, "rerun");
    return json_is_true(v) || (json_is_integer(v) && json_integer_value(v) > 0);
}

/* "lr=0.1 batch=64", else the session id; a re-run says so. */
static char *make_label(const struct page *p, const json_t *row)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    if (!m) abort();
    const json_t *params = json_object_get(row, "params");
    size_t i, k = 0;
    json_t *name;
    json_array_foreach(p->opts->param_names, i, name)
    {
        const json_t *v = json_object_get(params, json_string_value(name));
        if (!v || json_is_null(v)) continue;
        char val[256];
        value_text(v, val, sizeof val);
        fprintf(m, "%s%s=%s", k++ ? " " : "", json_string_value(name), val);
    }
    if (!k) fputs(str_of(row, "session_id") ? str_of(row, "session_id") : "?", m);
    if (rerun_of(row)) fputs(" (re-run)", m);
    if (fclose(m)) abort();
    return buf;
}

/* ---- formatting ----------------------------------------------------------------------- */

static void num_cell(FILE *o, double v, int dec, const char *cls)
{
    if (!isfinite(v)) {
        fprintf(o, "<td%s%s%s data-v=\"\">&#8211;</td>", cls ? " class=\"" : "", cls ? cls : "",
                cls ? "\"" : "");
        return;
    }
    fprintf(o, "<td%s%s%s data-v=\"%.10g\">%.*f</td>", cls ? " class=\"" : "", cls ? cls : "",
            cls ? "\"" : "", v, dec, v);
}

/* How a run's peak VRAM is to be read where its workload's was not plainly attributed
 * (summary.json's workload_vram_basis): counted on assumption, or unattributed (the value is
 * then the GPU's memory used by every process). "" otherwise. */
static const char *vram_basis_text(const json_t *row)
{
    const char *b = json_string_value(json_object_get(row, RM_RUN_KEY(WORKLOAD_VRAM_BASIS)));
    if (!b) return "";
    return !strcmp(b, "assumed") ? " assumed the workload's"
                                 : " all processes' (the workload's unattributed)";
}

/* The runs table's peak VRAM cell (GiB), with its basis. */
static void vram_cell(FILE *o, const json_t *row)
{
    double v = num_of(row, RM_SWEEP_KEY(PEAK_VRAM)) / 1024;
    const char *basis = vram_basis_text(row);
    if (!*basis || !isfinite(v)) {
        num_cell(o, v, 2, NULL);
        return;
    }
    fprintf(o, "<td data-v=\"%.10g\">%.2f<span class=\"note\">%s</span></td>", v, v, basis);
}

/* An energy cell: the value (sorted by it), its error bar as "±H" (the larger of its two
 * sides, the exact ends in the title) and "~" for a short phase (summary.json short_phase). */
static void energy_cell(FILE *o, double v, double lo, double hi, bool short_phase)
{
    if (!isfinite(v)) {
        fputs("<td data-v=\"\">&#8211;</td>", o);
        return;
    }
    if (isfinite(lo) && isfinite(hi))
        fprintf(o, "<td data-v=\"%.10g\" title=\"error bar %.4f&#8211;%.4f Wh\">", v, lo, hi);
    else if (isfinite(lo)) /* its top unknown (docs/ENERGY.md) */
        fprintf(o, "<td data-v=\"%.10g\" title=\"error bar %.4f&#8211;? Wh\">", v, lo);
    else
        fprintf(o, "<td data-v=\"%.10g\">", v);
    fprintf(o, "%.3f", v);
    if (short_phase)
        fputs("<span class=\"short\" title=\"short phase: shorter than 2 sensor windows or 3 "
              "samples; its energy is mostly the sensor's smear\">~</span>",
              o);
    if (isfinite(lo) && isfinite(hi))
        fprintf(o, "<small> &#177;%.3f</small>", fmax(v - lo, hi - v));
    else if (isfinite(lo))
        fputs("<small> &#177;?</small>", o);
    fputs("</td>", o);
}

void rm_sweep_swatch(FILE *o, size_t i)
{
    const char *d = rm_sweep_dashes[(i / RM_SWEEP_COLORS) % RM_SWEEP_DASHES];
    fprintf(o,
            "<svg class=\"sw\" width=\"26\" height=\"8\" aria-hidden=\"true\"><line x1=\"1\" "
            "y1=\"4\" x2=\"25\" y2=\"4\" stroke=\"%s\"%s%s%s/></svg>",
            rm_sweep_palette[i % RM_SWEEP_COLORS], *d ? " stroke-dasharray=\"" : "", d,
            *d ? "\"" : "");
}

/* Elapsed seconds as the axis shows them: 45s, 2:30, 1:02:03. */
void rm_sweep_elapsed(char *buf, size_t cap, double s, double step)
{
    long v = lround(s);
    if (step < 1)
        snprintf(buf, cap, "%.1fs", s);
    else if (v < 120)
        snprintf(buf, cap, "%lds", v);
    else if (v < 3600)
        snprintf(buf, cap, "%ld:%02ld", v / 60, v % 60);
    else
        snprintf(buf, cap, "%ld:%02ld:%02ld", v / 3600, v / 60 % 60, v % 60);
}

/* A round step so that span / step is at most n. */
void rm_sweep_x_ticks(FILE *o, double span, double step,
                      void (*label)(char *buf, size_t cap, double s, double step))
{
    for (double s = 0; s <= span + 1e-9 * fmax(span, 1); s += step) {
        char lab[32];
        label(lab, sizeof lab, s, step);
        double x = span > 0 ? 100 * s / span : 0;
        fprintf(o, "<span style=\"left:%.2f%%\"%s>%s</span>", x,
                x > 92   ? " class=\"end\""
                : s == 0 ? " class=\"start\""
                         : "",
                lab);
    }
}

double rm_sweep_nice_step(double span, int n)
{
    static const double st[] = {0.1,  0.2,   0.5,   1,     2,     5,      10,     15,
                                30,   60,    120,   300,   600,   900,    1800,   3600,
                                7200, 10800, 21600, 43200, 86400, 172800, 432000, 864000};
    for (size_t i = 0; i < sizeof st / sizeof st[0]; i++)
        if (span / st[i] <= n) return st[i];
    return st[sizeof st / sizeof st[0] - 1];
}

/* A round top for a scale holding v (1, 1.5, 2, 2.5, 3, 4, 5, 6, 8 x 10^k): its quarters are
 * short numbers. */
double rm_sweep_nice_top(double v)
{
    if (!(v > 0)) return 1;
    double e = pow(10, floor(log10(v)));
    static const double f[] = {1, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10};
    for (size_t i = 0; i < sizeof f / sizeof f[0]; i++)
        if (v <= f[i] * e * 1.0000001) return f[i] * e;
    return 10 * e;
}

/* ---- the page's parts ------------------------------------------------------------------ */

static void write_head(struct page *p)
{
    FILE *o = p->o;
    const char *name = p->opts->name;
    fprintf(o, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
               "<meta name=\"viewport\" content=\"width=device-width\">"
               "<meta name=\"generator\" content=\"runmon report --sweep\"><title>runmon sweep ");
    esc(o, name ? name : "");
    fprintf(o, "</title><style>%s</style></head>\n<body>\n<header><h1>runmon sweep", rm_sweep_css);
    if (name) {
        fputs(" &#8212; ", o);
        esc(o, name);
    }
    fprintf(o, "</h1><div class=\"meta\"><strong>%zu</strong> run%s", p->n, p->n == 1 ? "" : "s");
    if (p->opts->n_hosts > 1) fprintf(o, " on <strong>%zu</strong> hosts", p->opts->n_hosts);
    size_t np = json_array_size(p->opts->param_names);
    if (np) {
        fprintf(o, " &#183; parameters: ");
        size_t i;
        json_t *v;
        json_array_foreach(p->opts->param_names, i, v)
        {
            if (i) fputs(", ", o);
            esc(o, json_string_value(v));
        }
        if (p->opts->params_inferred)
            fputs(" (inferred: the command-line arguments that differ between the runs)", o);
    }
    fputs("</div></header>\n<main>\n", o);
}

static void write_table(struct page *p)
{
    FILE *o = p->o;
    const json_t *pn = p->opts->param_names;
    bool hosts = p->opts->n_hosts > 1;
    fputs("<section class=\"panel\" id=\"t-sweep\"><h3>Runs <span class=\"unit\">(click a column "
          "to sort)</span></h3><div class=\"tw\"><table class=\"sortable\"><thead><tr>"
          "<th data-type=\"num\">#</th>",
          o);
    size_t i;
    json_t *v;
    json_array_foreach(pn, i, v)
    {
        fputs("<th class=\"t\" data-type=\"param\">", o);
        esc(o, json_string_value(v));
        fputs("</th>", o);
    }
    if (hosts) fputs("<th class=\"t\" data-type=\"text\">host</th>", o);
    fputs("<th class=\"t\" data-type=\"text\">status</th><th data-type=\"num\">exit</th>"
          "<th data-type=\"num\">duration s</th><th class=\"t\" data-type=\"text\">GPU</th>"
          "<th data-type=\"num\">GPU util mean %</th><th data-type=\"num\">peak VRAM GiB</th>"
          "<th data-type=\"num\">energy Wh</th><th class=\"t\" data-type=\"text\">session</th>"
          "</tr></thead><tbody>\n",
          o);
    for (size_t r = 0; r < p->n; r++) {
        const json_t *row = p->runs[r].row;
        fprintf(o, "<tr data-run=\"%zu\"%s><td data-v=\"%zu\">", r,
                rerun_of(row) ? " class=\"rerun\"" : "", r + 1);
        if (p->drawn) rm_sweep_swatch(o, r);
        fprintf(o, "%zu</td>", r + 1);
        const json_t *params = json_object_get(row, "params");
        json_array_foreach(pn, i, v)
        {
            const json_t *pv = json_object_get(params, json_string_value(v));
            char val[1100];
            value_text(pv, val, sizeof val);
            if (json_is_number(pv))
                fprintf(o, "<td class=\"t\" data-v=\"%.15g\">", json_number_value(pv));
            else
                fputs("<td class=\"t\">", o);
            if (val[0])
                esc(o, val);
            else
                fputs("&#8211;", o);
            fputs("</td>", o);
        }
        if (hosts) {
            fputs("<td class=\"t\">", o);
            esc(o, str_of(row, "host"));
            fputs("</td>", o);
        }
        fputs("<td class=\"t\">", o);
        esc(o, str_of(row, "status"));
        if (rerun_of(row)) fputs(" (re-run)", o);
        fputs("</td>", o);
        num_cell(o, num_of(row, "exit_code"), 0, NULL);
        num_cell(o, num_of(row, RM_SWEEP_KEY(DURATION)), 1, NULL);
        fputs("<td class=\"t\">", o);
        const char *gpu = str_of(row, "gpu_name");
        esc(o, gpu ? gpu : p->runs[r].gpu);
        fputs("</td>", o);
        num_cell(o, num_of(row, RM_SWEEP_KEY(UTIL_MEAN)), 1, NULL);
        vram_cell(o, row);
        energy_cell(o, num_of(row, RM_SWEEP_KEY(ENERGY)), num_of(row, RM_FIG_KEY(ENERGY_LOW)),
                    num_of(row, RM_FIG_KEY(ENERGY_HIGH)), false);
        fputs("<td class=\"t\"><code>", o);
        esc(o, str_of(row, "session_id"));
        fputs("</code></td></tr>\n", o);
    }
    fputs("</tbody></table></div>", o);
    const json_t *first = json_array_size(p->rows) ? json_array_get(p->rows, 0) : NULL;
    if (first && json_is_string(json_object_get(first, "peak_vram_source")))
        fputs("<p class=\"note\">Peak VRAM: the workload's own processes where apps.csv "
              "recorded them, else the GPU's memory used.</p>",
              o);
    fputs("</section>\n", o);
}

/* One panel of bars: value i of each run against the scale (a run's own total for VRAM);
 * with lo and hi (energy), each run's error bar drawn as a whisker over its bar and its
 * half-width beside the value. */
static void write_bars(struct page *p, const char *id, const char *title, const double *v,
                       const double *scale, int dec, const char *unit, const double *lo,
                       const double *hi)
{
    FILE *o = p->o;
    fprintf(o, "<section class=\"panel bars\" id=\"%s\"><h3>%s</h3><div class=\"bl\">", id, title);
    bool based = false; /* some run's VRAM has a basis (vram_basis_text) */
    for (size_t r = 0; r < p->n; r++) {
        double pct = isfinite(v[r]) && scale[r] > 0 ? 100 * v[r] / scale[r] : 0;
        if (pct > 100) pct = 100;
        if (pct < 0) pct = 0;
        /* a VRAM bar's basis goes in its title and the panel's note: beside the value it
         * would leave a narrow panel */
        const char *basis = !strcmp(id, "b-vram") ? vram_basis_text(p->runs[r].row) : "";
        based |= *basis != 0;
        fprintf(o, "<div class=\"br\" data-run=\"%zu\"", r);
        if (*basis) fprintf(o, " title=\"VRAM:%s\"", basis);
        fprintf(o, "><span class=\"bn\">%zu &#183; ", r + 1);
        esc(o, p->runs[r].label);
        fprintf(o, "</span><span class=\"bt\"><i style=\"width:%.1f%%;background:%s\"></i>", pct,
                p->drawn ? rm_sweep_palette[r % RM_SWEEP_COLORS] : "#4e79a7");
        bool whisker =
            lo && hi && isfinite(v[r]) && isfinite(lo[r]) && isfinite(hi[r]) && scale[r] > 0;
        if (whisker) {
            double l = fmax(0, fmin(100, 100 * lo[r] / scale[r]));
            double h = fmax(l, fmin(100, 100 * hi[r] / scale[r]));
            fprintf(o,
                    "<span class=\"wk\" style=\"left:%.2f%%;width:%.2f%%\" title=\"error bar "
                    "%.*f&#8211;%.*f %s\"></span>",
                    l, h - l, dec + 1, lo[r], dec + 1, hi[r], unit);
        }
        fputs("</span><span class=\"bv\">", o);
        if (!isfinite(v[r]))
            fputs("&#8211;", o);
        else if (whisker)
            fprintf(o, "%.*f &#177;%.*f %s", dec, v[r], dec, fmax(v[r] - lo[r], hi[r] - v[r]),
                    unit);
        else if (lo && isfinite(lo[r]) && !isfinite(hi[r])) /* the bar's top unknown */
            fprintf(o, "%.*f &#177;? %s", dec, v[r], unit);
        else if (!strcmp(id, "b-vram") && scale[r] > 0)
            fprintf(o, "%.*f / %.*f %s (%.0f%%)", dec, v[r], dec, scale[r], unit,
                    100 * v[r] / scale[r]);
        else
            fprintf(o, "%.*f %s", dec, v[r], unit);
        fputs("</span></div>\n", o);
    }
    fputs("</div>", o);
    if (based)
        fputs("<p class=\"note\">Some runs' GPU memory had no process runmon could place "
              "(another PID namespace, or none listed): their VRAM is all processes' (the "
              "workload's unattributed) or assumed the workload's; a bar's title says which.</p>",
              o);
    fputs("</section>\n", o);
}

static void write_all_bars(struct page *p)
{
    double *v = calloc(p->n, sizeof *v), *s = calloc(p->n, sizeof *s);
    double *lo = calloc(p->n, sizeof *lo), *hi = calloc(p->n, sizeof *hi);
    if (!v || !s || !lo || !hi) abort();
    static const struct {
        const char *id, *title;
        int fig; /* its row key: rm_sweep_figures[fig]'s, with its bar where it has one */
        const char *unit;
        int dec;
        double div;
    } b[] = {
        {"b-vram", "Peak VRAM against the GPU's total", RM_SWEEP_PEAK_VRAM, "GiB", 1, 1024},
        {"b-energy", "Energy", RM_SWEEP_ENERGY, "Wh", 3, 1},
        {"b-duration", "Duration", RM_SWEEP_DURATION, "s", 1, 1},
        {"b-util", "Mean GPU utilization", RM_SWEEP_UTIL_MEAN, "%", 1, 1},
    };
    fputs("<div class=\"barrow\">", p->o);
    for (size_t k = 0; k < sizeof b / sizeof b[0]; k++) {
        double max = 0;
        const struct rm_sweep_figure *f = &rm_sweep_figures[b[k].fig];
        bool energy = f->low >= 0; /* the energy's error bar */
        for (size_t r = 0; r < p->n; r++) {
            v[r] = num_of(p->runs[r].row, f->key) / b[k].div;
            if (isfinite(v[r]) && v[r] > max) max = v[r];
            /* The energy's error bar: the scale reaches the highest end, so each whisker
             * lies inside its bar's track. */
            lo[r] = energy ? num_of(p->runs[r].row, rm_figures[f->low].key) : NAN;
            hi[r] = energy ? num_of(p->runs[r].row, rm_figures[f->high].key) : NAN;
            if (isfinite(v[r]) && isfinite(lo[r]) && isfinite(hi[r]) && hi[r] > max) max = hi[r];
        }
        for (size_t r = 0; r < p->n; r++)
            s[r] = k == 0 ? p->runs[r].vram_total_mb / 1024 : k == 3 ? 100 : max;
        write_bars(p, b[k].id, b[k].title, v, s, b[k].dec, b[k].unit, energy ? lo : NULL,
                   energy ? hi : NULL);
    }
    fputs("</div>\n", p->o);
    free(v);
    free(s);
    free(lo);
    free(hi);
}

static void write_legend(struct page *p)
{
    FILE *o = p->o;
    fputs("<div class=\"panel\" id=\"legend\"><p class=\"note\">Each run's colour and dash "
          "(10 colours, then 5 dash styles: up to 50 runs). Click a run to hide or show its "
          "lines.</p><div class=\"legend\">",
          o);
    for (size_t r = 0; r < p->n; r++) {
        fprintf(o, "<button type=\"button\" class=\"run\" data-run=\"%zu\" aria-pressed=\"true\">",
                r);
        rm_sweep_swatch(o, r);
        fprintf(o, "%zu &#183; ", r + 1);
        esc(o, p->runs[r].label);
        fputs("</button>", o);
    }
    fputs("</div></div>\n", o);
}

/* One chart: every run's series m on one time axis from 0 to max_ns, y from 0 to a round top. */
static void write_chart(struct page *p, int m, int64_t max_ns)
{
    static const char *const ids[SW_COUNT] = {"c-vram", "c-util", "c-power"};
    static const char *const titles[SW_COUNT] = {
        "GPU memory used <span class=\"unit\">(all GPUs of the run)</span>",
        "GPU utilization <span class=\"unit\">(mean of the run's GPUs, %)</span>",
        "Power <span class=\"unit\">(all GPUs of the run, W)</span>"};
    FILE *o = p->o;
    double vmax = 0;
    for (size_t r = 0; r < p->n; r++)
        for (size_t k = 0; k < p->runs[r].npts[m]; k++)
            if (p->runs[r].pts[m][k].v > vmax) vmax = p->runs[r].pts[m][k].v;
    double div = 1;
    const char *unit = m == SW_UTIL ? "%" : m == SW_POWER ? "W" : "MiB";
    if (m == SW_VRAM && vmax >= 1024) div = 1024, unit = "GiB";
    double top = m == SW_UTIL ? 100 : rm_sweep_nice_top(vmax / div);
    fprintf(o,
            "<section class=\"panel\" id=\"%s\"><h3>%s</h3><div class=\"plot\">"
            "<div class=\"ya\">",
            ids[m], titles[m]);
    for (int k = 4; k >= 0; k--)
        fprintf(o, "<span style=\"top:%d%%\">%g %s</span>", (4 - k) * 25, top * k / 4, unit);
    fprintf(o,
            "</div><svg class=\"chart\" viewBox=\"0 0 1000 100\" preserveAspectRatio=\"none\" "
            "data-max-s=\"%.3f\"><g class=\"grid\">",
            (double)max_ns / 1e9);
    for (int k = 0; k <= 4; k++)
        fprintf(o, "<line x1=\"0\" x2=\"1000\" y1=\"%d\" y2=\"%d\"/>", k * 25, k * 25);
    fputs("</g>", o);
    for (size_t r = 0; r < p->n; r++) {
        const struct sweep_run *run = &p->runs[r];
        const char *d = rm_sweep_dashes[(r / RM_SWEEP_COLORS) % RM_SWEEP_DASHES];
        for (size_t k = 0; k < run->npts[m]; k++) {
            const struct rm_ds_point *q = &run->pts[m][k];
            if (k == 0 || q->brk) {
                if (k) fputs("\"/>", o);
                fprintf(o, "<polyline data-run=\"%zu\" stroke=\"%s\"%s%s%s points=\"", r,
                        rm_sweep_palette[r % RM_SWEEP_COLORS], *d ? " stroke-dasharray=\"" : "", d,
                        *d ? "\"" : "");
            } else {
                fputc(' ', o);
            }
            double x = max_ns > 0 ? 1000.0 * (double)q->t / (double)max_ns : 0;
            double y = 100 - 100 * (q->v / div) / top;
            fprintf(o, "%.1f,%.2f", x < 0 ? 0 : x > 1000 ? 1000 : x, y < 0 ? 0 : y);
        }
        if (run->npts[m]) fputs("\"/>", o);
    }
    fputs("</svg><div class=\"xa\">", o);
    double span = (double)max_ns / 1e9;
    rm_sweep_x_ticks(o, span, rm_sweep_nice_step(span, 6), rm_sweep_elapsed);
    fputs("</div></div></section>\n", o);
}

static void write_charts(struct page *p)
{
    int64_t max_ns = 0;
    size_t with = 0;
    for (size_t r = 0; r < p->n; r++) {
        if (p->runs[r].span_ns > max_ns) max_ns = p->runs[r].span_ns;
        with += p->runs[r].npts[SW_VRAM] || p->runs[r].npts[SW_UTIL];
    }
    bool metrics = rm_sweep_metrics_any(p->runs, p->n);
    if (!with) {
        fputs("<p class=\"note\" id=\"noseries\">No run has GPU samples to draw.</p>\n", p->o);
        if (metrics) write_legend(p);
    } else {
        fputs("<p class=\"note\">Time axis: elapsed since each run's start. Breaks in a line: "
              "no samples.</p>\n",
              p->o);
        write_legend(p);
        for (int m = 0; m < SW_COUNT; m++)
            write_chart(p, m, max_ns);
    }
    if (metrics) {
        /* The objectives' metrics first. */
        const char *first[RM_SWEEP_MAX_OBJECTIVES];
        for (size_t k = 0; k < p->res.nobj; k++)
            first[k] = p->res.obj[k].metric;
        rm_sweep_write_metric_charts(p->o, p->runs, p->n, first, p->res.nobj);
    }
}

/* ---- phases ------------------------------------------------------------------------------ */

struct phase_pick {
    const char *path;
    double total_s;
    size_t seq; /* first seen: the first run's phases in its order, then the others' new ones */
};

static int by_total(const void *a, const void *b)
{
    const struct phase_pick *x = a, *y = b;
    return x->total_s < y->total_s ? 1 : x->total_s > y->total_s ? -1 : strcmp(x->path, y->path);
}

static int by_seq(const void *a, const void *b)
{
    size_t x = ((const struct phase_pick *)a)->seq, y = ((const struct phase_pick *)b)->seq;
    return x < y ? -1 : x > y;
}

static const json_t *phase_of(const json_t *phases, const char *path)
{
    size_t i;
    json_t *ph;
    json_array_foreach(phases, i, ph)
    {
        const char *pp = str_of(ph, "path");
        if (pp && !strcmp(pp, path)) return ph;
    }
    return NULL;
}

static void write_phases(struct page *p)
{
    FILE *o = p->o;
    struct phase_pick *pk = NULL;
    size_t n = 0, cap = 0;
    for (size_t r = 0; r < p->n; r++) {
        size_t i;
        json_t *ph;
        json_array_foreach(p->runs[r].phases, i, ph)
        {
            const char *path = str_of(ph, "path");
            if (!path) continue;
            double t = num_of(ph, "total_seconds");
            size_t k = 0;
            while (k < n && strcmp(pk[k].path, path))
                k++;
            if (k == n) {
                if (n == cap) {
                    cap = cap ? 2 * cap : 64;
                    pk = realloc(pk, cap * sizeof *pk);
                    if (!pk) abort();
                }
                pk[n] = (struct phase_pick){path, 0, n};
                n++;
            }
            if (isfinite(t)) pk[k].total_s += t;
        }
    }
    if (!n) {
        free(pk);
        return;
    }
    size_t shown = n;
    if (n > RM_SWEEP_MAX_PHASES) {
        qsort(pk, n, sizeof *pk, by_total);
        shown = RM_SWEEP_MAX_PHASES;
    }
    /* The runs' order, as the text summary lists them (not by name). */
    qsort(pk, shown, sizeof *pk, by_seq);
    fputs("<section class=\"panel\" id=\"t-phases\"><h3>Phases <span class=\"unit\">(each "
          "phase path in each run)</span></h3>",
          o);
    if (shown < n)
        fprintf(o,
                "<p class=\"note\">%zu phase paths: the %zu with the most time over all runs "
                "are shown.</p>",
                n, shown);
    fputs("<div class=\"tw\"><table class=\"sortable\"><thead><tr><th class=\"l\" "
          "data-type=\"text\">phase</th><th class=\"l\" data-type=\"num\">run</th>"
          "<th data-type=\"num\">count</th><th data-type=\"num\">time s</th>"
          "<th data-type=\"num\">workload VRAM peak GiB</th><th data-type=\"num\">GPU VRAM peak "
          "GiB</th><th data-type=\"num\">energy Wh</th></tr></thead><tbody>\n",
          o);
    for (size_t k = 0; k < shown; k++)
        for (size_t r = 0; r < p->n; r++) {
            const json_t *ph = phase_of(p->runs[r].phases, pk[k].path);
            if (!ph) continue;
            double wpk = NAN, gpk = NAN, e = NAN;
            size_t i;
            json_t *g;
            json_array_foreach(json_object_get(ph, "gpus"), i, g)
            {
                const json_t *w = json_object_get(json_object_get(g, RM_GPU_WORKLOAD_VRAM), "peak");
                const json_t *v = rm_json_at(g, RM_FIG_KEY(VRAM_PEAK));
                const json_t *en = json_object_get(g, RM_FIG_KEY(ENERGY));
                if (json_is_number(w) && !(json_number_value(w) <= wpk)) wpk = json_number_value(w);
                if (json_is_number(v) && !(json_number_value(v) <= gpk)) gpk = json_number_value(v);
                if (json_is_number(en)) e = (isfinite(e) ? e : 0) + json_number_value(en);
            }
            /* The phase's own energy and bar (MIG instances counted once), else the GPUs' sum
             * (a summary older than the bar). */
            double elo = NAN, ehi = NAN;
            if (json_is_number(json_object_get(ph, RM_FIG_KEY(ENERGY)))) {
                e = num_of(ph, RM_FIG_KEY(ENERGY));
                elo = num_of(ph, RM_FIG_KEY(ENERGY_LOW));
                ehi = num_of(ph, RM_FIG_KEY(ENERGY_HIGH));
            }
            fprintf(o, "<tr data-run=\"%zu\"><td class=\"l\">", r);
            rm_html_name(o, pk[k].path);
            fprintf(o, "</td><td class=\"l\" data-v=\"%zu\">", r + 1);
            rm_sweep_swatch(o, r);
            fprintf(o, "%zu &#183; ", r + 1);
            esc(o, p->runs[r].label);
            fputs("</td>", o);
            num_cell(o, num_of(ph, "count"), 0, NULL);
            num_cell(o, num_of(ph, "total_seconds"), 3, NULL);
            num_cell(o, wpk / 1024, 2, NULL);
            num_cell(o, gpk / 1024, 2, NULL);
            energy_cell(o, e, elo, ehi, json_is_true(json_object_get(ph, "short_phase")));
            fputs("</tr>\n", o);
        }
    fputs("</tbody></table></div></section>\n", o);
    free(pk);
}

/* ---- building -------------------------------------------------------------------------- */

static void write_page(struct page *p)
{
    write_head(p);
    write_table(p);
    write_all_bars(p);
    rm_sweep_write_pareto(p->o, p->runs, p->n, p->drawn, &p->res);
    rm_sweep_write_pcoords(p->o, p->runs, p->n, p->drawn, p->opts->param_names, &p->res);
    if (p->drawn) {
        write_charts(p);
        write_phases(p);
    } else {
        fprintf(p->o,
                "<p class=\"note\" id=\"nodraw\">%zu runs: the overlaid series and the phase "
                "table are left out above %d runs (10 colours x 5 dash styles tell %d lines "
                "apart); the table and the bars show every run.</p>\n",
                p->n, RM_SWEEP_MAX_DRAWN, RM_SWEEP_MAX_DRAWN);
    }
    fprintf(p->o, "</main>\n<script>%s</script>\n</body></html>\n", rm_sweep_js);
}

int rm_sweep_page_build(const json_t *rows, const struct rm_sweep_page_opts *opts, char **html,
                        size_t *len, char *err, size_t errsz)
{
    *html = NULL;
    *len = 0;
    size_t n = json_array_size(rows);
    if (!n) {
        snprintf(err, errsz, "no runs to compare");
        return 2;
    }
    struct page p = {.rows = rows, .opts = opts, .n = n, .drawn = n <= RM_SWEEP_MAX_DRAWN};
    p.runs = calloc(n, sizeof *p.runs);
    if (!p.runs) {
        snprintf(err, errsz, "out of memory");
        return 1;
    }
    for (size_t r = 0; r < n; r++) {
        struct sweep_run *run = &p.runs[r];
        run->row = json_array_get(rows, r);
        run->dir = str_of(run->row, "session_dir");
        run->label = make_label(&p, run->row);
        rm_sweep_run_read(run, p.drawn);
    }
    int rc = rm_sweep_result_init(&p.res, p.runs, n, opts, err, errsz);
    if (rc) {
        for (size_t r = 0; r < n; r++)
            rm_sweep_run_free(&p.runs[r]);
        free(p.runs);
        return rc;
    }
    p.o = open_memstream(html, len);
    if (!p.o) {
        rc = 1;
    } else {
        write_page(&p);
        if (fclose(p.o)) rc = 1;
    }
    if (rc) {
        snprintf(err, errsz, "out of memory");
        free(*html);
        *html = NULL;
        *len = 0;
    }
    rm_sweep_result_free(&p.res);
    for (size_t r = 0; r < n; r++)
        rm_sweep_run_free(&p.runs[r]);
    free(p.runs);
    return rc;
}
