#include "monitor/gpu_collectors.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/csvfields.h"
#include "base/rm_time.h"
#include "model/dmon_text.h"
#include "model/energy.h"
#include "model/gpu_metrics.h"
#include "model/streams.h"
#include "model/values.h"
#include "monitor/port.h"
#include "monitor/smi_collectors.h"

int rm_smi_split(struct csv_parser *p, const char *line, size_t len, char *store, size_t cap,
                 const char **field, size_t *flen, int max, bool *plain)
{
    size_t off[RM_GPU_MAX_FIELDS];
    if (max > RM_GPU_MAX_FIELDS) max = RM_GPU_MAX_FIELDS;
    struct rm_csv_fields f = {
        .store = store, .cap = cap, .max = (size_t)max, .off = off, .len = flen};
    int n = rm_csv_split_line(p, line, len, &f);
    for (int i = 0; i < n; i++)
        field[i] = store + off[i];
    if (plain) *plain = f.plain;
    return n;
}

double rm_smi_number(const char *s, size_t n)
{
    double v;
    return rm_value_parse(s, n, &v) == RM_VALUE_OK ? v : NAN;
}

static int is_uint(const char *s, size_t n)
{
    if (n == 0) return 0;
    for (size_t i = 0; i < n; i++)
        if (s[i] < '0' || s[i] > '9') return 0;
    return 1;
}

int rm_gpu_ctx_init(struct rm_gpu_ctx *g, const struct rm_port *port, const char *fields, char *err,
                    size_t errsz)
{
    memset(g, 0, sizeof *g);
    g->port = port;
    g->out.fd = -1;
    g->col_index = g->col_uuid = g->col_timestamp = -1;
    if (strlen(fields) >= sizeof g->names_store) {
        snprintf(err, errsz, "--gpu-fields is too long");
        return -1;
    }
    strcpy(g->names_store, fields);
    char *save = NULL;
    for (char *tok = strtok_r(g->names_store, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        while (*tok == ' ')
            tok++;
        size_t n = strlen(tok);
        while (n && tok[n - 1] == ' ')
            tok[--n] = '\0';
        if (!n) continue;
        for (size_t i = 0; i < n; i++) {
            char c = tok[i];
            if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                  c == '.' || c == '_')) {
                snprintf(err, errsz, "--gpu-fields: '%s' is not a field name", tok);
                return -1;
            }
        }
        if (g->nnames >= RM_GPU_MAX_FIELDS) {
            snprintf(err, errsz, "--gpu-fields: more than %d fields", RM_GPU_MAX_FIELDS);
            return -1;
        }
        int i = g->nnames++;
        g->names[i] = tok;
        int m = rm_gpu_metric_by_query_field(tok, strlen(tok));
        if (!strcmp(tok, "index"))
            g->col_index = i;
        else if (!strcmp(tok, "uuid"))
            g->col_uuid = i;
        else if (!strcmp(tok, "timestamp"))
            g->col_timestamp = i;
        g->metric[i] = (signed char)m;
    }
    g->gap_ns = rm_gap_threshold_ns((int64_t)llround(port->interval_s * 1e9));
    rm_ts_fallback_init(&g->fallback, port, RM_STREAM_GPU,
                        (int64_t)llround(port->interval_s * 1e9));
    rm_ts_cache_init(&g->ts_cache);
    if (g->nnames == 0) {
        snprintf(err, errsz, "--gpu-fields: no field names");
        return -1;
    }
    if (csv_init(&g->csv, 0) != 0) {
        snprintf(err, errsz, "out of memory");
        return -1;
    }
    return 0;
}

void rm_gpu_ctx_fini(struct rm_gpu_ctx *g)
{
    csv_free(&g->csv);
}

/* The row's metric values (NaN where none), parsed once for the thresholds and the latest
 * values; a metric's last column wins. Without an exporter (all false) only the thresholds'
 * two are parsed. */
static void row_values(const struct rm_gpu_ctx *g, double v[RM_GM_COUNT], bool all)
{
    for (int k = 0; k < RM_GM_COUNT; k++)
        v[k] = NAN;
    for (int i = 0; i < g->nnames; i++) {
        int m = g->metric[i];
        if (m >= 0 && (all || m == RM_GM_VRAM_USED || m == RM_GM_VRAM_TOTAL))
            v[m] = rm_smi_number(g->field[i], g->field_len[i]);
    }
}

