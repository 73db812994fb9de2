/* The narrow port through which a worker (an nvidia-smi collector, the CPU sampler, the sink's
 * thread, an exporter) reaches the session it records. The recorder (record/recorder.h)
 * fills one and hands it to each worker; no worker sees the recorder itself, so a new worker
 * needs nothing but this header.
 *
 * Threads: event() and set_health() may be called from any thread. *sess and *latest are
 * shared: read or write them only while holding *lock. *stop and *workload_pid are atomics.
 */
#ifndef RUNMON_MONITOR_PORT_H
#define RUNMON_MONITOR_PORT_H

#include <jansson.h>
#include <pthread.h>
#include <stdatomic.h>

#include "model/session.h"
#include "model/workload.h"
#include "monitor/latest.h"

struct rm_clock;

struct rm_port {
    void *owner; /* the recorder, opaque to workers */
    /* Writes {"type":"event","event":name,"data":data} to the run log. Takes ownership of
     * data (may be NULL). A failure is counted, never fatal. */
    void (*event)(void *owner, const char *name, json_t *data);
    /* Updates one collector's health. last_error may be NULL (kept as is). */
    void (*set_health)(void *owner, int collector, enum rm_health h, const char *last_error,
                       int count_failure);
    pthread_mutex_t *lock;    /* guards *sess and *latest */
    struct rm_session *sess;  /* the session's facts (identity, inventory, counters) */
    struct rm_latest *latest; /* the latest values, for exporters; NULL: no exporter is on */
    atomic_int *stop;         /* set once the session ends */
    atomic_int *workload_pid; /* 0 until the command runs, and after it ended */
    /* Who the workload is (--pid, --cgroup, a SLURM step); NULL: the command's tree. Its pids
     * come from monitor/workload.h, never from workload_pid alone. */
    const struct rm_workload *workload;
    double interval_s; /* the sampling interval */
    int quiet;         /* no notes on stderr */
    /* The clock the workers read and wait by (base/clock.h); NULL: the system's. */
    const struct rm_clock *clock;
};

static inline void rm_port_event(const struct rm_port *p, const char *name, json_t *data)
{
    p->event(p->owner, name, data);
}

static inline void rm_port_set_health(const struct rm_port *p, int collector, enum rm_health h,
                                      const char *last_error, int count_failure)
{
    p->set_health(p->owner, collector, h, last_error, count_failure);
}

#endif
