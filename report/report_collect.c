/* Collecting a report's data: stream the collector CSVs into downsampled series, read the
 * run log's phases and events, and find the time range every chart shares (see report.h). */
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/alloc.h"
#include "base/json.h"
#include "base/jsonpick.h"
#include "base/rm_time.h"
#include "model/figures.h"
#include "model/streams.h"
#include "report/report_internal.h"
#include "summary/csvread.h"
#include "summary/objects.h"
#include "summary/sample.h"
#include "summary/segments.h"
#include "summary/summary.h"

static void copyn(char *dst, size_t cap, const char *s, size_t len)
{
    if (len >= cap) len = cap - 1;
    memcpy(dst, s, len);
    dst[len] = '\0';
}

/* ---- collecting ----------------------------------------------------------------------- */

static void widen(struct report *r, int64_t t)
{
    if (t == RM_NO_TIME) return;
    if (r->t0 == RM_NO_TIME || t < r->t0) r->t0 = t;
    if (r->t1 == RM_NO_TIME || t > r->t1) r->t1 = t;
}

/* The time of a line whose first field is a `ts`. */
static bool line_ts(const char *s, size_t len, int64_t *t)
{
    const char *c = memchr(s, ',', len);
    size_t n = c ? (size_t)(c - s) : len;
    if (n && s[0] == '"') s++, n -= n > 1 ? 2 : 1;
    return n >= 10 && rm_parse_ts_checked(s, n, t) == 0;
}

/* The first and last row times of a collector file, from its first and last 64 KiB. */
static void peek_range(struct report *r, const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return;
    static char buf[65536];
    ssize_t n = pread(fd, buf, sizeof buf, 0);
    int64_t t;
    for (ssize_t i = 0; n > 0 && i < n;) {
        char *nl = memchr(buf + i, '\n', (size_t)(n - i));
        if (!nl) break;
        if (line_ts(buf + i, (size_t)(nl - buf - i), &t)) {
            widen(r, t);
            break;
        }
        i = nl - buf + 1;
    }
    struct stat st;
    if (fstat(fd, &st) == 0 && st.st_size > 0) {
        off_t off = st.st_size > (off_t)sizeof buf ? st.st_size - (off_t)sizeof buf : 0;
        n = pread(fd, buf, sizeof buf, off);
        /* Whole lines only: from the end, each line that ends in '\n'. */
        ssize_t end = n;
        while (end > 0 && buf[end - 1] != '\n')
            end--;
        while (end > 0) {
            ssize_t b = end - 1;
            while (b > 0 && buf[b - 1] != '\n')
                b--;
            if ((b > 0 || off == 0) && line_ts(buf + b, (size_t)(end - 1 - b), &t)) {
                widen(r, t);
                break;
            }
            end = b;
        }
    }
    close(fd);
}

static struct gpu_track *gpu_track(struct report *r, const struct rm_gpu_sample *g)
{
    const struct rm_strref *k = g->index.len ? &g->index : g->uuid.len ? &g->uuid : &g->pci;
    char key[64];
    copyn(key, sizeof key, k->len ? k->s : "0", k->len ? k->len : 1);
    for (size_t i = 0; i < r->ngpus; i++)
        if (!strcmp(r->gpus[i].key, key)) return &r->gpus[i];
    if (r->ngpus == MAX_GPUS) {
        r->gpu_overflow = true;
        return NULL;
    }
    struct gpu_track *t = &r->gpus[r->ngpus];
    memset(t, 0, sizeof *t);
    snprintf(t->key, sizeof t->key, "%s", key);
    char *endp;
    t->index = strtol(key, &endp, 10);
    if (*endp || endp == key) t->index = 1000000 + (long)r->ngpus;
    if (g->name.len) copyn(t->name, sizeof t->name, g->name.s, g->name.len);
    for (int m = 0; m < GS_COUNT; m++)
        if (rm_series_init(&t->s[m], r->t0, r->t1, RM_REPORT_BUCKETS, r->gap_ns)) abort();
    r->ngpus++;
    return t;
}

