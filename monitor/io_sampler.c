#include "monitor/io_sampler.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/alloc.h"
#include "base/rm_time.h"
#include "monitor/port.h"
#include "monitor/proc_samplers.h"

/* io.csv's columns after ts; each kind of row fills its own (docs/FORMATS.md). */
static const char *const io_cols[] = {"kind",    "name",     "read_bytes", "write_bytes",
                                      "busy_ms", "rx_bytes", "tx_bytes",   "some_us",
                                      "full_us", "procs",    "unreadable"};
enum { IO_NCOLS = (int)(sizeof io_cols / sizeof *io_cols) };
static const char *const psi_names[3] = {"cpu", "io", "memory"};

static void note_part(struct rm_io_sampler *s, const char *part, const char *why)
{
    json_t *d = json_object();
    json_object_set_new(d, "collector", json_string("io"));
    json_object_set_new(d, "part", json_string(part));
    json_object_set_new(d, "reason", json_string(why));
    rm_port_event(s->port, "io_part_unavailable", d);
}

int rm_io_sampler_open(struct rm_io_sampler *s, const struct rm_port *port,
                       const struct rm_io_opts *o, char *err, size_t errsz)
{
    memset(s, 0, sizeof *s);
    s->port = port;
    s->o = *o;
    s->io.fd = -1;
    s->disk_fd = s->net_fd = s->psi_fd[0] = s->psi_fd[1] = s->psi_fd[2] = -1;
    s->interval_ns = (int64_t)llround((o->interval_s > 0 ? o->interval_s : 1.0) * 1e9);
    s->rootfd = open(o->proc_root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    const char *dir = port->sess->dir;
    if (rm_stream_open(&s->io, dir, RM_STREAM_IO) < 0 ||
        rm_stream_header(&s->io, io_cols, IO_NCOLS) < 0) {
        snprintf(err, errsz, "cannot write %s/io.csv: %s", dir, strerror(errno));
        return -1;
    }
    char why[PATH_MAX + 64];
    int opened = 0;
    if (s->rootfd >= 0) {
        s->disk_fd = openat(s->rootfd, "diskstats", O_RDONLY | O_CLOEXEC);
        s->net_fd = openat(s->rootfd, "net/dev", O_RDONLY | O_CLOEXEC);
        char path[32];
        int psi = 0;
        for (int i = 0; i < 3; i++) {
            snprintf(path, sizeof path, "pressure/%s", psi_names[i]);
            s->psi_fd[i] = openat(s->rootfd, path, O_RDONLY | O_CLOEXEC);
            psi += s->psi_fd[i] >= 0;
            if (s->psi_fd[i] < 0) { /* a kernel without PSI (or without this resource's) */
                snprintf(why, sizeof why, "%s/%s: %s", o->proc_root, path, strerror(errno));
                note_part(s, path, why);
            }
        }
        opened = (s->disk_fd >= 0) + (s->net_fd >= 0) + psi;
        if (s->disk_fd < 0) {
            snprintf(why, sizeof why, "%s/diskstats: %s", o->proc_root, strerror(errno));
            note_part(s, "disk", why);
        }
        if (s->net_fd < 0) {
            snprintf(why, sizeof why, "%s/net/dev: cannot be read", o->proc_root);
            note_part(s, "net", why);
        }
        if (o->with_tree) {
            s->tree = rm_procfs_open(o->proc_root, why, sizeof why);
            if (!s->tree) note_part(s, "tree", why);
            rm_workload_reader_init(&s->workload, port, s->tree);
        }
    }
    if (!opened && !s->tree) {
        snprintf(why, sizeof why, "nothing to read under %s", o->proc_root);
        rm_port_set_health(port, RM_STREAM_IO, RM_HEALTH_UNAVAILABLE, why, 0);
    }
    return 0;
}

/* Reads fd from offset 0 into s->buf: the byte count, or -1. A file larger than the buffer
 * is cut at its last whole line. */
static ssize_t read_all(struct rm_io_sampler *s, int fd)
{
    size_t got = 0;
    for (;;) {
        ssize_t r = pread(fd, s->buf + got, sizeof s->buf - got, (off_t)got);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) return -1;
        if (r == 0) break;
        got += (size_t)r;
        if (got == sizeof s->buf) {
            while (got > 0 && s->buf[got - 1] != '\n')
                got--;
            break;
        }
    }
    return (ssize_t)got;
}

