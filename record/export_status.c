/* The live status of `runmon record` on a terminal: one line on stderr, rewritten in place
 * once a second ("\r", the line, erase to its end): elapsed time, the open phase (the run
 * log's), the mean GPU utilization and the VRAM in use (now, and the peak the line has seen)
 * from the latest values, and each collector's state, all from the tick's snapshot
 * (record/snapshot.h). Degraded, recovered and unavailable collectors and VRAM warnings and
 * critical crossings each get a line of their own as they happen, printed above the status
 * line.
 *
 * An exporter (record/exporter.h), on when stderr is a terminal and --quiet was not given.
 *
 * Threads: its event() may be called from any thread (a worker's event): it only queues an
 * escaped line under the status's own lock and wakes the main thread through an eventfd (its
 * fd); only the main thread writes to the terminal (poll, say, close).
 *
 * Ctrl-C. The terminal sends SIGINT to its foreground process group, the command's, not to
 * runmon; the command may print at once ("^CTraceback ..."). So a watcher process joins the
 * command's group when the command runs: it gets the terminal's SIGINT (SIGQUIT, SIGTERM,
 * SIGHUP) as the command does, erases the status line at once and wakes the main thread, which
 * draws it no more. The watcher is forked by a thread of its own, never by the main thread,
 * whose children are the command's tree alone (monitor/reaper.h); it only waits (poll), and
 * ends with runmon (its pipe's write end closes) or with the signal.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/rm_time.h"
#include "base/termsafe.h"
#include "model/gpu_metrics.h"
#include "model/session.h"
#include "record/exporter.h"

#define RM_STATUS_QUEUE 32
#define RM_STATUS_LINE 512
/* What the watcher adds to the eventfd, above any number of queued events (each adds 1):
 * it is in the command's group (the line may be drawn), and it got a stop signal. */
#define RM_STATUS_READY (UINT64_C(1) << 24)
#define RM_STATUS_SIGNALLED (UINT64_C(1) << 40)
#define RM_STATUS_SOON_NS (50 * RM_NS_PER_MS)
enum { DRAW_IDLE, DRAW_BUSY, DRAW_STOPPED };

struct rm_status {
    int efd; /* eventfd: an event line is queued */
    int64_t started_mono_ns, next_mono_ns;
    int shown; /* a status line is on the terminal now */
    double peak_vram_mb;
    pthread_mutex_t qlock;
    char queue[RM_STATUS_QUEUE][RM_STATUS_LINE];
    int qhead, qlen;
    unsigned long qdropped;
    const struct rm_port *port; /* the command's pid (workload_pid) */
    int watching;               /* the watcher was started */
    int signalled;              /* the command's group got a stop signal: no more redraws */
    int ready;                  /* the watcher is in the command's group */
    atomic_int wgone;           /* the watcher ended (its thread sets it, then wakes us) */
    /* Shared with the watcher (MAP_SHARED): DRAW_IDLE, DRAW_BUSY while the main thread writes
     * the line, DRAW_STOPPED once the watcher erased it: the line is never drawn after. */
    atomic_int *draw;
    int wants_watcher; /* a command runs: no line until its watcher is ready */
    int64_t soon_ns;   /* meanwhile, polled this often for the command's pid */
    int wpipe[2];      /* the watcher ends when [1] closes */
    pid_t wpgid;       /* the group it joins */
    pthread_t wthread;
};

/* Its option check: stderr is a terminal and not --quiet. */
static int status_wanted(const struct rm_record_opts *opts)
{
    return !opts->quiet && isatty(STDERR_FILENO);
}

