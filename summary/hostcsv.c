#include "summary/hostcsv.h"

#include <math.h>
#include <string.h>

#include "model/values.h"
#include "summary/gpucsv.h"
#include "summary/objects.h"

struct alias {
    const char *name;
    int metric;
};

/* runmon's names first, then spellings seen in other monitors' CSVs. */
static const struct alias aliases[] = {
    {"usr_pct", RM_HM_USR},
    {"user_pct", RM_HM_USR},
    {"cpu_usr_pct", RM_HM_USR},
    {"%usr", RM_HM_USR},
    {"sys_pct", RM_HM_SYS},
    {"system_pct", RM_HM_SYS},
    {"%sys", RM_HM_SYS},
    {"iowait_pct", RM_HM_IOWAIT},
    {"%iowait", RM_HM_IOWAIT},
    {"steal_pct", RM_HM_STEAL},
    {"%steal", RM_HM_STEAL},
    {"idle_pct", RM_HM_IDLE},
    {"%idle", RM_HM_IDLE},
    {"cpu_idle_pct", RM_HM_IDLE},
    {"mem_used_mb", RM_HM_MEM_USED},
    {"memory_used_mb", RM_HM_MEM_USED},
    {"mem_total_mb", RM_HM_MEM_TOTAL},
    {"memory_total_mb", RM_HM_MEM_TOTAL},
    {"rss_mb", RM_HM_PROC_RSS},
    {"cpu_pct", RM_HM_PROC_CPU},
    {"nprocs", RM_HM_PROC_NPROCS},
};

void rm_hostcsv_init(struct rm_hostcsv *h)
{
    memset(h, 0, sizeof *h);
    h->ts_col = h->stamp_col = h->cpu_col = h->avail_col = -1;
}

static bool eq(const char *s, size_t len, const char *lit)
{
    return strlen(lit) == len && !memcmp(s, lit, len);
}

static bool map_header(struct rm_hostcsv *h, const struct rm_csv_row *row)
{
    struct rm_hostcsv m;
    rm_hostcsv_init(&m);
    int known = 0;
    m.ncols = row->n;
    for (size_t i = 0; i < row->n && i < RM_HOSTCSV_MAX_COLS; i++) {
        size_t len = rm_header_name_len(row->f[i], row->len[i]);
        const char *s = row->f[i];
        m.metric[i] = -1;
        if (eq(s, len, "ts"))
            m.ts_col = (int)i, known++;
        else if (eq(s, len, "timestamp") || eq(s, len, "time"))
            m.stamp_col = (int)i, known++;
        else if (eq(s, len, "cpu"))
            m.cpu_col = (int)i, known++;
        else if (eq(s, len, "mem_available_mb"))
            m.avail_col = (int)i, known++;
        else
            for (size_t a = 0; a < sizeof aliases / sizeof aliases[0]; a++)
                if (eq(s, len, aliases[a].name)) {
                    bool dup = false;
                    for (size_t k = 0; k < i; k++)
                        dup |= m.metric[k] == aliases[a].metric;
                    if (!dup) m.metric[i] = (signed char)aliases[a].metric;
                    known++;
                    break;
                }
    }
    if (!known) return false;
    m.mapped = true;
    *h = m;
    return true;
}

