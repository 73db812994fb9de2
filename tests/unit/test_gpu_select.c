/* Which GPUs a session records (monitor/gpu_select.c) and the SLURM job it runs in
 * (model/job.c), from environments given as tables. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "model/job.h"
#include "monitor/gpu_select.h"

/* The environment of one case: NAME=VALUE strings, NULL-terminated. */
static const char *const *env_table;

static const char *env(const char *name)
{
    size_t n = strlen(name);
    for (const char *const *e = env_table; e && *e; e++)
        if (!strncmp(*e, name, n) && (*e)[n] == '=') return *e + n + 1;
    return NULL;
}

/* A node of n H200s (or a mix: the last one another model when mixed). */
static struct rm_gpu_info gpus[8];
static int ngpus;

static void node(int n, int mixed)
{
    memset(gpus, 0, sizeof gpus);
    ngpus = n;
    for (int i = 0; i < n; i++) {
        gpus[i].index = i;
        snprintf(gpus[i].uuid, sizeof gpus[i].uuid, "GPU-0000000%d-aaaa-bbbb-cccc-00000000000%d", i,
                 i);
        snprintf(gpus[i].name, sizeof gpus[i].name, "%s",
                 mixed && i == n - 1 ? "NVIDIA L40S" : "NVIDIA H200");
        snprintf(gpus[i].pci_bus_id, sizeof gpus[i].pci_bus_id, "00000000:%02X:00.0", 0x83 + i);
    }
}

/* The chosen GPUs' indices as "0,2". */
static const char *chosen(const struct rm_gpu_selection *s)
{
    static char buf[256];
    size_t u = 0;
    buf[0] = '\0';
    for (int i = 0; i < s->n; i++)
        u += (size_t)snprintf(buf + u, sizeof buf - u, "%s%d", i ? "," : "", gpus[s->pos[i]].index);
    return buf;
}

static struct rm_gpu_selection sel;

static void pick(const char *const *e, int all_gpus, const char *list)
{
    env_table = e;
    rm_gpu_select(gpus, ngpus, all_gpus, env, list, &sel);
}

static void test_nothing_named_keeps_all(void **state)
{
    (void)state;
    node(4, 0);
    pick((const char *const[]){NULL}, 0, NULL);
    assert_string_equal(chosen(&sel), "0,1,2,3");
    assert_true(sel.all);
    assert_string_equal(sel.by, "");
    char ids[512];
    assert_int_equal(rm_gpu_select_ids(&sel, gpus, ids, sizeof ids), 0);
    assert_string_equal(ids, ""); /* no -i at all */
}

static void test_cuda_indices_and_uuids(void **state)
{
    (void)state;
    node(4, 0);
    pick((const char *const[]){"CUDA_VISIBLE_DEVICES=3,1", "SLURM_JOB_GPUS=0", NULL}, 0, NULL);
    assert_string_equal(sel.by, "CUDA_VISIBLE_DEVICES");
    assert_string_equal(sel.value, "3,1");
    assert_string_equal(chosen(&sel), "1,3"); /* nvidia-smi's order */
    assert_int_equal(sel.nwarnings, 0);
    char ids[512];
    assert_int_equal(rm_gpu_select_ids(&sel, gpus, ids, sizeof ids), 0);
    assert_string_equal(ids, "GPU-00000001-aaaa-bbbb-cccc-000000000001,"
                             "GPU-00000003-aaaa-bbbb-cccc-000000000003");
    /* A UUID, a unique prefix of one (CUDA takes those), a bus id without its long domain. */
    pick((const char *const[]){"CUDA_VISIBLE_DEVICES=GPU-00000002-aaaa-bbbb-cccc-000000000002,"
                               "GPU-00000000,0000:84:00.0",
                               NULL},
         0, NULL);
    assert_string_equal(chosen(&sel), "0,1,2");
    assert_int_equal(sel.nwarnings, 0);
}

