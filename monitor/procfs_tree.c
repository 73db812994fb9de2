/* The recorded command's process tree: membership, RSS and CPU ticks per sample.
 *
 * Discovery: /proc/PID/task/TID/children (CONFIG_PROC_CHILDREN, Linux >= 3.5) walked from
 * the root, one file per thread (a child belongs to the thread that forked it; a
 * single-threaded process needs just task/PID/children). If a live process has no children
 * file, the kernel lacks the option: from then on every sample scans /proc/[0-9]* /stat and
 * follows ppid links, which costs one stat read per process on the machine.
 *
 * CPU: the tree's ticks since the previous sample are summed per process, from a table of
 * (pid, starttime, ticks) kept from the previous sample:
 *   - a process in both samples adds cur - prev (0 if that went backwards);
 *   - a process new to the tree (or a reused pid: different starttime) adds all its ticks:
 *     a forked child starts at 0, so they were all spent since it appeared, which was after
 *     the previous walk in all but the rare case of a fork racing that walk;
 *   - a process that exited adds nothing: its ticks since the previous sample are lost
 *     (undercount of at most one interval per exited process), and the sum can never go
 *     negative;
 *   - the first sample of a root told when it did not run yet (rm_procfs_tree_sample_since:
 *     the recorder's previous sample, taken before the command started) counts the whole
 *     tree as new since then, so the command's first interval is not lost.
 * RSS is stat field 24 (resident pages, the same number as statm's second field).
 *
 * Cost: reading stat is the bulk (~7 us per process even through an open fd), a children
 * file or a fresh open costs as much again. So members' stat files stay open between samples
 * (pread from 0; an fd names the process, never a later one with the same pid), and the walk
 * is skipped when nothing can have joined the tree: no pid was allocated since the last walk
 * (the last field of /proc/loadavg is unchanged) and every member is still alive with the
 * same parent (a member's exit reparents its children out of the tree). Only then are the
 * known members re-read, nothing else. On a busy machine pids are allocated all the time, so
 * the walk runs at most samples: a single-threaded member's children file stays open too
 * (pread from 0), which spares the open and close (a path lookup through /proc) each time.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "monitor/procfs.h"
#include "monitor/procfs_internal.h"

#define TREE_MAX (1u << 22) /* pid_max can be at most 4M */
#define NO_CHILDREN_FILE 2

struct linux_dirent64 {
    uint64_t d_ino;
    int64_t d_off;
    unsigned short d_reclen;
    unsigned char d_type;
    char d_name[];
};

/* "PID/" + rest into path; returns its length. */
static size_t pid_path(char *path, int32_t pid, const char *rest)
{
    size_t n = rm_fmt_u64((uint64_t)pid, path);
    size_t r = strlen(rest);
    memcpy(path + n, rest, r + 1);
    return n + r;
}

/* A stat read for the scan, which touches every process: no fd kept. */
static int read_pid_stat(struct rm_procfs *p, int32_t pid, struct rm_pid_stat *st)
{
    char path[32];
    pid_path(path, pid, "/stat");
    ssize_t n = rm_procfs_slurp(p, path, p->pidbuf, sizeof(p->pidbuf));
    if (n <= 0) return -1; /* gone (ENOENT, ESRCH) or empty: skip it */
    return rm_parse_pid_stat(p->pidbuf, (size_t)n, st) || st->pid != pid ? -1 : 0;
}

static void release(struct rm_procfs *p, int fd)
{
    if (fd < 0) return;
    close(fd);
    p->nfds--;
}

static int read_stat_fd(struct rm_procfs *p, int fd, int32_t pid, struct rm_pid_stat *st)
{
    ssize_t n = pread(fd, p->pidbuf, sizeof(p->pidbuf), 0);
    if (n <= 0) return -1; /* ESRCH once the process is gone */
    return rm_parse_pid_stat(p->pidbuf, (size_t)n, st) || st->pid != pid ? -1 : 0;
}

static struct rm_tree_ent *prev_find(struct rm_procfs *p, int32_t pid)
{
    size_t lo = 0, hi = p->prev_n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (p->prev[mid].pid < pid)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < p->prev_n && p->prev[lo].pid == pid ? &p->prev[lo] : NULL;
}

