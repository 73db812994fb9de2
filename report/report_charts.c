/* The report's SVG: the shared time axis, phase bands and the phase lane, degraded spans and
 * alert markers, and the charts of the downsampled series. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "base/rm_time.h"
#include "model/streams.h"
#include "report/report_internal.h"

/* ---- writing helpers ------------------------------------------------------------------ */

static double xpos(const struct report *r, int64_t t)
{
    double span = (double)(r->t1 - r->t0);
    if (span <= 0) return PL;
    double x = PL + (double)(t - r->t0) / span * PW;
    return x < PL ? PL : x > PL + PW ? PL + PW : x;
}

static double nice_ceil(double v)
{
    if (!(v > 0) || !isfinite(v)) return 1;
    double e = pow(10, floor(log10(v))), m = v / e;
    double n = m <= 1 ? 1 : m <= 2 ? 2 : m <= 2.5 ? 2.5 : m <= 5 ? 5 : 10;
    return n * e;
}

static const char *const palette[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e",
                                      "#17becf", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22"};
#define NPAL (sizeof palette / sizeof palette[0])

const char *rm_report_phase_color(const char *path, char *buf)
{
    uint32_t h = 2166136261u;
    for (const char *s = path ? path : ""; *s; s++)
        h = (h ^ (unsigned char)*s) * 16777619u;
    snprintf(buf, RM_PHASE_COLOR_SZ, "hsl(%u,65%%,60%%)", (unsigned)(h % 360));
    return buf;
}

void rm_report_phase_swatch(FILE *o, const char *path)
{
    char col[RM_PHASE_COLOR_SZ];
    fprintf(o, "<i class=\"sw\" data-path=\"");
    esc(o, path ? path : "");
    fprintf(o, "\" style=\"background:%s\"></i>", rm_report_phase_color(path, col));
}

static void fmt_elapsed(char *buf, size_t cap, double s, double step, double span)
{
    if (step < 1) {
        snprintf(buf, cap, "%.1fs", s);
    } else if (span < 120) {
        snprintf(buf, cap, "%.0fs", s);
    } else {
        long v = lround(s), d = v / 86400, h = v % 86400 / 3600, m = v % 3600 / 60, sec = v % 60;
        if (d)
            snprintf(buf, cap, "%ldd %02ld:%02ld", d, h, m);
        else if (span < 3600)
            snprintf(buf, cap, "%ld:%02ld", m + h * 60, sec);
        else
            snprintf(buf, cap, "%ld:%02ld", h, m);
    }
}

/* Vertical grid and time labels below a plot of height ph starting at y = top. */
static void time_axis(struct report *r, double top, double ph)
{
    FILE *o = r->out;
    double span = (double)(r->t1 - r->t0) / 1e9;
    static const double steps[] = {0.1,   0.2,   0.5,   1,      2,      5,      10,     15,   30,
                                   60,    120,   300,   600,    900,    1800,   3600,   7200, 10800,
                                   21600, 43200, 86400, 172800, 432000, 864000, 2592000};
    double step = steps[sizeof steps / sizeof steps[0] - 1];
    for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++)
        if (span / steps[i] <= 10) {
            step = steps[i];
            break;
        }
    fprintf(o, "<g class=\"axis t\">");
    for (double s = 0; s <= span + 1e-9 && span > 0; s += step) {
        double x = PL + s / span * PW;
        char lab[48];
        fmt_elapsed(lab, sizeof lab, s, step, span);
        fprintf(o,
                "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>"
                "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\">%s</text>",
                x, top, x, top + ph, x, top + ph + 14, x > PL + PW - 30 ? "end" : "middle", lab);
    }
    fprintf(o, "</g>");
}

/* ---- phases --------------------------------------------------------------------------- */

static int phase_depth(const struct rm_phase *p)
{
    return p->depth > 0 ? p->depth : 0; /* `phase` lines (-1) are top-level */
}

static int cmp_band(const void *x, const void *y)
{
    const struct band *a = x, *b = y;
    if (a->row != b->row) return a->row - b->row;
    return a->a < b->a ? -1 : a->a > b->a;
}

/* Windows merged per phase where they are closer than a pixel, so a run of a million short
 * steps is a handful of bands; at most MAX_BANDS. */
