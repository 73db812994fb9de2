#include "monitor/sink.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "monitor/manifest.h"
#include "monitor/recorder.h"
#include "runlog/rm_time.h"

#define MAX_SLOTS 8

struct slot {
    struct rm_sink *k;
    int stream_ix;
    char path[2 * PATH_MAX + 512]; /* the active file */
    char file[32];
    /* Guarded by k->mu: the stream's numbers as of its last flush. */
    int seen;
    uint64_t rows, bytes, dropped, werr;
    int64_t first, last;
    int failing, last_errno;
};

struct pending {
    int slot;
    char file[64];
    uint64_t rows, bytes;
    int64_t first, last, sealed_ns;
};

struct rm_sink {
    struct rm_recorder *rec;
    char dir[PATH_MAX];
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int stop, wake;
    struct slot slots[MAX_SLOTS];
    int nslots;
    struct pending *pend;
    size_t npend, cappend;
    /* Sink thread only. */
    json_t *segs; /* this session's sealed segment entries, oldest first */
    int degraded;
    int64_t degraded_since;
    uint64_t dropped_at_degrade;
    int64_t manifest_retry_at;
    int manifest_backoff_s;
    uint64_t manifest_errors;
    uint64_t werr_seen;    /* stream write errors already reported */
    uint64_t dropped_seen; /* rows dropped as of the last round */
    char last_error[256];
    pthread_t th;
    int started;
    double flush_s;
    uint64_t rollover, ret_bytes;
    int ret_files;
};

static int stream_index(const char *name)
{
    for (int i = 0; i < RM_SINK_NSTREAMS; i++)
        if (!strcmp(name, rm_sink_streams[i])) return i;
    return -1;
}

static void hook(void *ctx, const struct rm_stream *s, enum rm_stream_event ev,
                 const struct rm_stream_seg *seg)
{
    struct slot *sl = ctx;
    struct rm_sink *k = sl->k;
    pthread_mutex_lock(&k->mu);
    if (ev == RM_STREAM_SEALED) {
        if (k->npend == k->cappend) {
            size_t nc = k->cappend ? k->cappend * 2 : 16;
            struct pending *np = realloc(k->pend, nc * sizeof *np);
            if (np) {
                k->pend = np;
                k->cappend = nc;
            }
        }
        if (k->npend < k->cappend) {
            struct pending *p = &k->pend[k->npend++];
            p->slot = (int)(sl - k->slots);
            snprintf(p->file, sizeof p->file, "%s", seg->file);
            p->rows = seg->rows;
            p->bytes = seg->bytes;
            p->first = seg->first_ts_ns;
            p->last = seg->last_ts_ns;
            p->sealed_ns = rm_now_realtime_ns();
        }
        sl->rows = 0;
        sl->bytes = 0;
        sl->first = sl->last = 0;
        k->wake = 1;
        pthread_cond_signal(&k->cv);
    } else {
        sl->seen = 1;
        sl->rows = s->rows;
        sl->bytes = s->bytes;
        sl->first = s->first_ts_ns;
        sl->last = s->last_ts_ns;
        sl->dropped = s->dropped_rows;
        sl->werr = s->write_errors;
        sl->failing = s->failing;
        sl->last_errno = s->last_errno;
    }
    pthread_mutex_unlock(&k->mu);
}

void rm_sink_attach(struct rm_sink *k, struct rm_stream *s)
{
    if (!k || k->nslots == MAX_SLOTS || stream_index(s->name) < 0) return;
    struct slot *sl = &k->slots[k->nslots++];
    sl->k = k;
    sl->stream_ix = stream_index(s->name);
    snprintf(sl->path, sizeof sl->path, "%s", s->path);
    snprintf(sl->file, sizeof sl->file, "%s.csv", s->name);
    sl->bytes = s->bytes;
    s->rollover_bytes = k->rollover;
    s->hook = hook;
    s->hook_ctx = sl;
}

static void update_latest(const char *dir, const char *id)
{
    char tmp[PATH_MAX], dst[PATH_MAX];
    snprintf(tmp, sizeof tmp, "%s/.latest.tmp.%ld", dir, (long)getpid());
    snprintf(dst, sizeof dst, "%s/latest", dir);
    unlink(tmp);
    if (symlink(id, tmp) == 0 && rename(tmp, dst) != 0) unlink(tmp);
}

