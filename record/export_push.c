/* The Prometheus Pushgateway (`runmon record --pushgateway URL [--push-interval S]`): an
 * exporter (record/exporter.h). It renders the tick's snapshot with report/prom.h (the
 * textfile's metric names) and PUTs it, the whole group each time, to
 *   URL/metrics/job/runmon/sweep@base64/<sweep>/param_<key>@base64/<value>...
 * (one group per sweep configuration; without --sweep, host@base64/<host>: one group per
 * host), never to a group of its own per session: the Pushgateway never expires a group.
 * With an interval it pushes the current figures every S seconds; at the end, the final
 * status plus two figures of the whole run (its duration and each GPU's energy).
 *
 * The HTTP runs on the sender's thread (record/http.h): poll only renders into a buffer and
 * offers it (a newer body replaces one not yet sent); close waits a bounded time (3 s; when the
 * gateway is failing or a request hangs, until the end's one deadline for writers in trouble,
 * 1 s after the end began, record/http.h) for the final push.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/rm_time.h"
#include "model/gpu_metrics.h"
#include "record/exporter.h"
#include "record/http.h"
#include "report/prom.h"

#define PUSH_CLOSE_NS (3 * RM_NS_PER_SEC)
#define PUSH_CLOSE_FAILING_NS (1 * RM_NS_PER_SEC)

struct push {
    struct rm_http_sender tx;
    int quiet;
    int final_offered; /* close_begin offered the final push */
    char *buf;
    size_t cap;
    int64_t period_ns, next_mono_ns; /* period 0: only the final push */
    double period_s;
};

static int push_wanted(const struct rm_record_opts *opts)
{
    return opts->pushgateway != NULL;
}

/* base64url of s, as the Pushgateway reads a label value after "@base64" ("=" when empty). */
static void put_b64(char *out, size_t cap, size_t *n, const char *s)
{
    static const char a[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    size_t len = strlen(s);
    if (!len && *n + 1 < cap) out[(*n)++] = '=';
    for (size_t i = 0; i < len; i += 3) {
        unsigned v = (unsigned char)s[i] << 16;
        if (i + 1 < len) v |= (unsigned char)s[i + 1] << 8;
        if (i + 2 < len) v |= (unsigned char)s[i + 2];
        char q[4] = {a[v >> 18 & 63], a[v >> 12 & 63], a[v >> 6 & 63], a[v & 63]};
        int k = i + 2 < len ? 4 : i + 1 < len ? 3 : 2;
        for (int j = 0; j < k && *n + 1 < cap; j++)
            out[(*n)++] = q[j];
    }
    out[*n] = '\0';
}

static void put_str(char *out, size_t cap, size_t *n, const char *s)
{
    while (*s && *n + 1 < cap)
        out[(*n)++] = *s++;
    out[*n] = '\0';
}

/* A parameter's key as a label name: param_ and [a-zA-Z0-9_] (others become _). */
static void put_label_name(char *out, size_t cap, size_t *n, const char *key)
{
    put_str(out, cap, n, "param_");
    for (const char *p = key; *p && *n + 1 < cap; p++) {
        char c = *p;
        int okc = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
        out[(*n)++] = okc ? c : '_';
    }
    out[*n] = '\0';
}

/* The shortest text of d that reads back as d: 0.1, not 0.10000000000000001. */
static void shortest(char *out, size_t cap, double d)
{
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(out, cap, "%.*g", prec, d);
        if (strtod(out, NULL) == d) return;
    }
}

/* A parameter's value as the grouping key's text: a number as its shortest form. NULL: not a
 * string or a number (left out). */