size_t rm_report_make_bands(struct report *r, struct band **out, size_t *dropped)
{
    struct rm_phase_index *rl = &r->rl;
    double px = (double)(r->t1 - r->t0) / PW;
    struct band *cur = rm_xcalloc(rl->nphases, sizeof *cur);
    struct band *b = NULL;
    size_t n = 0, cap = 0;
    *dropped = 0;
    for (size_t i = 0; i < rl->nphases; i++)
        cur[i].n = 0;
    for (size_t i = 0; i < rl->nwin; i++) {
        const struct rm_phase_window *w = &rl->win[i];
        int64_t a = w->start_ns, e = w->end_ns == RM_OPEN_END ? r->t1 : w->end_ns;
        if (e < a) e = a;
        struct band *c = &cur[w->phase];
        if (c->n && (double)(a - c->b) <= px) {
            if (e > c->b) c->b = e;
            c->n++;
            continue;
        }
        if (c->n) {
            if (n < MAX_BANDS) {
                b = rm_xgrow(b, &cap, n + 1, sizeof *b);
                b[n++] = *c;
            } else {
                (*dropped)++;
            }
        }
        int d = phase_depth(&rl->phases[w->phase]);
        *c = (struct band){a, e, w->phase, d < MAX_LANE_ROWS ? d : MAX_LANE_ROWS - 1, 1};
    }
    for (size_t i = 0; i < rl->nphases; i++)
        if (cur[i].n) {
            if (n < MAX_BANDS) {
                b = rm_xgrow(b, &cap, n + 1, sizeof *b);
                b[n++] = cur[i];
            } else {
                (*dropped)++;
            }
        }
    free(cur);
    if (n) qsort(b, n, sizeof *b, cmp_band);
    *out = b;
    return n;
}

static void band_title(struct report *r, const struct band *b)
{
    FILE *o = r->out;
    fprintf(o, "<title>");
    esc(o, r->rl.phases[b->phase].path);
    fprintf(o, " %.3f s", (double)(b->b - b->a) / 1e9);
    if (b->n > 1) fprintf(o, " (%llu runs)", (unsigned long long)b->n);
    fprintf(o, "</title>");
}

/* Shared definitions: phase bands, degraded spans per collector, markers. */
void rm_report_write_defs(struct report *r, const struct band *bands, size_t nb)
{
    FILE *o = r->out;
    fprintf(o, "<svg class=\"defs\" width=\"0\" height=\"0\" aria-hidden=\"true\"><defs>"
               "<pattern id=\"hatch\" width=\"6\" height=\"6\" patternUnits=\"userSpaceOnUse\" "
               "patternTransform=\"rotate(45)\"><rect width=\"6\" height=\"6\" "
               "fill=\"#fff3f3\"/><line x1=\"0\" y1=\"0\" x2=\"0\" y2=\"6\" stroke=\"#e3a0a0\" "
               "stroke-width=\"3\"/></pattern>");
    /* The top-level bands behind the charts (the lane shows the nested ones), each in its lane
     * rect's colour and faint enough for the lines over it. Where one overlaps an earlier
     * one it covers it (a white rect under it) rather than mixing into a colour of neither. */
    fprintf(o, "<g id=\"phb\">");
    int64_t drawn_to = INT64_MIN;
    for (size_t i = 0; i < nb && bands[i].row == 0; i++) {
        double x0 = xpos(r, bands[i].a), x1 = xpos(r, bands[i].b);
        double w = x1 - x0 < 0.5 ? 0.5 : x1 - x0;
        const char *path = r->rl.phases[bands[i].phase].path;
        char col[RM_PHASE_COLOR_SZ];
        if (bands[i].a < drawn_to)
            fprintf(o,
                    "<rect class=\"under\" x=\"%.1f\" y=\"%.0f\" width=\"%.1f\" "
                    "height=\"%.0f\" fill=\"#fff\"/>",
                    x0, PT, w, PH);
        if (bands[i].b > drawn_to) drawn_to = bands[i].b;
        fprintf(o, "<rect data-path=\"");
        esc(o, path);
        fprintf(o,
                "\" x=\"%.1f\" y=\"%.0f\" width=\"%.1f\" height=\"%.0f\" fill=\"%s\" "
                "fill-opacity=\"0.16\"/>",
                x0, PT, w, PH, rm_report_phase_color(path, col));
    }
    fprintf(o, "</g>");
    /* One hatch layer per chart group ("deg-" and the group: the id the charts use), in the
     * order the stream table first names the group: the GPU charts show the spans of both
     * nvidia-smi streams. */
    for (int g = 0; g < RM_STREAM_COUNT; g++) {
        const char *group = rm_stream_defs[g].chart;
        bool first = group != NULL;
        for (int k = 0; first && k < g; k++)
            first = !rm_stream_defs[k].chart || strcmp(rm_stream_defs[k].chart, group);
        if (!first) continue;
        fprintf(o, "<g id=\"deg-%s\">", group);
        for (size_t i = 0; i < r->nspans; i++) {
            const struct span *s = &r->spans[i];
            int k = rm_stream_by_name(s->collector);
            if (k < 0 || !rm_stream_defs[k].chart || strcmp(rm_stream_defs[k].chart, group))
                continue;
            double x0 = xpos(r, s->a), x1 = xpos(r, s->b == RM_NO_TIME ? r->t1 : s->b);
            fprintf(o,
                    "<rect class=\"degraded\" x=\"%.1f\" y=\"%.0f\" width=\"%.1f\" "
                    "height=\"%.0f\" fill=\"url(#hatch)\" fill-opacity=\"0.8\"><title>",
                    x0, PT, x1 - x0 < 1 ? 1 : x1 - x0, PH);
            esc(o, s->collector);
            fprintf(o, " collector degraded: ");
            esc(o, s->reason);
            fprintf(o, "</title></rect>");
        }
        fprintf(o, "</g>");
    }
    /* The session end, on every chart; alert markers are drawn on the VRAM chart only. */
    fprintf(o, "<g id=\"marks\">");
    if (r->session_end_ns != RM_NO_TIME) {
        double x = xpos(r, r->session_end_ns);
        fprintf(o,
                "<g class=\"end\"><line vector-effect=\"non-scaling-stroke\" x1=\"%.1f\" "
                "y1=\"%.0f\" x2=\"%.1f\" y2=\"%.0f\"/>"
                "<title>session end</title></g>",
                x, PT, x, PT + PH);
    }
    fprintf(o, "</g></defs></svg>\n");
}

