/* Opening a sink: the lock, migration of a 0.1.0 manifest.json, rebuilding the index and
 * totals from the session folders, and recovery of sessions whose recorder died. Only
 * migration and rebuilding read every session folder; the everyday open reads the index's
 * header and sink.json, whose size does not grow with the number of sessions. An open reads
 * first, then mends (rm_sink_open_index: totals_locked, then mend_locked), and a session
 * folder it looks at is opened and listed once (struct folder): its temp files, stray
 * segments, sizes and missing sealed segments all come from that one listing. */
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
#include "sink/liveness.h"
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

/* ---- one read of a session folder ---------------------------------------------------
 * Recovery and rebuilding look at a session folder once: its names, and each segment file's
 * lstat. Everything after (temp files removed, stray segments adopted, the active files
 * settled, sizes and pruned marks from the disk, whether it is a session's) reads that. */

struct fentry {
    char *name;
    int k, sealed;      /* a segment file's stream and kind (k < 0: no segment name) */
    unsigned char type; /* readdir's d_type */
    int stated;         /* st holds its lstat (segment files only; marks when of unknown type) */
    struct stat st;
};

struct folder {
    int fd;     /* the session folder (never through a link), or -1 */
    int listed; /* v holds every name in it (else nothing can be said gone) */
    struct fentry *v;
    size_t n;
};

/* The names a folder's read tells regular files by (their d_type; else an lstat). */
static int is_mark(const char *name)
{
    return !strcmp(name, "session.json") || !strcmp(name, "state.json") ||
           !strcmp(name, RM_RECORDER_LOCK);
}

static int cmp_fentry(const void *a, const void *b)
{
    return strcmp(((const struct fentry *)a)->name, ((const struct fentry *)b)->name);
}

static void folder_close(struct folder *f)
{
    for (size_t i = 0; i < f->n; i++)
        free(f->v[i].name);
    free(f->v);
    if (f->fd >= 0) close(f->fd);
    *f = (struct folder){.fd = -1};
}

