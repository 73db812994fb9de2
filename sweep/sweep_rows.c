#include "sweep/sweep_rows.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/json.h"
#include "model/figures.h"
#include "runlog/kvargs.h"
#include "sink/index.h"
#include "sweep/sessions_rows.h"

/* ---- one sink's rows ---- */

struct collect {
    const char *sink;
    json_t *rows;
    json_t *seen; /* session ids already held, over all sinks */
};

static void on_row(void *ctx, const struct rm_session_row *row)
{
    struct collect *c = ctx;
    if (json_object_get(c->seen, row->rec->session_id)) return;
    json_t *o = rm_session_row_json(row);
    if (!o) return;
    json_object_set_new(c->seen, row->rec->session_id, json_true());
    /* The index line's own sweep and params (runmon record --sweep/--param). */
    json_t *line = json_loadb(row->rec->line, row->rec->len, 0, NULL);
    json_t *sw = json_object_get(line, "sweep"), *p = json_object_get(line, "params");
    json_object_set(o, "sweep", json_is_string(sw) ? sw : json_null());
    json_object_set_new(o, "params", json_is_object(p) ? json_deep_copy(p) : json_object());
    json_decref(line);
    char dir[8192];
    snprintf(dir, sizeof dir, "%s/%s", c->sink, row->rec->session_id);
    json_object_set_new(o, "session_dir", rm_jstr(dir)); /* a path: any bytes */
    json_object_set_new(o, "sink", rm_jstr(c->sink));
    json_array_append_new(c->rows, o);
}

/* The distinct model names of summary.json's gpus[], joined by ", ". */
static json_t *gpu_names(const json_t *gpus)
{
    char out[512] = "";
    size_t i, used = 0;
    const json_t *g;
    json_array_foreach(gpus, i, g)
    {
        const char *n = rm_jget_str(g, "name");
        if (!*n) continue;
        size_t k, dup = 0;
        const json_t *h;
        json_array_foreach(gpus, k, h)
        {
            if (k >= i) break;
            if (!strcmp(rm_jget_str(h, "name"), n)) dup = 1;
        }
        if (dup) continue;
        int w = snprintf(out + used, sizeof out - used, "%s%s", used ? ", " : "", n);
        if (w < 0 || (size_t)w >= sizeof out - used) {
            out[used] = '\0'; /* not a name cut in two */
            break;
        }
        used += (size_t)w;
    }
    return used ? rm_jstr(out) : json_null();
}

static json_t *num_copy(const json_t *v)
{
    return json_is_number(v) ? json_copy((json_t *)v) : json_null();
}

/* The figures, and the sweep and params the run log gave (summary.json), under the
 * explicit ones. */
static void add_summary(json_t *row, const char *sink)
{
    /* Of the GPUs and phase rows only what the table shows: a scan, not a tree. */
    static const char *const extra[] = {"sweep",
                                        "params",
                                        "gpus[].name",
                                        "workload_vram_basis",
                                        "phases[].path,total_seconds,folded_paths",
                                        "session",
                                        "metrics",
                                        "objectives"};
    json_t *s = rm_session_summary_pick(sink, rm_jget_str(row, "session_id"), extra,
                                        sizeof extra / sizeof extra[0]);
    rm_session_row_set_figures(row, s);
    json_t *tot = json_object_get(s, "totals");
    json_object_set_new(row, "gpu_name", gpu_names(json_object_get(s, "gpus")));
    json_object_set_new(row, "gpu_count", num_copy(json_object_get(tot, "gpu_count")));
    /* The energy's error bar (docs/ENERGY.md): the table calls two runs different only when
     * their bars do not overlap. */
    rm_session_row_set_bars(row, s);
    /* Its sampling interval: times closer than it are not told apart (the times' noise). */
    json_object_set_new(row, "interval_s",
                        num_copy(json_object_get(json_object_get(s, "session"), "interval_s")));
    /* The sweep table's figures beyond the listing's (model/figures.h, rm_sweep_figures). */
    for (int f = 0; f < RM_SWEEP_FIG_COUNT; f++)
        if (!(rm_sweep_figures[f].in & RM_SWEEP_IN_LISTING)) rm_session_row_set_figure(row, f, s);
    /* "assumed" or "unattributed" where GPU memory had no process runmon could place */
    const json_t *basis = json_object_get(s, "workload_vram_basis");
    if (json_is_string(basis))
        json_object_set_new(row, "workload_vram_basis", json_copy((json_t *)basis));
    json_t *ph = json_object();
    size_t i;
    const json_t *p;
    json_array_foreach(json_object_get(s, "phases"), i, p)
    {
        const char *path = rm_jget_str(p, "path");
        const json_t *t = json_object_get(p, "total_seconds");
        if (*path && json_is_number(t) && !json_object_get(p, "folded_paths"))
            json_object_set_new(ph, path, json_copy((json_t *)t));
    }
    json_object_set_new(row, "phase_seconds", ph);
    /* The run log's metrics and objectives (sweep/sweep_judge.h judges the runs by them). */
    json_t *mt = json_object_get(s, "metrics"), *ob = json_object_get(s, "objectives");
    if (json_is_object(mt)) json_object_set(row, "metrics", mt);
    if (json_is_array(ob)) json_object_set(row, "run_objectives", ob);
    /* The run log's sweep and params, under --sweep and --param. */
    json_t *sw = json_object_get(s, "sweep");
    if (json_is_null(json_object_get(row, "sweep")) && json_is_string(sw))
        json_object_set(row, "sweep", sw);
    json_t *lp = json_object_get(s, "params");
    if (json_is_object(lp)) {
        json_t *merged = json_deep_copy(lp);
        json_object_update(merged, json_object_get(row, "params"));
        json_object_set_new(row, "params", merged);
    }
    json_decref(s);
}