/* The event's own `ts` is when it was logged, up to 0.5 s after the sample when rows wait in
 * the pipe (rm_gpu_read_due): `sample_ts` is the row's `ts`, the time to line it up with. */
static void threshold_check(struct rm_gpu_ctx *g, int slot, int64_t row_ts,
                            const double v[RM_GM_COUNT])
{
    struct rm_session *s = g->port->sess;
    double used = v[RM_GM_VRAM_USED];
    double total = v[RM_GM_VRAM_TOTAL];
    for (int i = 0; !isfinite(total) && i < s->ngpus; i++)
        if (s->gpus[i].index == slot) total = s->gpus[i].memory_total_mb;
    enum rm_level crossed;
    g->level[slot] =
        rm_threshold_step(g->level[slot], used, total, s->warn_pct, s->crit_pct, &crossed);
    if (crossed == RM_LEVEL_OK) return;
    json_t *d = json_object();
    json_object_set_new(d, "gpu", json_integer(slot));
    if (g->col_uuid >= 0)
        json_object_set_new(d, "uuid",
                            json_stringn(g->field[g->col_uuid], g->field_len[g->col_uuid]));
    json_object_set_new(d, "memory_used_mb", json_real(used));
    json_object_set_new(d, "memory_total_mb", json_real(total));
    json_object_set_new(d, "pct", json_real(round(used / total * 1000.0) / 10.0));
    json_object_set_new(d, "threshold_pct",
                        json_real(crossed == RM_LEVEL_CRITICAL ? s->crit_pct : s->warn_pct));
    char sample_ts[RM_TS_BUFSZ];
    json_object_set_new(d, "sample_ts", json_stringn(sample_ts, rm_format_ts(row_ts, sample_ts)));
    rm_port_event(g->port, crossed == RM_LEVEL_CRITICAL ? "critical" : "warning", d);
}

/* Keeps this row as the GPU's latest values for the exporters: in place, no
 * allocation. */
static void latest_update(struct rm_gpu_ctx *g, int slot, int64_t ts_ns, const double *v)
{
    const char *uuid = g->col_uuid >= 0 ? g->field[g->col_uuid] : NULL;
    size_t uuid_len = g->col_uuid >= 0 ? g->field_len[g->col_uuid] : 0;
    pthread_mutex_lock(g->port->lock);
    rm_latest_gpu_update(&g->port->latest->gpu[slot], ts_ns, v, uuid, uuid_len, g->gap_ns);
    pthread_mutex_unlock(g->port->lock);
}

/* The row's ts: nvidia-smi's timestamp in UTC, or its arrival time (no timestamp column, or
 * one too far from the arrival). */
static int64_t row_ts(struct rm_gpu_ctx *g, int64_t arrival_ns)
{
    if (g->col_timestamp < 0) return arrival_ns;
    int64_t sample_ns = 0;
    int fell_back = 1;
    bool parsed = rm_ts_cache_parse(&g->ts_cache, g->field[g->col_timestamp],
                                    g->field_len[g->col_timestamp], true, &sample_ns) == 0;
    int64_t ts = parsed
                     ? rm_sample_ts_choose(sample_ns, arrival_ns, g->fallback.guard_ns, &fell_back)
                     : arrival_ns;
    if (fell_back)
        rm_ts_fallback_row(&g->fallback, g->field[g->col_timestamp], g->field_len[g->col_timestamp],
                           sample_ns, arrival_ns, parsed);
    else
        g->fallback.in_stretch = 0;
    return ts;
}

