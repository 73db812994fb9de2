/* The ONE table of the summary's per-GPU figures: one row per figure of a GPU's object in
 * summary.json ("gpus" and each phase's "gpus"), in the document's order. A row says the
 * figure's key (its path in the object), its unit, the statistic it is (of which metric of
 * model/gpu_metrics.h) or that it is computed by a function of its own, its decimals in
 * summary.json, and which outputs show it and how. summary/build.c writes the objects by
 * walking the rows; report/output.c (text and CSV) and report/report_tables.c (the report's
 * GPU table) show the rows that name them. A second, smaller table holds the run's headline
 * figures (the top of the document). docs/ARCHITECTURE.md: "Adding a figure".
 */
#ifndef RUNMON_MODEL_FIGURES_H
#define RUNMON_MODEL_FIGURES_H

#include <stdbool.h>
#include <stddef.h>

/* The figures, in summary.json's order: rm_figures[RM_FIG_X] is figure X's row. */
enum rm_fig {
    RM_FIG_SAMPLES,
    RM_FIG_UTIL_MEAN,
    RM_FIG_UTIL_MAX,
    RM_FIG_UTIL_P50,
    RM_FIG_UTIL_P95,
    RM_FIG_UTIL_SOURCE,
    RM_FIG_MEMUTIL_MEAN,
    RM_FIG_MEMUTIL_MAX,
    RM_FIG_MEMUTIL_SOURCE,
    RM_FIG_VRAM_PEAK,
    RM_FIG_VRAM_MEAN,
    RM_FIG_VRAM_TOTAL,
    RM_FIG_VRAM_SOURCE,
    RM_FIG_POWER_MEAN,
    RM_FIG_POWER_MAX,
    RM_FIG_POWER_SOURCE,
    RM_FIG_ENERGY,
    RM_FIG_POWER_SENSOR,
    RM_FIG_ENERGY_LOW,
    RM_FIG_ENERGY_HIGH,
    RM_FIG_ENERGY_UNCOVERED,
    RM_FIG_TEMP_MAX,
    RM_FIG_SMCLK_MEAN,
    RM_FIG_SMCLK_MAX,
    RM_FIG_MEMCLK_MEAN,
    RM_FIG_MEMCLK_MAX,
    RM_FIG_THROTTLE_SHARE,
    RM_FIG_SMCLK_PEAK,
    RM_FIG_IDLE_SHARE,
    RM_FIG_FIRST,
    RM_FIG_LAST,
    RM_FIG_SAMPLED_SECONDS,
    RM_FIG_GAPS_COUNT,
    RM_FIG_GAPS_SECONDS,
    RM_FIG_COUNT
};

/* How a figure comes from the statistics of its metric over the samples of the source that
 * reports the metric (query-gpu first; dmon first for memory-controller use):
 * RM_FIG_P50/P95 of a metric with a histogram (utilization), RM_FIG_SOURCE the name of that
 * source, RM_FIG_OWN a computation of its own (summary/build.c keeps one per such row, by
 * its enum rm_fig). */
enum rm_fig_stat { RM_FIG_MEAN, RM_FIG_MAX, RM_FIG_P50, RM_FIG_P95, RM_FIG_SOURCE, RM_FIG_OWN };

/* The outputs that show a figure, beside summary.json. The CSV's columns are the rows
 * flagged for it in table order; text and report rows say their place. */
enum {
    RM_FIG_IN_JSON = 1u << 0,   /* summary.json's GPU objects (every row today) */
    RM_FIG_IN_TEXT = 1u << 1,   /* `runmon summary`'s GPU table (text) */
    RM_FIG_IN_CSV = 1u << 2,    /* `runmon summary --format csv`'s gpu and phase rows */
    RM_FIG_IN_REPORT = 1u << 3, /* the HTML report's GPU table */
};

