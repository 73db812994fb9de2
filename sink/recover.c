/* Opening a sink: the lock, migration of a 0.1.0 manifest.json, rebuilding the index and
 * totals from the session folders, and recovery of sessions whose recorder died. Only
 * migration and rebuilding read every session folder; the everyday open reads the index's
 * header and sink.json, whose size does not grow with the number of sessions. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/fileio.h"
#include "base/json.h"
#include "base/rm_time.h"
#include "model/streams.h"
#include "sink/index.h"
#include "sink/manifest.h"
#include "sink/names.h"
#include "summary/summary.h"

#define SPATH (PATH_MAX + RM_SESSION_ID_MAX + 64)
#define FPATH (SPATH + 64) /* a file in a session folder */

int rm_sink_lock(const char *sink_dir)
{
    return rm_manifest_lock(sink_dir);
}

void rm_sink_unlock(int fd)
{
    rm_manifest_unlock(fd);
}

static json_int_t jint(const json_t *o, const char *k)
{
    return json_integer_value(json_object_get(o, k));
}

/* A segment entry for a file found on disk. Sealed ones get their aggregate (one scan). */
static json_t *segment_from_disk(const char *sdir, const char *sid, const char *name, int k,
                                 int sealed, double interval_s)
{
    char path[FPATH];
    snprintf(path, sizeof path, "%s/%s", sdir, name);
    struct stat st;
    if (lstat(path, &st) != 0 || !S_ISREG(st.st_mode)) return NULL; /* no link is adopted */
    char err[512];
    json_t *agg =
        rm_summary_segment_from_file(rm_stream_defs[k].kind, path, interval_s, err, sizeof err);
    json_t *f = json_object_get(agg, "first_ns"), *l = json_object_get(agg, "last_ns");
    json_t *seg = rm_manifest_segment_entry(
        sid, name, k, sealed, agg ? (uint64_t)jint(agg, "rows") : 0, (uint64_t)st.st_size,
        json_is_integer(f) ? json_integer_value(f) : 0,
        json_is_integer(l) ? json_integer_value(l) : 0);
    json_object_set_new(seg, "adopted", json_true());
    if (sealed && agg)
        json_object_set_new(seg, "aggregate", agg);
    else {
        json_object_set_new(seg, "aggregate", json_null());
        json_decref(agg);
    }
    return seg;
}

static json_t *load_session_doc(const char *sdir)
{
    char path[FPATH];
    snprintf(path, sizeof path, "%s/session.json", sdir);
    json_t *d = json_load_file(path, 0, NULL);
    if (d && !json_is_object(d)) {
        json_decref(d);
        d = NULL;
    }
    return d;
}

static double interval_of(const json_t *doc)
{
    json_t *iv = json_object_get(rm_state_session(doc), "interval_s");
    return json_is_number(iv) ? json_number_value(iv) : 0;
}

/* Adds the segment files of one session folder that doc does not list yet. */
static int adopt_files(json_t *doc, const char *sdir, const char *sid)
{
    DIR *dp = opendir(sdir);
    if (!dp) return 0;
    int changed = 0;
    struct dirent *de;
    while ((de = readdir(dp))) {
        int k, sealed;
        if (!rm_segment_parse_name(de->d_name, &k, &sealed)) continue;
        if (rm_manifest_find_segment(doc, sid, de->d_name)) continue;
        json_t *seg = segment_from_disk(sdir, sid, de->d_name, k, sealed, interval_of(doc));
        if (seg) {
            rm_manifest_put_segment(doc, seg);
            changed++;
        }
    }
    closedir(dp);
    return changed;
}

/* A session document from session.json alone (no state.json yet). */
static json_t *doc_from_session_json(const char *sdir, const char *id)
{
    json_t *sj = load_session_doc(sdir);
    if (!sj) return NULL;
    json_t *e = rm_manifest_session_entry(sj);
    json_decref(sj);
    json_object_set_new(e, "session_id", json_string(id));
    json_t *doc = rm_manifest_new();
    rm_manifest_put_session(doc, e);
    return doc;
}

static int pid_alive(pid_t pid)
{
    if (pid <= 0) return 0;
    return kill(pid, 0) == 0 || errno == EPERM;
}

