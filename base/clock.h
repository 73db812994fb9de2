/* The clock a worker reads and waits by: the system's, or one a test drives.
 *
 * The supervisor of the nvidia-smi collectors (stale deadlines, restart backoff), the CSV
 * streams (batching, the times of a failed write and of the first one that landed after it)
 * and the sink's thread (its flush period, the outage's down_s) take "now" and their waits
 * from a `const struct rm_clock *`, carried in the port (monitor/port.h) or the stream. NULL
 * is the system clock: CLOCK_MONOTONIC for schedules, CLOCK_REALTIME for stamps, read as
 * before (rm_now_*: a vDSO call, no system call), so the recording pays one predictable
 * branch per reading and nothing else. A test's clock (tests/unit/fake_clock.h) decides what
 * "now" is and when a wait ends, so deadlines and backoffs are checked to the nanosecond
 * without sleeping through them.
 */
#ifndef RUNMON_BASE_CLOCK_H
#define RUNMON_BASE_CLOCK_H

#include <pthread.h>
#include <stdint.h>

#include "base/rm_time.h"

struct rm_clock {
    int64_t (*mono)(const struct rm_clock *c); /* monotonic nanoseconds */
    int64_t (*real)(const struct rm_clock *c); /* nanoseconds since the epoch */
    /* How long a wait for events (poll, epoll) may block on its way to the monotonic
     * deadline, now being the caller's latest reading: milliseconds, or -1 for "until woken"
     * (the caller's own wakeup, which a test's clock pulls when its time moves). */
    int (*wait_ms)(const struct rm_clock *c, int64_t now, int64_t deadline);
    /* Waits on cv (mu held) until it is signalled or the monotonic deadline has come: 0, or
     * ETIMEDOUT. */
    int (*cond_wait)(const struct rm_clock *c, pthread_cond_t *cv, pthread_mutex_t *mu,
                     int64_t deadline);
    void *ctx; /* the clock's own state */
};

static inline int64_t rm_clock_mono(const struct rm_clock *c)
{
    return c ? c->mono(c) : rm_now_monotonic_ns();
}

static inline int64_t rm_clock_real(const struct rm_clock *c)
{
    return c ? c->real(c) : rm_now_realtime_ns();
}

/* The system's: (deadline - now) rounded up to a millisecond, 0 when it has passed, at most
 * INT_MAX. */
int rm_clock_wait_ms(const struct rm_clock *c, int64_t now, int64_t deadline);

/* The system's: pthread_cond_timedwait; cv must have been made with CLOCK_MONOTONIC
 * (pthread_condattr_setclock). */
int rm_clock_cond_wait(const struct rm_clock *c, pthread_cond_t *cv, pthread_mutex_t *mu,
                       int64_t deadline);

#endif