/* Session folder id (a name checked as one) of the sink open as sink_fd. */
static int open_session_at(int sink_fd, const char *id)
{
    if (!rm_valid_session_id(id)) {
        errno = EINVAL;
        return -1;
    }
    return openat(sink_fd, id, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
}

/* Reads session folder id of sink_dir once (sorted by name), through sink_fd when it is
 * not -1 (a rebuild opens the sink's folder once). 0; or -1 with errno when it cannot be
 * opened (gone, a link, no folder: f is then empty, fd -1). */
static int folder_read(struct folder *f, int sink_fd, const char *sink_dir, const char *id)
{
    *f = (struct folder){.fd = sink_fd >= 0 ? open_session_at(sink_fd, id)
                                            : rm_sink_open_session_dir(sink_dir, id)};
    if (f->fd < 0) return -1;
    int dup_fd = dup(f->fd);
    DIR *dp = dup_fd >= 0 ? fdopendir(dup_fd) : NULL;
    if (!dp) {
        if (dup_fd >= 0) close(dup_fd);
        return 0; /* opened, not listed */
    }
    size_t cap = 0;
    for (;;) {
        errno = 0;
        struct dirent *de = readdir(dp);
        if (!de) {
            f->listed = errno == 0; /* the end, not an error */
            break;
        }
        if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..")) continue;
        if (f->n == cap) {
            size_t nc = cap ? cap * 2 : 32;
            struct fentry *nv = realloc(f->v, nc * sizeof *nv);
            if (!nv) break;
            f->v = nv;
            cap = nc;
        }
        struct fentry *e = &f->v[f->n];
        *e = (struct fentry){.name = strdup(de->d_name), .k = -1, .type = de->d_type};
        if (!e->name) break;
        if (!rm_segment_parse_name(e->name, &e->k, &e->sealed)) e->k = -1;
        if ((e->k >= 0 || (de->d_type == DT_UNKNOWN && is_mark(e->name))) &&
            fstatat(f->fd, e->name, &e->st, AT_SYMLINK_NOFOLLOW) == 0)
            e->stated = 1;
        f->n++;
    }
    closedir(dp);
    if (f->n) qsort(f->v, f->n, sizeof *f->v, cmp_fentry);
    return 0;
}

static struct fentry *folder_get(const struct folder *f, const char *name)
{
    struct fentry key = {.name = (char *)name};
    return f->n ? bsearch(&key, f->v, f->n, sizeof *f->v, cmp_fentry) : NULL;
}

/* name may be in the folder: it was listed there, or the folder could not be listed. */
static int folder_may_hold(const struct folder *f, const char *name)
{
    return !f->listed || folder_get(f, name) != NULL;
}

/* name is in the folder as a regular file (not a link). */
static int folder_has_file(const struct folder *f, const char *name)
{
    const struct fentry *e = folder_get(f, name);
    return e && (e->stated ? S_ISREG(e->st.st_mode) : e->type == DT_REG);
}

/* A session folder: it holds session.json or state.json, or only the recorder's lock file
 * (a recorder killed before its first document). */
static int folder_is_session(const struct folder *f)
{
    return folder_has_file(f, "session.json") || folder_has_file(f, "state.json") ||
           folder_has_file(f, RM_RECORDER_LOCK);
}

/* A segment entry for a file found on disk. Sealed ones get their aggregate (one scan). */
static json_t *segment_from_disk(const char *sdir, const char *sid, const struct fentry *fe,
                                 double interval_s, const struct rm_segment_phases *ph)
{
    const char *name = fe->name;
    int k = fe->k, sealed = fe->sealed;
    const struct stat st = fe->st;
    if (!fe->stated || !S_ISREG(st.st_mode)) return NULL; /* no link is adopted */
    char path[FPATH], err[512];
    snprintf(path, sizeof path, "%s/%s", sdir, name);
    json_t *agg = rm_summary_segment_from_file_with(rm_stream_defs[k].kind, path, interval_s, ph,
                                                    err, sizeof err);
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

/* session.json, when the folder (f, read) may hold one: NULL when not, or not a JSON object. */
static json_t *load_session_doc(const struct folder *f, const char *sdir)
{
    if (!folder_may_hold(f, "session.json")) return NULL;
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

/* Adds the segment files of one session folder (f, read) that doc does not list yet. The run
 * log's phases are read once for all of them (once per file, a run log of many metric lines
 * made a rebuild minutes long), and only for a sealed file: an active file's entry keeps no
 * aggregate, and its rows and times do not depend on the phases. */
static int adopt_files(json_t *doc, const struct folder *f, const char *sdir, const char *sid)
{
    int changed = 0, read = 0;
    struct rm_segment_phases *ph = NULL;
    for (size_t i = 0; i < f->n; i++) {
        const struct fentry *fe = &f->v[i];
        if (fe->k < 0 || rm_manifest_find_segment(doc, sid, fe->name)) continue;
        if (fe->sealed && !read++) ph = rm_summary_segment_phases(sdir);
        json_t *seg = segment_from_disk(sdir, sid, fe, interval_of(doc), fe->sealed ? ph : NULL);
        if (seg) {
            rm_manifest_put_segment(doc, seg);
            changed++;
        }
    }
    rm_summary_segment_phases_free(ph);
    return changed;
}

/* Each unpruned segment of session sid that doc lists, as its folder (f, read) has it, in
 * one walk: its bytes the file's size (a state.json's figure is never trusted over the
 * file: a size that is no number of bytes would list as 0 B); a sealed one whose file is
 * gone marked pruned (pruned_at: now). Retention deletes a file before it marks the owner's
 * state.json, and a recorder that cannot write that file (a file-size limit) leaves the mark
 * unwritten; a rebuild that trusted the entry would count bytes no longer on disk. Names that
 * are no segment file's are left alone; nothing is followed through a link. Returns how many
 * changed. */
static int segments_from_disk(json_t *doc, const struct folder *f, const char *sid)
{
    if (!f->listed) return 0;
    int changed = 0;
    size_t i;
    json_t *s;
    json_array_foreach(json_object_get(doc, "segments"), i, s)
    {
        const char *file = rm_jget_str(s, "file");
        int k, sealed;
        if (strcmp(rm_jget_str(s, "session_id"), sid) ||
            json_is_true(json_object_get(s, "pruned")) || !rm_segment_parse_name(file, &k, &sealed))
            continue;
        const struct fentry *fe = folder_get(f, file);
        if (!fe) { /* gone */
            if (!sealed || strcmp(rm_jget_str(s, "state"), "sealed")) continue;
            json_object_set_new(s, "pruned", json_true());
            json_object_set_new(s, "pruned_at", rm_jts_or_null(rm_now_realtime_ns()));
            changed++;
            continue;
        }
        if (!fe->stated || !S_ISREG(fe->st.st_mode)) continue;
        json_t *b = json_object_get(s, "bytes");
        if (json_is_integer(b) && json_integer_value(b) == (json_int_t)fe->st.st_size) continue;
        json_object_set_new(s, "bytes", json_integer((json_int_t)fe->st.st_size));
        changed++;
    }
    return changed;
}

int rm_sink_doc_from_disk(const char *sink_dir, json_t *doc)
{
    const char *sid = rm_jget_str(rm_state_session(doc), "session_id");
    struct folder f; /* not opened (nothing changes) when sid is no folder of the sink's */
    folder_read(&f, -1, sink_dir, sid);
    int changed = segments_from_disk(doc, &f, sid);
    folder_close(&f);
    return changed;
}

/* A session document from session.json (sj, may be NULL) alone (no state.json yet). */
static json_t *doc_from_session_json(const json_t *sj, const char *id)
{
    if (!sj) return NULL;
    json_t *e = rm_manifest_session_entry(sj);
    json_object_set_new(e, "session_id", json_string(id));
    json_t *doc = rm_manifest_new();
    rm_manifest_put_session(doc, e);
    return doc;
}

/* A session document from nothing but what the sink knows of it (`known`: its sink.json
 * running entry or an index line: host, pid, started_at), for a folder its recorder left
 * before writing session.json. */
static json_t *doc_minimal(const char *id, const json_t *known)
{
    json_t *e = json_object();
    json_object_set_new(e, "session_id", json_string(id));
    json_object_set_new(e, "status", json_string("running"));
    json_t *h = json_object_get(known, "host");
    json_object_set_new(e, "host", json_is_string(h) ? json_copy(h) : json_null());
    json_object_set_new(e, "pid", json_integer(jint(known, "pid")));
    json_t *sa = json_object_get(known, "started_at");
    int64_t t0 = rm_session_id_start_ns(id);
    json_object_set_new(e, "started_at",
                        json_is_string(sa) ? json_copy(sa)
                        : t0               ? rm_jts_or_null(t0)
                                           : json_null());
    json_object_set_new(e, "ended_at", json_null());
    json_object_set_new(e, "command", json_null());
    json_object_set_new(e, "exit_code", json_null());
    json_t *doc = rm_manifest_new();
    rm_manifest_put_session(doc, e);
    return doc;
}

/* The recorder is dead, so its active files (in folder f, read) are final: each one's bytes
 * are taken from the disk, and with trim its torn last line is cut first (f then holds the
 * new size). Returns the time of the last write to the session's files (epoch ns; 0 when
 * there is none). */
static int64_t settle_files(struct folder *f, json_t *doc, int trim)
{
    const char *sid = rm_jget_str(rm_state_session(doc), "session_id");
    int64_t last = 0;
    struct stat st;
    for (int k = 0; k < RM_STREAM_COUNT; k++) {
        char file[32];
        snprintf(file, sizeof file, "%s.csv", rm_stream_defs[k].name);
        struct fentry *fe = folder_get(f, file);
        if (!fe || !fe->stated || !S_ISREG(fe->st.st_mode)) continue;
        json_t *seg = rm_manifest_find_segment(doc, sid, file);
        int fd = openat(f->fd, file, (trim ? O_RDWR : O_RDONLY) | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0) continue;
        if (trim) rm_file_trim_torn(fd);
        if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
            fe->st = st;
            if (seg) json_object_set_new(seg, "bytes", json_integer((json_int_t)st.st_size));
            int64_t t = (int64_t)st.st_mtim.tv_sec * RM_NS_PER_SEC + st.st_mtim.tv_nsec;
            if (t > last) last = t;
        }
        close(fd);
    }
    if (f->fd >= 0 && fstatat(f->fd, "runlog.jsonl", &st, 0) == 0) {
        int64_t t = (int64_t)st.st_mtim.tv_sec * RM_NS_PER_SEC + st.st_mtim.tv_nsec;
        if (t > last) last = t;
    }
    return last;
}

static int ended_status(const char *status)
{
    return !strcmp(status, "completed") || !strcmp(status, "failed") ||
           !strcmp(status, "interrupted");
}

/* Copies how src says the session ended into entry e. */
/* The rows lost and the write errors an ended line names (its "sink": only when there were
 * any) are at least e's: a state.json the end could not write still says fewer. */
static void take_losses(json_t *e, const json_t *line)
{
    json_t *ls = json_object_get(line, "sink");
    if (!json_is_object(ls)) return;
    json_t *sk = json_object_get(e, "sink");
    if (!json_is_object(sk)) {
        sk = json_object();
        json_object_set_new(e, "sink", sk);
    }
    json_t *dr = json_object_get(sk, "rows_dropped"), *v;
    if (!json_is_object(dr)) {
        dr = json_object();
        json_object_set_new(sk, "rows_dropped", dr);
    }
    const char *name;
    json_object_foreach(json_object_get(ls, "rows_dropped"), name, v)
    {
        if (rm_stream_by_name(name) >= 0 && json_integer_value(v) > jint(dr, name))
            json_object_set_new(dr, name, json_integer(json_integer_value(v)));
    }
    json_int_t werr = jint(ls, "write_errors");
    if (werr > jint(sk, "write_errors"))
        json_object_set_new(sk, "write_errors", json_integer(werr));
}

static void take_end(json_t *e, const json_t *src)
{
    static const char *const keys[] = {"status", "ended_at", "exit_code"};
    for (size_t i = 0; i < sizeof keys / sizeof *keys; i++) {
        json_t *v = json_object_get(src, keys[i]);
        json_object_set_new(e, keys[i], v ? json_copy(v) : json_null());
    }
    take_losses(e, src);
}

/* How session entry e ends, its recorder being dead. The evidence, newest first: the index's
 * newest line of the session when it says the session ended (a recorder writes its end there
 * even when state.json cannot be written), state.json's status, session.json's (written at
 * the end before the sink's files), else "interrupted", ended at the last write to its files.
 * Returns the event of the index line to append, or NULL when the index already says it. */
static const char *decide_end(json_t *e, const json_t *newest, const json_t *sj, int64_t last)
{
    if (newest && ended_status(rm_jget_str(newest, "status"))) {
        take_end(e, newest);
        return NULL;
    }
    if (ended_status(rm_jget_str(e, "status"))) return "ended";
    if (sj && ended_status(rm_jget_str(sj, "status")) &&
        json_is_string(json_object_get(sj, "ended_at"))) {
        take_end(e, sj);
        return "ended";
    }
    json_object_set_new(e, "status", json_string("interrupted"));
    if (!json_is_string(json_object_get(e, "ended_at")))
        json_object_set_new(e, "ended_at", rm_jts_or_null(last ? last : rm_now_realtime_ns()));
    return "interrupted";
}

/* session.json says how the session ended (status, ended_at, exit_code from e). */
static void mend_session_json(const char *sdir, json_t *sj, const json_t *e)
{
    take_end(sj, e);
    char *text = json_dumps(sj, JSON_INDENT(2) | JSON_REAL_PRECISION(15));
    if (!text) return;
    size_t n = strlen(text);
    char *t2 = realloc(text, n + 2);
    if (!t2) {
        free(text);
        return;
    }
    t2[n] = '\n';
    char path[FPATH];
    snprintf(path, sizeof path, "%s/session.json", sdir);
    if (rm_write_file_atomic(path, t2, n + 1) < 0)
        fprintf(stderr, "runmon: cannot write %s: %s\n", path, strerror(errno));
    free(t2);
}

/* "<name>.tmp.<pid>": the temp file of one of a session's own files (base/fileio.h), and
 * its pid. */
static int temp_name(const char *name, long long *pid)
{
    static const char *const bases[] = {"state.json", "session.json", "summary.json", "report.html",
                                        RM_RECORDER_LOCK};
    const char *dot = strstr(name, ".tmp.");
    if (!dot || !dot[5]) return 0;
    for (const char *p = dot + 5; *p; p++)
        if (*p < '0' || *p > '9') return 0;
    size_t bl = (size_t)(dot - name);
    for (size_t i = 0; i < sizeof bases / sizeof *bases; i++) {
        if (strlen(bases[i]) == bl && !strncmp(name, bases[i], bl)) {
            *pid = strtoll(dot + 5, NULL, 10);
            return 1;
        }
    }
    return 0;
}

/* Removes the temp files that writers now dead left in the session's folder (f, read), and
 * those its recorder (rec_pid) left in the sink's own folder. A temp file of a live pid is
 * left. */
static void remove_stray_temps(const char *sink_dir, const struct folder *f, long long rec_pid)
{
    long long pid;
    for (size_t i = 0; i < f->n; i++)
        if (temp_name(f->v[i].name, &pid) && !rm_pid_exists(pid))
            (void)unlinkat(f->fd, f->v[i].name, 0);
    if (rec_pid <= 0 || rm_pid_exists(rec_pid)) return;
    static const char *const sink_temps[] = {"sink.json.tmp", ".index.jsonl.tmp",
                                             ".latest.tmp"}; /* of 0.2.0 too */
    for (size_t i = 0; i < sizeof sink_temps / sizeof *sink_temps; i++) {
        char path[PATH_MAX + 64];
        snprintf(path, sizeof path, "%s/%s.%lld", sink_dir, sink_temps[i], rec_pid);
        (void)unlink(path);
    }
}

/* The lock file of a dead recorder (sink/liveness.h): unlocked, empty, no use to anyone once
 * state.json says how the session ended. */
static void drop_claim(const struct folder *f)
{
    if (f->fd >= 0) (void)unlinkat(f->fd, RM_RECORDER_LOCK, 0);
}

/* Ends session id, whose recorder is dead. Its status is decided (decide_end); with write,
 * under the lock, its files are mended: torn lines of its active files cut, stray segment
 * files adopted, state.json and session.json say how it ended, stray temp files removed; its
 * contribution moves out of tot's running list (when it is there: a session the totals
 * already finished is not counted twice) and an index line is appended unless the index
 * already says how it ended. Without write nothing is written (a read-only sink). `known`:
 * what the caller knows of it (an index line or its running entry), or NULL. Returns the
 * session's index line as it now stands (a new reference), or NULL when nothing of it is
 * left (its running entry is then dropped). */
static json_t *finish_dead(const char *sink_dir, json_t *tot, const char *id, const json_t *known,
                           int write)
{
    char sdir[SPATH];
    snprintf(sdir, sizeof sdir, "%s/%s", sink_dir, id);
    json_t *running = json_object_get(tot, "running");
    json_t *run = json_object_get(running, id);
    /* The folder, read once: gone, a link or no folder leaves nothing of the session. */
    struct folder f;
    if (folder_read(&f, -1, sink_dir, id) < 0 && errno != EACCES) {
        if (write && run) json_object_del(running, id); /* nothing left of it */
        return NULL;
    }
    json_t *newest = rm_index_newest(sink_dir, id, run ? jint(run, "index_at") : 0);
    json_t *sj = load_session_doc(&f, sdir), *doc = NULL;
    if ((!folder_may_hold(&f, "state.json") || rm_state_load(sink_dir, id, &doc) != 0) &&
        !(doc = doc_from_session_json(sj, id)))
        doc = doc_minimal(id, newest ? newest : known ? known : run);
    json_t *e = rm_state_session(doc);
    int64_t last = settle_files(&f, doc, write && run);
    segments_from_disk(doc, &f, id);
    const char *event = decide_end(e, newest, sj, last);
    if (write) {
        if (run) adopt_files(doc, &f, sdir, id);
        if (sj && strcmp(rm_jget_str(sj, "status"), rm_jget_str(e, "status")))
            mend_session_json(sdir, sj, e);
        if (rm_state_save(sink_dir, id, doc) < 0)
            fprintf(stderr, "runmon: cannot write %s/state.json: %s\n", sdir, strerror(errno));
        else
            drop_claim(&f); /* the session says how it ended: the dead claim goes */
        remove_stray_temps(sink_dir, &f, jint(e, "pid"));
        json_t *now = rm_index_line(doc, event ? event : "updated");
        /* The index says how it ended, but not what is left: a segment another recorder's
         * retention pruned after the end line was written. */
        int stale = !event && newest &&
                    (jint(now, "files") != jint(newest, "files") ||
                     jint(now, "bytes") != jint(newest, "bytes"));
        json_decref(now);
        if (event || stale) {
            json_t *line = rm_index_line(doc, event ? event : "updated");
            if (rm_index_append(sink_dir, line, 1, tot) < 0)
                fprintf(stderr, "runmon: cannot append to %s/index.jsonl: %s\n", sink_dir,
                        strerror(errno));
            json_decref(line);
        }
        if (run) {
            size_t k;
            json_t *s;
            json_array_foreach(json_object_get(doc, "segments"), k, s)
            {
                if (!strcmp(rm_jget_str(s, "state"), "sealed") &&
                    !json_is_true(json_object_get(s, "pruned")))
                    rm_totals_add_sealed(tot, s);
            }
            rm_totals_finish(tot, id, rm_totals_contribution(doc));
        }
    }
    json_t *line = rm_index_line(doc, event ? event : rm_jget_str(newest, "event"));
    json_t *unw = json_object_get(newest, "unwritten");
    if (!event && unw) json_object_set(line, "unwritten", unw);
    json_decref(newest);
    json_decref(sj);
    json_decref(doc);
    folder_close(&f);
    return line;
}

/* Whether the entry id of the sink's folder that is no session folder of its own (a link, a
 * file) would pass for one through the link: then it is said to be ignored. */
static int looks_like_session(const char *sink_dir, const char *id)
{
    static const char *const marks[] = {"session.json", "state.json", RM_RECORDER_LOCK};
    for (size_t m = 0; m < sizeof marks / sizeof *marks; m++) {
        char path[SPATH];
        struct stat st;
        snprintf(path, sizeof path, "%s/%s/%s", sink_dir, id, marks[m]);
        if (lstat(path, &st) == 0 && S_ISREG(st.st_mode)) return 1;
    }
    return 0;
}

/* The candidate session folders under sink_dir: folders (no link) named as a session, by
 * name. Whether each is one (folder_is_session) is seen when it is read (rebuild_one). */
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
        if (de->d_type != DT_DIR && de->d_type != DT_UNKNOWN && de->d_type != DT_LNK) continue;
        char why[PATH_MAX + 512];
        if (!rm_sink_session_ok_at(dirfd(dp), sink_dir, de->d_name, why, sizeof why)) {
            if (looks_like_session(sink_dir, de->d_name))
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

/* rebuild_one of a session folder (f, read). */
static void rebuild_read(const char *sink_dir, const char *id, const struct folder *f,
                         const json_t *old, json_t *tot, struct rm_index_out *out)
{
    char sdir[SPATH];
    snprintf(sdir, sizeof sdir, "%s/%s", sink_dir, id);
    json_t *doc = NULL;
    long ignored = rm_sink_ignored_entries();
    int changed = 0;
    if (!folder_may_hold(f, "state.json") || rm_state_load(sink_dir, id, &doc) != 0) {
        json_t *oe = old ? rm_manifest_find_session(old, id) : NULL;
        json_t *sj = load_session_doc(f, sdir);
        doc = doc_from_session_json(sj, id);
        json_decref(sj);
        if (!doc && !oe) {
            /* Only the lock file: a recorder starting now, or one killed before it wrote
             * session.json (this host's, by the id's form). */
            char host[256];
            rm_this_host(host, sizeof host);
            const char *dash = strrchr(id, '-');
            json_t *known = json_pack("{s:s,s:I}", "host", host, "pid",
                                      (json_int_t)(dash ? strtoll(dash + 1, NULL, 10) : 0));
            doc = doc_minimal(id, known);
            json_decref(known);
        }
        json_t *e = rm_state_session(doc);
        if (!oe && e && !strcmp(rm_jget_str(e, "status"), "running") &&
            rm_recorder_liveness(sink_dir, id, rm_jget_str(e, "host"), jint(e, "pid"),
                                 rm_session_id_start_ns(id)) != RM_RECORDER_DEAD) {
            /* A recorder starting right now (or of another host): it registers its session
             * itself. It stays listed as running in the totals, so that recovery finds it
             * should it die before that. */
            rm_totals_set_running(tot, id, rm_jget_str(e, "host"), jint(e, "pid"),
                                  rm_totals_contribution(doc));
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
    remove_stray_temps(sink_dir, f, 0);
    changed += adopt_files(doc, f, sdir, id);
    changed += segments_from_disk(doc, f, id);
    changed += rm_sink_ignored_entries() != ignored; /* entries dropped: gone from the file */
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

/* One session of a rebuild, its folder read once: its document (state.json, else the old
 * manifest's entries, else session.json), stray files adopted, counted into the totals and
 * written to the index. A folder that is no session's (folder_is_session) is passed over. */
static void rebuild_one(int sink_fd, const char *sink_dir, const char *id, const json_t *old,
                        json_t *tot, struct rm_index_out *out)
{
    struct folder f;
    if (folder_read(&f, sink_fd, sink_dir, id) < 0 || !folder_is_session(&f)) {
        folder_close(&f);
        return;
    }
    rebuild_read(sink_dir, id, &f, old, tot, out);
    folder_close(&f);
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
    /* The manifest's order first (the order `runmon sessions` printed), then the others.
     * Each folder is read once, through the sink's folder opened once; list_sessions
     * checked every name it gives. */
    int sink_fd = open(sink_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    size_t i;
    json_t *e;
    json_array_foreach(json_object_get(old, "sessions"), i, e)
    {
        const char *id = rm_jget_str(e, "session_id");
        if ((!own_id || strcmp(id, own_id)) && bsearch(&id, ids, n, sizeof *ids, rm_cmp_cstr))
            rebuild_one(sink_fd, sink_dir, id, old, tot, &out);
    }
    for (i = 0; i < n; i++) {
        if ((!old || !rm_manifest_find_session(old, ids[i])) && (!own_id || strcmp(ids[i], own_id)))
            rebuild_one(sink_fd, sink_dir, ids[i], old, tot, &out);
        free(ids[i]);
    }
    free(ids);
    if (sink_fd >= 0) close(sink_fd);
    json_object_set_new(json_object_get(tot, "index"), "lines", json_integer(out.lines));
    /* The totals first: an index committed beside the old totals would pass for a sink in
     * order; new totals beside a broken index are rebuilt again at the next open. */
    int rc = out.failed ? -1 : rm_totals_save(sink_dir, tot);
    int err = errno;
    if (rc != 0) out.failed = 1; /* the temp file removed */
    if (rm_index_out_commit(&out) != 0 && rc == 0) {
        rc = -1;
        err = errno;
    }
    if (rc == 0 && old && rename(mpath, kept) != 0)
        fprintf(stderr, "runmon: cannot rename %s: %s\n", mpath, strerror(errno));
    json_decref(tot);
    json_decref(old);
    errno = err;
    return rc;
}

/* Recovery: every session sink.json lists as running whose recorder is dead (this host's:
 * sink/liveness.h) is finished (finish_dead). Returns how many. */
static int recover(const char *sink_dir, json_t *tot, json_t *ended)
{
    json_t *running = json_object_get(tot, "running");
    char(*ids)[RM_SESSION_ID_MAX + 1] = calloc(json_object_size(running) + 1, sizeof *ids);
    size_t n = 0;
    const char *id;
    json_t *r;
    json_object_foreach(running, id, r)
    {
        if (ids && rm_recorder_liveness(sink_dir, id, rm_jget_str(r, "host"), jint(r, "pid"),
                                        rm_session_id_start_ns(id)) == RM_RECORDER_DEAD)
            snprintf(ids[n++], sizeof ids[0], "%s", id);
    }
    for (size_t i = 0; i < n; i++) {
        json_decref(finish_dead(sink_dir, tot, ids[i], NULL, 1));
        json_array_append_new(ended, json_string(ids[i]));
    }
    free(ids);
    return (int)n;
}

static rm_sink_summary_writer summary_writer;

void rm_sink_set_summary_writer(rm_sink_summary_writer w)
{
    summary_writer = w;
}

/* summary.json of session id is missing and its end could not write it (its newest index
 * line names it in "unwritten"). */
static int summary_due(const char *sink_dir, const char *id)
{
    char path[SPATH];
    snprintf(path, sizeof path, "%s/%s/summary.json", sink_dir, id);
    if (access(path, F_OK) == 0) return 0;
    json_t *newest = rm_index_newest(sink_dir, id, 0);
    int due = 0;
    size_t i;
    json_t *v;
    json_array_foreach(json_object_get(newest, "unwritten"), i, v)
    {
        if (json_is_string(v) && !strcmp(json_string_value(v), "summary.json")) due = 1;
    }
    json_decref(newest);
    return due;
}

/* Outside the lock (building a summary opens the sink again): the summaries the ends of the
 * sessions recovery just finished could not write. */
static void write_due_summaries(const char *sink_dir, const json_t *ended)
{
    static int writing; /* the writer opens the sink again: that open writes none */
    if (writing || !summary_writer) return;
    writing = 1;
    size_t i;
    json_t *v;
    json_array_foreach(ended, i, v)
    {
        const char *id = json_string_value(v);
        if (summary_due(sink_dir, id) && summary_writer(sink_dir, id) < 0)
            fprintf(stderr, "runmon: cannot write %s/%s/summary.json: %s\n", sink_dir, id,
                    strerror(errno));
    }
    writing = 0;
}

/* A torn last line of the index (a crash mid-line, a cut file) is cut; when it was the end of
 * a session the totals already finished, that session's newest whole line may still say
 * running: it is finished again from its files (its line appended anew). Returns 1 when
 * something changed. */
static int mend_torn_tail(const char *sink_dir, json_t *tot)
{
    char id[RM_SESSION_ID_MAX + 1];
    if (rm_index_cut_torn(sink_dir, id, sizeof id) != 1) return 0;
    if (!id[0] || json_object_get(json_object_get(tot, "running"), id)) return 1; /* recover() */
    json_t *newest = rm_index_newest(sink_dir, id, 0);
    if (newest && !strcmp(rm_jget_str(newest, "status"), "running") &&
        rm_recorder_liveness(sink_dir, id, rm_jget_str(newest, "host"), jint(newest, "pid"),
                             rm_session_id_start_ns(id)) == RM_RECORDER_DEAD)
        json_decref(finish_dead(sink_dir, tot, id, newest, 1));
    json_decref(newest);
    return 1;
}

json_t *rm_sink_settle(const char *sink_dir, const struct rm_index_rec *r)
{
    if (strcmp(r->status, "running")) return NULL;
    int64_t t0 = 0;
    if (!r->started_at[0] || rm_parse_ts(r->started_at, strlen(r->started_at), &t0) != 0)
        t0 = rm_session_id_start_ns(r->session_id);
    if (rm_recorder_liveness(sink_dir, r->session_id, r->host, r->pid, t0) != RM_RECORDER_DEAD)
        return NULL;
    json_t *known = json_loadb(r->line, r->len, 0, NULL);
    int lk = rm_sink_lock(sink_dir); /* -1 on a read-only sink: decide, write nothing */
    json_t *tot = NULL;
    if (lk >= 0 && rm_totals_load(sink_dir, &tot) != 0) {
        rm_sink_unlock(lk); /* a broken sink.json: the next open rebuilds it */
        lk = -1;
    }
    json_t *line = finish_dead(sink_dir, lk >= 0 ? tot : NULL, r->session_id, known, lk >= 0);
    if (lk >= 0 && rm_totals_save(sink_dir, tot) < 0)
        fprintf(stderr, "runmon: cannot write %s/sink.json: %s\n", sink_dir, strerror(errno));
    json_decref(tot);
    json_decref(known);
    rm_sink_unlock(lk);
    return line;
}

/* 1 when the index's first line is an index header; 0 when it is not, or the index cannot
 * be read; -1 when there is no index. */
static int index_ok(const char *sink_dir)
{
    char path[PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/index.jsonl", sink_dir);
    FILE *f = fopen(path, "re");
    if (!f) return errno == ENOENT ? -1 : 0;
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

/* Whether the sink's folder holds one of a sink's own files (the index first: an everyday
 * open looks no further). */
static int sink_file_exists(const char *sink_dir)
{
    static const char *const names[] = {"index.jsonl", "sink.json", "manifest.json"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        char path[PATH_MAX + 32];
        snprintf(path, sizeof path, "%s/%s", sink_dir, names[i]);
        if (access(path, F_OK) == 0) return 1;
    }
    return 0;
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

/* The segment files (names of segments, regular files) in session folder id, and their
 * bytes. 0, or -1 when the folder cannot be read. */
static int files_on_disk(const char *sink_dir, const char *id, json_int_t *files, json_int_t *bytes)
{
    *files = *bytes = 0;
    int dfd = rm_sink_open_session_dir(sink_dir, id);
    DIR *dp = dfd >= 0 ? fdopendir(dfd) : NULL;
    if (!dp) {
        if (dfd >= 0) close(dfd);
        return -1;
    }
    struct dirent *de;
    while ((de = readdir(dp))) {
        int k, sealed;
        struct stat st;
        if (!rm_segment_parse_name(de->d_name, &k, &sealed) ||
            fstatat(dirfd(dp), de->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode))
            continue;
        (*files)++;
        *bytes += (json_int_t)st.st_size;
    }
    closedir(dp);
    return 0;
}

int rm_sink_note_pruned(const char *sink_dir, json_t *tot, const char *id, const char *file)
{
    json_t *doc = NULL;
    int rc = 0;
    if (rm_state_load(sink_dir, id, &doc) == 0) {
        json_t *seg = rm_manifest_find_segment(doc, id, file);
        if (seg && !json_is_true(json_object_get(seg, "pruned"))) {
            json_object_set_new(seg, "pruned", json_true());
            json_object_set_new(seg, "pruned_at", rm_jts_or_null(rm_now_realtime_ns()));
            /* A pruner that cannot write the owner's state.json (a file-size limit) leaves
             * it saying the file is there: a rebuild marks it from the disk. */
            if (rm_state_save(sink_dir, id, doc) < 0)
                fprintf(stderr, "runmon: cannot write %s/%s/state.json: %s\n", sink_dir, id,
                        strerror(errno));
        }
    }
    /* A running session's recorder (or its recovery) writes its own line from the disk when
     * it ends. A finished one's listing (files, bytes) changed: its newest line again with
     * the figures of its folder, whatever its state.json says or whether it could be read. */
    if (!json_object_get(json_object_get(tot, "running"), id)) {
        json_t *newest = rm_index_newest(sink_dir, id, 0);
        json_int_t files, bytes;
        if (newest && files_on_disk(sink_dir, id, &files, &bytes) == 0 &&
            (jint(newest, "files") != files || jint(newest, "bytes") != bytes)) {
            json_t *line = json_deep_copy(newest);
            json_object_set_new(line, "event", json_string("updated"));
            json_object_del(line, "supersedes");
            json_object_del(line, "ts");
            json_object_set_new(line, "files", json_integer(files));
            json_object_set_new(line, "bytes", json_integer(bytes));
            rc = rm_index_append(sink_dir, line, 1, tot);
            json_decref(line);
        }
        json_decref(newest);
    }
    json_decref(doc);
    return rc;
}

/* The size of sealed entry e's file (-1: gone or no regular file), confined to the sink. */
static long long sealed_size(const char *sink_dir, const json_t *e)
{
    const char *sid = rm_jget_str(e, "session_id"), *file = rm_jget_str(e, "file");
    int k, sealed;
    if (!rm_segment_parse_name(file, &k, &sealed) || !sealed) return -1;
    int dfd = rm_sink_open_session_dir(sink_dir, sid);
    if (dfd < 0) return -1;
    struct stat st;
    long long n = fstatat(dfd, file, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode)
                      ? (long long)st.st_size
                      : -1;
    close(dfd);
    return n;
}

/* Says the first disagreement in what (when it is still empty). */
static void disagree(char *what, size_t whatsz, const char *fig, long long said, long long disk)
{
    if (what[0]) return;
    snprintf(what, whatsz, "%s: sink.json said %lld, the disk holds %lld", fig, said, disk);
}

/* The live files (<stream>.csv) of every session folder: added to fin (finished sessions)
 * or, for the sessions running lists, to a copy of their entry's figures (runs). */
static void live_files_on_disk(const char *sink_dir, const json_t *running, json_t *fin,
                               json_t *runs)
{
    DIR *dp = opendir(sink_dir);
    if (!dp) return;
    struct dirent *de;
    while ((de = readdir(dp))) {
        if (!strcmp(de->d_name, "latest") || !rm_valid_session_id(de->d_name)) continue;
        int dfd = openat(dirfd(dp), de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (dfd < 0) continue;
        json_t *to = json_object_get(running, de->d_name) ? json_object() : fin;
        if (to != fin) json_object_set_new(runs, de->d_name, to);
        for (int k = 0; k < RM_STREAM_COUNT; k++) {
            char file[32];
            struct stat st;
            snprintf(file, sizeof file, "%s.csv", rm_stream_defs[k].name);
            if (fstatat(dfd, file, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode)) continue;
            json_object_set_new(to, "active_files", json_integer(jint(to, "active_files") + 1));
            json_object_set_new(to, "active_bytes",
                                json_integer(jint(to, "active_bytes") + (json_int_t)st.st_size));
        }
        close(dfd);
    }
    closedir(dp);
}

int rm_totals_check_disk(const char *sink_dir, json_t *tot, char *what, size_t whatsz)
{
    int bad = 0;
    what[0] = 0;
    json_t *sealed = json_object_get(tot, "sealed");
    for (size_t i = 0; i < json_array_size(sealed);) {
        json_t *e = json_array_get(sealed, i);
        long long said = jint(e, "bytes"), disk = sealed_size(sink_dir, e);
        if (disk == said) {
            i++;
            continue;
        }
        bad++;
        char fig[RM_SESSION_ID_MAX + 64];
        snprintf(fig, sizeof fig, "%s/%s", rm_jget_str(e, "session_id"), rm_jget_str(e, "file"));
        disagree(what, whatsz, fig, said, disk < 0 ? 0 : disk);
        if (disk < 0) { /* gone: nothing of it is left to delete or count */
            json_array_remove(sealed, i);
            continue;
        }
        json_object_set_new(e, "bytes", json_integer(disk));
        i++;
    }
    json_t *running = json_object_get(tot, "running"), *fin = json_object_get(tot, "finished");
    json_t *disk_fin =
        json_pack("{s:I,s:I}", "active_files", (json_int_t)0, "active_bytes", (json_int_t)0);
    json_t *runs = json_object();
    live_files_on_disk(sink_dir, running, disk_fin, runs);
    static const char *const keys[] = {"active_files", "active_bytes"};
    for (size_t i = 0; i < 2; i++) {
        if (jint(fin, keys[i]) == jint(disk_fin, keys[i])) continue;
        bad++;
        char fig[64];
        snprintf(fig, sizeof fig, "finished.%s", keys[i]);
        disagree(what, whatsz, fig, jint(fin, keys[i]), jint(disk_fin, keys[i]));
        json_object_set(fin, keys[i], json_object_get(disk_fin, keys[i]));
    }
    /* A running session's figures are as of its last flush, behind its growing files: they
     * are only taken from the disk where they claim more than it holds. */
    const char *id;
    json_t *r;
    json_object_foreach(running, id, r)
    {
        json_t *d = json_object_get(runs, id);
        for (size_t i = 0; i < 2; i++) {
            if (jint(r, keys[i]) <= jint(d, keys[i])) continue;
            bad++;
            char fig[RM_SESSION_ID_MAX + 64];
            snprintf(fig, sizeof fig, "running.%s.%s", id, keys[i]);
            disagree(what, whatsz, fig, jint(r, keys[i]), jint(d, keys[i]));
            json_object_set_new(r, keys[i], json_integer(jint(d, keys[i])));
        }
    }
    json_decref(runs);
    json_decref(disk_fin);
    return bad;
}

/* The temp files of the sink's own files written under the lock: a writer killed mid-write
 * left them (we hold the lock: no one is writing them). */
static void remove_sink_temps(const char *sink_dir)
{
    static const char *const names[] = {RM_TOTALS_TMP, RM_INDEX_TMP, RM_STATE_TMP};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        char path[PATH_MAX + 32];
        snprintf(path, sizeof path, "%s/%s", sink_dir, names[i]);
        (void)unlink(path);
    }
}

/* Under the lock (lk; -1: none, a read-only sink): the totals, after migrating or
 * rebuilding the index and the totals when they need it. 0, or -1 with err. */
static int totals_locked(const char *sink_dir, int lk, int force_rebuild, const char *own_id,
                         json_t **tot, char *err, size_t errsz)
{
    *tot = NULL;
    /* The index's header and sink.json, each read once: all an everyday open looks at. */
    int index = index_ok(sink_dir);
    if (!force_rebuild && index == 1 && rm_totals_load(sink_dir, tot) == 0) return 0;
    json_decref(*tot);
    *tot = NULL;
    if (index == 0)
        fprintf(stderr, "runmon: %s/index.jsonl: not a runmon sink index, rebuilding it\n",
                sink_dir);
    if (lk < 0) {
        char path[PATH_MAX + 32];
        snprintf(path, sizeof path, "%s/manifest.json", sink_dir);
        int have_manifest = access(path, F_OK) == 0, have_index = index >= 0;
        snprintf(err, errsz, "%s: the sink index needs %s but the sink cannot be written", sink_dir,
                 have_manifest && !have_index ? "migrating" : "rebuilding");
        return -1;
    }
    if (rebuild(sink_dir, own_id) < 0) {
        snprintf(err, errsz, "%s: cannot rebuild the sink index: %s", sink_dir, strerror(errno));
        return -1;
    }
    if (rm_totals_load(sink_dir, tot) != 0) {
        snprintf(err, errsz, "%s/sink.json: unreadable after rebuilding", sink_dir);
        return -1;
    }
    return 0;
}

int rm_sink_totals_locked(const char *sink_dir, const char *own_id, json_t **tot)
{
    char err[PATH_MAX + 512];
    if (totals_locked(sink_dir, 0, 0, own_id, tot, err, sizeof err) == 0) return 0;
    fprintf(stderr, "runmon: %s\n", err);
    return -1;
}

void rm_sink_finish_pruning(const char *sink_dir, json_t *tot, const char *own_id, json_t *own_doc)
{
    json_t *list = json_deep_copy(json_object_get(tot, "pruning"));
    size_t i;
    json_t *e;
    json_array_foreach(list, i, e)
    {
        /* Confined: both names are checked again and the file is unlinked relative to its
         * session folder, never through a link (sink/names.h). */
        const char *esid = rm_jget_str(e, "session_id"), *file = rm_jget_str(e, "file");
        if (rm_sink_unlink_segment(sink_dir, esid, file) != 0) {
            fprintf(stderr, "runmon: %s %s/%s/%s: %s\n",
                    errno == EINVAL ? "not pruned (not a sealed segment's name):" : "cannot prune",
                    sink_dir, esid, file, strerror(errno));
            if (errno != EINVAL) continue; /* tried again at the next round */
        } else if (own_id && !strcmp(esid, own_id)) {
            json_t *own = rm_manifest_find_segment(own_doc, esid, file);
            if (own) {
                json_object_set_new(own, "pruned", json_true());
                json_object_set_new(own, "pruned_at", rm_jts_or_null(rm_now_realtime_ns()));
            }
        } else if (rm_sink_note_pruned(sink_dir, tot, esid, file) < 0) {
            /* Its file is gone but the listing could not say so (the index cannot grow
             * here): kept, marked gone (not counted), for the next open to note. */
            json_t *pr = json_object_get(tot, "pruning");
            for (size_t j = 0; j < json_array_size(pr); j++) {
                json_t *x = json_array_get(pr, j);
                if (!strcmp(rm_jget_str(x, "file"), file) &&
                    !strcmp(rm_jget_str(x, "session_id"), esid))
                    json_object_set_new(x, "gone", json_true());
            }
            continue;
        }
        rm_totals_pruned(tot, esid, file);
    }
    json_decref(list);
}

/* Under the lock, the totals read: what a killed writer left is finished (a pruning round,
 * a torn index line, sessions whose recorder died: ended gets their ids), and sink.json is
 * written when anything changed (ignored: entries the confinement rule dropped, which go
 * from the file now, warned and counted once). */
static void mend_locked(const char *sink_dir, json_t *tot, int ignored, json_t *ended)
{
    int changed = ignored;
    if (json_array_size(json_object_get(tot, "pruning"))) { /* a pruner killed midway */
        rm_sink_finish_pruning(sink_dir, tot, NULL, NULL);
        changed++;
    }
    changed += mend_torn_tail(sink_dir, tot);
    changed += recover(sink_dir, tot, ended);
    if (!changed) return;
    rm_index_maybe_compact(sink_dir, tot);
    if (rm_totals_save(sink_dir, tot) < 0) {
        fprintf(stderr, "runmon: cannot write %s/sink.json: %s\n", sink_dir, strerror(errno));
        json_array_clear(ended); /* still running in the totals: the next open */
    }
}

int rm_sinks_open(const char *const *sinks, size_t n, int force_rebuild, char *err, size_t errsz)
{
    for (size_t k = 0; k < n; k++) {
        int rc = rm_sink_open_index(sinks[k], force_rebuild, NULL, err, errsz);
        if (rc == 1)
            snprintf(err, errsz, "%s: not a runmon sink (no index.jsonl, no sessions)", sinks[k]);
        if (rc != 0) return -1;
    }
    return 0;
}

int rm_sink_open_index(const char *sink_dir, int force_rebuild, const char *own_id, char *err,
                       size_t errsz)
{
    struct stat st;
    if (stat(sink_dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
        snprintf(err, errsz, "%s: %s", sink_dir, errno ? strerror(errno) : "not a directory");
        return -1;
    }
    if (!force_rebuild && !sink_file_exists(sink_dir) && !any_session_folder(sink_dir)) return 1;
    int lk = rm_sink_lock(sink_dir); /* -1 on a read-only sink: read it as it is */
    if (lk >= 0) remove_sink_temps(sink_dir);
    json_t *tot = NULL, *ended = json_array();
    long ignored = rm_sink_ignored_entries();
    /* Read (the index's header and sink.json; every folder only when rebuilding), then mend. */
    int rc = totals_locked(sink_dir, lk, force_rebuild, own_id, &tot, err, errsz);
    if (rc == 0 && lk >= 0) mend_locked(sink_dir, tot, rm_sink_ignored_entries() != ignored, ended);
    json_decref(tot);
    rm_sink_unlock(lk);
    write_due_summaries(sink_dir, ended);
    json_decref(ended);
    return rc;
}

int rm_sink_reserve(const char *sink_dir, const char *id, const char *host, long long pid)
{
    char err[PATH_MAX + 512];
    if (rm_sink_open_index(sink_dir, 0, id, err, sizeof err) < 0) return -1;
    int lk = rm_sink_lock(sink_dir);
    if (lk < 0) return -1;
    json_t *tot = NULL;
    if (rm_totals_load(sink_dir, &tot) != 0) tot = rm_totals_new(); /* a new sink */
    int rc = 0;
    if (rm_index_size(sink_dir) == 0) { /* the new sink's index: its header */
        struct rm_index_out o;
        rc = rm_index_out_open(&o, sink_dir) == 0 ? rm_index_out_commit(&o) : -1;
    }
    if (rc == 0) {
        json_t *c = rm_totals_contribution(NULL);
        /* The session's lines can only come after this: recovery reads back no further. */
        json_object_set_new(c, "index_at", json_integer(rm_index_size(sink_dir)));
        rm_totals_set_running(tot, id, host, (json_int_t)pid, c);
        rc = rm_totals_save(sink_dir, tot);
    }
    int e = errno;
    json_decref(tot);
    rm_sink_unlock(lk);
    errno = e;
    return rc;
}
