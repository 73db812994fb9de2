#include "summary/smi_apps.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "model/values.h"

/* ---- pmon text ------------------------------------------------------------------------ */

void rm_pmon_map_init(struct rm_pmon_map *m)
{
    memset(m, 0, sizeof *m);
    m->col_gpu = m->col_pid = m->col_fb = m->col_sm = m->col_cmd = -1;
    m->col_date = m->col_time = -1;
}

static bool tok_digits(const struct rm_dmon_tok *t)
{
    if (!t->len || t->len > 18) return false;
    for (size_t i = 0; i < t->len; i++)
        if (t->s[i] < '0' || t->s[i] > '9') return false;
    return true;
}

static bool tok_dash(const struct rm_dmon_tok *t)
{
    return t->len == 1 && t->s[0] == '-';
}

static long long tok_int(const struct rm_dmon_tok *t)
{
    long long v = 0;
    for (size_t i = 0; i < t->len; i++)
        v = v * 10 + (t->s[i] - '0');
    return v;
}

/* A number column: NaN for "-" or anything else that is not a number. */
static double tok_number(const struct rm_dmon_line *l, int col)
{
    double v;
    if (col < 0 || (size_t)col >= l->n) return NAN;
    const struct rm_dmon_tok *t = &l->tok[col];
    return rm_value_parse(t->s, t->len, &v) == RM_VALUE_OK ? v : NAN;
}

/* pmon's header: gpu, pid and command (last: it is the rest of the row) by name. */
static int take_header(struct rm_pmon_map *m, const struct rm_dmon_line *l)
{
    m->col_gpu = rm_dmon_find(l, "gpu");
    m->col_pid = rm_dmon_find(l, "pid");
    m->col_fb = rm_dmon_find(l, "fb");
    m->col_sm = rm_dmon_find(l, "sm");
    m->col_cmd = rm_dmon_find(l, "command");
    m->col_date = rm_dmon_find(l, "Date");
    m->col_time = rm_dmon_find(l, "Time");
    m->ncols = (int)l->n;
    m->mapped = m->col_gpu >= 0 && m->col_pid >= 0 && m->col_cmd == m->ncols - 1;
    return m->mapped ? 0 : -(1 + RM_SKIP_NOT_DATA);
}

static int row_time(struct rm_pmon_map *m, const struct rm_dmon_line *l, int64_t *ns)
{
    *ns = RM_NO_TIME;
    if (m->col_date < 0 || m->col_time < 0) return 0;
    const struct rm_dmon_tok *d = &l->tok[m->col_date], *t = &l->tok[m->col_time];
    char buf[20];
    if (rm_dmon_date_time_text(d->s, d->len, t->s, t->len, '-', buf) < 0) return -1;
    return rm_parse_time_field(buf, 19, true, &m->tz, ns);
}

