#include "summary/iocsv.h"

#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "base/json.h"
#include "base/rm_time.h"
#include "summary/objects.h"

static const char *const col_names[RM_IOC_COUNT] = {
    "ts",       "kind",     "name",    "read_bytes", "write_bytes", "busy_ms",
    "rx_bytes", "tx_bytes", "some_us", "full_us",    "procs",       "unreadable"};
static const char *const kind_names[RM_IO_KIND_COUNT] = {"disk", "net", "pressure", "tree"};
/* The columns of each kind's counters, v[0..3). */
static const int kind_cols[RM_IO_KIND_COUNT][3] = {
    [RM_IO_DISK] = {RM_IOC_READ, RM_IOC_WRITE, RM_IOC_BUSY},
    [RM_IO_NET] = {RM_IOC_RX, RM_IOC_TX, -1},
    [RM_IO_PRESSURE] = {RM_IOC_SOME, RM_IOC_FULL, -1},
    [RM_IO_TREE] = {RM_IOC_READ, RM_IOC_WRITE, -1},
};

void rm_iocsv_init(struct rm_iocsv *p)
{
    memset(p, 0, sizeof *p);
    for (int c = 0; c < RM_IOC_COUNT; c++)
        p->col[c] = -1;
}

static bool is(const char *s, size_t len, const char *name)
{
    return strlen(name) == len && !memcmp(s, name, len);
}

/* A header row starts with ts and names kind and name. */
static bool map_header(struct rm_iocsv *p, const struct rm_csv_row *row)
{
    if (row->n < 3 || !is(row->f[0], row->len[0], "ts")) return false;
    rm_iocsv_init(p);
    for (size_t i = 0; i < row->n; i++)
        for (int c = 0; c < RM_IOC_COUNT; c++)
            if (is(row->f[i], row->len[i], col_names[c]) && p->col[c] < 0) p->col[c] = (int)i;
    p->ncols = row->n;
    p->mapped = p->col[RM_IOC_TS] >= 0 && p->col[RM_IOC_KIND] >= 0 && p->col[RM_IOC_NAME] >= 0;
    return true;
}

static struct rm_strref field(const struct rm_csv_row *row, int col)
{
    if (col < 0 || (size_t)col >= row->n) return (struct rm_strref){"", 0};
    return (struct rm_strref){row->f[col], row->len[col]};
}

/* 1: a whole number; 0: empty; -1: anything else (or over 64 bits). */
static int parse_u64(struct rm_strref r, uint64_t *out)
{
    if (!r.len) return 0;
    uint64_t v = 0;
    for (size_t i = 0; i < r.len; i++) {
        unsigned d = (unsigned)(r.s[i] - '0');
        if (d > 9 || v > (UINT64_MAX - d) / 10) return -1;
        v = v * 10 + d;
    }
    *out = v;
    return 1;
}

int rm_iocsv_row(struct rm_iocsv *p, const struct rm_csv_row *row, struct rm_io_row *out)
{
    if (row->overflow) return -(1 + RM_SKIP_LONG_LINE);
    if (row->torn) return -(1 + RM_SKIP_TORN);
    if (map_header(p, row)) return 0;
    if (!p->mapped || row->n == 0) return -(1 + RM_SKIP_NOT_DATA);
    if (row->n != p->ncols) return -(1 + RM_SKIP_BAD_FIELD_COUNT);
    struct rm_strref ts = field(row, p->col[RM_IOC_TS]);
    if (rm_parse_ts_checked(ts.s, ts.len, &out->t_ns)) return -(1 + RM_SKIP_BAD_TIME);
    struct rm_strref k = field(row, p->col[RM_IOC_KIND]);
    int kind = -1;
    for (int i = 0; i < RM_IO_KIND_COUNT; i++)
        if (is(k.s, k.len, kind_names[i])) kind = i;
    out->name = field(row, p->col[RM_IOC_NAME]);
    if (kind < 0 || !out->name.len) return -(1 + RM_SKIP_GARBAGE);
    out->kind = (enum rm_io_kind)kind;
    out->valid = 0;
    for (int i = 0; i < 3; i++) {
        out->v[i] = 0;
        int c = kind_cols[kind][i];
        int r = c < 0 ? 0 : parse_u64(field(row, p->col[c]), &out->v[i]);
        if (r < 0) return -(1 + RM_SKIP_GARBAGE);
        if (r) out->valid |= 1u << i;
    }
    uint64_t n;
    out->procs = parse_u64(field(row, p->col[RM_IOC_PROCS]), &n) == 1 ? (long long)n : -1;
    out->unreadable = parse_u64(field(row, p->col[RM_IOC_UNREADABLE]), &n) == 1 ? (long long)n : -1;
    return 1;
}