/* The text GPU table's columns after GPU and NAME: a cell joins its figures with "/". */
enum rm_fig_text_col {
    RM_FIG_COL_NONE,
    RM_FIG_COL_SAMPLES,
    RM_FIG_COL_UTIL,
    RM_FIG_COL_MEMCTL,
    RM_FIG_COL_VRAM,
    RM_FIG_COL_POWER,
    RM_FIG_COL_ENERGY,
    RM_FIG_COL_TEMP,
    RM_FIG_COL_IDLE,
    RM_FIG_COL_COUNT
};

struct rm_fig_text_col_def {
    const char *head, *sub; /* its two header lines */
    int width;
    bool mig_mark; /* a "*" after the cell of a MIG instance (the whole GPU's figure) */
};
extern const struct rm_fig_text_col_def rm_fig_text_cols[RM_FIG_COL_COUNT];

struct rm_figure {
    const char *key;  /* its path in a GPU object: "util_pct.mean" ("a.b": member b of a) */
    const char *unit; /* "" for a count, a share or a name */
    int metric;       /* the RM_GM_* it is a statistic of; -1 for RM_FIG_OWN */
    enum rm_fig_stat stat;
    int dec;        /* its decimals in summary.json */
    unsigned shown; /* RM_FIG_IN_* */
    struct {        /* RM_FIG_IN_TEXT: */
        int col;    /* its column (enum rm_fig_text_col) */
        int pos;    /* its place in the cell, from 1 */
        int dec;    /* the decimals shown */
    } text;
    struct {              /* RM_FIG_IN_REPORT: */
        int at;           /* its column, from 1 */
        const char *head; /* the column's header (HTML) */
        int dec;          /* the decimals shown, after dividing by div */
        double div;
        bool bar; /* the energy's bar beside it (energy_wh_low/high of the same object) */
    } report;
};
extern const struct rm_figure rm_figures[RM_FIG_COUNT];

/* Figure X's key, for an output that reads one figure by name: RM_FIG_KEY(ENERGY). The run's
 * totals and a phase's row hold the GPUs' energy rows summed under the same keys. */
#define RM_FIG_KEY(x) (rm_figures[RM_FIG_##x].key)

/* A GPU object's member that no row writes: the workload's own VRAM from apps.csv,
 * {"peak", "mean"} in MiB (summary/apps.h), written beside the rows by summary/build.c. */
#define RM_GPU_WORKLOAD_VRAM "workload_vram_mb"

/* The run's headline figures, at the top of summary.json (over all GPUs and the host), in
 * the document's order: each is computed by summary/build.c's run_figure (a switch over
 * this enum, so a row without its computation does not compile). */
enum rm_run_fig {
    RM_RUN_PEAK_VRAM,
    RM_RUN_UTIL_MEAN,
    RM_RUN_UTIL_MAX,
    RM_RUN_MEMUTIL_MEAN,
    RM_RUN_MEMUTIL_MAX,
    RM_RUN_MEMUTIL_SOURCE,
    RM_RUN_POWER_MEAN,
    RM_RUN_POWER_MAX,
    RM_RUN_CPU_USR_MEAN,
    RM_RUN_CPU_IDLE_MEAN,
    RM_RUN_JAX_PEAK,
    RM_RUN_WORKLOAD_PEAK_VRAM,
    RM_RUN_WORKLOAD_VRAM_BASIS,
    RM_RUN_FRAMEWORK_PEAK,
    RM_RUN_FIG_COUNT
};

struct rm_run_figure {
    const char *key;  /* its member of the document */
    const char *unit; /* "" for a name or an object */
    int dec;          /* its decimals in summary.json */
    bool omit_null;   /* left out of the document when null (a caveat, absent when none) */
};
extern const struct rm_run_figure rm_run_figures[RM_RUN_FIG_COUNT];

/* Headline figure X's key: RM_RUN_KEY(WORKLOAD_PEAK_VRAM). */
#define RM_RUN_KEY(x) (rm_run_figures[RM_RUN_##x].key)

/* The figure shown in the report's GPU table's column at (from 1), or -1 past the last. */
int rm_fig_report_at(int at);

