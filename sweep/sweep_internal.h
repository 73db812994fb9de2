/* Private to the sweep page (sweep/sweep_page.h is its API):
 *
 *   sweep_runs.c   each run's folder: session.json (GPU totals, times), gpu.csv streamed into
 *                  the run's VRAM, utilization and power series, summary.json's phases
 *   sweep_dirs.c   the rows of several session folders, parameters inferred from commands
 *   sweep_metrics.c each run's run log: its `metric` lines downsampled by step and by time
 *   sweep_result.c what the runs achieved: metric curves, the Pareto chart, parallel
 *                  coordinates
 *   sweep_js.c     the page's CSS and script
 *   sweep_page.c   the page: table, bars, overlaid charts, phase table
 */
#ifndef RUNMON_REPORT_SWEEP_INTERNAL_H
#define RUNMON_REPORT_SWEEP_INTERNAL_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model/objective.h"
#include "model/pareto.h"
#include "report/report.h"
#include "sweep/sweep_page.h"

/* The overlaid series: the sum of the run's GPUs' memory used (MiB), the mean of their
 * utilization (%), the sum of their power (W), one value per sample of all GPUs. */
enum { SW_VRAM, SW_UTIL, SW_POWER, SW_COUNT };

/* Metrics: per run the first RM_SWEEP_METRICS_PER_RUN names of its run log, each kept as two
 * series of RM_SWEEP_METRIC_BUCKETS min/max buckets (at most twice as many points). */
#define RM_SWEEP_METRICS_PER_RUN 16
#define RM_SWEEP_METRIC_BUCKETS 100
enum { SW_BY_STEP, SW_BY_TIME, SW_METRIC_AXES };

struct sweep_mbucket {
    uint32_t n;
    double xmin, vmin; /* the smallest value and where */
    double xmax, vmax; /* the largest and where */
};

struct sweep_mseries {
    double w;    /* bucket i holds x in [i w, (i + 1) w) */
    double xmax; /* the largest x added */
    struct sweep_mbucket b[RM_SWEEP_METRIC_BUCKETS];
};

struct sweep_metric {
    char *name;
    uint64_t count;        /* finite values read */
    double last, min, max; /* the statistics the summary keeps (for a summary without them) */
    struct sweep_mseries by[SW_METRIC_AXES];
};

struct sweep_mpoint {
    double x, v;
};

struct sweep_run {
    const json_t *row;
    char *label;          /* the run's name in the legend: its parameters, else its id */
    const char *dir;      /* the row's session_dir, or NULL */
    double vram_total_mb; /* the largest total of its GPUs; 0: unknown */
    char gpu[160];        /* its GPUs' model, "2 x NAME" for several; "" unknown */
    int64_t span_ns;      /* from its start to its end (the x range it covers); 0: unknown */
    struct rm_ds_point *pts[SW_COUNT];
    size_t npts[SW_COUNT];
    json_t *phases;               /* summary.json's phases array (a reference), or NULL */
    json_t *summary_metrics;      /* summary.json's "metrics" and "objectives" (references), or */
    json_t *summary_objectives;   /* NULL */
    struct sweep_metric *metrics; /* RM_SWEEP_METRICS_PER_RUN slots, nmetrics used */
    size_t nmetrics;
    uint64_t metric_lines, metrics_dropped; /* lines read; values of names past the slots */
    bool general_only;      /* every metric line through jansson (tests: the fast reader agrees) */
    json_t *log_objectives; /* the run log's objective lines' objectives, in order, or NULL */
};

/* Reads run's folder: the GPU total always; with series, the series and the phases. */
void rm_sweep_run_read(struct sweep_run *run, bool series);
void rm_sweep_run_free(struct sweep_run *run);

/* Reads the run's runlog.jsonl `metric` lines (docs/FORMATS.md) into run->metrics; t0_s: the
 * run's start in epoch seconds (NAN: no series by time). */
void rm_sweep_metrics_read(struct sweep_run *run, double t0_s);
void rm_sweep_metrics_free(struct sweep_run *run);
/* The series' points in x order into out (room for 2 x RM_SWEEP_METRIC_BUCKETS); the count. */
size_t rm_sweep_mseries_points(const struct sweep_mseries *s, struct sweep_mpoint *out);

/* Shared by the page's parts (sweep_page.c). */
extern const char *const rm_sweep_palette[RM_SWEEP_COLORS];
extern const char *const rm_sweep_dashes[RM_SWEEP_DASHES];
/* The tick labels of an x axis over [0, span] every step, each written by label (a time:
 * rm_sweep_elapsed), placed in % of the width; the last marked "end", the first "start". */
void rm_sweep_x_ticks(FILE *o, double span, double step,
                      void (*label)(char *buf, size_t cap, double s, double step));
double rm_sweep_nice_step(double span, int n);
double rm_sweep_nice_top(double v);
void rm_sweep_elapsed(char *buf, size_t cap, double s, double step);
void rm_sweep_swatch(FILE *o, size_t i);

/* sweep_result.c. Metric charts: the metrics first[0..nfirst) (the objectives') that some run
 * logged, then the others in order of first appearance (run 0's first), at most
 * RM_SWEEP_MAX_METRIC_CHARTS. */
#define RM_SWEEP_MAX_METRIC_CHARTS 6
bool rm_sweep_metrics_any(const struct sweep_run *runs, size_t n);
size_t rm_sweep_pick_metrics(const struct sweep_run *runs, size_t n, const char *const *first,
                             size_t nfirst, const char **out, size_t cap);
void rm_sweep_write_metric_charts(FILE *o, const struct sweep_run *runs, size_t n,
                                  const char *const *first, size_t nfirst);

/* Each run's objectives and cost, and its place on each objective's Pareto front. */
#define RM_SWEEP_MAX_OBJECTIVES 4
struct sweep_result {
    struct rm_objective obj[RM_SWEEP_MAX_OBJECTIVES]; /* the page's objectives */
    size_t nobj;
    enum rm_cost cost;
    double *val;                 /* val[r * nobj + k]: run r's value of objective k, or NAN */
    enum rm_front *front;        /* front[r * nobj + k] */
    struct rm_pareto_point *pts; /* per run: its cost and bar (objective unused) */
};

/* The objectives (opts', else the runs' objective lines), each run's values and cost, the
 * fronts. 0; 2 with err when an objective of opts names a metric no run logged. */
int rm_sweep_result_init(struct sweep_result *res, const struct sweep_run *runs, size_t n,
                         const struct rm_sweep_page_opts *opts, char *err, size_t errsz);
void rm_sweep_result_free(struct sweep_result *res);
/* A Pareto chart per objective (objective against cost), or a note saying how to get one. */
void rm_sweep_write_pareto(FILE *o, const struct sweep_run *runs, size_t n, bool drawn,
                           const struct sweep_result *res);
/* One axis per parameter, then the objectives, then duration, peak VRAM and energy; one line
 * per run; dragging along an axis keeps the runs in that range (sweep_js.c). */
void rm_sweep_write_pcoords(FILE *o, const struct sweep_run *runs, size_t n, bool drawn,
                            const json_t *param_names, const struct sweep_result *res);

extern const char rm_sweep_css[];
extern const char rm_sweep_js[];

#endif