enum rm_line_kind rm_gpu_on_line(void *ctx, char *line, size_t len, int64_t ts_ns)
{
    struct rm_gpu_ctx *g = ctx;
    bool plain = false;
    int nf = rm_smi_split(&g->csv, line, len, g->fieldbuf, sizeof g->fieldbuf, g->field,
                          g->field_len, RM_GPU_MAX_FIELDS, &plain);
    if (nf != g->nnames) return RM_LINE_NONDATA;
    /* Event notices and error text rarely have the right number of commas; these checks
     * catch the ones that do. */
    if (g->col_index >= 0 && !is_uint(g->field[g->col_index], g->field_len[g->col_index]))
        return RM_LINE_NONDATA;
    /* The rows of one sample share their timestamp: a text the cache holds passed already. */
    int64_t t;
    if (g->col_timestamp >= 0 &&
        !rm_ts_cache_holds(&g->ts_cache, g->field[g->col_timestamp],
                           g->field_len[g->col_timestamp]) &&
        rm_parse_ts(g->field[g->col_timestamp], g->field_len[g->col_timestamp], &t) != 0)
        return RM_LINE_NONDATA;
    if (!rm_stream_has_header(&g->out)) rm_stream_header(&g->out, g->names, g->nnames);
    int64_t ts = row_ts(g, ts_ns);
    /* A read at the batched write holds several samples (rm_gpu_read_due): a segment still
     * ends after the sample that reached the rollover size. */
    if (ts != g->last_row_ts) rm_stream_flush_if_sealing(&g->out);
    rm_stream_begin_row(&g->out, ts);
    /* nvidia-smi's lines hold no quotes: their fields are written as they are. */
    for (int i = 0; i < nf; i++) {
        if (plain)
            rm_stream_field_plain(&g->out, g->field[i], g->field_len[i]);
        else
            rm_stream_field(&g->out, g->field[i], g->field_len[i]);
    }
    rm_stream_end_row(&g->out);

    /* Which GPU: its index when asked for, else its place in this sample's rows: rows taken
     * (their ts) within 50 ms of each other. The arrival time alone would not tell two
     * samples read on the same tick apart. */
    if (ts - g->last_row_ts > 50 * RM_NS_PER_MS) g->row_in_group = 0;
    g->last_row_ts = ts;
    int slot = g->row_in_group++;
    if (g->col_index >= 0) slot = atoi(g->field[g->col_index]);
    if (slot >= 0 && slot < RM_MAX_GPUS) {
        double v[RM_GM_COUNT];
        row_values(g, v, g->port->latest != NULL);
        threshold_check(g, slot, ts, v);
        if (g->port->latest) latest_update(g, slot, ts, v);
    }
    return RM_LINE_DATA;
}

void rm_gpu_on_flush(void *ctx)
{
    struct rm_gpu_ctx *g = ctx;
    rm_stream_flush(&g->out);
}

int rm_gpu_read_due(void *ctx)
{
    struct rm_gpu_ctx *g = ctx;
    /* Rows stamped with their arrival (no timestamp column, or a fallback stretch) are read
     * at every slot, as before: samples read together would share that time. */
    if (g->col_timestamp < 0 || g->fallback.in_stretch) return 1;
    return rm_stream_write_due(&g->out);
}

void rm_dmon_ctx_init(struct rm_dmon_ctx *d, const struct rm_port *port, int64_t period_ns)
{
    memset(d, 0, sizeof *d);
    d->port = port;
    d->out.fd = -1;
    d->skip[0] = d->skip[1] = -1;
    rm_smi_time_init(&d->clk, port, RM_STREAM_DMON, period_ns);
}

void rm_dmon_on_flush(void *ctx)
{
    struct rm_dmon_ctx *d = ctx;
    rm_stream_flush(&d->out);
}

void rm_dmon_on_window(void *ctx, int64_t since_real)
{
    rm_smi_time_window(&((struct rm_dmon_ctx *)ctx)->clk, since_real);
}

static int skipped(const struct rm_dmon_ctx *d, size_t i)
{
    return (int)i == d->skip[0] || (int)i == d->skip[1];
}

/* Runs nvidia-smi with argv and reads its stdout into out (NUL-terminated) for at most
 * timeout_ms. Returns 0 with *status (the wait status, -1 when not reaped) and *timed_out, or
 * -1 when it could not start (*spawn_errno, message in err). */
