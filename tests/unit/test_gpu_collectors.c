/* Tests of monitor/gpu_collectors.c, the query-gpu collector's rows: what is data, the VRAM
 * thresholds (one event per crossing), the latest values the exporters read (energy by the
 * one rule, model/energy.h), which GPU a row is without an index column, and gpu.csv's rows.
 * The threshold rules are fed lines directly; the rest runs under the real supervisor
 * (tests/unit/collector_rig.h) on a fake clock, with a real child relaying the test's rows,
 * so every receipt time (the ts column, the latest values' time, the energy's spacings) is
 * the test's to the nanosecond. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include <math.h>

#include "collector_rig.h"
#include "monitor/gpu_collectors.h"
#include "saved_tz.h"

/* ---- thresholds, lines fed directly ---- */

struct seen {
    char name[16][32];
    json_t *data[16];
    int n;
};

static void keep_event(void *owner, const char *name, json_t *data)
{
    struct seen *s = owner;
    if (s->n < 16) {
        snprintf(s->name[s->n], sizeof s->name[0], "%s", name);
        s->data[s->n++] = data;
    } else {
        json_decref(data);
    }
}

static void no_health(void *owner, int c, enum rm_health h, const char *e, int n)
{
    (void)owner, (void)c, (void)h, (void)e, (void)n;
}

struct direct {
    char dir[64];
    struct seen seen;
    struct rm_session sess;
    pthread_mutex_t lock;
    struct rm_latest latest;
    atomic_int stop, wpid;
    struct rm_port port;
    struct rm_gpu_ctx g;
};

static struct direct *direct_new(const char *fields)
{
    struct direct *d = calloc(1, sizeof *d);
    assert_non_null(d);
    strcpy(d->dir, "/tmp/runmon-gpuc-XXXXXX");
    assert_non_null(mkdtemp(d->dir));
    pthread_mutex_init(&d->lock, NULL);
    d->sess.warn_pct = 80;
    d->sess.crit_pct = 95;
    d->sess.ngpus = 2;
    d->sess.gpus[0].memory_total_mb = 2000;
    d->sess.gpus[1].memory_total_mb = 2000;
    d->port = (struct rm_port){.owner = &d->seen,
                               .event = keep_event,
                               .set_health = no_health,
                               .lock = &d->lock,
                               .sess = &d->sess,
                               .latest = &d->latest,
                               .stop = &d->stop,
                               .workload_pid = &d->wpid,
                               .interval_s = 1};
    char err[256];
    assert_int_equal(rm_gpu_ctx_init(&d->g, &d->port, fields, err, sizeof err), 0);
    assert_int_equal(rm_stream_open(&d->g.out, d->dir, RM_STREAM_GPU), 0);
    return d;
}

static void direct_free(struct direct *d)
{
    rm_stream_close(&d->g.out);
    rm_gpu_ctx_fini(&d->g);
    for (int i = 0; i < d->seen.n; i++)
        json_decref(d->seen.data[i]);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", d->dir);
    assert_int_equal(system(cmd), 0);
    free(d);
}

static enum rm_line_kind feed(struct direct *d, const char *line, int64_t ts)
{
    char buf[256];
    snprintf(buf, sizeof buf, "%s", line);
    return rm_gpu_on_line(&d->g, buf, strlen(buf), ts);
}

/* Each crossing upwards is one event (a warning, or a critical, or a critical straight from
 * below the warning), never one per sample; falling below re-arms; a missing reading keeps
 * the level; each GPU keeps its own. */
