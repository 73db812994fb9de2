/* `runmon top`: the state of a session from its files, and its frame as text lines. */
#include "report/top.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/json.h"
#include "base/linebuf.h"
#include "base/rm_time.h"
#include "base/termsafe.h"
#include "model/session.h"
#include "model/streams.h"
#include "summary/csvread.h"

#define TOP_MAX_GPUS 64
#define TOP_HIST 2048               /* utilization samples kept per GPU (>= 60 s at 0.05 s) */
#define TOP_SPARK_S 60.0            /* the sparkline's span */
#define TOP_TAIL_START (4u << 20)   /* a file larger than this is read from its last... */
#define TOP_TAIL_KEEP (2u << 20)    /* ...this many bytes (after its header line) */
#define TOP_READ_BUDGET (16u << 20) /* bytes read from one file per poll at most */
#define TOP_MAX_COLS 12
#define TOP_MAX_APPS 64
#define TOP_MAX_OPEN 32
#define TOP_DONE 8
#define TOP_EVENTS 8
#define TOP_RUNLOG_LINE 65536

struct top_tail;
typedef void (*top_row_fn)(struct rm_top *t, struct top_tail *tl, const struct rm_csv_row *r);

/* One followed CSV file. */
struct top_tail {
    struct rm_top *top;
    char path[4224];
    int fd;
    ino_t ino;
    off_t off;
    int skip_nl; /* started mid-file: drop bytes up to the first newline */
    struct rm_csv_reader *rd;
    int mapped;
    const char *const *names; /* the columns wanted, NULL-terminated */
    int col[TOP_MAX_COLS];
    top_row_fn fn;
};

struct top_gpu {
    int seen;
    char name[128];
    double util, mused, mtotal, power, temp;
    int64_t ts;
    double hist[TOP_HIST];
    int64_t hts[TOP_HIST];
    size_t hn, hpos;
};

struct top_app {
    int gpu;
    long pid;
    char name[64];
    double vram, sm;
    char inwl; /* '1', '0', or '?' */
};

struct top_open {
    long pid;
    char path[256];
    double t;
};

struct top_done {
    char path[256];
    double seconds;
    char status[16];
};

struct top_event {
    double t;
    char text[256];
};

/* A collector's state as the run log's events tell it: session.json's health is written at
 * the end (and at flushes), so while the session runs the events are the news. */
struct top_health {
    char name[16];
    char health[16];
    char reason[256];
};

#define TOP_COLLECTORS 8
#define TOP_IO_KEYS 64
struct top_io_key {
    char kind[12], name[32];
    int64_t ts;
    double v[2];    /* cumulative counters: bytes, or stalled microseconds */
    double rate[2]; /* per second since the key's previous row; NaN until there is one */
};

struct rm_top {
    char dir[4096];
    json_t *sess;
    struct top_tail gpu, cpu, proc, apps, io;
    struct top_gpu g[TOP_MAX_GPUS];
    int have_cpu;
    double cpu_busy, mem_total, mem_used;
    int have_proc;
    double nprocs, rss, pcpu;
    long root_pid;
    char apps_ts[64];
    int have_apps;
    struct top_app app[TOP_MAX_APPS];
    size_t napps;
    /* run log */
    int rl_fd;
    ino_t rl_ino;
    off_t rl_off;
    char *rl_line;    /* the splitter's storage: TOP_RUNLOG_LINE + 1 bytes */
    rm_linebuf rl_lb; /* whole lines of the run log; an over-long one arrives truncated */
    struct top_open open[TOP_MAX_OPEN];
    int nopen;
    struct top_done done[TOP_DONE];
    size_t ndone; /* total seen; the ring holds the last TOP_DONE */
    struct top_event ev[TOP_EVENTS];
    size_t nev;
    struct top_health lh[TOP_COLLECTORS];
    int nlh;
    /* io.csv: per (kind, name) its last counters and the rates since the row before */
    struct top_io_key io_key[TOP_IO_KEYS];
    int nio;
    int64_t io_ts; /* the newest io row's time: keys of older rows have gone */
};

/* ---- CSV fields ------------------------------------------------------------------------ */

static int field_str(const struct rm_csv_row *r, int idx, char *buf, size_t cap)
{
    buf[0] = 0;
    if (idx < 0 || (size_t)idx >= r->n || cap == 0) return 0;
    size_t len = r->len[idx] < cap - 1 ? r->len[idx] : cap - 1;
    memcpy(buf, r->f[idx], len);
    buf[len] = 0;
    return len > 0;
}

/* The number in a field, NaN when empty or not a number ("[N/A]", "-"). */
static double field_num(const struct rm_csv_row *r, int idx)
{
    char buf[64];
    if (!field_str(r, idx, buf, sizeof buf)) return NAN;
    char *end;
    errno = 0;
    double v = strtod(buf, &end);
    if (end == buf || *end || errno || !isfinite(v)) return NAN;
    return v;
}

static int64_t field_ts(const struct rm_csv_row *r, int idx)
{
    int64_t ns = 0;
    if (idx < 0 || (size_t)idx >= r->n) return 0;
    if (rm_parse_ts(r->f[idx], r->len[idx], &ns) != 0) return 0;
    return ns;
}

