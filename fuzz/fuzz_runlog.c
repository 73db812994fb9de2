/* libFuzzer: run-log lines, phase matching and the window index; and the fast reader (lines
 * without a JSON tree) against the general one, line by line. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "summary/csvread.h"
#include "summary/runlog_read.h"

/* Both readers, the same state after each line (abort() makes libFuzzer keep the input). */
struct both {
    struct rm_phase_index fast, general;
};

static void same(const struct rm_phase_index *a, const struct rm_phase_index *b)
{
    if (a->lines != b->lines || a->events != b->events || a->torn != b->torn ||
        a->garbage != b->garbage || a->bad_time != b->bad_time ||
        a->unmatched_exits != b->unmatched_exits || a->first_ns != b->first_ns ||
        a->last_ns != b->last_ns || a->nphases != b->nphases || a->other != b->other ||
        a->folded_paths != b->folded_paths || a->nwin != b->nwin || a->nopen != b->nopen)
        abort();
    for (size_t i = 0; i < a->nphases; i++) {
        const struct rm_phase *x = &a->phases[i], *y = &b->phases[i];
        if (strcmp(x->path, y->path) || x->depth != y->depth || x->count != y->count ||
            x->ok != y->ok || x->error != y->error ||
            memcmp(&x->total_s, &y->total_s, sizeof x->total_s) ||
            x->first_start_ns != y->first_start_ns || x->last_end_ns != y->last_end_ns)
            abort();
    }
    if (a->nwin && memcmp(a->win, b->win, a->nwin * sizeof *a->win)) abort();
    if (a->nopen && memcmp(a->open, b->open, a->nopen * sizeof *a->open)) abort();
}

static void line(void *ctx, const char *s, size_t len, bool torn)
{
    struct both *b = ctx;
    rm_runlog_line(&b->fast, s, len, torn);
    rm_runlog_line(&b->general, s, len, torn);
    same(&b->fast, &b->general);
}
static void hit(void *ctx, size_t phase)
{
    *(size_t *)ctx += phase + 1;
}

/* libFuzzer calls it; declared here for -Wmissing-prototypes. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct both b;
    rm_runlog_init(&b.fast);
    rm_runlog_init(&b.general);
    b.fast.max_phases = b.general.max_phases = 8; /* folding too */
    b.general.general_only = true;
    rm_split_lines((const char *)data, size, 1 << 20, line, &b, NULL);
    rm_runlog_free(&b.general);
    struct rm_phase_index r = b.fast;
    rm_runlog_finish(&r, r.last_ns, NULL, NULL);
    size_t sum = 0;
    if (r.first_ns != INT64_MIN)
        for (int i = 0; i < 8; i++)
            rm_runlog_windows_at(&r, r.first_ns + (int64_t)i * 500000000LL, hit, &sum);
    rm_runlog_free(&r);
    return 0;
}
