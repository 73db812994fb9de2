/* DIR/<id>/state.json (one session's entry and segments) and DIR/sink.json (the sink-wide
 * totals kept incrementally), see sink/index.h. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/fileio.h"
#include "base/json.h"
#include "base/rm_time.h"
#include "model/streams.h"
#include "sink/index.h"
#include "sink/manifest.h"
#include "sink/names.h"

/* 0 loaded, 1 absent, -1 unreadable or of another format. */
static int load_json(const char *path, const char *format, json_t **out)
{
    *out = NULL;
    json_error_t je;
    json_t *j = json_load_file(path, 0, &je);
    if (!j) return access(path, F_OK) != 0 ? 1 : -1;
    if (!json_is_object(j) || strcmp(rm_jget_str(j, "format"), format)) {
        json_decref(j);
        return -1;
    }
    *out = j;
    return 0;
}

/* ---- what a writer last wrote ---- */

void rm_memo_clear(struct rm_doc_memo *m)
{
    free(m->text);
    json_decref(m->tree);
    *m = (struct rm_doc_memo){0};
}

/* 1 when path is a regular file of exactly text's len bytes, and those bytes. */
static int holds(const char *path, const char *text, size_t len)
{
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) return 0;
    struct stat st;
    int same = 0;
    char *buf = NULL;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && (size_t)st.st_size == len &&
        (buf = malloc(len ? len : 1))) {
        size_t got = 0;
        ssize_t n;
        while (got < len && (n = pread(fd, buf + got, len - got, (off_t)got)) > 0)
            got += (size_t)n;
        same = got == len && !memcmp(buf, text, len);
    }
    free(buf);
    close(fd);
    return same;
}

json_t *rm_memo_take(struct rm_doc_memo *m, const char *sink_dir, const char *name)
{
    char path[PATH_MAX + RM_SESSION_ID_MAX + 32];
    json_t *t = NULL;
    if (m->tree && (size_t)snprintf(path, sizeof path, "%s/%s", sink_dir, name) < sizeof path &&
        holds(path, m->text, m->len))
        t = json_incref(m->tree);
    rm_memo_clear(m);
    return t;
}

/* Writes j's text to path through tmp (durable or only atomic); memo (may be NULL) then
 * keeps that text and tree. */
static int write_doc(const char *path, const char *tmp, const json_t *j, int durable,
                     struct rm_doc_memo *memo, json_t *tree)
{
    if (memo) rm_memo_clear(memo);
    char *text = NULL;
    size_t len = 0;
    int rc = rm_json_save_via(path, tmp, j, durable, memo ? &text : NULL, &len);
    if (memo && rc == 0)
        *memo = (struct rm_doc_memo){.text = text, .len = len, .tree = json_incref(tree)};
    return rc;
}

/* ---- state.json ---- */

json_t *rm_state_session(const json_t *doc)
{
    return json_array_get(json_object_get(doc, "sessions"), 0);
}

int rm_state_load(const char *sink_dir, const char *id, json_t **out)
{
    *out = NULL;
    if (!rm_valid_session_id(id)) return -1;
    char path[PATH_MAX + RM_SESSION_ID_MAX + 32];
    snprintf(path, sizeof path, "%s/%s/state.json", sink_dir, id);
    json_t *j;
    int rc = load_json(path, RM_STATE_FORMAT, &j);
    if (rc) return rc;
    json_t *s = json_object_get(j, "session"), *segs = json_object_get(j, "segments");
    if (!json_is_object(s) || !json_is_array(segs) || strcmp(rm_jget_str(s, "session_id"), id)) {
        json_decref(j);
        return -1;
    }
    json_t *doc = rm_manifest_new();
    json_array_append(json_object_get(doc, "sessions"), s);
    json_object_set(doc, "segments", segs);
    json_decref(j);
    /* The confinement rule: a segment name that is not runmon's is dropped. */
    char label[RM_SESSION_ID_MAX + 16];
    snprintf(label, sizeof label, "%s/state.json", id);
    rm_manifest_confine(doc, sink_dir, label);
    *out = doc;
    return 0;
}

