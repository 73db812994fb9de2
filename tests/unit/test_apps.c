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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(workload_other_unknown_per_sample),
        cmocka_unit_test(bad_rows_are_skipped_not_guessed),
        cmocka_unit_test(merge_keeps_the_larger_peaks),
        cmocka_unit_test(pid_in_tree),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