/* The recorder of the session is gone: mark it, trim its files, fix session.json. */
static void mark_interrupted(const char *sdir, json_t *doc)
{
    json_t *e = rm_state_session(doc);
    const char *sid = rm_jget_str(e, "session_id");
    int64_t last = 0;
    for (int k = 0; k < RM_STREAM_COUNT; k++) {
        char file[32];
        snprintf(file, sizeof file, "%s.csv", rm_stream_defs[k].name);
        json_t *seg = rm_manifest_find_segment(doc, sid, file);
        char path[FPATH];
        snprintf(path, sizeof path, "%s/%s", sdir, file);
        int fd = open(path, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0) continue;
        rm_file_trim_torn(fd);
        struct stat st;
        if (fstat(fd, &st) == 0) {
            if (seg) json_object_set_new(seg, "bytes", json_integer((json_int_t)st.st_size));
            int64_t t = (int64_t)st.st_mtim.tv_sec * RM_NS_PER_SEC + st.st_mtim.tv_nsec;
            if (t > last) last = t;
        }
        close(fd);
    }
    char path[FPATH];
    snprintf(path, sizeof path, "%s/runlog.jsonl", sdir);
    struct stat st;
    if (stat(path, &st) == 0) {
        int64_t t = (int64_t)st.st_mtim.tv_sec * RM_NS_PER_SEC + st.st_mtim.tv_nsec;
        if (t > last) last = t;
    }
    json_object_set_new(e, "status", json_string("interrupted"));
    if (json_is_null(json_object_get(e, "ended_at")) || !json_object_get(e, "ended_at"))
        json_object_set_new(e, "ended_at", rm_jts_or_null(last ? last : rm_now_realtime_ns()));
    json_t *sj = load_session_doc(sdir);
    if (sj) {
        json_object_set_new(sj, "status", json_string("interrupted"));
        json_object_set(sj, "ended_at", json_object_get(e, "ended_at"));
        char *text = json_dumps(sj, JSON_INDENT(2) | JSON_REAL_PRECISION(15));
        if (text) {
            size_t n = strlen(text);
            char *t2 = realloc(text, n + 2);
            if (t2) {
                t2[n] = '\n';
                snprintf(path, sizeof path, "%s/session.json", sdir);
                (void)rm_write_file_atomic(path, t2, n + 1);
                free(t2);
            } else {
                free(text);
            }
        }
        json_decref(sj);
    }
}

/* Session folders under sink_dir (those holding session.json or state.json), by name. */
static char **list_sessions(const char *sink_dir, size_t *n)
{
    *n = 0;
    DIR *dp = opendir(sink_dir);
    if (!dp) return NULL;
    char **v = NULL;
    size_t cap = 0;
    struct dirent *de;
    while ((de = readdir(dp))) {
        if (!strcmp(de->d_name, "latest") || !rm_valid_session_id(de->d_name)) continue;
        char path[SPATH];
        struct stat st;
        snprintf(path, sizeof path, "%s/%s/session.json", sink_dir, de->d_name);
        if (lstat(path, &st) != 0 || !S_ISREG(st.st_mode)) {
            snprintf(path, sizeof path, "%s/%s/state.json", sink_dir, de->d_name);
            if (lstat(path, &st) != 0 || !S_ISREG(st.st_mode)) continue;
        }
        char why[PATH_MAX + 512];
        if (!rm_sink_session_ok(sink_dir, de->d_name, why, sizeof why)) {
            fprintf(stderr, "runmon: %s, ignored\n", why);
            continue;
        }
        if (*n == cap) {
            cap = cap ? cap * 2 : 16;
            char **nv = realloc(v, cap * sizeof *v);
            if (!nv) break;
            v = nv;
        }
        v[(*n)++] = strdup(de->d_name);
    }
    closedir(dp);
    if (*n) qsort(v, *n, sizeof *v, rm_cmp_cstr);
    return v ? v : calloc(1, sizeof *v);
}

/* One session of a rebuild: its document (state.json, else the old manifest's entries, else
 * session.json), stray files adopted, counted into the totals and written to the index. */