int rm_state_save(const char *sink_dir, const char *id, const json_t *doc)
{
    return rm_state_write(sink_dir, id, doc, 1);
}

int rm_state_write(const char *sink_dir, const char *id, const json_t *doc, int durable)
{
    return rm_state_write_memo(sink_dir, id, (json_t *)doc, durable, NULL);
}

int rm_state_write_memo(const char *sink_dir, const char *id, json_t *doc, int durable,
                        struct rm_doc_memo *memo)
{
    if (memo) rm_memo_clear(memo);
    char path[PATH_MAX + RM_SESSION_ID_MAX + 32];
    if (!rm_valid_session_id(id) ||
        (size_t)snprintf(path, sizeof path, "%s/%s/state.json", sink_dir, id) >= sizeof path) {
        errno = EINVAL;
        return -1;
    }
    /* Written under the sink lock, through one temp file in the sink's folder: one left by a
     * writer killed mid-write is found there (rm_sink_open_index removes it). */
    char tmp[PATH_MAX + 32];
    if ((size_t)snprintf(tmp, sizeof tmp, "%s/%s", sink_dir, RM_STATE_TMP) >= sizeof tmp) {
        errno = ENAMETOOLONG;
        return -1;
    }
    json_t *j = json_object();
    json_object_set_new(j, "format", json_string(RM_STATE_FORMAT));
    json_object_set_new(j, "schema_version", json_integer(RM_SINK_SCHEMA_VERSION));
    json_object_set_new(j, "updated_at", rm_jts_or_null(rm_now_realtime_ns()));
    json_t *s = rm_state_session(doc);
    json_object_set(j, "session", s ? s : json_null());
    json_object_set(j, "segments", json_object_get(doc, "segments"));
    int rc = write_doc(path, tmp, j, durable, memo, doc);
    int e = errno;
    json_decref(j);
    errno = e;
    return rc;
}

/* ---- sink.json ---- */

static json_int_t jint(const json_t *o, const char *k)
{
    return json_integer_value(json_object_get(o, k));
}

static void add_to(json_t *o, const char *k, json_int_t by)
{
    json_object_set_new(o, k, json_integer(jint(o, k) + by));
}

/* Adds to one of the accumulated counters (rollover_count, pruned_*). */
static void count(json_t *t, const char *k, json_int_t by)
{
    add_to(json_object_get(t, "counters"), k, by);
}

static json_t *zero_sums(void)
{
    return json_pack("{s:I,s:I,s:I,s:I}", "active_files", (json_int_t)0, "active_bytes",
                     (json_int_t)0, "rows_dropped", (json_int_t)0, "write_errors", (json_int_t)0);
}

json_t *rm_totals_new(void)
{
    json_t *t = json_object();
    json_object_set_new(t, "format", json_string(RM_TOTALS_FORMAT));
    json_object_set_new(t, "schema_version", json_integer(RM_SINK_SCHEMA_VERSION));
    json_object_set_new(t, "updated_at", json_null());
    /* The accumulated counts; derive_counters adds the ones computed from the lists. */
    json_object_set_new(t, "counters",
                        json_pack("{s:i,s:i,s:i}", "rollover_count", 0, "pruned_segment_count", 0,
                                  "pruned_bytes", 0));
    json_object_set_new(t, "finished", zero_sums());
    json_object_set_new(t, "running", json_object());
    json_object_set_new(t, "sealed", json_array());
    json_object_set_new(t, "index",
                        json_pack("{s:i,s:i,s:i}", "lines", 0, "dead", 0, "compactions", 0));
    return t;
}

