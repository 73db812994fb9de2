/* The "held back by" rules (summary/held.h): each at and around its thresholds, NaN figures,
 * nothing when no rule fires, and the findings read from and added to a phase row. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "summary/held.h"

/* A busy GPU at full clock with the throttle reasons recorded and none active. */
static struct rm_held_gpu busy_gpu(void)
{
    struct rm_held_gpu g = {.index = 0,
                            .util_mean = 95,
                            .idle_share = 0,
                            .smclk_mean = 1980,
                            .smclk_max = 1980,
                            .smclk_max_source = "clocks.max.sm"};
    for (int k = 0; k < RM_THR_REASONS; k++)
        g.thr_share[k] = 0;
    return g;
}

static struct rm_held_in host(const struct rm_held_gpu *g, size_t n)
{
    return (struct rm_held_in){.proc_cpu_pct = 40,
                               .cores = 8,
                               .host_cpu_busy_pct = 30,
                               .mem_used_peak_mb = 1000,
                               .mem_total_mb = 64000,
                               .io_pressure_pct = 0,
                               .mem_pressure_pct = 0,
                               .gpu = g,
                               .ngpu = n};
}

static size_t run(const struct rm_held_in *in, struct rm_held_finding *f)
{
    return rm_held_rules(in, f, 8);
}

static double figure(const struct rm_held_finding *f, const char *name)
{
    for (size_t i = 0; i < f->nfig; i++)
        if (!strcmp(f->fig[i].name, name)) return f->fig[i].value;
    return -12345;
}

static void nothing_fires(void **state)
{
    (void)state;
    struct rm_held_finding f[8];
    struct rm_held_gpu g = busy_gpu();
    struct rm_held_in in = host(&g, 1);
    assert_int_equal(run(&in, f), 0);
    /* every figure unknown: no rule fires on what was not recorded */
    struct rm_held_gpu n = {
        .index = 0, .util_mean = NAN, .idle_share = NAN, .smclk_mean = NAN, .smclk_max = NAN};
    for (int k = 0; k < RM_THR_REASONS; k++)
        n.thr_share[k] = NAN;
    struct rm_held_in none = {NAN, NAN,   NAN, NAN, NAN, NAN, NAN, &n,
                              1,   false, NAN, NAN, NAN, NAN, NAN, NAN};
    assert_int_equal(run(&none, f), 0);
    none.ngpu = 0;
    assert_int_equal(run(&none, f), 0);
    /* a low GPU with nothing to blame says nothing (idle share below half) */
    g.util_mean = 30;
    g.idle_share = 0.4999;
    assert_int_equal(run(&in, f), 0);
}