static void rebuild_one(const char *sink_dir, const char *id, const json_t *old, json_t *tot,
                        struct rm_index_out *out)
{
    char sdir[SPATH];
    snprintf(sdir, sizeof sdir, "%s/%s", sink_dir, id);
    json_t *doc = NULL;
    int changed = 0;
    if (rm_state_load(sink_dir, id, &doc) != 0) {
        json_t *oe = old ? rm_manifest_find_session(old, id) : NULL;
        doc = doc_from_session_json(sdir, id);
        if (!doc && !oe) return;
        json_t *e = rm_state_session(doc);
        char host[256] = "";
        gethostname(host, sizeof host - 1);
        if (!oe && e && !strcmp(rm_jget_str(e, "status"), "running") &&
            !strcmp(rm_jget_str(e, "host"), host) && pid_alive((pid_t)jint(e, "pid"))) {
            /* A recorder starting right now: it registers its session itself. */
            json_decref(doc);
            return;
        }
        if (!doc) {
            doc = rm_manifest_new();
            rm_manifest_put_session(doc, json_deep_copy(oe));
        } else if (oe && json_object_get(oe, "sink")) { /* what only the manifest knew */
            json_object_set(rm_state_session(doc), "sink", json_object_get(oe, "sink"));
        }
        if (oe) {
            size_t i;
            json_t *s;
            json_array_foreach(json_object_get(old, "segments"), i, s)
            {
                if (!strcmp(rm_jget_str(s, "session_id"), id))
                    rm_manifest_put_segment(doc, json_deep_copy(s));
            }
            /* The manifest's session entry is newer than session.json when recovery marked
             * it: keep its status and end. */
            json_object_set(rm_state_session(doc), "status", json_object_get(oe, "status"));
            json_t *ea = json_object_get(oe, "ended_at");
            if (ea) json_object_set(rm_state_session(doc), "ended_at", ea);
        }
        changed = 1;
    }
    changed += adopt_files(doc, sdir, id);
    if (changed && rm_state_save(sink_dir, id, doc) < 0)
        fprintf(stderr, "runmon: cannot write %s/state.json: %s\n", sdir, strerror(errno));
    size_t i;
    json_t *s;
    json_array_foreach(json_object_get(doc, "segments"), i, s)
    {
        if (strcmp(rm_jget_str(s, "state"), "sealed")) continue;
        if (json_is_true(json_object_get(s, "pruned")))
            rm_totals_add_pruned(tot, s);
        else
            rm_totals_add_sealed(tot, s);
    }
    json_t *e = rm_state_session(doc);
    json_t *c = rm_totals_contribution(doc);
    if (!strcmp(rm_jget_str(e, "status"), "running"))
        rm_totals_set_running(tot, id, rm_jget_str(e, "host"), jint(e, "pid"), c);
    else
        rm_totals_finish(tot, id, c);
    json_t *line = rm_index_line(doc, "adopted");
    json_object_set_new(line, "ts", rm_jts_or_null(rm_now_realtime_ns()));
    rm_index_out_put(out, line);
    json_decref(line);
    json_decref(doc);
}

/* A 0.1.0 manifest.json, when there is a readable one. */
static json_t *old_manifest(const char *sink_dir)
{
    json_t *m = NULL;
    char why[1024];
    int rc = rm_manifest_load(sink_dir, &m, why, sizeof why);
    if (rc < 0) fprintf(stderr, "runmon: %s: rebuilding from the session folders\n", why);
    return rc == 0 ? m : NULL;
}

/* Rebuilds index.jsonl and sink.json from the folders (and a 0.1.0 manifest.json, which is
 * then kept as manifest.json.0.1.0). Under the lock. 0, or -1 with errno. */
