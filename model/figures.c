#include "model/figures.h"

#include "model/gpu_metrics.h"

const struct rm_fig_text_col_def rm_fig_text_cols[RM_FIG_COL_COUNT] = {
    [RM_FIG_COL_SAMPLES] = {"SAMPLES", "", 7, false},
    [RM_FIG_COL_UTIL] = {"UTIL %", "mean/p50/p95/max", 17, false},
    [RM_FIG_COL_MEMCTL] = {"MEMCTL", "% mean", 6, false},
    [RM_FIG_COL_VRAM] = {"VRAM MiB", "peak/total", 13, false},
    [RM_FIG_COL_POWER] = {"POWER W", "mean/max", 9, false},
    [RM_FIG_COL_ENERGY] = {"ENERGY", "Wh", 7, true},
    [RM_FIG_COL_TEMP] = {"TEMP", "C", 4, false},
    [RM_FIG_COL_IDLE] = {"IDLE", "share", 5, false},
};

/* A statistic of metric m, or a computation of its own; then where it is shown. */
#define STAT(m, s, d) .metric = RM_GM_##m, .stat = RM_FIG_##s, .dec = (d)
#define OWN(d) .metric = -1, .stat = RM_FIG_OWN, .dec = (d)
#define JSON_ONLY .shown = RM_FIG_IN_JSON
#define SHOWN(f) .shown = RM_FIG_IN_JSON | (f)
#define TEXT(c, p, d) .text = {RM_FIG_COL_##c, (p), (d)}
#define REPORT(a, h, d, v) .report = {(a), (h), (d), (v), false}

enum { T = RM_FIG_IN_TEXT, C = RM_FIG_IN_CSV, R = RM_FIG_IN_REPORT };