/* 1 when name (a /proc/diskstats device) is a whole disk: not a partition and not stacked on
 * other devices (device-mapper, md), whose I/O the disks below already count. Remembered by
 * name; a device sysfs does not know (a test's fixture) counts as whole. */
static int whole_disk(struct rm_io_sampler *s, const char *name)
{
    for (int i = 0; i < s->ndevs; i++)
        if (!strcmp(s->devs[i].name, name)) return s->devs[i].whole;
    char sysname[RM_IO_NAME_MAX], path[PATH_MAX];
    snprintf(sysname, sizeof sysname, "%s", name);
    for (char *c = sysname; *c; c++)
        if (*c == '/') *c = '!'; /* sysfs spells "cciss/c0d0" as "cciss!c0d0" */
    int whole = 1;
    struct stat st;
    snprintf(path, sizeof path, "%s/class/block/%s/partition", s->o.sys_root, sysname);
    if (stat(path, &st) == 0) whole = 0;
    snprintf(path, sizeof path, "%s/class/block/%s/slaves", s->o.sys_root, sysname);
    DIR *d = whole ? opendir(path) : NULL;
    if (d) {
        for (struct dirent *e; (e = readdir(d));)
            if (e->d_name[0] != '.') whole = 0;
        closedir(d);
    }
    if (s->ndevs < RM_IO_MAX_DEVS) {
        snprintf(s->devs[s->ndevs].name, RM_IO_NAME_MAX, "%s", name);
        s->devs[s->ndevs++].whole = whole;
    }
    return whole;
}

static void count_bad(struct rm_io_sampler *s, int bad, const char *file)
{
    if (bad <= 0) return;
    if (!s->bad_lines) {
        json_t *d = json_object();
        json_object_set_new(d, "collector", json_string("io"));
        json_object_set_new(d, "file", json_string(file));
        json_object_set_new(d, "lines", json_integer(bad));
        rm_port_event(s->port, "nonconforming_output", d);
    }
    s->bad_lines += (uint64_t)bad;
    pthread_mutex_lock(s->port->lock);
    s->port->sess->collectors[RM_STREAM_IO].nonconforming_lines += (uint64_t)bad;
    pthread_mutex_unlock(s->port->lock);
}

static void begin(struct rm_io_sampler *s, int64_t ts, const char *kind, const char *name)
{
    rm_stream_begin_row(&s->io, ts);
    rm_stream_field_str(&s->io, kind);
    rm_stream_field_str(&s->io, name);
}

/* n empty fields */
static void blanks(struct rm_io_sampler *s, int n)
{
    for (int i = 0; i < n; i++)
        rm_stream_field(&s->io, "", 0);
}

/* Adds the growth of a device's two counters since the previous sample to grow[0..1] (none
 * for a device new to this sample, or whose counters went back). */
static void grow_dev(struct rm_io_sampler *s, char kind, const char *name, uint64_t a, uint64_t b,
                     double *grow)
{
    struct rm_io_prev *p = NULL;
    for (int i = 0; i < s->nprev && !p; i++)
        if (s->prev[i].kind == kind && !strcmp(s->prev[i].name, name)) p = &s->prev[i];
    if (p) {
        if (a >= p->v[0] && b >= p->v[1]) {
            grow[0] += (double)(a - p->v[0]);
            grow[1] += (double)(b - p->v[1]);
        }
    } else if (s->nprev < (int)(sizeof s->prev / sizeof *s->prev)) {
        p = &s->prev[s->nprev++];
        p->kind = kind;
        snprintf(p->name, sizeof p->name, "%s", name);
    } else {
        return;
    }
    p->v[0] = a;
    p->v[1] = b;
}

