/* The thread of the /proc samplers' tick when no GPU collectors' thread hosts it (--no-gpu,
 * no nvidia-smi): it sleeps until the tick's next slot, and SIGUSR1 (installed without
 * SA_RESTART) cuts that sleep short so that a stop is prompt. */
#ifndef RUNMON_SAMPLER_THREAD_H
#define RUNMON_SAMPLER_THREAD_H

#include <pthread.h>
#include <stdatomic.h>

#include "monitor/ticker.h"

/* Called first in the thread: its name (for top -H and the bench) and SIGUSR1 unblocked. */
void rm_sampler_thread_enter(const char *name);
/* Starts run(arg) in *t; 0, or -1 when the thread could not be made. */
int rm_sampler_thread_start(pthread_t *t, void *(*run)(void *), void *arg);
/* Wakes the thread (the port's stop flag already set) until it has ended, and joins it. */
void rm_sampler_thread_join(pthread_t t);

/* A thread that runs a tick on its own (the recorder without GPU collectors): it sleeps until
 * the tick's next slot, runs it, and so on until *stop. One wakeup per slot, whatever work
 * the tick joins there (monitor/ticker.h). */
struct rm_ticker_thread {
    struct rm_ticker tick;
    const atomic_int *stop;
    const char *name; /* for top -H and the bench */
    pthread_t thread;
    int started;
};
/* 0, or -1 when the thread could not be made. */
int rm_ticker_thread_start(struct rm_ticker_thread *t);
/* Joins it (*stop already set); nothing when it was not started. */
void rm_ticker_thread_stop(struct rm_ticker_thread *t);

#endif
