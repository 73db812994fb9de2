#include "monitor/smi_time.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/streams.h"
#include "monitor/policy.h"

void rm_smi_time_init(struct rm_smi_time *t, const struct rm_port *port, int stream,
                      int64_t period_ns)
{
    memset(t, 0, sizeof *t);
    t->port = port;
    rm_ts_fallback_init(&t->fallback, port, stream, period_ns);
    t->col_date = t->col_time = t->col_gpu = t->col_pid = -1;
    rm_ts_cache_init(&t->cache);
}

void rm_smi_time_header(struct rm_smi_time *t, const struct rm_dmon_line *hdr)
{
    t->col_date = rm_dmon_find(hdr, "Date");
    t->col_time = rm_dmon_find(hdr, "Time");
    t->col_gpu = rm_dmon_find(hdr, "gpu");
    t->col_pid = rm_dmon_find(hdr, "pid");
    t->in_sample = 0;
}

int rm_smi_time_dated(const struct rm_smi_time *t)
{
    return t->col_date >= 0 && t->col_time >= 0;
}

static uint64_t row_key(const struct rm_smi_time *t, const struct rm_dmon_line *row)
{
    uint64_t h = 1469598103934665603ULL; /* FNV-1a over the GPU and pid tokens */
    int cols[2] = {t->col_gpu, t->col_pid};
    for (int k = 0; k < 2; k++) {
        if (cols[k] < 0 || (size_t)cols[k] >= row->n) continue;
        for (size_t i = 0; i < row->tok[cols[k]].len; i++)
            h = (h ^ (unsigned char)row->tok[cols[k]].s[i]) * 1099511628211ULL;
        h = (h ^ 0xff) * 1099511628211ULL;
    }
    return h;
}

/* Whether row starts a sample: another Date+Time, a lower GPU index, a key seen already. */
static int starts_sample(struct rm_smi_time *t, const char *dt, size_t dt_len, long gpu,
                         uint64_t key)
{
    int fresh = !t->in_sample || dt_len != t->dt_len || memcmp(dt, t->dt, dt_len) != 0 ||
                (gpu >= 0 && gpu < t->last_gpu);
    for (int i = 0; !fresh && i < t->nkeys; i++)
        if (t->keys[i] == key) fresh = 1;
    if (fresh) t->nkeys = 0;
    if (t->nkeys < RM_SMI_TIME_KEYS) t->keys[t->nkeys++] = key;
    if (gpu >= 0) t->last_gpu = gpu;
    return fresh;
}

void rm_ts_fallback_init(struct rm_ts_fallback *f, const struct rm_port *port, int stream,
                         int64_t period_ns)
{
    *f = (struct rm_ts_fallback){
        .port = port, .stream = stream, .guard_ns = rm_sample_ts_guard_ns(period_ns)};
}

void rm_ts_fallback_count(struct rm_ts_fallback *f)
{
    f->rows++;
    pthread_mutex_lock(f->port->lock);
    f->port->sess->collectors[f->stream].arrival_ts_rows = f->rows;
    pthread_mutex_unlock(f->port->lock);
}

void rm_ts_fallback_row(struct rm_ts_fallback *f, const char *stamp, size_t stamp_len,
                        int64_t sample_ns, int64_t arrival_ns, int parsed)
{
    rm_ts_fallback_count(f);
    if (f->in_stretch) return;
    f->in_stretch = 1;
    if (f->events >= RM_TS_FALLBACK_LOG_MAX) return;
    f->events++;
    json_t *d = json_object();
    json_object_set_new(d, "collector", json_string(rm_stream_defs[f->stream].name));
    json_object_set_new(d, "timestamp", json_stringn(stamp, stamp_len));
    char ts[RM_TS_BUFSZ];
    rm_format_ts(arrival_ns, ts);
    json_object_set_new(d, "arrival", json_string(ts));
    json_object_set_new(d, "difference_s",
                        parsed ? json_real(rm_ns_to_seconds_ms(sample_ns - arrival_ns))
                               : json_null());
    json_object_set_new(d, "guard_s", json_real(rm_ns_to_seconds_ms(f->guard_ns)));
    json_object_set_new(d, "rows", json_integer((json_int_t)f->rows));
    rm_port_event(f->port, "gpu_time_fallback", d);
}

/* The sample's time from its second dt_ns and the read window (read_from, arrival]. */
static int64_t window_ts(const struct rm_smi_time *t, int64_t dt_ns, int64_t arrival_ns)
{
    int64_t lo = dt_ns, hi = dt_ns + RM_NS_PER_SEC;
    if (t->read_from_ns > lo) lo = t->read_from_ns;
    if (arrival_ns < hi) hi = arrival_ns;
    return lo <= hi ? lo + (hi - lo) / 2 : dt_ns + RM_NS_PER_SEC / 2;
}

int rm_smi_time_row(struct rm_smi_time *t, const struct rm_dmon_line *row, int64_t arrival_ns,
                    int64_t *ts)
{
    char dt[32];
    int dt_len = -1;
    if ((size_t)t->col_date < row->n && (size_t)t->col_time < row->n)
        dt_len = rm_dmon_date_time_text(row->tok[t->col_date].s, row->tok[t->col_date].len,
                                        row->tok[t->col_time].s, row->tok[t->col_time].len, '/',
                                        dt); /* rm_parse_ts's nvidia-smi spelling */
    if (dt_len < 0) return -1;
    long gpu = -1;
    if (t->col_gpu >= 0 && (size_t)t->col_gpu < row->n) gpu = atol(row->tok[t->col_gpu].s);
    if (!starts_sample(t, dt, (size_t)dt_len, gpu, row_key(t, row))) {
        if (t->fell_back) rm_ts_fallback_count(&t->fallback);
        *ts = t->sample_ts;
        return 0;
    }
    int64_t dt_ns = 0;
    int parsed = rm_ts_cache_parse(&t->cache, dt, (size_t)dt_len, true, &dt_ns) == 0;
    int fell_back = 1;
    int64_t v = parsed ? rm_sample_ts_choose(window_ts(t, dt_ns, arrival_ns), arrival_ns,
                                             t->fallback.guard_ns, &fell_back)
                       : arrival_ns;
    t->fell_back = fell_back;
    if (fell_back)
        rm_ts_fallback_row(&t->fallback, dt, (size_t)dt_len, dt_ns + RM_NS_PER_SEC / 2, arrival_ns,
                           parsed);
    else
        t->fallback.in_stretch = 0;
    /* Two samples never share a ts (a reader takes the rows of one ts as one sample): one at
     * or up to a second before the previous one (bursts of one second read together) comes
     * 1 ms after it. Further back is a clock step: its own time stands. */
    if (t->sample_ts && v < t->sample_ts + RM_NS_PER_MS && v > t->sample_ts - RM_NS_PER_SEC)
        v = t->sample_ts + RM_NS_PER_MS;
    memcpy(t->dt, dt, (size_t)dt_len);
    t->dt_len = (size_t)dt_len;
    t->sample_ts = v;
    t->in_sample = 1;
    *ts = v;
    return 1;
}

void rm_smi_time_window(struct rm_smi_time *t, int64_t since_real)
{
    t->read_from_ns = since_real;
}