static int sample_disks(struct rm_io_sampler *s, int64_t ts)
{
    if (s->disk_fd < 0) return 0;
    ssize_t len = read_all(s, s->disk_fd);
    if (len < 0) return -1;
    int n, bad;
    rm_parse_diskstats(s->buf, (size_t)len, s->disks, RM_IO_MAX_DEVS, &n, &bad);
    count_bad(s, bad, "diskstats");
    /* What sysfs says of a device is asked again only when the set of devices changed (a
     * disk added or removed, a partition table rewritten), not at every sample. */
    uint64_t set = 1469598103934665603ULL;
    for (int i = 0; i < n; i++) {
        for (const char *c = s->disks[i].name; *c; c++)
            set = (set ^ (unsigned char)*c) * 1099511628211ULL;
        set = (set ^ 0x100) * 1099511628211ULL; /* the end of a name */
    }
    if (set != s->devset) s->ndevs = 0;
    s->devset = set;
    for (int i = 0; i < n; i++) {
        const struct rm_disk_stat *d = &s->disks[i];
        /* Never used (idle loop and ram devices): left out until they move. */
        if (!d->read_sectors && !d->write_sectors && !d->io_ms) continue;
        if (!whole_disk(s, d->name)) continue;
        grow_dev(s, 'd', d->name, d->read_sectors * 512u, d->write_sectors * 512u, &s->grow[0]);
        begin(s, ts, "disk", d->name);
        rm_stream_field_u64(&s->io, d->read_sectors * 512u);
        rm_stream_field_u64(&s->io, d->write_sectors * 512u);
        rm_stream_field_u64(&s->io, d->io_ms);
        blanks(s, 6);
        rm_stream_end_row(&s->io);
    }
    return 0;
}

static int sample_nets(struct rm_io_sampler *s, int64_t ts)
{
    if (s->net_fd < 0) return 0;
    ssize_t len = read_all(s, s->net_fd);
    if (len < 0) return -1;
    int n, bad;
    rm_parse_net_dev(s->buf, (size_t)len, s->nets, RM_IO_MAX_DEVS, &n, &bad);
    count_bad(s, bad, "net/dev");
    for (int i = 0; i < n; i++) {
        const struct rm_net_stat *d = &s->nets[i];
        if (!s->o.with_lo && !strcmp(d->name, "lo")) continue;
        grow_dev(s, 'n', d->name, d->rx_bytes, d->tx_bytes, &s->grow[2]);
        begin(s, ts, "net", d->name);
        blanks(s, 3);
        rm_stream_field_u64(&s->io, d->rx_bytes);
        rm_stream_field_u64(&s->io, d->tx_bytes);
        blanks(s, 4);
        rm_stream_end_row(&s->io);
    }
    return 0;
}

static int sample_pressure(struct rm_io_sampler *s, int64_t ts)
{
    int rc = 0;
    for (int i = 0; i < 3; i++) {
        if (s->psi_fd[i] < 0) continue;
        ssize_t len = read_all(s, s->psi_fd[i]);
        struct rm_pressure p;
        if (len < 0) {
            rc = -1;
            continue;
        }
        if (rm_parse_pressure(s->buf, (size_t)len, &p) < 0) {
            count_bad(s, 1, psi_names[i]);
            continue;
        }
        uint64_t v[2] = {p.some_us, p.full_us};
        int have = p.have_some | (p.have_full << 1);
        for (int k = 0; k < 2; k++)
            if ((have & s->psi_have[i] & (1 << k)) && v[k] >= s->psi_prev[i][k]) {
                s->psi_grow[i][k] = (double)(v[k] - s->psi_prev[i][k]);
                s->psi_now[i] |= 1 << k;
            }
        s->psi_prev[i][0] = v[0];
        s->psi_prev[i][1] = v[1];
        s->psi_have[i] = have;
        begin(s, ts, "pressure", psi_names[i]);
        blanks(s, 5);
        rm_stream_field_u64(&s->io, p.some_us);
        if (p.have_full)
            rm_stream_field_u64(&s->io, p.full_us);
        else
            blanks(s, 1);
        blanks(s, 2);
        rm_stream_end_row(&s->io);
    }
    return rc;
}