static void check_thresholds(struct direct *d)
{
    static const struct {
        const char *line;
        const char *event; /* NULL: none */
        double pct, threshold;
    } rows[] = {
        {"0, GPU-a, 500, 1000", NULL, 0, 0},
        {"0, GPU-a, 850, 1000", "warning", 85.0, 80},
        {"0, GPU-a, 900, 1000", NULL, 0, 0},
        {"1, GPU-b, 100, 1000", NULL, 0, 0},
        {"0, GPU-a, 960, 1000", "critical", 96.0, 95},
        {"0, GPU-a, 990, 1000", NULL, 0, 0},
        {"0, GPU-a, [N/A], 1000", NULL, 0, 0},
        {"0, GPU-a, 995, 1000", NULL, 0, 0},
        {"0, GPU-a, 900, 1000", NULL, 0, 0}, /* down to warning: no event */
        {"0, GPU-a, 970, 1000", "critical", 97.0, 95},
        {"0, GPU-a, 100, 1000", NULL, 0, 0},
        {"0, GPU-a, 980, 1000", "critical", 98.0, 95}, /* from below the warning */
        {"1, GPU-b, 820, 1000", "warning", 82.0, 80},
        {"0, GPU-a, 981, [N/A]", NULL, 0, 0}, /* the session's total (2000): 49 %, kept */
        {"0, GPU-a, 200, 1000", NULL, 0, 0},
        {"0, GPU-a, 1700, [N/A]", "warning", 85.0, 80}, /* of the session's 2000 MiB */
    };
    int want = 0;
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        assert_int_equal(feed(d, rows[i].line, (int64_t)(i + 1) * RM_NS_PER_SEC), RM_LINE_DATA);
        if (!rows[i].event) {
            assert_int_equal(d->seen.n, want);
            continue;
        }
        assert_int_equal(d->seen.n, ++want);
        json_t *e = d->seen.data[want - 1];
        assert_string_equal(d->seen.name[want - 1], rows[i].event);
        assert_int_equal(json_integer_value(json_object_get(e, "gpu")), rows[i].line[0] - '0');
        assert_true(json_real_value(json_object_get(e, "pct")) == rows[i].pct);
        assert_true(json_real_value(json_object_get(e, "threshold_pct")) == rows[i].threshold);
        assert_string_equal(json_string_value(json_object_get(e, "uuid")),
                            rows[i].line[0] == '0' ? "GPU-a" : "GPU-b");
    }
    assert_int_equal(want, 6);
}

static void thresholds_one_event_per_crossing(void **state)
{
    (void)state;
    struct direct *d = direct_new("index,uuid,memory.used,memory.total");
    check_thresholds(d);
    direct_free(d);
}

/* Without an exporter the recorder keeps no latest values (the port's latest is NULL): the
 * thresholds still fire as above and every row is still written. */
static void no_latest_values_without_exporters(void **state)
{
    (void)state;
    struct direct *d = direct_new("index,uuid,memory.used,memory.total");
    d->port.latest = NULL;
    check_thresholds(d);
    assert_int_equal(rm_stream_flush_now(&d->g.out), 0);
    char path[128], line[256];
    snprintf(path, sizeof path, "%s/gpu.csv", d->dir);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    int rows = 0;
    while (fgets(line, sizeof line, f))
        rows++;
    fclose(f);
    assert_int_equal(rows, 1 + 16); /* the header and every row */
    assert_int_equal(d->latest.gpu[0].valid, 0);
    direct_free(d);
}

/* What is not a row: the wrong number of fields, an index that is not a number, a timestamp
 * that is not one; none of them counts as a GPU's sample. */
static void nondata_lines(void **state)
{
    (void)state;
    struct direct *d = direct_new("timestamp,index,memory.used,memory.total");
    assert_int_equal(feed(d, "2026/11/18 11:06:40.000, 0, 10, 1000", 1), RM_LINE_DATA);
    assert_int_equal(feed(d, "Xid 79: GPU has fallen off the bus", 2), RM_LINE_NONDATA);
    assert_int_equal(feed(d, "2026/11/18 11:06:41.000, x, 10, 1000", 3), RM_LINE_NONDATA);
    assert_int_equal(feed(d, "yesterday, 0, 10, 1000", 4), RM_LINE_NONDATA);
    assert_int_equal(feed(d, "2026/11/18 11:06:41.000, 0, 10", 5), RM_LINE_NONDATA);
    assert_int_equal(d->latest.gpu[0].ts_ns, 1);
    assert_int_equal(d->g.out.pending_rows, 1);
    direct_free(d);
}