static const char *param_text(const json_t *v, char *text, size_t cap)
{
    if (json_is_string(v)) return json_string_value(v);
    if (json_is_real(v))
        shortest(text, cap, json_real_value(v));
    else if (json_is_integer(v))
        snprintf(text, cap, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
    else
        return NULL;
    return text;
}

/* What would make two configurations one group: two keys that become one label name (the
 * gateway keeps one value per label), or an empty value (to Prometheus an empty label is no
 * label). 0, or -1 with the reason in err. */
static int check_params(json_t *p, char *err, size_t errsz)
{
    json_t *seen = json_object();
    const char *k;
    json_t *v;
    int rc = seen ? 0 : -1;
    if (rc) snprintf(err, errsz, "--pushgateway: out of memory");
    json_object_foreach(p, k, v)
    {
        char label[2048], text[64];
        size_t n = 0;
        put_label_name(label, sizeof label, &n, k);
        const char *val = param_text(v, text, sizeof text);
        const char *other = json_string_value(json_object_get(seen, label));
        if (rc == 0 && other) {
            snprintf(err, errsz,
                     "--pushgateway: --param %.200s and --param %.200s are one label, %.200s, "
                     "in the grouping key (a label name holds only letters, digits and _), so "
                     "two configurations would share one group: rename one of them",
                     other, k, label);
            rc = -1;
        } else if (rc == 0 && val && !*val) {
            snprintf(err, errsz,
                     "--pushgateway: --param %.200s= has an empty value, which Prometheus reads "
                     "as no %.200s label at all: give it a value",
                     k, label);
            rc = -1;
        }
        if (seen) json_object_set_new(seen, label, json_string(k));
    }
    json_decref(seen);
    return rc;
}

/* The group's URL: the gateway's base URL and the grouping key. 0, or -1 with the reason in
 * err (too long, parameters that would share a group). */
static int group_url(char *out, size_t cap, const char *base, const struct rm_record_opts *o,
                     const char *host, char *err, size_t errsz)
{
    size_t n = 0;
    put_str(out, cap, &n, base);
    while (n > 0 && out[n - 1] == '/')
        out[--n] = '\0';
    put_str(out, cap, &n, "/metrics/job/runmon/");
    if (o->sweep) {
        put_str(out, cap, &n, "sweep@base64/");
        put_b64(out, cap, &n, o->sweep);
    } else {
        put_str(out, cap, &n, "host@base64/");
        put_b64(out, cap, &n, host);
    }
    if (o->params_json) {
        json_t *p = json_loads(o->params_json, 0, NULL);
        if (!json_is_object(p) || check_params(p, err, errsz) < 0) {
            if (!json_is_object(p)) snprintf(err, errsz, "--pushgateway: bad parameters");
            json_decref(p);
            return -1;
        }
        const char *k;
        json_t *v;
        json_object_foreach(p, k, v)
        {
            char text[64];
            const char *val = param_text(v, text, sizeof text);
            if (!val) continue;
            put_str(out, cap, &n, "/");
            put_label_name(out, cap, &n, k);
            put_str(out, cap, &n, "@base64/");
            put_b64(out, cap, &n, val);
        }
        json_decref(p);
    }
    if (n + 1 < cap) return 0;
    snprintf(err, errsz, "--pushgateway: the grouping key is too long (sweep and params)");
    return -1;
}

/* Before the session's folder is made: what the grouping key refuses (a host name as long as
 * a session's stands for the one it will have). */
static int push_check(const struct rm_record_opts *o, char *err, size_t errsz)
{
    char url[8192], host[256];
    memset(host, 'h', sizeof host - 1);
    host[sizeof host - 1] = '\0';
    return group_url(url, sizeof url, o->pushgateway, o, host, err, errsz);
}

static int push_open(void *self, const struct rm_exporter_env *env, char *err, size_t errsz)
{
    struct push *p = self;
    const struct rm_record_opts *o = env->opts;
    p->quiet = env->port->quiet;
    char why[256];
    if (rm_http_global_init(why, sizeof why) < 0) {
        snprintf(err, errsz, "--pushgateway: %s", why);
        return -1;
    }
    char url[8192];
    if (group_url(url, sizeof url, o->pushgateway, o, env->port->sess->host, err, errsz) < 0)
        return -1;
    p->cap = 64 * 1024;
    if (!(p->buf = malloc(p->cap))) {
        snprintf(err, errsz, "--pushgateway: out of memory");
        return -1;
    }
    if (rm_http_sender_start(&p->tx, "--pushgateway", "PUT", url, "text/plain; version=0.0.4",
                             env->port, err, errsz) < 0) {
        free(p->buf);
        p->buf = NULL;
        return -1;
    }
    p->period_s = o->push_interval_s;
    p->period_ns = (int64_t)llround(o->push_interval_s * 1e9);
    p->next_mono_ns = p->period_ns ? env->now_mono_ns + p->period_ns : RM_EXPORTER_NEVER;
    return 0;
}

static int64_t push_due(const void *self)
{
    return ((const struct push *)self)->next_mono_ns;
}

/* The run's figures a finished run keeps (the renderer's final exposition has no values). */
static long append_final(struct push *p, long n, const struct rm_snapshot *snap)
{
    size_t len = (size_t)n;
    char *b = p->buf;
    size_t cap = p->cap;
#define PUT(...)                                                                                   \
    do {                                                                                           \
        int k_ = snprintf(b + len, cap - len, __VA_ARGS__);                                        \
        if (k_ < 0 || (size_t)k_ >= cap - len) return -1;                                          \
        len += (size_t)k_;                                                                         \
    } while (0)
#define LABELS_END()                                                                               \
    do {                                                                                           \
        PUT("host=\"");                                                                            \
        if (rm_prom_escape(b, cap, &len, snap->host) < 0) return -1;                               \
        PUT("\",session=\"");                                                                      \
        if (rm_prom_escape(b, cap, &len, snap->session) < 0) return -1;                            \
        PUT("\"}");                                                                                \
    } while (0)
    PUT("# HELP runmon_session_duration_seconds Wall-clock time the session recorded.\n"
        "# TYPE runmon_session_duration_seconds gauge\nrunmon_session_duration_seconds{");
    LABELS_END();
    PUT(" %.3f\n", (double)(snap->now_ns - snap->started_ns) / 1e9);
    int headed = 0;
    for (int i = 0; i < RM_MAX_GPUS; i++) {
        const struct rm_latest_gpu *g = &snap->latest.gpu[i];
        if (!g->valid || !g->energy_valid) continue;
        if (!headed++)
            PUT("# HELP " RM_PROM_GPU_ENERGY " GPU energy since the recording started "
                "(power.draw integrated over the gpu rows).\n"
                "# TYPE " RM_PROM_GPU_ENERGY " counter\n");
        const char *uuid = g->uuid[0] ? g->uuid : snap->gpu_uuid[i] ? snap->gpu_uuid[i] : "";
        PUT(RM_PROM_GPU_ENERGY "{gpu=\"%d\",uuid=\"", i);
        if (rm_prom_escape(b, cap, &len, uuid) < 0) return -1;
        PUT("\",");
        LABELS_END();
        PUT(" %.3f\n", g->energy_j);
    }
#undef PUT
#undef LABELS_END
    return (long)len;
}

static long render(struct push *p, const struct rm_snapshot *snap)
{
    struct rm_prom_input in;
    rm_snapshot_prom_input(snap, p->period_s, &in);
    for (;;) {
        long n = rm_prom_render(p->buf, p->cap, &in);
        if (n >= 0 && snap->final) n = append_final(p, n, snap);
        if (n >= 0) return n;
        char *nb = p->cap < 16 * 1024 * 1024 ? realloc(p->buf, p->cap * 2) : NULL;
        if (!nb) return -1;
        p->buf = nb;
        p->cap *= 2;
    }
}

static void push_poll(void *self, struct rm_tick *t)
{
    struct push *p = self;
    int64_t now = t->now_mono_ns;
    rm_http_say(&p->tx, p->quiet, t);
    if (now < p->next_mono_ns) return;
    long n = render(p, rm_tick_snapshot(t));
    if (n >= 0) rm_http_offer(&p->tx, p->buf, (size_t)n, 1);
    p->next_mono_ns += p->period_ns;
    if (p->next_mono_ns <= now) p->next_mono_ns = now + p->period_ns;
}

/* The final push handed to the sender at once: its request runs while the other writers
 * close. */
static void push_close_begin(void *self, const struct rm_snapshot *snap)
{
    struct push *p = self;
    long n = render(p, snap);
    if (n >= 0) rm_http_offer(&p->tx, p->buf, (size_t)n, 1);
    p->final_offered = 1;
}

static void push_close(void *self, const struct rm_snapshot *snap)
{
    struct push *p = self;
    if (!p->final_offered) push_close_begin(p, snap);
    int64_t bound = rm_http_close_bound(&p->tx, PUSH_CLOSE_NS, PUSH_CLOSE_FAILING_NS);
    rm_http_wait_idle(&p->tx, rm_now_monotonic_ns() + bound);
    rm_http_say(&p->tx, p->quiet, NULL);
    if (rm_http_sender_stop(&p->tx) && !p->quiet)
        fprintf(stderr, "runmon record: --pushgateway %s: the final push was not sent (%s)\n",
                p->tx.shown, p->tx.last_error[0] ? p->tx.last_error : "no answer in time");
    free(p->buf);
    p->buf = NULL;
}

const struct rm_exporter_ops rm_exporter_pushgateway = {
    .name = "pushgateway",
    .size = sizeof(struct push),
    .wanted = push_wanted,
    .check = push_check,
    .open = push_open,
    .due = push_due,
    .poll = push_poll,
    .close_begin = push_close_begin,
    .close = push_close,
};