void rm_report_write_lane(struct report *r, const struct band *bands, size_t nb, size_t dropped)
{
    FILE *o = r->out;
    /* Rows: one group per depth, and within a depth as many rows as overlapping windows
     * need (bands are sorted by depth, then start), MAX_LANES in all. */
    int *lane = rm_xcalloc(nb, sizeof *lane);
    int64_t end[MAX_LANES];
    int rows = 0, base = 0, depth = -1;
    for (size_t i = 0; i < nb; i++) {
        if (bands[i].row != depth) {
            base = rows, depth = bands[i].row;
        }
        int k = base;
        while (k < rows && end[k] > bands[i].a)
            k++;
        if (k == rows) {
            if (rows < MAX_LANES)
                end[rows++] = INT64_MIN;
            else
                k = rows - 1;
        }
        if (bands[i].b > end[k]) end[k] = bands[i].b;
        lane[i] = k;
    }
    if (!rows) {
        free(lane);
        return;
    }
    double rh = 20, h = rows * rh;
    fprintf(o,
            "<section class=\"panel\"><h3>Phases</h3><svg class=\"lane\" viewBox=\"0 0 %.0f "
            "%.0f\" data-vh=\"%.0f\" data-t0=\"%lld\" data-t1=\"%lld\">",
            VW, h + PT + 20, h + PT + 20, (long long)(r->t0 / 1000000),
            (long long)(r->t1 / 1000000));
    time_axis(r, PT, h);
    for (size_t i = 0; i < nb; i++) {
        const struct band *b = &bands[i];
        const char *path = r->rl.phases[b->phase].path;
        /* Nested phases show their own name; a top-level one its whole path (a name may
         * hold a '/' where it is not part of a path). */
        const char *name = r->rl.phases[b->phase].depth > 0 ? strrchr(path, '/') : NULL;
        name = name ? name + 1 : path;
        double x0 = xpos(r, b->a), x1 = xpos(r, b->b), w = x1 - x0 < 1 ? 1 : x1 - x0;
        double y = PT + lane[i] * rh;
        char col[RM_PHASE_COLOR_SZ];
        fprintf(o, "<g class=\"phase\" data-depth=\"%d\" data-path=\"", b->row);
        esc(o, path);
        fprintf(o,
                "\"><rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.0f\" rx=\"2\" "
                "fill=\"%s\"/>",
                x0, y + 1, w, rh - 2, rm_report_phase_color(path, col));
        /* The name, cut to what fits the band at 7 units a character (the script cuts it
         * again to the width it is drawn at, from data-name); two characters at least. */
        size_t nl = 0, fit = w > 8 ? (size_t)((w - 8) / 7.0) : 0, cut = 0;
        for (const char *q = name; *q; q++)
            if ((((unsigned char)*q) & 0xc0) != 0x80 && nl++ == (fit ? fit - 1 : 0))
                cut = (size_t)(q - name);
        if (nl <= fit || fit >= 3) {
            fprintf(o, "<text x=\"%.1f\" y=\"%.1f\" data-name=\"", x0 + 4, y + 14);
            esc(o, name);
            fputs("\">", o);
            if (nl <= fit) {
                esc(o, name);
            } else {
                rm_html_escape(o, name, cut);
                fputs("&#8230;", o);
            }
            fprintf(o, "</text>");
        }
        band_title(r, b);
        fprintf(o, "</g>");
    }
    fprintf(o, "</svg>");
    free(lane);
    if (dropped) fprintf(o, "<p class=\"note\">%zu more phase windows not drawn.</p>", dropped);
    fprintf(o, "</section>\n");
}

/* ---- charts --------------------------------------------------------------------------- */

/* The dash pattern of a dashed series, on the chart and in its legend swatch alike. */
#define LINE_DASH "5 3"

struct line_spec {
    struct rm_series *s;
    char key[96];
    char label[200];
    const char *color;
    bool dashed;
};

/* A horizontal reference line (a GPU's VRAM total, a threshold, a power limit), in the
 * chart's unit. */
struct ref_line {
    double v;
    char key[96];
    char label[200];
    const char *color, *cls;
};

