/* The ResourceSummary document: rm_summary_build reads the run log, scans the files, merges
 * the sources and builds the JSON that docs/FORMATS.md describes. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "base/json.h"
#include "base/rm_time.h"
#include "model/figures.h"
#include "summary/held.h"
#include "summary/inputs.h"
#include "summary/merge.h"
#include "summary/pack.h"
#include "summary/pool.h"
#include "summary/summary_internal.h"

/* ---- JSON building ---------------------------------------------------------------- */

static json_t *jts(int64_t ns)
{
    if (ns == RM_NO_TIME || ns == RM_OPEN_END) return json_null();
    char b[RM_TS_BUFSZ];
    rm_format_ts(ns, b);
    return json_string(b);
}

static double st_mean(const struct rm_stat *s)
{
    return rm_stat_mean(s);
}
static double st_max(const struct rm_stat *s)
{
    return s->n ? s->max : NAN;
}

/* The stats reporting metric m: query-gpu first, dmon for memory-controller use. */
static const struct rm_gpu_stats *pick(const struct rm_gpu_stats *q, const struct rm_gpu_stats *d,
                                       int m, const char **src)
{
    const struct rm_gpu_stats *first = q, *second = d;
    const char *n1 = "query-gpu", *n2 = "dmon";
    if (m == RM_GM_MEMUTIL) {
        first = d, second = q;
        n1 = "dmon", n2 = "query-gpu";
    }
    if (first && first->m[m].n) {
        *src = n1;
        return first;
    }
    if (second && second->m[m].n) {
        *src = n2;
        return second;
    }
    *src = NULL;
    return NULL;
}

struct gpu_totals {
    struct rm_stat util, memutil, power, vram;
    bool memutil_dmon, memutil_query;
    double energy_j, energy_low_j, energy_high_j; /* the bars add linearly (docs/ENERGY.md) */
    bool has_energy, has_bar;
    bool high_unknown;  /* a GPU's bar has no top: time no sample covered, no power limit */
    double uncovered_s; /* the most seconds of the run a GPU's samples do not cover */
    bool skip_energy;   /* the GPU being added is a MIG instance whose GPU is counted already */
    int64_t covered_ns;
};

/* One GPU's energy over a window (the run, or a phase's windows) and its bar, in J; NaN where
 * unknown. */
struct gpu_energy {
    double e_j;         /* over the time its samples cover: NaN without one interval */
    double low_j;       /* the bar: the time no sample covers at 0 W ... */
    double high_j;      /* ... and at the power limit (NaN: no limit recorded) */
    double uncovered_s; /* the window's seconds no sample covers (NaN: window unknown) */
};

/* The window a GPU's energy is over: its seconds (NaN: unknown) and the GPU's power limit
 * (0: not recorded). */
struct energy_window {
    double seconds, limit_w;
};

/* Adds one GPU's picked stats to the all-GPU totals (sm: the memory-utilization source). */
static void add_to_totals(struct gpu_totals *tot, const struct rm_gpu_stats *u,
                          const struct rm_gpu_stats *mu, const char *sm,
                          const struct rm_gpu_stats *p, const struct rm_gpu_stats *v,
                          const struct rm_gpu_stats *timing, const struct gpu_energy *en)
{
    if (u) rm_stat_merge(&tot->util, &u->m[RM_GM_UTIL]);
    if (mu) {
        rm_stat_merge(&tot->memutil, &mu->m[RM_GM_MEMUTIL]);
        if (sm[0] == 'd')
            tot->memutil_dmon = true;
        else
            tot->memutil_query = true;
    }
    if (p) rm_stat_merge(&tot->power, &p->m[RM_GM_POWER]);
    if (v) rm_stat_merge(&tot->vram, &v->m[RM_GM_VRAM_USED]);
    if (p && p->first_ns != RM_NO_TIME && !tot->skip_energy) {
        if (!isnan(en->e_j)) tot->energy_j += en->e_j, tot->has_energy = true;
        if (!isnan(en->low_j)) {
            tot->energy_low_j += en->low_j;
            tot->has_bar = true;
            if (isnan(en->high_j))
                tot->high_unknown = true;
            else
                tot->energy_high_j += en->high_j;
        }
        if (en->uncovered_s > tot->uncovered_s) tot->uncovered_s = en->uncovered_s;
    }
    if (timing && timing->first_ns != RM_NO_TIME && timing->covered_ns > tot->covered_ns)
        tot->covered_ns = timing->covered_ns;
}

/* e's energy over window w and its bar (docs/ENERGY.md): the integral over the time its
 * samples cover, with the readings' bar (rm_energy_bounds); the time they do not cover (the
 * window's edges, gaps) widens the bar from 0 W to the power limit, or to no known top. With
 * no interval there is no figure, only that bar. run: the window is the whole run. */
static struct gpu_energy window_energy(const struct rm_gpu_stats *e, const char *name,
                                       double short_s, const struct energy_window *w, bool run)
{
    struct gpu_energy r = {NAN, NAN, NAN, NAN};
    double covered_s = (double)e->covered_ns / 1e9, low_j = 0, high_j = 0;
    if (e->covered_ns > 0) {
        struct rm_energy_bar bar = e->bar;
        if (run && !isnan(e->first_power) && !isnan(e->last_power))
            /* The run's own edges: the recording's first and last sample. */
            bar.lag_j += (double)RM_SENSOR_WINDOW_NS / 2e9 * (e->first_power - e->last_power);
        rm_energy_bounds(e->energy_j, &bar, rm_sensor_duty(name, NULL), short_s, &low_j, &high_j);
        r.e_j = e->energy_j;
    }
    /* Below a microsecond the difference is the rounding of the windows' times, not time. */
    if (isfinite(w->seconds))
        r.uncovered_s = w->seconds - covered_s > 1e-6 ? w->seconds - covered_s : 0;
    if (isnan(r.uncovered_s) && e->covered_ns == 0) return r; /* nothing known at all */
    double top_w = w->limit_w > 0 ? fmax(w->limit_w, e->bar.peak_w) : NAN;
    r.low_j = low_j;
    r.high_j = r.uncovered_s > 0 ? high_j + top_w * r.uncovered_s : high_j;
    return r;
}

/* What a GPU's figures (model/figures.h) are computed from: each metric's stats and the
 * source they came from (pick), the stats whose sample times count, the energy. */
struct gpu_figs {
    const struct rm_gpu_stats *q, *d, *by[RM_GM_COUNT], *timing;
    const char *src[RM_GM_COUNT];
    uint64_t samples;
    bool timed;   /* its energy has a window: it has a timed sample, or a spacing across */
    bool between; /* a phase window between two samples: no sample, only a spacing's share */
    bool run;     /* an object of the run's "gpus" (else of a phase's) */
    const char *name;
    struct gpu_energy en;
};

/* A figure of one metric's stats (a row that is not RM_FIG_OWN). */
static json_t *stat_figure(const struct gpu_figs *c, const struct rm_figure *f)
{
    const struct rm_gpu_stats *s = c->by[f->metric];
    const struct rm_stat *st = s ? &s->m[f->metric] : NULL;
    switch (f->stat) {
    case RM_FIG_MEAN:
        return rm_jnum(st ? st_mean(st) : NAN, f->dec);
    case RM_FIG_MAX:
        return rm_jnum(st ? st_max(st) : NAN, f->dec);
    case RM_FIG_P50:
    case RM_FIG_P95: {
        double q = f->stat == RM_FIG_P50 ? 0.5 : 0.95; /* only utilization has a histogram */
        bool hist = s && f->metric == RM_GM_UTIL;
        return rm_jnum(hist ? rm_hist_quantile(s->util_hist, RM_UTIL_BUCKETS, q) : NAN, f->dec);
    }
    case RM_FIG_SOURCE:
        return rm_str_or_null(c->src[f->metric]);
    case RM_FIG_OWN:
        break;
    }
    return NULL;
}

/* ---- the figures with a computation of their own (RM_FIG_OWN rows); NULL: no key ---- */

static json_t *fig_samples(const struct gpu_figs *c, int dec)
{
    (void)dec;
    return json_integer((json_int_t)c->samples);
}

static json_t *fig_vram_total(const struct gpu_figs *c, int dec)
{
    const struct rm_gpu_stats *vt = c->q && c->q->m[RM_GM_VRAM_TOTAL].n ? c->q : NULL;
    return rm_jnum(vt ? st_max(&vt->m[RM_GM_VRAM_TOTAL]) : NAN, dec);
}

static json_t *fig_energy(const struct gpu_figs *c, int dec)
{
    return rm_jnum(c->en.e_j / 3600, dec);
}

/* The power sensor the run's energy bar assumed (not in a phase's rows). */
static json_t *fig_power_sensor(const struct gpu_figs *c, int dec)
{
    (void)dec;
    if (!c->timed || !c->run) return NULL;
    const char *duty_src;
    double duty = rm_sensor_duty(c->name, &duty_src);
    return json_pack("{s:f,s:f,s:s}", "window_s", (double)RM_SENSOR_WINDOW_NS / 1e9, "duty_cycle",
                     duty, "duty_cycle_source", duty_src);
}

static json_t *fig_energy_low(const struct gpu_figs *c, int dec)
{
    return rm_jnum(c->en.low_j / 3600, dec);
}

static json_t *fig_energy_high(const struct gpu_figs *c, int dec)
{
    return rm_jnum(c->en.high_j / 3600, dec);
}

static json_t *fig_energy_uncovered(const struct gpu_figs *c, int dec)
{
    return rm_jnum(c->en.uncovered_s, dec);
}

/* What held the clocks back, when gpu.csv has the columns (--gpu-fields): each throttle
 * reason seen active, with its share of the samples that said. */