void rm_io_acc_merge(struct rm_io_acc *a, const struct rm_io_acc *b)
{
    for (int i = 0; i < RM_IOV_COUNT; i++)
        a->v[i] += b->v[i];
    for (int g = 0; g < RM_IOG_COUNT; g++)
        a->dt_ns[g] += b->dt_ns[g];
    a->seen |= b->seen;
}

void rm_io_init(struct rm_io_agg *a, size_t nphases)
{
    memset(a, 0, sizeof *a);
    a->nph = nphases;
    if (nphases) a->ph = rm_xcalloc(nphases, sizeof *a->ph);
    a->procs_max = a->unreadable_max = -1;
    a->sample_t = a->prev_sample_t = RM_NO_TIME;
    for (int g = 0; g < RM_IOG_COUNT; g++)
        a->group_t[g] = RM_NO_TIME;
}

void rm_io_free(struct rm_io_agg *a)
{
    for (size_t p = 0; a->ph && p < a->nph; p++)
        free(a->ph[p]);
    free(a->ph);
    free(a->devs);
    free(a->keys);
    memset(a, 0, sizeof *a);
}

static size_t name_len(struct rm_strref r)
{
    return r.len < 63 ? r.len : 63;
}

static int find_dev(struct rm_io_agg *a, enum rm_io_kind kind, const char *name, size_t len)
{
    for (size_t i = 0; i < a->ndevs; i++)
        if (a->devs[i].kind == kind && strlen(a->devs[i].name) == len &&
            !memcmp(a->devs[i].name, name, len))
            return (int)i;
    a->devs = rm_xgrow(a->devs, &a->capdevs, a->ndevs + 1, sizeof *a->devs);
    struct rm_io_dev_total *d = &a->devs[a->ndevs];
    memset(d, 0, sizeof *d);
    d->kind = kind;
    memcpy(d->name, name, len);
    return (int)a->ndevs++;
}

static struct rm_io_key *find_key(struct rm_io_agg *a, const struct rm_io_row *r)
{
    size_t len = name_len(r->name);
    for (size_t i = 0; i < a->nkeys; i++)
        if (a->keys[i].kind == r->kind && strlen(a->keys[i].name) == len &&
            !memcmp(a->keys[i].name, r->name.s, len))
            return &a->keys[i];
    a->keys = rm_xgrow(a->keys, &a->capkeys, a->nkeys + 1, sizeof *a->keys);
    struct rm_io_key *k = &a->keys[a->nkeys++];
    memset(k, 0, sizeof *k);
    k->kind = r->kind;
    memcpy(k->name, r->name.s, len);
    k->t_ns = RM_NO_TIME;
    k->dev =
        r->kind == RM_IO_DISK || r->kind == RM_IO_NET ? find_dev(a, r->kind, k->name, len) : -1;
    return k;
}

