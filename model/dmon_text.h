/* `nvidia-smi dmon` text, one line at a time.
 *
 * dmon prints a header line of column names ("# gpu    pwr  gtemp ..."), a units line
 * ("# Idx      W      C ..."), then whitespace-aligned data rows; with -o D/T/DT the header
 * starts "#Date       Time        gpu" and rows "20261121 10:15:02    0 ...". The header is
 * repeated from time to time, its widths may differ from the rows', and drivers rename
 * columns (temp -> gtemp mtemp), so lines are split on blanks and columns found by name.
 * One description of the format, for the live collector (monitor/gpu_collectors.c turns
 * dmon's stdout into CSV rows) and the summary's reader of dmon files (summary/dmon_read.c).
 */
#ifndef RUNMON_MODEL_DMON_TEXT_H
#define RUNMON_MODEL_DMON_TEXT_H

#include <stdbool.h>
#include <stddef.h>

#define RM_DMON_MAX_FIELDS 64

enum rm_dmon_kind {
    RM_DMON_OTHER = 0, /* blank, notice, error text, or a line with too many fields */
    RM_DMON_HEADER,    /* column names: tok[] are the names without the leading '#' */
    RM_DMON_UNITS,     /* units line ("# Idx W C ..."): tok[] are the units */
    RM_DMON_DATA,      /* a data row: tok[] are its fields, as printed ("-" = missing) */
};

struct rm_dmon_tok {
    const char *s; /* points into the classified line */
    size_t len;
};

struct rm_dmon_line {
    enum rm_dmon_kind kind;
    size_t n;
    struct rm_dmon_tok tok[RM_DMON_MAX_FIELDS];
};

/* Classifies line[0..len) (a trailing "\r\n" or "\n" is ignored) and splits it on blanks.
 * A '#' line naming a "gpu" column is a header; one naming "Idx" the units; a line whose
 * first field is all digits (a GPU index, or a -o D date) with at least two fields is data.
 * Returns out->kind. Tokens point into line, so line must outlive out. */
int rm_dmon_classify(const char *line, size_t len, struct rm_dmon_line *out);

/* Index of the column called name in a header, or -1. */
int rm_dmon_find(const struct rm_dmon_line *header, const char *name);

/* The Date and Time columns of `-o DT` ("20261121", "10:15:02": local time, whole seconds) as
 * "2026<sep>11<sep>21 10:15:02" in out (20 bytes with the NUL), for the time parsers. Returns
 * 19, or -1 when they do not have that shape. */
int rm_dmon_date_time_text(const char *date, size_t date_len, const char *time, size_t time_len,
                           char sep, char out[20]);

#endif
