/* The text summary's I/O lines (issue 23), from summary.json's "io" objects: one line of
 * the run's figures under Totals, and a table of the phases' figures. Nothing is printed for
 * a summary without io.csv. */
#ifndef RUNMON_REPORT_OUTPUT_IO_H
#define RUNMON_REPORT_OUTPUT_IO_H

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>

/* "  I/O  disk read .. write .. MB/s ..." from summary["io"]. */
void rm_print_io_totals(FILE *out, const json_t *summary);
/* Whether a phase row has an "io" object; the table's title; one row's line (nothing
 * without "io"), for the writers that take the rows one at a time. */
bool rm_io_phase_has(const json_t *phase);
void rm_print_io_phase_title(FILE *out);
void rm_print_io_phase_line(FILE *out, const json_t *phase);
/* "I/O by phase" from each phase's "io". */
void rm_print_io_phases(FILE *out, const json_t *phases);

#endif
