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

#define RM_SINK_DEFAULT_FLUSH_S 2.0
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

/* Stops the thread and writes the final state and index line with the session's final status. Call
 * after every attached stream is closed and the session's status is set. Frees k. */
void rm_sink_close(struct rm_sink *k);

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

/* Picks the session folder for a command (who: "report", ... for the note on stderr): PATH
 * itself when it is a session folder (and no id is given); in a sink, the id or the sink's
 * rule (rm_sink_select_session, naming the choice on stderr); else PATH/ID with an id, else
 * PATH/latest, else the newest PATH/<id> by name holding a session.json. Returns 0, or 2
 * with err set. */
int rm_select_session(const char *who, const char *path, const char *id, char *out, size_t outsz,
                      char *err, size_t errsz);

#endif
