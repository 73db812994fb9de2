/* One run of a sweep page: its GPUs' total memory from session.json, its gpu.csv streamed into
 * three downsampled series (memory used and power summed over its GPUs, utilization their
 * mean: one value per sample of all GPUs), its run log's metrics (sweep_metrics.c), and
 * summary.json's phases, metrics and objectives. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/jsonpick.h"
#include "base/rm_time.h"
#include "model/gpu_metrics.h"
#include "model/streams.h"
#include "summary/csvread.h"
#include "summary/gpucsv.h"
#include "summary/sample.h"
#include "summary/segments.h"
#include "sweep/sweep_internal.h"

#define SAMPLE_GPUS 64

/* The sample being added up: the rows of one poll, one per GPU, until a GPU repeats. */
struct sample_sum {
    int64_t t;
    size_t n;
    char keys[SAMPLE_GPUS][32];
    double v[SW_COUNT];
    unsigned nv[SW_COUNT];
};

struct stream_ctx {
    struct rm_gpucsv g;
    struct rm_series s[SW_COUNT];
    struct sample_sum cur;
    double total_mb;
};

static void close_sample(struct stream_ctx *c)
{
    struct sample_sum *p = &c->cur;
    if (!p->n) return;
    if (p->nv[SW_VRAM]) rm_series_add(&c->s[SW_VRAM], p->t, p->v[SW_VRAM]);
    if (p->nv[SW_UTIL]) rm_series_add(&c->s[SW_UTIL], p->t, p->v[SW_UTIL] / p->nv[SW_UTIL]);
    if (p->nv[SW_POWER]) rm_series_add(&c->s[SW_POWER], p->t, p->v[SW_POWER]);
    memset(p, 0, sizeof *p);
}

static void gpu_row(void *ctx, const struct rm_csv_row *row)
{
    struct stream_ctx *c = ctx;
    struct rm_gpu_sample g;
    if (rm_gpucsv_row(&c->g, row, &g) != 1 || g.t_ns == RM_NO_TIME) return;
    const struct rm_strref *k = g.index.len ? &g.index : g.uuid.len ? &g.uuid : &g.pci;
    char key[32];
    size_t kl = k->len < sizeof key - 1 ? k->len : sizeof key - 1;
    memcpy(key, k->s, kl);
    key[kl] = '\0';
    struct sample_sum *p = &c->cur;
    bool repeat = p->n == SAMPLE_GPUS;
    for (size_t i = 0; i < p->n && !repeat; i++)
        repeat = !strcmp(p->keys[i], key);
    if (repeat) close_sample(c);
    if (!p->n) p->t = g.t_ns;
    memcpy(p->keys[p->n++], key, kl + 1);
    static const int map[SW_COUNT] = {RM_GM_VRAM_USED, RM_GM_UTIL, RM_GM_POWER};
    for (int m = 0; m < SW_COUNT; m++)
        if (g.valid & RM_GM_BIT(map[m])) {
            p->v[m] += g.v[map[m]];
            p->nv[m]++;
        }
    if ((g.valid & RM_GM_BIT(RM_GM_VRAM_TOTAL)) && g.v[RM_GM_VRAM_TOTAL] > c->total_mb)
        c->total_mb = g.v[RM_GM_VRAM_TOTAL];
}

static char *gpu_fields(const json_t *ses)
{
    const json_t *gf = json_object_get(ses, "gpu_fields");
    if (!json_is_array(gf) || !json_array_size(gf)) return NULL;
    size_t cap = 1, i;
    json_t *f;
    json_array_foreach(gf, i, f) cap += json_string_length(f) + 1;
    char *s = calloc(cap, 1);
    if (!s) return NULL;
    json_array_foreach(gf, i, f)
    {
        if (i) strcat(s, ",");
        if (json_is_string(f)) strcat(s, json_string_value(f));
    }
    return s;
}