static int run_smi(const char *const *argv, int timeout_ms, char *out, size_t cap, int *status,
                   int *timed_out, char *err, size_t errsz, int *spawn_errno)
{
    rm_child c;
    rm_child_init(&c);
    rm_child_opts o = {.new_pgrp = true,
                       .pdeathsig = true,
                       .reap_group = true,
                       .capture_stdout = true,
                       .capture_stderr = true};
    *spawn_errno = rm_child_spawn(&c, argv, &o);
    if (*spawn_errno) {
        snprintf(err, errsz, "%s", c.errmsg);
        return -1;
    }
    size_t used = 0;
    int64_t deadline = rm_now_monotonic_ns() + (int64_t)timeout_ms * RM_NS_PER_MS;
    *timed_out = 0;
    for (;;) {
        int64_t left = deadline - rm_now_monotonic_ns();
        if (left <= 0) {
            *timed_out = 1;
            break;
        }
        struct pollfd p = {.fd = c.out_fd, .events = POLLIN};
        if (poll(&p, 1, (int)(left / RM_NS_PER_MS) + 1) < 0 && errno != EINTR) break;
        if (!p.revents) continue;
        ssize_t n = read(c.out_fd, out + used, cap - 1 - used);
        if (n < 0 && (errno == EAGAIN || errno == EINTR)) continue;
        if (n <= 0) break;
        used += (size_t)n;
        if (used == cap - 1) break;
    }
    out[used] = '\0';
    rm_child_stop(&c, 300);
    *status = c.reaped ? c.wstatus : -1;
    rm_child_release(&c);
    return 0;
}

int rm_smi_list(const char *nvidia_smi, char *out, size_t cap, int timeout_ms)
{
    const char *argv[] = {nvidia_smi, "-L", NULL};
    char err[256];
    int status, timed_out, spawn_errno;
    if (run_smi(argv, timeout_ms, out, cap, &status, &timed_out, err, sizeof err, &spawn_errno))
        return -1;
    return timed_out ? -1 : 0;
}

int rm_gpu_inventory(const char *nvidia_smi, struct rm_session *sess, int timeout_ms, char *err,
                     size_t errsz, int *spawn_errno)
{
    const char *argv[] = {nvidia_smi,
                          "--query-gpu=index,uuid,name,pci.bus_id,memory.total,driver_version",
                          "--format=csv,noheader,nounits", NULL};
    char out[65536];
    int status, timed_out;
    if (run_smi(argv, timeout_ms, out, sizeof out, &status, &timed_out, err, errsz, spawn_errno))
        return -1;

    struct csv_parser p;
    if (csv_init(&p, 0) != 0) {
        snprintf(err, errsz, "out of memory");
        return -1;
    }
    sess->ngpus = 0;
    char first_bad[256] = "";
    char store[2048];
    const char *f[8];
    size_t fl[8];
    for (char *line = out, *next; line && *line; line = next) {
        next = strchr(line, '\n');
        if (next) *next++ = '\0';
        size_t n = strlen(line);
        if (n && line[n - 1] == '\r') line[--n] = '\0';
        if (!n) continue;
        int nf = rm_smi_split(&p, line, n, store, sizeof store, f, fl, 8, NULL);
        if (nf != 6 || !is_uint(f[0], fl[0]) || sess->ngpus >= RM_MAX_GPUS) {
            if (!first_bad[0]) snprintf(first_bad, sizeof first_bad, "%.200s", line);
            continue;
        }
        struct rm_gpu_info *g = &sess->gpus[sess->ngpus++];
        g->index = atoi(f[0]);
        snprintf(g->uuid, sizeof g->uuid, "%s", f[1]);
        snprintf(g->name, sizeof g->name, "%s", f[2]);
        snprintf(g->pci_bus_id, sizeof g->pci_bus_id, "%s", f[3]);
        g->memory_total_mb = rm_smi_number(f[4], fl[4]);
        snprintf(sess->driver_version, sizeof sess->driver_version, "%s", f[5]);
    }
    csv_free(&p);
    if (sess->ngpus > 0) return 0;
    if (timed_out)
        snprintf(err, errsz, "nvidia-smi inventory did not answer within %d ms", timeout_ms);
    else if (first_bad[0])
        snprintf(err, errsz, "%s", first_bad);
    else if (status != -1) {
        char d[96];
        snprintf(err, errsz, "nvidia-smi printed no GPU (%s)",
                 rm_status_describe(status, d, sizeof d));
    } else
        snprintf(err, errsz, "nvidia-smi printed no GPU");
    return -1;
}