static int status_open(void *self, const struct rm_exporter_env *env, char *err, size_t errsz)
{
    struct rm_status *st = self;
    (void)err;
    (void)errsz;
    st->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    pthread_mutex_init(&st->qlock, NULL);
    st->started_mono_ns = st->next_mono_ns = env->now_mono_ns;
    st->port = env->port;
    st->wants_watcher = env->opts->command != NULL;
    void *m =
        mmap(NULL, sizeof *st->draw, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    st->draw = m == MAP_FAILED ? NULL : m; /* NULL: no watcher (the line as before) */
    if (st->draw) atomic_init(st->draw, DRAW_IDLE);
    st->soon_ns = env->now_mono_ns;
    return 0;
}

/* ---- the watcher (see the top of the file) ---- */

/* The forked watcher: only async-signal-safe calls (its parent has threads). */
static _Noreturn void watcher_main(int rfd, int efd, pid_t pgid, atomic_int *draw)
{
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGQUIT);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGHUP);
    sigprocmask(SIG_BLOCK, &set, NULL);
    /* The command's pid is published at its fork, maybe before its own setpgid made its group:
     * tried again for up to 2 s; gone, nothing to watch. */
    for (int k = 0; setpgid(0, pgid) != 0; k++) {
        if (errno == ESRCH || k == 200) _exit(0);
        nanosleep(&(struct timespec){0, 10 * 1000 * 1000}, NULL);
    }
    int sfd = signalfd(-1, &set, SFD_CLOEXEC);
    if (sfd < 0) _exit(0);
    /* It races the command to the terminal after a Ctrl-C (a Python traceback takes a
     * millisecond): run first when woken, where allowed (root, CAP_SYS_NICE); it sleeps in
     * poll otherwise, so this costs nothing. */
    if (sched_setscheduler(0, SCHED_FIFO, &(struct sched_param){.sched_priority = 1}) != 0)
        (void)setpriority(PRIO_PROCESS, 0, -20);
    /* Nothing of runmon's held open here (a lock, a sink file) but these. */
    for (int fd = 3; fd < 1024; fd++)
        if (fd != rfd && fd != efd && fd != sfd) close(fd);
    uint64_t ready = RM_STATUS_READY;
    if (write(efd, &ready, sizeof ready) < 0) _exit(0);
    struct pollfd p[2] = {{.fd = sfd, .events = POLLIN}, {.fd = rfd, .events = POLLIN}};
    while (poll(p, 2, -1) < 0)
        if (errno != EINTR) _exit(0); /* never a busy loop at its priority */
    if (p[0].revents & POLLIN) {
        static const char erase[] = "\r\033[K";
        uint64_t v = RM_STATUS_SIGNALLED;
        /* Stop the drawing first (waiting out a line being written), so no line comes after
         * the erase. */
        for (;;) {
            int idle = DRAW_IDLE;
            if (atomic_compare_exchange_strong(draw, &idle, DRAW_STOPPED) || idle == DRAW_STOPPED)
                break;
            nanosleep(&(struct timespec){0, 100000}, NULL);
        }
        if (write(STDERR_FILENO, erase, sizeof erase - 1) < 0 || write(efd, &v, sizeof v) < 0) {
        }
    }
    _exit(0);
}

static void *watcher_thread(void *arg)
{
    struct rm_status *st = arg;
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, NULL);
    pid_t pid = fork();
    if (pid == 0) watcher_main(st->wpipe[0], st->efd, st->wpgid, st->draw);
    if (pid > 0)
        while (waitpid(pid, NULL, 0) < 0 && errno == EINTR) {
        }
    /* Ended (or never forked): a watcher that never got ready must not keep the line off. */
    atomic_store(&st->wgone, 1);
    uint64_t one = 1;
    if (write(st->efd, &one, sizeof one) < 0) { /* full: already woken */
    }
    return NULL;
}

/* Starts the watcher once the command runs (its pid is its group's id). */
static void watch_command(struct rm_status *st)
{
    if (st->watching || !st->port || !st->port->workload_pid) return;
    pid_t pid = (pid_t)atomic_load(st->port->workload_pid);
    if (pid <= 0 || st->efd < 0 || !st->draw) return;
    st->watching = 1; /* once, whatever happens below */
    if (pipe2(st->wpipe, O_CLOEXEC) != 0) return;
    st->wpgid = pid;
    if (pthread_create(&st->wthread, NULL, watcher_thread, st) != 0) {
        close(st->wpipe[0]);
        close(st->wpipe[1]);
        st->wpipe[1] = -1;
        return;
    }
    st->watching = 2;
}

static void unwatch(struct rm_status *st)
{
    if (st->watching != 2) return;
    close(st->wpipe[1]); /* the watcher's poll sees the end */
    pthread_join(st->wthread, NULL);
    close(st->wpipe[0]);
    st->watching = 1;
}

static int status_fd(const void *self)
{
    return ((const struct rm_status *)self)->efd;
}

static int64_t status_due(const void *self)
{
    const struct rm_status *st = self;
    /* Waiting for the command to start its watcher: soon, not in a second. */
    if (st->wants_watcher && !st->watching && st->soon_ns < st->next_mono_ns) return st->soon_ns;
    return st->next_mono_ns;
}

static const char *jstr(const json_t *d, const char *k)
{
    const char *s = json_string_value(json_object_get(d, k));
    return s ? s : "";
}

