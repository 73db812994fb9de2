/* libFuzzer: apps.csv rows through the reader, the row parser and the per-sample figures; the
 * same bytes as nvidia-smi's own per-process outputs (pmon text, compute-apps and
 * accounted-apps CSV) and through the sniffer that tells them apart. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "summary/apps.h"
#include "summary/csvread.h"
#include "summary/smi_apps.h"
#include "summary/sniff.h"

struct ctx {
    struct rm_appscsv p;
    struct rm_smi_apps_csv smi;
    struct rm_apps_agg a;
};

static const size_t phase0 = 0;

static void add(struct ctx *c, const struct rm_app_row *a)
{
    if (rm_apps_starts_sample(&c->a, a)) rm_apps_close(&c->a, &phase0, 1);
    rm_apps_add(&c->a, a);
}

static void row(void *v, const struct rm_csv_row *r)
{
    struct ctx *c = v;
    struct rm_app_row a;
    if (rm_appscsv_row(&c->p, r, &a) == 1) add(c, &a);
}

static void smi_row(void *v, const struct rm_csv_row *r)
{
    struct ctx *c = v;
    struct rm_app_row a;
    if (rm_smi_apps_csv_row(&c->smi, r, &a) == 1) add(c, &a);
}

static void feed_csv(struct ctx *c, rm_csv_row_fn fn, const char *header, const uint8_t *data,
                     size_t size)
{
    struct rm_csv_reader *r = rm_csv_new(fn, c);
    if (!r) return;
    if (header) rm_csv_feed(r, header, strlen(header));
    rm_csv_feed(r, (const char *)data, size);
    rm_csv_finish(r);
    rm_csv_free(r);
}

static void feed_pmon(struct ctx *c, const uint8_t *data, size_t size)
{
    static struct rm_pmon_map m;
    rm_pmon_map_init(&m);
    const char *p = (const char *)data, *end = p + size;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        struct rm_app_row a;
        if (rm_pmon_text_line(&m, p, (size_t)((nl ? nl : end) - p), !nl, &a) == 1) add(c, &a);
        p = nl ? nl + 1 : end;
    }
}

/* Closes, merges and frees the figures of one pass. */
static void finish(struct ctx *c)
{
    rm_apps_close(&c->a, &phase0, 1);
    struct rm_apps_agg m;
    rm_apps_init(&m, 1);
    rm_apps_merge(&m, &c->a);
    rm_apps_free(&m);
    rm_apps_free(&c->a);
}

/* libFuzzer calls it; declared here for -Wmissing-prototypes. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct ctx c;
    static const char header[] = "ts,gpu,uuid,pid,process,vram_mb,sm_pct,in_workload\n";
    static const char *const smi_headers[] = {
        "timestamp, gpu_uuid, pid, process_name, used_gpu_memory [MiB]\n",
        "gpu_name, pid, time [ms], gpu_utilization [%], mem_utilization [%], "
        "max_memory_usage [MiB]\n"};
    (void)rm_sniff_text((const char *)data, size);
    (void)rm_sniff_apps_kind((const char *)data, size);

    rm_appscsv_init(&c.p);
    rm_apps_init(&c.a, 1);
    feed_csv(&c, row, size & 1 ? header : NULL, data, size); /* with and without a header */
    finish(&c);

    rm_smi_apps_csv_init(&c.smi);
    rm_apps_init(&c.a, 1);
    feed_csv(&c, smi_row, size & 2 ? smi_headers[size >> 2 & 1] : NULL, data, size);
    finish(&c);

    rm_apps_init(&c.a, 1);
    feed_pmon(&c, data, size);
    finish(&c);
    return 0;
}
