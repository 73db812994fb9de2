#include "summary/apps.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "base/rm_time.h"
#include "model/values.h"

void rm_appscsv_init(struct rm_appscsv *p)
{
    memset(p, 0, sizeof *p);
    for (int c = 0; c < RM_APPS_COL_COUNT; c++)
        p->col[c] = -1;
}

static bool is(const char *s, size_t len, const char *name)
{
    return strlen(name) == len && !memcmp(s, name, len);
}

/* A header row names ts, gpu and pid; columns are found by name (new ones may follow). */
static bool map_header(struct rm_appscsv *p, const struct rm_csv_row *row)
{
    if (row->n < 3 || !is(row->f[0], row->len[0], "ts")) return false;
    rm_appscsv_init(p);
    for (size_t i = 0; i < row->n; i++)
        for (int c = 0; c < RM_APPS_COL_COUNT; c++)
            if (is(row->f[i], row->len[i], rm_apps_cols[c]) && p->col[c] < 0) p->col[c] = (int)i;
    p->ncols = row->n;
    p->mapped =
        p->col[RM_APPS_COL_TS] >= 0 && p->col[RM_APPS_COL_GPU] >= 0 && p->col[RM_APPS_COL_PID] >= 0;
    return true;
}

static struct rm_strref field(const struct rm_csv_row *row, int col)
{
    if (col < 0 || (size_t)col >= row->n) return (struct rm_strref){"", 0};
    return (struct rm_strref){row->f[col], row->len[col]};
}

static bool parse_int(struct rm_strref r, long long *out)
{
    if (!r.len || r.len > 18) return false;
    long long v = 0;
    for (size_t i = 0; i < r.len; i++) {
        if (r.s[i] < '0' || r.s[i] > '9') return false;
        v = v * 10 + (r.s[i] - '0');
    }
    *out = v;
    return true;
}

static double number(struct rm_strref r)
{
    double v;
    return rm_value_parse(r.s, r.len, &v) == RM_VALUE_OK ? v : NAN;
}

int rm_appscsv_row(struct rm_appscsv *p, const struct rm_csv_row *row, struct rm_app_row *out)
{
    if (row->overflow) return -(1 + RM_SKIP_LONG_LINE);
    if (row->torn) return -(1 + RM_SKIP_TORN);
    if (map_header(p, row)) return 0;
    if (!p->mapped || row->n == 0) return -(1 + RM_SKIP_NOT_DATA);
    if (row->n != p->ncols) return -(1 + RM_SKIP_BAD_FIELD_COUNT);
    struct rm_strref ts = field(row, p->col[RM_APPS_COL_TS]);
    if (rm_parse_ts_checked(ts.s, ts.len, &out->t_ns)) return -(1 + RM_SKIP_BAD_TIME);
    long long gpu, pid;
    if (!parse_int(field(row, p->col[RM_APPS_COL_GPU]), &gpu) || gpu >= RM_APPS_MAX_GPUS)
        return -(1 + RM_SKIP_GARBAGE);
    struct rm_strref pids = field(row, p->col[RM_APPS_COL_PID]);
    if (pids.len == 0)
        pid = -1;
    else if (!parse_int(pids, &pid))
        return -(1 + RM_SKIP_GARBAGE);
    out->gpu = (int)gpu;
    out->pid = pid;
    out->uuid = field(row, p->col[RM_APPS_COL_UUID]);
    out->name = field(row, p->col[RM_APPS_COL_PROCESS]);
    out->vram_mb = number(field(row, p->col[RM_APPS_COL_VRAM]));
    out->sm_pct = number(field(row, p->col[RM_APPS_COL_SM]));
    struct rm_strref w = field(row, p->col[RM_APPS_COL_IN_WORKLOAD]);
    out->in_workload = w.len == 1 && w.s[0] == '1' ? 1 : w.len == 1 && w.s[0] == '0' ? 0 : -1;
    out->origin = RM_APP_RUNMON;
    return 1;
}

void rm_apps_init(struct rm_apps_agg *a, size_t nphases)
{
    memset(a, 0, sizeof *a);
    a->nph = nphases;
    if (nphases) a->ph = rm_xcalloc(nphases, sizeof *a->ph);
}

void rm_apps_free(struct rm_apps_agg *a)
{
    free(a->procs);
    for (size_t p = 0; a->ph && p < a->nph; p++)
        free(a->ph[p]);
    free(a->ph);
    free(a->phn);
    memset(a, 0, sizeof *a);
}

/* GPU g's figure in phase p, made (with those of the GPUs before it) when missing. */
static struct rm_stat *phase_stat(struct rm_apps_agg *a, size_t p, int g)
{
    if (!a->phn) a->phn = rm_xcalloc(a->nph, sizeof *a->phn);
    if (a->phn[p] <= g) {
        a->ph[p] = rm_xrealloc(a->ph[p], (size_t)(g + 1) * sizeof *a->ph[p]);
        memset(&a->ph[p][a->phn[p]], 0, (size_t)(g + 1 - a->phn[p]) * sizeof *a->ph[p]);
        a->phn[p] = (unsigned char)(g + 1);
    }
    return &a->ph[p][g];
}

const struct rm_stat *rm_apps_phase_stat(const struct rm_apps_agg *a, size_t p, int g)
{
    return p < a->nph && a->phn && g >= 0 && g < a->phn[p] ? &a->ph[p][g] : NULL;
}