/* A row's ts is nvidia-smi's timestamp read in the local zone (TZ=America/New_York here),
 * unless it is more than the guard (3 x 1 s) from the arrival: at the DST fold of
 * 2026-11-01, 01:30 local happens twice (05:30Z and 06:30Z); the one conversion the C
 * library gives fits one of the two rows, and the other row takes its arrival time, is
 * counted in the session's health and logged once. */
static void ts_is_the_sample_time_guarded(void **state)
{
    (void)state;
    struct saved_tz tz = set_tz("America/New_York");
    struct direct *d = direct_new("timestamp,index,memory.used,memory.total");
    const int64_t MS = RM_NS_PER_MS;
    /* 00:59:59.500 EDT = 04:59:59.500Z, received 30 ms later: the sample's time. */
    assert_int_equal(feed(d, "2026/11/01 00:59:59.500, 0, 10, 1000", 1793509199530 * MS),
                     RM_LINE_DATA);
    assert_int_equal(d->latest.gpu[0].ts_ns, 1793509199500 * MS);
    assert_int_equal(d->g.fallback.rows, 0);
    /* The fold: the same local text at 05:30Z (EDT) and 06:30Z (EST). */
    assert_int_equal(feed(d, "2026/11/01 01:30:00.000, 0, 10, 1000", 1793511000020 * MS),
                     RM_LINE_DATA);
    int64_t first = d->latest.gpu[0].ts_ns;
    assert_int_equal(feed(d, "2026/11/01 01:30:00.000, 0, 10, 1000", 1793514600020 * MS),
                     RM_LINE_DATA);
    int64_t second = d->latest.gpu[0].ts_ns;
    assert_true((first == 1793511000000 * MS && second == 1793514600020 * MS) ||
                (first == 1793511000020 * MS && second == 1793514600000 * MS));
    assert_int_equal(d->g.fallback.rows, 1);
    assert_int_equal(d->sess.collectors[RM_STREAM_GPU].arrival_ts_rows, 1);
    /* 03:00 EST = 08:00Z: the sample's time again. */
    assert_int_equal(feed(d, "2026/11/01 03:00:00.000, 0, 10, 1000", 1793520000010 * MS),
                     RM_LINE_DATA);
    assert_int_equal(d->latest.gpu[0].ts_ns, 1793520000000 * MS);
    assert_int_equal(d->g.fallback.rows, 1);
    assert_int_equal(d->seen.n, 1);
    assert_string_equal(d->seen.name[0], "gpu_time_fallback");
    assert_true(json_real_value(json_object_get(d->seen.data[0], "guard_s")) == 3.0);
    assert_int_equal(json_integer_value(json_object_get(d->seen.data[0], "rows")), 1);
    direct_free(d);
    restore_tz(&tz);
}

/* A threshold event is logged when its row is read, up to 0.5 s after the sample when rows
 * wait in the pipe: its data's `sample_ts` is the row's own `ts`, nvidia-smi's time (UTC
 * here), not the reading's. */
static void threshold_event_carries_the_sample_time(void **state)
{
    (void)state;
    struct saved_tz tz = set_tz("UTC");
    struct direct *d = direct_new("timestamp,index,memory.used,memory.total");
    /* A sample at 2026-11-18T11:06:40.100Z, read 400 ms later: GPU 0 at 85 %, GPU 1 at 97.5 %. */
    static const char *const rows[] = {"2026/11/18 11:06:40.100, 0, 1700, 2000",
                                       "2026/11/18 11:06:40.100, 1, 1950, 2000"};
    for (int i = 0; i < 2; i++)
        assert_int_equal(feed(d, rows[i], 1795000000500 * RM_NS_PER_MS), RM_LINE_DATA);
    assert_int_equal(d->seen.n, 2);
    assert_string_equal(d->seen.name[0], "warning");
    assert_string_equal(d->seen.name[1], "critical");
    for (int i = 0; i < 2; i++)
        assert_string_equal(json_string_value(json_object_get(d->seen.data[i], "sample_ts")),
                            "2026-11-18T11:06:40.100+00:00");
    direct_free(d);
    restore_tz(&tz);
}

