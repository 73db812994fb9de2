#include "base/csvfields.h"

#include <stdint.h>

void rm_csv_fields_cb(void *data, size_t len, void *ctx)
{
    rm_csv_fields_add(ctx, data, len);
}

int rm_csv_split_line(struct csv_parser *p, const char *line, size_t len, struct rm_csv_fields *f)
{
    rm_csv_fields_clear(f);
    /* libcsv's prototypes are not const-correct on Debian; it does not write the input. */
    if (csv_parse(p, (void *)(uintptr_t)line, len, rm_csv_fields_cb, NULL, f) != len) {
        csv_fini(p, NULL, NULL, NULL);
        return -1;
    }
    csv_fini(p, rm_csv_fields_cb, NULL, f);
    return f->overflow ? -1 : (int)f->n;
}