static json_t *session_entry(struct rm_sink *k)
{
    struct rm_recorder *r = k->rec;
    pthread_mutex_lock(&r->lock);
    json_t *doc = rm_session_to_json(&r->sess);
    pthread_mutex_unlock(&r->lock);
    json_t *e = rm_manifest_session_entry(doc);
    json_decref(doc);
    json_t *sk = json_object(), *dr = json_object();
    uint64_t werr = 0;
    pthread_mutex_lock(&k->mu);
    for (int i = 0; i < k->nslots; i++) {
        json_object_set_new(dr, rm_sink_streams[k->slots[i].stream_ix],
                            json_integer((json_int_t)k->slots[i].dropped));
        werr += k->slots[i].werr;
    }
    pthread_mutex_unlock(&k->mu);
    json_object_set_new(sk, "state", json_string(k->degraded ? "degraded" : "ok"));
    json_object_set_new(sk, "rows_dropped", dr);
    json_object_set_new(sk, "write_errors", json_integer((json_int_t)werr));
    json_object_set_new(sk, "manifest_write_errors", json_integer((json_int_t)k->manifest_errors));
    json_object_set_new(sk, "last_error",
                        k->last_error[0] ? json_string(k->last_error) : json_null());
    json_object_set_new(sk, "flush_seconds", json_real(k->flush_s));
    json_object_set_new(sk, "rollover_bytes", json_integer((json_int_t)k->rollover));
    json_object_set_new(sk, "retention_files", json_integer(k->ret_files));
    json_object_set_new(sk, "retention_total_bytes", json_integer((json_int_t)k->ret_bytes));
    json_object_set_new(e, "sink", sk);
    return e;
}

static const enum rm_input_kind kinds[RM_SINK_NSTREAMS] = {RM_INPUT_GPU_CSV, RM_INPUT_DMON_CSV,
                                                           RM_INPUT_CPU_CSV, RM_INPUT_PROC_CSV};

static void sync_path(const char *path, int data_only)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return;
    if (data_only)
        (void)fdatasync(fd);
    else
        (void)fsync(fd);
    close(fd);
}

/* Read-modify-write of the manifest under its lock. 0, or -1 with errno. */
static int update_manifest(struct rm_sink *k, struct slot *snap, int nsnap)
{
    int lk = rm_manifest_lock(k->dir);
    if (lk < 0) return -1;
    json_t *m = NULL;
    char why[512];
    if (rm_manifest_load(k->dir, &m, why, sizeof why) != 0) {
        m = rm_manifest_rebuild(k->dir, NULL);
        if (!m) m = rm_manifest_new();
    }
    const char *sid = k->rec->sess.id;
    rm_manifest_put_session(m, session_entry(k));
    size_t i;
    json_t *e;
    json_array_foreach(k->segs, i, e) rm_manifest_put_segment(m, json_incref(e));
    for (int s = 0; s < nsnap; s++)
        rm_manifest_put_segment(m, rm_manifest_segment_entry(sid, snap[s].file, snap[s].stream_ix,
                                                             0, snap[s].rows, snap[s].bytes,
                                                             snap[s].first, snap[s].last));
    json_t *chosen = json_array();
    rm_manifest_plan_prune(m, k->ret_files, k->ret_bytes, chosen);
    json_array_foreach(chosen, i, e)
    {
        char path[2 * PATH_MAX + 512];
        snprintf(path, sizeof path, "%s/%s/%s", k->dir,
                 json_string_value(json_object_get(e, "session_id")),
                 json_string_value(json_object_get(e, "file")));
        if (unlink(path) != 0 && errno != ENOENT)
            fprintf(stderr, "runmon record: cannot prune %s: %s\n", path, strerror(errno));
    }
    json_decref(chosen);
    int rc = rm_manifest_save(k->dir, m);
    int err = errno;
    json_decref(m);
    rm_manifest_unlock(lk);
    errno = err;
    return rc;
}