int rm_pmon_text_line(struct rm_pmon_map *m, const char *line, size_t len, bool torn,
                      struct rm_app_row *out)
{
    struct rm_dmon_line *l = &m->line;
    switch (rm_dmon_classify(line, len, l)) {
    case RM_DMON_HEADER:
        return take_header(m, l);
    case RM_DMON_UNITS:
        return 0;
    case RM_DMON_DATA:
        break;
    default: {
        size_t i = 0;
        while (i < len && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r'))
            i++;
        return i == len ? 0 : -(1 + RM_SKIP_NOT_DATA); /* blank, or a notice */
    }
    }
    if (torn) return -(1 + RM_SKIP_TORN);
    if (!m->mapped) return -(1 + RM_SKIP_NOT_DATA);
    /* A row cut before its command still counts; anything shorter is not a row. */
    if ((int)l->n < m->ncols - 1) return -(1 + RM_SKIP_BAD_FIELD_COUNT);
    const struct rm_dmon_tok *gpu = &l->tok[m->col_gpu], *pid = &l->tok[m->col_pid];
    if (!tok_digits(gpu) || !(tok_digits(pid) || tok_dash(pid))) return -(1 + RM_SKIP_GARBAGE);
    long long g = tok_int(gpu);
    if (g >= RM_APPS_MAX_GPUS) return -(1 + RM_SKIP_GARBAGE);
    if (row_time(m, l, &out->t_ns)) return -(1 + RM_SKIP_BAD_TIME);
    out->gpu = (int)g;
    out->pid = tok_dash(pid) ? -1 : tok_int(pid);
    out->uuid = (struct rm_strref){"", 0};
    out->name = (struct rm_strref){"", 0};
    if ((int)l->n > m->col_cmd && !tok_dash(&l->tok[m->col_cmd])) {
        const char *c = l->tok[m->col_cmd].s;
        const struct rm_dmon_tok *last = &l->tok[l->n - 1];
        out->name = (struct rm_strref){c, (size_t)(last->s + last->len - c)};
    }
    out->vram_mb = tok_number(l, m->col_fb);
    out->sm_pct = tok_number(l, m->col_sm);
    out->in_workload = -1;
    out->origin = RM_APP_SMI_SAMPLE;
    return 1;
}

/* ---- --query-compute-apps and --query-accounted-apps CSV ------------------------------- */

struct col_name {
    const char *name;
    int col;
    int kind; /* 1: says compute-apps, 2: says accounted-apps, 0: either */
};

static const struct col_name col_names[] = {
    {"timestamp", RM_SAC_TIMESTAMP, 0},
    {"gpu_uuid", RM_SAC_UUID, 0},
    {"gpu_bus_id", RM_SAC_BUS, 0},
    {"gpu_name", RM_SAC_GPU_NAME, 0},
    {"pid", RM_SAC_PID, 0},
    {"process_name", RM_SAC_PROCESS, 1},
    {"name", RM_SAC_PROCESS, 1},
    {"used_gpu_memory", RM_SAC_MEM, 1},
    {"used_memory", RM_SAC_MEM, 1},
    {"max_memory_usage", RM_SAC_MEM, 2},
    {"gpu_utilization", RM_SAC_UTIL, 2},
    {"gpu_util", RM_SAC_UTIL, 2},
    {"mem_utilization", -1, 2},
    {"mem_util", -1, 2},
};

static const struct col_name *find_name(const char *s, size_t len)
{
    len = rm_header_name_len(s, len);
    for (size_t i = 0; i < sizeof col_names / sizeof col_names[0]; i++)
        if (strlen(col_names[i].name) == len && !memcmp(col_names[i].name, s, len))
            return &col_names[i];
    return NULL;
}

int rm_smi_apps_header_kind(const char *const *f, const size_t *len, size_t n)
{
    bool pid = false;
    int kind = 0;
    for (size_t i = 0; i < n; i++) {
        const struct col_name *c = find_name(f[i], len[i]);
        if (!c) continue;
        pid |= c->col == RM_SAC_PID;
        if (c->kind == 2 || (c->kind == 1 && !kind)) kind = c->kind;
    }
    return pid ? kind : 0;
}

void rm_smi_apps_csv_init(struct rm_smi_apps_csv *p)
{
    memset(p, 0, sizeof *p);
    for (int c = 0; c < RM_SAC_COUNT; c++)
        p->col[c] = -1;
}

static bool map_header(struct rm_smi_apps_csv *p, const struct rm_csv_row *row)
{
    int kind = rm_smi_apps_header_kind(row->f, row->len, row->n);
    if (!kind) return false;
    /* A header again (nvidia-smi restarted, appending) keeps the GPUs' numbers. */
    for (int c = 0; c < RM_SAC_COUNT; c++)
        p->col[c] = -1;
    for (size_t i = 0; i < row->n; i++) {
        const struct col_name *c = find_name(row->f[i], row->len[i]);
        if (c && c->col >= 0 && p->col[c->col] < 0) p->col[c->col] = (int)i;
    }
    p->ncols = row->n;
    p->accounted = kind == 2;
    p->mapped = true;
    return true;
}

static struct rm_strref field(const struct rm_csv_row *row, int col)
{
    if (col < 0 || (size_t)col >= row->n) return (struct rm_strref){"", 0};
    return (struct rm_strref){row->f[col], row->len[col]};
}

/* The GPU's number: its key's place among the keys met so far; -1 past the limit. */
static int gpu_number(struct rm_smi_apps_csv *p, struct rm_strref key)
{
    if (key.len >= sizeof p->gpu_key[0]) key.len = sizeof p->gpu_key[0] - 1;
    for (int g = 0; g < p->ngpus; g++)
        if (strlen(p->gpu_key[g]) == key.len && !memcmp(p->gpu_key[g], key.s, key.len)) return g;
    if (p->ngpus == RM_APPS_MAX_GPUS) {
        p->too_many = true;
        return -1;
    }
    snprintf(p->gpu_key[p->ngpus], sizeof p->gpu_key[0], "%.*s", (int)key.len, key.s);
    return p->ngpus++;
}

static double number(struct rm_strref r)
{
    double v;
    return rm_value_parse(r.s, r.len, &v) == RM_VALUE_OK ? v : NAN;
}

int rm_smi_apps_csv_row(struct rm_smi_apps_csv *p, const struct rm_csv_row *row,
                        struct rm_app_row *out)
{
    if (row->overflow) return -(1 + RM_SKIP_LONG_LINE);
    if (row->torn) return -(1 + RM_SKIP_TORN);
    if (map_header(p, row)) return 0;
    if (!p->mapped || row->n == 0) return -(1 + RM_SKIP_NOT_DATA);
    if (row->n != p->ncols) return -(1 + RM_SKIP_BAD_FIELD_COUNT);
    struct rm_strref pid = field(row, p->col[RM_SAC_PID]);
    long long v = 0;
    if (!pid.len || pid.len > 18) return -(1 + RM_SKIP_GARBAGE);
    for (size_t i = 0; i < pid.len; i++) {
        if (pid.s[i] < '0' || pid.s[i] > '9') return -(1 + RM_SKIP_GARBAGE);
        v = v * 10 + (pid.s[i] - '0');
    }
    out->t_ns = RM_NO_TIME;
    struct rm_strref ts = field(row, p->col[RM_SAC_TIMESTAMP]);
    if (ts.len && rm_parse_time_field(ts.s, ts.len, true, &p->tz, &out->t_ns))
        return -(1 + RM_SKIP_BAD_TIME);
    struct rm_strref uuid = field(row, p->col[RM_SAC_UUID]);
    struct rm_strref key = uuid.len ? uuid : field(row, p->col[RM_SAC_BUS]);
    if (!key.len) key = field(row, p->col[RM_SAC_GPU_NAME]);
    int g = gpu_number(p, key);
    if (g < 0) return -(1 + RM_SKIP_GARBAGE);
    out->gpu = g;
    out->pid = v;
    out->uuid = uuid;
    out->name = field(row, p->col[RM_SAC_PROCESS]);
    out->vram_mb = number(field(row, p->col[RM_SAC_MEM]));
    out->sm_pct = number(field(row, p->col[RM_SAC_UTIL]));
    out->in_workload = -1;
    out->origin = p->accounted ? RM_APP_SMI_LIFETIME : RM_APP_SMI_SAMPLE;
    return 1;
}
