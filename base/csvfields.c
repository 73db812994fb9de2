#include "base/csvfields.h"

#include <stdint.h>

void rm_csv_fields_cb(void *data, size_t len, void *ctx)
{
    rm_csv_fields_add(ctx, data, len);
}

/* The blanks libcsv trims from the ends of an unquoted field (its default space rule). */
static inline int is_blank(char c)
{
    return c == ' ' || c == '\t';
}

/* A line without a quote or a line-end byte splits on its commas alone, exactly as libcsv
 * splits it (tests/unit/test_csvfields.c compares the two on random lines). libcsv's per-byte
 * state machine was the largest part of the live collectors' own CPU at 8 GPUs x 0.1 s
 * (issue 24); nvidia-smi's query lines never hold a quote. */
static int split_plain(const char *line, size_t len, struct rm_csv_fields *f)
{
    const char *p = line, *end = line + len;
    for (;;) {
        const char *comma = memchr(p, ',', (size_t)(end - p));
        const char *a = p, *b = comma ? comma : end;
        while (a < b && is_blank(*a))
            a++;
        while (b > a && is_blank(b[-1]))
            b--;
        rm_csv_fields_add(f, a, (size_t)(b - a));
        if (!comma) break;
        p = comma + 1;
    }
    return f->overflow ? -1 : (int)f->n;
}

bool rm_csv_is_plain(const char *line, size_t len)
{
    return !memchr(line, '"', len) && !memchr(line, '\n', len) && !memchr(line, '\r', len);
}

int rm_csv_split_line(struct csv_parser *p, const char *line, size_t len, struct rm_csv_fields *f)
{
    rm_csv_fields_clear(f);
    f->plain = rm_csv_is_plain(line, len);
    if (f->plain) {
        size_t lead = 0;
        while (lead < len && is_blank(line[lead]))
            lead++;
        if (lead == len) return 0; /* empty or blanks only: libcsv sees no row */
        return split_plain(line, len, f);
    }
    /* libcsv's prototypes are not const-correct on Debian; it does not write the input. */
    if (csv_parse(p, (void *)(uintptr_t)line, len, rm_csv_fields_cb, NULL, f) != len) {
        csv_fini(p, NULL, NULL, NULL);
        return -1;
    }
    csv_fini(p, rm_csv_fields_cb, NULL, f);
    return f->overflow ? -1 : (int)f->n;
}