/* Reads a tree member's stat through the fd kept from the previous sample (moved to *fd),
 * else opens it and keeps the fd while under max_fds. Returns 0, or -1 if it is gone. */
static int read_member(struct rm_procfs *p, int32_t pid, struct rm_pid_stat *st, int *fd)
{
    *fd = -1;
    struct rm_tree_ent *e = prev_find(p, pid);
    if (e && e->fd >= 0) {
        int f = e->fd;
        e->fd = -1;
        if (read_stat_fd(p, f, pid, st) == 0) {
            *fd = f;
            return 0;
        }
        release(p, f); /* that process died; the pid may already be someone else's */
    }
    char path[32];
    pid_path(path, pid, "/stat");
    int f = openat(p->rootfd, path, O_RDONLY | O_CLOEXEC);
    if (f < 0) return -1;
    p->nfds++;
    if (read_stat_fd(p, f, pid, st)) {
        release(p, f);
        return -1;
    }
    if (p->nfds <= p->max_fds)
        *fd = f;
    else
        release(p, f);
    return 0;
}

static uint32_t hash_pid(int32_t pid)
{
    return (uint32_t)pid * 2654435761u;
}

/* The set of pids in this sample: slots stamped with an older generation are empty, so it
 * is cleared in O(1) per sample. */
static int set_has(const struct rm_procfs *p, int32_t pid)
{
    for (size_t i = hash_pid(pid) & p->set_mask;; i = (i + 1) & p->set_mask) {
        if (p->set_gen[i] != p->gen) return 0;
        if (p->set_keys[i] == pid) return 1;
    }
}

static void set_add(struct rm_procfs *p, int32_t pid)
{
    size_t i = hash_pid(pid) & p->set_mask;
    while (p->set_gen[i] == p->gen && p->set_keys[i] != pid)
        i = (i + 1) & p->set_mask;
    p->set_gen[i] = p->gen;
    p->set_keys[i] = pid;
}

/* Doubles the member arrays and the set (kept at twice the members, so probing ends). */
static int grow_tree(struct rm_procfs *p)
{
    size_t cap = p->cur_cap * 2;
    if (cap > TREE_MAX) return -1;
    struct rm_pid_stat *c = realloc(p->cur, cap * sizeof(*c));
    if (!c) return -1;
    p->cur = c;
    int *cf = realloc(p->cur_fd, cap * sizeof(*cf));
    if (!cf) return -1;
    p->cur_fd = cf;
    cf = realloc(p->cur_cfd, cap * sizeof(*cf));
    if (!cf) return -1;
    p->cur_cfd = cf;
    struct rm_tree_ent *e = realloc(p->prev, cap * sizeof(*e));
    if (!e) return -1;
    p->prev = e;
    e = realloc(p->next, cap * sizeof(*e));
    if (!e) return -1;
    p->next = e;
    int32_t *k = calloc(2 * cap, sizeof(*k));
    uint32_t *g = calloc(2 * cap, sizeof(*g));
    if (!k || !g) {
        free(k);
        free(g);
        return -1;
    }
    free(p->set_keys);
    free(p->set_gen);
    p->set_keys = k;
    p->set_gen = g;
    p->set_mask = 2 * cap - 1;
    p->cur_cap = cap;
    for (size_t i = 0; i < p->cur_n; i++)
        set_add(p, p->cur[i].pid);
    return 0;
}

static int push(struct rm_procfs *p, const struct rm_pid_stat *st, int fd)
{
    if (p->cur_n == p->cur_cap && grow_tree(p)) {
        release(p, fd);
        return -1;
    }
    p->cur_fd[p->cur_n] = fd;
    p->cur_cfd[p->cur_n] = -1;
    p->cur[p->cur_n++] = *st;
    set_add(p, st->pid);
    return 0;
}

/* Parses a decimal pid at *s, skipping separators; 0 at the end. */
static int32_t next_pid(const char **s, const char *end)
{
    const char *q = *s;
    while (q < end && (unsigned)(*q - '0') > 9)
        q++;
    int64_t v = 0;
    while (q < end && (unsigned)(*q - '0') <= 9) {
        if (v <= INT32_MAX) v = v * 10 + (*q - '0');
        q++;
    }
    *s = q;
    return v > INT32_MAX ? -1 : (int32_t)v;
}