static void input_bound(void **state)
{
    (void)state;
    struct rm_held_finding f[8];
    struct rm_held_gpu g = busy_gpu();
    g.util_mean = 49.99;
    g.idle_share = 0.9;
    struct rm_held_in in = host(&g, 1);
    in.proc_cpu_pct = RM_HELD_CPU_SATURATED_PCT;
    assert_int_equal(run(&in, f), 1); /* and not idle_gpu: input-bound says why */
    assert_int_equal(f[0].rule, RM_HELD_INPUT_BOUND);
    assert_string_equal(rm_held_rule_id(f[0].rule), "input_bound");
    assert_int_equal(f[0].gpu, 0);
    assert_true(figure(&f[0], "gpu_busy_pct") == 49.99);
    assert_true(figure(&f[0], "workload_cpu_pct") == 90);
    assert_true(figure(&f[0], "cores") == 8);
    assert_true(figure(&f[0], "io_pressure_pct") == -12345); /* io did not fire it */
    assert_true(figure(&f[0], "host_cpu_busy_pct") == 30);
    assert_string_equal(f[0].text, "input-bound: GPU 0 busy 50 % while the CPU was saturated (the "
                                   "workload at 90 % of one core, the host 30 % busy)");
    /* The host's CPUs all busy while the workload used some: not the reason by itself
     * (issue 38). Without the workload's own stalls that is said to be unknown ... */
    in.proc_cpu_pct = 60;
    in.host_cpu_busy_pct = RM_HELD_HOST_BUSY_PCT;
    assert_int_equal(run(&in, f), 1);
    assert_int_equal(f[0].rule, RM_HELD_STALLS_UNKNOWN);
    assert_string_equal(rm_held_rule_id(f[0].rule), "stalls_unknown");
    assert_string_equal(f[0].text,
                        "not known: GPU 0 busy 50 % with the host 90 % busy, host io pressure "
                        "0 %, but this session recorded no stall.csv: whether the workload itself "
                        "waited for a CPU or for I/O is not known");
    /* ... and with them, a workload that did not wait is not held back by the host: its
     * GPU idled while it worked */
    in.have_stall = true;
    in.wait_share = 0.1;
    in.waiting_threads = 0.05;
    in.blocked_share = 0;
    in.blkio_per_s = in.cg_io_pct = in.cg_mem_pct = NAN;
    assert_int_equal(run(&in, f), 1);
    assert_int_equal(f[0].rule, RM_HELD_IDLE_GPU);
    /* a workload that sleeps is held back by nothing, whatever the host did */
    in.proc_cpu_pct = 9.99;
    in.io_pressure_pct = 80;
    assert_int_equal(run(&in, f), 0);
    in.have_stall = false;
    assert_int_equal(run(&in, f), 1);
    assert_int_equal(f[0].rule, RM_HELD_STALLS_UNKNOWN);
    in.io_pressure_pct = 0;
    assert_int_equal(run(&in, f), 0);
    /* the workload's CPU unknown (a lone gpu.csv): the idle rule as before */
    in.proc_cpu_pct = NAN;
    assert_int_equal(run(&in, f), 1);
    assert_int_equal(f[0].rule, RM_HELD_IDLE_GPU);
    in.proc_cpu_pct = 60;
    in.host_cpu_busy_pct = 89.99;
    assert_int_equal(run(&in, f), 1);
    assert_int_equal(f[0].rule, RM_HELD_IDLE_GPU);
    in.host_cpu_busy_pct = NAN;
    in.proc_cpu_pct = 89.99; /* below: now the idle rule speaks */
    assert_int_equal(run(&in, f), 1);
    assert_int_equal(f[0].rule, RM_HELD_IDLE_GPU);
    in.proc_cpu_pct = 400;
    g.util_mean = RM_HELD_BUSY_LOW_PCT; /* not below */
    assert_int_equal(run(&in, f), 1);
    assert_int_equal(f[0].rule, RM_HELD_IDLE_GPU);
    /* host io pressure alone, the CPU unknown: unknown, never input-bound */
    g.util_mean = 10;
    in.proc_cpu_pct = NAN;
    in.io_pressure_pct = RM_HELD_IO_PRESSURE_PCT;
    in.cores = NAN;
    assert_int_equal(run(&in, f), 1);
    assert_int_equal(f[0].rule, RM_HELD_STALLS_UNKNOWN);
    assert_true(figure(&f[0], "io_pressure_pct") == 10);
    in.io_pressure_pct = 9.99;
    assert_int_equal(run(&in, f), 1);
    assert_int_equal(f[0].rule, RM_HELD_IDLE_GPU);
    /* GPU busy unknown: no input side */
    g.util_mean = NAN;
    in.io_pressure_pct = 50;
    assert_int_equal(run(&in, f), 1);
    assert_int_equal(f[0].rule, RM_HELD_IDLE_GPU);
}

/* The workload's own stalls (issue 38): run-queue wait, blocked threads, its cgroup. */
static struct rm_held_in stalled(const struct rm_held_gpu *g, size_t n)
{
    struct rm_held_in in = host(g, n);
    in.have_stall = true;
    in.wait_share = 0;
    in.waiting_threads = 0;
    in.blocked_share = 0;
    in.blkio_per_s = in.cg_io_pct = in.cg_mem_pct = NAN;
    in.host_cpu_busy_pct = 97;
    in.io_pressure_pct = 12;
    return in;
}