static json_t *fig_throttle_share(const struct gpu_figs *c, int dec)
{
    const struct rm_gpu_stats *q = c->q;
    if (!q || !q->thr_samples) return NULL;
    json_t *t = json_object();
    for (int k = 0; k < RM_THR_REASONS; k++)
        if (q->thr_active[k])
            json_object_set_new(t, rm_thr_name(k),
                                rm_jnum((double)q->thr_active[k] / (double)q->thr_samples, dec));
    return t;
}

/* clocks.max.sm, when gpu.csv has it. */
static json_t *fig_smclk_peak(const struct gpu_figs *c, int dec)
{
    return c->q && c->q->smclk_max > 0 ? rm_jnum(c->q->smclk_max, dec) : NULL;
}

static json_t *fig_idle_share(const struct gpu_figs *c, int dec)
{
    const struct rm_gpu_stats *u = c->by[RM_GM_UTIL];
    uint64_t un = u ? u->m[RM_GM_UTIL].n : 0;
    return rm_jnum(un ? (double)u->idle_samples / (double)un : NAN, dec);
}

/* The stats whose sample times count, when they have a time. */
static const struct rm_gpu_stats *timed_stats(const struct gpu_figs *c)
{
    const struct rm_gpu_stats *t = c->timing;
    return t && (t->first_ns != RM_NO_TIME || c->between) ? t : NULL;
}

static json_t *fig_first(const struct gpu_figs *c, int dec)
{
    (void)dec;
    return jts(timed_stats(c) ? c->timing->first_ns : RM_NO_TIME);
}

static json_t *fig_last(const struct gpu_figs *c, int dec)
{
    (void)dec;
    return jts(timed_stats(c) ? c->timing->last_ns : RM_NO_TIME);
}

static json_t *fig_sampled_seconds(const struct gpu_figs *c, int dec)
{
    const struct rm_gpu_stats *t = timed_stats(c);
    return rm_jnum(t ? (double)t->covered_ns / 1e9 : NAN, dec);
}

static json_t *fig_gaps_count(const struct gpu_figs *c, int dec)
{
    (void)dec;
    const struct rm_gpu_stats *t = timed_stats(c);
    return json_integer((json_int_t)(t ? t->gaps : 0));
}

static json_t *fig_gaps_seconds(const struct gpu_figs *c, int dec)
{
    const struct rm_gpu_stats *t = timed_stats(c);
    return rm_jnum(t ? (double)t->gap_ns / 1e9 : 0, dec);
}

typedef json_t *own_figure_fn(const struct gpu_figs *c, int dec);
static own_figure_fn *const own_figures[RM_FIG_COUNT] = {
    [RM_FIG_SAMPLES] = fig_samples,
    [RM_FIG_VRAM_TOTAL] = fig_vram_total,
    [RM_FIG_ENERGY] = fig_energy,
    [RM_FIG_POWER_SENSOR] = fig_power_sensor,
    [RM_FIG_ENERGY_LOW] = fig_energy_low,
    [RM_FIG_ENERGY_HIGH] = fig_energy_high,
    [RM_FIG_ENERGY_UNCOVERED] = fig_energy_uncovered,
    [RM_FIG_THROTTLE_SHARE] = fig_throttle_share,
    [RM_FIG_SMCLK_PEAK] = fig_smclk_peak,
    [RM_FIG_IDLE_SHARE] = fig_idle_share,
    [RM_FIG_FIRST] = fig_first,
    [RM_FIG_LAST] = fig_last,
    [RM_FIG_SAMPLED_SECONDS] = fig_sampled_seconds,
    [RM_FIG_GAPS_COUNT] = fig_gaps_count,
    [RM_FIG_GAPS_SECONDS] = fig_gaps_seconds,
};

/* Every row of model/figures.c into o, in the table's order. */
static void add_figures(json_t *o, const struct gpu_figs *c)
{
    for (int k = 0; k < RM_FIG_COUNT; k++) {
        const struct rm_figure *f = &rm_figures[k];
        if (f->stat == RM_FIG_OWN && !own_figures[k]) {
            fprintf(stderr, "runmon: figure %s has no computation\n", f->key);
            abort(); /* a row added without its function: a programming error */
        }
        json_t *v = f->stat == RM_FIG_OWN ? own_figures[k](c, f->dec) : stat_figure(c, f);
        if (v) rm_json_set_at(o, f->key, v);
    }
}

/* One GPU's object of "gpus" (or of a phase's "gpus": then tot is NULL; short_s as
 * rm_energy_bounds takes it; w the window its energy is over). */
static json_t *gpu_json(int index, const char *uuid, const char *name, const char *pci,
                        const struct rm_gpu_stats *q, const struct rm_gpu_stats *d, double short_s,
                        const struct energy_window *w, struct gpu_totals *tot)
{
    struct gpu_figs c = {.q = q, .d = d, .run = tot != NULL, .name = name};
    for (int m = 0; m < RM_GM_COUNT; m++)
        c.by[m] = pick(q, d, m, &c.src[m]);
    const struct rm_gpu_stats *p = c.by[RM_GM_POWER];
    c.timing = p ? p : q ? q : d; /* whose sample times count */
    c.samples = q && q->samples ? q->samples : d ? d->samples : 0;
    /* A phase window between two samples has no sample of its own, only its share of the
     * spacing across it. */
    c.between = c.timing && c.timing->samples == 0 && (c.timing->covered_ns || c.timing->gaps);
    const struct rm_gpu_stats *e = p ? p : c.between ? c.timing : NULL;
    c.timed = e && (e->first_ns != RM_NO_TIME || c.between);
    c.en = (struct gpu_energy){NAN, NAN, NAN, NAN};
    if (c.timed) c.en = window_energy(e, name, short_s, w, tot != NULL);
    json_t *o = json_object();
    json_object_set_new(o, "index", index >= 0 ? json_integer(index) : json_null());
    json_object_set_new(o, "uuid", rm_str_or_null(uuid));
    json_object_set_new(o, "name", rm_str_or_null(name));
    json_object_set_new(o, "pci_bus_id", rm_str_or_null(pci));
    add_figures(o, &c);
    if (tot)
        add_to_totals(tot, c.by[RM_GM_UTIL], c.by[RM_GM_MEMUTIL], c.src[RM_GM_MEMUTIL], p,
                      c.by[RM_GM_VRAM_USED], c.timing, &c.en);
    return o;
}

static bool keep_phase(void *ctx, const char *path)
{
    struct rm_summary *s = ctx;
    if (!s->re) return true;
    return pcre2_match(s->re, (PCRE2_SPTR)path, PCRE2_ZERO_TERMINATED, 0, 0, s->md, NULL) >= 0;
}

static json_t *session_json(json_t *ses)
{
    if (!ses) return json_null();
    json_t *o = json_object();
    static const char *const keys[] = {"session_id", "status",     "host",
                                       "command",    "exit_code",  "started_at",
                                       "ended_at",   "interval_s", "driver_version"};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        json_t *v = json_object_get(ses, keys[i]);
        json_object_set(o, i == 0 ? "id" : keys[i], v ? v : json_null());
    }
    json_t *sig = json_object_get(ses, "signal"); /* absent before runmon 0.3 */
    if (sig) json_object_set(o, "signal", sig);
    int64_t a = rm_json_time(ses, "started_at"), b = rm_json_time(ses, "ended_at");
    json_object_set_new(
        o, "duration_s",
        rm_jnum(a != RM_NO_TIME && b != RM_NO_TIME ? (double)(b - a) / 1e9 : NAN, 3));
    return o;
}

static json_t *collectors_json(json_t *ses, const struct rm_phase_index *rl,
                               const bool present[RM_STREAM_COUNT])
{
    json_t *o = json_object();
    json_t *sc = json_object_get(ses, "collectors");
    for (size_t i = 0; i < RM_STREAM_COUNT; i++) {
        const char *name = rm_stream_defs[i].name;
        json_t *from = json_object_get(sc, name);
        json_t *ev = json_object_get(rl->collectors, name);
        if (!from && !ev && !present[i]) continue;
        json_int_t deg = json_integer_value(json_object_get(ev, "degraded"));
        json_int_t rec = json_integer_value(json_object_get(ev, "recovered"));
        json_int_t una = json_integer_value(json_object_get(ev, "unavailable"));
        json_t *c = json_object();
        json_t *h = json_object_get(from, "health");
        const char *derived = una && !rec ? "unavailable" : deg > rec ? "degraded" : "healthy";
        json_object_set_new(c, "health", json_is_string(h) ? json_copy(h) : json_string(derived));
        json_t *fc = json_object_get(from, "failure_event_count");
        json_object_set_new(c, "failure_event_count",
                            json_is_integer(fc) ? json_copy(fc) : json_integer(deg + una));
        json_object_set_new(c, "degraded_events", json_integer(deg));
        json_object_set_new(c, "recovered_events", json_integer(rec));
        json_object_set_new(c, "unavailable_events", json_integer(una));
        json_t *le = json_object_get(from, "last_error");
        if (!json_is_string(le)) le = json_object_get(ev, "last_error");
        json_object_set_new(c, "last_error", json_is_string(le) ? json_copy(le) : json_null());
        json_t *ar = json_object_get(from, "arrival_ts_rows"); /* absent in older sessions */
        if (json_is_integer(ar)) json_object_set_new(c, "arrival_ts_rows", json_copy(ar));
        json_object_set_new(o, name, c);
    }
    return o;
}

/* ---- rm_summary_build, step by step ------------------------------------------------ */

/* What the scanned files told, before anything is merged. */
struct file_tally {
    json_t *notes, *files;
    uint64_t rows, skipped[RM_SKIP_COUNT], gaps;
    int64_t gap_ns, data_first, data_last;
    bool present[RM_STREAM_COUNT]; /* streams with data rows */
};