/* The pipe is read when gpu.csv's batched write is due (0.5 s after the last one at a 0.1 s
 * interval): the rows of five samples are parsed together, stamped with nvidia-smi's time
 * whenever they are read. Rows stamped with their arrival (a fallback stretch; no timestamp
 * column) are read at every slot, and a stream that does not batch reads at every one. */
static void read_due_follows_the_batched_write(void **state)
{
    (void)state;
    const int64_t MS = RM_NS_PER_MS, T = 1793509199 * RM_NS_PER_SEC;
    struct saved_tz tz = set_tz("UTC");
    struct fake_clock clk;
    fake_clock_init(&clk, 1000 * RM_NS_PER_SEC, T);
    struct direct *d = direct_new("timestamp,index,memory.used,memory.total");
    d->g.out.clock = &clk.clock;
    rm_stream_batch(&d->g.out, 100 * MS);
    assert_true(rm_gpu_read_due(&d->g)); /* nothing written yet */
    /* 04:59:59.500 (TZ=UTC), received 30 ms later. */
    assert_int_equal(feed(d, "2026/11/01 04:59:59.500, 0, 10, 1000", T + 530 * MS), RM_LINE_DATA);
    rm_gpu_on_flush(&d->g);
    assert_int_equal(d->g.out.rows, 1); /* written: the next write is 0.5 s away */
    assert_false(rm_gpu_read_due(&d->g));
    fake_clock_set(&clk, 1000 * RM_NS_PER_SEC + 499 * MS);
    assert_false(rm_gpu_read_due(&d->g));
    fake_clock_set(&clk, 1000 * RM_NS_PER_SEC + 500 * MS);
    assert_true(rm_gpu_read_due(&d->g));
    rm_gpu_on_flush(&d->g); /* nothing pending: no write, still due */
    assert_true(rm_gpu_read_due(&d->g));

    /* A timestamp an hour off: the arrival time, and every slot reads until it fits again;
     * also once the stretches are no longer logged. */
    d->g.fallback.events = RM_TS_FALLBACK_LOG_MAX;
    assert_int_equal(feed(d, "2026/11/01 05:59:59.600, 0, 10, 1000", T + 630 * MS), RM_LINE_DATA);
    rm_gpu_on_flush(&d->g);
    assert_int_equal(d->g.fallback.rows, 1);
    assert_int_equal(d->seen.n, 0);
    assert_true(rm_gpu_read_due(&d->g));
    assert_int_equal(feed(d, "2026/11/01 04:59:59.700, 0, 10, 1000", T + 730 * MS), RM_LINE_DATA);
    assert_false(rm_gpu_read_due(&d->g));
    direct_free(d);

    d = direct_new("index,memory.used,memory.total"); /* no timestamp: arrival times */
    d->g.out.clock = &clk.clock;
    rm_stream_batch(&d->g.out, 100 * MS);
    assert_int_equal(feed(d, "0, 10, 1000", T), RM_LINE_DATA);
    rm_stream_flush_now(&d->g.out);
    assert_true(rm_gpu_read_due(&d->g));
    direct_free(d);

    d = direct_new("timestamp,index,memory.used,memory.total"); /* -i 1: no batching */
    d->g.out.clock = &clk.clock;
    rm_stream_batch(&d->g.out, RM_NS_PER_SEC);
    assert_int_equal(feed(d, "2026/11/01 04:59:59.800, 0, 10, 1000", T + 830 * MS), RM_LINE_DATA);
    rm_gpu_on_flush(&d->g);
    assert_true(rm_gpu_read_due(&d->g));
    direct_free(d);
    fake_clock_fini(&clk);
    restore_tz(&tz);
}

/* A batched read holds several samples; a segment still ends after the sample that reached
 * the rollover size, never inside one (here every sample reaches it: one segment each). */
