/* The per-process collector's two halves: apps.csv rows into workload/other/unknown figures
 * (summary/apps.c), and pid-in-tree lookups in a /proc tree (monitor/apps_collector.c). */
#include <fcntl.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <pthread.h>

#include "monitor/apps_collector.h"
#include "summary/apps.h"

struct ctx {
    struct rm_appscsv p;
    struct rm_apps_agg a;
    size_t phases[1];
    size_t nphases; /* every sample is in phase 0 when 1 */
    int rows, skipped, headers;
};

static void row(void *p, const struct rm_csv_row *r)
{
    struct ctx *c = p;
    struct rm_app_row a;
    int rc = rm_appscsv_row(&c->p, r, &a);
    if (rc == 0) c->headers++;
    if (rc < 0) c->skipped++;
    if (rc != 1) return;
    c->rows++;
    if (rm_apps_starts_sample(&c->a, &a)) rm_apps_close(&c->a, c->phases, c->nphases);
    rm_apps_add(&c->a, &a);
}

static void parse(struct ctx *c, const char *text, size_t nphases)
{
    memset(c, 0, sizeof *c);
    rm_appscsv_init(&c->p);
    rm_apps_init(&c->a, 1);
    c->nphases = nphases;
    struct rm_csv_reader *r = rm_csv_new(row, c);
    rm_csv_feed(r, text, strlen(text));
    rm_csv_finish(r);
    rm_csv_free(r);
    rm_apps_close(&c->a, c->phases, c->nphases);
}

#define HDR "ts,gpu,uuid,pid,process,vram_mb,sm_pct,in_workload\n"
#define T1 "2026-11-23T05:00:38.376+00:00"
#define T2 "2026-11-23T05:00:39.433+00:00"
#define T3 "2026-11-23T05:00:40.508+00:00"

static void workload_other_unknown_per_sample(void **state)
{
    (void)state;
    struct ctx c;
    parse(&c,
          HDR T1 ",0,GPU-a,416,python3,3656,,0\n" T1 ",0,GPU-a,445,python3,1860,17,1\n" T1
                 ",0,GPU-a,446,python3,100,3,1\n" T1 ",1,GPU-b,,,,,\n" T2
                 ",0,GPU-a,416,python3,3656,,0\n" T2 ",0,GPU-a,445,python3,1000,98,1\n" T2
                 ",0,GPU-a,9999999,x,300,,\n" T2 ",1,GPU-b,,,,,\n",
          1);
    assert_int_equal(c.rows, 8);
    assert_int_equal(c.headers, 1);
    const struct rm_apps_gpu *g0 = &c.a.gpu[0], *g1 = &c.a.gpu[1];
    assert_true(g0->seen && g1->seen);
    assert_string_equal(g0->uuid, "GPU-a");
    /* Sample 1: workload 1860 + 100; sample 2: 1000. */
    assert_int_equal(g0->workload.n, 2);
    assert_true(g0->workload.max == 1960 && g0->workload.sum == 2960);
    assert_true(g0->other.max == 3656);
    assert_true(g0->unknown.max == 300);
    /* The idle GPU: samples of 0, not missing. */
    assert_int_equal(g1->workload.n, 2);
    assert_true(g1->workload.max == 0 && g1->other.max == 0);
    /* Per phase (every sample in phase 0 here). */
    assert_int_equal(c.a.ph[0][0].n, 2);
    assert_true(c.a.ph[0][0].max == 1960);
    /* Processes: 416, 445, 446, 9999999; 445's peak and SM mean, workload flags. */
    assert_int_equal(c.a.nprocs, 4);
    const struct rm_app_proc *p445 = NULL, *p9 = NULL;
    for (size_t i = 0; i < c.a.nprocs; i++) {
        if (c.a.procs[i].pid == 445) p445 = &c.a.procs[i];
        if (c.a.procs[i].pid == 9999999) p9 = &c.a.procs[i];
    }
    assert_non_null(p445);
    assert_true(p445->peak_mb == 1860 && p445->in_workload == 1 && p445->samples == 2);
    assert_true(fabs(p445->sm.sum / (double)p445->sm.n - 57.5) < 1e-9);
    assert_true(p9 && p9->in_workload == -1);
    rm_apps_free(&c.a);
}

static void bad_rows_are_skipped_not_guessed(void **state)
{
    (void)state;
    struct ctx c;
    parse(&c,
          HDR T1 ",0,GPU-a,12x,python3,10,,1\n"         /* pid not a number: garbage */
                 "not a time,0,GPU-a,1,python3,10,,1\n" /* bad time */
          T1 ",0,GPU-a,1,python3,10,,1,extra\n"         /* field count */
          T1 ",99,GPU-a,1,python3,10,,1\n"              /* GPU index beyond the table */
          T2 ",0,GPU-a,1,python3,[N/A],-,1\n"           /* missing memory: the process counts 0 */
          T3 ",0,GPU-a,1,python3,20,5,1",               /* torn last line */
          0);
    assert_int_equal(c.rows, 1);
    assert_int_equal(c.skipped, 5);
    assert_int_equal(c.a.gpu[0].workload.n, 1);
    assert_true(c.a.gpu[0].workload.max == 0);
    assert_true(isnan(c.a.procs[0].peak_mb));
    rm_apps_free(&c.a);
}

