#include "monitor/collector.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/rm_time.h"
#include "model/streams.h"
#include "monitor/policy.h"
#include "monitor/port.h"
#include "monitor/ticker.h"

/* Grace between SIGTERM and SIGKILL for a collector: nvidia-smi exits at once on TERM, and a
 * hung one will not exit at all, so waiting long only delays the restart. */
#define STOP_GRACE_MS 300

static void copy_text(char *dst, size_t cap, const char *src)
{
    size_t n = strlen(src);
    if (n >= cap) n = cap - 1;
    memcpy(dst, src, n);
    dst[n] = '\0';
}

static void record_nonconforming(struct rm_collector *c, const char *stream, const char *line)
{
    c->nonconforming++;
    char *first = strcmp(stream, "stderr") ? c->first_out : c->first_err;
    if (!first[0]) copy_text(first, sizeof c->first_out, line);
    pthread_mutex_lock(c->port->lock);
    c->port->sess->collectors[c->id].nonconforming_lines = c->nonconforming;
    pthread_mutex_unlock(c->port->lock);
    if (c->nonconforming_logged >= RM_NONCONFORMING_LOG_MAX) return;
    c->nonconforming_logged++;
    json_t *d = json_object();
    json_object_set_new(d, "collector", json_string(c->name));
    json_object_set_new(d, "stream", json_string(stream));
    json_t *t = json_string(line);
    json_object_set_new(d, "text", t ? t : json_string("(not UTF-8)"));
    json_object_set_new(d, "count", json_integer((json_int_t)c->nonconforming));
    if (c->nonconforming_logged == RM_NONCONFORMING_LOG_MAX)
        json_object_set_new(d, "note", json_string("further lines are counted, not logged"));
    rm_port_event(c->port, "nonconforming_output", d);
}

static void on_stdout_line(void *ctx, char *line, size_t len, unsigned flags)
{
    struct rm_collector *c = ctx;
    if (flags & (RM_LINE_TORN | RM_LINE_TRUNCATED)) {
        /* A row cut by the child's death or longer than any real row is not data. */
        record_nonconforming(c, "stdout", line);
        return;
    }
    if (len == 0) return;
    int64_t ts = rm_clock_real(c->port->clock);
    enum rm_line_kind k = c->on_line(c->ctx, line, len, ts);
    if (k == RM_LINE_NONDATA) {
        record_nonconforming(c, "stdout", line);
        return;
    }
    if (k != RM_LINE_DATA) return;
    int64_t now = rm_clock_mono(c->port->clock);
    c->last_row_mono = now;
    /* Words before a good row did not end the child: a later failure quotes its own. */
    c->first_err[0] = c->first_out[0] = '\0';
    rm_backoff_row(&c->backoff, now);
    if (c->degraded_since_mono) {
        json_t *d = json_object();
        json_object_set_new(d, "collector", json_string(c->name));
        json_object_set_new(d, "down_s",
                            json_real(rm_ns_to_seconds_ms(now - c->degraded_since_mono)));
        json_object_set_new(d, "last_error", json_string(c->last_error));
        rm_port_event(c->port, "collector_recovered", d);
        rm_port_set_health(c->port, c->id, RM_HEALTH_HEALTHY, NULL, 0);
        c->degraded_since_mono = 0;
    }
}

static void on_stderr_line(void *ctx, char *line, size_t len, unsigned flags)
{
    (void)flags;
    struct rm_collector *c = ctx;
    if (len) record_nonconforming(c, "stderr", line);
}

static void drain(struct rm_collector *c)
{
    if (c->child.out_fd >= 0) rm_linebuf_read(&c->out_lb, c->child.out_fd, on_stdout_line, c);
    if (c->child.err_fd >= 0) rm_linebuf_read(&c->err_lb, c->child.err_fd, on_stderr_line, c);
}

/* Takes the child's fds out of the epoll set before they are closed: a number reused by the
 * next child must not look as if it were still watched. */
/* The set fd k (out, err, pidfd) is watched in: with a tick the pipes are in the set read at
 * each slot, never in the one the thread sleeps on. */