static void tail_row(void *ctx, const struct rm_csv_row *r)
{
    struct top_tail *tl = ctx;
    if (r->torn || r->n == 0) return;
    if (!tl->mapped || (r->len[0] == 2 && !memcmp(r->f[0], "ts", 2))) {
        for (int i = 0; i < TOP_MAX_COLS; i++)
            tl->col[i] = -1;
        for (int i = 0; tl->names[i] && i < TOP_MAX_COLS; i++)
            for (size_t j = 0; j < r->n; j++)
                if (r->len[j] == strlen(tl->names[i]) && !memcmp(r->f[j], tl->names[i], r->len[j]))
                    tl->col[i] = (int)j;
        tl->mapped = 1;
        return;
    }
    tl->fn(tl->top, tl, r);
}

/* The name of the stream of subject (model/streams.h): its collector's and its file's. */
static const char *subject_name(enum rm_stream_subject subject)
{
    int s = rm_stream_of_subject(subject);
    return s >= 0 ? rm_stream_defs[s].name : "";
}

/* Tails the active file of the stream of subject. */
static void tail_init(struct top_tail *tl, struct rm_top *t, enum rm_stream_subject subject,
                      const char *const *names, top_row_fn fn)
{
    memset(tl, 0, sizeof *tl);
    tl->top = t;
    char file[64] = "";
    rm_segment_name(file, sizeof file, rm_stream_of_subject(subject), 0);
    snprintf(tl->path, sizeof tl->path, "%s/%s", t->dir, file);
    tl->fd = -1;
    tl->names = names;
    tl->fn = fn;
}

static void tail_close(struct top_tail *tl)
{
    if (tl->fd >= 0) close(tl->fd);
    tl->fd = -1;
    rm_csv_free(tl->rd);
    tl->rd = NULL;
}

/* Hands what fd holds past *off to chunk, advancing *off (at most TOP_READ_BUDGET bytes per
 * call, so a fast writer cannot stall the screen). */
static void read_new(int fd, off_t *off, void (*chunk)(void *ctx, const char *p, size_t n),
                     void *ctx)
{
    char buf[65536];
    size_t budget = TOP_READ_BUDGET;
    while (budget > 0) {
        ssize_t k = pread(fd, buf, sizeof buf, *off);
        if (k <= 0) break;
        *off += k;
        budget = (size_t)k >= budget ? 0 : budget - (size_t)k;
        chunk(ctx, buf, (size_t)k);
    }
}

static void tail_chunk(void *ctx, const char *p, size_t len)
{
    struct top_tail *tl = ctx;
    if (tl->skip_nl) {
        const char *nl = memchr(p, '\n', len);
        if (!nl) return;
        len -= (size_t)(nl + 1 - p);
        p = nl + 1;
        tl->skip_nl = 0;
    }
    if (len) rm_csv_feed(tl->rd, p, len);
}

/* Reads what the tailed file holds past the offset. */
static void tail_read(struct top_tail *tl)
{
    read_new(tl->fd, &tl->off, tail_chunk, tl);
}

/* Opens the active file anew: from its start, or a big file from its header line and its
 * last TOP_TAIL_KEEP bytes. */
static void tail_reopen(struct top_tail *tl)
{
    tail_close(tl);
    tl->fd = open(tl->path, O_RDONLY | O_CLOEXEC);
    if (tl->fd < 0) return;
    struct stat st;
    if (fstat(tl->fd, &st) != 0) {
        tail_close(tl);
        return;
    }
    tl->ino = st.st_ino;
    tl->off = 0;
    tl->skip_nl = 0;
    tl->mapped = 0;
    tl->rd = rm_csv_new(tail_row, tl);
    if (!tl->rd) {
        tail_close(tl);
        return;
    }
    if (st.st_size > (off_t)TOP_TAIL_START) {
        char head[65536];
        ssize_t k = pread(tl->fd, head, sizeof head, 0);
        const char *nl = k > 0 ? memchr(head, '\n', (size_t)k) : NULL;
        if (nl) {
            rm_csv_feed(tl->rd, head, (size_t)(nl + 1 - head));
            tl->off = st.st_size - (off_t)TOP_TAIL_KEEP;
            tl->skip_nl = 1;
        }
    }
}

static void tail_poll(struct top_tail *tl)
{
    if (tl->fd >= 0) tail_read(tl); /* the rest of the file we hold, even if sealed since */
    struct stat st;
    if (stat(tl->path, &st) != 0) return;
    if (tl->fd < 0 || st.st_ino != tl->ino || st.st_size < tl->off) tail_reopen(tl);
    if (tl->fd >= 0) tail_read(tl);
}

/* ---- the streams ----------------------------------------------------------------------- */

static const char *const gpu_cols[] = {
    "ts",         "index",           "name", "utilization.gpu", "memory.used", "memory.total",
    "power.draw", "temperature.gpu", NULL};
enum { GC_TS, GC_INDEX, GC_NAME, GC_UTIL, GC_MUSED, GC_MTOTAL, GC_POWER, GC_TEMP };

static void gpu_row(struct rm_top *t, struct top_tail *tl, const struct rm_csv_row *r)
{
    double idx = field_num(r, tl->col[GC_INDEX]);
    if (isnan(idx) || idx < 0 || idx >= TOP_MAX_GPUS) return;
    struct top_gpu *g = &t->g[(int)idx];
    g->seen = 1;
    char name[128];
    if (field_str(r, tl->col[GC_NAME], name, sizeof name)) memcpy(g->name, name, sizeof name);
    g->util = field_num(r, tl->col[GC_UTIL]);
    g->mused = field_num(r, tl->col[GC_MUSED]);
    double mt = field_num(r, tl->col[GC_MTOTAL]);
    if (!isnan(mt)) g->mtotal = mt;
    g->power = field_num(r, tl->col[GC_POWER]);
    g->temp = field_num(r, tl->col[GC_TEMP]);
    g->ts = field_ts(r, tl->col[GC_TS]);
    if (g->ts && !isnan(g->util)) {
        g->hist[g->hpos] = g->util;
        g->hts[g->hpos] = g->ts;
        g->hpos = (g->hpos + 1) % TOP_HIST;
        if (g->hn < TOP_HIST) g->hn++;
    }
}

