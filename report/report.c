/* The report of one session folder: stream the collector CSVs into downsampled series, read
 * the run log's phases and events, and write the HTML page (see report.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/alloc.h"
#include "base/rm_time.h"
#include "model/streams.h"
#include "report/report.h"
#include "summary/csvread.h"
#include "summary/gpucsv.h"
#include "summary/hostcsv.h"
#include "summary/runlog_read.h"
#include "summary/sample.h"
#include "summary/segments.h"
#include "summary/summary.h"

#define MAX_GPUS 64
#define MAX_ALERTS 100000
#define MAX_SPANS 10000
#define MAX_BANDS 3000
#define MAX_LANE_ROWS 6
#define MAX_LANES 12

/* Chart geometry (SVG user units; every chart shares the x mapping). */
#define VW 1200.0
#define PL 64.0
#define PW 1120.0
#define PT 8.0
#define PH 150.0
#define VH 178.0

enum { GS_UTIL, GS_VRAM, GS_VRAM_TOTAL, GS_POWER, GS_TEMP, GS_COUNT };
enum { HS_BUSY, HS_IOWAIT, HS_MEM_USED, HS_MEM_TOTAL, HS_RSS, HS_COUNT };

struct gpu_track {
    char key[64];
    long index; /* numeric index when the key is one, for ordering */
    char name[128];
    struct rm_series s[GS_COUNT];
};

struct alert {
    int64_t t;
    bool critical;
    char text[200];
};

struct span {
    int64_t a, b;
    char collector[32];
    char reason[240];
};

struct band {
    int64_t a, b;
    size_t phase;
    int row;
    uint64_t n; /* windows merged into it */
};

struct report {
    const char *dir;
    json_t *session; /* session.json, or NULL */
    const json_t *summary;
    int64_t t0, t1, gap_ns;
    struct gpu_track *gpus;
    size_t ngpus;
    bool gpu_overflow;
    struct rm_series host[HS_COUNT];
    struct rm_gpucsv gcsv;
    struct rm_hostcsv hcsv;
    int host_kind; /* 0 cpu, 1 proc while streaming */
    struct rm_runlog rl;
    struct alert *alerts;
    size_t nalerts, capalerts;
    uint64_t alerts_total;
    struct span *spans;
    size_t nspans, capspans;
    int64_t session_end_ns, session_start_ns;
    char *gpu_fields;
    FILE *out;
};

static void copyn(char *dst, size_t cap, const char *s, size_t len)
{
    if (len >= cap) len = cap - 1;
    memcpy(dst, s, len);
    dst[len] = '\0';
}

/* ---- collecting ----------------------------------------------------------------------- */

static void widen(struct report *r, int64_t t)
{
    if (t == RM_NO_TIME) return;
    if (r->t0 == RM_NO_TIME || t < r->t0) r->t0 = t;
    if (r->t1 == RM_NO_TIME || t > r->t1) r->t1 = t;
}

/* The time of a line whose first field is a `ts`. */
static bool line_ts(const char *s, size_t len, int64_t *t)
{
    const char *c = memchr(s, ',', len);
    size_t n = c ? (size_t)(c - s) : len;
    if (n && s[0] == '"') s++, n -= n > 1 ? 2 : 1;
    return n >= 10 && rm_parse_ts_checked(s, n, t) == 0;
}

/* The first and last row times of a collector file, from its first and last 64 KiB. */
static void peek_range(struct report *r, const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return;
    static char buf[65536];
    ssize_t n = pread(fd, buf, sizeof buf, 0);
    int64_t t;
    for (ssize_t i = 0; n > 0 && i < n;) {
        char *nl = memchr(buf + i, '\n', (size_t)(n - i));
        if (!nl) break;
        if (line_ts(buf + i, (size_t)(nl - buf - i), &t)) {
            widen(r, t);
            break;
        }
        i = nl - buf + 1;
    }
    struct stat st;
    if (fstat(fd, &st) == 0 && st.st_size > 0) {
        off_t off = st.st_size > (off_t)sizeof buf ? st.st_size - (off_t)sizeof buf : 0;
        n = pread(fd, buf, sizeof buf, off);
        /* Whole lines only: from the end, each line that ends in '\n'. */
        ssize_t end = n;
        while (end > 0 && buf[end - 1] != '\n')
            end--;
        while (end > 0) {
            ssize_t b = end - 1;
            while (b > 0 && buf[b - 1] != '\n')
                b--;
            if ((b > 0 || off == 0) && line_ts(buf + b, (size_t)(end - 1 - b), &t)) {
                widen(r, t);
                break;
            }
            end = b;
        }
    }
    close(fd);
}

static struct gpu_track *gpu_track(struct report *r, const struct rm_gpu_sample *g)
{
    const struct rm_strref *k = g->index.len ? &g->index : g->uuid.len ? &g->uuid : &g->pci;
    char key[64];
    copyn(key, sizeof key, k->len ? k->s : "0", k->len ? k->len : 1);
    for (size_t i = 0; i < r->ngpus; i++)
        if (!strcmp(r->gpus[i].key, key)) return &r->gpus[i];
    if (r->ngpus == MAX_GPUS) {
        r->gpu_overflow = true;
        return NULL;
    }
    struct gpu_track *t = &r->gpus[r->ngpus];
    memset(t, 0, sizeof *t);
    snprintf(t->key, sizeof t->key, "%s", key);
    char *endp;
    t->index = strtol(key, &endp, 10);
    if (*endp || endp == key) t->index = 1000000 + (long)r->ngpus;
    if (g->name.len) copyn(t->name, sizeof t->name, g->name.s, g->name.len);
    for (int m = 0; m < GS_COUNT; m++)
        if (rm_series_init(&t->s[m], r->t0, r->t1, RM_REPORT_BUCKETS, r->gap_ns)) abort();
    r->ngpus++;
    return t;
}

