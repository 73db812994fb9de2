/* Micro-benchmark of one I/O sample (monitor/io_sampler.c: diskstats, net/dev, the three
 * pressure files and the tree's PID/io, rows formatted into io.csv) against its floor, a bare
 * pread of the same five kept-open files. Prints `name value` lines (microseconds of CPU per
 * sample). Built by bench/run.sh (section io-sample):
 *   bench_io DIR [iterations] [tree_children]
 * DIR receives io.csv. The tree is this process plus tree_children sleeping children (each
 * member costs an open, a read and a close of its PID/io per sample). */
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/rm_time.h"
#include "bench/bench_common.h"
#include "monitor/io_sampler.h"
#include "monitor/port.h"

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: bench_io DIR [iterations] [tree_children]\n");
        return 2;
    }
    int iters = argc > 2 ? atoi(argv[2]) : 2000;
    int nkids = argc > 3 ? atoi(argv[3]) : 8;
    pid_t kids[256];
    if (nkids > 256) nkids = 256;
    for (int i = 0; i < nkids; i++)
        if ((kids[i] = fork()) == 0) {
            prctl(PR_SET_PDEATHSIG, SIGKILL); /* never outlive the bench */
            for (;;)
                pause();
        }
    usleep(100000);
    static struct rm_session sess;
    static struct rm_latest latest;
    static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    static atomic_int stop, wpid;
    snprintf(sess.dir, sizeof sess.dir, "%s", argv[1]);
    atomic_store(&wpid, getpid());
    struct rm_port port = {.event = bench_no_event,
                           .set_health = bench_no_health,
                           .lock = &lock,
                           .sess = &sess,
                           .latest = &latest,
                           .stop = &stop,
                           .workload_pid = &wpid,
                           .interval_s = 1};
    struct rm_io_opts o = {
        .interval_s = 1, .with_tree = 1, .proc_root = "/proc", .sys_root = "/sys"};
    static struct rm_io_sampler s;
    char err[256];
    if (rm_io_sampler_open(&s, &port, &o, err, sizeof err) < 0) {
        fprintf(stderr, "%s\n", err);
        return 1;
    }
    rm_io_sampler_sample(&s, rm_now_monotonic_ns()); /* warm up: the device answers cached */
    int64_t c0 = bench_cpu_ns();
    for (int i = 0; i < iters; i++)
        rm_io_sampler_sample(&s, rm_now_monotonic_ns());
    int64_t c1 = bench_cpu_ns();
    const char *files[] = {"/proc/diskstats", "/proc/net/dev", "/proc/pressure/cpu",
                           "/proc/pressure/io", "/proc/pressure/memory"};
    int fds[5];
    for (int k = 0; k < 5; k++)
        fds[k] = open(files[k], O_RDONLY | O_CLOEXEC);
    static char buf[65536];
    int64_t b0 = bench_cpu_ns();
    for (int i = 0; i < iters; i++)
        for (int k = 0; k < 5; k++)
            if (fds[k] >= 0 && pread(fds[k], buf, sizeof buf, 0) < 0) return 1;
    int64_t b1 = bench_cpu_ns();
    printf("io_sample_us %.1f\n", (double)(c1 - c0) / 1e3 / iters);
    printf("bare_preads_us %.1f\n", (double)(b1 - b0) / 1e3 / iters);
    rm_io_sampler_stop(&s);
    for (int i = 0; i < nkids; i++) {
        kill(kids[i], SIGKILL);
        waitpid(kids[i], NULL, 0);
    }
    return 0;
}
