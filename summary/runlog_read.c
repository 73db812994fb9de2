#include "summary/runlog_read.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "base/decimal.h"
#include "base/rm_time.h"
#include "base/strhash.h"
#include "summary/csvread.h"
#include "summary/sample.h"
#include "summary/stats.h"

void rm_runlog_init(struct rm_phase_index *r)
{
    memset(r, 0, sizeof *r);
    r->first_ns = r->last_ns = r->session_start_ns = r->session_end_ns = RM_NO_TIME;
    r->max_cells = r->max_phases = rm_runlog_max_phases_env(NULL);
    r->other = RM_NO_PHASE;
    r->collectors = json_object();
    r->alerts = json_array();
    r->params = json_object();
    rm_metrics_init(&r->metrics);
}

void rm_runlog_free(struct rm_phase_index *r)
{
    for (size_t i = 0; i < r->nphases; i++) {
        free(r->phases[i].path);
        free(r->phases[i].fw);
    }
    free(r->phases);
    free(r->fw);
    free(r->hash);
    free(r->extra.key);
    free(r->extra.folded);
    free(r->win);
    free(r->maxend);
    free(r->open);
    free(r->scratch);
    json_decref(r->collectors);
    json_decref(r->alerts);
    json_decref(r->params);
    free(r->sweep);
    rm_metrics_free(&r->metrics);
    for (size_t i = 0; i < r->nfiles; i++)
        free(r->files[i]);
    free(r->files);
    free(r->file_bytes);
    memset(r, 0, sizeof *r);
}

/* The path index rebuilt with room for twice the phases (at least double its old size). */
static void rehash(struct rm_phase_index *r)
{
    size_t cap = r->hashcap ? r->hashcap * 2 : 64;
    while (cap < r->nphases * 2)
        cap *= 2;
    size_t *h = rm_xcalloc(cap, sizeof *h);
    for (size_t i = 0; i < r->nphases; i++) {
        if (i == r->other) continue; /* found through r->other, never by its spelling */
        size_t j = rm_str_hash(r->phases[i].path) & (cap - 1);
        while (h[j])
            j = (j + 1) & (cap - 1);
        h[j] = i + 1;
    }
    free(r->hash);
    r->hash = h;
    r->hashcap = cap;
}

size_t rm_runlog_max_phases_env(bool *bad)
{
    const char *e = getenv("RUNMON_SUMMARY_MAX_PHASES");
    if (bad) *bad = false;
    if (!e || !*e) return RM_MAX_PHASES_DEFAULT;
    char *end;
    unsigned long long v = strtoull(e, &end, 10);
    if (*end || v == 0 || v > (1ull << 40) || e[0] == '-' || e[0] == '+') {
        if (bad) *bad = true;
        return RM_MAX_PHASES_DEFAULT;
    }
    return (size_t)v;
}

void rm_runlog_set_keep(struct rm_phase_index *r, bool (*keep)(void *, const char *),
                        void *keep_ctx)
{
    r->keep = keep;
    r->keep_ctx = keep_ctx;
}

/* ---- paths without a phase of their own: a set of 64-bit hashes -------------------- */

static uint64_t path_key(uint64_t h)
{
    return h ? h : 1; /* 0 marks an empty slot */
}

/* 1 folded, 0 left out, -1 not in the set. */
static int pathset_get(const struct rm_pathset *s, uint64_t key)
{
    if (!s->cap) return -1;
    for (size_t j = key & (s->cap - 1); s->key[j]; j = (j + 1) & (s->cap - 1))
        if (s->key[j] == key) return s->folded[j];
    return -1;
}

static void pathset_put(struct rm_pathset *s, uint64_t key, bool folded)
{
    if ((s->n + 1) * 2 > s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 64;
        uint64_t *k = rm_xcalloc(cap, sizeof *k);
        unsigned char *f = rm_xcalloc(cap, sizeof *f);
        for (size_t i = 0; i < s->cap; i++) {
            if (!s->key[i]) continue;
            size_t j = s->key[i] & (cap - 1);
            while (k[j])
                j = (j + 1) & (cap - 1);
            k[j] = s->key[i];
            f[j] = s->folded[i];
        }
        free(s->key);
        free(s->folded);
        s->key = k;
        s->folded = f;
        s->cap = cap;
    }
    size_t j = key & (s->cap - 1);
    while (s->key[j])
        j = (j + 1) & (s->cap - 1);
    s->key[j] = key;
    s->folded[j] = folded;
    s->n++;
}

/* ---- phases ------------------------------------------------------------------------ */

static size_t find_phase(const struct rm_phase_index *r, const char *path, uint64_t h)
{
    if (!r->hashcap) return RM_NO_PHASE;
    for (size_t j = h & (r->hashcap - 1); r->hash[j]; j = (j + 1) & (r->hashcap - 1))
        if (!strcmp(r->phases[r->hash[j] - 1].path, path)) return r->hash[j] - 1;
    return RM_NO_PHASE;
}

static size_t new_phase(struct rm_phase_index *r, const char *path, int depth)
{
    r->phases = rm_xgrow(r->phases, &r->capphases, r->nphases + 1, sizeof *r->phases);
    struct rm_phase *p = &r->phases[r->nphases];
    memset(p, 0, sizeof *p);
    p->path = rm_xstrdup(path);
    p->depth = depth;
    p->first_start_ns = p->last_end_ns = RM_NO_TIME;
    return r->nphases++;
}

size_t rm_runlog_other_phase(struct rm_phase_index *r)
{
    if (r->other == RM_NO_PHASE) r->other = new_phase(r, RM_OTHER_PHASES_PATH, -1);
    return r->other; /* not in the hash: a path spelled like it is a phase of its own */
}

static void fold_max(double *into, const double *from)
{
    for (int d = 0; d < RM_FW_MAX_DEVICES; d++)
        if (!isnan(from[d]) && (isnan(into[d]) || from[d] > into[d])) into[d] = from[d];
}

