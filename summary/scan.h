/* Scanning one file into its aggregate (fileagg.h): the reader of its input kind row by row
 * (one row of a table per kind), after the sampling interval is found from the file's head
 * when not given; a file without data rows is explained by its first line that is not data.
 */
#ifndef RUNMON_SUMMARY_SCAN_H
#define RUNMON_SUMMARY_SCAN_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "summary/csvread.h"
#include "summary/fileagg.h"

/* Reads f->path into f; f->rc 0, 1 (runtime failure) or 2 (unusable, f->err says why).
 * interval_ns 0: the file's own median spacing. progress (may be NULL) counts bytes. */
void rm_scan_file(struct file_agg *f, int64_t interval_ns, _Atomic uint64_t *progress);

/* rm_scan_file in three steps, for a file read in chunks (chunks.h). */
/* Everything before the rows: the parser, the sampling interval, the file's size. 0, or -1
 * (f->rc and f->err set). */
int rm_scan_prepare(struct file_agg *f, int64_t interval_ns);
/* The rows of bytes [off, end) of the file into f; longl counts lines over a limit, quoted
 * (may be NULL) is set when a '"' was seen. Returns 0, or non-zero when the file could not
 * be read (f->err says why). */
int rm_scan_range(struct file_agg *f, uint64_t off, uint64_t end, _Atomic uint64_t *progress,
                  uint64_t *longl, bool *quoted);
/* After the rows: the last sample group, gaps, notes, and why a file without rows is empty;
 * frees the parser. rc: rm_scan_range's. */
void rm_scan_finish(struct file_agg *f, int rc, uint64_t longl);

/* Parses one CSV row with f's reader (a CSV kind's): 1 for a sample (its time in *t; added
 * to f when add), 0 for a header, or -(1 + enum rm_skip). */
int rm_scan_row(struct file_agg *f, const struct rm_csv_row *row, bool add, int64_t *t);

#endif
