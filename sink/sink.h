/* The telemetry sink of one recording session: index and state upkeep, rollover bookkeeping,
 * segment aggregates, retention, periodic fdatasync, and the degraded/recovered state of the
 * session's output. See docs/FORMATS.md ("The sink directory").
 *
 * Threads: each stream reports to the sink through its hook (a mutex-guarded copy of a few
 * numbers); the sink's own thread does everything slow (scanning a sealed segment for its
 * aggregate, fdatasync, the session state and sink totals under the lock, pruning), so the
 * collectors never wait on the disk for it.
 */
#ifndef RUNMON_SINK_H
#define RUNMON_SINK_H

#include <jansson.h>
#include <stddef.h>

#include "model/session.h"
#include "monitor/stream.h"
#include "summary/summary.h"

struct rm_port;

/* The sink's settings (runmon record's --output and --flush/rollover/retention options). */
struct rm_sink_config {
    const char *dir;           /* the sink directory */
    double flush_s;            /* fdatasync + session state at least this often (<= 0: default) */
    double rollover_mb;        /* seal the active file at this size (0: never) */
    int retention_files;       /* sealed segments kept per stream (0: all) */
    double retention_total_mb; /* retained bytes in the sink (0: all) */
};

/* 10 s: each round fdatasyncs every active file that grew, about two I/O waits each (13 a
 * round at 8 GPUs x 0.1 s), and issue 24 leaves the sink under 2 wakeups a second
 * (docs/ARCHITECTURE.md, "The sink's rounds, taken apart"). */
#define RM_SINK_DEFAULT_FLUSH_S 10.0
/* state.json and sink.json are made durable (fsync) at least this often, seconds; between
 * those rounds they are only replaced atomically (docs/FORMATS.md, "Durability"). */
#define RM_SINK_META_SYNC_S 30.0
#define RM_SINK_DEFAULT_ROLLOVER_MB 64.0
#define RM_SINK_DEFAULT_RETENTION_FILES 8
#define RM_SINK_DEFAULT_RETENTION_TOTAL_MB 512.0

struct rm_sink;

/* Recovery of the sink directory (interrupted sessions, adoption, rebuild), then the session's
 * entry in the index and DIR/latest. Call after the session folder exists. NULL with err
 * on failure (the recording may go on without a sink). */
struct rm_sink *rm_sink_open(const struct rm_sink_config *cfg, const struct rm_port *port,
                             char *err, size_t errsz);

/* Hooks a stream to the sink (rollover size, seal and flush reports). Call before the
 * stream's writer thread starts. */
void rm_sink_attach(struct rm_sink *k, struct rm_stream *s);

/* Starts the sink's thread. 0, or -1. */
int rm_sink_start(struct rm_sink *k);

/* What the end of a session could not write (rm_sink_close), named in its index line's
 * "unwritten". */
#define RM_SINK_UNWRITTEN_SESSION 1u /* session.json */
#define RM_SINK_UNWRITTEN_STATE 2u   /* state.json (set by the sink itself) */
#define RM_SINK_UNWRITTEN_SUMMARY 4u /* summary.json */

/* Each write of the session's end is tried this many times, RM_SINK_END_FIRST_WAIT_MS apart
 * at first and doubling (0.1 + 0.2 + 0.4 = 0.7 s of waiting at most per write). */
#define RM_SINK_END_TRIES 4
#define RM_SINK_END_FIRST_WAIT_MS 100
/* The wait before attempt number `attempt` (0: none) of a write of the session's end. */
void rm_sink_end_backoff(int attempt);

/* Stops the thread and writes the session's final state.json (its true status; retried as
 * above). Call after every attached stream is closed and the session's status is set; the
 * summary may then be made from the sink. Nothing says the session ended yet. */
void rm_sink_stop(struct rm_sink *k);

/* After rm_sink_stop: the session's final document (state.json's content, as
 * rm_sink_summary_as takes it) when the end could not write state.json, else NULL (a new
 * reference). */
