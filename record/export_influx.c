/* InfluxDB line protocol (`runmon record --influx URL`, `--influx-file PATH`): two exporters
 * (record/exporter.h) of one file, each with a row feed (record/rowfeed.h) over gpu.csv,
 * cpu.csv, proc.csv and apps.csv. Once a second poll turns what the files gained into one
 * batch of lines (at most 5,000; the feed offers the rest next time), measurement
 * runmon_<stream>, tags session, host, job (SLURM's), sweep and the row's identity (gpu, uuid,
 * cpu, pid), time from `ts` in milliseconds. docs/FORMATS.md, "InfluxDB line protocol".
 *
 * --influx hands the batch to its HTTP thread (record/http.h) only when the thread is idle:
 * during an outage the rows wait in the files (memory: one batch), and go once the server is
 * back. --influx-file appends each batch with one write on the main thread (a local file).
 * close: the files are complete; the rest goes in batches within a bounded time (3 s; when
 * the server is failing or a request hangs, until the end's one deadline for writers in
 * trouble, record/http.h); what is left is counted in an event.
 */
#include <csv.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/csvfields.h"
#include "base/rm_time.h"
#include "record/exporter.h"
#include "record/http.h"
#include "record/lineproto.h"
#include "record/rowfeed.h"

#define INFLUX_MAX_LINES 5000
#define INFLUX_MAX_COLS 64
#define INFLUX_CLOSE_NS (3 * RM_NS_PER_SEC)
#define INFLUX_CLOSE_FAILING_NS (1 * RM_NS_PER_SEC)
#define INFLUX_STREAMS rm_streams_influx() /* the rows of these streams (model/streams.c) */

enum col_kind { COL_SKIP, COL_TIME, COL_TAG, COL_STRING, COL_NUMBER };

struct stream_cols {
    int n;
    enum col_kind kind[INFLUX_MAX_COLS];
    char *key[INFLUX_MAX_COLS]; /* escaped tag or field key; NULL: no memory, left out */
};

struct influx {
    const char *who; /* "--influx", "--influx-file" */
    const struct rm_port *port;
    int to_file;
    struct rm_http_sender tx;
    int fd;
    int quiet, file_warned;
    struct rm_rowfeed feed;
    struct csv_parser csv;
    struct rm_csv_fields f;
    size_t f_off[INFLUX_MAX_COLS], f_len[INFLUX_MAX_COLS];
    struct stream_cols cols[RM_STREAM_COUNT];
    char *tags; /* ",session=...,host=...[,job=...][,sweep=...]" escaped */
    char *batch;
    size_t len, cap, lines;
    size_t inflight; /* lines of the batch the thread has */
    int64_t next_mono_ns;
    uint64_t rows_sent, rows_dropped, empty_rows, bad_rows, lost_reported;
};

/* Room for `more` bytes past the batch's end (and its NUL). 0, or -1 without memory. */
static int reserve(struct influx *x, size_t more)
{
    if (x->len + more + 1 <= x->cap) return 0;
    size_t cap = x->cap ? x->cap : 1 << 20;
    while (cap < x->len + more + 1)
        cap *= 2;
    char *nb = realloc(x->batch, cap);
    if (!nb) return -1;
    x->batch = nb;
    x->cap = cap;
    return 0;
}

/* Appends the n bytes at s as a token of kind k (record/lineproto.h). */
static int put_esc(struct influx *x, const char *s, size_t n, enum rm_lp_kind k)
{
    if (reserve(x, RM_LP_ESCAPED_MAX(n)) < 0) return -1;
    x->len += rm_lp_escape(x->batch + x->len, s, n, k);
    x->batch[x->len] = '\0';
    return 0;
}

/* Appends s as it is: numbers, the tags and keys escaped before. */
static int put_s(struct influx *x, const char *s)
{
    size_t n = strlen(s);
    if (reserve(x, n) < 0) return -1;
    memcpy(x->batch + x->len, s, n + 1);
    x->len += n;
    return 0;
}

/* s escaped as a key (tag key, tag value, field key), NUL-terminated, in memory of its own. */
static char *esc_dup(const char *s)
{
    size_t n = strlen(s);
    char *out = malloc(RM_LP_ESCAPED_MAX(n) + 1);
    if (out) out[rm_lp_escape(out, s, n, RM_LP_KEY)] = '\0';
    return out;
}

