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

#include <stdbool.h>
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

/* The power fields runmon asks a driver about once at the start (monitor/gpu_collectors.h):
 * power.draw (the energy rule's), power.draw.instant and power.draw.average (recent drivers),
 * enforced.power.limit. Bit i of a mask stands for rm_power_fields[i]. */
#define RM_POWER_FIELD_COUNT 4
extern const char *const rm_power_fields[RM_POWER_FIELD_COUNT];
/* The field the energy rule integrates, and why (for session.json). */
#define RM_ENERGY_POWER_FIELD "power.draw"
#define RM_ENERGY_POWER_FIELD_WHY                                                                  \
    "power.draw is what every driver offers; on Ampere and newer it is a 1 s average, whose "      \
    "integral keeps the energy of bursts shorter than the sampling interval that an instant "      \
    "reading would alias; the summary's error bar accounts for its lag (docs/ENERGY.md)"

/* The error bar of an energy figure (docs/ENERGY.md gives the method and its sources).
 *
 * nvidia-smi's power.draw is an average over the last RM_SENSOR_WINDOW_NS (Ampere and newer),
 * read by a sensor that sees only a share of the time (its duty cycle). The summary keeps these
 * sums beside each energy (each adds over pieces of time, so segments and files merge);
 * rm_energy_bounds turns them into a low and a high figure. Energies in J. */
#define RM_SENSOR_WINDOW_NS 1000000000LL
#define RM_POWER_RESOLUTION_W 0.01

struct rm_energy_bar {
    double tv_j;   /* sum of |p1 - p0| / 2 x the piece's length: the sampling term */
    double lag_j;  /* (W/2) x (reading at window starts - reading at window ends): the lag */
    double edge_j; /* (W/2) x W |slope| / 2 at each window edge: the lag's own uncertainty */
    double res_j;  /* half the printed resolution (0.01 W) x length: the reading's rounding */
    double peak_w; /* the highest reading at either end of a piece (short phases' bound) */
};

void rm_energy_bar_add(struct rm_energy_bar *a, const struct rm_energy_bar *b);

/* Adds the bar's terms of the piece [a, b] of the bridged spacing (t0, p0) -> (t1, p1) (NaN:
 * no power at that end); a window starts at a when starts, ends at b when ends. */
void rm_energy_piece_bar(int64_t t0, double p0, int64_t t1, double p1, int64_t a, int64_t b,
                         bool starts, bool ends, struct rm_energy_bar *out);

/* The share of the time a GPU's power sensor sees, by its name, with where the figure comes
 * from (a short phrase for summary.json); unknown names get the measured A100/H100 figure. */
double rm_sensor_duty(const char *gpu_name, const char **source);

/* The low and high figures of energy e_j (J): the sampling and duty terms, the resolution and
 * the lag's uncertainty widen both sides; the lag widens the side it points to only (the
 * sensor may be an instant one: then there is no lag). short_s > 0 (a short phase: its windows
 * x the longer of the sensor window and their mean length) runs the bar from 0 to at least
 * short_s at the peak reading. low is never below 0. */
void rm_energy_bounds(double e_j, const struct rm_energy_bar *bar, double duty, double short_s,
                      double *low_j, double *high_j);

#endif