static void own_stalls(void **state)
{
    (void)state;
    struct rm_held_finding f[8];
    struct rm_held_gpu g = busy_gpu();
    g.util_mean = 3;
    g.idle_share = 0.9;
    struct rm_held_in in = stalled(&g, 1);
    in.wait_share = RM_HELD_WAIT_SHARE;
    in.waiting_threads = 0.41;
    assert_int_equal(run(&in, f), 1);
    assert_int_equal(f[0].rule, RM_HELD_CPU_STARVED);
    assert_string_equal(rm_held_rule_id(f[0].rule), "cpu_starved");
    assert_true(figure(&f[0], "run_queue_wait_share") == 0.25);
    assert_true(figure(&f[0], "host_cpu_busy_pct") == 97); /* context */
    assert_string_equal(f[0].text,
                        "CPU-starved: GPU 0 busy 3 % while its threads were runnable but waiting "
                        "for a CPU 41 % of the phase (25 % of the time they were runnable; "
                        "context: the host 97 % busy, host io pressure 12 %)");
    /* starved also takes the place of input-bound: it says why the core was not enough */
    in.proc_cpu_pct = 95;
    assert_int_equal(run(&in, f), 1);
    assert_int_equal(f[0].rule, RM_HELD_CPU_STARVED);
    in.proc_cpu_pct = 40;
    in.wait_share = 0.2499;
    assert_int_equal(run(&in, f), 1);
    assert_int_equal(f[0].rule, RM_HELD_IDLE_GPU);
    in.wait_share = 0.9; /* a share of almost nothing: a sleeper's few wakeups */
    in.waiting_threads = 0.2499;
    assert_int_equal(run(&in, f), 1);
    assert_int_equal(f[0].rule, RM_HELD_IDLE_GPU);
    in.waiting_threads = 0;
    /* blocked on I/O: in samples, by delay accounting, by its cgroup's io pressure */
    in.blocked_share = RM_HELD_BLOCKED_SHARE;
    assert_int_equal(run(&in, f), 1);
    assert_int_equal(f[0].rule, RM_HELD_IO_BOUND);
    assert_string_equal(f[0].text, "I/O-bound: GPU 0 busy 3 % while its threads were blocked on "
                                   "I/O in 30 % of samples; context: the host 97 % busy, host io "
                                   "pressure 12 %");
    in.blocked_share = 0.2999;
    assert_int_equal(run(&in, f), 1);
    assert_int_equal(f[0].rule, RM_HELD_IDLE_GPU);
    in.blkio_per_s = RM_HELD_BLKIO_SHARE;
    in.cg_io_pct = 4;
    assert_int_equal(run(&in, f), 1);
    assert_int_equal(f[0].rule, RM_HELD_IO_BOUND);
    assert_true(figure(&f[0], "blkio_delay_per_s") == 0.3);
    assert_string_equal(f[0].text, "I/O-bound: GPU 0 busy 3 % while its threads were blocked on "
                                   "I/O in 30 % of samples; blkio delay 0.30 s a second; its "
                                   "cgroup's io pressure 4 %; context: the host 97 % busy, host "
                                   "io pressure 12 %");
    in.blkio_per_s = NAN;
    in.cg_io_pct = RM_HELD_CG_PRESSURE_PCT;
    assert_int_equal(run(&in, f), 1);
    assert_int_equal(f[0].rule, RM_HELD_IO_BOUND);
    /* a busy GPU: its workload's stalls held nothing back */
    g.util_mean = 80;
    g.idle_share = 0;
    assert_int_equal(run(&in, f), 0);
}