json_t *rm_sink_unwritten_state(struct rm_sink *k);

/* The session's end: rm_sink_stop if not done, then its "ended" line in the index (once,
 * with the status, the exit code and `unwritten`: RM_SINK_UNWRITTEN_* bits of the files the
 * caller could not write) and its move into the totals' finished sums. Frees k. */
void rm_sink_close(struct rm_sink *k, unsigned unwritten);

/* A recorder's new session, before anything of it is written: the sink lists it as running
 * (rm_sink_reserve: recovery finds it should the recorder die at any later moment), its
 * folder s->dir is created, and claimed (sink/liveness.h). Returns 0 with *claim_fd the
 * claim (-1 when the claim or the reservation failed: the recording goes on), or -1 with
 * errno when the folder cannot be created. */
int rm_sink_begin_session(const char *sink_dir, const struct rm_session *s, int *claim_fd);

/* After the session's end is recorded: the claim is released. */
void rm_sink_end_session(int claim_fd, const char *session_dir);

/* Session selection in a sink directory: want_id, else the newest completed session, else
 * the newest failed, interrupted or running one. Runs recovery first. out_dir gets
 * "<sink_dir>/<id>". Returns 0, or 2 with err (no such session, not a sink). */
int rm_sink_select_session(const char *sink_dir, const char *want_id, char *out_dir, size_t out_cap,
                           char *err, size_t errsz);

/* The session id rm_sink_select_session would pick (no recovery), streaming the index. */
int rm_sink_pick_session(const char *sink_dir, const char *want_id, char *id, size_t idcap,
                         char *err, size_t errsz);

/* True when dir holds a sink (index.jsonl, a 0.1.0 manifest.json, or session folders). */
int rm_sink_is_sink_dir(const char *dir);

/* Summary of one session of a sink: its state.json's aggregates for sealed segments (unless
 * rescan, or the run log has phases, which need rows), files for everything else; adds a
 * "sink" section (segments, pruned, rows dropped). Returns as rm_summary_build. */
int rm_sink_summary(const char *sink_dir, const char *session_id, int rescan,
                    const struct rm_summary_opts *opts, json_t **out, char *err, size_t errsz);
/* The same, with the session's documents as its recorder holds them in place of session.json
 * and state.json (either NULL: the file), for the end of a session whose files could not
 * be written (a full disk): its summary says how it really ended. */
int rm_sink_summary_as(const char *sink_dir, const char *session_id, int rescan,
                       const struct rm_summary_opts *opts, const json_t *session_doc,
                       const json_t *state_doc, json_t **out, char *err, size_t errsz);

/* Picks the session folder for a command (who: "report", ... for the note on stderr): PATH
 * itself when it is a session folder (and no id is given); in a sink, the id or the sink's
 * rule (rm_sink_select_session, naming the choice on stderr); else PATH/ID with an id, else
 * PATH/latest, else the newest PATH/<id> by name holding a session.json. Returns 0, or 2
 * with err set. */
int rm_select_session(const char *who, const char *path, const char *id, char *out, size_t outsz,
                      char *err, size_t errsz);

/* rm_select_session without an id, for a live view: in a sink, its newest session whatever
 * its status (the one recording now; a dead recorder's session is settled first by the
 * sink's recovery, as rm_sink_select_session does). */
int rm_select_live_session(const char *who, const char *path, char *out, size_t outsz, char *err,
                           size_t errsz);

/* The sink (or session folder) a command reads when it is given no PATH, in this order: the
 * current folder when it is a sink (or, with session_ok, a session folder); else ./runmon,
 * record's default sink, when it is a folder. Returns "." or "runmon", or NULL with err set
 * ("no sink here: ..."). The one copy of that rule: top, summary, report and sessions. */
const char *rm_default_sink_path(int session_ok, char *err, size_t errsz);

#endif