static void gpu_row(void *ctx, const struct rm_csv_row *row)
{
    struct report *r = ctx;
    struct rm_gpu_sample g;
    /* power.limit is no metric of the summary: its column is found by the header's name. */
    for (size_t i = 0; i < row->n; i++)
        if (row->len[i] == 11 && !memcmp(row->f[i], "power.limit", 11)) r->plimit_col = (long)i;
    int kind = rm_gpucsv_row(&r->gcsv, row, &g);
    if (kind == 0) rm_report_thr_header(r, row); /* a header */
    if (kind != 1) return;
    if (g.t_ns == RM_NO_TIME) return;
    struct gpu_track *t = gpu_track(r, &g);
    if (!t) return;
    rm_report_thr_row(r, t, g.t_ns, row);
    if (r->plimit_col >= 0 && (size_t)r->plimit_col < row->n) {
        char buf[32], *end;
        size_t n = row->len[r->plimit_col];
        if (n && n < sizeof buf) {
            memcpy(buf, row->f[r->plimit_col], n);
            buf[n] = 0;
            double v = strtod(buf, &end);
            if (end != buf && !*end && isfinite(v) && v > 0 && v < 1e6 && v > t->power_limit)
                t->power_limit = v;
        }
    }
    static const int map[GS_COUNT] = {RM_GM_UTIL,  RM_GM_VRAM_USED, RM_GM_VRAM_TOTAL,
                                      RM_GM_POWER, RM_GM_TEMP,      RM_GM_SMCLK};
    for (int m = 0; m < GS_COUNT; m++)
        if (g.valid & (1u << map[m])) rm_series_add(&t->s[m], g.t_ns, g.v[map[m]]);
}

static void host_row(void *ctx, const struct rm_csv_row *row)
{
    struct report *r = ctx;
    struct rm_host_sample h;
    if (rm_hostcsv_row(&r->hcsv, row, &h) != 1 || h.t_ns == RM_NO_TIME) return;
#define HAS(m) (h.valid & (1u << (m)))
    if (r->host_kind == 0) {
        if (HAS(RM_HM_IDLE)) rm_series_add(&r->host[HS_BUSY], h.t_ns, 100.0 - h.v[RM_HM_IDLE]);
        if (HAS(RM_HM_IOWAIT)) rm_series_add(&r->host[HS_IOWAIT], h.t_ns, h.v[RM_HM_IOWAIT]);
        if (HAS(RM_HM_MEM_USED)) rm_series_add(&r->host[HS_MEM_USED], h.t_ns, h.v[RM_HM_MEM_USED]);
        if (HAS(RM_HM_MEM_TOTAL))
            rm_series_add(&r->host[HS_MEM_TOTAL], h.t_ns, h.v[RM_HM_MEM_TOTAL]);
    } else if (HAS(RM_HM_PROC_RSS)) {
        rm_series_add(&r->host[HS_RSS], h.t_ns, h.v[RM_HM_PROC_RSS]);
    }
#undef HAS
}

/* apps.csv: rows of one pmon sample share their ts; rm_apps_agg adds them up per GPU as the
 * summary does, and each closed sample becomes one point per GPU and line. */
static void apps_close(struct report *r)
{
    struct rm_apps_agg *a = &r->aagg;
    if (!a->open) return;
    for (int g = 0; g < RM_APPS_MAX_GPUS; g++) {
        if (!(a->seen >> g & 1)) continue;
        struct apps_track *t = &r->apps[g];
        if (!t->seen) {
            if (rm_series_init(&t->w, r->t0, r->t1, RM_REPORT_BUCKETS, r->apps_gap_ns) ||
                rm_series_init(&t->o, r->t0, r->t1, RM_REPORT_BUCKETS, r->apps_gap_ns))
                abort();
            t->seen = true;
            r->napps++;
        }
        rm_series_add(&t->w, a->t_ns, a->w[g]);
        rm_series_add(&t->o, a->t_ns, a->o[g] + a->u[g]);
    }
    rm_apps_close(a, NULL, 0);
}

static void apps_row(void *ctx, const struct rm_csv_row *row)
{
    struct report *r = ctx;
    struct rm_app_row x;
    if (rm_appscsv_row(&r->acsv, row, &x) != 1) return;
    if (rm_apps_starts_sample(&r->aagg, &x)) apps_close(r);
    rm_apps_add(&r->aagg, &x);
}