/* The sources merged, the GPUs paired across them, and their totals. */
struct merged {
    struct source q, d; /* query-gpu, dmon */
    struct rm_host_stats host;
    uint8_t **phost; /* [phase]: the host's figures, packed (pack.h) */
    size_t nph;
    struct final_gpu *fg;
    size_t nfg;
    struct gpu_totals tot;
    struct rm_apps_agg apps; /* every apps.csv file merged */
    bool have_apps;
    bool own_gpus; /* the session's GPUs are the job's own (gpus_are_own) */
    /* model/objects.h's objects (io, stall): every file's aggregate merged by its engine;
     * NULL for an object no file fed (the document then has none) */
    void *obj[RM_OBJ_COUNT];
    size_t gpus; /* the GPUs the budget of phase rows x GPUs is shared by (at least 1) */
    size_t rows; /* phase paths with a row of their own: the budget / gpus */
};

static int compile_phase_regex(struct rm_summary *s, char *err, size_t errsz)
{
    if (!s->opts.phase_regex) return 0;
    int ec;
    PCRE2_SIZE off;
    s->re =
        pcre2_compile((PCRE2_SPTR)s->opts.phase_regex, PCRE2_ZERO_TERMINATED, 0, &ec, &off, NULL);
    if (!s->re) {
        PCRE2_UCHAR msg[256];
        pcre2_get_error_message(ec, msg, sizeof msg);
        snprintf(err, errsz, "--phase: bad regular expression at %zu: %s", (size_t)off,
                 (char *)msg);
        return -1;
    }
    (void)pcre2_jit_compile(s->re, PCRE2_JIT_COMPLETE); /* failure is not fatal */
    s->md = pcre2_match_data_create_from_pattern(s->re, NULL);
    return 0;
}

/* The sampling interval and the gpu field list every file is read with. */
static void choose_interval_and_fields(struct rm_summary *s)
{
    /* Interval: option, then session.json; otherwise each file finds its own. */
    double iv = s->opts.interval_s;
    json_t *siv = json_object_get(s->session, "interval_s");
    if (iv <= 0 && json_is_number(siv)) iv = json_number_value(siv);
    s->interval_ns = iv > 0 && iv < 1e6 ? (int64_t)llround(iv * 1e9) : 0;
    if (!s->opts.gpu_fields && json_is_array(json_object_get(s->session, "gpu_fields"))) {
        size_t i, used = 0;
        json_t *v;
        json_array_foreach(json_object_get(s->session, "gpu_fields"), i, v)
        {
            if (!json_is_string(v)) continue;
            int n = snprintf(s->gpu_fields + used, sizeof s->gpu_fields - used, "%s%s",
                             used ? "," : "", json_string_value(v));
            if (n < 0 || (size_t)n >= sizeof s->gpu_fields - used) {
                s->gpu_fields[0] = '\0';
                break;
            }
            used += (size_t)n;
        }
        s->gpu_fields_src = "session.json gpu_fields";
    } else if (s->opts.gpu_fields) {
        snprintf(s->gpu_fields, sizeof s->gpu_fields, "%s", s->opts.gpu_fields);
        s->gpu_fields_src = "--gpu-fields";
    }
}

/* The GPUs known before the files are read: session.json's, or a sealed segment's when it
 * has more; at least 1. */
static size_t gpus_before_scan(const struct rm_summary *s)
{
    size_t n = json_array_size(json_object_get(s->session, "gpus"));
    for (size_t i = 0; i < s->njobs; i++)
        if (!s->jobs[i]->path && s->jobs[i]->gpus.n > n) n = s->jobs[i]->gpus.n;
    return n ? n : 1;
}

/* Reads the run logs and closes their phase windows; sets the session's start and end. The
 * paths past the budget of phase rows x GPUs (with the GPUs known so far) are folded before
 * any file is read, so their figures are never made. */
static int read_runlogs(struct rm_summary *s, int64_t *start, int64_t *end, char *err, size_t errsz)
{
    /* --phase while reading: the phases it leaves out never take one of the capped rows. */
    if (s->re) rm_runlog_set_keep(&s->rl, keep_phase, s);
    for (size_t i = 0; i < s->nrunlogs; i++) {
        if (rm_runlog_read_file(&s->rl, s->runlogs[i], err, errsz)) return -1;
        if (s->runlog_strict && s->rl.lines == 0) {
            snprintf(err, errsz, "%s: holds no run-log lines", s->runlogs[i]);
            return -1;
        }
    }
    *start = rm_json_time(s->session, "started_at");
    *end = rm_json_time(s->session, "ended_at");
    if (*start == RM_NO_TIME) *start = s->rl.session_start_ns;
    if (*end == RM_NO_TIME) *end = s->rl.session_end_ns;
    rm_runlog_fold_after(&s->rl, rm_runlog_rows_for(&s->rl, gpus_before_scan(s)));
    /* A segment's partial of folded paths needs the other row even where this run log (read
     * with a larger cap, or now shorter) folds none. */
    for (size_t i = 0; i < s->njobs && s->rl.other == RM_NO_PHASE; i++) {
        size_t k;
        json_t *e;
        json_array_foreach(s->jobs[i]->seg_phases, k, e)
        {
            if (json_is_true(json_object_get(e, "folded"))) {
                rm_runlog_other_phase(&s->rl);
                break;
            }
        }
    }
    rm_runlog_finish(&s->rl, *end, keep_phase, s);
    return rm_runlog_phase_metrics(&s->rl, err, errsz);
}

/* One entry of data_quality.files. */
static json_t *file_json(const struct file_agg *f)
{
    json_t *sk = json_object();
    for (int k = 0; k < RM_SKIP_COUNT; k++)
        if (f->skipped[k])
            json_object_set_new(sk, rm_skip_names[k], json_integer((json_int_t)f->skipped[k]));
    return json_pack(
        "{s:o,s:s,s:I,s:I,s:o,s:o,s:o,s:o,s:{s:I,s:o}}", "path", rm_str_or_null(f->path), "kind",
        rm_input_defs[f->kind].name, "bytes", (json_int_t)f->bytes, "rows", (json_int_t)f->rows,
        "rows_skipped", sk, "first", jts(f->first_ns), "last", jts(f->last_ns), "interval_s",
        rm_jnum(f->interval_ns ? (double)f->interval_ns / 1e9 : NAN, 3), "gaps", "count",
        (json_int_t)f->gaps, "seconds", rm_jnum((double)f->gap_total_ns / 1e9, 3));
}

/* Counts one scanned file into the tally: rows, skips, gaps, times, notes. */
static void tally_file(struct file_tally *t, const struct file_agg *f)
{
    if (f->rc && f->err[0]) json_array_append_new(t->notes, json_string(f->err));
    if (f->note[0]) {
        json_array_append_new(t->notes, json_string(f->note));
        fprintf(stderr, "runmon summary: %s\n", f->note);
    }
    t->rows += f->rows;
    for (int k = 0; k < RM_SKIP_COUNT; k++)
        t->skipped[k] += f->skipped[k];
    t->gaps += f->gaps;
    if (__builtin_add_overflow(t->gap_ns, f->gap_total_ns, &t->gap_ns)) t->gap_ns = INT64_MAX;
    if (f->first_ns != RM_NO_TIME && (t->data_first == RM_NO_TIME || f->first_ns < t->data_first))
        t->data_first = f->first_ns;
    if (f->last_ns != RM_NO_TIME && (t->data_last == RM_NO_TIME || f->last_ns > t->data_last))
        t->data_last = f->last_ns;
    if (f->rows) t->present[rm_input_defs[f->kind].stream] = true;
    const char *untimed = rm_input_reader(f->kind)->untimed;
    if (f->rows && untimed && f->first_ns == RM_NO_TIME && f->path) {
        char b[600];
        snprintf(b, sizeof b, "%s: %s", f->path, untimed);
        json_array_append_new(t->notes, json_string(b));
    }
    json_array_append_new(t->files, file_json(f));
}

/* Errors and notes from the files. Returns 0, or the failing file's rc (a strict file that
 * failed), or 2 when no file had a data row; err says why and the tally is freed then. */
static int tally_files(struct rm_summary *s, struct file_tally *t, char *err, size_t errsz)
{
    *t = (struct file_tally){.notes = json_array(),
                             .files = json_array(),
                             .data_first = RM_NO_TIME,
                             .data_last = RM_NO_TIME};
    int rc = 0;
    for (size_t i = 0; i < s->njobs && !rc; i++) {
        struct file_agg *f = s->jobs[i];
        if (f->rc && f->strict) {
            /* What was assumed of it (a field list that did not fit) explains the failure. */
            if (f->note[0]) fprintf(stderr, "runmon summary: %s\n", f->note);
            snprintf(err, errsz, "%s", f->err);
            rc = f->rc;
        } else {
            tally_file(t, f);
        }
    }
    if (!rc && s->njobs && t->rows == 0) {
        char names[400] = "";
        size_t used = 0;
        for (size_t i = 0; i < s->njobs && used < sizeof names - 1; i++)
            used += (size_t)snprintf(names + used, sizeof names - used, "%s%s", i ? ", " : "",
                                     s->jobs[i]->path ? s->jobs[i]->path : "(segment)");
        snprintf(err, errsz, "no data rows in %s", names);
        rc = 2;
    }
    if (rc) {
        json_decref(t->notes);
        json_decref(t->files);
    }
    return rc;
}

/* How an object's engine shares an interval between two of its files out to the phases: as
 * the files' own intervals are (fileagg.c). */
struct share_piece {
    void (*each)(void *arg, size_t phase, int64_t ns);
    void *arg;
};

static void share_span(void *ctx, size_t phase, enum rm_span_kind kind, int64_t ns, double j,
                       const struct rm_energy_bar *bar)
{
    (void)kind, (void)j, (void)bar;
    struct share_piece *c = ctx;
    c->each(c->arg, phase, ns);
}

