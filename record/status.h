/* The live status of `runmon record` on a terminal: one line on stderr, rewritten in place
 * once a second ("\r", the line, erase to its end): elapsed time, the open phase (the run
 * log's, from the recorder's phase follower), the mean GPU utilization and the VRAM in use
 * (now, and the peak the line has seen) from the latest values, and each collector's state.
 * Degraded, recovered and unavailable collectors and VRAM warnings and critical crossings each
 * get a line of their own as they happen, printed above the status line.
 *
 * Off (every call a no-op) unless stderr is a terminal and --quiet was not given.
 *
 * Threads: rm_status_event may be called from any thread (a worker's event): it only queues
 * an escaped line under the status's own lock and wakes the main thread through an eventfd;
 * only the main thread writes to the terminal (rm_status_poll, rm_status_close).
 */
#ifndef RUNMON_RECORD_STATUS_H
#define RUNMON_RECORD_STATUS_H

#include <jansson.h>
#include <pthread.h>
#include <stdint.h>

#include "monitor/latest.h"
#include "monitor/phase_follow.h"
#include "monitor/port.h"

#define RM_STATUS_QUEUE 32
#define RM_STATUS_LINE 512

struct rm_status {
    int on;
    int efd; /* eventfd: an event line is queued; -1 when off */
    const struct rm_port *port;
    struct rm_phase_follow *phases;
    int64_t started_mono_ns, next_mono_ns;
    int shown; /* a status line is on the terminal now */
    double peak_vram_mb;
    pthread_mutex_t qlock;
    char queue[RM_STATUS_QUEUE][RM_STATUS_LINE];
    int qhead, qlen;
    unsigned long qdropped;
    struct rm_latest snap;
};

/* on: stderr is a terminal and not --quiet (the caller decides; see rm_status_wanted). */
void rm_status_init(struct rm_status *st, const struct rm_port *port,
                    struct rm_phase_follow *phases, int on);
/* 1 when stderr is a terminal and quiet is 0. */
int rm_status_wanted(int quiet);
/* The fd to poll for queued event lines, or -1. */
int rm_status_fd(const struct rm_status *st);
/* Milliseconds until the next redraw is due, at most cap_ms. */
int rm_status_timeout_ms(const struct rm_status *st, int cap_ms);
/* Any thread: queues a line for the events a person should see now (collector_degraded,
 * collector_recovered, collector_unavailable, warning, critical). data is only read. */
void rm_status_event(struct rm_status *st, const char *name, const json_t *data);
/* Main thread: prints queued event lines above the status line, redraws it when due. */
void rm_status_poll(struct rm_status *st);
/* Main thread: one line of runmon's own (safe text, no newline) above the status line. */
void rm_status_say(struct rm_status *st, const char *line);
/* Main thread: prints what is queued, clears the status line, frees the eventfd. */
void rm_status_close(struct rm_status *st);

#endif
