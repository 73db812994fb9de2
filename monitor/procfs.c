/* The /proc sampler's handle, /proc/stat and /proc/meminfo. */
#include "monitor/procfs.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "base/fileio.h"
#include "monitor/procfs_internal.h"

#define STATBUF_MAX (16u << 20)

ssize_t rm_procfs_slurp(struct rm_procfs *p, const char *path, char *buf, size_t cap)
{
    int fd = openat(p->rootfd, path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    ssize_t n = rm_read_full(fd, buf, cap);
    int e = errno;
    close(fd);
    errno = e;
    return n;
}

/* Re-reads a kept-open /proc file from offset 0: seq_file restarts its output there, so
 * this returns fresh data without an open/close per sample. A short read is the end:
 * /proc/stat and /proc/meminfo are one seq_file record, handed out whole up to the buffer's
 * size (and a regular file of a test tree ends there too). Asking again to see 0 would make
 * the kernel generate the whole file a second time: half of the sampler's /proc cost. */
static ssize_t pread_all(int fd, char *buf, size_t cap)
{
    size_t n = 0;
    while (n < cap) {
        size_t want = cap - n;
        ssize_t r = pread(fd, buf + n, want, (off_t)n);
        if (r < 0) {
            if (errno == EINTR) continue;
            return -1;
        }
        n += (size_t)r;
        if ((size_t)r < want) break;
    }
    return (ssize_t)n;
}

/* Whether buf holds the whole part of /proc/stat we parse: the first line, and with
 * per-CPU also the line after the last cpu line. */
static int stat_complete(const char *buf, size_t n, int want_percpu)
{
    const char *p = buf, *end = buf + n;
    for (;;) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        if (!nl) return 0;
        if (!want_percpu) return 1;
        p = nl + 1;
        if ((size_t)(end - p) < 4) return 0;
        if (memcmp(p, "cpu", 3)) return 1;
    }
}

/* Reads /proc/stat; grows the buffer (rarely: more CPUs came online) when the cpu lines do
 * not fit. Returns the length or -1. */
static ssize_t read_stat(struct rm_procfs *p, int want_percpu)
{
    for (;;) {
        ssize_t n = pread_all(p->stat_fd, p->statbuf, p->statcap);
        if (n < 0) return -1;
        if ((size_t)n < p->statcap || stat_complete(p->statbuf, (size_t)n, want_percpu)) return n;
        if (p->statcap >= STATBUF_MAX) return -1;
        char *nb = realloc(p->statbuf, p->statcap * 2);
        if (!nb) return -1;
        p->statbuf = nb;
        p->statcap *= 2;
    }
}

static int grow_cpu(struct rm_procfs *p, int want)
{
    int cap = p->cpu_cap ? p->cpu_cap : 8;
    while (cap < want)
        cap *= 2;
    size_t tsz = (size_t)cap * sizeof(struct rm_cpu_times), isz = (size_t)cap * sizeof(int);
    struct rm_cpu_times *a = realloc(p->pc_cur, tsz);
    if (!a) return -1;
    p->pc_cur = a;
    a = realloc(p->pc_prev, tsz);
    if (!a) return -1;
    p->pc_prev = a;
    int *i = realloc(p->ids_cur, isz);
    if (!i) return -1;
    p->ids_cur = i;
    i = realloc(p->ids_prev, isz);
    if (!i) return -1;
    p->ids_prev = i;
    p->cpu_cap = cap;
    return 0;
}

static void errf(char *err, size_t errsz, const char *root, const char *what, int e)
{
    if (errsz)
        snprintf(err, errsz, "%s/%s: %s", root, what, e ? strerror(e) : "unrecognised content");
}