static void share_interval(void *ctx, int64_t t0, int64_t t1,
                           void (*each)(void *arg, size_t phase, int64_t ns), void *arg)
{
    struct rm_summary *s = ctx;
    if (!s->rl.nwin) return;
    struct share_piece c = {each, arg};
    struct span_buf buf = {0};
    rm_phase_spans(&s->rl, &buf, t0, NAN, t1, NAN, 0, share_span, &c);
    free(buf.v);
}

/* A file's aggregates of the objects merged into the run's, then let go. */
static void merge_objects(struct rm_summary *s, struct merged *m, struct file_agg *f)
{
    const struct rm_obj_spans spans = {share_interval, s};
    for (int o = 0; o < RM_OBJ_COUNT; o++) {
        if (!f->obj[o]) continue;
        const struct rm_obj_engine *e = rm_obj_engine(o);
        if (!m->obj[o]) m->obj[o] = e->agg_new(m->nph);
        e->agg_merge(m->obj[o], f->obj[o], &spans);
        e->agg_free(f->obj[o]);
        f->obj[o] = NULL;
    }
}

/* Merge per source, in the order the inputs were added, and pair the GPUs. */
static void merge_sources(struct rm_summary *s, struct merged *m)
{
    memset(m, 0, sizeof *m);
    m->nph = s->rl.nphases;
    m->phost = rm_xcalloc(m->nph, sizeof *m->phost);
    for (size_t i = 0; i < s->njobs; i++) {
        struct file_agg *f = s->jobs[i];
        enum rm_gpu_source src = rm_input_reader(f->kind)->source;
        rm_host_stats_merge(&m->host, &f->host);
        for (size_t p = 0; f->ph && p < m->nph && p < f->nph; p++)
            if (f->ph[p] && f->ph[p]->used && (f->ph[p]->host || f->ph[p]->host_packed)) {
                struct phase_acc *a = rm_file_phase(f, p);
                struct rm_host_stats h;
                rm_unpack_host_stats(m->phost[p], &h);
                rm_host_stats_merge(&h, a->host);
                free(m->phost[p]);
                m->phost[p] = rm_pack_host_stats(&h);
                free(a->host); /* merged: the file's copy goes as the merged one grows */
                a->host = NULL;
                rm_file_park_phase(f, p);
            }
        if (src != RM_GPU_SOURCE_NONE)
            rm_source_merge(src == RM_GPU_SOURCE_QUERY ? &m->q : &m->d, f, m->nph, &s->rl);
        if (f->apps) {
            if (!m->have_apps) rm_apps_init(&m->apps, m->nph);
            m->have_apps = true;
            rm_apps_merge(&m->apps, f->apps);
        }
        merge_objects(s, m, f);
        /* Merged: the file's own copy of its phases is not needed again, so at most one
         * file's phases are held beside the sources' (thousands of phases cost megabytes). */
        rm_file_agg_drop_phases(f);
        if (f->apps) {
            rm_apps_free(f->apps);
            free(f->apps);
            f->apps = NULL;
        }
    }
    m->nfg = rm_pair_gpus(s->session, &m->q, &m->d, &m->fg);
    /* The budget's share per GPU, now that the data's GPUs are known too (build_phases folds
     * what went past it when they are more than were known before). */
    m->gpus = gpus_before_scan(s);
    if (m->nfg > m->gpus) m->gpus = m->nfg;
    m->rows = rm_runlog_rows_for(&s->rl, m->gpus);
}

static void merged_free(struct merged *m)
{
    free(m->fg);
    for (size_t p = 0; m->phost && p < m->nph; p++)
        free(m->phost[p]);
    free(m->phost);
    if (m->have_apps) rm_apps_free(&m->apps);
    for (int o = 0; o < RM_OBJ_COUNT; o++)
        if (m->obj[o]) rm_obj_engine(o)->agg_free(m->obj[o]);
    rm_source_free(&m->q);
    rm_source_free(&m->d);
}

/* ---- the workload's own processes (apps.csv) -------------------------------------- */

/* How a GPU's workload VRAM is known where none of its memory was placed in the workload but
 * some is held by processes runmon cannot place (host pids seen from inside a container):
 * taken as the workload's (assumed) when the job's GPUs are its own and no other process
 * was seen there, else unattributed: unknown, never 0. A GPU where some of the workload's
 * processes were placed keeps that figure (the rest stays in unknown_vram_mb).
 * Inside a container nvidia-smi often lists no process at all: a GPU that apps.csv sampled
 * while it listed none on any GPU, its memory.used peaking above WL_UNLISTED_FLOOR_MB,
 * holds memory runmon cannot place either; when assumed, the device's memory.used over
 * the samples is the workload's. Below the floor (idle reserve: 0 MiB on H100/H200/L40S,
 * ~60 MiB MIG, up to ~800 MiB on a desktop card with a display) the workload's stays 0. */
enum wl_basis { WL_ATTRIBUTED, WL_ASSUMED, WL_UNATTRIBUTED };
static const char *const wl_basis_names[] = {"attributed", "assumed", "unattributed"};
#define WL_UNLISTED_FLOOR_MB 1024.0

/* Whether the session's GPUs are the job's own: chosen by CUDA_VISIBLE_DEVICES, SLURM's or
 * NVIDIA_VISIBLE_DEVICES (session.json's gpu_selection.by), not every GPU of the node. */
static bool gpus_are_own(const json_t *session)
{
    const char *by =
        json_string_value(json_object_get(json_object_get(session, "gpu_selection"), "by"));
    return by && *by && strcmp(by, "--all-gpus") != 0;
}

/* GPU index g's memory.used over the session (query-gpu's, else dmon's fb); NULL: none. */
static const struct rm_stat *device_vram(const struct merged *m, int g)
{
    for (size_t i = 0; i < m->nfg; i++) {
        const struct final_gpu *f = &m->fg[i];
        if (f->index != g) continue;
        if (f->q && f->q->st.m[RM_GM_VRAM_USED].n) return &f->q->st.m[RM_GM_VRAM_USED];
        if (f->d && f->d->st.m[RM_GM_VRAM_USED].n) return &f->d->st.m[RM_GM_VRAM_USED];
    }
    return NULL;
}

/* Whether apps.csv sampled GPU g but listed no process on any GPU (nvidia-smi inside a
 * container sees none: a process listed anywhere means it can see them) while g's
 * memory.used peaked above the floor. */
static bool unlisted_vram(const struct merged *m, int g)
{
    const struct rm_apps_agg *a = &m->apps;
    if (!a->gpu[g].workload.n || a->nprocs) return false; /* not sampled, or some listed */
    const struct rm_stat *d = device_vram(m, g);
    return d && st_max(d) > WL_UNLISTED_FLOOR_MB;
}

static enum wl_basis gpu_basis(const struct merged *m, int g)
{
    const struct rm_apps_gpu *a = &m->apps.gpu[g];
    if (unlisted_vram(m, g)) return m->own_gpus ? WL_ASSUMED : WL_UNATTRIBUTED;
    if (!a->workload.n || !(st_max(&a->unknown) > 0) || st_max(&a->workload) > 0)
        return WL_ATTRIBUTED;
    return m->own_gpus && !(st_max(&a->other) > 0) ? WL_ASSUMED : WL_UNATTRIBUTED;
}

/* GPU g's workload VRAM per sample by its basis; NULL when unattributed. */
static const struct rm_stat *workload_stat(const struct merged *m, int g)
{
    switch (gpu_basis(m, g)) {
    case WL_ATTRIBUTED:
        return &m->apps.gpu[g].workload;
    case WL_ASSUMED: /* nothing placed there: each sample's unknown sum (or the device's
                      * memory.used where no process was listed) is the workload's */
        return unlisted_vram(m, g) ? device_vram(m, g) : &m->apps.gpu[g].unknown;
    case WL_UNATTRIBUTED:
        break;
    }
    return NULL;
}

static json_t *peak_mean(const struct rm_stat *st)
{
    return json_pack("{s:o,s:o}", "peak", rm_jnum(st_max(st), 3), "mean", rm_jnum(st_mean(st), 3));
}

static int cmp_proc_peak(const void *x, const void *y)
{
    const struct rm_app_proc *a = *(const struct rm_app_proc *const *)x;
    const struct rm_app_proc *b = *(const struct rm_app_proc *const *)y;
    double pa = isnan(a->peak_mb) ? -1 : a->peak_mb, pb = isnan(b->peak_mb) ? -1 : b->peak_mb;
    if (pa != pb) return pa < pb ? 1 : -1;
    return a->pid < b->pid ? -1 : a->pid > b->pid;
}

/* GPU g's processes, the largest first. */
static json_t *processes_json(const struct rm_apps_agg *a, int g)
{
    const struct rm_app_proc **list = rm_xcalloc(a->nprocs, sizeof *list);
    size_t n = 0;
    for (size_t i = 0; i < a->nprocs; i++)
        if (a->procs[i].gpu == g) list[n++] = &a->procs[i];
    qsort(list, n, sizeof *list, cmp_proc_peak);
    json_t *arr = json_array();
    for (size_t i = 0; i < n; i++) {
        const struct rm_app_proc *p = list[i];
        json_array_append_new(
            arr,
            json_pack("{s:I,s:s,s:i,s:o,s:o,s:I,s:o}", "pid", (json_int_t)p->pid, "name", p->name,
                      "gpu", g, "peak_mb", rm_jnum(p->peak_mb, 3), "sm_pct_mean",
                      rm_jnum(st_mean(&p->sm), 3), "samples", (json_int_t)p->samples, "in_workload",
                      p->in_workload < 0 ? json_null() : json_boolean(p->in_workload)));
    }
    free(list);
    return arr;
}

