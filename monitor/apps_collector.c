#include "monitor/apps_collector.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/fileio.h"
#include "base/rm_time.h"
#include "model/dmon_text.h"
#include "model/streams.h"
#include "monitor/procfs.h"
#include "monitor/smi_collectors.h"
#include "monitor/workload.h"

int rm_apps_ctx_init(struct rm_apps_ctx *a, const struct rm_port *port, const char *proc_root,
                     int64_t period_ns)
{
    memset(a, 0, sizeof *a);
    a->port = port;
    rm_smi_time_init(&a->clk, port, RM_STREAM_APPS, period_ns);
    a->out.fd = -1;
    a->proc_fd = open(proc_root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (rm_stream_open(&a->out, port->sess->dir, RM_STREAM_APPS) < 0) return -1;
    /* the columns after ts, which every stream's header starts with */
    return rm_stream_header(&a->out, rm_apps_cols + 1, RM_APPS_COL_COUNT - 1);
}

void rm_apps_ctx_fini(struct rm_apps_ctx *a)
{
    rm_stream_close(&a->out);
    if (a->proc_fd >= 0) close(a->proc_fd);
    a->proc_fd = -1;
}

/* Publishes the sample received so far as the latest (rows of one sample arrive in one
 * burst, and a flush follows each read). */
void rm_apps_on_flush(void *ctx)
{
    struct rm_apps_ctx *a = ctx;
    rm_stream_flush(&a->out);
    if (!a->sample_ts || !a->port->latest) return; /* nothing new, or no exporter is on */
    pthread_mutex_lock(a->port->lock);
    struct rm_latest *l = a->port->latest;
    memcpy(l->procs, a->pending, (size_t)a->npending * sizeof *a->pending);
    l->nprocs = a->npending;
    l->procs_ts_ns = a->sample_ts;
    pthread_mutex_unlock(a->port->lock);
}

void rm_apps_on_window(void *ctx, int64_t since_real)
{
    rm_smi_time_window(&((struct rm_apps_ctx *)ctx)->clk, since_real);
}

static int read_pid_stat(int proc_fd, pid_t pid, struct rm_pid_stat *st, char *comm, size_t cap)
{
    char path[32], buf[1024];
    snprintf(path, sizeof path, "%d/stat", (int)pid);
    ssize_t n = rm_read_head(proc_fd, path, buf, sizeof buf);
    if (n <= 0 || rm_parse_pid_stat(buf, (size_t)n, st) != 0) return -1;
    /* comm is between the first '(' and the last ')'. */
    char *open_p = strchr(buf, '('), *close_p = strrchr(buf, ')');
    if (comm && cap) {
        size_t len = open_p && close_p > open_p ? (size_t)(close_p - open_p - 1) : 0;
        if (len >= cap) len = cap - 1;
        if (len) memcpy(comm, open_p + 1, len);
        comm[len] = '\0';
    }
    return 0;
}

/* pmon prints the process name cut to 15 characters (a path as its base name); comm is cut
 * the same way. They name one process when one starts the other. */
static int same_name(const char *comm, const char *name, size_t name_len)
{
    size_t cl = strlen(comm), n = name_len < cl ? name_len : cl;
    return n > 0 && memcmp(comm, name, n) == 0;
}

int rm_pid_in_tree(int proc_fd, pid_t pid, pid_t root, const char *name, size_t name_len,
                   uint64_t *starttime)
{
    struct rm_pid_stat st;
    char comm[64];
    if (proc_fd < 0 || pid <= 0 || read_pid_stat(proc_fd, pid, &st, comm, sizeof comm) < 0)
        return -1;
    if (name && name_len && !same_name(comm, name, name_len)) return -1;
    if (starttime) *starttime = st.starttime;
    if (root <= 0) return 0;
    for (int depth = 0; depth < 128; depth++) {
        if (st.pid == root) return 1;
        if (st.ppid <= 1) return 0;
        if (read_pid_stat(proc_fd, st.ppid, &st, NULL, 0) < 0) return 0; /* parent gone */
    }
    return 0;
}

/* 1, 0 or -1 (unknown) for one pmon process. Settled answers are remembered by pid and start
 * time (which tells a reused pid from the process we answered for), so a known process costs
 * one read of its own stat file, not a walk up its ancestors. */
static int in_workload(struct rm_apps_ctx *a, pid_t pid, const char *name, size_t name_len)
{
    struct rm_pid_stat st;
    char comm[64];
    if (a->proc_fd < 0 || pid <= 0 || read_pid_stat(a->proc_fd, pid, &st, comm, sizeof comm) < 0 ||
        (name_len && !same_name(comm, name, name_len)))
        return -1;
    for (int i = 0; i < a->ncache; i++)
        if (a->cache[i].pid == pid && a->cache[i].starttime == st.starttime)
            return a->cache[i].in_workload; /* once in the workload, always: it may be orphaned */
    int r = rm_workload_contains(a->port->workload, (pid_t)atomic_load(a->port->workload_pid),
                                 a->proc_fd, pid, NULL, 0);
    if (r < 0) return -1;
    int slot = a->ncache < RM_APPS_CACHE ? a->ncache++ : a->next_evict++ % RM_APPS_CACHE;
    a->cache[slot] = (struct rm_apps_pid){pid, st.starttime, r};
    return r;
}

static int take_header(struct rm_apps_ctx *a, const struct rm_dmon_line *l)
{
    a->col_gpu = rm_dmon_find(l, "gpu");
    a->col_pid = rm_dmon_find(l, "pid");
    a->col_fb = rm_dmon_find(l, "fb");
    a->col_sm = rm_dmon_find(l, "sm");
    a->col_cmd = rm_dmon_find(l, "command");
    a->ncols = (int)l->n;
    /* The command must be last: it is the rest of the row. */
    a->have_header = a->col_gpu >= 0 && a->col_pid >= 0 && a->col_cmd == a->ncols - 1;
    return a->have_header ? 0 : -1;
}

static int is_digits(const struct rm_dmon_tok *t)
{
    if (!t->len) return 0;
    for (size_t i = 0; i < t->len; i++)
        if (t->s[i] < '0' || t->s[i] > '9') return 0;
    return 1;
}

static int is_dash(const struct rm_dmon_tok *t)
{
    return t->len == 1 && t->s[0] == '-';
}

/* A number column, or empty for "-". */
static void number_field(struct rm_stream *out, const struct rm_dmon_line *l, int col)
{
    if (col < 0 || is_dash(&l->tok[col]) || !is_digits(&l->tok[col]))
        rm_stream_field(out, "", 0);
    else
        rm_stream_field(out, l->tok[col].s, l->tok[col].len);
}

static void write_row(struct rm_apps_ctx *a, const struct rm_dmon_line *l)
{
    const struct rm_dmon_tok *gpu = &l->tok[a->col_gpu], *pid = &l->tok[a->col_pid];
    int index = atoi(gpu->s);
    const struct rm_session *s = a->port->sess; /* the inventory is read-only by now */
    const char *uuid = "";
    for (int i = 0; i < s->ngpus; i++)
        if (s->gpus[i].index == index) uuid = s->gpus[i].uuid;
    /* The command: from its first token to the end of the last one (it may hold spaces). */
    const char *cmd = "";
    size_t cmd_len = 0;
    if ((int)l->n > a->col_cmd) {
        cmd = l->tok[a->col_cmd].s;
        cmd_len = (size_t)(l->tok[l->n - 1].s + l->tok[l->n - 1].len - cmd);
    }
    int idle = is_dash(pid);
    rm_stream_begin_row(&a->out, a->sample_ts);
    rm_stream_field(&a->out, gpu->s, gpu->len);
    rm_stream_field_str(&a->out, uuid);
    if (idle) { /* a GPU without processes: the row says the collector saw it */
        for (int i = 0; i < 5; i++)
            rm_stream_field(&a->out, "", 0);
        rm_stream_end_row(&a->out);
        return;
    }
    rm_stream_field(&a->out, pid->s, pid->len);
    rm_stream_field(&a->out, cmd, is_dash(&l->tok[a->col_cmd]) ? 0 : cmd_len);
    number_field(&a->out, l, a->col_fb);
    number_field(&a->out, l, a->col_sm);
    int w = in_workload(a, (pid_t)atol(pid->s), cmd, cmd_len);
    rm_stream_field(&a->out, w < 0 ? "" : w ? "1" : "0", w < 0 ? 0 : 1);
    rm_stream_end_row(&a->out);
    if (w == 1 && a->npending < RM_LATEST_MAX_PROCS) {
        struct rm_latest_proc *p = &a->pending[a->npending++];
        p->gpu = index;
        p->pid = atoi(pid->s);
        snprintf(p->name, sizeof p->name, "%.*s", (int)cmd_len, cmd);
        double mb = NAN;
        if (a->col_fb >= 0 && is_digits(&l->tok[a->col_fb])) mb = atof(l->tok[a->col_fb].s);
        p->vram_mb = mb;
    }
}

enum rm_line_kind rm_apps_on_line(void *ctx, char *line, size_t len, int64_t ts_ns)
{
    struct rm_apps_ctx *a = ctx;
    struct rm_dmon_line l;
    switch (rm_dmon_classify(line, len, &l)) {
    case RM_DMON_HEADER:
        rm_smi_time_header(&a->clk, &l);
        return take_header(a, &l) == 0 ? RM_LINE_HEADER : RM_LINE_NONDATA;
    case RM_DMON_UNITS:
        return RM_LINE_HEADER;
    case RM_DMON_DATA:
        break;
    default:
        return RM_LINE_NONDATA;
    }
    /* An interrupted row may lack the command; anything shorter is not a row. */
    if (!a->have_header || (int)l.n < a->ncols - 1 || !is_digits(&l.tok[a->col_gpu]) ||
        !(is_digits(&l.tok[a->col_pid]) || is_dash(&l.tok[a->col_pid])))
        return RM_LINE_NONDATA;
    if ((int)l.n == a->ncols - 1) l.tok[l.n++] = (struct rm_dmon_tok){"-", 1};
    if (rm_smi_time_dated(&a->clk)) {
        /* -o DT: a sample is the rows of one printed burst (monitor/smi_time.h). */
        int64_t ts;
        int fresh = rm_smi_time_row(&a->clk, &l, ts_ns, &ts);
        if (fresh < 0) return RM_LINE_NONDATA;
        if (fresh) {
            a->sample_ts = ts;
            a->npending = 0;
        }
    } else if (ts_ns - a->last_row_ts > 50 * RM_NS_PER_MS) {
        /* Without a time column, the rows of one sample arrive together: they share the
         * first one's time. */
        a->sample_ts = ts_ns;
        a->npending = 0;
    }
    a->last_row_ts = ts_ns;
    write_row(a, &l);
    return RM_LINE_DATA;
}

/* ---- the row of monitor/smi_collectors.h: `nvidia-smi pmon -s mu -d SEC` ------------------- */

static bool apps_wanted(const struct rm_smi_start *st)
{
    return !st->no_apps;
}

/* pmon takes whole seconds, 1 to 10. */
static int apps_start(void *ctx, const struct rm_smi_start *st, struct rm_collector *c,
                      int64_t *period_ns, char *err, size_t errsz)
{
    struct rm_apps_ctx *a = ctx;
    int d = (int)llround(st->interval_s);
    d = d < 1 ? 1 : d > 10 ? 10 : d;
    if (rm_apps_ctx_init(a, st->port, st->proc_root, (int64_t)d * RM_NS_PER_SEC) < 0) {
        snprintf(err, errsz, "cannot write in %s: %s", st->port->sess->dir, strerror(errno));
        return -1;
    }
    snprintf(a->psec, sizeof a->psec, "%d", d);
    /* -o DT: each row says when it was printed (monitor/smi_time.h). */
    const char *argv[] = {st->nvidia_smi, "pmon", "-s", "mu", "-d", a->psec, "-o", "DT", NULL};
    memcpy(c->argv, argv, sizeof argv);
    rm_smi_select_gpus(c, st);
    c->on_line = rm_apps_on_line;
    c->on_flush = rm_apps_on_flush;
    c->on_window = rm_apps_on_window;
    c->ctx = a;
    *period_ns = (int64_t)d * RM_NS_PER_SEC;
    return 0;
}

static struct rm_stream *apps_out(void *ctx)
{
    return &((struct rm_apps_ctx *)ctx)->out;
}

static void apps_stop(void *ctx)
{
    rm_apps_ctx_fini(ctx);
}

const struct rm_smi_collector rm_apps_collector = {.stream = RM_STREAM_APPS,
                                                   .ctx_size = sizeof(struct rm_apps_ctx),
                                                   .wanted = apps_wanted,
                                                   .start = apps_start,
                                                   .out = apps_out,
                                                   .stop = apps_stop};