static int set_of(const struct rm_collector *c, int k)
{
    return k < 2 && c->data_epfd >= 0 ? c->data_epfd : c->epfd;
}

static void unwatch(struct rm_collector *c)
{
    for (int k = 0; k < 3; k++) {
        if (c->watched[k] >= 0 && set_of(c, k) >= 0)
            epoll_ctl(set_of(c, k), EPOLL_CTL_DEL, c->watched[k], NULL);
        c->watched[k] = -1;
    }
}

/* Stops the child, keeps its last words, and schedules the restart. */
static void fail(struct rm_collector *c, const char *why, int64_t now)
{
    char status[96] = "";
    if (c->running) {
        unwatch(c);
        rm_stop_result sr = rm_child_stop(&c->child, STOP_GRACE_MS);
        /* What it printed before dying is the best explanation there is. */
        drain(c);
        rm_linebuf_finish(&c->out_lb, on_stdout_line, c);
        rm_linebuf_finish(&c->err_lb, on_stderr_line, c);
        /* Rows a batching stream held back are not left waiting for the restart. */
        if (c->on_flush) c->on_flush(c->ctx);
        if (sr == RM_CHILD_REAPED)
            rm_status_describe(c->child.wstatus, status, sizeof status);
        else
            copy_text(status, sizeof status, "did not die after SIGKILL (left to the kernel)");
        rm_child_release(&c->child);
        c->running = 0;
    }
    int64_t delay = rm_backoff_failure(&c->backoff);
    c->next_start_mono = now + delay;
    /* Truncation is fine here: this is a message for people. */
    const char *text = c->first_err[0] ? c->first_err : c->first_out;
    int n = snprintf(c->last_error, sizeof c->last_error, "%s", why);
    if (text[0] && n >= 0 && (size_t)n < sizeof c->last_error)
        n += snprintf(c->last_error + n, sizeof c->last_error - (size_t)n, ": %.400s", text);
    if (status[0] && n >= 0 && (size_t)n < sizeof c->last_error)
        snprintf(c->last_error + n, sizeof c->last_error - (size_t)n, " (%s)", status);
    if (!c->degraded_since_mono) c->degraded_since_mono = now;
    json_t *d = json_object();
    json_object_set_new(d, "collector", json_string(c->name));
    json_t *r = json_string(c->last_error);
    json_object_set_new(d, "reason", r ? r : json_string(why));
    json_object_set_new(d, "consecutive_failures", json_integer(c->backoff.consecutive));
    json_object_set_new(d, "retry_in_s", json_real(rm_ns_to_seconds_ms(delay)));
    rm_port_event(c->port, "collector_degraded", d);
    rm_port_set_health(c->port, c->id, RM_HEALTH_DEGRADED, c->last_error, 1);
    c->first_err[0] = c->first_out[0] = '\0';
}

static void start(struct rm_collector *c, int64_t now)
{
    rm_child_opts o = {.new_pgrp = true,
                       .pdeathsig = true,
                       .reap_group = true,
                       .capture_stdout = true,
                       .capture_stderr = true};
    rm_linebuf_init(&c->out_lb, c->out_store, sizeof c->out_store);
    rm_linebuf_init(&c->err_lb, c->err_store, sizeof c->err_store);
    c->quiet_real = rm_clock_real(c->port->clock); /* nothing printed before its start */
    int err = rm_child_spawn(&c->child, c->argv, &o);
    if (err == 0) {
        /* Rows that wait for their read (read_due) wait in the pipe: room for a batch of many
         * GPUs' rows, so nvidia-smi never blocks on a full one (64 KiB by default). Failing
         * that, the default. */
        if (c->read_due) (void)fcntl(c->child.out_fd, F_SETPIPE_SZ, RM_COLLECTOR_PIPE_BYTES);
        c->running = 1;
        c->started_mono = now;
        c->last_row_mono = 0;
        c->first_err[0] = c->first_out[0] = '\0';
        return;
    }
    if (err == ENOENT && c->backoff.consecutive == 0 && !c->degraded_since_mono) {
        /* No nvidia-smi at all: a machine without a GPU is normal, not a failure. */
        c->unavailable = 1;
        json_t *d = json_object();
        json_object_set_new(d, "collector", json_string(c->name));
        json_object_set_new(d, "reason", json_string(c->child.errmsg));
        rm_port_event(c->port, "collector_unavailable", d);
        rm_port_set_health(c->port, c->id, RM_HEALTH_UNAVAILABLE, c->child.errmsg, 0);
        return;
    }
    char why[RM_CHILD_ERRLEN + 32];
    snprintf(why, sizeof why, "failed to start: %s", c->child.errmsg);
    fail(c, why, now);
}