/* Adds the per-process figures to each GPU object that apps.csv reported. */
static void add_apps_to_gpus(json_t *gpus, const struct merged *m)
{
    if (!m->have_apps) return;
    size_t i;
    json_t *g;
    json_array_foreach(gpus, i, g)
    {
        json_t *ix = json_object_get(g, "index");
        int k = json_is_integer(ix) ? (int)json_integer_value(ix) : -1;
        if (k < 0 || k >= RM_APPS_MAX_GPUS || !m->apps.gpu[k].seen) continue;
        const struct rm_apps_gpu *a = &m->apps.gpu[k];
        static const struct rm_stat none = {0};
        const struct rm_stat *w = workload_stat(m, k);
        json_object_set_new(g, RM_GPU_WORKLOAD_VRAM, peak_mean(w ? w : &none));
        if (gpu_basis(m, k) != WL_ATTRIBUTED)
            json_object_set_new(g, "workload_vram_basis",
                                json_string(wl_basis_names[gpu_basis(m, k)]));
        json_object_set_new(g, "other_vram_mb",
                            json_pack("{s:o}", "peak", rm_jnum(st_max(&a->other), 3)));
        json_object_set_new(g, "unknown_vram_mb",
                            json_pack("{s:o}", "peak", rm_jnum(st_max(&a->unknown), 3)));
        json_object_set_new(g, "processes", processes_json(&m->apps, k));
    }
}

/* The processes of GPUs that per-process rows name but no GPU sample does (a lone pmon,
 * compute-apps or apps.csv file), each with its "gpu"; NULL when there are none. */
static json_t *unplaced_processes(const struct merged *m, const json_t *gpus)
{
    json_t *all = NULL;
    for (int k = 0; m->have_apps && k < RM_APPS_MAX_GPUS; k++) {
        if (!m->apps.gpu[k].seen) continue;
        bool placed = false;
        size_t i;
        const json_t *g;
        json_array_foreach(gpus, i, g)
        {
            const json_t *ix = json_object_get(g, "index");
            placed |= json_is_integer(ix) && json_integer_value(ix) == k;
        }
        if (placed) continue;
        if (!all) all = json_array();
        json_t *list = processes_json(&m->apps, k);
        json_array_extend(all, list);
        json_decref(list);
    }
    return all;
}

/* The largest workload VRAM on any one GPU, or null without apps.csv or when a GPU's is
 * unattributed (unknown, never 0). */
static json_t *workload_peak(const struct merged *m, int dec)
{
    double peak = NAN;
    for (int g = 0; m->have_apps && g < RM_APPS_MAX_GPUS; g++) {
        const struct rm_stat *w = m->apps.gpu[g].seen ? workload_stat(m, g) : NULL;
        if (m->apps.gpu[g].seen && m->apps.gpu[g].workload.n && !w) return json_null();
        if (w && w->n && (isnan(peak) || w->max > peak)) peak = w->max;
    }
    return rm_jnum(peak, dec);
}

/* The worst basis over the GPUs: "unattributed", "assumed", or null (every process placed). */
static json_t *workload_basis(const struct merged *m)
{
    enum wl_basis worst = WL_ATTRIBUTED;
    for (int g = 0; m->have_apps && g < RM_APPS_MAX_GPUS; g++)
        if (m->apps.gpu[g].seen && gpu_basis(m, g) > worst) worst = gpu_basis(m, g);
    return worst == WL_ATTRIBUTED ? json_null() : json_string(wl_basis_names[worst]);
}

/* data_quality's note per GPU whose workload VRAM is not plainly attributed. */
static void note_workload_basis(const struct merged *m, json_t *notes)
{
    for (int g = 0; m->have_apps && g < RM_APPS_MAX_GPUS; g++) {
        if (!m->apps.gpu[g].seen) continue;
        enum wl_basis b = gpu_basis(m, g);
        if (b == WL_ATTRIBUTED) continue;
        char t[400];
        if (unlisted_vram(m, g))
            snprintf(t, sizeof t,
                     b == WL_ASSUMED
                         ? "GPU %d: %.0f MiB used while nvidia-smi listed no process (as inside "
                           "a container) counted as the workload's (assumed): the job's GPUs "
                           "are its own"
                         : "GPU %d: %.0f MiB used while nvidia-smi listed no process (as inside "
                           "a container): the workload's VRAM there is unattributed (null)",
                     g, st_max(device_vram(m, g)));
        else
            snprintf(t, sizeof t,
                     b == WL_ASSUMED
                         ? "GPU %d: %.0f MiB held by processes runmon cannot place (not in its "
                           "PID namespace) counted as the workload's (assumed): the job's GPUs "
                           "are its own and no other process was seen on it"
                         : "GPU %d: %.0f MiB held by processes runmon cannot place (not in its "
                           "PID namespace): the workload's VRAM there is unattributed (null)",
                     g, st_max(&m->apps.gpu[g].unknown));
        json_array_append_new(notes, json_string(t));
    }
}

/* {"name", "by_device": {"0": MiB}, "max", "reserved_by_device"} or null. */
static json_t *framework_json(const struct rm_framework_peaks *fw, int dec)
{
    if (!fw) return json_null();
    json_t *alloc = json_object(), *res = json_object();
    double max = NAN;
    for (int d = 0; d < RM_FW_MAX_DEVICES; d++) {
        char key[16];
        snprintf(key, sizeof key, "%d", d);
        if (!isnan(fw->allocated_mb[d])) {
            json_object_set_new(alloc, key, rm_jnum(fw->allocated_mb[d], dec));
            if (isnan(max) || fw->allocated_mb[d] > max) max = fw->allocated_mb[d];
        }
        if (!isnan(fw->reserved_mb[d]))
            json_object_set_new(res, key, rm_jnum(fw->reserved_mb[d], dec));
    }
    json_t *o =
        json_pack("{s:s,s:o,s:o}", "name", fw->name, "by_device", alloc, "max", rm_jnum(max, dec));
    if (json_object_size(res))
        json_object_set_new(o, "reserved_by_device", res);
    else
        json_decref(res);
    return o;
}

static bool mig_instance(const char *uuid, const char *name)
{
    return rm_mig_instance(uuid, name);
}

/* MIG instances' rows among gpus (a "gpus" array): each says that its power and energy are
 * the whole GPU's; only the first instance of each GPU (by pci_bus_id; instances without
 * one count as one GPU) has "energy_counted" true, so sums never add a GPU twice. Returns
 * how many instance rows there were. */
static size_t mark_mig(json_t *gpus)
{
    size_t i, n = 0;
    json_t *g;
    json_array_foreach(gpus, i, g)
    {
        const char *uuid = json_string_value(json_object_get(g, "uuid"));
        if (!mig_instance(uuid, json_string_value(json_object_get(g, "name")))) continue;
        n++;
        const char *pci = json_string_value(json_object_get(g, "pci_bus_id"));
        bool first = true;
        for (size_t k = 0; k < i && first; k++) {
            json_t *h = json_array_get(gpus, k);
            const char *hp = json_string_value(json_object_get(h, "pci_bus_id"));
            if (json_is_true(json_object_get(h, "mig_instance")) &&
                ((!pci && !hp) || (pci && hp && strcmp(pci, hp) == 0)))
                first = false;
        }
        json_object_set_new(g, "mig_instance", json_true());
        json_object_set_new(g, "power_scope", json_string("whole GPU"));
        json_object_set_new(g, "energy_counted", json_boolean(first));
    }
    return n;
}

/* The power limit recorded for final GPU g (0: none). */
static double gpu_limit(const struct final_gpu *g)
{
    return g->q ? g->q->st.power_limit_w : 0;
}

/* "gpus": one object per paired GPU (its energy over the session's sess_s seconds); adds each
 * to m->tot. */
static json_t *build_gpus(struct rm_summary *s, struct merged *m, double sess_s)
{
    json_t *gpus = json_array();
    for (size_t i = 0; i < m->nfg; i++) {
        const struct final_gpu *g = &m->fg[i];
        const char *uuid, *name, *pci;
        rm_final_gpu_ident(s->session, g, &uuid, &name, &pci);
        /* A MIG instance of a GPU already in the totals adds nothing to their energy. */
        m->tot.skip_energy = false;
        for (size_t k = 0; k < i && mig_instance(uuid, name) && !m->tot.skip_energy; k++) {
            const char *ku, *kn, *kp;
            rm_final_gpu_ident(s->session, &m->fg[k], &ku, &kn, &kp);
            m->tot.skip_energy =
                mig_instance(ku, kn) && ((!pci && !kp) || (pci && kp && strcmp(pci, kp) == 0));
        }
        struct energy_window w = {sess_s, gpu_limit(g)};
        json_array_append_new(gpus, gpu_json(g->index, uuid, name, pci, g->q ? &g->q->st : NULL,
                                             g->d ? &g->d->st : NULL, 0, &w, &m->tot));
        m->tot.skip_energy = false;
    }
    mark_mig(gpus);
    add_apps_to_gpus(gpus, m);
    return gpus;
}