/* Streams the run's gpu.csv family into its series over [t0, t1]. */
static void read_series(struct sweep_run *run, const json_t *ses, int64_t t0, int64_t t1)
{
    struct stream_ctx *c = calloc(1, sizeof *c);
    if (!c) return;
    double interval = json_number_value(json_object_get(ses, "interval_s"));
    int64_t gap = interval > 0 ? (int64_t)llround(interval * 1e9) * RM_REPORT_GAP_FACTOR : 0;
    for (int m = 0; m < SW_COUNT; m++)
        if (rm_series_init(&c->s[m], t0, t1, RM_SWEEP_BUCKETS, gap)) abort();
    char *fields = gpu_fields(ses);
    char **names;
    size_t n = rm_segment_family(run->dir, rm_stream_of_subject(RM_SUBJECT_GPUS), &names);
    for (size_t i = 0; i < n; i++) {
        char path[4096], err[256];
        snprintf(path, sizeof path, "%s/%s", run->dir, names[i]);
        rm_gpucsv_init(&c->g, fields);
        uint64_t longl = 0;
        if (rm_csv_read_file(path, gpu_row, c, NULL, &longl, err, sizeof err)) break;
        close_sample(c);
    }
    rm_segment_family_free(names, n);
    free(fields);
    for (int m = 0; m < SW_COUNT; m++) {
        run->npts[m] = rm_series_points(&c->s[m], &run->pts[m]);
        rm_series_free(&c->s[m]);
    }
    if (c->total_mb > run->vram_total_mb) run->vram_total_mb = c->total_mb;
    free(c);
}

void rm_sweep_run_read(struct sweep_run *run, bool series)
{
    if (!run->dir) return;
    char path[4096];
    snprintf(path, sizeof path, "%s/session.json", run->dir);
    json_t *ses = json_load_file(path, 0, NULL);
    if (!json_is_object(ses)) {
        json_decref(ses);
        return;
    }
    size_t i;
    json_t *g;
    json_array_foreach(json_object_get(ses, "gpus"), i, g)
    {
        double t = json_number_value(json_object_get(g, "memory_total_mb"));
        if (t > run->vram_total_mb) run->vram_total_mb = t;
        const char *name = json_string_value(json_object_get(g, "name"));
        if (i == 0 && name) snprintf(run->gpu, sizeof run->gpu, "%.150s", name);
    }
    size_t ng = json_array_size(json_object_get(ses, "gpus"));
    if (ng > 1 && run->gpu[0]) {
        char one[sizeof run->gpu];
        memcpy(one, run->gpu, sizeof one);
        snprintf(run->gpu, sizeof run->gpu, "%zu x %.100s", ng, one);
    }
    int64_t t0 = rm_json_time(ses, "started_at"), t1 = rm_json_time(ses, "ended_at");
    if (t0 != RM_NO_TIME && t1 == RM_NO_TIME) {
        double d = json_number_value(json_object_get(run->row, "duration_s"));
        if (d > 0) t1 = t0 + (int64_t)llround(d * 1e9);
    }
    if (series && t0 != RM_NO_TIME && t1 != RM_NO_TIME && t1 > t0) {
        run->span_ns = t1 - t0;
        read_series(run, ses, t0, t1);
        /* Points are kept relative to the run's start. */
        for (int m = 0; m < SW_COUNT; m++)
            for (size_t k = 0; k < run->npts[m]; k++)
                run->pts[m][k].t -= t0;
    }
    json_decref(ses);
    if (series) rm_sweep_metrics_read(run, t0 != RM_NO_TIME ? (double)t0 / 1e9 : NAN);
    snprintf(path, sizeof path, "%s/summary.json", run->dir);
    if (access(path, R_OK) != 0) return;
    /* The phases only where they are drawn; the metrics' statistics and the objectives for
     * the Pareto chart and the parallel coordinates of every run. */
    static const char *const keys[] = {"metrics", "objectives", "phases"};
    json_t *s = rm_json_pick_file(path, keys, series ? 3 : 2);
    json_t *ph = json_object_get(s, "phases"), *me = json_object_get(s, "metrics");
    json_t *ob = json_object_get(s, "objectives");
    if (json_is_array(ph)) run->phases = json_incref(ph);
    if (json_is_object(me)) run->summary_metrics = json_incref(me);
    if (json_is_array(ob)) run->summary_objectives = json_incref(ob);
    json_decref(s);
}

void rm_sweep_run_free(struct sweep_run *run)
{
    for (int m = 0; m < SW_COUNT; m++)
        free(run->pts[m]);
    json_decref(run->phases);
    json_decref(run->summary_metrics);
    json_decref(run->summary_objectives);
    rm_sweep_metrics_free(run);
    free(run->label);
}