struct rm_procfs *rm_procfs_open(const char *root, char *err, size_t errsz)
{
    if (errsz) err[0] = '\0';
    struct rm_procfs *p = calloc(1, sizeof(*p));
    if (!p) {
        if (errsz) snprintf(err, errsz, "out of memory");
        return NULL;
    }
    p->stat_fd = p->meminfo_fd = p->loadavg_fd = -1;
    p->pc_prev_n = -1;
    p->rootfd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (p->rootfd < 0) {
        if (errsz) snprintf(err, errsz, "%s: %s", root, strerror(errno));
        goto fail;
    }
    p->stat_fd = openat(p->rootfd, "stat", O_RDONLY | O_CLOEXEC);
    if (p->stat_fd < 0) {
        errf(err, errsz, root, "stat", errno);
        goto fail;
    }
    p->meminfo_fd = openat(p->rootfd, "meminfo", O_RDONLY | O_CLOEXEC);
    if (p->meminfo_fd < 0) {
        errf(err, errsz, root, "meminfo", errno);
        goto fail;
    }
    p->loadavg_fd = openat(p->rootfd, "loadavg", O_RDONLY | O_CLOEXEC);
    struct rlimit rl;
    p->max_fds = getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY
                     ? (size_t)(rl.rlim_cur / 4)
                     : 256;
    if (p->max_fds > 256) p->max_fds = 256;
    p->clk_tck = sysconf(_SC_CLK_TCK);
    p->page_size = sysconf(_SC_PAGESIZE);
    if (p->clk_tck <= 0) p->clk_tck = 100;
    if (p->page_size <= 0) p->page_size = 4096;
    long ncpu = sysconf(_SC_NPROCESSORS_CONF);
    if (ncpu < 1 || ncpu > 65536) ncpu = 64;
    p->statcap = 4096 + (size_t)ncpu * 192; /* cpu lines are < 192 bytes each */
    p->statbuf = malloc(p->statcap);
    p->cur_cap = 64;
    p->cur = malloc(p->cur_cap * sizeof(*p->cur));
    p->cur_fd = malloc(p->cur_cap * sizeof(*p->cur_fd));
    p->cur_cfd = malloc(p->cur_cap * sizeof(*p->cur_cfd));
    p->prev = malloc(p->cur_cap * sizeof(*p->prev));
    p->next = malloc(p->cur_cap * sizeof(*p->next));
    p->set_mask = 2 * p->cur_cap - 1;
    p->set_keys = calloc(p->set_mask + 1, sizeof(*p->set_keys));
    p->set_gen = calloc(p->set_mask + 1, sizeof(*p->set_gen));
    p->ccap = 4096;
    p->cbuf = malloc(p->ccap);
    if (!p->statbuf || !p->cur || !p->cur_fd || !p->cur_cfd || !p->prev || !p->next ||
        !p->set_keys || !p->set_gen || !p->cbuf || grow_cpu(p, (int)ncpu)) {
        if (errsz) snprintf(err, errsz, "out of memory");
        goto fail;
    }
    /* Validate both files now, so a wrong root fails at start with a clear message. */
    struct rm_cpu_times all;
    struct rm_mem mem;
    ssize_t n = read_stat(p, 0);
    if (n < 0 || rm_parse_proc_stat(p->statbuf, (size_t)n, &all, NULL, NULL, 0, NULL) < 0) {
        errf(err, errsz, root, "stat", n < 0 ? errno : 0);
        goto fail;
    }
    if (rm_procfs_read_mem(p, &mem)) {
        errf(err, errsz, root, "meminfo", 0);
        goto fail;
    }
    return p;
fail:
    rm_procfs_close(p);
    return NULL;
}

void rm_procfs_close(struct rm_procfs *p)
{
    if (!p) return;
    if (p->rootfd >= 0) close(p->rootfd);
    if (p->stat_fd >= 0) close(p->stat_fd);
    if (p->meminfo_fd >= 0) close(p->meminfo_fd);
    if (p->loadavg_fd >= 0) close(p->loadavg_fd);
    if (p->prev)
        for (size_t i = 0; i < p->prev_n; i++) {
            if (p->prev[i].fd >= 0) close(p->prev[i].fd);
            if (p->prev[i].cfd >= 0) close(p->prev[i].cfd);
        }
    free(p->statbuf);
    free(p->pc_cur);
    free(p->pc_prev);
    free(p->ids_cur);
    free(p->ids_prev);
    free(p->cur);
    free(p->cur_fd);
    free(p->cur_cfd);
    free(p->prev);
    free(p->next);
    free(p->set_keys);
    free(p->set_gen);
    free(p->scan);
    free(p->cbuf);
    free(p);
}

void rm_procfs_set_walk(struct rm_procfs *p, enum rm_walk mode)
{
    p->walk_mode = mode;
}

int rm_procfs_read_cpu(struct rm_procfs *p, struct rm_cpu_times *all, struct rm_cpu_times *percpu,
                       int *cpu_ids, int max, int *n)
{
    int want = percpu && cpu_ids && max > 0;
    ssize_t len = read_stat(p, want);
    if (len < 0) return -1;
    int dummy;
    return rm_parse_proc_stat(p->statbuf, (size_t)len, all, percpu, cpu_ids, max, n ? n : &dummy) <
                   0
               ? -1
               : 0;
}