/* One finding per rule and phase, listing the GPUs it applies to. */
static void one_per_phase(void **state)
{
    (void)state;
    struct rm_held_finding f[8];
    struct rm_held_gpu g[8];
    for (int i = 0; i < 8; i++) {
        g[i] = busy_gpu();
        g[i].index = i == 7 ? 9 : i;
        g[i].util_mean = 2 + i;
        g[i].idle_share = 0.6;
    }
    struct rm_held_in in = stalled(g, 8);
    in.proc_cpu_pct = 120;
    assert_int_equal(run(&in, f), 1);
    assert_int_equal(f[0].rule, RM_HELD_INPUT_BOUND);
    assert_int_equal(f[0].ngpus, 8);
    assert_int_equal(f[0].gpu, 0);
    assert_int_equal(f[0].gpus[7], 9);
    assert_true(figure(&f[0], "gpu_busy_pct") == 9); /* the highest of them */
    assert_string_equal(f[0].text, "input-bound: GPUs 0-6, 9 busy at most 9 % while the CPU was "
                                   "saturated (the workload at 120 % of one core, the host 97 % "
                                   "busy)");
    in.proc_cpu_pct = 40;
    assert_int_equal(run(&in, f), 1);
    assert_int_equal(f[0].rule, RM_HELD_IDLE_GPU);
    assert_string_equal(f[0].text, "idle GPU: GPUs 0-6, 9 ran no kernel in at least 60 % of "
                                   "samples");
    json_t *j = rm_held_finding_json(&f[0]);
    char *txt = json_dumps(json_object_get(j, "gpus"), JSON_COMPACT);
    assert_string_equal(txt, "[0,1,2,3,4,5,6,9]");
    free(txt);
    json_decref(j);
}

static void capped(void **state)
{
    (void)state;
    struct rm_held_finding f[8];
    struct rm_held_gpu g = busy_gpu();
    g.thr_share[RM_THR_SW_POWER_CAP] = RM_HELD_THROTTLE_SHARE;
    g.smclk_mean = 1781; /* < 0.9 x 1980 = 1782 */
    struct rm_held_in in = host(&g, 1);
    assert_int_equal(run(&in, f), 1);
    assert_int_equal(f[0].rule, RM_HELD_POWER_CAPPED);
    assert_string_equal(rm_held_rule_id(f[0].rule), "power_capped");
    assert_true(figure(&f[0], "sw_power_cap_share") == 0.2);
    assert_true(figure(&f[0], "sm_clock_mean_mhz") == 1781);
    assert_true(figure(&f[0], "sm_clock_max_mhz") == 1980);
    assert_string_equal(f[0].fig[3].name, "sm_clock_max_source");
    assert_string_equal(f[0].fig[3].text, "clocks.max.sm");
    assert_string_equal(f[0].text,
                        "power capped: GPU 0 sw_power_cap active in 20 % of samples, SM clock "
                        "1781 of 1980 MHz");
    g.smclk_mean = 1782; /* at 0.9 x max: not below */
    assert_int_equal(run(&in, f), 0);
    g.smclk_mean = 1000;
    g.thr_share[RM_THR_SW_POWER_CAP] = 0.1999;
    assert_int_equal(run(&in, f), 0);
    /* the most active reason of the group names the finding */
    g.thr_share[RM_THR_HW_POWER_BRAKE] = 0.7;
    assert_int_equal(run(&in, f), 1);
    assert_true(figure(&f[0], "hw_power_brake_slowdown_share") == 0.7);
    /* no maximum to compare with, or no clock: nothing */
    g.smclk_max = NAN;
    assert_int_equal(run(&in, f), 0);
    g.smclk_max = 1980;
    g.smclk_mean = NAN;
    assert_int_equal(run(&in, f), 0);
    g.smclk_mean = 1000;
    /* an idle GPU is the idle rule's, not the cap's */
    g.idle_share = RM_HELD_IDLE_SHARE;
    assert_int_equal(run(&in, f), 1);
    assert_int_equal(f[0].rule, RM_HELD_IDLE_GPU);
    g.idle_share = 0;
    /* thermal: hw_slowdown counts with the thermal reasons; both caps at once */
    g.thr_share[RM_THR_HW_SLOWDOWN] = 0.3;
    g.thr_share[RM_THR_SW_THERMAL] = NAN;
    assert_int_equal(run(&in, f), 2);
    assert_int_equal(f[0].rule, RM_HELD_POWER_CAPPED);
    assert_int_equal(f[1].rule, RM_HELD_THERMAL_CAPPED);
    assert_true(figure(&f[1], "hw_slowdown_share") == 0.3);
    assert_string_equal(f[1].text, "thermal capped: GPU 0 hw_slowdown active in 30 % of samples, "
                                   "SM clock 1000 of 1980 MHz");
    /* gpu_idle, sync_boost and the others are no cap */
    struct rm_held_gpu o = busy_gpu();
    o.smclk_mean = 300;
    o.thr_share[RM_THR_GPU_IDLE] = 1;
    o.thr_share[RM_THR_SYNC_BOOST] = 1;
    o.thr_share[RM_THR_APP_CLOCKS] = 1;
    in.gpu = &o;
    assert_int_equal(run(&in, f), 0);
}

