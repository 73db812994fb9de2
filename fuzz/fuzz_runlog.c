/* libFuzzer: run-log lines, phase matching and the window index. */
#include <stddef.h>
#include <stdint.h>

#include "summary/csvread.h"
#include "summary/runlog_read.h"

static void line(void *ctx, const char *s, size_t len, bool torn)
{
    rm_runlog_line(ctx, s, len, torn);
}
static void hit(void *ctx, size_t phase)
{
    *(size_t *)ctx += phase + 1;
}

/* libFuzzer calls it; declared here for -Wmissing-prototypes. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct rm_runlog r;
    rm_runlog_init(&r);
    rm_split_lines((const char *)data, size, 1 << 20, line, &r, NULL);
    rm_runlog_finish(&r, r.last_ns, NULL, NULL);
    size_t sum = 0;
    if (r.first_ns != INT64_MIN)
        for (int i = 0; i < 8; i++)
            rm_runlog_windows_at(&r, r.first_ns + (int64_t)i * 500000000LL, hit, &sum);
    rm_runlog_free(&r);
    return 0;
}
