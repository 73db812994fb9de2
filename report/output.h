/* The summary document (summary/summary.h: rm_summary_build) written out: as text for a
 * terminal, as CSV rows, or as JSON. All three read the JSON object, so a summary.json
 * written earlier prints the same way. */
#ifndef RUNMON_REPORT_OUTPUT_H
#define RUNMON_REPORT_OUTPUT_H

#include <jansson.h>
#include <stdio.h>

void rm_summary_print_text(FILE *out, const json_t *summary);
void rm_summary_print_csv(FILE *out, const json_t *summary);
/* Compact-free, stable JSON with a final newline. */
int rm_summary_print_json(FILE *out, const json_t *summary);

#endif
