/* One consistent picture of a recording, for the exporters (record/exporter.h): the latest
 * values, each collector's health and the session's status and VRAM thresholds, copied
 * together under the port's lock; the session's fixed facts (identity, inventory, interval);
 * and the run log's open phase and completed phases, from the one follower polled here.
 *
 * Why record/: the snapshot reads what the recorder owns while it records (the port's lock,
 * struct rm_latest from monitor/, the session's facts, the run-log follower), and every
 * reader of it is an exporter, which lives in record/ because it also needs report/ (the
 * Prometheus renderer) and sink/. report/ stays the offline side's formatting: rm_prom_render
 * is pure and takes what it renders as an argument, so report/ calls nothing of monitor/.
 * monitor/ would have been the other place, but a snapshot is a recorder-wide picture (all
 * workers, the run log), not one worker's concern.
 *
 * Taken at most once per main-loop wakeup (rm_tick_snapshot, record/exporter.h) and shared by
 * every exporter due then: one copy under the lock for all of them.
 *
 * Threads: the main thread takes it; the follower and the phase pointers are the main
 * thread's. An exporter that hands data to a thread of its own copies what it needs.
 */
#ifndef RUNMON_RECORD_SNAPSHOT_H
#define RUNMON_RECORD_SNAPSHOT_H

#include <stdint.h>

#include "model/session.h"
#include "model/streams.h"
#include "monitor/latest.h"
#include "monitor/phase_follow.h"
#include "monitor/port.h"
#include "report/prom.h"

struct rm_snapshot {
    int final;       /* the session has ended: status is final, workers stopped */
    int64_t now_ns;  /* CLOCK_REALTIME when taken (rows' ts_ns are realtime) */
    int64_t mono_ns; /* CLOCK_MONOTONIC when taken (the tick's time) */

    /* The session's facts: fixed before the workers start; they point into the session. */
    const char *host, *session, *dir, *driver_version;
    int64_t started_ns; /* CLOCK_REALTIME */
    double interval_s;  /* the sampling interval */
    int64_t stale_ns;   /* a latest row older than this is stale (monitor/policy.h) */
    int have_command;   /* a command is recorded: its process tree is sampled */
    int ngpus;          /* GPUs in the inventory */
    const char *gpu_uuid[RM_MAX_GPUS]; /* the inventory's UUIDs by GPU index; NULL unknown */

    /* Copied together under the port's lock. */
    const char *status; /* "running" until the end, then completed, failed, interrupted */
    int stop_signal;    /* the signal that stopped the run, 0 when none */
    double warn_pct, crit_pct;
    enum rm_health health[RM_STREAM_COUNT];
    const char *collector[RM_STREAM_COUNT]; /* the collectors' names */
    struct rm_latest latest;

    /* The run log (main thread): valid until the next snapshot. */
    const char *phase;             /* the phase open now (most recently entered), NULL: none */
    const struct rm_pf_done *done; /* completed phases by path, ndone of them */
    int ndone;
};

/* Where snapshots come from: the port, and the run log's follower. */
struct rm_snapshot_source {
    const struct rm_port *port;
    int have_command;
    struct rm_phase_follow *phases; /* NULL: no run log to follow (no phases then) */
};

/* runlog: the session's run log (NULL: no phases). 0, or -1 (out of memory). */
int rm_snapshot_source_init(struct rm_snapshot_source *src, const struct rm_port *port,
                            int have_command, const char *runlog);
void rm_snapshot_source_fini(struct rm_snapshot_source *src);

/* Fills *out: the run log polled (what was appended since), then one copy under the lock.
 * mono_ns: the caller's CLOCK_MONOTONIC now; final: the session has ended. */
void rm_snapshot_take(struct rm_snapshot *out, struct rm_snapshot_source *src, int64_t mono_ns,
                      int final);

/* The Prometheus renderer's input for snap, which the textfile and the Pushgateway render
 * alike; period_s: how often the caller renders it (a stale exposition is judged by it). */
void rm_snapshot_prom_input(const struct rm_snapshot *snap, double period_s,
                            struct rm_prom_input *in);

#endif