const struct rm_figure rm_figures[RM_FIG_COUNT] = {
    [RM_FIG_SAMPLES] = {"samples", "", OWN(0), SHOWN(T | C | R), TEXT(SAMPLES, 1, 0),
                        REPORT(1, "samples", 0, 1)},
    [RM_FIG_UTIL_MEAN] = {"util_pct.mean", "%", STAT(UTIL, MEAN, 3), SHOWN(T | C | R),
                          TEXT(UTIL, 1, 1), REPORT(2, "util mean %", 1, 1)},
    [RM_FIG_UTIL_MAX] = {"util_pct.max", "%", STAT(UTIL, MAX, 3), SHOWN(T | C | R),
                         TEXT(UTIL, 4, 0), REPORT(4, "util max %", 0, 1)},
    [RM_FIG_UTIL_P50] = {"util_pct.p50", "%", STAT(UTIL, P50, 0), SHOWN(T | C), TEXT(UTIL, 2, 0)},
    [RM_FIG_UTIL_P95] = {"util_pct.p95", "%", STAT(UTIL, P95, 0), SHOWN(T | C | R),
                         TEXT(UTIL, 3, 0), REPORT(3, "util p95 %", 0, 1)},
    [RM_FIG_UTIL_SOURCE] = {"util_pct.source", "", STAT(UTIL, SOURCE, 0), JSON_ONLY},
    [RM_FIG_MEMUTIL_MEAN] = {"mem_util_pct.mean", "%", STAT(MEMUTIL, MEAN, 3), SHOWN(T | C),
                             TEXT(MEMCTL, 1, 1)},
    [RM_FIG_MEMUTIL_MAX] = {"mem_util_pct.max", "%", STAT(MEMUTIL, MAX, 3), SHOWN(C)},
    [RM_FIG_MEMUTIL_SOURCE] = {"mem_util_pct.source", "", STAT(MEMUTIL, SOURCE, 0), JSON_ONLY},
    [RM_FIG_VRAM_PEAK] = {"vram_mb.peak", "MiB", STAT(VRAM_USED, MAX, 3), SHOWN(T | C | R),
                          TEXT(VRAM, 1, 0), REPORT(5, "VRAM peak GiB", 2, 1024)},
    [RM_FIG_VRAM_MEAN] = {"vram_mb.mean", "MiB", STAT(VRAM_USED, MEAN, 3), SHOWN(C)},
    /* memory.total: query-gpu's only (dmon has none) */
    [RM_FIG_VRAM_TOTAL] = {"vram_mb.total", "MiB", OWN(3), SHOWN(T | C | R), TEXT(VRAM, 2, 0),
                           REPORT(6, "VRAM total GiB", 2, 1024)},
    [RM_FIG_VRAM_SOURCE] = {"vram_mb.source", "", STAT(VRAM_USED, SOURCE, 0), JSON_ONLY},
    [RM_FIG_POWER_MEAN] = {"power_w.mean", "W", STAT(POWER, MEAN, 3), SHOWN(T | C | R),
                           TEXT(POWER, 1, 0), REPORT(7, "power mean W", 1, 1)},
    [RM_FIG_POWER_MAX] = {"power_w.max", "W", STAT(POWER, MAX, 3), SHOWN(T | C | R),
                          TEXT(POWER, 2, 0), REPORT(8, "power max W", 1, 1)},
    [RM_FIG_POWER_SOURCE] = {"power_w.source", "", STAT(POWER, SOURCE, 0), JSON_ONLY},
    /* docs/ENERGY.md: the integral over the covered time, and its bar */
    [RM_FIG_ENERGY] = {"energy_wh", "Wh", OWN(6), SHOWN(T | C | R), TEXT(ENERGY, 1, 3),
                       .report = {9, "energy Wh", 3, 1, true}},
    [RM_FIG_POWER_SENSOR] = {"power_sensor", "", OWN(0), JSON_ONLY},
    [RM_FIG_ENERGY_LOW] = {"energy_wh_low", "Wh", OWN(6), JSON_ONLY},
    [RM_FIG_ENERGY_HIGH] = {"energy_wh_high", "Wh", OWN(6), JSON_ONLY},
    [RM_FIG_ENERGY_UNCOVERED] = {"energy_uncovered_s", "s", OWN(3), JSON_ONLY},
    [RM_FIG_TEMP_MAX] = {"temp_c_max", "C", STAT(TEMP, MAX, 3), SHOWN(T | C | R), TEXT(TEMP, 1, 0),
                         REPORT(10, "temp max &#176;C", 0, 1)},
    [RM_FIG_SMCLK_MEAN] = {"sm_clock_mhz.mean", "MHz", STAT(SMCLK, MEAN, 3), SHOWN(C)},
    [RM_FIG_SMCLK_MAX] = {"sm_clock_mhz.max", "MHz", STAT(SMCLK, MAX, 3), SHOWN(C)},
    [RM_FIG_MEMCLK_MEAN] = {"mem_clock_mhz.mean", "MHz", STAT(MEMCLK, MEAN, 3), SHOWN(C)},
    [RM_FIG_MEMCLK_MAX] = {"mem_clock_mhz.max", "MHz", STAT(MEMCLK, MAX, 3), SHOWN(C)},
    /* with gpu.csv's throttle-reason and clocks.max.sm columns (--gpu-fields) only */
    [RM_FIG_THROTTLE_SHARE] = {"throttle_share", "", OWN(4), JSON_ONLY},
    [RM_FIG_SMCLK_PEAK] = {"sm_clock_max_mhz", "MHz", OWN(3), JSON_ONLY},
    [RM_FIG_IDLE_SHARE] = {"idle_share", "", OWN(4), SHOWN(T | C | R), TEXT(IDLE, 1, 2),
                           REPORT(11, "idle share", 2, 1)},
    [RM_FIG_FIRST] = {"first", "", OWN(0), JSON_ONLY},
    [RM_FIG_LAST] = {"last", "", OWN(0), JSON_ONLY},
    [RM_FIG_SAMPLED_SECONDS] = {"sampled_seconds", "s", OWN(3), JSON_ONLY},
    [RM_FIG_GAPS_COUNT] = {"gaps.count", "", OWN(0), SHOWN(R), REPORT(12, "gaps", 0, 1)},
    [RM_FIG_GAPS_SECONDS] = {"gaps.seconds", "s", OWN(3), JSON_ONLY},
};

const struct rm_run_figure rm_run_figures[RM_RUN_FIG_COUNT] = {
    [RM_RUN_PEAK_VRAM] = {"peak_vram_mb", "MiB", 3, false},
    [RM_RUN_UTIL_MEAN] = {"gpu_util_mean_pct", "%", 3, false},
    [RM_RUN_UTIL_MAX] = {"gpu_util_max_pct", "%", 3, false},
    [RM_RUN_MEMUTIL_MEAN] = {"mem_util_mean_pct", "%", 3, false},
    [RM_RUN_MEMUTIL_MAX] = {"mem_util_max_pct", "%", 3, false},
    [RM_RUN_MEMUTIL_SOURCE] = {"mem_util_source", "", 0, false},
    [RM_RUN_POWER_MEAN] = {"power_watts_mean", "W", 3, false},
    [RM_RUN_POWER_MAX] = {"power_watts_max", "W", 3, false},
    [RM_RUN_CPU_USR_MEAN] = {"cpu_usr_mean_pct", "%", 3, false},
    [RM_RUN_CPU_IDLE_MEAN] = {"cpu_idle_mean_pct", "%", 3, false},
    [RM_RUN_JAX_PEAK] = {"jax_peak_bytes_mb", "MiB", 3, false},
    /* apps.csv: the largest VRAM the workload's own processes held on one GPU */
    [RM_RUN_WORKLOAD_PEAK_VRAM] = {"workload_peak_vram_mb", "MiB", 3, false},
    /* how that figure is known where some GPU memory has no process runmon can place (another
     * PID namespace): "assumed" (counted as the workload's) or "unattributed" (null) */
    [RM_RUN_WORKLOAD_VRAM_BASIS] = {"workload_vram_basis", "", 0, true},
    /* the run log's framework lines: {"name", "by_device", "max", "reserved_by_device"} */
    [RM_RUN_FRAMEWORK_PEAK] = {"framework_peak_mb", "MiB", 3, false},
};

