/* runmon as the recorded command's reaper; see reaper.h. */
#include "monitor/reaper.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/alloc.h"
#include "base/fileio.h"
#include "monitor/procfs.h"

/* A walk stops growing here: a fork bomb is cut to this many per round, and the caller's
 * next round finds the rest. */
#define WALK_MAX 65536

struct proc {
    pid_t pid;
    uint64_t start; /* stat's starttime: tells this process from a later one with its pid */
};

struct walk {
    pid_t *queue; /* every pid met, in the order met (the BFS queue) */
    size_t nq, qcap;
    struct proc *live; /* the live ones among them */
    size_t nlive, livecap;
    char *buf; /* file contents */
    size_t bufcap;
};

int rm_reaper_enable(void)
{
    return prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
}

/* A children or stat file larger than this is not one /proc writes (WALK_MAX pids of a
 * children file take well under 1 MiB). */
#define WALK_FILE_MAX (16u << 20)

/* The whole file into w->buf (NUL-terminated), growing it. Its length, or -1 with errno. */
static ssize_t slurp(struct walk *w, const char *path)
{
    return rm_read_file_at(AT_FDCWD, path, WALK_FILE_MAX, &w->buf, &w->bufcap, NULL, 0);
}

/* The pids of a children file ("12 34 "), queued. -1 when the file cannot be read. */
static int queue_children(struct walk *w, const char *path)
{
    if (slurp(w, path) < 0) return -1;
    for (char *p = w->buf, *end; *p; p = end) {
        long v = strtol(p, &end, 10);
        if (end == p) break;
        if (v <= 0 || w->nq >= WALK_MAX) continue;
        if (w->nq == w->qcap) {
            w->qcap = w->qcap ? w->qcap * 2 : 64;
            w->queue = rm_xrealloc(w->queue, w->qcap * sizeof *w->queue);
        }
        w->queue[w->nq++] = (pid_t)v;
    }
    return 0;
}

/* The process's stat, or -1 when it is gone (or not a process: never signal then). */
static int read_stat(struct walk *w, pid_t pid, struct rm_pid_stat *st)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    ssize_t n = slurp(w, path);
    if (n <= 0 || rm_parse_pid_stat(w->buf, (size_t)n, st) != 0 || st->pid != pid) return -1;
    return 0;
}

/* Queues the children of every thread of pid (a child belongs to the thread that forked it). */
static void queue_threads_children(struct walk *w, pid_t pid, int64_t nthreads)
{
    char path[96];
    if (nthreads == 1) {
        snprintf(path, sizeof path, "/proc/%d/task/%d/children", (int)pid, (int)pid);
        (void)queue_children(w, path);
        return;
    }
    snprintf(path, sizeof path, "/proc/%d/task", (int)pid);
    DIR *d = opendir(path);
    if (!d) return;
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        if (de->d_name[0] < '1' || de->d_name[0] > '9') continue;
        snprintf(path, sizeof path, "/proc/%d/task/%.20s/children", (int)pid, de->d_name);
        (void)queue_children(w, path);
    }
    closedir(d);
}

static int seen_before(const struct walk *w, size_t i)
{
    for (size_t k = 0; k < i; k++)
        if (w->queue[k] == w->queue[i]) return 1;
    return 0;
}

/* Everything under the calling thread's children, breadth first. 0, or -1 when the calling
 * thread's children file cannot be read. */
static int walk(struct walk *w)
{
    char path[96];
    snprintf(path, sizeof path, "/proc/%d/task/%d/children", (int)getpid(), (int)gettid());
    if (queue_children(w, path) < 0) return -1;
    for (size_t i = 0; i < w->nq; i++) {
        /* A pid met twice (its parent died during the walk and it moved up) is one process;
         * the queue is short in practice, and bounded by WALK_MAX. */
        if (i < 4096 && seen_before(w, i)) continue;
        struct rm_pid_stat st;
        if (read_stat(w, w->queue[i], &st) < 0 || st.state == 'Z' || st.state == 'X') continue;
        if (w->nlive == w->livecap) {
            w->livecap = w->livecap ? w->livecap * 2 : 64;
            w->live = rm_xrealloc(w->live, w->livecap * sizeof *w->live);
        }
        w->live[w->nlive++] = (struct proc){w->queue[i], st.starttime};
        queue_threads_children(w, w->queue[i], st.num_threads);
    }
    return 0;
}

static void walk_free(struct walk *w)
{
    free(w->queue);
    free(w->live);
    free(w->buf);
}

/* sig to p, if p is still the process the walk saw. 1 when it was sent. */
static int send_to(struct walk *w, const struct proc *p, int sig)
{
    int fd = (int)syscall(SYS_pidfd_open, p->pid, 0U);
    if (fd < 0 && errno != ENOSYS) return 0; /* gone */
    /* The pidfd was opened after the walk read the start time: if the start time is still the
     * same now, the pid was not reused in between, so the pidfd is that process. */
    struct rm_pid_stat st;
    int same = read_stat(w, p->pid, &st) == 0 && st.starttime == p->start;
    int sent = 0;
    if (same && fd >= 0)
        sent = syscall(SYS_pidfd_send_signal, fd, sig, NULL, 0U) == 0;
    else if (same) /* no pidfds (kernel < 5.3): a window of a few microseconds remains */
        sent = kill(p->pid, sig) == 0;
    if (fd >= 0) close(fd);
    return sent;
}

int rm_reaper_signal(int sig)
{
    struct walk w = {0};
    if (walk(&w) < 0) {
        walk_free(&w);
        return -1;
    }
    int n = 0;
    for (size_t i = 0; i < w.nlive; i++)
        n += send_to(&w, &w.live[i], sig);
    walk_free(&w);
    return n;
}

int rm_reaper_reap(pid_t keep)
{
    struct walk w = {0};
    char path[96];
    snprintf(path, sizeof path, "/proc/%d/task/%d/children", (int)getpid(), (int)gettid());
    if (queue_children(&w, path) < 0) {
        walk_free(&w);
        return -1;
    }
    int n = 0;
    for (size_t i = 0; i < w.nq; i++) {
        if (w.queue[i] == keep) continue;
        pid_t r;
        while ((r = waitpid(w.queue[i], NULL, WNOHANG)) < 0 && errno == EINTR) {
        }
        n += r > 0;
    }
    walk_free(&w);
    return n;
}