/* Headline figure k (model/figures.h) with dec decimals. */
static json_t *run_figure(enum rm_run_fig k, const struct rm_summary *s, const struct merged *m,
                          int dec)
{
    const struct gpu_totals *tot = &m->tot;
    switch (k) {
    case RM_RUN_PEAK_VRAM:
        return rm_jnum(st_max(&tot->vram), dec);
    case RM_RUN_UTIL_MEAN:
        return rm_jnum(st_mean(&tot->util), dec);
    case RM_RUN_UTIL_MAX:
        return rm_jnum(st_max(&tot->util), dec);
    case RM_RUN_MEMUTIL_MEAN:
        return rm_jnum(st_mean(&tot->memutil), dec);
    case RM_RUN_MEMUTIL_MAX:
        return rm_jnum(st_max(&tot->memutil), dec);
    case RM_RUN_MEMUTIL_SOURCE:
        return tot->memutil_dmon && tot->memutil_query ? json_string("mixed")
               : tot->memutil_dmon                     ? json_string("dmon")
               : tot->memutil_query                    ? json_string("query-gpu")
                                                       : json_null();
    case RM_RUN_POWER_MEAN:
        return rm_jnum(st_mean(&tot->power), dec);
    case RM_RUN_POWER_MAX:
        return rm_jnum(st_max(&tot->power), dec);
    case RM_RUN_CPU_USR_MEAN:
        return rm_jnum(st_mean(&m->host.m[RM_HM_USR]), dec);
    case RM_RUN_CPU_IDLE_MEAN:
        return rm_jnum(st_mean(&m->host.m[RM_HM_IDLE]), dec);
    case RM_RUN_JAX_PEAK:
        return rm_jnum(s->rl.has_jax ? s->rl.jax_peak_bytes / 1048576.0 : NAN, dec);
    case RM_RUN_WORKLOAD_PEAK_VRAM:
        return workload_peak(m, dec);
    case RM_RUN_WORKLOAD_VRAM_BASIS:
        return workload_basis(m);
    case RM_RUN_FRAMEWORK_PEAK:
        return framework_json(s->rl.fw, dec);
    case RM_RUN_FIG_COUNT:
        break;
    }
    return json_null();
}

/* The headline figures at the top of the document, over all GPUs and the host: the rows of
 * rm_run_figures in order. */
static void build_headline(json_t *o, const struct rm_summary *s, const struct merged *m)
{
    for (int k = 0; k < RM_RUN_FIG_COUNT; k++) {
        json_t *v = run_figure((enum rm_run_fig)k, s, m, rm_run_figures[k].dec);
        if (rm_run_figures[k].omit_null && json_is_null(v))
            json_decref(v);
        else
            json_object_set_new(o, rm_run_figures[k].key, v);
    }
}

/* The run's object k into in (the document or its totals): a host object from the merged
 * host stats, another from its files' aggregate (none when no file fed it: the document
 * then has none). */
static void put_run_object(json_t *in, const struct merged *m, int k)
{
    if (rm_objects[k].host)
        rm_obj_put(in, k, &m->host, &m->host);
    else if (m->obj[k])
        rm_obj_put(in, k, rm_obj_engine(k)->run(m->obj[k]), m->obj[k]);
}

static json_t *build_totals(const struct merged *m)
{
    const struct rm_stat *tp = m->q.total_power.n ? &m->q.total_power : &m->d.total_power;
    json_t *totals = json_object();
    json_object_set_new(totals, "gpu_count", json_integer((json_int_t)m->nfg));
    json_object_set_new(
        totals, "power_w",
        json_pack("{s:o,s:o}", "mean", rm_jnum(st_mean(tp), 3), "max", rm_jnum(st_max(tp), 3)));
    /* The GPUs' energy rows summed, under their keys and decimals (model/figures.c). */
    const struct gpu_totals *t = &m->tot;
    const struct rm_figure *fe = &rm_figures[RM_FIG_ENERGY], *fl = &rm_figures[RM_FIG_ENERGY_LOW],
                           *fh = &rm_figures[RM_FIG_ENERGY_HIGH],
                           *fu = &rm_figures[RM_FIG_ENERGY_UNCOVERED];
    json_object_set_new(totals, fe->key,
                        rm_jnum(t->has_energy ? t->energy_j / 3600 : NAN, fe->dec));
    json_object_set_new(totals, fl->key,
                        rm_jnum(t->has_bar ? t->energy_low_j / 3600 : NAN, fl->dec));
    json_object_set_new(
        totals, fh->key,
        rm_jnum(t->has_bar && !t->high_unknown ? t->energy_high_j / 3600 : NAN, fh->dec));
    json_object_set_new(totals, fu->key, rm_jnum(t->has_bar ? t->uncovered_s : NAN, fu->dec));
    for (int k = 0; k < RM_OBJ_COUNT; k++) /* the objects of totals (the host's) */
        if (rm_objects[k].in_totals) put_run_object(totals, m, k);
    return totals;
}

/* ---- phases ------------------------------------------------------------------------ */

/* A GPU counts in a phase with a sample inside its windows, or a spacing across one (a window
 * between two samples gets its share of the energy). */
static bool phase_has_data(const struct rm_gpu_stats *st)
{
    return st->samples || st->covered_ns || st->gaps;
}

/* Whether final GPU g has per-process figures (then each phase row shows its workload VRAM). */
static bool gpu_has_apps(const struct merged *m, const struct final_gpu *g)
{
    return m->have_apps && g->index >= 0 && g->index < RM_APPS_MAX_GPUS &&
           m->apps.gpu[g->index].seen;
}

/* Final GPU i's figures in phase p: query-gpu's and dmon's (NULL: no data there) and the
 * workload's VRAM (NULL: no sample). */
static void phase_figures(struct merged *m, size_t p, size_t i, const struct rm_gpu_stats **qs,
                          const struct rm_gpu_stats **ds, const struct rm_stat **w)
{
    const struct final_gpu *g = &m->fg[i];
    struct source *q = &m->q, *d = &m->d;
    const struct rm_gpu_stats *qp = g->q ? rm_source_phase(q, p) : NULL,
                              *dp = g->d ? rm_source_phase(d, p) : NULL;
    *qs = *ds = NULL;
    *w = NULL;
    if (qp && q->phn[p] > g->qi && phase_has_data(&qp[g->qi])) *qs = &qp[g->qi];
    if (dp && d->phn[p] > g->di && phase_has_data(&dp[g->di])) *ds = &dp[g->di];
    if (gpu_has_apps(m, g) && p < m->apps.nph) *w = rm_apps_phase_stat(&m->apps, p, g->index);
}

/* The "(other phases)" row's figures: its own phase's, and those of the rows past the budget
 * of phase rows x GPUs that were folded in once the GPUs were known (after the files were
 * read), each GPU's, the host's and the workload's. */
struct other_row {
    struct rm_gpu_stats *q, *d; /* [final GPU] */
    struct rm_stat *work;       /* [final GPU] */
    struct rm_host_stats host;
    void *obj[RM_OBJ_COUNT]; /* each object's accumulator (its engine's), of the runs with it */
};

static void other_row_init(struct other_row *o, const struct merged *m, size_t nfg)
{
    memset(o, 0, sizeof *o);
    o->q = rm_xcalloc(nfg + 1, sizeof *o->q);
    o->d = rm_xcalloc(nfg + 1, sizeof *o->d);
    o->work = rm_xcalloc(nfg + 1, sizeof *o->work);
    for (size_t i = 0; i < nfg; i++)
        rm_stats_init(&o->q[i]), rm_stats_init(&o->d[i]);
    for (int k = 0; k < RM_OBJ_COUNT; k++)
        if (m->obj[k]) o->obj[k] = rm_obj_engine(k)->acc_new();
}

static void other_row_free(struct other_row *o)
{
    free(o->q);
    free(o->d);
    free(o->work);
    for (int k = 0; k < RM_OBJ_COUNT; k++)
        if (o->obj[k]) rm_obj_engine(k)->acc_free(o->obj[k]);
}

/* rm_stats_fold of another phase's figures: the rows are folded in order of first appearance,
 * which need not be the order in time, so the first and last times are the extremes. */
static void fold_stats(struct rm_gpu_stats *a, const struct rm_gpu_stats *b)
{
    struct rm_gpu_stats was = *a;
    rm_stats_fold(a, b);
    if (was.first_ns == RM_NO_TIME || b->first_ns == RM_NO_TIME) return;
    if (was.first_ns <= b->first_ns) a->first_ns = was.first_ns, a->first_power = was.first_power;
    if (was.last_ns > b->last_ns) a->last_ns = was.last_ns, a->last_power = was.last_power;
}

/* Phase p's figures into the other row. */
static void fold_row(struct other_row *o, struct merged *m, size_t p)
{
    for (size_t i = 0; i < m->nfg; i++) {
        const struct rm_gpu_stats *qs, *ds;
        const struct rm_stat *w;
        phase_figures(m, p, i, &qs, &ds, &w);
        if (qs) fold_stats(&o->q[i], qs);
        if (ds) fold_stats(&o->d[i], ds);
        if (w) rm_stat_merge(&o->work[i], w);
    }
    if (p < m->nph) {
        struct rm_host_stats h;
        rm_unpack_host_stats(m->phost[p], &h);
        rm_host_stats_merge(&o->host, &h);
    }
    for (int k = 0; k < RM_OBJ_COUNT; k++) {
        const void *acc = m->obj[k] ? rm_obj_engine(k)->phase(m->obj[k], p) : NULL;
        if (acc) rm_obj_engine(k)->acc_merge(o->obj[k], acc);
    }
}

/* A phase whose windows are on average shorter than RM_SHORT_PHASE_WINDOWS sensor windows or
 * RM_SHORT_PHASE_INTERVALS sampling intervals: its energy is mostly the sensor's smear. Returns
 * 0 for a phase that is not short, else the seconds its energy bar may hold at the peak
 * reading: its windows x the longer of the sensor window and their mean length. */
#define RM_SHORT_PHASE_WINDOWS 2
#define RM_SHORT_PHASE_INTERVALS 3
static double short_phase_s(const struct rm_summary *s, const struct rm_phase *ph)
{
    if (ph->count == 0 || !(ph->total_s >= 0)) return 0;
    double w = (double)RM_SENSOR_WINDOW_NS / 1e9, mean_s = ph->total_s / (double)ph->count;
    if (mean_s >= RM_SHORT_PHASE_WINDOWS * w &&
        mean_s >= RM_SHORT_PHASE_INTERVALS * (double)s->interval_ns / 1e9)
        return 0;
    return (double)ph->count * (mean_s > w ? mean_s : w);
}