/* ",key=value" escaped onto x->tags; an empty or missing value is left out. */
static int add_tag(struct influx *x, const char *key, const char *value)
{
    if (!value || !*value) return 0;
    char *k = esc_dup(key), *v = esc_dup(value);
    size_t have = x->tags ? strlen(x->tags) : 0;
    char *t = k && v ? realloc(x->tags, have + strlen(k) + strlen(v) + 3) : NULL;
    if (t) {
        sprintf(t + have, ",%s=%s", k, v);
        x->tags = t;
    }
    free(k);
    free(v);
    return t ? 0 : -1;
}

static void free_keys(struct stream_cols *c)
{
    for (int i = 0; i < c->n; i++) {
        free(c->key[i]);
        c->key[i] = NULL;
    }
    c->n = 0;
}

/* A column's kind by its name: the row's identity is a tag, names are strings, `ts` the time,
 * everything else a number (left out when the row has no number there). */
static void header(struct influx *x, int stream, int n)
{
    static const char *const tag_cols[][2] = {
        {"index", "gpu"}, {"gpu", "gpu"}, {"uuid", "uuid"}, {"cpu", "cpu"}, {"pid", "pid"}};
    static const char *const str_cols[] = {"timestamp", "name", "pci.bus_id", "process"};
    struct stream_cols *c = &x->cols[stream];
    free_keys(c);
    c->n = n < INFLUX_MAX_COLS ? n : INFLUX_MAX_COLS;
    for (int i = 0; i < c->n; i++) {
        const char *name = x->f.store + x->f.off[i];
        c->kind[i] = COL_NUMBER;
        const char *key = name;
        if (!strcmp(name, "ts")) c->kind[i] = COL_TIME;
        for (size_t k = 0; k < sizeof tag_cols / sizeof *tag_cols; k++)
            if (!strcmp(name, tag_cols[k][0])) {
                c->kind[i] = COL_TAG;
                key = tag_cols[k][1];
            }
        for (size_t k = 0; k < sizeof str_cols / sizeof *str_cols; k++)
            if (!strcmp(name, str_cols[k])) c->kind[i] = COL_STRING;
        c->key[i] = esc_dup(key);
    }
}

/* A finite decimal number, as line protocol takes a float: digits, sign, point, exponent. */
static int is_number(const char *s, size_t n)
{
    if (!n || strspn(s, "0123456789+-.eE") != n) return 0;
    char *end;
    double d = strtod(s, &end);
    return end == s + n && isfinite(d);
}

/* The feed's callback: one CSV line of stream into the batch. */
static int take_line(void *ctx, int stream, const char *line, size_t len, int first)
{
    struct influx *x = ctx;
    int n = rm_csv_split_line(&x->csv, line, len, &x->f);
    if (first) {
        if (n > 0) header(x, stream, n);
        return 0;
    }
    if (x->lines >= INFLUX_MAX_LINES) return 1; /* offered again next time */
    struct stream_cols *c = &x->cols[stream];
    if (n < 0 || c->n == 0) {
        x->bad_rows++;
        return 0;
    }
    int64_t ts_ns = -1;
    int nfields = 0;
    for (int i = 0; i < n && i < c->n; i++) {
        const char *v = x->f.store + x->f.off[i];
        size_t vl = x->f.len[i];
        if (c->kind[i] == COL_TIME && rm_parse_ts(v, vl, &ts_ns) < 0) ts_ns = -1;
        if (!c->key[i]) continue;
        if ((c->kind[i] == COL_STRING && vl) || (c->kind[i] == COL_NUMBER && is_number(v, vl)))
            nfields++;
    }
    if (ts_ns < 0) {
        x->bad_rows++;
        return 0;
    }
    if (!nfields) { /* line protocol needs a field: apps.csv's no-process rows */
        x->empty_rows++;
        return 0;
    }
    size_t start = x->len;
    char meas[64];
    snprintf(meas, sizeof meas, "runmon_%s", rm_stream_defs[stream].name);
    int bad = put_esc(x, meas, strlen(meas), RM_LP_MEASUREMENT) || put_s(x, x->tags);
    for (int i = 0; i < n && i < c->n && !bad; i++)
        if (c->kind[i] == COL_TAG && x->f.len[i] && c->key[i])
            bad = put_s(x, ",") || put_s(x, c->key[i]) || put_s(x, "=") ||
                  put_esc(x, x->f.store + x->f.off[i], x->f.len[i], RM_LP_KEY);
    const char *sep = " ";
    for (int i = 0; i < n && i < c->n && !bad; i++) {
        const char *v = x->f.store + x->f.off[i];
        size_t vl = x->f.len[i];
        if (!c->key[i]) continue;
        if (c->kind[i] == COL_NUMBER && is_number(v, vl))
            bad = put_s(x, sep) || put_s(x, c->key[i]) || put_s(x, "=") ||
                  put_esc(x, v, vl, RM_LP_KEY);
        else if (c->kind[i] == COL_STRING && vl)
            bad = put_s(x, sep) || put_s(x, c->key[i]) || put_s(x, "=\"") ||
                  put_esc(x, v, vl, RM_LP_STRING) || put_s(x, "\"");
        else
            continue;
        sep = ",";
    }
    char t[40];
    snprintf(t, sizeof t, " %lld\n", (long long)(ts_ns / RM_NS_PER_MS));
    if (bad || put_s(x, t)) {
        x->len = start; /* no memory: the row is offered again */
        if (x->batch) x->batch[x->len] = '\0';
        return 1;
    }
    x->lines++;
    return 0;
}

