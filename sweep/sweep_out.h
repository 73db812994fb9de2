/* The sweep table of `runmon sessions --summary`: the runs of sweep/sweep_rows.h written as
 * text (every line fitted to the terminal: values cut, then columns left out, the session id
 * cut last; the best value of each figure marked), CSV or JSON (complete: docs/FORMATS.md,
 * "The sweep table"), one row per run or, with group_by, one per value of a parameter or
 * combination of several's values (mean, min, max and std of each figure over its runs). */
#ifndef RUNMON_REPORT_SWEEP_OUT_H
#define RUNMON_REPORT_SWEEP_OUT_H

#include <stddef.h>
#include <stdio.h>

#include "sweep/out_format.h"
#include "sweep/sweep_judge.h"
#include "sweep/sweep_rows.h"

/* The sweep table's options (the plain listing has its own: struct rm_sessions_opts). */
struct rm_sweep_opts {
    const char *const *sinks; /* the sinks of the sweep, opened (rm_sinks_open); at least one */
    size_t n_sinks;
    enum rm_sessions_format format;
    const char *sort_by;       /* a field of rm_session_sort_fields, or NULL: the runs' order */
    int csv_escape;            /* base/termsafe.h's RM_CSV_TERM, RM_CSV_SAFE (--csv-safe) */
    const char *sweep_name;    /* --sweep NAME: its runs only */
    const char *const *phases; /* --phase PATH: these phases' columns (else those all share) */
    size_t n_phases;
    const char *group_by;       /* --group-by PARAM[,PARAM...], or NULL */
    int wide;                   /* --wide: nothing cut */
    int device_vram;            /* --device-vram: the GPUs' peak VRAM beside the workload's */
    int columns;                /* the text's width (COLUMNS, else 100) */
    struct rm_judge_opts judge; /* --objective, --cost, --target (sweep/sweep_judge.h) */
};

/* Loads the runs of o->sweep_name from o->sinks (rm_sweep_load: the sweep filter before any
 * summary.json is read), sorts them by o->sort_by and writes their table. 0, or -1 with err
 * (a sink's index could not be read; an unknown or repeated --group-by parameter). */
int rm_sweep_table_print(FILE *out, const struct rm_sweep_opts *o, char *err, size_t errsz);

/* Writes the table of s (loaded from o->sinks) as o says. 0, or -1 with err (an unknown or
 * repeated --group-by parameter). */
int rm_sweep_print(FILE *out, const struct rm_sweep_opts *o, const struct rm_sweep *s, char *err,
                   size_t errsz);

#endif
