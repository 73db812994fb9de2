#include "summary/stallcsv.h"

#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "base/rm_time.h"
#include "summary/objects.h"

static const char *const col_names[RM_STC_COUNT] = {
    "ts",      "interval_ms", "threads",     "blocked",    "run_ns",
    "wait_ns", "blkio_ms",    "cpu_some_us", "io_some_us", "memory_some_us"};

void rm_stallcsv_init(struct rm_stallcsv *p)
{
    memset(p, 0, sizeof *p);
    for (int c = 0; c < RM_STC_COUNT; c++)
        p->col[c] = -1;
}

static bool is(const char *s, size_t len, const char *name)
{
    return strlen(name) == len && !memcmp(s, name, len);
}

static bool map_header(struct rm_stallcsv *p, const struct rm_csv_row *row)
{
    if (row->n < 2 || !is(row->f[0], row->len[0], "ts")) return false;
    rm_stallcsv_init(p);
    for (size_t i = 0; i < row->n; i++)
        for (int c = 0; c < RM_STC_COUNT; c++)
            if (is(row->f[i], row->len[i], col_names[c]) && p->col[c] < 0) p->col[c] = (int)i;
    p->ncols = row->n;
    p->mapped = p->col[RM_STC_TS] >= 0 && p->col[RM_STC_INTERVAL] >= 0;
    return true;
}

/* 1: a whole number into *v; 0: empty or absent (NaN); -1: anything else. */
static int number(const struct rm_csv_row *row, int col, double *v)
{
    *v = NAN;
    if (col < 0 || (size_t)col >= row->n || !row->len[col]) return 0;
    uint64_t n = 0;
    for (size_t i = 0; i < row->len[col]; i++) {
        unsigned d = (unsigned)(row->f[col][i] - '0');
        if (d > 9 || n > (UINT64_MAX - d) / 10) return -1;
        n = n * 10 + d;
    }
    *v = (double)n;
    return 1;
}

int rm_stallcsv_row(struct rm_stallcsv *p, const struct rm_csv_row *row, struct rm_stall_row *out)
{
    if (row->overflow) return -(1 + RM_SKIP_LONG_LINE);
    if (row->torn) return -(1 + RM_SKIP_TORN);
    if (map_header(p, row)) return 0;
    if (!p->mapped || row->n == 0) return -(1 + RM_SKIP_NOT_DATA);
    if (row->n != p->ncols) return -(1 + RM_SKIP_BAD_FIELD_COUNT);
    int ts = p->col[RM_STC_TS];
    if (rm_parse_ts_checked(row->f[ts], row->len[ts], &out->t_ns)) return -(1 + RM_SKIP_BAD_TIME);
    for (int c = RM_STC_INTERVAL; c < RM_STC_COUNT; c++)
        if (number(row, p->col[c], &out->v[c]) < 0) return -(1 + RM_SKIP_GARBAGE);
    if (!(out->v[RM_STC_INTERVAL] > 0)) return -(1 + RM_SKIP_GARBAGE);
    out->dt_ns = (int64_t)out->v[RM_STC_INTERVAL] * 1000000;
    return 1;
}

void rm_stall_acc_add(struct rm_stall_acc *a, const struct rm_stall_row *r, double w)
{
    const double *v = r->v;
    double dt = (double)r->dt_ns * w;
    a->samples += w;
    a->dt_ns += dt;
    if (!isnan(v[RM_STC_THREADS])) a->thread_samples += w * v[RM_STC_THREADS];
    if (v[RM_STC_BLOCKED] > 0) a->blocked_samples += w;
    if (!isnan(v[RM_STC_RUN])) a->run_ns += w * v[RM_STC_RUN];
    if (!isnan(v[RM_STC_WAIT])) a->wait_ns += w * v[RM_STC_WAIT];
    if (!isnan(v[RM_STC_BLKIO])) a->blkio_ms += w * v[RM_STC_BLKIO], a->blkio_dt_ns += dt;
    for (int i = 0; i < 3; i++) {
        double us = v[RM_STC_CPU_SOME + i];
        if (!isnan(us)) a->cg_us[i] += w * us, a->cg_dt_ns[i] += dt;
    }
}

void rm_stall_acc_merge(struct rm_stall_acc *a, const struct rm_stall_acc *b)
{
    double *x = (double *)a;
    const double *y = (const double *)b;
    for (size_t i = 0; i < sizeof *a / sizeof(double); i++)
        x[i] += y[i];
}