/* Reads a children file through the fd the previous sample kept for this process (same pid
 * and start time: an fd names the process it was opened for, which may since have died and
 * left its pid to another). Returns the byte count (ccap means "maybe more"), or -1 when
 * there is none or it failed (then it is closed and forgotten). */
static ssize_t read_kept_children(struct rm_procfs *p, int32_t pid, uint64_t starttime)
{
    struct rm_tree_ent *e = prev_find(p, pid);
    if (!e || e->cfd < 0 || e->starttime != starttime) return -1;
    ssize_t n = pread(e->cfd, p->cbuf, p->ccap, 0);
    if (n < 0) {
        release(p, e->cfd);
        e->cfd = -1;
    }
    return n;
}

/* Opens and reads a children file; the fd is kept in p->cur_cfd[member] when member >= 0
 * and there is room under max_fds, else closed. */
static ssize_t read_new_children(struct rm_procfs *p, const char *path, ssize_t member)
{
    if (member < 0) return rm_procfs_slurp(p, path, p->cbuf, p->ccap);
    int f = p->cur_cfd[member];
    if (f < 0) {
        f = openat(p->rootfd, path, O_RDONLY | O_CLOEXEC);
        if (f < 0) return -1;
        p->nfds++;
    }
    ssize_t n = pread(f, p->cbuf, p->ccap, 0);
    int e = errno;
    if (n >= 0 && p->nfds <= p->max_fds) {
        p->cur_cfd[member] = f;
    } else {
        release(p, f);
        p->cur_cfd[member] = -1;
    }
    errno = e;
    return n;
}

/* Adds the children listed in PID/task/TID/children; member >= 0 (a single-threaded
 * member's index in cur, tid == pid) lets the file's fd be kept. Returns 0, NO_CHILDREN_FILE
 * if the process exists but the file does not, or -1 (out of memory). */
static int add_children(struct rm_procfs *p, int32_t pid, int32_t tid, ssize_t member)
{
    char path[64];
    size_t l = pid_path(path, pid, "/task/");
    l += rm_fmt_u64((uint64_t)tid, path + l);
    memcpy(path + l, "/children", 10);
    ssize_t n;
    for (;;) {
        n = member >= 0 ? read_kept_children(p, pid, p->cur[member].starttime) : -1;
        if (n < 0) n = read_new_children(p, path, member);
        if (n < 0) {
            if (errno != ENOENT) return 0; /* ESRCH & co: exited while we looked */
            pid_path(path, pid, "/stat");
            return faccessat(p->rootfd, path, F_OK, 0) == 0 ? NO_CHILDREN_FILE : 0;
        }
        if ((size_t)n < p->ccap) break;
        char *nb = realloc(p->cbuf, p->ccap * 2); /* thousands of children: rare */
        if (!nb) return -1;
        p->cbuf = nb;
        p->ccap *= 2;
    }
    const char *s = p->cbuf, *end = p->cbuf + n;
    for (;;) {
        int32_t c = next_pid(&s, end);
        if (c == 0) break;
        if (c < 0 || set_has(p, c)) continue;
        struct rm_pid_stat st;
        int fd;
        if (read_member(p, c, &st, &fd)) continue;
        /* The ppid check drops a pid that exited and was reused between the two reads. */
        if (st.ppid != pid) {
            release(p, fd);
            continue;
        }
        if (push(p, &st, fd)) return -1;
    }
    return 0;
}

/* getdents64 over the directory fd; calls fn for each all-digit name. */
static int each_numeric_entry(struct rm_procfs *p, int dfd,
                              int (*fn)(struct rm_procfs *, int32_t, void *), void *arg)
{
    if (lseek(dfd, 0, SEEK_SET) < 0) return 0;
    for (;;) {
        long n = syscall(SYS_getdents64, dfd, p->dents, sizeof(p->dents));
        if (n <= 0) return 0;
        for (long off = 0; off < n;) {
            struct linux_dirent64 *d = (struct linux_dirent64 *)(p->dents + off);
            off += d->d_reclen;
            const char *s = d->d_name;
            int32_t id = 0;
            if ((unsigned)(*s - '0') > 9) continue;
            id = next_pid(&s, s + strlen(s));
            if (id <= 0 || *s) continue;
            int r = fn(p, id, arg);
            if (r) return r;
        }
    }
}