static void check_stale(struct rm_collector *c, int64_t now)
{
    int64_t since = c->last_row_mono ? c->last_row_mono : c->started_mono;
    if (now - since < c->stale_ns) return;
    char why[96];
    snprintf(why, sizeof why, "no valid row for %.1f s", (double)(now - since) / 1e9);
    fail(c, why, now);
}

/* Readiness of a collector's fds, as bits: which of its pipes or its pidfd. */
enum { READY_OUT = 1, READY_ERR = 2, READY_GONE = 4 };

/* The fds a running collector waits on; -1 where none (a stream already at EOF would report
 * POLLHUP at once, forever). */
static void wait_fds(const struct rm_collector *c, int fds[3])
{
    fds[0] = c->out_lb.eof ? -1 : c->child.out_fd;
    fds[1] = c->err_lb.eof ? -1 : c->child.err_fd;
    fds[2] = c->child.pidfd;
}

/* Keeps the epoll set equal to the running collectors' wait_fds, changing it only when they
 * change (a start, a stop, an EOF): an epoll_wait per sample then costs nothing per fd,
 * where poll() registered all ten fds again at every wakeup (half of this thread's time). */
static void sync_watch(struct rm_collector *c, int ix)
{
    int want[3] = {-1, -1, -1};
    if (c->epfd < 0) return;
    if (c->running) wait_fds(c, want);
    for (int k = 0; k < 3; k++) {
        if (c->watched[k] == want[k]) continue;
        if (c->watched[k] >= 0) epoll_ctl(set_of(c, k), EPOLL_CTL_DEL, c->watched[k], NULL);
        c->watched[k] = -1;
        struct epoll_event e = {.events = EPOLLIN, .data.u64 = (uint64_t)ix * 4 + (uint64_t)k};
        if (want[k] >= 0 && epoll_ctl(set_of(c, k), EPOLL_CTL_ADD, want[k], &e) == 0)
            c->watched[k] = want[k];
    }
}

#define WAKE_TAG UINT64_MAX

/* epoll_pwait2 (Linux 5.11): a wait to the nanosecond, so the tick's slots are kept as
 * clock_nanosleep kept them; 0 once the kernel said it has none (then epoll_wait's ms). */
static int have_pwait2 = 1;

static int epoll_wait_ns(int ep, struct epoll_event *ev, int max, int timeout_ms,
                         int64_t timeout_ns)
{
    if (timeout_ns >= 0 && have_pwait2) {
        struct timespec ts = {.tv_sec = (time_t)(timeout_ns / RM_NS_PER_SEC),
                              .tv_nsec = (long)(timeout_ns % RM_NS_PER_SEC)};
        int got = epoll_pwait2(ep, ev, max, &ts, NULL);
        if (got >= 0 || errno != ENOSYS) return got;
        have_pwait2 = 0;
    }
    return epoll_wait(ep, ev, max, timeout_ms);
}

/* Waits up to timeout_ms (or timeout_ns when that is not negative) and sets ready[i] for
 * each collector: through ep, or with poll() when there is no epoll fd. Returns the number
 * of events, 0 on timeout, -1 on error. */
