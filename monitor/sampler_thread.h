/* The thread of a /proc sampler that runs on its own (monitor/cpu_sampler.c without the
 * GPU collectors' tick, monitor/io_sampler.c): it sleeps until its next slot, and SIGUSR1
 * (installed without SA_RESTART) cuts that sleep short so that a stop is prompt. */
#ifndef RUNMON_SAMPLER_THREAD_H
#define RUNMON_SAMPLER_THREAD_H

#include <pthread.h>

/* Called first in the thread: its name (for top -H and the bench) and SIGUSR1 unblocked. */
void rm_sampler_thread_enter(const char *name);
/* Starts run(arg) in *t; 0, or -1 when the thread could not be made. */
int rm_sampler_thread_start(pthread_t *t, void *(*run)(void *), void *arg);
/* Wakes the thread (the port's stop flag already set) until it has ended, and joins it. */
void rm_sampler_thread_join(pthread_t t);

#endif