static void test_cuda_cut_at_first_invalid(void **state)
{
    (void)state;
    node(4, 0);
    pick((const char *const[]){"CUDA_VISIBLE_DEVICES=0,,x", NULL}, 0, NULL);
    assert_string_equal(chosen(&sel), "0");
    assert_int_equal(sel.nwarnings, 1);
    assert_non_null(strstr(sel.warning[0], "entry 2"));
    assert_non_null(strstr(sel.warning[0], "ignored: ',x'"));
    /* Out of range, a repeat, a prefix that fits two GPUs: each cuts there. */
    pick((const char *const[]){"CUDA_VISIBLE_DEVICES=2,9,1", NULL}, 0, NULL);
    assert_string_equal(chosen(&sel), "2");
    pick((const char *const[]){"CUDA_VISIBLE_DEVICES=1,1,2", NULL}, 0, NULL);
    assert_string_equal(chosen(&sel), "1");
    assert_non_null(strstr(sel.warning[0], "repeats"));
    pick((const char *const[]){"CUDA_VISIBLE_DEVICES=3,GPU-0000", NULL}, 0, NULL);
    assert_string_equal(chosen(&sel), "3");
}

static void test_names_no_gpu_here_records_all(void **state)
{
    (void)state;
    node(4, 0);
    pick((const char *const[]){"CUDA_VISIBLE_DEVICES=GPU-ffffffff-0000-0000-0000-000000000000",
                               NULL},
         0, NULL);
    assert_string_equal(chosen(&sel), "0,1,2,3");
    assert_true(sel.all);
    assert_int_equal(sel.nwarnings, 2);
    assert_non_null(strstr(sel.warning[1], "recording them all"));
}

static void test_empty_or_nodevfiles_passes_over(void **state)
{
    (void)state;
    node(4, 0);
    pick((const char *const[]){"CUDA_VISIBLE_DEVICES=", "SLURM_STEP_GPUS=NoDevFiles",
                               "SLURM_JOB_GPUS=2,3", NULL},
         0, NULL);
    assert_string_equal(sel.by, "SLURM_JOB_GPUS");
    assert_string_equal(chosen(&sel), "2,3");
    pick((const char *const[]){"NVIDIA_VISIBLE_DEVICES=all", NULL}, 0, NULL);
    assert_string_equal(sel.by, "");
    assert_true(sel.all);
}

/* The cgroup trap: the job's GPUs 2,3 of the node, nvidia-smi shows only them as 0,1. */
static void test_slurm_cgroup_visible_are_the_jobs(void **state)
{
    (void)state;
    node(2, 0);
    pick((const char *const[]){"SLURM_JOB_GPUS=2,3", NULL}, 0, NULL);
    assert_string_equal(sel.by, "SLURM_JOB_GPUS");
    assert_string_equal(chosen(&sel), "0,1");
    assert_true(sel.all);
    assert_int_equal(sel.nwarnings, 0);
    /* More listed than shown: those shown, said. */
    node(1, 0);
    pick((const char *const[]){"SLURM_STEP_GPUS=2,3", NULL}, 0, NULL);
    assert_string_equal(chosen(&sel), "0");
    assert_int_equal(sel.nwarnings, 1);
}

/* No cgroup: nvidia-smi shows the whole node, SLURM's indices are its indices. */
static void test_slurm_node_indices(void **state)
{
    (void)state;
    node(4, 0);
    pick((const char *const[]){"SLURM_STEP_GPUS=2,3", "SLURM_JOB_GPUS=0,1,2,3", NULL}, 0, NULL);
    assert_string_equal(sel.by, "SLURM_STEP_GPUS");
    assert_string_equal(chosen(&sel), "2,3");
    assert_false(sel.all);
    pick((const char *const[]){"SLURM_JOB_GPUS=1,7", NULL}, 0, NULL);
    assert_string_equal(chosen(&sel), "1");
    assert_int_equal(sel.nwarnings, 1);
    assert_non_null(strstr(sel.warning[0], "'7' names no GPU here"));
    /* A container's UUID list resolves by UUID even when the counts match. */
    pick((const char *const[]){"NVIDIA_VISIBLE_DEVICES=GPU-00000003-aaaa-bbbb-cccc-000000000003",
                               NULL},
         0, NULL);
    assert_string_equal(chosen(&sel), "3");
}

static void test_all_gpus_overrides(void **state)
{
    (void)state;
    node(4, 0);
    pick((const char *const[]){"CUDA_VISIBLE_DEVICES=1", NULL}, 1, NULL);
    assert_string_equal(sel.by, "--all-gpus");
    assert_string_equal(chosen(&sel), "0,1,2,3");
    assert_int_equal(rm_gpu_select_needs_list(env, 1), 0);
}

