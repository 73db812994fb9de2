/* The Prometheus textfile writer (monitor/prom.c) and the run-log phase follower
 * (monitor/phase_follow.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "model/gpu_metrics.h"
#include "monitor/phase_follow.h"
#include "report/prom.h"

#define S 1000000000LL

static struct rm_latest L;
static char buf[1 << 18];

static void fill_gpu(int i, int64_t ts)
{
    double v[RM_GM_COUNT] = {53, 7, 1024, 2048, 300.5, 61, 1980, 3201};
    rm_latest_gpu_update(&L.gpu[i], ts, v, "GPU-abc", 7, 3 * S);
}

static struct rm_prom_input base_input(void)
{
    memset(&L, 0, sizeof L);
    struct rm_prom_input in = {
        .host = "node1",
        .session = "sess-1",
        .driver_version = "590.48.01",
        .status = "running",
        .latest = &L,
        .now_ns = 100 * S,
        .stale_ns = 5 * S,
        .have_command = 1,
    };
    return in;
}

static const char *render(const struct rm_prom_input *in)
{
    long n = rm_prom_render(buf, sizeof buf, in);
    assert_true(n > 0);
    assert_int_equal((size_t)n, strlen(buf));
    return buf;
}

/* Every sample line's family has # HELP and # TYPE lines before it; the text ends with a
 * newline and has no empty line. Returns the number of sample lines. */
static int check_complete(const char *text)
{
    size_t n = strlen(text);
    assert_true(n > 0);
    assert_true(text[n - 1] == '\n');
    assert_null(strstr(text, "\n\n"));
    char help[64][96], type[64][96];
    int nh = 0, nt = 0, samples = 0;
    const char *p = text;
    while (*p) {
        const char *e = strchr(p, '\n');
        assert_non_null(e);
        char line[1024];
        size_t len = (size_t)(e - p);
        assert_true(len < sizeof line);
        memcpy(line, p, len);
        line[len] = '\0';
        if (!strncmp(line, "# HELP ", 7)) {
            assert_true(sscanf(line + 7, "%95s", help[nh++]) == 1);
        } else if (!strncmp(line, "# TYPE ", 7)) {
            char kind[32];
            assert_true(sscanf(line + 7, "%95s %31s", type[nt++], kind) == 2);
            assert_true(!strcmp(kind, "gauge") || !strcmp(kind, "counter"));
        } else {
            char name[96];
            size_t k = strcspn(line, "{ ");
            assert_true(k > 0 && k < sizeof name);
            memcpy(name, line, k);
            name[k] = '\0';
            int found = 0;
            for (int i = 0; i < nh && i < nt; i++)
                found |= !strcmp(help[i], name) && !strcmp(type[i], name);
            if (!found) fail_msg("no HELP/TYPE for %s", name);
            samples++;
        }
        p = e + 1;
    }
    return samples;
}

static int count(const char *text, const char *needle)
{
    int n = 0;
    for (const char *p = strstr(text, needle); p; p = strstr(p + 1, needle))
        n++;
    return n;
}

static void escape_label_values(void **state)
{
    (void)state;
    char out[64];
    size_t len = 0;
    assert_int_equal(rm_prom_escape(out, sizeof out, &len, "a\\b\"c\nd"), 0);
    assert_string_equal(out, "a\\\\b\\\"c\\nd");
    assert_int_equal(len, strlen("a\\\\b\\\"c\\nd"));
    len = 0;
    assert_int_equal(rm_prom_escape(out, 4, &len, "abcdef"), -1);

    struct rm_prom_input in = base_input();
    in.host = "we\"ird\\host\nx";
    in.phase = "train/\"q\"";
    const char *t = render(&in);
    assert_non_null(strstr(t, "host=\"we\\\"ird\\\\host\\nx\""));
    assert_non_null(strstr(t, "phase=\"train/\\\"q\\\"\"} 1\n"));
    check_complete(t);
}

