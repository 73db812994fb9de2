#include "sink/sink.h"

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

#include "base/clock.h"
#include "base/fileio.h"
#include "base/json.h"
#include "base/rm_time.h"
#include "model/streams.h"
#include "monitor/port.h"
#include "sink/index.h"
#include "sink/liveness.h"
#include "sink/manifest.h"
#include "sink/names.h"
#include "sink/session.h"

#define MAX_SLOTS 8

struct slot {
    struct rm_sink *k;
    int stream_ix;
    char file[32];
    /* Guarded by k->mu: a descriptor of the stream's new active file for the sink thread to
     * take (-1: none), dup'ed by the thread that owns the stream's own (at attach and at each
     * seal), so the sink never opens the file by name nor races the stream's rollover. */
    int fd_next;
    /* Guarded by k->mu: the stream's numbers as of its last flush. */
    uint64_t rows, bytes, dropped, werr;
    int64_t first, last;
    int failing, last_errno;
    int64_t fail_start, fail_end; /* the stream's latest failure (monotonic; 0: none, going on) */
};

/* Sink thread only: the active file it syncs, and its size at the last fdatasync that
 * returned (-1: none yet). */
struct synced {
    int fd;
    off_t size;
};

struct pending {
    int slot;
    char file[64];
    uint64_t rows, bytes;
    int64_t first, last, sealed_ns;
};

struct rm_sink {
    const struct rm_port *port;
    char dir[PATH_MAX];
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int stop, wake;
    struct slot slots[MAX_SLOTS];
    int nslots;
    struct synced synced[MAX_SLOTS];
    struct pending *pend;
    size_t npend, cappend;
    /* Sink thread only. */
    json_t *segs; /* this session's sealed segment entries, oldest first */
    int degraded;
    int64_t degraded_since;
    int64_t recovered_at; /* the end of the previous episode: older failures are not this one's */
    int manifest_down;    /* the manifest failed in this episode: it ends when a round succeeds */
    int registered;       /* the index has the session's "created" line */
    int state_written;    /* the last round's state.json write landed */
    int in_totals;        /* sink.json listed the session running, written by this process */
    int stopped;          /* rm_sink_stop ran: the final state is written (or given up) */
    json_t *final_doc;    /* the session's document as of the final round */
    uint64_t dropped_at_degrade;
    int64_t manifest_retry_at;
    /* What this recorder last wrote of its state.json and sink.json, and index.jsonl's
     * identity when the last round ended (under the lock): a round whose files are as it
     * left them reads none of them again. */
    struct rm_doc_memo state_memo, totals_memo;
    struct stat index_seen;
    int index_seen_ok;
    int64_t meta_synced_at; /* monotonic: the last round whose state.json and sink.json were
                               made durable (fsync), 0 before the first */
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

/* A descriptor of the stream's active file, from the thread that owns s->fd. */
static int dup_active(const struct rm_stream *s)
{
    return s->fd >= 0 ? fcntl(s->fd, F_DUPFD_CLOEXEC, 0) : -1;
}

static void hook(void *ctx, const struct rm_stream *s, enum rm_stream_event ev,
                 const struct rm_stream_seg *seg)
{
    struct slot *sl = ctx;
    struct rm_sink *k = sl->k;
    /* the new active file: after a seal, or once a file that could not be opened is */
    int fd = ev == RM_STREAM_SEALED || s->reopened ? dup_active(s) : -1;
    pthread_mutex_lock(&k->mu);
    if (ev == RM_STREAM_SEALED) {
        if (sl->fd_next >= 0) close(sl->fd_next); /* two seals in one round: never taken */
        sl->fd_next = fd;
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
            p->sealed_ns = rm_clock_real(k->port->clock);
        }
        sl->rows = 0;
        sl->bytes = 0;
        sl->first = sl->last = 0;
        k->wake = 1;
        pthread_cond_signal(&k->cv);
    } else {
        if (fd >= 0) { /* the file the sink had none of (rm_sink_attach): synced from now */
            if (sl->fd_next >= 0) close(sl->fd_next);
            sl->fd_next = fd;
        }
        sl->rows = s->rows;
        sl->bytes = s->bytes;
        sl->first = s->first_ts_ns;
        sl->last = s->last_ts_ns;
        sl->dropped = s->dropped_rows;
        sl->werr = s->write_errors;
        /* The first failed write of an episode wakes the sink: sink_degraded is raised now,
         * not at its next round. */
        if (s->failing && !sl->failing) {
            k->wake = 1;
            pthread_cond_signal(&k->cv);
        }
        sl->failing = s->failing;
        sl->last_errno = s->last_errno;
        sl->fail_start = s->fail_start_ns;
        sl->fail_end = s->fail_end_ns;
    }
    pthread_mutex_unlock(&k->mu);
}

