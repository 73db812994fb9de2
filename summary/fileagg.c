/* One file's aggregate, and folding its samples into it: per GPU, per phase, the host. */
#include "summary/fileagg.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"

/* ---- the GPU table ---------------------------------------------------------------- */

static void copy_ref(char *dst, size_t cap, const struct rm_strref *r)
{
    size_t n = r->len < cap - 1 ? r->len : cap - 1;
    if (n) memcpy(dst, r->s, n);
    dst[n] = '\0';
}

size_t rm_gpu_table_find(struct gpu_table *t, const char *key, size_t len)
{
    if (t->hint < t->n && t->s[t->hint].keylen == len && !memcmp(t->s[t->hint].key, key, len))
        return t->hint;
    for (size_t i = 0; i < t->n; i++)
        if (t->s[i].keylen == len && !memcmp(t->s[i].key, key, len)) return i;
    return (size_t)-1;
}

size_t rm_gpu_table_add(struct gpu_table *t, const char *key, size_t len)
{
    if (t->n == t->cap) {
        t->cap = t->cap ? t->cap * 2 : 8;
        t->s = rm_xrealloc(t->s, t->cap * sizeof *t->s);
    }
    struct gpu_slot *g = &t->s[t->n];
    memset(g, 0, sizeof *g);
    memcpy(g->key, key, len);
    g->keylen = len;
    g->index = -1;
    g->last_group = UINT64_MAX;
    rm_stats_init(&g->st);
    return t->n++;
}

static int parse_index(const struct rm_strref *r)
{
    if (r->len == 0 || r->len > 6) return -1;
    int v = 0;
    for (size_t i = 0; i < r->len; i++) {
        if (r->s[i] < '0' || r->s[i] > '9') return -1;
        v = v * 10 + (r->s[i] - '0');
    }
    return v;
}

void rm_file_agg_init(struct file_agg *f, enum rm_input_kind kind, const char *path)
{
    memset(f, 0, sizeof *f);
    f->kind = kind;
    f->path = path ? strdup(path) : NULL;
    f->first_ns = f->last_ns = f->prev_t = f->group_t = RM_NO_TIME;
}

void rm_file_agg_free(struct file_agg *f)
{
    if (!f) return;
    free(f->path);
    free(f->gpus.s);
    rm_file_agg_drop_phases(f);
    free(f->plist);
    free(f->spans.v);
    free(f->parser);
    free(f->part_start);
    json_decref(f->seg_phases);
    if (f->apps) rm_apps_free(f->apps);
    free(f->apps);
    free(f);
}

/* ---- phases ----------------------------------------------------------------------- */

struct phase_acc *rm_file_phase(struct file_agg *f, size_t p)
{
    if (!f->ph) {
        f->nph = f->rl->nphases;
        f->ph = rm_xcalloc(f->nph, sizeof *f->ph);
    }
    if (!f->ph[p]) f->ph[p] = rm_xcalloc(1, sizeof *f->ph[p]);
    return f->ph[p];
}

void rm_file_agg_drop_phase(struct file_agg *f, size_t p)
{
    if (!f->ph || p >= f->nph || !f->ph[p]) return;
    free(f->ph[p]->gpu);
    free(f->ph[p]->host);
    free(f->ph[p]);
    f->ph[p] = NULL;
}

void rm_file_agg_drop_phases(struct file_agg *f)
{
    for (size_t i = 0; f->ph && i < f->nph; i++)
        rm_file_agg_drop_phase(f, i);
    free(f->ph);
    f->ph = NULL;
    f->nph = 0;
}

static void phase_hit(void *ctx, size_t phase)
{
    struct file_agg *f = ctx;
    struct phase_acc *p = rm_file_phase(f, phase);
    if (p->stamp == f->stamp) return; /* overlapping windows of one phase count a sample once */
    p->stamp = f->stamp;
    if (f->nplist == f->capplist) {
        f->capplist = f->capplist ? f->capplist * 2 : 16;
        f->plist = rm_xrealloc(f->plist, f->capplist * sizeof *f->plist);
    }
    f->plist[f->nplist++] = phase;
}

/* Phases whose windows hold t, computed once per distinct time. */
static void phases_at(struct file_agg *f, int64_t t)
{
    if (!f->rl || f->rl->nwin == 0 || t == RM_NO_TIME) {
        f->nplist = 0;
        return;
    }
    if (t == f->phase_t && f->stamp) return;
    f->phase_t = t;
    f->stamp++;
    f->nplist = 0;
    rm_runlog_windows_at(f->rl, t, phase_hit, f);
}

