/* libFuzzer: apps.csv rows through the reader, the row parser and the per-sample figures. */
#include <stddef.h>
#include <stdint.h>

#include "summary/apps.h"
#include "summary/csvread.h"

struct ctx {
    struct rm_appscsv p;
    struct rm_apps_agg a;
};

static void row(void *v, const struct rm_csv_row *r)
{
    struct ctx *c = v;
    struct rm_app_row a;
    static const size_t phase0 = 0;
    if (rm_appscsv_row(&c->p, r, &a) != 1) return;
    if (rm_apps_starts_sample(&c->a, &a)) rm_apps_close(&c->a, &phase0, 1);
    rm_apps_add(&c->a, &a);
}

/* libFuzzer calls it; declared here for -Wmissing-prototypes. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct ctx c;
    static const char header[] = "ts,gpu,uuid,pid,process,vram_mb,sm_pct,in_workload\n";
    rm_appscsv_init(&c.p);
    rm_apps_init(&c.a, 1);
    struct rm_csv_reader *r = rm_csv_new(row, &c);
    if (!r) return 0;
    if (size & 1) rm_csv_feed(r, header, sizeof header - 1); /* with and without a header */
    rm_csv_feed(r, (const char *)data, size);
    rm_csv_finish(r);
    rm_csv_free(r);
    static const size_t phase0 = 0;
    rm_apps_close(&c.a, &phase0, 1);
    struct rm_apps_agg m;
    rm_apps_init(&m, 1);
    rm_apps_merge(&m, &c.a);
    rm_apps_free(&m);
    rm_apps_free(&c.a);
    return 0;
}