/* Fills the batch from the feed: at most INFLUX_MAX_LINES lines, stream by stream. */
static void fill(struct influx *x)
{
    x->len = x->lines = 0;
    if (x->batch) x->batch[0] = '\0';
    for (int s = 0; s < RM_STREAM_COUNT && x->lines < INFLUX_MAX_LINES; s++)
        if (INFLUX_STREAMS & (1u << s)) rm_rowfeed_read(&x->feed, s, (size_t)-1, take_line, x);
}

static uint64_t lost_files(const struct influx *x)
{
    uint64_t n = 0;
    for (int s = 0; s < RM_STREAM_COUNT; s++)
        n += x->feed.s[s].lost_files;
    return n;
}

/* Sealed files removed by retention before they were read: one event each time more go. */
static void report_lost(struct influx *x, const struct rm_port *port)
{
    uint64_t lost = lost_files(x);
    if (lost == x->lost_reported) return;
    x->lost_reported = lost;
    rm_port_event(port, "export_rows_lost",
                  json_pack("{s:s, s:I}", "exporter", x->who, "lost_files", (json_int_t)lost));
    if (!x->quiet)
        fprintf(stderr,
                "runmon record: %s: %llu sealed file(s) were removed by retention before they "
                "were sent\n",
                x->who, (unsigned long long)lost);
}

static int write_all(int fd, const char *b, size_t n)
{
    while (n) {
        ssize_t k = write(fd, b, n);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) return -1;
        b += k;
        n -= (size_t)k;
    }
    return 0;
}

static void to_file(struct influx *x)
{
    if (!x->lines) return;
    if (write_all(x->fd, x->batch, x->len) < 0) {
        x->rows_dropped += x->lines;
        if (!x->file_warned++ && !x->quiet)
            fprintf(stderr, "runmon record: --influx-file: cannot write: %s (rows dropped)\n",
                    strerror(errno));
    } else {
        x->rows_sent += x->lines;
    }
}

static int influx_open_common(struct influx *x, const struct rm_exporter_env *env, char *err,
                              size_t errsz)
{
    const struct rm_record_opts *o = env->opts;
    x->fd = -1;
    x->quiet = env->port->quiet;
    x->port = env->port;
    const struct rm_session *s = env->port->sess;
    int bad = add_tag(x, "session", s->id) < 0; /* in this order: the tags' order */
    bad = bad || add_tag(x, "host", s->host) < 0;
    const char *job = getenv("SLURM_JOB_ID"), *aj = getenv("SLURM_ARRAY_JOB_ID"),
               *at = getenv("SLURM_ARRAY_TASK_ID");
    char jb[128];
    if (aj && *aj && at && *at) {
        snprintf(jb, sizeof jb, "%s_%s", aj, at);
        job = jb;
    }
    bad = bad || add_tag(x, "job", job) < 0 || add_tag(x, "sweep", o->sweep) < 0;
    if (bad || (!x->tags && !(x->tags = calloc(1, 1))) || csv_init(&x->csv, 0) != 0) {
        free(x->tags);
        x->tags = NULL;
        snprintf(err, errsz, "%s: out of memory", x->who);
        return -1;
    }
    x->f = (struct rm_csv_fields){
        .grow = true, .max = INFLUX_MAX_COLS, .off = x->f_off, .len = x->f_len};
    if (rm_rowfeed_open(&x->feed, env->dir, INFLUX_STREAMS) < 0) {
        csv_free(&x->csv);
        free(x->tags);
        x->tags = NULL;
        free(x->f.store);
        snprintf(err, errsz, "%s: out of memory", x->who);
        return -1;
    }
    x->next_mono_ns = env->now_mono_ns + RM_NS_PER_SEC;
    return 0;
}