#define MAX_REFS (3 * MAX_GPUS)

struct chart {
    const char *id, *title, *unit, *deg;
    double scale; /* values are divided by it */
    double ymax;  /* 0: from the data */
    struct line_spec *lines;
    size_t n, cap;
    struct ref_line refs[MAX_REFS];
    size_t nrefs;
    bool alerts;   /* the VRAM alert markers, labelled with their GPU */
    bool throttle; /* the throttle reasons' spans and legend */
    bool clip;     /* a short spike may go off the scale (clipped_top) */
};

static void chart_ref(struct chart *c, double v, const char *key, const char *label,
                      const char *color, const char *cls)
{
    if (c->nrefs == MAX_REFS || !(v > 0) || !isfinite(v)) return;
    struct ref_line *f = &c->refs[c->nrefs++];
    f->v = v;
    snprintf(f->key, sizeof f->key, "%s", key);
    snprintf(f->label, sizeof f->label, "%s", label);
    f->color = color;
    f->cls = cls;
}

/* Alert markers, one per pixel column, level and GPU, each labelled with its GPU. */
static void write_alerts(struct report *r)
{
    FILE *o = r->out;
    fprintf(o, "<g class=\"alerts\">");
    long lastx[2] = {-1, -1};
    const char *lastg[2] = {"", ""};
    for (size_t i = 0; i < r->nalerts; i++) {
        const struct alert *a = &r->alerts[i];
        double x = xpos(r, a->t);
        if (lround(x) == lastx[a->critical] && !strcmp(lastg[a->critical], a->gpu)) continue;
        lastx[a->critical] = lround(x);
        lastg[a->critical] = a->gpu;
        fprintf(o, "<g class=\"alert %s\" data-gpu=\"", a->critical ? "critical" : "warning");
        esc(o, a->gpu);
        fprintf(o,
                "\"><line x1=\"%.1f\" y1=\"%.0f\" x2=\"%.1f\" y2=\"%.0f\"/>"
                "<path d=\"M%.1f %.0fl-4 -7h8z\"/><text x=\"%.1f\" y=\"%.0f\">GPU ",
                x, PT, x, PT + PH, x, PT + 7, x + 5, PT + 18);
        esc(o, a->gpu);
        fprintf(o, "</text><title>");
        esc(o, a->text);
        fprintf(o, "</title></g>");
    }
    fprintf(o, "</g>");
}

static void chart_add(struct chart *c, struct rm_series *s, const char *key, const char *label,
                      const char *color, bool dashed)
{
    if (!s->n) return;
    c->lines = rm_xgrow(c->lines, &c->cap, c->n + 1, sizeof *c->lines);
    struct line_spec *l = &c->lines[c->n++];
    l->s = s;
    snprintf(l->key, sizeof l->key, "%s", key);
    snprintf(l->label, sizeof l->label, "%s", label);
    l->color = color;
    l->dashed = dashed;
}

/* Whether a degraded span of the collector overlaps the time between two points: the line
 * must not be drawn across an outage, even where the samples on both sides are close enough
 * not to count as a gap (a point inside a span ends its polyline). */
static bool outage_between(const struct report *r, const char *collector, int64_t a, int64_t b)
{
    for (size_t i = 0; collector && i < r->nspans; i++) {
        const struct span *s = &r->spans[i];
        int64_t e = s->b == RM_NO_TIME ? r->t1 : s->b;
        if (s->a < b && e > a && !strcmp(s->collector, collector)) return true;
    }
    return false;
}

static void write_line(struct report *r, const struct chart *c, const struct line_spec *l,
                       double y1, size_t *npoly)
{
    FILE *o = r->out;
    struct rm_ds_point *p;
    size_t n = rm_series_points(l->s, &p);
    double *xs = rm_xcalloc(n, sizeof *xs), *ys = rm_xcalloc(n, sizeof *ys);
    /* The collector whose spans break the line: the chart's hatch group "deg-<name>". */
    const char *col = c->deg && !strncmp(c->deg, "deg-", 4) ? c->deg + 4 : NULL;
    for (size_t k = 1; k < n; k++)
        if (!p[k].brk && outage_between(r, col, p[k - 1].t, p[k].t)) p[k].brk = true;
    size_t i = 0;
    while (i < n) {
        size_t j = i + 1;
        while (j < n && !p[j].brk)
            j++;
        /* Pixel coordinates, without repeats, and a flat run kept as its two ends. */
        size_t m = 0;
        for (size_t k = i; k < j; k++) {
            double x = round(xpos(r, p[k].t) * 10) / 10;
            double y = PT + PH - (p[k].v / c->scale / y1) * PH;
            y = round((y < PT ? PT : y > PT + PH ? PT + PH : y) * 10) / 10;
            if (m && xs[m - 1] == x && ys[m - 1] == y) continue;
            if (m >= 2 && ys[m - 1] == y && ys[m - 2] == y) m--;
            xs[m] = x, ys[m] = y, m++;
        }
        fprintf(o, "<polyline data-series=\"");
        esc(o, l->key);
        fprintf(o, "\" data-label=\"");
        esc(o, l->label);
        fprintf(o, "\" stroke=\"%s\"%s points=\"", l->color,
                l->dashed ? " stroke-dasharray=\"" LINE_DASH "\"" : "");
        if (m == 1) /* a lone sample between gaps: a short dash */
            fprintf(o, "%.1f,%.1f %.1f,%.1f", xs[0] - 0.8, ys[0], xs[0] + 0.8, ys[0]);
        for (size_t k = 0; m > 1 && k < m; k++)
            fprintf(o, k ? " %.1f,%.1f" : "%.1f,%.1f", xs[k], ys[k]);
        fprintf(o, "\"/>");
        (*npoly)++;
        i = j;
    }
    free(xs);
    free(ys);
    free(p);
}

