#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/rm_time.h"
#include "monitor/procfs.h"

#define EPS 1e-9

/* cmocka 1.1.5 has only a float comparison; percentages need double. */
#define assert_double_equal(a, b, eps)                                                             \
    do {                                                                                           \
        double a_ = (a), b_ = (b);                                                                 \
        if (!(fabs(a_ - b_) <= (eps))) fail_msg("%s = %.12g, expected %.12g", #a, a_, b_);         \
    } while (0)

static const char *fixtures(void)
{
    const char *f = getenv("FIXTURES");
    return f ? f : "fixtures";
}

static struct rm_procfs *open_fixture(const char *name)
{
    char path[PATH_MAX], err[256];
    snprintf(path, sizeof(path), "%s/proc/%s", fixtures(), name);
    struct rm_procfs *p = rm_procfs_open(path, err, sizeof(err));
    if (!p) fail_msg("open %s: %s", path, err);
    return p;
}

static char *slurp_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    static char buf[65536];
    size_t n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = '\0';
    return strdup(buf);
}

/* Writes content to dir/rel, creating parent directories. Overwriting keeps the inode, as
 * the kept-open /proc/stat fd needs. */
static void write_file(const char *dir, const char *rel, const char *content)
{
    char path[PATH_MAX];
    snprintf(path, sizeof(path), "%s/%s", dir, rel);
    for (char *s = path + strlen(dir) + 1; *s; s++) {
        if (*s != '/') continue;
        *s = '\0';
        if (mkdir(path, 0755) && errno != EEXIST) fail_msg("mkdir %s", path);
        *s = '/';
    }
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(content, f);
    fclose(f);
}

static void copy_fixture(const char *from, const char *dir, const char *file)
{
    char path[PATH_MAX];
    snprintf(path, sizeof(path), "%s/proc/%s/%s", fixtures(), from, file);
    char *s = slurp_file(path);
    write_file(dir, file, s);
    free(s);
}

static int rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb, (void)flag, (void)ftw;
    return remove(path);
}