/* The group and the values of a row's v[0] and v[1]; -1 for a pressure file not known. */
static int row_values(const struct rm_io_row *r, int vals[2])
{
    switch (r->kind) {
    case RM_IO_DISK:
        vals[0] = RM_IOV_DISK_READ, vals[1] = RM_IOV_DISK_WRITE;
        return RM_IOG_DISK;
    case RM_IO_NET:
        vals[0] = RM_IOV_NET_RX, vals[1] = RM_IOV_NET_TX;
        return RM_IOG_NET;
    case RM_IO_TREE:
        vals[0] = RM_IOV_TREE_READ, vals[1] = RM_IOV_TREE_WRITE;
        return RM_IOG_TREE;
    case RM_IO_PRESSURE:
        if (is(r->name.s, r->name.len, "cpu")) {
            vals[0] = RM_IOV_CPU_SOME, vals[1] = RM_IOV_CPU_FULL;
            return RM_IOG_CPU;
        }
        if (is(r->name.s, r->name.len, "io")) {
            vals[0] = RM_IOV_IO_SOME, vals[1] = RM_IOV_IO_FULL;
            return RM_IOG_IO;
        }
        if (is(r->name.s, r->name.len, "memory")) {
            vals[0] = RM_IOV_MEM_SOME, vals[1] = RM_IOV_MEM_FULL;
            return RM_IOG_MEM;
        }
        return -1;
    default:
        return -1;
    }
}

static void acc_add(struct rm_io_acc *acc, const struct rm_io_interval *iv, int64_t ns)
{
    double share = (double)ns / (double)(iv->t1 - iv->t0);
    if (iv->new_time) acc->dt_ns[iv->group] += ns;
    for (int i = 0; i < 2; i++)
        if (iv->valid & (1u << i)) {
            acc->v[iv->vals[i]] += iv->d[i] * share;
            acc->seen |= 1u << iv->vals[i];
        }
}

int rm_io_add(struct rm_io_agg *a, const struct rm_io_row *r, struct rm_io_interval *iv)
{
    a->rows++;
    if (a->sample_t == RM_NO_TIME || r->t_ns > a->sample_t) {
        a->prev_sample_t = a->sample_t;
        a->sample_t = r->t_ns;
    }
    if (r->kind == RM_IO_TREE) {
        if (r->procs > a->procs_max) a->procs_max = r->procs;
        if (r->unreadable > a->unreadable_max) a->unreadable_max = r->unreadable;
    }
    struct rm_io_key *k = find_key(a, r);
    int64_t prev_t = k->t_ns;
    uint64_t prev[3];
    memcpy(prev, k->v, sizeof prev);
    unsigned prev_valid = k->valid;
    k->t_ns = r->t_ns;
    memcpy(k->v, r->v, sizeof k->v);
    k->valid = r->valid;
    unsigned valid = r->valid;
    if (prev_t == RM_NO_TIME) {
        /* A tree's counters start at 0 with the command: its first row counts whole, over
         * the time since the file's previous row. Anything else is a baseline. */
        int64_t last = a->prev_sample_t;
        k->first_t = r->t_ns;
        memcpy(k->first_v, r->v, sizeof k->first_v);
        k->first_valid = r->valid;
        k->first_open = true;
        if (r->kind != RM_IO_TREE || last == RM_NO_TIME || last >= r->t_ns) return 0;
        k->first_open = false;
        prev_t = last;
        memset(prev, 0, sizeof prev);
        prev_valid = valid;
    }
    if (r->t_ns <= prev_t) return 0; /* out of order or repeated: no interval */
    valid &= prev_valid;
    for (int i = 0; i < 3; i++)
        if ((valid & (1u << i)) && r->v[i] < prev[i]) {
            /* went back: a wrap, a device that came back, a reset. A new baseline. */
            a->resets++;
            if (k->dev >= 0) a->devs[k->dev].resets++;
            return 0;
        }
    double d[3] = {0, 0, 0};
    for (int i = 0; i < 3; i++)
        if (valid & (1u << i)) d[i] = (double)(r->v[i] - prev[i]);
    int64_t dt = r->t_ns - prev_t;
    if (k->dev >= 0) {
        struct rm_io_dev_total *dev = &a->devs[k->dev];
        for (int i = 0; i < 3; i++)
            dev->sum[i] += d[i];
        dev->dt_ns += dt;
    }
    int g = row_values(r, iv->vals);
    if (g < 0) return 0;
    bool share = g == RM_IOG_CPU || g == RM_IOG_IO || g == RM_IOG_MEM;
    if (share && dt < RM_IO_MIN_SHARE_NS) return 0; /* too short to measure a share of */
    iv->group = g;
    iv->t0 = prev_t;
    iv->t1 = r->t_ns;
    iv->new_time = a->group_t[g] != r->t_ns; /* a group's time counts once per row time */
    a->group_t[g] = r->t_ns;
    iv->d[0] = d[0];
    iv->d[1] = d[1];
    iv->valid = valid & 3u;
    acc_add(&a->run, iv, dt);
    return 1;
}