/* By reason bit (report_throttle.c): the hard limits red, the soft ones warm, idle a muted
 * blue (not a grey, which text edges would match in the tests' screenshots). */
static const char *const thr_colors[RM_THR_REASONS] = {"#8da0cb", "#8c564b", "#ff7f0e",
                                                       "#d62728", "#17becf", "#e377c2",
                                                       "#b00000", "#9467bd", "#bcbd22"};

/* Which reasons were active on some GPU (bits), and how many GPU-reason rows that makes. */
static unsigned thr_seen(const struct report *r, int *rows)
{
    unsigned seen = 0;
    *rows = 0;
    for (size_t i = 0; i < r->ngpus; i++)
        for (int k = 0; k < RM_THR_REASONS; k++)
            if (r->gpus[i].thr[k].n) {
                seen |= 1u << k;
                (*rows)++;
            }
    return seen;
}

/* Throttle reasons: one thin row per GPU and active reason along the bottom of the plot,
 * a span where the reason was active, titled with its GPU, reason and seconds. */
static void write_throttle(struct report *r)
{
    FILE *o = r->out;
    int rows;
    if (!thr_seen(r, &rows)) return;
    double h = rows * 5.0 > 30 ? 30.0 / rows : 5.0;
    int row = 0;
    fprintf(o, "<g class=\"throttle\">");
    for (size_t i = 0; i < r->ngpus; i++)
        for (int k = 0; k < RM_THR_REASONS; k++) {
            const struct thr_track *tr = &r->gpus[i].thr[k];
            if (!tr->n) continue;
            double y = PT + PH - (rows - row++) * h;
            for (size_t j = 0; j < tr->n; j++) {
                double x0 = xpos(r, tr->s[j].a), x1 = xpos(r, tr->s[j].b);
                fprintf(o, "<rect class=\"thr\" data-reason=\"%s\" data-gpu=\"",
                        rm_report_thr_name(k));
                esc(o, r->gpus[i].key);
                fprintf(o,
                        "\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
                        "fill=\"%s\"><title>GPU ",
                        x0, y, x1 - x0 < 1.5 ? 1.5 : x1 - x0, h * 0.8, thr_colors[k]);
                esc(o, r->gpus[i].key);
                const struct thr_span *sp = &tr->s[j];
                fprintf(o, " clocks held back: %s, %.1f s", rm_report_thr_name(k),
                        (double)sp->active_ns / 1e9);
                if (sp->runs > 1)
                    fprintf(o, " in %llu runs over %.1f s", (unsigned long long)sp->runs,
                            (double)(sp->b - sp->a) / 1e9);
                fprintf(o, "</title></rect>");
            }
        }
    fprintf(o, "</g>");
}

/* The reasons drawn, or a line saying none was active when the columns were recorded. */
static void write_throttle_legend(struct report *r)
{
    FILE *o = r->out;
    int rows;
    unsigned seen = thr_seen(r, &rows);
    if (!r->thr_recorded) return;
    if (!seen) fprintf(o, "<span class=\"thr none\">throttle reasons recorded: none active</span>");
    for (int k = 0; k < RM_THR_REASONS; k++)
        if (seen >> k & 1)
            fprintf(o,
                    "<span class=\"thr\" data-reason=\"%s\"><i style=\"background:%s\"></i>"
                    "throttle: %s</span>",
                    rm_report_thr_name(k), thr_colors[k], rm_report_thr_name(k));
}

static void fmt_tick(char *buf, size_t cap, double v)
{
    if (v == floor(v) && fabs(v) < 1e9)
        snprintf(buf, cap, "%.0f", v);
    else
        snprintf(buf, cap, "%.3g", v);
}

static int cmp_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return a < b ? -1 : a > b;
}

/* A top that keeps the usual level readable when a short spike (a kernel writeback burst of
 * 375 MB/s beside a workload's 23 MB/s) would squash it: 1.5 x the larger of the dashed lines'
 * peak (the command's own) and the 90th percentile of every point, rounded up, when the
 * highest point is over twice that; else 0 (the usual top). *peak: the highest point. */