static const char *const cpu_cols[] = {"ts",           "cpu",         "idle_pct",
                                       "mem_total_mb", "mem_used_mb", NULL};
enum { CC_TS, CC_CPU, CC_IDLE, CC_MTOTAL, CC_MUSED };

static void cpu_row(struct rm_top *t, struct top_tail *tl, const struct rm_csv_row *r)
{
    char cpu[16];
    field_str(r, tl->col[CC_CPU], cpu, sizeof cpu);
    if (tl->col[CC_CPU] >= 0 && strcmp(cpu, "all") != 0) return;
    double idle = field_num(r, tl->col[CC_IDLE]);
    t->cpu_busy = isnan(idle) ? NAN : 100.0 - idle;
    t->mem_total = field_num(r, tl->col[CC_MTOTAL]);
    t->mem_used = field_num(r, tl->col[CC_MUSED]);
    t->have_cpu = 1;
}

static const char *const proc_cols[] = {"ts", "root_pid", "nprocs", "rss_mb", "cpu_pct", NULL};
enum { PC_TS, PC_ROOT, PC_N, PC_RSS, PC_CPU };

static void proc_row(struct rm_top *t, struct top_tail *tl, const struct rm_csv_row *r)
{
    double root = field_num(r, tl->col[PC_ROOT]);
    t->root_pid = isnan(root) ? 0 : (long)root;
    t->nprocs = field_num(r, tl->col[PC_N]);
    t->rss = field_num(r, tl->col[PC_RSS]);
    t->pcpu = field_num(r, tl->col[PC_CPU]);
    t->have_proc = 1;
}

/* apps.csv's rows: tl->col is indexed by enum rm_apps_col (the names of rm_apps_cols). */

static void apps_row(struct rm_top *t, struct top_tail *tl, const struct rm_csv_row *r)
{
    char ts[64];
    field_str(r, tl->col[RM_APPS_COL_TS], ts, sizeof ts);
    if (strcmp(ts, t->apps_ts) != 0) { /* a new sample: the last one is replaced */
        memcpy(t->apps_ts, ts, sizeof ts);
        t->napps = 0;
    }
    t->have_apps = 1;
    double pid = field_num(r, tl->col[RM_APPS_COL_PID]);
    if (isnan(pid) || t->napps >= TOP_MAX_APPS) return;
    struct top_app *a = &t->app[t->napps++];
    double gpu = field_num(r, tl->col[RM_APPS_COL_GPU]);
    a->gpu = isnan(gpu) ? -1 : (int)gpu;
    a->pid = (long)pid;
    field_str(r, tl->col[RM_APPS_COL_PROCESS], a->name, sizeof a->name);
    a->vram = field_num(r, tl->col[RM_APPS_COL_VRAM]);
    a->sm = field_num(r, tl->col[RM_APPS_COL_SM]);
    char wl[8];
    field_str(r, tl->col[RM_APPS_COL_IN_WORKLOAD], wl, sizeof wl);
    a->inwl = wl[0] == '1' ? '1' : wl[0] == '0' ? '0' : '?';
}

static const char *const io_cols[] = {"ts",          "kind",     "name",     "read_bytes",
                                      "write_bytes", "rx_bytes", "tx_bytes", "some_us",
                                      "full_us",     NULL};
enum { IC_TS, IC_KIND, IC_NAME, IC_READ, IC_WRITE, IC_RX, IC_TX, IC_SOME, IC_FULL };

/* io.csv holds counters: a rate is the growth since the same device's previous row (none
 * when it went back: a wrap, a device that came back). */
static void io_row(struct rm_top *t, struct top_tail *tl, const struct rm_csv_row *r)
{
    char kind[12], name[32];
    field_str(r, tl->col[IC_KIND], kind, sizeof kind);
    field_str(r, tl->col[IC_NAME], name, sizeof name);
    int64_t ts = field_ts(r, tl->col[IC_TS]);
    if (!ts || !kind[0]) return;
    int c0, c1;
    if (!strcmp(kind, "disk") || !strcmp(kind, "tree"))
        c0 = IC_READ, c1 = IC_WRITE;
    else if (!strcmp(kind, "net"))
        c0 = IC_RX, c1 = IC_TX;
    else if (!strcmp(kind, "pressure"))
        c0 = IC_SOME, c1 = IC_FULL;
    else
        return;
    struct top_io_key *k = NULL;
    for (int i = 0; i < t->nio && !k; i++)
        if (!strcmp(t->io_key[i].kind, kind) && !strcmp(t->io_key[i].name, name)) k = &t->io_key[i];
    if (!k) {
        if (t->nio == TOP_IO_KEYS) return;
        k = &t->io_key[t->nio++];
        memset(k, 0, sizeof *k);
        snprintf(k->kind, sizeof k->kind, "%s", kind);
        snprintf(k->name, sizeof k->name, "%s", name);
        k->rate[0] = k->rate[1] = NAN;
    }
    double v[2] = {field_num(r, tl->col[c0]), field_num(r, tl->col[c1])};
    double dt = k->ts ? (double)(ts - k->ts) / 1e9 : 0;
    for (int i = 0; i < 2; i++) {
        k->rate[i] = dt > 0 && v[i] >= k->v[i] ? (v[i] - k->v[i]) / dt : NAN;
        k->v[i] = v[i];
    }
    k->ts = ts;
    if (ts > t->io_ts) t->io_ts = ts;
}