void rm_io_add_phase(struct rm_io_agg *a, size_t p, const struct rm_io_interval *iv, int64_t ns)
{
    if (p >= a->nph || ns <= 0 || iv->t1 <= iv->t0) return;
    if (!a->ph[p]) a->ph[p] = rm_xcalloc(1, sizeof **a->ph);
    acc_add(a->ph[p], iv, ns > iv->t1 - iv->t0 ? iv->t1 - iv->t0 : ns);
}

void rm_io_merge(struct rm_io_agg *dst, const struct rm_io_agg *src)
{
    rm_io_acc_merge(&dst->run, &src->run);
    for (size_t p = 0; p < src->nph && p < dst->nph; p++) {
        if (!src->ph[p]) continue;
        if (!dst->ph[p]) dst->ph[p] = rm_xcalloc(1, sizeof **dst->ph);
        rm_io_acc_merge(dst->ph[p], src->ph[p]);
    }
    for (size_t i = 0; i < src->ndevs; i++) {
        const struct rm_io_dev_total *s = &src->devs[i];
        int at = find_dev(dst, s->kind, s->name, strlen(s->name)); /* may move dst->devs */
        struct rm_io_dev_total *d = &dst->devs[at];
        for (int k = 0; k < 3; k++)
            d->sum[k] += s->sum[k];
        d->dt_ns += s->dt_ns;
        d->resets += s->resets;
    }
    dst->resets += src->resets;
    dst->rows += src->rows;
    if (src->procs_max > dst->procs_max) dst->procs_max = src->procs_max;
    if (src->unreadable_max > dst->unreadable_max) dst->unreadable_max = src->unreadable_max;
}

void rm_io_merge_next(struct rm_io_agg *dst, const struct rm_io_agg *src,
                      void (*interval)(void *ctx, const struct rm_io_interval *iv), void *ctx)
{
    for (size_t i = 0; i < src->nkeys; i++) {
        const struct rm_io_key *k = &src->keys[i];
        if (!k->first_open) continue;
        struct rm_io_row r = {.t_ns = k->first_t,
                              .kind = k->kind,
                              .name = {k->name, strlen(k->name)},
                              .valid = k->first_valid,
                              .procs = -1,
                              .unreadable = -1};
        memcpy(r.v, k->first_v, sizeof r.v);
        struct rm_io_interval iv;
        int made = rm_io_add(dst, &r, &iv);
        dst->rows--; /* src counts the row */
        if (made && interval) interval(ctx, &iv);
    }
    rm_io_merge(dst, src);
    for (size_t i = 0; i < src->nkeys; i++) { /* src's last rows: the next file's baselines */
        const struct rm_io_key *k = &src->keys[i];
        if (k->t_ns == RM_NO_TIME) continue;
        struct rm_io_row r = {.kind = k->kind, .name = {k->name, strlen(k->name)}};
        struct rm_io_key *d = find_key(dst, &r);
        if (d->t_ns != RM_NO_TIME && d->t_ns > k->t_ns) continue;
        d->t_ns = k->t_ns;
        memcpy(d->v, k->v, sizeof d->v);
        d->valid = k->valid;
    }
    if (src->sample_t != RM_NO_TIME &&
        (dst->sample_t == RM_NO_TIME || src->sample_t > dst->sample_t)) {
        dst->prev_sample_t = src->prev_sample_t;
        dst->sample_t = src->sample_t;
    }
}