static double clipped_top(const struct chart *c, double *peak)
{
    size_t total = 0, k = 0;
    double own = 0;
    *peak = 0;
    for (size_t i = 0; i < c->n; i++)
        total += c->lines[i].s->nb * 2;
    double *all = rm_xcalloc(total ? total : 1, sizeof *all);
    for (size_t i = 0; i < c->n; i++) {
        struct rm_ds_point *p;
        size_t n = rm_series_points(c->lines[i].s, &p);
        for (size_t j = 0; j < n && k < total; j++) {
            double v = p[j].v / c->scale;
            if (!isfinite(v)) continue;
            all[k++] = v;
            if (v > *peak) *peak = v;
            if (c->lines[i].dashed && v > own) own = v;
        }
        free(p);
    }
    qsort(all, k, sizeof *all, cmp_double);
    double usual = k ? all[(size_t)(0.9 * (double)(k - 1))] : 0;
    free(all);
    double top = nice_ceil(1.5 * fmax(own, usual));
    return usual > 0 || own > 0 ? (*peak > 2 * top ? top : 0) : 0;
}

static size_t write_chart(struct report *r, struct chart *c)
{
    FILE *o = r->out;
    if (!c->n) {
        c->nrefs = 0;
        return 0;
    }
    double ymax = c->ymax;
    if (ymax <= 0) {
        double m = 0;
        for (size_t i = 0; i < c->n; i++)
            if (c->lines[i].s->vmax / c->scale > m) m = c->lines[i].s->vmax / c->scale;
        for (size_t i = 0; i < c->nrefs; i++)
            if (c->refs[i].v > m) m = c->refs[i].v;
        ymax = nice_ceil(m * 1.02);
    }
    double peak = 0, clip = c->clip ? clipped_top(c, &peak) : 0;
    if (clip > 0) {
        /* Points above it are drawn at the top; a line there names the peak. */
        char lab[96];
        ymax = clip;
        snprintf(lab, sizeof lab, "off the scale above: peak %.3g %s", peak, c->unit);
        chart_ref(c, ymax, "clip", lab, "#888", "clip");
    }
    fprintf(o, "<section class=\"panel\" id=\"%s\"><h3>%s <span class=\"unit\">(%s)</span></h3>",
            c->id, c->title, c->unit);
    fprintf(o,
            "<svg class=\"chart\" viewBox=\"0 0 %.0f %.0f\" data-vh=\"%.0f\" data-y1=\"%g\" "
            "data-unit=\"%s\"%s "
            "data-t0=\"%lld\" data-t1=\"%lld\" data-l=\"%.0f\" data-pw=\"%.0f\" data-pt=\"%.0f\" "
            "data-ph=\"%.0f\">",
            VW, VH, VH, ymax, c->unit, clip > 0 ? " data-clipped=\"1\"" : "",
            (long long)(r->t0 / 1000000), (long long)(r->t1 / 1000000), PL, PW, PT, PH);
    /* class z: drawn in plot units, stretched by the script when a time range is zoomed. */
    fprintf(o, "<use class=\"z\" href=\"#phb\"/>");
    if (c->deg) fprintf(o, "<use class=\"z\" href=\"#%s\"/>", c->deg);
    time_axis(r, PT, PH);
    fprintf(o, "<g class=\"axis\">");
    for (int k = 0; k <= 4; k++) {
        double v = ymax * k / 4, y = PT + PH - PH * k / 4;
        char lab[32];
        fmt_tick(lab, sizeof lab, v);
        fprintf(o,
                "<line x1=\"%.0f\" y1=\"%.1f\" x2=\"%.0f\" y2=\"%.1f\"/><text x=\"%.0f\" "
                "y=\"%.1f\" text-anchor=\"end\">%s</text>",
                PL, y, PL + PW, y, PL - 6, y + 4, lab);
    }
    fprintf(o, "</g><g class=\"series\">");
    size_t npoly = 0;
    for (size_t i = 0; i < c->n; i++)
        write_line(r, c, &c->lines[i], ymax, &npoly);
    fprintf(o, "</g>");
    for (size_t i = 0; i < c->nrefs; i++) {
        const struct ref_line *f = &c->refs[i];
        double y = f->v >= ymax ? PT : PT + PH - f->v / ymax * PH;
        fprintf(o, "<g class=\"ref %s\" data-ref=\"", f->cls);
        esc(o, f->key);
        fprintf(o,
                "\" data-value=\"%g\"><line x1=\"%.0f\" y1=\"%.1f\" x2=\"%.0f\" y2=\"%.1f\" "
                "stroke=\"%s\"/><text x=\"%.0f\" y=\"%.1f\" text-anchor=\"end\">",
                f->v, PL, y, PL + PW, y, f->color, PL + PW - 4, y + (y < PT + 14 ? 12 : -3));
        esc(o, f->label);
        fprintf(o, "</text></g>");
    }
    c->nrefs = 0;
    if (c->alerts) write_alerts(r);
    if (c->throttle) write_throttle(r);
    fprintf(
        o,
        "<use class=\"z\" href=\"#marks\"/><line class=\"cursor\" x1=\"0\" x2=\"0\" y1=\"%.0f\" "
        "y2=\"%.0f\"/></svg><div class=\"legend\">",
        PT, PT + PH);
    /* Each swatch is a short piece of its line: the same stroke and dash pattern. */
    for (size_t i = 0; i < c->n; i++) {
        fprintf(o,
                "<span><svg class=\"sw\" width=\"20\" height=\"8\" aria-hidden=\"true\"><line "
                "x1=\"0\" y1=\"4\" x2=\"20\" y2=\"4\" stroke=\"%s\"%s/></svg>",
                c->lines[i].color, c->lines[i].dashed ? " stroke-dasharray=\"" LINE_DASH "\"" : "");
        esc(o, c->lines[i].label);
        fprintf(o, "</span>");
    }
    if (c->throttle) write_throttle_legend(r);
    fprintf(o, "</div></section>\n");
    free(c->lines);
    c->lines = NULL;
    c->n = c->cap = 0;
    return npoly;
}