static void all_families_have_help_and_type(void **state)
{
    (void)state;
    struct rm_prom_input in = base_input();
    in.phase = "train/forward";
    fill_gpu(0, 99 * S);
    fill_gpu(1, 99 * S);
    fill_gpu(1, 100 * S);
    L.cpu_valid = 1;
    L.cpu_ts_ns = 99 * S;
    L.cpu_busy_ratio = 0.25;
    L.cpu_iowait_ratio = 0.01;
    L.mem_used_bytes = 1e9;
    L.mem_total_bytes = 4e9;
    L.proc_valid = 1;
    L.proc_rss_bytes = 123456;
    L.proc_cpu_ratio = 1.5;
    const char *t = render(&in);
    int samples = check_complete(t);
    /* 1 session + 1 phase + a collector_up per collector + 2 GPUs x 11 (9 + the energy bar's
     * low and high) + 4 cpu/mem + 2 process + 2 last ts */
    assert_int_equal(samples, 1 + 1 + RM_STREAM_COUNT + 22 + 4 + 2 + 2);
    assert_non_null(strstr(t, "runmon_gpu_utilization_ratio{gpu=\"1\",uuid=\"GPU-abc\","
                              "host=\"node1\",session=\"sess-1\"} 0.53\n"));
    assert_non_null(strstr(t, "runmon_gpu_memory_used_bytes{gpu=\"0\",uuid=\"GPU-abc\","
                              "host=\"node1\",session=\"sess-1\"} 1073741824\n"));
    assert_non_null(strstr(t, "runmon_gpu_sm_clock_hertz{gpu=\"0\""));
    assert_non_null(strstr(t, "} 1980000000\n"));
    assert_non_null(strstr(t, "# TYPE runmon_gpu_energy_joules_total counter\n"));
    assert_non_null(strstr(t, "runmon_phase_info{host=\"node1\",session=\"sess-1\","
                              "phase=\"train/forward\"} 1\n"));
    assert_non_null(strstr(t, "runmon_collector_up{collector=\"gpu\",host=\"node1\","
                              "session=\"sess-1\"} 1\n"));
    assert_non_null(strstr(t, "runmon_process_cpu_ratio{host=\"node1\",session=\"sess-1\"} 1.5\n"));
    assert_non_null(strstr(t, "runmon_last_sample_timestamp_seconds{collector=\"gpu\","
                              "host=\"node1\",session=\"sess-1\"} 100.000\n"));
    /* No family appears twice. */
    assert_int_equal(count(t, "# TYPE runmon_gpu_power_watts "), 1);
}

static void missing_values_are_omitted(void **state)
{
    (void)state;
    struct rm_prom_input in = base_input();
    double v[RM_GM_COUNT] = {NAN, NAN, 1024, 2048, NAN, 61, 1980, 3201};
    rm_latest_gpu_update(&L.gpu[0], 99 * S, v, NULL, 0, 3 * S);
    L.cpu_valid = 1;
    L.cpu_ts_ns = 99 * S;
    L.cpu_busy_ratio = 0.5;
    L.cpu_iowait_ratio = 0;
    L.mem_used_bytes = NAN; /* no /proc/meminfo */
    L.mem_total_bytes = NAN;
    L.proc_valid = 1;
    L.proc_rss_bytes = 4096;
    L.proc_cpu_ratio = NAN; /* first sample of the tree */
    const char *t = render(&in);
    check_complete(t);
    assert_null(strstr(t, "runmon_gpu_utilization_ratio"));
    assert_null(strstr(t, "runmon_gpu_memory_utilization_ratio"));
    assert_null(strstr(t, "runmon_gpu_power_watts"));
    assert_null(strstr(t, "runmon_gpu_energy_joules_total")); /* no power ever */
    assert_null(strstr(t, "runmon_host_memory"));
    assert_null(strstr(t, "runmon_process_cpu_ratio"));
    assert_null(strstr(t, "NaN"));
    assert_null(strstr(t, "nan"));
    assert_non_null(strstr(t, "runmon_gpu_temperature_celsius{gpu=\"0\""));
    assert_non_null(strstr(t, "runmon_cpu_iowait_ratio{host=\"node1\",session=\"sess-1\"} 0\n"));
    assert_non_null(strstr(t, "runmon_process_resident_bytes{"));
    /* The uuid falls back to the inventory's. */
    assert_non_null(strstr(t, "{gpu=\"0\",uuid=\"\","));
    in.ngpus_inventory = 1;
    in.inventory_uuid[0] = "GPU-inv";
    t = render(&in);
    assert_non_null(strstr(t, "{gpu=\"0\",uuid=\"GPU-inv\","));
}