static void influx_free(struct influx *x)
{
    for (int s = 0; s < RM_STREAM_COUNT; s++)
        free_keys(&x->cols[s]);
    free(x->tags);
    x->tags = NULL;
    rm_rowfeed_close(&x->feed);
    csv_free(&x->csv);
    free(x->f.store);
    free(x->batch);
    x->batch = NULL;
    if (x->fd >= 0) close(x->fd);
    x->fd = -1;
}

static int influx_wanted(const struct rm_record_opts *opts)
{
    return opts->influx != NULL;
}

static int influx_file_wanted(const struct rm_record_opts *opts)
{
    return opts->influx_file != NULL;
}

/* The write URL: "/write" when the URL has no path, and precision=ms. */
static int write_url(char *out, size_t cap, const char *url)
{
    const char *auth = strstr(url, "://");
    auth = auth ? auth + 3 : url;
    const char *rest = auth + strcspn(auth, "/?#");
    const char *q = strchr(url, '?');
    int no_path = *rest != '/' || rest[1] == '\0' || rest[1] == '?';
    size_t base = q ? (size_t)(q - url) : strlen(url);
    int k = snprintf(out, cap, "%.*s%s%s%s%sprecision=ms", (int)base, url,
                     no_path && (base == 0 || url[base - 1] != '/') ? "/" : "",
                     no_path ? "write" : "", q ? q : "", q ? "&" : "?");
    return k < 0 || (size_t)k >= cap ? -1 : 0;
}

static int influx_open(void *self, const struct rm_exporter_env *env, char *err, size_t errsz)
{
    struct influx *x = self;
    x->who = "--influx";
    char url[8192];
    if (write_url(url, sizeof url, env->opts->influx) < 0) {
        snprintf(err, errsz, "--influx: the URL is too long");
        return -1;
    }
    char why[256];
    if (rm_http_global_init(why, sizeof why) < 0) {
        snprintf(err, errsz, "--influx: %s", why);
        return -1;
    }
    if (influx_open_common(x, env, err, errsz) < 0) return -1;
    if (rm_http_sender_start(&x->tx, "--influx", "POST", url, "text/plain; charset=utf-8",
                             env->port, err, errsz) < 0) {
        influx_free(x);
        return -1;
    }
    return 0;
}

/* The file can be opened for appending (made, when it does not exist, and removed again: the
 * session's open makes it). */
static int influx_file_check(const struct rm_record_opts *o, char *err, size_t errsz)
{
    const char *path = o->influx_file;
    int made = 0, fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC);
    if (fd < 0 && errno == ENOENT) {
        fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, o->private_files ? 0600 : 0666);
        made = fd >= 0;
    }
    if (fd < 0) {
        snprintf(err, errsz, "--influx-file: cannot open %s: %s", path, strerror(errno));
        return -1;
    }
    close(fd);
    if (made) unlink(path);
    return 0;
}

static int influx_file_open(void *self, const struct rm_exporter_env *env, char *err, size_t errsz)
{
    struct influx *x = self;
    x->who = "--influx-file";
    x->to_file = 1;
    if (influx_open_common(x, env, err, errsz) < 0) return -1;
    x->fd = open(env->opts->influx_file, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC,
                 env->opts->private_files ? 0600 : 0666);
    if (x->fd < 0) {
        snprintf(err, errsz, "--influx-file: cannot open %s: %s", env->opts->influx_file,
                 strerror(errno));
        influx_free(x);
        return -1;
    }
    return 0;
}

