/* The floor of a 0.1 s sampler, the recorder bench's in-run baseline: one wakeup per period on
 * an absolute CLOCK_MONOTONIC deadline, a pread of /proc/stat and /proc/meminfo kept open, and
 * one write() of a short row. Whatever runmon does beyond this is its own overhead.
 *   bench_tick PERIOD_MS OUTFILE [wake]          (runs until killed)
 *   bench_tick PERIOD_MS OUTFILE record PID DIR
 * With "wake" it only sleeps and wakes: the cost of the wakeups alone, so that the bench can
 * tell it apart from the cost of the two /proc reads that every CPU row needs.
 *
 * With "record" it makes the system calls that any recorder of runmon's files must make at
 * 8 GPUs, and nothing else (no parsing, no formatting beyond the floor's one row): the floor's,
 * plus the workload's /proc/PID/stat and /proc/loadavg at each period; a read of a pipe that a
 * child of its own fills with 8 lines of 190 bytes each period (the query's rows), and of two
 * more that it fills once a second (dmon's and pmon's); the reads of the I/O sample once a
 * second (/proc/diskstats, /proc/net/dev, the three pressure files, /proc/PID/io); batched
 * writes of six files in DIR (the three 0.1 s streams every 5 periods, the three 1 s ones once
 * a second), and an fdatasync of each every 100 periods (--flush-seconds 10). The child's CPU
 * is its own, like nvidia-smi's. This is the floor of runmon's feature set: what runmon costs
 * beyond it is its own code.
 *
 * BENCH_TICK_PHASE_MS=P puts the wakeups where the wall clock reads P ms past a multiple of the
 * period (default: a period after the start). Processes that wake at the same instant share
 * warm caches, and the second one's reads cost a fraction of the first one's, so the bench
 * gives each process a phase of its own.
 */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

enum { GPU, CPU, PROC, DMON, APPS, IO, NOUT };

static void next_due(struct timespec *due, long period_ns)
{
    due->tv_nsec += period_ns;
    while (due->tv_nsec >= 1000000000L) {
        due->tv_sec++;
        due->tv_nsec -= 1000000000L;
    }
}

/* The nvidia-smi stand-in: the query's 8 rows each period, dmon's and pmon's once a second. */
static void writer(int gpu, int dmon, int apps, long period_ns)
{
    static char g[8 * 190], d[8 * 80], a[8 * 60];
    memset(g, 'g', sizeof g);
    memset(d, 'd', sizeof d);
    memset(a, 'a', sizeof a);
    for (int i = 0; i < 8; i++)
        g[i * 190 + 189] = d[i * 80 + 79] = a[i * 60 + 59] = '\n';
    struct timespec due;
    clock_gettime(CLOCK_MONOTONIC, &due);
    for (long k = 0;; k++) {
        next_due(&due, period_ns);
        clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &due, NULL);
        if (write(gpu, g, sizeof g) < 0) _exit(0);
        if (k % 10 == 0 && (write(dmon, d, sizeof d) < 0 || write(apps, a, sizeof a) < 0)) _exit(0);
    }
}

/* The first deadline: BENCH_TICK_PHASE_MS (see the top), else now. */
static void first_due(struct timespec *due, long period_ns)
{
    clock_gettime(CLOCK_MONOTONIC, due);
    const char *p = getenv("BENCH_TICK_PHASE_MS");
    if (!p) return;
    struct timespec real;
    clock_gettime(CLOCK_REALTIME, &real);
    long long real_ns = (long long)real.tv_sec * 1000000000LL + real.tv_nsec;
    long long want = atoll(p) * 1000000LL % period_ns;
    long long wait = ((want - real_ns % period_ns) % period_ns + period_ns) % period_ns;
    next_due(due, (long)wait); /* the next wakeup below adds a period to this */
}

static int open_ro(const char *path)
{
    return open(path, O_RDONLY | O_CLOEXEC);
}

static void pread_all(const int *fds, int n, char *buf, size_t cap)
{
    for (int i = 0; i < n; i++)
        if (fds[i] >= 0 && pread(fds[i], buf, cap, 0) < 0) exit(1);
}

