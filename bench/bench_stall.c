/* Micro-benchmark of one stall sample (monitor/stall_sampler.c: each thread's schedstat read,
 * the stat of those not asleep, the cgroup's pressure, a stall.csv row) over a tree of THREADS
 * threads (this process and THREADS - 1 sleeping threads), as in the recorder: the tree the
 * proc.csv row walked at the same slot (struct rm_proc_tick). Against, in the same run: the
 * sample alone (walking the tree itself), the proc.csv tree walk of the same tree
 * (rm_procfs_tree_sample, what every tick already costs), and the floor, a bare pread of the
 * same 2 x THREADS files kept open. Prints `name value` lines (microseconds of CPU per
 * sample). Built by bench/run.sh (section stall):
 *   bench_stall DIR [iterations] [threads]
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/rm_time.h"
#include "bench/bench_common.h"
#include "monitor/port.h"
#include "monitor/proc_samplers.h"
#include "monitor/procfs.h"
#include "monitor/stall_sampler.h"

static int hold[2]; /* the sleepers block reading it until the end */

static void *sleeper(void *arg)
{
    (void)arg;
    char c;
    while (read(hold[0], &c, 1) < 0)
        ;
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: bench_stall DIR [iterations] [threads]\n");
        return 2;
    }
    int iters = argc > 2 ? atoi(argv[2]) : 200;
    int nthreads = argc > 3 ? atoi(argv[3]) : 1000;
    if (pipe(hold) < 0) return 1;
    pthread_t *t = calloc((size_t)nthreads, sizeof *t);
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, 64 * 1024);
    for (int i = 1; i < nthreads; i++)
        if (pthread_create(&t[i], &attr, sleeper, NULL)) {
            fprintf(stderr, "bench_stall: thread %d: cannot start\n", i);
            return 1;
        }
    static struct rm_session sess;
    static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    static atomic_int stop, wpid;
    snprintf(sess.dir, sizeof sess.dir, "%s", argv[1]);
    atomic_store(&wpid, getpid());
    struct rm_port port = {.event = bench_no_event,
                           .set_health = bench_no_health,
                           .lock = &lock,
                           .sess = &sess,
                           .stop = &stop,
                           .workload_pid = &wpid,
                           .interval_s = 1};
    static struct rm_stall_sampler s;
    char err[256];
    if (rm_stall_sampler_open(&s, &port, "/proc", "/sys", err, sizeof err) < 0) {
        fprintf(stderr, "%s\n", err);
        return 1;
    }
    rm_stall_sampler_sample(&s, rm_now_monotonic_ns()); /* the baseline; files opened */
    /* Alone: the sampler walks the tree itself (a slot proc.csv's row does not share). */
    int64_t a0 = bench_cpu_ns();
    for (int i = 0; i < iters; i++)
        rm_stall_sampler_sample(&s, rm_now_monotonic_ns());
    int64_t a1 = bench_cpu_ns();
    size_t nread = s.ncur;
    /* In the recorder: the proc.csv walk of the same tree at each slot (what every tick
     * already costs, timed apart), its members read by the stall sample (timed). */
    struct rm_procfs *p = rm_procfs_open("/proc", err, sizeof err);
    struct rm_proc_tick tick = {0};
    struct rm_tree_sample ts;
    s.tick = &tick;
    int64_t walk_ns = 0, stall_ns = 0;
    for (int i = 0; i < iters; i++) {
        int64_t w0 = bench_cpu_ns();
        int rc = rm_procfs_tree_sample(p, getpid(), rm_now_monotonic_ns(), &ts);
        tick = (struct rm_proc_tick){(uint64_t)i + 1, (uint64_t)i + 1, p, rc};
        int64_t w1 = bench_cpu_ns();
        rm_stall_sampler_sample(&s, rm_now_monotonic_ns());
        walk_ns += w1 - w0;
        stall_ns += bench_cpu_ns() - w1;
    }
    s.tick = NULL;
    /* The floor: the same files, kept open, read. */
    int *fds = calloc(2 * (size_t)nread, sizeof *fds);
    int nfds = 0;
    for (size_t i = 0; i < nread; i++) {
        char path[64];
        static const char *const names[2] = {"schedstat", "stat"};
        for (int k = 0; k < 2; k++) {
            snprintf(path, sizeof path, "/proc/%d/task/%d/%s", (int)getpid(), (int)s.cur[i].tid,
                     names[k]);
            int fd = open(path, O_RDONLY | O_CLOEXEC);
            if (fd >= 0) fds[nfds++] = fd;
        }
    }
    static char buf[4096];
    int64_t b0 = bench_cpu_ns();
    for (int i = 0; i < iters; i++)
        for (int k = 0; k < nfds; k++)
            if (pread(fds[k], buf, sizeof buf, 0) < 0) return 1;
    int64_t b1 = bench_cpu_ns();
    printf("threads %zu\n", nread);
    printf("kept_fds %d\n", s.nfds);
    printf("stall_sample_us %.1f\n", (double)stall_ns / 1e3 / iters);
    printf("stall_alone_us %.1f\n", (double)(a1 - a0) / 1e3 / iters);
    printf("tree_walk_us %.1f\n", (double)walk_ns / 1e3 / iters);
    printf("bare_preads_us %.1f\n", (double)(b1 - b0) / 1e3 / iters);
    rm_stall_sampler_stop(&s);
    rm_procfs_close(p);
    for (int k = 0; k < nfds; k++)
        close(fds[k]);
    close(hold[1]); /* the sleepers read EOF and end */
    for (int i = 1; i < nthreads; i++)
        pthread_join(t[i], NULL);
    free(fds);
    free(t);
    return 0;
}
