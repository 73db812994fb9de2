/* The Prometheus text exposition (report/prom.h): pure formatting. */
#include "report/prom.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "model/energy.h"
#include "model/gpu_metrics.h"
#include "model/streams.h"
#include "model/values.h"

/* ---- rendering ---------------------------------------------------------------------- */

struct out {
    char *buf;
    size_t cap, len;
    int overflow;
};

static void put(struct out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(struct out *o, const char *fmt, ...)
{
    if (o->overflow) return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(o->buf + o->len, o->cap - o->len, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= o->cap - o->len) {
        o->overflow = 1;
        return;
    }
    o->len += (size_t)n;
}

int rm_prom_escape(char *buf, size_t cap, size_t *len, const char *v)
{
    size_t n = *len;
    for (const char *p = v ? v : ""; *p; p++) {
        const char *rep = NULL;
        if (*p == '\\')
            rep = "\\\\";
        else if (*p == '"')
            rep = "\\\"";
        else if (*p == '\n')
            rep = "\\n";
        size_t k = rep ? 2 : 1;
        if (n + k >= cap) return -1;
        if (rep)
            memcpy(buf + n, rep, 2);
        else
            buf[n] = *p;
        n += k;
    }
    buf[n] = '\0';
    *len = n;
    return 0;
}

static void put_label(struct out *o, const char *name, const char *value, int first)
{
    put(o, "%s%s=\"", first ? "" : ",", name);
    if (o->overflow) return;
    if (rm_prom_escape(o->buf, o->cap, &o->len, value) < 0) {
        o->overflow = 1;
        return;
    }
    put(o, "\"");
}

static void family(struct out *o, const char *name, const char *type, const char *help)
{
    put(o, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* host and session close every label set. */
static void common_labels(struct out *o, const struct rm_prom_input *in, int first)
{
    put_label(o, "host", in->host, first);
    put_label(o, "session", in->session, 0);
}

static void value(struct out *o, double v)
{
    if (v == floor(v) && fabs(v) < 1e15)
        put(o, "} %.0f\n", v);
    else
        put(o, "} %.9g\n", v);
}

static int gpu_shown(const struct rm_prom_input *in, int i)
{
    const struct rm_latest_gpu *g = &in->latest->gpu[i];
    if (!g->valid) return 0;
    return !in->stale_ns || in->now_ns - g->ts_ns <= in->stale_ns;
}

static void gpu_labels(struct out *o, const char *name, const struct rm_prom_input *in, int i)
{
    char idx[16];
    snprintf(idx, sizeof idx, "%d", i);
    const char *uuid = in->latest->gpu[i].uuid;
    if (!uuid[0] && i < in->ngpus_inventory && in->inventory_uuid[i]) uuid = in->inventory_uuid[i];
    put(o, "%s{", name);
    put_label(o, "gpu", idx, 1);
    put_label(o, "uuid", uuid, 0);
    common_labels(o, in, 0);
}

/* The energy counter's error bar (docs/ENERGY.md): gauges, as a bound may move either way. */
static void render_energy_bar(struct out *o, const struct rm_prom_input *in)
{
    static const char *const names[] = {RM_PROM_GPU_ENERGY_LOW, RM_PROM_GPU_ENERGY_HIGH};
    static const char *const helps[] = {
        ("Low end of the error bar of " RM_PROM_GPU_ENERGY " (sampling, sensor lag and "
         "duty cycle; docs/ENERGY.md)."),
        ("High end of the error bar of " RM_PROM_GPU_ENERGY " (sampling, sensor lag and "
         "duty cycle; docs/ENERGY.md).")};
    for (int k = 0; k < 2; k++) {
        int headed = 0;
        for (int i = 0; i < RM_MAX_GPUS; i++) {
            const struct rm_latest_gpu *g = &in->latest->gpu[i];
            if (!gpu_shown(in, i) || !g->energy_valid) continue;
            struct rm_energy_bar bar = g->bar;
            if (!isnan(g->last_power_w))
                bar.lag_j +=
                    (double)RM_SENSOR_WINDOW_NS / 2e9 * (g->first_power_w - g->last_power_w);
            double lo, hi;
            rm_energy_bounds(g->energy_j, &bar, rm_sensor_duty(NULL, NULL), 0, &lo, &hi);
            if (!headed++) family(o, names[k], "gauge", helps[k]);
            gpu_labels(o, names[k], in, i);
            value(o, k ? hi : lo);
        }
    }
}

/* Whether the stream that fills part of the snapshot is healthy: only then is the part shown. */
static int subject_up(const struct rm_prom_input *in, enum rm_stream_subject part)
{
    int s = rm_stream_of_subject(part);
    return s >= 0 && in->collector[s] == RM_PROM_UP;
}

/* The collector label of the part's timestamp. */
static const char *subject_name(enum rm_stream_subject part)
{
    int s = rm_stream_of_subject(part);
    return s >= 0 ? rm_stream_defs[s].name : "";
}

static void render_gpus(struct out *o, const struct rm_prom_input *in)
{
    if (!subject_up(in, RM_SUBJECT_GPUS))
        return; /* degraded or off: its metrics are removed, not left stale */
    /* One gauge per metric of model/gpu_metrics.h that names its family, in table order. */
    for (int m = 0; m < RM_GM_COUNT; m++) {
        const struct rm_gpu_metric_def *gm = &rm_gpu_metrics[m];
        if (!gm->prom.name) continue;
        int headed = 0;
        for (int i = 0; i < RM_MAX_GPUS; i++) {
            if (!gpu_shown(in, i) || !isfinite(in->latest->gpu[i].v[m])) continue;
            if (!headed++) family(o, gm->prom.name, "gauge", gm->prom.help);
            gpu_labels(o, gm->prom.name, in, i);
            value(o, in->latest->gpu[i].v[m] * gm->prom.scale);
        }
    }
    int headed = 0;
    for (int i = 0; i < RM_MAX_GPUS; i++) {
        if (!gpu_shown(in, i) || !in->latest->gpu[i].energy_valid) continue;
        if (!headed++)
            family(o, RM_PROM_GPU_ENERGY, "counter",
                   "GPU energy since the recording started: power.draw integrated over time; "
                   "gaps longer than 3 sampling intervals are not bridged.");
        gpu_labels(o, RM_PROM_GPU_ENERGY, in, i);
        value(o, in->latest->gpu[i].energy_j);
    }
    render_energy_bar(o, in);
}

/* The workload's own processes: GPU memory each held in the latest pmon sample. */
static void render_processes(struct out *o, const struct rm_prom_input *in)
{
    const struct rm_latest *l = in->latest;
    if (!subject_up(in, RM_SUBJECT_PROCESSES) || !l->nprocs) return;
    if (in->stale_ns && in->now_ns - l->procs_ts_ns > in->stale_ns) return;
    int headed = 0;
    for (int i = 0; i < l->nprocs; i++) {
        const struct rm_latest_proc *p = &l->procs[i];
        if (!isfinite(p->vram_mb)) continue;
        if (!headed++)
            family(o, RM_PROM_GPU_PROCESS_MEMORY, "gauge", RM_PROM_GPU_PROCESS_MEMORY_HELP);
        char idx[16], pid[24];
        snprintf(idx, sizeof idx, "%d", p->gpu);
        snprintf(pid, sizeof pid, "%d", p->pid);
        const char *uuid = p->gpu >= 0 && p->gpu < RM_MAX_GPUS ? l->gpu[p->gpu].uuid : "";
        if (!uuid[0] && p->gpu >= 0 && p->gpu < in->ngpus_inventory && in->inventory_uuid[p->gpu])
            uuid = in->inventory_uuid[p->gpu];
        put(o, RM_PROM_GPU_PROCESS_MEMORY "{");
        put_label(o, "gpu", idx, 1);
        put_label(o, "uuid", uuid, 0);
        put_label(o, "pid", pid, 0);
        put_label(o, "process", p->name, 0);
        common_labels(o, in, 0);
        value(o, p->vram_mb * 1048576.0);
    }
}

static void simple(struct out *o, const struct rm_prom_input *in, const char *name,
                   const char *help, double v)
{
    if (!isfinite(v)) return;
    family(o, name, "gauge", help);
    put(o, "%s{", name);
    common_labels(o, in, 1);
    value(o, v);
}

/* The I/O sampler's rates over its last interval (monitor/io_sampler.c). */
static void render_io(struct out *o, const struct rm_prom_input *in)
{
    const struct rm_latest *l = in->latest;
    simple(o, in, "runmon_io_disk_read_bytes_per_second",
           "Bytes read from the whole disks (summed) per second over the I/O sampler's last "
           "interval.",
           l->disk_read_bps);
    simple(o, in, "runmon_io_disk_write_bytes_per_second",
           "Bytes written to the whole disks (summed) per second over the last interval.",
           l->disk_write_bps);
    simple(o, in, "runmon_io_network_receive_bytes_per_second",
           "Bytes received by the network interfaces (lo with --io-net-lo) per second.",
           l->net_rx_bps);
    simple(o, in, "runmon_io_network_transmit_bytes_per_second",
           "Bytes sent by the network interfaces (lo with --io-net-lo) per second.", l->net_tx_bps);
    simple(o, in, "runmon_io_process_read_bytes_per_second",
           "Bytes the recorded command's process tree made the storage layer read, per second.",
           l->tree_read_bps);
    simple(o, in, "runmon_io_process_write_bytes_per_second",
           "Bytes the recorded command's process tree wrote (dirtied), per second.",
           l->tree_write_bps);
    static const char *const res[3] = {"cpu", "io", "memory"};
    int headed = 0;
    for (int i = 0; i < 3; i++)
        for (int k = 0; k < 2; k++) {
            double v = k ? l->psi_full[i] : l->psi_some[i];
            if (!isfinite(v)) continue;
            if (!headed++)
                family(o, "runmon_io_pressure_ratio", "gauge",
                       "Share of the last interval some (kind=some) or all non-idle tasks "
                       "(kind=full) stalled on the resource (/proc/pressure), 0 to 1.");
            put(o, "runmon_io_pressure_ratio{");
            put_label(o, "resource", res[i], 1);
            put_label(o, "kind", k ? "full" : "some", 0);
            common_labels(o, in, 0);
            value(o, v);
        }
}

/* Completed phases by path: counters, so a phase shorter than the write period still counts. */
static void render_phase_counters(struct out *o, const struct rm_prom_input *in)
{
    if (!in->done || in->ndone <= 0) return;
    static const char *const names[] = {"runmon_phase_completed_total",
                                        "runmon_phase_seconds_total", "runmon_phase_short_total"};
    static const char *const helps[] = {
        "Phases completed in the session's run log (phase_exit and phase lines), by path.",
        "Summed wall-clock seconds of the completed phases, by path.",
        ("Completed phases shorter than 2 power-sensor windows (2 s), by path: their energy is "
         "mostly the sensor's smear (short_phase in summary.json).")};
    for (int k = 0; k < 3; k++) {
        family(o, names[k], "counter", helps[k]);
        for (int i = 0; i < in->ndone; i++) {
            put(o, "%s{", names[k]);
            put_label(o, "path", in->done[i].path, 1);
            common_labels(o, in, 0);
            if (k == 0)
                put(o, "} %llu\n", (unsigned long long)in->done[i].count);
            else if (k == 2)
                put(o, "} %llu\n", (unsigned long long)in->done[i].short_count);
            else
                put(o, "} %.3f\n", in->done[i].seconds);
        }
    }
}

long rm_prom_render(char *buf, size_t cap, const struct rm_prom_input *in)
{
    struct out o = {buf, cap, 0, 0};
    if (cap == 0) return -1;
    buf[0] = '\0';
    const struct rm_latest *l = in->latest;

    family(&o, "runmon_session_info", "gauge", "The recording session; always 1.");
    put(&o, "runmon_session_info{");
    common_labels(&o, in, 1);
    put_label(&o, "driver_version", in->driver_version, 0);
    put_label(&o, "status", in->status, 0);
    put(&o, "} 1\n");

    if (!in->final && in->phase && in->phase[0]) {
        family(&o, "runmon_phase_info", "gauge",
               "The phase open now in the session's run log (most recently entered); always 1.");
        put(&o, "runmon_phase_info{");
        common_labels(&o, in, 1);
        put_label(&o, "phase", in->phase, 0);
        put(&o, "} 1\n");
    }

    family(&o, "runmon_collector_up", "gauge",
           "1 while the collector is healthy, 0 while it is degraded or unavailable.");
    for (int c = 0; c < RM_STREAM_COUNT; c++) {
        if (in->collector[c] == RM_PROM_DISABLED) continue;
        put(&o, "runmon_collector_up{");
        put_label(&o, "collector", rm_stream_defs[c].name, 1);
        common_labels(&o, in, 0);
        put(&o, "} %d\n", in->collector[c] == RM_PROM_UP);
    }

    render_phase_counters(&o, in);
    if (!in->final) {
        simple(&o, in, "runmon_sample_interval_seconds", "The sampling interval (-i).",
               in->interval_s > 0 ? in->interval_s : NAN);
        simple(&o, in, "runmon_textfile_period_seconds",
               "How often this file is rewritten while the session runs.",
               in->period_s > 0 ? in->period_s : NAN);
        if (in->warn_ratio > 0 || in->crit_ratio > 0) {
            family(&o, "runmon_vram_threshold_ratio", "gauge",
                   "VRAM alert thresholds (--warn-pct, --crit-pct) as memory used / total.");
            static const char *const lv[] = {"warning", "critical"};
            double r[] = {in->warn_ratio, in->crit_ratio};
            for (int k = 0; k < 2; k++) {
                if (!(r[k] > 0)) continue;
                put(&o, "runmon_vram_threshold_ratio{");
                put_label(&o, "level", lv[k], 1);
                common_labels(&o, in, 0);
                value(&o, r[k]);
            }
        }
    }
    if (!in->final) render_gpus(&o, in);

    /* Live: the newest exported rows. Final: the newest rows ever taken, whatever the health
     * now, so an alert can still see how old the data is. */
    int64_t gpu_ts = 0;
    if (in->final || subject_up(in, RM_SUBJECT_GPUS))
        for (int i = 0; i < RM_MAX_GPUS; i++)
            if ((in->final ? l->gpu[i].valid : gpu_shown(in, i)) && l->gpu[i].ts_ns > gpu_ts)
                gpu_ts = l->gpu[i].ts_ns;

    int cpu_up = l->cpu_valid && subject_up(in, RM_SUBJECT_HOST);
    int cpu_ts = l->cpu_valid && (in->final || cpu_up);
    if (in->final) cpu_up = 0;
    if (cpu_up) {
        simple(&o, in, "runmon_cpu_busy_ratio",
               "Share of all CPUs' time spent busy (user, nice, system, irq, softirq) in the "
               "last interval, 0 to 1.",
               l->cpu_busy_ratio);
        simple(&o, in, "runmon_cpu_iowait_ratio",
               "Share of all CPUs' time spent idle waiting for I/O in the last interval, 0 to 1.",
               l->cpu_iowait_ratio);
        simple(&o, in, "runmon_host_memory_used_bytes",
               "Host memory in use (MemTotal - MemAvailable).", l->mem_used_bytes);
        simple(&o, in, "runmon_host_memory_total_bytes", "Host memory in all (MemTotal).",
               l->mem_total_bytes);
    }
    if (!in->final) render_processes(&o, in);
    int proc_up =
        !in->final && in->have_command && l->proc_valid && subject_up(in, RM_SUBJECT_TREE);
    if (proc_up) {
        simple(&o, in, "runmon_process_resident_bytes",
               "Resident memory of the recorded command's process tree.", l->proc_rss_bytes);
        simple(&o, in, "runmon_process_cpu_ratio",
               "CPU time of the recorded command's process tree in the last interval, in cores "
               "(1 = one core busy).",
               l->proc_cpu_ratio);
    }

    if (!in->final && l->io_valid && subject_up(in, RM_SUBJECT_IO)) render_io(&o, in);

    if (gpu_ts || cpu_ts) {
        family(&o, "runmon_last_sample_timestamp_seconds", "gauge",
               "When the latest sample exported here was taken, in seconds since the epoch.");
        if (gpu_ts) {
            put(&o, "runmon_last_sample_timestamp_seconds{");
            put_label(&o, "collector", subject_name(RM_SUBJECT_GPUS), 1);
            common_labels(&o, in, 0);
            put(&o, "} %.3f\n", (double)gpu_ts / 1e9);
        }
        if (cpu_ts) {
            put(&o, "runmon_last_sample_timestamp_seconds{");
            put_label(&o, "collector", subject_name(RM_SUBJECT_HOST), 1);
            common_labels(&o, in, 0);
            put(&o, "} %.3f\n", (double)l->cpu_ts_ns / 1e9);
        }
    }
    return o.overflow ? -1 : (long)o.len;
}
