#include "monitor/sampler_thread.h"

#include <signal.h>
#include <string.h>
#include <time.h>

#include "base/rm_time.h"

static void on_usr1(int sig)
{
    (void)sig;
}

void rm_sampler_thread_enter(const char *name)
{
    pthread_setname_np(pthread_self(), name);
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGUSR1);
    pthread_sigmask(SIG_UNBLOCK, &set, NULL);
}

int rm_sampler_thread_start(pthread_t *t, void *(*run)(void *), void *arg)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_usr1; /* no SA_RESTART: the sleep returns EINTR */
    sigaction(SIGUSR1, &sa, NULL);
    return pthread_create(t, NULL, run, arg) != 0 ? -1 : 0;
}

void rm_sampler_thread_join(pthread_t t)
{
    /* The signal can land just before the thread goes to sleep; repeat until it ends. */
    for (;;) {
        pthread_kill(t, SIGUSR1);
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += 50 * RM_NS_PER_MS;
        if (ts.tv_nsec >= RM_NS_PER_SEC) {
            ts.tv_sec++;
            ts.tv_nsec -= RM_NS_PER_SEC;
        }
        if (pthread_timedjoin_np(t, NULL, &ts) == 0) break;
    }
}

static void *ticker_main(void *arg)
{
    struct rm_ticker_thread *t = arg;
    rm_sampler_thread_enter(t->name);
    while (!atomic_load(t->stop)) {
        if (rm_sleep_until_mono(t->tick.due(t->tick.ctx), t->stop) < 0 || atomic_load(t->stop))
            break;
        t->tick.run(t->tick.ctx, rm_now_monotonic_ns());
    }
    return NULL;
}

int rm_ticker_thread_start(struct rm_ticker_thread *t)
{
    if (rm_sampler_thread_start(&t->thread, ticker_main, t) < 0) return -1;
    t->started = 1;
    return 0;
}

void rm_ticker_thread_stop(struct rm_ticker_thread *t)
{
    if (!t->started) return;
    rm_sampler_thread_join(t->thread);
    t->started = 0;
}