static void merge_keeps_the_larger_peaks(void **state)
{
    (void)state;
    struct ctx a, b;
    parse(&a, HDR T1 ",0,GPU-a,445,python3,1000,50,1\n", 1);
    parse(&b, HDR T2 ",0,GPU-a,445,python3,3000,70,1\n" T2 ",0,GPU-a,7,other,5,,0\n", 1);
    rm_apps_merge(&a.a, &b.a);
    assert_int_equal(a.a.gpu[0].workload.n, 2);
    assert_true(a.a.gpu[0].workload.max == 3000 && a.a.gpu[0].other.max == 5);
    assert_int_equal(a.a.nprocs, 2);
    assert_true(a.a.procs[0].peak_mb == 3000 && a.a.procs[0].samples == 2);
    assert_true(a.a.ph[0][0].max == 3000);
    rm_apps_free(&a.a);
    rm_apps_free(&b.a);
}

/* A /proc tree: 100 (the workload) -> 101 -> 102; 200 is not in it; 300 is named otherwise. */
static void write_stat(const char *root, int pid, int ppid, const char *comm)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%d", root, pid);
    mkdir(path, 0755);
    snprintf(path, sizeof path, "%s/%d/stat", root, pid);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fprintf(f, "%d (%s) S %d %d %d 0 -1 4194304 100 0 0 0 5 3 0 0 20 0 1 0 %d 1000 50 0\n", pid,
            comm, ppid, pid, pid, 1000 + pid);
    fclose(f);
}

static void pid_in_tree(void **state)
{
    (void)state;
    char root[] = "/tmp/runmon-apps-XXXXXX";
    assert_non_null(mkdtemp(root));
    write_stat(root, 1, 0, "init");
    write_stat(root, 100, 1, "bash");
    write_stat(root, 101, 100, "python3");
    write_stat(root, 102, 101, "my worker)x");
    write_stat(root, 200, 1, "python3");
    int fd = open(root, O_RDONLY | O_DIRECTORY);
    assert_true(fd >= 0);
    uint64_t st = 0;
    assert_int_equal(rm_pid_in_tree(fd, 100, 100, "bash", 4, &st), 1);
    assert_int_equal(st, 1100);
    assert_int_equal(rm_pid_in_tree(fd, 102, 100, "my worker)x", 11, NULL), 1);
    assert_int_equal(rm_pid_in_tree(fd, 101, 100, NULL, 0, NULL), 1);
    assert_int_equal(rm_pid_in_tree(fd, 200, 100, "python3", 7, NULL), 0);
    /* Names are compared over the shorter one (pmon and comm both cut at 15 characters, and
     * may name the interpreter a little differently); another name: unknown. */
    assert_int_equal(rm_pid_in_tree(fd, 101, 100, "python3.11", 10, NULL), 1);
    assert_int_equal(rm_pid_in_tree(fd, 101, 100, "node", 4, NULL), -1);
    assert_int_equal(rm_pid_in_tree(fd, 200, 100, "sleep", 5, NULL), -1);
    /* A pid of another namespace (not in this /proc): unknown, never "not ours". */
    assert_int_equal(rm_pid_in_tree(fd, 4194000, 100, "python3", 7, NULL), -1);
    /* No command: nothing is the workload. */
    assert_int_equal(rm_pid_in_tree(fd, 101, 0, "python3", 7, NULL), 0);
    close(fd);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    assert_int_equal(system(cmd), 0);
}

/* ---- the live parser: pmon layouts seen across drivers ---------------------------------- */

static void noop_event(void *owner, const char *name, json_t *data)
{
    (void)owner, (void)name;
    json_decref(data);
}
static void noop_health(void *owner, int c, enum rm_health h, const char *e, int n)
{
    (void)owner, (void)c, (void)h, (void)e, (void)n;
}

