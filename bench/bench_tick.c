/* The floor of a 0.1 s sampler, the recorder bench's in-run baseline: one wakeup per period on
 * an absolute CLOCK_MONOTONIC deadline, a pread of /proc/stat and /proc/meminfo kept open, and
 * one write() of a short row. Whatever runmon does beyond this is its own overhead.
 *   bench_tick PERIOD_MS OUTFILE [wake]   (runs until killed)
 * With "wake" it only sleeps and wakes: the cost of the wakeups alone, so that the bench can
 * tell it apart from the cost of the two /proc reads that every CPU row needs.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    if (argc != 3 && !(argc == 4 && !strcmp(argv[3], "wake"))) {
        fprintf(stderr, "usage: bench_tick PERIOD_MS OUTFILE [wake]\n");
        return 2;
    }
    long period_ns = atol(argv[1]) * 1000000L;
    int stat = open("/proc/stat", O_RDONLY | O_CLOEXEC);
    int mem = open("/proc/meminfo", O_RDONLY | O_CLOEXEC);
    int out = open(argv[2], O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (stat < 0 || mem < 0 || out < 0 || period_ns <= 0) return 1;
    int wake_only = argc == 4;
    static char buf[65536];
    struct timespec due;
    clock_gettime(CLOCK_MONOTONIC, &due);
    for (;;) {
        due.tv_nsec += period_ns;
        while (due.tv_nsec >= 1000000000L) {
            due.tv_sec++;
            due.tv_nsec -= 1000000000L;
        }
        clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &due, NULL);
        if (wake_only) continue;
        ssize_t a = pread(stat, buf, sizeof buf, 0);
        ssize_t b = pread(mem, buf, sizeof buf, 0);
        char row[64];
        int n = snprintf(row, sizeof row, "%ld,%zd,%zd\n", (long)due.tv_sec, a, b);
        if (write(out, row, (size_t)n) != n) return 1;
    }
}