/* ---- the run log ----------------------------------------------------------------------- */

/* collector_degraded / _unavailable / _recovered: the collector's latest state. */
static void rl_health(struct rm_top *t, const json_t *o)
{
    const char *ev = rm_jget_str(o, "event");
    const json_t *data = json_object_get(o, "data");
    const char *col = rm_jget_str(data, "collector");
    if (!*col || strncmp(ev, "collector_", 10)) return; /* rm_jget_str: "" when absent */
    const char *state = !strcmp(ev + 10, "degraded")      ? "degraded"
                        : !strcmp(ev + 10, "unavailable") ? "unavailable"
                        : !strcmp(ev + 10, "recovered")   ? "healthy"
                                                          : NULL;
    if (!state) return;
    struct top_health *h = NULL;
    for (int i = 0; i < t->nlh && !h; i++)
        if (!strcmp(t->lh[i].name, col)) h = &t->lh[i];
    if (!h) {
        if (t->nlh == TOP_COLLECTORS || strlen(col) >= sizeof h->name) return;
        h = &t->lh[t->nlh++];
        snprintf(h->name, sizeof h->name, "%s", col);
    }
    snprintf(h->health, sizeof h->health, "%s", state);
    const char *why = rm_jget_str(data, "reason");
    snprintf(h->reason, sizeof h->reason, "%s", why ? why : "");
}

static void rl_line(struct rm_top *t, const char *s, size_t len)
{
    json_t *o = json_loadb(s, len, 0, NULL);
    if (!json_is_object(o)) {
        json_decref(o);
        return;
    }
    const char *type = rm_jget_str(o, "type");
    const char *path = rm_jget_str(o, "path");
    const char *name = rm_jget_str(o, "name");
    double tt = json_number_value(json_object_get(o, "t"));
    long pid = (long)json_integer_value(json_object_get(o, "pid"));
    /* rm_jget_str gives "" for a missing key: a "phase" line (runmon log, the Python
     * module's log_phase) has a name and no path. */
    if (!*path) path = name;
    if (!strcmp(type, "phase_enter")) {
        if (t->nopen == TOP_MAX_OPEN) {
            memmove(&t->open[0], &t->open[1], (TOP_MAX_OPEN - 1) * sizeof t->open[0]);
            t->nopen--;
        }
        struct top_open *p = &t->open[t->nopen++];
        p->pid = pid;
        snprintf(p->path, sizeof p->path, "%s", path);
        p->t = tt;
    } else if (!strcmp(type, "phase_exit") || !strcmp(type, "phase")) {
        if (type[5]) /* phase_exit: the open one ends */
            for (int i = t->nopen - 1; i >= 0; i--)
                if (t->open[i].pid == pid &&
                    !strncmp(t->open[i].path, path, sizeof t->open[i].path - 1)) {
                    memmove(&t->open[i], &t->open[i + 1],
                            (size_t)(t->nopen - i - 1) * sizeof t->open[0]);
                    t->nopen--;
                    break;
                }
        struct top_done *d = &t->done[t->ndone++ % TOP_DONE];
        snprintf(d->path, sizeof d->path, "%s", path);
        d->seconds = json_number_value(json_object_get(o, "seconds"));
        const char *st = rm_jget_str(o, "status");
        snprintf(d->status, sizeof d->status, "%s", st ? st : "");
    } else if (!strcmp(type, "event")) {
        rl_health(t, o);
        struct top_event *e = &t->ev[t->nev++ % TOP_EVENTS];
        e->t = tt;
        const char *ev = rm_jget_str(o, "event");
        char *data = NULL;
        json_t *dj = json_object_get(o, "data");
        if (dj) data = json_dumps(dj, JSON_COMPACT | JSON_ENSURE_ASCII | JSON_REAL_PRECISION(9));
        snprintf(e->text, sizeof e->text, "%s%s%s", ev ? ev : "?", data ? " " : "",
                 data ? data : "");
        free(data);
    }
    json_decref(o);
}

/* A whole run-log line; an over-long one is skipped (its tail is dropped by the splitter). */
static void rl_whole_line(void *ctx, char *line, size_t len, unsigned flags)
{
    if (len && !(flags & RM_LINE_TRUNCATED)) rl_line(ctx, line, len);
}

static void rl_chunk(void *ctx, const char *p, size_t n)
{
    struct rm_top *t = ctx;
    rm_linebuf_feed(&t->rl_lb, p, n, rl_whole_line, t);
}

static void rl_poll(struct rm_top *t)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/runlog.jsonl", t->dir);
    struct stat st;
    if (stat(path, &st) != 0) return;
    if (t->rl_fd < 0 || st.st_ino != t->rl_ino || st.st_size < t->rl_off) {
        if (t->rl_fd >= 0) close(t->rl_fd);
        t->rl_fd = open(path, O_RDONLY | O_CLOEXEC);
        if (t->rl_fd < 0) return;
        t->rl_ino = st.st_ino;
        t->rl_off = 0;
        rm_linebuf_reset(&t->rl_lb);
        t->nopen = 0;
        t->ndone = t->nev = 0;
        t->nlh = 0;
    }
    read_new(t->rl_fd, &t->rl_off, rl_chunk, t);
}

/* ---- the state ------------------------------------------------------------------------- */

