#include "summary/gpucsv.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "base/rm_time.h"
#include "model/gpu_metrics.h"
#include "model/throttle.h"
#include "model/values.h"
#include "summary/fastvalue.h"

struct name_map {
    const char *name;
    int role, metric;
};

static const struct name_map names[] = {
    {"ts", RM_COL_TS, 0},     {"timestamp", RM_COL_TIMESTAMP, 0}, {"index", RM_COL_INDEX, 0},
    {"uuid", RM_COL_UUID, 0}, {"name", RM_COL_NAME, 0},           {"pci.bus_id", RM_COL_PCI, 0},
};

/* Names that only tell a header apart from data (never mapped to a metric). */
static const char *const other_known[] = {"driver_version", "pstate",    "count",
                                          "serial",         "fan.speed", "memory.free"};

int rm_gpucsv_name_role(const char *s, size_t len, int *metric)
{
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strlen(names[i].name) == len && !memcmp(names[i].name, s, len)) {
            *metric = names[i].metric;
            return names[i].role;
        }
    int k = rm_thr_column(s, len); /* throttle reasons: model/throttle.h */
    if (k != -1) {
        *metric = k < 0 ? 0 : k;
        return k < 0 ? RM_COL_THR_MASK : RM_COL_THR_REASON;
    }
    if (len == 13 && !memcmp(s, "clocks.max.sm", 13)) {
        *metric = 0;
        return RM_COL_SMCLK_MAX;
    }
    /* The power limit: the top of an energy bar over time no sample covers. */
    if ((len == 20 && !memcmp(s, "enforced.power.limit", 20)) ||
        (len == 11 && !memcmp(s, "power.limit", 11))) {
        *metric = len == 20;
        return RM_COL_PLIMIT;
    }
    int m = rm_gpu_metric_by_query_field(s, len); /* the metrics: model/gpu_metrics.h */
    *metric = m < 0 ? 0 : m;
    return m < 0 ? RM_COL_IGNORE : RM_COL_METRIC;
}

static bool known_name(const char *s, size_t len)
{
    int m;
    if (rm_gpucsv_name_role(s, len, &m) != RM_COL_IGNORE) return true;
    for (size_t i = 0; i < sizeof other_known / sizeof other_known[0]; i++)
        if (strlen(other_known[i]) == len && !memcmp(other_known[i], s, len)) return true;
    return false;
}

void rm_gpucsv_init(struct rm_gpucsv *g, const char *fields)
{
    memset(g, 0, sizeof *g);
    rm_ts_cache_init(&g->tc);
    g->fields = fields;
}

static void map_add(struct rm_gpucsv *g, size_t col, const char *s, size_t len)
{
    if (col >= RM_GPUCSV_MAX_COLS) return;
    int metric;
    int role = rm_gpucsv_name_role(s, len, &metric);
    /* The first column naming a metric wins (a header could repeat one). */
    if (role == RM_COL_METRIC)
        for (size_t k = 0; k < col; k++)
            if (g->role[k] == RM_COL_METRIC && g->metric[k] == metric) role = RM_COL_IGNORE;
    g->role[col] = (unsigned char)role;
    g->metric[col] = (unsigned char)metric;
    if (role == RM_COL_TS) g->has_ts = true;
}

static bool map_header(struct rm_gpucsv *g, const struct rm_csv_row *row)
{
    if (row->n == 0) return false;
    /* Once a header is known, only that same header again (a restarted nvidia-smi appending)
     * re-maps: one comparison per row instead of a name lookup per field. */
    if (g->mapped && !g->assumed &&
        (row->len[0] != g->first_len || memcmp(row->f[0], g->first, g->first_len)))
        return false;
    if (g->assumed && row->len[0] && row->f[0][0] >= '0' && row->f[0][0] <= '9') return false;
    bool header = false;
    for (size_t i = 0; i < row->n && !header; i++)
        header = known_name(row->f[i], rm_header_name_len(row->f[i], row->len[i]));
    if (!header) return false;
    memset(g->role, 0, sizeof g->role);
    g->has_ts = false;
    g->ncols = row->n;
    for (size_t i = 0; i < row->n; i++)
        map_add(g, i, row->f[i], rm_header_name_len(row->f[i], row->len[i]));
    g->mapped = true;
    g->assumed = false;
    g->first_len = row->len[0] < sizeof g->first ? row->len[0] : 0;
    memcpy(g->first, row->f[0], g->first_len);
    return true;
}

