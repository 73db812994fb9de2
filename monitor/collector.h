/* A supervised nvidia-smi collector: one long-lived child whose stdout lines are rows.
 *
 * The supervisor thread owns every collector: it starts them, polls their pipes, notices
 * when one exits, fails to start or goes quiet (a hung nvidia-smi, maybe unkillable), kills
 * its process group, records collector_degraded, restarts it with backoff, and records
 * collector_recovered at the first valid row after that. While degraded nothing is written:
 * no synthetic rows.
 */
#ifndef RUNMON_COLLECTOR_H
#define RUNMON_COLLECTOR_H

#include <stddef.h>
#include <stdint.h>

#include "base/linebuf.h"
#include "monitor/child.h"
#include "monitor/policy.h"

struct rm_port;

/* What a line handler says of a stdout line. */
enum rm_line_kind {
    RM_LINE_DATA,    /* a valid row: written, counts as a sign of life */
    RM_LINE_HEADER,  /* a header the collector expects (dmon's '#' lines): not data */
    RM_LINE_NONDATA, /* anything else: event notices, error text, garbage */
};

struct rm_collector {
    const char *name; /* its stream's name (rm_stream_defs) */
    int id;           /* its stream (RM_STREAM_*) */
    const char *argv[24];
    int64_t stale_ns; /* no valid row for this long: degraded */
    const struct rm_port *port;
    /* Called on the supervisor thread for each stdout line; line is NUL-terminated. */
    enum rm_line_kind (*on_line)(void *ctx, char *line, size_t len, int64_t ts_ns);
    void (*on_flush)(void *ctx);
    /* Optional: called before a read of stdout with the (CLOCK_REALTIME) time since which
     * what it returns may have been printed: when its pipe was last seen empty (read at the
     * tick: the previous slot), or the read's own time (a pipe that wakes the thread). */
    void (*on_window)(void *ctx, int64_t since_real);
    /* Optional, with a tick: whether stdout is read at this slot (NULL: at every one). A pipe
     * left unread keeps its rows (it is level-triggered: read at a later slot). */
    int (*read_due)(void *ctx);
    void *ctx;

    rm_child child;
    int running;
    int unavailable;
    rm_linebuf out_lb, err_lb;
    char out_store[16384], err_store[2048];
    struct rm_backoff backoff;
    int64_t started_mono, last_row_mono, next_start_mono;
    int64_t degraded_since_mono; /* 0 while healthy */
    int64_t quiet_real;          /* when its stdout was last seen empty (CLOCK_REALTIME) */
    /* The child's own words since its last valid row (or its start): its first stderr line
     * and its first non-data stdout line. A failure quotes the stderr one, else the stdout
     * one: the first line of a message is the one that names the problem ("NVIDIA-SMI
     * couldn't find libnvidia-ml.so ..."), what follows is advice. */
    char first_err[512], first_out[512];
    char last_error[512];
    uint64_t nonconforming, nonconforming_logged;
    int watched[3]; /* the fds in the supervisor's epoll set (out, err, pidfd), -1: none */
    int epfd;       /* that set (rm_collectors_run's), or -1 */
    int data_epfd;  /* with a tick: the set the pipes are in instead, read at each slot */
};

/* Runs every collector until rec->stop, then stops them all (TERM, grace, KILL).
 * Must run on one thread that lives until it returns (PR_SET_PDEATHSIG follows it).
 * With a tick (monitor/ticker.h; NULL: none), the thread also runs the tick's work at each of
 * its slots and reads the children's pipes there, right after it, rather than when they
 * become readable: it wakes for the slots, a child's exit (its pidfd), a restart or a stale
 * deadline. Rows then arrive up to one slot after nvidia-smi printed them, or later where a
 * collector's read_due leaves them in the pipe. */
struct rm_ticker;
void rm_collectors_run(struct rm_collector *cols, int n, rm_wakeup *wake,
                       const struct rm_ticker *tick);

/* Clears c and sets it up as the collector of stream id (RM_STREAM_*), no child yet, healthy
 * while a valid row comes at least every rm_stale_after_ns(interval_ns). */
void rm_collector_setup(struct rm_collector *c, const struct rm_port *port, int id,
                        int64_t interval_ns);

/* The pipe size asked for a collector whose stdout is read only at some slots (read_due). */
#define RM_COLLECTOR_PIPE_BYTES (256 * 1024)

/* The most non-data lines per collector recorded verbatim as events; later ones are counted. */
#define RM_NONCONFORMING_LOG_MAX 100

#endif