static int task_children(struct rm_procfs *p, int32_t tid, void *arg)
{
    return add_children(p, *(int32_t *)arg, tid, -1);
}

static int walk_children(struct rm_procfs *p)
{
    for (size_t i = 0; i < p->cur_n; i++) {
        int32_t pid = p->cur[i].pid;
        int r;
        if (p->cur[i].num_threads <= 1) {
            r = add_children(p, pid, pid, (ssize_t)i);
        } else {
            char path[32];
            pid_path(path, pid, "/task");
            int dfd = openat(p->rootfd, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
            if (dfd < 0) continue; /* exited */
            r = each_numeric_entry(p, dfd, task_children, &pid);
            close(dfd);
        }
        if (r) return r;
    }
    return 0;
}

static int scan_one(struct rm_procfs *p, int32_t pid, void *arg)
{
    (void)arg;
    if (p->scan_n == p->scan_cap) {
        size_t cap = p->scan_cap ? p->scan_cap * 2 : 1024;
        if (cap > TREE_MAX) return -1;
        struct rm_pid_stat *s = realloc(p->scan, cap * sizeof(*s));
        if (!s) return -1;
        p->scan = s;
        p->scan_cap = cap;
    }
    if (read_pid_stat(p, pid, &p->scan[p->scan_n]) == 0) p->scan_n++;
    return 0;
}

/* Fallback: every process's stat, then the root's descendants by ppid. Parents are usually
 * listed before their children, so the loop mostly ends after two passes. Returns 0, 1 if
 * the root is not there, -1 (out of memory). */
static int walk_scan(struct rm_procfs *p, int32_t root)
{
    p->scan_n = 0;
    if (each_numeric_entry(p, p->rootfd, scan_one, NULL)) return -1;
    const struct rm_pid_stat *rs = NULL;
    for (size_t i = 0; i < p->scan_n && !rs; i++)
        if (p->scan[i].pid == root) rs = &p->scan[i];
    if (!rs) return 1;
    if (push(p, rs, -1)) return -1;
    for (int changed = 1; changed;) {
        changed = 0;
        for (size_t i = 0; i < p->scan_n; i++) {
            const struct rm_pid_stat *s = &p->scan[i];
            if (set_has(p, s->ppid) && !set_has(p, s->pid)) {
                if (push(p, s, -1)) return -1;
                changed = 1;
            }
        }
    }
    return 0;
}

/* In-place heapsort by pid: qsort may allocate, and this runs every sample. */
static void sift(struct rm_tree_ent *a, size_t i, size_t n)
{
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= n) return;
        if (c + 1 < n && a[c + 1].pid > a[c].pid) c++;
        if (a[i].pid >= a[c].pid) return;
        struct rm_tree_ent t = a[i];
        a[i] = a[c];
        a[c] = t;
        i = c;
    }
}

static void sort_ents(struct rm_tree_ent *a, size_t n)
{
    for (size_t i = n / 2; i-- > 0;)
        sift(a, i, n);
    for (size_t i = n; i-- > 1;) {
        struct rm_tree_ent t = a[0];
        a[0] = a[i];
        a[i] = t;
        sift(a, 0, i);
    }
}

static void drop_cur(struct rm_procfs *p)
{
    for (size_t i = 0; i < p->cur_n; i++) {
        release(p, p->cur_fd[i]);
        release(p, p->cur_cfd[i]);
    }
    p->cur_n = 0;
}

static void reset_tree(struct rm_procfs *p, int32_t root)
{
    for (size_t i = 0; i < p->prev_n; i++) {
        release(p, p->prev[i].fd);
        release(p, p->prev[i].cfd);
    }
    p->tree_root = root;
    p->tree_have_prev = 0;
    p->prev_n = 0;
    p->last_pid_valid = 0;
}

/* The last field of /proc/loadavg: the last pid allocated (in our pid namespace, which
 * sees every pid a descendant gets, whatever namespace it is in). */