static struct rm_framework_peaks *fw_new(void)
{
    struct rm_framework_peaks *f = rm_xrealloc(NULL, sizeof *f);
    f->name[0] = '\0';
    for (int d = 0; d < RM_FW_MAX_DEVICES; d++)
        f->allocated_mb[d] = f->reserved_mb[d] = NAN;
    return f;
}

void rm_phase_fold(struct rm_phase *into, const struct rm_phase *from)
{
    into->count += from->count;
    into->ok += from->ok;
    into->error += from->error;
    into->unterminated += from->unterminated;
    into->total_s += from->total_s;
    if (from->first_start_ns != RM_NO_TIME &&
        (into->first_start_ns == RM_NO_TIME || from->first_start_ns < into->first_start_ns))
        into->first_start_ns = from->first_start_ns;
    if (from->last_end_ns != RM_NO_TIME &&
        (into->last_end_ns == RM_NO_TIME || from->last_end_ns > into->last_end_ns))
        into->last_end_ns = from->last_end_ns;
    if (!from->fw) return;
    if (!into->fw) into->fw = fw_new();
    if (from->fw->name[0]) memcpy(into->fw->name, from->fw->name, sizeof into->fw->name);
    fold_max(into->fw->allocated_mb, from->fw->allocated_mb);
    fold_max(into->fw->reserved_mb, from->fw->reserved_mb);
}

size_t rm_runlog_rows_for(const struct rm_phase_index *r, size_t gpus)
{
    size_t rows = r->max_cells / (gpus ? gpus : 1);
    return rows ? rows : 1;
}

void rm_runlog_fold_after(struct rm_phase_index *r, size_t rows)
{
    if (rows == 0) rows = 1;
    if (rows < r->max_phases) r->max_phases = rows;
    size_t own = r->nphases - (r->other != RM_NO_PHASE);
    if (own <= rows) return;
    struct rm_phase other = r->phases[rm_runlog_other_phase(r)];
    size_t *map = rm_xcalloc(r->nphases, sizeof *map);
    size_t k = 0;
    for (size_t p = 0; p < r->nphases; p++) { /* own phases keep their order, other goes last */
        if (p == r->other) {
            map[p] = rows;
        } else if (k < rows) {
            map[p] = k;
            r->phases[k++] = r->phases[p];
        } else {
            map[p] = rows;
            struct rm_phase *f = &r->phases[p];
            rm_phase_fold(&other, f);
            pathset_put(&r->extra, path_key(rm_str_hash(f->path)), true);
            r->folded_paths++;
            free(f->path);
            free(f->fw);
        }
    }
    r->phases[rows] = other;
    r->nphases = rows + 1;
    r->other = rows;
    for (size_t i = 0; i < r->nwin; i++)
        r->win[i].phase = map[r->win[i].phase];
    for (size_t i = 0; i < r->nopen; i++)
        if (r->open[i].phase != RM_NO_PHASE) r->open[i].phase = map[r->open[i].phase];
    free(map);
    free(r->hash);
    r->hash = NULL;
    r->hashcap = 0;
    rehash(r);
}

size_t rm_runlog_phase_of(const struct rm_phase_index *r, const char *path)
{
    uint64_t h = rm_str_hash(path);
    size_t p = find_phase(r, path, h);
    if (p != RM_NO_PHASE) return p;
    return pathset_get(&r->extra, path_key(h)) == 1 ? r->other : RM_NO_PHASE;
}

/* The phase of path, made when new; RM_NO_PHASE when the keep filter leaves it out. */
static size_t phase_id(struct rm_phase_index *r, const char *path, int depth)
{
    uint64_t h = rm_str_hash(path);
    size_t p = find_phase(r, path, h);
    if (p != RM_NO_PHASE) return p;
    int known = pathset_get(&r->extra, path_key(h));
    if (known >= 0) return known ? r->other : RM_NO_PHASE;
    if (r->keep && !r->keep(r->keep_ctx, path)) {
        pathset_put(&r->extra, path_key(h), false);
        return RM_NO_PHASE;
    }
    size_t own = r->nphases - (r->other != RM_NO_PHASE);
    if (own >= r->max_phases) {
        pathset_put(&r->extra, path_key(h), true);
        r->folded_paths++;
        return rm_runlog_other_phase(r);
    }
    p = new_phase(r, path, depth);
    if (r->nphases * 2 > r->hashcap)
        rehash(r);
    else {
        size_t j = h & (r->hashcap - 1);
        while (r->hash[j])
            j = (j + 1) & (r->hashcap - 1);
        r->hash[j] = p + 1;
    }
    return p;
}

static void add_window(struct rm_phase_index *r, size_t ph, int64_t start, int64_t end)
{
    r->win = rm_xgrow(r->win, &r->capwin, r->nwin + 1, sizeof *r->win);
    r->win[r->nwin++] = (struct rm_phase_window){start, end, ph};
    struct rm_phase *p = &r->phases[ph];
    if (p->first_start_ns == RM_NO_TIME || start < p->first_start_ns) p->first_start_ns = start;
    if (end != RM_OPEN_END && (p->last_end_ns == RM_NO_TIME || end > p->last_end_ns))
        p->last_end_ns = end;
}

/* A field of the event's data object, else of the line itself. */
static json_t *field(json_t *line, const char *key)
{
    json_t *d = json_object_get(line, "data");
    json_t *v = json_is_object(d) ? json_object_get(d, key) : NULL;
    return v ? v : json_object_get(line, key);
}

static const char *str(json_t *line, const char *key)
{
    json_t *v = field(line, key);
    return json_is_string(v) ? json_string_value(v) : NULL;
}

static int64_t seconds_ns(json_t *v)
{
    if (!json_is_number(v)) return -1;
    double s = json_number_value(v);
    if (!(s >= 0 && s < 1e9)) return -1;
    return (int64_t)llround(s * 1e9);
}

