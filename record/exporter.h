/* The exporter interface: an output that runs while a session records (the status line on a
 * terminal, the Prometheus textfile, the Pushgateway, InfluxDB and its file).
 *
 * An exporter is one file in record/ that defines one `const struct rm_exporter_ops` and
 * names it in the table of record/exporters.c, with the option that turns it on (a field of
 * struct rm_record_opts, parsed in cli/cmd_record.c). The recorder names no exporter: it
 * opens the list (record/exporters.h) before its workers, polls it from its main loop and
 * closes it once the session's status is final. docs/ARCHITECTURE.md, "Adding an output".
 *
 * What an exporter gets:
 *   - the latest values, health, session facts and phases: one shared snapshot per wakeup
 *     (rm_tick_snapshot, record/snapshot.h), taken only when an exporter asks for it;
 *   - the rows as they are recorded: the session's stream files, followed as they grow
 *     (record/rowfeed.h, `tail -F` through rollover), so the workers pay nothing for it;
 *   - the session's events (its optional `event`), from any thread;
 *   - the port (env->port) to report its own trouble as an event of the run log
 *     (rm_port_event), and the stop flag.
 *
 * Rules (the monitor never harms the workload): poll and close run on the main thread
 * between signals, so they never block: bounded work per call, no network wait (a writer
 * that talks HTTP does it on a thread of its own, or non-blocking with its socket(s) behind
 * `fd`, e.g. an epoll set); a failure is counted and reported as an event, never fatal.
 */
#ifndef RUNMON_RECORD_EXPORTER_H
#define RUNMON_RECORD_EXPORTER_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "monitor/port.h"
#include "record/recorder.h"
#include "record/snapshot.h"

/* A due time that never comes: the exporter is polled only when its fd is readable. */
#define RM_EXPORTER_NEVER INT64_MAX

/* What an exporter is opened with (main thread, before the workers start). */
struct rm_exporter_env {
    const struct rm_record_opts *opts; /* its option, and the session's settings */
    const struct rm_port *port;        /* events, the stop flag, the interval, quiet */
    const char *dir;                   /* the session folder: its stream files (rowfeed.h) */
    int64_t now_mono_ns;               /* CLOCK_MONOTONIC now */
};

/* One wakeup of the main loop, as an exporter's poll sees it. */
struct rm_tick {
    int64_t now_mono_ns; /* CLOCK_MONOTONIC now */
    int readable;        /* the exporter's fd was readable (0 when polled for its due time) */
    struct rm_exporters *list;
};

/* The snapshot of this wakeup: taken at the first call of the wakeup (by any exporter), the
 * same one after. Valid until the poll returns. */
const struct rm_snapshot *rm_tick_snapshot(struct rm_tick *t);

struct rm_exporter_ops {
    const char *name; /* "status", "prom-textfile": messages and events */
    size_t size;      /* its state: zeroed memory of this size, owned by the list */
    /* Its option check: 1 when opts asks for it. */
    int (*wanted)(const struct rm_record_opts *opts);
    /* Optional, before anything of the session is made (its folder, -o's folder): 0, or -1
     * with the reason in err when the option cannot work (a file that cannot be opened,
     * parameters that cannot be told apart). Bad input then leaves nothing behind. */
    int (*check)(const struct rm_record_opts *opts, char *err, size_t errsz);
    /* 0, or -1 with the reason in err (the session does not start: a bad option, no memory). */
    int (*open)(void *self, const struct rm_exporter_env *env, char *err, size_t errsz);
    /* CLOCK_MONOTONIC ns when poll is next due (RM_EXPORTER_NEVER: only for its fd).
     * NULL: never due. */
    int64_t (*due)(const void *self);
    /* An fd the main loop waits on for POLLIN, or -1; asked before each wait. NULL: none. */
    int (*fd)(const void *self);
    /* Main thread: its due time came or its fd is readable. Never blocks. */
    void (*poll)(void *self, struct rm_tick *t);
    /* Any thread, optional: an event of the session (the run log's name and data, only
     * read, never kept). Quick: it runs on a worker's thread; it must not take the port's
     * lock (the caller may hold it). Never called once its close has begun. */
    void (*event)(void *self, const char *name, const json_t *data);
    /* Main thread, optional: prints line (one of runmon's notes: safe text, no newline) on
     * stderr in its own way, and returns 1; 0 leaves it to the list (a plain line). */
    int (*say)(void *self, const char *line);
    /* Main thread, optional, just before the closes: hands over the last export without
     * waiting (every exporter's before any close waits: the network waits of the end run
     * side by side, under one deadline, record/http.h). */
    void (*close_begin)(void *self, const struct rm_snapshot *snap);
    /* Main thread, exactly once per successful open: the workers have stopped, their files
     * are complete and the status is final (snap->final is 1): the last export, then free
     * everything. */
    void (*close)(void *self, const struct rm_snapshot *snap);
};

#endif