int rm_hostcsv_row(struct rm_hostcsv *h, const struct rm_csv_row *row, struct rm_host_sample *out)
{
    if (row->overflow) return -(1 + RM_SKIP_LONG_LINE);
    if (row->torn) return -(1 + RM_SKIP_TORN);
    if (map_header(h, row)) return 0;
    if (!h->mapped || row->n <= 1) return -(1 + RM_SKIP_NOT_DATA);
    if (row->n != h->ncols) return -(1 + RM_SKIP_BAD_FIELD_COUNT);
    if (h->cpu_col >= 0 && !eq(row->f[h->cpu_col], row->len[h->cpu_col], "all"))
        return -(1 + RM_SKIP_PER_CPU);
    memset(out, 0, sizeof *out);
    out->t_ns = RM_NO_TIME;
    size_t n = row->n < RM_HOSTCSV_MAX_COLS ? row->n : RM_HOSTCSV_MAX_COLS;
    double avail = 0;
    bool have_avail = false;
    for (size_t i = 0; i < n; i++) {
        int m = h->metric[i];
        if (m < 0 && (int)i != h->avail_col) continue;
        double v;
        int rc = rm_value_parse(row->f[i], row->len[i], &v);
        if (rc == RM_VALUE_BAD) return -(1 + RM_SKIP_GARBAGE);
        if (rc != RM_VALUE_OK) continue;
        if ((int)i == h->avail_col) {
            avail = v;
            have_avail = true;
        } else {
            out->v[m] = v;
            out->valid |= 1u << m;
        }
    }
    /* Derive used memory from total - available when only those were written. */
    if (!(out->valid & (1u << RM_HM_MEM_USED)) && have_avail &&
        (out->valid & (1u << RM_HM_MEM_TOTAL))) {
        out->v[RM_HM_MEM_USED] = out->v[RM_HM_MEM_TOTAL] - avail;
        out->valid |= 1u << RM_HM_MEM_USED;
    }
    int tc = h->ts_col >= 0 ? h->ts_col : h->stamp_col;
    if (tc >= 0 &&
        rm_parse_time_field(row->f[tc], row->len[tc], tc != h->ts_col, &h->tz, &out->t_ns))
        return -(1 + RM_SKIP_BAD_TIME);
    return 1;
}

/* ---- the host's objects (model/objects.h's cpu and proc) -------------------------------- */

static double peak(const struct rm_stat *s)
{
    return s->n ? s->max : NAN;
}

/* Row fig's value from the host's stats of the run, a phase or the other row (acc; agg, the
 * run's, is the same stats and adds nothing). */
static double host_figure(const void *acc, const void *agg, int fig)
{
    (void)agg;
    static const struct rm_host_stats none;
    const struct rm_host_stats *h = acc ? acc : &none;
    const struct rm_stat *m = h->m;
    switch ((enum rm_obj_fig)fig) {
    case RM_OF_CPU_SAMPLES:
        return (double)h->cpu_samples;
    case RM_OF_CPU_USR_MEAN:
        return rm_stat_mean(&m[RM_HM_USR]);
    case RM_OF_CPU_USR_MAX:
        return peak(&m[RM_HM_USR]);
    case RM_OF_CPU_SYS_MEAN:
        return rm_stat_mean(&m[RM_HM_SYS]);
    case RM_OF_CPU_SYS_MAX:
        return peak(&m[RM_HM_SYS]);
    case RM_OF_CPU_IOWAIT_MEAN:
        return rm_stat_mean(&m[RM_HM_IOWAIT]);
    case RM_OF_CPU_IOWAIT_MAX:
        return peak(&m[RM_HM_IOWAIT]);
    case RM_OF_CPU_STEAL_MEAN:
        return rm_stat_mean(&m[RM_HM_STEAL]);
    case RM_OF_CPU_STEAL_MAX:
        return peak(&m[RM_HM_STEAL]);
    case RM_OF_CPU_IDLE_MEAN:
        return rm_stat_mean(&m[RM_HM_IDLE]);
    case RM_OF_CPU_IDLE_MAX:
        return peak(&m[RM_HM_IDLE]);
    case RM_OF_CPU_MEM_USED_PEAK:
    case RM_OF_CPU_HOST_MEM_PEAK:
        return peak(&m[RM_HM_MEM_USED]);
    case RM_OF_CPU_MEM_TOTAL:
        return peak(&m[RM_HM_MEM_TOTAL]);
    case RM_OF_PROC_SAMPLES:
        return (double)h->proc_samples;
    case RM_OF_PROC_RSS_PEAK:
        return peak(&m[RM_HM_PROC_RSS]);
    case RM_OF_PROC_CPU_MEAN:
        return rm_stat_mean(&m[RM_HM_PROC_CPU]);
    case RM_OF_PROC_CPU_MAX:
        return peak(&m[RM_HM_PROC_CPU]);
    case RM_OF_PROC_NPROCS_MAX:
        return peak(&m[RM_HM_PROC_NPROCS]);
    default: /* another object's row */
        return NAN;
    }
}

/* Their accumulator is the struct rm_host_stats summary/build.c merges: no aggregate. */
const struct rm_obj_engine rm_obj_engine_cpu = {.figure = host_figure};
const struct rm_obj_engine rm_obj_engine_proc = {.figure = host_figure};