/* A value nvidia-smi printed for a field this GPU has: a number ("[N/A]", "[Not Supported]"
 * and "N/A" are not). */
static bool smi_has_value(const char *v, size_t len)
{
    while (len && (*v == ' ' || *v == '\t'))
        v++, len--;
    return len && (isdigit((unsigned char)*v) || *v == '-' || *v == '.');
}

/* One query of fields (a comma list, n of them): the columns with a number on some GPU in
 * *supported (bit i: column i). Returns 0, or -1 when the driver rejected the query (a field it
 * does not know: old drivers print 'Field "..." is not a valid field to query.') or did not
 * answer. */
static int probe_query(const char *smi, const char *fields, int n, int timeout_ms,
                       unsigned *supported)
{
    if (n < 1 || n > RM_POWER_FIELD_COUNT + RM_GPU_CLOCK_FIELDS) return -1;
    char q[512], err[256];
    snprintf(q, sizeof q, "--query-gpu=%s", fields);
    const char *argv[] = {smi, q, "--format=csv,noheader,nounits", NULL};
    char out[16384];
    int status, timed_out, spawn_errno;
    if (run_smi(argv, timeout_ms, out, sizeof out, &status, &timed_out, err, sizeof err,
                &spawn_errno) ||
        timed_out || status == -1 || !WIFEXITED(status) || WEXITSTATUS(status) != 0 ||
        strstr(out, "is not a valid field"))
        return -1;
    struct csv_parser p;
    if (csv_init(&p, 0) != 0) return -1;
    char store[2048];
    const char *f[RM_POWER_FIELD_COUNT + RM_GPU_CLOCK_FIELDS];
    size_t fl[RM_POWER_FIELD_COUNT + RM_GPU_CLOCK_FIELDS];
    *supported = 0;
    for (char *line = out, *next; line && *line; line = next) {
        next = strchr(line, '\n');
        if (next) *next++ = '\0';
        size_t len = strlen(line);
        if (len && line[len - 1] == '\r') line[--len] = '\0';
        if (!len || rm_smi_split(&p, line, len, store, sizeof store, f, fl, n, NULL) != n) continue;
        for (int i = 0; i < n; i++)
            if (smi_has_value(f[i], fl[i])) *supported |= 1u << i;
    }
    csv_free(&p);
    return 0;
}

const char *const rm_gpu_clock_fields[RM_GPU_CLOCK_FIELDS] = {"clocks.max.sm",
                                                              "clocks_event_reasons.active"};

void rm_gpu_power_probe(const char *nvidia_smi, struct rm_session *sess, int timeout_ms)
{
    char all[512] = "";
    for (int i = 0; i < RM_POWER_FIELD_COUNT; i++)
        snprintf(all + strlen(all), sizeof all - strlen(all), "%s%s", i ? "," : "",
                 rm_power_fields[i]);
    for (int i = 0; i < RM_GPU_CLOCK_FIELDS; i++)
        snprintf(all + strlen(all), sizeof all - strlen(all), ",%s", rm_gpu_clock_fields[i]);
    unsigned got;
    sess->power_known = sess->power_supported = sess->clock_supported = 0;
    if (probe_query(nvidia_smi, all, RM_POWER_FIELD_COUNT + RM_GPU_CLOCK_FIELDS, timeout_ms,
                    &got) == 0) {
        sess->power_known = (1u << RM_POWER_FIELD_COUNT) - 1;
        sess->power_supported = got & sess->power_known;
        sess->clock_supported = got >> RM_POWER_FIELD_COUNT;
    } else {
        /* An older driver rejects the whole query for one unknown field: one at a time. */
        for (int i = 0; i < RM_POWER_FIELD_COUNT; i++)
            if (probe_query(nvidia_smi, rm_power_fields[i], 1, timeout_ms, &got) == 0) {
                sess->power_known |= 1u << i;
                if (got) sess->power_supported |= 1u << i;
            }
    }
    sess->power_probed = 1;
}