static int read_pid_io(struct rm_io_sampler *s, int32_t pid, struct rm_pid_io *io)
{
    char path[32];
    snprintf(path, sizeof path, "%d/io", (int)pid);
    int fd = openat(s->rootfd, path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    char b[512];
    ssize_t n = pread(fd, b, sizeof b, 0);
    close(fd);
    if (n <= 0) return -1;
    return rm_parse_pid_io(b, (size_t)n, io);
}

static int grow_tree(struct rm_io_sampler *s, size_t want)
{
    size_t cap = s->cap ? s->cap : 64;
    while (cap < want)
        cap *= 2;
    void *a = realloc(s->members, cap * sizeof *s->members);
    if (!a) return -1;
    s->members = a;
    void *b = realloc(s->pids, cap * sizeof *s->pids);
    if (!b) return -1;
    s->pids = b;
    void *c = realloc(s->next, cap * sizeof *s->next);
    if (!c) return -1;
    s->next = c;
    s->cap = cap;
    return 0;
}

/* The entry of pid in a (sorted by pid, n entries), or NULL. */
static const struct rm_io_pid *find_pid(const struct rm_io_pid *a, size_t n, int32_t pid)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (a[mid].pid == pid) return &a[mid];
        if (a[mid].pid < pid)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

/* Whether a member that left was reaped inside the tree: some ancestor of it (through
 * members that left too, by the parents the last sample saw) is still a member. Its bytes
 * are then in that ancestor's counter (the kernel adds a reaped child's to its parent's, and
 * that parent's to its own parent's when it is reaped in turn). */
static int reaped_inside(const struct rm_io_sampler *s, const struct rm_io_pid *o, size_t n)
{
    int32_t p = o->ppid;
    for (size_t depth = 0; depth < s->npids; depth++) {
        if (find_pid(s->next, n, p)) return 1;
        const struct rm_io_pid *up = find_pid(s->pids, s->npids, p);
        if (!up) return 0; /* its parent was never in the tree: reaped outside it */
        p = up->ppid;
    }
    return 0;
}

/* The tree's bytes: the members' /proc/PID/io summed, plus what members that left it had
 * read and written at their last sample, unless a member still in the tree reaped them
 * (reaped_inside). What a process did between its last sample and its exit is lost only
 * when it was reaped outside the tree (the command itself, by runmon; an orphan). */
static void sample_tree(struct rm_io_sampler *s, int64_t mono, int64_t ts)
{
    if (!s->tree) return;
    /* A new root (or the cgroup, which has none) starts a new history. */
    pid_t root = rm_workload_root(s->workload.w, (pid_t)atomic_load(s->port->workload_pid));
    int32_t key = root > 0 ? (int32_t)root : RM_PROCFS_SET_KEY;
    if (key != s->root) {
        s->root = key;
        s->npids = 0;
        s->gone_read = s->gone_write = s->last_read = s->last_write = 0;
    }
    struct rm_tree_sample t;
    if (rm_workload_sample(&s->workload, mono, -1, &t) != 0) return;
    size_t n = rm_procfs_tree_members(s->tree, s->members, s->cap);
    if (n > s->cap) {
        if (grow_tree(s, n) < 0) return;
        n = rm_procfs_tree_members(s->tree, s->members, s->cap);
    }
    int unreadable = 0;
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        const struct rm_tree_member *m = &s->members[i];
        struct rm_io_pid *e = &s->next[i];
        *e = (struct rm_io_pid){.pid = m->pid, .ppid = m->ppid, .starttime = m->starttime};
        while (k < s->npids && s->pids[k].pid < m->pid)
            k++;
        const struct rm_io_pid *prev =
            k < s->npids && s->pids[k].pid == m->pid && s->pids[k].starttime == m->starttime
                ? &s->pids[k]
                : NULL;
        struct rm_pid_io io;
        if (read_pid_io(s, m->pid, &io) == 0) {
            e->read_bytes = io.read_bytes;
            e->write_bytes = io.write_bytes;
            e->have = 1;
        } else {
            unreadable++; /* another user's process, or gone mid-walk: its last values stand */
            if (prev) {
                e->read_bytes = prev->read_bytes;
                e->write_bytes = prev->write_bytes;
                e->have = prev->have;
            }
        }
    }
    /* Members that left: their last values, unless they were reaped inside the tree. */
    size_t j = 0;
    for (size_t i = 0; i < s->npids; i++) {
        const struct rm_io_pid *o = &s->pids[i];
        while (j < n && s->next[j].pid < o->pid)
            j++;
        int still = j < n && s->next[j].pid == o->pid && s->next[j].starttime == o->starttime;
        if (still || !o->have || reaped_inside(s, o, n)) continue;
        s->gone_read += o->read_bytes;
        s->gone_write += o->write_bytes;
    }
    struct rm_io_pid *sw = s->pids;
    s->pids = s->next;
    s->next = sw;
    s->npids = n;
    uint64_t rd = s->gone_read, wr = s->gone_write;
    for (size_t i = 0; i < n; i++) {
        rd += s->pids[i].read_bytes;
        wr += s->pids[i].write_bytes;
    }
    /* A child reaped between reading it and its parent dips the sum for one sample: the
     * counters never go back. */
    if (rd < s->last_read) rd = s->last_read;
    if (wr < s->last_write) wr = s->last_write;
    s->last_read = rd;
    s->last_write = wr;
    if (s->tree_prev_root == s->root) {
        s->tree_grow[0] = (double)(rd - s->tree_prev[0]);
        s->tree_grow[1] = (double)(wr - s->tree_prev[1]);
        s->tree_now = 1;
    }
    s->tree_prev_root = s->root;
    s->tree_prev[0] = rd;
    s->tree_prev[1] = wr;
    if (unreadable && !s->unreadable) {
        json_t *d = json_object();
        json_object_set_new(d, "collector", json_string("io"));
        json_object_set_new(d, "unreadable", json_integer(unreadable));
        rm_port_event(s->port, "io_unreadable_processes", d);
    }
    s->unreadable += (uint64_t)unreadable;
    char name[16];
    snprintf(name, sizeof name, "%d", (int)root);
    begin(s, ts, "tree", name);
    rm_stream_field_u64(&s->io, rd);
    rm_stream_field_u64(&s->io, wr);
    blanks(s, 5);
    rm_stream_field_u64(&s->io, (uint64_t)n);
    rm_stream_field_u64(&s->io, (uint64_t)unreadable);
    rm_stream_end_row(&s->io);
}