/* The rates of the sample at r->io_t into the series. */
static void io_flush(struct report *r)
{
    if (!r->io_have) return;
    if (!r->io_init) {
        int64_t gap = 3 * (r->io_t - r->io_prev_t);
        if (gap < r->gap_ns) gap = r->gap_ns;
        for (int k = 0; k < IS_COUNT; k++)
            if (rm_series_init(&r->io[k], r->t0, r->t1, RM_REPORT_BUCKETS, gap)) abort();
        r->io_init = true;
    }
    for (int k = 0; k < IS_COUNT; k++)
        if (r->io_have >> k & 1) rm_series_add(&r->io[k], r->io_t, r->io_acc[k]);
    memset(r->io_acc, 0, sizeof r->io_acc);
    r->io_have = 0;
}

/* io.csv: the growth of each device's counters since its previous row (rm_io_add: resets and
 * baselines as the summary takes them) over the time between, summed per sample. */
static void io_row(void *ctx, const struct rm_csv_row *row)
{
    struct report *r = ctx;
    struct rm_io_row x;
    if (rm_iocsv_row(&r->iocsv, row, &x) != 1) return;
    if (x.t_ns != r->io_t) {
        io_flush(r);
        r->io_prev_t = r->io_t;
        r->io_t = x.t_ns;
    }
    struct rm_io_interval iv;
    if (!rm_io_add(&r->ioagg, &x, &iv)) return;
    double dt = (double)(iv.t1 - iv.t0) / 1e9;
    static const int first[RM_IOG_COUNT] = {
        [RM_IOG_DISK] = IS_DISK_READ, [RM_IOG_NET] = IS_NET_RX,  [RM_IOG_CPU] = IS_PSI_CPU,
        [RM_IOG_IO] = IS_PSI_IO,      [RM_IOG_MEM] = IS_PSI_MEM, [RM_IOG_TREE] = IS_TREE_READ};
    bool psi = iv.group == RM_IOG_CPU || iv.group == RM_IOG_IO || iv.group == RM_IOG_MEM;
    for (int i = 0; i < (psi ? 1 : 2); i++) { /* pressure: the "some" share only */
        if (!(iv.valid >> i & 1)) continue;
        int k = first[iv.group] + i;
        r->io_acc[k] += psi ? iv.d[i] / 1e6 / dt * 100.0 : iv.d[i] / 1e6 / dt;
        r->io_have |= 1u << k;
    }
}

static int stream_family(struct report *r, int stream, char *err, size_t errsz)
{
    char **names;
    size_t n = rm_segment_family(r->dir, stream, &names);
    int rc = 0;
    enum rm_stream_subject subject = rm_stream_defs[stream].subject;
    for (size_t i = 0; i < n && !rc; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", r->dir, names[i]);
        uint64_t longl = 0;
        if (subject == RM_SUBJECT_GPUS) {
            rm_gpucsv_init(&r->gcsv, r->gpu_fields);
            r->plimit_col = -1;
            rm_report_thr_reset(r);
            rc = rm_csv_read_file(path, gpu_row, r, NULL, &longl, err, errsz);
        } else if (subject == RM_SUBJECT_IO) {
            rm_iocsv_init(&r->iocsv); /* a segment's rows go on from the one before */
            rc = rm_csv_read_file(path, io_row, r, NULL, &longl, err, errsz);
            if (i + 1 == n) io_flush(r);
        } else if (subject == RM_SUBJECT_PROCESSES) {
            if (!r->apps) r->apps = rm_xcalloc(RM_APPS_MAX_GPUS, sizeof *r->apps);
            rm_appscsv_init(&r->acsv);
            rc = rm_csv_read_file(path, apps_row, r, NULL, &longl, err, errsz);
            apps_close(r);
        } else {
            rm_hostcsv_init(&r->hcsv);
            r->host_kind = subject == RM_SUBJECT_TREE;
            rc = rm_csv_read_file(path, host_row, r, NULL, &longl, err, errsz);
        }
    }
    rm_segment_family_free(names, n);
    return rc;
}