static int read_last_pid(struct rm_procfs *p, uint64_t *out)
{
    char b[128];
    if (p->loadavg_fd < 0) return -1;
    ssize_t n = pread(p->loadavg_fd, b, sizeof(b), 0);
    if (n <= 0) return -1;
    while (n > 0 && (b[n - 1] == '\n' || b[n - 1] == ' '))
        n--;
    ssize_t i = n;
    while (i > 0 && (unsigned)(b[i - 1] - '0') <= 9)
        i--;
    if (i == n || n - i > 19) return -1;
    uint64_t v = 0;
    for (; i < n; i++)
        v = v * 10 + (uint64_t)(b[i] - '0');
    *out = v;
    return 0;
}

/* Re-reads the previous sample's members, in order (cur[i] is prev[i]). Returns 0, or -1
 * with everything handed back when one exited or changed parent: then walk. */
static int refresh_members(struct rm_procfs *p)
{
    for (size_t i = 0; i < p->prev_n; i++) {
        const struct rm_tree_ent *e = &p->prev[i];
        struct rm_pid_stat st;
        int fd;
        int ok = read_member(p, e->pid, &st, &fd) == 0;
        if (ok && (st.ppid != e->ppid || st.starttime != e->starttime)) {
            release(p, fd);
            ok = 0;
        }
        if (!ok || push(p, &st, fd)) {
            for (size_t j = 0; j < p->cur_n; j++)
                p->prev[j].fd = p->cur_fd[j];
            p->cur_n = 0;
            return -1;
        }
    }
    return 0;
}

/* Full discovery. Returns 0, 1 if the root is gone, -1 (out of memory). */
static int walk(struct rm_procfs *p, int32_t root)
{
    if (p->walk_mode == RM_WALK_SCAN || p->use_scan) return walk_scan(p, root);
    struct rm_pid_stat st;
    int fd;
    if (read_member(p, root, &st, &fd)) return 1;
    if (push(p, &st, fd)) return -1;
    int r = walk_children(p);
    if (r != NO_CHILDREN_FILE) return r;
    p->use_scan = 1;
    drop_cur(p);
    p->gen++;
    return walk_scan(p, root);
}

int rm_procfs_tree_sample(struct rm_procfs *p, pid_t root, int64_t mono_ns,
                          struct rm_tree_sample *out)
{
    return rm_procfs_tree_sample_since(p, root, mono_ns, -1, out);
}

/* The members in cur become the sample: RSS summed, ticks since the previous sample (see the
 * top of this file), the table kept for the next. */
static void account(struct rm_procfs *p, int64_t mono_ns, struct rm_tree_sample *out)
{
    uint64_t rss_pages = 0;
    for (size_t i = 0; i < p->cur_n; i++) {
        const struct rm_pid_stat *s = &p->cur[i];
        rss_pages += s->rss_pages;
        /* The children fd: opened in this walk, else the one the same process kept. */
        int cfd = p->cur_cfd[i];
        struct rm_tree_ent *e = cfd < 0 ? prev_find(p, s->pid) : NULL;
        if (e && e->starttime == s->starttime) {
            cfd = e->cfd;
            e->cfd = -1;
        }
        p->next[i] = (struct rm_tree_ent){
            s->pid, s->ppid, p->cur_fd[i], cfd, s->starttime, s->utime + s->stime, s->num_threads};
    }
    sort_ents(p->next, p->cur_n);
    uint64_t ticks = 0;
    size_t k = 0;
    for (size_t i = 0; i < p->cur_n; i++) {
        const struct rm_tree_ent *e = &p->next[i];
        while (k < p->prev_n && p->prev[k].pid < e->pid)
            k++;
        if (k < p->prev_n && p->prev[k].pid == e->pid && p->prev[k].starttime == e->starttime)
            ticks += e->ticks > p->prev[k].ticks ? e->ticks - p->prev[k].ticks : 0;
        else
            ticks += e->ticks; /* new to the tree: see the top of this file */
    }
    out->nprocs = (int)p->cur_n;
    out->rss_bytes = rss_pages * (uint64_t)p->page_size;
    if (p->tree_have_prev) {
        out->ticks = ticks;
        double dt = (double)(mono_ns - p->tree_prev_ns) / 1e9;
        if (dt > 0) out->cpu_pct = (double)ticks * 100.0 / (dt * (double)p->clk_tck);
    }
    /* Members that left the tree: close what they kept open. */
    for (size_t i = 0; i < p->prev_n; i++) {
        release(p, p->prev[i].fd);
        release(p, p->prev[i].cfd);
    }
    struct rm_tree_ent *t = p->prev;
    p->prev = p->next;
    p->next = t;
    p->prev_n = p->cur_n;
    p->cur_n = 0;
    p->tree_prev_ns = mono_ns;
    p->tree_have_prev = 1;
}

