#include "monitor/stall_sampler.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "base/rm_time.h"
#include "monitor/io_parse.h"
#include "monitor/port.h"
#include "monitor/proc_samplers.h"
#include "monitor/stall_parse.h"

/* stall.csv's columns after ts (docs/FORMATS.md). The counters are each interval's growth. */
static const char *const stall_cols[] = {
    "interval_ms", "procs",  "threads",     "runnable",   "blocked",        "run_ns",    "wait_ns",
    "blkio_ms",    "cgroup", "cpu_some_us", "io_some_us", "memory_some_us", "unreadable"};
enum { STALL_NCOLS = (int)(sizeof stall_cols / sizeof *stall_cols) };
static const char *const psi_files[3] = {"cpu.pressure", "io.pressure", "memory.pressure"};

#define CGROUP2_MAGIC 0x63677270 /* CGROUP2_SUPER_MAGIC */

struct dirent64 {
    uint64_t d_ino;
    int64_t d_off;
    unsigned short d_reclen;
    unsigned char d_type;
    char d_name[];
};

/* The cgroup v2 hierarchy's mount: SYS/fs/cgroup/unified (a hybrid host) or SYS/fs/cgroup. */
static void find_cg_mount(struct rm_stall_sampler *s, const char *sys_root)
{
    static const char *const where[] = {"fs/cgroup/unified", "fs/cgroup"};
    s->cg_mount[0] = 0;
    for (size_t i = 0; i < sizeof where / sizeof *where; i++) {
        char path[PATH_MAX];
        struct statfs f;
        snprintf(path, sizeof path, "%s/%s", sys_root, where[i]);
        if (statfs(path, &f) == 0 && (unsigned long)f.f_type == CGROUP2_MAGIC) {
            snprintf(s->cg_mount, sizeof s->cg_mount, "%s", path);
            return;
        }
    }
}

static int read_flag(const char *path)
{
    char b[8] = "";
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return 0;
    ssize_t n = read(fd, b, sizeof b - 1);
    close(fd);
    return n > 0 && b[0] == '1';
}