static void check_health(struct rm_sink *k, struct slot *snap, int nsnap, int manifest_failed,
                         int manifest_errno)
{
    int failing = manifest_failed;
    uint64_t dropped = 0;
    const char *stream = manifest_failed ? "manifest" : NULL;
    int err = manifest_errno;
    uint64_t werr = 0;
    for (int i = 0; i < nsnap; i++)
        werr += snap[i].werr;
    /* A failure and its recovery may both fall between two rounds: new errors count. */
    if (werr > k->werr_seen) {
        failing = 1;
        k->werr_seen = werr;
    }
    for (int i = 0; i < nsnap; i++) {
        dropped += snap[i].dropped;
        if (snap[i].failing || (failing && !stream && snap[i].werr)) {
            failing = 1;
            stream = rm_sink_streams[snap[i].stream_ix];
            err = snap[i].last_errno;
        }
    }
    uint64_t before = k->dropped_seen;
    k->dropped_seen = dropped;

    if (failing && !k->degraded) {
        k->degraded = 1;
        k->degraded_since = rm_now_monotonic_ns();
        k->dropped_at_degrade = before; /* the rows lost in this episode count */
        snprintf(k->last_error, sizeof k->last_error, "%s: %s", stream ? stream : "?",
                 strerror(err));
        json_t *d = json_object();
        json_object_set_new(d, "stream", json_string(stream ? stream : "?"));
        json_object_set_new(d, "error", json_string(strerror(err)));
        json_object_set_new(d, "rows_dropped", json_integer((json_int_t)dropped));
        rm_recorder_event(k->rec, "sink_degraded", d);
        if (!k->rec->opts.quiet)
            fprintf(stderr, "runmon record: sink degraded (%s), recording goes on\n",
                    k->last_error);
    } else if (!failing && k->degraded) {
        k->degraded = 0;
        json_t *d = json_object();
        json_object_set_new(
            d, "down_s", json_real(rm_ns_to_seconds_ms(rm_now_monotonic_ns() - k->degraded_since)));
        json_object_set_new(d, "rows_dropped",
                            json_integer((json_int_t)(dropped - k->dropped_at_degrade)));
        rm_recorder_event(k->rec, "sink_recovered", d);
    }
}

/* One round of the sink's work: new sealed segments, fdatasync, health, manifest. */
static void cycle(struct rm_sink *k, int final)
{
    struct slot snap[MAX_SLOTS];
    pthread_mutex_lock(&k->mu);
    struct pending *pend = k->pend;
    size_t npend = k->npend;
    k->pend = NULL;
    k->npend = k->cappend = 0;
    int nsnap = k->nslots;
    memcpy(snap, k->slots, sizeof snap[0] * (size_t)nsnap);
    k->wake = 0;
    pthread_mutex_unlock(&k->mu);

    const char *sid = k->rec->sess.id;
    for (size_t i = 0; i < npend; i++) {
        struct pending *p = &pend[i];
        int ix = k->slots[p->slot].stream_ix;
        char path[2 * PATH_MAX + 512];
        snprintf(path, sizeof path, "%s/%s", k->rec->sess.dir, p->file);
        sync_path(path, 0);
        json_t *seg =
            rm_manifest_segment_entry(sid, p->file, ix, 1, p->rows, p->bytes, p->first, p->last);
        json_object_set_new(seg, "sealed_at", rm_manifest_ts(p->sealed_ns));
        char err[512] = "";
        json_t *agg = p->rows ? rm_summary_segment_from_file(
                                    kinds[ix], path, k->rec->opts.interval_s, err, sizeof err)
                              : NULL;
        json_object_set_new(seg, "aggregate", agg ? agg : json_null());
        json_array_append_new(k->segs, seg);
    }
    free(pend);
    for (int i = 0; i < nsnap; i++)
        if (snap[i].seen) sync_path(snap[i].path, 1);

    int mfail = 0, merr = 0;
    int64_t now = rm_now_monotonic_ns();
    if (final || now >= k->manifest_retry_at) {
        if (update_manifest(k, snap, nsnap) < 0) {
            mfail = 1;
            merr = errno;
            k->manifest_errors++;
            k->manifest_backoff_s = k->manifest_backoff_s ? k->manifest_backoff_s * 2 : 1;
            if (k->manifest_backoff_s > 30) k->manifest_backoff_s = 30;
            k->manifest_retry_at = now + (int64_t)k->manifest_backoff_s * RM_NS_PER_SEC;
        } else {
            k->manifest_backoff_s = 0;
            k->manifest_retry_at = 0;
        }
    } else {
        mfail = 1; /* still backing off */
        merr = EAGAIN;
    }
    check_health(k, snap, nsnap, mfail, merr);
}

