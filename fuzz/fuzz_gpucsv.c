/* libFuzzer: query-gpu CSV rows through the reader, the mapper and the statistics. */
#include <stddef.h>
#include <stdint.h>

#include <stdlib.h>
#include <string.h>

#include "model/values.h"
#include "summary/csvread.h"
#include "summary/fastvalue.h"
#include "summary/gpucsv.h"
#include "summary/stats.h"

struct ctx {
    struct rm_gpucsv g;
    struct rm_gpu_stats st;
};

static void row(void *p, const struct rm_csv_row *r)
{
    struct ctx *c = p;
    /* The inline value parser agrees with the general one, bit for bit, wherever it answers. */
    for (size_t i = 0; i < r->n; i++) {
        double a, b;
        int fast = rm_fast_value(r->f[i], r->len[i], &a);
        if (fast &&
            (rm_value_parse(r->f[i], r->len[i], &b) != RM_VALUE_OK || memcmp(&a, &b, sizeof a)))
            abort();
        /* Its word path answers as its byte-by-byte path does. */
        if (fast != rm_fast_value_bytewise(r->f[i], r->len[i], &b) ||
            (fast && memcmp(&a, &b, sizeof a)))
            abort();
    }
    struct rm_gpu_sample s;
    if (rm_gpucsv_row(&c->g, r, &s) == 1) rm_stats_add(&c->st, s.t_ns, s.v, s.valid, 3000000000LL);
}

/* libFuzzer calls it; declared here for -Wmissing-prototypes. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct ctx c;
    rm_gpucsv_init(&c.g, size & 1 ? "ts,index,utilization.gpu,power.draw" : NULL);
    rm_stats_init(&c.st);
    struct rm_csv_reader *r = rm_csv_new(row, &c);
    if (!r) return 0;
    /* Two pieces, so a row split across reads is exercised too. */
    size_t half = size / 2;
    rm_csv_feed(r, (const char *)data, half);
    rm_csv_feed(r, (const char *)data + half, size - half);
    rm_csv_finish(r);
    rm_csv_free(r);
    json_t *j = rm_stats_to_json(&c.st);
    struct rm_gpu_stats back;
    char err[64];
    if (j) rm_stats_from_json(j, &back, err, sizeof err);
    json_decref(j);
    return 0;
}
