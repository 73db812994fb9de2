/* `runmon sessions` written out: the listing of a sink's sessions as text, CSV or JSON, and
 * the sweep table (--summary: each session's figures from its summary.json). The rows come
 * from sweep/sessions_rows.h. The plain listing streams the index (constant memory); a
 * sorted listing and the sweep table hold every row.
 *
 * Text and CSV are tables of column descriptors in sessions_out.c, so a column is one entry:
 * a text column (listing_cols) is a title, an alignment, its widest and narrowest widths and
 * a cell function; every line of the text fits `columns` (the listing reads the index twice:
 * the cells' widths, then the rows; the sweep table: sweep/sweep_out.c); a CSV column (csv_cols)
 * is the JSON key a held row's value is read by, and a cell function for a streamed index record.
 * The text escapes what the sessions recorded (a command line, a host: base/termsafe.h), and so
 * does CSV written to a terminal; JSON, and CSV to a file or a pipe, keep it exact. */
#ifndef RUNMON_REPORT_SESSIONS_OUT_H
#define RUNMON_REPORT_SESSIONS_OUT_H

#include <stddef.h>
#include <stdio.h>

#include "sweep/sweep_judge.h"

enum rm_sessions_format { RM_SESSIONS_TEXT, RM_SESSIONS_JSON, RM_SESSIONS_CSV };

struct rm_sessions_opts {
    const char *dir; /* the sink, opened (rm_sink_open_index) */
    enum rm_sessions_format format;
    int sweep;           /* --summary: the sweep table */
    const char *sort_by; /* a field of rm_session_sort_fields, or NULL: the index's order */
    int csv_escape;      /* how CSV fields are written: base/termsafe.h's RM_CSV_TERM (escaped as
                            text is: it goes to a terminal), RM_CSV_SAFE (--csv-safe) */
    /* The sweep table's (sweep/sweep_out.h): */
    const char *const *sinks;  /* the sinks of the sweep (dir is the first) */
    size_t n_sinks;            /* 0: dir alone */
    const char *sweep_name;    /* --sweep NAME: its runs only (the plain listing too) */
    const char *const *phases; /* --phase PATH: these phases' columns (else those all share) */
    size_t n_phases;
    const char *group_by;       /* --group-by PARAM[,PARAM...], or NULL */
    int wide;                   /* --wide: nothing cut */
    int device_vram;            /* --device-vram: the GPUs' peak VRAM beside the workload's */
    int columns;                /* the text's width (COLUMNS, else 100) */
    struct rm_judge_opts judge; /* --objective, --cost, --target (sweep/sweep_judge.h) */
};

/* Writes the listing to out. 0, or -1 with err (the index could not be read). */
int rm_sessions_print(FILE *out, const struct rm_sessions_opts *o, char *err, size_t errsz);

#endif
