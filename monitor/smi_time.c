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
    t->stream = stream;
    t->guard_ns = rm_sample_ts_guard_ns(period_ns);
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

/* "YYYYMMDD" and "HH:MM:SS" as "YYYY/MM/DD HH:MM:SS" (rm_parse_ts's nvidia-smi spelling). */
static int dt_text(const struct rm_dmon_tok *d, const struct rm_dmon_tok *tm, char *out, size_t cap)
{
    if (d->len != 8 || tm->len != 8 || cap < 20) return -1;
    for (size_t i = 0; i < 8; i++)
        if (d->s[i] < '0' || d->s[i] > '9') return -1;
    memcpy(out, d->s, 4);
    out[4] = '/';
    memcpy(out + 5, d->s + 4, 2);
    out[7] = '/';
    memcpy(out + 8, d->s + 6, 2);
    out[10] = ' ';
    memcpy(out + 11, tm->s, 8);
    out[19] = '\0';
    return 19;
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

/* A row of a sample stamped with its arrival: counted in the session's health. */
static void count_row(struct rm_smi_time *t)
{
    t->arrival_ts_rows++;
    pthread_mutex_lock(t->port->lock);
    t->port->sess->collectors[t->stream].arrival_ts_rows = t->arrival_ts_rows;
    pthread_mutex_unlock(t->port->lock);
}

/* The first sample of each stretch that fell back is logged (at most 10 per session). */
static void note_fallback(struct rm_smi_time *t, const char *dt, int64_t dt_ns, int64_t arrival_ns,
                          int parsed)
{
    if (t->in_fallback || t->fallback_events >= 10) return;
    t->in_fallback = 1;
    t->fallback_events++;
    json_t *d = json_object();
    json_object_set_new(d, "collector", json_string(rm_stream_defs[t->stream].name));
    json_object_set_new(d, "timestamp", json_string(dt));
    char ts[RM_TS_BUFSZ];
    rm_format_ts(arrival_ns, ts);
    json_object_set_new(d, "arrival", json_string(ts));
    json_object_set_new(d, "difference_s",
                        parsed ? json_real(rm_ns_to_seconds_ms(dt_ns - arrival_ns)) : json_null());
    json_object_set_new(d, "guard_s", json_real(rm_ns_to_seconds_ms(t->guard_ns)));
    json_object_set_new(d, "rows", json_integer((json_int_t)t->arrival_ts_rows));
    rm_port_event(t->port, "gpu_time_fallback", d);
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
        dt_len = dt_text(&row->tok[t->col_date], &row->tok[t->col_time], dt, sizeof dt);
    if (dt_len < 0) return -1;
    long gpu = -1;
    if (t->col_gpu >= 0 && (size_t)t->col_gpu < row->n) gpu = atol(row->tok[t->col_gpu].s);
    if (!starts_sample(t, dt, (size_t)dt_len, gpu, row_key(t, row))) {
        if (t->fell_back) count_row(t);
        *ts = t->sample_ts;
        return 0;
    }
    int64_t dt_ns = 0;
    int parsed = rm_ts_cache_parse(&t->cache, dt, (size_t)dt_len, true, &dt_ns) == 0;
    int fell_back = 1;
    int64_t v = parsed ? rm_sample_ts_choose(window_ts(t, dt_ns, arrival_ns), arrival_ns,
                                             t->guard_ns, &fell_back)
                       : arrival_ns;
    t->fell_back = fell_back;
    if (fell_back) {
        count_row(t);
        note_fallback(t, dt, dt_ns + RM_NS_PER_SEC / 2, arrival_ns, parsed);
    } else {
        t->in_fallback = 0;
    }
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