struct rm_top *rm_top_open(const char *dir, char *err, size_t errsz)
{
    char sp[4200];
    snprintf(sp, sizeof sp, "%s/session.json", dir);
    json_error_t je;
    json_t *s = json_load_file(sp, 0, &je);
    if (!json_is_object(s)) {
        snprintf(err, errsz, "%s: not a runmon session (no readable session.json: %s)", dir,
                 je.text);
        json_decref(s);
        return NULL;
    }
    struct rm_top *t = calloc(1, sizeof *t);
    char *line = malloc(TOP_RUNLOG_LINE + 1);
    if (!t || !line) {
        free(t);
        free(line);
        json_decref(s);
        snprintf(err, errsz, "out of memory");
        return NULL;
    }
    snprintf(t->dir, sizeof t->dir, "%s", dir);
    t->sess = s;
    t->rl_fd = -1;
    t->rl_line = line;
    rm_linebuf_init(&t->rl_lb, line, TOP_RUNLOG_LINE + 1);
    tail_init(&t->gpu, t, RM_SUBJECT_GPUS, gpu_cols, gpu_row);
    tail_init(&t->cpu, t, RM_SUBJECT_HOST, cpu_cols, cpu_row);
    tail_init(&t->proc, t, RM_SUBJECT_TREE, proc_cols, proc_row);
    tail_init(&t->apps, t, RM_SUBJECT_PROCESSES, rm_apps_cols, apps_row);
    tail_init(&t->io, t, RM_SUBJECT_IO, io_cols, io_row);
    t->cpu_busy = t->mem_total = t->mem_used = NAN;
    return t;
}

void rm_top_free(struct rm_top *t)
{
    if (!t) return;
    tail_close(&t->gpu);
    tail_close(&t->cpu);
    tail_close(&t->proc);
    tail_close(&t->apps);
    tail_close(&t->io);
    if (t->rl_fd >= 0) close(t->rl_fd);
    free(t->rl_line);
    json_decref(t->sess);
    free(t);
}

void rm_top_poll(struct rm_top *t)
{
    char sp[4200];
    snprintf(sp, sizeof sp, "%s/session.json", t->dir);
    json_t *s = json_load_file(sp, 0, NULL);
    if (json_is_object(s)) {
        json_decref(t->sess);
        t->sess = s;
    } else {
        json_decref(s); /* keep the last good copy */
    }
    tail_poll(&t->gpu);
    tail_poll(&t->cpu);
    tail_poll(&t->proc);
    tail_poll(&t->apps);
    tail_poll(&t->io);
    rl_poll(t);
}

double rm_top_interval(const struct rm_top *t)
{
    return json_number_value(json_object_get(t->sess, "interval_s"));
}

int rm_top_running(const struct rm_top *t)
{
    const char *st = rm_jget_str(t->sess, "status");
    return st && !strcmp(st, "running");
}

/* ---- the frame ------------------------------------------------------------------------- */

/* Cuts s to at most cols characters (a UTF-8 sequence counts as one). */
static void cut_cols(char *s, int cols)
{
    int n = 0;
    for (char *p = s; *p; p++) {
        if (((unsigned char)*p & 0xc0) == 0x80) continue;
        if (n == cols) {
            *p = 0;
            return;
        }
        n++;
    }
}

