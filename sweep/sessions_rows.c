#include "sweep/sessions_rows.h"

#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/json.h"
#include "base/jsonpick.h"
#include "base/rm_time.h"
#include "base/termsafe.h"
#include "sink/names.h"

struct walk {
    char command_error[96]; /* the row's, while fn runs */
    const char *dir;
    int dfd; /* the sink directory, for the per-session folder check */
    rm_session_row_fn fn;
    void *ctx;
    int *marked;
};

/* Seconds from start to end (to now while running), or -1. */
static double rec_duration_s(const struct rm_index_rec *r)
{
    int64_t a, b;
    if (!r->started_at[0] || rm_parse_ts(r->started_at, strlen(r->started_at), &a) != 0) return -1;
    if (!r->ended_at[0])
        b = rm_now_realtime_ns();
    else if (rm_parse_ts(r->ended_at, strlen(r->ended_at), &b) != 0)
        return -1;
    return (double)(b - a) / 1e9;
}

/* A failed session whose command exited 127 or 126 may be one whose command never ran: its
 * session.json says so (command_error). Read only for those, so the listing stays the index's. */
static const char *command_error(struct walk *w, const struct rm_index_rec *r)
{
    if (strcmp(r->status, "failed") || !r->has_exit || (r->exit_code != 127 && r->exit_code != 126))
        return NULL;
    const char *keys[] = {"command_error"};
    char path[4096 + 200];
    snprintf(path, sizeof path, "%s/%s/session.json", w->dir, r->session_id);
    json_t *got = rm_json_pick_file(path, keys, 1);
    const char *e = json_string_value(json_object_get(got, "command_error"));
    if (e) snprintf(w->command_error, sizeof w->command_error, "%s", e);
    json_decref(got);
    return e ? w->command_error : NULL;
}

/* One session's row (a running session's files and bytes from its state.json, which its
 * recorder keeps current; the index has them as of its last line). */
static int row_of(struct walk *w, const struct rm_index_rec *r)
{
    const char *id = r->session_id;
    char why[4096 + 512];
    if (!rm_sink_session_ok_at(w->dfd, w->dir, id, why, sizeof why)) {
        fputs("runmon: ", stderr);
        rm_fput_safe(stderr, why);
        fputs(", ignored\n", stderr);
        return 0;
    }
    struct rm_session_row row = {.rec = r, .files = r->files, .bytes = r->bytes};
    json_t *doc = NULL;
    if (!strcmp(r->status, "running") && rm_state_load(w->dir, id, &doc) == 0) {
        json_t *now = rm_index_line(doc, "now");
        row.files = json_integer_value(json_object_get(now, "files"));
        row.bytes = json_integer_value(json_object_get(now, "bytes"));
        json_decref(now);
    }
    json_decref(doc);
    row.duration_s = rec_duration_s(r);
    row.command_error = command_error(w, r);
    if (r->raw[RM_REC_UNWRITTEN].p) *w->marked = 1;
    w->fn(w->ctx, &row);
    return 0;
}

/* One session of the index. A session whose line says running but whose recorder is dead
 * is listed as recovery ends it (and mended, when the sink can be written: rm_sink_settle),
 * never as running. */
static int each_one(void *ctx, const struct rm_index_rec *r)
{
    struct walk *w = ctx;
    json_t *now = rm_sink_settle(w->dir, r);
    if (!now) return row_of(w, r);
    char *text = json_dumps(now, JSON_COMPACT);
    json_decref(now);
    struct rm_index_rec settled;
    int rc = text && rm_index_rec_parse(text, strlen(text), &settled) ? row_of(w, &settled)
                                                                      : row_of(w, r);
    free(text);
    return rc;
}

int rm_session_rows_each(const char *dir, rm_session_row_fn fn, void *ctx, int *marked, char *err,
                         size_t errsz)
{
    struct walk w = {.dir = dir, .fn = fn, .ctx = ctx, .marked = marked};
    w.dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    int rc = rm_index_each(dir, each_one, &w, err, errsz);
    if (w.dfd >= 0) close(w.dfd);
    return rc < 0 ? -1 : 0;
}

json_t *rm_session_row_json(const struct rm_session_row *row)
{
    const struct rm_index_rec *r = row->rec;
    json_t *e = json_loadb(r->line, r->len, 0, NULL);
    if (!json_is_object(e)) {
        json_decref(e);
        return NULL;
    }
    json_t *ea = json_object_get(e, "ended_at"), *cmd = json_object_get(e, "command"),
           *ex = json_object_get(e, "exit_code"), *st = json_object_get(e, "status"),
           *host = json_object_get(e, "host"), *sa = json_object_get(e, "started_at"),
           *sig = json_object_get(e, "signal");
    double d = row->duration_s;
    json_t *o =
        json_pack("{s:s,s:O,s:O,s:O,s:O,s:o,s:O,s:O,s:O,s:I,s:I}", "session_id", r->session_id,
                  "status", st ? st : json_null(), "host", host ? host : json_null(), "started_at",
                  sa ? sa : json_null(), "ended_at", ea ? ea : json_null(), "duration_s",
                  d >= 0 ? json_real(d) : json_null(), "command", cmd ? cmd : json_null(),
                  "exit_code", ex ? ex : json_null(), "signal", sig ? sig : json_null(), "files",
                  (json_int_t)row->files, "bytes", (json_int_t)row->bytes);
    json_t *unw = json_object_get(e, "unwritten");
    if (o && json_array_size(unw)) json_object_set(o, "unwritten", unw);
    if (o && row->command_error)
        json_object_set_new(o, "command_error", json_string(row->command_error));
    json_decref(e);
    return o;
}