static const char *assumed_src(const struct rm_gpucsv *g)
{
    return !g->fields ? "legacy list" : g->fields_src ? g->fields_src : "session.json gpu_fields";
}

static void note_assumed(struct rm_gpucsv *g)
{
    snprintf(g->note, sizeof g->note, "no header: assumed columns %s%s (%s)",
             g->has_ts ? "ts," : "", g->fields ? g->fields : RM_GPUCSV_LEGACY_FIELDS,
             assumed_src(g));
}

/* First data row of a headerless file: take the given field list, plus a leading `ts` when
 * the row has one more field than the list and its first field is a time. */
static void map_assumed(struct rm_gpucsv *g, const struct rm_csv_row *row)
{
    const char *list = g->fields ? g->fields : RM_GPUCSV_LEGACY_FIELDS;
    size_t nlist = 1;
    for (const char *p = list; *p; p++)
        nlist += *p == ',';
    size_t col = 0;
    int64_t t;
    memset(g->role, 0, sizeof g->role);
    g->has_ts = false;
    if (row->n == nlist + 1 && !rm_parse_time_field(row->f[0], row->len[0], false, NULL, &t)) {
        map_add(g, col++, "ts", 2);
    }
    const char *p = list;
    while (*p) {
        const char *e = strchr(p, ',');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        const char *s = p;
        while (n && *s == ' ') {
            s++;
            n--;
        }
        map_add(g, col++, s, rm_header_name_len(s, n));
        p = e ? e + 1 : p + strlen(p);
    }
    g->ncols = col;
    g->mapped = true;
    g->assumed = true;
    note_assumed(g);
}

/* A data row whose field count the assumed list does not fit: while no row has fit, the
 * note says so (the file's column count and the list assumed) instead. */
static void note_misfit(struct rm_gpucsv *g, size_t n)
{
    if (g->fit_rows || g->misfit) return;
    g->misfit = n;
    const char *list = g->fields ? g->fields : RM_GPUCSV_LEGACY_FIELDS;
    snprintf(g->note, sizeof g->note,
             "no header, and no field list fits: the rows have %zu columns, the list assumed "
             "(%s) has %zu: %s%s; give the file's fields with --gpu-fields",
             n, assumed_src(g), g->ncols, g->has_ts ? "ts," : "", list);
}

static int row_time(struct rm_gpucsv *g, const char *s, size_t len, bool local, int64_t *ns)
{
    return rm_ts_cache_parse(&g->tc, s, len, local, ns);
}

/* Aligned to a cache line: this hot loop's speed then does not depend on what is linked
 * before it (a 16-byte shift from unrelated files cost 7 % of the summary's CPU). */