static json_t *collector(struct rm_phase_index *r, const char *name)
{
    json_t *c = json_object_get(r->collectors, name);
    if (!c) {
        c = json_pack("{s:i,s:i,s:i,s:n}", "degraded", 0, "recovered", 0, "unavailable", 0,
                      "last_error");
        json_object_set_new(r->collectors, name, c);
    }
    return c;
}

static void bump(json_t *o, const char *k)
{
    json_object_set_new(o, k, json_integer(json_integer_value(json_object_get(o, k)) + 1));
}

static void on_event(struct rm_phase_index *r, json_t *line, const char *ev, int64_t t)
{
    r->events++;
    if (!strcmp(ev, "session_start")) {
        if (r->session_start_ns == RM_NO_TIME) r->session_start_ns = t;
    } else if (!strcmp(ev, "session_end")) {
        r->session_end_ns = t;
    } else if (!strcmp(ev, "collector_degraded") || !strcmp(ev, "collector_recovered") ||
               !strcmp(ev, "collector_unavailable")) {
        const char *name = str(line, "collector");
        json_t *c = collector(r, name ? name : "unknown");
        bump(c, ev + strlen("collector_"));
        const char *why = str(line, "reason");
        if (!why) why = str(line, "last_error");
        if (why && strcmp(ev, "collector_recovered"))
            json_object_set_new(c, "last_error", json_string(why));
    } else if (!strcmp(ev, "warning") || !strcmp(ev, "critical")) {
        if (ev[0] == 'w')
            r->warnings++;
        else
            r->criticals++;
        if (json_array_size(r->alerts) < RM_RUNLOG_MAX_ALERTS) {
            json_t *a = json_object();
            char ts[RM_TS_BUFSZ];
            rm_format_ts(t, ts);
            json_object_set_new(a, "ts", json_string(ts));
            json_object_set_new(a, "level", json_string(ev));
            static const char *const keys[] = {
                "gpu", "uuid", "memory_used_mb", "memory_total_mb", "pct", "threshold_pct"};
            for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
                json_t *v = field(line, keys[i]);
                json_object_set(a, keys[i], v ? v : json_null());
            }
            /* The sample's own time: absent from events older recorders logged. */
            json_t *sample_ts = field(line, "sample_ts");
            if (json_is_string(sample_ts)) json_object_set(a, "sample_ts", sample_ts);
            json_array_append_new(r->alerts, a);
        }
    } else if (!strcmp(ev, "nonconforming_output")) {
        json_t *n = field(line, "count");
        r->nonconforming +=
            json_is_integer(n) && json_integer_value(n) > 0 ? (uint64_t)json_integer_value(n) : 1;
    }
    static const char *const peaks[] = {"jax_peak_bytes", "peak_bytes", "peak_bytes_in_use"};
    json_t *d = json_object_get(line, "data");
    for (size_t i = 0; json_is_object(d) && i < sizeof peaks / sizeof peaks[0]; i++) {
        json_t *v = json_object_get(d, peaks[i]);
        if (json_is_number(v) && isfinite(json_number_value(v))) {
            double b = json_number_value(v);
            if (!r->has_jax || b > r->jax_peak_bytes) r->jax_peak_bytes = b;
            r->has_jax = true;
        }
    }
}

/* Folds a {"0": MiB, ...} object into per-device maxima. */
static void fold_peaks(double *into, const json_t *by_device)
{
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)by_device, k, v)
    {
        char *end;
        long d = strtol(k, &end, 10);
        if (end == k || *end || d < 0 || d >= RM_FW_MAX_DEVICES || !json_is_number(v)) continue;
        double mb = json_number_value(v);
        if (isfinite(mb) && mb >= 0 && (isnan(into[d]) || mb > into[d])) into[d] = mb;
    }
}

static void fold_framework(struct rm_framework_peaks **into, const json_t *fw)
{
    if (!*into) *into = fw_new();
    const char *name = json_string_value(json_object_get(fw, "name"));
    if (name) snprintf((*into)->name, sizeof(*into)->name, "%s", name);
    fold_peaks((*into)->allocated_mb, json_object_get(fw, "peak_allocated_mb"));
    fold_peaks((*into)->reserved_mb, json_object_get(fw, "peak_reserved_mb"));
}

/* A phase's framework peaks, into the phase (unless left out) and the run; JAX's also into
 * jax_peak_bytes. */
static void on_framework(struct rm_phase_index *r, size_t ph, const json_t *line)
{
    const json_t *fw = json_object_get(line, "framework");
    if (!json_is_object(fw)) return;
    if (ph != RM_NO_PHASE) fold_framework(&r->phases[ph].fw, fw);
    fold_framework(&r->fw, fw);
    if (strcmp(r->fw->name, "jax")) return;
    for (int d = 0; d < RM_FW_MAX_DEVICES; d++) {
        double b = r->fw->allocated_mb[d] * 1048576.0;
        if (!isnan(b) && (!r->has_jax || b > r->jax_peak_bytes)) r->jax_peak_bytes = b;
        if (!isnan(b)) r->has_jax = true;
    }
}

static const char *phase_path(json_t *line)
{
    const char *p = str(line, "path");
    return p ? p : str(line, "name");
}

static int depth_of(json_t *line)
{
    json_t *d = field(line, "depth");
    return json_is_integer(d) ? (int)json_integer_value(d) : -1;
}

static void count_status(struct rm_phase *p, const char *status)
{
    p->count++;
    if (status && !strcmp(status, "error"))
        p->error++;
    else
        p->ok++;
}

/* What the summary reads of one line: the general reader takes it from a JSON tree, the fast
 * one from the line's text. */
