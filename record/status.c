/* The live status line of `runmon record` (record/status.h). */
#include "record/status.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "base/rm_time.h"
#include "base/termsafe.h"
#include "model/gpu_metrics.h"
#include "model/session.h"
#include "monitor/policy.h"

int rm_status_wanted(int quiet)
{
    return !quiet && isatty(STDERR_FILENO);
}

void rm_status_init(struct rm_status *st, const struct rm_port *port,
                    struct rm_phase_follow *phases, int on)
{
    memset(st, 0, sizeof *st);
    st->port = port;
    st->phases = phases;
    st->efd = -1;
    pthread_mutex_init(&st->qlock, NULL);
    st->started_mono_ns = st->next_mono_ns = rm_now_monotonic_ns();
    if (!on) return;
    st->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    st->on = 1;
}

int rm_status_fd(const struct rm_status *st)
{
    return st->on ? st->efd : -1;
}

int rm_status_timeout_ms(const struct rm_status *st, int cap_ms)
{
    if (!st->on) return cap_ms;
    int64_t left = st->next_mono_ns - rm_now_monotonic_ns();
    if (left <= 0) return 0;
    int64_t ms = left / RM_NS_PER_MS + 1;
    return ms < cap_ms ? (int)ms : cap_ms;
}

static const char *jstr(const json_t *d, const char *k)
{
    const char *s = json_string_value(json_object_get(d, k));
    return s ? s : "";
}

void rm_status_event(struct rm_status *st, const char *name, const json_t *data)
{
    char raw[RM_STATUS_LINE];
    double x = json_number_value(json_object_get(data, "retry_in_s"));
    if (!strcmp(name, "collector_degraded"))
        snprintf(raw, sizeof raw, "%s collector degraded: %s (retry in %g s)",
                 jstr(data, "collector"), jstr(data, "reason"), x);
    else if (!strcmp(name, "collector_recovered"))
        snprintf(raw, sizeof raw, "%s collector recovered after %.1f s down",
                 jstr(data, "collector"), json_number_value(json_object_get(data, "down_s")));
    else if (!strcmp(name, "collector_unavailable"))
        snprintf(raw, sizeof raw, "%s collector unavailable: %s", jstr(data, "collector"),
                 jstr(data, "reason"));
    else if (!strcmp(name, "warning") || !strcmp(name, "critical"))
        snprintf(raw, sizeof raw,
                 "%s: GPU %lld VRAM %.1f%% used (%.0f of %.0f MiB, threshold %g%%)", name,
                 (long long)json_integer_value(json_object_get(data, "gpu")),
                 json_number_value(json_object_get(data, "pct")),
                 json_number_value(json_object_get(data, "memory_used_mb")),
                 json_number_value(json_object_get(data, "memory_total_mb")),
                 json_number_value(json_object_get(data, "threshold_pct")));
    else
        return; /* other events (the sink's own among them) never touch st */
    if (!st->on) return;
    pthread_mutex_lock(&st->qlock);
    if (st->qlen == RM_STATUS_QUEUE) {
        st->qdropped++;
    } else {
        /* Collector names and nvidia-smi's words are untrusted: escaped for the terminal. */
        rm_term_escape(st->queue[(st->qhead + st->qlen) % RM_STATUS_QUEUE], RM_STATUS_LINE, raw);
        st->qlen++;
    }
    pthread_mutex_unlock(&st->qlock);
    uint64_t one = 1;
    if (st->efd >= 0 && write(st->efd, &one, sizeof one) < 0) { /* full: already woken */
    }
}

static int term_cols(void)
{
    struct winsize ws;
    if (ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) return ws.ws_col;
    return 80;
}

