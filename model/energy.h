/* The ONE energy rule, shared by the summary (per GPU, merged segments) and the Prometheus
 * energy counter, so both give the same joules for the same rows.
 *
 * Power is taken as a straight line between neighbouring samples of one GPU (trapezoids).
 * Where one end of a spacing has no power value, the other end's value holds for the whole
 * spacing; where neither has one, the spacing adds time but no energy. A spacing longer than
 * the gap threshold (RM_GAP_INTERVALS sampling intervals) is a gap: nothing is integrated
 * across it, because the power there is unknown. A negative spacing (the clock stepped back)
 * is neither bridged nor a gap.
 */
#ifndef RUNMON_MODEL_ENERGY_H
#define RUNMON_MODEL_ENERGY_H

#include <stdint.h>

#include "model/streams.h"

#define RM_GAP_INTERVALS 3

/* The gap threshold for a sampling interval: RM_GAP_INTERVALS intervals (saturating). */
int64_t rm_gap_threshold_ns(int64_t interval_ns);

/* A stream's own sampling period, from the session's interval (the gpu query's, the cpu and
 * proc samplers'), so that its gaps are judged against it: nvidia-smi dmon takes whole
 * seconds (-d), so dmon's is the interval rounded to whole seconds, at least 1 s (what the
 * recorder gives it). 0 for pmon's apps.csv (whole seconds of its own: the caller takes the
 * file's median spacing) and when interval_ns is not positive. */
int64_t rm_stream_period_ns(enum rm_input_kind kind, int64_t interval_ns);

enum rm_span_kind { RM_SPAN_BRIDGED, RM_SPAN_GAP, RM_SPAN_BACKWARDS };

/* Classifies the spacing from (t0, p0) to (t1, p1) (powers in W, NaN = missing; times in ns).
 * gap_ns 0 means no spacing is a gap. For a bridged spacing, *joules gets its energy (0 when
 * both powers are missing); *dt_ns gets the spacing (also for a gap). */
enum rm_span_kind rm_energy_span(int64_t t0, double p0, int64_t t1, double p1, int64_t gap_ns,
                                 double *joules, int64_t *dt_ns);

#endif