struct line_fields {
    int64_t t;
    const char *type, *path, *status; /* NULL when absent or not a string; path: "path", else
                                         "name" */
    int64_t dur;                      /* "seconds" in ns, -1 when absent, not a number or out of
                                         range */
    int depth;                        /* -1 when not an integer */
    long long pid;                    /* 0 when not an integer */
    /* A metric line read by the fast reader (a good one only): its values and step. */
    const char *const *mnames;
    const double *mvals;
    size_t mn;
    int64_t mstep; /* -1: none */
};

/* A `params` line (runmon.params): its object merged into the run's parameters, its sweep
 * name kept. One that is not an object (or a sweep that is not a string) is counted, and the
 * first one's value kept for the summary's note, as JSON text (so no raw byte reaches a
 * terminal). */
static void on_params(struct rm_phase_index *r, const json_t *line)
{
    const json_t *p = json_object_get(line, "params"), *sw = json_object_get(line, "sweep");
    const json_t *bad = !json_is_object(p) ? p : (sw && !json_is_string(sw)) ? sw : NULL;
    if (bad || !p) {
        if (!r->bad_params++) {
            char *t = p ? json_dumps(bad, JSON_ENCODE_ANY | JSON_COMPACT) : NULL;
            const char *shown = t ? t : "absent";
            size_t n = strlen(shown);
            snprintf(r->bad_params_first, sizeof r->bad_params_first, "%.*s%s",
                     n > 100 ? 100 : (int)n, shown, n > 100 ? "..." : "");
            free(t);
        }
        if (!json_is_object(p)) return;
    }
    json_object_update(r->params, (json_t *)p);
    if (json_is_string(sw)) {
        free(r->sweep);
        r->sweep = rm_xstrdup(json_string_value(sw));
    }
}

/* One timed line's phase (or event: with its JSON tree, which the fast reader never takes). */
static void apply_line(struct rm_phase_index *r, const struct line_fields *l, json_t *line)
{
    int64_t t = l->t;
    if (r->first_ns == RM_NO_TIME || t < r->first_ns) r->first_ns = t;
    if (r->last_ns == RM_NO_TIME || t > r->last_ns) r->last_ns = t;
    const char *type = l->type, *path = l->path;
    long long pid = l->pid;
    if (!type) {
        r->garbage++;
    } else if (!strcmp(type, "phase")) {
        int64_t dur = l->dur;
        if (!path || dur < 0) {
            r->garbage++;
        } else {
            size_t ph = phase_id(r, path, l->depth);
            if (ph != RM_NO_PHASE) {
                count_status(&r->phases[ph], l->status);
                r->phases[ph].total_s += (double)dur / 1e9;
                add_window(r, ph, t - dur, t);
            }
            if (line) on_framework(r, ph, line);
        }
    } else if (!strcmp(type, "phase_enter")) {
        if (!path) {
            r->garbage++;
        } else {
            r->open = rm_xgrow(r->open, &r->capopen, r->nopen + 1, sizeof *r->open);
            r->open[r->nopen++] = (struct rm_open_phase){pid, phase_id(r, path, l->depth),
                                                         path_key(rm_str_hash(path)), t};
        }
    } else if (!strcmp(type, "phase_exit")) {
        if (!path) {
            r->garbage++;
        } else {
            size_t ph = phase_id(r, path, l->depth);
            uint64_t key = path_key(rm_str_hash(path));
            int64_t start = RM_NO_TIME;
            for (size_t i = r->nopen; i-- > 0;)
                if (r->open[i].pid == pid && r->open[i].phase == ph && r->open[i].pathkey == key) {
                    start = r->open[i].start_ns;
                    memmove(&r->open[i], &r->open[i + 1], (r->nopen - i - 1) * sizeof *r->open);
                    r->nopen--;
                    break;
                }
            int64_t dur = l->dur;
            if (start == RM_NO_TIME) {
                r->unmatched_exits++;
                if (dur >= 0) start = t - dur;
            }
            if (line) on_framework(r, ph, line);
            if (start != RM_NO_TIME && ph != RM_NO_PHASE) {
                count_status(&r->phases[ph], l->status);
                r->phases[ph].total_s += (double)(dur >= 0 ? dur : t - start) / 1e9;
                add_window(r, ph, start, t);
            }
        }
    } else if (!strcmp(type, "params")) {
        on_params(r, line);
    } else if (!strcmp(type, "metric")) {
        if (line)
            rm_metrics_line(&r->metrics, line, t);
        else
            rm_metrics_good_line(&r->metrics, l->mn, l->mnames, l->mvals, l->mstep, t);
    } else if (!strcmp(type, "objective")) {
        rm_metrics_objective_line(&r->metrics, line);
    } else if (!strcmp(type, "event")) {
        const char *ev = str(line, "event");
        if (ev)
            on_event(r, line, ev, t);
        else
            r->garbage++;
    }
}

/* A line's time: its ts, else its t (epoch seconds); false when it has neither. */
static bool line_time(const json_t *line, int64_t *t)
{
    json_t *ts = json_object_get(line, "ts"), *tn = json_object_get(line, "t");
    if (json_is_string(ts) &&
        !rm_parse_ts_checked(json_string_value(ts), json_string_length(ts), t))
        return true;
    if (json_is_number(tn) && json_number_value(tn) > 0 && json_number_value(tn) < RM_MAX_EPOCH_S) {
        *t = (int64_t)llround(json_number_value(tn) * 1e9);
        return true;
    }
    return false;
}

/* The general reader: the line as a jansson tree. */
static void json_line(struct rm_phase_index *r, const char *s, size_t len)
{
    json_t *line = json_loadb(s, len, 0, NULL);
    if (!json_is_object(line)) {
        r->garbage++;
        json_decref(line);
        return;
    }
    struct line_fields l;
    if (!line_time(line, &l.t)) {
        r->bad_time++;
        json_decref(line);
        return;
    }
    json_t *pidv = json_object_get(line, "pid");
    l.pid = json_is_integer(pidv) ? (long long)json_integer_value(pidv) : 0;
    l.type = str(line, "type");
    l.path = phase_path(line);
    l.status = str(line, "status");
    l.dur = seconds_ns(field(line, "seconds"));
    l.depth = depth_of(line);
    apply_line(r, &l, line);
    json_decref(line);
}