/* The rates of this sample into the live snapshot (the exporters'). */
static void publish(struct rm_io_sampler *s, int64_t mono, int64_t ts)
{
    double dt = s->prev_mono ? (double)(mono - s->prev_mono) / 1e9 : 0;
    s->prev_mono = mono;
    if (dt <= 0 || !s->port->latest) return; /* no exporter is on */
    pthread_mutex_lock(s->port->lock);
    struct rm_latest *l = s->port->latest;
    l->io_valid = 1;
    l->io_ts_ns = ts;
    l->disk_read_bps = s->disk_fd >= 0 ? s->grow[0] / dt : NAN;
    l->disk_write_bps = s->disk_fd >= 0 ? s->grow[1] / dt : NAN;
    l->net_rx_bps = s->net_fd >= 0 ? s->grow[2] / dt : NAN;
    l->net_tx_bps = s->net_fd >= 0 ? s->grow[3] / dt : NAN;
    for (int i = 0; i < 3; i++) { /* stalled us over elapsed us: a share, at most 1 */
        l->psi_some[i] = (s->psi_now[i] & 1) ? fmin(1.0, s->psi_grow[i][0] / 1e6 / dt) : NAN;
        l->psi_full[i] = (s->psi_now[i] & 2) ? fmin(1.0, s->psi_grow[i][1] / 1e6 / dt) : NAN;
    }
    l->tree_read_bps = s->tree_now ? s->tree_grow[0] / dt : NAN;
    l->tree_write_bps = s->tree_now ? s->tree_grow[1] / dt : NAN;
    pthread_mutex_unlock(s->port->lock);
}

