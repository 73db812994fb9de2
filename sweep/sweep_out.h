/* The sweep table of `runmon sessions --summary`: the runs of sweep/sweep_rows.h written as
 * text (every line fitted to the terminal: values cut, then columns left out, the session id
 * cut last; the best value of each figure marked), CSV or JSON (complete: docs/FORMATS.md,
 * "The sweep table"), one row per run or, with group_by, one per value of a parameter or
 * combination of several's values (mean, min, max and std of each figure over its runs). */
#ifndef RUNMON_REPORT_SWEEP_OUT_H
#define RUNMON_REPORT_SWEEP_OUT_H

#include <stdio.h>

#include "sweep/sessions_out.h"
#include "sweep/sweep_rows.h"

/* Writes the table of s (loaded from o->sinks) as o says. 0, or -1 with err (an unknown or
 * repeated --group-by parameter). */
int rm_sweep_print(FILE *out, const struct rm_sessions_opts *o, const struct rm_sweep *s, char *err,
                   size_t errsz);

#endif
