/* Private to report/: what the files of the HTML report share (report.h is the public API).
 *
 *   report_collect.c  reading a session folder: session.json, the summary, the run log's
 *                     phases and events, the collector CSVs streamed into series
 *                     (apps.csv: the workload's and the other processes' VRAM per GPU)
 *   report_charts.c   the SVG: time axis, phase bands and lane, degraded spans, the charts
 *   report_throttle.c the clock throttle reasons of gpu.csv, as spans per GPU and reason
 *   report_tables.c   the summary cards and the GPU, phase, event and data-quality tables
 *   report_apps.c     the process table and the memory-by-phase table (apps.csv figures)
 *   report.c          the page (head, CSS, script) and rm_report_build
 */
#ifndef RUNMON_REPORT_REPORT_INTERNAL_H
#define RUNMON_REPORT_REPORT_INTERNAL_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "model/objects.h"
#include "model/throttle.h"
#include "report/report.h"
#include "summary/apps.h"
#include "summary/csvread.h"
#include "summary/gpucsv.h"
#include "summary/hostcsv.h"
#include "summary/iocsv.h"
#include "summary/runlog_read.h"

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

enum { GS_UTIL, GS_VRAM, GS_VRAM_TOTAL, GS_POWER, GS_TEMP, GS_SMCLK, GS_COUNT };

/* The times one reason was active on one GPU: samples that saw it, merged where they follow
 * each other (within the gap spacing) or lie closer than a pixel. */
struct thr_span {
    int64_t a, b;
    int64_t active_ns; /* the time of the runs merged into it, without what lay between */
    uint64_t runs;
};

struct thr_track {
    struct thr_span *s;
    size_t n, cap;
    bool open;
    int64_t a, last; /* the open span: its first and its latest active sample */
};
enum { HS_BUSY, HS_IOWAIT, HS_MEM_USED, HS_MEM_TOTAL, HS_RSS, HS_COUNT };
/* io.csv's rates per sample: MB/s summed over disks, interfaces; the tree's; pressure some %. */
enum {
    IS_DISK_READ,
    IS_DISK_WRITE,
    IS_NET_RX,
    IS_NET_TX,
    IS_TREE_READ,
    IS_TREE_WRITE,
    IS_PSI_CPU,
    IS_PSI_IO,
    IS_PSI_MEM,
    IS_COUNT
};

struct gpu_track {
    char key[64];
    long index; /* numeric index when the key is one, for ordering */
    char name[128];
    struct rm_series s[GS_COUNT];
    double power_limit; /* W, the highest power.limit recorded; 0: none */
    struct thr_track thr[RM_THR_REASONS];
};

/* One GPU of apps.csv: per pmon sample, the VRAM of the workload's processes and of the
 * others (in_workload 0 or unknown); an idle sample adds 0 to both. */
struct apps_track {
    bool seen;
    struct rm_series w, o;
};