static uint64_t sat_delta(uint64_t prev, uint64_t cur)
{
    return cur > prev ? cur - prev : 0;
}

int rm_cpu_pct_between(const struct rm_cpu_times *prev, const struct rm_cpu_times *cur,
                       struct rm_cpu_pct *out)
{
    uint64_t d[8] = {
        sat_delta(prev->user, cur->user),     sat_delta(prev->nice, cur->nice),
        sat_delta(prev->system, cur->system), sat_delta(prev->iowait, cur->iowait),
        sat_delta(prev->irq, cur->irq),       sat_delta(prev->softirq, cur->softirq),
        sat_delta(prev->steal, cur->steal),   sat_delta(prev->idle, cur->idle),
    };
    /* Sum in double: eight u64 deltas could overflow u64 on garbage input. */
    double total = 0;
    for (int i = 0; i < 8; i++)
        total += (double)d[i];
    if (total == 0) {
        *out = (struct rm_cpu_pct){.idle = 100.0};
        return 1;
    }
    double k = 100.0 / total;
    out->usr = (double)d[0] * k;
    out->nice = (double)d[1] * k;
    out->sys = (double)d[2] * k;
    out->iowait = (double)d[3] * k;
    out->irq = (double)d[4] * k;
    out->softirq = (double)d[5] * k;
    out->steal = (double)d[6] * k;
    out->idle = (double)d[7] * k;
    return 0;
}

int rm_procfs_cpu_sample(struct rm_procfs *p, struct rm_cpu_pct *all, struct rm_cpu_pct *percpu,
                         int *cpu_ids, int max, int *n)
{
    int want = percpu && cpu_ids && max > 0;
    *n = 0;
    ssize_t len = read_stat(p, want);
    if (len < 0) return -1;
    struct rm_cpu_times now;
    int ncur = -1;
    if (want) {
        int seen = rm_parse_proc_stat(p->statbuf, (size_t)len, &now, p->pc_cur, p->ids_cur,
                                      p->cpu_cap, &ncur);
        if (seen > p->cpu_cap) { /* CPUs came online beyond what we sized for */
            if (grow_cpu(p, seen)) return -1;
            seen = rm_parse_proc_stat(p->statbuf, (size_t)len, &now, p->pc_cur, p->ids_cur,
                                      p->cpu_cap, &ncur);
        }
        if (seen < 0) return -1;
    } else if (rm_parse_proc_stat(p->statbuf, (size_t)len, &now, NULL, NULL, 0, NULL) < 0) {
        return -1;
    }
    int first = !p->have_prev;
    if (!first) {
        rm_cpu_pct_between(&p->prev_all, &now, all);
        if (want && p->pc_prev_n >= 0) {
            /* Match by cpu number: the kernel lists CPUs in ascending order, so walk both
             * lists together and only search when that assumption fails. */
            int k = 0, m = 0;
            for (int j = 0; j < ncur && m < max; j++) {
                int id = p->ids_cur[j], hit = -1;
                while (k < p->pc_prev_n && p->ids_prev[k] < id)
                    k++;
                if (k < p->pc_prev_n && p->ids_prev[k] == id) {
                    hit = k;
                } else {
                    for (int s = 0; s < p->pc_prev_n; s++)
                        if (p->ids_prev[s] == id) {
                            hit = s;
                            break;
                        }
                }
                if (hit < 0) continue; /* just came online: no previous counters */
                rm_cpu_pct_between(&p->pc_prev[hit], &p->pc_cur[j], &percpu[m]);
                cpu_ids[m++] = id;
            }
            *n = m;
        }
    }
    p->prev_all = now;
    if (want) {
        struct rm_cpu_times *t = p->pc_prev;
        p->pc_prev = p->pc_cur;
        p->pc_cur = t;
        int *i = p->ids_prev;
        p->ids_prev = p->ids_cur;
        p->ids_cur = i;
    }
    p->pc_prev_n = ncur;
    p->have_prev = 1;
    return first ? 1 : 0;
}

int rm_procfs_read_mem(struct rm_procfs *p, struct rm_mem *out)
{
    ssize_t n = pread_all(p->meminfo_fd, p->membuf, sizeof(p->membuf));
    if (n < 0) return -1;
    return rm_parse_meminfo(p->membuf, (size_t)n, out);
}