/* ---- parameters inferred from the command lines ---- */

/* An option word: a leading '-' that is not a negative number, and something after it. */
static int is_option(const char *w)
{
    return w[0] == '-' && w[1] && !rm_is_json_number(w) && strcmp(w, "--");
}

/* KEY of a KEY=VALUE word: letters, digits, '_', '.', '-', not starting with '-'. */
static size_t assign_key_len(const char *w)
{
    const char *eq = strchr(w, '=');
    if (!eq || eq == w || w[0] == '-') return 0;
    for (const char *p = w; p < eq; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
              *p == '_' || *p == '.' || *p == '-'))
            return 0;
    return (size_t)(eq - w);
}

json_t *rm_sweep_command_params(const json_t *command)
{
    json_t *out = json_object();
    size_t n = json_array_size(command), positional = 0;
    int options_done = 0;
    char key[1100];
    for (size_t i = 0; i < n; i++) {
        const char *w = json_string_value(json_array_get(command, i));
        if (!w) continue;
        if (!options_done && i > 0 && !strcmp(w, "--")) {
            options_done = 1;
            continue;
        }
        size_t kl;
        if (!options_done && i > 0 && is_option(w)) {
            const char *name = w + strspn(w, "-");
            const char *eq = strchr(name, '=');
            size_t nl = eq ? (size_t)(eq - name) : strlen(name);
            if (nl && nl < sizeof key) {
                memcpy(key, name, nl);
                key[nl] = '\0';
                json_t *v;
                const char *next =
                    i + 1 < n ? json_string_value(json_array_get(command, i + 1)) : NULL;
                if (eq)
                    v = rm_number_or_string(eq + 1);
                else if (next && !is_option(next) && strcmp(next, "--") && !assign_key_len(next))
                    v = rm_number_or_string(next), i++;
                else
                    v = json_true();
                if (v) json_object_set_new(out, key, v);
                continue;
            }
        } else if (!options_done && i > 0 && (kl = assign_key_len(w)) && kl < sizeof key) {
            memcpy(key, w, kl);
            key[kl] = '\0';
            json_t *v = rm_number_or_string(w + kl + 1);
            if (v) json_object_set_new(out, key, v);
            continue;
        }
        snprintf(key, sizeof key, "arg%zu", positional++);
        json_t *v = i ? rm_number_or_string(w) : json_string(w);
        if (v) json_object_set_new(out, key, v);
    }
    return out;
}

/* The keys whose values are not the same in every row (a missing key differs from any
 * value), in order of first appearance. */
static json_t *differing_keys(json_t *const *params, size_t n)
{
    json_t *names = json_array(), *done = json_object();
    for (size_t i = 0; i < n; i++) {
        const char *k;
        json_t *v;
        json_object_foreach(params[i], k, v)
        {
            if (json_object_get(done, k)) continue;
            json_object_set_new(done, k, json_true());
            int same = 1;
            for (size_t j = 0; j < n && same; j++)
                same = json_equal(v, json_object_get(params[j], k));
            if (!same) json_array_append_new(names, json_string(k));
        }
    }
    json_decref(done);
    return names;
}

json_t *rm_sweep_infer_params(json_t *rows)
{
    size_t n = json_array_size(rows), i;
    json_t **all = calloc(n ? n : 1, sizeof *all);
    if (!all) abort();
    for (i = 0; i < n; i++)
        all[i] = rm_sweep_command_params(json_object_get(json_array_get(rows, i), "command"));
    json_t *names = differing_keys(all, n);
    for (i = 0; i < n; i++) {
        json_t *p = json_object();
        size_t k;
        json_t *name;
        json_array_foreach(names, k, name)
        {
            json_t *v = json_object_get(all[i], json_string_value(name));
            if (v) json_object_set(p, json_string_value(name), v);
        }
        json_object_set_new(json_array_get(rows, i), "params", p);
        json_decref(all[i]);
    }
    free(all);
    return names;
}

static void infer_params(struct rm_sweep *s)
{
    json_t *names = rm_sweep_infer_params(s->rows);
    json_decref(s->param_names);
    s->param_names = names;
    s->params_inferred = json_array_size(names) > 0;
}

/* ---- the sweep ---- */