static struct rm_app_proc *find_proc(const struct rm_apps_agg *a, int gpu, long long pid,
                                     struct rm_strref name)
{
    for (size_t i = a->nprocs; i-- > 0;) {
        struct rm_app_proc *p = &a->procs[i];
        if (p->gpu == gpu && p->pid == pid && strlen(p->name) == name.len &&
            !memcmp(p->name, name.s, name.len))
            return p;
    }
    return NULL;
}

bool rm_apps_starts_sample(const struct rm_apps_agg *a, const struct rm_app_row *row)
{
    if (!a->open || row->origin == RM_APP_SMI_LIFETIME) return false;
    if (row->t_ns != a->t_ns) return true;
    if (row->t_ns != RM_NO_TIME) return false;
    if (row->pid < 0) return a->idle >> row->gpu & 1;
    const struct rm_app_proc *p = find_proc(a, row->gpu, row->pid, row->name);
    return p && p->last_sample == a->nsample + 1;
}

void rm_apps_close(struct rm_apps_agg *a, const size_t *phases, size_t n)
{
    if (!a->open) return;
    for (int g = 0; g < RM_APPS_MAX_GPUS; g++) {
        if (!(a->seen >> g & 1)) continue;
        if (!a->no_workload) {
            rm_stat_add(&a->gpu[g].workload, a->w[g]);
            rm_stat_add(&a->gpu[g].other, a->o[g]);
        }
        rm_stat_add(&a->gpu[g].unknown, a->u[g]);
        for (size_t k = 0; k < n && !a->no_workload; k++)
            if (phases[k] < a->nph) rm_stat_add(phase_stat(a, phases[k], g), a->w[g]);
        a->w[g] = a->o[g] = a->u[g] = 0;
    }
    a->seen = a->idle = 0;
    a->open = false;
    a->nsample++;
}

static struct rm_app_proc *proc_slot(struct rm_apps_agg *a, int gpu, long long pid,
                                     struct rm_strref name)
{
    struct rm_app_proc *p = find_proc(a, gpu, pid, name);
    if (p) return p;
    a->procs = rm_xgrow(a->procs, &a->capprocs, a->nprocs + 1, sizeof *a->procs);
    p = &a->procs[a->nprocs++];
    memset(p, 0, sizeof *p);
    p->gpu = gpu;
    p->pid = pid;
    p->in_workload = -1;
    p->peak_mb = NAN;
    snprintf(p->name, sizeof p->name, "%.*s", (int)name.len, name.s);
    return p;
}

void rm_apps_add(struct rm_apps_agg *a, const struct rm_app_row *row)
{
    int g = row->gpu;
    bool sample = row->origin != RM_APP_SMI_LIFETIME; /* a process's life is no sample */
    a->no_workload |= row->origin != RM_APP_RUNMON;
    if (sample) {
        a->open = true;
        a->t_ns = row->t_ns;
        a->seen |= 1ull << g;
    }
    struct rm_apps_gpu *gs = &a->gpu[g];
    if (!gs->seen && row->uuid.len)
        snprintf(gs->uuid, sizeof gs->uuid, "%.*s", (int)row->uuid.len, row->uuid.s);
    gs->seen = true;
    if (row->pid < 0) { /* the idle row: a sample of 0 */
        a->idle |= 1ull << g;
        return;
    }
    double mb = isnan(row->vram_mb) ? 0 : row->vram_mb;
    double *sum = row->in_workload == 1 ? a->w : row->in_workload == 0 ? a->o : a->u;
    if (sample) sum[g] += mb;
    struct rm_app_proc *p = proc_slot(a, g, row->pid, row->name);
    p->samples++;
    p->last_sample = a->nsample + 1;
    if (!isnan(row->vram_mb) && (isnan(p->peak_mb) || row->vram_mb > p->peak_mb))
        p->peak_mb = row->vram_mb;
    if (!isnan(row->sm_pct)) rm_stat_add(&p->sm, row->sm_pct);
    if (row->in_workload == 1 || (row->in_workload == 0 && p->in_workload < 0))
        p->in_workload = row->in_workload;
}

void rm_apps_merge(struct rm_apps_agg *dst, const struct rm_apps_agg *src)
{
    dst->no_workload |= src->no_workload;
    for (int g = 0; g < RM_APPS_MAX_GPUS; g++) {
        const struct rm_apps_gpu *s = &src->gpu[g];
        if (!s->seen) continue;
        struct rm_apps_gpu *d = &dst->gpu[g];
        if (!d->seen) memcpy(d->uuid, s->uuid, sizeof d->uuid);
        d->seen = true;
        rm_stat_merge(&d->workload, &s->workload);
        rm_stat_merge(&d->other, &s->other);
        rm_stat_merge(&d->unknown, &s->unknown);
        for (size_t p = 0; src->phn && p < dst->nph && p < src->nph; p++)
            if (g < src->phn[p]) rm_stat_merge(phase_stat(dst, p, g), &src->ph[p][g]);
    }
    for (size_t i = 0; i < src->nprocs; i++) {
        const struct rm_app_proc *s = &src->procs[i];
        struct rm_strref name = {s->name, strlen(s->name)};
        struct rm_app_proc *d = proc_slot(dst, s->gpu, s->pid, name);
        d->samples += s->samples;
        if (!isnan(s->peak_mb) && (isnan(d->peak_mb) || s->peak_mb > d->peak_mb))
            d->peak_mb = s->peak_mb;
        rm_stat_merge(&d->sm, &s->sm);
        if (s->in_workload == 1 || (s->in_workload == 0 && d->in_workload < 0))
            d->in_workload = s->in_workload;
    }
}