static void peek_family(struct report *r, int stream)
{
    char **names;
    size_t n = rm_segment_family(r->dir, stream, &names);
    for (size_t i = 0; i < n; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", r->dir, names[i]);
        peek_range(r, path);
    }
    rm_segment_family_free(names, n);
}

static json_t *data_field(json_t *line, const char *key)
{
    json_t *d = json_object_get(line, "data");
    json_t *v = json_is_object(d) ? json_object_get(d, key) : NULL;
    return v ? v : json_object_get(line, key);
}

static void fmt_json_value(char *buf, size_t cap, json_t *v)
{
    if (json_is_string(v))
        snprintf(buf, cap, "%s", json_string_value(v));
    else if (json_is_integer(v))
        snprintf(buf, cap, "%lld", (long long)json_integer_value(v));
    else if (json_is_real(v))
        snprintf(buf, cap, "%g", json_real_value(v));
    else
        snprintf(buf, cap, "?");
}

static void open_span(struct report *r, const char *col, const char *why, int64_t t)
{
    for (size_t i = r->nspans; i-- > 0;)
        if (!strcmp(r->spans[i].collector, col) && r->spans[i].b == RM_NO_TIME) return;
    if (r->nspans == MAX_SPANS) return;
    r->spans = rm_xgrow(r->spans, &r->capspans, r->nspans + 1, sizeof *r->spans);
    struct span *s = &r->spans[r->nspans++];
    s->a = t;
    s->b = RM_NO_TIME;
    snprintf(s->collector, sizeof s->collector, "%s", col);
    snprintf(s->reason, sizeof s->reason, "%s", why ? why : "");
}

static void on_line(void *ctx, const char *line, size_t len, bool torn)
{
    struct report *r = ctx;
    rm_runlog_line(&r->rl, line, len, torn);
    if (torn || !memmem(line, len, "\"event\"", 7)) return;
    json_t *j = json_loadb(line, len, 0, NULL);
    json_t *type = json_object_get(j, "type"), *ev = json_object_get(j, "event");
    json_t *ts = json_object_get(j, "ts"), *tn = json_object_get(j, "t");
    int64_t t;
    if (!json_is_string(type) || strcmp(json_string_value(type), "event") || !json_is_string(ev))
        goto out;
    if (json_is_string(ts) &&
        rm_parse_ts_checked(json_string_value(ts), json_string_length(ts), &t) == 0) {
    } else if (json_is_number(tn) && json_number_value(tn) > 0 &&
               json_number_value(tn) < RM_MAX_EPOCH_S) {
        t = (int64_t)llround(json_number_value(tn) * 1e9);
    } else {
        goto out;
    }
    const char *e = json_string_value(ev);
    if (!strcmp(e, "warning") || !strcmp(e, "critical")) {
        r->alerts_total++;
        if (r->nalerts == MAX_ALERTS) goto out;
        r->alerts = rm_xgrow(r->alerts, &r->capalerts, r->nalerts + 1, sizeof *r->alerts);
        struct alert *a = &r->alerts[r->nalerts++];
        /* At the sample that crossed, not when the event was logged (up to 0.5 s later). */
        json_t *st = data_field(j, "sample_ts");
        int64_t sample_t;
        a->t = json_is_string(st) && rm_parse_ts_checked(json_string_value(st),
                                                         json_string_length(st), &sample_t) == 0
                   ? sample_t
                   : t;
        a->critical = e[0] == 'c';
        char g[64] = "?", p[32] = "?", th[32] = "?";
        json_t *v;
        if ((v = data_field(j, "gpu"))) fmt_json_value(g, sizeof g, v);
        if ((v = data_field(j, "pct"))) fmt_json_value(p, sizeof p, v);
        if ((v = data_field(j, "threshold_pct"))) fmt_json_value(th, sizeof th, v);
        snprintf(a->text, sizeof a->text, "%s: GPU %s VRAM %s%% (threshold %s%%)", e, g, p, th);
        snprintf(a->gpu, sizeof a->gpu, "%s", g);
    } else if (!strcmp(e, "collector_degraded") || !strcmp(e, "collector_unavailable")) {
        json_t *c = data_field(j, "collector"), *why = data_field(j, "reason");
        open_span(r, json_is_string(c) ? json_string_value(c) : "unknown",
                  json_is_string(why) ? json_string_value(why) : e, t);
    } else if (!strcmp(e, "collector_recovered")) {
        json_t *c = data_field(j, "collector");
        const char *col = json_is_string(c) ? json_string_value(c) : "unknown";
        for (size_t i = r->nspans; i-- > 0;)
            if (!strcmp(r->spans[i].collector, col) && r->spans[i].b == RM_NO_TIME) {
                r->spans[i].b = t;
                break;
            }
    } else if (!strcmp(e, "session_end")) {
        r->session_end_ns = t;
    } else if (!strcmp(e, "session_start")) {
        if (r->session_start_ns == RM_NO_TIME) r->session_start_ns = t;
    }
out:
    json_decref(j);
}

