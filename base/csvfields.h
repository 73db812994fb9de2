/* The fields of one CSV row as libcsv hands them over, copied into one store so that a caller
 * can look at all fields of the row together. The one copy of that step, shared by the live
 * nvidia-smi collectors (one line at a time, a fixed store) and the summary's file reader
 * (rows of any size, a store that grows).
 */
#ifndef RUNMON_BASE_CSVFIELDS_H
#define RUNMON_BASE_CSVFIELDS_H

#include <csv.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

struct rm_csv_fields {
    char *store; /* field i is store + off[i], NUL-terminated, len[i] bytes */
    size_t cap, used;
    bool grow;     /* store is malloc'd and grows; else a full store is an overflow */
    size_t max, n; /* off[] and len[] hold max entries */
    size_t *off, *len;
    bool overflow; /* a field did not fit: the row is not whole */
    bool plain;    /* rm_csv_split_line: the line held no quote, CR or LF (rm_csv_is_plain) */
};

/* Appends one field (called per field; inline because the summary calls it at GB/s). */
static inline void rm_csv_fields_add(struct rm_csv_fields *f, const void *data, size_t len)
{
    if (f->n == f->max || f->overflow) {
        f->overflow = true;
        return;
    }
    if (f->used + len + 1 > f->cap) {
        size_t cap = f->cap ? f->cap : 4096;
        while (cap < f->used + len + 1)
            cap *= 2;
        char *nb = f->grow ? realloc(f->store, cap) : NULL;
        if (!nb) {
            f->overflow = true;
            return;
        }
        f->store = nb;
        f->cap = cap;
    }
    if (len) memcpy(f->store + f->used, data, len);
    f->store[f->used + len] = '\0';
    f->off[f->n] = f->used;
    f->len[f->n] = len;
    f->n++;
    f->used += len + 1;
}

/* Empties the row (the store is kept). */
static inline void rm_csv_fields_clear(struct rm_csv_fields *f)
{
    f->n = f->used = 0;
    f->overflow = false;
}

/* libcsv's field callback: ctx is a struct rm_csv_fields. */
void rm_csv_fields_cb(void *data, size_t len, void *ctx);

/* Whether the line holds no quote and no line-end byte: it then splits on its commas alone,
 * and none of its fields needs quoting when written again (base/csvwrite.h). */
bool rm_csv_is_plain(const char *line, size_t len);

/* Splits one line (no line end needed) with parser p into f, emptied first. Unquoted fields
 * are trimmed of blanks (libcsv's rule). Returns the number of fields, or -1 when the line is
 * not one whole row (a parse error or a field that did not fit). */
int rm_csv_split_line(struct csv_parser *p, const char *line, size_t len, struct rm_csv_fields *f);

#endif