/* Feeds lines to a fresh apps collector and returns apps.csv's rows (header dropped). */
static char *collect(const char *const *lines, size_t n, pid_t workload)
{
    static char dir[] = "/tmp/runmon-appsc-XXXXXX";
    strcpy(dir, "/tmp/runmon-appsc-XXXXXX");
    assert_non_null(mkdtemp(dir));
    static struct rm_session sess;
    memset(&sess, 0, sizeof sess);
    snprintf(sess.dir, sizeof sess.dir, "%s", dir);
    sess.ngpus = 2;
    sess.gpus[0] = (struct rm_gpu_info){.index = 0, .uuid = "GPU-zero"};
    sess.gpus[1] = (struct rm_gpu_info){.index = 1, .uuid = "GPU-one"};
    static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    static struct rm_latest latest;
    static atomic_int stop, wpid;
    atomic_store(&wpid, workload);
    struct rm_port port = {.event = noop_event,
                           .set_health = noop_health,
                           .lock = &lock,
                           .sess = &sess,
                           .latest = &latest,
                           .stop = &stop,
                           .workload_pid = &wpid,
                           .interval_s = 1};
    struct rm_apps_ctx a;
    assert_int_equal(rm_apps_ctx_init(&a, &port, "/proc", RM_NS_PER_SEC), 0);
    for (size_t i = 0; i < n; i++) {
        char line[512];
        snprintf(line, sizeof line, "%s", lines[i]);
        rm_apps_on_line(&a, line, strlen(line), 1795000000000000000LL + (int64_t)i);
    }
    rm_apps_on_flush(&a);
    rm_apps_ctx_fini(&a);
    char path[600], *out = calloc(1, 8192);
    snprintf(path, sizeof path, "%s/apps.csv", dir);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    char row[1024];
    assert_non_null(fgets(row, sizeof row, f)); /* the header */
    while (fgets(row, sizeof row, f)) {
        char *comma = strchr(row, ','); /* drop ts: it is the receipt time */
        strncat(out, comma ? comma + 1 : row, 8191 - strlen(out));
    }
    fclose(f);
    snprintf(path, sizeof path, "rm -rf '%s'", dir);
    assert_int_equal(system(path), 0);
    return out;
}

static void pmon_layouts(void **state)
{
    (void)state;
    char self[32], comm[32] = "";
    snprintf(self, sizeof self, "%d", (int)getpid());
    /* Our own name as /proc has it (test_apps, or valgrind's under make valgrind). */
    FILE *cf = fopen("/proc/self/comm", "r");
    assert_non_null(cf);
    assert_non_null(fgets(comm, sizeof comm, cf));
    fclose(cf);
    comm[strcspn(comm, "\n")] = '\0';
    char row_self[256], row_other[256];
    /* An old driver: no fb, no jpg/ofa; this process is the workload (its own pid). */
    snprintf(row_self, sizeof row_self, "    0 %7s     C    45     3     -     -   %s", self, comm);
    const char *old[] = {"# gpu        pid  type    sm   mem   enc   dec   command",
                         "# Idx          #   C/G     %     %     %     %   name", row_self,
                         "    1          -     -     -     -     -     -   -"};
    char *out = collect(old, 4, getpid());
    char want[512];
    snprintf(want, sizeof want, "0,GPU-zero,%s,%s,,45,1\n1,GPU-one,,,,,\n", self, comm);
    assert_string_equal(out, want);
    free(out);

    /* fb ccpm after ofa (-s um), a name with spaces, 7-digit pids beyond Linux's PID_MAX_LIMIT (so
     * never in this namespace: another one's, as in a container), a
     * header repeated mid-sample (Windows drivers) and a row cut before its command. */
    snprintf(
        row_other, sizeof row_other,
        "    0 9999999     G     -     -     -     -     -     -    512      0    chrome --type=g");
    const char *win[] = {
        "# gpu         pid   type     sm    mem    enc    dec    jpg    ofa     fb   ccpm    "
        "command",
        "# Idx           #    C/G      %      %      %      %      %      %     MB     MB    name",
        row_other,
        "# gpu         pid   type     sm    mem    enc    dec    jpg    ofa     fb   ccpm    "
        "command",
        "    1     9999998     C     12      1      -      -      -      -    300      0",
        "Unable to determine the device handle for GPU 0000:01:00.0: GPU is lost"};
    out = collect(win, 6, getpid());
    assert_string_equal(out, "0,GPU-zero,9999999,chrome --type=g,512,,\n"
                             "1,GPU-one,9999998,,300,12,\n");
    free(out);
    /* MIG: every utilization is "-"; fb first (-s mu), -o DT columns in front. */
    const char *mig[] = {"#Date        Time         gpu         pid   type     fb   ccpm     sm    "
                         "mem    enc    dec    jpg    ofa    command",
                         "#YYYYMMDD    HH:MM:SS     Idx           #    C/G     MB     MB      %    "
                         "  %      %      %      %      %    name",
                         " 20261123    04:35:37       0    9999997     C   1860      0      -      "
                         "-      -      -      -      -    python3"};
    out = collect(mig, 3, 0);
    assert_string_equal(out, "0,GPU-zero,9999997,python3,1860,,\n");
    free(out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(workload_other_unknown_per_sample),
        cmocka_unit_test(bad_rows_are_skipped_not_guessed),
        cmocka_unit_test(merge_keeps_the_larger_peaks),
        cmocka_unit_test(pid_in_tree),
        cmocka_unit_test(pmon_layouts),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