static int rebuild(const char *sink_dir, const char *own_id)
{
    char mpath[PATH_MAX + 32], kept[PATH_MAX + 48];
    snprintf(mpath, sizeof mpath, "%s/manifest.json", sink_dir);
    snprintf(kept, sizeof kept, "%s/manifest.json.0.1.0", sink_dir);
    json_t *old = access(mpath, F_OK) == 0 ? old_manifest(sink_dir) : NULL;
    size_t n;
    char **ids = list_sessions(sink_dir, &n);
    if (!ids) {
        json_decref(old);
        return -1;
    }
    json_t *tot = rm_totals_new();
    struct rm_index_out out;
    if (rm_index_out_open(&out, sink_dir) < 0) {
        int e = errno;
        for (size_t i = 0; i < n; i++)
            free(ids[i]);
        free(ids);
        json_decref(tot);
        json_decref(old);
        errno = e;
        return -1;
    }
    /* The manifest's order first (the order `runmon sessions` printed), then the others. */
    size_t i;
    json_t *e;
    json_array_foreach(json_object_get(old, "sessions"), i, e)
    {
        const char *id = rm_jget_str(e, "session_id");
        char why[PATH_MAX + 512];
        if ((!own_id || strcmp(id, own_id)) && bsearch(&id, ids, n, sizeof *ids, rm_cmp_cstr) &&
            rm_sink_session_ok(sink_dir, id, why, sizeof why))
            rebuild_one(sink_dir, id, old, tot, &out);
    }
    for (i = 0; i < n; i++) {
        if ((!old || !rm_manifest_find_session(old, ids[i])) && (!own_id || strcmp(ids[i], own_id)))
            rebuild_one(sink_dir, ids[i], old, tot, &out);
        free(ids[i]);
    }
    free(ids);
    json_object_set_new(json_object_get(tot, "index"), "lines", json_integer(out.lines));
    int rc = rm_index_out_commit(&out);
    if (rc == 0) rc = rm_totals_save(sink_dir, tot);
    int err = errno;
    if (rc == 0 && old && rename(mpath, kept) != 0)
        fprintf(stderr, "runmon: cannot rename %s: %s\n", mpath, strerror(errno));
    json_decref(tot);
    json_decref(old);
    errno = err;
    return rc;
}

/* Recovery: every session sink.json lists as running on this host whose recorder is gone
 * is finished (interrupted, unless its state already says how it ended). */
static int recover(const char *sink_dir, json_t *tot, const char *host)
{
    int changed = 0;
    json_t *running = json_object_get(tot, "running");
    const char **ids = calloc(json_object_size(running) + 1, sizeof *ids);
    size_t n = 0;
    const char *id;
    json_t *r;
    json_object_foreach(running, id, r)
    {
        if (strcmp(rm_jget_str(r, "host"), host) || pid_alive((pid_t)jint(r, "pid"))) continue;
        ids[n++] = id;
    }
    for (size_t i = 0; i < n; i++) {
        char sid[RM_SESSION_ID_MAX + 1], sdir[SPATH];
        snprintf(sid, sizeof sid, "%s", ids[i]);
        snprintf(sdir, sizeof sdir, "%s/%s", sink_dir, sid);
        json_t *doc = NULL;
        char why[PATH_MAX + 512];
        if (!rm_sink_session_ok(sink_dir, sid, why, sizeof why) ||
            (rm_state_load(sink_dir, sid, &doc) != 0 &&
             !(doc = doc_from_session_json(sdir, sid)))) {
            json_object_del(running, sid); /* nothing left of it */
            changed++;
            continue;
        }
        const char *event = "ended";
        if (!strcmp(rm_jget_str(rm_state_session(doc), "status"), "running")) {
            mark_interrupted(sdir, doc);
            event = "interrupted";
        }
        adopt_files(doc, sdir, sid);
        size_t k;
        json_t *s;
        json_array_foreach(json_object_get(doc, "segments"), k, s)
        {
            if (!strcmp(rm_jget_str(s, "state"), "sealed") &&
                !json_is_true(json_object_get(s, "pruned")))
                rm_totals_add_sealed(tot, s);
        }
        if (rm_state_save(sink_dir, sid, doc) < 0)
            fprintf(stderr, "runmon: cannot write %s/state.json: %s\n", sdir, strerror(errno));
        json_t *line = rm_index_line(doc, event);
        if (rm_index_append(sink_dir, line, 1, tot) < 0)
            fprintf(stderr, "runmon: cannot append to %s/index.jsonl: %s\n", sink_dir,
                    strerror(errno));
        json_decref(line);
        rm_totals_finish(tot, sid, rm_totals_contribution(doc));
        json_decref(doc);
        changed++;
    }
    free(ids);
    return changed;
}

