/* `runmon report`: a self-contained HTML dashboard of one recorded session.
 *
 * The page has inline SVG timelines on a shared time axis (GPU utilization, VRAM, GPU memory
 * by process when there is an apps.csv, power, temperature, SM clock with the throttle
 * reasons when recorded, host CPU, host memory, the command's RSS) with the run's phases
 * drawn as bands behind the curves, alert and collector markers, summary cards and the
 * per-GPU, per-process and per-phase tables of the ResourceSummary. No network, no
 * framework: inline CSS, SVG and plain JavaScript (hover read-out, drag-to-zoom on one
 * shared time range). docs/FORMATS.md ("report.html") has the layout.
 *
 * Long sessions are downsampled while streaming the CSVs: every series keeps, per time
 * bucket, its minimum and its maximum sample (in time order), so every peak and trough
 * stays visible whatever the session's length; memory is bounded by the bucket count.
 */
#ifndef RUNMON_SUMMARY_REPORT_H
#define RUNMON_SUMMARY_REPORT_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Buckets per series: at most two points each. */
#define RM_REPORT_BUCKETS 500
/* A spacing between two samples of a series longer than this many intervals is a gap. */
#define RM_REPORT_GAP_FACTOR 3
#define RM_SERIES_MAX_GAPS 4096
#define RM_SERIES_EST 32

/* ---- downsampling (summary/report_series.c) ------------------------------------------ */

struct rm_ds_bucket {
    uint32_t n;
    int64_t tmin, tmax; /* times of the minimum and maximum sample */
    double vmin, vmax;
};

struct rm_ds_gap {
    int64_t a, b; /* no sample of the series in (a, b) */
};

struct rm_ds_point {
    int64_t t;
    double v;
    bool brk; /* a gap lies between the previous point and this one: start a new line */
};

struct rm_series {
    int64_t t0, t1; /* the time range the buckets cover; samples outside go to the edges */
    size_t nb;
    struct rm_ds_bucket *b;
    int64_t gap_ns; /* 0: estimated from the first RM_SERIES_EST spacings */
    int64_t last_t; /* INT64_MIN before the first sample */
    struct rm_ds_gap *gaps;
    size_t ngaps, capgaps;
    struct rm_ds_gap est[RM_SERIES_EST]; /* spacings waiting for the estimate */
    size_t nest;
    uint64_t n;
    double vmin, vmax; /* over all samples */
};

/* gap_ns: spacing above which consecutive samples are not joined; 0 estimates it as
 * RM_REPORT_GAP_FACTOR x the median of the first spacings. Returns 0, or -1 (no memory). */
int rm_series_init(struct rm_series *s, int64_t t0, int64_t t1, size_t nbuckets, int64_t gap_ns);
void rm_series_free(struct rm_series *s);
/* Non-finite values are ignored (missing, never 0). */
void rm_series_add(struct rm_series *s, int64_t t, double v);
/* The downsampled points in time order (at most 2 per bucket), each marked where a gap
 * precedes it. Returns the count; *out is malloc'd (NULL when 0). */
size_t rm_series_points(struct rm_series *s, struct rm_ds_point **out);

/* ---- HTML (summary/report_html.c) ---------------------------------------------------- */

/* Writes s[0..len) escaped for HTML text and attribute values (also inside SVG): & < > " '
 * become entities, control characters other than tab and newline become spaces, bytes that
 * are not UTF-8 become U+FFFD. */
void rm_html_escape(FILE *out, const char *s, size_t len);
void rm_html_escape_str(FILE *out, const char *s);

/* A name in a table cell (a phase path): escaped, and past RM_HTML_NAME_MAX characters cut
 * with an ellipsis, the whole name in the cell's tooltip (a 3,000-character name would
 * otherwise make its table rows thousands of pixels tall on a phone). */
#define RM_HTML_NAME_MAX 48
void rm_html_name(FILE *out, const char *s);

/* ---- the report (summary/report.c) ---------------------------------------------------- */

/* Builds the report of the session folder dir into a malloc'd buffer. summary may be NULL
 * (then summary.json, else rm_summary_session_dir). Returns 0; 2 when the folder has no
 * data (err says why); 1 on a runtime failure. */
int rm_report_build(const char *dir, const json_t *summary, char **html, size_t *len, char *err,
                    size_t errsz);

/* `runmon report` (summary/cmd_report.c). */
int rm_cmd_report(int argc, char **argv);

#endif
