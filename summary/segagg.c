/* Segments: a file's aggregate serialized as JSON ("runmon-segment-stats"), as the recorder
 * stores it per sealed segment in a sink manifest, and read back into the summary. */
#include "summary/segagg.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/alloc.h"
#include "base/json.h"
#include "summary/scan.h"
#include "summary/summary.h"

/* ---- segments (serialized per-file aggregates) ------------------------------------ */

static bool stats_have_data(const struct rm_gpu_stats *st)
{
    return st->samples || st->covered_ns || st->gaps;
}

/* The file's per-phase partials, by phase path (the index of a phase differs between run
 * logs read at different times): [{"path", "gpus": [{"key", "stats"}], "host"}], NULL when
 * the file met no phase. */
static json_t *phases_to_json(struct file_agg *f)
{
    if (!f->ph || !f->rl) return NULL;
    json_t *a = json_array();
    for (size_t p = 0; p < f->nph && p < f->rl->nphases; p++) {
        const struct phase_acc *acc = f->ph[p];
        if (!acc || !acc->used) continue;
        acc = rm_file_phase(f, p);
        json_t *g = json_array();
        for (size_t i = 0; i < acc->ngpu && i < f->gpus.n; i++)
            if (stats_have_data(&acc->gpu[i]))
                json_array_append_new(g, json_pack("{s:s%,s:o}", "key", f->gpus.s[i].key,
                                                   f->gpus.s[i].keylen, "stats",
                                                   rm_stats_to_json(&acc->gpu[i])));
        json_t *e = json_pack("{s:s,s:o}", "path", f->rl->phases[p].path, "gpus", g);
        if (p == f->rl->other) json_object_set_new(e, "folded", json_true());
        if (acc->host && (acc->host->cpu_samples || acc->host->proc_samples))
            json_object_set_new(e, "host", rm_host_stats_to_json(acc->host));
        json_array_append_new(a, e);
        rm_file_park_phase(f, p);
    }
    if (json_array_size(a) == 0) {
        json_decref(a);
        return NULL;
    }
    return a;
}

/* A segment's per-phase partials (kept in f->seg_phases) placed in f's phase table, by the
 * path of each phase in rl; phases rl does not have (left out by --phase) are dropped. A
 * partial of the paths folded past the cap goes to rl's other phase (build.c makes it). */
void rm_segment_resolve_phases(struct file_agg *f, const struct rm_phase_index *rl)
{
    if (!f->seg_phases || !rl || rl->nphases == 0) return;
    f->rl = rl;
    size_t i;
    json_t *e;
    json_array_foreach(f->seg_phases, i, e)
    {
        const char *path = json_string_value(json_object_get(e, "path"));
        size_t p = json_is_true(json_object_get(e, "folded")) ? rl->other
                   : path                                     ? rm_runlog_phase_of(rl, path)
                                                              : RM_NO_PHASE;
        if (p == RM_NO_PHASE) continue;
        struct phase_acc *acc = rm_file_phase(f, p);
        if (!acc->gpu && f->gpus.n) {
            acc->gpu = rm_xcalloc(f->gpus.n, sizeof *acc->gpu);
            acc->ngpu = f->gpus.n;
            for (size_t k = 0; k < acc->ngpu; k++)
                rm_stats_init(&acc->gpu[k]);
        }
        acc->used = true;
        size_t j;
        json_t *g;
        json_array_foreach(json_object_get(e, "gpus"), j, g)
        {
            const char *key = json_string_value(json_object_get(g, "key"));
            size_t slot = key ? rm_gpu_table_find(&f->gpus, key, strlen(key)) : (size_t)-1;
            struct rm_gpu_stats st;
            char err[256];
            if (slot == (size_t)-1 ||
                rm_stats_from_json(json_object_get(g, "stats"), &st, err, sizeof err))
                continue;
            rm_stats_fold(&acc->gpu[slot], &st);
        }
        struct rm_host_stats h;
        json_t *hj = json_object_get(e, "host");
        if (hj && rm_host_stats_from_json(hj, &h) == 0) {
            if (!acc->host) acc->host = rm_xcalloc(1, sizeof *acc->host);
            rm_host_stats_merge(acc->host, &h);
        }
        rm_file_park_phase(f, p);
    }
}