/* The index's first line is an index header. */
static int index_ok(const char *sink_dir)
{
    char path[PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/index.jsonl", sink_dir);
    FILE *f = fopen(path, "re");
    if (!f) return 0;
    char buf[4096];
    int ok = 0;
    if (fgets(buf, sizeof buf, f)) {
        json_t *h = json_loads(buf, JSON_DISABLE_EOF_CHECK, NULL);
        ok = json_is_object(h) && !strcmp(rm_jget_str(h, "format"), RM_INDEX_FORMAT);
        json_decref(h);
    }
    fclose(f);
    return ok;
}

static int any_session_folder(const char *sink_dir)
{
    DIR *dp = opendir(sink_dir);
    if (!dp) return 0;
    int found = 0;
    struct dirent *de;
    char path[SPATH];
    while (!found && (de = readdir(dp))) {
        if (!rm_valid_session_id(de->d_name) || !strcmp(de->d_name, "latest")) continue;
        snprintf(path, sizeof path, "%s/%s/session.json", sink_dir, de->d_name);
        found = access(path, F_OK) == 0;
    }
    closedir(dp);
    return found;
}

void rm_sink_note_pruned(const char *sink_dir, json_t *tot, const char *id, const char *file)
{
    json_t *doc = NULL;
    if (rm_state_load(sink_dir, id, &doc) != 0) return;
    json_t *seg = rm_manifest_find_segment(doc, id, file);
    if (seg && !json_is_true(json_object_get(seg, "pruned"))) {
        json_object_set_new(seg, "pruned", json_true());
        json_object_set_new(seg, "pruned_at", rm_jts_or_null(rm_now_realtime_ns()));
        if (rm_state_save(sink_dir, id, doc) == 0 &&
            !json_object_get(json_object_get(tot, "running"), id)) {
            /* A finished session: its listing (files, bytes) changed. A running one's
             * recorder writes its own line when it ends. */
            json_t *line = rm_index_line(doc, "updated");
            (void)rm_index_append(sink_dir, line, 1, tot);
            json_decref(line);
        }
    }
    json_decref(doc);
}

int rm_sink_open_index(const char *sink_dir, int force_rebuild, const char *own_id, char *err,
                       size_t errsz)
{
    struct stat st;
    if (stat(sink_dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
        snprintf(err, errsz, "%s: %s", sink_dir, errno ? strerror(errno) : "not a directory");
        return -1;
    }
    char path[PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/index.jsonl", sink_dir);
    int have_index = access(path, F_OK) == 0;
    snprintf(path, sizeof path, "%s/manifest.json", sink_dir);
    int have_manifest = access(path, F_OK) == 0;
    snprintf(path, sizeof path, "%s/sink.json", sink_dir);
    int have_totals = access(path, F_OK) == 0;
    if (!have_index && !have_manifest && !have_totals && !force_rebuild &&
        !any_session_folder(sink_dir))
        return 1;
    int lk = rm_sink_lock(sink_dir); /* -1 on a read-only sink: read it as it is */
    json_t *tot = NULL;
    int need = force_rebuild || !index_ok(sink_dir) || rm_totals_load(sink_dir, &tot) != 0;
    int rc = 0;
    if (need) {
        json_decref(tot);
        tot = NULL;
        if (have_index && !index_ok(sink_dir))
            fprintf(stderr, "runmon: %s/index.jsonl: not a runmon sink index, rebuilding it\n",
                    sink_dir);
        if (lk < 0) {
            snprintf(err, errsz, "%s: the sink index needs %s but the sink cannot be written",
                     sink_dir, have_manifest && !have_index ? "migrating" : "rebuilding");
            rc = -1;
        } else if (rebuild(sink_dir, own_id) < 0) {
            snprintf(err, errsz, "%s: cannot rebuild the sink index: %s", sink_dir,
                     strerror(errno));
            rc = -1;
        } else if (rm_totals_load(sink_dir, &tot) != 0) {
            snprintf(err, errsz, "%s/sink.json: unreadable after rebuilding", sink_dir);
            rc = -1;
        }
    }
    if (rc == 0 && tot && lk >= 0) {
        char host[256] = "";
        if (gethostname(host, sizeof host) < 0) snprintf(host, sizeof host, "unknown");
        host[sizeof host - 1] = '\0';
        if (recover(sink_dir, tot, host)) {
            rm_index_maybe_compact(sink_dir, tot);
            if (rm_totals_save(sink_dir, tot) < 0)
                fprintf(stderr, "runmon: cannot write %s/sink.json: %s\n", sink_dir,
                        strerror(errno));
        }
    }
    json_decref(tot);
    rm_sink_unlock(lk);
    return rc;
}