struct alert {
    int64_t t;
    bool critical;
    char gpu[64]; /* the GPU it is about, as the event names it ("?": unknown) */
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

/* A phase row as the page draws it (the phase table and the memory-by-phase table): the
 * summary's rows are reduced to these as they are made or read (rm_report_add_phase), so a
 * summary of 10,000 phase rows is never held as JSON (about 15 KB a row) but at about 250
 * bytes a row. Figures are NaN where the row had no number. */
struct report_phase {
    json_t *path, *first_start, *fw_name; /* the row's values (NULL: absent) */
    json_t *held;                         /* held_back_by (NULL: no rule fired) */
    int depth;                            /* clamped to 0..8 */
    double count, total_s, ok, error, unterminated;
    double energy_wh, energy_lo, energy_hi; /* the phase's own energy and its bar */
    double util_mean;                       /* over its GPUs, weighted by samples */
    double vram_peak, workload_peak;        /* the largest over its GPUs; -1: none */
    double gpu_energy;                      /* the sum over its GPUs (older summaries) */
    double fw_max;                          /* framework_peak_mb.max */
    /* the objects' figures of the phase table's columns (model/objects.h), by column - 1 */
    double obj[RM_OBJ_REPORT_MAX];
    bool has_util, has_gpu_energy, short_phase, has_fw, has_memory;
};

struct report {
    const char *dir;
    json_t *session; /* session.json, or NULL */
    const json_t *summary;
    json_t *own_summary; /* the summary when the report read or computed it */
    int64_t t0, t1, gap_ns;
    int64_t apps_gap_ns; /* pmon's period is whole seconds: its own gap spacing */
    struct gpu_track *gpus;
    size_t ngpus;
    bool gpu_overflow;
    struct rm_series host[HS_COUNT];
    struct rm_gpucsv gcsv;
    struct rm_hostcsv hcsv;
    int host_kind;           /* 0 cpu, 1 proc while streaming */
    struct apps_track *apps; /* RM_APPS_MAX_GPUS, by index, when there is an apps.csv */
    size_t napps;            /* GPUs seen in apps.csv */
    struct rm_appscsv acsv;
    struct rm_apps_agg aagg; /* the sample being added up while streaming */
    struct rm_phase_index rl;
    struct alert *alerts;
    size_t nalerts, capalerts;
    uint64_t alerts_total;
    struct span *spans;
    size_t nspans, capspans;
    int64_t session_end_ns, session_start_ns;
    char *gpu_fields;
    long plimit_col; /* the power.limit column of the gpu.csv being read, or -1 */
    /* Throttle reason columns of the gpu.csv being read (-1: none): one per reason
     * ("Active"/"Not Active") and the bit mask; whether any gpu.csv recorded them. */
    long thr_col[RM_THR_REASONS], thr_mask_col;
    bool thr_recorded;
    double warn_pct, crit_pct;   /* session.json thresholds (% of VRAM total); 0: none */
    struct report_phase *phases; /* the summary's phase rows, reduced */
    size_t nphases, capphases;
    /* io.csv: its counters into rates (rm_io_add), one point per sample and line. The series
     * start at the second sample, their gap spacing 3 x the file's own period. */
    struct rm_series io[IS_COUNT];
    bool io_init;
    struct rm_iocsv iocsv;
    struct rm_io_agg ioagg;
    int64_t io_t, io_prev_t;
    double io_acc[IS_COUNT];
    unsigned io_have;
    FILE *out;
};

static inline void esc(FILE *o, const char *s)
{
    rm_html_escape_str(o, s);
}

/* ---- report_collect.c ---- */

/* Reads the session folder dir into r (summary: as rm_report_build's). Returns 0, 2 when
 * the folder has no usable data, 1 on a runtime failure; err says why. r is always left
 * for rm_report_free. */
int rm_report_collect(struct report *r, const char *dir, const json_t *summary, char *err,
                      size_t errsz);
void rm_report_free(struct report *r);
/* The value at a dotted path ("totals.energy_wh") of a JSON object, or NULL. */
const json_t *rm_report_get(const json_t *o, const char *path);
/* One row of the summary's "phases", reduced to what the page draws, appended to r->phases. */
void rm_report_add_phase(struct report *r, const json_t *row);

/* ---- report_charts.c ---- */

/* A phase path's colour, one for its bands behind the charts, its lane rect and its table
 * swatch ("hsl(H,65%,60%)", H a stable hue of the path); buf holds RM_PHASE_COLOR_SZ. */
#define RM_PHASE_COLOR_SZ 24
const char *rm_report_phase_color(const char *path, char *buf);
/* A table's swatch of a phase: <i class="sw" data-path="PATH" style="background:COLOR">. */
void rm_report_phase_swatch(FILE *o, const char *path);
/* Windows merged per phase where they are closer than a pixel, so a run of a million short
 * steps is a handful of bands; at most MAX_BANDS. Returns the count; *out is malloc'd. */
size_t rm_report_make_bands(struct report *r, struct band **out, size_t *dropped);
/* Shared definitions: phase bands, degraded spans per collector, markers. */
void rm_report_write_defs(struct report *r, const struct band *bands, size_t nb);
void rm_report_write_lane(struct report *r, const struct band *bands, size_t nb, size_t dropped);
void rm_report_write_charts(struct report *r);

/* ---- report_throttle.c ---- */

/* The name of reason k ("sw_power_cap"). */
const char *rm_report_thr_name(int k);
/* Forgets the columns of the previous gpu.csv. */
void rm_report_thr_reset(struct report *r);
/* A header row: maps its clocks_event_reasons.* / clocks_throttle_reasons.* columns. */
void rm_report_thr_header(struct report *r, const struct rm_csv_row *row);
/* A data row of GPU t at time t_ns: the reasons active in it extend or open their spans. */
void rm_report_thr_row(struct report *r, struct gpu_track *t, int64_t t_ns,
                       const struct rm_csv_row *row);
/* Closes the open spans (the end of the data). */
void rm_report_thr_finish(struct report *r);
void rm_report_thr_free(struct gpu_track *t);

/* ---- report_tables.c ---- */

/* v / div with dec decimals (-1: %g) and a suffix, or a dash when v is not a number. */
void rm_report_num(FILE *o, const json_t *v, int dec, const char *suffix, double div);
void rm_report_str_or_dash(FILE *o, const json_t *v);
/* The same for a name in a table cell: cut past RM_HTML_NAME_MAX characters (rm_html_name). */
void rm_report_name_or_dash(FILE *o, const json_t *v);
void rm_report_write_cards(struct report *r);
void rm_report_write_gpu_table(struct report *r);
void rm_report_write_phase_table(struct report *r);
void rm_report_write_events(struct report *r);
void rm_report_write_quality(struct report *r);

/* ---- report_apps.c ---- */

/* The summary's gpus[].processes and per-GPU workload/other VRAM; nothing without them. */
void rm_report_write_processes(struct report *r);
/* Per phase: the framework's peak and the workload's peak VRAM; nothing without them. */
void rm_report_write_phase_memory(struct report *r);

#endif