static json_t *file_agg_to_json(struct file_agg *f)
{
    json_t *o = json_object(), *g = json_array(), *sk = json_object();
    json_object_set_new(o, "format", json_string("runmon-segment-stats"));
    json_object_set_new(o, "kind", json_string(rm_input_defs[f->kind].name));
    json_object_set_new(o, "interval_ns", json_integer(f->interval_ns));
    json_object_set_new(o, "gap_ns", json_integer(f->gap_ns));
    json_object_set_new(o, "rows", json_integer((json_int_t)f->rows));
    for (int i = 0; i < RM_SKIP_COUNT; i++)
        json_object_set_new(sk, rm_skip_names[i], json_integer((json_int_t)f->skipped[i]));
    json_object_set_new(o, "skipped", sk);
    json_object_set_new(o, "gaps", json_integer((json_int_t)f->gaps));
    json_object_set_new(o, "gap_total_ns", json_integer(f->gap_total_ns));
    json_object_set_new(o, "first_ns",
                        f->first_ns == RM_NO_TIME ? json_null() : json_integer(f->first_ns));
    json_object_set_new(o, "last_ns",
                        f->last_ns == RM_NO_TIME ? json_null() : json_integer(f->last_ns));
    for (size_t i = 0; i < f->gpus.n; i++) {
        const struct gpu_slot *sl = &f->gpus.s[i];
        json_array_append_new(
            g, json_pack("{s:s%,s:o,s:o,s:o,s:o,s:o}", "key", sl->key, sl->keylen, "index",
                         sl->index >= 0 ? json_integer(sl->index) : json_null(), "uuid",
                         rm_str_or_null(sl->uuid), "name", rm_str_or_null(sl->name), "pci_bus_id",
                         rm_str_or_null(sl->pci), "stats", rm_stats_to_json(&sl->st)));
    }
    json_object_set_new(o, "gpus", g);
    json_object_set_new(o, "total_power", rm_stat_to_json(&f->total_power));
    json_object_set_new(o, "host", rm_host_stats_to_json(&f->host));
    json_t *ph = phases_to_json(f);
    if (ph) json_object_set_new(o, "phases", ph);
    return o;
}

static void copy_str(char *dst, size_t cap, json_t *v)
{
    const char *s = json_is_string(v) ? json_string_value(v) : "";
    snprintf(dst, cap, "%s", s);
}

int rm_file_agg_from_json(struct file_agg *f, const json_t *j, char *err, size_t errsz)
{
    rm_file_agg_init(f, (enum rm_input_kind)0, NULL); /* so the caller can always free it */
    const char *kind = json_string_value(json_object_get(j, "kind"));
    int k = kind ? rm_input_by_name(kind) : -1;
    json_t *g = json_object_get(j, "gpus");
    if (k < 0 || !json_is_array(g)) {
        snprintf(err, errsz, "segment: unknown kind or no gpus array");
        return -1;
    }
    f->kind = (enum rm_input_kind)k;
    json_t *v;
    if (json_is_integer(v = json_object_get(j, "interval_ns")))
        f->interval_ns = json_integer_value(v);
    if (json_is_integer(v = json_object_get(j, "gap_ns"))) f->gap_ns = json_integer_value(v);
    if (json_is_integer(v = json_object_get(j, "rows"))) f->rows = (uint64_t)json_integer_value(v);
    if (json_is_integer(v = json_object_get(j, "gaps"))) f->gaps = (uint64_t)json_integer_value(v);
    if (json_is_integer(v = json_object_get(j, "gap_total_ns")))
        f->gap_total_ns = json_integer_value(v);
    if (json_is_integer(v = json_object_get(j, "first_ns"))) f->first_ns = json_integer_value(v);
    if (json_is_integer(v = json_object_get(j, "last_ns"))) f->last_ns = json_integer_value(v);
    for (int i = 0; i < RM_SKIP_COUNT; i++)
        if (json_is_integer(v = json_object_get(json_object_get(j, "skipped"), rm_skip_names[i])))
            f->skipped[i] = (uint64_t)json_integer_value(v);
    size_t i;
    json_t *e;
    json_array_foreach(g, i, e)
    {
        const char *key = json_string_value(json_object_get(e, "key"));
        if (!key || strlen(key) >= RM_GPU_KEY_MAX) {
            snprintf(err, errsz, "segment: gpu without a key");
            return -1;
        }
        size_t si = rm_gpu_table_add(&f->gpus, key, strlen(key));
        struct gpu_slot *sl = &f->gpus.s[si];
        json_t *ix = json_object_get(e, "index");
        sl->index = json_is_integer(ix) ? (int)json_integer_value(ix) : -1;
        copy_str(sl->uuid, sizeof sl->uuid, json_object_get(e, "uuid"));
        copy_str(sl->name, sizeof sl->name, json_object_get(e, "name"));
        copy_str(sl->pci, sizeof sl->pci, json_object_get(e, "pci_bus_id"));
        if (rm_stats_from_json(json_object_get(e, "stats"), &sl->st, err, errsz)) return -1;
    }
    if (rm_stat_from_json(json_object_get(j, "total_power"), &f->total_power) ||
        rm_host_stats_from_json(json_object_get(j, "host"), &f->host)) {
        snprintf(err, errsz, "segment: bad total_power or host");
        return -1;
    }
    /* Phase partials: placed once the run log's phases are known (rm_summary_run_jobs). */
    json_t *ph = json_object_get(j, "phases");
    if (json_is_array(ph)) f->seg_phases = json_incref(ph);
    return 0;
}