static void batched_samples_seal_at_sample_ends(void **state)
{
    (void)state;
    const int64_t MS = RM_NS_PER_MS, T = 1793509199 * RM_NS_PER_SEC;
    struct saved_tz tz = set_tz("UTC");
    struct direct *d = direct_new("timestamp,index,memory.used,memory.total");
    rm_stream_batch(&d->g.out, 100 * MS);
    d->g.out.rollover_bytes = 1;
    const char *rows[] = {
        "2026/11/01 04:59:59.500, 0, 10, 1000", "2026/11/01 04:59:59.500, 1, 10, 1000",
        "2026/11/01 04:59:59.600, 0, 11, 1000", "2026/11/01 04:59:59.600, 1, 11, 1000",
        "2026/11/01 04:59:59.700, 0, 12, 1000", "2026/11/01 04:59:59.700, 1, 12, 1000"};
    for (int i = 0; i < 6; i++)
        assert_int_equal(feed(d, rows[i], T + 800 * MS), RM_LINE_DATA);
    rm_stream_flush_now(&d->g.out);
    const char *stamps[] = {"04:59:59.500", "04:59:59.600", "04:59:59.700"};
    for (int k = 0; k < 3; k++) {
        char path[128], line[256];
        snprintf(path, sizeof path, "%s/gpu-%06d.csv", d->dir, k + 1);
        FILE *f = fopen(path, "r");
        assert_non_null(f);
        int n = 0;
        assert_non_null(fgets(line, sizeof line, f)); /* the header */
        while (fgets(line, sizeof line, f)) {
            assert_non_null(strstr(line, stamps[k]));
            n++;
        }
        fclose(f);
        assert_int_equal(n, 2); /* both GPUs of sample k, and nothing else */
    }
    direct_free(d);
    restore_tz(&tz);
}

/* ---- under the supervisor, on the fake clock ---- */