const struct rm_io_acc *rm_io_phase(const struct rm_io_agg *a, size_t p)
{
    return p < a->nph ? a->ph[p] : NULL;
}

static const int value_group[RM_IOV_COUNT] = {
    [RM_IOV_DISK_READ] = RM_IOG_DISK, [RM_IOV_DISK_WRITE] = RM_IOG_DISK,
    [RM_IOV_NET_RX] = RM_IOG_NET,     [RM_IOV_NET_TX] = RM_IOG_NET,
    [RM_IOV_CPU_SOME] = RM_IOG_CPU,   [RM_IOV_CPU_FULL] = RM_IOG_CPU,
    [RM_IOV_IO_SOME] = RM_IOG_IO,     [RM_IOV_IO_FULL] = RM_IOG_IO,
    [RM_IOV_MEM_SOME] = RM_IOG_MEM,   [RM_IOV_MEM_FULL] = RM_IOG_MEM,
    [RM_IOV_TREE_READ] = RM_IOG_TREE, [RM_IOV_TREE_WRITE] = RM_IOG_TREE,
};

double rm_io_rate(const struct rm_io_acc *a, enum rm_io_value v)
{
    if (!a || !(a->seen & (1u << v))) return NAN;
    int64_t dt = a->dt_ns[value_group[v]];
    if (dt <= 0) return NAN;
    double s = (double)dt / 1e9;
    bool stall = v >= RM_IOV_CPU_SOME && v <= RM_IOV_MEM_FULL;
    /* stalled microseconds over the time: a share of it, so at most 100 % (row times in ms and
     * the kernel's lagging totals can put a few more microseconds in an interval) */
    return stall ? fmin(100.0, a->v[v] / 1e6 / s * 100.0) : a->v[v] / 1e6 / s;
}

static json_t *dev_json(const struct rm_io_dev_total *d)
{
    double s = (double)d->dt_ns / 1e9;
    bool disk = d->kind == RM_IO_DISK;
    json_t *o = json_object();
    json_object_set_new(o, "name", json_string(d->name));
    json_object_set_new(o, disk ? "read_mb" : "rx_mb", rm_jnum(d->sum[0] / 1e6, 3));
    json_object_set_new(o, disk ? "write_mb" : "tx_mb", rm_jnum(d->sum[1] / 1e6, 3));
    json_object_set_new(o, disk ? "read_mb_s" : "rx_mb_s",
                        rm_jnum(s > 0 ? d->sum[0] / 1e6 / s : NAN, 3));
    json_object_set_new(o, disk ? "write_mb_s" : "tx_mb_s",
                        rm_jnum(s > 0 ? d->sum[1] / 1e6 / s : NAN, 3));
    if (disk) /* ms busy per second of time: the share of time with I/O in flight */
        json_object_set_new(o, "busy_pct",
                            rm_jnum(s > 0 ? fmin(100.0, d->sum[2] / 1e3 / s * 100.0) : NAN, 1));
    json_object_set_new(o, "seconds", rm_jnum(s, 3));
    json_object_set_new(o, "resets", json_integer((json_int_t)d->resets));
    return o;
}

/* ---- its engine (summary/objects.h): the "io" object's rows of model/objects.c ---------- */

static void *agg_new(size_t nph)
{
    struct rm_io_agg *a = rm_xrealloc(NULL, sizeof *a);
    rm_io_init(a, nph);
    return a;
}

static void agg_free(void *agg)
{
    if (agg) rm_io_free(agg);
    free(agg);
}

/* An interval between two segments, shared out to the phases as a file's own are. */
struct bridge {
    struct rm_io_agg *run;
    const struct rm_obj_spans *spans;
    const struct rm_io_interval *iv;
};

static void bridge_phase(void *arg, size_t phase, int64_t ns)
{
    struct bridge *b = arg;
    rm_io_add_phase(b->run, phase, b->iv, ns);
}

