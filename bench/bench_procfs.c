/* Micro-benchmark of one /proc sample (cpu + mem + process tree), printed in microseconds.
 * Standalone; build from the repository root (after `make`, which builds librunmon.a):
 *   cc -std=c11 -D_GNU_SOURCE -I. -O2 bench/bench_procfs.c bench/bench_common.c build/librunmon.a \
 *     -ljansson -lpthread -lm -o build/bench_procfs
 *   build/bench_procfs [iterations] [tree_children]
 * The tree is this process plus tree_children sleeping children (default 8), one of them
 * with 4 threads. RUNMON_PROC_ROOT is honoured.
 */
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/rm_time.h"
#include "bench/bench_common.h"
#include "monitor/procfs.h"

#define MAXCPU 4096

static struct rm_cpu_pct g_pc[MAXCPU];
static int g_ids[MAXCPU];

static void *sleeper(void *arg)
{
    (void)arg;
    for (;;)
        pause();
    return NULL;
}

/* One full sample; per_cpu selects the per-CPU rows; returns 0 if all parts worked. */
static int sample(struct rm_procfs *p, int per_cpu, struct rm_tree_sample *t)
{
    struct rm_cpu_pct all;
    struct rm_mem m;
    int n;
    int r = rm_procfs_cpu_sample(p, &all, per_cpu ? g_pc : NULL, per_cpu ? g_ids : NULL,
                                 per_cpu ? MAXCPU : 0, &n);
    if (r < 0 || rm_procfs_read_mem(p, &m)) return -1;
    return rm_procfs_tree_sample(p, getpid(), rm_now_monotonic_ns(), t) == 0 ? 0 : -1;
}

static void run(struct rm_procfs *p, const char *name, int per_cpu, int iters)
{
    struct rm_tree_sample t;
    sample(p, per_cpu, &t); /* warm up: tables sized, first sample taken */
    int64_t w0 = rm_now_monotonic_ns(), c0 = bench_cpu_ns();
    for (int i = 0; i < iters; i++)
        if (sample(p, per_cpu, &t)) {
            fprintf(stderr, "sample failed\n");
            exit(1);
        }
    int64_t w1 = rm_now_monotonic_ns(), c1 = bench_cpu_ns();
    double us = (double)(c1 - c0) / 1e3 / iters;
    printf("%-28s %8.1f us cpu %8.1f us wall  (nprocs %d)  at 10 Hz: %.4f %% of a core\n", name, us,
           (double)(w1 - w0) / 1e3 / iters, t.nprocs, us * 10 / 1e6 * 100);
}

int main(int argc, char **argv)
{
    int iters = argc > 1 ? atoi(argv[1]) : 2000;
    int nkids = argc > 2 ? atoi(argv[2]) : 8;
    pid_t kids[256];
    if (nkids > 256) nkids = 256;
    for (int i = 0; i < nkids; i++) {
        kids[i] = fork();
        if (kids[i] == 0) {
            if (i == 0)
                for (int k = 0; k < 3; k++) {
                    pthread_t th;
                    pthread_create(&th, NULL, sleeper, NULL);
                }
            for (;;)
                pause();
        }
    }
    usleep(100000);
    const char *root = getenv("RUNMON_PROC_ROOT") ? getenv("RUNMON_PROC_ROOT") : "/proc";
    char err[256];
    struct rm_procfs *p = rm_procfs_open(root, err, sizeof(err));
    if (!p) {
        fprintf(stderr, "%s\n", err);
        return 1;
    }
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    printf("bench_procfs: %d iterations, %ld CPUs online, tree = self + %d children\n", iters, ncpu,
           nkids);
    run(p, "sample, per-CPU off", 0, iters);
    run(p, "sample, per-CPU on", 1, iters);
    /* What a sample costs when the tree must be walked (a pid was allocated). */
    struct rm_procfs *q = rm_procfs_open(root, err, sizeof(err));
    rm_procfs_set_walk(q, RM_WALK_EVERY);
    run(q, "sample, children walk", 0, iters);
    rm_procfs_set_walk(q, RM_WALK_SCAN);
    run(q, "sample, /proc scan walk", 0, iters / 4 + 1);
    rm_procfs_close(q);

    /* Parts alone. */
    struct rm_cpu_times ct;
    struct rm_mem m;
    struct rm_tree_sample t;
    int64_t c0 = bench_cpu_ns();
    for (int i = 0; i < iters; i++)
        rm_procfs_read_cpu(p, &ct, NULL, NULL, 0, NULL);
    int64_t c1 = bench_cpu_ns();
    for (int i = 0; i < iters; i++)
        rm_procfs_read_mem(p, &m);
    int64_t c2 = bench_cpu_ns();
    for (int i = 0; i < iters; i++)
        rm_procfs_tree_sample(p, getpid(), rm_now_monotonic_ns(), &t);
    int64_t c3 = bench_cpu_ns();
    printf("parts: /proc/stat %.1f us, meminfo %.1f us, tree %.1f us\n",
           (double)(c1 - c0) / 1e3 / iters, (double)(c2 - c1) / 1e3 / iters,
           (double)(c3 - c2) / 1e3 / iters);

    /* Formatting one cpu.csv row's 11 numbers: snprintf against rm_fmt_fixed2. */
    char buf[64];
    volatile size_t sink = 0;
    double v = 12.3456;
    int reps = iters * 100;
    c0 = bench_cpu_ns();
    for (int i = 0; i < reps; i++)
        sink += (size_t)snprintf(buf, sizeof(buf), "%.2f", v + i);
    c1 = bench_cpu_ns();
    for (int i = 0; i < reps; i++)
        sink += rm_fmt_fixed2(v + i, buf);
    c2 = bench_cpu_ns();
    printf("format one number: snprintf %.3f us, rm_fmt_fixed2 %.3f us\n",
           (double)(c1 - c0) / 1e3 / reps, (double)(c2 - c1) / 1e3 / reps);
    rm_procfs_close(p);
    for (int i = 0; i < nkids; i++) {
        kill(kids[i], SIGKILL);
        waitpid(kids[i], NULL, 0);
    }
    return (int)(sink == 0);
}