/* ---- folding samples -------------------------------------------------------------- */

static void note_time(struct file_agg *f, int64_t t)
{
    if (t == RM_NO_TIME) return;
    if (f->first_ns == RM_NO_TIME) f->first_ns = t;
    if (f->prev_t != RM_NO_TIME && t != f->prev_t) {
        int64_t dt = t - f->prev_t;
        if (f->gap_ns > 0 && dt > f->gap_ns) {
            f->gaps++;
            if (__builtin_add_overflow(f->gap_total_ns, dt, &f->gap_total_ns))
                f->gap_total_ns = INT64_MAX;
        }
    }
    if (f->last_ns == RM_NO_TIME || t > f->last_ns) f->last_ns = t;
    f->prev_t = t;
}

void rm_file_flush_group(struct file_agg *f)
{
    if (f->group_open && f->group_has_power) rm_stat_add(&f->total_power, f->group_power);
    f->group_open = true;
    f->group_has_power = false;
    f->group_power = 0;
    f->group_id++;
    f->pos = 0;
}

/* Whether a GPU named name already has a row in the open sample group. */
static bool name_in_group(const struct file_agg *f, const struct rm_strref *name)
{
    size_t n = name->len < sizeof f->gpus.s[0].name - 1 ? name->len : sizeof f->gpus.s[0].name - 1;
    for (size_t i = 0; i < f->gpus.n; i++) {
        const struct gpu_slot *g = &f->gpus.s[i];
        if (g->last_group == f->group_id && strlen(g->name) == n && !memcmp(g->name, name->s, n))
            return true;
    }
    return false;
}

struct rm_gpu_stats *rm_file_phase_gpu(struct file_agg *f, size_t p, size_t i)
{
    struct phase_acc *a = rm_file_phase(f, p);
    if (a->ngpu <= i) {
        size_t n = f->gpus.n > i ? f->gpus.n : i + 1;
        a->gpu = rm_xrealloc(a->gpu, n * sizeof *a->gpu);
        for (size_t j = a->ngpu; j < n; j++)
            rm_stats_init(&a->gpu[j]);
        a->ngpu = n;
    }
    a->used = true;
    return &a->gpu[i];
}

struct span_ctx {
    struct file_agg *f;
    size_t slot;
};

static void add_phase_span(void *ctx, size_t phase, enum rm_span_kind kind, int64_t ns, double j,
                           const struct rm_energy_bar *bar)
{
    struct span_ctx *c = ctx;
    if (phase >= c->f->rl->nphases) return;
    rm_stats_add_span(rm_file_phase_gpu(c->f, phase, c->slot), kind, ns, j, bar);
}