__attribute__((aligned(64))) int rm_gpucsv_row(struct rm_gpucsv *g, const struct rm_csv_row *row,
                                               struct rm_gpu_sample *out)
{
    if (row->overflow) return -(1 + RM_SKIP_LONG_LINE);
    if (row->torn) return -(1 + RM_SKIP_TORN);
    if (map_header(g, row)) return 0;
    if (row->n == 0) return -(1 + RM_SKIP_NOT_DATA);
    if (!g->mapped) {
        map_assumed(g, row);
    }
    if (row->n != g->ncols) {
        if (row->n == 1) return -(1 + RM_SKIP_NOT_DATA);
        if (g->assumed) note_misfit(g, row->n);
        return -(1 + RM_SKIP_BAD_FIELD_COUNT);
    }
    /* Not the whole sample: v[m] is read only where bit m of valid is set. */
    out->valid = 0;
    out->thr_mask = 0;
    /* One store each: a chained assignment stored one of them and copied it to the others,
     * a 16-byte load of two 8-byte stores that stalled store forwarding (5 % of the CPU). */
    out->index = (struct rm_strref){NULL, 0};
    out->uuid = (struct rm_strref){NULL, 0};
    out->name = (struct rm_strref){NULL, 0};
    out->pci = (struct rm_strref){NULL, 0};
    out->t_ns = RM_NO_TIME;
    int ts_col = -1, stamp_col = -1, bad = 0;
    double limit[2] = {NAN, NAN}; /* power.limit, enforced.power.limit */
    size_t n = row->n < RM_GPUCSV_MAX_COLS ? row->n : RM_GPUCSV_MAX_COLS;
    for (size_t i = 0; i < n; i++) {
        const char *s = row->f[i];
        size_t len = row->len[i];
        /* Metrics first, by a plain branch: most columns are metrics. */
        if (g->role[i] == RM_COL_METRIC) {
            double v;
            int rc = rm_fast_value(s, len, &v) ? RM_VALUE_OK : rm_value_parse(s, len, &v);
            if (rc == RM_VALUE_OK) {
                out->v[g->metric[i]] = v;
                out->valid |= 1u << g->metric[i];
            } else if (rc == RM_VALUE_BAD) {
                bad++;
            }
            continue;
        }
        switch (g->role[i]) {
        case RM_COL_IGNORE:
            break;
        case RM_COL_THR_MASK: {
            unsigned mask;
            if (rm_thr_mask(s, len, &mask)) {
                out->thr_mask |= mask;
                out->valid |= RM_SAMPLE_THR_KNOWN;
            }
            break;
        }
        case RM_COL_THR_REASON: {
            int on = rm_thr_flag(s, len);
            if (on >= 0) out->valid |= RM_SAMPLE_THR_KNOWN;
            if (on > 0) out->thr_mask |= 1u << g->metric[i];
            break;
        }
        case RM_COL_SMCLK_MAX: {
            double v;
            if (rm_value_parse(s, len, &v) == RM_VALUE_OK) {
                out->smclk_max = v;
                out->valid |= RM_SAMPLE_SMCLK_MAX;
            }
            break;
        }
        case RM_COL_PLIMIT: {
            double v;
            if (rm_value_parse(s, len, &v) == RM_VALUE_OK && v > 0) limit[g->metric[i] & 1] = v;
            break;
        }
        case RM_COL_TS:
            ts_col = (int)i;
            break;
        case RM_COL_TIMESTAMP:
            stamp_col = (int)i;
            break;
        case RM_COL_INDEX:
            out->index = (struct rm_strref){s, len};
            break;
        case RM_COL_UUID:
            out->uuid = (struct rm_strref){s, len};
            break;
        case RM_COL_NAME:
            out->name = (struct rm_strref){s, len};
            break;
        case RM_COL_PCI:
            out->pci = (struct rm_strref){s, len};
            break;
        }
    }
    /* A value that is neither number nor missing spelling: this row is not trusted. */
    if (bad) return -(1 + RM_SKIP_GARBAGE);
    /* The enforced limit (the lowest of those that apply) where the driver gives it. */
    out->power_limit = !isnan(limit[1]) ? limit[1] : limit[0];
    if (!isnan(out->power_limit)) out->valid |= RM_SAMPLE_PLIMIT;
    if (ts_col >= 0) {
        if (row_time(g, row->f[ts_col], row->len[ts_col], false, &out->t_ns))
            return -(1 + RM_SKIP_BAD_TIME);
    } else if (stamp_col >= 0) {
        if (row_time(g, row->f[stamp_col], row->len[stamp_col], true, &out->t_ns))
            return -(1 + RM_SKIP_BAD_TIME);
    }
    /* An index that starts with a digit is not a missing spelling ("N/A", "[N/A]", "-"). */
    if (out->index.len && (unsigned)(out->index.s[0] - '0') > 9 &&
        rm_value_is_missing(out->index.s, out->index.len))
        out->index.len = 0;
    if (g->assumed && g->fit_rows++ == 0 && g->misfit) {
        g->misfit = 0; /* some rows fit after all: the note says what was assumed */
        note_assumed(g);
    }
    return 1;
}

bool rm_gpucsv_same_map(const struct rm_gpucsv *x, const struct rm_gpucsv *y)
{
    return x->mapped == y->mapped && x->assumed == y->assumed && x->has_ts == y->has_ts &&
           x->ncols == y->ncols && !memcmp(x->role, y->role, sizeof x->role) &&
           !memcmp(x->metric, y->metric, sizeof x->metric) && x->first_len == y->first_len &&
           !memcmp(x->first, y->first, x->first_len);
}