/* The figure in text column col at place pos (from 1), or -1 when none. */
int rm_fig_text_at(int col, int pos);

/* ---- the sweep table's and the sessions listing's figures ------------------------------ */

/* The figures of a session that `runmon sessions` (the listing's held rows, --sort, CSV) and
 * its sweep table (--summary) compare, in the order sweep/ sets them on a row: each a row key
 * (its name in the rows, the JSON and the CSV) read from the summary figure it names, or
 * computed by sweep/sessions_rows.c (RM_SWEEP_OWN), and, for the sweep table, its column:
 * place, header, unit, the best end, when it is shown. docs/ARCHITECTURE.md, "A column of the
 * sweep table and listing". */
enum rm_sweep_fig {
    RM_SWEEP_DURATION,
    RM_SWEEP_UTIL_MEAN,
    RM_SWEEP_PEAK_VRAM,
    RM_SWEEP_ENERGY,
    RM_SWEEP_WORKLOAD_VRAM,
    RM_SWEEP_DEVICE_VRAM,
    RM_SWEEP_FRAMEWORK_PEAK,
    RM_SWEEP_FIG_COUNT
};

/* Where a row's value comes from: the session's own (its index line: nothing to read), a
 * headline figure of summary.json (rm_run_figures[fig], or its member), a figure of its
 * "totals" (rm_figures[fig]: the GPUs' sum), or a computation of its own (sweep/sessions_rows.c's
 * own_figure, a switch over enum rm_sweep_fig). */
enum rm_sweep_from { RM_SWEEP_INDEX, RM_SWEEP_RUN, RM_SWEEP_TOTALS, RM_SWEEP_OWN };

/* How the sweep table's text writes a value: a time, a percentage, MiB (GiB from 1024),
 * Wh (kWh from 1000). */
enum rm_sweep_unit { RM_SWEEP_SECONDS, RM_SWEEP_PCT, RM_SWEEP_MIB, RM_SWEEP_WH };

/* When the sweep table shows a column: always; when a run has a value; the devices' VRAM
 * when no run has the workload's (RM_SWEEP_WORKLOAD_VRAM), or with --device-vram. */
enum rm_sweep_show { RM_SWEEP_ALWAYS, RM_SWEEP_IF_ANY, RM_SWEEP_IF_NO_WORKLOAD };

enum {
    RM_SWEEP_IN_LISTING = 1u << 0, /* the listing's figures (rm_session_row_set_figures) */
    RM_SWEEP_IN_TABLE = 1u << 1,   /* a column of the sweep table */
};

struct rm_sweep_figure {
    const char *key; /* its row key */
    enum rm_sweep_from from;
    int fig;              /* RM_RUN_* (RM_SWEEP_RUN), RM_FIG_* (RM_SWEEP_TOTALS); else -1 */
    const char *member;   /* RM_SWEEP_RUN: the member of that figure's object ("max"), or NULL */
    const char *src_key;  /* RM_SWEEP_OWN: the key naming where its value came from, or NULL */
    const char *sort;     /* its `sessions --sort` name, or NULL */
    int low, high;        /* its error bar: RM_FIG_* of the same "totals" (row keys alike); -1 */
    unsigned in;          /* RM_SWEEP_IN_* */
    struct {              /* RM_SWEEP_IN_TABLE: */
        int at;           /* its column among the figures, from 1 */
        const char *head; /* its header */
        enum rm_sweep_unit unit;
        int best; /* the best end: -1 the least, +1 the most */
        enum rm_sweep_show show;
        int drop; /* when the text leaves it out for room: 0 never, then 1 first (as RERUN) */
    } table;
};
extern const struct rm_sweep_figure rm_sweep_figures[RM_SWEEP_FIG_COUNT];

/* Sweep figure X's row key: RM_SWEEP_KEY(ENERGY). */
#define RM_SWEEP_KEY(x) (rm_sweep_figures[RM_SWEEP_##x].key)

/* The sweep figure at column at (from 1), or -1 past the last. */
int rm_sweep_fig_at(int at);

#endif