static void bridge_interval(void *ctx, const struct rm_io_interval *iv)
{
    struct bridge *b = ctx;
    b->iv = iv;
    b->spans->share(b->spans->ctx, iv->t0, iv->t1, bridge_phase, b);
}

static void agg_merge(void *run, const void *file, const struct rm_obj_spans *spans)
{
    struct bridge b = {run, spans, NULL};
    rm_io_merge_next(run, file, bridge_interval, &b);
}

static const void *run_acc(const void *agg)
{
    return &((const struct rm_io_agg *)agg)->run;
}

static const void *phase_acc(const void *agg, size_t p)
{
    return rm_io_phase(agg, p);
}

static void *acc_new(void)
{
    return rm_xcalloc(1, sizeof(struct rm_io_acc));
}

static void acc_merge(void *acc, const void *from)
{
    rm_io_acc_merge(acc, from);
}

/* The bytes the workload's tree read or wrote, in MB; NaN where never given. */
static double tree_mb(const struct rm_io_acc *a, enum rm_io_value v)
{
    return a && (a->seen & (1u << v)) ? a->v[v] / 1e6 : NAN;
}

static double count_or_nan(long long n)
{
    return n >= 0 ? (double)n : NAN;
}

static double figure(const void *accp, const void *aggp, int fig)
{
    const struct rm_io_acc *a = accp;
    const struct rm_io_agg *g = aggp;
    static const enum rm_io_value rate[] = {
        [RM_OF_IO_DISK_READ_MB_S] = RM_IOV_DISK_READ,
        [RM_OF_IO_DISK_WRITE_MB_S] = RM_IOV_DISK_WRITE,
        [RM_OF_IO_NET_RX_MB_S] = RM_IOV_NET_RX,
        [RM_OF_IO_NET_TX_MB_S] = RM_IOV_NET_TX,
        [RM_OF_IO_CPU_SOME_PCT] = RM_IOV_CPU_SOME,
        [RM_OF_IO_CPU_FULL_PCT] = RM_IOV_CPU_FULL,
        [RM_OF_IO_IO_SOME_PCT] = RM_IOV_IO_SOME,
        [RM_OF_IO_IO_FULL_PCT] = RM_IOV_IO_FULL,
        [RM_OF_IO_MEMORY_SOME_PCT] = RM_IOV_MEM_SOME,
        [RM_OF_IO_MEMORY_FULL_PCT] = RM_IOV_MEM_FULL,
        [RM_OF_IO_TREE_READ_MB_S] = RM_IOV_TREE_READ,
        [RM_OF_IO_TREE_WRITE_MB_S] = RM_IOV_TREE_WRITE,
    };
    switch (fig) {
    case RM_OF_IO_TREE_READ_MB:
        return tree_mb(a, RM_IOV_TREE_READ);
    case RM_OF_IO_TREE_WRITE_MB:
        return tree_mb(a, RM_IOV_TREE_WRITE);
    case RM_OF_IO_TREE_PROCS_MAX:
        return count_or_nan(g->procs_max);
    case RM_OF_IO_TREE_UNREADABLE_MAX:
        return count_or_nan(g->unreadable_max);
    case RM_OF_IO_RESETS:
        return (double)g->resets;
    case RM_OF_IO_ROWS:
        return (double)g->rows;
    default:
        return fig >= 0 && (size_t)fig < sizeof rate / sizeof *rate ? rm_io_rate(a, rate[fig])
                                                                    : NAN;
    }
}

static json_t *own_json(const void *aggp, int fig)
{
    const struct rm_io_agg *a = aggp;
    bool disks = fig == RM_OF_IO_DISKS; /* else the interfaces */
    json_t *list = json_array();
    for (size_t i = 0; i < a->ndevs; i++)
        if ((a->devs[i].kind == RM_IO_DISK) == disks)
            json_array_append_new(list, dev_json(&a->devs[i]));
    return list;
}

const struct rm_obj_engine rm_obj_engine_io = {
    agg_new, agg_free, agg_merge, run_acc, phase_acc, acc_new, acc_merge, free, figure, own_json,
};