/* Only these members: a summary.json of thousands of phase rows is scanned, not loaded. */
static const char *const figure_keys[] = {"gpu_util_mean_pct", "workload_peak_vram_mb",
                                          "peak_vram_mb", "totals"};
#define N_FIGURE_KEYS (sizeof figure_keys / sizeof figure_keys[0])

json_t *rm_session_summary_pick(const char *dir, const char *id, const char *const *extra,
                                size_t n_extra)
{
    char path[4096];
    const char *keys[N_FIGURE_KEYS + 16];
    size_t n = 0;
    for (size_t k = 0; k < N_FIGURE_KEYS; k++)
        keys[n++] = figure_keys[k];
    for (size_t k = 0; k < n_extra && n < sizeof keys / sizeof keys[0]; k++)
        keys[n++] = extra[k];
    if (!*id || strchr(id, '/') ||
        (size_t)snprintf(path, sizeof path, "%s/%s/summary.json", dir, id) >= sizeof path)
        return NULL;
    return rm_json_pick_file(path, keys, n);
}

void rm_session_row_set_figures(json_t *e, const json_t *s)
{
    json_t *u = json_object_get(s, "gpu_util_mean_pct");
    json_t *w = json_object_get(s, "workload_peak_vram_mb"),
           *v = json_object_get(s, "peak_vram_mb");
    json_t *en = json_object_get(json_object_get(s, "totals"), "energy_wh");
    const char *src = NULL;
    if (json_is_number(w))
        v = w, src = "workload";
    else if (json_is_number(v))
        src = "gpu";
    else
        v = NULL;
    json_object_set_new(e, "has_summary", json_boolean(s != NULL));
    json_object_set_new(e, "gpu_util_mean_pct", json_is_number(u) ? json_copy(u) : json_null());
    json_object_set_new(e, "peak_vram_mb", v ? json_copy(v) : json_null());
    json_object_set_new(e, "peak_vram_source", src ? json_string(src) : json_null());
    json_object_set_new(e, "energy_wh", json_is_number(en) ? json_copy(en) : json_null());
}

void rm_session_rows_add_figures(const char *dir, json_t *rows)
{
    size_t i;
    json_t *e;
    json_array_foreach(rows, i, e)
    {
        json_t *s = rm_session_summary_pick(dir, rm_jget_str(e, "session_id"), NULL, 0);
        rm_session_row_set_figures(e, s);
        json_decref(s);
    }
}

/* ---- --sort ---- */

const char *const rm_session_sort_fields[] = {"start",  "duration", "util", "vram",
                                              "energy", "status",   NULL};

const char *rm_session_sort_field(const char *name)
{
    for (size_t k = 0; rm_session_sort_fields[k]; k++)
        if (!strcmp(name, rm_session_sort_fields[k])) return rm_session_sort_fields[k];
    return NULL;
}

int rm_session_sort_needs_figures(const char *field)
{
    return field && (!strcmp(field, "util") || !strcmp(field, "vram") || !strcmp(field, "energy"));
}

struct held {
    json_t *e;
    size_t i;
};

static double num(const json_t *e, const char *k)
{
    const json_t *v = json_object_get(e, k);
    return json_is_number(v) ? json_number_value(v) : NAN;
}

/* start and status ascending, the figures descending with missing ones last; ties keep the
 * index's order. */
static int cmp_rows(const void *a, const void *b, void *arg)
{
    const struct held *x = a, *y = b;
    const char *by = arg;
    int c = 0;
    if (!strcmp(by, "start")) {
        c = strcmp(rm_jget_str(x->e, "started_at"), rm_jget_str(y->e, "started_at"));
    } else if (!strcmp(by, "status")) {
        c = strcmp(rm_jget_str(x->e, "status"), rm_jget_str(y->e, "status"));
    } else {
        const char *k = !strcmp(by, "duration") ? "duration_s"
                        : !strcmp(by, "util")   ? "gpu_util_mean_pct"
                        : !strcmp(by, "vram")   ? "peak_vram_mb"
                                                : "energy_wh";
        double p = num(x->e, k), q = num(y->e, k);
        if (isnan(p) != isnan(q))
            c = isnan(p) ? 1 : -1;
        else if (!isnan(p) && p != q)
            c = p < q ? 1 : -1;
    }
    if (!c) c = x->i < y->i ? -1 : x->i > y->i;
    return c;
}

void rm_session_rows_sort(json_t *rows, const char *field)
{
    size_t n = json_array_size(rows), i;
    struct held *r = calloc(n ? n : 1, sizeof *r);
    if (!r) return;
    for (i = 0; i < n; i++)
        r[i].e = json_incref(json_array_get(rows, i)), r[i].i = i;
    qsort_r(r, n, sizeof *r, cmp_rows, (void *)field);
    json_array_clear(rows);
    for (i = 0; i < n; i++)
        json_array_append_new(rows, r[i].e);
    free(r);
}
