#include "base/clock.h"

#include <errno.h>
#include <limits.h>
#include <time.h>

int rm_clock_wait_ms(const struct rm_clock *c, int64_t now, int64_t deadline)
{
    if (c) return c->wait_ms(c, now, deadline);
    int64_t left = deadline - now;
    if (left <= 0) return 0;
    int64_t ms = (left + RM_NS_PER_MS - 1) / RM_NS_PER_MS;
    return ms > INT_MAX ? INT_MAX : (int)ms;
}

int rm_clock_cond_wait(const struct rm_clock *c, pthread_cond_t *cv, pthread_mutex_t *mu,
                       int64_t deadline)
{
    if (c) return c->cond_wait(c, cv, mu, deadline);
    struct timespec ts = {.tv_sec = (time_t)(deadline / RM_NS_PER_SEC),
                          .tv_nsec = (long)(deadline % RM_NS_PER_SEC)};
    int rc = pthread_cond_timedwait(cv, mu, &ts);
    return rc == ETIMEDOUT ? ETIMEDOUT : 0;
}