/* Appends to line at *n (always NUL-terminated, never past cap). */
static void add(char *line, size_t cap, size_t *n, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void add(char *line, size_t cap, size_t *n, const char *fmt, ...)
{
    if (*n >= cap - 1) return;
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(line + *n, cap - *n, fmt, ap);
    va_end(ap);
    if (k < 0) return;
    *n += (size_t)k < cap - *n ? (size_t)k : cap - *n - 1;
}

/* The status line, without "\r" and the erase. */
static void render(struct rm_status *st, char *line, size_t cap)
{
    const struct rm_port *port = st->port;
    enum rm_health h[RM_COL_COUNT];
    pthread_mutex_lock(port->lock);
    st->snap = *port->latest;
    for (int c = 0; c < RM_COL_COUNT; c++)
        h[c] = port->sess->collectors[c].health;
    pthread_mutex_unlock(port->lock);

    size_t n = 0;
    int64_t el = (rm_now_monotonic_ns() - st->started_mono_ns) / RM_NS_PER_SEC;
    if (el >= 3600)
        add(line, cap, &n, "elapsed %lld:%02lld:%02lld", (long long)(el / 3600),
            (long long)(el / 60 % 60), (long long)(el % 60));
    else
        add(line, cap, &n, "elapsed %lld:%02lld", (long long)(el / 60), (long long)(el % 60));

    const char *phase = st->phases ? rm_phase_follow_current(st->phases) : NULL;
    if (phase) {
        char esc[160];
        rm_term_escape(esc, sizeof esc, phase); /* the phase path is the workload's text */
        add(line, cap, &n, " | phase %s", esc);
    }

    double usum = 0, vnow = NAN;
    int un = 0;
    int64_t stale = rm_stale_after_ns((int64_t)llround(port->interval_s * 1e9));
    int64_t now = rm_now_realtime_ns();
    for (int i = 0; i < RM_MAX_GPUS; i++) {
        const struct rm_latest_gpu *g = &st->snap.gpu[i];
        if (!g->valid || now - g->ts_ns > stale) continue;
        if (isfinite(g->v[RM_GM_UTIL])) {
            usum += g->v[RM_GM_UTIL];
            un++;
        }
        double v = g->v[RM_GM_VRAM_USED];
        if (isfinite(v) && !(v <= vnow)) vnow = v;
    }
    if (isfinite(vnow) && vnow > st->peak_vram_mb) st->peak_vram_mb = vnow;
    if (un || isfinite(vnow)) add(line, cap, &n, " |");
    if (un) add(line, cap, &n, " util %.0f%%", usum / un);
    if (isfinite(vnow))
        add(line, cap, &n, " vram %.1fG peak %.1fG", vnow / 1024.0, st->peak_vram_mb / 1024.0);
    add(line, cap, &n, " |");
    for (int c = 0; c < RM_COL_COUNT; c++) {
        if (h[c] == RM_HEALTH_DISABLED) continue;
        add(line, cap, &n, " %s %s",
            port->sess->collectors[c].name ? port->sess->collectors[c].name : "?",
            h[c] == RM_HEALTH_HEALTHY ? "ok" : rm_health_names[h[c]]);
    }
}

static void clear_line(struct rm_status *st)
{
    if (st->shown) fputs("\r\033[K", stderr);
    st->shown = 0;
}

void rm_status_say(struct rm_status *st, const char *line)
{
    clear_line(st); /* the status line comes back at the next redraw */
    fprintf(stderr, "%s\n", line);
}

static void print_events(struct rm_status *st)
{
    uint64_t v;
    if (st->efd >= 0 && read(st->efd, &v, sizeof v) < 0) { /* nothing to read: fine */
    }
    for (;;) {
        char line[RM_STATUS_LINE];
        unsigned long dropped = 0;
        pthread_mutex_lock(&st->qlock);
        int have = st->qlen > 0;
        if (have) {
            memcpy(line, st->queue[st->qhead], sizeof line);
            st->qhead = (st->qhead + 1) % RM_STATUS_QUEUE;
            st->qlen--;
        } else {
            dropped = st->qdropped;
            st->qdropped = 0;
        }
        pthread_mutex_unlock(&st->qlock);
        if (!have) {
            if (dropped) {
                clear_line(st);
                fprintf(stderr, "runmon record: (%lu more events, see the run log)\n", dropped);
            }
            return;
        }
        clear_line(st);
        fprintf(stderr, "runmon record: %s\n", line);
    }
}

void rm_status_poll(struct rm_status *st)
{
    if (!st->on) return;
    int had_events;
    pthread_mutex_lock(&st->qlock);
    had_events = st->qlen > 0 || st->qdropped > 0;
    pthread_mutex_unlock(&st->qlock);
    if (had_events) print_events(st);
    int64_t now = rm_now_monotonic_ns();
    if (!had_events && now < st->next_mono_ns) return;
    if (now >= st->next_mono_ns) {
        st->next_mono_ns += RM_NS_PER_SEC;
        if (st->next_mono_ns <= now) st->next_mono_ns = now + RM_NS_PER_SEC;
    }
    if (st->phases) rm_phase_follow_poll(st->phases);
    char line[RM_STATUS_LINE];
    render(st, line, sizeof line);
    /* Never wrap: a wrapped line could not be rewritten in place. The line is ASCII but for
     * the phase path, whose escaped UTF-8 may make it a little shorter on screen: harmless. */
    size_t cols = (size_t)term_cols();
    if (cols > 1 && strlen(line) > cols - 1) {
        size_t cut = cols - 1;
        while (cut > 0 && ((unsigned char)line[cut] & 0xc0) == 0x80)
            cut--; /* whole chars */
        line[cut] = '\0';
    }
    fprintf(stderr, "\r%s\033[K", line);
    fflush(stderr);
    st->shown = 1;
}

void rm_status_close(struct rm_status *st)
{
    if (st->on) {
        print_events(st);
        clear_line(st);
        fflush(stderr);
    }
    if (st->efd >= 0) close(st->efd);
    st->efd = -1;
    st->on = 0;
    pthread_mutex_destroy(&st->qlock);
}