static void idle_and_memory(void **state)
{
    (void)state;
    struct rm_held_finding f[8];
    struct rm_held_gpu g[2] = {busy_gpu(), busy_gpu()};
    g[1].index = 3;
    g[1].util_mean = 2;
    g[1].idle_share = RM_HELD_IDLE_SHARE;
    struct rm_held_in in = host(g, 2);
    assert_int_equal(run(&in, f), 1);
    assert_int_equal(f[0].rule, RM_HELD_IDLE_GPU);
    assert_int_equal(f[0].gpu, 3);
    assert_string_equal(f[0].text, "idle GPU: GPU 3 ran no kernel in 50 % of samples");
    g[1].index = -1;
    assert_int_equal(run(&in, f), 1);
    assert_string_equal(f[0].text, "idle GPU: a GPU ran no kernel in 50 % of samples");
    g[1] = busy_gpu();
    /* host memory: at 95 % of the total, and the pressure figure */
    in.mem_used_peak_mb = 0.95 * 64000;
    assert_int_equal(run(&in, f), 1);
    assert_int_equal(f[0].rule, RM_HELD_HOST_MEMORY);
    assert_int_equal(f[0].gpu, -1);
    assert_string_equal(f[0].text, "host memory pressure: 95 % of 64000 MiB used at peak");
    in.mem_used_peak_mb = 0.9499 * 64000;
    assert_int_equal(run(&in, f), 0);
    in.mem_total_mb = 0;
    in.mem_used_peak_mb = 5;
    assert_int_equal(run(&in, f), 0);
    in.mem_total_mb = NAN;
    /* the host's memory pressure alone is no reason (issue 38); its cgroup's is */
    in.mem_pressure_pct = RM_HELD_MEM_PRESSURE_PCT;
    assert_int_equal(run(&in, f), 0);
    in.cg_mem_pct = RM_HELD_MEM_PRESSURE_PCT;
    assert_int_equal(run(&in, f), 1);
    assert_string_equal(f[0].text, "host memory pressure: its cgroup's memory pressure 10 %, "
                                   "memory pressure 10 %");
    in.cg_mem_pct = 9.99;
    assert_int_equal(run(&in, f), 0);
}

static void more_than_max(void **state)
{
    (void)state;
    struct rm_held_gpu g[3] = {busy_gpu(), busy_gpu(), busy_gpu()};
    for (int i = 0; i < 3; i++)
        g[i].index = i, g[i].idle_share = 1;
    struct rm_held_in in = host(g, 3);
    in.mem_used_peak_mb = in.mem_total_mb;
    struct rm_held_finding f[1];
    assert_int_equal(rm_held_rules(&in, f, 1), 2); /* counted, one written */
    assert_int_equal(f[0].rule, RM_HELD_IDLE_GPU);
    assert_int_equal(f[0].ngpus, 3);
}