static void *sink_main(void *arg)
{
    struct rm_sink *k = arg;
    pthread_mutex_lock(&k->mu);
    while (!k->stop) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        double fs = k->flush_s;
        ts.tv_sec += (time_t)fs;
        ts.tv_nsec += (long)((fs - floor(fs)) * 1e9);
        if (ts.tv_nsec >= 1000000000L) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000L;
        }
        while (!k->stop && !k->wake)
            if (pthread_cond_timedwait(&k->cv, &k->mu, &ts) == ETIMEDOUT) break;
        if (k->stop) break;
        pthread_mutex_unlock(&k->mu);
        cycle(k, 0);
        pthread_mutex_lock(&k->mu);
    }
    pthread_mutex_unlock(&k->mu);
    return NULL;
}

struct rm_sink *rm_sink_open(struct rm_recorder *rec, char *err, size_t errsz)
{
    struct rm_sink *k = calloc(1, sizeof *k);
    if (!k) {
        snprintf(err, errsz, "out of memory");
        return NULL;
    }
    k->rec = rec;
    snprintf(k->dir, sizeof k->dir, "%s", rec->opts.output_dir);
    pthread_mutex_init(&k->mu, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&k->cv, &ca);
    pthread_condattr_destroy(&ca);
    k->segs = json_array();
    k->flush_s = rec->opts.flush_s > 0 ? rec->opts.flush_s : RM_SINK_DEFAULT_FLUSH_S;
    k->rollover = (uint64_t)llround(rec->opts.rollover_mb * 1048576.0);
    k->ret_files = rec->opts.retention_files;
    k->ret_bytes = (uint64_t)llround(rec->opts.retention_total_mb * 1048576.0);

    json_t *m = NULL;
    if (rm_sink_open_manifest(k->dir, 0, &m, err, errsz) < 0) {
        json_decref(k->segs);
        free(k);
        return NULL;
    }
    json_decref(m);
    update_latest(k->dir, rec->sess.id);
    if (update_manifest(k, NULL, 0) < 0 && !rec->opts.quiet)
        fprintf(stderr, "runmon record: cannot write %s/manifest.json: %s\n", k->dir,
                strerror(errno));
    return k;
}

int rm_sink_start(struct rm_sink *k)
{
    if (!k) return 0;
    if (pthread_create(&k->th, NULL, sink_main, k) != 0) return -1;
    k->started = 1;
    return 0;
}

void rm_sink_close(struct rm_sink *k)
{
    if (!k) return;
    if (k->started) {
        pthread_mutex_lock(&k->mu);
        k->stop = 1;
        pthread_cond_signal(&k->cv);
        pthread_mutex_unlock(&k->mu);
        pthread_join(k->th, NULL);
    }
    cycle(k, 1);
    if (k->degraded && !k->rec->opts.quiet)
        fprintf(stderr, "runmon record: the sink ended degraded (%s)\n", k->last_error);
    json_decref(k->segs);
    free(k->pend);
    pthread_cond_destroy(&k->cv);
    pthread_mutex_destroy(&k->mu);
    free(k);
}

/* ---- readers ---------------------------------------------------------------------- */

int rm_sink_is_sink_dir(const char *dir)
{
    char path[2 * PATH_MAX + 512];
    snprintf(path, sizeof path, "%s/manifest.json", dir);
    if (access(path, F_OK) == 0) return 1;
    snprintf(path, sizeof path, "%s/session.json", dir);
    if (access(path, F_OK) == 0) return 0; /* a session folder */
    DIR *dp = opendir(dir);
    if (!dp) return 0;
    int found = 0;
    struct dirent *de;
    while (!found && (de = readdir(dp))) {
        if (de->d_name[0] == '.') continue;
        snprintf(path, sizeof path, "%s/%s/session.json", dir, de->d_name);
        found = access(path, F_OK) == 0;
    }
    closedir(dp);
    return found;
}

static const char *jstr(const json_t *o, const char *k)
{
    const char *v = json_string_value(json_object_get(o, k));
    return v ? v : "";
}

