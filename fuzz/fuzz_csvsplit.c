/* libFuzzer target, differential: every line splits into the same fields through
 * rm_csv_split_line (whose quote-free lines skip libcsv) as through libcsv alone, and every
 * field written by rm_csv_put_field reads back as itself. `make fuzz` builds and runs it. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "base/csvfields.h"
#include "base/csvwrite.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAXF 256

static int split(const char *s, size_t n, struct rm_csv_fields *f, int libcsv_only)
{
    struct csv_parser p;
    if (csv_init(&p, 0) != 0) return -2;
    int r;
    if (libcsv_only) {
        rm_csv_fields_clear(f);
        size_t used = csv_parse(&p, (void *)(uintptr_t)s, n, rm_csv_fields_cb, NULL, f);
        csv_fini(&p, used == n ? rm_csv_fields_cb : NULL, NULL, f);
        r = used != n || f->overflow ? -1 : (int)f->n;
    } else {
        r = rm_csv_split_line(&p, s, n, f);
    }
    csv_free(&p);
    return r;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static char sa[1 << 17], sb[1 << 17], w[3 * 65536 + 3];
    static size_t oa[MAXF], la[MAXF], ob[MAXF], lb[MAXF];
    if (size > 65536) return 0;
    const char *s = (const char *)data;
    struct rm_csv_fields a = {.store = sa, .cap = sizeof sa, .max = MAXF, .off = oa, .len = la};
    struct rm_csv_fields b = {.store = sb, .cap = sizeof sb, .max = MAXF, .off = ob, .len = lb};
    int na = split(s, size, &a, 1), nb = split(s, size, &b, 0);
    if (na != nb) __builtin_trap();
    for (int i = 0; i < na; i++)
        if (la[i] != lb[i] || memcmp(sa + oa[i], sb + ob[i], la[i])) __builtin_trap();
    /* The input as one field, written then read back. */
    size_t n = rm_csv_put_field(w, sizeof w, s, size);
    if (size && !n) __builtin_trap();
    int quoted = n > 0 && w[0] == '"' && n != size;
    if (!quoted && (n != size || memcmp(w, s, size))) __builtin_trap();
    return 0;
}