static void gpu_row(void *ctx, const struct rm_csv_row *row)
{
    struct report *r = ctx;
    struct rm_gpu_sample g;
    if (rm_gpucsv_row(&r->gcsv, row, &g) != 1 || g.t_ns == RM_NO_TIME) return;
    struct gpu_track *t = gpu_track(r, &g);
    if (!t) return;
    static const int map[GS_COUNT] = {RM_GM_UTIL, RM_GM_VRAM_USED, RM_GM_VRAM_TOTAL, RM_GM_POWER,
                                      RM_GM_TEMP};
    for (int m = 0; m < GS_COUNT; m++)
        if (g.valid & (1u << map[m])) rm_series_add(&t->s[m], g.t_ns, g.v[map[m]]);
}

static void host_row(void *ctx, const struct rm_csv_row *row)
{
    struct report *r = ctx;
    struct rm_host_sample h;
    if (rm_hostcsv_row(&r->hcsv, row, &h) != 1 || h.t_ns == RM_NO_TIME) return;
#define HAS(m) (h.valid & (1u << (m)))
    if (r->host_kind == 0) {
        if (HAS(RM_HM_IDLE)) rm_series_add(&r->host[HS_BUSY], h.t_ns, 100.0 - h.v[RM_HM_IDLE]);
        if (HAS(RM_HM_IOWAIT)) rm_series_add(&r->host[HS_IOWAIT], h.t_ns, h.v[RM_HM_IOWAIT]);
        if (HAS(RM_HM_MEM_USED)) rm_series_add(&r->host[HS_MEM_USED], h.t_ns, h.v[RM_HM_MEM_USED]);
        if (HAS(RM_HM_MEM_TOTAL))
            rm_series_add(&r->host[HS_MEM_TOTAL], h.t_ns, h.v[RM_HM_MEM_TOTAL]);
    } else if (HAS(RM_HM_PROC_RSS)) {
        rm_series_add(&r->host[HS_RSS], h.t_ns, h.v[RM_HM_PROC_RSS]);
    }
#undef HAS
}

static int stream_family(struct report *r, int stream, char *err, size_t errsz)
{
    char **names;
    size_t n = rm_segment_family(r->dir, stream, &names);
    int rc = 0;
    for (size_t i = 0; i < n && !rc; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", r->dir, names[i]);
        uint64_t longl = 0;
        if (stream == RM_STREAM_GPU) {
            rm_gpucsv_init(&r->gcsv, r->gpu_fields);
            rc = rm_csv_read_file(path, gpu_row, r, NULL, &longl, err, errsz);
        } else {
            rm_hostcsv_init(&r->hcsv);
            r->host_kind = stream == RM_STREAM_PROC;
            rc = rm_csv_read_file(path, host_row, r, NULL, &longl, err, errsz);
        }
    }
    rm_segment_family_free(names, n);
    return rc;
}

static void peek_family(struct report *r, int stream)
{
    char **names;
    size_t n = rm_segment_family(r->dir, stream, &names);
    for (size_t i = 0; i < n; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", r->dir, names[i]);
        peek_range(r, path);
    }
    rm_segment_family_free(names, n);
}

static json_t *data_field(json_t *line, const char *key)
{
    json_t *d = json_object_get(line, "data");
    json_t *v = json_is_object(d) ? json_object_get(d, key) : NULL;
    return v ? v : json_object_get(line, key);
}

static void fmt_json_value(char *buf, size_t cap, json_t *v)
{
    if (json_is_string(v))
        snprintf(buf, cap, "%s", json_string_value(v));
    else if (json_is_integer(v))
        snprintf(buf, cap, "%lld", (long long)json_integer_value(v));
    else if (json_is_real(v))
        snprintf(buf, cap, "%g", json_real_value(v));
    else
        snprintf(buf, cap, "?");
}

static void open_span(struct report *r, const char *col, const char *why, int64_t t)
{
    for (size_t i = r->nspans; i-- > 0;)
        if (!strcmp(r->spans[i].collector, col) && r->spans[i].b == RM_NO_TIME) return;
    if (r->nspans == MAX_SPANS) return;
    r->spans = rm_xgrow(r->spans, &r->capspans, r->nspans + 1, sizeof *r->spans);
    struct span *s = &r->spans[r->nspans++];
    s->a = t;
    s->b = RM_NO_TIME;
    snprintf(s->collector, sizeof s->collector, "%s", col);
    snprintf(s->reason, sizeof s->reason, "%s", why ? why : "");
}

static void on_line(void *ctx, const char *line, size_t len, bool torn)
{
    struct report *r = ctx;
    rm_runlog_line(&r->rl, line, len, torn);
    if (torn || !memmem(line, len, "\"event\"", 7)) return;
    json_t *j = json_loadb(line, len, 0, NULL);
    json_t *type = json_object_get(j, "type"), *ev = json_object_get(j, "event");
    json_t *ts = json_object_get(j, "ts"), *tn = json_object_get(j, "t");
    int64_t t;
    if (!json_is_string(type) || strcmp(json_string_value(type), "event") || !json_is_string(ev))
        goto out;
    if (json_is_string(ts) &&
        rm_parse_ts_checked(json_string_value(ts), json_string_length(ts), &t) == 0) {
    } else if (json_is_number(tn) && json_number_value(tn) > 0 &&
               json_number_value(tn) < RM_MAX_EPOCH_S) {
        t = (int64_t)llround(json_number_value(tn) * 1e9);
    } else {
        goto out;
    }
    const char *e = json_string_value(ev);
    if (!strcmp(e, "warning") || !strcmp(e, "critical")) {
        r->alerts_total++;
        if (r->nalerts == MAX_ALERTS) goto out;
        r->alerts = rm_xgrow(r->alerts, &r->capalerts, r->nalerts + 1, sizeof *r->alerts);
        struct alert *a = &r->alerts[r->nalerts++];
        a->t = t;
        a->critical = e[0] == 'c';
        char g[64] = "?", p[32] = "?", th[32] = "?";
        json_t *v;
        if ((v = data_field(j, "gpu"))) fmt_json_value(g, sizeof g, v);
        if ((v = data_field(j, "pct"))) fmt_json_value(p, sizeof p, v);
        if ((v = data_field(j, "threshold_pct"))) fmt_json_value(th, sizeof th, v);
        snprintf(a->text, sizeof a->text, "%s: GPU %s VRAM %s%% (threshold %s%%)", e, g, p, th);
    } else if (!strcmp(e, "collector_degraded") || !strcmp(e, "collector_unavailable")) {
        json_t *c = data_field(j, "collector"), *why = data_field(j, "reason");
        open_span(r, json_is_string(c) ? json_string_value(c) : "unknown",
                  json_is_string(why) ? json_string_value(why) : e, t);
    } else if (!strcmp(e, "collector_recovered")) {
        json_t *c = data_field(j, "collector");
        const char *col = json_is_string(c) ? json_string_value(c) : "unknown";
        for (size_t i = r->nspans; i-- > 0;)
            if (!strcmp(r->spans[i].collector, col) && r->spans[i].b == RM_NO_TIME) {
                r->spans[i].b = t;
                break;
            }
    } else if (!strcmp(e, "session_end")) {
        r->session_end_ns = t;
    } else if (!strcmp(e, "session_start")) {
        if (r->session_start_ns == RM_NO_TIME) r->session_start_ns = t;
    }
out:
    json_decref(j);
}

