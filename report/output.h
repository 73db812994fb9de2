/* The summary document (summary/summary.h: rm_summary_build) written out: as text for a
 * terminal, as CSV rows, or as JSON. All three read the JSON object, so a summary.json
 * written earlier prints the same way. */
#ifndef RUNMON_REPORT_OUTPUT_H
#define RUNMON_REPORT_OUTPUT_H

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>

#include "model/objects.h"

void rm_summary_print_text(FILE *out, const json_t *summary);
/* safe: for a spreadsheet (--csv-safe): a cell it could take for a formula gets a leading '
 * (base/termsafe.h, RM_CSV_SAFE). */
void rm_summary_print_csv(FILE *out, const json_t *summary, bool safe);
/* Compact-free, stable JSON with a final newline. */
int rm_summary_print_json(FILE *out, const json_t *summary);

/* The same JSON, byte for byte, with the rows of "phases" written one at a time as the
 * summary makes them (rm_summary_opts.phase_row = rm_summary_stream_row, its ctx a
 * struct rm_json_stream), so no more than one row's JSON is held. Once the summary is built,
 * rm_summary_stream_end writes the keys after "phases"; it returns 0 or -1 (write error). */
struct rm_json_stream {
    FILE *out;
    size_t keys;    /* top-level keys written so far */
    size_t rows;    /* phase rows written so far */
    bool in_phases; /* "phases": [ is open */
    bool failed;    /* a write failed */
};
void rm_summary_stream_row(void *ctx, const json_t *doc, json_t *row);
int rm_summary_stream_end(struct rm_json_stream *st, const json_t *summary);

/* Text or CSV the same way: the part before the phases when the first row comes, each row
 * as it comes, the rest at rm_summary_text_end (it returns 0 or -1). Zero the struct and set
 * out, csv, and path: the first line's PATH when the summary has no "path" yet (a sink's
 * session, whose "path" rm_sink_summary adds after the build). summary NULL (the build
 * failed): rm_summary_text_end only frees what the stream held. */
struct rm_text_stream {
    FILE *out;
    bool csv;
    bool csv_safe; /* as rm_summary_print_csv's safe */
    const char *path;
    /* state */
    bool started, memory, failed;
    int tty;
    size_t rows;
    FILE *memory_lines; /* the "Memory by phase" lines, printed after the phases */
    char *memory_buf;
    size_t memory_len;
    /* each object's table by phase (model/objects.h: "I/O by phase"), after the memory table */
    FILE *obj_lines[RM_OBJ_COUNT];
    char *obj_buf[RM_OBJ_COUNT];
    size_t obj_len[RM_OBJ_COUNT];
};
void rm_summary_text_row(void *ctx, const json_t *doc, json_t *row);
int rm_summary_text_end(struct rm_text_stream *st, const json_t *summary);

#endif