/* Any thread: queues a line for the events a person should see now. data is only read. */
static void status_event(void *self, const char *name, const json_t *data)
{
    struct rm_status *st = self;
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

/* The status line from the snapshot, without "\r" and the erase. */
static void render(struct rm_status *st, const struct rm_snapshot *snap, char *line, size_t cap)
{
    size_t n = 0;
    int64_t el = (snap->mono_ns - st->started_mono_ns) / RM_NS_PER_SEC;
    if (el >= 3600)
        add(line, cap, &n, "elapsed %lld:%02lld:%02lld", (long long)(el / 3600),
            (long long)(el / 60 % 60), (long long)(el % 60));
    else
        add(line, cap, &n, "elapsed %lld:%02lld", (long long)(el / 60), (long long)(el % 60));

    const char *phase = snap->phase;
    if (phase) {
        char esc[160];
        rm_term_escape(esc, sizeof esc, phase); /* the phase path is the workload's text */
        add(line, cap, &n, " | phase %s", esc);
    }

    double usum = 0, vnow = NAN;
    int un = 0;
    for (int i = 0; i < RM_MAX_GPUS; i++) {
        const struct rm_latest_gpu *g = &snap->latest.gpu[i];
        if (!g->valid || snap->now_ns - g->ts_ns > snap->stale_ns) continue;
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
    for (int c = 0; c < RM_STREAM_COUNT; c++) {
        enum rm_health h = snap->health[c];
        if (h == RM_HEALTH_DISABLED) continue;
        add(line, cap, &n, " %s %s", snap->collector[c] ? snap->collector[c] : "?",
            h == RM_HEALTH_HEALTHY ? "ok" : rm_health_names[h]);
    }
}

static void clear_line(struct rm_status *st)
{
    if (st->shown) fputs("\r\033[K", stderr);
    st->shown = 0;
}

/* One line of runmon's own above the status line. */
static int status_say(void *self, const char *line)
{
    clear_line(self); /* the status line comes back at the next redraw */
    fprintf(stderr, "%s\n", line);
    return 1;
}

static void print_events(struct rm_status *st)
{
    uint64_t v = 0;
    if (st->efd >= 0 && read(st->efd, &v, sizeof v) < 0) { /* nothing to read: fine */
    }
    if (v >= RM_STATUS_SIGNALLED) {
        st->signalled = 1; /* the watcher erased the line; the command may be printing */
        st->shown = 0;
    }
    if (v % RM_STATUS_SIGNALLED >= RM_STATUS_READY) st->ready = 1;
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

/* Prints queued event lines above the status line, redraws it when due. */
static void status_poll(void *self, struct rm_tick *t)
{
    struct rm_status *st = self;
    int had_events;
    watch_command(st);
    pthread_mutex_lock(&st->qlock);
    had_events = st->qlen > 0 || st->qdropped > 0;
    pthread_mutex_unlock(&st->qlock);
    if (had_events || t->readable) print_events(st);
    if (st->signalled) return;
    int64_t now = t->now_mono_ns;
    /* With a command, no line before its watcher is in its group (else a Ctrl-C then would
     * find the line there); one that could not start (watching 1) leaves the line as before. */
    if (st->wants_watcher && st->watching != 1 && !st->ready && !atomic_load(&st->wgone)) {
        st->soon_ns = now + RM_STATUS_SOON_NS;
        return;
    }
    if (!had_events && now < st->next_mono_ns && st->shown) return;
    if (now >= st->next_mono_ns) {
        st->next_mono_ns += RM_NS_PER_SEC;
        if (st->next_mono_ns <= now) st->next_mono_ns = now + RM_NS_PER_SEC;
    }
    char line[RM_STATUS_LINE];
    render(st, rm_tick_snapshot(t), line, sizeof line);
    /* Never wrap: a wrapped line could not be rewritten in place. The line is ASCII but for
     * the phase path, whose escaped UTF-8 may make it a little shorter on screen: harmless. */
    size_t cols = (size_t)term_cols();
    if (cols > 1 && strlen(line) > cols - 1) {
        size_t cut = cols - 1;
        while (cut > 0 && ((unsigned char)line[cut] & 0xc0) == 0x80)
            cut--; /* whole chars */
        line[cut] = '\0';
    }
    int idle = DRAW_IDLE;
    if (st->draw && !atomic_compare_exchange_strong(st->draw, &idle, DRAW_BUSY)) {
        st->signalled = 1; /* the watcher erased the line: never again */
        return;
    }
    fprintf(stderr, "\r%s\033[K", line);
    fflush(stderr);
    if (st->draw) atomic_store(st->draw, DRAW_IDLE);
    st->shown = 1;
}

/* Prints what is queued, clears the status line, frees the eventfd. */
static void status_close(void *self, const struct rm_snapshot *snap)
{
    struct rm_status *st = self;
    (void)snap;
    unwatch(st);
    print_events(st);
    clear_line(st);
    fflush(stderr);
    if (st->efd >= 0) close(st->efd);
    st->efd = -1;
    if (st->draw) munmap(st->draw, sizeof *st->draw);
    st->draw = NULL;
    pthread_mutex_destroy(&st->qlock);
}

const struct rm_exporter_ops rm_exporter_status = {
    .name = "status",
    .size = sizeof(struct rm_status),
    .wanted = status_wanted,
    .open = status_open,
    .due = status_due,
    .fd = status_fd,
    .poll = status_poll,
    .event = status_event,
    .say = status_say,
    .close = status_close,
};