double rm_stall_wait_share(const struct rm_stall_acc *a)
{
    double runnable = a->run_ns + a->wait_ns;
    return a->samples > 0 && runnable > 0 ? a->wait_ns / runnable : NAN;
}

double rm_stall_waiting_threads(const struct rm_stall_acc *a)
{
    return a->dt_ns > 0 ? a->wait_ns / a->dt_ns : NAN;
}

double rm_stall_blocked_share(const struct rm_stall_acc *a)
{
    return a->samples > 0 ? a->blocked_samples / a->samples : NAN;
}

double rm_stall_blkio_s(const struct rm_stall_acc *a)
{
    return a->blkio_dt_ns > 0 ? a->blkio_ms / 1e3 : NAN;
}

double rm_stall_cgroup_pct(const struct rm_stall_acc *a, int resource)
{
    if (resource < 0 || resource > 2 || !(a->cg_dt_ns[resource] > 0)) return NAN;
    double pct = a->cg_us[resource] * 1e3 / a->cg_dt_ns[resource] * 100;
    return pct > 100 ? 100 : pct;
}

void rm_stall_init(struct rm_stall_agg *a, size_t nphases)
{
    memset(a, 0, sizeof *a);
    a->nph = nphases;
    a->ph = rm_xcalloc(nphases + 1, sizeof *a->ph);
}

void rm_stall_free(struct rm_stall_agg *a)
{
    free(a->ph);
    a->ph = NULL;
}

void rm_stall_merge(struct rm_stall_agg *dst, const struct rm_stall_agg *src)
{
    rm_stall_acc_merge(&dst->run, &src->run);
    for (size_t p = 0; p < dst->nph && p < src->nph; p++)
        rm_stall_acc_merge(&dst->ph[p], &src->ph[p]);
}

/* ---- its engine (summary/objects.h): the "stall" object's rows of model/objects.c ------- */

static void *agg_new(size_t nph)
{
    struct rm_stall_agg *a = rm_xrealloc(NULL, sizeof *a);
    rm_stall_init(a, nph);
    return a;
}

static void agg_free(void *agg)
{
    if (agg) rm_stall_free(agg);
    free(agg);
}

/* Its rows are rates over each row's own interval: nothing lies between two files. */
static void agg_merge(void *run, const void *file, const struct rm_obj_spans *spans)
{
    (void)spans;
    rm_stall_merge(run, file);
}

static const void *run_acc(const void *agg)
{
    return &((const struct rm_stall_agg *)agg)->run;
}

static const void *phase_acc(const void *agg, size_t p)
{
    const struct rm_stall_agg *a = agg;
    return p < a->nph ? &a->ph[p] : NULL;
}

static void *acc_new(void)
{
    return rm_xcalloc(1, sizeof(struct rm_stall_acc));
}

static void acc_merge(void *acc, const void *from)
{
    rm_stall_acc_merge(acc, from);
}

static double figure(const void *accp, const void *agg, int fig)
{
    (void)agg;
    static const struct rm_stall_acc none;
    const struct rm_stall_acc *a = accp ? accp : &none;
    bool seen = a->samples > 0;
    switch (fig) {
    case RM_OF_STALL_SAMPLES:
        return a->samples;
    case RM_OF_STALL_SECONDS:
        return seen ? a->dt_ns / 1e9 : NAN;
    case RM_OF_STALL_THREADS_MEAN:
        return seen ? a->thread_samples / a->samples : NAN;
    case RM_OF_STALL_WAIT_SHARE:
        return rm_stall_wait_share(a);
    case RM_OF_STALL_WAIT_S:
        return seen ? a->wait_ns / 1e9 : NAN;
    case RM_OF_STALL_WAITING_THREADS:
        return rm_stall_waiting_threads(a);
    case RM_OF_STALL_BLOCKED_SHARE:
        return rm_stall_blocked_share(a);
    case RM_OF_STALL_BLKIO_S:
        return rm_stall_blkio_s(a);
    case RM_OF_STALL_CG_CPU_PCT:
        return rm_stall_cgroup_pct(a, 0);
    case RM_OF_STALL_CG_IO_PCT:
        return rm_stall_cgroup_pct(a, 1);
    case RM_OF_STALL_CG_MEMORY_PCT:
        return rm_stall_cgroup_pct(a, 2);
    default:
        return NAN;
    }
}

const struct rm_obj_engine rm_obj_engine_stall = {
    agg_new, agg_free, agg_merge, run_acc, phase_acc, acc_new, acc_merge, free, figure, NULL,
};
