#include "summary/summary.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pcre2.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/alloc.h"
#include "base/json.h"
#include "base/rm_time.h"
#include "summary/csvread.h"
#include "summary/dmon_read.h"
#include "summary/gpucsv.h"
#include "summary/hostcsv.h"
#include "summary/runlog_read.h"
#include "summary/sample.h"
#include "summary/segments.h"
#include "summary/stats.h"

static const char *const kind_names[RM_INPUT_COUNT] = {"gpu_csv", "dmon_text", "dmon_csv",
                                                       "cpu_csv", "proc_csv"};

#define KEY_MAX 80

struct gpu_slot {
    char key[KEY_MAX];
    size_t keylen;
    int index; /* -1 when unknown */
    char uuid[64], name[96], pci[32];
    struct rm_gpu_stats st;
    uint64_t last_group;
};

/* One source's GPUs: a growable table keyed by identity. */
struct gpu_table {
    struct gpu_slot *s;
    size_t n, cap;
    size_t hint;
};

struct phase_acc {
    uint32_t stamp;
    bool used;
    struct rm_gpu_stats *gpu; /* by slot index of the owning table */
    size_t ngpu;
    struct rm_host_stats host;
};

struct file_agg {
    enum rm_input_kind kind;
    char *path; /* NULL for a pre-aggregated segment */
    bool strict;
    uint64_t bytes;
    struct gpu_table gpus;
    struct rm_stat total_power; /* per sample group: the sum over GPUs */
    struct rm_host_stats host;
    uint64_t rows, skipped[RM_SKIP_COUNT];
    uint64_t gaps;
    int64_t gap_total_ns, first_ns, last_ns, interval_ns, gap_ns;
    char note[1024];
    int rc;
    char err[512];

    /* Scan state. */
    union {
        struct rm_gpucsv gpu;
        struct rm_dmon_map dmon;
        struct rm_hostcsv host;
    } * parser;
    const char *gpu_fields;
    bool group_open, group_has_power;
    int64_t group_t, prev_t;
    uint64_t group_id;
    int pos;
    double group_power;
    const struct rm_runlog *rl;
    struct phase_acc *ph;
    size_t nph;
    uint32_t stamp;
    int64_t phase_t;
    size_t *plist, nplist, capplist;
};

struct rm_summary {
    struct rm_summary_opts opts;
    struct file_agg **jobs;
    size_t njobs, capjobs;
    char **runlogs;
    size_t nrunlogs;
    bool runlog_strict;
    json_t *session;
    pcre2_code *re;
    pcre2_match_data *md;
    struct rm_runlog rl;
    _Atomic uint64_t progress;
    atomic_size_t next_job;
    atomic_int done_jobs;
    int64_t interval_ns;
    char gpu_fields[4096];
};

/* ---- small helpers ---------------------------------------------------------------- */

static void copy_ref(char *dst, size_t cap, const struct rm_strref *r)
{
    size_t n = r->len < cap - 1 ? r->len : cap - 1;
    if (n) memcpy(dst, r->s, n);
    dst[n] = '\0';
}

static size_t table_find(struct gpu_table *t, const char *key, size_t len)
{
    if (t->hint < t->n && t->s[t->hint].keylen == len && !memcmp(t->s[t->hint].key, key, len))
        return t->hint;
    for (size_t i = 0; i < t->n; i++)
        if (t->s[i].keylen == len && !memcmp(t->s[i].key, key, len)) return i;
    return (size_t)-1;
}

static size_t table_add(struct gpu_table *t, const char *key, size_t len)
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