void rm_io_sampler_sample(struct rm_io_sampler *s, int64_t mono)
{
    int64_t ts = rm_now_realtime_ns();
    int failed = 0;
    memset(s->grow, 0, sizeof s->grow);
    memset(s->psi_now, 0, sizeof s->psi_now);
    s->tree_now = 0;
    failed |= sample_disks(s, ts) < 0;
    failed |= sample_nets(s, ts) < 0;
    failed |= sample_pressure(s, ts) < 0;
    sample_tree(s, mono, ts);
    rm_stream_flush(&s->io);
    publish(s, mono, ts);
    if (failed != s->degraded) {
        json_t *d = json_object();
        json_object_set_new(d, "collector", json_string("io"));
        if (failed) json_object_set_new(d, "reason", json_string(strerror(errno)));
        rm_port_event(s->port, failed ? "collector_degraded" : "collector_recovered", d);
        rm_port_set_health(s->port, RM_STREAM_IO, failed ? RM_HEALTH_DEGRADED : RM_HEALTH_HEALTHY,
                           failed ? "a /proc file could not be read" : NULL, failed);
        s->degraded = failed;
    }
}

void rm_io_sampler_begin(struct rm_io_sampler *s, int64_t start_mono)
{
    rm_io_sampler_sample(s, rm_now_monotonic_ns()); /* the baseline row: rates need two */
    s->begun = 1;
    s->start_mono = start_mono;
    s->slot = 1;
    int64_t now = rm_now_monotonic_ns();
    if (now > rm_io_sampler_due(s)) s->slot = (now - start_mono) / s->interval_ns + 1;
}

int64_t rm_io_sampler_due(const struct rm_io_sampler *s)
{
    return s->start_mono + s->slot * s->interval_ns;
}

void rm_io_sampler_tick(struct rm_io_sampler *s, int64_t now)
{
    rm_io_sampler_sample(s, now);
    s->slot++;
    int64_t after = rm_now_monotonic_ns(); /* missed slots are skipped, not burst */
    if (after > rm_io_sampler_due(s)) s->slot = (after - s->start_mono) / s->interval_ns + 1;
}

void rm_io_sampler_stop(struct rm_io_sampler *s)
{
    if (s->begun) { /* the last row: what the command did since the previous sample */
        rm_io_sampler_sample(s, rm_now_monotonic_ns());
        s->begun = 0;
    }
    if (s->io.buf) rm_stream_close(&s->io);
    int *fds[] = {&s->disk_fd, &s->net_fd, &s->psi_fd[0], &s->psi_fd[1], &s->psi_fd[2], &s->rootfd};
    for (size_t i = 0; i < sizeof fds / sizeof *fds; i++)
        if (*fds[i] >= 0) {
            close(*fds[i]);
            *fds[i] = -1;
        }
    rm_workload_reader_fini(&s->workload);
    rm_procfs_close(s->tree);
    s->tree = NULL;
    free(s->members);
    free(s->pids);
    free(s->next);
    s->members = NULL;
    s->pids = s->next = NULL;
}

/* ---- its row of monitor/proc_samplers.h ---------------------------------------------- */

static bool row_wanted(const struct rm_proc_start *st)
{
    return !st->o->no_io;
}

static int row_open(void *ctx, const struct rm_proc_start *st, char *err, size_t errsz)
{
    struct rm_io_opts o = {.interval_s = st->o->io_interval_s,
                           .with_lo = st->o->io_net_lo,
                           .with_tree = st->with_command,
                           .proc_root = st->o->proc_root,
                           .sys_root = st->o->sys_root};
    return rm_io_sampler_open(ctx, st->port, &o, err, errsz);
}

static int row_outs(void *ctx, struct rm_stream **out)
{
    struct rm_io_sampler *s = ctx;
    out[0] = &s->io;
    return 1;
}

static void row_begin(void *ctx, int64_t grid_mono)
{
    rm_io_sampler_begin(ctx, grid_mono);
}

static int64_t row_due(const void *ctx)
{
    return rm_io_sampler_due(ctx);
}

static void row_tick(void *ctx, int64_t now)
{
    rm_io_sampler_tick(ctx, now);
}

static void row_stop(void *ctx)
{
    struct rm_io_sampler *s = ctx;
    if (s->io.buf) rm_io_sampler_stop(s); /* not after an open that failed */
}

const struct rm_proc_sampler rm_io_sampler_row = {
    .name = "io",
    .streams = 1u << RM_STREAM_IO,
    .ctx_size = sizeof(struct rm_io_sampler),
    .wanted = row_wanted,
    .open = row_open,
    .outs = row_outs,
    .begin = row_begin,
    .due = row_due,
    .tick = row_tick,
    .stop = row_stop,
};