/* ---- the fast reader: the lines runmon's writers write, without a JSON tree ---------- */

/* One value of a flat line: a string without escapes or bytes past ASCII (its text between
 * the quotes), a number, or a literal. */
struct fast_value {
    const char *s;
    size_t len;
    char kind; /* 's' string, 'i' integer, 'r' real, 'l' literal; 0: absent */
    double num;
    long long ll;
};

enum {
    FK_TS,
    FK_T,
    FK_TYPE,
    FK_PATH,
    FK_NAME,
    FK_SECONDS,
    FK_DEPTH,
    FK_STATUS,
    FK_PID,
    FK_STEP,
    FK_VALUES,
    FK_N
};
static const char *const fast_keys[FK_N] = {"ts",    "t",      "type", "path", "name",  "seconds",
                                            "depth", "status", "pid",  "step", "values"};

static const char *blank_end(const char *p, const char *e)
{
    while (p < e && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
        p++;
    return p;
}

/* The end of a plain string's text starting at p (after its quote), or NULL. */
static const char *plain_string(const char *p, const char *e)
{
    while (p < e && *p != '"' && *p != '\\' && (unsigned char)*p >= 0x20 &&
           (unsigned char)*p < 0x80)
        p++;
    return p < e && *p == '"' ? p : NULL;
}

static bool digit(const char *p, const char *e)
{
    return p < e && *p >= '0' && *p <= '9';
}

/* A real of more significant digits than rm_parse_decimal reads exactly (Python's repr writes
 * up to 17): strtod, which jansson calls too, so both readers get the same double. */
static bool long_real(const char *a, size_t len, double *out)
{
    char b[64];
    if (len >= sizeof b) return false;
    memcpy(b, a, len);
    b[len] = '\0';
    char *end;
    *out = strtod(b, &end);
    return end == b + len && isfinite(*out);
}

/* A JSON number at p, by its grammar: integers of up to 18 digits, and reals of up to 22
 * decimals without an exponent (up to 15 significant digits rm_parse_decimal reads correctly
 * rounded, more long_real: each as jansson's strtod does); the end of it, or NULL for anything
 * else (the general reader decides). */
static const char *fast_number(const char *p, const char *e, struct fast_value *v)
{
    const char *a = p;
    if (p < e && *p == '-') p++;
    if (!digit(p, e)) return NULL;
    const char *int0 = p;
    if (*p == '0')
        p++;
    else
        while (digit(p, e))
            p++;
    const char *int1 = p;
    if (p < e && *p == '.') {
        p++;
        if (!digit(p, e)) return NULL;
        while (digit(p, e))
            p++;
        if (p - int1 - 1 > 22) return NULL; /* one division by an exact power of ten */
    }
    if (p < e && (*p == 'e' || *p == 'E')) return NULL;
    v->s = a;
    v->len = (size_t)(p - a);
    if (p == int1) {
        if (int1 - int0 > 18) return NULL;
        long long x = 0;
        for (const char *q = int0; q < int1; q++)
            x = x * 10 + (*q - '0');
        v->ll = *a == '-' ? -x : x;
        v->num = (double)v->ll;
        v->kind = 'i';
        return p;
    }
    size_t sig = 0;
    bool lead = true;
    for (const char *q = int0; q < p; q++)
        if (*q != '.' && !(lead && *q == '0')) lead = false, sig++;
    if (sig > 15 ? !long_real(a, v->len, &v->num) : rm_parse_decimal(a, v->len, &v->num) != v->len)
        return NULL;
    v->kind = 'r';
    return p;
}

static const char *fast_literal(const char *p, const char *e, struct fast_value *v)
{
    static const char *const lit[] = {"true", "false", "null"};
    for (size_t i = 0; i < 3; i++) {
        size_t n = strlen(lit[i]);
        if ((size_t)(e - p) >= n && !memcmp(p, lit[i], n)) {
            v->kind = 'l';
            return p + n;
        }
    }
    return NULL;
}

/* A metric line's "values": a flat object of plain names and fast_number numbers, kept as its
 * text (kind 'o'); NULL for anything else. */
static const char *fast_values(const char *p, const char *e, struct fast_value *v)
{
    v->s = p++;
    p = blank_end(p, e);
    if (p < e && *p == '}') return NULL; /* empty: the general reader counts it */
    for (;;) {
        p = blank_end(p, e);
        if (p == e || *p++ != '"' || !(p = plain_string(p, e))) return NULL;
        p = blank_end(p + 1, e);
        if (p == e || *p++ != ':') return NULL;
        p = blank_end(p, e);
        struct fast_value x = {0};
        if (!(p = fast_number(p, e, &x))) return NULL;
        p = blank_end(p, e);
        if (p == e) return NULL;
        if (*p == '}') break;
        if (*p++ != ',') return NULL;
    }
    v->len = (size_t)(++p - v->s);
    v->kind = 'o';
    return p;
}

/* Splits a flat JSON object into the values of fast_keys; false for anything else: a nested
 * value, an escape, a byte past ASCII in a string, a key of fast_keys twice, a number outside
 * fast_number's, bad JSON. */
static bool fast_split(const char *p, const char *e, struct fast_value v[FK_N])
{
    memset(v, 0, FK_N * sizeof *v);
    p = blank_end(p, e);
    if (p == e || *p++ != '{') return false;
    p = blank_end(p, e);
    if (p < e && *p == '}') return blank_end(p + 1, e) == e;
    for (;;) {
        p = blank_end(p, e);
        if (p == e || *p++ != '"') return false;
        const char *k = p;
        if (!(p = plain_string(p, e))) return false;
        size_t klen = (size_t)(p++ - k);
        p = blank_end(p, e);
        if (p == e || *p++ != ':') return false;
        p = blank_end(p, e);
        struct fast_value x = {0};
        if (p == e) return false;
        if (*p == '"') {
            x.s = ++p;
            if (!(p = plain_string(p, e))) return false;
            x.len = (size_t)(p++ - x.s);
            x.kind = 's';
        } else if (*p == '-' || (*p >= '0' && *p <= '9')) {
            if (!(p = fast_number(p, e, &x))) return false;
        } else if (*p == '{' && klen == 6 && !memcmp(k, "values", 6)) {
            if (!(p = fast_values(p, e, &x))) return false; /* a metric line's values */
        } else if (!(p = fast_literal(p, e, &x))) {
            return false; /* an object, an array, or not JSON */
        }
        for (int i = 0; i < FK_N; i++)
            if (strlen(fast_keys[i]) == klen && !memcmp(fast_keys[i], k, klen)) {
                if (v[i].kind) return false; /* twice: the general reader keeps the last */
                v[i] = x;
            }
        p = blank_end(p, e);
        if (p == e) return false;
        if (*p == '}') return blank_end(p + 1, e) == e;
        if (*p++ != ',') return false;
    }
}

/* A string value of the line, NUL-terminated in r's scratch space at *at; NULL when it is not
 * a string. */
static const char *fast_str(struct rm_phase_index *r, const struct fast_value *v, size_t *at)
{
    if (v->kind != 's') return NULL;
    char *d = r->scratch + *at;
    memcpy(d, v->s, v->len);
    d[v->len] = '\0';
    *at += v->len + 1;
    return d;
}

/* A good metric line's values, split by fast_split (names in fm's own copy). */
struct fast_metric {
    char *names[RM_METRIC_LINE_MAX];
    double vals[RM_METRIC_LINE_MAX];
    size_t n;
    int64_t step; /* -1: none */
    char text[RM_RUNLOG_MAX_LINE > 65536 ? 65536 : RM_RUNLOG_MAX_LINE];
};

/* Reads v[FK_VALUES] and v[FK_STEP] of a metric line; false (for the general reader, which
 * counts what is bad) unless every value is good: a metric name, a number, each name once,
 * 1 to RM_METRIC_LINE_MAX of them, a step absent or an integer >= 0. */
static bool fast_metric(struct rm_phase_index *r, const struct fast_value *v,
                        struct fast_metric *fm)
{
    (void)r;
    const struct fast_value *vals = &v[FK_VALUES], *st = &v[FK_STEP];
    if (vals->kind != 'o' || vals->len >= sizeof fm->text) return false;
    if (st->kind && !(st->kind == 'i' && st->ll >= 0)) return false;
    fm->step = st->kind ? st->ll : -1;
    fm->n = 0;
    memcpy(fm->text, vals->s, vals->len);
    fm->text[vals->len] = '\0';
    const char *e = fm->text + vals->len;
    for (char *p = fm->text + 1; p < e && *p != '}';) {
        p = (char *)blank_end(p, e);
        char *name = ++p, *end = (char *)plain_string(p, e);
        *end = '\0';
        p = (char *)blank_end(end + 1, e) + 1; /* past ':' */
        p = (char *)blank_end(p, e);
        struct fast_value x = {0};
        p = (char *)fast_number(p, e, &x);
        if (fm->n == RM_METRIC_LINE_MAX || rm_metric_name_check(name, NULL, 0) < 0) return false;
        for (size_t i = 0; i < fm->n; i++)
            if (!strcmp(fm->names[i], name)) return false; /* twice: jansson keeps the last */
        fm->names[fm->n] = name;
        fm->vals[fm->n++] = x.num;
        p = (char *)blank_end(p, e);
        if (*p == ',') p++;
    }
    return fm->n > 0;
}

/* The line read by the fast reader; false (nothing counted) when it is one for the general
 * reader: not a flat object of plain values, or an event (its fields are read from the tree). */
static bool fast_line(struct rm_phase_index *r, const char *s, size_t len)
{
    struct fast_value v[FK_N];
    if (r->general_only || !fast_split(s, s + len, v)) return false;
    const struct fast_value *ty = &v[FK_TYPE];
    if (ty->kind == 's' && ty->len == 5 && !memcmp(ty->s, "event", 5)) return false;
    if (ty->kind == 's' && ty->len == 6 && !memcmp(ty->s, "params", 6)) return false;
    bool metric = ty->kind == 's' && ty->len == 6 && !memcmp(ty->s, "metric", 6);
    if (v[FK_VALUES].kind && !metric) return false; /* values on another line: its own tree */
    if (ty->kind == 's' && ty->len == 9 && !memcmp(ty->s, "objective", 9)) return false;
    struct fast_metric fm;
    if (metric && !fast_metric(r, v, &fm)) return false;
    struct line_fields l;
    if (v[FK_TS].kind == 's' && !rm_parse_ts_checked(v[FK_TS].s, v[FK_TS].len, &l.t)) {
    } else if ((v[FK_T].kind == 'i' || v[FK_T].kind == 'r') && v[FK_T].num > 0 &&
               v[FK_T].num < RM_MAX_EPOCH_S) {
        l.t = (int64_t)llround(v[FK_T].num * 1e9);
    } else {
        r->bad_time++;
        r->fast_lines++;
        return true;
    }
    r->scratch = rm_xgrow(r->scratch, &r->capscratch, len + 4, 1); /* the strings and NULs */
    size_t at = 0;
    l.pid = v[FK_PID].kind == 'i' ? v[FK_PID].ll : 0;
    l.type = fast_str(r, ty, &at);
    l.path = fast_str(r, &v[FK_PATH], &at);
    if (!l.path) l.path = fast_str(r, &v[FK_NAME], &at);
    l.status = fast_str(r, &v[FK_STATUS], &at);
    double sec = v[FK_SECONDS].num;
    l.dur = (v[FK_SECONDS].kind == 'i' || v[FK_SECONDS].kind == 'r') && sec >= 0 && sec < 1e9
                ? (int64_t)llround(sec * 1e9)
                : -1;
    l.depth = v[FK_DEPTH].kind == 'i' ? (int)v[FK_DEPTH].ll : -1;
    if (metric) {
        l.mnames = (const char *const *)fm.names;
        l.mvals = fm.vals;
        l.mn = fm.n;
        l.mstep = fm.step;
    }
    apply_line(r, &l, NULL);
    r->fast_lines++;
    return true;
}

void rm_runlog_line(struct rm_phase_index *r, const char *s, size_t len, bool torn)
{
    while (len && (s[len - 1] == '\r' || s[len - 1] == ' '))
        len--;
    if (len == 0) return;
    r->lines++;
    if (torn) {
        r->torn++;
        return;
    }
    if (!fast_line(r, s, len)) json_line(r, s, len);
}

static void line_cb(void *ctx, const char *line, size_t len, bool torn)
{
    rm_runlog_line(ctx, line, len, torn);
}

int rm_runlog_read_file(struct rm_phase_index *r, const char *path, char *err, size_t errsz)
{
    uint64_t longl = 0;
    _Atomic uint64_t bytes = 0;
    int rc = rm_read_lines(path, RM_RUNLOG_MAX_LINE, line_cb, r, &bytes, &longl, err, errsz);
    r->long_lines += longl;
    if (rc == 0) {
        size_t cap = r->nfiles;
        r->files = rm_xgrow(r->files, &cap, r->nfiles + 1, sizeof *r->files);
        cap = r->nfiles;
        r->file_bytes = rm_xgrow(r->file_bytes, &cap, r->nfiles + 1, sizeof *r->file_bytes);
        r->files[r->nfiles] = rm_xstrdup(path);
        r->file_bytes[r->nfiles++] = bytes;
    }
    return rc;
}

/* ---- the metrics of each phase: the metric lines read again ---------------------------- */

struct phase_pass {
    struct rm_phase_index *r;
    uint64_t ordinal; /* the metric line's order, as the first reading counted it */
    double t;
    size_t hit[64], nhit; /* the phases holding this line (a phase once) */
    bool more;            /* more phases than hit[] holds: the rest deduplicated slowly */
};

static void hit_phase(void *ctx, size_t phase)
{
    struct phase_pass *p = ctx;
    for (size_t i = 0; i < p->nhit; i++)
        if (p->hit[i] == phase) return;
    if (p->nhit < sizeof p->hit / sizeof *p->hit) p->hit[p->nhit++] = phase;
}

static void phase_value(void *ctx, const char *name, double v, int64_t step)
{
    struct phase_pass *p = ctx;
    struct rm_metrics *m = &p->r->metrics;
    size_t id = rm_metrics_find(m, name);
    if (id == RM_NO_METRIC) return;
    for (size_t i = 0; i < p->nhit; i++)
        rm_metrics_phase_add(m, p->hit[i], id, v, step, p->t);
}

/* The metric line's phases (those whose windows hold t), then its values added to them. */
static bool phase_hits(struct phase_pass *p, int64_t t)
{
    p->nhit = 0;
    rm_runlog_windows_at(p->r, t, hit_phase, p);
    p->t = (double)t / 1e9;
    return p->nhit > 0;
}

/* A good metric line by the fast reader's rules: true when it took it. */
static bool phase_line_fast(struct phase_pass *p, const char *s, size_t len)
{
    struct fast_value v[FK_N];
    if (p->r->general_only || !fast_split(s, s + len, v)) return false;
    const struct fast_value *ty = &v[FK_TYPE];
    if (!(ty->kind == 's' && ty->len == 6 && !memcmp(ty->s, "metric", 6)))
        return !v[FK_VALUES].kind;
    struct fast_metric fm;
    if (!fast_metric(p->r, v, &fm)) return false;
    int64_t t;
    if (v[FK_TS].kind == 's' && !rm_parse_ts_checked(v[FK_TS].s, v[FK_TS].len, &t)) {
    } else if ((v[FK_T].kind == 'i' || v[FK_T].kind == 'r') && v[FK_T].num > 0 &&
               v[FK_T].num < RM_MAX_EPOCH_S) {
        t = (int64_t)llround(v[FK_T].num * 1e9);
    } else {
        return true; /* no time: the first reading did not count it */
    }
    uint64_t ordinal = p->ordinal++;
    if (!phase_hits(p, t)) return true;
    for (size_t i = 0; i < fm.n; i++)
        phase_value(p, fm.names[i], fm.vals[i], fm.step >= 0 ? fm.step : (int64_t)ordinal);
    return true;
}

static void phase_line(void *ctx, const char *s, size_t len, bool torn)
{
    struct phase_pass *p = ctx;
    while (len && (s[len - 1] == '\r' || s[len - 1] == ' '))
        len--;
    if (torn || len == 0 || !memmem(s, len, "metric", 6)) return;
    if (phase_line_fast(p, s, len)) return;
    json_t *line = json_loadb(s, len, 0, NULL);
    int64_t t;
    const char *type = json_string_value(json_object_get(line, "type"));
    if (json_is_object(line) && type && !strcmp(type, "metric") && line_time(line, &t)) {
        uint64_t ordinal = p->ordinal++;
        if (phase_hits(p, t)) rm_metrics_values(line, ordinal, phase_value, p);
    }
    json_decref(line);
}

int rm_runlog_phase_metrics(struct rm_phase_index *r, char *err, size_t errsz)
{
    if (r->metrics.n == 0 || r->nwin == 0) return 0;
    rm_metrics_phases(&r->metrics, r->nphases);
    struct phase_pass p = {.r = r};
    for (size_t i = 0; i < r->nfiles; i++)
        if (rm_read_lines_range(r->files[i], 0, r->file_bytes[i], RM_RUNLOG_MAX_LINE, phase_line,
                                &p, NULL, NULL, err, errsz))
            return -1;
    return 0;
}

static int cmp_win(const void *a, const void *b)
{
    const struct rm_phase_window *x = a, *y = b;
    return x->start_ns < y->start_ns ? -1 : x->start_ns > y->start_ns;
}

/* The windows, sorted by start, as an implicit interval tree (the layout of Heng Li's
 * cgranges): the node at index i sits at level k, the number of trailing 1 bits of i, with
 * children i - 2^(k-1) and i + 2^(k-1); maxend[i] is the largest end in its subtree. A
 * lookup then costs O(log n + hits) even under a window that spans the whole run (a prefix
 * maximum of the ends made every lookup inside one walk back over all earlier windows). */
static int index_windows(const struct rm_phase_window *w, int64_t *mx, size_t n)
{
    if (n == 0) return -1;
    size_t last_i = 0;
    int64_t last = 0;
    for (size_t i = 0; i < n; i += 2) { /* leaves */
        last_i = i;
        mx[i] = last = w[i].end_ns;
    }
    int k;
    for (k = 1; ((size_t)1 << k) <= n; k++) {
        size_t x = (size_t)1 << (k - 1), i0 = (x << 1) - 1, step = x << 2;
        for (size_t i = i0; i < n; i += step) {
            int64_t el = mx[i - x], er = i + x < n ? mx[i + x] : last, e = w[i].end_ns;
            if (el > e) e = el;
            if (er > e) e = er;
            mx[i] = e;
        }
        /* last: the largest end under the rightmost node at this level (its parent's right
         * child may lie past n) */
        last_i = (last_i >> k & 1) ? last_i - x : last_i + x;
        if (last_i < n && mx[last_i] > last) last = mx[last_i];
    }
    return k - 1;
}

void rm_runlog_finish(struct rm_phase_index *r, int64_t end_ns, bool (*keep)(void *, const char *),
                      void *keep_ctx)
{
    for (size_t i = 0; i < r->nopen; i++) {
        if (r->open[i].phase == RM_NO_PHASE) continue; /* left out */
        struct rm_phase *p = &r->phases[r->open[i].phase];
        p->count++;
        p->unterminated++;
        int64_t end = end_ns != RM_NO_TIME && end_ns >= r->open[i].start_ns ? end_ns : RM_OPEN_END;
        int64_t last = end != RM_OPEN_END ? end : r->last_ns;
        if (last != RM_NO_TIME && last > r->open[i].start_ns)
            p->total_s += (double)(last - r->open[i].start_ns) / 1e9;
        add_window(r, r->open[i].phase, r->open[i].start_ns, end);
    }
    r->nopen = 0;
    if (keep) {
        size_t k = 0;
        for (size_t i = 0; i < r->nwin; i++)
            if (r->win[i].phase == r->other || keep(keep_ctx, r->phases[r->win[i].phase].path))
                r->win[k++] = r->win[i];
        r->nwin = k;
    }
    if (r->nwin) qsort(r->win, r->nwin, sizeof *r->win, cmp_win);
    free(r->maxend);
    r->maxend = rm_xcalloc(r->nwin, sizeof *r->maxend);
    r->levels = index_windows(r->win, r->maxend, r->nwin);
}

/* A node of the tree on the lookup's stack: its index, level, and whether its left subtree
 * was seen to. */
struct node {
    size_t x;
    int k;
    bool left_done;
};

/* Calls fn for each window overlapping [t0, t1), in index order. */
static void overlapping(const struct rm_phase_index *r, int64_t t0, int64_t t1,
                        void (*fn)(void *, size_t, int64_t, int64_t), void *ctx)
{
    const struct rm_phase_window *w = r->win;
    size_t n = r->nwin;
    if (n == 0) return;
    struct node st[130]; /* two entries per level at most */
    int top = 0;
    st[top++] = (struct node){((size_t)1 << r->levels) - 1, r->levels, false};
    while (top) {
        struct node z = st[--top];
        if (z.k <= 3) { /* a small subtree: every node of it, in order */
            size_t i0 = z.x >> z.k << z.k, i1 = i0 + ((size_t)1 << (z.k + 1)) - 1;
            if (i1 > n) i1 = n;
            for (size_t i = i0; i < i1 && w[i].start_ns < t1; i++)
                if (w[i].end_ns > t0) fn(ctx, w[i].phase, w[i].start_ns, w[i].end_ns);
        } else if (!z.left_done) {
            size_t y = z.x - ((size_t)1 << (z.k - 1)); /* the left child; may lie past n */
            st[top++] = (struct node){z.x, z.k, true};
            if (y >= n || r->maxend[y] > t0) st[top++] = (struct node){y, z.k - 1, false};
        } else if (z.x < n && w[z.x].start_ns < t1) {
            if (w[z.x].end_ns > t0) fn(ctx, w[z.x].phase, w[z.x].start_ns, w[z.x].end_ns);
            st[top++] = (struct node){z.x + ((size_t)1 << (z.k - 1)), z.k - 1, false};
        }
    }
}

struct at_ctx {
    void (*fn)(void *, size_t);
    void *ctx;
};

static void at_hit(void *ctx, size_t phase, int64_t start, int64_t end)
{
    (void)start;
    (void)end;
    struct at_ctx *c = ctx;
    c->fn(c->ctx, phase);
}

void rm_runlog_windows_at(const struct rm_phase_index *r, int64_t t, void (*fn)(void *, size_t),
                          void *ctx)
{
    if (t == INT64_MAX) return; /* no window holds it: ends are exclusive */
    struct at_ctx c = {fn, ctx};
    overlapping(r, t, t + 1, at_hit, &c);
}

void rm_runlog_windows_over(const struct rm_phase_index *r, int64_t t0, int64_t t1,
                            void (*fn)(void *, size_t, int64_t, int64_t), void *ctx)
{
    overlapping(r, t0, t1, fn, ctx);
}