const char *rm_gpu_fields_with_power(const struct rm_session *sess, char *buf, size_t cap)
{
    snprintf(buf, cap, "%s", RM_DEFAULT_GPU_FIELDS);
    for (int i = 0; i < RM_GPU_CLOCK_FIELDS; i++) {
        size_t u = strlen(buf);
        if (sess->clock_supported & (1u << i))
            snprintf(buf + u, cap - u, ",%s", rm_gpu_clock_fields[i]);
    }
    for (int i = 0; i < RM_POWER_FIELD_COUNT; i++) {
        size_t u = strlen(buf);
        if ((sess->power_supported & (1u << i)) && strcmp(rm_power_fields[i], "power.draw") != 0)
            snprintf(buf + u, cap - u, ",%s", rm_power_fields[i]);
    }
    return buf;
}

/* Whether l names the columns d writes (its Date and Time left out, as d's are). */
static int same_header(const struct rm_dmon_ctx *d, const struct rm_dmon_line *l)
{
    int k = 0;
    for (size_t i = 0; i < l->n; i++) {
        if (skipped(d, i)) continue;
        if (k >= d->nnames || strlen(d->names[k]) != l->tok[i].len ||
            memcmp(d->names[k], l->tok[i].s, l->tok[i].len))
            return 0;
        k++;
    }
    return k == d->nnames;
}

/* dmon.csv's columns: the header's, without -o DT's Date and Time (a row's time is its ts). */
static int take_header(struct rm_dmon_ctx *d, const struct rm_dmon_line *l)
{
    size_t used = 0;
    d->nnames = 0;
    d->skip[0] = rm_dmon_find(l, "Date");
    d->skip[1] = rm_dmon_find(l, "Time");
    for (size_t i = 0; i < l->n && i < 64; i++) {
        if (skipped(d, i)) continue;
        if (used + l->tok[i].len + 1 > sizeof d->names_store) return -1;
        char *dst = d->names_store + used;
        memcpy(dst, l->tok[i].s, l->tok[i].len);
        dst[l->tok[i].len] = '\0';
        d->names[d->nnames++] = dst;
        used += l->tok[i].len + 1;
    }
    d->have_header = 1;
    return 0;
}

enum rm_line_kind rm_dmon_on_line(void *ctx, char *line, size_t len, int64_t ts_ns)
{
    struct rm_dmon_ctx *d = ctx;
    struct rm_dmon_line l;
    switch (rm_dmon_classify(line, len, &l)) {
    case RM_DMON_HEADER:
        rm_smi_time_header(&d->clk, &l);
        if (d->have_header && same_header(d, &l)) return RM_LINE_HEADER;
        if (d->have_header) {
            /* A restarted dmon with another layout (a driver update): a file never mixes
             * layouts, so the old one is sealed. */
            rm_stream_flush(&d->out);
            rm_stream_seal(&d->out);
        }
        if (take_header(d, &l) < 0) return RM_LINE_NONDATA;
        rm_stream_header(&d->out, d->names, d->nnames);
        return RM_LINE_HEADER;
    case RM_DMON_UNITS:
        return RM_LINE_HEADER;
    case RM_DMON_DATA: {
        int dated = rm_smi_time_dated(&d->clk), nskip = (d->skip[0] >= 0) + (d->skip[1] >= 0);
        if (!d->have_header || (int)l.n != d->nnames + nskip) return RM_LINE_NONDATA;
        int64_t ts = ts_ns;
        if (dated && rm_smi_time_row(&d->clk, &l, ts_ns, &ts) < 0) return RM_LINE_NONDATA;
        rm_stream_begin_row(&d->out, ts);
        for (size_t i = 0; i < l.n; i++)
            if (!skipped(d, i)) rm_stream_field(&d->out, l.tok[i].s, l.tok[i].len);
        rm_stream_end_row(&d->out);
        return RM_LINE_DATA;
    }
    default:
        return RM_LINE_NONDATA;
    }
}

int rm_dmon_interval_s(double interval_s)
{
    return (int)(rm_stream_period_ns(RM_INPUT_DMON_TEXT, (int64_t)llround(interval_s * 1e9)) /
                 RM_NS_PER_SEC);
}

/* ---- the two rows of monitor/smi_collectors.h ---------------------------------------------- */