static void rm_rf(const char *dir)
{
    nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

static void make_tmp(char *dir)
{
    snprintf(dir, PATH_MAX, "%s/rm-procfs.XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    assert_non_null(mkdtemp(dir));
}

static void assert_pct(const struct rm_cpu_pct *p, double usr, double nice, double sys,
                       double iowait, double irq, double softirq, double steal, double idle)
{
    assert_double_equal(p->usr, usr, EPS);
    assert_double_equal(p->nice, nice, EPS);
    assert_double_equal(p->sys, sys, EPS);
    assert_double_equal(p->iowait, iowait, EPS);
    assert_double_equal(p->irq, irq, EPS);
    assert_double_equal(p->softirq, softirq, EPS);
    assert_double_equal(p->steal, steal, EPS);
    assert_double_equal(p->idle, idle, EPS);
}

static void stat_percentages_between_two_roots(void **state)
{
    (void)state;
    struct rm_procfs *a = open_fixture("root1"), *b = open_fixture("root2");
    struct rm_cpu_times t1, t2, pc[8];
    int ids[8], n;
    assert_int_equal(rm_procfs_read_cpu(a, &t1, pc, ids, 8, &n), 0);
    assert_int_equal(n, 4);
    assert_int_equal(ids[3], 3);
    assert_true(t1.guest == 300 && t1.steal == 100);
    assert_int_equal(rm_procfs_read_cpu(b, &t2, NULL, NULL, 0, NULL), 0);
    struct rm_cpu_pct pct;
    /* Deltas: user 300, nice 10, system 100, idle 500, iowait -10 -> 0, irq 10, softirq 20,
     * steal 60 (guest +100 ignored): total 1000. */
    assert_int_equal(rm_cpu_pct_between(&t1, &t2, &pct), 0);
    assert_pct(&pct, 30, 1, 10, 0, 1, 2, 6, 50);
    /* Same sample twice: no tick elapsed. */
    assert_int_equal(rm_cpu_pct_between(&t2, &t2, &pct), 1);
    assert_pct(&pct, 0, 0, 0, 0, 0, 0, 0, 100);
    /* Swapped: every counter but iowait goes backwards and saturates to 0. */
    assert_int_equal(rm_cpu_pct_between(&t2, &t1, &pct), 0);
    assert_pct(&pct, 0, 0, 0, 100, 0, 0, 0, 0);
    rm_procfs_close(a);
    rm_procfs_close(b);
}

/* Stateful sampling on one handle while the files change underneath (pread from 0 must see
 * the new content); per-CPU rows matched by cpu number across hot-plug. */
static void cpu_sample_matches_cpus_by_number(void **state)
{
    (void)state;
    char dir[PATH_MAX], err[256];
    make_tmp(dir);
    copy_fixture("root1", dir, "stat");
    copy_fixture("root1", dir, "meminfo");
    struct rm_procfs *p = rm_procfs_open(dir, err, sizeof(err));
    assert_non_null(p);
    struct rm_cpu_pct all, pc[8];
    int ids[8], n = -1;
    assert_int_equal(rm_procfs_cpu_sample(p, &all, pc, ids, 8, &n), 1);
    assert_int_equal(n, 0);

    copy_fixture("root2", dir, "stat");
    assert_int_equal(rm_procfs_cpu_sample(p, &all, pc, ids, 8, &n), 0);
    assert_pct(&all, 30, 1, 10, 0, 1, 2, 6, 50);
    assert_int_equal(n, 3); /* cpu1 went offline */
    assert_int_equal(ids[0], 0);
    assert_int_equal(ids[1], 2);
    assert_int_equal(ids[2], 3);
    /* cpu0: user 100, system 50, idle 340, irq 5, softirq 5 of 500. */
    assert_pct(&pc[0], 20, 0, 10, 0, 1, 1, 0, 68);
    /* cpu2 against cpu2 (not against cpu1, the row at the same position): user 60,
     * system 20, idle 100, iowait 20 of 200. */
    assert_pct(&pc[1], 30, 0, 10, 10, 0, 0, 0, 50);
    /* cpu3: idle went backwards (saturates to 0), user +100. */
    assert_pct(&pc[2], 100, 0, 0, 0, 0, 0, 0, 0);

    copy_fixture("root3", dir, "stat");
    assert_int_equal(rm_procfs_cpu_sample(p, pc, pc + 1, ids, 7, &n), 0);
    assert_pct(&pc[0], 0, 0, 0, 0, 0, 0, 0, 100);
    /* cpu1 is back but has no previous counters: not reported this time. */
    assert_int_equal(n, 3);
    assert_int_equal(ids[0], 0);
    assert_int_equal(ids[1], 2);
    assert_pct(&pc[1], 0, 0, 0, 0, 0, 0, 0, 100); /* cpu0 unchanged: tickless */
    assert_pct(&pc[2], 0, 0, 25, 0, 0, 0, 0, 75);
    assert_pct(&pc[3], 0, 0, 0, 0, 0, 0, 0, 100);

    /* max smaller than the CPU count: only max rows. */
    copy_fixture("root1", dir, "stat");
    assert_int_equal(rm_procfs_cpu_sample(p, &all, pc, ids, 1, &n), 0);
    assert_int_equal(n, 1);
    assert_int_equal(ids[0], 0);
    /* Without per-CPU: the aggregate alone. */
    assert_int_equal(rm_procfs_cpu_sample(p, &all, NULL, NULL, 0, &n), 0);
    assert_int_equal(n, 0);
    assert_pct(&all, 0, 0, 0, 0, 0, 0, 0, 100);

    /* Garbage in the file later: an error, and the previous sample survives. */
    write_file(dir, "stat", "garbage\n");
    assert_int_equal(rm_procfs_cpu_sample(p, &all, pc, ids, 8, &n), -1);
    copy_fixture("root1", dir, "stat");
    assert_int_equal(rm_procfs_cpu_sample(p, &all, pc, ids, 8, &n), 0);
    assert_pct(&all, 0, 0, 0, 0, 0, 0, 0, 100);
    rm_procfs_close(p);
    rm_rf(dir);
}

static void old_kernel_with_four_columns(void **state)
{
    (void)state;
    struct rm_procfs *a = open_fixture("old1"), *b = open_fixture("old2");
    struct rm_cpu_times t1, t2, pc[2];
    int ids[2], n;
    assert_int_equal(rm_procfs_read_cpu(a, &t1, pc, ids, 2, &n), 0);
    assert_int_equal(n, 1);
    assert_true(t1.user == 100 && t1.nice == 20 && t1.system == 30 && t1.idle == 850);
    assert_true(t1.iowait == 0 && t1.irq == 0 && t1.softirq == 0 && t1.steal == 0);
    assert_true(pc[0].idle == 850);
    assert_int_equal(rm_procfs_read_cpu(b, &t2, NULL, NULL, 0, NULL), 0);
    struct rm_cpu_pct pct;
    rm_cpu_pct_between(&t1, &t2, &pct); /* user 50, system 10, idle 40 of 100 */
    assert_pct(&pct, 50, 0, 10, 0, 0, 0, 0, 40);
    rm_procfs_close(a);
    rm_procfs_close(b);
}

static void meminfo_with_and_without_memavailable(void **state)
{
    (void)state;
    struct rm_procfs *p = open_fixture("root1");
    struct rm_mem m;
    assert_int_equal(rm_procfs_read_mem(p, &m), 0);
    assert_true(m.total_kib == 16384000 && m.avail_kib == 8192000);
    assert_int_equal(m.avail_estimated, 0);
    assert_true(rm_mem_used_kib(&m) == 8192000);
    assert_double_equal(rm_kib_to_mib(m.total_kib), 16000.0, EPS);
    rm_procfs_close(p);

    p = open_fixture("old1"); /* 2.4 layout: header lines, no MemAvailable */
    assert_int_equal(rm_procfs_read_mem(p, &m), 0);
    assert_true(m.total_kib == 2048000);
    assert_true(m.avail_kib == 512000 + 128000 + 256000);
    assert_int_equal(m.avail_estimated, 1);
    rm_procfs_close(p);

    const char *s = "MemTotal: 100 kB\nMemAvailable: 500 kB\n"; /* capped at total */
    assert_int_equal(rm_parse_meminfo(s, strlen(s), &m), 0);
    assert_true(m.avail_kib == 100 && rm_mem_used_kib(&m) == 0);
    const char *bad[] = {"", "MemFree: 5 kB\n", "MemTotal: 100 kB\n",
                         "MemTotal: x kB\nMemAvailable: 1 kB\n",
                         "MemTotal: 99999999999999999999999 kB\nMemAvailable: 1 kB\n"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++)
        assert_int_equal(rm_parse_meminfo(bad[i], strlen(bad[i]), &m), -1);
}

static void garbage_is_an_error_not_a_crash(void **state)
{
    (void)state;
    struct rm_cpu_times all, pc[4];
    int ids[4], n;
    const char *bad[] = {"",
                         "cpu",
                         "cpu 1 2 3\n",
                         "cpux 1 2 3 4\n",
                         "intr 1 2 3 4\ncpu  1 2 3 4\n",
                         "cpu  1 2 3 4x\n",
                         "cpu  1 2 3 -4\n",
                         "cpu  1 2 3 99999999999999999999999\n",
                         "cpu  1 2 3 4\ncpuA 1 2 3 4\n",
                         "cpu  1 2 3 4\ncpu0 1 2\n"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++)
        assert_int_equal(rm_parse_proc_stat(bad[i], strlen(bad[i]), &all, pc, ids, 4, &n), -1);
    /* No trailing newline, and more CPUs than room: count all, store max. */
    const char *s = "cpu  1 2 3 4 5 6 7 8 9 10 11\ncpu0 1 2 3 4\ncpu7 1 2 3 4\ncpu9 4 3 2 1";
    assert_int_equal(rm_parse_proc_stat(s, strlen(s), &all, pc, ids, 2, &n), 3);
    assert_int_equal(n, 2);
    assert_int_equal(ids[1], 7);
    assert_true(all.guest_nice == 10 && all.steal == 8);

    char dir[PATH_MAX], err[256];
    make_tmp(dir);
    assert_null(rm_procfs_open(dir, err, sizeof(err)));
    assert_non_null(strstr(err, "/stat: No such file or directory"));
    write_file(dir, "stat", "not a stat file\n");
    write_file(dir, "meminfo", "MemTotal: 1 kB\nMemFree: 1 kB\n");
    assert_null(rm_procfs_open(dir, err, sizeof(err)));
    assert_non_null(strstr(err, "/stat: unrecognised content"));
    copy_fixture("root1", dir, "stat");
    write_file(dir, "meminfo", "nothing useful\n");
    assert_null(rm_procfs_open(dir, err, sizeof(err)));
    assert_non_null(strstr(err, "/meminfo: unrecognised content"));
    assert_null(rm_procfs_open("/nonexistent/proc", err, sizeof(err)));
    assert_string_equal(err, "/nonexistent/proc: No such file or directory");
    rm_rf(dir);
}

/* A full 52-field stat line, as Linux 6.x prints it. */
static void stat_line(char *buf, size_t cap, int pid, const char *comm, int ppid, unsigned long ut,
                      unsigned long st, int threads, unsigned long start, unsigned long rss)
{
    snprintf(buf, cap,
             "%d (%s) S %d %d %d 0 -1 4194560 1529 27842 0 2 %lu %lu -3 0 20 -5 %d 0 %lu "
             "5124096 %lu 18446744073709551615 94388972589056 94388973378461 140731337957008 "
             "0 0 0 65536 4 1132560123 1 0 0 17 1 0 0 0 0 0 94388973611760 94388973660004 "
             "94389831507968 140731337964347 140731337964362 140731337964362 140731337965546 "
             "0\n",
             pid, comm, ppid, pid, pid, ut, st, threads, start, rss);
}

static void pid_stat_parses_from_the_last_paren(void **state)
{
    (void)state;
    char line[1024];
    struct rm_pid_stat s;
    stat_line(line, sizeof(line), 4242, "a) b (c) S 1 2", 77, 123, 45, 3, 999, 321);
    assert_int_equal(rm_parse_pid_stat(line, strlen(line), &s), 0);
    assert_int_equal(s.pid, 4242);
    assert_int_equal(s.ppid, 77);
    assert_int_equal(s.state, 'S');
    assert_true(s.utime == 123 && s.stime == 45 && s.starttime == 999 && s.rss_pages == 321);
    assert_int_equal(s.num_threads, 3);
    const char *bad[] = {"",
                         "12",
                         "12 (x)",
                         "12 (x) S",
                         "x (y) S 1",
                         "12 (x) S 1 2 3",
                         "-3 (x) S 1 1 1 0 -1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++)
        assert_int_equal(rm_parse_pid_stat(bad[i], strlen(bad[i]), &s), -1);
    /* Truncated just before rss. */
    size_t cut = (size_t)(strstr(line, " 321 ") - line);
    assert_int_equal(rm_parse_pid_stat(line, cut, &s), -1);
    assert_int_equal(rm_parse_pid_stat(line, cut + 4, &s), 0);
}

static void put_proc(const char *dir, int pid, const char *comm, int ppid, unsigned long ut,
                     unsigned long st, int threads, unsigned long start, unsigned long rss)
{
    char rel[64], line[1024];
    stat_line(line, sizeof(line), pid, comm, ppid, ut, st, threads, start, rss);
    snprintf(rel, sizeof(rel), "%d/stat", pid);
    write_file(dir, rel, line);
}

static void put_children(const char *dir, int pid, int tid, const char *list)
{
    char rel[64];
    snprintf(rel, sizeof(rel), "%d/task/%d/children", pid, tid);
    write_file(dir, rel, list);
}

/* Sample 1 of the fake tree. children: 0 none, 1 all, 2 some (forces the scan). */
static void tree_sample1(const char *dir, int children)
{
    copy_fixture("root1", dir, "stat");
    copy_fixture("root1", dir, "meminfo");
    put_proc(dir, 100, "my prog", 1, 10, 5, 1, 1000, 100);
    put_proc(dir, 101, "we)ird) (name", 100, 20, 0, 2, 1100, 50); /* 2 threads: 101, 105 */
    put_proc(dir, 102, "sh", 100, 5, 0, 1, 1200, 10);
    put_proc(dir, 103, "worker", 101, 25, 5, 1, 1300, 40);
    put_proc(dir, 200, "other", 1, 999, 0, 1, 500, 7000);
    put_proc(dir, 201, "reused", 1, 999, 0, 1, 1250, 7000); /* listed as 100's, ppid 1 */
    if (children) {
        /* 104 vanished before we read it; 201 exited and its pid went to another parent. */
        put_children(dir, 100, 100, "101 102 201");
        put_children(dir, 101, 101, "");
        if (children == 1)
            put_children(dir, 101, 105, "103 ");
        else /* the thread is there, its children file is not */
            write_file(dir, "101/task/105/stat", "");
        put_children(dir, 102, 102, "104\n");
        put_children(dir, 103, 103, "");
        put_children(dir, 200, 200, "");
        put_children(dir, 201, 201, "");
    }
}

/* Sample 2: 100 +50 ticks, 101 +100, 102 exited, 103's pid reused by a new process with
 * 4 ticks, 106 new with 7 ticks: 161 ticks. */
static void tree_sample2(const char *dir, int children)
{
    char path[PATH_MAX + 8];
    snprintf(path, sizeof(path), "%s/102", dir);
    rm_rf(path);
    put_proc(dir, 100, "my prog", 1, 55, 10, 1, 1000, 100);
    put_proc(dir, 101, "we)ird) (name", 100, 120, 0, 2, 1100, 50);
    put_proc(dir, 103, "worker", 101, 3, 1, 1, 2000, 5);
    put_proc(dir, 106, "new", 100, 7, 0, 1, 1900, 20);
    if (children) {
        put_children(dir, 100, 100, "101 106");
        put_children(dir, 106, 106, "");
    }
}

static void check_fake_tree(int children, int mode)
{
    char dir[PATH_MAX], err[256];
    make_tmp(dir);
    tree_sample1(dir, children);
    struct rm_procfs *p = rm_procfs_open(dir, err, sizeof(err));
    assert_non_null(p);
    rm_procfs_set_walk(p, mode == 2 ? RM_WALK_AUTO : mode ? RM_WALK_SCAN : RM_WALK_EVERY);
    struct rm_tree_sample s;
    long page = sysconf(_SC_PAGESIZE), hz = sysconf(_SC_CLK_TCK);
    assert_int_equal(rm_procfs_tree_sample(p, 100, 5 * RM_NS_PER_SEC, &s), 0);
    assert_int_equal(s.nprocs, 4); /* 100 101 102 103 */
    assert_true(s.rss_bytes == 200 * (uint64_t)page);
    assert_true(isnan(s.cpu_pct));

    tree_sample2(dir, children);
    assert_int_equal(rm_procfs_tree_sample(p, 100, 6 * RM_NS_PER_SEC, &s), 0);
    assert_int_equal(s.nprocs, 4); /* 100 101 103 106 */
    assert_true(s.rss_bytes == 175 * (uint64_t)page);
    assert_true(s.ticks == 161);
    assert_double_equal(s.cpu_pct, 161.0 * 100.0 / (double)hz, EPS);

    /* Nothing ran for half a second. */
    assert_int_equal(rm_procfs_tree_sample(p, 100, 6500 * RM_NS_PER_MS, &s), 0);
    assert_true(s.ticks == 0);
    assert_double_equal(s.cpu_pct, 0, EPS);

    /* A subtree root, then the root gone. */
    assert_int_equal(rm_procfs_tree_sample(p, 101, 7 * RM_NS_PER_SEC, &s), 0);
    assert_int_equal(s.nprocs, 2);
    assert_true(isnan(s.cpu_pct)); /* a new root starts over */
    assert_int_equal(rm_procfs_tree_sample(p, 102, 7 * RM_NS_PER_SEC, &s), 1);
    assert_int_equal(s.nprocs, 0);
    assert_true(isnan(s.cpu_pct));
    rm_procfs_close(p);
    rm_rf(dir);
}

/* A root that did not run at the previous sample: its first sample counts all its tree's
 * ticks since then (issue 12, item 7: the command's first interval was lost). */
static void tree_first_sample_counts_from_before_the_root(void **state)
{
    (void)state;
    char dir[PATH_MAX], err[256];
    make_tmp(dir);
    tree_sample1(dir, 1);
    struct rm_procfs *p = rm_procfs_open(dir, err, sizeof(err));
    assert_non_null(p);
    struct rm_tree_sample s;
    long hz = sysconf(_SC_CLK_TCK);
    /* 100: 15, 101: 20, 102: 5, 103: 30 ticks, all spent since 4.5 s. */
    assert_int_equal(
        rm_procfs_tree_sample_since(p, 100, 5 * RM_NS_PER_SEC, 4500 * RM_NS_PER_MS, &s), 0);
    assert_int_equal(s.nprocs, 4);
    assert_true(s.ticks == 70);
    assert_double_equal(s.cpu_pct, 70.0 * 100.0 / (0.5 * (double)hz), EPS);
    /* Later samples are deltas as before; born_after no longer matters for a known root. */
    tree_sample2(dir, 1);
    assert_int_equal(
        rm_procfs_tree_sample_since(p, 100, 6 * RM_NS_PER_SEC, 4500 * RM_NS_PER_MS, &s), 0);
    assert_true(s.ticks == 161);
    assert_double_equal(s.cpu_pct, 161.0 * 100.0 / (double)hz, EPS);
    /* Unknown (-1) or not before the sample: the first sample only sets the baseline. */
    assert_int_equal(rm_procfs_tree_sample_since(p, 101, 7 * RM_NS_PER_SEC, -1, &s), 0);
    assert_true(isnan(s.cpu_pct));
    assert_int_equal(rm_procfs_tree_sample_since(p, 103, 7 * RM_NS_PER_SEC, 7 * RM_NS_PER_SEC, &s),
                     0);
    assert_true(isnan(s.cpu_pct));
    rm_procfs_close(p);
    rm_rf(dir);
}

static void tree_from_children_files(void **state)
{
    (void)state;
    check_fake_tree(1, 0);
}

static void tree_scan_without_children_files(void **state)
{
    (void)state;
    check_fake_tree(0, 0);
}

static void tree_scan_when_some_children_files_missing(void **state)
{
    (void)state;
    check_fake_tree(2, 0);
}

static void tree_forced_scan(void **state)
{
    (void)state;
    check_fake_tree(1, 1);
}

static int count_open_fds(void)
{
    int n = 0;
    char path[64];
    for (int fd = 0; fd < 1024; fd++) {
        snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
        n += access(path, F_OK) == 0;
    }
    return n;
}

/* The walk is skipped while /proc/loadavg's last pid stays put and every member is alive
 * with the same parent; any of those changing brings the walk back. */
static void tree_walk_skipped_until_a_pid_is_allocated(void **state)
{
    (void)state;
    char dir[PATH_MAX], err[256];
    make_tmp(dir);
    tree_sample1(dir, 1);
    write_file(dir, "loadavg", "0.00 0.01 0.05 1/123 300\n");
    int fds0 = count_open_fds();
    struct rm_procfs *p = rm_procfs_open(dir, err, sizeof(err));
    assert_non_null(p);
    struct rm_tree_sample s;
    assert_int_equal(rm_procfs_tree_sample(p, 100, 5 * RM_NS_PER_SEC, &s), 0);
    assert_int_equal(s.nprocs, 4);
    /* 107 is forked, but the last pid is stale: not seen; 100 ran 10 ticks. */
    put_proc(dir, 107, "late", 100, 30, 0, 1, 1500, 1);
    put_children(dir, 107, 107, "");
    put_children(dir, 100, 100, "101 102 107");
    put_proc(dir, 100, "my prog", 1, 20, 5, 1, 1000, 100);
    assert_int_equal(rm_procfs_tree_sample(p, 100, 6 * RM_NS_PER_SEC, &s), 0);
    assert_int_equal(s.nprocs, 4);
    assert_true(s.ticks == 10);
    write_file(dir, "loadavg", "0.00 0.01 0.05 1/124 307\n");
    assert_int_equal(rm_procfs_tree_sample(p, 100, 7 * RM_NS_PER_SEC, &s), 0);
    assert_int_equal(s.nprocs, 5);
    assert_true(s.ticks == 30);
    /* 103 reparented (ppid 1) while its old parent still lists it. */
    put_proc(dir, 103, "worker", 1, 25, 5, 1, 1300, 40);
    assert_int_equal(rm_procfs_tree_sample(p, 100, 8 * RM_NS_PER_SEC, &s), 0);
    assert_int_equal(s.nprocs, 4);
    /* 101 exits. An fd kept on a dead process's stat reads nothing (ESRCH): empty the
     * file in place first, as an unlinked fixture file would still read its old text. */
    write_file(dir, "101/stat", "");
    char path[PATH_MAX + 8];
    snprintf(path, sizeof(path), "%s/101", dir);
    rm_rf(path);
    assert_int_equal(rm_procfs_tree_sample(p, 100, 9 * RM_NS_PER_SEC, &s), 0);
    assert_int_equal(s.nprocs, 3);
    assert_true(count_open_fds() > fds0); /* members' stat files kept open ... */
    rm_procfs_close(p);
    assert_int_equal(count_open_fds(), fds0); /* ... and closed */
    rm_rf(dir);
}

/* Real /proc. The test process forks a child whose second thread forks a grandchild (so it
 * is listed only in task/TID/children of that thread); the grandchild allocates and burns
 * CPU. */
static int g_pipe[2];
static pid_t g_child; /* killed by the teardown, so a failing test leaves nothing behind */

static int kill_child(void **state)
{
    (void)state;
    if (g_child > 0) {
        kill(g_child, SIGKILL);
        waitpid(g_child, NULL, 0);
    }
    g_child = 0;
    return 0;
}

static void *forker(void *arg)
{
    (void)arg;
    pid_t g = fork();
    if (g == 0) {
        /* Dies with this thread, i.e. when the teardown kills the child. */
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        char c;
        if (read(g_pipe[0], &c, 1) != 1) _exit(1); /* wait for "go" */
        size_t sz = 64u << 20;
        volatile char *m = malloc(sz);
        if (!m) _exit(1);
        for (size_t i = 0; i < sz; i += 4096)
            m[i] = 1;
        pid_t me = getpid();
        if (write(g_pipe[1], &me, sizeof(me)) != sizeof(me)) _exit(1);
        for (volatile unsigned long x = 0;; x++) {
        }
    }
    for (;;)
        pause();
    return NULL;
}

static int64_t burn_until(int64_t deadline)
{
    volatile unsigned long x = 0;
    while (rm_now_monotonic_ns() < deadline)
        x++;
    return rm_now_monotonic_ns();
}

static void check_real_tree(int mode)
{
    int to_g[2], from_g[2];
    assert_int_equal(pipe(to_g), 0);
    assert_int_equal(pipe(from_g), 0);
    pid_t child = fork();
    assert_true(child >= 0);
    g_child = child;
    if (child == 0) {
        g_pipe[0] = to_g[0];
        g_pipe[1] = from_g[1];
        pthread_t t;
        if (pthread_create(&t, NULL, forker, NULL)) _exit(1);
        for (;;)
            pause();
    }
    char err[256];
    struct rm_procfs *p = rm_procfs_open("/proc", err, sizeof(err));
    assert_non_null(p);
    rm_procfs_set_walk(p, mode == 2 ? RM_WALK_AUTO : mode ? RM_WALK_SCAN : RM_WALK_EVERY);
    struct rm_tree_sample s0, s1, s2;
    /* Wait until the grandchild is in the tree. */
    int64_t t0 = rm_now_monotonic_ns();
    do {
        assert_int_equal(rm_procfs_tree_sample(p, getpid(), rm_now_monotonic_ns(), &s0), 0);
        if (s0.nprocs >= 3) break;
        usleep(10000);
    } while (rm_now_monotonic_ns() - t0 < 20 * RM_NS_PER_SEC);
    assert_true(s0.nprocs >= 3);
    assert_true(s0.rss_bytes > 0);
    assert_int_equal(write(to_g[1], "g", 1), 1);
    pid_t gpid;
    assert_int_equal(read(from_g[0], &gpid, sizeof(gpid)), sizeof(gpid));
    assert_int_equal(rm_procfs_tree_sample(p, getpid(), rm_now_monotonic_ns(), &s1), 0);
    int64_t now = burn_until(rm_now_monotonic_ns() + 300 * RM_NS_PER_MS);
    assert_int_equal(rm_procfs_tree_sample(p, getpid(), now, &s2), 0);
    kill(gpid, SIGKILL);
    kill_child(NULL);
    /* Both gone (the grandchild is reaped by init): the tree shrinks back to this process,
     * also through stat fds kept open on the dead ones. */
    struct rm_tree_sample s3;
    t0 = rm_now_monotonic_ns();
    do {
        usleep(10000);
        assert_int_equal(rm_procfs_tree_sample(p, getpid(), rm_now_monotonic_ns(), &s3), 0);
    } while (s3.nprocs != 1 && rm_now_monotonic_ns() - t0 < 20 * RM_NS_PER_SEC);
    assert_int_equal(s3.nprocs, 1);
    assert_true(s2.nprocs >= 3);
    print_message("# real tree (walk mode %d): nprocs %d rss %.1f MiB cpu %.1f %%\n", mode,
                  s2.nprocs, (double)s2.rss_bytes / 1048576.0, s2.cpu_pct);
    /* The grandchild touched 64 MiB after s0. */
    assert_true(s2.rss_bytes >= s0.rss_bytes + (48u << 20));
    /* Test process and grandchild both burn: well above one core; allow a busy machine. */
    assert_true(s2.cpu_pct > 20.0);
    rm_procfs_close(p);
    close(to_g[0]), close(to_g[1]), close(from_g[0]), close(from_g[1]);
}

static void real_proc_tree_children_files(void **state)
{
    (void)state;
    check_real_tree(0); /* RM_WALK_EVERY */
}

static void real_proc_tree_auto(void **state)
{
    (void)state;
    check_real_tree(2); /* RM_WALK_AUTO */
}

static void real_proc_tree_scan(void **state)
{
    (void)state;
    check_real_tree(1); /* RM_WALK_SCAN */
}

/* Real /proc/stat and meminfo through kept-open fds: the counters must move. */
static void real_proc_stat_is_fresh_on_every_read(void **state)
{
    (void)state;
    char err[256];
    struct rm_procfs *p = rm_procfs_open(
        getenv("RUNMON_PROC_ROOT") ? getenv("RUNMON_PROC_ROOT") : "/proc", err, sizeof(err));
    assert_non_null(p);
    struct rm_cpu_times a, b, pc[1024];
    int ids[1024], n;
    assert_int_equal(rm_procfs_read_cpu(p, &a, pc, ids, 1024, &n), 0);
    assert_true(n >= 1 && n == sysconf(_SC_NPROCESSORS_ONLN));
    burn_until(rm_now_monotonic_ns() + 50 * RM_NS_PER_MS);
    assert_int_equal(rm_procfs_read_cpu(p, &b, NULL, NULL, 0, NULL), 0);
    assert_true(b.user + b.system > a.user + a.system);
    struct rm_mem m;
    assert_int_equal(rm_procfs_read_mem(p, &m), 0);
    assert_true(m.total_kib > 0 && m.avail_kib <= m.total_kib);
    struct rm_cpu_pct all, ppc[1024];
    assert_int_equal(rm_procfs_cpu_sample(p, &all, ppc, ids, 1024, &n), 1);
    burn_until(rm_now_monotonic_ns() + 50 * RM_NS_PER_MS);
    assert_int_equal(rm_procfs_cpu_sample(p, &all, ppc, ids, 1024, &n), 0);
    double sum =
        all.usr + all.nice + all.sys + all.iowait + all.irq + all.softirq + all.steal + all.idle;
    assert_double_equal(sum, 100.0, 1e-6);
    assert_true(all.usr + all.sys > 0);
    rm_procfs_close(p);
}

static void fmt_helpers_match_printf(void **state)
{
    (void)state;
    char buf[RM_FMT_BUFSZ], want[64];
    const uint64_t u[] = {0, 7, 10, 12345, UINT64_MAX};
    for (size_t i = 0; i < sizeof(u) / sizeof(*u); i++) {
        size_t n = rm_fmt_u64(u[i], buf);
        snprintf(want, sizeof(want), "%llu", (unsigned long long)u[i]);
        assert_int_equal(n, strlen(want));
        assert_memory_equal(buf, want, n);
    }
    const struct {
        double v;
        const char *s;
    } d[] = {{0, "0.00"},         {0.004, "0.00"},
             {0.005, "0.01"},     {12.345678, "12.35"},
             {99.999, "100.00"},  {-1.5, "-1.50"},
             {-0.004, "0.00"},    {100, "100.00"},
             {16000, "16000.00"}, {1e20, "100000000000000000000.00"}};
    for (size_t i = 0; i < sizeof(d) / sizeof(*d); i++) {
        size_t n = rm_fmt_fixed2(d[i].v, buf);
        if (d[i].v >= 1e20) { /* clamped, but still a number */
            assert_true(n > 3 && !memcmp(buf + n - 3, ".00", 3));
            continue;
        }
        assert_int_equal(n, strlen(d[i].s));
        assert_memory_equal(buf, d[i].s, n);
    }
    assert_int_equal(rm_fmt_fixed2(NAN, buf), 0);
    assert_int_equal(rm_fmt_fixed2(INFINITY, buf), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(stat_percentages_between_two_roots),
        cmocka_unit_test(cpu_sample_matches_cpus_by_number),
        cmocka_unit_test(old_kernel_with_four_columns),
        cmocka_unit_test(meminfo_with_and_without_memavailable),
        cmocka_unit_test(garbage_is_an_error_not_a_crash),
        cmocka_unit_test(pid_stat_parses_from_the_last_paren),
        cmocka_unit_test(tree_from_children_files),
        cmocka_unit_test(tree_first_sample_counts_from_before_the_root),
        cmocka_unit_test(tree_scan_without_children_files),
        cmocka_unit_test(tree_scan_when_some_children_files_missing),
        cmocka_unit_test(tree_forced_scan),
        cmocka_unit_test(tree_walk_skipped_until_a_pid_is_allocated),
        cmocka_unit_test_teardown(real_proc_tree_children_files, kill_child),
        cmocka_unit_test_teardown(real_proc_tree_scan, kill_child),
        cmocka_unit_test_teardown(real_proc_tree_auto, kill_child),
        cmocka_unit_test(real_proc_stat_is_fresh_on_every_read),
        cmocka_unit_test(fmt_helpers_match_printf),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
