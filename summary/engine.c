/* The scanning engine: one file into a file_agg (per-GPU and host statistics, gaps, phase
 * windows), and the worker threads that scan all the summary's files in parallel. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/alloc.h"
#include "base/rm_time.h"
#include "base/termsafe.h"
#include "summary/csvread.h"
#include "summary/summary_internal.h"

const char *const rm_input_kind_names[RM_INPUT_COUNT] = {"gpu_csv", "dmon_text", "dmon_csv",
                                                         "cpu_csv", "proc_csv",  "apps_csv"};

/* ---- small helpers ---------------------------------------------------------------- */

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

/* ---- per-file scanning ------------------------------------------------------------ */

struct phase_acc *rm_file_phase(struct file_agg *f, size_t p)
{
    if (!f->ph) {
        f->nph = f->rl->nphases;
        f->ph = rm_xcalloc(f->nph, sizeof *f->ph);
    }
    if (!f->ph[p]) f->ph[p] = rm_xcalloc(1, sizeof *f->ph[p]);
    return f->ph[p];
}

void rm_file_agg_drop_phases(struct file_agg *f)
{
    for (size_t i = 0; f->ph && i < f->nph; i++)
        if (f->ph[i]) {
            free(f->ph[i]->gpu);
            free(f->ph[i]->host);
            free(f->ph[i]);
        }
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

/* ---- phase energy: a spacing cut to the phases' windows ---------------------------- */

static void collect_window(void *ctx, size_t phase, int64_t start, int64_t end)
{
    struct span_buf *b = ctx;
    if (b->n == b->cap) {
        b->cap = b->cap ? b->cap * 2 : 16;
        b->v = rm_xrealloc(b->v, b->cap * sizeof *b->v);
    }
    b->v[b->n++] = (struct span_piece){phase, start, end};
}

static int cmp_piece(const void *x, const void *y)
{
    const struct span_piece *a = x, *b = y;
    if (a->phase != b->phase) return a->phase < b->phase ? -1 : 1;
    return a->a < b->a ? -1 : a->a > b->a;
}

/* Power at t on the line from (t0, p0) to (t1, p1); one missing end: the other's value. */
static double power_at(int64_t t0, double p0, int64_t t1, double p1, int64_t t)
{
    if (isnan(p0)) return p1;
    if (isnan(p1)) return p0;
    return p0 + (p1 - p0) * ((double)(t - t0) / (double)(t1 - t0));
}

void rm_phase_spans(const struct rm_runlog *rl, struct span_buf *buf, int64_t t0, double p0,
                    int64_t t1, double p1, int64_t gap_ns,
                    void (*add)(void *ctx, size_t phase, enum rm_span_kind kind, int64_t ns,
                                double joules),
                    void *ctx)
{
    if (!rl || rl->nwin == 0 || t0 == RM_NO_TIME || t1 == RM_NO_TIME || t1 <= t0) return;
    double jall;
    int64_t dt;
    enum rm_span_kind kind = rm_energy_span(t0, p0, t1, p1, gap_ns, &jall, &dt);
    if (kind == RM_SPAN_BACKWARDS) return;
    buf->n = 0;
    rm_runlog_windows_over(rl, t0, t1, collect_window, buf);
    if (buf->n == 0) return;
    for (size_t k = 0; k < buf->n; k++) { /* clipped at the samples */
        if (buf->v[k].a < t0) buf->v[k].a = t0;
        if (buf->v[k].b > t1) buf->v[k].b = t1;
    }
    qsort(buf->v, buf->n, sizeof *buf->v, cmp_piece);
    bool power = !isnan(p0) || !isnan(p1);
    for (size_t k = 0; k < buf->n;) {
        size_t phase = buf->v[k].phase;
        int64_t ns = 0;
        double j = 0;
        while (k < buf->n && buf->v[k].phase == phase) {
            /* The union of this phase's windows: overlapping ones merged. */
            int64_t a = buf->v[k].a, b = buf->v[k].b;
            for (k++; k < buf->n && buf->v[k].phase == phase && buf->v[k].a <= b; k++)
                if (buf->v[k].b > b) b = buf->v[k].b;
            if (b <= a) continue;
            ns += b - a;
            if (kind == RM_SPAN_BRIDGED && power)
                j += (power_at(t0, p0, t1, p1, a) + power_at(t0, p0, t1, p1, b)) / 2 *
                     ((double)(b - a) / 1e9);
        }
        if (ns > 0) add(ctx, phase, kind, ns, j);
    }
}

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

static void flush_group(struct file_agg *f)
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

static void add_phase_span(void *ctx, size_t phase, enum rm_span_kind kind, int64_t ns, double j)
{
    struct span_ctx *c = ctx;
    if (phase >= c->f->rl->nphases) return;
    rm_stats_add_span(rm_file_phase_gpu(c->f, phase, c->slot), kind, ns, j);
}

static void add_gpu_sample(struct file_agg *f, const struct rm_gpu_sample *s)
{
    f->rows++;
    if (!f->group_open || s->t_ns != f->group_t) flush_group(f);
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
            flush_group(f);
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
        flush_group(f); /* the same GPU again without a new time: a new sample group */
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
    phases_at(f, s->t_ns);
    for (size_t k = 0; k < f->nplist; k++)
        rm_stats_add_point(rm_file_phase_gpu(f, f->plist[k], i), s->t_ns, s->v, s->valid);
}

static void add_host_sample(struct file_agg *f, const struct rm_host_sample *s)
{
    bool proc = f->kind == RM_INPUT_PROC_CSV;
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
static void add_app_row(struct file_agg *f, const struct rm_app_row *row)
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

static void close_apps(struct file_agg *f)
{
    if (!f->apps) return;
    phases_at(f, f->apps->t_ns);
    rm_apps_close(f->apps, f->plist, f->nplist);
}

static void skip(struct file_agg *f, int rc)
{
    int why = -rc - 1;
    if (why >= 0 && why < RM_SKIP_COUNT) f->skipped[why]++;
}

/* ---- the readers: one row per input kind ------------------------------------------ */

/* Parses one CSV row of the file's kind: 1 for a sample (its time in *t; added to f when
 * add), 0 for a header, or -(1 + enum rm_skip). */
typedef int (*row_reader)(struct file_agg *f, const struct rm_csv_row *row, bool add, int64_t *t);

static int read_gpu_row(struct file_agg *f, const struct rm_csv_row *row, bool add, int64_t *t)
{
    struct rm_gpu_sample s;
    int rc = rm_gpucsv_row(&f->parser->gpu, row, &s);
    if (rc == 1) {
        *t = s.t_ns;
        if (add) add_gpu_sample(f, &s);
    }
    return rc;
}

static int read_dmon_row(struct file_agg *f, const struct rm_csv_row *row, bool add, int64_t *t)
{
    struct rm_gpu_sample s;
    int rc = rm_dmon_csv_row(&f->parser->dmon, row, &s);
    if (rc == 1) {
        *t = s.t_ns;
        if (add) add_gpu_sample(f, &s);
    }
    return rc;
}

static int read_host_row(struct file_agg *f, const struct rm_csv_row *row, bool add, int64_t *t)
{
    struct rm_host_sample s;
    int rc = rm_hostcsv_row(&f->parser->host, row, &s);
    if (rc == 1) {
        *t = s.t_ns;
        if (add) add_host_sample(f, &s);
    }
    return rc;
}

static int read_apps_row(struct file_agg *f, const struct rm_csv_row *row, bool add, int64_t *t)
{
    struct rm_app_row a;
    int rc = rm_appscsv_row(&f->parser->apps, row, &a);
    if (rc == 1) {
        *t = a.t_ns;
        if (add) add_app_row(f, &a);
    }
    return rc;
}

static void reset_gpu(struct file_agg *f)
{
    rm_gpucsv_init(&f->parser->gpu, f->gpu_fields);
    f->parser->gpu.fields_src = f->gpu_fields_src;
}
static void reset_dmon(struct file_agg *f)
{
    rm_dmon_map_init(&f->parser->dmon);
}
static void reset_host(struct file_agg *f)
{
    rm_hostcsv_init(&f->parser->host);
}
static void reset_apps(struct file_agg *f)
{
    rm_appscsv_init(&f->parser->apps);
}

/* Adding an input kind (a new collector's files) is one row here. dmon text is read by line
 * (on_dmon_line), so it has no row reader. */
static const struct {
    void (*reset)(struct file_agg *f);
    row_reader row;
} readers[RM_INPUT_COUNT] = {
    [RM_INPUT_GPU_CSV] = {reset_gpu, read_gpu_row},
    [RM_INPUT_DMON_TEXT] = {reset_dmon, NULL},
    [RM_INPUT_DMON_CSV] = {reset_dmon, read_dmon_row},
    [RM_INPUT_CPU_CSV] = {reset_host, read_host_row},
    [RM_INPUT_PROC_CSV] = {reset_host, read_host_row},
    [RM_INPUT_APPS_CSV] = {reset_apps, read_apps_row},
};

static void on_csv_row(void *ctx, const struct rm_csv_row *row)
{
    struct file_agg *f = ctx;
    int64_t t;
    int rc = readers[f->kind].row(f, row, true, &t);
    if (rc < 0) skip(f, rc);
}

static void on_dmon_line(void *ctx, const char *line, size_t len, bool torn)
{
    struct file_agg *f = ctx;
    struct rm_gpu_sample s;
    int rc = rm_dmon_text_line(&f->parser->dmon, line, len, torn, &s);
    if (rc == 1)
        add_gpu_sample(f, &s);
    else if (rc < 0)
        skip(f, rc);
}

static void reset_parser(struct file_agg *f)
{
    readers[f->kind].reset(f);
}

/* Median spacing of the distinct sample times in the first 256 KiB of the file. */
struct prescan {
    int64_t t[65];
    int n;
};

static void prescan_gpu(void *ctx, const struct rm_gpu_sample *s)
{
    struct prescan *p = ctx;
    if (s->t_ns != RM_NO_TIME && p->n < 65 && (p->n == 0 || p->t[p->n - 1] != s->t_ns))
        p->t[p->n++] = s->t_ns;
}

struct prescan_ctx {
    struct file_agg *f;
    struct prescan ps;
};

static void prescan_csv_row(void *ctx, const struct rm_csv_row *row)
{
    struct prescan_ctx *c = ctx;
    struct rm_gpu_sample s;
    if (readers[c->f->kind].row(c->f, row, false, &s.t_ns) == 1) prescan_gpu(&c->ps, &s);
}

static void prescan_line(void *ctx, const char *line, size_t len, bool torn)
{
    struct prescan_ctx *c = ctx;
    struct rm_gpu_sample s;
    if (rm_dmon_text_line(&c->f->parser->dmon, line, len, torn, &s) == 1) prescan_gpu(&c->ps, &s);
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

/* Reads up to cap bytes from the start of f's file and hands them to the parser of its kind:
 * line_fn for dmon text, row_fn for CSV (its last, cut-off row only when finish is set). The
 * parser is reset before and after. Returns the bytes (the caller frees them) with *got set,
 * or NULL when the file cannot be opened or memory is short. */
static char *scan_head(struct file_agg *f, size_t cap, rm_line_fn line_fn, rm_csv_row_fn row_fn,
                       void *ctx, int finish, size_t *got)
{
    *got = 0;
    int fd = open(f->path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return NULL;
    char *buf = malloc(cap);
    while (buf && *got < cap) {
        ssize_t r = read(fd, buf + *got, cap - *got);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) break;
        *got += (size_t)r;
    }
    close(fd);
    reset_parser(f);
    if (buf && f->kind == RM_INPUT_DMON_TEXT) {
        rm_split_lines(buf, *got, 65536, line_fn, ctx, NULL);
    } else if (buf) {
        struct rm_csv_reader *r = rm_csv_new(row_fn, ctx);
        if (r) {
            rm_csv_feed(r, buf, *got);
            if (finish) rm_csv_finish(r);
            rm_csv_free(r);
        }
    }
    reset_parser(f);
    return buf;
}

static int64_t prescan_interval(struct file_agg *f)
{
    struct prescan_ctx c = {.f = f};
    size_t got;
    /* Only whole lines: the cut-off last one would read as torn anyway. */
    free(scan_head(f, 256 * 1024, prescan_line, prescan_csv_row, &c, 0, &got));
    int64_t d[64];
    int n = 0;
    for (int i = 1; i < c.ps.n; i++)
        if (c.ps.t[i] > c.ps.t[i - 1]) d[n++] = c.ps.t[i] - c.ps.t[i - 1];
    if (n == 0) return 0;
    qsort(d, (size_t)n, sizeof d[0], cmp_i64);
    return d[n / 2];
}

/* A GPU file's gaps are its GPUs' own: one GPU's hole while another's rows go on is a gap
 * (the file's times alone would hide it). Host files keep the spacing of the file's times. */
static void gaps_per_gpu(struct file_agg *f)
{
    if (f->kind != RM_INPUT_GPU_CSV && f->kind != RM_INPUT_DMON_TEXT &&
        f->kind != RM_INPUT_DMON_CSV)
        return;
    f->gaps = 0;
    f->gap_total_ns = 0;
    for (size_t i = 0; i < f->gpus.n; i++) {
        f->gaps += f->gpus.s[i].st.gaps;
        if (__builtin_add_overflow(f->gap_total_ns, f->gpus.s[i].st.gap_ns, &f->gap_total_ns))
            f->gap_total_ns = INT64_MAX;
    }
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

/* For a file without data rows: the first line its reader rejects as not data (a header is
 * not one), read again from the first 64 KiB. A file of nvidia-smi's output that holds only
 * "Failed to initialize NVML: ..." is explained by that line better than by anything else. */
struct first_bad {
    struct file_agg *f;
    uint64_t line, at;
};

static void first_bad_row(void *ctx, const struct rm_csv_row *row)
{
    struct first_bad *b = ctx;
    int64_t t;
    int rc = readers[b->f->kind].row(b->f, row, false, &t);
    if (!b->line && rc < 0 && rc != -(1 + RM_SKIP_PER_CPU)) b->line = row->line;
}

static void first_bad_dmon(void *ctx, const char *line, size_t len, bool torn)
{
    struct first_bad *b = ctx;
    struct rm_gpu_sample s;
    b->at++; /* blank lines are delivered too, so this is the line number */
    if (!b->line && rm_dmon_text_line(&b->f->parser->dmon, line, len, torn, &s) < 0)
        b->line = b->at;
}

/* Writes "; its first line that is not data (line N) ...: TEXT" (TEXT escaped) into out, or
 * nothing when every line was data, a header or blank. */
static void quote_first_bad_line(struct file_agg *f, char *out, size_t cap)
{
    out[0] = '\0';
    struct first_bad b = {.f = f};
    size_t got;
    char *buf = scan_head(f, 64 * 1024, first_bad_dmon, first_bad_row, &b, 1, &got);
    if (!buf) return;
    const char *p = buf, *end = buf + got;
    for (uint64_t n = 1; b.line && n < b.line && p < end; n++) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        p = nl ? nl + 1 : end;
    }
    if (b.line && p < end) {
        const char *e = memchr(p, '\n', (size_t)(end - p));
        size_t len = e ? (size_t)(e - p) : (size_t)(end - p);
        while (len && (p[len - 1] == '\r' || p[len - 1] == ' ' || p[len - 1] == '\t'))
            len--;
        char text[240];
        size_t full = rm_term_escape_n(text, sizeof text, p, len);
        snprintf(out, cap,
                 "; its first line that is not data (line %llu), maybe nvidia-smi's "
                 "own error: %s%s",
                 (unsigned long long)b.line, text, full >= sizeof text ? "..." : "");
    }
    free(buf);
}

/* Everything before the rows: the parser, the sampling interval, the file's size. */
static int scan_prepare(struct file_agg *f, int64_t interval_ns)
{
    f->parser = calloc(1, sizeof *f->parser);
    if (!f->parser) {
        f->rc = 1;
        snprintf(f->err, sizeof f->err, "%s: out of memory", f->path);
        return -1;
    }
    /* pmon samples at whole seconds whatever the session's interval: its own spacing. */
    f->interval_ns =
        interval_ns > 0 && f->kind != RM_INPUT_APPS_CSV ? interval_ns : prescan_interval(f);
    if (f->interval_ns > 86400 * RM_NS_PER_SEC)
        f->interval_ns = 86400 * RM_NS_PER_SEC; /* keeps 3 x interval far from overflow */
    f->gap_ns = 3 * f->interval_ns;
    reset_parser(f);
    struct stat st;
    if (stat(f->path, &st) == 0) f->bytes = (uint64_t)st.st_size;
    return 0;
}

/* The rows of bytes [off, end) of the file into f. */
static int scan_range(struct file_agg *f, uint64_t off, uint64_t end, _Atomic uint64_t *progress,
                      uint64_t *longl, bool *quoted)
{
    if (f->kind == RM_INPUT_DMON_TEXT)
        return rm_read_lines_range(f->path, off, end, 65536, on_dmon_line, f, progress, longl,
                                   f->err, sizeof f->err);
    return rm_csv_read_range(f->path, off, end, on_csv_row, f, progress, longl, quoted, f->err,
                             sizeof f->err);
}

/* After the rows: the last sample group, gaps, notes, and why a file without rows is empty. */
static void scan_finish(struct file_agg *f, int rc, uint64_t longl)
{
    f->skipped[RM_SKIP_LONG_LINE] += longl;
    if (f->group_open) flush_group(f);
    gaps_per_gpu(f);
    close_apps(f);
    if (f->kind == RM_INPUT_GPU_CSV && f->parser->gpu.assumed)
        snprintf(f->note, sizeof f->note, "%s: %s", f->path, f->parser->gpu.note);
    if (rc == 0 && f->err[0]) { /* the reader's note: rows it skipped for a limit */
        size_t u = strlen(f->note);
        snprintf(f->note + u, sizeof f->note - u, "%s%s", u ? "; " : "", f->err);
        f->err[0] = '\0';
    }
    if (rc) {
        f->rc = 2;
    } else if (f->rows == 0) {
        f->rc = 2;
        char why[384];
        quote_first_bad_line(f, why, sizeof why);
        snprintf(f->err, sizeof f->err, "%s: holds no data rows (%s)%s", f->path,
                 rm_input_kind_names[f->kind], why);
    }
    free(f->parser);
    f->parser = NULL;
}

void rm_scan_file(struct file_agg *f, int64_t interval_ns, _Atomic uint64_t *progress)
{
    if (scan_prepare(f, interval_ns)) return;
    uint64_t longl = 0;
    int rc = scan_range(f, 0, UINT64_MAX, progress, &longl, NULL);
    scan_finish(f, rc, longl);
}

/* ---- one file in chunks ------------------------------------------------------------ *
 *
 * A large GPU file is cut into chunks of a fixed size (RUNMON_SUMMARY_CHUNK_BYTES, default
 * 8 MiB), each moved on to the first row of a new sample time, so that no sample group is cut
 * (a new time always starts one). Every chunk after the first starts with the parser's state
 * after the file's first data row (its column map); the chunks are scanned in parallel and
 * folded in order like consecutive files of one source: GPU statistics merged with the
 * spacing across the boundary bridged (energy, gaps), phase points folded and the boundary
 * spacing cut to the phases' windows. The grid depends only on the file, never on the thread
 * count, so every --threads gives the same figures. When a chunk's assumption turns out wrong
 * (the column map changed inside the file, a quoted field, a line over a limit), the file is
 * scanned again whole, in one piece. */

#define RM_CHUNK_DEFAULT (8ull << 20)

static uint64_t chunk_bytes(void)
{
    const char *e = getenv("RUNMON_SUMMARY_CHUNK_BYTES");
    if (!e || !*e) return RM_CHUNK_DEFAULT;
    char *end;
    unsigned long long v = strtoull(e, &end, 10);
    return *end ? RM_CHUNK_DEFAULT : (uint64_t)v; /* 0: never in chunks */
}

static bool chunkable(enum rm_input_kind k)
{
    return k == RM_INPUT_GPU_CSV || k == RM_INPUT_DMON_CSV || k == RM_INPUT_DMON_TEXT;
}

/* Whether two parser states map the columns the same way. */
static bool same_map(enum rm_input_kind k, const void *a, const void *b)
{
    if (k == RM_INPUT_GPU_CSV) {
        const struct rm_gpucsv *x = a, *y = b; /* the parser union's members */
        return x->mapped == y->mapped && x->assumed == y->assumed && x->has_ts == y->has_ts &&
               x->ncols == y->ncols && !memcmp(x->role, y->role, sizeof x->role) &&
               !memcmp(x->metric, y->metric, sizeof x->metric) && x->first_len == y->first_len &&
               !memcmp(x->first, y->first, x->first_len);
    }
    const struct rm_dmon_map *x = a, *y = b;
    return x->mapped == y->mapped && x->ncols == y->ncols &&
           !memcmp(x->metric, y->metric, sizeof x->metric) && x->gpu_col == y->gpu_col &&
           x->ts_col == y->ts_col && x->date_col == y->date_col && x->time_col == y->time_col;
}

/* Probing lines one at a time: the row reader's verdict and time for the last line fed. */
struct probe {
    struct file_agg *f;
    int rc;
    int64_t t;
};

static void probe_row(void *ctx, const struct rm_csv_row *row)
{
    struct probe *p = ctx;
    p->rc = readers[p->f->kind].row(p->f, row, false, &p->t);
}

/* Feeds one whole line (without its "\n") to f's parser: 1 with *t for a sample, else 0 or
 * a skip. r is a CSV reader set up with probe_row (NULL for dmon text). */
static int probe_line(struct probe *p, struct rm_csv_reader *r, const char *line, size_t len)
{
    p->rc = 0;
    if (!r) {
        struct rm_gpu_sample s;
        p->rc = rm_dmon_text_line(&p->f->parser->dmon, line, len, false, &s);
        p->t = s.t_ns;
        return p->rc;
    }
    /* The line and its "\n" in one feed: the reader's whole-line path, nothing held back. */
    char tmp[4096];
    if (len >= sizeof tmp) return -(1 + RM_SKIP_LONG_LINE);
    memcpy(tmp, line, len);
    tmp[len] = '\n';
    if (rm_csv_feed(r, tmp, len + 1)) return -(1 + RM_SKIP_NOT_DATA);
    return p->rc;
}

static int64_t probe_time(const struct probe *p)
{
    return p->rc == 1 ? p->t : RM_NO_TIME;
}

/* A chunk's file_agg: f's settings, its parser in state from (a copy). */
static struct file_agg *new_part(const struct file_agg *f, const void *from, uint64_t off,
                                 uint64_t end)
{
    struct file_agg *p = rm_xcalloc(1, sizeof *p);
    rm_file_agg_init(p, f->kind, f->path);
    p->rl = f->rl;
    p->gpu_fields = f->gpu_fields;
    p->gpu_fields_src = f->gpu_fields_src;
    p->gpu_count = f->gpu_count;
    p->interval_ns = f->interval_ns;
    p->gap_ns = f->gap_ns;
    p->parser = rm_xmemdup(from, sizeof *p->parser);
    p->part_off = off;
    p->part_end = end;
    p->part_start = rm_xmemdup(from, sizeof *p->parser);
    return p;
}

enum { PROBE_WINDOW = 256 * 1024 }; /* bytes read to find the first row or a cut */

/* The parser's state after the file's first data row (what every later chunk starts in), or
 * NULL when there is no place to cut: no timed row in the first window, or a quote first. */
static void *first_row_state(int fd, char *buf, struct probe *pr, struct rm_csv_reader *r)
{
    ssize_t got = pread(fd, buf, PROBE_WINDOW, 0);
    for (size_t at = 0; got > 0 && at < (size_t)got;) {
        const char *nl = memchr(buf + at, '\n', (size_t)got - at);
        if (!nl) break;
        size_t len = (size_t)(nl - (buf + at));
        if (memchr(buf + at, '"', len)) break;
        if (probe_line(pr, r, buf + at, len) == 1) {
            /* Rows without a time (dmon without -o T) give no place to cut: read whole. */
            if (probe_time(pr) == RM_NO_TIME) return NULL;
            void *s0 = rm_xmemdup(pr->f->parser, sizeof *pr->f->parser);
            return s0;
        }
        at += len + 1;
    }
    return NULL;
}

/* Where the chunk that the grid starts at off really starts: the first row, after the first
 * line starting at or after off, whose time differs from that line's row. 0 when the window
 * holds none, UINT64_MAX when nothing more can be read. */
static uint64_t find_cut(int fd, char *buf, uint64_t off, struct probe *pr, struct rm_csv_reader *r,
                         const void *s0)
{
    ssize_t got = pread(fd, buf, PROBE_WINDOW, (off_t)(off - 1));
    if (got <= 0) return UINT64_MAX;
    memcpy(pr->f->parser, s0, sizeof *pr->f->parser);
    const char *p = memchr(buf, '\n', (size_t)got);
    bool have = false;
    int64_t t0 = RM_NO_TIME;
    while (p) {
        const char *ls = p + 1, *nl = memchr(ls, '\n', (size_t)(buf + got - ls));
        if (!nl || memchr(ls, '"', (size_t)(nl - ls))) return 0;
        if (probe_line(pr, r, ls, (size_t)(nl - ls)) == 1) {
            int64_t t = probe_time(pr);
            if (!have) {
                have = true;
                t0 = t;
            } else if (t != t0) {
                return off - 1 + (uint64_t)(ls - buf);
            }
        }
        p = nl;
    }
    return 0;
}

/* The chunks of f (already prepared: interval, parser reset), or 0 when f is read whole.
 * *parts is malloc'd; its first chunk starts at 0, the last ends at the end of the file. */
static size_t plan_chunks(struct file_agg *f, uint64_t chunk, struct file_agg ***parts)
{
    *parts = NULL;
    if (!chunk || !chunkable(f->kind) || f->bytes < 2 * chunk) return 0;
    int fd = open(f->path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return 0;
    char *buf = malloc(PROBE_WINDOW);
    struct rm_csv_reader *r = NULL;
    struct probe pr = {.f = rm_xcalloc(1, sizeof *pr.f)};
    rm_file_agg_init(pr.f, f->kind, NULL);
    pr.f->gpu_fields = f->gpu_fields;
    pr.f->gpu_fields_src = f->gpu_fields_src;
    pr.f->parser = rm_xmemdup(f->parser, sizeof *pr.f->parser);
    if (f->kind != RM_INPUT_DMON_TEXT) r = rm_csv_new(probe_row, &pr);
    size_t n = 0;
    void *s0 =
        buf && (r || f->kind == RM_INPUT_DMON_TEXT) ? first_row_state(fd, buf, &pr, r) : NULL;
    uint64_t *cut = NULL;
    size_t ncut = 0;
    for (uint64_t off = chunk; s0 && off < f->bytes; off += chunk) {
        uint64_t at_cut = find_cut(fd, buf, off, &pr, r, s0);
        if (at_cut == UINT64_MAX) break;
        if (at_cut && (ncut == 0 || at_cut > cut[ncut - 1]) && at_cut < f->bytes) {
            cut = rm_xrealloc(cut, (ncut + 1) * sizeof *cut);
            cut[ncut++] = at_cut;
        }
    }
    if (ncut) {
        n = ncut + 1;
        *parts = rm_xcalloc(n, sizeof **parts);
        for (size_t k = 0; k < n; k++)
            (*parts)[k] = new_part(f, k ? s0 : (const void *)f->parser, k ? cut[k - 1] : 0,
                                   k < ncut ? cut[k] : UINT64_MAX);
    }
    free(cut);
    free(s0);
    rm_csv_free(r);
    rm_file_agg_free(pr.f);
    free(buf);
    close(fd);
    return n;
}

static void scan_part(struct file_agg *p, _Atomic uint64_t *progress)
{
    uint64_t longl = 0;
    int rc = scan_range(p, p->part_off, p->part_end, progress, &longl, &p->part_quoted);
    if (p->group_open) flush_group(p);
    p->skipped[RM_SKIP_LONG_LINE] += longl;
    p->rc = rc ? 2 : 0;
}

struct fold_ctx {
    struct file_agg *f;
    size_t slot;
};

static void add_fold_span(void *ctx, size_t phase, enum rm_span_kind kind, int64_t ns, double j)
{
    struct fold_ctx *c = ctx;
    if (phase < c->f->rl->nphases)
        rm_stats_add_span(rm_file_phase_gpu(c->f, phase, c->slot), kind, ns, j);
}

/* Folds chunk b (the stretch of the file right after what f holds) into f. */
static void fold_part(struct file_agg *f, const struct file_agg *b)
{
    f->rows += b->rows;
    for (int k = 0; k < RM_SKIP_COUNT; k++)
        f->skipped[k] += b->skipped[k];
    if (f->first_ns == RM_NO_TIME) f->first_ns = b->first_ns;
    if (b->last_ns != RM_NO_TIME && (f->last_ns == RM_NO_TIME || b->last_ns > f->last_ns))
        f->last_ns = b->last_ns;
    rm_stat_merge(&f->total_power, &b->total_power);
    size_t *map = rm_xcalloc(b->gpus.n + 1, sizeof *map);
    for (size_t i = 0; i < b->gpus.n; i++) {
        const struct gpu_slot *g = &b->gpus.s[i];
        size_t j = rm_gpu_table_find(&f->gpus, g->key, g->keylen);
        if (j == (size_t)-1) {
            j = rm_gpu_table_add(&f->gpus, g->key, g->keylen);
            struct gpu_slot *d = &f->gpus.s[j];
            struct rm_gpu_stats keep = d->st;
            *d = *g;
            d->st = keep;
        }
        map[i] = j;
        struct rm_gpu_stats *a = &f->gpus.s[j].st;
        /* The spacing across the boundary, inside the phases' windows, as add_gpu_sample
         * would have cut it. */
        if (f->rl && f->rl->nwin && a->last_ns != RM_NO_TIME && g->st.first_ns != RM_NO_TIME) {
            struct fold_ctx c = {f, j};
            rm_phase_spans(f->rl, &f->spans, a->last_ns, a->last_power, g->st.first_ns,
                           g->st.first_power, f->gap_ns, add_fold_span, &c);
        }
        rm_stats_merge(a, &g->st, f->gap_ns);
    }
    for (size_t p = 0; b->ph && p < b->nph; p++) {
        const struct phase_acc *a = b->ph[p];
        for (size_t i = 0; a && a->used && i < a->ngpu && i < b->gpus.n; i++) {
            const struct rm_gpu_stats *st = &a->gpu[i];
            if (!st->samples && !st->covered_ns && !st->gaps) continue;
            rm_stats_fold(rm_file_phase_gpu(f, p, map[i]), st);
        }
    }
    free(map);
}

/* After every chunk of f was scanned: f's figures folded from them, or f scanned again whole
 * when one of them could not stand for its stretch of the file. The parts are freed. */
static void finish_parts(struct file_agg *f, struct file_agg **parts, size_t n, int64_t interval_ns,
                         _Atomic uint64_t *progress)
{
    bool ok = true;
    const char *forced = getenv("RUNMON_SUMMARY_CHUNK_BYTES");
    for (size_t k = 0; k < n && ok; k++) {
        const struct file_agg *p = parts[k];
        /* Each chunk must have ended in the column map the next one started in. */
        ok = p->rc == 0 && !p->err[0] && !p->part_quoted && !p->skipped[RM_SKIP_LONG_LINE] &&
             (k + 1 == n || same_map(f->kind, p->parser, parts[k + 1]->part_start));
    }
    /* Only for whoever set the chunk size: what became of the file. */
    if (forced && *forced)
        fprintf(stderr, "runmon summary: %s: %zu chunks%s\n", f->path, n,
                ok ? "" : ", read again whole");
    if (ok) {
        for (size_t k = 0; k < n; k++)
            fold_part(f, parts[k]);
        memcpy(f->parser, parts[n - 1]->parser, sizeof *f->parser);
        scan_finish(f, 0, 0);
    }
    for (size_t k = 0; k < n; k++)
        rm_file_agg_free(parts[k]);
    free(parts);
    if (!ok) { /* nothing was folded into f: only its parser to drop before reading it whole */
        free(f->parser);
        f->parser = NULL;
        rm_scan_file(f, interval_ns, progress);
    }
}

/* ---- scanning in parallel --------------------------------------------------------- */

/* One piece of work: a whole file, or one chunk of a file. */
struct work {
    struct file_agg *f;
    bool part;
};

struct pool {
    struct rm_summary *s;
    struct work *w;
    size_t n;
    atomic_size_t next;
    atomic_size_t done;
};

static void setup_job(struct rm_summary *s, struct file_agg *f)
{
    f->rl = &s->rl;
    f->gpu_fields = s->gpu_fields[0] ? s->gpu_fields : NULL;
    f->gpu_fields_src = s->gpu_fields_src;
    f->gpu_count = (int)json_array_size(json_object_get(s->session, "gpus"));
}

static void *worker(void *arg)
{
    struct pool *pl = arg;
    for (;;) {
        size_t i = atomic_fetch_add(&pl->next, 1);
        if (i >= pl->n) break;
        struct work *w = &pl->w[i];
        if (w->part)
            scan_part(w->f, &pl->s->progress);
        else if (w->f->path) {
            setup_job(pl->s, w->f);
            rm_scan_file(w->f, pl->s->interval_ns, &pl->s->progress);
        } else {
            rm_segment_resolve_phases(w->f, &pl->s->rl);
        }
        atomic_fetch_add(&pl->done, 1);
    }
    return NULL;
}

void rm_summary_run_jobs(struct rm_summary *s)
{
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    size_t nt = s->opts.threads > 0 ? (size_t)s->opts.threads : ncpu > 0 ? (size_t)ncpu : 1;
    uint64_t total = 0;
    for (size_t i = 0; i < s->njobs; i++) {
        struct stat st;
        if (s->jobs[i]->path && stat(s->jobs[i]->path, &st) == 0) total += (uint64_t)st.st_size;
    }
    /* Large GPU files in chunks, so that one file uses every thread. */
    uint64_t chunk = chunk_bytes();
    struct file_agg ***parts = rm_xcalloc(s->njobs + 1, sizeof *parts);
    size_t *nparts = rm_xcalloc(s->njobs + 1, sizeof *nparts);
    struct pool pl = {.s = s};
    size_t cap = 0;
    for (size_t i = 0; i < s->njobs; i++) {
        struct file_agg *f = s->jobs[i];
        if (f->path && chunk && chunkable(f->kind)) {
            setup_job(s, f);
            struct stat st;
            if (stat(f->path, &st) == 0 && (uint64_t)st.st_size >= 2 * chunk &&
                scan_prepare(f, s->interval_ns) == 0) {
                nparts[i] = plan_chunks(f, chunk, &parts[i]);
                if (!nparts[i]) { /* read whole after all: as a worker would start it */
                    free(f->parser);
                    f->parser = NULL;
                }
            }
        }
        size_t add = nparts[i] ? nparts[i] : 1;
        if (pl.n + add > cap) {
            cap = (pl.n + add) * 2;
            pl.w = rm_xrealloc(pl.w, cap * sizeof *pl.w);
        }
        for (size_t k = 0; k < add; k++)
            pl.w[pl.n++] = (struct work){nparts[i] ? parts[i][k] : f, nparts[i] > 0};
    }
    if (nt > pl.n) nt = pl.n;
    /* With progress wanted on a terminal, this thread only reports (once a second has
     * passed) and nt threads scan; otherwise it scans beside nt - 1 others. */
    bool report = s->opts.progress && isatty(2) && nt > 0;
    size_t nspawn = report ? nt : nt ? nt - 1 : 0;
    pthread_t *th = calloc(nspawn ? nspawn : 1, sizeof *th);
    size_t started = 0;
    for (size_t i = 0; th && i < nspawn; i++)
        if (pthread_create(&th[i], NULL, worker, &pl) == 0) started++;
    if (!report || started == 0) {
        worker(&pl);
    } else {
        int64_t t0 = rm_now_monotonic_ns();
        bool shown = false;
        while (atomic_load(&pl.done) < pl.n) {
            struct timespec ts = {0, 100 * 1000 * 1000};
            nanosleep(&ts, NULL);
            if (rm_now_monotonic_ns() - t0 > RM_NS_PER_SEC) {
                uint64_t done = atomic_load(&s->progress);
                fprintf(stderr, "\rrunmon summary: %llu / %llu MiB",
                        (unsigned long long)(done >> 20), (unsigned long long)(total >> 20));
                shown = true;
            }
        }
        if (shown) fprintf(stderr, "\n");
    }
    for (size_t i = 0; i < started; i++)
        pthread_join(th[i], NULL);
    free(th);
    for (size_t i = 0; i < s->njobs; i++)
        if (nparts[i]) finish_parts(s->jobs[i], parts[i], nparts[i], s->interval_ns, &s->progress);
    free(parts);
    free(nparts);
    free(pl.w);
}
