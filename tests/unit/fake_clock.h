/* A clock for unit tests (base/clock.h): time stands still until the test moves it.
 *
 * The worker under test runs on its own thread with real children, pipes and files; only
 * "now" and the ends of its waits are the test's. Every wait the worker begins having seen
 * the current time is counted, so a test can move time and then wait until the worker has
 * acted on it and blocked again (fake_clock_advance), or wait until the worker is idle after
 * something it did itself (fake_clock_settle_after with a count taken before). A waiting
 * worker is woken when time moves: one on a condition (the sink's thread) through that
 * condition, one in poll/epoll through the poke the test gives (the collectors' wakeup).
 *
 * Header-only: each test binary is one file.
 */
#ifndef RUNMON_TESTS_FAKE_CLOCK_H
#define RUNMON_TESTS_FAKE_CLOCK_H

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <time.h>

#include "base/clock.h"

#define FAKE_CLOCK_MAX_SLEEPERS 8
/* How long a test waits, in real seconds, for a worker to act before it fails (never met by
 * a working program: it only keeps a broken one from hanging the suite). */
#define FAKE_CLOCK_PATIENCE_S 60

struct fake_clock {
    struct rm_clock clock; /* hand &f->clock to the worker */
    pthread_mutex_t mu;
    pthread_cond_t waited; /* broadcast when a wait begins */
    int64_t mono;          /* now, monotonic */
    int64_t real_minus_mono;
    uint64_t waits;     /* waits begun having seen the current time */
    uint64_t waits_now; /* of which since time last moved */
    struct {
        pthread_cond_t *cv;
        pthread_mutex_t *mu;
    } sleeper[FAKE_CLOCK_MAX_SLEEPERS];
    int nsleepers;
    void (*poke)(void *arg); /* wakes a worker blocked in poll/epoll */
    void *poke_arg;
};

static inline struct fake_clock *fake_clock_of(const struct rm_clock *c)
{
    return (struct fake_clock *)c->ctx;
}

static inline int64_t fake_clock_mono_fn(const struct rm_clock *c)
{
    struct fake_clock *f = fake_clock_of(c);
    pthread_mutex_lock(&f->mu);
    int64_t t = f->mono;
    pthread_mutex_unlock(&f->mu);
    return t;
}

static inline int64_t fake_clock_real_fn(const struct rm_clock *c)
{
    struct fake_clock *f = fake_clock_of(c);
    pthread_mutex_lock(&f->mu);
    int64_t t = f->mono + f->real_minus_mono;
    pthread_mutex_unlock(&f->mu);
    return t;
}

/* A wait that sees the current time is counted (and blocks until poked); one whose reading
 * is older, or whose deadline has come, does not block at all. */
static inline int fake_clock_wait_ms_fn(const struct rm_clock *c, int64_t now, int64_t deadline)
{
    struct fake_clock *f = fake_clock_of(c);
    int ms = 0;
    pthread_mutex_lock(&f->mu);
    if (now == f->mono && deadline > f->mono) {
        f->waits++, f->waits_now++;
        pthread_cond_broadcast(&f->waited);
        ms = -1;
    }
    pthread_mutex_unlock(&f->mu);
    return ms;
}

static inline int fake_clock_cond_wait_fn(const struct rm_clock *c, pthread_cond_t *cv,
                                          pthread_mutex_t *mu, int64_t deadline)
{
    struct fake_clock *f = fake_clock_of(c);
    pthread_mutex_lock(&f->mu);
    if (f->mono >= deadline || f->nsleepers == FAKE_CLOCK_MAX_SLEEPERS) {
        pthread_mutex_unlock(&f->mu);
        return ETIMEDOUT;
    }
    int slot = f->nsleepers++;
    f->sleeper[slot].cv = cv;
    f->sleeper[slot].mu = mu;
    f->waits++, f->waits_now++;
    pthread_cond_broadcast(&f->waited);
    pthread_mutex_unlock(&f->mu);
    /* mu is held from the check above until this wait releases it, so a move of time in
     * between (which takes mu to signal cv) cannot be missed. */
    pthread_cond_wait(cv, mu);
    pthread_mutex_lock(&f->mu);
    for (int i = 0; i < f->nsleepers; i++)
        if (f->sleeper[i].cv == cv) {
            f->sleeper[i] = f->sleeper[--f->nsleepers];
            break;
        }
    int due = f->mono >= deadline;
    pthread_mutex_unlock(&f->mu);
    return due ? ETIMEDOUT : 0;
}

