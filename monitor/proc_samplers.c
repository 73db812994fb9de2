#include "monitor/proc_samplers.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "base/rm_time.h"
#include "monitor/cpu_sampler.h"
#include "monitor/io_sampler.h"
#include "monitor/stall_sampler.h"

/* In the order they open and, at a slot they share, sample. */
const struct rm_proc_sampler *const rm_proc_samplers[] = {&rm_cpu_sampler_row, &rm_io_sampler_row,
                                                          &rm_stall_sampler_row};
const int rm_proc_nsamplers = (int)(sizeof rm_proc_samplers / sizeof *rm_proc_samplers);

static bool wanted(const struct rm_proc_sampler *r, const struct rm_proc_start *st)
{
    return !r->wanted || r->wanted(st);
}

unsigned rm_proc_samplers_off(const struct rm_proc_start *st)
{
    unsigned off = 0;
    for (int i = 0; i < rm_proc_nsamplers; i++)
        if (!wanted(rm_proc_samplers[i], st)) off |= rm_proc_samplers[i]->streams;
    return off;
}

int rm_proc_set_open(struct rm_proc_set *set, const struct rm_proc_start *start, char *err,
                     size_t errsz)
{
    struct rm_proc_start with_tick = *start; /* the rows share the set's walk */
    with_tick.tick = &set->tick;
    const struct rm_proc_start *st = &with_tick;
    /* see rm_stream_batch: fewer write()s at short intervals */
    int64_t interval_ns = (int64_t)llround(st->port->interval_s * 1e9);
    for (int i = 0; i < rm_proc_nsamplers && set->n < RM_PROC_SET_MAX; i++) {
        const struct rm_proc_sampler *r = rm_proc_samplers[i];
        if (!wanted(r, st)) continue;
        void *ctx = calloc(1, r->ctx_size);
        if (!ctx) {
            snprintf(err, errsz, "out of memory");
            return -1;
        }
        set->row[set->n] = r;
        set->ctx[set->n++] = ctx;
        if (r->open(ctx, st, err, errsz) < 0) return -1;
        set->opened++;
        if (!r->batch) continue;
        struct rm_stream *out[RM_PROC_MAX_OUTS];
        int n = r->outs(ctx, out);
        for (int k = 0; k < n; k++)
            rm_stream_batch(out[k], interval_ns);
    }
    return 0;
}

int rm_proc_set_streams(const struct rm_proc_set *set, struct rm_stream **out, int max)
{
    int n = 0;
    for (int i = 0; i < set->opened; i++) {
        struct rm_stream *o[RM_PROC_MAX_OUTS];
        int k = set->row[i]->outs(set->ctx[i], o);
        for (int j = 0; j < k && n < max; j++)
            out[n++] = o[j];
    }
    return n;
}

static int64_t set_due(void *arg)
{
    const struct rm_proc_set *set = arg;
    int64_t due = INT64_MAX;
    for (int i = 0; i < set->n; i++) {
        int64_t d = set->row[i]->due(set->ctx[i]);
        if (d < due) due = d;
    }
    return due;
}

static void set_run(void *arg, int64_t now)
{
    struct rm_proc_set *set = arg;
    set->tick.run++;
    for (int i = 0; i < set->n; i++)
        if (now >= set->row[i]->due(set->ctx[i])) set->row[i]->tick(set->ctx[i], now);
}

struct rm_ticker rm_proc_set_begin(struct rm_proc_set *set)
{
    int64_t grid = rm_now_monotonic_ns();
    for (int i = 0; i < set->n; i++)
        set->row[i]->begin(set->ctx[i], grid);
    return (struct rm_ticker){.due = set_due, .run = set_run, .ctx = set};
}

void rm_proc_set_stop(struct rm_proc_set *set)
{
    for (int i = 0; i < set->n; i++) {
        set->row[i]->stop(set->ctx[i]);
        free(set->ctx[i]);
        set->ctx[i] = NULL;
    }
    set->n = set->opened = 0;
}
