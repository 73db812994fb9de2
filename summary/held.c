#include "summary/held.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "summary/objects.h"

static const char *const rule_ids[RM_HELD_RULES] = {
    "input_bound", "power_capped", "thermal_capped", "idle_gpu",
    "host_memory", "cpu_starved",  "io_bound",       "stalls_unknown"};

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

/* A set of the phase's GPUs (positions in in->gpu). */
struct gpu_set {
    size_t *at;
    size_t n;
};

static struct rm_held_finding *next(struct sink *k, enum rm_held_rule rule,
                                    const struct rm_held_in *in, const struct gpu_set *set)
{
    struct rm_held_finding *f = k->n < k->max ? &k->out[k->n] : &k->spare;
    k->n++;
    memset(f, 0, sizeof *f);
    f->rule = rule;
    f->gpu = set && set->n ? in->gpu[set->at[0]].index : -1;
    for (size_t i = 0; set && i < set->n; i++)
        if (f->ngpus++ < RM_HELD_MAX_GPUS) f->gpus[f->ngpus - 1] = in->gpu[set->at[i]].index;
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

/* "GPU 3", "GPUs 0-3, 6", or "a GPU" / "GPUs" when an index is unknown. */
static const char *gpu_names(const struct rm_held_in *in, const struct gpu_set *set, char *buf,
                             size_t len)
{
    size_t l = 0;
    bool known = true;
    for (size_t i = 0; i < set->n; i++)
        known &= in->gpu[set->at[i]].index >= 0;
    if (!known) return set->n == 1 ? "a GPU" : "GPUs";
    l += (size_t)snprintf(buf, len, "GPU%s ", set->n > 1 ? "s" : "");
    for (size_t i = 0; i < set->n && l < len; i++) {
        int a = in->gpu[set->at[i]].index, b = a;
        while (i + 1 < set->n && in->gpu[set->at[i + 1]].index == b + 1)
            b = in->gpu[set->at[++i]].index;
        l += (size_t)(a == b ? snprintf(buf + l, len - l, "%s%d", l > 5 ? ", " : "", a)
                             : snprintf(buf + l, len - l, "%s%d-%d", l > 5 ? ", " : "", a, b));
    }
    return buf;
}

static bool at_least(double v, double threshold)
{
    return !isnan(v) && v >= threshold;
}

/* "busy 3 %" for one GPU, "busy at most 46 %" for several; the figure is that highest. */
static double busy_of(const struct rm_held_in *in, const struct gpu_set *set)
{
    double most = NAN;
    for (size_t i = 0; i < set->n; i++) {
        double u = in->gpu[set->at[i]].util_mean;
        if (!isnan(u) && !(u <= most)) most = u;
    }
    return most;
}

static const char *busy_words(const struct gpu_set *set)
{
    return set->n > 1 ? "busy at most" : "busy";
}

/* "(context: the host 97 % busy, io pressure 12 %)" when either is known, else "". */
static void host_context(const struct rm_held_in *in, struct rm_held_finding *f, char *buf,
                         size_t len, const char *lead)
{
    size_t l = 0;
    buf[0] = 0;
    if (!isnan(in->host_cpu_busy_pct)) {
        fig(f, "host_cpu_busy_pct", in->host_cpu_busy_pct);
        l += (size_t)snprintf(buf, len, "%sthe host %.0f %% busy", lead, in->host_cpu_busy_pct);
    }
    if (!isnan(in->io_pressure_pct) && l < len) {
        fig(f, "io_pressure_pct", in->io_pressure_pct);
        snprintf(buf + l, len - l, "%shost io pressure %.0f %%", l ? ", " : lead,
                 in->io_pressure_pct);
    }
}

/* GPU busy low while the workload's own processes kept a core busy (one is enough: a Python
 * data loader is held to one core by its interpreter lock): the GPU waited for its input. */
static void input_bound(const struct rm_held_in *in, const struct gpu_set *low, struct sink *k)
{
    struct rm_held_finding *f = next(k, RM_HELD_INPUT_BOUND, in, low);
    char b[96], host[64] = "";
    double busy = busy_of(in, low);
    fig(f, "gpu_busy_pct", busy);
    fig(f, "workload_cpu_pct", in->proc_cpu_pct);
    if (!isnan(in->host_cpu_busy_pct)) {
        fig(f, "host_cpu_busy_pct", in->host_cpu_busy_pct);
        snprintf(host, sizeof host, ", the host %.0f %% busy", in->host_cpu_busy_pct);
    }
    if (!isnan(in->cores)) fig(f, "cores", in->cores);
    say(f,
        "input-bound: %s %s %.0f %% while the CPU was saturated (the workload at %.0f %% of one "
        "core%s)",
        gpu_names(in, low, b, sizeof b), busy_words(low), busy, in->proc_cpu_pct, host);
}

/* GPU busy low while the workload's threads were runnable but waited for a CPU. */
static void cpu_starved(const struct rm_held_in *in, const struct gpu_set *low, struct sink *k)
{
    struct rm_held_finding *f = next(k, RM_HELD_CPU_STARVED, in, low);
    char b[96], ctx[96];
    double busy = busy_of(in, low);
    fig(f, "gpu_busy_pct", busy);
    fig(f, "run_queue_wait_share", in->wait_share);
    fig(f, "waiting_threads_mean", in->waiting_threads);
    if (!isnan(in->proc_cpu_pct)) fig(f, "workload_cpu_pct", in->proc_cpu_pct);
    host_context(in, f, ctx, sizeof ctx, "; context: ");
    say(f,
        "CPU-starved: %s %s %.0f %% while its threads were runnable but waiting for a CPU "
        "%.0f %% of the phase (%.0f %% of the time they were runnable%s)",
        gpu_names(in, low, b, sizeof b), busy_words(low), busy, in->waiting_threads * 100,
        in->wait_share * 100, ctx);
}

static bool io_evidence(const struct rm_held_in *in)
{
    return in->have_stall && (at_least(in->blocked_share, RM_HELD_BLOCKED_SHARE) ||
                              at_least(in->blkio_per_s, RM_HELD_BLKIO_SHARE) ||
                              at_least(in->cg_io_pct, RM_HELD_CG_PRESSURE_PCT));
}

/* GPU busy low while the workload's threads were blocked on I/O. */
static void io_bound(const struct rm_held_in *in, const struct gpu_set *low, struct sink *k)
{
    struct rm_held_finding *f = next(k, RM_HELD_IO_BOUND, in, low);
    char b[96], own[96] = "", ctx[96];
    size_t l = 0;
    double busy = busy_of(in, low);
    fig(f, "gpu_busy_pct", busy);
    fig(f, "io_blocked_share", in->blocked_share);
    if (!isnan(in->blkio_per_s)) {
        fig(f, "blkio_delay_per_s", in->blkio_per_s);
        l += (size_t)snprintf(own, sizeof own, "; blkio delay %.2f s a second", in->blkio_per_s);
    }
    if (!isnan(in->cg_io_pct)) {
        fig(f, "cgroup_io_some_pct", in->cg_io_pct);
        snprintf(own + l, sizeof own - l, "; its cgroup's io pressure %.0f %%", in->cg_io_pct);
    }
    host_context(in, f, ctx, sizeof ctx, "; context: ");
    say(f,
        "I/O-bound: %s %s %.0f %% while its threads were blocked on I/O in %.0f %% of samples%s%s",
        gpu_names(in, low, b, sizeof b), busy_words(low), busy, in->blocked_share * 100, own, ctx);
}

/* A session without the stall stream, where the host was busy: whether the workload waited is
 * not known, and the host is not blamed for it. */
static void stalls_unknown(const struct rm_held_in *in, const struct gpu_set *low, struct sink *k)
{
    struct rm_held_finding *f = next(k, RM_HELD_STALLS_UNKNOWN, in, low);
    char b[96], ctx[96];
    double busy = busy_of(in, low);
    fig(f, "gpu_busy_pct", busy);
    if (!isnan(in->proc_cpu_pct)) fig(f, "workload_cpu_pct", in->proc_cpu_pct);
    host_context(in, f, ctx, sizeof ctx, " with ");
    say(f,
        "not known: %s %s %.0f %%%s, but this session recorded no stall.csv: whether the "
        "workload itself waited for a CPU or for I/O is not known",
        gpu_names(in, low, b, sizeof b), busy_words(low), busy, ctx);
}

/* The input side of the phase: which of the GPUs whose busy was low each rule explains.
 * Returns whether one fired (the idle rule then says nothing more of those GPUs). */
static bool input_side(const struct rm_held_in *in, const struct gpu_set *low, struct sink *k)
{
    if (!low->n) return false;
    bool starved = in->have_stall && at_least(in->wait_share, RM_HELD_WAIT_SHARE) &&
                   at_least(in->waiting_threads, RM_HELD_WAITING_THREADS);
    bool io = io_evidence(in);
    bool saturated = at_least(in->proc_cpu_pct, RM_HELD_CPU_SATURATED_PCT);
    if (starved) cpu_starved(in, low, k);
    if (io) io_bound(in, low, k);
    if (saturated && !starved) input_bound(in, low, k);
    if (starved || io || saturated) return true;
    /* The host's CPUs or its io stalls alone are no reason: without the workload's own stalls
     * a phase where the host was busy says that they are not known. */
    bool host = (at_least(in->host_cpu_busy_pct, RM_HELD_HOST_BUSY_PCT) &&
                 at_least(in->proc_cpu_pct, RM_HELD_CPU_COMPETING_PCT)) ||
                at_least(in->io_pressure_pct, RM_HELD_IO_PRESSURE_PCT);
    if (!in->have_stall && host) {
        stalls_unknown(in, low, k);
        return true;
    }
    return false;
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
static bool is_capped(const struct rm_held_gpu *g, const int *reasons, size_t n)
{
    double share;
    int r = top_reason(g, reasons, n, &share);
    if (r < 0 || share < RM_HELD_THROTTLE_SHARE) return false;
    /* A cap holds back only work that runs: an idle GPU is the idle rule's. */
    if (at_least(g->idle_share, RM_HELD_IDLE_SHARE)) return false;
    return !(isnan(g->smclk_mean) || !(g->smclk_max > 0) ||
             g->smclk_mean >= RM_HELD_CLOCK_RATIO * g->smclk_max);
}

/* The GPUs a cap holds back, one finding with the first one's figures. */
static void capped(const struct rm_held_in *in, enum rm_held_rule rule, const int *reasons,
                   size_t n, const char *what, struct gpu_set *set, struct sink *k)
{
    set->n = 0;
    for (size_t i = 0; i < in->ngpu; i++)
        if (is_capped(&in->gpu[i], reasons, n)) set->at[set->n++] = i;
    if (!set->n) return;
    const struct rm_held_gpu *g = &in->gpu[set->at[0]];
    double share;
    int r = top_reason(g, reasons, n, &share);
    static const char *const share_names[RM_THR_REASONS] = {"gpu_idle_share",
                                                            "applications_clocks_setting_share",
                                                            "sw_power_cap_share",
                                                            "hw_slowdown_share",
                                                            "sync_boost_share",
                                                            "sw_thermal_slowdown_share",
                                                            "hw_thermal_slowdown_share",
                                                            "hw_power_brake_slowdown_share",
                                                            "display_clock_setting_share"};
    struct rm_held_finding *f = next(k, rule, in, set);
    char b[96], first[32] = "";
    fig(f, share_names[r], share);
    fig(f, "sm_clock_mean_mhz", g->smclk_mean);
    fig(f, "sm_clock_max_mhz", g->smclk_max);
    if (g->smclk_max_source) fig_text(f, "sm_clock_max_source", g->smclk_max_source);
    if (set->n > 1 && g->index >= 0) snprintf(first, sizeof first, " (GPU %d's)", g->index);
    say(f, "%s: %s %s active in %.0f %% of samples, SM clock %.0f of %.0f MHz%s", what,
        gpu_names(in, set, b, sizeof b), rm_thr_name(r), share * 100, g->smclk_mean, g->smclk_max,
        first);
}

/* GPUs that ran no kernel while the workload worked (a workload that only slept is held back
 * by nothing; without the workload's CPU figure, as before it). */
static void idle_gpu(const struct rm_held_in *in, const struct gpu_set *skip, struct gpu_set *set,
                     struct sink *k)
{
    if (!isnan(in->proc_cpu_pct) && in->proc_cpu_pct < RM_HELD_CPU_COMPETING_PCT &&
        !io_evidence(in))
        return;
    set->n = 0;
    double least = NAN;
    for (size_t i = 0; i < in->ngpu; i++) {
        bool skipped = false;
        for (size_t j = 0; j < skip->n; j++)
            skipped |= skip->at[j] == i;
        double s = in->gpu[i].idle_share;
        if (skipped || !at_least(s, RM_HELD_IDLE_SHARE)) continue;
        set->at[set->n++] = i;
        if (!(s >= least)) least = s;
    }
    if (!set->n) return;
    struct rm_held_finding *f = next(k, RM_HELD_IDLE_GPU, in, set);
    char b[96];
    fig(f, "idle_share", least);
    double busy = busy_of(in, set);
    if (!isnan(busy)) fig(f, "gpu_busy_pct", busy);
    say(f, "idle GPU: %s ran no kernel in %s%.0f %% of samples", gpu_names(in, set, b, sizeof b),
        set->n > 1 ? "at least " : "", least * 100);
}

/* Host memory full, or the workload's own cgroup under memory pressure; the host's memory
 * pressure is context, never the reason by itself. */
static void host_memory(const struct rm_held_in *in, struct sink *k)
{
    double ratio = in->mem_total_mb > 0 ? in->mem_used_peak_mb / in->mem_total_mb : NAN;
    bool used = at_least(ratio, RM_HELD_MEM_USED_RATIO);
    bool own = at_least(in->cg_mem_pct, RM_HELD_MEM_PRESSURE_PCT);
    if (!used && !own) return;
    struct rm_held_finding *f = next(k, RM_HELD_HOST_MEMORY, in, NULL);
    char a[96] = "", p[64] = "", h[64] = "";
    if (used) {
        fig(f, "mem_used_peak_mb", in->mem_used_peak_mb);
        fig(f, "mem_total_mb", in->mem_total_mb);
        snprintf(a, sizeof a, "%.0f %% of %.0f MiB used at peak", ratio * 100, in->mem_total_mb);
    }
    if (own) {
        fig(f, "cgroup_memory_some_pct", in->cg_mem_pct);
        snprintf(p, sizeof p, "%sits cgroup's memory pressure %.0f %%", used ? ", " : "",
                 in->cg_mem_pct);
    }
    if (at_least(in->mem_pressure_pct, RM_HELD_MEM_PRESSURE_PCT)) {
        fig(f, "mem_pressure_pct", in->mem_pressure_pct);
        snprintf(h, sizeof h, ", memory pressure %.0f %%", in->mem_pressure_pct);
    }
    say(f, "host memory pressure: %s%s%s", a, p, h);
}

size_t rm_held_rules(const struct rm_held_in *in, struct rm_held_finding *out, size_t max)
{
    static const int power[] = {RM_THR_SW_POWER_CAP, RM_THR_HW_POWER_BRAKE};
    static const int thermal[] = {RM_THR_SW_THERMAL, RM_THR_HW_THERMAL, RM_THR_HW_SLOWDOWN};
    struct sink k = {.out = out, .max = max};
    size_t *at = rm_xcalloc(2 * in->ngpu + 2, sizeof *at);
    struct gpu_set low = {at, 0}, set = {at + in->ngpu + 1, 0};
    for (size_t i = 0; i < in->ngpu; i++)
        if (!isnan(in->gpu[i].util_mean) && in->gpu[i].util_mean < RM_HELD_BUSY_LOW_PCT)
            low.at[low.n++] = i;
    bool input = input_side(in, &low, &k);
    capped(in, RM_HELD_POWER_CAPPED, power, 2, "power capped", &set, &k);
    capped(in, RM_HELD_THERMAL_CAPPED, thermal, 3, "thermal capped", &set, &k);
    struct gpu_set none = {at, 0};
    idle_gpu(in, input ? &low : &none, &set, &k); /* the input side already says why */
    host_memory(in, &k);
    free(at);
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
    json_t *gpus = json_array();
    for (size_t i = 0; i < f->ngpus && i < RM_HELD_MAX_GPUS; i++)
        json_array_append_new(gpus, f->gpus[i] >= 0 ? json_integer(f->gpus[i]) : json_null());
    return json_pack("{s:s,s:o,s:o,s:s,s:o}", "rule", rm_held_rule_id(f->rule), "gpu",
                     f->gpu >= 0 ? json_integer(f->gpu) : json_null(), "gpus", gpus, "text",
                     f->text, "figures", figs);
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

/* Figure fig of model/objects.h in a phase row (NaN where missing or null). */
static double obj_num(const json_t *row, int fig)
{
    const json_t *v = rm_obj_at(row, fig);
    return json_is_number(v) ? json_number_value(v) : NAN;
}

/* The host's CPUs busy in a phase row: neither idle nor waiting for io (NaN without
 * cpu.csv). */
static double host_busy(const json_t *row)
{
    double idle = obj_num(row, RM_OF_CPU_IDLE_MEAN), iowait = obj_num(row, RM_OF_CPU_IOWAIT_MEAN);
    if (isnan(idle)) return NAN;
    double busy = 100 - idle - (isnan(iowait) ? 0 : iowait);
    return busy < 0 ? 0 : busy;
}

void rm_held_phase(json_t *row, const json_t *doc)
{
    json_t *gpus = json_object_get(row, "gpus");
    size_t ngpu = json_array_size(gpus);
    size_t max = RM_HELD_RULES; /* one finding a rule at most */
    struct rm_held_gpu *gpu = rm_xcalloc(ngpu + 1, sizeof *gpu);
    /* The workload's own stalls over the phase (stall.csv; absent in older sessions). */
    const json_t *stall = json_object_get(row, rm_objects[RM_OBJ_STALL].key);
    struct rm_held_finding *found = rm_xcalloc(max, sizeof *found);
    struct rm_held_in in = {
        .proc_cpu_pct = obj_num(row, RM_OF_PROC_CPU_MEAN),
        .cores = NAN, /* not in the summary yet */
        .host_cpu_busy_pct = host_busy(row),
        .mem_used_peak_mb = obj_num(row, RM_OF_CPU_MEM_USED_PEAK),
        .mem_total_mb = obj_num(row, RM_OF_CPU_MEM_TOTAL),
        /* The io stream's pressure over the phase's windows (io.csv; NaN without it, or
         * where the kernel has no /proc/pressure). */
        .io_pressure_pct = obj_num(row, RM_OF_IO_IO_SOME_PCT),
        .mem_pressure_pct = obj_num(row, RM_OF_IO_MEMORY_SOME_PCT),
        /* A session with stall.csv: a phase no row of it overlaps has the object, all null,
         * so nothing fires; that is not "not recorded". */
        .have_stall = json_is_object(stall),
        .wait_share = obj_num(row, RM_OF_STALL_WAIT_SHARE),
        .waiting_threads = obj_num(row, RM_OF_STALL_WAITING_THREADS),
        .blocked_share = obj_num(row, RM_OF_STALL_BLOCKED_SHARE),
        .blkio_per_s = obj_num(row, RM_OF_STALL_BLKIO_S) / obj_num(row, RM_OF_STALL_SECONDS),
        .cg_io_pct = obj_num(row, RM_OF_STALL_CG_IO_PCT),
        .cg_mem_pct = obj_num(row, RM_OF_STALL_CG_MEMORY_PCT),
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