static void phase_hit(void *ctx, size_t phase)
{
    struct file_agg *f = ctx;
    struct phase_acc *p = &f->ph[phase];
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
    if (!f->ph) {
        f->nph = f->rl->nphases;
        f->ph = calloc(f->nph ? f->nph : 1, sizeof *f->ph);
        if (!f->ph) abort();
    }
    f->phase_t = t;
    f->stamp++;
    f->nplist = 0;
    rm_runlog_windows_at(f->rl, t, phase_hit, f);
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

static void add_gpu_sample(struct file_agg *f, const struct rm_gpu_sample *s)
{
    f->rows++;
    if (!f->group_open || s->t_ns != f->group_t) flush_group(f);
    f->group_t = s->t_ns;
    char key[KEY_MAX];
    size_t klen;
    const struct rm_strref *id = s->index.len  ? &s->index
                                 : s->uuid.len ? &s->uuid
                                 : s->pci.len  ? &s->pci
                                               : NULL;
    if (id) {
        key[0] = id == &s->index ? 'i' : id == &s->uuid ? 'u' : 'p';
        key[1] = ':';
        klen = 2 + (id->len < KEY_MAX - 3 ? id->len : KEY_MAX - 3);
        memcpy(key + 2, id->s, klen - 2);
    } else {
        /* No identity column: the n-th row of a sample group is GPU n. */
        klen = (size_t)snprintf(key, sizeof key, "i:%d", s->t_ns == RM_NO_TIME ? 0 : f->pos);
    }
    size_t i = table_find(&f->gpus, key, klen);
    if (i == (size_t)-1) {
        i = table_add(&f->gpus, key, klen);
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
    rm_stats_add(&g->st, s->t_ns, s->v, s->valid, f->gap_ns);
    phases_at(f, s->t_ns);
    for (size_t k = 0; k < f->nplist; k++) {
        struct phase_acc *p = &f->ph[f->plist[k]];
        if (p->ngpu <= i) {
            size_t n = f->gpus.n;
            p->gpu = rm_xrealloc(p->gpu, n * sizeof *p->gpu);
            for (size_t j = p->ngpu; j < n; j++)
                rm_stats_init(&p->gpu[j]);
            p->ngpu = n;
        }
        p->used = true;
        rm_stats_add(&p->gpu[i], s->t_ns, s->v, s->valid, f->gap_ns);
    }
}

static void add_host_sample(struct file_agg *f, const struct rm_host_sample *s)
{
    bool proc = f->kind == RM_INPUT_PROC_CSV;
    f->rows++;
    note_time(f, s->t_ns);
    rm_host_stats_add(&f->host, s, proc);
    phases_at(f, s->t_ns);
    for (size_t k = 0; k < f->nplist; k++) {
        f->ph[f->plist[k]].used = true;
        rm_host_stats_add(&f->ph[f->plist[k]].host, s, proc);
    }
}

static void skip(struct file_agg *f, int rc)
{
    int why = -rc - 1;
    if (why >= 0 && why < RM_SKIP_COUNT) f->skipped[why]++;
}

static void on_csv_row(void *ctx, const struct rm_csv_row *row)
{
    struct file_agg *f = ctx;
    int rc;
    if (f->kind == RM_INPUT_GPU_CSV) {
        struct rm_gpu_sample s;
        rc = rm_gpucsv_row(&f->parser->gpu, row, &s);
        if (rc == 1) add_gpu_sample(f, &s);
    } else if (f->kind == RM_INPUT_DMON_CSV) {
        struct rm_gpu_sample s;
        rc = rm_dmon_csv_row(&f->parser->dmon, row, &s);
        if (rc == 1) add_gpu_sample(f, &s);
    } else {
        struct rm_host_sample s;
        rc = rm_hostcsv_row(&f->parser->host, row, &s);
        if (rc == 1) add_host_sample(f, &s);
    }
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
    if (f->kind == RM_INPUT_GPU_CSV)
        rm_gpucsv_init(&f->parser->gpu, f->gpu_fields);
    else if (f->kind == RM_INPUT_DMON_CSV || f->kind == RM_INPUT_DMON_TEXT)
        rm_dmon_map_init(&f->parser->dmon);
    else
        rm_hostcsv_init(&f->parser->host);
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
    struct rm_host_sample h;
    int rc;
    if (c->f->kind == RM_INPUT_GPU_CSV) {
        rc = rm_gpucsv_row(&c->f->parser->gpu, row, &s);
    } else if (c->f->kind == RM_INPUT_DMON_CSV) {
        rc = rm_dmon_csv_row(&c->f->parser->dmon, row, &s);
    } else {
        rc = rm_hostcsv_row(&c->f->parser->host, row, &h);
        s.t_ns = h.t_ns;
    }
    if (rc == 1) prescan_gpu(&c->ps, &s);
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

static int64_t prescan_interval(struct file_agg *f)
{
    enum { N = 256 * 1024 };
    int fd = open(f->path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return 0;
    char *buf = malloc(N);
    ssize_t got = 0;
    while (buf && got < N) {
        ssize_t r = read(fd, buf + got, (size_t)(N - got));
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) break;
        got += r;
    }
    close(fd);
    struct prescan_ctx c = {.f = f};
    reset_parser(f);
    if (buf && f->kind == RM_INPUT_DMON_TEXT) {
        rm_split_lines(buf, (size_t)got, 65536, prescan_line, &c, NULL);
    } else if (buf) {
        struct rm_csv_reader *r = rm_csv_new(prescan_csv_row, &c);
        if (r) {
            /* Only whole lines: the cut-off last one would read as torn anyway. */
            rm_csv_feed(r, buf, (size_t)got);
            rm_csv_free(r);
        }
    }
    free(buf);
    reset_parser(f);
    int64_t d[64];
    int n = 0;
    for (int i = 1; i < c.ps.n; i++)
        if (c.ps.t[i] > c.ps.t[i - 1]) d[n++] = c.ps.t[i] - c.ps.t[i - 1];
    if (n == 0) return 0;
    qsort(d, (size_t)n, sizeof d[0], cmp_i64);
    return d[n / 2];
}

static void file_agg_init(struct file_agg *f, enum rm_input_kind kind, const char *path)
{
    memset(f, 0, sizeof *f);
    f->kind = kind;
    f->path = path ? strdup(path) : NULL;
    f->first_ns = f->last_ns = f->prev_t = f->group_t = RM_NO_TIME;
}

static void file_agg_free(struct file_agg *f)
{
    if (!f) return;
    free(f->path);
    free(f->gpus.s);
    for (size_t i = 0; f->ph && i < f->nph; i++)
        free(f->ph[i].gpu);
    free(f->ph);
    free(f->plist);
    free(f->parser);
    free(f);
}

static void scan_file(struct file_agg *f, int64_t interval_ns, _Atomic uint64_t *progress)
{
    f->parser = calloc(1, sizeof *f->parser);
    if (!f->parser) {
        f->rc = 1;
        snprintf(f->err, sizeof f->err, "%s: out of memory", f->path);
        return;
    }
    f->interval_ns = interval_ns > 0 ? interval_ns : prescan_interval(f);
    if (f->interval_ns > 86400 * RM_NS_PER_SEC)
        f->interval_ns = 86400 * RM_NS_PER_SEC; /* keeps 3 x interval far from overflow */
    f->gap_ns = 3 * f->interval_ns;
    reset_parser(f);
    uint64_t longl = 0;
    int rc;
    struct stat st;
    if (stat(f->path, &st) == 0) f->bytes = (uint64_t)st.st_size;
    if (f->kind == RM_INPUT_DMON_TEXT)
        rc =
            rm_read_lines(f->path, 65536, on_dmon_line, f, progress, &longl, f->err, sizeof f->err);
    else
        rc = rm_csv_read_file(f->path, on_csv_row, f, progress, &longl, f->err, sizeof f->err);
    f->skipped[RM_SKIP_LONG_LINE] += longl;
    if (f->group_open) flush_group(f);
    if (f->kind == RM_INPUT_GPU_CSV && f->parser->gpu.assumed)
        snprintf(f->note, sizeof f->note, "%s: %s", f->path, f->parser->gpu.note);
    if (rc) {
        f->rc = 2;
    } else if (f->rows == 0) {
        f->rc = 2;
        snprintf(f->err, sizeof f->err, "%s: holds no data rows (%s)", f->path,
                 kind_names[f->kind]);
    }
    free(f->parser);
    f->parser = NULL;
}

/* ---- the summary object ----------------------------------------------------------- */

struct rm_summary *rm_summary_new(const struct rm_summary_opts *opts)
{
    struct rm_summary *s = calloc(1, sizeof *s);
    if (!s) return NULL;
    if (opts) s->opts = *opts;
    rm_runlog_init(&s->rl);
    return s;
}

void rm_summary_free(struct rm_summary *s)
{
    if (!s) return;
    for (size_t i = 0; i < s->njobs; i++)
        file_agg_free(s->jobs[i]);
    free(s->jobs);
    for (size_t i = 0; i < s->nrunlogs; i++)
        free(s->runlogs[i]);
    free(s->runlogs);
    json_decref(s->session);
    if (s->md) pcre2_match_data_free(s->md);
    if (s->re) pcre2_code_free(s->re);
    rm_runlog_free(&s->rl);
    free(s);
}

static struct file_agg *push_job(struct rm_summary *s, enum rm_input_kind kind, const char *path)
{
    struct file_agg *f = malloc(sizeof *f);
    if (!f) abort();
    file_agg_init(f, kind, path);
    if (s->njobs == s->capjobs) {
        s->capjobs = s->capjobs ? s->capjobs * 2 : 8;
        s->jobs = rm_xrealloc(s->jobs, s->capjobs * sizeof *s->jobs);
    }
    s->jobs[s->njobs++] = f;
    return f;
}

static int add_file(struct rm_summary *s, enum rm_input_kind kind, const char *path, bool strict)
{
    if ((int)kind < 0 || kind >= RM_INPUT_COUNT || !path) return -1;
    push_job(s, kind, path)->strict = strict;
    return 0;
}

int rm_summary_add_file(struct rm_summary *s, enum rm_input_kind kind, const char *path)
{
    return add_file(s, kind, path, true);
}

int rm_summary_add_runlog(struct rm_summary *s, const char *path)
{
    s->runlogs = rm_xrealloc(s->runlogs, (s->nrunlogs + 1) * sizeof *s->runlogs);
    s->runlogs[s->nrunlogs] = strdup(path);
    if (!s->runlogs[s->nrunlogs]) abort();
    s->nrunlogs++;
    s->runlog_strict = true;
    return 0;
}

void rm_summary_set_session(struct rm_summary *s, json_t *session)
{
    json_decref(s->session);
    s->session = json_incref(session);
}

/* ---- segments (serialized per-file aggregates) ------------------------------------ */

static json_t *str_or_null(const char *v)
{
    return v && *v ? json_string(v) : json_null();
}

static json_t *file_agg_to_json(const struct file_agg *f)
{
    json_t *o = json_object(), *g = json_array(), *sk = json_object();
    json_object_set_new(o, "format", json_string("runmon-segment-stats"));
    json_object_set_new(o, "kind", json_string(kind_names[f->kind]));
    json_object_set_new(o, "interval_ns", json_integer(f->interval_ns));
    json_object_set_new(o, "gap_ns", json_integer(f->gap_ns));
    json_object_set_new(o, "rows", json_integer((json_int_t)f->rows));
    for (int i = 0; i < RM_SKIP_COUNT; i++)
        json_object_set_new(sk, rm_skip_names[i], json_integer((json_int_t)f->skipped[i]));
    json_object_set_new(o, "skipped", sk);
    json_object_set_new(o, "gaps", json_integer((json_int_t)f->gaps));
    json_object_set_new(o, "gap_total_ns", json_integer(f->gap_total_ns));
    json_object_set_new(o, "first_ns",
                        f->first_ns == RM_NO_TIME ? json_null() : json_integer(f->first_ns));
    json_object_set_new(o, "last_ns",
                        f->last_ns == RM_NO_TIME ? json_null() : json_integer(f->last_ns));
    for (size_t i = 0; i < f->gpus.n; i++) {
        const struct gpu_slot *sl = &f->gpus.s[i];
        json_array_append_new(
            g, json_pack("{s:s%,s:o,s:o,s:o,s:o,s:o}", "key", sl->key, sl->keylen, "index",
                         sl->index >= 0 ? json_integer(sl->index) : json_null(), "uuid",
                         str_or_null(sl->uuid), "name", str_or_null(sl->name), "pci_bus_id",
                         str_or_null(sl->pci), "stats", rm_stats_to_json(&sl->st)));
    }
    json_object_set_new(o, "gpus", g);
    json_object_set_new(o, "total_power", rm_stat_to_json(&f->total_power));
    json_object_set_new(o, "host", rm_host_stats_to_json(&f->host));
    return o;
}

static void copy_str(char *dst, size_t cap, json_t *v)
{
    const char *s = json_is_string(v) ? json_string_value(v) : "";
    snprintf(dst, cap, "%s", s);
}

static int file_agg_from_json(struct file_agg *f, const json_t *j, char *err, size_t errsz)
{
    file_agg_init(f, RM_INPUT_GPU_CSV, NULL); /* so the caller can always free it */
    const char *kind = json_string_value(json_object_get(j, "kind"));
    int k = -1;
    for (int i = 0; kind && i < RM_INPUT_COUNT; i++)
        if (!strcmp(kind, kind_names[i])) k = i;
    json_t *g = json_object_get(j, "gpus");
    if (k < 0 || !json_is_array(g)) {
        snprintf(err, errsz, "segment: unknown kind or no gpus array");
        return -1;
    }
    f->kind = (enum rm_input_kind)k;
    json_t *v;
    if (json_is_integer(v = json_object_get(j, "interval_ns")))
        f->interval_ns = json_integer_value(v);
    if (json_is_integer(v = json_object_get(j, "gap_ns"))) f->gap_ns = json_integer_value(v);
    if (json_is_integer(v = json_object_get(j, "rows"))) f->rows = (uint64_t)json_integer_value(v);
    if (json_is_integer(v = json_object_get(j, "gaps"))) f->gaps = (uint64_t)json_integer_value(v);
    if (json_is_integer(v = json_object_get(j, "gap_total_ns")))
        f->gap_total_ns = json_integer_value(v);
    if (json_is_integer(v = json_object_get(j, "first_ns"))) f->first_ns = json_integer_value(v);
    if (json_is_integer(v = json_object_get(j, "last_ns"))) f->last_ns = json_integer_value(v);
    for (int i = 0; i < RM_SKIP_COUNT; i++)
        if (json_is_integer(v = json_object_get(json_object_get(j, "skipped"), rm_skip_names[i])))
            f->skipped[i] = (uint64_t)json_integer_value(v);
    size_t i;
    json_t *e;
    json_array_foreach(g, i, e)
    {
        const char *key = json_string_value(json_object_get(e, "key"));
        if (!key || strlen(key) >= KEY_MAX) {
            snprintf(err, errsz, "segment: gpu without a key");
            return -1;
        }
        size_t si = table_add(&f->gpus, key, strlen(key));
        struct gpu_slot *sl = &f->gpus.s[si];
        json_t *ix = json_object_get(e, "index");
        sl->index = json_is_integer(ix) ? (int)json_integer_value(ix) : -1;
        copy_str(sl->uuid, sizeof sl->uuid, json_object_get(e, "uuid"));
        copy_str(sl->name, sizeof sl->name, json_object_get(e, "name"));
        copy_str(sl->pci, sizeof sl->pci, json_object_get(e, "pci_bus_id"));
        if (rm_stats_from_json(json_object_get(e, "stats"), &sl->st, err, errsz)) return -1;
    }
    if (rm_stat_from_json(json_object_get(j, "total_power"), &f->total_power) ||
        rm_host_stats_from_json(json_object_get(j, "host"), &f->host)) {
        snprintf(err, errsz, "segment: bad total_power or host");
        return -1;
    }
    return 0;
}

int rm_summary_add_segment(struct rm_summary *s, const json_t *seg, char *err, size_t errsz)
{
    struct file_agg tmp;
    if (file_agg_from_json(&tmp, seg, err, errsz)) {
        free(tmp.gpus.s);
        free(tmp.path);
        return -1;
    }
    struct file_agg *f = push_job(s, tmp.kind, NULL);
    free(f->path);
    *f = tmp;
    return 0;
}

json_t *rm_summary_segment_from_file(enum rm_input_kind kind, const char *path, double interval_s,
                                     char *err, size_t errsz)
{
    struct file_agg *f = malloc(sizeof *f);
    if (!f) return NULL;
    file_agg_init(f, kind, path);
    scan_file(f, (int64_t)llround(interval_s * 1e9), NULL);
    json_t *j = NULL;
    if (f->rc && f->rows == 0 && f->err[0])
        snprintf(err, errsz, "%s", f->err);
    else
        j = file_agg_to_json(f);
    file_agg_free(f);
    return j;
}

/* ---- scanning in parallel --------------------------------------------------------- */

static void *worker(void *arg)
{
    struct rm_summary *s = arg;
    for (;;) {
        size_t i = atomic_fetch_add(&s->next_job, 1);
        if (i >= s->njobs) break;
        struct file_agg *f = s->jobs[i];
        if (f->path) {
            f->rl = &s->rl;
            f->gpu_fields = s->gpu_fields[0] ? s->gpu_fields : NULL;
            scan_file(f, s->interval_ns, &s->progress);
        }
        atomic_fetch_add(&s->done_jobs, 1);
    }
    return NULL;
}

static void run_jobs(struct rm_summary *s)
{
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    size_t nt = s->opts.threads > 0 ? (size_t)s->opts.threads : ncpu > 0 ? (size_t)ncpu : 1;
    if (nt > s->njobs) nt = s->njobs;
    uint64_t total = 0;
    for (size_t i = 0; i < s->njobs; i++) {
        struct stat st;
        if (s->jobs[i]->path && stat(s->jobs[i]->path, &st) == 0) total += (uint64_t)st.st_size;
    }
    /* With progress wanted on a terminal, this thread only reports (once a second has
     * passed) and nt threads scan; otherwise it scans beside nt - 1 others. */
    bool report = s->opts.progress && isatty(2) && nt > 0;
    size_t nspawn = report ? nt : nt ? nt - 1 : 0;
    pthread_t *th = calloc(nspawn ? nspawn : 1, sizeof *th);
    size_t started = 0;
    for (size_t i = 0; th && i < nspawn; i++)
        if (pthread_create(&th[i], NULL, worker, s) == 0) started++;
    if (!report || started == 0) {
        worker(s);
    } else {
        int64_t t0 = rm_now_monotonic_ns();
        bool shown = false;
        while ((size_t)atomic_load(&s->done_jobs) < s->njobs) {
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
}

/* ---- merging ---------------------------------------------------------------------- */

struct source {
    struct gpu_table t;
    struct rm_stat total_power;
    int64_t gap_ns;
    struct rm_gpu_stats **ph; /* [phase][slot] */
    size_t *phn;
    size_t nph;
    uint64_t files;
};

static void source_free(struct source *src)
{
    for (size_t p = 0; src->ph && p < src->nph; p++)
        free(src->ph[p]);
    free(src->ph);
    free(src->phn);
    free(src->t.s);
}

static void source_merge(struct source *src, const struct file_agg *f, size_t nph)
{
    src->files++;
    int64_t gap = f->gap_ns > src->gap_ns ? f->gap_ns : src->gap_ns;
    size_t *map = calloc(f->gpus.n ? f->gpus.n : 1, sizeof *map);
    if (!map) abort();
    for (size_t i = 0; i < f->gpus.n; i++) {
        const struct gpu_slot *g = &f->gpus.s[i];
        size_t j = table_find(&src->t, g->key, g->keylen);
        if (j == (size_t)-1) {
            j = table_add(&src->t, g->key, g->keylen);
            struct gpu_slot *d = &src->t.s[j];
            struct rm_gpu_stats keep = d->st;
            *d = *g;
            d->st = keep;
        }
        rm_stats_merge(&src->t.s[j].st, &g->st, gap);
        map[i] = j;
    }
    src->gap_ns = gap;
    rm_stat_merge(&src->total_power, &f->total_power);
    if (f->ph && nph) {
        if (!src->ph) {
            src->nph = nph;
            src->ph = calloc(nph, sizeof *src->ph);
            src->phn = calloc(nph, sizeof *src->phn);
            if (!src->ph || !src->phn) abort();
        }
        for (size_t p = 0; p < nph && p < f->nph; p++) {
            const struct phase_acc *a = &f->ph[p];
            for (size_t i = 0; a->used && i < a->ngpu; i++) {
                if (!a->gpu[i].samples) continue;
                size_t j = map[i];
                if (src->phn[p] <= j) {
                    src->ph[p] = rm_xrealloc(src->ph[p], src->t.n * sizeof **src->ph);
                    for (size_t k = src->phn[p]; k < src->t.n; k++)
                        rm_stats_init(&src->ph[p][k]);
                    src->phn[p] = src->t.n;
                }
                rm_stats_merge(&src->ph[p][j], &a->gpu[i], gap);
            }
        }
    }
    free(map);
}

/* ---- JSON building ---------------------------------------------------------------- */

static json_t *jnum(double v, int decimals)
{
    if (!isfinite(v)) return json_null();
    double k = pow(10, decimals);
    double r = round(v * k) / k;
    return json_real(r == 0 ? 0 : r); /* no "-0.0" */
}

static json_t *jts(int64_t ns)
{
    if (ns == RM_NO_TIME || ns == RM_OPEN_END) return json_null();
    char b[RM_TS_BUFSZ];
    rm_format_ts(ns, b);
    return json_string(b);
}

static double st_mean(const struct rm_stat *s)
{
    return rm_stat_mean(s);
}
static double st_max(const struct rm_stat *s)
{
    return s->n ? s->max : NAN;
}

/* The stats reporting metric m: query-gpu first, dmon for memory-controller use. */
static const struct rm_gpu_stats *pick(const struct rm_gpu_stats *q, const struct rm_gpu_stats *d,
                                       int m, const char **src)
{
    const struct rm_gpu_stats *first = q, *second = d;
    const char *n1 = "query-gpu", *n2 = "dmon";
    if (m == RM_GM_MEMUTIL) {
        first = d, second = q;
        n1 = "dmon", n2 = "query-gpu";
    }
    if (first && first->m[m].n) {
        *src = n1;
        return first;
    }
    if (second && second->m[m].n) {
        *src = n2;
        return second;
    }
    *src = NULL;
    return NULL;
}

static json_t *mean_max(const struct rm_gpu_stats *s, int m, int dec)
{
    return json_pack("{s:o,s:o}", "mean", jnum(s ? st_mean(&s->m[m]) : NAN, dec), "max",
                     jnum(s ? st_max(&s->m[m]) : NAN, dec));
}

struct gpu_totals {
    struct rm_stat util, memutil, power, vram;
    bool memutil_dmon, memutil_query;
    double energy_j;
    bool has_energy;
    int64_t covered_ns;
};

static json_t *gpu_json(int index, const char *uuid, const char *name, const char *pci,
                        const struct rm_gpu_stats *q, const struct rm_gpu_stats *d,
                        struct gpu_totals *tot)
{
    const char *su, *sm, *sv, *sp, *st, *sc, *smc;
    const struct rm_gpu_stats *u = pick(q, d, RM_GM_UTIL, &su);
    const struct rm_gpu_stats *mu = pick(q, d, RM_GM_MEMUTIL, &sm);
    const struct rm_gpu_stats *v = pick(q, d, RM_GM_VRAM_USED, &sv);
    const struct rm_gpu_stats *p = pick(q, d, RM_GM_POWER, &sp);
    const struct rm_gpu_stats *t = pick(q, d, RM_GM_TEMP, &st);
    const struct rm_gpu_stats *c = pick(q, d, RM_GM_SMCLK, &sc);
    const struct rm_gpu_stats *mc = pick(q, d, RM_GM_MEMCLK, &smc);
    const struct rm_gpu_stats *timing = p ? p : q ? q : d; /* whose sample times count */
    uint64_t samples = q && q->samples ? q->samples : d ? d->samples : 0;
    json_t *o = json_object();
    json_object_set_new(o, "index", index >= 0 ? json_integer(index) : json_null());
    json_object_set_new(o, "uuid", str_or_null(uuid));
    json_object_set_new(o, "name", str_or_null(name));
    json_object_set_new(o, "pci_bus_id", str_or_null(pci));
    json_object_set_new(o, "samples", json_integer((json_int_t)samples));
    json_t *uo = mean_max(u, RM_GM_UTIL, 3);
    json_object_set_new(uo, "p50",
                        jnum(u ? rm_hist_quantile(u->util_hist, RM_UTIL_BUCKETS, 0.5) : NAN, 0));
    json_object_set_new(uo, "p95",
                        jnum(u ? rm_hist_quantile(u->util_hist, RM_UTIL_BUCKETS, 0.95) : NAN, 0));
    json_object_set_new(uo, "source", str_or_null(su));
    json_object_set_new(o, "util_pct", uo);
    json_t *mo = mean_max(mu, RM_GM_MEMUTIL, 3);
    json_object_set_new(mo, "source", str_or_null(sm));
    json_object_set_new(o, "mem_util_pct", mo);
    const struct rm_gpu_stats *vt = q && q->m[RM_GM_VRAM_TOTAL].n ? q : NULL;
    json_object_set_new(
        o, "vram_mb",
        json_pack("{s:o,s:o,s:o,s:o}", "peak", jnum(v ? st_max(&v->m[RM_GM_VRAM_USED]) : NAN, 3),
                  "mean", jnum(v ? st_mean(&v->m[RM_GM_VRAM_USED]) : NAN, 3), "total",
                  jnum(vt ? st_max(&vt->m[RM_GM_VRAM_TOTAL]) : NAN, 3), "source", str_or_null(sv)));
    json_t *po = mean_max(p, RM_GM_POWER, 3);
    json_object_set_new(po, "source", str_or_null(sp));
    json_object_set_new(o, "power_w", po);
    bool timed = p && p->first_ns != RM_NO_TIME;
    json_object_set_new(o, "energy_wh", jnum(timed ? p->energy_j / 3600 : NAN, 6));
    json_object_set_new(o, "temp_c_max", jnum(t ? st_max(&t->m[RM_GM_TEMP]) : NAN, 3));
    json_object_set_new(o, "sm_clock_mhz", mean_max(c, RM_GM_SMCLK, 3));
    json_object_set_new(o, "mem_clock_mhz", mean_max(mc, RM_GM_MEMCLK, 3));
    uint64_t un = u ? u->m[RM_GM_UTIL].n : 0;
    json_object_set_new(o, "idle_share", jnum(un ? (double)u->idle_samples / (double)un : NAN, 4));
    bool t2 = timing && timing->first_ns != RM_NO_TIME;
    json_object_set_new(o, "first", jts(t2 ? timing->first_ns : RM_NO_TIME));
    json_object_set_new(o, "last", jts(t2 ? timing->last_ns : RM_NO_TIME));
    json_object_set_new(o, "sampled_seconds", jnum(t2 ? (double)timing->covered_ns / 1e9 : NAN, 3));
    json_object_set_new(o, "gaps",
                        json_pack("{s:I,s:o}", "count", (json_int_t)(t2 ? timing->gaps : 0),
                                  "seconds", jnum(t2 ? (double)timing->gap_ns / 1e9 : 0, 3)));
    (void)st;
    (void)sc;
    (void)smc;
    if (tot) {
        if (u) rm_stat_merge(&tot->util, &u->m[RM_GM_UTIL]);
        if (mu) {
            rm_stat_merge(&tot->memutil, &mu->m[RM_GM_MEMUTIL]);
            if (sm[0] == 'd')
                tot->memutil_dmon = true;
            else
                tot->memutil_query = true;
        }
        if (p) rm_stat_merge(&tot->power, &p->m[RM_GM_POWER]);
        if (v) rm_stat_merge(&tot->vram, &v->m[RM_GM_VRAM_USED]);
        if (timed) {
            tot->energy_j += p->energy_j;
            tot->has_energy = true;
        }
        if (t2 && timing->covered_ns > tot->covered_ns) tot->covered_ns = timing->covered_ns;
    }
    return o;
}

static json_t *host_json(const struct rm_host_stats *h, bool proc)
{
    json_t *o = json_object();
    if (!proc) {
        static const int m[] = {RM_HM_USR, RM_HM_SYS, RM_HM_IOWAIT, RM_HM_STEAL, RM_HM_IDLE};
        json_object_set_new(o, "samples", json_integer((json_int_t)h->cpu_samples));
        for (size_t i = 0; i < sizeof m / sizeof m[0]; i++)
            json_object_set_new(o, rm_host_metric_names[m[i]],
                                json_pack("{s:o,s:o}", "mean", jnum(st_mean(&h->m[m[i]]), 3), "max",
                                          jnum(st_max(&h->m[m[i]]), 3)));
        json_object_set_new(o, "mem_used_peak_mb", jnum(st_max(&h->m[RM_HM_MEM_USED]), 3));
        json_object_set_new(o, "mem_total_mb", jnum(st_max(&h->m[RM_HM_MEM_TOTAL]), 3));
    } else {
        json_object_set_new(o, "samples", json_integer((json_int_t)h->proc_samples));
        json_object_set_new(o, "rss_peak_mb", jnum(st_max(&h->m[RM_HM_PROC_RSS]), 3));
        json_object_set_new(o, "cpu_pct",
                            json_pack("{s:o,s:o}", "mean", jnum(st_mean(&h->m[RM_HM_PROC_CPU]), 3),
                                      "max", jnum(st_max(&h->m[RM_HM_PROC_CPU]), 3)));
        json_object_set_new(o, "nprocs_max", jnum(st_max(&h->m[RM_HM_PROC_NPROCS]), 0));
    }
    return o;
}

struct final_gpu {
    int index;
    const struct gpu_slot *q, *d;
    size_t qi, di;
};

static int session_index_of(json_t *session, const char *uuid, const char *pci)
{
    size_t i;
    json_t *g;
    json_array_foreach(json_object_get(session, "gpus"), i, g)
    {
        const char *u = json_string_value(json_object_get(g, "uuid"));
        const char *p = json_string_value(json_object_get(g, "pci_bus_id"));
        json_t *ix = json_object_get(g, "index");
        if (json_is_integer(ix) &&
            ((u && uuid[0] && !strcmp(u, uuid)) || (p && pci[0] && !strcmp(p, pci))))
            return (int)json_integer_value(ix);
    }
    return -1;
}

static size_t pair_gpus(json_t *session, const struct source *q, const struct source *d,
                        struct final_gpu **out)
{
    size_t n = 0;
    struct final_gpu *f = calloc(q->t.n + d->t.n + 1, sizeof *f);
    if (!f) abort();
    for (size_t i = 0; i < q->t.n; i++) {
        const struct gpu_slot *g = &q->t.s[i];
        int ix = g->index >= 0 ? g->index : session_index_of(session, g->uuid, g->pci);
        f[n++] = (struct final_gpu){ix, g, NULL, i, 0};
    }
    for (size_t i = 0; i < d->t.n; i++) {
        const struct gpu_slot *g = &d->t.s[i];
        size_t k = 0;
        while (k < n && !(g->index >= 0 && f[k].index == g->index && !f[k].d))
            k++;
        if (k == n) f[n++] = (struct final_gpu){g->index, NULL, NULL, 0, 0};
        f[k].d = g;
        f[k].di = i;
    }
    /* Stable order by index, unknown indexes last. */
    for (size_t a = 1; a < n; a++)
        for (size_t b = a; b > 0; b--) {
            unsigned x = (unsigned)f[b - 1].index, y = (unsigned)f[b].index;
            if (x <= y) break;
            struct final_gpu t = f[b];
            f[b] = f[b - 1];
            f[b - 1] = t;
        }
    *out = f;
    return n;
}

static const char *ident(const struct final_gpu *g, int which)
{
    const struct gpu_slot *s = g->q ? g->q : g->d;
    const char *v = which == 0 ? s->uuid : which == 1 ? s->name : s->pci;
    if (!v[0] && g->q && g->d) v = which == 0 ? g->d->uuid : which == 1 ? g->d->name : g->d->pci;
    return v;
}

/* Fills uuid/name from session.json when the data lacked them. */
static void ident_from_session(json_t *session, int index, const char **uuid, const char **name,
                               const char **pci)
{
    size_t i;
    json_t *g;
    json_array_foreach(json_object_get(session, "gpus"), i, g)
    {
        json_t *ix = json_object_get(g, "index");
        if (!json_is_integer(ix) || json_integer_value(ix) != index) continue;
        if (!**uuid && json_is_string(json_object_get(g, "uuid")))
            *uuid = json_string_value(json_object_get(g, "uuid"));
        if (!**name && json_is_string(json_object_get(g, "name")))
            *name = json_string_value(json_object_get(g, "name"));
        if (!**pci && json_is_string(json_object_get(g, "pci_bus_id")))
            *pci = json_string_value(json_object_get(g, "pci_bus_id"));
    }
}

static int64_t session_time(json_t *session, const char *key)
{
    json_t *v = json_object_get(session, key);
    int64_t ns;
    if (json_is_string(v) && !rm_parse_ts_checked(json_string_value(v), json_string_length(v), &ns))
        return ns;
    return RM_NO_TIME;
}

static bool keep_phase(void *ctx, const char *path)
{
    struct rm_summary *s = ctx;
    if (!s->re) return true;
    return pcre2_match(s->re, (PCRE2_SPTR)path, PCRE2_ZERO_TERMINATED, 0, 0, s->md, NULL) >= 0;
}

static json_t *session_json(json_t *ses)
{
    if (!ses) return json_null();
    json_t *o = json_object();
    static const char *const keys[] = {"session_id", "status",     "host",
                                       "command",    "exit_code",  "started_at",
                                       "ended_at",   "interval_s", "driver_version"};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        json_t *v = json_object_get(ses, keys[i]);
        json_object_set(o, i == 0 ? "id" : keys[i], v ? v : json_null());
    }
    int64_t a = session_time(ses, "started_at"), b = session_time(ses, "ended_at");
    json_object_set_new(o, "duration_s",
                        jnum(a != RM_NO_TIME && b != RM_NO_TIME ? (double)(b - a) / 1e9 : NAN, 3));
    return o;
}

static json_t *collectors_json(json_t *ses, const struct rm_runlog *rl, const bool present[4])
{
    static const char *const names[] = {"gpu", "dmon", "cpu", "proc"};
    json_t *o = json_object();
    json_t *sc = json_object_get(ses, "collectors");
    for (size_t i = 0; i < 4; i++) {
        json_t *from = json_object_get(sc, names[i]);
        json_t *ev = json_object_get(rl->collectors, names[i]);
        if (!from && !ev && !present[i]) continue;
        json_int_t deg = json_integer_value(json_object_get(ev, "degraded"));
        json_int_t rec = json_integer_value(json_object_get(ev, "recovered"));
        json_int_t una = json_integer_value(json_object_get(ev, "unavailable"));
        json_t *c = json_object();
        json_t *h = json_object_get(from, "health");
        const char *derived = una && !rec ? "unavailable" : deg > rec ? "degraded" : "healthy";
        json_object_set_new(c, "health", json_is_string(h) ? json_copy(h) : json_string(derived));
        json_t *fc = json_object_get(from, "failure_event_count");
        json_object_set_new(c, "failure_event_count",
                            json_is_integer(fc) ? json_copy(fc) : json_integer(deg + una));
        json_object_set_new(c, "degraded_events", json_integer(deg));
        json_object_set_new(c, "recovered_events", json_integer(rec));
        json_object_set_new(c, "unavailable_events", json_integer(una));
        json_t *le = json_object_get(from, "last_error");
        if (!json_is_string(le)) le = json_object_get(ev, "last_error");
        json_object_set_new(c, "last_error", json_is_string(le) ? json_copy(le) : json_null());
        json_object_set_new(o, names[i], c);
    }
    return o;
}

static const char *base_name(const char *p)
{
    const char *s = strrchr(p, '/');
    return s ? s + 1 : p;
}

int rm_summary_build(struct rm_summary *s, json_t **out, char *err, size_t errsz)
{
    *out = NULL;
    json_object_seed(0);
    if (s->opts.phase_regex) {
        int ec;
        PCRE2_SIZE off;
        s->re = pcre2_compile((PCRE2_SPTR)s->opts.phase_regex, PCRE2_ZERO_TERMINATED, 0, &ec, &off,
                              NULL);
        if (!s->re) {
            PCRE2_UCHAR msg[256];
            pcre2_get_error_message(ec, msg, sizeof msg);
            snprintf(err, errsz, "--phase: bad regular expression at %zu: %s", (size_t)off,
                     (char *)msg);
            return 2;
        }
        (void)pcre2_jit_compile(s->re, PCRE2_JIT_COMPLETE); /* failure is not fatal */
        s->md = pcre2_match_data_create_from_pattern(s->re, NULL);
    }
    /* Interval: option, then session.json; otherwise each file finds its own. */
    double iv = s->opts.interval_s;
    json_t *siv = json_object_get(s->session, "interval_s");
    if (iv <= 0 && json_is_number(siv)) iv = json_number_value(siv);
    s->interval_ns = iv > 0 && iv < 1e6 ? (int64_t)llround(iv * 1e9) : 0;
    if (!s->opts.gpu_fields && json_is_array(json_object_get(s->session, "gpu_fields"))) {
        size_t i, used = 0;
        json_t *v;
        json_array_foreach(json_object_get(s->session, "gpu_fields"), i, v)
        {
            if (!json_is_string(v)) continue;
            int n = snprintf(s->gpu_fields + used, sizeof s->gpu_fields - used, "%s%s",
                             used ? "," : "", json_string_value(v));
            if (n < 0 || (size_t)n >= sizeof s->gpu_fields - used) {
                s->gpu_fields[0] = '\0';
                break;
            }
            used += (size_t)n;
        }
    } else if (s->opts.gpu_fields) {
        snprintf(s->gpu_fields, sizeof s->gpu_fields, "%s", s->opts.gpu_fields);
    }

    /* The run log first: the phase windows decide where each sample goes. */
    for (size_t i = 0; i < s->nrunlogs; i++) {
        if (rm_runlog_read_file(&s->rl, s->runlogs[i], err, errsz)) return 2;
        if (s->runlog_strict && s->rl.lines == 0) {
            snprintf(err, errsz, "%s: holds no run-log lines", s->runlogs[i]);
            return 2;
        }
    }
    int64_t s_start = session_time(s->session, "started_at");
    int64_t s_end = session_time(s->session, "ended_at");
    if (s_start == RM_NO_TIME) s_start = s->rl.session_start_ns;
    if (s_end == RM_NO_TIME) s_end = s->rl.session_end_ns;
    rm_runlog_finish(&s->rl, s_end, keep_phase, s);

    run_jobs(s);

    /* Errors and notes from the files. */
    json_t *notes = json_array(), *files = json_array();
    uint64_t rows = 0, skipped[RM_SKIP_COUNT] = {0}, gaps = 0;
    int64_t gap_ns = 0, data_first = RM_NO_TIME, data_last = RM_NO_TIME;
    bool present[4] = {false};
    for (size_t i = 0; i < s->njobs; i++) {
        struct file_agg *f = s->jobs[i];
        if (f->rc && f->strict) {
            snprintf(err, errsz, "%s", f->err);
            json_decref(notes);
            json_decref(files);
            return f->rc;
        }
        if (f->rc && f->err[0]) json_array_append_new(notes, json_string(f->err));
        if (f->note[0]) {
            json_array_append_new(notes, json_string(f->note));
            fprintf(stderr, "runmon summary: %s\n", f->note);
        }
        rows += f->rows;
        for (int k = 0; k < RM_SKIP_COUNT; k++)
            skipped[k] += f->skipped[k];
        gaps += f->gaps;
        if (__builtin_add_overflow(gap_ns, f->gap_total_ns, &gap_ns)) gap_ns = INT64_MAX;
        if (f->first_ns != RM_NO_TIME && (data_first == RM_NO_TIME || f->first_ns < data_first))
            data_first = f->first_ns;
        if (f->last_ns != RM_NO_TIME && (data_last == RM_NO_TIME || f->last_ns > data_last))
            data_last = f->last_ns;
        int c = f->kind == RM_INPUT_GPU_CSV    ? 0
                : f->kind <= RM_INPUT_DMON_CSV ? 1
                : f->kind == RM_INPUT_CPU_CSV  ? 2
                                               : 3;
        if (f->rows) present[c] = true;
        if (f->rows && (f->kind == RM_INPUT_DMON_TEXT || f->kind == RM_INPUT_DMON_CSV) &&
            f->first_ns == RM_NO_TIME && f->path) {
            char b[600];
            snprintf(b, sizeof b,
                     "%s: dmon output without time columns: no energy, "
                     "coverage or phase figures from it",
                     f->path);
            json_array_append_new(notes, json_string(b));
        }
        json_t *sk = json_object();
        for (int k = 0; k < RM_SKIP_COUNT; k++)
            if (f->skipped[k])
                json_object_set_new(sk, rm_skip_names[k], json_integer((json_int_t)f->skipped[k]));
        json_array_append_new(
            files,
            json_pack("{s:o,s:s,s:I,s:I,s:o,s:o,s:o,s:o,s:{s:I,s:o}}", "path", str_or_null(f->path),
                      "kind", kind_names[f->kind], "bytes", (json_int_t)f->bytes, "rows",
                      (json_int_t)f->rows, "rows_skipped", sk, "first", jts(f->first_ns), "last",
                      jts(f->last_ns), "interval_s",
                      jnum(f->interval_ns ? (double)f->interval_ns / 1e9 : NAN, 3), "gaps", "count",
                      (json_int_t)f->gaps, "seconds", jnum((double)f->gap_total_ns / 1e9, 3)));
    }
    if (s->njobs && rows == 0) {
        char names[400] = "";
        size_t used = 0;
        for (size_t i = 0; i < s->njobs && used < sizeof names - 1; i++)
            used += (size_t)snprintf(names + used, sizeof names - used, "%s%s", i ? ", " : "",
                                     s->jobs[i]->path ? s->jobs[i]->path : "(segment)");
        snprintf(err, errsz, "no data rows in %s", names);
        json_decref(notes);
        json_decref(files);
        return 2;
    }

    /* Merge per source, in the order the inputs were added. */
    struct source q = {0}, d = {0};
    struct rm_host_stats host = {0};
    size_t nph = s->rl.nphases;
    struct rm_host_stats *phost = calloc(nph ? nph : 1, sizeof *phost);
    if (!phost) abort();
    for (size_t i = 0; i < s->njobs; i++) {
        struct file_agg *f = s->jobs[i];
        if (f->kind == RM_INPUT_GPU_CSV)
            source_merge(&q, f, nph);
        else if (f->kind == RM_INPUT_DMON_TEXT || f->kind == RM_INPUT_DMON_CSV)
            source_merge(&d, f, nph);
        rm_host_stats_merge(&host, &f->host);
        for (size_t p = 0; f->ph && p < nph && p < f->nph; p++)
            if (f->ph[p].used) rm_host_stats_merge(&phost[p], &f->ph[p].host);
    }

    json_t *o = json_object();
    json_object_set_new(o, "format", json_string("runmon-summary"));
    json_object_set_new(o, "schema_version", json_integer(RM_SUMMARY_SCHEMA_VERSION));
    json_object_set_new(o, "generated_at", jts(rm_now_realtime_ns()));

    struct final_gpu *fg;
    size_t nfg = pair_gpus(s->session, &q, &d, &fg);
    struct gpu_totals tot = {0};
    json_t *gpus = json_array();
    for (size_t i = 0; i < nfg; i++) {
        const char *uuid = ident(&fg[i], 0), *name = ident(&fg[i], 1), *pci = ident(&fg[i], 2);
        ident_from_session(s->session, fg[i].index, &uuid, &name, &pci);
        json_array_append_new(gpus,
                              gpu_json(fg[i].index, uuid, name, pci, fg[i].q ? &fg[i].q->st : NULL,
                                       fg[i].d ? &fg[i].d->st : NULL, &tot));
    }
    json_object_set_new(o, "peak_vram_mb", jnum(st_max(&tot.vram), 3));
    json_object_set_new(o, "gpu_util_mean_pct", jnum(st_mean(&tot.util), 3));
    json_object_set_new(o, "gpu_util_max_pct", jnum(st_max(&tot.util), 3));
    json_object_set_new(o, "mem_util_mean_pct", jnum(st_mean(&tot.memutil), 3));
    json_object_set_new(o, "mem_util_max_pct", jnum(st_max(&tot.memutil), 3));
    json_object_set_new(o, "mem_util_source",
                        tot.memutil_dmon && tot.memutil_query ? json_string("mixed")
                        : tot.memutil_dmon                    ? json_string("dmon")
                        : tot.memutil_query                   ? json_string("query-gpu")
                                                              : json_null());
    json_object_set_new(o, "power_watts_mean", jnum(st_mean(&tot.power), 3));
    json_object_set_new(o, "power_watts_max", jnum(st_max(&tot.power), 3));
    json_object_set_new(o, "cpu_usr_mean_pct", jnum(st_mean(&host.m[RM_HM_USR]), 3));
    json_object_set_new(o, "cpu_idle_mean_pct", jnum(st_mean(&host.m[RM_HM_IDLE]), 3));
    json_object_set_new(o, "jax_peak_bytes_mb",
                        jnum(s->rl.has_jax ? s->rl.jax_peak_bytes / 1048576.0 : NAN, 3));
    json_object_set_new(o, "session", session_json(s->session));
    json_object_set_new(o, "gpus", gpus);

    const struct rm_stat *tp = q.total_power.n ? &q.total_power : &d.total_power;
    json_t *totals = json_object();
    json_object_set_new(totals, "gpu_count", json_integer((json_int_t)nfg));
    json_object_set_new(
        totals, "power_w",
        json_pack("{s:o,s:o}", "mean", jnum(st_mean(tp), 3), "max", jnum(st_max(tp), 3)));
    json_object_set_new(totals, "energy_wh", jnum(tot.has_energy ? tot.energy_j / 3600 : NAN, 6));
    json_object_set_new(totals, "cpu", host_json(&host, false));
    json_object_set_new(totals, "host_mem_peak_mb", jnum(st_max(&host.m[RM_HM_MEM_USED]), 3));
    json_object_set_new(totals, "proc", host_json(&host, true));
    json_object_set_new(o, "totals", totals);

    /* Phases, in order of first appearance in the run log. */
    json_t *phases = json_array();
    for (size_t p = 0; p < nph; p++) {
        const struct rm_phase *ph = &s->rl.phases[p];
        if (!keep_phase(s, ph->path)) continue;
        json_t *po = json_object();
        const char *slash = strrchr(ph->path, '/');
        int depth = ph->depth;
        if (depth < 0) {
            depth = 0;
            for (const char *c = ph->path; *c; c++)
                depth += *c == '/';
        }
        json_object_set_new(po, "path", json_string(ph->path));
        json_object_set_new(po, "name", json_string(slash ? slash + 1 : ph->path));
        json_object_set_new(po, "depth", json_integer(depth));
        json_object_set_new(po, "count", json_integer((json_int_t)ph->count));
        json_object_set_new(po, "total_seconds", jnum(ph->total_s, 3));
        json_object_set_new(po, "status",
                            json_pack("{s:I,s:I,s:I}", "ok", (json_int_t)ph->ok, "error",
                                      (json_int_t)ph->error, "unterminated",
                                      (json_int_t)ph->unterminated));
        json_object_set_new(po, "first_start", jts(ph->first_start_ns));
        json_object_set_new(po, "last_end", jts(ph->last_end_ns));
        json_t *pg = json_array();
        for (size_t i = 0; i < nfg; i++) {
            const struct rm_gpu_stats *qs = NULL, *ds = NULL;
            if (fg[i].q && q.ph && q.phn[p] > fg[i].qi && q.ph[p][fg[i].qi].samples)
                qs = &q.ph[p][fg[i].qi];
            if (fg[i].d && d.ph && d.phn[p] > fg[i].di && d.ph[p][fg[i].di].samples)
                ds = &d.ph[p][fg[i].di];
            if (!qs && !ds) continue;
            const char *uuid = ident(&fg[i], 0), *name = ident(&fg[i], 1), *pci = ident(&fg[i], 2);
            ident_from_session(s->session, fg[i].index, &uuid, &name, &pci);
            json_array_append_new(pg, gpu_json(fg[i].index, uuid, name, pci, qs, ds, NULL));
        }
        json_object_set_new(po, "gpus", pg);
        json_object_set_new(po, "cpu", host_json(&phost[p], false));
        json_object_set_new(po, "proc", host_json(&phost[p], true));
        json_array_append_new(phases, po);
    }
    json_object_set_new(o, "phases", phases);
    json_object_set_new(o, "collectors", collectors_json(s->session, &s->rl, present));
    json_object_set_new(o, "alerts",
                        json_pack("{s:I,s:I,s:O}", "warning", (json_int_t)s->rl.warnings,
                                  "critical", (json_int_t)s->rl.criticals, "events", s->rl.alerts));

    /* Data quality. */
    json_t *dq = json_object(), *sk = json_object();
    json_object_set_new(dq, "rows_read", json_integer((json_int_t)rows));
    for (int k = 0; k < RM_SKIP_COUNT; k++)
        json_object_set_new(sk, rm_skip_names[k], json_integer((json_int_t)skipped[k]));
    json_object_set_new(dq, "rows_skipped", sk);
    json_object_set_new(dq, "gaps",
                        json_pack("{s:I,s:o}", "count", (json_int_t)gaps, "seconds",
                                  jnum((double)gap_ns / 1e9, 3)));
    int64_t span_a = s_start != RM_NO_TIME ? s_start : data_first;
    int64_t span_b = s_end != RM_NO_TIME ? s_end : data_last;
    if (span_b == RM_NO_TIME ||
        (data_last != RM_NO_TIME && s_end == RM_NO_TIME && data_last > span_b))
        span_b = data_last;
    double sess_s = span_a != RM_NO_TIME && span_b != RM_NO_TIME && span_b > span_a
                        ? (double)(span_b - span_a) / 1e9
                        : NAN;
    double sampled_s = tot.covered_ns ? (double)tot.covered_ns / 1e9 : (nfg ? 0 : NAN);
    json_object_set_new(dq, "sampled_seconds", jnum(sampled_s, 3));
    json_object_set_new(dq, "session_seconds", jnum(sess_s, 3));
    json_object_set_new(
        dq, "coverage",
        jnum(isfinite(sess_s) && isfinite(sampled_s) ? fmin(1.0, sampled_s / sess_s) : NAN, 4));
    json_object_set_new(
        dq, "runlog",
        json_pack("{s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I}", "lines", (json_int_t)s->rl.lines, "events",
                  (json_int_t)s->rl.events, "torn_line", (json_int_t)s->rl.torn, "garbage",
                  (json_int_t)s->rl.garbage, "bad_time", (json_int_t)s->rl.bad_time, "long_line",
                  (json_int_t)s->rl.long_lines, "unmatched_exit", (json_int_t)s->rl.unmatched_exits,
                  "nonconforming_output", (json_int_t)s->rl.nonconforming));
    json_object_set_new(dq, "notes", notes);
    json_object_set_new(dq, "files", files);
    json_object_set_new(o, "data_quality", dq);

    free(fg);
    free(phost);
    source_free(&q);
    source_free(&d);
    (void)base_name;
    *out = o;
    return 0;
}

/* ---- a session folder ------------------------------------------------------------- */

/* Every file of one stream, oldest first. */
static void add_family(struct rm_summary *s, const char *dir, int stream, size_t *found)
{
    char **names, path[4096];
    size_t n = rm_segment_family(dir, stream, &names);
    for (size_t i = 0; i < n; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        add_file(s, rm_stream_defs[stream].kind, path, false);
        (*found)++;
    }
    rm_segment_family_free(names, n);
}

int rm_summary_session_dir(const char *dir, const struct rm_summary_opts *opts, json_t **out,
                           char *err, size_t errsz)
{
    *out = NULL;
    struct stat st;
    if (stat(dir, &st) != 0) {
        snprintf(err, errsz, "%s: %s", dir, strerror(errno));
        return 2;
    }
    if (!S_ISDIR(st.st_mode)) {
        snprintf(err, errsz, "%s: not a directory", dir);
        return 2;
    }
    char path[4096];
    snprintf(path, sizeof path, "%s/manifest.json", dir);
    if (access(path, F_OK) == 0) {
        snprintf(err, errsz, "%s: sink directories (manifest.json) are not supported yet", dir);
        return 2;
    }
    struct rm_summary *s = rm_summary_new(opts);
    if (!s) {
        snprintf(err, errsz, "out of memory");
        return 1;
    }
    size_t found = 0;
    snprintf(path, sizeof path, "%s/session.json", dir);
    if (access(path, F_OK) == 0) {
        json_error_t je;
        json_t *ses = json_load_file(path, 0, &je);
        if (!json_is_object(ses)) {
            snprintf(err, errsz, "%s: not a JSON object (line %d: %s)", path, je.line, je.text);
            json_decref(ses);
            rm_summary_free(s);
            return 2;
        }
        rm_summary_set_session(s, ses);
        json_decref(ses);
        found++;
    }
    for (int k = 0; k < RM_STREAM_COUNT; k++)
        add_family(s, dir, k, &found);
    snprintf(path, sizeof path, "%s/runlog.jsonl", dir);
    if (access(path, F_OK) == 0) {
        rm_summary_add_runlog(s, path);
        s->runlog_strict = false;
        found++;
    }
    if (!found) {
        snprintf(err, errsz,
                 "%s: not a runmon session (no session.json, gpu.csv, dmon.csv, "
                 "cpu.csv, proc.csv or runlog.jsonl)",
                 dir);
        rm_summary_free(s);
        return 2;
    }
    int rc = rm_summary_build(s, out, err, errsz);
    if (rc == 0) json_object_set_new(*out, "path", json_string(dir));
    rm_summary_free(s);
    return rc;
}