const json_t *rm_report_get(const json_t *o, const char *path)
{
    return rm_json_at(o, path);
}

/* ---- the steps of rm_report_collect ----------------------------------------------- */

static int load_session(struct report *r, char *err, size_t errsz)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/session.json", r->dir);
    if (access(path, F_OK) != 0) return 0;
    r->session = json_load_file(path, 0, NULL);
    if (!json_is_object(r->session)) {
        snprintf(err, errsz, "%s: not a JSON object", path);
        return 2;
    }
    return 0;
}

static double num_at(const json_t *o, const char *path)
{
    const json_t *v = rm_report_get(o, path);
    return json_is_number(v) ? json_number_value(v) : NAN;
}

static json_t *ref_at(const json_t *o, const char *path)
{
    json_t *v = (json_t *)rm_report_get(o, path);
    return v ? json_incref(v) : NULL;
}

void rm_report_add_phase(struct report *r, const json_t *p)
{
    r->phases = rm_xgrow(r->phases, &r->capphases, r->nphases + 1, sizeof *r->phases);
    struct report_phase *ph = &r->phases[r->nphases++];
    memset(ph, 0, sizeof *ph);
    json_int_t depth = json_integer_value(rm_report_get(p, "depth"));
    ph->depth = depth < 0 ? 0 : depth > 8 ? 8 : (int)depth;
    ph->path = ref_at(p, "path");
    ph->first_start = ref_at(p, "first_start");
    ph->held = ref_at(p, "held_back_by");
    ph->count = num_at(p, "count");
    ph->total_s = num_at(p, "total_seconds");
    ph->ok = num_at(p, "status.ok");
    ph->error = num_at(p, "status.error");
    ph->unterminated = num_at(p, "status.unterminated");
    ph->energy_wh = num_at(p, RM_FIG_KEY(ENERGY));
    ph->energy_lo = num_at(p, RM_FIG_KEY(ENERGY_LOW));
    ph->energy_hi = num_at(p, RM_FIG_KEY(ENERGY_HIGH));
    ph->short_phase = json_is_true(rm_report_get(p, "short_phase"));
    ph->has_fw = json_is_object(rm_report_get(p, RM_RUN_KEY(FRAMEWORK_PEAK)));
    ph->fw_name = ref_at(p, "framework_peak_mb.name");
    ph->fw_max = num_at(p, "framework_peak_mb.max");
    for (int c = 1, f; c <= RM_OBJ_REPORT_MAX && (f = rm_obj_report_at(c)) >= 0; c++) {
        const json_t *v = rm_obj_at(p, f);
        ph->obj[c - 1] = json_is_number(v) ? json_number_value(v) : NAN;
    }
    double un = 0, ud = 0;
    ph->vram_peak = ph->workload_peak = -1;
    ph->has_memory = ph->has_fw;
    size_t k;
    json_t *g;
    json_array_foreach(rm_report_get(p, "gpus"), k, g)
    {
        const json_t *m = rm_report_get(g, "util_pct.mean"), *n = rm_report_get(g, "samples");
        if (json_is_number(m) && json_is_number(n))
            un += json_number_value(m) * json_number_value(n), ud += json_number_value(n);
        const json_t *v = rm_report_get(g, RM_FIG_KEY(VRAM_PEAK)),
                     *e = rm_report_get(g, RM_FIG_KEY(ENERGY));
        if (json_is_number(v) && json_number_value(v) > ph->vram_peak)
            ph->vram_peak = json_number_value(v);
        if (json_is_number(e)) ph->gpu_energy += json_number_value(e), ph->has_gpu_energy = true;
        const json_t *w = rm_report_get(g, "workload_vram_mb.peak");
        if (json_is_number(w) && json_number_value(w) > ph->workload_peak)
            ph->workload_peak = json_number_value(w);
        ph->has_memory |= json_is_object(rm_report_get(g, RM_GPU_WORKLOAD_VRAM));
    }
    ph->has_util = ud > 0;
    ph->util_mean = ud > 0 ? un / ud : 0;
}