static int record(long period_ns, const char *pid, const char *dir)
{
    static char buf[65536], pending[NOUT][65536];
    size_t len[NOUT] = {0};
    char path[4096];
    int per_slot[4], per_second[6], pipes[3][2], files[NOUT];
    const char *names[NOUT] = {"gpu", "cpu", "proc", "dmon", "apps", "io"};
    const char *sys[] = {"/proc/diskstats", "/proc/net/dev", "/proc/pressure/cpu",
                         "/proc/pressure/memory", "/proc/pressure/io"};
    per_slot[0] = open_ro("/proc/stat");
    per_slot[1] = open_ro("/proc/meminfo");
    per_slot[2] = open_ro("/proc/loadavg");
    snprintf(path, sizeof path, "/proc/%s/stat", pid);
    per_slot[3] = open_ro(path);
    for (int i = 0; i < 5; i++)
        per_second[i] = open_ro(sys[i]);
    snprintf(path, sizeof path, "/proc/%s/io", pid);
    per_second[5] = open_ro(path);
    for (int i = 0; i < NOUT; i++) {
        snprintf(path, sizeof path, "%s/%s.csv", dir, names[i]);
        files[i] = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
        if (files[i] < 0) return 1;
    }
    for (int i = 0; i < 3; i++)
        if (pipe2(pipes[i], O_CLOEXEC) < 0) return 1;
    pid_t child = fork();
    if (child < 0) return 1;
    if (child == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        writer(pipes[0][1], pipes[1][1], pipes[2][1], period_ns);
    }
    for (int i = 0; i < 3; i++) {
        close(pipes[i][1]);
        fcntl(pipes[i][0], F_SETFL, O_NONBLOCK);
    }
    struct timespec due;
    first_due(&due, period_ns);
    for (long k = 1;; k++) {
        next_due(&due, period_ns);
        clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &due, NULL);
        pread_all(per_slot, 4, buf, sizeof buf);
        ssize_t n = read(pipes[0][0], pending[GPU] + len[GPU], sizeof pending[GPU] / 2);
        if (n > 0) len[GPU] += (size_t)n;
        for (int s = CPU; s <= PROC; s++)
            len[s] += (size_t)snprintf(pending[s] + len[s], 64, "%ld,%ld\n", (long)due.tv_sec, k);
        if (k % 10 == 0) {
            for (int s = DMON; s <= APPS; s++) {
                n = read(pipes[s - DMON + 1][0], pending[s] + len[s], sizeof pending[s] / 2);
                if (n > 0) len[s] += (size_t)n;
            }
            pread_all(per_second, 6, buf, sizeof buf);
            len[IO] +=
                (size_t)snprintf(pending[IO] + len[IO], 64, "%ld,%ld\n", (long)due.tv_sec, k);
        }
        for (int s = 0; s < NOUT; s++) {
            if (!len[s] || (s <= PROC ? k % 5 : k % 10)) continue;
            if (write(files[s], pending[s], len[s]) != (ssize_t)len[s]) return 1;
            len[s] = 0;
        }
        if (k % 100 == 0)
            for (int s = 0; s < NOUT; s++)
                fdatasync(files[s]);
    }
}

int main(int argc, char **argv)
{
    int wake_only = argc == 4 && !strcmp(argv[3], "wake");
    int recorder = argc == 6 && !strcmp(argv[3], "record");
    if (argc != 3 && !wake_only && !recorder) {
        fprintf(stderr, "usage: bench_tick PERIOD_MS OUTFILE [wake | record PID DIR]\n");
        return 2;
    }
    long period_ns = atol(argv[1]) * 1000000L;
    int stat = open("/proc/stat", O_RDONLY | O_CLOEXEC);
    int mem = open("/proc/meminfo", O_RDONLY | O_CLOEXEC);
    int out = open(argv[2], O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (stat < 0 || mem < 0 || out < 0 || period_ns <= 0) return 1;
    if (recorder) return record(period_ns, argv[4], argv[5]);
    static char buf[65536];
    struct timespec due;
    first_due(&due, period_ns);
    for (;;) {
        next_due(&due, period_ns);
        clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &due, NULL);
        if (wake_only) continue;
        ssize_t a = pread(stat, buf, sizeof buf, 0);
        ssize_t b = pread(mem, buf, sizeof buf, 0);
        char row[64];
        int n = snprintf(row, sizeof row, "%ld,%zd,%zd\n", (long)due.tv_sec, a, b);
        if (write(out, row, (size_t)n) != n) return 1;
    }
}