static int cmp_gpu(const void *x, const void *y)
{
    const struct gpu_track *a = x, *b = y;
    return a->index < b->index ? -1 : a->index > b->index;
}

/* "GPU memory by process": per GPU of apps.csv, the workload's VRAM (solid) and the other
 * processes' (dashed), in the colour of that GPU's other lines. */
static void write_apps_chart(struct report *r)
{
    if (!r->napps) return;
    struct chart c = {.id = "c-apps",
                      .title = "GPU memory by process (solid: workload, dashed: other processes)",
                      .unit = "GiB",
                      .deg = "deg-apps",
                      .scale = 1024};
    for (int g = 0; g < RM_APPS_MAX_GPUS; g++) {
        struct apps_track *t = &r->apps[g];
        if (!t->seen) continue;
        size_t colour = (size_t)g;
        for (size_t i = 0; i < r->ngpus; i++)
            if (r->gpus[i].index == g) colour = i;
        char key[96], label[220];
        snprintf(key, sizeof key, "gpu%d.workload_vram", g);
        snprintf(label, sizeof label, "GPU %d workload", g);
        chart_add(&c, &t->w, key, label, palette[colour % NPAL], false);
        snprintf(key, sizeof key, "gpu%d.other_vram", g);
        snprintf(label, sizeof label, "GPU %d other processes", g);
        chart_add(&c, &t->o, key, label, palette[colour % NPAL], true);
    }
    write_chart(r, &c);
}

/* Under the GPU charts, with io.csv: disk and network MB/s (the command's tree dashed), and
 * the pressure stalls. */
static void write_io_charts(struct report *r)
{
    if (!r->io_init) return;
    struct chart c = {.id = "c-io",
                      .title = "Disk and network (summed over disks, interfaces; dashed: the "
                               "command's process tree)",
                      .unit = "MB/s",
                      .deg = "deg-io",
                      .scale = 1,
                      .clip = true};
    chart_add(&c, &r->io[IS_DISK_READ], "io.disk_read", "disk read", palette[0], false);
    chart_add(&c, &r->io[IS_DISK_WRITE], "io.disk_write", "disk write", palette[1], false);
    chart_add(&c, &r->io[IS_NET_RX], "io.net_rx", "network rx", palette[2], false);
    chart_add(&c, &r->io[IS_NET_TX], "io.net_tx", "network tx", palette[3], false);
    chart_add(&c, &r->io[IS_TREE_READ], "io.tree_read", "command read", palette[0], true);
    chart_add(&c, &r->io[IS_TREE_WRITE], "io.tree_write", "command write", palette[1], true);
    write_chart(r, &c);
    c = (struct chart){.id = "c-psi",
                       .title = "Pressure stalls: share of time some task waited (/proc/pressure)",
                       .unit = "%",
                       .deg = "deg-io",
                       .scale = 1,
                       .ymax = 100};
    chart_add(&c, &r->io[IS_PSI_CPU], "psi.cpu", "cpu", palette[4], false);
    chart_add(&c, &r->io[IS_PSI_IO], "psi.io", "io", palette[5], false);
    chart_add(&c, &r->io[IS_PSI_MEM], "psi.memory", "memory", palette[6], false);
    write_chart(r, &c);
}