static int select_in(const json_t *m, const char *sink_dir, const char *want_id, char *id,
                     size_t idcap, char *err, size_t errsz)
{
    if (want_id) {
        char path[2 * PATH_MAX + 512];
        snprintf(path, sizeof path, "%s/%s/session.json", sink_dir, want_id);
        if (rm_manifest_find_session(m, want_id) || access(path, F_OK) == 0) {
            snprintf(id, idcap, "%s", want_id);
            return 0;
        }
        snprintf(err, errsz, "%s: no session '%s' (see 'runmon sessions %s')", sink_dir, want_id,
                 sink_dir);
        return 2;
    }
    const json_t *best = NULL;
    for (int pass = 0; pass < 2 && !best; pass++) {
        size_t i;
        json_t *e;
        json_array_foreach(json_object_get(m, "sessions"), i, e)
        {
            int completed = !strcmp(jstr(e, "status"), "completed");
            if (pass == 0 ? !completed : completed) continue;
            if (!best || strcmp(jstr(e, "started_at"), jstr(best, "started_at")) > 0 ||
                (!strcmp(jstr(e, "started_at"), jstr(best, "started_at")) &&
                 strcmp(jstr(e, "session_id"), jstr(best, "session_id")) > 0))
                best = e;
        }
    }
    if (!best) {
        snprintf(err, errsz, "%s: the sink holds no sessions", sink_dir);
        return 2;
    }
    snprintf(id, idcap, "%s", jstr(best, "session_id"));
    return 0;
}

int rm_sink_select_session(const char *sink_dir, const char *want_id, char *out_dir, size_t out_cap,
                           char *err, size_t errsz)
{
    json_t *m = NULL;
    if (rm_sink_open_manifest(sink_dir, 0, &m, err, errsz) < 0) return 2;
    if (!m) {
        snprintf(err, errsz, "%s: not a runmon sink (no manifest.json, no session folders)",
                 sink_dir);
        return 2;
    }
    char id[256];
    int rc = select_in(m, sink_dir, want_id, id, sizeof id, err, errsz);
    json_decref(m);
    if (rc) return rc;
    if ((size_t)snprintf(out_dir, out_cap, "%s/%s", sink_dir, id) >= out_cap) {
        snprintf(err, errsz, "%s/%s: path too long", sink_dir, id);
        return 2;
    }
    return 0;
}

/* Phase figures need rows: does the run log hold any phase? */
static int runlog_has_phases(const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return 0;
    struct stat st;
    int found = 0;
    if (fstat(fd, &st) == 0 && st.st_size > 0) {
        void *p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (p != MAP_FAILED) {
            found = memmem(p, (size_t)st.st_size, "\"type\":\"phase", 13) != NULL;
            munmap(p, (size_t)st.st_size);
        }
    }
    close(fd);
    return found;
}

/* A file with at least one line after its header (the engine refuses files without data). */
static int has_rows(const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return 0;
    char b[8192];
    ssize_t n = read(fd, b, sizeof b);
    struct stat st;
    int ok = 0;
    if (n > 0 && fstat(fd, &st) == 0) {
        char *nl = memchr(b, '\n', (size_t)n);
        ok = nl ? st.st_size > (nl - b) + 1 : 0;
        if (ok) { /* something beyond the header: at least one whole line? */
            char *nl2 = memchr(nl + 1, '\n', (size_t)(n - (nl + 1 - b)));
            ok = nl2 != NULL || st.st_size > n;
        }
    }
    close(fd);
    return ok;
}

