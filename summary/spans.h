/* A spacing between two samples of one GPU cut to the phases' windows: how much of it, and of
 * its energy, falls in each phase. Used where a file's samples are folded (fileagg.c), across
 * the boundary between two chunks of a file (chunks.c) and between two files of one source
 * (merge.c). */
#ifndef RUNMON_SUMMARY_SPANS_H
#define RUNMON_SUMMARY_SPANS_H

#include <stddef.h>
#include <stdint.h>

#include "model/energy.h"
#include "summary/runlog_read.h"

/* A stretch of one phase's window inside a spacing between two samples. */
struct span_piece {
    size_t phase;
    int64_t a, b;   /* clipped at the samples */
    int64_t wa, wb; /* the whole window (wb may be RM_OPEN_END) */
};
struct span_buf {
    struct span_piece *v;
    size_t n, cap;
    /* The spacing v was cut for (the GPUs of one sample group share it): rl, nwin, t0, t1. */
    const struct rm_phase_index *rl;
    size_t nwin;
    int64_t t0, t1;
};

/* The spacing (t0, p0) -> (t1, p1) of one GPU cut to the phases' windows: for each phase with
 * a window overlapping it, add(ctx, phase, kind, ns, joules, bar) once, where ns is the length
 * of the union of that phase's windows clipped at t0 and t1, joules the integral of power
 * taken as the straight line from p0 to p1 over those stretches (model/energy.h's rule for a
 * missing end) and bar the terms of its error bar (rm_energy_piece_bar; the edges of windows
 * that start or end inside the spacing count there). kind is the spacing's (a gap: ns unknown, no
 * joules); a spacing going backwards or of length 0 adds nothing. buf is scratch space kept by the
 * caller, zeroed before its first use: it keeps the pieces of the last spacing for the next GPU's.
 */
void rm_phase_spans(const struct rm_phase_index *rl, struct span_buf *buf, int64_t t0, double p0,
                    int64_t t1, double p1, int64_t gap_ns,
                    void (*add)(void *ctx, size_t phase, enum rm_span_kind kind, int64_t ns,
                                double joules, const struct rm_energy_bar *bar),
                    void *ctx);

#endif