static void free_phases(struct report *r)
{
    for (size_t i = 0; i < r->nphases; i++) {
        json_decref(r->phases[i].path);
        json_decref(r->phases[i].first_start);
        json_decref(r->phases[i].fw_name);
        json_decref(r->phases[i].held);
    }
    free(r->phases);
    r->phases = NULL;
    r->nphases = r->capphases = 0;
}

/* Each phase row as the summary makes it, or as summary.json is read: reduced, let go. */
static void take_phase_row(void *ctx, json_t *row)
{
    rm_report_add_phase(ctx, row);
    json_decref(row);
}

static void take_made_row(void *ctx, const json_t *doc, json_t *row)
{
    (void)doc;
    take_phase_row(ctx, row);
}

/* The summary given, else summary.json, else one computed from the folder; its phase rows
 * reduced into r->phases (summary.json's and a computed summary's are never held whole). */
static int load_summary(struct report *r, const json_t *summary, char *err, size_t errsz)
{
    if (!summary) {
        char path[4096];
        snprintf(path, sizeof path, "%s/summary.json", r->dir);
        static const char *const all[] = {"*"};
        json_t *own = access(path, F_OK) == 0
                          ? rm_json_pick_file_rows(path, all, 1, "phases", take_phase_row, r)
                          : NULL;
        if (own &&
            (!json_is_object(own) || strcmp(json_is_string(json_object_get(own, "format"))
                                                ? json_string_value(json_object_get(own, "format"))
                                                : "",
                                            "runmon-summary"))) {
            json_decref(own);
            own = NULL;
        }
        if (!own) {
            free_phases(r); /* of a file that was not a summary after all */
            struct rm_summary_opts opts = {
                .progress = false, .phase_row = take_made_row, .phase_row_ctx = r};
            int rc = rm_summary_session_dir(r->dir, &opts, &own, err, errsz);
            if (rc) return rc;
        }
        r->own_summary = own;
        summary = own;
    } else {
        size_t i;
        const json_t *p;
        json_array_foreach(json_object_get(summary, "phases"), i, p) rm_report_add_phase(r, p);
    }
    r->summary = summary;
    return 0;
}

/* The gap spacing of the series and the field list of headerless gpu CSVs. */
static void read_settings(struct report *r)
{
    double interval = json_number_value(json_object_get(r->session, "interval_s"));
    if (!(interval > 0))
        interval = json_number_value(rm_report_get(r->summary, "session.interval_s"));
    r->gap_ns = interval > 0 ? (int64_t)llround(interval * 1e9) * RM_REPORT_GAP_FACTOR : 0;
    long pmon_s = interval > 0 ? lround(interval) : 0; /* as the recorder starts pmon */
    pmon_s = pmon_s < 1 ? 1 : pmon_s > 10 ? 10 : pmon_s;
    r->apps_gap_ns = interval > 0 ? pmon_s * RM_NS_PER_SEC * RM_REPORT_GAP_FACTOR : 0;
    double w = json_number_value(rm_report_get(r->session, "thresholds.warning_pct"));
    double c = json_number_value(rm_report_get(r->session, "thresholds.critical_pct"));
    r->warn_pct = w > 0 && w <= 100 ? w : 0;
    r->crit_pct = c > 0 && c <= 100 ? c : 0;
    json_t *gf = json_object_get(r->session, "gpu_fields");
    if (json_is_array(gf) && json_array_size(gf)) {
        size_t cap = 1, i;
        json_t *f;
        json_array_foreach(gf, i, f) cap += json_string_length(f) + 1;
        r->gpu_fields = rm_xcalloc(cap, 1);
        json_array_foreach(gf, i, f)
        {
            if (i) strcat(r->gpu_fields, ",");
            if (json_is_string(f)) strcat(r->gpu_fields, json_string_value(f));
        }
    }
}