static void phase_row(void **state)
{
    (void)state;
    json_error_t e;
    json_t *doc = json_loads(
        "{\"gpus\":[{\"index\":0,\"sm_clock_mhz\":{\"mean\":1500,\"max\":1980}}]}", 0, &e);
    json_t *row = json_loads(
        "{\"gpus\":[{\"index\":0,\"util_pct\":{\"mean\":97},\"idle_share\":0,"
        "\"sm_clock_mhz\":{\"mean\":1500,\"max\":1600},\"throttle_share\":{\"sw_power_cap\":0.8}}],"
        "\"proc\":{\"cpu_pct\":{\"mean\":12}},\"cpu\":{\"mem_used_peak_mb\":10,\"mem_total_mb\":"
        "100}}",
        0, &e);
    assert_non_null(doc);
    assert_non_null(row);
    rm_held_phase(row, doc);
    json_t *h = json_object_get(row, "held_back_by");
    assert_int_equal(json_array_size(h), 1);
    json_t *f0 = json_array_get(h, 0);
    assert_string_equal(json_string_value(json_object_get(f0, "rule")), "power_capped");
    assert_int_equal(json_integer_value(json_object_get(f0, "gpu")), 0);
    json_t *figs = json_object_get(f0, "figures");
    assert_true(json_real_value(json_object_get(figs, "sw_power_cap_share")) == 0.8);
    assert_true(json_number_value(json_object_get(figs, "sm_clock_max_mhz")) == 1980);
    assert_string_equal(json_string_value(json_object_get(figs, "sm_clock_max_source")),
                        "highest seen in the session");
    /* a phase of a session with stall.csv that no row of it overlaps: nothing known, so
     * nothing fires, and not "stalls_unknown" (the session recorded them) */
    json_t *t = json_loads("{\"stall\":{\"samples\":0,\"run_queue_wait_share\":null},"
                           "\"gpus\":[{\"index\":0,\"util_pct\":{\"mean\":5}}],"
                           "\"proc\":{\"cpu_pct\":{\"mean\":50}},\"cpu\":{\"idle_pct\":"
                           "{\"mean\":1}},\"io\":{\"io_some_pct\":50}}",
                           0, &e);
    assert_non_null(t);
    rm_held_phase(t, doc);
    assert_null(json_object_get(t, "held_back_by"));
    json_object_del(t, "stall"); /* a session without stall.csv: said to be unknown */
    rm_held_phase(t, doc);
    assert_string_equal(json_string_value(json_object_get(
                            json_array_get(json_object_get(t, "held_back_by"), 0), "rule")),
                        "stalls_unknown");
    json_decref(t);
    /* clocks.max.sm recorded in the phase: that is the maximum */
    json_object_del(row, "held_back_by");
    json_object_set_new(json_array_get(json_object_get(row, "gpus"), 0), "sm_clock_max_mhz",
                        json_real(1600));
    rm_held_phase(row, doc);
    assert_null(json_object_get(row, "held_back_by")); /* 1500 is not below 0.9 x 1600 */
    /* no throttle columns: nothing, and no key */
    json_object_del(json_array_get(json_object_get(row, "gpus"), 0), "throttle_share");
    json_object_del(json_array_get(json_object_get(row, "gpus"), 0), "sm_clock_max_mhz");
    rm_held_phase(row, doc);
    assert_null(json_object_get(row, "held_back_by"));
    /* the host's finding has gpu null */
    json_object_set_new(json_object_get(row, "cpu"), "mem_used_peak_mb", json_real(99));
    rm_held_phase(row, doc);
    f0 = json_array_get(json_object_get(row, "held_back_by"), 0);
    assert_string_equal(json_string_value(json_object_get(f0, "rule")), "host_memory");
    assert_true(json_is_null(json_object_get(f0, "gpu")));
    json_decref(row);
    json_decref(doc);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(nothing_fires), cmocka_unit_test(input_bound),
        cmocka_unit_test(capped),        cmocka_unit_test(idle_and_memory),
        cmocka_unit_test(more_than_max), cmocka_unit_test(phase_row),
        cmocka_unit_test(own_stalls),    cmocka_unit_test(one_per_phase),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