void rm_file_add_gpu_sample(struct file_agg *f, const struct rm_gpu_sample *s)
{
    f->rows++;
    if (!f->group_open || s->t_ns != f->group_t) rm_file_flush_group(f);
    f->group_t = s->t_ns;
    char key[RM_GPU_KEY_MAX];
    size_t klen;
    const struct rm_strref *id = s->index.len  ? &s->index
                                 : s->uuid.len ? &s->uuid
                                 : s->pci.len  ? &s->pci
                                               : NULL;
    if (id) {
        key[0] = id == &s->index ? 'i' : id == &s->uuid ? 'u' : 'p';
        key[1] = ':';
        klen = 2 + (id->len < RM_GPU_KEY_MAX - 3 ? id->len : RM_GPU_KEY_MAX - 3);
        memcpy(key + 2, id->s, klen - 2);
    } else {
        /* No identity column: nvidia-smi prints the GPUs in order in each sample, so the k-th
         * row of a sample is GPU k. A sample ends at a new time; rows without time cycle by
         * the session's GPU count, else a new sample starts where a GPU name already in it
         * comes again. Rows whose names differ are never one GPU (the name is in the key). */
        if (f->pos > 0 && s->t_ns == RM_NO_TIME &&
            (f->gpu_count ? f->pos >= f->gpu_count : !s->name.len || name_in_group(f, &s->name)))
            rm_file_flush_group(f);
        klen = (size_t)snprintf(key, sizeof key, "i:%d", f->pos);
        if (s->name.len && klen + 1 < sizeof key) {
            size_t n = s->name.len < sizeof key - klen - 2 ? s->name.len : sizeof key - klen - 2;
            key[klen++] = '/';
            memcpy(key + klen, s->name.s, n);
            klen += n;
        }
    }
    size_t i = rm_gpu_table_find(&f->gpus, key, klen);
    if (i == (size_t)-1) {
        i = rm_gpu_table_add(&f->gpus, key, klen);
        struct gpu_slot *g = &f->gpus.s[i];
        g->index = id == &s->index ? parse_index(&s->index) : id ? -1 : f->pos;
        copy_ref(g->uuid, sizeof g->uuid, &s->uuid);
        copy_ref(g->name, sizeof g->name, &s->name);
        copy_ref(g->pci, sizeof g->pci, &s->pci);
    } else if (f->gpus.s[i].last_group == f->group_id) {
        rm_file_flush_group(f); /* the same GPU again without a new time: a new sample group */
    }
    f->gpus.hint = i + 1;
    f->pos++;
    struct gpu_slot *g = &f->gpus.s[i];
    g->last_group = f->group_id;
    if (s->valid & (1u << RM_GM_POWER)) {
        f->group_power += s->v[RM_GM_POWER];
        f->group_has_power = true;
    }
    note_time(f, s->t_ns);
    if (f->rl && f->rl->nwin && s->t_ns != RM_NO_TIME && g->st.last_ns != RM_NO_TIME) {
        /* The spacing from this GPU's previous sample, inside each phase's windows only. */
        struct span_ctx c = {f, i};
        double p = (s->valid & (1u << RM_GM_POWER)) ? s->v[RM_GM_POWER] : NAN;
        rm_phase_spans(f->rl, &f->spans, g->st.last_ns, g->st.last_power, s->t_ns, p, f->gap_ns,
                       add_phase_span, &c);
    }
    rm_stats_add(&g->st, s->t_ns, s->v, s->valid, f->gap_ns);
    bool thr = s->valid & RM_SAMPLE_THR_KNOWN;
    double smclk_max = s->valid & RM_SAMPLE_SMCLK_MAX ? s->smclk_max : NAN;
    unsigned mask = thr ? s->thr_mask : 0;
    rm_stats_add_clocks(&g->st, thr, mask, smclk_max);
    phases_at(f, s->t_ns);
    for (size_t k = 0; k < f->nplist; k++) {
        struct rm_gpu_stats *ps = rm_file_phase_gpu(f, f->plist[k], i);
        rm_stats_add_point(ps, s->t_ns, s->v, s->valid);
        rm_stats_add_clocks(ps, thr, mask, smclk_max);
    }
}

void rm_file_add_host_sample(struct file_agg *f, const struct rm_host_sample *s, bool proc)
{
    f->rows++;
    note_time(f, s->t_ns);
    rm_host_stats_add(&f->host, s, proc);
    phases_at(f, s->t_ns);
    for (size_t k = 0; k < f->nplist; k++) {
        struct phase_acc *a = f->ph[f->plist[k]]; /* made by phases_at */
        a->used = true;
        if (!a->host) a->host = rm_xcalloc(1, sizeof *a->host);
        rm_host_stats_add(a->host, s, proc);
    }
}

/* One apps.csv row; a new sample time closes the previous sample, in its own phases. */
void rm_file_add_app_row(struct file_agg *f, const struct rm_app_row *row)
{
    if (!f->apps) {
        f->apps = rm_xrealloc(NULL, sizeof *f->apps);
        rm_apps_init(f->apps, f->rl ? f->rl->nphases : 0);
    }
    if (rm_apps_starts_sample(f->apps, row)) {
        phases_at(f, f->apps->t_ns);
        rm_apps_close(f->apps, f->plist, f->nplist);
    }
    f->rows++;
    note_time(f, row->t_ns);
    rm_apps_add(f->apps, row);
}

void rm_file_close_apps(struct file_agg *f)
{
    if (!f->apps) return;
    phases_at(f, f->apps->t_ns);
    rm_apps_close(f->apps, f->plist, f->nplist);
}

void rm_file_skip(struct file_agg *f, int rc)
{
    int why = -rc - 1;
    if (why >= 0 && why < RM_SKIP_COUNT) f->skipped[why]++;
}