static int cannot_write(const struct rm_smi_start *st, char *err, size_t errsz)
{
    snprintf(err, errsz, "cannot write in %s: %s", st->port->sess->dir, strerror(errno));
    return -1;
}

/* The query loop: `nvidia-smi --query-gpu=FIELDS --format=csv,noheader,nounits -lms MS`. */
static int gpu_start(void *ctx, const struct rm_smi_start *st, struct rm_collector *c,
                     int64_t *period_ns, char *err, size_t errsz)
{
    struct rm_gpu_ctx *g = ctx;
    if (rm_gpu_ctx_init(g, st->port, st->gpu_fields, err, errsz) < 0) return -1;
    if (rm_stream_open(&g->out, st->port->sess->dir, RM_STREAM_GPU) < 0)
        return cannot_write(st, err, errsz);
    int64_t interval_ns = (int64_t)llround(st->interval_s * 1e9);
    rm_stream_batch(&g->out, interval_ns); /* dmon and pmon sample once a second */
    snprintf(g->query, sizeof g->query, "--query-gpu=%s", st->gpu_fields);
    snprintf(g->lms, sizeof g->lms, "%lld", (long long)(interval_ns / RM_NS_PER_MS));
    const char *argv[] = {st->nvidia_smi, g->query, "--format=csv,noheader,nounits",
                          "-lms",         g->lms,   NULL};
    memcpy(c->argv, argv, sizeof argv);
    rm_smi_select_gpus(c, st);
    c->on_line = rm_gpu_on_line;
    c->on_flush = rm_gpu_on_flush;
    c->read_due = rm_gpu_read_due;
    c->ctx = g;
    *period_ns = interval_ns;
    return 0;
}

static struct rm_stream *gpu_out(void *ctx)
{
    return &((struct rm_gpu_ctx *)ctx)->out;
}

static void gpu_stop(void *ctx)
{
    struct rm_gpu_ctx *g = ctx;
    rm_stream_close(&g->out);
    rm_gpu_ctx_fini(g);
}

const struct rm_smi_collector rm_gpu_collector = {.stream = RM_STREAM_GPU,
                                                  .ctx_size = sizeof(struct rm_gpu_ctx),
                                                  .start = gpu_start,
                                                  .out = gpu_out,
                                                  .stop = gpu_stop};

/* `nvidia-smi dmon -s METRICS -d SEC -o DT`. */
static int dmon_start(void *ctx, const struct rm_smi_start *st, struct rm_collector *c,
                      int64_t *period_ns, char *err, size_t errsz)
{
    struct rm_dmon_ctx *d = ctx;
    int sec = rm_dmon_interval_s(st->interval_s);
    rm_dmon_ctx_init(d, st->port, (int64_t)sec * RM_NS_PER_SEC);
    if (rm_stream_open(&d->out, st->port->sess->dir, RM_STREAM_DMON) < 0)
        return cannot_write(st, err, errsz);
    snprintf(d->dsec, sizeof d->dsec, "%d", sec);
    /* -o DT: each row says when it was printed (monitor/smi_time.h). */
    const char *argv[] = {st->nvidia_smi, "dmon", "-s", st->dmon_metrics, "-d", d->dsec,
                          "-o",           "DT",   NULL};
    memcpy(c->argv, argv, sizeof argv);
    rm_smi_select_gpus(c, st);
    c->on_line = rm_dmon_on_line;
    c->on_flush = rm_dmon_on_flush;
    c->on_window = rm_dmon_on_window;
    c->ctx = d;
    *period_ns = (int64_t)sec * RM_NS_PER_SEC;
    return 0;
}

static struct rm_stream *dmon_out(void *ctx)
{
    return &((struct rm_dmon_ctx *)ctx)->out;
}

static void dmon_stop(void *ctx)
{
    rm_stream_close(&((struct rm_dmon_ctx *)ctx)->out);
}

const struct rm_smi_collector rm_dmon_collector = {.stream = RM_STREAM_DMON,
                                                   .ctx_size = sizeof(struct rm_dmon_ctx),
                                                   .start = dmon_start,
                                                   .out = dmon_out,
                                                   .stop = dmon_stop};