/* A sweep figure read from a headline figure, or from "totals"; then its sweep column. */
#define FROM_RUN(f, m) .from = RM_SWEEP_RUN, .fig = RM_RUN_##f, .member = (m), .low = -1, .high = -1
#define FROM_TOTALS(f, l, h) .from = RM_SWEEP_TOTALS, .fig = RM_FIG_##f, .low = (l), .high = (h)
#define COLUMN(a, h, u, b, s, d) .table = {(a), (h), RM_SWEEP_##u, (b), RM_SWEEP_##s, (d)}

enum { LIST = RM_SWEEP_IN_LISTING, TABLE = RM_SWEEP_IN_TABLE };

const struct rm_sweep_figure rm_sweep_figures[RM_SWEEP_FIG_COUNT] = {
    /* the session's duration_s, which the index's row already has */
    [RM_SWEEP_DURATION] = {"duration_s", .from = RM_SWEEP_INDEX, .fig = -1, .low = -1, .high = -1,
                           .sort = "duration", .in = TABLE,
                           COLUMN(1, "DURATION", SECONDS, -1, ALWAYS, 0)},
    [RM_SWEEP_UTIL_MEAN] = {"gpu_util_mean_pct", FROM_RUN(UTIL_MEAN, NULL), .sort = "util",
                            .in = LIST | TABLE, COLUMN(2, "UTIL %", PCT, +1, ALWAYS, 1)},
    /* the listing's one VRAM figure: the workload's when recorded, else the devices' */
    [RM_SWEEP_PEAK_VRAM] = {"peak_vram_mb", .from = RM_SWEEP_OWN, .fig = -1,
                            .src_key = "peak_vram_source", .low = -1, .high = -1, .sort = "vram",
                            .in = LIST},
    [RM_SWEEP_ENERGY] = {"energy_wh", FROM_TOTALS(ENERGY, RM_FIG_ENERGY_LOW, RM_FIG_ENERGY_HIGH),
                         .sort = "energy", .in = LIST | TABLE,
                         COLUMN(6, "ENERGY", WH, -1, ALWAYS, 0)},
    [RM_SWEEP_WORKLOAD_VRAM] = {"workload_peak_vram_mb", FROM_RUN(WORKLOAD_PEAK_VRAM, NULL),
                                .in = TABLE, COLUMN(3, "WORKLOAD VRAM", MIB, -1, IF_ANY, 0)},
    [RM_SWEEP_DEVICE_VRAM] = {"device_peak_vram_mb", FROM_RUN(PEAK_VRAM, NULL), .in = TABLE,
                              COLUMN(4, "DEVICE VRAM", MIB, -1, IF_NO_WORKLOAD, 0)},
    [RM_SWEEP_FRAMEWORK_PEAK] = {"framework_peak_mb", FROM_RUN(FRAMEWORK_PEAK, "max"), .in = TABLE,
                                 COLUMN(5, "FRAMEWORK PEAK", MIB, -1, IF_ANY, 0)},
};

int rm_sweep_fig_at(int at)
{
    for (int f = 0; f < RM_SWEEP_FIG_COUNT; f++)
        if ((rm_sweep_figures[f].in & RM_SWEEP_IN_TABLE) && rm_sweep_figures[f].table.at == at)
            return f;
    return -1;
}

/* The figure output `in` (RM_FIG_IN_TEXT or RM_FIG_IN_REPORT) shows at place pos of
 * column col (the report's table: one figure per column, col 0, pos its column), or -1. */
static int fig_at(unsigned in, int col, int pos)
{
    for (int f = 0; f < RM_FIG_COUNT; f++) {
        const struct rm_figure *r = &rm_figures[f];
        if (!(r->shown & in)) continue;
        int c = in == RM_FIG_IN_TEXT ? r->text.col : 0;
        int p = in == RM_FIG_IN_TEXT ? r->text.pos : r->report.at;
        if (c == col && p == pos) return f;
    }
    return -1;
}

int rm_fig_report_at(int at)
{
    return fig_at(RM_FIG_IN_REPORT, 0, at);
}

int rm_fig_text_at(int col, int pos)
{
    return fig_at(RM_FIG_IN_TEXT, col, pos);
}