int rm_stall_sampler_open(struct rm_stall_sampler *s, const struct rm_port *port,
                          const char *proc_root, const char *sys_root, char *err, size_t errsz)
{
    s->port = port;
    s->rootfd = -1;
    s->cg_fd[0] = s->cg_fd[1] = s->cg_fd[2] = -1;
    s->interval_ns = (int64_t)llround((port->interval_s > 0 ? port->interval_s : 1.0) * 1e9);
    const char *dir = port->sess->dir;
    if (rm_stream_open(&s->out, dir, RM_STREAM_STALL) < 0 ||
        rm_stream_header(&s->out, stall_cols, STALL_NCOLS) < 0) {
        snprintf(err, errsz, "cannot write %s/stall.csv: %s", dir, strerror(errno));
        return -1;
    }
    /* At most 2048 fds (two a thread: 1,024 threads), and at most a quarter of RLIMIT_NOFILE. */
    struct rlimit rl;
    s->max_fds = 2048;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
        (rlim_t)s->max_fds > rl.rlim_cur / 4)
        s->max_fds = (int)(rl.rlim_cur / 4);
    char path[PATH_MAX + 32], why[PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/sys/kernel/task_delayacct", proc_root);
    s->delayacct = read_flag(path);
    find_cg_mount(s, sys_root);
    s->rootfd = open(proc_root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (s->rootfd >= 0) s->tree = rm_procfs_open(proc_root, why, sizeof why);
    if (s->tree) rm_workload_reader_init(&s->workload, port, s->tree);
    if (!s->tree) {
        if (s->rootfd < 0) snprintf(why, sizeof why, "%s: %s", proc_root, strerror(errno));
        rm_port_set_health(port, RM_STREAM_STALL, RM_HEALTH_UNAVAILABLE, why, 0);
    }
    return 0;
}

static int grow(void **a, size_t *cap, size_t want, size_t size)
{
    if (want <= *cap) return 0;
    size_t n = *cap ? *cap : 64;
    while (n < want)
        n *= 2;
    void *p = realloc(*a, n * size);
    if (!p) return -1;
    *a = p;
    *cap = n;
    return 0;
}

static int cmp_tid(const void *a, const void *b)
{
    int32_t x = ((const struct rm_stall_tid *)a)->tid, y = ((const struct rm_stall_tid *)b)->tid;
    return (x > y) - (x < y);
}

/* The threads of pid appended to s->tids from *n on; -1 out of memory. */
static int list_tasks(struct rm_stall_sampler *s, int32_t pid, size_t *n)
{
    char path[32];
    snprintf(path, sizeof path, "%d/task", (int)pid);
    int fd = openat(s->rootfd, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return 0; /* gone */
    int rc = 0;
    for (;;) {
        long got = syscall(SYS_getdents64, fd, s->dents, sizeof s->dents);
        if (got <= 0) break;
        for (long off = 0; off < got;) {
            const struct dirent64 *d = (const struct dirent64 *)(s->dents + off);
            off += d->d_reclen;
            char *end;
            long tid = strtol(d->d_name, &end, 10);
            if (d->d_name[0] < '0' || d->d_name[0] > '9' || *end || tid <= 0) continue;
            if (grow((void **)&s->tids, &s->cap_tids, *n + 1, sizeof *s->tids) < 0) {
                rc = -1;
                break;
            }
            s->tids[(*n)++] = (struct rm_stall_tid){(int32_t)tid, pid, 0};
        }
        if (rc) break;
    }
    close(fd);
    return rc;
}

static ssize_t pread_fd(int fd, char *b, size_t cap)
{
    ssize_t n;
    do
        n = pread(fd, b, cap, 0);
    while (n < 0 && errno == EINTR);
    return n;
}

/* One of a thread's files: through its kept fd, else opened (and kept while the budget
 * allows). The bytes read, or -1. */
static ssize_t read_task_file(struct rm_stall_sampler *s, const struct rm_stall_tid *t,
                              const char *name, int *fd)
{
    if (*fd < 0) {
        char path[64];
        snprintf(path, sizeof path, "%d/task/%d/%s", (int)t->pid, (int)t->tid, name);
        int f = openat(s->rootfd, path, O_RDONLY | O_CLOEXEC);
        if (f < 0) return -1;
        if (s->nfds < s->max_fds) {
            *fd = f;
            s->nfds++;
        } else {
            ssize_t n = pread_fd(f, s->buf, sizeof s->buf - 1);
            close(f);
            return n;
        }
    }
    return pread_fd(*fd, s->buf, sizeof s->buf - 1);
}

static void close_task(struct rm_stall_sampler *s, struct rm_stall_task *e)
{
    int *fds[2] = {&e->sched_fd, &e->stat_fd};
    for (int i = 0; i < 2; i++)
        if (*fds[i] >= 0) {
            close(*fds[i]);
            *fds[i] = -1;
            s->nfds--;
        }
}

/* The workload's cgroup v2: --cgroup's own folder, else root's (its "0::" line). Its pressure
 * files opened; none for the root cgroup: its pressure is the host's, which io.csv has. */
static void open_cgroup(struct rm_stall_sampler *s, int32_t root)
{
    for (int i = 0; i < 3; i++) {
        if (s->cg_fd[i] >= 0) close(s->cg_fd[i]);
        s->cg_fd[i] = -1;
        s->cg_have[i] = 0;
    }
    s->cgroup[0] = 0;
    char path[2 * PATH_MAX + 32];
    const struct rm_workload *w = s->workload.w;
    if (w && w->kind == RM_WORKLOAD_CGROUP && w->cgroup_version == 2) {
        snprintf(s->cgroup, sizeof s->cgroup, "%s", w->cgroup);
        for (int i = 0; i < 3; i++) {
            snprintf(path, sizeof path, "%s/%s", s->cgroup, psi_files[i]);
            s->cg_fd[i] = open(path, O_RDONLY | O_CLOEXEC);
        }
        return;
    }
    if (root <= 0) return;
    snprintf(path, sizeof path, "%d/cgroup", (int)root);
    int fd = openat(s->rootfd, path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return;
    ssize_t n = pread_fd(fd, s->buf, sizeof s->buf);
    close(fd);
    if (n <= 0 || !s->cg_mount[0]) return;
    if (rm_parse_cgroup_v2(s->buf, (size_t)n, s->cgroup, sizeof s->cgroup) < 0 ||
        !strcmp(s->cgroup, "/")) {
        s->cgroup[0] = 0;
        return;
    }
    for (int i = 0; i < 3; i++) {
        snprintf(path, sizeof path, "%s%s/%s", s->cg_mount, s->cgroup, psi_files[i]);
        s->cg_fd[i] = open(path, O_RDONLY | O_CLOEXEC);
    }
}

/* The pressure totals' growth into grow (NaN where unknown). */
static void sample_cgroup(struct rm_stall_sampler *s, double grow[3])
{
    for (int i = 0; i < 3; i++) {
        grow[i] = NAN;
        if (s->cg_fd[i] < 0) continue;
        ssize_t n = pread_fd(s->cg_fd[i], s->buf, sizeof s->buf);
        struct rm_pressure p;
        if (n <= 0 || rm_parse_pressure(s->buf, (size_t)n, &p) < 0 || !p.have_some) continue;
        if (s->cg_have[i] && p.some_us >= s->cg_prev[i])
            grow[i] = (double)(p.some_us - s->cg_prev[i]);
        s->cg_prev[i] = p.some_us;
        s->cg_have[i] = 1;
    }
}

/* What one sample adds up. */
struct stall_counts {
    uint64_t threads, runnable, blocked, unreadable;
    uint64_t run_ns, wait_ns, blkio;
};

/* Whether a thread asleep (not R, not D) at the previous sample has not run since: then it
 * is asleep still (a thread must run to block in D, and its blkio delay grows only in D), so
 * its stat need not be read; most threads of a large pool are so. One woken but not yet run
 * counts as asleep rather than runnable for this sample. */
static bool still_asleep(const struct rm_stall_task *prev, uint64_t run, uint64_t wait)
{
    return prev && prev->state && prev->state != 'R' && prev->state != 'D' && run == prev->run_ns &&
           wait == prev->wait_ns;
}

/* A read of a thread that failed: a known thread (its directory not listed) that is gone
 * was not in the tree now (-1: dropped); any other counts as unreadable (0: kept). */
static int unread(const struct rm_stall_tid *t, ssize_t n, struct stall_counts *c)
{
    if (t->known && n < 0 && (errno == ESRCH || errno == ENOENT)) return -1;
    c->unreadable++;
    return 0;
}

/* Reads a thread into e (its previous self, when the last sample had it, in prev) and adds
 * its growth to c. 0, or -1 when the thread is gone and dropped (e's files to close). */
static int read_task(struct rm_stall_sampler *s, const struct rm_stall_tid *t,
                     const struct rm_stall_task *prev, struct rm_stall_task *e,
                     struct stall_counts *c)
{
    *e = prev ? *prev : (struct rm_stall_task){.sched_fd = -1, .stat_fd = -1};
    e->tid = t->tid;
    e->pid = t->pid;
    uint64_t run, wait;
    struct rm_task_stat st;
    ssize_t n = read_task_file(s, t, "schedstat", &e->sched_fd);
    if (n <= 0 || rm_parse_schedstat(s->buf, (size_t)n, &run, &wait) < 0) return unread(t, n, c);
    if (still_asleep(prev, run, wait)) {
        st = (struct rm_task_stat){.state = prev->state, .blkio_ticks = prev->blkio};
    } else {
        n = read_task_file(s, t, "stat", &e->stat_fd);
        if (n <= 0 || rm_parse_task_stat(s->buf, (size_t)n, &st) < 0) return unread(t, n, c);
    }
    e->state = st.state;
    c->threads++;
    c->runnable += st.state == 'R';
    c->blocked += st.state == 'D';
    /* A thread new since the previous sample started in this interval: all of its times
     * count (they never go back; a reused tid reads lower, and counts from 0 too). */
    uint64_t r0 = prev && run >= prev->run_ns ? prev->run_ns : 0;
    uint64_t w0 = prev && wait >= prev->wait_ns ? prev->wait_ns : 0;
    uint64_t b0 = prev && st.blkio_ticks >= prev->blkio ? prev->blkio : 0;
    c->run_ns += run - r0;
    c->wait_ns += wait - w0;
    c->blkio += st.blkio_ticks - b0;
    e->run_ns = run;
    e->wait_ns = wait;
    e->blkio = st.blkio_ticks;
    return 0;
}

/* The member whose pid is pid (members are sorted by pid), or -1. */
static long find_member(const struct rm_stall_sampler *s, size_t nmembers, int32_t pid)
{
    size_t lo = 0, hi = nmembers;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (s->members[mid].pid == pid) return (long)mid;
        if (s->members[mid].pid < pid)
            lo = mid + 1;
        else
            hi = mid;
    }
    return -1;
}

/* Whether member i's threads are the ones the previous sample read: as many as it has now
 * (num_threads, from this tick's stat) and every one of them read then. A thread gone since
 * (one exited and another started) fails its read and is dropped, so the count differs at
 * the next sample and the directory is listed again; a thread started meanwhile is found
 * then, its times counted from 0, as a thread started after a listing always was. */
static bool threads_known(const struct rm_stall_sampler *s, size_t i)
{
    return s->members[i].num_threads > 0 && (int64_t)s->known[i] == s->members[i].num_threads;
}

/* The tree's threads now into s->tids, sorted by tid: those of a member whose threads are known
 * from cur, the others listed from its task directory. Their count, or -1 (out of memory). */
static long gather_tids(struct rm_stall_sampler *s, size_t nmembers)
{
    if (grow((void **)&s->known, &s->cap_known, nmembers, sizeof *s->known) < 0) return -1;
    for (size_t i = 0; i < nmembers; i++)
        s->known[i] = 0;
    for (size_t k = 0; k < s->ncur; k++) {
        long i = find_member(s, nmembers, s->cur[k].pid);
        if (i >= 0) s->known[i]++;
    }
    size_t n = 0;
    if (grow((void **)&s->tids, &s->cap_tids, s->ncur, sizeof *s->tids) < 0) return -1;
    for (size_t k = 0; k < s->ncur; k++) {
        long i = find_member(s, nmembers, s->cur[k].pid);
        if (i >= 0 && threads_known(s, (size_t)i))
            s->tids[n++] = (struct rm_stall_tid){s->cur[k].tid, s->cur[k].pid, 1};
    }
    size_t from_cur = n; /* in cur's order: sorted by tid */
    for (size_t i = 0; i < nmembers; i++)
        if (!threads_known(s, i) && list_tasks(s, s->members[i].pid, &n) < 0) return -1;
    if (n > from_cur) qsort(s->tids, n, sizeof *s->tids, cmp_tid);
    return (long)n;
}

/* The tree's threads now, sorted by tid, matched against the previous sample's. Returns
 * how many, or -1 (out of memory). */
static long walk_threads(struct rm_stall_sampler *s, size_t nmembers, struct stall_counts *c)
{
    long got = gather_tids(s, nmembers);
    if (got < 0) return -1;
    size_t n = (size_t)got;
    if (grow((void **)&s->next, &s->cap_tasks, n, sizeof *s->next) < 0) return -1;
    /* next and cur share one capacity: cur grows beside it. */
    void *p = realloc(s->cur, s->cap_tasks * sizeof *s->cur);
    if (!p) return -1;
    s->cur = p;
    size_t k = 0, out = 0;
    for (size_t i = 0; i < n; i++) {
        const struct rm_stall_tid *t = &s->tids[i];
        while (k < s->ncur && s->cur[k].tid < t->tid)
            close_task(s, &s->cur[k++]); /* exited */
        const struct rm_stall_task *prev = NULL;
        if (k < s->ncur && s->cur[k].tid == t->tid) prev = &s->cur[k++];
        if (prev && prev->pid != t->pid) { /* a reused tid in another process */
            close_task(s, &s->cur[k - 1]);
            prev = NULL;
        }
        if (read_task(s, t, prev, &s->next[out], c) == 0)
            out++;
        else
            close_task(s, &s->next[out]); /* gone: not listed, so not counted */
    }
    while (k < s->ncur)
        close_task(s, &s->cur[k++]);
    struct rm_stall_task *sw = s->cur;
    s->cur = s->next;
    s->next = sw;
    s->ncur = out;
    return (long)out;
}

static void forget_threads(struct rm_stall_sampler *s)
{
    for (size_t i = 0; i < s->ncur; i++)
        close_task(s, &s->cur[i]);
    s->ncur = 0;
}

static void field_num(struct rm_stream *o, double v)
{
    if (isnan(v))
        rm_stream_field(o, "", 0);
    else
        rm_stream_field_u64(o, (uint64_t)v);
}

/* The workload's tree this tick: the walk the proc.csv sampler published at this slot, else
 * a walk of its own. NULL when there is no workload now (or out of memory). */
static const struct rm_procfs *walked_tree(struct rm_stall_sampler *s, int64_t mono)
{
    const struct rm_proc_tick *k = s->tick;
    if (k && k->procfs && k->walked == k->run) return k->status == 0 ? k->procfs : NULL;
    struct rm_tree_sample t;
    return rm_workload_sample(&s->workload, mono, -1, &t) == 0 ? s->tree : NULL;
}

void rm_stall_sampler_sample(struct rm_stall_sampler *s, int64_t mono)
{
    if (!s->tree) return;
    /* The workload's pids from the one provider (the command's tree, --pid's, --cgroup's). */
    pid_t root = rm_workload_root(s->workload.w, (pid_t)atomic_load(s->port->workload_pid));
    int32_t key = root > 0 ? (int32_t)root : RM_PROCFS_SET_KEY;
    int fresh = key != s->root;
    if (fresh) {
        forget_threads(s);
        s->root = key;
        open_cgroup(s, (int32_t)root);
    }
    const struct rm_procfs *tree = walked_tree(s, mono);
    if (!tree) return;
    size_t n = rm_procfs_tree_members(tree, s->members, s->cap_members);
    if (n > s->cap_members) {
        if (grow((void **)&s->members, &s->cap_members, n, sizeof *s->members) < 0) return;
        n = rm_procfs_tree_members(tree, s->members, s->cap_members);
    }
    /* A workload that started before the sampler began (a process attached to, a cgroup's)
     * has a past: its first sample is the baseline. One started since counts from its first
     * tick. */
    int baseline = fresh && root <= 0;
    for (size_t i = 0; fresh && root > 0 && i < n; i++)
        if (s->members[i].pid == (int32_t)root) baseline = s->members[i].starttime < s->begin_ticks;
    struct stall_counts c = {0};
    if (walk_threads(s, n, &c) < 0) return;
    double cg[3];
    sample_cgroup(s, cg);
    int64_t dt = mono - s->prev_mono;
    s->prev_mono = mono;
    if (baseline) return;
    struct rm_stream *o = &s->out;
    rm_stream_begin_row(o, rm_now_realtime_ns());
    rm_stream_field_u64(o, (uint64_t)((dt + 500000) / 1000000));
    rm_stream_field_u64(o, n);
    rm_stream_field_u64(o, c.threads);
    rm_stream_field_u64(o, c.runnable);
    rm_stream_field_u64(o, c.blocked);
    rm_stream_field_u64(o, c.run_ns);
    rm_stream_field_u64(o, c.wait_ns);
    long hz = sysconf(_SC_CLK_TCK);
    field_num(o, s->delayacct && hz > 0 ? (double)c.blkio * 1000.0 / (double)hz : NAN);
    rm_stream_field_str(o, s->cgroup);
    for (int i = 0; i < 3; i++)
        field_num(o, cg[i]);
    rm_stream_field_u64(o, c.unreadable);
    rm_stream_end_row(o);
    rm_stream_flush(o);
}

void rm_stall_sampler_stop(struct rm_stall_sampler *s)
{
    s->tick = NULL; /* the last sample is not at a slot of the set: its own walk */
    if (s->begun) { /* the last row: the command's last interval */
        rm_stall_sampler_sample(s, rm_now_monotonic_ns());
        s->begun = 0;
    }
    if (s->out.buf) rm_stream_close(&s->out);
    forget_threads(s);
    for (int i = 0; i < 3; i++)
        if (s->cg_fd[i] >= 0) close(s->cg_fd[i]);
    if (s->rootfd >= 0) close(s->rootfd);
    s->rootfd = -1;
    if (s->tree) rm_workload_reader_fini(&s->workload);
    rm_procfs_close(s->tree);
    s->tree = NULL;
    free(s->members);
    free(s->cur);
    free(s->next);
    free(s->tids);
    free(s->known);
    s->known = NULL;
    s->members = NULL;
    s->cur = s->next = NULL;
    s->tids = NULL;
}

/* ---- its row of monitor/proc_samplers.h ---------------------------------------------- */

/* Without a workload the stream's row (RM_NEEDS_COMMAND) already has it disabled: then it
 * opens nothing and never ticks. */
static bool row_wanted(const struct rm_proc_start *st)
{
    return !st->o->no_stall;
}

static int row_open(void *ctx, const struct rm_proc_start *st, char *err, size_t errsz)
{
    if (!st->with_command) return 0;
    struct rm_stall_sampler *s = ctx;
    s->tick = st->tick; /* proc.csv's walk, when it shares the slot */
    return rm_stall_sampler_open(s, st->port, st->o->proc_root, st->o->sys_root, err, errsz);
}

static int row_outs(void *ctx, struct rm_stream **out)
{
    struct rm_stall_sampler *s = ctx;
    if (!s->out.buf) return 0;
    out[0] = &s->out;
    return 1;
}

static void row_begin(void *ctx, int64_t grid_mono)
{
    struct rm_stall_sampler *s = ctx;
    s->start_mono = grid_mono;
    s->prev_mono = rm_now_monotonic_ns();
    struct timespec ts;
    long hz = sysconf(_SC_CLK_TCK);
    if (hz > 0 && clock_gettime(CLOCK_BOOTTIME, &ts) == 0)
        s->begin_ticks = (uint64_t)ts.tv_sec * (uint64_t)hz +
                         (uint64_t)ts.tv_nsec / (1000000000u / (uint64_t)hz);
    s->slot = 1;
    s->begun = 1;
}

static int64_t row_due(const void *ctx)
{
    const struct rm_stall_sampler *s = ctx;
    if (!s->out.buf) return INT64_MAX; /* not opened: no workload */
    return s->start_mono + s->slot * s->interval_ns;
}

static void row_tick(void *ctx, int64_t now)
{
    struct rm_stall_sampler *s = ctx;
    rm_stall_sampler_sample(s, now);
    s->slot++;
    int64_t after = rm_now_monotonic_ns(); /* missed slots are skipped, not burst */
    if (after > row_due(s)) s->slot = (after - s->start_mono) / s->interval_ns + 1;
}

static void row_stop(void *ctx)
{
    struct rm_stall_sampler *s = ctx;
    if (s->out.buf) rm_stall_sampler_stop(s); /* not after an open that failed */
}

const struct rm_proc_sampler rm_stall_sampler_row = {
    .name = "stall",
    .streams = 1u << RM_STREAM_STALL,
    .ctx_size = sizeof(struct rm_stall_sampler),
    .wanted = row_wanted,
    .open = row_open,
    .outs = row_outs,
    .begin = row_begin,
    .due = row_due,
    .tick = row_tick,
    .stop = row_stop,
};
