/* One file's aggregate, and folding its samples into it: per GPU, per phase, the host. */
#include "summary/fileagg.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "base/memeq.h"
#include "summary/pack.h"

/* ---- the GPU table ---------------------------------------------------------------- */

static void copy_ref(char *dst, size_t cap, const struct rm_strref *r)
{
    size_t n = r->len < cap - 1 ? r->len : cap - 1;
    if (n) memcpy(dst, r->s, n);
    dst[n] = '\0';
}

size_t rm_gpu_table_find(struct gpu_table *t, const char *key, size_t len)
{
    if (t->hint < t->n && t->s[t->hint].keylen == len && rm_memeq(t->s[t->hint].key, key, len))
        return t->hint;
    for (size_t i = 0; i < t->n; i++)
        if (t->s[i].keylen == len && rm_memeq(t->s[i].key, key, len)) return i;
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
    free(f->open);
    free(f->spans.v);
    free(f->parser);
    free(f->part_start);
    json_decref(f->seg_phases);
    if (f->apps) rm_apps_free(f->apps);
    free(f->apps);
    for (int o = 0; o < RM_OBJ_COUNT; o++)
        if (f->obj[o]) rm_obj_engine(o)->agg_free(f->obj[o]);
    free(f);
}

/* ---- phases ----------------------------------------------------------------------- */

/* Unpacked phases at most before rm_file_park_idle packs the idle ones, at first and at most
 * (the limit doubles while what it packs is unpacked again). */
#define RM_OPEN_PHASES 256
#define RM_OPEN_PHASES_MAX 65536

struct phase_acc *rm_file_phase(struct file_agg *f, size_t p)
{
    if (!f->ph) {
        f->nph = f->rl->nphases;
        f->ph = rm_xcalloc(f->nph, sizeof *f->ph);
    }
    if (!f->ph[p]) f->ph[p] = rm_xcalloc(1, sizeof *f->ph[p]);
    struct phase_acc *a = f->ph[p];
    if (a->open) return a;
    f->reopened += a->parked;
    if (a->ngpu) {
        a->gpu = rm_xrealloc(NULL, a->ngpu * sizeof *a->gpu);
        rm_unpack_gpu_stats(a->gpu_packed, a->gpu, a->ngpu);
    }
    if (a->host_packed) {
        a->host = rm_xrealloc(NULL, sizeof *a->host);
        rm_unpack_host_stats(a->host_packed, a->host);
    }
    free(a->gpu_packed);
    free(a->host_packed);
    a->gpu_packed = a->host_packed = NULL;
    a->open = true;
    f->open = rm_xgrow(f->open, &f->capopen, f->nopen + 1, sizeof *f->open);
    f->open[f->nopen++] = p;
    return a;
}

struct phase_acc *rm_file_phase_get(struct file_agg *f, size_t p)
{
    return f->ph && p < f->nph && f->ph[p] ? rm_file_phase(f, p) : NULL;
}

static void park(struct phase_acc *a)
{
    if (!a->open) return;
    if (a->gpu) a->gpu_packed = rm_pack_gpu_stats(a->gpu, a->ngpu);
    if (a->host) a->host_packed = rm_pack_host_stats(a->host);
    free(a->gpu);
    free(a->host);
    a->gpu = NULL;
    a->host = NULL;
    a->open = false;
    a->parked = true;
}

void rm_file_park_phase(struct file_agg *f, size_t p)
{
    if (f->ph && p < f->nph && f->ph[p]) park(f->ph[p]); /* its entry in f->open goes later */
}

void rm_file_park_idle(struct file_agg *f)
{
    if (f->open_limit < RM_OPEN_PHASES) f->open_limit = RM_OPEN_PHASES;
    if (f->nopen <= f->open_limit) return;
    if (f->parked_last && 2 * f->reopened > f->parked_last && f->open_limit < RM_OPEN_PHASES_MAX) {
        /* Most of what was packed came back: a working set past the limit, which packing
         * and unpacking at every sample would only slow down. */
        f->open_limit *= 2;
        f->reopened = 0;
        return;
    }
    size_t kept = 0, parked = 0;
    for (size_t k = 0; k < f->nopen; k++) {
        struct phase_acc *a = f->ph[f->open[k]];
        if (!a || !a->open) continue; /* dropped, or parked already */
        if (a->stamp == f->stamp && f->stamp) {
            f->open[kept++] = f->open[k]; /* at the latest sample time: still in use */
            a->open = false;              /* listed once: unmarked until the loop ends */
        } else {
            park(a);
            parked++;
        }
    }
    for (size_t k = 0; k < kept; k++)
        f->ph[f->open[k]]->open = true;
    f->nopen = kept;
    f->parked_last = parked;
    f->reopened = 0;
    if (f->open_limit < 2 * kept) f->open_limit = 2 * kept; /* many phases at one time */
}