/* A new key (root) starts a new history; a first sample told when the workload did not run
 * yet counts every member's ticks as spent since then. */
static void begin_sample(struct rm_procfs *p, int32_t key, int64_t mono_ns, int64_t born_after_ns)
{
    if (p->tree_root != key) reset_tree(p, key);
    if (!p->tree_have_prev && born_after_ns >= 0 && born_after_ns < mono_ns) {
        /* A root that did not run at born_after_ns: an empty tree then, so every member's
         * ticks count as new (below) and the first row covers the command's first interval. */
        p->tree_have_prev = 1;
        p->tree_prev_ns = born_after_ns;
    }
    p->gen++;
    p->cur_n = 0;
}

int rm_procfs_tree_sample_since(struct rm_procfs *p, pid_t root, int64_t mono_ns,
                                int64_t born_after_ns, struct rm_tree_sample *out)
{
    *out = (struct rm_tree_sample){.cpu_pct = NAN};
    if (root <= 0 || root > INT32_MAX) return 1;
    begin_sample(p, (int32_t)root, mono_ns, born_after_ns);
    uint64_t last_pid = 0;
    int have_last_pid = p->walk_mode == RM_WALK_AUTO && read_last_pid(p, &last_pid) == 0;
    int r = -1;
    if (have_last_pid && p->tree_have_prev && p->last_pid_valid && last_pid == p->last_pid)
        r = refresh_members(p);
    if (r != 0) {
        p->gen++;
        r = walk(p, (int32_t)root);
        if (r) {
            drop_cur(p);
            if (r == 1) reset_tree(p, (int32_t)root);
            return r;
        }
        /* Read before the walk: a fork during it changes the value and forces the next. */
        p->last_pid = last_pid;
        p->last_pid_valid = have_last_pid;
    }
    account(p, mono_ns, out);
    return 0;
}

/* Whether a listed pid is the recorder's own: itself, or a child of it other than root (an
 * nvidia-smi collector, the status line's watcher). */
static int recorders_own(const struct rm_pid_stat *st, int32_t self, int32_t root)
{
    return self > 0 && (st->pid == self || (st->ppid == self && st->pid != root));
}

int rm_procfs_set_sample(struct rm_procfs *p, pid_t root, const int32_t *pids, size_t n,
                         int32_t self, int64_t mono_ns, int64_t born_after_ns,
                         struct rm_tree_sample *out)
{
    *out = (struct rm_tree_sample){.cpu_pct = NAN};
    begin_sample(p, RM_PROCFS_SET_KEY, mono_ns, born_after_ns);
    p->last_pid_valid = 0;
    if (root > 0 && root <= INT32_MAX) {
        int r = walk(p, (int32_t)root);
        if (r < 0) {
            drop_cur(p);
            return -1;
        }
        if (r == 1) drop_cur(p); /* the root is gone: the listed pids alone */
    }
    for (size_t i = 0; i < n; i++) {
        if (pids[i] <= 0 || set_has(p, pids[i])) continue;
        struct rm_pid_stat st;
        int fd;
        if (read_member(p, pids[i], &st, &fd)) continue; /* left since the list was read */
        if (recorders_own(&st, self, (int32_t)root)) {
            release(p, fd);
            continue;
        }
        if (push(p, &st, fd)) {
            drop_cur(p);
            return -1;
        }
    }
    account(p, mono_ns, out);
    return 0;
}

size_t rm_procfs_tree_members(const struct rm_procfs *p, struct rm_tree_member *out, size_t max)
{
    for (size_t i = 0; i < p->prev_n && i < max; i++)
        out[i] = (struct rm_tree_member){p->prev[i].pid, p->prev[i].ppid, p->prev[i].starttime,
                                         p->prev[i].num_threads};
    return p->prev_n;
}