static int64_t session_time(const json_t *ses, const char *key)
{
    json_t *v = json_object_get(ses, key);
    int64_t t;
    if (json_is_string(v) &&
        rm_parse_ts_checked(json_string_value(v), json_string_length(v), &t) == 0)
        return t;
    return RM_NO_TIME;
}

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

static void esc(FILE *o, const char *s)
{
    rm_html_escape_str(o, s);
}

static const char *const palette[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e",
                                      "#17becf", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22"};
#define NPAL (sizeof palette / sizeof palette[0])

static unsigned hue_of(const char *s)
{
    uint32_t h = 2166136261u;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 16777619u;
    return h % 360;
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
    fprintf(o, "<g class=\"axis\">");
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
static size_t make_bands(struct report *r, struct band **out, size_t *dropped)
{
    struct rm_runlog *rl = &r->rl;
    double px = (double)(r->t1 - r->t0) / PW;
    struct band *cur = calloc(rl->nphases ? rl->nphases : 1, sizeof *cur);
    struct band *b = NULL;
    size_t n = 0, cap = 0;
    *dropped = 0;
    if (!cur) abort();
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
static void write_defs(struct report *r, const struct band *bands, size_t nb)
{
    FILE *o = r->out;
    fprintf(o, "<svg class=\"defs\" width=\"0\" height=\"0\" aria-hidden=\"true\"><defs>"
               "<pattern id=\"hatch\" width=\"6\" height=\"6\" patternUnits=\"userSpaceOnUse\" "
               "patternTransform=\"rotate(45)\"><rect width=\"6\" height=\"6\" "
               "fill=\"#fff3f3\"/><line x1=\"0\" y1=\"0\" x2=\"0\" y2=\"6\" stroke=\"#e3a0a0\" "
               "stroke-width=\"3\"/></pattern>");
    fprintf(o, "<g id=\"phb\">");
    for (size_t i = 0; i < nb; i++) {
        double x0 = xpos(r, bands[i].a), x1 = xpos(r, bands[i].b);
        fprintf(o,
                "<rect x=\"%.1f\" y=\"%.0f\" width=\"%.1f\" height=\"%.0f\" "
                "fill=\"hsl(%u,65%%,55%%)\" fill-opacity=\"%.2f\"/>",
                x0, PT, x1 - x0 < 0.5 ? 0.5 : x1 - x0, PH,
                hue_of(r->rl.phases[bands[i].phase].path), bands[i].row ? 0.07 : 0.10);
    }
    fprintf(o, "</g>");
    static const char *const groups[][3] = {
        {"gpu", "dmon", "deg-gpu"}, {"cpu", "cpu", "deg-cpu"}, {"proc", "proc", "deg-proc"}};
    for (size_t g = 0; g < 3; g++) {
        fprintf(o, "<g id=\"%s\">", groups[g][2]);
        for (size_t i = 0; i < r->nspans; i++) {
            const struct span *s = &r->spans[i];
            if (strcmp(s->collector, groups[g][0]) && strcmp(s->collector, groups[g][1])) continue;
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
    /* Alerts: one marker per pixel column and level. */
    fprintf(o, "<g id=\"marks\">");
    long lastx[2] = {-1, -1};
    for (size_t i = 0; i < r->nalerts; i++) {
        const struct alert *a = &r->alerts[i];
        double x = xpos(r, a->t);
        if (lround(x) == lastx[a->critical]) continue;
        lastx[a->critical] = lround(x);
        fprintf(o,
                "<g class=\"alert %s\"><line x1=\"%.1f\" y1=\"%.0f\" x2=\"%.1f\" y2=\"%.0f\"/>"
                "<path d=\"M%.1f %.0fl-4 -7h8z\"/><title>",
                a->critical ? "critical" : "warning", x, PT, x, PT + PH, x, PT + 7);
        esc(o, a->text);
        fprintf(o, "</title></g>");
    }
    if (r->session_end_ns != RM_NO_TIME) {
        double x = xpos(r, r->session_end_ns);
        fprintf(o,
                "<g class=\"end\"><line x1=\"%.1f\" y1=\"%.0f\" x2=\"%.1f\" y2=\"%.0f\"/>"
                "<title>session end</title></g>",
                x, PT, x, PT + PH);
    }
    fprintf(o, "</g></defs></svg>\n");
}

static void write_lane(struct report *r, const struct band *bands, size_t nb, size_t dropped)
{
    FILE *o = r->out;
    /* Rows: one group per depth, and within a depth as many rows as overlapping windows
     * need (bands are sorted by depth, then start), MAX_LANES in all. */
    int *lane = malloc((nb ? nb : 1) * sizeof *lane);
    int64_t end[MAX_LANES];
    int rows = 0, base = 0, depth = -1;
    if (!lane) abort();
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
            "%.0f\" data-t0=\"%lld\" data-t1=\"%lld\">",
            VW, h + PT + 20, (long long)(r->t0 / 1000000), (long long)(r->t1 / 1000000));
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
        fprintf(o,
                "<g class=\"phase\" data-depth=\"%d\"><rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" "
                "height=\"%.0f\" rx=\"2\" fill=\"hsl(%u,65%%,60%%)\"/>",
                b->row, x0, y + 1, w, rh - 2, hue_of(path));
        size_t nl = strlen(name);
        if (w >= 7.0 * (double)(nl < 40 ? nl : 40) + 8) {
            fprintf(o, "<text x=\"%.1f\" y=\"%.1f\">", x0 + 4, y + 14);
            esc(o, name);
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

struct line_spec {
    struct rm_series *s;
    char key[96];
    char label[200];
    const char *color;
    bool dashed;
};

struct chart {
    const char *id, *title, *unit, *deg;
    double scale; /* values are divided by it */
    double ymax;  /* 0: from the data */
    struct line_spec *lines;
    size_t n, cap;
};

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

static void write_line(struct report *r, const struct chart *c, const struct line_spec *l,
                       double y1, size_t *npoly)
{
    FILE *o = r->out;
    struct rm_ds_point *p;
    size_t n = rm_series_points(l->s, &p);
    double *xs = malloc((n ? n : 1) * sizeof *xs), *ys = malloc((n ? n : 1) * sizeof *ys);
    if (!xs || !ys) abort();
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
                l->dashed ? " stroke-dasharray=\"5 3\"" : "");
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

static void fmt_tick(char *buf, size_t cap, double v)
{
    if (v == floor(v) && fabs(v) < 1e9)
        snprintf(buf, cap, "%.0f", v);
    else
        snprintf(buf, cap, "%.3g", v);
}

static size_t write_chart(struct report *r, struct chart *c)
{
    FILE *o = r->out;
    if (!c->n) return 0;
    double ymax = c->ymax;
    if (ymax <= 0) {
        double m = 0;
        for (size_t i = 0; i < c->n; i++)
            if (c->lines[i].s->vmax / c->scale > m) m = c->lines[i].s->vmax / c->scale;
        ymax = nice_ceil(m * 1.02);
    }
    fprintf(o, "<section class=\"panel\" id=\"%s\"><h3>%s <span class=\"unit\">(%s)</span></h3>",
            c->id, c->title, c->unit);
    fprintf(o,
            "<svg class=\"chart\" viewBox=\"0 0 %.0f %.0f\" data-y1=\"%g\" data-unit=\"%s\" "
            "data-t0=\"%lld\" data-t1=\"%lld\" data-l=\"%.0f\" data-pw=\"%.0f\" data-pt=\"%.0f\" "
            "data-ph=\"%.0f\">",
            VW, VH, ymax, c->unit, (long long)(r->t0 / 1000000), (long long)(r->t1 / 1000000), PL,
            PW, PT, PH);
    fprintf(o, "<use href=\"#phb\"/>");
    if (c->deg) fprintf(o, "<use href=\"#%s\"/>", c->deg);
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
    fprintf(o,
            "</g><use href=\"#marks\"/><line class=\"cursor\" x1=\"0\" x2=\"0\" y1=\"%.0f\" "
            "y2=\"%.0f\"/></svg><div class=\"legend\">",
            PT, PT + PH);
    for (size_t i = 0; i < c->n; i++) {
        fprintf(o, "<span><i style=\"background:%s%s\"></i>", c->lines[i].color,
                c->lines[i].dashed ? ";opacity:.5" : "");
        esc(o, c->lines[i].label);
        fprintf(o, "</span>");
    }
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

static void write_charts(struct report *r)
{
    qsort(r->gpus, r->ngpus, sizeof *r->gpus, cmp_gpu);
    struct chart c = {0};
    static const struct {
        const char *id, *title, *unit;
        double scale, ymax;
        int m, total;
    } g[] = {
        {"c-util", "GPU utilization", "%", 1, 100, GS_UTIL, -1},
        {"c-vram", "GPU memory used (dashed: total)", "GiB", 1024, 0, GS_VRAM, GS_VRAM_TOTAL},
        {"c-power", "GPU power", "W", 1, 0, GS_POWER, -1},
        {"c-temp", "GPU temperature", "&#176;C", 1, 0, GS_TEMP, -1},
    };
    static const char *const mkey[GS_COUNT] = {"util", "vram", "vram_total", "power", "temp"};
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
            if (g[k].total >= 0) {
                snprintf(key, sizeof key, "gpu%s.%s", t->key, mkey[g[k].total]);
                snprintf(label, sizeof label, "GPU %s total", t->key);
                chart_add(&c, &t->s[g[k].total], key, label, palette[i % NPAL], true);
            }
        }
        write_chart(r, &c);
    }
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

/* ---- summary cards and tables --------------------------------------------------------- */

/* v / div with dec decimals (-1: %g) and a suffix, or a dash when v is not a number. */
static void num(FILE *o, const json_t *v, int dec, const char *suffix, double div)
{
    if (!json_is_number(v))
        fputs("&#8211;", o);
    else if (dec < 0)
        fprintf(o, "%g%s", json_number_value(v) / div, suffix);
    else
        fprintf(o, "%.*f%s", dec, json_number_value(v) / div, suffix);
}

static void str_or_dash(FILE *o, const json_t *v)
{
    if (json_is_string(v))
        esc(o, json_string_value(v));
    else if (json_is_integer(v))
        fprintf(o, "%lld", (long long)json_integer_value(v));
    else
        fputs("&#8211;", o);
}

static const json_t *get(const json_t *o, const char *path)
{
    char k[64];
    const json_t *v = o;
    while (v && *path) {
        const char *d = strchr(path, '.');
        size_t n = d ? (size_t)(d - path) : strlen(path);
        copyn(k, sizeof k, path, n);
        v = json_object_get(v, k);
        path += n + (d ? 1 : 0);
    }
    return v;
}

static void fmt_duration(FILE *o, const json_t *v)
{
    if (!json_is_number(v)) {
        fputs("&#8211;", o);
        return;
    }
    double s = json_number_value(v);
    if (s < 120)
        fprintf(o, "%.1f s", s);
    else if (s < 86400)
        fprintf(o, "%ldh %02ldm %02lds", (long)s / 3600, (long)s % 3600 / 60, (long)s % 60);
    else
        fprintf(o, "%ldd %ldh %02ldm", (long)s / 86400, (long)s % 86400 / 3600,
                (long)s % 3600 / 60);
}

static void card(FILE *o, const char *label)
{
    fprintf(o, "<div class=\"card\"><div class=\"label\">%s</div><div class=\"value\">", label);
}

static void write_cards(struct report *r)
{
    FILE *o = r->out;
    const json_t *s = r->summary;
    const json_t *dur = get(s, "session.duration_s");
    if (!json_is_number(dur)) dur = get(s, "data_quality.session_seconds");
    fprintf(o, "<section class=\"cards\">");
    card(o, "Duration");
    fmt_duration(o, dur);
    fprintf(o, "</div></div>");
    card(o, "Peak VRAM");
    num(o, get(s, "peak_vram_mb"), 1, " GiB", 1024);
    fprintf(o, "</div></div>");
    card(o, "Mean GPU utilization");
    num(o, get(s, "gpu_util_mean_pct"), 1, " %", 1);
    fprintf(o, "</div></div>");
    card(o, "Energy");
    num(o, get(s, "totals.energy_wh"), 2, " Wh", 1);
    fprintf(o, "</div></div>");
    card(o, "Alerts");
    long long w = json_integer_value(get(s, "alerts.warning"));
    long long c = json_integer_value(get(s, "alerts.critical"));
    fprintf(o, "<span class=\"%s\">%lld warning</span>, <span class=\"%s\">%lld critical</span>",
            w ? "warn" : "", w, c ? "crit" : "", c);
    fprintf(o, "</div></div>");
    card(o, "GPUs");
    num(o, get(s, "totals.gpu_count"), 0, "", 1);
    fprintf(o, "</div></div>");
    card(o, "Coverage");
    num(o, get(s, "data_quality.coverage"), 1, " %", 0.01);
    fprintf(o, "</div></div></section>\n");
}

static void write_gpu_table(struct report *r)
{
    FILE *o = r->out;
    const json_t *gpus = get(r->summary, "gpus");
    if (!json_array_size(gpus)) return;
    fprintf(o, "<section class=\"panel\"><h3>GPUs</h3><table><thead><tr><th>GPU</th><th>name</th>"
               "<th>samples</th><th>util mean %%</th><th>util p95 %%</th><th>util max %%</th>"
               "<th>VRAM peak GiB</th><th>VRAM total GiB</th><th>power mean W</th>"
               "<th>power max W</th><th>energy Wh</th><th>temp max &#176;C</th><th>idle "
               "share</th><th>gaps</th></tr></thead><tbody>");
    size_t i;
    json_t *g;
    json_array_foreach(gpus, i, g)
    {
        fprintf(o, "<tr><td>");
        str_or_dash(o, get(g, "index"));
        fprintf(o, "</td><td class=\"l\">");
        str_or_dash(o, get(g, "name"));
        fprintf(o, "</td><td>");
        num(o, get(g, "samples"), 0, "", 1);
        fprintf(o, "</td><td>");
        num(o, get(g, "util_pct.mean"), 1, "", 1);
        fprintf(o, "</td><td>");
        num(o, get(g, "util_pct.p95"), 0, "", 1);
        fprintf(o, "</td><td>");
        num(o, get(g, "util_pct.max"), 0, "", 1);
        fprintf(o, "</td><td>");
        num(o, get(g, "vram_mb.peak"), 2, "", 1024);
        fprintf(o, "</td><td>");
        num(o, get(g, "vram_mb.total"), 2, "", 1024);
        fprintf(o, "</td><td>");
        num(o, get(g, "power_w.mean"), 1, "", 1);
        fprintf(o, "</td><td>");
        num(o, get(g, "power_w.max"), 1, "", 1);
        fprintf(o, "</td><td>");
        num(o, get(g, "energy_wh"), 3, "", 1);
        fprintf(o, "</td><td>");
        num(o, get(g, "temp_c_max"), 0, "", 1);
        fprintf(o, "</td><td>");
        num(o, get(g, "idle_share"), 2, "", 1);
        fprintf(o, "</td><td>");
        num(o, get(g, "gaps.count"), 0, "", 1);
        fprintf(o, "</td></tr>");
    }
    fprintf(o, "</tbody></table></section>\n");
}

static void write_phase_table(struct report *r)
{
    FILE *o = r->out;
    const json_t *ph = get(r->summary, "phases");
    if (!json_array_size(ph)) return;
    fprintf(o, "<section class=\"panel\"><h3>Phases</h3><table><thead><tr><th>phase</th>"
               "<th>runs</th><th>total s</th><th>ok</th><th>error</th><th>unterminated</th>"
               "<th>GPU util mean %%</th><th>VRAM peak GiB</th><th>energy Wh</th>"
               "<th>RSS peak MiB</th><th>first start</th></tr></thead><tbody>");
    size_t i;
    json_t *p;
    json_array_foreach(ph, i, p)
    {
        json_int_t depth = json_integer_value(get(p, "depth"));
        if (depth < 0) depth = 0;
        if (depth > 8) depth = 8;
        double un = 0, ud = 0, peak = -1, energy = 0;
        bool has_e = false;
        size_t k;
        json_t *g;
        json_array_foreach(get(p, "gpus"), k, g)
        {
            const json_t *m = get(g, "util_pct.mean"), *n = get(g, "samples");
            if (json_is_number(m) && json_is_number(n))
                un += json_number_value(m) * json_number_value(n), ud += json_number_value(n);
            const json_t *v = get(g, "vram_mb.peak"), *e = get(g, "energy_wh");
            if (json_is_number(v) && json_number_value(v) > peak) peak = json_number_value(v);
            if (json_is_number(e)) energy += json_number_value(e), has_e = true;
        }
        fprintf(o,
                "<tr><td class=\"l\" style=\"padding-left:%dem\"><i class=\"sw\" "
                "style=\"background:hsl(%u,65%%,60%%)\"></i>",
                (int)depth + 1,
                hue_of(json_is_string(get(p, "path")) ? json_string_value(get(p, "path")) : ""));
        str_or_dash(o, get(p, "path"));
        fprintf(o, "</td><td>");
        num(o, get(p, "count"), 0, "", 1);
        fprintf(o, "</td><td>");
        num(o, get(p, "total_seconds"), 3, "", 1);
        fprintf(o, "</td><td>");
        num(o, get(p, "status.ok"), 0, "", 1);
        fprintf(o, "</td><td>");
        num(o, get(p, "status.error"), 0, "", 1);
        fprintf(o, "</td><td>");
        num(o, get(p, "status.unterminated"), 0, "", 1);
        fprintf(o, "</td><td>");
        if (ud > 0)
            fprintf(o, "%.1f", un / ud);
        else
            fputs("&#8211;", o);
        fprintf(o, "</td><td>");
        if (peak >= 0)
            fprintf(o, "%.2f", peak / 1024);
        else
            fputs("&#8211;", o);
        fprintf(o, "</td><td>");
        if (has_e)
            fprintf(o, "%.3f", energy);
        else
            fputs("&#8211;", o);
        fprintf(o, "</td><td>");
        num(o, get(p, "proc.rss_peak_mb"), 1, "", 1);
        fprintf(o, "</td><td>");
        str_or_dash(o, get(p, "first_start"));
        fprintf(o, "</td></tr>");
    }
    fprintf(o, "</tbody></table></section>\n");
}

static void write_events(struct report *r)
{
    FILE *o = r->out;
    const json_t *al = get(r->summary, "alerts.events");
    if (!json_array_size(al) && !r->nspans) return;
    fprintf(o, "<section class=\"panel\"><h3>Alerts and collector problems</h3><table><thead>"
               "<tr><th>time</th><th>what</th><th>detail</th></tr></thead><tbody>");
    size_t i;
    json_t *a;
    json_array_foreach(al, i, a)
    {
        const json_t *lv = get(a, "level");
        bool crit = json_is_string(lv) && !strcmp(json_string_value(lv), "critical");
        fprintf(o, "<tr><td>");
        str_or_dash(o, get(a, "ts"));
        fprintf(o, "</td><td class=\"%s\">", crit ? "crit" : "warn");
        str_or_dash(o, lv);
        fprintf(o, "</td><td class=\"l\">GPU ");
        str_or_dash(o, get(a, "gpu"));
        fprintf(o, ": VRAM ");
        num(o, get(a, "pct"), 1, " %", 1);
        fprintf(o, " of ");
        num(o, get(a, "memory_total_mb"), 0, " MiB", 1);
        fprintf(o, " (threshold ");
        num(o, get(a, "threshold_pct"), -1, " %", 1);
        fprintf(o, ")</td></tr>");
    }
    for (size_t k = 0; k < r->nspans && k < 200; k++) {
        char ts[RM_TS_BUFSZ];
        rm_format_ts(r->spans[k].a, ts);
        fprintf(o, "<tr><td>%s</td><td class=\"crit\">", ts);
        esc(o, r->spans[k].collector);
        fprintf(o, " degraded</td><td class=\"l\">");
        if (r->spans[k].b != RM_NO_TIME)
            fprintf(o, "down %.1f s: ", (double)(r->spans[k].b - r->spans[k].a) / 1e9);
        else
            fprintf(o, "not recovered: ");
        esc(o, r->spans[k].reason);
        fprintf(o, "</td></tr>");
    }
    fprintf(o, "</tbody></table></section>\n");
}

static void write_quality(struct report *r)
{
    FILE *o = r->out;
    const json_t *dq = get(r->summary, "data_quality");
    fprintf(o, "<section class=\"panel\"><h3>Data quality</h3><p>rows read ");
    num(o, get(dq, "rows_read"), 0, "", 1);
    fprintf(o, "; gaps ");
    num(o, get(dq, "gaps.count"), 0, "", 1);
    fprintf(o, " (");
    num(o, get(dq, "gaps.seconds"), 1, " s", 1);
    fprintf(o, "); coverage ");
    num(o, get(dq, "coverage"), 1, " %", 0.01);
    fprintf(o, ". Collectors:");
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)get(r->summary, "collectors"), k, v)
    {
        fprintf(o, " ");
        esc(o, k);
        fprintf(o, " ");
        str_or_dash(o, get(v, "health"));
        fprintf(o, ";");
    }
    fprintf(o, "</p>");
    size_t i;
    json_array_foreach(get(dq, "notes"), i, v)
    {
        fprintf(o, "<p class=\"note\">");
        str_or_dash(o, v);
        fprintf(o, "</p>");
    }
    if (r->gpu_overflow)
        fprintf(o, "<p class=\"note\">Only the first %d GPUs are drawn.</p>", MAX_GPUS);
    if (r->alerts_total > r->nalerts)
        fprintf(o, "<p class=\"note\">%llu alerts; the first %zu are drawn.</p>",
                (unsigned long long)r->alerts_total, r->nalerts);
    fprintf(o, "</section>\n");
}

static const char css[] =
    "body{font:14px/1.4 'DejaVu Sans',Helvetica,Arial,sans-serif;margin:0;background:#f4f5f7;"
    "color:#222}header{background:#20242c;color:#eee;padding:14px 24px}header h1{margin:0;"
    "font-size:20px}header .meta{font-size:13px;color:#bbb;margin-top:4px;word-break:break-all}"
    "main{padding:12px "
    "24px;max-width:1400px;box-sizing:border-box}.cards{display:flex;flex-wrap:wrap;gap:10px;"
    "margin:8px 0}.card{background:#fff;border-radius:6px;padding:10px 14px;min-width:140px;"
    "box-shadow:0 1px 2px #0002}.card .label{font-size:12px;color:#666}.card .value{"
    "font-size:20px;font-weight:600}.panel{background:#fff;border-radius:6px;padding:8px 12px;"
    "margin:10px 0;box-shadow:0 1px 2px #0002}.panel h3{margin:2px 0 4px;font-size:15px}"
    ".unit{color:#777;font-weight:400}svg.chart,svg.lane{width:100%;height:auto;display:block}"
    "svg.defs{position:absolute}.series polyline{fill:none;stroke-width:1.3;"
    "stroke-linejoin:round}.axis line{stroke:#e4e4e4;stroke-width:1}.axis text,.lane text{"
    "font-size:11px;fill:#555}.lane text{fill:#111}.alert line{stroke-width:1.2}.alert.warning"
    "{stroke:#f0a020;fill:#f0a020}.alert.critical{stroke:#d02020;fill:#d02020}.end line{"
    "stroke:#555;stroke-dasharray:4 3}.cursor{stroke:#999;visibility:hidden}.legend{"
    "font-size:12px;color:#444}.legend span{margin-right:14px;white-space:nowrap}.legend i,i.sw{"
    "display:inline-block;width:14px;height:4px;margin-right:4px;vertical-align:middle}"
    "table{border-collapse:collapse;font-size:13px;width:100%}td,th{padding:3px 8px;"
    "border-bottom:1px solid #eee;text-align:right;white-space:nowrap}th{background:#fafafa;"
    "font-weight:600}td.l{text-align:left;white-space:normal;overflow-wrap:anywhere;min-width:8em}."
    "warn{"
    "color:#b07000}.crit{color:#c01010}.note{color:#777;font-size:12px}#tip{position:fixed;"
    "display:none;background:#222d;color:#fff;font-size:12px;padding:6px 8px;border-radius:4px;"
    "pointer-events:none;white-space:pre;z-index:9}";

/* Hover read-out, and a self-check the tests read back from the DOM (data-ok). */
static const char js[] =
    "(function(){var tip=document.getElementById('tip');"
    "document.querySelectorAll('svg.chart').forEach(function(svg){"
    "var d=svg.dataset,L=+d.l,W=+d.pw,T=+d.pt,H=+d.ph,Y=+d.y1,t0=+d.t0,t1=+d.t1;"
    "var cur=svg.querySelector('.cursor');"
    "svg.addEventListener('mouseleave',function(){tip.style.display='none';"
    "cur.style.visibility='hidden';});"
    "svg.addEventListener('mousemove',function(e){var r=svg.getBoundingClientRect();"
    "var x=(e.clientX-r.left)*svg.viewBox.baseVal.width/r.width;"
    "if(x<L||x>L+W){tip.style.display='none';cur.style.visibility='hidden';return;}"
    "var best={};svg.querySelectorAll('polyline[data-series]').forEach(function(p){"
    "var k=p.getAttribute('data-label'),pts=p.points;"
    "for(var i=0;i<pts.numberOfItems;i++){var q=pts.getItem(i),dx=Math.abs(q.x-x);"
    "if(!(k in best)||dx<best[k].d)best[k]={d:dx,y:q.y};}});"
    "var s=new Date(t0+(x-L)/W*(t1-t0)).toISOString().replace('T',' ').slice(0,23)+' UTC';"
    "for(var k in best)if(best[k].d<W/100)s+='\\n'+k+': '+((T+H-best[k].y)/H*Y).toFixed(1)+' '"
    "+d.unit;tip.textContent=s;tip.style.display='block';"
    "tip.style.left=(e.clientX+14)+'px';tip.style.top=(e.clientY+10)+'px';"
    "cur.setAttribute('x1',x);cur.setAttribute('x2',x);cur.style.visibility='visible';});});"
    "var n=0,bad=0,lines=0;document.querySelectorAll('svg.chart').forEach(function(s){"
    "var b=s.getBoundingClientRect(),w=0;if(b.width<300||b.height<40)bad++;"
    "s.querySelectorAll('polyline[data-series]').forEach(function(p){lines++;"
    "var bb=p.getBBox();if(bb.width>w)w=bb.width;});if(w>0)n++;else bad++;});"
    "document.body.setAttribute('data-charts',n);document.body.setAttribute('data-lines',lines);"
    "document.body.setAttribute('data-ok',n>0&&!bad?'1':'0');})();";

static void write_page(struct report *r)
{
    FILE *o = r->out;
    const json_t *ses = get(r->summary, "session");
    if (!json_is_object(ses)) ses = r->session;
    const json_t *id = get(ses, "id");
    if (!json_is_string(id)) id = get(r->session, "session_id");
    fprintf(o, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
               "<meta name=\"viewport\" content=\"width=device-width\">"
               "<meta name=\"generator\" content=\"runmon report\"><title>runmon report ");
    if (json_is_string(id)) esc(o, json_string_value(id));
    fprintf(o, "</title><style>%s</style></head>\n<body>\n<header><h1>runmon report", css);
    if (json_is_string(id)) {
        fprintf(o, " &#8212; ");
        esc(o, json_string_value(id));
    }
    fprintf(o, "</h1><div class=\"meta\">host <strong>");
    str_or_dash(o, get(ses, "host"));
    fprintf(o, "</strong> &#183; status <strong>");
    str_or_dash(o, get(ses, "status"));
    fprintf(o, "</strong> &#183; exit code ");
    str_or_dash(o, get(ses, "exit_code"));
    fprintf(o, " &#183; ");
    str_or_dash(o, get(ses, "started_at"));
    fprintf(o, " &#8594; ");
    str_or_dash(o, get(ses, "ended_at"));
    fprintf(o, " &#183; interval ");
    num(o, get(ses, "interval_s"), -1, " s", 1);
    const json_t *drv = get(ses, "driver_version");
    if (json_is_string(drv)) {
        fprintf(o, " &#183; driver ");
        esc(o, json_string_value(drv));
    }
    fprintf(o, "</div><div class=\"meta\">command: <code>");
    const json_t *cmd = get(ses, "command");
    size_t i;
    json_t *a;
    if (json_is_array(cmd)) {
        json_array_foreach(cmd, i, a)
        {
            if (i) fputc(' ', o);
            if (json_is_string(a)) esc(o, json_string_value(a));
        }
    } else {
        str_or_dash(o, cmd);
    }
    fprintf(o, "</code></div></header>\n<main>\n");
    write_cards(r);
    struct band *bands;
    size_t dropped, nb = make_bands(r, &bands, &dropped);
    write_defs(r, bands, nb);
    if (r->t1 > r->t0) {
        char from[RM_TS_BUFSZ], to[RM_TS_BUFSZ];
        rm_format_ts(r->t0, from);
        rm_format_ts(r->t1, to);
        fprintf(o,
                "<p class=\"note\">Time axis: elapsed since %s (UTC) to %s. Hatched: a "
                "collector was down; orange/red marks: VRAM alerts; dashed: session end; "
                "breaks in a line: no samples.</p>\n",
                from, to);
    }
    write_lane(r, bands, nb, dropped);
    free(bands);
    write_charts(r);
    write_gpu_table(r);
    write_phase_table(r);
    write_events(r);
    write_quality(r);
    fprintf(o, "</main><div id=\"tip\"></div>\n<script>%s</script>\n</body></html>\n", js);
}

/* ---- building ------------------------------------------------------------------------- */

int rm_report_build(const char *dir, const json_t *summary, char **html, size_t *len, char *err,
                    size_t errsz)
{
    struct report r;
    memset(&r, 0, sizeof r);
    r.dir = dir;
    r.t0 = r.t1 = RM_NO_TIME;
    r.session_end_ns = r.session_start_ns = RM_NO_TIME;
    rm_runlog_init(&r.rl);
    json_t *own = NULL;
    int rc = 0;
    *html = NULL;
    *len = 0;
    char path[4096];

    snprintf(path, sizeof path, "%s/session.json", dir);
    if (access(path, F_OK) == 0) {
        r.session = json_load_file(path, 0, NULL);
        if (!json_is_object(r.session)) {
            snprintf(err, errsz, "%s: not a JSON object", path);
            rc = 2;
            goto out;
        }
    }
    if (!summary) {
        snprintf(path, sizeof path, "%s/summary.json", dir);
        own = access(path, F_OK) == 0 ? json_load_file(path, 0, NULL) : NULL;
        if (own &&
            (!json_is_object(own) || strcmp(json_is_string(json_object_get(own, "format"))
                                                ? json_string_value(json_object_get(own, "format"))
                                                : "",
                                            "runmon-summary"))) {
            json_decref(own);
            own = NULL;
        }
        if (!own) {
            struct rm_summary_opts opts = {.progress = false};
            rc = rm_summary_session_dir(dir, &opts, &own, err, errsz);
            if (rc) goto out;
        }
        summary = own;
    }
    r.summary = summary;

    double interval = json_number_value(json_object_get(r.session, "interval_s"));
    if (!(interval > 0)) interval = json_number_value(get(summary, "session.interval_s"));
    r.gap_ns = interval > 0 ? (int64_t)llround(interval * 1e9) * RM_REPORT_GAP_FACTOR : 0;
    json_t *gf = json_object_get(r.session, "gpu_fields");
    if (json_is_array(gf) && json_array_size(gf)) {
        size_t cap = 1, i;
        json_t *f;
        json_array_foreach(gf, i, f) cap += json_string_length(f) + 1;
        r.gpu_fields = calloc(cap, 1);
        if (!r.gpu_fields) abort();
        json_array_foreach(gf, i, f)
        {
            if (i) strcat(r.gpu_fields, ",");
            if (json_is_string(f)) strcat(r.gpu_fields, json_string_value(f));
        }
    }

    snprintf(path, sizeof path, "%s/runlog.jsonl", dir);
    if (access(path, F_OK) == 0) {
        uint64_t longl = 0;
        if (rm_read_lines(path, RM_RUNLOG_MAX_LINE, on_line, &r, NULL, &longl, err, errsz)) {
            rc = 1;
            goto out;
        }
    }
    int64_t started = session_time(r.session, "started_at");
    int64_t ended = session_time(r.session, "ended_at");
    if (started == RM_NO_TIME) started = r.session_start_ns;
    if (ended == RM_NO_TIME) ended = r.session_end_ns;
    widen(&r, started);
    widen(&r, ended);
    widen(&r, r.rl.first_ns);
    widen(&r, r.rl.last_ns);
    /* The streams the report draws (dmon.csv is not drawn). */
    static const int drawn[] = {RM_STREAM_GPU, RM_STREAM_CPU, RM_STREAM_PROC};
    for (size_t i = 0; i < 3; i++)
        peek_family(&r, drawn[i]);
    if (r.t0 == RM_NO_TIME) {
        snprintf(err, errsz, "%s: no timed data to draw", dir);
        rc = 2;
        goto out;
    }
    if (r.t1 == r.t0) r.t1 = r.t0 + RM_NS_PER_SEC;
    rm_runlog_finish(&r.rl, ended, NULL, NULL);

    r.gpus = calloc(MAX_GPUS, sizeof *r.gpus);
    if (!r.gpus) abort();
    for (int m = 0; m < HS_COUNT; m++)
        if (rm_series_init(&r.host[m], r.t0, r.t1, RM_REPORT_BUCKETS, r.gap_ns)) abort();
    for (size_t i = 0; i < 3; i++)
        if (stream_family(&r, drawn[i], err, errsz)) {
            rc = 1;
            goto out;
        }

    r.out = open_memstream(html, len);
    if (!r.out) {
        snprintf(err, errsz, "out of memory");
        rc = 1;
        goto out;
    }
    write_page(&r);
    if (fclose(r.out)) {
        snprintf(err, errsz, "out of memory");
        rc = 1;
    }
out:
    if (rc && *html) {
        free(*html);
        *html = NULL;
        *len = 0;
    }
    for (size_t i = 0; r.gpus && i < r.ngpus; i++)
        for (int m = 0; m < GS_COUNT; m++)
            rm_series_free(&r.gpus[i].s[m]);
    free(r.gpus);
    for (int m = 0; m < HS_COUNT; m++)
        rm_series_free(&r.host[m]);
    rm_runlog_free(&r.rl);
    free(r.alerts);
    free(r.spans);
    free(r.gpu_fields);
    json_decref(r.session);
    json_decref(own);
    return rc;
}