static void degraded_collector_metrics_are_removed(void **state)
{
    (void)state;
    struct rm_prom_input in = base_input();
    fill_gpu(0, 99 * S);
    fill_gpu(1, 99 * S);
    L.cpu_valid = 1;
    L.cpu_ts_ns = 99 * S;
    L.cpu_busy_ratio = 0.5;
    L.mem_used_bytes = L.mem_total_bytes = NAN;
    const char *t = render(&in);
    assert_int_equal(count(t, "runmon_gpu_utilization_ratio{"), 2);

    in.collector[0] = RM_PROM_DOWN;
    in.collector[3] = RM_PROM_DISABLED;
    t = render(&in);
    check_complete(t);
    assert_null(strstr(t, "runmon_gpu_"));
    assert_null(strstr(t, "collector=\"gpu\",host=\"node1\",session=\"sess-1\"} 1"));
    assert_non_null(strstr(t, "runmon_collector_up{collector=\"gpu\",host=\"node1\","
                              "session=\"sess-1\"} 0\n"));
    assert_null(strstr(t, "collector=\"proc\""));         /* disabled: not reported */
    assert_non_null(strstr(t, "runmon_cpu_busy_ratio{")); /* the others stay */
    assert_null(strstr(t, "runmon_last_sample_timestamp_seconds{collector=\"gpu\""));

    /* Healthy again, but one GPU's latest row is stale: that GPU alone is removed. */
    in.collector[0] = RM_PROM_UP;
    fill_gpu(1, 100 * S);
    in.now_ns = 104 * S + S / 2;
    t = render(&in);
    assert_int_equal(count(t, "runmon_gpu_utilization_ratio{"), 1);
    assert_non_null(strstr(t, "runmon_gpu_utilization_ratio{gpu=\"1\""));
    /* The CPU collector degraded: its metrics go too. */
    in.collector[2] = RM_PROM_DOWN;
    t = render(&in);
    assert_null(strstr(t, "runmon_cpu_busy_ratio"));
    check_complete(t);
}

/* The one energy rule (model/energy.h), the same as the summary's: a row without power
 * holds the other end's value over its spacing; only a gap is never bridged. */
static void energy_integrates_power_without_bridging_gaps(void **state)
{
    (void)state;
    struct rm_latest_gpu g;
    memset(&g, 0, sizeof g);
    double v[RM_GM_COUNT];
    for (int k = 0; k < RM_GM_COUNT; k++)
        v[k] = NAN;
    int64_t gap = 3 * S; /* 3 x a 1 s interval */
    v[RM_GM_POWER] = 100;
    rm_latest_gpu_update(&g, 10 * S, v, NULL, 0, gap);
    assert_true(g.energy_valid);
    assert_true(g.energy_j == 0);
    v[RM_GM_POWER] = 200;
    rm_latest_gpu_update(&g, 11 * S, v, NULL, 0, gap); /* trapezoid: 150 W x 1 s */
    assert_true(fabs(g.energy_j - 150) < 1e-9);
    rm_latest_gpu_update(&g, 13 * S, v, NULL, 0, gap); /* 2 s at 200 W */
    assert_true(fabs(g.energy_j - 550) < 1e-9);
    rm_latest_gpu_update(&g, 20 * S, v, NULL, 0, gap); /* a 7 s gap: not bridged */
    assert_true(fabs(g.energy_j - 550) < 1e-9);
    rm_latest_gpu_update(&g, 21 * S, v, NULL, 0, gap); /* 1 s at 200 W */
    assert_true(fabs(g.energy_j - 750) < 1e-9);
    v[RM_GM_POWER] = NAN;
    rm_latest_gpu_update(&g, 22 * S, v, NULL, 0, gap); /* [N/A]: 200 W holds for 1 s */
    assert_true(fabs(g.energy_j - 950) < 1e-9);
    v[RM_GM_POWER] = 200;
    rm_latest_gpu_update(&g, 23 * S, v, NULL, 0, gap); /* and from the N/A row to 200 W */
    assert_true(fabs(g.energy_j - 1150) < 1e-9);
    rm_latest_gpu_update(&g, 23 * S, v, NULL, 0, gap); /* no time passed */
    rm_latest_gpu_update(&g, 22 * S, v, NULL, 0, gap); /* backwards: ignored */
    assert_true(fabs(g.energy_j - 1150) < 1e-9);

    struct rm_prom_input in = base_input();
    L.gpu[3] = g;
    in.now_ns = 23 * S;
    const char *t = render(&in);
    assert_non_null(strstr(t, "runmon_gpu_energy_joules_total{gpu=\"3\",uuid=\"\",host=\"node1\","
                              "session=\"sess-1\"} 1150\n"));
    /* The bar (docs/ENERGY.md): the 100 -> 200 W step gives the sampling term 50 J (x 1.75
     * with the 25 % duty cycle: 87.5 J), the lag 0.5 s x (100 - 200 W) = -50 J widens the high
     * side, and 6 s of 0.005 W resolution 0.03 J: low 1150 - 87.53, high 1150 + 50 + 87.53. */
    assert_non_null(strstr(t, "runmon_gpu_energy_low_joules{gpu=\"3\",uuid=\"\",host=\"node1\","
                              "session=\"sess-1\"} 1062.47\n"));
    assert_non_null(strstr(t, "runmon_gpu_energy_high_joules{gpu=\"3\",uuid=\"\",host=\"node1\","
                              "session=\"sess-1\"} 1287.53\n"));
}

