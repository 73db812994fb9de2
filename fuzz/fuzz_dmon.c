/* libFuzzer: dmon text lines (classifier + mapper) and dmon.csv rows. */
#include <stddef.h>
#include <stdint.h>

#include "summary/csvread.h"
#include "summary/dmon_read.h"

static struct rm_dmon_map m;

static void line(void *ctx, const char *s, size_t len, bool torn)
{
    (void)ctx;
    struct rm_gpu_sample out;
    rm_dmon_text_line(&m, s, len, torn, &out);
}

static void row(void *ctx, const struct rm_csv_row *r)
{
    (void)ctx;
    struct rm_gpu_sample out;
    rm_dmon_csv_row(&m, r, &out);
}

/* libFuzzer calls it; declared here for -Wmissing-prototypes. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    rm_dmon_map_init(&m);
    rm_split_lines((const char *)data, size, 65536, line, NULL, NULL);
    rm_dmon_map_init(&m);
    struct rm_csv_reader *r = rm_csv_new(row, NULL);
    if (r) {
        rm_csv_feed(r, (const char *)data, size);
        rm_csv_finish(r);
        rm_csv_free(r);
    }
    return 0;
}