static int wait_ready(int ep, struct rm_collector *cols, int n, rm_wakeup *wake, int timeout_ms,
                      int64_t timeout_ns, unsigned *ready)
{
    int got = 0;
    if (ep >= 0) {
        struct epoll_event ev[1 + 3 * 8];
        got = epoll_wait_ns(ep, ev, 1 + 3 * 8, timeout_ms, timeout_ns);
        for (int e = 0; e < got; e++) {
            uint64_t tag = ev[e].data.u64;
            if (tag == WAKE_TAG && wake)
                rm_wakeup_drain(wake);
            else if (tag / 4 < (uint64_t)n)
                ready[tag / 4] |= 1u << (tag % 4);
        }
        return got;
    }
    struct pollfd pfd[1 + 3 * 8];
    int owner[1 + 3 * 8], np = 0;
    pfd[np] = (struct pollfd){.fd = wake->fd, .events = POLLIN};
    owner[np++] = -1;
    for (int i = 0; i < n; i++) {
        int fds[3];
        if (!cols[i].running) continue;
        wait_fds(&cols[i], fds);
        for (int k = 0; k < 3; k++) {
            if (fds[k] < 0) continue;
            pfd[np] = (struct pollfd){.fd = fds[k], .events = POLLIN};
            owner[np++] = i * 4 + k;
        }
    }
    got = poll(pfd, (nfds_t)np, timeout_ms);
    for (int k = 0; got > 0 && k < np; k++) {
        if (!pfd[k].revents) continue;
        if (owner[k] < 0)
            rm_wakeup_drain(wake);
        else
            ready[owner[k] / 4] |= 1u << (owner[k] % 4);
    }
    return got;
}

void rm_collector_setup(struct rm_collector *c, const struct rm_port *port, int id,
                        int64_t interval_ns)
{
    memset(c, 0, sizeof *c);
    rm_child_init(&c->child);
    c->epfd = c->data_epfd = c->watched[0] = c->watched[1] = c->watched[2] = -1;
    c->name = rm_stream_defs[id].name;
    c->id = id;
    c->port = port;
    c->stale_ns = rm_stale_after_ns(interval_ns);
}

/* What a collector's ready fds (READY_*) say: rows read, a flush, an exit. since_real: when
 * its stdout was last seen empty (collector.h's on_window). */
static void serve(struct rm_collector *c, unsigned ready, int64_t now, int64_t since_real)
{
    /* Only the fds that were ready are read: a quiet stderr costs no read() per sample, and
     * with a pidfd its readiness is the exit, so no waitid() per sample. */
    if (!c->running || !ready) return;
    if (c->on_window && (ready & READY_OUT)) c->on_window(c->ctx, since_real);
    int eof = 0;
    if ((ready & READY_OUT) &&
        rm_linebuf_read_ready(&c->out_lb, c->child.out_fd, on_stdout_line, c) != RM_LB_AGAIN)
        eof = 1;
    if (ready & READY_ERR) rm_linebuf_read_ready(&c->err_lb, c->child.err_fd, on_stderr_line, c);
    if (c->on_flush && (ready & READY_OUT)) c->on_flush(c->ctx);
    if (eof || (ready & READY_GONE) || (c->child.pidfd < 0 && rm_child_try_reap(&c->child) == 1))
        fail(c, "nvidia-smi exited", now);
}

/* A slot of the tick: its work, then the pipes that hold something (one epoll_wait that does
 * not block tells which). */
static void run_slot(const struct rm_ticker *tick, int dep, struct rm_collector *cols, int n,
                     int64_t now)
{
    tick->run(tick->ctx, now);
    if (dep < 0) return;
    unsigned ready[8] = {0};
    int got = wait_ready(dep, cols, n, NULL, 0, -1, ready);
    int64_t real = rm_clock_real(cols[0].port->clock);
    for (int i = 0; i < n; i++) {
        int64_t since = cols[i].quiet_real;
        if ((ready[i] & READY_OUT) && cols[i].read_due && !cols[i].read_due(cols[i].ctx))
            ready[i] &= ~(unsigned)READY_OUT; /* its rows wait in the pipe */
        /* Read (drained) or found empty now: what comes next is printed after this. */
        else if (cols[i].running && cols[i].data_epfd >= 0)
            cols[i].quiet_real = real;
        if (got <= 0) continue;
        serve(&cols[i], ready[i], now, since);
        sync_watch(&cols[i], i); /* an EOF */
    }
}