static void field_names_and_overflow(void **state)
{
    (void)state;
    assert_int_equal(rm_gpu_metric_by_query_field("utilization.gpu", 15), RM_GM_UTIL);
    assert_int_equal(rm_gpu_metric_by_query_field("clocks.sm", 9), RM_GM_SMCLK);
    assert_int_equal(rm_gpu_metric_by_query_field("clocks.current.memory", 21), RM_GM_MEMCLK);
    assert_int_equal(rm_gpu_metric_by_query_field("name", 4), -1);
    struct rm_prom_input in = base_input();
    for (int i = 0; i < RM_MAX_GPUS; i++)
        fill_gpu(i, 99 * S);
    char small[512];
    assert_int_equal(rm_prom_render(small, sizeof small, &in), -1);
    int samples = check_complete(render(&in));
    assert_int_equal(samples, 1 + RM_STREAM_COUNT + RM_MAX_GPUS * 11 + 1);
}

/* The workload's processes (apps collector): one sample each, bytes, only while up and fresh. */
static void workload_process_memory(void **state)
{
    (void)state;
    struct rm_prom_input in = base_input();
    fill_gpu(0, 99 * S);
    L.nprocs = 2;
    L.procs_ts_ns = 99 * S;
    L.procs[0] = (struct rm_latest_proc){0, 445, "python3", 1860};
    L.procs[1] = (struct rm_latest_proc){1, 446, "say \"hi\"", NAN};
    const char *t = render(&in);
    check_complete(t);
    assert_non_null(strstr(t, "# TYPE runmon_gpu_process_memory_bytes gauge\n"));
    assert_non_null(strstr(t,
                           "runmon_gpu_process_memory_bytes{gpu=\"0\",uuid=\"GPU-abc\",pid=\"445\","
                           "process=\"python3\",host=\"node1\",session=\"sess-1\"} 1950351360\n"));
    assert_null(strstr(t, "pid=\"446\"")); /* no memory value: left out */
    in.collector[RM_STREAM_APPS] = RM_PROM_DOWN;
    assert_null(strstr(render(&in), "runmon_gpu_process_memory_bytes"));
    in.collector[RM_STREAM_APPS] = RM_PROM_UP;
    in.now_ns = 99 * S + in.stale_ns + 1; /* stale */
    assert_null(strstr(render(&in), "runmon_gpu_process_memory_bytes"));
    L.nprocs = 0;
}

#define LINE_ENTER(pid, path)                                                                      \
    "{\"ts\":\"x\",\"type\":\"phase_enter\",\"name\":\"n\",\"path\":\"" path                       \
    "\",\"depth\":0,\"pid\":" #pid ",\"t\":1.0}\n"
#define LINE_EXIT(pid, path)                                                                       \
    "{\"ts\":\"x\",\"type\":\"phase_exit\",\"name\":\"n\",\"path\":\"" path                        \
    "\",\"depth\":0,\"seconds\":1.0,\"status\":\"ok\",\"pid\":" #pid ",\"t\":1.0}\n"

static void append(const char *file, const char *text)
{
    int fd = open(file, O_WRONLY | O_APPEND | O_CREAT, 0644);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
}

