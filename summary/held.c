#include "summary/held.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"

static const char *const rule_ids[RM_HELD_RULES] = {"input_bound", "power_capped", "thermal_capped",
                                                    "idle_gpu", "host_memory"};

const char *rm_held_rule_id(enum rm_held_rule r)
{
    return (unsigned)r < RM_HELD_RULES ? rule_ids[r] : "?";
}

/* The findings being written: past max they are only counted. */
struct sink {
    struct rm_held_finding *out;
    size_t n, max;
    struct rm_held_finding spare; /* written and dropped: past max */
};

static struct rm_held_finding *next(struct sink *k, enum rm_held_rule rule, int gpu)
{
    struct rm_held_finding *f = k->n < k->max ? &k->out[k->n] : &k->spare;
    k->n++;
    memset(f, 0, sizeof *f);
    f->rule = rule;
    f->gpu = gpu;
    return f;
}

static void fig(struct rm_held_finding *f, const char *name, double v)
{
    if (f->nfig < RM_HELD_MAX_FIGURES) f->fig[f->nfig++] = (struct rm_held_figure){name, v, NULL};
}

static void fig_text(struct rm_held_finding *f, const char *name, const char *text)
{
    if (f->nfig < RM_HELD_MAX_FIGURES) f->fig[f->nfig++] = (struct rm_held_figure){name, 0, text};
}

__attribute__((format(printf, 2, 3))) static void say(struct rm_held_finding *f, const char *fmt,
                                                      ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(f->text, sizeof f->text, fmt, ap);
    va_end(ap);
}

/* "GPU 3", or "a GPU" when its index is unknown. */
static const char *gpu_name(const struct rm_held_gpu *g, char *buf, size_t len)
{
    if (g->index < 0) return "a GPU";
    snprintf(buf, len, "GPU %d", g->index);
    return buf;
}

static bool at_least(double v, double threshold)
{
    return !isnan(v) && v >= threshold;
}

/* GPU busy low while the CPU ran flat out or io waited: the GPU waited for its input. The CPU
 * is saturated when the workload's processes keep a core busy (one is enough: a Python data
 * loader is held to one core by its interpreter lock), or when the host's CPUs are all busy
 * while the workload competes for them (it cannot get more, whoever holds them; a workload
 * that sleeps is not held back by someone else's CPU). */
static bool input_bound(const struct rm_held_in *in, const struct rm_held_gpu *g, struct sink *k)
{
    if (isnan(g->util_mean) || g->util_mean >= RM_HELD_BUSY_LOW_PCT) return false;
    bool cpu = at_least(in->proc_cpu_pct, RM_HELD_CPU_SATURATED_PCT) ||
               (at_least(in->host_cpu_busy_pct, RM_HELD_HOST_BUSY_PCT) &&
                at_least(in->proc_cpu_pct, RM_HELD_CPU_COMPETING_PCT));
    bool io = at_least(in->io_pressure_pct, RM_HELD_IO_PRESSURE_PCT);
    if (!cpu && !io) return false;
    struct rm_held_finding *f = next(k, RM_HELD_INPUT_BOUND, g->index);
    char b[32], tail[160] = "";
    size_t l = 0;
    fig(f, "gpu_busy_pct", g->util_mean);
    if (cpu) {
        l += (size_t)snprintf(tail, sizeof tail, "the CPU was saturated (");
        if (!isnan(in->proc_cpu_pct)) {
            fig(f, "workload_cpu_pct", in->proc_cpu_pct);
            l += (size_t)snprintf(tail + l, sizeof tail - l, "the workload at %.0f %% of one core",
                                  in->proc_cpu_pct);
        }
        if (!isnan(in->host_cpu_busy_pct)) {
            fig(f, "host_cpu_busy_pct", in->host_cpu_busy_pct);
            l += (size_t)snprintf(tail + l, sizeof tail - l, "%sthe host %.0f %% busy",
                                  isnan(in->proc_cpu_pct) ? "" : ", ", in->host_cpu_busy_pct);
        }
        if (!isnan(in->cores)) fig(f, "cores", in->cores);
        l += (size_t)snprintf(tail + l, sizeof tail - l, ")");
    }
    if (io) {
        fig(f, "io_pressure_pct", in->io_pressure_pct);
        snprintf(tail + l, sizeof tail - l, "%sio pressure was %.0f %%", cpu ? " and " : "",
                 in->io_pressure_pct);
    }
    say(f, "input-bound: %s busy %.0f %% while %s", gpu_name(g, b, sizeof b), g->util_mean, tail);
    return true;
}