/* A phase's "gpus": each paired GPU with data in phase p, or in the other row o. */
static json_t *phase_gpus(const struct rm_summary *s, struct merged *m, size_t p,
                          const struct other_row *o)
{
    double short_s = short_phase_s(s, &s->rl.phases[p]);
    json_t *pg = json_array();
    for (size_t i = 0; i < m->nfg; i++) {
        const struct final_gpu *g = &m->fg[i];
        const struct rm_gpu_stats *qs, *ds;
        const struct rm_stat *w;
        if (o) {
            qs = phase_has_data(&o->q[i]) ? &o->q[i] : NULL;
            ds = phase_has_data(&o->d[i]) ? &o->d[i] : NULL;
            w = &o->work[i];
        } else {
            phase_figures(m, p, i, &qs, &ds, &w);
        }
        if (!qs && !ds) continue;
        const char *uuid, *name, *pci;
        rm_final_gpu_ident(s->session, g, &uuid, &name, &pci);
        struct energy_window win = {s->rl.phases[p].total_s, gpu_limit(g)};
        json_t *gj = gpu_json(g->index, uuid, name, pci, qs, ds, short_s, &win, NULL);
        if (gpu_has_apps(m, g) && (o || p < m->apps.nph)) {
            static const struct rm_stat none = {0};
            /* a phase's share of memory no process was placed for is not kept: unknown */
            if (gpu_basis(m, g->index) != WL_ATTRIBUTED) w = NULL;
            /* where no process was listed, the phase's memory.used is the assumed figure */
            if (gpu_basis(m, g->index) == WL_ASSUMED && unlisted_vram(m, g->index))
                w = qs && qs->m[RM_GM_VRAM_USED].n   ? &qs->m[RM_GM_VRAM_USED]
                    : ds && ds->m[RM_GM_VRAM_USED].n ? &ds->m[RM_GM_VRAM_USED]
                                                     : NULL;
            json_object_set_new(gj, RM_GPU_WORKLOAD_VRAM, peak_mean(w ? w : &none));
        }
        json_array_append_new(pg, gj);
    }
    mark_mig(pg);
    return pg;
}

/* The phase's energy and bar over its GPUs (the sum of theirs; null when none has energy; the
 * bar's top null when a GPU's is unknown) and the most seconds a GPU's samples left out. */
static void phase_energy(json_t *po, const json_t *gpus)
{
    static const int figs[] = {RM_FIG_ENERGY, RM_FIG_ENERGY_LOW, RM_FIG_ENERGY_HIGH};
    for (size_t k = 0; k < 3; k++) {
        const struct rm_figure *f = &rm_figures[figs[k]];
        double sum = 0;
        bool any = false, unknown = false;
        size_t i;
        json_t *g;
        json_array_foreach(gpus, i, g)
        {
            json_t *v = json_object_get(g, f->key);
            if (json_is_false(json_object_get(g, "energy_counted"))) continue; /* MIG */
            if (json_is_number(v)) sum += json_number_value(v), any = true;
            if (k == 2 && !json_is_number(v) &&
                json_is_number(json_object_get(g, rm_figures[RM_FIG_ENERGY_LOW].key)))
                unknown = true;
        }
        json_object_set_new(po, f->key, rm_jnum(any && !unknown ? sum : NAN, f->dec));
    }
    const struct rm_figure *fu = &rm_figures[RM_FIG_ENERGY_UNCOVERED];
    double most = NAN;
    size_t i;
    json_t *g;
    json_array_foreach(gpus, i, g)
    {
        json_t *v = json_object_get(g, fu->key);
        if (json_is_number(v) && !(json_number_value(v) <= most)) most = json_number_value(v);
    }
    json_object_set_new(po, fu->key, rm_jnum(most, fu->dec));
}

/* One row of "phases": the run log's lines of ph, its GPUs' figures, its objects (the
 * host's, and each that a stream fed: NULL where none did). */
static json_t *phase_json(const struct rm_summary *s, const struct rm_phase *ph, bool other,
                          json_t *gpus, json_t *const objs[RM_OBJ_COUNT])
{
    json_t *po = json_object();
    const char *slash = strrchr(ph->path, '/');
    int depth = ph->depth;
    if (depth < 0) {
        depth = 0;
        for (const char *c = ph->path; *c; c++)
            depth += *c == '/';
    }
    json_object_set_new(po, "path", json_string(ph->path));
    json_object_set_new(po, "name", json_string(slash ? slash + 1 : ph->path));
    json_object_set_new(po, "depth", json_integer(depth));
    json_object_set_new(po, "count", json_integer((json_int_t)ph->count));
    json_object_set_new(po, "total_seconds", rm_jnum(ph->total_s, 3));
    json_object_set_new(po, "status",
                        json_pack("{s:I,s:I,s:I}", "ok", (json_int_t)ph->ok, "error",
                                  (json_int_t)ph->error, "unterminated",
                                  (json_int_t)ph->unterminated));
    if (other)
        json_object_set_new(po, "folded_paths", json_integer((json_int_t)s->rl.folded_paths));
    json_object_set_new(po, "first_start", jts(ph->first_start_ns));
    json_object_set_new(po, "last_end", jts(ph->last_end_ns));
    json_object_set_new(po, "short_phase", json_boolean(short_phase_s(s, ph) > 0));
    phase_energy(po, gpus);
    json_object_set_new(po, "gpus", gpus);
    const struct rm_run_figure *fw = &rm_run_figures[RM_RUN_FRAMEWORK_PEAK];
    if (ph->fw) json_object_set_new(po, fw->key, framework_json(ph->fw, fw->dec));
    json_t *metrics = rm_metrics_phase_json(&s->rl.metrics, (size_t)(ph - s->rl.phases));
    if (metrics) json_object_set_new(po, "metrics", metrics); /* a phase with metric lines */
    for (int k = 0; k < RM_OBJ_COUNT; k++)
        if (objs[k]) json_object_set_new(po, rm_objects[k].key, objs[k]);
    return po;
}

/* A phase row, to the caller's row function (which writes it out and lets it go: the rows'
 * JSON is never all held at once), or else appended to "phases". */
static void emit_row(struct rm_summary *s, const json_t *doc, json_t *phases, json_t *row)
{
    rm_held_phase(row, doc);
    if (s->opts.phase_row)
        s->opts.phase_row(s->opts.phase_row_ctx, doc, row);
    else
        json_array_append_new(phases, row);
}

/* A phase row's object k: a host object from the phase's host stats h, another from its
 * accumulator acc, or NULL for a session without its stream. */
static json_t *phase_object(const struct merged *m, int k, const struct rm_host_stats *h,
                            const void *acc)
{
    if (rm_objects[k].host) return rm_obj_json(k, h, NULL);
    return m->obj[k] ? rm_obj_json(k, acc, NULL) : NULL;
}

/* Phases, in order of first appearance in the run log: the first m->rows paths a row each,
 * then one row for the rest (those folded while the run log was read, and the rows past the
 * budget, folded here when the GPUs turned out more than session.json listed). */
static void build_phases(struct rm_summary *s, struct merged *m, json_t *doc, json_t *phases)
{
    struct other_row o;
    other_row_init(&o, m, m->nfg);
    size_t shown = 0;
    for (size_t p = 0; p < m->nph; p++) {
        if (p == s->rl.other) continue;
        if (keep_phase(s, s->rl.phases[p].path)) {
            if (shown < m->rows) {
                struct rm_host_stats h;
                rm_unpack_host_stats(m->phost[p], &h);
                json_t *objs[RM_OBJ_COUNT];
                for (int k = 0; k < RM_OBJ_COUNT; k++)
                    objs[k] = phase_object(
                        m, k, &h, m->obj[k] ? rm_obj_engine(k)->phase(m->obj[k], p) : NULL);
                emit_row(s, doc, phases,
                         phase_json(s, &s->rl.phases[p], false, phase_gpus(s, m, p, NULL), objs));
                shown++;
            } else {
                fold_row(&o, m, p);
                size_t other = rm_runlog_other_phase(&s->rl); /* made when none was needed */
                rm_phase_fold(&s->rl.phases[other], &s->rl.phases[p]);
                rm_metrics_phases(&s->rl.metrics, s->rl.nphases);
                rm_metrics_phase_fold(&s->rl.metrics, other, p);
                s->rl.folded_paths++;
                s->rl.max_phases = m->rows;
            }
        }
        /* Its JSON holds them now: the figures of thousands of phases and their rows are
         * never all held. */
        rm_source_drop_phase(&m->q, p), rm_source_drop_phase(&m->d, p);
        free(m->phost[p]);
        m->phost[p] = NULL;
    }
    if (s->rl.other != RM_NO_PHASE) {
        fold_row(&o, m, s->rl.other);
        json_t *objs[RM_OBJ_COUNT];
        for (int k = 0; k < RM_OBJ_COUNT; k++)
            objs[k] = phase_object(m, k, &o.host, o.obj[k]);
        emit_row(s, doc, phases,
                 phase_json(s, &s->rl.phases[s->rl.other], true, phase_gpus(s, m, s->rl.other, &o),
                            objs));
    }
    other_row_free(&o);
}

/* The run's sweep and parameters: session.json's (runmon record --sweep/--param) over the
 * run log's `params` lines; a bad params line is a note. */