static void phase_follow_tracks_open_phases(void **state)
{
    (void)state;
    char dir[] = "/tmp/runmon-test-prom.XXXXXX";
    assert_non_null(mkdtemp(dir));
    char file[256];
    snprintf(file, sizeof file, "%s/runlog.jsonl", dir);
    struct rm_phase_follow *f = malloc(sizeof *f);
    assert_non_null(f);
    rm_phase_follow_init(f, file, 0);
    assert_int_equal(rm_phase_follow_poll(f), -1); /* not there yet */
    assert_null(rm_phase_follow_current(f));

    append(file, "{\"type\":\"event\",\"event\":\"session_start\",\"pid\":1}\n");
    append(file, LINE_ENTER(10, "train"));
    append(file, LINE_ENTER(11, "train/forward"));
    assert_int_equal(rm_phase_follow_poll(f), 3);
    assert_string_equal(rm_phase_follow_current(f), "train/forward");
    /* A completed `phase` line changes nothing; a partial line waits for its end. */
    append(file, "{\"type\":\"phase\",\"name\":\"load\",\"seconds\":1.0,\"pid\":12}\n");
    const char *ex = LINE_EXIT(11, "train/forward");
    char half[512];
    snprintf(half, sizeof half, "%.*s", 20, ex);
    append(file, half);
    assert_int_equal(rm_phase_follow_poll(f), 1);
    assert_string_equal(rm_phase_follow_current(f), "train/forward");
    append(file, ex + 20);
    assert_int_equal(rm_phase_follow_poll(f), 1);
    assert_string_equal(rm_phase_follow_current(f), "train");
    /* Same path from another pid: exits match by (pid, path). */
    append(file, LINE_ENTER(20, "eval"));
    append(file, LINE_ENTER(21, "train"));
    append(file, LINE_EXIT(10, "train"));
    rm_phase_follow_poll(f);
    assert_string_equal(rm_phase_follow_current(f), "train"); /* pid 21's */
    append(file, LINE_EXIT(21, "train"));
    rm_phase_follow_poll(f);
    assert_string_equal(rm_phase_follow_current(f), "eval");
    /* An over-long line and garbage are skipped; the stream goes on after them. */
    char *big = malloc(RM_PF_MAX_LINE * 2 + 2);
    assert_non_null(big);
    memset(big, 'x', RM_PF_MAX_LINE * 2);
    memcpy(big, "{\"phase_enter\"", 14);
    big[RM_PF_MAX_LINE * 2] = '\n';
    big[RM_PF_MAX_LINE * 2 + 1] = '\0';
    append(file, big);
    free(big);
    append(file, "{\"type\":\"phase_enter\",broken\n");
    append(file, LINE_EXIT(20, "eval"));
    rm_phase_follow_poll(f);
    assert_null(rm_phase_follow_current(f));
    rm_phase_follow_fini(f);

    /* With pid checks, a phase whose writer is gone (kill -9: no exit line) is dropped. */
    rm_phase_follow_init(f, file, 1);
    char line[512];
    snprintf(line, sizeof line,
             "{\"type\":\"phase_enter\",\"path\":\"alive\",\"pid\":%d}\n"
             "{\"type\":\"phase_enter\",\"path\":\"dead\",\"pid\":2147483000}\n",
             (int)getpid());
    append(file, line);
    rm_phase_follow_poll(f);
    assert_string_equal(rm_phase_follow_current(f), "alive");
    rm_phase_follow_fini(f);
    free(f);
    unlink(file);
    rmdir(dir);
}

/* Issue 37: the per-GPU gauges are model/gpu_metrics.h's prom column: each named family is
 * in the exposition once, a gauge with its help, its value the metric scaled to its base
 * unit; names are unique and runmon_gpu_*. */
static void gpu_families_come_from_the_metric_table(void **state)
{
    (void)state;
    struct rm_prom_input in = base_input();
    fill_gpu(0, 99 * S);
    const char *t = render(&in);
    check_complete(t);
    int named = 0;
    for (int m = 0; m < RM_GM_COUNT; m++) {
        const struct rm_gpu_metric_def *g = &rm_gpu_metrics[m];
        if (!g->prom.name) continue;
        named++;
        assert_int_equal(strncmp(g->prom.name, "runmon_gpu_", 11), 0);
        assert_true(g->prom.help && g->prom.help[0] && g->prom.scale > 0);
        for (int k = 0; k < m; k++)
            if (rm_gpu_metrics[k].prom.name)
                assert_string_not_equal(rm_gpu_metrics[k].prom.name, g->prom.name);
        char b[256];
        snprintf(b, sizeof b, "# HELP %s %s\n# TYPE %s gauge\n", g->prom.name, g->prom.help,
                 g->prom.name);
        assert_int_equal(count(t, b), 1);
        snprintf(b, sizeof b, "%s{gpu=\"0\"", g->prom.name);
        assert_int_equal(count(t, b), 1);
    }
    assert_int_equal(named, RM_GM_COUNT);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(escape_label_values),
        cmocka_unit_test(all_families_have_help_and_type),
        cmocka_unit_test(gpu_families_come_from_the_metric_table),
        cmocka_unit_test(missing_values_are_omitted),
        cmocka_unit_test(degraded_collector_metrics_are_removed),
        cmocka_unit_test(energy_integrates_power_without_bridging_gaps),
        cmocka_unit_test(field_names_and_overflow),
        cmocka_unit_test(workload_process_memory),
        cmocka_unit_test(phase_follow_tracks_open_phases),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