/* A clock at mono (monotonic) whose realtime reads real_ns then. */
static inline void fake_clock_init(struct fake_clock *f, int64_t mono, int64_t real_ns)
{
    *f = (struct fake_clock){.mono = mono, .real_minus_mono = real_ns - mono};
    f->clock = (struct rm_clock){.mono = fake_clock_mono_fn,
                                 .real = fake_clock_real_fn,
                                 .wait_ms = fake_clock_wait_ms_fn,
                                 .cond_wait = fake_clock_cond_wait_fn,
                                 .ctx = f};
    pthread_mutex_init(&f->mu, NULL);
    pthread_cond_init(&f->waited, NULL);
}

static inline void fake_clock_fini(struct fake_clock *f)
{
    pthread_cond_destroy(&f->waited);
    pthread_mutex_destroy(&f->mu);
}

static inline uint64_t fake_clock_waits(struct fake_clock *f)
{
    pthread_mutex_lock(&f->mu);
    uint64_t w = f->waits;
    pthread_mutex_unlock(&f->mu);
    return w;
}

/* Waits (in real time, FAKE_CLOCK_PATIENCE_S at most) until *count > after. */
static inline int fake_clock_wait_count(struct fake_clock *f, const uint64_t *count, uint64_t after)
{
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += FAKE_CLOCK_PATIENCE_S;
    int ok = 1;
    pthread_mutex_lock(&f->mu);
    while (*count <= after && ok)
        ok = pthread_cond_timedwait(&f->waited, &f->mu, &until) != ETIMEDOUT || *count > after;
    pthread_mutex_unlock(&f->mu);
    return ok;
}

/* Waits until a wait begun after the count `after` (fake_clock_waits) was taken: the worker
 * has done what it had to and blocks again. 1, or 0 when it did not within
 * FAKE_CLOCK_PATIENCE_S. */
static inline int fake_clock_settle_after(struct fake_clock *f, uint64_t after)
{
    return fake_clock_wait_count(f, &f->waits, after);
}

/* Moves time to mono (never backwards) and wakes whoever waits by this clock. */
static inline void fake_clock_set(struct fake_clock *f, int64_t mono)
{
    pthread_cond_t *cv[FAKE_CLOCK_MAX_SLEEPERS];
    pthread_mutex_t *mu[FAKE_CLOCK_MAX_SLEEPERS];
    pthread_mutex_lock(&f->mu);
    if (mono > f->mono) f->mono = mono;
    f->waits_now = 0;
    int n = f->nsleepers;
    for (int i = 0; i < n; i++)
        cv[i] = f->sleeper[i].cv, mu[i] = f->sleeper[i].mu;
    pthread_mutex_unlock(&f->mu);
    for (int i = 0; i < n; i++) {
        pthread_mutex_lock(mu[i]);
        pthread_cond_broadcast(cv[i]);
        pthread_mutex_unlock(mu[i]);
    }
    if (f->poke) f->poke(f->poke_arg);
}

/* Moves time to mono and waits until the worker has acted on it and waits again. 1, or 0
 * when it did not within FAKE_CLOCK_PATIENCE_S. */
static inline int fake_clock_advance(struct fake_clock *f, int64_t mono)
{
    fake_clock_set(f, mono);
    return fake_clock_wait_count(f, &f->waits_now, 0);
}

#endif