static void add_params(json_t *o, const struct rm_summary *s, json_t *notes)
{
    const json_t *ssw = json_object_get(s->session, "sweep"),
                 *sp = json_object_get(s->session, "params");
    json_t *params = json_deep_copy(s->rl.params);
    if (!params) params = json_object();
    if (json_is_object(sp)) json_object_update(params, (json_t *)sp);
    json_object_set_new(o, "sweep",
                        json_is_string(ssw) ? json_copy((json_t *)ssw)
                        : s->rl.sweep       ? json_string(s->rl.sweep)
                                            : json_null());
    json_object_set_new(o, "params", params);
    if (s->rl.bad_params) {
        char b[256];
        snprintf(b, sizeof b,
                 "runlog: %llu params line%s ignored: params must be an object and sweep a "
                 "string (first: %s)",
                 (unsigned long long)s->rl.bad_params, s->rl.bad_params > 1 ? "s" : "",
                 s->rl.bad_params_first);
        json_array_append_new(notes, json_string(b));
    }
}

/* The run log's metrics and objectives (absent when it has none, as in runs before them);
 * what was ignored is a note. */
static void add_metrics(json_t *o, const struct rm_summary *s, json_t *notes)
{
    const struct rm_metrics *mt = &s->rl.metrics;
    if (mt->n) json_object_set_new(o, "metrics", rm_metrics_json(mt));
    if (mt->objectives) json_object_set_new(o, "objectives", json_copy(mt->objectives));
    rm_metrics_notes(mt, notes);
}

/* What the cap on distinct phase paths did, for data_quality.notes. */
static void note_phase_cap(const struct rm_summary *s, const struct merged *m, json_t *notes)
{
    bool bad;
    rm_runlog_max_phases_env(&bad);
    char b[400];
    if (bad) {
        snprintf(b, sizeof b,
                 "RUNMON_SUMMARY_MAX_PHASES is not a positive integer: the default cap of %d "
                 "phase paths was used",
                 RM_MAX_PHASES_DEFAULT);
        json_array_append_new(notes, json_string(b));
    }
    if (s->rl.other == RM_NO_PHASE) return;
    char gpus[96] = "";
    if (m->gpus > 1)
        snprintf(gpus, sizeof gpus, ": %zu phase rows x GPUs, %zu GPUs here", s->rl.max_cells,
                 m->gpus);
    snprintf(b, sizeof b,
             "phases: %llu distinct phase paths past the first %zu are summed in one row \"%s\" "
             "(RUNMON_SUMMARY_MAX_PHASES sets the cap%s)",
             (unsigned long long)s->rl.folded_paths, s->rl.max_phases, RM_OTHER_PHASES_PATH, gpus);
    json_array_append_new(notes, json_string(b));
}

static json_t *build_alerts(const struct rm_summary *s)
{
    return json_pack("{s:I,s:I,s:O}", "warning", (json_int_t)s->rl.warnings, "critical",
                     (json_int_t)s->rl.criticals, "events", s->rl.alerts);
}

/* Data quality; takes the tally's notes and files. */
/* Each GPU's coverage (its sampled seconds over the session's); returns the worst GPU's
 * position in gpus, or -1 when no GPU has timed samples. */
static long gpu_coverage(json_t *gpus, double sess_s)
{
    long worst = -1;
    double worst_cov = INFINITY;
    size_t i;
    json_t *g;
    json_array_foreach(gpus, i, g)
    {
        json_t *v = json_object_get(g, "sampled_seconds");
        double cov = json_is_number(v) && isfinite(sess_s) && sess_s > 0
                         ? fmin(1.0, json_number_value(v) / sess_s)
                         : NAN;
        json_object_set_new(g, "coverage", rm_jnum(cov, 4));
        if (json_is_number(v) && (worst < 0 || !(json_number_value(v) >= worst_cov)))
            worst = (long)i, worst_cov = json_number_value(v);
    }
    return worst;
}

/* The session's seconds: the run log's span, else the data's; NaN when unknown. */
static double session_seconds(const struct file_tally *t, int64_t s_start, int64_t s_end)
{
    int64_t span_a = s_start != RM_NO_TIME ? s_start : t->data_first;
    int64_t span_b = s_end != RM_NO_TIME ? s_end : t->data_last;
    if (span_b == RM_NO_TIME ||
        (t->data_last != RM_NO_TIME && s_end == RM_NO_TIME && t->data_last > span_b))
        span_b = t->data_last;
    return span_a != RM_NO_TIME && span_b != RM_NO_TIME && span_b > span_a
               ? (double)(span_b - span_a) / 1e9
               : NAN;
}

/* worst: gpu_coverage's answer. */
static json_t *build_data_quality(const struct rm_summary *s, struct file_tally *t,
                                  const struct merged *m, json_t *gpus, double sess_s, long worst)
{
    json_t *dq = json_object(), *sk = json_object();
    json_object_set_new(dq, "rows_read", json_integer((json_int_t)t->rows));
    for (int k = 0; k < RM_SKIP_COUNT; k++)
        json_object_set_new(sk, rm_skip_names[k], json_integer((json_int_t)t->skipped[k]));
    json_object_set_new(dq, "rows_skipped", sk);
    json_object_set_new(dq, "gaps",
                        json_pack("{s:I,s:o}", "count", (json_int_t)t->gaps, "seconds",
                                  rm_jnum((double)t->gap_ns / 1e9, 3)));
    /* The worst-covered GPU's figures: a GPU that lost part of the run is not hidden behind
     * one that did not. */
    double sampled_s = m->tot.covered_ns ? (double)m->tot.covered_ns / 1e9 : (m->nfg ? 0 : NAN);
    json_t *wg = worst >= 0 ? json_array_get(gpus, (size_t)worst) : NULL;
    if (wg) sampled_s = json_number_value(json_object_get(wg, "sampled_seconds"));
    json_object_set_new(dq, "sampled_seconds", rm_jnum(sampled_s, 3));
    json_object_set_new(dq, "session_seconds", rm_jnum(sess_s, 3));
    json_object_set_new(
        dq, "coverage",
        rm_jnum(isfinite(sess_s) && isfinite(sampled_s) ? fmin(1.0, sampled_s / sess_s) : NAN, 4));
    json_object_set_new(dq, "coverage_gpu",
                        wg ? json_incref(json_object_get(wg, "index")) : json_null());
    const struct rm_phase_index *rl = &s->rl;
    json_object_set_new(
        dq, "runlog",
        json_pack("{s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I}", "lines", (json_int_t)rl->lines, "events",
                  (json_int_t)rl->events, "torn_line", (json_int_t)rl->torn, "garbage",
                  (json_int_t)rl->garbage, "bad_time", (json_int_t)rl->bad_time, "long_line",
                  (json_int_t)rl->long_lines, "unmatched_exit", (json_int_t)rl->unmatched_exits,
                  "nonconforming_output", (json_int_t)rl->nonconforming));
    /* GPU rows stamped with their arrival time, not nvidia-smi's timestamp (session.json's
     * count; absent for older sessions, whose ts is always the arrival). */
    json_t *ar = json_object_get(json_object_get(json_object_get(s->session, "collectors"), "gpu"),
                                 "arrival_ts_rows");
    if (json_is_integer(ar)) json_object_set_new(dq, "arrival_ts_rows", json_copy(ar));
    json_object_set_new(dq, "notes", t->notes);
    json_object_set_new(dq, "files", t->files);
    t->notes = t->files = NULL;
    return dq;
}

int rm_summary_build(struct rm_summary *s, json_t **out, char *err, size_t errsz)
{
    *out = NULL;
    json_object_seed(0);
    if (compile_phase_regex(s, err, errsz)) return 2;
    choose_interval_and_fields(s);
    /* The run log first: the phase windows decide where each sample goes. */
    int64_t s_start, s_end;
    if (read_runlogs(s, &s_start, &s_end, err, errsz)) return 2;

    rm_summary_run_jobs(s);

    struct file_tally tally;
    int rc = tally_files(s, &tally, err, errsz);
    if (rc) return rc;
    struct merged m;
    merge_sources(s, &m);
    m.own_gpus = gpus_are_own(s->session);

    json_t *o = json_object();
    json_object_set_new(o, "format", json_string("runmon-summary"));
    json_object_set_new(o, "schema_version", json_integer(RM_SUMMARY_SCHEMA_VERSION));
    json_object_set_new(o, "generated_at", jts(rm_now_realtime_ns()));
    double sess_s = session_seconds(&tally, s_start, s_end);
    json_t *gpus = build_gpus(s, &m, sess_s); /* first: it adds up the totals the headline shows */
    build_headline(o, s, &m);
    add_params(o, s, tally.notes);
    add_metrics(o, s, tally.notes);
    json_object_set_new(o, "session", session_json(s->session));
    json_object_set_new(o, "gpus", gpus);
    json_t *procs = unplaced_processes(&m, gpus);
    if (procs) json_object_set_new(o, "processes", procs);
    json_object_set_new(o, "totals", build_totals(&m));
    for (int k = 0; k < RM_OBJ_COUNT; k++)
        if (!rm_objects[k].in_totals) put_run_object(o, &m, k);
    /* Every key before "phases" is whole before the first row: a streaming writer has
     * written them by then (report/output.h). */
    long worst = gpu_coverage(gpus, sess_s);
    json_t *phases = json_array();
    json_object_set_new(o, "phases", phases);
    build_phases(s, &m, o, phases);
    json_object_set_new(o, "collectors", collectors_json(s->session, &s->rl, tally.present));
    json_object_set_new(o, "alerts", build_alerts(s));
    note_phase_cap(s, &m, tally.notes);
    note_workload_basis(&m, tally.notes);
    size_t k;
    json_t *g;
    json_array_foreach(gpus, k, g) if (json_is_true(json_object_get(g, "mig_instance")))
    {
        json_array_append_new(tally.notes,
                              json_string("MIG: power and energy on an instance's row are the "
                                          "whole GPU's (nvidia-smi measures no instance); sums "
                                          "count each GPU once"));
        break;
    }
    json_object_set_new(o, "data_quality", build_data_quality(s, &tally, &m, gpus, sess_s, worst));
    merged_free(&m);
    *out = o;
    return 0;
}