/* The most active of a group of cap reasons, and its share. */
static int top_reason(const struct rm_held_gpu *g, const int *reasons, size_t n, double *share)
{
    int best = -1;
    *share = NAN;
    for (size_t i = 0; i < n; i++) {
        double s = g->thr_share[reasons[i]];
        if (!isnan(s) && (best < 0 || s > *share)) best = reasons[i], *share = s;
    }
    return best;
}

/* A cap reason active for a share of the phase with the SM clock held below its maximum. */
static void capped(const struct rm_held_gpu *g, enum rm_held_rule rule, const int *reasons,
                   size_t n, const char *what, struct sink *k)
{
    double share;
    int r = top_reason(g, reasons, n, &share);
    if (r < 0 || share < RM_HELD_THROTTLE_SHARE) return;
    /* A cap holds back only work that runs: an idle GPU is the idle rule's. */
    if (at_least(g->idle_share, RM_HELD_IDLE_SHARE)) return;
    if (isnan(g->smclk_mean) || !(g->smclk_max > 0) ||
        g->smclk_mean >= RM_HELD_CLOCK_RATIO * g->smclk_max)
        return;
    static const char *const share_names[RM_THR_REASONS] = {"gpu_idle_share",
                                                            "applications_clocks_setting_share",
                                                            "sw_power_cap_share",
                                                            "hw_slowdown_share",
                                                            "sync_boost_share",
                                                            "sw_thermal_slowdown_share",
                                                            "hw_thermal_slowdown_share",
                                                            "hw_power_brake_slowdown_share",
                                                            "display_clock_setting_share"};
    struct rm_held_finding *f = next(k, rule, g->index);
    char b[32];
    fig(f, share_names[r], share);
    fig(f, "sm_clock_mean_mhz", g->smclk_mean);
    fig(f, "sm_clock_max_mhz", g->smclk_max);
    if (g->smclk_max_source) fig_text(f, "sm_clock_max_source", g->smclk_max_source);
    say(f, "%s: %s %s active in %.0f %% of samples, SM clock %.0f of %.0f MHz", what,
        gpu_name(g, b, sizeof b), rm_thr_name(r), share * 100, g->smclk_mean, g->smclk_max);
}

static void idle_gpu(const struct rm_held_gpu *g, struct sink *k)
{
    if (!at_least(g->idle_share, RM_HELD_IDLE_SHARE)) return;
    struct rm_held_finding *f = next(k, RM_HELD_IDLE_GPU, g->index);
    char b[32];
    fig(f, "idle_share", g->idle_share);
    if (!isnan(g->util_mean)) fig(f, "gpu_busy_pct", g->util_mean);
    say(f, "idle GPU: %s ran no kernel in %.0f %% of samples", gpu_name(g, b, sizeof b),
        g->idle_share * 100);
}

static void host_memory(const struct rm_held_in *in, struct sink *k)
{
    double ratio = in->mem_total_mb > 0 ? in->mem_used_peak_mb / in->mem_total_mb : NAN;
    bool used = at_least(ratio, RM_HELD_MEM_USED_RATIO);
    bool psi = at_least(in->mem_pressure_pct, RM_HELD_MEM_PRESSURE_PCT);
    if (!used && !psi) return;
    struct rm_held_finding *f = next(k, RM_HELD_HOST_MEMORY, -1);
    char a[96] = "", p[64] = "";
    if (used) {
        fig(f, "mem_used_peak_mb", in->mem_used_peak_mb);
        fig(f, "mem_total_mb", in->mem_total_mb);
        snprintf(a, sizeof a, "%.0f %% of %.0f MiB used at peak", ratio * 100, in->mem_total_mb);
    }
    if (psi) {
        fig(f, "mem_pressure_pct", in->mem_pressure_pct);
        snprintf(p, sizeof p, "%smemory pressure %.0f %%", used ? ", " : "", in->mem_pressure_pct);
    }
    say(f, "host memory pressure: %s%s", a, p);
}

size_t rm_held_rules(const struct rm_held_in *in, struct rm_held_finding *out, size_t max)
{
    static const int power[] = {RM_THR_SW_POWER_CAP, RM_THR_HW_POWER_BRAKE};
    static const int thermal[] = {RM_THR_SW_THERMAL, RM_THR_HW_THERMAL, RM_THR_HW_SLOWDOWN};
    struct sink k = {.out = out, .max = max};
    for (size_t i = 0; i < in->ngpu; i++) {
        const struct rm_held_gpu *g = &in->gpu[i];
        bool input = input_bound(in, g, &k);
        capped(g, RM_HELD_POWER_CAPPED, power, 2, "power capped", &k);
        capped(g, RM_HELD_THERMAL_CAPPED, thermal, 3, "thermal capped", &k);
        if (!input) idle_gpu(g, &k); /* input-bound already says why it idled */
    }
    host_memory(in, &k);
    return k.n;
}