/* The rig's child relays the FIFO; the gpu context writes gpu.csv in the rig's folder. */
static struct rig *gpu_rig(struct rm_gpu_ctx *g, const char *fields)
{
    struct rig *r = rig_new("exec cat \"$1\"");
    r->sess.warn_pct = 80;
    r->sess.crit_pct = 95;
    char err[256];
    assert_int_equal(rm_gpu_ctx_init(g, &r->port, fields, err, sizeof err), 0);
    assert_int_equal(rm_stream_open(&g->out, r->dir, RM_STREAM_GPU), 0);
    g->out.clock = &r->clk.clock;
    r->inner = rm_gpu_on_line;
    r->inner_flush = rm_gpu_on_flush;
    r->inner_ctx = g;
    rig_start(r);
    return r;
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    char *buf = calloc(1, 65536);
    assert_non_null(buf);
    size_t n = fread(buf, 1, 65535, f);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

static struct rm_latest_gpu latest_of(struct rig *r, int gpu)
{
    pthread_mutex_lock(&r->lock);
    struct rm_latest_gpu g = r->latest.gpu[gpu];
    pthread_mutex_unlock(&r->lock);
    return g;
}

/* The latest values carry the receipt time of the fake clock, and their energy follows the
 * rule: trapezoids between rows (100 W then 200 W for 1 s: 150 J), a missing power held from
 * the other end, nothing across a gap (over 3 intervals). gpu.csv's ts column is the same
 * clock's. */
static void latest_values_and_energy_on_the_clock(void **state)
{
    (void)state;
    struct rm_gpu_ctx g;
    struct rig *r = gpu_rig(&g, "index,uuid,power.draw,utilization.gpu");
    say(r, "0, GPU-a, 100.00, 50\n");
    await_line(r, 1);
    struct rm_latest_gpu l = latest_of(r, 0);
    assert_int_equal(l.ts_ns, R0);
    assert_true(l.v[RM_GM_POWER] == 100.0 && l.v[RM_GM_UTIL] == 50.0);
    assert_string_equal(l.uuid, "GPU-a");
    assert_true(l.energy_valid && l.energy_j == 0.0);

    advance(r, T0 + S);
    say(r, "0, GPU-a, 200.00, 60\n");
    await_line(r, 2);
    assert_true(latest_of(r, 0).energy_j == 150.0);
    advance(r, T0 + 2 * S + S / 2);
    say(r, "0, GPU-a, [N/A], 61\n"); /* 200 W held for 1.5 s */
    await_line(r, 3);
    l = latest_of(r, 0);
    assert_true(l.energy_j == 450.0);
    assert_true(isnan(l.v[RM_GM_POWER]));
    advance(r, T0 + 3 * S);
    say(r, "0, GPU-a, 300.00, 62\n"); /* 300 W held back over 0.5 s */
    await_line(r, 4);
    assert_true(latest_of(r, 0).energy_j == 600.0);
    advance(r, T0 + 6 * S + 1); /* just over 3 intervals: a gap */
    say(r, "0, GPU-a, 300.00, 63\n");
    await_line(r, 5);
    l = latest_of(r, 0);
    assert_true(l.energy_j == 600.0);
    assert_int_equal(l.ts_ns, R0 + 6 * S + 1);

    char path[160];
    snprintf(path, sizeof path, "%s/gpu.csv", r->dir);
    char *csv = slurp(path);
    assert_string_equal(csv, "ts,index,uuid,power.draw,utilization.gpu\n"
                             "2026-11-18T11:06:40.000+00:00,0,GPU-a,100.00,50\n"
                             "2026-11-18T11:06:41.000+00:00,0,GPU-a,200.00,60\n"
                             "2026-11-18T11:06:42.500+00:00,0,GPU-a,[N/A],61\n"
                             "2026-11-18T11:06:43.000+00:00,0,GPU-a,300.00,62\n"
                             "2026-11-18T11:06:46.000+00:00,0,GPU-a,300.00,63\n");
    free(csv);
    rig_free(r);
    rm_stream_close(&g.out);
    rm_gpu_ctx_fini(&g);
}

/* Without an index column a row's GPU is its place in its burst: rows received within 50 ms
 * of each other are one sample of GPUs 0, 1, ...; the next burst starts at GPU 0 again. And a
 * VRAM crossing under the supervisor is one event too. */
static void bursts_without_index(void **state)
{
    (void)state;
    struct rm_gpu_ctx g;
    struct rig *r = gpu_rig(&g, "uuid,memory.used,memory.total");
    say(r, "GPU-a, 100, 1000\nGPU-b, 900, 1000\n");
    await_line(r, 2);
    assert_string_equal(latest_of(r, 0).uuid, "GPU-a");
    assert_string_equal(latest_of(r, 1).uuid, "GPU-b");
    assert_int_equal(count(r, "warning"), 1);
    advance(r, T0 + RM_NS_PER_MS * 50); /* 50 ms later: still the same burst */
    say(r, "GPU-c, 100, 1000\n");
    await_line(r, 3);
    assert_string_equal(latest_of(r, 2).uuid, "GPU-c");
    advance(r, T0 + RM_NS_PER_MS * 100 + 1); /* over 50 ms after the last row: a new sample */
    say(r, "GPU-a, 960, 1000\nGPU-b, 950, 1000\n");
    await_line(r, 5);
    assert_int_equal(latest_of(r, 0).ts_ns, R0 + RM_NS_PER_MS * 100 + 1);
    assert_int_equal(latest_of(r, 2).ts_ns, R0 + RM_NS_PER_MS * 50);
    assert_int_equal(count(r, "critical"), 2);
    assert_int_equal(count(r, "warning"), 1);
    rig_free(r);
    rm_stream_close(&g.out);
    rm_gpu_ctx_fini(&g);
}

int main(void)
{
    json_object_seed(1);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(thresholds_one_event_per_crossing),
        cmocka_unit_test(no_latest_values_without_exporters),
        cmocka_unit_test(nondata_lines),
        cmocka_unit_test(ts_is_the_sample_time_guarded),
        cmocka_unit_test(threshold_event_carries_the_sample_time),
        cmocka_unit_test(read_due_follows_the_batched_write),
        cmocka_unit_test(batched_samples_seal_at_sample_ends),
        cmocka_unit_test(latest_values_and_energy_on_the_clock),
        cmocka_unit_test(bursts_without_index),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
