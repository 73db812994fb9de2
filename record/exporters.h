/* The list of a session's exporters (record/exporter.h): the table of every exporter runmon
 * has, each with its option check, and the calls the recorder makes on all of them at once.
 * The recorder sees only this header; no exporter is named outside its own file and the
 * table in exporters.c.
 *
 * Threads: rm_exporters_event from any thread; everything else on the main thread.
 */
#ifndef RUNMON_RECORD_EXPORTERS_H
#define RUNMON_RECORD_EXPORTERS_H

#include <jansson.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>

#include "monitor/port.h"
#include "record/exporter.h"
#include "record/recorder.h"
#include "record/snapshot.h"

#define RM_EXPORTERS_MAX 8

struct rm_exporter_entry {
    const struct rm_exporter_ops *ops;
    void *self;
    int live;   /* opened and not closing: gets events (under ev_lock) */
    int fd_now; /* its fd at the last rm_exporters_pollfds, -1: none */
};

struct rm_exporters {
    int n;
    struct rm_exporter_entry e[RM_EXPORTERS_MAX];
    pthread_mutex_t ev_lock; /* guards every entry's live against the event fan-out */
    int inited;
    struct rm_snapshot_source src;
    struct rm_snapshot *snap; /* allocated at the first snapshot, reused */
    int64_t snap_tick;        /* the wakeup the snapshot belongs to (its now_mono_ns) */
    int snap_valid;
    int fd_entry[RM_EXPORTERS_MAX]; /* pollfd i -> entry, from rm_exporters_pollfds */
    int nfds;
};

/* Runs the check of every exporter of the table that opts asks for (before the session's
 * folder is made). 0, or -1 with the first one's reason in err. */
int rm_exporters_check(const struct rm_record_opts *opts, char *err, size_t errsz);

/* Opens every exporter of the table whose option opts asks for, in the table's order.
 * 0, or -1 with the reason in err. Either way rm_exporters_close closes those opened. */
int rm_exporters_open(struct rm_exporters *l, const struct rm_record_opts *opts,
                      const struct rm_port *port, char *err, size_t errsz);

/* The same for a given list of exporters (tests; the table is not consulted, their
 * wanted() is). runlog: the run log to follow for phases (NULL: none). */
int rm_exporters_open_ops(struct rm_exporters *l, const struct rm_exporter_ops *const *ops, int n,
                          const struct rm_exporter_env *env, const char *runlog, char *err,
                          size_t errsz);

/* How many exporters are open. */
int rm_exporters_count(const struct rm_exporters *l);

/* Milliseconds from now_mono_ns until the first exporter is due, at most cap_ms. */
int rm_exporters_timeout_ms(const struct rm_exporters *l, int64_t now_mono_ns, int cap_ms);

/* Fills p (at most max) with the exporters' fds to wait on for POLLIN. Returns how many. */
int rm_exporters_pollfds(struct rm_exporters *l, struct pollfd *p, int max);

/* After the wait: polls every exporter whose fd is readable (p, n: as rm_exporters_pollfds
 * filled them, revents set) or whose due time has come. */
void rm_exporters_poll(struct rm_exporters *l, int64_t now_mono_ns, const struct pollfd *p, int n);

/* Any thread: an event of the session to every open exporter that wants events. */
void rm_exporters_event(struct rm_exporters *l, const char *name, const json_t *data);

/* Main thread: one of runmon's notes on stderr (safe text, no newline), through the exporter
 * that owns the terminal line if one does. */
void rm_exporters_say(struct rm_exporters *l, const char *line);

/* The end waits this long at most for the writers that fail or hang, all of them together
 * (record/http.h: rm_http_end_begin); a healthy one still gets its own bound. */
#define RM_EXPORTERS_TROUBLE_WAIT_NS (1 * RM_NS_PER_SEC)

/* Main thread, once the session's status is final and the workers have stopped: every
 * exporter's close_begin, then every close, in the table's order, with one final snapshot;
 * then frees the list. Safe after a failed or no open. */
void rm_exporters_close(struct rm_exporters *l, int64_t now_mono_ns);

/* Once no thread can send an event any more (the workers joined): the lock goes. */
void rm_exporters_fini(struct rm_exporters *l);

#endif