int rm_totals_load(const char *sink_dir, json_t **out)
{
    char path[PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/sink.json", sink_dir);
    int rc = load_json(path, RM_TOTALS_FORMAT, out);
    if (rc == 0 && (!json_is_object(json_object_get(*out, "running")) ||
                    !json_is_array(json_object_get(*out, "sealed")) ||
                    !json_is_object(json_object_get(*out, "finished")) ||
                    !json_is_object(json_object_get(*out, "counters")))) {
        json_decref(*out);
        *out = NULL;
        rc = -1;
    }
    if (rc) return rc;
    /* The confinement rule on every name retention and recovery will use. */
    json_t *m = json_object();
    json_t *ses = json_array();
    const char *id;
    json_t *r;
    json_object_foreach(json_object_get(*out, "running"), id, r)
        json_array_append_new(ses, json_pack("{s:s}", "session_id", id));
    json_object_set_new(m, "sessions", ses);
    json_object_set(m, "segments", json_object_get(*out, "sealed"));
    json_t *pruning = json_object_get(*out, "pruning");
    if (pruning && !json_is_array(pruning)) json_object_del(*out, "pruning");
    json_t *pm =
        json_array_size(pruning) ? json_pack("{s:[],s:O}", "sessions", "segments", pruning) : NULL;
    if (pm) rm_manifest_confine(pm, sink_dir, "sink.json");
    if (rm_manifest_confine(m, sink_dir, "sink.json")) {
        json_t *keep = json_object();
        size_t i;
        json_array_foreach(ses, i, r)
        {
            const char *k = rm_jget_str(r, "session_id");
            json_object_set(keep, k, json_object_get(json_object_get(*out, "running"), k));
        }
        json_object_set_new(*out, "running", keep);
    }
    json_decref(pm);
    json_decref(m);
    return 0;
}

/* The counters readers see (the 0.1.0 manifest's "counters", same keys and meaning). */
static void derive_counters(json_t *t)
{
    json_int_t files = 0, bytes = 0, dropped = 0, werr = 0;
    const json_t *fin = json_object_get(t, "finished");
    files += jint(fin, "active_files");
    bytes += jint(fin, "active_bytes");
    dropped += jint(fin, "rows_dropped");
    werr += jint(fin, "write_errors");
    const char *k;
    json_t *r;
    json_object_foreach(json_object_get(t, "running"), k, r)
    {
        files += jint(r, "active_files");
        bytes += jint(r, "active_bytes");
        dropped += jint(r, "rows_dropped");
        werr += jint(r, "write_errors");
    }
    size_t i;
    json_t *s;
    json_array_foreach(json_object_get(t, "sealed"), i, s)
    {
        files++;
        bytes += jint(s, "bytes");
    }
    json_array_foreach(json_object_get(t, "pruning"), i, s) /* on disk until deleted */
    {
        if (json_is_true(json_object_get(s, "gone"))) continue; /* deleted, not yet noted */
        files++;
        bytes += jint(s, "bytes");
    }
    json_t *c = json_object_get(t, "counters"); /* rollover_count, pruned_*: accumulated */
    json_object_set_new(c, "final_retained_files", json_integer(files));
    json_object_set_new(c, "final_retained_bytes", json_integer(bytes));
    json_object_set_new(c, "rows_dropped", json_integer(dropped));
    json_object_set_new(c, "write_errors", json_integer(werr));
}

int rm_totals_save(const char *sink_dir, json_t *t)
{
    return rm_totals_write(sink_dir, t, 1);
}

int rm_totals_write(const char *sink_dir, json_t *t, int durable)
{
    return rm_totals_write_memo(sink_dir, t, durable, NULL);
}

int rm_totals_write_memo(const char *sink_dir, json_t *t, int durable, struct rm_doc_memo *memo)
{
    if (memo) rm_memo_clear(memo);
    char path[PATH_MAX + 32];
    if ((size_t)snprintf(path, sizeof path, "%s/sink.json", sink_dir) >= sizeof path) {
        errno = ENAMETOOLONG;
        return -1;
    }
    json_object_set_new(t, "updated_at", rm_jts_or_null(rm_now_realtime_ns()));
    derive_counters(t);
    /* Entries the confinement rule ignored since this process last wrote the totals: each
     * is gone from the file that dropped it once that is written, so each counts once. */
    static atomic_long counted;
    long now = rm_sink_ignored_entries();
    json_int_t before = jint(t, "ignored_entries");
    if (now > counted || json_object_get(t, "ignored_entries"))
        json_object_set_new(t, "ignored_entries", json_integer(before + (now - counted)));
    char tmp[PATH_MAX + 32];
    snprintf(tmp, sizeof tmp, "%s/%s", sink_dir, RM_TOTALS_TMP); /* under the sink lock */
    int rc = write_doc(path, tmp, t, durable, memo, t);
    if (rc == 0)
        counted = now;
    else
        json_object_set_new(t, "ignored_entries", json_integer(before));
    return rc;
}

json_t *rm_totals_contribution(const json_t *doc)
{
    json_t *c = zero_sums();
    size_t i;
    json_t *s;
    json_array_foreach(json_object_get(doc, "segments"), i, s)
    {
        if (json_is_true(json_object_get(s, "pruned")) || strcmp(rm_jget_str(s, "state"), "active"))
            continue;
        add_to(c, "active_files", 1);
        add_to(c, "active_bytes", jint(s, "bytes"));
    }
    json_t *sk = json_object_get(rm_state_session(doc), "sink");
    const char *k;
    json_t *v;
    json_object_foreach(json_object_get(sk, "rows_dropped"), k, v)
        add_to(c, "rows_dropped", json_integer_value(v));
    add_to(c, "write_errors", jint(sk, "write_errors"));
    return c;
}

void rm_totals_set_running(json_t *t, const char *id, const char *host, json_int_t pid,
                           json_t *contribution)
{
    json_object_set_new(contribution, "host", json_string(host));
    json_object_set_new(contribution, "pid", json_integer(pid));
    /* Where its lines begin (rm_sink_reserve) stays as long as it runs. */
    json_t *at = json_object_get(json_object_get(json_object_get(t, "running"), id), "index_at");
    if (at && !json_object_get(contribution, "index_at"))
        json_object_set(contribution, "index_at", at);
    json_object_set_new(json_object_get(t, "running"), id, contribution);
}

void rm_totals_finish(json_t *t, const char *id, json_t *contribution)
{
    json_t *fin = json_object_get(t, "finished");
    static const char *const keys[] = {"active_files", "active_bytes", "rows_dropped",
                                       "write_errors"};
    for (size_t i = 0; i < sizeof keys / sizeof *keys; i++)
        add_to(fin, keys[i], jint(contribution, keys[i]));
    json_decref(contribution);
    json_object_del(json_object_get(t, "running"), id);
}

/* The entry of sealed segment (sid, file) in the totals' list, or NULL. */
static json_t *listed(const json_t *t, const char *sid, const char *file)
{
    size_t i;
    json_t *s;
    json_array_foreach(json_object_get(t, "sealed"), i, s)
    {
        if (!strcmp(rm_jget_str(s, "file"), file) && !strcmp(rm_jget_str(s, "session_id"), sid))
            return s;
    }
    return NULL;
}

void rm_totals_add_sealed(json_t *t, const json_t *seg)
{
    const char *sid = rm_jget_str(seg, "session_id"), *file = rm_jget_str(seg, "file");
    json_t *pruning = json_object_get(t, "pruning");
    for (size_t j = 0; j < json_array_size(pruning); j++) { /* chosen for deletion already */
        json_t *x = json_array_get(pruning, j);
        if (!strcmp(rm_jget_str(x, "file"), file) && !strcmp(rm_jget_str(x, "session_id"), sid))
            return;
    }
    json_t *known = listed(t, sid, file);
    if (known) { /* the same segment again: its bytes may have been corrected (recovery) */
        json_object_set_new(known, "bytes", json_integer(jint(seg, "bytes")));
        return;
    }
    json_t *last = json_object_get(seg, "last_row_at");
    json_array_append_new(json_object_get(t, "sealed"),
                          json_pack("{s:s,s:s,s:s,s:I,s:O}", "session_id", sid, "file", file,
                                    "stream", rm_jget_str(seg, "stream"), "bytes",
                                    jint(seg, "bytes"), "last_row_at", last ? last : json_null()));
    count(t, "rollover_count", 1);
}

void rm_totals_add_pruned(json_t *t, const json_t *seg)
{
    count(t, "rollover_count", 1);
    count(t, "pruned_segment_count", 1);
    count(t, "pruned_bytes", jint(seg, "bytes"));
}

json_t *rm_totals_plan_prune(json_t *t, int files_per_stream, uint64_t total_bytes)
{
    /* The 0.1.0 planner on a manifest of the sealed list plus one entry for all active bytes. */
    json_t *m = rm_manifest_new();
    json_t *segs = json_object_get(m, "segments");
    size_t i;
    json_t *s;
    json_int_t retained = 0; /* the planner's figure: sealed + active, less what it chose */
    json_array_foreach(json_object_get(t, "sealed"), i, s)
    {
        retained += jint(s, "bytes");
        json_t *e = json_deep_copy(s);
        json_object_set_new(e, "state", json_string("sealed"));
        json_object_set_new(e, "pruned", json_false());
        json_array_append_new(segs, e);
    }
    json_int_t active = jint(json_object_get(t, "finished"), "active_bytes");
    const char *id;
    json_t *r;
    json_object_foreach(json_object_get(t, "running"), id, r) active += jint(r, "active_bytes");
    retained += active;
    json_array_append_new(segs, json_pack("{s:s,s:s,s:s,s:s,s:b,s:I,s:s}", "session_id", "", "file",
                                          "", "stream", "", "state", "active", "pruned", 0, "bytes",
                                          active, "last_row_at", ""));
    json_t *chosen = json_array();
    rm_manifest_plan_prune(m, files_per_stream, total_bytes, chosen);
    json_t *out = json_array();
    json_t *pruning = json_object_get(t, "pruning");
    json_array_foreach(chosen, i, s)
    {
        const char *sid = rm_jget_str(s, "session_id"), *file = rm_jget_str(s, "file");
        json_array_append_new(out, json_pack("{s:s,s:s,s:I}", "session_id", sid, "file", file,
                                             "bytes", jint(s, "bytes")));
        count(t, "pruned_segment_count", 1);
        count(t, "pruned_bytes", jint(s, "bytes"));
        retained -= jint(s, "bytes");
        json_t *sealed = json_object_get(t, "sealed");
        for (size_t j = 0; j < json_array_size(sealed); j++) {
            json_t *x = json_array_get(sealed, j);
            if (!strcmp(rm_jget_str(x, "file"), file) &&
                !strcmp(rm_jget_str(x, "session_id"), sid)) {
                if (!pruning) {
                    pruning = json_array();
                    json_object_set_new(t, "pruning", pruning);
                }
                json_array_append(pruning, x); /* until its file is gone: rm_totals_pruned */
                json_array_remove(sealed, j);
                break;
            }
        }
    }
    /* What this choice was made on, for whoever checks retention from outside: the disk
     * after the newest pass is what it kept plus what grew since, whatever order the
     * segments were sealed in (tests/chaos.sh). */
    size_t nout = json_array_size(out);
    if (nout) {
        json_t *last = json_array_get(out, nout - 1);
        json_object_set_new(
            t, "last_prune",
            json_pack("{s:o,s:I,s:I,s:I,s:O,s:O,s:O}", "at", rm_jts_or_null(rm_now_realtime_ns()),
                      "limit_bytes", (json_int_t)total_bytes, "limit_files",
                      (json_int_t)files_per_stream, "retained_bytes", retained, "session_id",
                      json_object_get(last, "session_id"), "file", json_object_get(last, "file"),
                      "bytes", json_object_get(last, "bytes")));
    }
    json_decref(chosen);
    json_decref(m);
    return out;
}

void rm_totals_pruned(json_t *t, const char *sid, const char *file)
{
    json_t *pruning = json_object_get(t, "pruning");
    for (size_t j = 0; j < json_array_size(pruning); j++) {
        json_t *x = json_array_get(pruning, j);
        if (!strcmp(rm_jget_str(x, "file"), file) && !strcmp(rm_jget_str(x, "session_id"), sid)) {
            json_array_remove(pruning, j);
            break;
        }
    }
    if (pruning && !json_array_size(pruning)) json_object_del(t, "pruning");
}