void rm_report_write_charts(struct report *r)
{
    qsort(r->gpus, r->ngpus, sizeof *r->gpus, cmp_gpu);
    struct chart c = {0};
    static const struct {
        const char *id, *title, *unit;
        double scale, ymax;
        int m, total;
    } g[] = {
        {"c-util", "GPU utilization", "%", 1, 100, GS_UTIL, -1},
        {"c-vram", "GPU memory used (lines: total, warning and critical thresholds)", "GiB", 1024,
         0, GS_VRAM, GS_VRAM_TOTAL},
        {"c-power", "GPU power", "W", 1, 0, GS_POWER, -1},
        {"c-temp", "GPU temperature", "&#176;C", 1, 0, GS_TEMP, -1},
        {"c-clock", "GPU SM clock", "MHz", 1, 0, GS_SMCLK, -1},
    };
    static const char *const mkey[GS_COUNT] = {"util",  "vram", "vram_total",
                                               "power", "temp", "smclk"};
    for (size_t k = 0; k < sizeof g / sizeof g[0]; k++) {
        c = (struct chart){.id = g[k].id,
                           .title = g[k].title,
                           .unit = g[k].unit,
                           .deg = "deg-gpu",
                           .scale = g[k].scale,
                           .ymax = g[k].ymax};
        for (size_t i = 0; i < r->ngpus; i++) {
            struct gpu_track *t = &r->gpus[i];
            char key[96], label[220];
            snprintf(key, sizeof key, "gpu%s.%s", t->key, mkey[g[k].m]);
            snprintf(label, sizeof label, "GPU %s%s%s", t->key, t->name[0] ? " " : "", t->name);
            chart_add(&c, &t->s[g[k].m], key, label, palette[i % NPAL], false);
            const struct rm_series *tot = g[k].total >= 0 ? &t->s[g[k].total] : NULL;
            if (tot && tot->n && tot->vmin == tot->vmax) {
                /* A fixed total: a reference line with its value, and the thresholds. */
                double v = tot->vmax / g[k].scale;
                snprintf(key, sizeof key, "gpu%s.vram_total", t->key);
                snprintf(label, sizeof label, "GPU %s total %.2f GiB", t->key, v);
                chart_ref(&c, v, key, label, palette[i % NPAL], "total");
                bool seen = false; /* the thresholds of a total drawn already */
                for (size_t j = 0; j < i; j++)
                    seen |= r->gpus[j].s[GS_VRAM_TOTAL].n &&
                            r->gpus[j].s[GS_VRAM_TOTAL].vmax == tot->vmax;
                for (int lv = 0; lv < 2 && !seen; lv++) {
                    double pct = lv ? r->crit_pct : r->warn_pct;
                    if (!(pct > 0)) continue;
                    snprintf(key, sizeof key, "gpu%s.vram_%s", t->key, lv ? "critical" : "warning");
                    snprintf(label, sizeof label, "%s %g %% of GPU %s: %.2f GiB",
                             lv ? "critical" : "warning", pct, t->key, v * pct / 100);
                    chart_ref(&c, v * pct / 100, key, label, lv ? "#d02020" : "#f0a020",
                              lv ? "critical" : "warning");
                }
            } else if (tot) {
                snprintf(key, sizeof key, "gpu%s.%s", t->key, mkey[g[k].total]);
                snprintf(label, sizeof label, "GPU %s total", t->key);
                chart_add(&c, &t->s[g[k].total], key, label, palette[i % NPAL], true);
            }
            if (g[k].m == GS_POWER && t->power_limit > 0 && t->s[GS_POWER].n) {
                snprintf(key, sizeof key, "gpu%s.power_limit", t->key);
                snprintf(label, sizeof label, "GPU %s limit %g W", t->key, t->power_limit);
                chart_ref(&c, t->power_limit, key, label, palette[i % NPAL], "limit");
            }
        }
        c.alerts = g[k].m == GS_VRAM;
        c.throttle = g[k].m == GS_SMCLK;
        if (c.throttle && r->thr_recorded)
            c.title = "GPU SM clock (bottom rows: clock throttle reasons, one per GPU and reason)";
        write_chart(r, &c);
        if (g[k].m == GS_VRAM) write_apps_chart(r);
    }
    write_io_charts(r);
    c = (struct chart){.id = "c-cpu",
                       .title = "Host CPU busy and iowait",
                       .unit = "%",
                       .deg = "deg-cpu",
                       .scale = 1,
                       .ymax = 100};
    chart_add(&c, &r->host[HS_BUSY], "cpu.busy", "busy (100 - idle)", palette[0], false);
    chart_add(&c, &r->host[HS_IOWAIT], "cpu.iowait", "iowait", palette[4], false);
    write_chart(r, &c);
    c = (struct chart){.id = "c-mem",
                       .title = "Host memory used (dashed: total)",
                       .unit = "GiB",
                       .deg = "deg-cpu",
                       .scale = 1024};
    chart_add(&c, &r->host[HS_MEM_USED], "mem.used", "used", palette[2], false);
    chart_add(&c, &r->host[HS_MEM_TOTAL], "mem.total", "total", palette[2], true);
    write_chart(r, &c);
    c = (struct chart){.id = "c-rss",
                       .title = "Command RSS (process tree)",
                       .unit = "MiB",
                       .deg = "deg-proc",
                       .scale = 1};
    chart_add(&c, &r->host[HS_RSS], "proc.rss", "RSS", palette[3], false);
    write_chart(r, &c);
}