static int64_t influx_due(const void *self)
{
    return ((const struct influx *)self)->next_mono_ns;
}

static void influx_poll(void *self, struct rm_tick *t)
{
    struct influx *x = self;
    if (t->now_mono_ns < x->next_mono_ns) return;
    x->next_mono_ns = t->now_mono_ns + RM_NS_PER_SEC; /* at most one request a second */
    if (x->to_file) {
        fill(x);
        to_file(x);
    } else {
        rm_http_say(&x->tx, x->quiet, t);
        if (!rm_http_idle(&x->tx)) return; /* a batch in flight or retried: rows wait in files */
        x->rows_sent += x->inflight;
        x->inflight = 0;
        fill(x);
        if (x->lines && rm_http_offer(&x->tx, x->batch, x->len, 0))
            x->inflight = x->lines;
        else
            x->rows_dropped += x->lines; /* no memory for its copy: the feed has moved on */
    }
    report_lost(x, x->port);
}

/* The lines the feed still holds (counted, not kept). */
static int count_line(void *ctx, int stream, const char *line, size_t len, int first)
{
    (void)stream, (void)line, (void)len;
    if (!first) (*(uint64_t *)ctx)++;
    return 0;
}

static void influx_close(void *self, const struct rm_snapshot *snap)
{
    struct influx *x = self;
    (void)snap;
    if (x->to_file) {
        do {
            fill(x);
            to_file(x);
        } while (x->lines);
    } else {
        int64_t now = rm_now_monotonic_ns();
        int64_t deadline =
            now + rm_http_close_bound(&x->tx, INFLUX_CLOSE_NS, INFLUX_CLOSE_FAILING_NS);
        int64_t last_offer = 0;
        for (;;) {
            if (!rm_http_wait_idle(&x->tx, deadline)) break;
            x->rows_sent += x->inflight;
            x->inflight = 0;
            fill(x);
            if (!x->lines) break;
            now = rm_now_monotonic_ns();
            if (last_offer && now < last_offer + RM_NS_PER_SEC) { /* one request a second */
                if (last_offer + RM_NS_PER_SEC >= deadline) break;
                rm_sleep_until_mono(last_offer + RM_NS_PER_SEC, NULL);
            }
            if (!rm_http_offer(&x->tx, x->batch, x->len, 0)) break;
            x->inflight = x->lines;
            last_offer = rm_now_monotonic_ns();
        }
        rm_http_say(&x->tx, x->quiet, NULL);
        int unsent_batch = rm_http_sender_stop(&x->tx);
        uint64_t left = 0;
        for (int s = 0; s < RM_STREAM_COUNT; s++)
            if (INFLUX_STREAMS & (1u << s))
                rm_rowfeed_read(&x->feed, s, (size_t)-1, count_line, &left);
        if (unsent_batch)
            left += x->inflight;
        else
            x->rows_sent += x->inflight;
        x->rows_dropped += left;
        if (left && !x->quiet)
            fprintf(stderr,
                    "runmon record: --influx %s: %llu rows were not sent before the end (%s)\n",
                    x->tx.shown, (unsigned long long)left,
                    x->tx.last_error[0] ? x->tx.last_error : "no answer in time");
    }
    report_lost(x, x->port);
    rm_port_event(x->port, "export_rows",
                  json_pack("{s:s, s:I, s:I, s:I, s:I, s:I}", "exporter", x->who, "rows_sent",
                            (json_int_t)x->rows_sent, "rows_unsent", (json_int_t)x->rows_dropped,
                            "rows_without_values", (json_int_t)x->empty_rows, "rows_unreadable",
                            (json_int_t)x->bad_rows, "lost_files", (json_int_t)lost_files(x)));
    influx_free(x);
}

const struct rm_exporter_ops rm_exporter_influx = {
    .name = "influx",
    .size = sizeof(struct influx),
    .wanted = influx_wanted,
    .open = influx_open,
    .due = influx_due,
    .poll = influx_poll,
    .close = influx_close,
};

const struct rm_exporter_ops rm_exporter_influx_file = {
    .name = "influx-file",
    .size = sizeof(struct influx),
    .wanted = influx_file_wanted,
    .check = influx_file_check,
    .open = influx_file_open,
    .due = influx_due,
    .poll = influx_poll,
    .close = influx_close,
};