/* A figure rounded as the summary's other figures are (shares to 4 decimals). */
static json_t *rounded(double v)
{
    if (!isfinite(v)) return json_null();
    double r = round(v * 1e4) / 1e4;
    return json_real(r == 0 ? 0 : r);
}

json_t *rm_held_finding_json(const struct rm_held_finding *f)
{
    json_t *figs = json_object();
    for (size_t i = 0; i < f->nfig; i++)
        json_object_set_new(figs, f->fig[i].name,
                            f->fig[i].text ? json_string(f->fig[i].text)
                                           : rounded(f->fig[i].value));
    return json_pack("{s:s,s:o,s:s,s:o}", "rule", rm_held_rule_id(f->rule), "gpu",
                     f->gpu >= 0 ? json_integer(f->gpu) : json_null(), "text", f->text, "figures",
                     figs);
}

/* A number at a path of object keys, NaN when any is missing or not a number. */
static double num_at(const json_t *o, const char *k1, const char *k2)
{
    const json_t *v = json_object_get(o, k1);
    if (k2) v = json_object_get(v, k2);
    return json_is_number(v) ? json_number_value(v) : NAN;
}

/* The whole run's highest SM clock of the GPU with this index (NaN when not seen). */
static double session_smclk_max(const json_t *doc, int index)
{
    size_t i;
    json_t *g;
    json_array_foreach(json_object_get(doc, "gpus"), i, g)
    {
        json_t *ix = json_object_get(g, "index");
        if (json_is_integer(ix) && json_integer_value(ix) == index)
            return num_at(g, "sm_clock_mhz", "max");
    }
    return NAN;
}

static void gpu_figures(const json_t *g, const json_t *doc, struct rm_held_gpu *h)
{
    json_t *ix = json_object_get(g, "index");
    h->index = json_is_integer(ix) ? (int)json_integer_value(ix) : -1;
    h->util_mean = num_at(g, "util_pct", "mean");
    h->idle_share = num_at(g, "idle_share", NULL);
    h->smclk_mean = num_at(g, "sm_clock_mhz", "mean");
    h->smclk_max = num_at(g, "sm_clock_max_mhz", NULL);
    h->smclk_max_source = "clocks.max.sm";
    if (isnan(h->smclk_max) && h->index >= 0) {
        h->smclk_max = session_smclk_max(doc, h->index);
        h->smclk_max_source = "highest seen in the session";
    }
    const json_t *shares = json_object_get(g, "throttle_share");
    for (int k = 0; k < RM_THR_REASONS; k++)
        h->thr_share[k] = num_at(shares, rm_thr_name(k), NULL);
}

/* The host's CPUs busy: neither idle nor waiting for io (NaN without cpu.csv). */
static double host_busy(const json_t *cpu)
{
    double idle = num_at(cpu, "idle_pct", "mean"), iowait = num_at(cpu, "iowait_pct", "mean");
    if (isnan(idle)) return NAN;
    double busy = 100 - idle - (isnan(iowait) ? 0 : iowait);
    return busy < 0 ? 0 : busy;
}

void rm_held_phase(json_t *row, const json_t *doc)
{
    json_t *gpus = json_object_get(row, "gpus");
    size_t ngpu = json_array_size(gpus);
    /* At most three findings a GPU (input-bound or idle, and the two caps), the host's one. */
    size_t max = 3 * ngpu + 1;
    struct rm_held_gpu *gpu = rm_xcalloc(ngpu + 1, sizeof *gpu);
    struct rm_held_finding *found = rm_xcalloc(max, sizeof *found);
    struct rm_held_in in = {
        .proc_cpu_pct = num_at(json_object_get(row, "proc"), "cpu_pct", "mean"),
        .cores = NAN, /* not in the summary yet */
        .host_cpu_busy_pct = host_busy(json_object_get(row, "cpu")),
        .mem_used_peak_mb = num_at(row, "cpu", "mem_used_peak_mb"),
        .mem_total_mb = num_at(row, "cpu", "mem_total_mb"),
        /* The io stream's pressure over the phase's windows (io.csv; NaN without it, or
         * where the kernel has no /proc/pressure). */
        .io_pressure_pct = num_at(row, "io", "io_some_pct"),
        .mem_pressure_pct = num_at(row, "io", "memory_some_pct"),
        .gpu = gpu,
        .ngpu = ngpu,
    };
    size_t i;
    json_t *g;
    json_array_foreach(gpus, i, g) gpu_figures(g, doc, &gpu[i]);
    size_t n = rm_held_rules(&in, found, max);
    if (n) {
        json_t *list = json_array();
        for (size_t k = 0; k < n && k < max; k++)
            json_array_append_new(list, rm_held_finding_json(&found[k]));
        json_object_set_new(row, "held_back_by", list);
    }
    free(found);
    free(gpu);
}