/* Rows that carry nvidia-smi's own time (the query's `timestamp`: gpu.csv; dmon's and pmon's
 * -o DT: dmon.csv, apps.csv) may wait for the next slot: their ts is the sample's, and a
 * read that holds two bursts tells them apart (monitor/smi_time.h). */
static int rows_timed(const struct rm_collector *c)
{
    return rm_stream_defs[c->id].own_time;
}

void rm_collectors_run(struct rm_collector *cols, int n, rm_wakeup *wake,
                       const struct rm_ticker *tick)
{
    if (n > 8) n = 8;
    int ep = epoll_create1(EPOLL_CLOEXEC); /* -1: poll() instead, same behaviour */
    if (ep >= 0) {
        struct epoll_event e = {.events = EPOLLIN, .data.u64 = WAKE_TAG};
        if (epoll_ctl(ep, EPOLL_CTL_ADD, wake->fd, &e) < 0) {
            close(ep);
            ep = -1;
        }
    }
    /* With a tick, the pipes go in a set of their own, read at each slot. Without epoll (or
     * a pidfd to tell an exit) they stay in the one the thread sleeps on: it then wakes for
     * each burst as without a tick, and still runs the slots. */
    int dep = tick && ep >= 0 ? epoll_create1(EPOLL_CLOEXEC) : -1;
    for (int i = 0; i < n; i++) {
        cols[i].watched[0] = cols[i].watched[1] = cols[i].watched[2] = -1;
        cols[i].epfd = ep;
        cols[i].data_epfd = rows_timed(&cols[i]) ? dep : -1;
    }
    const struct rm_clock *clock = cols[0].port->clock;
    while (!atomic_load(cols[0].port->stop)) {
        int64_t now = rm_clock_mono(clock);
        if (tick && now >= tick->due(tick->ctx)) {
            run_slot(tick, dep, cols, n, now);
            now = rm_clock_mono(clock);
        }
        int64_t next_wake = now + RM_NS_PER_SEC;
        for (int i = 0; i < n; i++) {
            struct rm_collector *c = &cols[i];
            if (c->unavailable) continue;
            if (!c->running && now >= c->next_start_mono) start(c, now);
            if (c->running) check_stale(c, now);
            /* No pidfd: an exit is only seen as the pipes' EOF, so they are watched. Chosen
             * while no pipe is in either set (at a start). */
            if (c->watched[0] < 0 && c->watched[1] < 0)
                c->data_epfd = (c->running && c->child.pidfd < 0) || !rows_timed(c) ? -1 : dep;
            sync_watch(c, i);
            int64_t due =
                c->running ? (c->last_row_mono ? c->last_row_mono : c->started_mono) + c->stale_ns
                           : c->next_start_mono;
            if (!c->unavailable && due < next_wake) next_wake = due;
        }
        int64_t timeout_ns = -1;
        if (tick) {
            int64_t slot = tick->due(tick->ctx);
            if (slot < next_wake) next_wake = slot;
            if (!clock) timeout_ns = next_wake > now ? next_wake - now : 0;
        }
        unsigned ready[8] = {0};
        int pr = wait_ready(ep, cols, n, wake, rm_clock_wait_ms(clock, now, next_wake), timeout_ns,
                            ready);
        if (pr < 0 && errno != EINTR) break;
        if (pr <= 0) continue;
        now = rm_clock_mono(clock);
        int64_t real = rm_clock_real(clock);
        for (int i = 0; i < n; i++) {
            /* A pipe that wakes the thread is read as soon as it holds something. */
            serve(&cols[i], ready[i], now, real);
            sync_watch(&cols[i], i); /* an EOF */
        }
    }
    for (int i = 0; i < n; i++) {
        struct rm_collector *c = &cols[i];
        if (c->running) {
            unwatch(c);
            rm_child_stop(&c->child, STOP_GRACE_MS);
            drain(c);
            if (c->on_flush) c->on_flush(c->ctx);
            rm_child_release(&c->child);
            c->running = 0;
        }
        c->epfd = c->data_epfd = -1;
    }
    if (ep >= 0) close(ep);
    if (dep >= 0) close(dep);
}