static void test_device_order_warning(void **state)
{
    (void)state;
    node(3, 1); /* two H200s and an L40S */
    pick((const char *const[]){"CUDA_VISIBLE_DEVICES=0", NULL}, 0, NULL);
    assert_int_equal(sel.nwarnings, 1);
    assert_non_null(strstr(sel.warning[0], "CUDA_DEVICE_ORDER"));
    pick((const char *const[]){"CUDA_VISIBLE_DEVICES=0", "CUDA_DEVICE_ORDER=PCI_BUS_ID", NULL}, 0,
         NULL);
    assert_int_equal(sel.nwarnings, 0);
    node(3, 0); /* one model: both orders agree */
    pick((const char *const[]){"CUDA_VISIBLE_DEVICES=0", NULL}, 0, NULL);
    assert_int_equal(sel.nwarnings, 0);
}

static void test_mig_uuids(void **state)
{
    (void)state;
    node(2, 0);
    const char *list = "GPU 0: NVIDIA H200 (UUID: GPU-00000000-aaaa-bbbb-cccc-000000000000)\n"
                       "GPU 1: NVIDIA H200 (UUID: GPU-00000001-aaaa-bbbb-cccc-000000000001)\n"
                       "  MIG 3g.71gb     Device  0: (UUID: MIG-11111111-0000-0000-0000-0000)\n"
                       "  MIG 1g.18gb     Device  1: (UUID: MIG-22222222-0000-0000-0000-0000)\n";
    const char *const e[] = {"CUDA_VISIBLE_DEVICES=MIG-22222222-0000-0000-0000-0000", NULL};
    env_table = e;
    assert_int_equal(rm_gpu_select_needs_list(env, 0), 1);
    pick(e, 0, list);
    assert_string_equal(chosen(&sel), "1");
    assert_int_equal(sel.nwarnings, 0);
    /* Without the list it cannot be resolved: said, and every GPU recorded. */
    pick(e, 0, NULL);
    assert_string_equal(chosen(&sel), "0,1");
    /* The old MIG-GPU-<uuid>/GI/CI form names its GPU itself. */
    const char *const old[] = {
        "CUDA_VISIBLE_DEVICES=MIG-GPU-00000000-aaaa-bbbb-cccc-000000000000/1/0", NULL};
    env_table = old;
    assert_int_equal(rm_gpu_select_needs_list(env, 0), 0);
    pick(old, 0, NULL);
    assert_string_equal(chosen(&sel), "0");
}

static void test_job_from_env(void **state)
{
    (void)state;
    struct rm_job j;
    env_table = (const char *const[]){"SLURM_JOB_ID=17",
                                      "SLURM_ARRAY_JOB_ID=15",
                                      "SLURM_ARRAY_TASK_ID=2",
                                      "SLURM_STEP_ID=batch",
                                      "SLURMD_NODENAME=gpu01",
                                      "SLURM_JOB_PARTITION=debug",
                                      "SLURM_JOB_NUM_NODES=1",
                                      "SLURM_NTASKS=x",
                                      "SLURM_PROCID=0",
                                      "SLURM_JOB_GPUS=2,3",
                                      NULL};
    rm_job_from_env(&j, env);
    assert_true(j.known);
    assert_string_equal(j.job_id, "17");
    assert_string_equal(j.array_job_id, "15");
    assert_string_equal(j.array_task_id, "2");
    assert_string_equal(j.step_id, "batch");
    assert_string_equal(j.node, "gpu01");
    assert_string_equal(j.partition, "debug");
    assert_string_equal(j.gpus, "2,3");
    assert_int_equal(j.nnodes, 1);
    assert_int_equal(j.ntasks, -1); /* not a number: unknown */
    assert_int_equal(j.procid, 0);
    env_table = (const char *const[]){"SLURM_ARRAY_TASK_ID=2", NULL};
    rm_job_from_env(&j, env);
    assert_false(j.known);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_nothing_named_keeps_all),
        cmocka_unit_test(test_cuda_indices_and_uuids),
        cmocka_unit_test(test_cuda_cut_at_first_invalid),
        cmocka_unit_test(test_names_no_gpu_here_records_all),
        cmocka_unit_test(test_empty_or_nodevfiles_passes_over),
        cmocka_unit_test(test_slurm_cgroup_visible_are_the_jobs),
        cmocka_unit_test(test_slurm_node_indices),
        cmocka_unit_test(test_all_gpus_overrides),
        cmocka_unit_test(test_device_order_warning),
        cmocka_unit_test(test_mig_uuids),
        cmocka_unit_test(test_job_from_env),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