static int cmp_cstr(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int cmp_seg_file(const void *a, const void *b)
{
    return strcmp(jstr(*(json_t *const *)a, "file"), jstr(*(json_t *const *)b, "file"));
}

int rm_sink_summary(const char *sink_dir, const char *session_id, int rescan,
                    const struct rm_summary_opts *opts, json_t **out, char *err, size_t errsz)
{
    *out = NULL;
    json_t *m = NULL;
    if (rm_sink_open_manifest(sink_dir, 0, &m, err, errsz) < 0) return 2;
    if (!m) {
        snprintf(err, errsz, "%s: not a runmon sink", sink_dir);
        return 2;
    }
    char id[256];
    int rc = select_in(m, sink_dir, session_id, id, sizeof id, err, errsz);
    if (rc) {
        json_decref(m);
        return rc;
    }
    char sdir[PATH_MAX], path[PATH_MAX + 64];
    snprintf(sdir, sizeof sdir, "%s/%s", sink_dir, id);
    struct rm_summary *s = rm_summary_new(opts);
    snprintf(path, sizeof path, "%s/session.json", sdir);
    json_t *ses = json_load_file(path, 0, NULL);
    if (json_is_object(ses)) rm_summary_set_session(s, ses);
    json_decref(ses);
    snprintf(path, sizeof path, "%s/runlog.jsonl", sdir);
    int have_runlog = access(path, F_OK) == 0;
    int use_files = rescan || (have_runlog && runlog_has_phases(path));

    json_int_t from_manifest = 0, from_files = 0, pruned = 0, pruned_rows = 0;
    json_t *segs = json_object_get(m, "segments");
    for (int k = 0; k < RM_SINK_NSTREAMS; k++) {
        /* Sealed: manifest entries and files on disk, in name order. */
        size_t n = 0, i;
        json_t **list = calloc(json_array_size(segs) + 1, sizeof *list), *e;
        json_array_foreach(segs, i, e)
        {
            if (strcmp(jstr(e, "session_id"), id) ||
                strcmp(jstr(e, "stream"), rm_sink_streams[k]) || strcmp(jstr(e, "state"), "sealed"))
                continue;
            list[n++] = e;
        }
        qsort(list, n, sizeof *list, cmp_seg_file);
        for (i = 0; i < n; i++) {
            e = list[i];
            snprintf(path, sizeof path, "%s/%s", sdir, jstr(e, "file"));
            int on_disk = access(path, R_OK) == 0;
            json_t *agg = json_object_get(e, "aggregate");
            if (json_is_true(json_object_get(e, "pruned"))) {
                pruned++;
                pruned_rows += json_integer_value(json_object_get(e, "rows"));
            }
            if (json_is_object(agg) && (!use_files || !on_disk)) {
                char e2[512];
                if (rm_summary_add_segment(s, agg, e2, sizeof e2) == 0) {
                    from_manifest++;
                    continue;
                }
            }
            if (on_disk && has_rows(path)) {
                rm_summary_add_file(s, kinds[k], path);
                from_files++;
            }
        }
        free(list);
        /* Sealed files the manifest does not list yet (a live recorder's newest), then the
         * active file. */
        DIR *dp = opendir(sdir);
        struct dirent *de;
        char **extra = NULL;
        size_t nx = 0;
        while (dp && (de = readdir(dp))) {
            int ix, sealed;
            if (!rm_sink_parse_segment_name(de->d_name, &ix, &sealed) || ix != k || !sealed ||
                rm_manifest_find_segment(m, id, de->d_name))
                continue;
            char **nxp = realloc(extra, (nx + 1) * sizeof *extra);
            if (!nxp) break;
            extra = nxp;
            extra[nx++] = strdup(de->d_name);
        }
        if (dp) closedir(dp);
        if (nx) qsort(extra, nx, sizeof *extra, cmp_cstr);
        for (i = 0; i < nx; i++) {
            snprintf(path, sizeof path, "%s/%s", sdir, extra[i]);
            if (has_rows(path)) {
                rm_summary_add_file(s, kinds[k], path);
                from_files++;
            }
            free(extra[i]);
        }
        free(extra);
        snprintf(path, sizeof path, "%s/%s.csv", sdir, rm_sink_streams[k]);
        if (has_rows(path)) {
            rm_summary_add_file(s, kinds[k], path);
            from_files++;
        }
    }
    if (have_runlog) {
        snprintf(path, sizeof path, "%s/runlog.jsonl", sdir);
        rm_summary_add_runlog(s, path);
    }
    rc = rm_summary_build(s, out, err, errsz);
    rm_summary_free(s);
    if (rc == 0) {
        json_object_set_new(*out, "path", json_string(sdir));
        json_t *se = rm_manifest_find_session(m, id);
        json_t *sk = json_object();
        json_object_set_new(sk, "sink_dir", json_string(sink_dir));
        json_object_set_new(sk, "session_id", json_string(id));
        json_object_set_new(sk, "status", json_string(jstr(se, "status")));
        json_object_set_new(sk, "segments_from_manifest", json_integer(from_manifest));
        json_object_set_new(sk, "files_read", json_integer(from_files));
        json_object_set_new(sk, "pruned_segments", json_integer(pruned));
        json_object_set_new(sk, "pruned_rows", json_integer(pruned_rows));
        json_object_set_new(sk, "rescan", json_boolean(use_files));
        json_t *ks = json_object_get(se, "sink");
        json_t *dr = json_object_get(ks, "rows_dropped");
        json_object_set_new(sk, "rows_dropped", dr ? json_incref(dr) : json_object());
        json_object_set_new(sk, "write_errors",
                            json_integer(json_integer_value(json_object_get(ks, "write_errors"))));
        json_object_set_new(sk, "state",
                            json_string(json_string_value(json_object_get(ks, "state"))
                                            ? json_string_value(json_object_get(ks, "state"))
                                            : "ok"));
        json_object_set_new(*out, "sink", sk);
    }
    json_decref(m);
    return rc;
}