struct rm_segment_phases {
    struct rm_phase_index rl;
};

/* The session folder's run log, its phases closed as the summary closes them: at
 * session.json's ended_at, else the run log's own end, else open-ended (a phase still running
 * covers the rest of a segment). NULL when there is no run log or it holds no phase. */
struct rm_segment_phases *rm_summary_segment_phases(const char *dir)
{
    char p[4200];
    snprintf(p, sizeof p, "%s/runlog.jsonl", dir);
    if (access(p, R_OK) != 0) return NULL;
    struct rm_segment_phases *ph = rm_xcalloc(1, sizeof *ph);
    struct rm_phase_index *rl = &ph->rl;
    rm_runlog_init(rl);
    char err[512];
    if (rm_runlog_read_file(rl, p, err, sizeof err) || rl->nphases == 0) {
        rm_summary_segment_phases_free(ph);
        return NULL;
    }
    snprintf(p, sizeof p, "%s/session.json", dir);
    json_t *ses = json_load_file(p, 0, NULL);
    int64_t end = rm_json_time(ses, "ended_at");
    /* The paths past the summary's budget of phase rows x GPUs (build.c) are one partial. */
    rm_runlog_fold_after(rl, rm_runlog_rows_for(rl, json_array_size(json_object_get(ses, "gpus"))));
    json_decref(ses);
    if (end == RM_NO_TIME) end = rl->session_end_ns;
    rm_runlog_finish(rl, end, NULL, NULL);
    return ph;
}

void rm_summary_segment_phases_free(struct rm_segment_phases *ph)
{
    if (!ph) return;
    rm_runlog_free(&ph->rl);
    free(ph);
}

json_t *rm_summary_segment_from_file(enum rm_input_kind kind, const char *path, double interval_s,
                                     char *err, size_t errsz)
{
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash)
        *slash = '\0';
    else
        snprintf(dir, sizeof dir, ".");
    struct rm_segment_phases *ph = rm_summary_segment_phases(dir);
    json_t *j = rm_summary_segment_from_file_with(kind, path, interval_s, ph, err, errsz);
    rm_summary_segment_phases_free(ph);
    return j;
}

json_t *rm_summary_segment_from_file_with(enum rm_input_kind kind, const char *path,
                                          double interval_s, const struct rm_segment_phases *ph,
                                          char *err, size_t errsz)
{
    struct file_agg *f = malloc(sizeof *f);
    if (!f) return NULL;
    rm_file_agg_init(f, kind, path);
    /* The phases of the session's run log as it stands now, so that the aggregate keeps each
     * phase's part of this segment (a summary after retention removed the file still has
     * every phase's figures). */
    if (ph) f->rl = &ph->rl;
    rm_scan_file(f, (int64_t)llround(interval_s * 1e9), NULL);
    json_t *j = NULL;
    if (f->rc && f->rows == 0 && f->err[0])
        snprintf(err, errsz, "%s", f->err);
    else
        j = file_agg_to_json(f);
    rm_file_agg_free(f);
    return j;
}