void rm_file_agg_drop_phase(struct file_agg *f, size_t p)
{
    if (!f->ph || p >= f->nph || !f->ph[p]) return;
    free(f->ph[p]->gpu);
    free(f->ph[p]->host);
    free(f->ph[p]->gpu_packed);
    free(f->ph[p]->host_packed);
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
    f->nopen = 0;
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

bool rm_file_key_in_group(struct file_agg *f, const char *key, size_t len)
{
    size_t i = rm_gpu_table_find(&f->gpus, key, len);
    return f->group_open && i != (size_t)-1 && f->gpus.s[i].last_group == f->group_id;
}

bool rm_mig_instance(const char *uuid, const char *name)
{
    return (uuid && strncmp(uuid, "MIG-", 4) == 0) || (name && strstr(name, "MIG "));
}

/* Whether slot i is a MIG instance of a GPU (same bus id; none counts as one GPU) that another
 * instance's row in the open sample group already stands for: its power is that GPU's. */
static bool mig_power_counted(const struct file_agg *f, size_t i)
{
    const struct gpu_slot *g = &f->gpus.s[i];
    if (!rm_mig_instance(g->uuid, g->name)) return false;
    for (size_t k = 0; k < f->gpus.n; k++) {
        const struct gpu_slot *h = &f->gpus.s[k];
        if (k != i && h->last_group == f->group_id && rm_mig_instance(h->uuid, h->name) &&
            strcmp(h->pci, g->pci) == 0)
            return true;
    }
    return false;
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
    rm_file_park_idle(f);
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
    if ((s->valid & (1u << RM_GM_POWER)) && !mig_power_counted(f, i)) {
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
    if ((s->valid & RM_SAMPLE_PLIMIT) && s->power_limit > g->st.power_limit_w)
        g->st.power_limit_w = s->power_limit; /* the run's: a phase's bar takes its GPU's */
    phases_at(f, s->t_ns);
    for (size_t k = 0; k < f->nplist; k++) {
        struct rm_gpu_stats *ps = rm_file_phase_gpu(f, f->plist[k], i);
        rm_stats_add_point(ps, s->t_ns, s->v, s->valid);
        rm_stats_add_clocks(ps, thr, mask, smclk_max);
    }
}

void rm_file_add_host_sample(struct file_agg *f, const struct rm_host_sample *s, bool proc)
{
    rm_file_park_idle(f);
    f->rows++;
    note_time(f, s->t_ns);
    rm_host_stats_add(&f->host, s, proc);
    phases_at(f, s->t_ns);
    for (size_t k = 0; k < f->nplist; k++) {
        struct phase_acc *a = rm_file_phase(f, f->plist[k]); /* made by phases_at */
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

struct io_span_ctx {
    struct file_agg *f;
    const struct rm_io_interval *iv;
};

static void add_io_span(void *ctx, size_t phase, enum rm_span_kind kind, int64_t ns, double j,
                        const struct rm_energy_bar *bar)
{
    (void)kind, (void)j, (void)bar;
    struct io_span_ctx *c = ctx;
    rm_io_add_phase(c->f->obj[RM_OBJ_IO], phase, c->iv, ns);
}

/* The file's aggregate of object o (its engine's), made at its first row. */
static void *obj_agg(struct file_agg *f, enum rm_obj o)
{
    if (!f->obj[o]) f->obj[o] = rm_obj_engine(o)->agg_new(f->rl ? f->rl->nphases : 0);
    return f->obj[o];
}

void rm_file_add_io_row(struct file_agg *f, const struct rm_io_row *row)
{
    struct rm_io_agg *io = obj_agg(f, RM_OBJ_IO);
    f->rows++;
    note_time(f, row->t_ns);
    struct rm_io_interval iv;
    if (!rm_io_add(io, row, &iv) || !f->rl || !f->rl->nwin) return;
    /* The interval's growth to each phase by the share of it the phase's windows cover (an
     * io.csv has no GPU rows: the file's span buffer is free). */
    struct io_span_ctx c = {f, &iv};
    rm_phase_spans(f->rl, &f->spans, iv.t0, NAN, iv.t1, NAN, 0, add_io_span, &c);
}

struct stall_span_ctx {
    struct rm_stall_agg *stall;
    const struct rm_stall_row *row;
};

static void add_stall_span(void *ctx, size_t phase, enum rm_span_kind kind, int64_t ns, double j,
                           const struct rm_energy_bar *bar)
{
    (void)kind, (void)j, (void)bar;
    struct stall_span_ctx *c = ctx;
    if (phase < c->stall->nph)
        rm_stall_acc_add(&c->stall->ph[phase], c->row, (double)ns / (double)c->row->dt_ns);
}

void rm_file_add_stall_row(struct file_agg *f, const struct rm_stall_row *row)
{
    struct rm_stall_agg *stall = obj_agg(f, RM_OBJ_STALL);
    f->rows++;
    note_time(f, row->t_ns);
    rm_stall_acc_add(&stall->run, row, 1);
    if (!f->rl || !f->rl->nwin) return;
    /* The row's interval to each phase by the share of it the phase's windows cover. */
    struct stall_span_ctx c = {stall, row};
    rm_phase_spans(f->rl, &f->spans, row->t_ns - row->dt_ns, NAN, row->t_ns, NAN, 0, add_stall_span,
                   &c);
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