static void addline(struct rm_top_frame *f, int width, int kind, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void addline(struct rm_top_frame *f, int width, int kind, const char *fmt, ...)
{
    if (f->n == f->cap) {
        size_t cap = f->cap ? f->cap * 2 : 64;
        char **l = realloc(f->line, cap * sizeof *l);
        if (!l) return;
        f->line = l;
        unsigned char *k = realloc(f->kind, cap);
        if (!k) return;
        f->kind = k;
        f->cap = cap;
    }
    char buf[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    cut_cols(buf, width);
    size_t len = strlen(buf);
    while (len && buf[len - 1] == ' ')
        buf[--len] = 0;
    char *s = strdup(buf);
    if (!s) return;
    f->line[f->n] = s;
    f->kind[f->n++] = (unsigned char)kind;
}

void rm_top_frame_free(struct rm_top_frame *f)
{
    for (size_t i = 0; i < f->n; i++)
        free(f->line[i]);
    free(f->line);
    free(f->kind);
    memset(f, 0, sizeof *f);
}

static const char *num(char *buf, size_t cap, double v, int prec)
{
    if (isnan(v))
        snprintf(buf, cap, "n/a");
    else
        snprintf(buf, cap, "%.*f", prec, v);
    return buf;
}

static const char *bar(char *buf, int w, double v, double max)
{
    int fill = 0;
    if (!isnan(v) && max > 0) fill = (int)lround(v / max * w);
    if (fill < 0) fill = 0;
    if (fill > w) fill = w;
    buf[0] = '[';
    for (int i = 0; i < w; i++)
        buf[1 + i] = isnan(v) ? '?' : i < fill ? '#' : '.';
    buf[w + 1] = ']';
    buf[w + 2] = 0;
    return buf;
}

/* The last minute of a GPU's utilization in cols characters (max of each slot). */
static void spark(const struct top_gpu *g, int cols, int utf8, char *out, size_t cap)
{
    static const char *const blocks[] = {"\xe2\x96\x81", "\xe2\x96\x82", "\xe2\x96\x83",
                                         "\xe2\x96\x84", "\xe2\x96\x85", "\xe2\x96\x86",
                                         "\xe2\x96\x87", "\xe2\x96\x88"};
    static const char ascii[] = "_.-:=+*#";
    double slot[512];
    if (cols > 512) cols = 512;
    for (int i = 0; i < cols; i++)
        slot[i] = -1;
    int64_t end = g->ts, span = (int64_t)(TOP_SPARK_S * 1e9);
    for (size_t i = 0; i < g->hn; i++) {
        size_t k = (g->hpos + TOP_HIST - 1 - i) % TOP_HIST;
        int64_t age = end - g->hts[k];
        if (age < 0 || age >= span) continue;
        int s = cols - 1 - (int)((double)age / (double)span * cols);
        if (s >= 0 && s < cols && g->hist[k] > slot[s]) slot[s] = g->hist[k];
    }
    size_t n = 0;
    out[0] = 0;
    for (int i = 0; i < cols && n + 4 < cap; i++) {
        if (slot[i] < 0) {
            out[n++] = ' ';
        } else {
            int lv = (int)(slot[i] / 100.0 * 7.999);
            if (lv < 0) lv = 0;
            if (lv > 7) lv = 7;
            if (utf8) {
                memcpy(out + n, blocks[lv], 3);
                n += 3;
            } else {
                out[n++] = ascii[lv];
            }
        }
        out[n] = 0;
    }
}

/* A collector's health: while the session runs, the run log's latest event for it (when
 * there is one), else session.json's. */
/* The sum over the keys of kind in the newest io sample of rate i, in MB/s (stalled us/s
 * -> % for pressure); NaN when none has one. name: one key only (NULL: all). The command's
 * tree has no row once it ended: its last one counts. */
static double io_sum(const struct rm_top *t, const char *kind, const char *name, int i)
{
    double sum = NAN;
    for (int k = 0; k < t->nio; k++) {
        const struct top_io_key *e = &t->io_key[k];
        /* a device without a row in the newest sample went away; the tree's last row stays */
        if ((e->ts != t->io_ts && strcmp(kind, "tree")) || strcmp(e->kind, kind) ||
            (name && strcmp(e->name, name)) || isnan(e->rate[i]))
            continue;
        sum = (isnan(sum) ? 0 : sum) + e->rate[i] / (strcmp(kind, "pressure") ? 1e6 : 1e4);
    }
    return sum;
}

static const char *health_of(const struct rm_top *t, const char *c, const char **last_error);
static int bad_health(const char *h);

/* One line of the newest io sample's rates: disks, network, pressure, the command's tree. */
static void io_line(const struct rm_top *t, struct rm_top_frame *f, int width)
{
    const char *h = health_of(t, subject_name(RM_SUBJECT_IO), NULL);
    if (!t->io_ts) {
        if (bad_health(h))
            addline(f, width, RM_TOP_WARN, "io       no rows: the io collector is not working");
        return;
    }
    char a[32], b[32], c[32], d[32], e[32], g[32], x[32], y[32];
    addline(
        f, width, bad_health(h) ? RM_TOP_WARN : RM_TOP_PLAIN,
        "io       disk r %s w %s  net rx %s tx %s MB/s  psi io %s%% mem %s%%  tree r %s w %s MB/s",
        num(a, sizeof a, io_sum(t, "disk", NULL, 0), 1),
        num(b, sizeof b, io_sum(t, "disk", NULL, 1), 1),
        num(c, sizeof c, io_sum(t, "net", NULL, 0), 1),
        num(d, sizeof d, io_sum(t, "net", NULL, 1), 1),
        num(e, sizeof e, io_sum(t, "pressure", "io", 0), 1),
        num(g, sizeof g, io_sum(t, "pressure", "memory", 0), 1),
        num(x, sizeof x, io_sum(t, "tree", NULL, 0), 1),
        num(y, sizeof y, io_sum(t, "tree", NULL, 1), 1));
}

static const char *health_of(const struct rm_top *t, const char *c, const char **last_error)
{
    if (rm_top_running(t))
        for (int i = 0; i < t->nlh; i++)
            if (!strcmp(t->lh[i].name, c)) {
                if (last_error) *last_error = t->lh[i].reason[0] ? t->lh[i].reason : NULL;
                return t->lh[i].health;
            }
    const json_t *sess = t->sess;
    const json_t *o = json_object_get(json_object_get(sess, "collectors"), c);
    if (last_error) *last_error = rm_jget_str(o, "last_error");
    return rm_jget_str(o, "health");
}

static int bad_health(const char *h)
{
    return h && (!strcmp(h, "degraded") || !strcmp(h, "unavailable"));
}

static int cmp_app(const void *a, const void *b)
{
    const struct top_app *x = a, *y = b;
    double vx = isnan(x->vram) ? -1 : x->vram, vy = isnan(y->vram) ? -1 : y->vram;
    return vx < vy ? 1 : vx > vy ? -1 : 0;
}

static void fmt_clock(double t, char *buf, size_t cap)
{
    char ts[64];
    rm_format_ts((int64_t)(t * 1e9), ts);
    /* "YYYY-MM-DDTHH:MM:SS.mmm+00:00" -> "HH:MM:SS" (UTC) */
    snprintf(buf, cap, "%.8s", strlen(ts) >= 19 ? ts + 11 : ts);
}

void rm_top_build(struct rm_top *t, int width, int utf8, int paused, struct rm_top_frame *f)
{
    for (size_t i = 0; i < f->n; i++)
        free(f->line[i]);
    f->n = 0;
    if (width < 40) width = 40;
    if (width > 400) width = 400;
    const json_t *s = t->sess;
    char a[64], b[64], c[64], d[64], e[512], h[4096];

    /* title: session, status ("interrupted (SIGTERM)" when a signal stopped it), how long */
    const char *status = rm_jget_str(s, "status");
    const json_t *sig = json_object_get(s, "signal");
    char st[128], stx[512];
    if (status) {
        rm_session_status_text(st, sizeof st, status,
                               json_is_integer(sig) ? json_integer_value(sig) : 0);
        rm_term_escape(stx, sizeof stx, st); /* session.json is read, not trusted */
        status = stx;
    }
    const char *sid = rm_jget_str(s, "session_id");
    int running = rm_top_running(t);
    int64_t t0 = 0, t1 = 0;
    const char *sa = rm_jget_str(s, "started_at"), *ea = rm_jget_str(s, "ended_at");
    if (sa) rm_parse_ts(sa, strlen(sa), &t0);
    if (ea) rm_parse_ts(ea, strlen(ea), &t1);
    if (!t1 && running) t1 = rm_now_realtime_ns();
    char up[48] = "";
    if (t0 && t1 >= t0) snprintf(up, sizeof up, "  %.1fs", (double)(t1 - t0) / 1e9);
    rm_term_escape(e, sizeof e, sid ? sid : "?");
    addline(f, width, RM_TOP_TITLE, "runmon top  %s  %s%s  every %.2gs%s", e, status ? status : "?",
            up, rm_top_interval(t), paused ? "  [paused]" : "");
    if (!running) {
        const json_t *ec = json_object_get(s, "exit_code");
        if (json_is_integer(ec))
            snprintf(a, sizeof a, " (exit %lld)", (long long)json_integer_value(ec));
        else
            a[0] = 0;
        addline(f, width, RM_TOP_WARN, "session ended: %s%s; the figures below are the last ones",
                status ? status : "?", a);
    }
    const json_t *cmd = json_object_get(s, "command");
    if (json_is_array(cmd)) {
        size_t n = 0, i;
        json_t *v;
        h[0] = 0;
        json_array_foreach(cmd, i, v)
        {
            if (n + 2 >= sizeof h) break;
            if (i) h[n++] = ' ', h[n] = 0;
            n += rm_term_escape(h + n, sizeof h - n, json_string_value(v));
            if (n >= sizeof h) n = sizeof h - 1;
        }
        addline(f, width, RM_TOP_PLAIN, "command  %s", h);
    }

    /* collectors */
    {
        size_t n = 0;
        int bad = 0;
        h[0] = 0;
        for (int i = 0; i < RM_STREAM_COUNT; i++) {
            const char *col = rm_stream_defs[i].name, *hl = health_of(t, col, NULL);
            if (!hl) continue;
            bad |= bad_health(hl);
            n += (size_t)snprintf(h + n, sizeof h - n, "  %s %s", col, hl);
            if (n >= sizeof h) break;
        }
        addline(f, width, bad ? RM_TOP_WARN : RM_TOP_PLAIN, "collectors%s", h);
        for (int i = 0; i < RM_STREAM_COUNT; i++) {
            const char *le, *col = rm_stream_defs[i].name;
            const char *hl = health_of(t, col, &le);
            if (!bad_health(hl)) continue;
            rm_term_escape(e, sizeof e, le ? le : "no error recorded");
            addline(f, width, RM_TOP_WARN, "  %s collector %s: %s (figures below may be stale)",
                    col, hl, e);
        }
    }

    /* GPUs */
    int nw = width >= 120 ? 20 : 12, bw = width >= 120 ? 20 : width >= 100 ? 10 : 6;
    const char *gh = health_of(t, subject_name(RM_SUBJECT_GPUS), NULL);
    int ngpu = 0;
    for (int i = 0; i < TOP_MAX_GPUS; i++)
        ngpu += t->g[i].seen;
    if (!ngpu) {
        addline(f, width, bad_health(gh) ? RM_TOP_WARN : RM_TOP_PLAIN, "GPU  %s",
                gh && !strcmp(gh, "disabled") ? "not recorded (disabled)"
                : bad_health(gh)              ? "no rows: the gpu collector is not working"
                                              : "no rows yet");
    } else {
        addline(f, width, RM_TOP_HEAD, "GPU %-*s %-*s %-*s  power  temp  util %.0fs", nw, "name",
                bw + 8, "util %", bw + 16, "memory MiB", TOP_SPARK_S);
    }
    int64_t newest = 0;
    for (int i = 0; i < TOP_MAX_GPUS; i++)
        if (t->g[i].seen && t->g[i].ts > newest) newest = t->g[i].ts;
    double iv = rm_top_interval(t);
    for (int i = 0; i < TOP_MAX_GPUS; i++) {
        struct top_gpu *g = &t->g[i];
        if (!g->seen) continue;
        char nm[256], ub[64], mb[64], sp[2048];
        rm_term_cell(nm, sizeof nm, g->name[0] ? g->name : "?", nw, nw);
        double mt = isnan(g->mtotal) || g->mtotal <= 0 ? NAN : g->mtotal;
        bar(ub, bw, g->util, 100);
        bar(mb, bw, g->mused, isnan(mt) ? 0 : mt);
        snprintf(h, sizeof h, "%3d %s %s %4s%% %s %6s/%-6s %5sW %4sC", i, nm, ub,
                 num(a, sizeof a, g->util, 0), mb, num(b, sizeof b, g->mused, 0),
                 num(c, sizeof c, mt, 0), num(d, sizeof d, g->power, 0),
                 num(e, sizeof e, g->temp, 0));
        int used = (int)strlen(h) - (int)strlen(nm) + nw; /* the name cell may hold UTF-8 */
        int stale = newest && g->ts && newest - g->ts > (int64_t)(3e9 * (iv > 1 ? iv : 1));
        int kind = stale ? RM_TOP_WARN : RM_TOP_PLAIN;
        if (width - used - 2 >= 10) {
            spark(g, width - used - 2 - (stale ? 6 : 0), utf8, sp, sizeof sp);
            addline(f, width, kind, "%s  %s%s", h, sp, stale ? " stale" : "");
        } else {
            addline(f, width, kind, "%s%s", h, stale ? " stale" : "");
            spark(g, width - 14, utf8, sp, sizeof sp);
            addline(f, width, RM_TOP_PLAIN, "    last %2.0fs %s", TOP_SPARK_S, sp);
        }
    }

    /* host and the command's process tree */
    const char *ch = health_of(t, subject_name(RM_SUBJECT_HOST), NULL),
               *ph = health_of(t, subject_name(RM_SUBJECT_TREE), NULL);
    if (t->have_cpu) {
        char cb[64], mb[64];
        addline(f, width, bad_health(ch) ? RM_TOP_WARN : RM_TOP_PLAIN,
                "host     cpu %s %5s%%   mem %s %s/%s MiB%s", bar(cb, bw, t->cpu_busy, 100),
                num(a, sizeof a, t->cpu_busy, 1), bar(mb, bw, t->mem_used, t->mem_total),
                num(b, sizeof b, t->mem_used, 0), num(c, sizeof c, t->mem_total, 0),
                bad_health(ch) ? "  (cpu collector not working)" : "");
    } else {
        addline(f, width, bad_health(ch) ? RM_TOP_WARN : RM_TOP_PLAIN, "host     %s",
                bad_health(ch) ? "no rows: the cpu collector is not working" : "no rows yet");
    }
    if (t->have_proc) {
        addline(f, width, bad_health(ph) ? RM_TOP_WARN : RM_TOP_PLAIN,
                "process  pid %ld  %s procs  rss %s MiB  cpu %s%%%s", t->root_pid,
                num(a, sizeof a, t->nprocs, 0), num(b, sizeof b, t->rss, 1),
                num(c, sizeof c, t->pcpu, 1),
                bad_health(ph) ? "  (proc collector not working)" : "");
    } else if (json_is_array(cmd)) {
        addline(f, width, bad_health(ph) ? RM_TOP_WARN : RM_TOP_PLAIN, "process  %s",
                bad_health(ph) ? "no rows: the proc collector is not working" : "no rows yet");
    }

    io_line(t, f, width);

    /* phases */
    if (t->nopen) {
        double now = (double)rm_now_realtime_ns() / 1e9;
        if (!running && t1) now = (double)t1 / 1e9;
        for (int i = t->nopen - 1; i >= 0 && i >= t->nopen - 3; i--) {
            rm_term_escape(h, sizeof h, t->open[i].path);
            addline(f, width, RM_TOP_PLAIN, "%s  %s  open %.1fs",
                    i == t->nopen - 1 ? "phase" : "     ", h,
                    now > t->open[i].t ? now - t->open[i].t : 0.0);
        }
    } else {
        addline(f, width, RM_TOP_PLAIN, "phase  none open");
    }
    if (t->ndone) {
        size_t k = t->ndone < 4 ? t->ndone : 4;
        for (size_t j = 0; j < k; j++) {
            struct top_done *dn = &t->done[(t->ndone - 1 - j) % TOP_DONE];
            rm_term_cell(h, sizeof h, dn->path, 32, 32);
            addline(f, width, RM_TOP_PLAIN, "%s  %s %8.3fs %s", j ? "    " : "done", h, dn->seconds,
                    dn->status);
        }
    }
    if (t->nev) {
        size_t k = t->nev < 4 ? t->nev : 4;
        for (size_t j = 0; j < k; j++) {
            struct top_event *ev = &t->ev[(t->nev - 1 - j) % TOP_EVENTS];
            char clk[32];
            fmt_clock(ev->t, clk, sizeof clk);
            rm_term_escape(h, sizeof h, ev->text);
            int warn = strstr(ev->text, "degraded") || strstr(ev->text, "alert") ||
                       strstr(ev->text, "error") || strstr(ev->text, "fail");
            addline(f, width, warn ? RM_TOP_WARN : RM_TOP_PLAIN, "%s  %s %s",
                    j ? "      " : "events", clk, h);
        }
    }

    /* the GPU processes of the last apps.csv sample */
    const char *ah = health_of(t, subject_name(RM_SUBJECT_PROCESSES), NULL);
    if (t->have_apps || bad_health(ah)) {
        if (bad_health(ah) && !t->napps) {
            addline(f, width, RM_TOP_WARN, "GPU processes: the apps collector is not working");
        } else if (!t->napps) {
            addline(f, width, RM_TOP_PLAIN, "GPU processes: none in the last sample");
        } else {
            qsort(t->app, t->napps, sizeof t->app[0], cmp_app);
            addline(f, width, RM_TOP_HEAD,
                    "GPU processes  gpu      pid   vram MiB   sm%%  workload  name");
            size_t k = t->napps < 5 ? t->napps : 5;
            for (size_t j = 0; j < k; j++) {
                struct top_app *ap = &t->app[j];
                rm_term_escape(h, sizeof h, ap->name);
                addline(f, width, RM_TOP_PLAIN, "               %3d %8ld %10s %5s  %-8s  %s",
                        ap->gpu, ap->pid, num(a, sizeof a, ap->vram, 0),
                        num(b, sizeof b, ap->sm, 0),
                        ap->inwl == '1'   ? "yes"
                        : ap->inwl == '0' ? "no"
                                          : "unknown",
                        h);
            }
            if (t->napps > k)
                addline(f, width, RM_TOP_PLAIN, "               ... %zu more", t->napps - k);
        }
    }
}