static int read_runlog(struct report *r, char *err, size_t errsz)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/runlog.jsonl", r->dir);
    if (access(path, F_OK) != 0) return 0;
    uint64_t longl = 0;
    if (rm_read_lines(path, RM_RUNLOG_MAX_LINE, on_line, r, NULL, &longl, err, errsz)) return 1;
    return 0;
}

/* The time range every chart shares: the session's, the run log's and the drawn files'
 * first and last rows. Closes the phase windows at the session's end. */
static int find_time_range(struct report *r, char *err, size_t errsz)
{
    int64_t started = rm_json_time(r->session, "started_at");
    int64_t ended = rm_json_time(r->session, "ended_at");
    if (started == RM_NO_TIME) started = r->session_start_ns;
    if (ended == RM_NO_TIME) ended = r->session_end_ns;
    widen(r, started);
    widen(r, ended);
    widen(r, r->rl.first_ns);
    widen(r, r->rl.last_ns);
    for (int k = 0; k < RM_STREAM_COUNT; k++)
        if (rm_stream_defs[k].drawn) peek_family(r, k);
    if (r->t0 == RM_NO_TIME) {
        snprintf(err, errsz, "%s: no timed data to draw", r->dir);
        return 2;
    }
    if (r->t1 == r->t0) r->t1 = r->t0 + RM_NS_PER_SEC;
    rm_runlog_finish(&r->rl, ended, NULL, NULL);
    return 0;
}

/* Streams every drawn file into the series. */
static int read_streams(struct report *r, char *err, size_t errsz)
{
    r->gpus = rm_xcalloc(MAX_GPUS, sizeof *r->gpus);
    for (int m = 0; m < HS_COUNT; m++)
        if (rm_series_init(&r->host[m], r->t0, r->t1, RM_REPORT_BUCKETS, r->gap_ns)) abort();
    for (int k = 0; k < RM_STREAM_COUNT; k++)
        if (rm_stream_defs[k].drawn && stream_family(r, k, err, errsz)) return 1;
    rm_report_thr_finish(r);
    return 0;
}

int rm_report_collect(struct report *r, const char *dir, const json_t *summary, char *err,
                      size_t errsz)
{
    memset(r, 0, sizeof *r);
    r->dir = dir;
    r->t0 = r->t1 = RM_NO_TIME;
    r->session_end_ns = r->session_start_ns = RM_NO_TIME;
    rm_runlog_init(&r->rl);
    rm_apps_init(&r->aagg, 0);
    rm_io_init(&r->ioagg, 0);
    r->io_t = r->io_prev_t = RM_NO_TIME;
    int rc = load_session(r, err, errsz);
    if (!rc) rc = load_summary(r, summary, err, errsz);
    if (rc) return rc;
    read_settings(r);
    rc = read_runlog(r, err, errsz);
    if (!rc) rc = find_time_range(r, err, errsz);
    if (!rc) rc = read_streams(r, err, errsz);
    return rc;
}

void rm_report_free(struct report *r)
{
    for (size_t i = 0; r->gpus && i < r->ngpus; i++) {
        for (int m = 0; m < GS_COUNT; m++)
            rm_series_free(&r->gpus[i].s[m]);
        rm_report_thr_free(&r->gpus[i]);
    }
    free(r->gpus);
    for (size_t g = 0; r->apps && g < RM_APPS_MAX_GPUS; g++)
        if (r->apps[g].seen) {
            rm_series_free(&r->apps[g].w);
            rm_series_free(&r->apps[g].o);
        }
    free(r->apps);
    rm_apps_free(&r->aagg);
    for (int m = 0; m < HS_COUNT; m++)
        rm_series_free(&r->host[m]);
    for (int m = 0; r->io_init && m < IS_COUNT; m++)
        rm_series_free(&r->io[m]);
    rm_io_free(&r->ioagg);
    rm_runlog_free(&r->rl);
    free(r->alerts);
    free(r->spans);
    free(r->gpu_fields);
    json_decref(r->session);
    json_decref(r->own_summary);
    free_phases(r);
}