/* Rows in start order (stable: ties keep the order they were read in). */
struct held {
    json_t *e;
    size_t i;
};

static int by_start(const void *a, const void *b)
{
    const struct held *x = a, *y = b;
    int c = strcmp(rm_jget_str(x->e, "started_at"), rm_jget_str(y->e, "started_at"));
    return c ? c : (x->i > y->i) - (x->i < y->i);
}

static void sort_by_start(json_t *rows)
{
    size_t n = json_array_size(rows), i;
    struct held *h = calloc(n ? n : 1, sizeof *h);
    if (!h) return;
    for (i = 0; i < n; i++)
        h[i].e = json_incref(json_array_get(rows, i)), h[i].i = i;
    qsort(h, n, sizeof *h, by_start);
    json_array_clear(rows);
    for (i = 0; i < n; i++)
        json_array_append_new(rows, h[i].e);
    free(h);
}

/* The parameter columns: every key any row has, in order of first appearance. */
static void explicit_names(struct rm_sweep *s)
{
    json_t *done = json_object();
    size_t i;
    json_t *e;
    json_array_foreach(s->rows, i, e)
    {
        const char *k;
        json_t *v;
        json_object_foreach(json_object_get(e, "params"), k, v)
        {
            (void)v;
            if (json_object_get(done, k)) continue;
            json_object_set_new(done, k, json_true());
            json_array_append_new(s->param_names, json_string(k));
        }
    }
    json_decref(done);
}

static void mark_reruns(struct rm_sweep *s)
{
    json_t *count = json_object();
    size_t i;
    json_t *e;
    json_array_foreach(s->rows, i, e)
    {
        json_t *key = json_pack("[O,O]", json_object_get(e, "sweep"), json_object_get(e, "params"));
        char *text = key ? json_dumps(key, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY) : NULL;
        json_int_t n = text ? json_integer_value(json_object_get(count, text)) : 0;
        if (text) json_object_set_new(count, text, json_integer(n + 1));
        json_object_set_new(e, "rerun", json_integer(n));
        free(text);
        json_decref(key);
    }
    json_decref(count);
}

static int count_hosts(const json_t *rows)
{
    json_t *hosts = json_object();
    size_t i;
    const json_t *e;
    json_array_foreach(rows, i, e) json_object_set_new(hosts, rm_jget_str(e, "host"), json_true());
    int n = (int)json_object_size(hosts);
    json_decref(hosts);
    return n;
}

/* Runs whose figures are missing because they have no summary.json yet. */
static void note_missing_summaries(struct rm_sweep *s)
{
    size_t i, n = 0;
    const json_t *e;
    json_array_foreach(s->rows, i, e) n += !json_is_true(json_object_get(e, "has_summary"));
    if (!n) return;
    char b[160];
    snprintf(b, sizeof b,
             "%zu run%s no summary.json (running, or interrupted before writing it): '-' for "
             "%s figures",
             n, n > 1 ? "s have" : " has", n > 1 ? "their" : "its");
    json_array_append_new(s->notes, json_string(b));
}

void rm_sweep_free(struct rm_sweep *s)
{
    json_decref(s->rows);
    json_decref(s->param_names);
    json_decref(s->notes);
    memset(s, 0, sizeof *s);
}

int rm_sweep_load(const char *const *sinks, size_t n_sinks, const char *sweep_name,
                  struct rm_sweep *out, char *err, size_t errsz)
{
    memset(out, 0, sizeof *out);
    out->rows = json_array();
    out->param_names = json_array();
    out->notes = json_array();
    json_t *seen = json_object();
    for (size_t k = 0; k < n_sinks; k++) {
        struct collect c = {.sink = sinks[k], .rows = json_array(), .seen = seen};
        int marked = 0;
        if (rm_session_rows_each(sinks[k], on_row, &c, &marked, err, errsz) < 0) {
            json_decref(c.rows);
            json_decref(seen);
            rm_sweep_free(out);
            return -1;
        }
        size_t i;
        json_t *e;
        json_array_foreach(c.rows, i, e)
        {
            /* A row whose index line names its sweep is filtered before its summary.json is
             * read; only a row without one needs it (the run log's sweep, add_summary). */
            const json_t *sw = json_object_get(e, "sweep");
            if (sweep_name && json_is_string(sw) && strcmp(json_string_value(sw), sweep_name))
                continue;
            add_summary(e, sinks[k]);
            sw = json_object_get(e, "sweep");
            if (sweep_name && !(json_is_string(sw) && !strcmp(json_string_value(sw), sweep_name)))
                continue;
            json_array_append(out->rows, e);
            if (json_object_get(e, "unwritten")) out->marked = 1;
        }
        json_decref(c.rows);
    }
    json_decref(seen);
    if (n_sinks > 1) sort_by_start(out->rows);
    explicit_names(out);
    if (!json_array_size(out->param_names)) infer_params(out);
    mark_reruns(out);
    out->n_hosts = count_hosts(out->rows);
    note_missing_summaries(out);
    return 0;
}
