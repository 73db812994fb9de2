/* The recorder's one tick (issue 24): periodic work that shares a thread, and so its wakeups,
 * with the nvidia-smi collectors (rm_collectors_run). At each slot the thread runs the work
 * (the CPU sample; any other sampler the recorder chains into run) and then reads whatever
 * the nvidia-smi pipes hold, instead of waking once per output burst. */
#ifndef RUNMON_TICKER_H
#define RUNMON_TICKER_H

#include <stdint.h>

struct rm_ticker {
    int64_t (*due)(void *ctx);           /* the next slot, CLOCK_MONOTONIC ns */
    void (*run)(void *ctx, int64_t now); /* the work of a slot that has come */
    void *ctx;
};

#endif
