/* Streaming CSV rows on top of libcsv, with bounded memory.
 *
 * Rows are handed over one at a time with their fields copied out of libcsv's buffer (so a
 * callback may look at all fields of the row together). A line longer than RM_CSV_MAX_LINE
 * is dropped (libcsv would otherwise buffer it whole) and parsing resumes after the next
 * newline. The last row of input without a line end is delivered with torn = true.
 */
#ifndef RUNMON_SUMMARY_CSVREAD_H
#define RUNMON_SUMMARY_CSVREAD_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define RM_CSV_MAX_LINE (1u << 20)
#define RM_CSV_MAX_FIELDS 4096

struct rm_csv_row {
    size_t n;
    const char *const *f; /* field i is f[i][0..len[i]) (not NUL-terminated) */
    const size_t *len;
    uint64_t line; /* 1-based number of the row's first line */
    bool torn;     /* input ended inside this row (no line end) */
    bool overflow; /* more than RM_CSV_MAX_FIELDS fields: n == 0 */
};

typedef void (*rm_csv_row_fn)(void *ctx, const struct rm_csv_row *row);

struct rm_csv_reader;

struct rm_csv_reader *rm_csv_new(rm_csv_row_fn fn, void *ctx);
void rm_csv_free(struct rm_csv_reader *r);
/* Returns 0, or -1 on a libcsv failure (out of memory). */
int rm_csv_feed(struct rm_csv_reader *r, const char *buf, size_t len);
int rm_csv_finish(struct rm_csv_reader *r);
/* Lines dropped for being longer than RM_CSV_MAX_LINE. */
uint64_t rm_csv_long_lines(const struct rm_csv_reader *r);

/* Reads a whole file through a reader, adding the bytes read to *progress (may be NULL).
 * Returns 0, or -1 with a message naming the file in err. On success err is emptied, or holds
 * a note naming the file, the first line and the limit when rows were skipped for being longer
 * than RM_CSV_MAX_LINE or having more than RM_CSV_MAX_FIELDS fields. */
int rm_csv_read_file(const char *path, rm_csv_row_fn fn, void *ctx, _Atomic uint64_t *progress,
                     uint64_t *long_lines, char *err, size_t errsz);
/* The same for bytes [off, end) of the file only (end UINT64_MAX: to its end; off and end at
 * line starts), one chunk of a file parsed in parallel; *quoted (may be NULL) is set when the
 * range holds a '"' (a quoted field could span a chunk boundary). */
int rm_csv_read_range(const char *path, uint64_t off, uint64_t end, rm_csv_row_fn fn, void *ctx,
                      _Atomic uint64_t *progress, uint64_t *long_lines, bool *quoted, char *err,
                      size_t errsz);

#endif

#ifndef RUNMON_SUMMARY_LINES
#define RUNMON_SUMMARY_LINES
/* Line-at-a-time reading with bounded memory: fn gets each line without its "\n" (a "\r"
 * before it is kept), torn = true for a last line with no "\n". Lines longer than max_line
 * are not delivered but counted in *long_lines. Returns 0, or -1 with err naming the file. */
typedef void (*rm_line_fn)(void *ctx, const char *line, size_t len, bool torn);
int rm_read_lines(const char *path, size_t max_line, rm_line_fn fn, void *ctx,
                  _Atomic uint64_t *progress, uint64_t *long_lines, char *err, size_t errsz);
/* The same for bytes [off, end) of the file (end UINT64_MAX: to its end). */
int rm_read_lines_range(const char *path, uint64_t off, uint64_t end, size_t max_line,
                        rm_line_fn fn, void *ctx, _Atomic uint64_t *progress, uint64_t *long_lines,
                        char *err, size_t errsz);
/* The same over a buffer (for tests and fuzzing). */
void rm_split_lines(const char *buf, size_t len, size_t max_line, rm_line_fn fn, void *ctx,
                    uint64_t *long_lines);
#endif
