/* Who the workload is (monitor/workload.h): a SLURM step's cgroup found from a /proc tree's
 * self/cgroup and self/mountinfo (v2 and v1 layouts, as slurmd writes them), not found
 * outside a step; the pids of a cgroup folder and of those below it but the skipped one;
 * --pid's checks on a real process. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
/* cmocka needs the four above it */
#include <cmocka.h>

#include "monitor/workload.h"

static char root[256]; /* the test's folder: proc/ (self/cgroup, self/mountinfo) and mnt/ */
static const char *env_job, *env_step;

static const char *env(const char *name)
{
    return !strcmp(name, "SLURM_JOB_ID")    ? env_job
           : !strcmp(name, "SLURM_STEP_ID") ? env_step
                                            : NULL;
}

static void put(const char *rel, const char *text)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", root, rel);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static void mk(const char *rel)
{
    char cmd[600];
    snprintf(cmd, sizeof cmd, "mkdir -p '%s/%s'", root, rel);
    assert_int_equal(system(cmd), 0);
}

static int setup(void **state)
{
    (void)state;
    snprintf(root, sizeof root, "/tmp/runmon-test-workload.XXXXXX");
    assert_non_null(mkdtemp(root));
    mk("proc/self");
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    return system(cmd);
}

static void mountinfo(const char *fstype, const char *opts)
{
    char t[1024];
    snprintf(t, sizeof t,
             "22 1 0:21 / /proc rw,nosuid - proc proc rw\n"
             "30 25 0:26 / %s/mnt rw,nosuid shared:9 - %s cgroup %s\n",
             root, fstype, opts);
    put("proc/self/mountinfo", t);
}

static void v2_step_found(void **state)
{
    (void)state;
    mk("mnt/system.slice/slurmstepd.scope/job_12/step_0/user/task_0");
    put("mnt/system.slice/slurmstepd.scope/job_12/step_0/cgroup.procs", "");
    put("proc/self/cgroup", "0::/system.slice/slurmstepd.scope/job_12/step_0/user/task_0\n");
    mountinfo("cgroup2", "rw,nsdelegate");
    char proc[300], want[400];
    snprintf(proc, sizeof proc, "%s/proc", root);
    snprintf(want, sizeof want, "%s/mnt/system.slice/slurmstepd.scope/job_12/step_0", root);
    struct rm_workload w = {0};
    env_job = "12", env_step = "0";
    assert_int_equal(rm_workload_find_slurm_step(&w, proc, env), 0);
    assert_int_equal(w.kind, RM_WORKLOAD_SLURM_STEP);
    assert_string_equal(w.cgroup, want);
    assert_int_equal(w.cgroup_version, 2);
    assert_string_equal(w.job_id, "12");
    assert_string_equal(w.step_id, "0");
    /* step_0 is not step_01's prefix: another step's id finds nothing */
    memset(&w, 0, sizeof w);
    env_step = "01";
    assert_int_equal(rm_workload_find_slurm_step(&w, proc, env), 1);
    assert_int_equal(w.kind, RM_WORKLOAD_CHILD);
    /* outside a step (no SLURM_STEP_ID: a batch script) */
    env_step = NULL;
    assert_int_equal(rm_workload_find_slurm_step(&w, proc, env), 1);
}

static void v1_step_found(void **state)
{
    (void)state;
    mk("mnt/slurm/uid_1000/job_7/step_3/task_1");
    put("mnt/slurm/uid_1000/job_7/step_3/cgroup.procs", "");
    put("proc/self/cgroup", "12:memory:/slurm/uid_1000/job_7/step_3/task_1\n"
                            "4:cpuset:/slurm/uid_1000/job_7/step_3\n"
                            "0::/user.slice\n");
    mountinfo("cgroup", "rw,memory");
    char proc[300], want[400];
    snprintf(proc, sizeof proc, "%s/proc", root);
    snprintf(want, sizeof want, "%s/mnt/slurm/uid_1000/job_7/step_3", root);
    struct rm_workload w = {0};
    env_job = "7", env_step = "3";
    assert_int_equal(rm_workload_find_slurm_step(&w, proc, env), 0);
    assert_string_equal(w.cgroup, want);
    assert_int_equal(w.cgroup_version, 1);
}

static void cgroup_pids_below_but_skipped(void **state)
{
    (void)state;
    mk("cg/user/task_0");
    mk("cg/slurm");
    put("cg/cgroup.procs", "");
    put("cg/user/cgroup.procs", "");
    put("cg/user/task_0/cgroup.procs", "101\n102\n");
    put("cg/slurm/cgroup.procs", "55\n");
    char dir[300];
    snprintf(dir, sizeof dir, "%s/cg", root);
    int32_t *buf = NULL;
    size_t n = 0, cap = 0;
    assert_int_equal(rm_cgroup_pids(dir, "slurm", &buf, &n, &cap), 0);
    assert_int_equal(n, 2);
    assert_int_equal(buf[0] + buf[1], 203);
    n = 0;
    assert_int_equal(rm_cgroup_pids(dir, NULL, &buf, &n, &cap), 0);
    assert_int_equal(n, 3);
    free(buf);
    buf = NULL;
    n = cap = 0;
    snprintf(dir, sizeof dir, "%s/none", root);
    assert_int_equal(rm_cgroup_pids(dir, NULL, &buf, &n, &cap), -1);
}

static void attach_checks_the_process(void **state)
{
    (void)state;
    struct rm_workload w;
    char err[256], me[32];
    snprintf(me, sizeof me, "%d", (int)getppid());
    assert_int_equal(rm_workload_attach_pid(&w, "/proc", me, err, sizeof err), 0);
    assert_int_equal(w.kind, RM_WORKLOAD_PID);
    assert_true(rm_workload_alive(&w, "/proc"));
    w.starttime++; /* a later process with the same pid is not the one attached to */
    assert_false(rm_workload_alive(&w, "/proc"));
    snprintf(me, sizeof me, "%d", (int)getpid());
    assert_int_equal(rm_workload_attach_pid(&w, "/proc", me, err, sizeof err), -1);
    assert_non_null(strstr(err, "runmon itself"));
    assert_int_equal(rm_workload_attach_pid(&w, "/proc", "0", err, sizeof err), -1);
    assert_int_equal(rm_workload_attach_cgroup(&w, "/proc", err, sizeof err), -1);
    assert_non_null(strstr(err, "not a cgroup"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(v2_step_found, setup, teardown),
        cmocka_unit_test_setup_teardown(v1_step_found, setup, teardown),
        cmocka_unit_test_setup_teardown(cgroup_pids_below_but_skipped, setup, teardown),
        cmocka_unit_test(attach_checks_the_process),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