void rm_sink_attach(struct rm_sink *k, struct rm_stream *s)
{
    if (!k || rm_stream_by_name(s->name) < 0) return;
    /* The sink thread may be running already (the GPU streams are attached after it starts):
     * the slot is counted only once it is whole, under the mutex its rounds read it under. */
    pthread_mutex_lock(&k->mu);
    if (k->nslots == MAX_SLOTS) {
        pthread_mutex_unlock(&k->mu);
        return;
    }
    struct slot *sl = &k->slots[k->nslots];
    sl->k = k;
    sl->stream_ix = rm_stream_by_name(s->name);
    sl->fd_next = dup_active(s); /* the writer thread has not started: s->fd is ours to read */
    snprintf(sl->file, sizeof sl->file, "%s.csv", s->name);
    sl->bytes = s->bytes;
    k->nslots++;
    pthread_mutex_unlock(&k->mu);
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

/* The session's entry. Until the final round it says "running" whatever the session's
 * status already is: state.json says how the session ended only from the round that also
 * ends it in the sink's totals (rm_sink_stop, rm_sink_close), so no reader, rebuild or
 * recovery can count the end before the recorder does, and the recorder counts it once. */
static json_t *session_entry(struct rm_sink *k, int final)
{
    pthread_mutex_lock(k->port->lock);
    json_t *doc = rm_session_to_json(k->port->sess);
    pthread_mutex_unlock(k->port->lock);
    json_t *e = rm_manifest_session_entry(doc);
    json_decref(doc);
    if (!final) {
        json_object_set_new(e, "status", json_string("running"));
        json_object_set_new(e, "ended_at", json_null());
        json_object_set_new(e, "exit_code", json_null());
    }
    json_t *sk = json_object(), *dr = json_object();
    uint64_t werr = 0;
    pthread_mutex_lock(&k->mu);
    for (int i = 0; i < k->nslots; i++) {
        json_object_set_new(dr, rm_stream_defs[k->slots[i].stream_ix].name,
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

/* fdatasync of the active files that grew since their last one (the files are only appended
 * to: an unchanged size is nothing new to sync), with every such file's writeback started
 * first (sync_file_range): the writes then overlap, and the syncs wait about half as often
 * (17.8 against 9.7 sleeps and 575 against 315 us of CPU per round of 5 files, measured on
 * the machine of issue 13). The guarantee is fdatasync's, as before. The descriptors are kept
 * open (struct synced): no open and close of each file per round. */
static void sync_active(struct rm_sink *k, int nsnap)
{
    off_t size[MAX_SLOTS];
    for (int i = 0; i < nsnap; i++) {
        struct synced *y = &k->synced[i];
        struct stat st;
        size[i] = y->fd >= 0 && fstat(y->fd, &st) == 0 ? st.st_size : y->size;
        if (size[i] != y->size) (void)sync_file_range(y->fd, 0, 0, SYNC_FILE_RANGE_WRITE);
    }
    for (int i = 0; i < nsnap; i++) {
        struct synced *y = &k->synced[i];
        /* What is appended after the fstat is synced too, and again next round. */
        if (size[i] != y->size && fdatasync(y->fd) == 0) y->size = size[i];
    }
}

/* The descriptors the streams' threads dup'ed at a seal (or at attach) replace the sink
 * thread's; the old one was the sealed segment's (fsynced by its own round). */
static void take_new_files(struct rm_sink *k, const int *fd_next, int nsnap)
{
    for (int i = 0; i < nsnap; i++) {
        if (fd_next[i] < 0) continue;
        if (k->synced[i].fd >= 0) close(k->synced[i].fd);
        k->synced[i] = (struct synced){.fd = fd_next[i], .size = -1};
    }
}

/* The session's document: doc (its state.json as it stands, pruned flags set by others
 * included) with this recorder's entry and segments put in. */
static json_t *build_doc(struct rm_sink *k, json_t *doc, const struct slot *snap, int nsnap,
                         int final)
{
    const char *sid = k->port->sess->id;
    if (!doc) doc = rm_manifest_new();
    rm_manifest_put_session(doc, session_entry(k, final));
    size_t i;
    json_t *e;
    /* put_segment keeps "pruned" sticky: another recorder may have pruned our segments */
    json_array_foreach(k->segs, i, e) rm_manifest_put_segment(doc, json_incref(e));
    for (int s = 0; s < nsnap; s++)
        rm_manifest_put_segment(doc, rm_manifest_segment_entry(sid, snap[s].file, snap[s].stream_ix,
                                                               0, snap[s].rows, snap[s].bytes,
                                                               snap[s].first, snap[s].last));
    return doc;
}

static int stat_index(const struct rm_sink *k, struct stat *st)
{
    char path[PATH_MAX + 16];
    snprintf(path, sizeof path, "%s/index.jsonl", k->dir);
    return lstat(path, st);
}

/* index.jsonl as it was at the end of the last round (the same file, size and time): no
 * one wrote it since, so it is still the index the totals were checked against. */
static int index_unchanged(const struct rm_sink *k)
{
    struct stat st;
    return k->index_seen_ok && stat_index(k, &st) == 0 && st.st_dev == k->index_seen.st_dev &&
           st.st_ino == k->index_seen.st_ino && st.st_size == k->index_seen.st_size &&
           st.st_mtim.tv_sec == k->index_seen.st_mtim.tv_sec &&
           st.st_mtim.tv_nsec == k->index_seen.st_mtim.tv_nsec;
}

static void note_index(struct rm_sink *k)
{
    k->index_seen_ok = stat_index(k, &k->index_seen) == 0;
}

/* Retention's choice (rm_totals_plan_prune), made only on figures checked against the disk:
 * when the totals as they stand would delete anything, they are checked first
 * (rm_totals_check_disk), and a disagreement is corrected in them (written with them), said
 * on stderr and logged (sink_totals_corrected), so that one wrong number cannot delete what
 * the limits keep. */
static json_t *plan_prune_checked(struct rm_sink *k, json_t *tot)
{
    if (k->ret_files <= 0 && !k->ret_bytes) return json_array();
    json_t *trial = json_deep_copy(tot);
    json_t *would = trial ? rm_totals_plan_prune(trial, k->ret_files, k->ret_bytes) : NULL;
    size_t n = json_array_size(would);
    json_decref(would);
    json_decref(trial);
    if (n) {
        char what[RM_SESSION_ID_MAX + 160];
        int bad = rm_totals_check_disk(k->dir, tot, what, sizeof what);
        if (bad) {
            json_t *d = json_object();
            json_object_set_new(d, "figures", json_integer(bad));
            json_object_set_new(d, "first", json_string(what));
            rm_port_event(k->port, "sink_totals_corrected", d);
            fprintf(stderr,
                    "runmon record: %s/sink.json disagreed with the disk (%s%s); retention "
                    "plans on the figures of the files\n",
                    k->dir, what, bad > 1 ? ", and more" : "");
        }
    }
    return rm_totals_plan_prune(tot, k->ret_files, k->ret_bytes);
}

/* The session's state.json, its "created" index line and the sink's totals, under the sink
 * lock. Reads and writes only this session's document and sink.json, whose sizes do not grow
 * with the number of sessions in the sink. The session's end is not written here:
 * rm_sink_close does it, once. final: the round after every stream closed (the entry's true
 * status; the document is kept for the end). 0, or -1 with errno. */
/* durable: state.json and sink.json are fsynced (with their folders); else only replaced
 * atomically. A round that prunes is durable whatever it was asked. */
static int update_state(struct rm_sink *k, struct slot *snap, int nsnap, int final, int durable)
{
    k->state_written = 0;
    int lk = rm_sink_lock(k->dir);
    if (lk < 0) return -1;
    const char *sid = k->port->sess->id;
    char state_name[RM_SESSION_ID_MAX + 16];
    snprintf(state_name, sizeof state_name, "%s/state.json", sid);
    /* Each file as this recorder left it, else read again (another writer replaced it). */
    json_t *doc = rm_memo_take(&k->state_memo, k->dir, state_name);
    if (!doc && rm_state_load(k->dir, sid, &doc) != 0) doc = NULL;
    doc = build_doc(k, doc, snap, nsnap, final);
    size_t i;
    json_t *e;
    json_t *tot = index_unchanged(k) ? rm_memo_take(&k->totals_memo, k->dir, "sink.json") : NULL;
    rm_memo_clear(&k->totals_memo);
    k->index_seen_ok = 0;
    /* lost or corrupt: rebuilt here, under the lock we hold */
    if (!tot && rm_sink_totals_locked(k->dir, k->registered ? NULL : sid, &tot) != 0) {
        json_decref(doc);
        rm_sink_unlock(lk);
        errno = EIO;
        return -1;
    }
    json_array_foreach(json_object_get(doc, "segments"), i, e)
    {
        if (!strcmp(rm_jget_str(e, "state"), "sealed") &&
            !json_is_true(json_object_get(e, "pruned")))
            rm_totals_add_sealed(tot, e); /* once: the list is keyed by session and file */
    }
    rm_totals_set_running(tot, sid, k->port->sess->host, k->port->sess->pid,
                          rm_totals_contribution(doc));
    json_t *chosen = plan_prune_checked(k, tot);
    /* Retention's choice is written before any file is deleted: a kill in between leaves it in
     * sink.json's "pruning", and the next open finishes it (totals = disk at every moment an
     * open can see). */
    if (json_array_size(json_object_get(tot, "pruning"))) {
        durable = 1;
        if (!json_array_size(chosen) || rm_totals_save(k->dir, tot) == 0)
            rm_sink_finish_pruning(k->dir, tot, sid, doc);
    }
    json_decref(chosen);
    if (final) { /* what the end writes to the index and the totals, whatever happens next */
        json_decref(k->final_doc);
        k->final_doc = json_incref(doc);
    }
    if (!k->registered) durable = 1; /* the session's start */
    int rc = rm_state_write_memo(k->dir, sid, doc, durable, &k->state_memo);
    k->state_written = rc == 0;
    if (rc == 0 && !k->registered && !final) {
        /* The index hears of the session twice: here when it starts, and at its end. */
        json_t *line = rm_index_line(doc, "created");
        rc = rm_index_append(k->dir, line, 0, tot);
        json_decref(line);
        if (rc == 0) k->registered = 1;
    }
    if (rc == 0) rm_index_maybe_compact(k->dir, tot);
    if (rc == 0) rc = rm_totals_write_memo(k->dir, tot, durable, &k->totals_memo);
    if (rc == 0) k->in_totals = 1;
    if (rc == 0) note_index(k);
    if (rc == 0 && durable) k->meta_synced_at = rm_clock_mono(k->port->clock);
    int err = errno;
    json_decref(tot);
    json_decref(doc);
    rm_sink_unlock(lk);
    errno = err;
    return rc;
}

void rm_sink_end_backoff(int attempt)
{
    if (attempt <= 0) return;
    int64_t ms = (int64_t)RM_SINK_END_FIRST_WAIT_MS << (attempt - 1);
    struct timespec ts = {.tv_sec = (time_t)(ms / 1000), .tv_nsec = (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
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
            stream = rm_stream_defs[snap[i].stream_ix].name;
            err = snap[i].last_errno;
        }
    }
    uint64_t before = k->dropped_seen;
    k->dropped_seen = dropped;

    /* The outage runs from the failed write that began it to the first write that landed
     * after the last stream's failure (the manifest alone: from this round to the one it
     * succeeds in). */
    int64_t since = 0, until = 0;
    for (int i = 0; i < nsnap; i++) {
        if (snap[i].fail_start <= k->recovered_at) continue;
        if (!since || snap[i].fail_start < since) since = snap[i].fail_start;
        if (snap[i].fail_end > until) until = snap[i].fail_end;
    }
    if (manifest_failed) k->manifest_down = 1;
    if (failing && !k->degraded) {
        k->degraded = 1;
        k->degraded_since = since ? since : rm_clock_mono(k->port->clock);
        k->dropped_at_degrade = before; /* the rows lost in this episode count */
        snprintf(k->last_error, sizeof k->last_error, "%s: %s", stream ? stream : "?",
                 strerror(err));
        json_t *d = json_object();
        json_object_set_new(d, "stream", json_string(stream ? stream : "?"));
        json_object_set_new(d, "error", json_string(strerror(err)));
        json_object_set_new(d, "rows_dropped", json_integer((json_int_t)dropped));
        rm_port_event(k->port, "sink_degraded", d);
        if (!k->port->quiet)
            fprintf(stderr, "runmon record: sink degraded (%s), recording goes on\n",
                    k->last_error);
    } else if (!failing && k->degraded) {
        k->degraded = 0;
        int64_t now = rm_clock_mono(k->port->clock);
        if (k->manifest_down || until < k->degraded_since) until = now;
        k->manifest_down = 0;
        k->recovered_at = now;
        json_t *d = json_object();
        json_object_set_new(d, "down_s", json_real(rm_ns_to_seconds_ms(until - k->degraded_since)));
        json_object_set_new(d, "rows_dropped",
                            json_integer((json_int_t)(dropped - k->dropped_at_degrade)));
        rm_port_event(k->port, "sink_recovered", d);
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
    int fd_next[MAX_SLOTS];
    for (int i = 0; i < nsnap; i++) {
        fd_next[i] = k->slots[i].fd_next;
        k->slots[i].fd_next = -1;
    }
    k->wake = 0;
    pthread_mutex_unlock(&k->mu);
    take_new_files(k, fd_next, nsnap);

    const char *sid = k->port->sess->id;
    /* The run log's phases, read once for the batch (streams seal together). */
    struct rm_segment_phases *ph = NULL;
    int ph_read = 0;
    for (size_t i = 0; i < npend; i++) {
        struct pending *p = &pend[i];
        int ix = k->slots[p->slot].stream_ix;
        char path[2 * PATH_MAX + 512];
        snprintf(path, sizeof path, "%s/%s", k->port->sess->dir, p->file);
        sync_path(path, 0);
        json_t *seg =
            rm_manifest_segment_entry(sid, p->file, ix, 1, p->rows, p->bytes, p->first, p->last);
        json_object_set_new(seg, "sealed_at", rm_jts_or_null(p->sealed_ns));
        char err[512] = "";
        if (p->rows && !ph_read++) ph = rm_summary_segment_phases(k->port->sess->dir);
        json_t *agg =
            p->rows ? rm_summary_segment_from_file_with(rm_stream_defs[ix].kind, path,
                                                        k->port->interval_s, ph, err, sizeof err)
                    : NULL;
        json_object_set_new(seg, "aggregate", agg ? agg : json_null());
        json_array_append_new(k->segs, seg);
    }
    rm_summary_segment_phases_free(ph);
    free(pend);
    sync_active(k, nsnap);

    int mfail = 0, merr = 0;
    int64_t now = rm_clock_mono(k->port->clock);
    if (final) {
        /* The final state: retried within the bound (rm_sink_end_backoff). */
        int rc = -1;
        for (int t = 0; t < RM_SINK_END_TRIES && rc != 0; t++) {
            rm_sink_end_backoff(t);
            rc = update_state(k, snap, nsnap, 1, 1);
        }
        if (rc != 0) {
            mfail = 1;
            merr = errno;
            k->manifest_errors++;
        }
    } else if (now >= k->manifest_retry_at) {
        /* The rows are durable every round (sync_active); the documents that describe them
         * only every RM_SINK_META_SYNC_S, and at once when a segment was sealed (or pruned,
         * or the session starts or ends): a power loss leaves them at most that far behind
         * the files, and the next writable open mends them from the files (recover.c). */
        int durable = npend > 0 || !k->meta_synced_at ||
                      now - k->meta_synced_at >= (int64_t)(RM_SINK_META_SYNC_S * 1e9);
        if (update_state(k, snap, nsnap, 0, durable) < 0) {
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
    pthread_setname_np(pthread_self(), "rm-sink"); /* for top -H and the bench */
    const struct rm_clock *clock = k->port->clock;
    int64_t period = (int64_t)llround(k->flush_s * 1e9);
    pthread_mutex_lock(&k->mu);
    while (!k->stop) {
        /* A round every period, and at once when a stream seals or starts failing. */
        int64_t due = rm_clock_mono(clock) + period;
        while (!k->stop && !k->wake)
            if (rm_clock_cond_wait(clock, &k->cv, &k->mu, due) == ETIMEDOUT) break;
        if (k->stop) break;
        pthread_mutex_unlock(&k->mu);
        cycle(k, 0);
        pthread_mutex_lock(&k->mu);
    }
    pthread_mutex_unlock(&k->mu);
    return NULL;
}

struct rm_sink *rm_sink_open(const struct rm_sink_config *cfg, const struct rm_port *port,
                             char *err, size_t errsz)
{
    struct rm_sink *k = calloc(1, sizeof *k);
    if (!k) {
        snprintf(err, errsz, "out of memory");
        return NULL;
    }
    k->port = port;
    snprintf(k->dir, sizeof k->dir, "%s", cfg->dir);
    pthread_mutex_init(&k->mu, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&k->cv, &ca);
    pthread_condattr_destroy(&ca);
    k->segs = json_array();
    for (int i = 0; i < MAX_SLOTS; i++)
        k->synced[i] = (struct synced){.fd = -1, .size = -1};
    k->flush_s = cfg->flush_s > 0 ? cfg->flush_s : RM_SINK_DEFAULT_FLUSH_S;
    k->rollover = (uint64_t)llround(cfg->rollover_mb * 1048576.0);
    k->ret_files = cfg->retention_files;
    k->ret_bytes = (uint64_t)llround(cfg->retention_total_mb * 1048576.0);

    if (rm_sink_open_index(k->dir, 0, port->sess->id, err, errsz) < 0) {
        json_decref(k->segs);
        free(k);
        return NULL;
    }
    update_latest(k->dir, port->sess->id);
    if (update_state(k, NULL, 0, 0, 1) < 0 && !port->quiet)
        fprintf(stderr, "runmon record: cannot write the sink index in %s: %s\n", k->dir,
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

void rm_sink_stop(struct rm_sink *k)
{
    if (!k || k->stopped) return;
    if (k->started) {
        pthread_mutex_lock(&k->mu);
        k->stop = 1;
        pthread_cond_signal(&k->cv);
        pthread_mutex_unlock(&k->mu);
        pthread_join(k->th, NULL);
        k->started = 0;
    }
    cycle(k, 1);
    k->stopped = 1;
}

/* The names of the files the end could not write, for the index line's "unwritten". */
static json_t *unwritten_names(unsigned bits)
{
    static const struct {
        unsigned bit;
        const char *name;
    } files[] = {{RM_SINK_UNWRITTEN_SESSION, "session.json"},
                 {RM_SINK_UNWRITTEN_STATE, "state.json"},
                 {RM_SINK_UNWRITTEN_SUMMARY, "summary.json"}};
    json_t *a = json_array();
    for (size_t i = 0; i < sizeof files / sizeof *files; i++)
        if (bits & files[i].bit) json_array_append_new(a, json_string(files[i].name));
    return a;
}

/* The session's end in the sink, once: its "ended" line (the true status and exit code,
 * and what could not be written) appended to the index, then its contribution moved into the
 * totals' finished sums. Each is retried within the bound; an appended line is never appended
 * again. When the line cannot be written, or state.json or session.json could not say how
 * the session ended, the totals keep the session as running, and the recovery of a later
 * open ends it (sink/recover.c: the index's line decides its status). */
/* The session's final document: the final round's, or, when that round never got the lock,
 * the end as this process knows it. */
static json_t *final_doc(struct rm_sink *k)
{
    if (!k->final_doc) {
        struct slot snap[MAX_SLOTS];
        pthread_mutex_lock(&k->mu);
        memcpy(snap, k->slots, sizeof snap[0] * (size_t)k->nslots);
        pthread_mutex_unlock(&k->mu);
        k->final_doc = build_doc(k, NULL, snap, k->nslots, 1);
    }
    return k->final_doc;
}

json_t *rm_sink_unwritten_state(struct rm_sink *k)
{
    if (!k || k->state_written) return NULL;
    return json_incref(final_doc(k));
}

/* The ended line's "sink": the rows the streams lost and their write errors, when there were
 * any, so that they outlive a state.json the end could not write (recovery takes them). */
static void put_losses(json_t *line, const json_t *doc)
{
    json_t *sk = json_object_get(rm_state_session(doc), "sink");
    json_t *dr = json_object(), *v;
    const char *name;
    json_object_foreach(json_object_get(sk, "rows_dropped"), name, v)
    {
        if (json_integer_value(v) > 0) json_object_set(dr, name, v);
    }
    json_int_t werr = json_integer_value(json_object_get(sk, "write_errors"));
    if (!json_object_size(dr) && werr <= 0) {
        json_decref(dr);
        return;
    }
    json_t *o = json_object();
    json_object_set_new(o, "rows_dropped", dr);
    json_object_set_new(o, "write_errors", json_integer(werr));
    json_object_set_new(line, "sink", o);
}

static void end_session(struct rm_sink *k, unsigned unwritten)
{
    const char *sid = k->port->sess->id;
    final_doc(k);
    if (!k->state_written) unwritten |= RM_SINK_UNWRITTEN_STATE;
    json_t *line = rm_index_line(k->final_doc, "ended");
    if (unwritten) json_object_set_new(line, "unwritten", unwritten_names(unwritten));
    put_losses(line, k->final_doc);
    int line_done = 0, totals_done = 0;
    for (int t = 0; t < RM_SINK_END_TRIES && !(line_done && totals_done); t++) {
        rm_sink_end_backoff(t);
        int lk = rm_sink_lock(k->dir);
        if (lk < 0) continue;
        /* The totals first: a rebuild they need rewrites the index. Without them, the line
         * still goes to the index as it is. */
        json_t *tot = NULL;
        if (rm_sink_totals_locked(k->dir, NULL, &tot) != 0) tot = NULL;
        if (!line_done && rm_sink_doc_from_disk(k->dir, k->final_doc)) {
            /* another recorder's retention pruned a segment of ours since the final round */
            json_t *unw = json_incref(json_object_get(line, "unwritten"));
            json_decref(line);
            line = rm_index_line(k->final_doc, "ended");
            if (unw) json_object_set_new(line, "unwritten", unw);
        }
        if (!line_done) line_done = rm_index_append(k->dir, line, k->registered, tot) == 0;
        if (line_done && tot) {
            /* Not in the running list: a rebuild already counted the end from state.json;
             * unless no totals this process wrote ever listed it (sink.json could not be
             * written until now): then it is counted here, sealed segments included. */
            int listed = json_object_get(json_object_get(tot, "running"), sid) != NULL;
            if (!listed && !k->in_totals) {
                size_t i;
                json_t *e;
                json_array_foreach(json_object_get(k->final_doc, "segments"), i, e)
                {
                    if (!strcmp(rm_jget_str(e, "state"), "sealed") &&
                        !json_is_true(json_object_get(e, "pruned")))
                        rm_totals_add_sealed(tot, e);
                }
                listed = 1;
            }
            json_t *c = listed ? rm_totals_contribution(k->final_doc) : NULL;
            /* state.json or session.json still says running, or summary.json is missing: the
             * session stays listed running in the totals (with its final contribution), and
             * the recovery of the next open, finding the recorder gone and this line in the
             * index, writes them and ends it there. */
            if (c && unwritten)
                rm_totals_set_running(tot, sid, k->port->sess->host, k->port->sess->pid, c);
            else if (c)
                rm_totals_finish(tot, sid, c);
            rm_index_maybe_compact(k->dir, tot);
            totals_done = rm_totals_save(k->dir, tot) == 0;
        }
        json_decref(tot);
        rm_sink_unlock(lk);
    }
    if (!line_done && !k->port->quiet)
        fprintf(stderr, "runmon record: cannot write the session's end to %s/index.jsonl: %s\n",
                k->dir, strerror(errno));
    json_decref(line);
}

void rm_sink_close(struct rm_sink *k, unsigned unwritten)
{
    if (!k) return;
    rm_sink_stop(k);
    end_session(k, unwritten);
    if (k->degraded && !k->port->quiet)
        fprintf(stderr, "runmon record: the sink ended degraded (%s)\n", k->last_error);
    json_decref(k->final_doc);
    json_decref(k->segs);
    rm_memo_clear(&k->state_memo);
    rm_memo_clear(&k->totals_memo);
    for (int i = 0; i < k->nslots; i++) {
        if (k->synced[i].fd >= 0) close(k->synced[i].fd);
        if (k->slots[i].fd_next >= 0) close(k->slots[i].fd_next);
    }
    free(k->pend);
    pthread_cond_destroy(&k->cv);
    pthread_mutex_destroy(&k->mu);
    free(k);
}

/* ---- readers ---------------------------------------------------------------------- */

int rm_sink_begin_session(const char *sink_dir, const struct rm_session *s, int *claim_fd)
{
    *claim_fd = -1;
    if (rm_mkdir_p(sink_dir) < 0) return -1;
    /* A sink that cannot be written here is reported by rm_sink_open. */
    (void)rm_sink_reserve(sink_dir, s->id, s->host, (long long)s->pid);
    if (rm_mkdir_p(s->dir) < 0) return -1;
    struct stat st; /* never write through a link planted at the session's name */
    if (lstat(s->dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
        errno = ENOTDIR;
        return -1;
    }
    *claim_fd = rm_recorder_claim(s->dir);
    return 0;
}

void rm_sink_end_session(int claim_fd, const char *session_dir)
{
    rm_recorder_release(claim_fd, session_dir);
}
